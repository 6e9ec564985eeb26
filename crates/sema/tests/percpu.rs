//! `percpu_kaddr` (issue 14): a per-CPU variable of the kernel's BTF (a VAR
//! of `.data..percpu`), typed by its BTF type; what the kernel lacks for it
//! (the variable, or its address in kallsyms, which the verifier needs) is
//! one error each.

use ktypes::FixtureKernel;
use sema::{CheckOptions, check, print_types};
use source::{SourceMap, render_all};

fn run(src: &str, kallsyms: &str) -> String {
    let kernel = FixtureKernel::typical().with_file("/proc/kallsyms", kallsyms.as_bytes().to_vec());
    let mut map = SourceMap::new();
    let id = map.add("script.bt", src);
    let (program, _) = syntax::parse(map.file(id));
    let (typed, diags) = check(&program, &kernel, &CheckOptions::default());
    if diags.has_errors() {
        render_all(diags.iter(), &map)
    } else {
        print_types(&typed)
    }
}

/// A kallsyms of a kernel built with CONFIG_KALLSYMS_ALL.
const WITH_DATA: &str =
    "ffffffff81000000 T _stext\n000000000002fc00 D runqueues\n0000000000017d70 D process_counts\n";

#[test]
fn a_per_cpu_variable_is_a_typed_pointer() {
    insta::assert_snapshot!(run(
        "BEGIN { @n = *percpu_kaddr(\"process_counts\", 0); $rq = percpu_kaddr(\"runqueues\"); @r = $rq.nr_running; $c = (struct rq *)percpu_kaddr(\"runqueues\", cpu); if ($c != 0) { @s = $c->nr_running; } }",
        WITH_DATA,
    ));
}

#[test]
fn what_the_kernel_lacks_is_one_error_each() {
    // This machine's kallsyms: text symbols only (no CONFIG_KALLSYMS_ALL).
    insta::assert_snapshot!(run(
        "BEGIN { $a = percpu_kaddr(\"runqueues\"); $b = percpu_kaddr(\"jiffies_64\"); $c = percpu_kaddr(\"nosuch\", 1); $n = \"runqueues\"; $d = percpu_kaddr($n); $e = percpu_kaddr(\"runqueues\", \"x\"); $f = percpu_kaddr(); }",
        "ffffffff81000000 T _stext\n",
    ));
}
