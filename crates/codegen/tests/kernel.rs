//! Runs assembled programs in the kernel: each test builds a `raw_tp`
//! program, writes the ELF object, loads it with libbpf (so the verifier
//! must accept it), runs it with BPF_PROG_TEST_RUN and reads the `results`
//! ARRAY map. Gated on root by `testgate` (skipped with a reason, or failed
//! when kernel tests are required).

use codegen::asm::{AluOp, Asm, Cond, Helper, Src, VReg, Width};
use codegen::elf::{ElfMap, ElfProgram, MapType, write_object};
use codegen::{Function, disasm};
use libbpf_rs::{MapCore, MapFlags, ObjectBuilder, ProgramInput};

const RESULTS: &str = "results";
const NRESULTS: u32 = 64;

fn results_map() -> ElfMap {
    ElfMap {
        name: RESULTS.into(),
        map_type: MapType::Array.id(),
        key_size: 4,
        value_size: 8,
        max_entries: NRESULTS,
        flags: 0,
    }
}

/// Emits `results[idx] = v` (a lookup, a NULL check and a store).
fn put(a: &mut Asm, idx: i32, v: VReg) {
    let key = a.stack(4);
    a.store_stack(key, 0, Src::Imm(idx), Width::W);
    let kp = a.vreg();
    a.stack_addr(kp, key, 0);
    let m = a.vreg();
    a.map_ptr(m, RESULTS);
    let p = a.vreg();
    a.call(
        Helper::MAP_LOOKUP_ELEM,
        &[Src::Reg(m), Src::Reg(kp)],
        Some(p),
    );
    let skip = a.label();
    a.br(Cond::Eq, p, Src::Imm(0), skip);
    a.store(p, 0, Src::Reg(v), Width::DW);
    a.bind(skip);
}

/// Loads `f` as a raw_tp program, runs it once with `args` as the context
/// and returns (return value, results[0..NRESULTS]).
fn run(f: &Function, args: &[u64]) -> (u32, Vec<u64>) {
    let obj = write_object(
        &[ElfProgram {
            name: "weft_test",
            section: "raw_tp/weft_test",
            func: f,
        }],
        &[results_map()],
    )
    .unwrap();
    let open = ObjectBuilder::default()
        .open_memory(&obj)
        .expect("libbpf opens the object");
    let loaded = match open.load() {
        Ok(o) => o,
        Err(e) => panic!("load failed: {e}\n{}", disasm(f)),
    };
    let prog = loaded.progs_mut().next().expect("one program");
    let mut ctx: Vec<u8> = args.iter().flat_map(|a| a.to_le_bytes()).collect();
    let out = prog
        .test_run(ProgramInput {
            context_in: Some(&mut ctx),
            ..Default::default()
        })
        .expect("test_run");
    let map = loaded.maps().find(|m| m.name() == RESULTS).unwrap();
    let vals = (0..NRESULTS)
        .map(|k| {
            let v = map
                .lookup(&k.to_le_bytes(), MapFlags::ANY)
                .unwrap()
                .unwrap();
            u64::from_le_bytes(v[..8].try_into().unwrap())
        })
        .collect();
    (out.return_value, vals)
}

fn arg(a: &mut Asm, i: i16) -> VReg {
    let v = a.vreg();
    let ctx = a.ctx();
    a.load(v, ctx, i * 8, Width::DW);
    v
}

#[test]
fn alu_semantics_match_rust() {
    testgate::require_root!();
    let x: u64 = 0xfedc_ba98_7654_3210;
    let y: u64 = 0x0000_0000_0001_2345;
    let neg: u64 = (-1234567i64) as u64;
    let mut a = Asm::new();
    type BinOp = fn(u64, u64) -> u64;
    let ops: &[(AluOp, BinOp)] = &[
        (AluOp::Add, |x, y| x.wrapping_add(y)),
        (AluOp::Sub, |x, y| x.wrapping_sub(y)),
        (AluOp::Mul, |x, y| x.wrapping_mul(y)),
        (AluOp::Div, |x, y| x / y),
        (AluOp::Mod, |x, y| x % y),
        (AluOp::SDiv, |x, y| (x as i64 / y as i64) as u64),
        (AluOp::SMod, |x, y| (x as i64 % y as i64) as u64),
        (AluOp::Or, |x, y| x | y),
        (AluOp::And, |x, y| x & y),
        (AluOp::Xor, |x, y| x ^ y),
    ];
    let mut want = Vec::new();
    let mut idx = 0;
    for (lhs, rhs) in [(x, y), (neg, y)] {
        for (op, f) in ops {
            let l = a.vreg();
            let r = a.vreg();
            let xv = arg(&mut a, if lhs == x { 0 } else { 2 });
            a.mov(l, Src::Reg(xv));
            let yv = arg(&mut a, 1);
            a.mov(r, Src::Reg(yv));
            a.alu(*op, l, Src::Reg(r));
            put(&mut a, idx, l);
            want.push((idx, f(lhs, rhs)));
            idx += 1;
        }
    }
    // Shifts and immediates.
    let v = arg(&mut a, 2);
    a.alu(AluOp::Arsh, v, Src::Imm(4));
    put(&mut a, idx, v);
    want.push((idx, ((neg as i64) >> 4) as u64));
    idx += 1;
    let v = arg(&mut a, 2);
    a.alu(AluOp::Rsh, v, Src::Imm(4));
    put(&mut a, idx, v);
    want.push((idx, neg >> 4));
    idx += 1;
    let v = arg(&mut a, 0);
    a.alu(AluOp::Lsh, v, Src::Imm(12));
    put(&mut a, idx, v);
    want.push((idx, x << 12));
    idx += 1;
    let v = arg(&mut a, 0);
    a.neg(v);
    put(&mut a, idx, v);
    want.push((idx, x.wrapping_neg()));
    idx += 1;
    // 32-bit forms zero-extend.
    let v = arg(&mut a, 0);
    a.alu32(AluOp::Add, v, Src::Imm(1));
    put(&mut a, idx, v);
    want.push((idx, (x as u32).wrapping_add(1) as u64));
    idx += 1;
    let v = a.vreg();
    let w = arg(&mut a, 2);
    a.mov32(v, Src::Reg(w));
    put(&mut a, idx, v);
    want.push((idx, neg as u32 as u64));
    idx += 1;
    let v = a.vreg();
    a.imm64(v, 0x1122_3344_5566_7788);
    put(&mut a, idx, v);
    want.push((idx, 0x1122_3344_5566_7788));
    idx += 1;
    let v = a.vreg();
    a.imm64(v, 0xffff_fff0);
    put(&mut a, idx, v);
    want.push((idx, 0xffff_fff0));
    idx += 1;
    let v = a.vreg();
    a.imm64(v, -5);
    put(&mut a, idx, v);
    want.push((idx, -5i64 as u64));
    idx += 1;
    // Narrow loads/stores through the stack.
    let s = a.stack(8);
    let v = arg(&mut a, 0);
    a.store_stack(s, 0, Src::Reg(v), Width::DW);
    let b = a.vreg();
    a.load_stack(b, s, 1, Width::B);
    put(&mut a, idx, b);
    want.push((idx, (x >> 8) & 0xff));
    idx += 1;
    let h = a.vreg();
    a.load_stack(h, s, 2, Width::H);
    put(&mut a, idx, h);
    want.push((idx, (x >> 16) & 0xffff));
    idx += 1;
    a.store_stack(s, 4, Src::Imm(-1), Width::W);
    let d = a.vreg();
    a.load_stack(d, s, 0, Width::DW);
    put(&mut a, idx, d);
    want.push((idx, 0xffff_ffff_0000_0000 | (x & 0xffff_ffff)));
    a.ret(Src::Imm(7));
    let f = a.finish().unwrap();
    let (ret, got) = run(&f, &[x, y, neg]);
    assert_eq!(ret, 7);
    for (i, w) in want {
        assert_eq!(got[i as usize], w, "result {i}\n{}", disasm(&f));
    }
}

#[test]
fn branches_and_loops() {
    testgate::require_root!();
    // sum = 0; i = 0; while (i < n) { if (i & 1) sum += i * 3; else sum += 1; i += 1 }
    let mut a = Asm::new();
    // The verifier needs a bounded loop: n is a constant.
    let n = a.vreg();
    a.mov(n, Src::Imm(37));
    let sum = a.vreg();
    let i = a.vreg();
    a.mov(sum, Src::Imm(0));
    a.mov(i, Src::Imm(0));
    let top = a.label();
    let done = a.label();
    a.bind(top);
    a.br(Cond::Ge, i, Src::Reg(n), done);
    let odd = a.label();
    let next = a.label();
    a.br(Cond::Set, i, Src::Imm(1), odd);
    a.alu(AluOp::Add, sum, Src::Imm(1));
    a.jmp(next);
    a.bind(odd);
    let t = a.vreg();
    a.mov(t, Src::Reg(i));
    a.alu(AluOp::Mul, t, Src::Imm(3));
    a.alu(AluOp::Add, sum, Src::Reg(t));
    a.bind(next);
    a.alu(AluOp::Add, i, Src::Imm(1));
    a.jmp(top);
    a.bind(done);
    put(&mut a, 0, sum);
    // Signed compare picks the right branch for negatives.
    let m = arg(&mut a, 1);
    let r = a.vreg();
    let neg = a.label();
    let join = a.label();
    a.br(Cond::SLt, m, Src::Imm(0), neg);
    a.mov(r, Src::Imm(10));
    a.jmp(join);
    a.bind(neg);
    a.mov(r, Src::Imm(20));
    a.bind(join);
    put(&mut a, 1, r);
    a.ret(Src::Reg(sum));
    let f = a.finish().unwrap();
    let want: u64 = (0..37u64).map(|i| if i & 1 == 1 { i * 3 } else { 1 }).sum();
    let (ret, got) = run(&f, &[37, -3i64 as u64]);
    assert_eq!(got[0], want);
    assert_eq!(got[1], 20);
    assert_eq!(ret as u64, want);
}

/// More simultaneously-live values than registers, live across helper
/// calls: the allocator must spill and still compute the right thing.
#[test]
fn spills_under_pressure_and_across_calls() {
    testgate::require_root!();
    let mut a = Asm::new();
    let x = arg(&mut a, 0);
    let vals: Vec<VReg> = (0..24)
        .map(|k| {
            let v = a.vreg();
            a.mov(v, Src::Reg(x));
            a.alu(AluOp::Mul, v, Src::Imm(k + 1));
            a.alu(AluOp::Add, v, Src::Imm(k * 7));
            v
        })
        .collect();
    // A call in the middle clobbers R0-R5.
    let t = a.vreg();
    a.call(Helper::KTIME_GET_NS, &[], Some(t));
    let acc = a.vreg();
    a.mov(acc, Src::Imm(0));
    for (k, v) in vals.iter().enumerate() {
        a.alu(AluOp::Mul, acc, Src::Imm(31));
        a.alu(AluOp::Xor, acc, Src::Reg(*v));
        if k % 8 == 7 {
            // Values stay live across more calls.
            let cpu = a.vreg();
            a.call(Helper::GET_SMP_PROCESSOR_ID, &[], Some(cpu));
        }
    }
    // The context pointer must survive the calls as well.
    let x2 = arg(&mut a, 0);
    put(&mut a, 0, acc);
    put(&mut a, 1, x2);
    for (k, v) in vals.iter().enumerate().take(4) {
        put(&mut a, 2 + k as i32, *v);
    }
    let nz = a.vreg();
    a.mov(nz, Src::Reg(t));
    a.alu(AluOp::Rsh, nz, Src::Imm(63));
    a.ret(Src::Reg(nz));
    let f = a.finish().unwrap();
    let text = disasm(&f);
    if std::env::var_os("WEFT_SHOW").is_some() {
        eprintln!("{text}");
    }
    assert!(
        text.contains("*(u64 *)(r10 -"),
        "expected spill stores:\n{text}"
    );
    let xin: u64 = 0x1234_5678_9abc;
    let want_vals: Vec<u64> = (0..24u64)
        .map(|k| xin.wrapping_mul(k + 1).wrapping_add(k * 7))
        .collect();
    let want = want_vals
        .iter()
        .fold(0u64, |acc, v| acc.wrapping_mul(31) ^ v);
    let (ret, got) = run(&f, &[xin]);
    assert_eq!(got[0], want, "\n{text}");
    assert_eq!(got[1], xin);
    assert_eq!(&got[2..6], &want_vals[..4]);
    assert_eq!(ret, 0);
}

/// Helper arguments in the "wrong" registers must be permuted correctly:
/// probe_read_kernel(dst, size, src) copies from a stack buffer.
#[test]
fn call_arguments_are_permuted() {
    testgate::require_root!();
    let mut a = Asm::new();
    let src = a.stack(8);
    let dst = a.stack(8);
    let x = arg(&mut a, 0);
    a.store_stack(src, 0, Src::Reg(x), Width::DW);
    a.store_stack(dst, 0, Src::Imm(0), Width::DW);
    for round in 0..3 {
        // Define in an order that puts the values in other argument registers.
        let s = a.vreg();
        let n = a.vreg();
        let d = a.vreg();
        match round {
            0 => {
                a.stack_addr(s, src, 0);
                a.mov(n, Src::Imm(8));
                a.stack_addr(d, dst, 0);
            }
            1 => {
                a.mov(n, Src::Imm(8));
                a.stack_addr(d, dst, 0);
                a.stack_addr(s, src, 0);
            }
            _ => {
                a.stack_addr(d, dst, 0);
                a.stack_addr(s, src, 0);
                a.mov(n, Src::Imm(8));
            }
        }
        let r = a.vreg();
        a.call(
            Helper::PROBE_READ_KERNEL,
            &[Src::Reg(d), Src::Reg(n), Src::Reg(s)],
            Some(r),
        );
        let v = a.vreg();
        a.load_stack(v, dst, 0, Width::DW);
        put(&mut a, round * 2, v);
        put(&mut a, round * 2 + 1, r);
        a.store_stack(dst, 0, Src::Imm(0), Width::DW);
    }
    a.ret(Src::Imm(0));
    let f = a.finish().unwrap();
    let (_, got) = run(&f, &[0xdead_beef_1234]);
    for round in 0..3 {
        assert_eq!(got[round * 2], 0xdead_beef_1234, "round {round}");
        assert_eq!(got[round * 2 + 1], 0, "round {round}");
    }
}

/// Atomic adds on a map value.
#[test]
fn atomic_add_counts() {
    testgate::require_root!();
    let mut a = Asm::new();
    let key = a.stack(4);
    a.store_stack(key, 0, Src::Imm(5), Width::W);
    let kp = a.vreg();
    a.stack_addr(kp, key, 0);
    let m = a.vreg();
    a.map_ptr(m, RESULTS);
    let p = a.vreg();
    a.call(
        Helper::MAP_LOOKUP_ELEM,
        &[Src::Reg(m), Src::Reg(kp)],
        Some(p),
    );
    let out = a.label();
    a.br(Cond::Eq, p, Src::Imm(0), out);
    let one = a.vreg();
    a.mov(one, Src::Imm(3));
    a.atomic_add(p, 0, one, Width::DW);
    a.atomic_add(p, 0, one, Width::DW);
    a.bind(out);
    a.ret(Src::Imm(0));
    let f = a.finish().unwrap();
    let (_, got) = run(&f, &[0]);
    assert_eq!(got[5], 6);
}
