//! `percpu_kaddr`: the variable's vmlinux BTF id in a `BPF_PSEUDO_BTF_ID`
//! `ld_imm64` (no relocation: weft compiles on the kernel it loads on),
//! passed to `bpf_this_cpu_ptr` or, with a CPU, `bpf_per_cpu_ptr`.

mod common;

use common::{compile_on, disasm};
use ktypes::FixtureKernel;

#[test]
fn percpu_kaddr_loads_the_variable_s_btf_id() {
    let kernel = FixtureKernel::typical().with_file(
        "/proc/kallsyms",
        b"000000000002fc00 D runqueues\n0000000000017d70 D process_counts\n".to_vec(),
    );
    let src = "BEGIN { @a = *percpu_kaddr(\"process_counts\"); @b = percpu_kaddr(\"runqueues\", 1)->nr_running; }";
    insta::assert_snapshot!(disasm(&compile_on(src, &kernel)));
}
