//! bpftrace's config keys: a script's `config` block and the `BPFTRACE_*`
//! environment over weft's defaults. Each case shows the diagnostics
//! (warnings included) and the settings that differ from the defaults.

use ktypes::FixtureKernel;
use sema::{CheckOptions, check};
use source::{SourceMap, render_all};

/// The diagnostics, then `key = value` for every key the script or the
/// environment set.
fn run(src: &str, env: &[(&str, &str)]) -> String {
    let mut map = SourceMap::new();
    let id = map.add("script.bt", src);
    let (program, mut diags) = syntax::parse(map.file(id));
    let opts = CheckOptions {
        env: env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        ..CheckOptions::default()
    };
    let (typed, sema_diags) = check(&program, &FixtureKernel::typical(), &opts);
    diags.extend(sema_diags.iter().cloned());
    let mut out = render_all(diags.iter(), &map);
    if !diags.has_errors() {
        out.push_str("---\n");
        for key in sema::config::KEYS {
            if typed.config.is_set(key.name) {
                let v = typed.config.get(key.name).expect("a key");
                out.push_str(&format!("{} = {v}\n", key.name));
            }
        }
    }
    out
}

macro_rules! case {
    ($name:ident, $src:expr) => {
        case!($name, $src, &[]);
    };
    ($name:ident, $src:expr, $env:expr) => {
        #[test]
        fn $name() {
            insta::assert_snapshot!(stringify!($name), run($src, $env), $src);
        }
    };
}

// Keys weft applies, in each spelling bpftrace takes.
case!(
    applied_keys,
    "config = { max_strlen = 128; stack_mode = raw; print_maps_on_exit = 0; license = \"Dual BSD/GPL\"; log_size = 100; max_cat_bytes = 1; max_bpf_progs = 10; max_probes = 10; missing_probes = warn; unstable_tseries = error }\nBEGIN { }"
);
case!(
    environment_spelling_in_a_script,
    "config = { BPFTRACE_STACK_MODE = perf; Max_Map_Keys = 7 }\nBEGIN { }"
);
case!(
    booleans_and_numbers_as_text,
    "config = { print_maps_on_exit = false; perf_rb_pages = \"0x10\"; unstable_tseries = 1 }\nBEGIN { }"
);
// The environment wins over the script; variables that name no key are
// someone else's.
case!(
    environment_wins,
    "config = { stack_mode = perf; max_strlen = 32 }\nBEGIN { }",
    &[
        ("BPFTRACE_STACK_MODE", "raw"),
        ("BPFTRACE_KERNEL_SOURCE", "/usr/src"),
        ("BPFTRACE_MAP_KEYS_MAX", "100"),
    ]
);
case!(
    environment_bad_value,
    "BEGIN { }",
    &[("BPFTRACE_MAX_STRLEN", "many")]
);
// Keys weft accepts but cannot honour: a warning that says why.
case!(
    no_effect_in_weft,
    "config = { on_stack_limit = 0; show_debug_info = 1; cpp_demangle = 0 }\nBEGIN { }"
);
case!(
    default_values_say_nothing,
    "config = { on_stack_limit = 32; show_debug_info = 0; lazy_symbolication = 1; cache_user_symbols = PER_PROGRAM }\nBEGIN { }"
);
case!(
    renamed_and_deprecated,
    "config = { strlen = 20; unstable_map_decl = 1; max_type_res_iterations = 3 }\nBEGIN { }"
);
// Errors.
case!(unknown_key, "config = { max_map_key = 100 }\nBEGIN { }");
case!(
    bad_values,
    "config = { max_map_keys = foo; perf_rb_pages = 0; stack_mode = sideways; print_maps_on_exit = maybe }\nBEGIN { }"
);
case!(
    license_not_gpl_compatible,
    "config = { license = \"Potato\" }\nBEGIN { }"
);
case!(
    max_strlen_beyond_the_scratch_buffer,
    "config = { max_strlen = 16385 }\nBEGIN { }"
);
case!(
    env_only_key,
    "config = { kernel_source = \"/usr/src\" }\nBEGIN { }"
);
case!(
    key_twice,
    "config = { max_map_keys = 1; BPFTRACE_MAX_MAP_KEYS = 2 }\nBEGIN { }"
);
// max_bpf_progs / max_probes: the probe past the limit is reported.
case!(
    too_many_programs,
    "config = { max_bpf_progs = 2 }\ntracepoint:syscalls:sys_enter_read { }\ntracepoint:syscalls:sys_enter_openat { }\ntracepoint:syscalls:sys_exit_read { }"
);
case!(
    too_many_probes_from_the_environment,
    "tracepoint:syscalls:sys_enter_* { }",
    &[("BPFTRACE_MAX_PROBES", "1")]
);
