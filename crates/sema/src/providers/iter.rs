//! `iter:TARGET` (alias `it`): a BPF iterator, whose program runs once for
//! each kernel object of its kind: `iter:task` for every task,
//! `iter:task_file` for every open file of every task, `iter:task_vma` for
//! every memory mapping. `ctx` points to the kernel's `struct
//! bpf_iter__TARGET` (`ctx.task.comm`, `ctx.fd`, `ctx.vma.vm_start`); `-lv`
//! lists its fields.
//!
//! The program is `BPF_PROG_TYPE_TRACING` with `BPF_TRACE_ITER` (section
//! `iter/TARGET`; libbpf finds the target's BTF id). Attaching makes a link
//! and runs nothing: user space then reads an iterator made from the link,
//! which runs the program over every object, and the run ends, as in
//! bpftrace. A script with an iterator has no other probe but BEGIN and
//! END (the iteration is the whole run). The kernel calls the program once
//! more after the last object, with no object; codegen skips that call.
//!
//! The targets are the kernel's own: a struct `bpf_iter__TARGET` and a
//! function `bpf_iter_TARGET` in its BTF (Linux 5.8 and later).

use ktypes::{KernelInfo, KernelInfoError, btf::kind};
use source::Diagnostic;

use super::{AttachPointRef, Context, ListQuery, Needs, ProviderDef, ResolvedProbe, glob_match};
use crate::diagnostics as diag;

pub const DEF: ProviderDef = ProviderDef {
    name: "iter",
    aliases: &["it"],
    usage: "iter:TARGET (task, task_file, task_vma, ...)",
    help: "runs once for each kernel object of a kind (tasks, their open files, their mappings)",
    resolve: |ap, kernel, _| resolve(ap, kernel).map(|p| vec![p]),
    list: Some(list),
    listed_by: super::Listed::Named,
    pid_filter: false,
    needs: Needs::TpBtf,
};

/// The struct `ctx` points to in an iterator of `target`.
pub fn context_struct(target: &str) -> String {
    format!("bpf_iter__{target}")
}

/// The iterator targets this kernel has, sorted.
fn targets(kernel: &dyn KernelInfo) -> Result<Vec<String>, KernelInfoError> {
    let btf = kernel.btf()?;
    Ok(btf
        .names_of(kind::STRUCT)
        .into_iter()
        .filter_map(|n| n.strip_prefix("bpf_iter__"))
        .filter(|t| btf.find(kind::FUNC, &format!("bpf_iter_{t}")).is_some())
        .map(str::to_string)
        .collect())
}

fn resolve(ap: &AttachPointRef<'_>, kernel: &dyn KernelInfo) -> Result<ResolvedProbe, Diagnostic> {
    let usage = "iter:TARGET (list them with weft -l 'iter:*')";
    // bpftrace's `iter:TARGET:PIN` pins the iterator for others to read.
    if let [target, pin] = ap.parts
        && !pin.is_empty()
    {
        return Err(diag::iterator_pin_unsupported(ap.span, target, pin));
    }
    let [target] = ap.parts else {
        return Err(diag::bad_attach_point(ap.span, ap.raw, usage));
    };
    if target.is_empty() || !target.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
        return Err(diag::bad_attach_point(ap.span, ap.raw, usage));
    }
    let known = targets(kernel).map_err(|e| diag::kernel_info(ap.span, &e))?;
    if !known.iter().any(|t| t == target) {
        return Err(diag::iterator_not_found(ap.span, target, &known));
    }
    Ok(ResolvedProbe {
        provider: DEF.name,
        attach: abi::Attach::Iter {
            target: target.clone(),
        },
        section: format!("iter/{target}"),
        name: format!("iter:{target}"),
        context: Context::Iter {
            target: target.clone(),
        },
        short: format!("iter_{target}"),
    })
}

/// `-l 'iter:PATTERN'`: `iter:task`, ...; `-lv` adds the fields of the
/// struct `ctx` points to.
fn list(q: &ListQuery<'_>, kernel: &dyn KernelInfo) -> Result<Vec<String>, String> {
    let targets = targets(kernel).map_err(|e| format!("error: cannot list iterators: {e}"))?;
    let btf = kernel.btf().ok();
    let mut out = Vec::new();
    for t in targets.iter().filter(|t| glob_match(q.pattern, t)) {
        out.push(format!("iter:{t}"));
        let Some(btf) = btf.filter(|_| q.verbose) else {
            continue;
        };
        if let Some(id) = btf.find(kind::STRUCT, &context_struct(t)) {
            for name in btf.member_names(id) {
                if let Some(m) = btf.member(id, name) {
                    out.push(format!("    {} {name}", btf.member_param(&m).c_type));
                }
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_need_both_the_struct_and_the_function() {
        let mut b = ktypes::btf::BtfBuilder::new();
        let int = b.int("int", 4, true);
        let ptr = b.ptr(int);
        b.structure("bpf_iter__task", 16, &[("task", ptr, 64)]);
        // A struct without its function is not a target (the kernel has
        // `bpf_iter__task__safe_trusted`).
        b.structure("bpf_iter__task__safe_trusted", 8, &[("task", ptr, 0)]);
        let proto = b.proto(int, &[("task", ptr)]);
        b.func("bpf_iter_task", proto);
        let kernel = ktypes::FixtureKernel::new().with_btf(b.build());
        assert_eq!(targets(&kernel).unwrap(), ["task"]);
    }
}
