//! `uaddr("NAME")`: the address of a symbol in the binary the probe names.
//!
//! What it does: looks `NAME` up when the script is compiled, in the
//! `.symtab`/`.dynsym` of the uprobe's or usdt probe's binary (data
//! symbols first, then functions), and gives its address as linked
//! (`st_value`), typed as a pointer to an unsigned integer of the
//! symbol's size (1, 2 or 4 bytes; 8 otherwise), as bpftrace does. In a
//! position-independent binary (a PIE executable or a shared library) the
//! address is moved at run time by the binary's load offset, which the
//! probe's own address tells: `bpf_get_func_ip` (the probed instruction's
//! address, also in a uretprobe; Linux 6.6+) less the probe's address as
//! linked. bpftrace finds the same offset by walking the task's mappings.
//!
//! Why it is limited: only uprobe, uretprobe and usdt probes have a
//! binary, and the name must be a string literal.
//!
//! Example: `uprobe:/bin/bash:readline { printf("%p\n", uaddr("ps1_prompt")); }`
//!
//! Lowering: `codegen::lower::builtins::uaddr` (a constant).

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use ktypes::KernelInfo;
use source::Diagnostic;
use syntax::ast::{Expr, ExprKind};
use uelf::Binary;

use super::{CallCheck, FunctionDef};
use crate::diagnostics as diag;
use crate::providers::{Context, ResolvedProbe};
use crate::typed::CallValue;
use crate::types::Type;

pub const DEF: FunctionDef = FunctionDef {
    name: "uaddr",
    signature: "uaddr(\"NAME\")",
    help: "the address of symbol NAME in the probed binary (uprobe, uretprobe, usdt)",
    check: check_call,
    aggregates: false,
};

fn check_call(cx: &mut CallCheck<'_, '_>) -> Type {
    let Some(binaries) = cx.binaries() else {
        return Type::U64;
    };
    match check(cx.call, cx.args, cx.probe(), binaries) {
        Ok(found) => {
            cx.set_value(match found.probe_linked {
                Some(probe_linked) => CallValue::LoadRelative {
                    linked: found.address,
                    probe_linked,
                },
                None => CallValue::Constant(found.address as i64),
            });
            found.ty
        }
        Err(d) => {
            cx.error(d);
            Type::U64
        }
    }
}

/// The binaries `uaddr()` looked in, read once per path for all checking rounds.
pub struct Binaries<'k> {
    kernel: &'k dyn KernelInfo,
    /// `None` for a path that cannot be read or parsed.
    cache: RefCell<HashMap<String, Option<Rc<Binary>>>>,
}

impl<'k> Binaries<'k> {
    pub fn new(kernel: &'k dyn KernelInfo) -> Binaries<'k> {
        Binaries {
            kernel,
            cache: RefCell::new(HashMap::new()),
        }
    }

    fn get(&self, path: &str) -> Option<Rc<Binary>> {
        if let Some(b) = self.cache.borrow().get(path) {
            return b.clone();
        }
        let binary = self
            .kernel
            .read_file(path)
            .ok()
            .and_then(|bytes| Binary::parse(&bytes).ok())
            .map(Rc::new);
        self.cache
            .borrow_mut()
            .insert(path.to_string(), binary.clone());
        binary
    }
}

/// A resolved `uaddr()`: the address and the type of the call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Uaddr {
    /// As linked (`st_value`).
    pub address: u64,
    /// In a position-independent binary, the probe's address as linked, from
    /// which the load offset is found at run time; `None` in an `ET_EXEC`
    /// binary, which is loaded where it was linked.
    pub probe_linked: Option<u64>,
    pub ty: Type,
}

/// Checks `uaddr(args)` in `probe`: one string literal naming a symbol of
/// the probe's binary.
pub fn check(
    call: &Expr,
    args: &[Expr],
    probe: &ResolvedProbe,
    binaries: &Binaries<'_>,
) -> Result<Uaddr, Diagnostic> {
    let name = match args {
        [
            Expr {
                kind: ExprKind::Str(bytes),
                ..
            },
        ] => String::from_utf8_lossy(bytes).into_owned(),
        [other] => return Err(diag::uaddr_needs_literal(other.span)),
        _ => {
            return Err(diag::wrong_arg_count(
                call.span,
                "uaddr",
                "one symbol name",
                args.len(),
            ));
        }
    };
    let (path, probe_offset) = match (&probe.context, &probe.attach) {
        (
            Context::Uprobe { .. } | Context::Usdt { .. },
            abi::Attach::Uprobe { path, offset, .. },
        ) => (path, *offset),
        _ => return Err(diag::uaddr_outside_user_probe(call.span)),
    };
    let binary = binaries.get(path);
    let symbol = binary.as_deref().and_then(|b| b.symbol(&name));
    let Some(symbol) = symbol else {
        let known: Vec<&str> = binary
            .as_deref()
            .map(|b| {
                b.objects
                    .iter()
                    .chain(&b.functions)
                    .map(|s| s.name.as_str())
                    .collect()
            })
            .unwrap_or_default();
        return Err(diag::uaddr_symbol_not_found(
            args[0].span,
            path,
            &name,
            &known,
        ));
    };
    let binary = binary.as_deref().expect("a symbol was found in it");
    let probe_linked = if binary.position_independent {
        binary.virtual_address(probe_offset)
    } else {
        None
    };
    Ok(Uaddr {
        address: symbol.address,
        probe_linked,
        ty: pointer_to(symbol.size),
    })
}

/// `uint8 *` .. `uint64 *` by the symbol's size, as bpftrace types it.
fn pointer_to(size: u64) -> Type {
    let bits = match size {
        1 | 2 | 4 => size * 8,
        _ => 64,
    };
    Type::Pointer {
        c_type: format!("uint{bits} *"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pointee_follows_the_symbol_size() {
        let name = |size| match pointer_to(size) {
            Type::Pointer { c_type } => c_type,
            other => format!("{other:?}"),
        };
        assert_eq!(name(1), "uint8 *");
        assert_eq!(name(2), "uint16 *");
        assert_eq!(name(4), "uint32 *");
        assert_eq!(name(8), "uint64 *");
        assert_eq!(name(0), "uint64 *");
        assert_eq!(name(24), "uint64 *");
    }
}
