//! `config = { max_map_keys = N }` and `let @m = kind(N);` size and type the
//! script's maps: in the manifest and in the ELF object libbpf opens.

use codegen::Options;
use ktypes::FixtureKernel;
use libbpf_rs::{MapType, ObjectBuilder};
use sema::{CheckOptions, check};
use source::SourceMap;

fn compile(src: &str, options: &Options) -> codegen::Compiled {
    let mut map = SourceMap::new();
    let id = map.add("script.bt", src);
    let (program, diags) = syntax::parse(map.file(id));
    assert!(
        !diags.has_errors(),
        "{}",
        source::render_all(diags.iter(), &map)
    );
    let (typed, diags) = check(
        &program,
        &FixtureKernel::typical(),
        &CheckOptions::default(),
    );
    assert!(
        !diags.has_errors(),
        "{}",
        source::render_all(diags.iter(), &map)
    );
    codegen::compile_with(&program, &typed, options).expect("compiles")
}

/// `(type, max_entries)` of the ELF map `name`, as libbpf reads the object.
fn elf_map(compiled: &codegen::Compiled, name: &str) -> (MapType, u32) {
    let open = ObjectBuilder::default()
        .open_memory(&compiled.elf)
        .expect("libbpf opens the object");
    let m = open
        .maps()
        .find(|m| m.name() == name)
        .unwrap_or_else(|| panic!("no map {name}"));
    (m.map_type(), m.max_entries())
}

fn manifest_map<'a>(compiled: &'a codegen::Compiled, name: &str) -> &'a abi::MapSpec {
    compiled
        .manifest
        .maps
        .iter()
        .find(|m| m.name == name)
        .unwrap_or_else(|| panic!("no map {name}"))
}

const SCRIPT: &str = "config = { max_map_keys = 100; perf_rb_pages = 3 }
let @lru = lruhash(7);
let @agg = percpulruhash(9);
let @h = hash(11);
let @pc = percpuhash(13);
BEGIN { @lru[1] = 1; @agg[2] = count(); @h = 3; @pc = count(); @plain[4] = 5; @n = count(); }";

#[test]
fn declarations_give_type_and_size_config_gives_the_rest() {
    let c = compile(SCRIPT, &Options::default());
    for (name, ty, size) in [
        ("@lru", MapType::LruHash, 7),
        ("@agg", MapType::LruPercpuHash, 9),
        ("@h", MapType::Hash, 11),
        ("@pc", MapType::PercpuHash, 13),
        ("@plain", MapType::Hash, 100),
        // A keyless aggregation stays a one-entry per-CPU array.
        ("@n", MapType::PercpuArray, 1),
    ] {
        let spec = manifest_map(&c, name);
        let elf = elf_map(&c, &spec.bpf_name);
        assert_eq!(elf, (ty, size), "{name}");
        if name != "@n" {
            assert_eq!(spec.max_entries, size, "{name}");
        }
    }
    // 3 pages, rounded up to a power of two.
    assert_eq!(c.manifest.ringbuf_size, 4 * 4096);
}

#[test]
fn environment_wins_over_config_declarations_win_over_both() {
    let c = compile(
        SCRIPT,
        &Options {
            max_map_entries: Some(50),
            ..Options::default()
        },
    );
    assert_eq!(manifest_map(&c, "@plain").max_entries, 50);
    assert_eq!(manifest_map(&c, "@lru").max_entries, 7);
}

#[test]
fn without_config_the_default_applies() {
    let c = compile("BEGIN { @x[1] = 1; }", &Options::default());
    assert_eq!(manifest_map(&c, "@x").max_entries, 4096);
}

#[test]
fn stack_maps_follow_the_map_size_unless_sized_for_the_run() {
    let src = "profile:hz:99 { @[kstack, ustack] = count(); }";
    let default = compile(src, &Options::default());
    assert_eq!(default.manifest.stack_maps.len(), 1);
    assert_eq!(
        default.manifest.stack_maps[0].max_entries,
        manifest_map(&default, "@").max_entries
    );
    let sized = compile(
        src,
        &Options {
            stack_map_entries: Some(16384),
            ..Options::default()
        },
    );
    assert_eq!(sized.manifest.stack_maps[0].max_entries, 16384);
    assert_eq!(elf_map(&sized, "stacks_127"), (MapType::StackTrace, 16384));
}

/// The other config keys that reach the object and user space: the
/// `license` section says the licence; the manifest carries what user space
/// does at exit, in `cat()` and when a program fails to load.
#[test]
fn config_license_and_run_settings() {
    let c = compile(
        "config = { license = \"Dual MIT/GPL\"; print_maps_on_exit = 0; max_cat_bytes = 7; log_size = 4096; perf_rb_pages = 100 }\nBEGIN { @x = 1; }",
        &Options::default(),
    );
    let has = |needle: &[u8]| c.elf.windows(needle.len()).any(|w| w == needle);
    assert!(has(b"Dual MIT/GPL\0"));
    assert_eq!(
        c.manifest.settings,
        abi::RunSettings {
            print_maps_on_exit: false,
            max_cat_bytes: 7,
            log_size: Some(4096),
            str_trunc_trailer: "..".into(),
            perf_rb_pages: 128,
        }
    );
    // libbpf still opens it.
    elf_map(&c, abi::EVENTS_MAP);
    let d = compile("BEGIN { @x = 1; }", &Options::default());
    assert!(d.elf.windows(4).any(|w| w == b"GPL\0"));
    assert_eq!(d.manifest.settings, abi::RunSettings::default());
}
