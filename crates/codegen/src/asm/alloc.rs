//! Linear-scan register allocation over live intervals: each op `i` has a
//! use point `2i` and a def point `2i + 1`; a vreg live across a `call` may
//! only use R6–R9 (or is spilled); when no register is free, the interval
//! ending last is spilled whole to an 8-byte stack slot, and slots are shared
//! between spilled intervals that do not overlap.

use super::liveness::Liveness;
use super::model::{Op, Src};
use crate::insn::Reg;

/// Where a vreg lives for its whole interval.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Loc {
    Reg(Reg),
    /// A stack slot (offset assigned after allocation).
    Spill,
}

/// Scratch registers for reloading spilled operands (kept out of allocation
/// once anything spills). R0 is also the cycle-breaking temporary of the
/// argument parallel move (it is never an argument register).
pub(super) const SCRATCH: [Reg; 2] = [Reg::R0, Reg::R5];
pub(super) const CALLEE_SAVED: [Reg; 4] = [Reg::R6, Reg::R7, Reg::R8, Reg::R9];
pub(super) const ANY: [Reg; 10] = [
    Reg::R1,
    Reg::R2,
    Reg::R3,
    Reg::R4,
    Reg::R5,
    Reg::R0,
    Reg::R6,
    Reg::R7,
    Reg::R8,
    Reg::R9,
];

pub(super) struct Alloc {
    /// Per vreg: its location (None if it never appears).
    pub(super) loc: Vec<Option<Loc>>,
    /// (start, end, vreg) of spilled intervals.
    pub(super) spilled: Vec<(usize, usize, usize)>,
}

/// A resolved location.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum LocFinal {
    Reg(Reg),
    /// Offset from r10.
    Stack(i16),
}

impl Alloc {
    /// Gives every spilled vreg an 8-byte slot below the user frame, sharing
    /// slots between intervals that do not overlap. Returns the final
    /// locations and the bytes of spill slots.
    pub(super) fn assign_slots(&self, user_frame: u32) -> (Vec<Option<LocFinal>>, u32) {
        let mut ivs = self.spilled.clone();
        ivs.sort();
        let mut slot_of = vec![0u32; self.loc.len()];
        // (end, slot) of slots in use.
        let mut active: Vec<(usize, u32)> = Vec::new();
        let mut free: Vec<u32> = Vec::new();
        let mut nslots = 0u32;
        for (start, end, v) in ivs {
            active.retain(|&(e, s)| {
                if e < start {
                    free.push(s);
                    false
                } else {
                    true
                }
            });
            free.sort_unstable_by(|a, b| b.cmp(a));
            let slot = free.pop().unwrap_or_else(|| {
                nslots += 1;
                nslots - 1
            });
            active.push((end, slot));
            slot_of[v] = slot;
        }
        let locs = self
            .loc
            .iter()
            .enumerate()
            .map(|(v, l)| {
                l.map(|l| match l {
                    Loc::Reg(r) => LocFinal::Reg(r),
                    Loc::Spill => {
                        let off = user_frame as i64 + 8 * (slot_of[v] as i64 + 1);
                        LocFinal::Stack(-(off.min(32768)) as i16)
                    }
                })
            })
            .collect();
        (locs, nslots * 8)
    }
}

/// The registers a vreg would like, in order of first mention (a call's
/// result wants R0, an argument its argument register): at most R0–R5.
#[derive(Clone, Copy)]
struct Hints {
    regs: [Reg; 6],
    len: u8,
}

impl Hints {
    const EMPTY: Hints = Hints {
        regs: [Reg::R0; 6],
        len: 0,
    };

    fn want(&mut self, r: Reg) {
        let len = self.len as usize;
        if !self.regs[..len].contains(&r) && len < self.regs.len() {
            self.regs[len] = r;
            self.len += 1;
        }
    }

    fn iter(&self) -> impl Iterator<Item = Reg> + '_ {
        self.regs[..self.len as usize].iter().copied()
    }
}

pub(super) fn allocate(ops: &[Op], live: &Liveness, nvregs: usize, scratch: &[Reg]) -> Alloc {
    const NONE: usize = usize::MAX;
    let mut start = vec![NONE; nvregs];
    let mut end = vec![0usize; nvregs];
    let mut crosses = vec![false; nvregs];
    let mut hint = vec![Hints::EMPTY; nvregs];
    fn cover(v: usize, p: usize, start: &mut [usize], end: &mut [usize]) {
        if start[v] == NONE || p < start[v] {
            start[v] = p;
        }
        if p > end[v] {
            end[v] = p;
        }
    }
    let mut uses = Vec::new();
    for (i, op) in ops.iter().enumerate() {
        Liveness::each(live.live_in(i), |v| cover(v, 2 * i, &mut start, &mut end));
        uses.clear();
        op.uses(&mut uses);
        for u in &uses {
            cover(u.0 as usize, 2 * i, &mut start, &mut end);
        }
        let defs = op.defs();
        for d in defs.clone() {
            cover(d as usize, 2 * i + 1, &mut start, &mut end);
        }
        Liveness::each(live.live_out(i), |v| {
            cover(v, 2 * i + 1, &mut start, &mut end)
        });
        match op {
            Op::Call { args, ret, .. } => {
                Liveness::each(live.live_out(i), |v| {
                    if !defs.contains(&(v as u32)) {
                        crosses[v] = true;
                    }
                });
                for (k, a) in args.iter().enumerate() {
                    if let Src::Reg(v) = a {
                        hint[v.0 as usize].want(Reg::arg(k));
                    }
                }
                if let Some(r) = ret {
                    hint[r.0 as usize].want(Reg::R0);
                }
            }
            Op::Entry { params } => {
                for (k, h) in hint.iter_mut().take(*params as usize).enumerate() {
                    h.want(Reg::arg(k));
                }
            }
            Op::Ret { value: Src::Reg(v) } => {
                hint[v.0 as usize].want(Reg::R0);
            }
            _ => {}
        }
    }

    let mut order: Vec<usize> = (0..nvregs).filter(|&v| start[v] != NONE).collect();
    order.sort_unstable_by_key(|&v| (start[v], v));

    let usable = |set: &[Reg]| -> Vec<Reg> {
        set.iter()
            .copied()
            .filter(|r| !scratch.contains(r))
            .collect()
    };
    let across_calls = usable(&CALLEE_SAVED);
    let anywhere = usable(&ANY);
    let mut loc: Vec<Option<Loc>> = vec![None; nvregs];
    // Active intervals holding a register: (vreg, reg).
    let mut active: Vec<(usize, Reg)> = Vec::new();
    let mut spilled = Vec::new();
    for &v in &order {
        active.retain(|&(a, _)| end[a] >= start[v]);
        let allowed: &[Reg] = if crosses[v] { &across_calls } else { &anywhere };
        let busy = |r: Reg| active.iter().any(|&(_, ar)| ar == r);
        let pick = hint[v]
            .iter()
            .find(|h| allowed.contains(h) && !busy(*h))
            .or_else(|| allowed.iter().copied().find(|r| !busy(*r)));
        if let Some(r) = pick {
            loc[v] = Some(Loc::Reg(r));
            active.push((v, r));
            continue;
        }
        // Spill the interval that ends last among those we could displace.
        let victim = active
            .iter()
            .enumerate()
            .filter(|(_, (_, r))| allowed.contains(r))
            .max_by_key(|(_, (a, _))| (end[*a], *a))
            .map(|(idx, &(a, r))| (idx, a, r));
        match victim {
            Some((idx, a, r)) if end[a] > end[v] => {
                loc[a] = Some(Loc::Spill);
                spilled.push(a);
                active[idx] = (v, r);
                loc[v] = Some(Loc::Reg(r));
            }
            _ => {
                loc[v] = Some(Loc::Spill);
                spilled.push(v);
            }
        }
    }
    Alloc {
        spilled: spilled.iter().map(|&v| (start[v], end[v], v)).collect(),
        loc,
    }
}
