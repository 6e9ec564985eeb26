//! Pruning and liveness: labels checked, unreachable ops dropped (the
//! verifier rejects unreachable instructions), and which vregs are live
//! into and out of each op (a backward data-flow to a fixed point, so a
//! value live around a loop's back edge is live through the whole loop).

use source::Span;

use super::model::{AsmError, Label, Op};

/// Where each label is bound: the op index, by label number (labels are
/// numbered densely from 0 by the assembler).
pub(super) struct LabelPlaces(Vec<u32>);

impl LabelPlaces {
    const UNBOUND: u32 = u32::MAX;

    /// The places of `ops`' labels (`nlabels` labels in all), and the
    /// first op that binds a label bound before, if any.
    fn of(ops: &[Op], nlabels: u32) -> (LabelPlaces, Option<usize>) {
        let mut at = vec![Self::UNBOUND; nlabels as usize];
        let mut bound_twice = None;
        for (i, op) in ops.iter().enumerate() {
            if let Op::Bind(l) = op {
                if at[l.0 as usize] != Self::UNBOUND {
                    bound_twice.get_or_insert(i);
                }
                at[l.0 as usize] = i as u32;
            }
        }
        (LabelPlaces(at), bound_twice)
    }

    fn get(&self, l: Label) -> Option<usize> {
        match self.0.get(l.0 as usize) {
            Some(&i) if i != Self::UNBOUND => Some(i as usize),
            _ => None,
        }
    }
}

/// Checks labels, drops unreachable ops (the verifier rejects unreachable
/// instructions) and rejects paths that run off the end.
pub(super) fn check_and_prune(
    mut ops: Vec<Op>,
    mut spans: Vec<Span>,
    nlabels: u32,
) -> Result<(Vec<Op>, Vec<Span>), AsmError> {
    let (places, bound_twice) = LabelPlaces::of(&ops, nlabels);
    if let Some(i) = bound_twice {
        return Err(AsmError::LabelBoundTwice { span: spans[i] });
    }
    for (i, op) in ops.iter().enumerate() {
        if let Some(l) = op.target()
            && places.get(l).is_none()
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
        if let Some(i) = ops[i].target().and_then(|l| places.get(l)) {
            work.push(i);
        }
    }
    // Most functions have nothing to drop: keep their vectors as they are.
    let keep = |i: usize| reach[i] || matches!(ops[i], Op::Bind(_));
    if (0..n).all(keep) {
        return Ok((ops, spans));
    }
    let kept: Vec<bool> = (0..n).map(keep).collect();
    let mut i = 0;
    ops.retain(|_| {
        i += 1;
        kept[i - 1]
    });
    let mut i = 0;
    spans.retain(|_| {
        i += 1;
        kept[i - 1]
    });
    Ok((ops, spans))
}

/// The ops each op can pass control to: at most two (the next op and a jump
/// target), `NONE` where there is none.
struct Successors(Vec<[u32; 2]>);

impl Successors {
    const NONE: u32 = u32::MAX;

    fn of(ops: &[Op], nlabels: u32) -> Successors {
        // `check_and_prune` has refused labels bound twice.
        let (places, _) = LabelPlaces::of(ops, nlabels);
        let n = ops.len();
        Successors(
            ops.iter()
                .enumerate()
                .map(|(i, op)| {
                    let next = if op.falls_through() && i + 1 < n {
                        i as u32 + 1
                    } else {
                        Self::NONE
                    };
                    let jump = op
                        .target()
                        .and_then(|l| places.get(l))
                        .map_or(Self::NONE, |t| t as u32);
                    [next, jump]
                })
                .collect(),
        )
    }
}

pub(super) struct Liveness {
    words: usize,
    live_in: Vec<u64>,
    live_out: Vec<u64>,
}

impl Liveness {
    pub(super) fn compute(ops: &[Op], nvregs: usize, nlabels: u32) -> Liveness {
        let n = ops.len();
        let words = nvregs.div_ceil(64);
        let succ = Successors::of(ops, nlabels);
        // Each op's uses and defs, gathered once: the fixed point visits
        // every op several times when there are loops.
        let mut use_start = Vec::with_capacity(n + 1);
        let mut uses = Vec::with_capacity(n * 2);
        for op in ops {
            use_start.push(uses.len() as u32);
            op.uses(&mut uses);
        }
        use_start.push(uses.len() as u32);
        let mut live_in = vec![0u64; n * words];
        let mut live_out = vec![0u64; n * words];
        let mut inn = vec![0u64; words];
        // Without a jump backwards, one pass from the end is exact: every
        // successor of an op is seen before it. A loop needs the fixed point.
        let backwards = succ
            .0
            .iter()
            .enumerate()
            .any(|(i, [_, jump])| *jump != Successors::NONE && *jump as usize <= i);
        let mut changed = true;
        while changed {
            changed = false;
            for i in (0..n).rev() {
                let out = &mut live_out[i * words..(i + 1) * words];
                out.fill(0);
                for &s in &succ.0[i] {
                    if s != Successors::NONE {
                        let s = s as usize;
                        for (o, l) in out.iter_mut().zip(&live_in[s * words..(s + 1) * words]) {
                            *o |= l;
                        }
                    }
                }
                inn.copy_from_slice(out);
                for d in ops[i].defs() {
                    inn[d as usize / 64] &= !(1 << (d % 64));
                }
                for u in &uses[use_start[i] as usize..use_start[i + 1] as usize] {
                    inn[u.0 as usize / 64] |= 1 << (u.0 % 64);
                }
                let slot = &mut live_in[i * words..(i + 1) * words];
                if slot != &inn[..] {
                    slot.copy_from_slice(&inn);
                    changed = backwards;
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
