//! `percpu_kaddr("NAME"[, cpu])`: the address of the kernel's per-CPU
//! variable NAME (a `DEFINE_PER_CPU` variable, such as `runqueues`) on the
//! CPU the probe runs on (`bpf_this_cpu_ptr`), or on CPU `cpu`
//! (`bpf_per_cpu_ptr`: 0 past the last CPU, so a script checks before
//! reading members), as bpftrace's current release has it. The pointer is
//! typed by the variable's BTF type (`struct rq *`), so `*p` and `p.member`
//! read it; a cast still works.
//!
//! Why it is limited: the variable is named by a string literal and found in
//! the kernel's BTF (the VARs of its `.data..percpu` section); the BPF
//! verifier then looks its address up by name in kallsyms, which lists data
//! symbols only in kernels built with `CONFIG_KALLSYMS_ALL`. Where
//! `/proc/kallsyms` lacks the name, the checker says so instead of leaving
//! the verifier to refuse the program.
//!
//! Example: `interval:s:1 { printf("%d\n", *percpu_kaddr("process_counts", 0)); }`
//!
//! Lowering: `codegen::lower::builtins::percpu_kaddr` (the variable's BTF id
//! in a `BPF_PSEUDO_BTF_ID` `ld_imm64`, then the helper).

use ktypes::{KernelSymbol, kallsyms_address};
use syntax::ast::ExprKind;

use super::{CallCheck, FunctionDef};
use crate::diagnostics as diag;
use crate::typed::CallValue;
use crate::types::Type;

pub const DEF: FunctionDef = FunctionDef {
    name: "percpu_kaddr",
    signature: "percpu_kaddr(\"NAME\"[, cpu])",
    help: "the address of the kernel per-CPU variable NAME on this CPU, or on CPU cpu (0 past the last CPU)",
    check,
    aggregates: false,
};

fn check(cx: &mut CallCheck<'_, '_>) -> Type {
    let unknown = Type::Pointer {
        c_type: "uint64 *".into(),
    };
    let (name, cpu) = match cx.args {
        [name] => (name, None),
        [name, cpu] => (name, Some(cpu)),
        _ => {
            cx.check_non_map_args();
            cx.wrong_arg_count("a per-CPU variable's name and optionally a CPU");
            return unknown;
        }
    };
    if let Some(cpu) = cpu {
        let t = cx.check(cpu);
        cx.expect_int(cpu, &t, "percpu_kaddr()'s CPU");
    }
    let ExprKind::Str(bytes) = &name.kind else {
        cx.needs_literal(name.span, "percpu_kaddr()'s variable name");
        return unknown;
    };
    let name_text = String::from_utf8_lossy(bytes).into_owned();
    let Some((kernel, kallsyms)) = cx.kallsyms() else {
        return unknown;
    };
    let btf = match kernel.btf() {
        Ok(btf) => btf,
        Err(e) => {
            let why = format!("per-CPU variables are found in the kernel's BTF: {e}");
            cx.error(diag::kernel_symbol_unavailable(cx.call.span, &name_text, &why));
            return unknown;
        }
    };
    let Some((var, ty)) = btf.percpu_var(&name_text) else {
        cx.error(diag::percpu_variable_unknown(name.span, &name_text));
        return unknown;
    };
    let c_type = format!("{} *", btf.c_type(ty).trim_end());
    // The verifier finds the address by name in kallsyms: say what is
    // missing here rather than let it refuse the program. A kallsyms this
    // process cannot read is left to the verifier.
    let text = kallsyms.get_or_init(|| {
        kernel
            .read_file("/proc/kallsyms")
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .map_err(|e| e.to_string())
    });
    if let Ok(text) = text
        && kallsyms_address(text, &name_text) == KernelSymbol::Absent
    {
        cx.error(diag::percpu_variable_without_address(cx.call.span, &name_text));
        return Type::Pointer { c_type };
    }
    cx.set_value(CallValue::Constant(i64::from(var)));
    Type::Pointer { c_type }
}
