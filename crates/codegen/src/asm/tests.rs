//! Register-allocator tests: random programs are run twice, once on
//! virtual registers (straight from the assembler's op list) and once as
//! assembled BPF on a small interpreter, and must agree.

use std::collections::HashMap;

use super::alloc::LocFinal;
use super::model::*;
use super::*;
use crate::disasm::disasm;
use crate::insn::*;

const STACK_TOP: u64 = 0x1000_0000;
const CTX_VALUE: u64 = 0x0bad_c0de_0000_0042;
/// What parameters 1..5 (R2..R5 at entry) hold; parameter 0 is the ctx.
const PARAM_VALUES: [u64; 5] = [
    CTX_VALUE,
    0x1111_0000_0000_0002,
    0x2222_0000_0000_0003,
    0x3333_0000_0000_0004,
    0x4444_0000_0000_0005,
];
/// Fake helpers: `FAKE + n` takes `n` arguments.
const FAKE: u32 = 1000;

fn fake_helper(args: &[u64]) -> u64 {
    let weights = [3u64, 5, 7, 11, 13];
    args.iter()
        .zip(weights)
        .fold(0x77u64, |acc, (a, w)| acc.wrapping_mul(w).wrapping_add(*a))
}

fn alu(code: u8, off: i16, wide: bool, a: u64, b: u64) -> u64 {
    let (a, b) = if wide {
        (a, b)
    } else {
        (a as u32 as u64, b as u32 as u64)
    };
    let bits = if wide { 64 } else { 32 };
    let r = match code {
        ALU_ADD => a.wrapping_add(b),
        ALU_SUB => a.wrapping_sub(b),
        ALU_MUL => a.wrapping_mul(b),
        ALU_OR => a | b,
        ALU_AND => a & b,
        ALU_XOR => a ^ b,
        ALU_LSH => a << (b % bits),
        ALU_RSH => a >> (b % bits),
        ALU_ARSH if wide => ((a as i64) >> (b % 64)) as u64,
        ALU_ARSH => ((a as u32 as i32) >> (b % 32)) as u32 as u64,
        ALU_MOV => b,
        ALU_NEG => a.wrapping_neg(),
        _ => panic!("alu op {code:#x} off {off} not modelled"),
    };
    if wide { r } else { r as u32 as u64 }
}

fn cond(code: u8, a: u64, b: u64) -> bool {
    match code {
        JMP_JEQ => a == b,
        JMP_JNE => a != b,
        JMP_JGT => a > b,
        JMP_JGE => a >= b,
        JMP_JLT => a < b,
        JMP_JLE => a <= b,
        JMP_JSGT => (a as i64) > (b as i64),
        JMP_JSGE => (a as i64) >= (b as i64),
        JMP_JSLT => (a as i64) < (b as i64),
        JMP_JSLE => (a as i64) <= (b as i64),
        JMP_JSET => a & b != 0,
        _ => panic!("jump op {code:#x} not modelled"),
    }
}

struct Mem {
    stack: [u8; 512],
    init: [bool; 512],
}

impl Mem {
    fn new() -> Mem {
        Mem {
            stack: [0; 512],
            init: [false; 512],
        }
    }

    fn index(addr: u64, n: usize) -> usize {
        assert!(
            addr >= STACK_TOP - 512 && addr + n as u64 <= STACK_TOP,
            "access outside the stack: {addr:#x}"
        );
        (addr - (STACK_TOP - 512)) as usize
    }

    fn load(&self, addr: u64, n: usize) -> u64 {
        let i = Mem::index(addr, n);
        assert!(
            self.init[i..i + n].iter().all(|b| *b),
            "read of uninitialized stack at {addr:#x}"
        );
        let mut b = [0u8; 8];
        b[..n].copy_from_slice(&self.stack[i..i + n]);
        u64::from_le_bytes(b)
    }

    fn store(&mut self, addr: u64, n: usize, v: u64) {
        let i = Mem::index(addr, n);
        self.stack[i..i + n].copy_from_slice(&v.to_le_bytes()[..n]);
        self.init[i..i + n].iter_mut().for_each(|b| *b = true);
    }
}

/// Runs assembled code; uninitialized registers hold poison.
fn run_insns(f: &Function) -> u64 {
    let mut r = [0xdead_beef_dead_0000u64; 11];
    r[1..6].copy_from_slice(&PARAM_VALUES);
    r[10] = STACK_TOP;
    let mut init = [false; 11];
    init[1..6].iter_mut().for_each(|i| *i = true);
    init[10] = true;
    let mut mem = Mem::new();
    let mut pc = 0usize;
    let mut steps = 0;
    loop {
        steps += 1;
        assert!(steps < 1_000_000, "runaway program");
        let i = f.insns[pc];
        let (d, s) = (i.dst as usize, i.src as usize);
        let read = |init: &[bool; 11], reg: usize| {
            assert!(
                init[reg],
                "read of uninitialized r{reg} at {pc}\n{}",
                disasm(f)
            );
        };
        let class = i.class();
        let mut next = pc + 1;
        match class {
            CLASS_ALU | CLASS_ALU64 => {
                let op = i.code & OP_MASK;
                let b = if i.code & SRC_X != 0 {
                    read(&init, s);
                    r[s]
                } else {
                    i.imm as i64 as u64
                };
                if op != ALU_MOV {
                    read(&init, d);
                }
                r[d] = alu(op, i.off, class == CLASS_ALU64, r[d], b);
                init[d] = true;
            }
            CLASS_LD => {
                assert!(i.is_ld_imm64());
                let hi = f.insns[pc + 1].imm as u32 as u64;
                r[d] = (hi << 32) | i.imm as u32 as u64;
                init[d] = true;
                next = pc + 2;
            }
            CLASS_LDX => {
                read(&init, s);
                let n = Size::from_bits(i.code).bytes() as usize;
                r[d] = mem.load(r[s].wrapping_add(i.off as i64 as u64), n);
                init[d] = true;
            }
            CLASS_STX | CLASS_ST => {
                read(&init, d);
                let n = Size::from_bits(i.code).bytes() as usize;
                let v = if class == CLASS_STX {
                    read(&init, s);
                    r[s]
                } else {
                    i.imm as i64 as u64
                };
                assert_eq!(i.code & MODE_MASK, MODE_MEM);
                mem.store(r[d].wrapping_add(i.off as i64 as u64), n, v);
            }
            CLASS_JMP => match i.code & OP_MASK {
                JMP_EXIT => {
                    read(&init, 0);
                    return r[0];
                }
                JMP_CALL => {
                    let n = i.imm as u32 - FAKE;
                    let args: Vec<u64> = (1..=n as usize)
                        .map(|k| {
                            read(&init, k);
                            r[k]
                        })
                        .collect();
                    r[0] = fake_helper(&args);
                    init[0] = true;
                    for (k, reg) in r.iter_mut().enumerate().take(6).skip(1) {
                        *reg = 0x5555_0000 + k as u64;
                        init[k] = false;
                    }
                }
                JMP_JA => next = (pc as i64 + 1 + i.off as i64) as usize,
                op => {
                    read(&init, d);
                    let b = if i.code & SRC_X != 0 {
                        read(&init, s);
                        r[s]
                    } else {
                        i.imm as i64 as u64
                    };
                    if cond(op, r[d], b) {
                        next = (pc as i64 + 1 + i.off as i64) as usize;
                    }
                }
            },
            _ => panic!("class {class} not modelled"),
        }
        pc = next;
    }
}

/// Runs the op list on virtual registers.
fn run_ops(ops: &[Op]) -> u64 {
    let labels: HashMap<Label, usize> = ops
        .iter()
        .enumerate()
        .filter_map(|(i, op)| match op {
            Op::Bind(l) => Some((*l, i)),
            _ => None,
        })
        .collect();
    let mut v: HashMap<u32, u64> = HashMap::new();
    let mut mem = Mem::new();
    let get = |v: &HashMap<u32, u64>, r: VReg| *v.get(&r.0).expect("vreg defined");
    let src = |v: &HashMap<u32, u64>, s: Src| match s {
        Src::Reg(r) => get(v, r),
        Src::Imm(k) => k as i64 as u64,
    };
    let base = |v: &HashMap<u32, u64>, b: Base| match b {
        Base::Reg(r) => get(v, r),
        Base::Frame => STACK_TOP,
    };
    let mut pc = 0;
    loop {
        let mut next = pc + 1;
        match &ops[pc] {
            Op::Entry { params } => {
                for k in 0..*params {
                    v.insert(k, PARAM_VALUES[k as usize]);
                }
            }
            Op::Mov { dst, src: s, wide } => {
                let x = src(&v, *s);
                v.insert(dst.0, if *wide { x } else { x as u32 as u64 });
            }
            Op::Imm64 { dst, value } => {
                v.insert(dst.0, *value as u64);
            }
            Op::Alu {
                op,
                dst,
                src: s,
                wide,
            } => {
                let (bits, off) = op.code().bits();
                let x = alu(bits, off, *wide, get(&v, *dst), src(&v, *s));
                v.insert(dst.0, x);
            }
            Op::Neg { dst } => {
                let x = get(&v, *dst).wrapping_neg();
                v.insert(dst.0, x);
            }
            Op::Load {
                dst,
                base: b,
                off,
                w,
            } => {
                let x = mem.load(
                    base(&v, *b).wrapping_add(*off as i64 as u64),
                    w.bytes() as usize,
                );
                v.insert(dst.0, x);
            }
            Op::Store {
                base: b,
                off,
                src: s,
                w,
            } => {
                let x = src(&v, *s);
                mem.store(
                    base(&v, *b).wrapping_add(*off as i64 as u64),
                    w.bytes() as usize,
                    x,
                );
            }
            Op::StackAddr { dst, off } => {
                v.insert(dst.0, STACK_TOP.wrapping_add(*off as i64 as u64));
            }
            Op::MapPtr { .. }
            | Op::FuncAddr { .. }
            | Op::BtfVarAddr { .. }
            | Op::AtomicAdd { .. }
            | Op::AtomicFetch { .. } => {
                panic!("not modelled")
            }
            Op::Call {
                helper, args, ret, ..
            } => {
                assert_eq!(helper.0 - FAKE, args.len() as u32);
                let a: Vec<u64> = args.iter().map(|s| src(&v, *s)).collect();
                if let Some(r) = ret {
                    v.insert(r.0, fake_helper(&a));
                }
            }
            Op::Jmp { target } => next = labels[target],
            Op::Br {
                cond: c,
                a,
                b,
                target,
            } => {
                if cond(c.code().bits(), get(&v, *a), src(&v, *b)) {
                    next = labels[target];
                }
            }
            Op::Ret { value } => return src(&v, *value),
            Op::Bind(_) => {}
        }
        pc = next;
    }
}

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

struct Gen {
    rng: Rng,
    a: Asm,
    pool: Vec<VReg>,
    slots: Vec<Slot>,
}

impl Gen {
    fn pick(&mut self) -> VReg {
        self.pool[self.rng.below(self.pool.len() as u64) as usize]
    }

    fn src(&mut self) -> Src {
        if self.rng.below(3) == 0 {
            Src::Imm(self.rng.next() as i32 >> self.rng.below(31))
        } else {
            Src::Reg(self.pick())
        }
    }

    fn block(&mut self, depth: u32, len: u32) {
        for _ in 0..len {
            self.item(depth);
        }
    }

    fn item(&mut self, depth: u32) {
        let ops = [
            AluOp::Add,
            AluOp::Sub,
            AluOp::Mul,
            AluOp::Or,
            AluOp::And,
            AluOp::Xor,
        ];
        match self.rng.below(14) {
            0..=3 => {
                let op = ops[self.rng.below(ops.len() as u64) as usize];
                let d = self.pick();
                let s = self.src();
                if self.rng.below(4) == 0 {
                    self.a.alu32(op, d, s);
                } else {
                    self.a.alu(op, d, s);
                }
            }
            4 => {
                let d = self.pick();
                let k = self.rng.below(64) as i32;
                let op = [AluOp::Lsh, AluOp::Rsh, AluOp::Arsh][self.rng.below(3) as usize];
                self.a.alu(op, d, Src::Imm(k));
            }
            5 => {
                let (d, s) = (self.pick(), self.src());
                if self.rng.below(2) == 0 {
                    self.a.mov(d, s);
                } else {
                    self.a.mov32(d, s);
                }
            }
            6 => {
                let d = self.pick();
                let k = self.rng.next() as i64;
                self.a.imm64(d, k);
            }
            7 => {
                let d = self.pick();
                self.a.neg(d);
            }
            8 | 9 => {
                let n = self.rng.below(6) as usize;
                let args: Vec<Src> = (0..n).map(|_| self.src()).collect();
                let ret = if self.rng.below(4) == 0 {
                    None
                } else {
                    Some(self.pick())
                };
                self.a.call(Helper(FAKE + n as u32), &args, ret);
            }
            10 => {
                let slot = self.slots[self.rng.below(self.slots.len() as u64) as usize];
                if self.rng.below(2) == 0 {
                    let s = self.src();
                    self.a.store_stack(slot, 0, s, Width::DW);
                } else {
                    let d = self.pick();
                    // Through a pointer or directly off the frame.
                    if self.rng.below(2) == 0 {
                        let p = self.a.vreg();
                        self.a.stack_addr(p, slot, 0);
                        self.a.load(d, p, 0, Width::DW);
                    } else {
                        self.a.load_stack(d, slot, 0, Width::DW);
                    }
                }
            }
            11 | 12 if depth < 3 => {
                let conds = [Cond::Eq, Cond::Ne, Cond::Gt, Cond::SLt, Cond::Set, Cond::Le];
                let c = conds[self.rng.below(conds.len() as u64) as usize];
                let (x, y) = (self.pick(), self.src());
                let other = self.a.label();
                let end = self.a.label();
                self.a.br(c, x, y, other);
                let n = self.rng.below(5) as u32;
                self.block(depth + 1, n);
                if self.rng.below(8) == 0 {
                    let r = self.pick();
                    self.a.ret(Src::Reg(r));
                } else {
                    self.a.jmp(end);
                }
                self.a.bind(other);
                let n = self.rng.below(5) as u32;
                self.block(depth + 1, n);
                self.a.bind(end);
            }
            13 if depth < 2 => {
                let c = self.a.vreg();
                self.a.mov(c, Src::Imm(0));
                let top = self.a.label();
                let done = self.a.label();
                self.a.bind(top);
                self.a.br(Cond::Ge, c, Src::Imm(3), done);
                let n = 1 + self.rng.below(5) as u32;
                self.block(depth + 1, n);
                self.a.alu(AluOp::Add, c, Src::Imm(1));
                self.a.jmp(top);
                self.a.bind(done);
            }
            _ => {}
        }
    }
}

fn random_program(seed: u64) -> Asm {
    let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    // Programs have one parameter; a callback has up to five.
    let params = if rng.below(3) == 0 {
        2 + rng.below(4) as u32
    } else {
        1
    };
    let mut g = Gen {
        rng,
        a: Asm::with_params(params),
        pool: Vec::new(),
        slots: Vec::new(),
    };
    let nv = 2 + g.rng.below(30);
    let ctx = g.a.ctx();
    g.pool.push(ctx);
    for k in 1..params {
        g.pool.push(g.a.param(k));
    }
    for _ in 0..nv {
        let v = g.a.vreg();
        match g.rng.below(3) {
            0 => g.a.mov(v, Src::Reg(ctx)),
            1 => g.a.imm64(v, g.rng.next() as i64),
            _ => g.a.mov(v, Src::Imm(g.rng.next() as i32)),
        }
        g.pool.push(v);
    }
    for _ in 0..1 + g.rng.below(4) {
        let s = g.a.stack(8);
        g.a.store_stack(s, 0, Src::Imm(0), Width::DW);
        g.slots.push(s);
    }
    let len = 5 + g.rng.below(40) as u32;
    g.block(0, len);
    let acc = g.a.vreg();
    g.a.mov(acc, Src::Imm(0));
    for v in g.pool.clone() {
        g.a.alu(AluOp::Mul, acc, Src::Imm(31));
        g.a.alu(AluOp::Xor, acc, Src::Reg(v));
    }
    g.a.ret(Src::Reg(acc));
    g.a
}

#[test]
fn random_programs_agree_with_vreg_semantics() {
    let mut spilled = 0;
    for seed in 0..3000 {
        let a = random_program(seed);
        let ops = a.ops.clone();
        let want = run_ops(&ops);
        let f = a.finish().unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        if disasm(&f).contains("(r10 - ") {
            spilled += 1;
        }
        let got = run_insns(&f);
        assert_eq!(got, want, "seed {seed}\n{}", disasm(&f));
    }
    assert!(spilled > 100, "too few programs spilled ({spilled})");
}

/// Runs the argument shuffle with the given locations and returns R1..R5.
fn shuffle(locs: &[Option<LocFinal>], args: &[Src]) -> Vec<u64> {
    let insns = super::emit::argument_moves(locs, args);
    let mut r = [0u64; 11];
    for (i, x) in r.iter_mut().enumerate() {
        *x = 100 + i as u64;
    }
    let mut stack = HashMap::new();
    stack.insert(-8i16, 777u64);
    for i in &insns {
        match i.code & OP_MASK {
            ALU_MOV if i.code & SRC_X != 0 => r[i.dst as usize] = r[i.src as usize],
            ALU_MOV => r[i.dst as usize] = i.imm as u64,
            _ => {
                assert_eq!(i.class(), CLASS_LDX);
                r[i.dst as usize] = stack[&i.off];
            }
        }
    }
    r[1..6].to_vec()
}

#[test]
fn argument_parallel_moves() {
    use LocFinal::{Reg as R, Stack};
    let locs = [
        Some(R(Reg::R2)),
        Some(R(Reg::R1)),
        Some(R(Reg::R4)),
        Some(R(Reg::R3)),
        Some(R(Reg::R0)),
        Some(Stack(-8)),
        Some(R(Reg::R5)),
    ];
    let v = |i| Src::Reg(VReg(i));
    // Swap R1<->R2, R3<->R4, R0 -> R5.
    assert_eq!(
        shuffle(&locs, &[v(0), v(1), v(2), v(3), v(4)]),
        [102, 101, 104, 103, 100]
    );
    // A three-cycle R2 -> R1 -> R5 -> R2... plus a spilled and an immediate.
    assert_eq!(
        shuffle(&locs, &[v(0), v(6), v(5), Src::Imm(9), v(1)]),
        [102, 105, 777, 9, 101]
    );
    // The same value twice.
    assert_eq!(shuffle(&locs, &[v(2), v(2)])[..2], [104, 104]);
}

#[test]
fn unreachable_code_is_dropped_and_errors_are_reported() {
    let mut a = Asm::new();
    a.ret(Src::Imm(0));
    let v = a.vreg();
    a.mov(v, Src::Imm(1));
    a.ret(Src::Reg(v));
    let f = a.finish().unwrap();
    assert_eq!(disasm(&f), "   0: r0 = 0\n   1: exit\n");

    let mut a = Asm::new();
    let v = a.vreg();
    a.mov(v, Src::Imm(1));
    assert!(matches!(a.finish(), Err(AsmError::FallsOffEnd { .. })));

    let mut a = Asm::new();
    let l = a.label();
    a.jmp(l);
    assert!(matches!(a.finish(), Err(AsmError::UnboundLabel { .. })));

    let mut a = Asm::new();
    a.set_span(Span::new(3, 9));
    a.stack(500);
    a.stack(16);
    a.ret(Src::Imm(0));
    match a.finish() {
        Err(AsmError::StackTooLarge { span, needed }) => {
            assert_eq!(span, Span::new(3, 9));
            assert_eq!(needed, 520);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn spans_follow_instructions() {
    let mut a = Asm::new();
    let v = a.vreg();
    a.set_span(Span::new(1, 2));
    a.imm64(v, 1 << 40);
    a.set_span(Span::new(5, 6));
    a.ret(Src::Reg(v));
    let f = a.finish().unwrap();
    assert_eq!(f.insns.len(), f.spans.len());
    assert_eq!(f.spans[0], Span::new(1, 2));
    assert_eq!(f.spans[1], Span::new(1, 2));
    assert_eq!(*f.spans.last().unwrap(), Span::new(5, 6));
}

#[test]
fn simple_program_has_no_redundant_moves() {
    let mut a = Asm::new();
    let ctx = a.ctx();
    let x = a.vreg();
    a.load(x, ctx, 8, Width::W);
    let p = a.vreg();
    a.call(Helper::GET_CURRENT_PID_TGID, &[], Some(p));
    a.alu(AluOp::Add, p, Src::Reg(x));
    a.ret(Src::Reg(p));
    let f = a.finish().unwrap();
    assert_eq!(
        disasm(&f),
        "   0: r6 = *(u32 *)(r1 + 8)\n   1: call bpf_get_current_pid_tgid#14\n   2: r0 += r6\n   3: exit\n"
    );
}
