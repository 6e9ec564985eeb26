//! Cgroups in generated code: `--cgroup` compares the task's cgroup id
//! with a constant before anything else runs, `--cgroup-tree` asks
//! `bpf_current_task_under_cgroup` about the one-entry cgroup array,
//! `cgroupid()` is a constant looked up when checking, and
//! `cgroup_path()` keeps the id with its filter's index.

mod common;

use ktypes::FixtureKernel;
use sema::{CheckOptions, check};
use source::SourceMap;

fn kernel() -> FixtureKernel {
    FixtureKernel::typical()
        .with_cgroup("/sys/fs/cgroup/unified/app", 0x1_0000_2345)
        .with_cgroup("/sys/fs/cgroup/unified/other", 99)
}

fn compile(src: &str, filter: Option<abi::CgroupFilter>) -> codegen::Compiled {
    let mut map = SourceMap::new();
    let id = map.add("script.bt", src);
    let (program, diags) = syntax::parse(map.file(id));
    assert!(!diags.has_errors());
    let opts = CheckOptions {
        cgroup_filter: filter,
        ..CheckOptions::default()
    };
    let (typed, diags) = check(&program, &kernel(), &opts);
    assert!(
        !diags.has_errors(),
        "{}",
        source::render_all(diags.iter(), &map)
    );
    codegen::compile(&program, &typed).expect("compiles")
}

fn filter(tree: bool) -> Option<abi::CgroupFilter> {
    Some(abi::CgroupFilter {
        id: 0x1_0000_2345,
        dir: "/sys/fs/cgroup/unified/app".into(),
        tree,
    })
}

const COUNT: &str = "tracepoint:syscalls:sys_enter_getppid { @ = count(); } BEGIN { @b = 1; }";

#[test]
fn cgroup_filter_compares_the_id_first() {
    let c = compile(COUNT, filter(false));
    insta::assert_snapshot!(common::disasm(&c));
    assert_eq!(c.manifest.cgroup_filter, filter(false));
    assert!(
        !c.elf
            .windows(abi::CGROUP_MAP.len())
            .any(|w| w == abi::CGROUP_MAP.as_bytes()),
        "no cgroup array without --cgroup-tree"
    );
}

#[test]
fn cgroup_tree_asks_the_cgroup_array() {
    let c = compile(COUNT, filter(true));
    insta::assert_snapshot!(common::disasm(&c));
    assert!(
        c.elf
            .windows(abi::CGROUP_MAP.len())
            .any(|w| w == abi::CGROUP_MAP.as_bytes())
    );
}

#[test]
fn cgroupid_is_a_constant() {
    let c = compile(
        r#"tracepoint:syscalls:sys_enter_getppid /cgroup == cgroupid("/sys/fs/cgroup/unified/app")/ { @ = count(); }"#,
        None,
    );
    insta::assert_snapshot!(common::disasm(&c));
}

#[test]
fn cgroup_path_keys_share_a_filter_index() {
    let c = compile(
        r#"tracepoint:syscalls:sys_enter_getppid { @a[cgroup_path(cgroup)] = count(); @b[cgroup_path(cgroup, "unified")] = count(); @c[cgroup_path(cgroup, "unified")] = count(); }"#,
        None,
    );
    assert_eq!(c.manifest.cgroup_path_filters, ["*", "unified"]);
    assert_eq!(
        c.manifest.map("@c").unwrap().key,
        Some(abi::Layout::CgroupPath)
    );
    insta::assert_snapshot!(common::disasm(&c));
}
