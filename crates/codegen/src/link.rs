//! A program joined with the subprograms it uses, as the loader will join
//! them: libbpf appends each subprogram a program references after the
//! program's own instructions, depth first in the order of first
//! reference, and points each reference at its copy. The object file keeps
//! them apart (subprograms in `.text`, see [`crate::elf`]); the joined form
//! is what the verifier numbers, so `-d bpf` prints it and a rejection at
//! instruction N maps back to the script through it.

use std::collections::HashMap;

use source::Span;

use crate::asm::{AsmError, Function, MAX_STACK};

/// `main` followed by every subprogram it reaches, each reference resolved
/// (the `ld_imm64`'s immediate: instructions from the next slot to the
/// subprogram). References stay listed in `func_refs`, for the disassembly.
/// An unknown subprogram is left unresolved (the ELF writer reports it).
pub fn link(main: &Function, subprograms: &HashMap<&str, &Function>) -> Function {
    let mut out = main.clone();
    let mut placed: HashMap<String, usize> = HashMap::new();
    append_callees(&mut out, 0, main, subprograms, &mut placed);
    out
}

fn append_callees(
    out: &mut Function,
    start: usize,
    func: &Function,
    subprograms: &HashMap<&str, &Function>,
    placed: &mut HashMap<String, usize>,
) {
    let mut refs = func.func_refs.clone();
    refs.sort_by_key(|r| r.insn);
    for r in refs {
        let Some(sub) = subprograms.get(r.symbol.as_str()) else {
            continue;
        };
        let at = match placed.get(&r.symbol) {
            Some(&at) => at,
            None => {
                let at = out.insns.len();
                placed.insert(r.symbol.clone(), at);
                out.insns.extend_from_slice(&sub.insns);
                out.spans.extend_from_slice(&sub.spans);
                out.relocs.extend(sub.relocs.iter().map(|m| shifted(m, at)));
                out.func_refs
                    .extend(sub.func_refs.iter().map(|m| shifted(m, at)));
                append_callees(out, at, sub, subprograms, placed);
                at
            }
        };
        let slot = start + r.insn;
        out.insns[slot].imm = (at as i64 - slot as i64 - 1) as i32;
    }
}

fn shifted(r: &crate::asm::Reloc, by: usize) -> crate::asm::Reloc {
    crate::asm::Reloc {
        insn: r.insn + by,
        symbol: r.symbol.clone(),
    }
}

/// The stack the deepest chain of frames from `main` needs, as the
/// verifier counts it for a JIT-compiled program (each frame rounded up to
/// 16 bytes; a callback is a frame on top of its caller's) and, when it passes the 512-byte limit,
/// the error, at the reference that goes deepest.
pub fn check_stack(
    main: &Function,
    subprograms: &HashMap<&str, &Function>,
) -> Result<u32, AsmError> {
    let (depth, span) = deepest(main, subprograms, 0);
    if depth > MAX_STACK {
        return Err(AsmError::StackTooLarge {
            span: span.unwrap_or(Span::DUMMY),
            needed: depth,
        });
    }
    Ok(depth)
}

/// The deepest chain from `func` and the span of its first reference.
fn deepest(
    func: &Function,
    subprograms: &HashMap<&str, &Function>,
    level: usize,
) -> (u32, Option<Span>) {
    let own = func.frame_size.next_multiple_of(16);
    // The verifier allows 8 frames; a chain that long is cut here too.
    if level >= 8 {
        return (own, None);
    }
    let mut best = (own, None);
    for r in &func.func_refs {
        if let Some(sub) = subprograms.get(r.symbol.as_str()) {
            let (d, _) = deepest(sub, subprograms, level + 1);
            if own + d > best.0 {
                best = (own + d, func.spans.get(r.insn).copied());
            }
        }
    }
    best
}
