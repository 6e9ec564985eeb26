//! uprobe, uretprobe and usdt attach points against a tiny ELF made in
//! memory: what each resolves to (file offsets, semaphores, the context),
//! and the diagnostic for each mistake.

use ktypes::FixtureKernel;
use sema::{CheckOptions, check};
use source::{SourceMap, render_all};
use uelf::testing::{LOAD_VADDR, Probe, TEXT_OFFSET, tiny_elf};

fn kernel() -> FixtureKernel {
    let probes = [
        Probe {
            provider: "weft",
            name: "tick",
            args: "-4@%edi 8@%rsi",
            semaphore: LOAD_VADDR + 0x10,
        },
        Probe {
            provider: "weft",
            name: "broken",
            args: "8@label(%rip)",
            semaphore: 0,
        },
    ];
    let elf = tiny_elf(&["marker", "answer", "read_line"], &probes);
    let cache = {
        // An ld.so.cache naming one library, in glibc's 1.1 format.
        let mut c = b"glibc-ld.so.cache1.1".to_vec();
        c.extend_from_slice(&1u32.to_le_bytes());
        c.resize(48, 0);
        let strings = 48 + 24;
        c.extend_from_slice(&0x303i32.to_le_bytes());
        c.extend_from_slice(&(strings as u32).to_le_bytes());
        c.extend_from_slice(&(strings as u32 + 11).to_le_bytes());
        c.resize(strings, 0);
        c.extend_from_slice(b"libapp.so\0\0/opt/lib/libapp.so.1\0");
        c
    };
    FixtureKernel::typical()
        .with_file("/opt/app", elf.clone())
        .with_file("/opt/lib/libapp.so.1", elf)
        .with_file("/etc/ld.so.cache", cache)
        // Two indirect functions; this machine's loader resolves `fast_len`
        // to `plain` and cannot resolve `slow_len`.
        .with_file(
            "/opt/lib/libifunc.so",
            tiny_elf(&["plain", "ifunc:fast_len", "ifunc:slow_len"], &[]),
        )
        .with_ifunc("/opt/lib/libifunc.so", "fast_len", LOAD_VADDR + TEXT_OFFSET)
}

fn run(src: &str, pid: Option<u32>) -> String {
    let mut map = SourceMap::new();
    let id = map.add("script.bt", src);
    let (program, mut diags) = syntax::parse(map.file(id));
    let opts = CheckOptions {
        pid_filter: pid,
        ..CheckOptions::default()
    };
    let (typed, sema_diags) = check(&program, &kernel(), &opts);
    diags.extend(sema_diags.iter().cloned());
    if diags.has_errors() {
        return render_all(diags.iter(), &map);
    }
    let mut out = String::new();
    for p in &typed.probes {
        out.push_str(&format!(
            "{} [{}] {:?}\n",
            p.resolved.name, p.resolved.section, p.resolved.attach
        ));
    }
    out
}

macro_rules! case {
    ($name:ident, $src:expr) => {
        case!($name, $src, None);
    };
    ($name:ident, $src:expr, $pid:expr) => {
        #[test]
        fn $name() {
            insta::assert_snapshot!(stringify!($name), run($src, $pid), $src);
        }
    };
}

case!(
    function_offsets_through_program_headers,
    "uprobe:/opt/app:answer { @ = sum(arg0); } uretprobe:/opt/app:answer { @r = sum(retval); }"
);
case!(
    offset_address_and_wildcard,
    "uprobe:/opt/app:marker+4, uprobe:/opt/app:0x11020, u:/opt/app:*er { @[func] = count(); }"
);
case!(
    library_by_short_name_with_pid,
    "uprobe:libapp:marker { @ = count(); }",
    Some(4242)
);
case!(
    usdt_with_semaphore,
    "usdt:/opt/app:weft:tick { @ = sum(arg0); @s[str(arg1)] = count(); }"
);
case!(
    indirect_function_at_its_implementation,
    "uprobe:/opt/lib/libifunc.so:fast_len, uretprobe:/opt/lib/libifunc.so:fast_len { }"
);
case!(
    wildcard_leaves_out_unresolved_indirect_functions,
    "uprobe:/opt/lib/libifunc.so:*_len { @[func] = count(); }"
);
case!(
    err_indirect_function_unresolved,
    "uprobe:/opt/lib/libifunc.so:slow_len { }"
);
case!(err_unknown_binary, "uprobe:nosuchthing:marker { }");
case!(err_unknown_symbol, "uprobe:/opt/app:markr { }");
case!(err_wildcard_matches_nothing, "uprobe:/opt/app:zz* { }");
case!(err_offset_on_uretprobe, "uretprobe:/opt/app:marker+4 { }");
case!(err_address_outside_segments, "uprobe:/opt/app:0x5 { }");
case!(
    err_retval_in_uprobe,
    "uprobe:/opt/app:marker { @ = retval; }"
);
case!(
    err_arg_in_uretprobe,
    "uretprobe:/opt/app:marker { @ = arg0; }"
);
case!(
    err_arg_in_tracepoint,
    "tracepoint:syscalls:sys_enter_read { @ = arg0; }"
);
case!(err_usdt_missing_arg, "usdt:/opt/app:tick { @ = arg2; }");
case!(err_usdt_unknown_probe, "usdt:/opt/app:weft:tock { }");
case!(err_usdt_symbolic_operand, "usdt:/opt/app:weft:broken { }");
case!(err_usdt_bad_attach_point, "usdt:/opt/app { }");
case!(
    err_reg_outside_register_probes,
    "tracepoint:syscalls:sys_enter_read { @ = reg(\"ip\"); }"
);
case!(
    err_reg_unknown_register,
    "uprobe:/opt/app:marker { @ = reg(\"rip\"); }"
);
