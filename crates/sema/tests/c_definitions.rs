//! Issue 16: C struct definitions in scripts (runqlen.bt, dcsnoop.bt),
//! `sizeof` and `offsetof`. A struct the script defines is laid out as C
//! lays it out and hides the kernel's of that name; a kernel struct it holds
//! by value is sized through BTF. Each snapshot shows the diagnostics, or
//! every member read (offset and value) and every constant, by node.

use ktypes::FixtureKernel;
use sema::{CheckOptions, check};
use source::{SourceMap, render_all};

fn run(src: &str, kernel: &FixtureKernel) -> String {
    let mut map = SourceMap::new();
    let id = map.add("script.bt", src);
    let (program, mut diags) =
        syntax::parse_with(map.file(id), &|n| sema::predefined_macro(kernel, n));
    let (typed, sema_diags) = check(&program, kernel, &CheckOptions::default());
    diags.extend(sema_diags.iter().cloned());
    if diags.has_errors() {
        return render_all(diags.iter(), &map);
    }
    let mut out = String::new();
    for p in &typed.probes {
        out.push_str(&format!("{}\n", p.resolved.name));
        let mut members: Vec<_> = p.members.iter().collect();
        members.sort_by_key(|(id, _)| id.0);
        for (id, m) in members {
            out.push_str(&format!("  node {}: {m:?}\n", id.0));
        }
        let mut constants: Vec<_> = p.constants.iter().collect();
        constants.sort_by_key(|(id, _)| id.0);
        for (id, v) in constants {
            out.push_str(&format!("  node {}: = {v}\n", id.0));
        }
    }
    out
}

/// runqlen.bt's definitions, written out (its `#ifndef BPFTRACE_HAVE_BTF`
/// drops them on a kernel with BTF).
const RUNQLEN_STRUCTS: &str = "struct load_weight { unsigned long weight; u32 inv_weight; };
struct cfs_rq {
	struct load_weight load;
	unsigned long runnable_weight;
	unsigned int nr_running;
	unsigned int h_nr_running;
};
";

#[test]
fn a_script_struct_without_btf() {
    // No BTF at all: the script's own structs are all there is.
    let src = format!(
        "{RUNQLEN_STRUCTS}BEGIN {{ $q = (struct cfs_rq *)0; $len = $q->nr_running; @runqlen = lhist($len, 0, 100, 1); @h = $q->h_nr_running; @w = $q->load.inv_weight; @size = sizeof(struct cfs_rq); @off = offsetof(struct cfs_rq, load.inv_weight); @sz = sizeof(struct load_weight[4]); }}"
    );
    insta::assert_snapshot!(run(&src, &FixtureKernel::new()), @r"
    BEGIN
      node 5: MemberAccess { offset: 24, arrow: true, value: Int { size: 4, signed: false } }
      node 14: MemberAccess { offset: 28, arrow: true, value: Int { size: 4, signed: false } }
      node 17: MemberAccess { offset: 0, arrow: true, value: Struct }
      node 18: MemberAccess { offset: 8, arrow: false, value: Int { size: 4, signed: false } }
      node 20: = 32
      node 22: = 8
      node 24: = 64
    ");
}

#[test]
fn runqlen_without_btf_names_what_is_missing() {
    // runqlen.bt as shipped, on a kernel without BTF or kernel headers: its
    // struct holds a kernel struct by value that nothing defines.
    let src = "#ifndef BPFTRACE_HAVE_BTF\n#include <linux/sched.h>\nstruct cfs_rq {\n\tstruct load_weight load;\n\tunsigned int nr_running;\n};\n#endif\nBEGIN { $q = (struct cfs_rq *)0; @ = $q->nr_running; }";
    insta::assert_snapshot!(run(src, &FixtureKernel::new()));
}

#[test]
fn dcsnoop_struct_holds_kernel_structs_by_value() {
    // dcsnoop.bt's `struct nameidata { struct path path; struct qstr last; }`
    // (unguarded): `path` and `qstr` come from the kernel's BTF, and
    // `$nd->last.name` goes from the script's struct into the kernel's.
    let src = "struct nameidata {\n        struct path     path;\n        struct qstr     last;\n        // [...]\n};\nkprobe:vfs_read { $nd = (struct nameidata *)arg0; @[str($nd->last.name)] = count(); @o = offsetof(struct nameidata, last.name); }";
    insta::assert_snapshot!(run(src, &FixtureKernel::typical()), @r"
    kprobe:vfs_read
      node 4: MemberAccess { offset: 16, arrow: true, value: Struct }
      node 5: MemberAccess { offset: 8, arrow: false, value: Pointer }
      node 10: = 24
    ");
}

#[test]
fn a_script_struct_hides_the_kernels() {
    // The fixture's BTF has `struct path` (mnt, dentry); the script's wins.
    let src = "struct path { long a; long b; long mnt; };\nkprobe:vfs_read { $p = (struct path *)arg0; @ = $p->mnt; @s = sizeof(struct path); }";
    insta::assert_snapshot!(run(src, &FixtureKernel::typical()), @r"
    kprobe:vfs_read
      node 5: MemberAccess { offset: 16, arrow: true, value: Int { size: 8, signed: true } }
      node 7: = 24
    ");
}

#[test]
fn enumerators_of_a_script_enum_are_constants() {
    let src = "enum color { RED, GREEN = 4, BLUE };\nBEGIN { @ = BLUE; @g = GREEN; }";
    insta::assert_snapshot!(run(src, &FixtureKernel::new()), @r"
    BEGIN
      node 1: = 5
      node 3: = 4
    ");
}

#[test]
fn errors() {
    let src = "struct bits { int a : 3; };\nstruct ok { int a; };\nBEGIN { @a = ((struct ok *)0)->nope; @b = sizeof(struct nosuch); @c = offsetof(struct ok, zz); @d = sizeof(frob_t); }";
    insta::assert_snapshot!(run(src, &FixtureKernel::typical()));
}
