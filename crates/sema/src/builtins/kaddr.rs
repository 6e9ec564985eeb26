//! `kaddr("NAME")`: the address of a kernel symbol.
//!
//! What it does: looks `NAME` up in `/proc/kallsyms` when the script is
//! compiled (through the `KernelInfo` seam) and gives its address as a
//! `uint64`, as bpftrace does; `*kaddr("avenrun")` then reads what is there.
//!
//! Why it is limited: the name must be a string literal; kallsyms lists data
//! symbols (such as `avenrun`) only in kernels built with
//! `CONFIG_KALLSYMS_ALL`, and shows addresses only to root.
//!
//! Example: `interval:s:1 { printf("%d\n", *kaddr("avenrun") >> 11); }`
//!
//! Lowering: `codegen::lower::builtins::kaddr` (a constant).

use ktypes::{KernelInfo, KernelSymbol, kallsyms_address};
use source::Diagnostic;
use syntax::ast::{Expr, ExprKind};

use super::{CallCheck, FunctionDef};
use crate::diagnostics as diag;
use crate::typed::CallValue;
use crate::types::Type;

pub const DEF: FunctionDef = FunctionDef {
    name: "kaddr",
    signature: "kaddr(\"NAME\")",
    help: "the address of the kernel symbol NAME (from /proc/kallsyms)",
    check: check_call,
    aggregates: false,
};

fn check_call(cx: &mut CallCheck<'_, '_>) -> Type {
    let Some((kernel, kallsyms)) = cx.kallsyms() else {
        return Type::U64;
    };
    match check(cx.call, cx.args, kernel, kallsyms) {
        Ok(address) => cx.set_value(CallValue::Constant(address as i64)),
        Err(d) => cx.error(d),
    }
    Type::U64
}

/// The text of `/proc/kallsyms`, read at most once per script.
pub type Kallsyms = std::cell::OnceCell<Result<String, String>>;

/// Checks `kaddr(args)`: one string literal naming a kernel symbol; its address.
#[allow(clippy::result_large_err, reason = "a checker's error is its Diagnostic")]
pub fn check(
    call: &Expr,
    args: &[Expr],
    kernel: &dyn KernelInfo,
    kallsyms: &Kallsyms,
) -> Result<u64, Diagnostic> {
    let (name, at) = match args {
        [
            Expr {
                kind: ExprKind::Str(bytes),
                ..
            },
        ] => (String::from_utf8_lossy(bytes).into_owned(), call.span),
        [other] => return Err(diag::kaddr_needs_literal(other.span)),
        _ => {
            return Err(diag::wrong_arg_count(
                call.span,
                "kaddr",
                "one symbol name",
                args.len(),
            ));
        }
    };
    let text = kallsyms.get_or_init(|| {
        kernel
            .read_file("/proc/kallsyms")
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .map_err(|e| e.to_string())
    });
    let text = text
        .as_ref()
        .map_err(|why| diag::kernel_symbol_unavailable(at, &name, why))?;
    match kallsyms_address(text, &name) {
        KernelSymbol::At(address) => Ok(address),
        KernelSymbol::Hidden => Err(diag::kernel_symbol_unavailable(
            at,
            &name,
            "/proc/kallsyms shows its address as 0: reading addresses needs root (CAP_SYSLOG)",
        )),
        KernelSymbol::Absent => Err(diag::kernel_symbol_unavailable(
            at,
            &name,
            "/proc/kallsyms does not list it (data symbols are listed only in kernels built with CONFIG_KALLSYMS_ALL)",
        )),
    }
}
