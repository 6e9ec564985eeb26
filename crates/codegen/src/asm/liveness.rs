//! Pruning and liveness: labels checked, unreachable ops dropped (the
//! verifier rejects unreachable instructions), and which vregs are live
//! into and out of each op (a backward data-flow to a fixed point, so a
//! value live around a loop's back edge is live through the whole loop).

use std::collections::HashMap;

use source::Span;

use super::model::{AsmError, Label, Op};

/// Checks labels, drops unreachable ops (the verifier rejects unreachable
/// instructions) and rejects paths that run off the end.
pub(super) fn check_and_prune(
    ops: Vec<Op>,
    spans: Vec<Span>,
) -> Result<(Vec<Op>, Vec<Span>), AsmError> {
    let mut bound: HashMap<Label, usize> = HashMap::new();
    for (i, op) in ops.iter().enumerate() {
        if let Op::Bind(l) = op
            && bound.insert(*l, i).is_some()
        {
            return Err(AsmError::LabelBoundTwice { span: spans[i] });
        }
    }
    for (i, op) in ops.iter().enumerate() {
        if let Some(l) = op.target()
            && !bound.contains_key(&l)
        {
            return Err(AsmError::UnboundLabel { span: spans[i] });
        }
    }
    let n = ops.len();
    let mut reach = vec![false; n];
    let mut work = vec![0usize];
    while let Some(i) = work.pop() {
        if i >= n {
            let span = spans[n - 1];
            return Err(AsmError::FallsOffEnd { span });
        }
        if reach[i] {
            continue;
        }
        reach[i] = true;
        if ops[i].falls_through() {
            work.push(i + 1);
        }
        if let Some(l) = ops[i].target() {
            work.push(bound[&l]);
        }
    }
    let keep: Vec<(Op, Span)> = ops
        .into_iter()
        .zip(spans)
        .zip(&reach)
        .filter(|((op, _), r)| **r || matches!(op, Op::Bind(_)))
        .map(|(x, _)| x)
        .collect();
    Ok(keep.into_iter().unzip())
}

/// Successors of op `i`.
pub(super) fn successors(
    ops: &[Op],
    labels: &HashMap<Label, usize>,
    i: usize,
    out: &mut Vec<usize>,
) {
    out.clear();
    if ops[i].falls_through() && i + 1 < ops.len() {
        out.push(i + 1);
    }
    if let Some(l) = ops[i].target() {
        out.push(labels[&l]);
    }
}

pub(super) struct Liveness {
    words: usize,
    live_in: Vec<u64>,
    live_out: Vec<u64>,
}

impl Liveness {
    pub(super) fn compute(ops: &[Op], nvregs: usize) -> Liveness {
        let n = ops.len();
        let words = nvregs.div_ceil(64);
        let labels: HashMap<Label, usize> = ops
            .iter()
            .enumerate()
            .filter_map(|(i, op)| match op {
                Op::Bind(l) => Some((*l, i)),
                _ => None,
            })
            .collect();
        let mut live_in = vec![0u64; n * words];
        let mut live_out = vec![0u64; n * words];
        let mut succ = Vec::new();
        let mut uses = Vec::new();
        let mut changed = true;
        while changed {
            changed = false;
            for i in (0..n).rev() {
                successors(ops, &labels, i, &mut succ);
                let mut out = vec![0u64; words];
                for &s in &succ {
                    for w in 0..words {
                        out[w] |= live_in[s * words + w];
                    }
                }
                let mut inn = out.clone();
                for d in ops[i].defs() {
                    inn[d as usize / 64] &= !(1 << (d % 64));
                }
                uses.clear();
                ops[i].uses(&mut uses);
                for u in &uses {
                    inn[u.0 as usize / 64] |= 1 << (u.0 % 64);
                }
                live_out[i * words..(i + 1) * words].copy_from_slice(&out);
                if live_in[i * words..(i + 1) * words] != inn[..] {
                    live_in[i * words..(i + 1) * words].copy_from_slice(&inn);
                    changed = true;
                }
            }
        }
        Liveness {
            words,
            live_in,
            live_out,
        }
    }

    pub(super) fn each(set: &[u64], mut f: impl FnMut(usize)) {
        for (w, &bits) in set.iter().enumerate() {
            let mut b = bits;
            while b != 0 {
                let t = b.trailing_zeros() as usize;
                f(w * 64 + t);
                b &= b - 1;
            }
        }
    }

    pub(super) fn live_in(&self, i: usize) -> &[u64] {
        &self.live_in[i * self.words..(i + 1) * self.words]
    }

    pub(super) fn live_out(&self, i: usize) -> &[u64] {
        &self.live_out[i * self.words..(i + 1) * self.words]
    }
}
