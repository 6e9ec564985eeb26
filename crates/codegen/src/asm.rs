//! A typed BPF assembler over virtual registers.
//!
//! The lowering emits instructions on [`VReg`]s with forward and backward
//! jumps to [`Label`]s; [`Asm::finish`] drops unreachable code, computes
//! liveness, assigns physical registers (spilling to 8-byte stack slots when
//! they run out), and resolves labels into a [`Function`].
//!
//! Register allocation is linear scan over live intervals:
//! - liveness is a backward data-flow over the instruction graph, so a value
//!   live around a loop's back edge is live through the whole loop;
//! - each instruction `i` has a use point `2i` and a def point `2i + 1`; a
//!   vreg's interval is the hull of its points;
//! - a vreg live across a `call` may only use R6–R9 (or is spilled), others
//!   may also use R0–R5;
//! - when no register is free, the interval ending last is spilled whole;
//!   if anything spilled, allocation is redone with R0 and R5 kept as
//!   scratch registers to reload spilled operands.

use std::collections::HashMap;
use std::fmt;

use source::Span;

#[cfg(test)]
use crate::disasm::disasm;
use crate::insn::{AluCode, Insn, JmpCode, Reg, Size};

/// The BPF stack limit of one frame.
pub const MAX_STACK: u32 = 512;

/// A virtual register.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct VReg(pub u32);

/// A register or 32-bit immediate operand (immediates are sign-extended to
/// 64 bits by 64-bit operations).
#[derive(Clone, Copy, Debug)]
pub enum Src {
    Reg(VReg),
    Imm(i32),
}

impl From<VReg> for Src {
    fn from(v: VReg) -> Src {
        Src::Reg(v)
    }
}

impl From<i32> for Src {
    fn from(v: i32) -> Src {
        Src::Imm(v)
    }
}

/// Memory access width: 1, 2, 4 or 8 bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Width {
    B,
    H,
    W,
    DW,
}

impl Width {
    pub fn bytes(self) -> u32 {
        self.size().bytes()
    }

    /// The width of an integer of `bytes` bytes (1, 2, 4 or 8).
    pub fn from_bytes(bytes: u32) -> Option<Width> {
        Some(match bytes {
            1 => Width::B,
            2 => Width::H,
            4 => Width::W,
            8 => Width::DW,
            _ => return None,
        })
    }

    fn size(self) -> Size {
        match self {
            Width::B => Size::B,
            Width::H => Size::H,
            Width::W => Size::W,
            Width::DW => Size::DW,
        }
    }
}

/// Arithmetic operations. `Div`/`Mod` are unsigned; `SDiv`/`SMod` are the
/// signed BPF ISA v4 forms (kernel ≥ 6.6).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AluOp {
    Add,
    Sub,
    Mul,
    Div,
    Mod,
    SDiv,
    SMod,
    Or,
    And,
    Xor,
    Lsh,
    Rsh,
    Arsh,
}

impl AluOp {
    fn code(self) -> AluCode {
        match self {
            AluOp::Add => AluCode::Add,
            AluOp::Sub => AluCode::Sub,
            AluOp::Mul => AluCode::Mul,
            AluOp::Div => AluCode::Div,
            AluOp::Mod => AluCode::Mod,
            AluOp::SDiv => AluCode::SDiv,
            AluOp::SMod => AluCode::SMod,
            AluOp::Or => AluCode::Or,
            AluOp::And => AluCode::And,
            AluOp::Xor => AluCode::Xor,
            AluOp::Lsh => AluCode::Lsh,
            AluOp::Rsh => AluCode::Rsh,
            AluOp::Arsh => AluCode::Arsh,
        }
    }
}

/// 64-bit comparisons; `Gt`..`Le` are unsigned, `S*` signed, `Set` is `a & b != 0`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cond {
    Eq,
    Ne,
    Gt,
    Ge,
    Lt,
    Le,
    SGt,
    SGe,
    SLt,
    SLe,
    Set,
}

impl Cond {
    fn code(self) -> JmpCode {
        match self {
            Cond::Eq => JmpCode::Eq,
            Cond::Ne => JmpCode::Ne,
            Cond::Gt => JmpCode::Gt,
            Cond::Ge => JmpCode::Ge,
            Cond::Lt => JmpCode::Lt,
            Cond::Le => JmpCode::Le,
            Cond::SGt => JmpCode::SGt,
            Cond::SGe => JmpCode::SGe,
            Cond::SLt => JmpCode::SLt,
            Cond::SLe => JmpCode::SLe,
            Cond::Set => JmpCode::Set,
        }
    }

    /// The condition that holds exactly when `self` does not (`Set` has none).
    pub fn negate(self) -> Option<Cond> {
        Some(match self {
            Cond::Eq => Cond::Ne,
            Cond::Ne => Cond::Eq,
            Cond::Gt => Cond::Le,
            Cond::Ge => Cond::Lt,
            Cond::Lt => Cond::Ge,
            Cond::Le => Cond::Gt,
            Cond::SGt => Cond::SLe,
            Cond::SGe => Cond::SLt,
            Cond::SLt => Cond::SGe,
            Cond::SLe => Cond::SGt,
            Cond::Set => return None,
        })
    }
}

/// A jump target, bound once with [`Asm::bind`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Label(u32);

/// A piece of the stack frame from [`Asm::stack`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Slot {
    off: i32,
    size: u32,
}

impl Slot {
    /// Offset from r10 (negative, 8-aligned).
    pub fn offset(self) -> i32 {
        self.off
    }

    /// Size in bytes as requested (the reservation is rounded up to 8).
    pub fn size(self) -> u32 {
        self.size
    }
}

/// A BPF helper function id (`enum bpf_func_id` in `include/uapi/linux/bpf.h`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Helper(pub u32);

macro_rules! helpers {
    ($($name:ident = $id:literal, $s:literal;)*) => {
        impl Helper {
            $(pub const $name: Helper = Helper($id);)*

            /// The kernel name (`bpf_map_lookup_elem`), if known.
            pub fn name(self) -> Option<&'static str> {
                match self.0 {
                    $($id => Some($s),)*
                    _ => None,
                }
            }
        }
    };
}

helpers! {
    MAP_LOOKUP_ELEM = 1, "bpf_map_lookup_elem";
    MAP_UPDATE_ELEM = 2, "bpf_map_update_elem";
    MAP_DELETE_ELEM = 3, "bpf_map_delete_elem";
    PROBE_READ = 4, "bpf_probe_read";
    KTIME_GET_NS = 5, "bpf_ktime_get_ns";
    TRACE_PRINTK = 6, "bpf_trace_printk";
    GET_PRANDOM_U32 = 7, "bpf_get_prandom_u32";
    GET_SMP_PROCESSOR_ID = 8, "bpf_get_smp_processor_id";
    TAIL_CALL = 12, "bpf_tail_call";
    GET_CURRENT_PID_TGID = 14, "bpf_get_current_pid_tgid";
    GET_CURRENT_UID_GID = 15, "bpf_get_current_uid_gid";
    GET_CURRENT_COMM = 16, "bpf_get_current_comm";
    PERF_EVENT_OUTPUT = 25, "bpf_perf_event_output";
    GET_STACKID = 27, "bpf_get_stackid";
    GET_CURRENT_TASK = 35, "bpf_get_current_task";
    PROBE_WRITE_USER = 36, "bpf_probe_write_user";
    GET_NUMA_NODE_ID = 42, "bpf_get_numa_node_id";
    PROBE_READ_STR = 45, "bpf_probe_read_str";
    PERF_EVENT_READ_VALUE = 55, "bpf_perf_event_read_value";
    OVERRIDE_RETURN = 58, "bpf_override_return";
    GET_STACK = 67, "bpf_get_stack";
    GET_CURRENT_CGROUP_ID = 80, "bpf_get_current_cgroup_id";
    SEND_SIGNAL = 109, "bpf_send_signal";
    PROBE_READ_USER = 112, "bpf_probe_read_user";
    PROBE_READ_KERNEL = 113, "bpf_probe_read_kernel";
    PROBE_READ_USER_STR = 114, "bpf_probe_read_user_str";
    PROBE_READ_KERNEL_STR = 115, "bpf_probe_read_kernel_str";
    SEND_SIGNAL_THREAD = 117, "bpf_send_signal_thread";
    JIFFIES64 = 118, "bpf_jiffies64";
    GET_NS_CURRENT_PID_TGID = 120, "bpf_get_ns_current_pid_tgid";
    GET_CURRENT_ANCESTOR_CGROUP_ID = 123, "bpf_get_current_ancestor_cgroup_id";
    KTIME_GET_BOOT_NS = 125, "bpf_ktime_get_boot_ns";
    RINGBUF_OUTPUT = 130, "bpf_ringbuf_output";
    RINGBUF_RESERVE = 131, "bpf_ringbuf_reserve";
    RINGBUF_SUBMIT = 132, "bpf_ringbuf_submit";
    RINGBUF_DISCARD = 133, "bpf_ringbuf_discard";
    RINGBUF_QUERY = 134, "bpf_ringbuf_query";
    GET_TASK_STACK = 141, "bpf_get_task_stack";
    D_PATH = 147, "bpf_d_path";
    GET_CURRENT_TASK_BTF = 158, "bpf_get_current_task_btf";
    KTIME_GET_COARSE_NS = 160, "bpf_ktime_get_coarse_ns";
    FOR_EACH_MAP_ELEM = 164, "bpf_for_each_map_elem";
    SNPRINTF = 165, "bpf_snprintf";
    GET_FUNC_IP = 173, "bpf_get_func_ip";
    GET_ATTACH_COOKIE = 174, "bpf_get_attach_cookie";
    LOOP = 181, "bpf_loop";
    STRNCMP = 182, "bpf_strncmp";
    GET_FUNC_ARG = 183, "bpf_get_func_arg";
    GET_FUNC_RET = 184, "bpf_get_func_ret";
    GET_FUNC_ARG_CNT = 185, "bpf_get_func_arg_cnt";
    KTIME_GET_TAI_NS = 208, "bpf_ktime_get_tai_ns";
}

/// A relocation: the `ld_imm64` at slot `insn` loads the address of map `symbol`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reloc {
    pub insn: usize,
    pub symbol: String,
}

/// An assembled program.
#[derive(Clone, Debug)]
pub struct Function {
    pub insns: Vec<Insn>,
    /// The source span of each slot (same length as `insns`).
    pub spans: Vec<Span>,
    pub relocs: Vec<Reloc>,
    /// Bytes of stack used (user slots plus spill slots).
    pub frame_size: u32,
}

impl Function {
    /// The little-endian bytes of all slots.
    pub fn bytes(&self) -> Vec<u8> {
        self.insns.iter().flat_map(|i| i.encode()).collect()
    }

    /// The span of instruction slot `index` (e.g. from a verifier log).
    pub fn span_of(&self, index: usize) -> Option<Span> {
        self.spans.get(index).copied()
    }
}

/// Errors from [`Asm::finish`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AsmError {
    /// The frame (user slots and spills) needs more than 512 bytes.
    StackTooLarge { span: Span, needed: u32 },
    /// A jump offset does not fit in 16 bits.
    JumpTooFar { span: Span },
    /// A label was jumped to but never bound.
    UnboundLabel { span: Span },
    /// A label was bound twice.
    LabelBoundTwice { span: Span },
    /// A helper call with more than five arguments.
    TooManyArgs { span: Span, count: usize },
    /// A memory offset does not fit in 16 bits.
    OffsetOutOfRange { span: Span, offset: i64 },
    /// `atomic_add` on a 1- or 2-byte location.
    BadAtomicWidth { span: Span },
    /// Execution can run past the last instruction (a path without `ret`).
    FallsOffEnd { span: Span },
}

impl AsmError {
    pub fn span(&self) -> Span {
        match *self {
            AsmError::StackTooLarge { span, .. }
            | AsmError::JumpTooFar { span }
            | AsmError::UnboundLabel { span }
            | AsmError::LabelBoundTwice { span }
            | AsmError::TooManyArgs { span, .. }
            | AsmError::OffsetOutOfRange { span, .. }
            | AsmError::BadAtomicWidth { span }
            | AsmError::FallsOffEnd { span } => span,
        }
    }
}

impl fmt::Display for AsmError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AsmError::StackTooLarge { needed, .. } => write!(
                f,
                "the BPF stack frame needs {needed} bytes, more than the {MAX_STACK}-byte limit"
            ),
            AsmError::JumpTooFar { .. } => write!(f, "jump offset does not fit in 16 bits"),
            AsmError::UnboundLabel { .. } => write!(f, "jump to a label that was never bound"),
            AsmError::LabelBoundTwice { .. } => write!(f, "label bound twice"),
            AsmError::TooManyArgs { count, .. } => {
                write!(f, "helper call with {count} arguments (at most 5)")
            }
            AsmError::OffsetOutOfRange { offset, .. } => {
                write!(f, "memory offset {offset} does not fit in 16 bits")
            }
            AsmError::BadAtomicWidth { .. } => {
                write!(f, "atomic add needs a 4- or 8-byte location")
            }
            AsmError::FallsOffEnd { .. } => {
                write!(f, "a path through the program does not end in a return")
            }
        }
    }
}

impl std::error::Error for AsmError {}

/// Base of a memory access: a register or the frame pointer r10.
#[derive(Clone, Copy, Debug)]
enum Base {
    Reg(VReg),
    Frame,
}

#[derive(Clone, Debug)]
enum Op {
    /// Defines the ctx vreg from R1.
    Entry,
    Mov {
        dst: VReg,
        src: Src,
        wide: bool,
    },
    Imm64 {
        dst: VReg,
        value: i64,
    },
    Alu {
        op: AluOp,
        dst: VReg,
        src: Src,
        wide: bool,
    },
    Neg {
        dst: VReg,
    },
    Load {
        dst: VReg,
        base: Base,
        off: i16,
        w: Width,
    },
    Store {
        base: Base,
        off: i16,
        src: Src,
        w: Width,
    },
    StackAddr {
        dst: VReg,
        off: i32,
    },
    MapPtr {
        dst: VReg,
        symbol: String,
    },
    Call {
        helper: Helper,
        args: Vec<Src>,
        ret: Option<VReg>,
    },
    AtomicAdd {
        base: VReg,
        off: i16,
        src: VReg,
        w: Width,
    },
    Jmp {
        target: Label,
    },
    Br {
        cond: Cond,
        a: VReg,
        b: Src,
        target: Label,
    },
    Ret {
        value: Src,
    },
    Bind(Label),
}

impl Op {
    fn uses(&self, out: &mut Vec<VReg>) {
        let src = |s: &Src, out: &mut Vec<VReg>| {
            if let Src::Reg(v) = s {
                out.push(*v)
            }
        };
        let base = |b: &Base, out: &mut Vec<VReg>| {
            if let Base::Reg(v) = b {
                out.push(*v)
            }
        };
        match self {
            Op::Entry
            | Op::Imm64 { .. }
            | Op::StackAddr { .. }
            | Op::MapPtr { .. }
            | Op::Jmp { .. }
            | Op::Bind(_) => {}
            Op::Mov { src: s, .. } => src(s, out),
            Op::Alu { dst, src: s, .. } => {
                out.push(*dst);
                src(s, out);
            }
            Op::Neg { dst } => out.push(*dst),
            Op::Load { base: b, .. } => base(b, out),
            Op::Store {
                base: b, src: s, ..
            } => {
                base(b, out);
                src(s, out);
            }
            Op::Call { args, .. } => args.iter().for_each(|a| src(a, out)),
            Op::AtomicAdd { base, src, .. } => {
                out.push(*base);
                out.push(*src);
            }
            Op::Br { a, b, .. } => {
                out.push(*a);
                src(b, out);
            }
            Op::Ret { value } => src(value, out),
        }
    }

    fn def(&self, ctx: VReg) -> Option<VReg> {
        match self {
            Op::Entry => Some(ctx),
            Op::Mov { dst, .. }
            | Op::Imm64 { dst, .. }
            | Op::Alu { dst, .. }
            | Op::Neg { dst }
            | Op::Load { dst, .. }
            | Op::StackAddr { dst, .. }
            | Op::MapPtr { dst, .. } => Some(*dst),
            Op::Call { ret, .. } => *ret,
            Op::Store { .. }
            | Op::AtomicAdd { .. }
            | Op::Jmp { .. }
            | Op::Br { .. }
            | Op::Ret { .. }
            | Op::Bind(_) => None,
        }
    }

    /// Whether control can continue to the next op.
    fn falls_through(&self) -> bool {
        !matches!(self, Op::Jmp { .. } | Op::Ret { .. })
    }

    fn target(&self) -> Option<Label> {
        match self {
            Op::Jmp { target } | Op::Br { target, .. } => Some(*target),
            _ => None,
        }
    }
}

/// The assembler.
pub struct Asm {
    ops: Vec<Op>,
    spans: Vec<Span>,
    span: Span,
    next_vreg: u32,
    next_label: u32,
    /// The frame reserved now; [`Asm::stack_release`] gives back a statement's slots.
    frame: u32,
    /// The most frame ever reserved at once: what the function needs.
    frame_peak: u32,
    error: Option<AsmError>,
}

impl Default for Asm {
    fn default() -> Asm {
        Asm::new()
    }
}

const CTX: VReg = VReg(0);

impl Asm {
    pub fn new() -> Asm {
        Asm {
            ops: vec![Op::Entry],
            spans: vec![Span::DUMMY],
            span: Span::DUMMY,
            next_vreg: 1,
            next_label: 0,
            frame: 0,
            frame_peak: 0,
            error: None,
        }
    }

    /// The context pointer (R1 at entry), an ordinary vreg.
    pub fn ctx(&self) -> VReg {
        CTX
    }

    pub fn vreg(&mut self) -> VReg {
        let v = VReg(self.next_vreg);
        self.next_vreg += 1;
        v
    }

    /// The span recorded on every following instruction.
    pub fn set_span(&mut self, span: Span) {
        self.span = span;
    }

    pub fn span(&self) -> Span {
        self.span
    }

    /// Reserves `size` bytes of frame (rounded up to 8, 8-aligned).
    pub fn stack(&mut self, size: u32) -> Slot {
        let reserve = size.max(1).next_multiple_of(8);
        self.frame = self.frame.saturating_add(reserve);
        self.frame_peak = self.frame_peak.max(self.frame);
        if self.frame > MAX_STACK {
            self.fail(AsmError::StackTooLarge {
                span: self.span,
                needed: self.frame,
            });
        }
        Slot {
            off: -(self.frame.min(1 << 20) as i32),
            size,
        }
    }

    /// Bytes of frame the function needs (the most reserved at once).
    pub fn frame_size(&self) -> u32 {
        self.frame_peak
    }

    /// Where the frame ends now, to give back what is reserved after it.
    pub fn stack_mark(&self) -> u32 {
        self.frame
    }

    /// Gives back every slot reserved since `mark`: the caller promises that
    /// nothing reads them any more (a statement's temporaries, once it is done).
    pub fn stack_release(&mut self, mark: u32) {
        self.frame = self.frame.min(mark);
    }

    fn fail(&mut self, e: AsmError) {
        if self.error.is_none() {
            self.error = Some(e);
        }
    }

    fn push(&mut self, op: Op) {
        self.ops.push(op);
        self.spans.push(self.span);
    }

    /// `dst = src` (64-bit).
    pub fn mov(&mut self, dst: VReg, src: Src) {
        self.push(Op::Mov {
            dst,
            src,
            wide: true,
        });
    }

    /// `dst = (u32)src`, zero-extended.
    pub fn mov32(&mut self, dst: VReg, src: Src) {
        self.push(Op::Mov {
            dst,
            src,
            wide: false,
        });
    }

    /// `dst = value` (one `mov` when it fits a sign-extended i32 or a
    /// zero-extended u32, else `ld_imm64`).
    pub fn imm64(&mut self, dst: VReg, value: i64) {
        self.push(Op::Imm64 { dst, value });
    }

    /// `dst (op)= src` on 64 bits.
    pub fn alu(&mut self, op: AluOp, dst: VReg, src: Src) {
        self.push(Op::Alu {
            op,
            dst,
            src,
            wide: true,
        });
    }

    /// `dst = (u32)dst (op) (u32)src`, zero-extended.
    pub fn alu32(&mut self, op: AluOp, dst: VReg, src: Src) {
        self.push(Op::Alu {
            op,
            dst,
            src,
            wide: false,
        });
    }

    /// `dst = -dst` (64-bit).
    pub fn neg(&mut self, dst: VReg) {
        self.push(Op::Neg { dst });
    }

    /// `dst = *(w *)(base + off)`, zero-extended.
    pub fn load(&mut self, dst: VReg, base: VReg, off: i16, w: Width) {
        self.push(Op::Load {
            dst,
            base: Base::Reg(base),
            off,
            w,
        });
    }

    /// `*(w *)(base + off) = src` (an immediate uses the ST form, sign-extended for DW).
    pub fn store(&mut self, base: VReg, off: i16, src: Src, w: Width) {
        self.push(Op::Store {
            base: Base::Reg(base),
            off,
            src,
            w,
        });
    }

    fn frame_off(&mut self, slot: Slot, off: i16) -> i16 {
        let total = slot.off as i64 + off as i64;
        match i16::try_from(total) {
            Ok(o) => o,
            Err(_) => {
                self.fail(AsmError::OffsetOutOfRange {
                    span: self.span,
                    offset: total,
                });
                0
            }
        }
    }

    /// `dst = *(w *)(r10 + slot + off)`.
    pub fn load_stack(&mut self, dst: VReg, slot: Slot, off: i16, w: Width) {
        let off = self.frame_off(slot, off);
        self.push(Op::Load {
            dst,
            base: Base::Frame,
            off,
            w,
        });
    }

    /// `*(w *)(r10 + slot + off) = src`.
    pub fn store_stack(&mut self, slot: Slot, off: i16, src: Src, w: Width) {
        let off = self.frame_off(slot, off);
        self.push(Op::Store {
            base: Base::Frame,
            off,
            src,
            w,
        });
    }

    /// `dst = r10 + slot + off`.
    pub fn stack_addr(&mut self, dst: VReg, slot: Slot, off: i16) {
        let off = slot.off + off as i32;
        self.push(Op::StackAddr { dst, off });
    }

    /// `dst = &map` (an `ld_imm64` with a relocation against `map_symbol`).
    pub fn map_ptr(&mut self, dst: VReg, map_symbol: &str) {
        self.push(Op::MapPtr {
            dst,
            symbol: map_symbol.to_string(),
        });
    }

    /// Calls `helper` with `args` in R1..R5; its R0 goes to `ret`.
    pub fn call(&mut self, helper: Helper, args: &[Src], ret: Option<VReg>) {
        if args.len() > 5 {
            self.fail(AsmError::TooManyArgs {
                span: self.span,
                count: args.len(),
            });
        }
        self.push(Op::Call {
            helper,
            args: args.iter().copied().take(5).collect(),
            ret,
        });
    }

    /// `lock *(w *)(base + off) += src` (W or DW).
    pub fn atomic_add(&mut self, base: VReg, off: i16, src: VReg, w: Width) {
        if !matches!(w, Width::W | Width::DW) {
            self.fail(AsmError::BadAtomicWidth { span: self.span });
        }
        self.push(Op::AtomicAdd { base, off, src, w });
    }

    pub fn label(&mut self) -> Label {
        let l = Label(self.next_label);
        self.next_label += 1;
        l
    }

    /// Places `l` at the next instruction.
    pub fn bind(&mut self, l: Label) {
        self.push(Op::Bind(l));
    }

    pub fn jmp(&mut self, l: Label) {
        self.push(Op::Jmp { target: l });
    }

    /// `if a (c) b goto l` (64-bit compare).
    pub fn br(&mut self, c: Cond, a: VReg, b: Src, l: Label) {
        self.push(Op::Br {
            cond: c,
            a,
            b,
            target: l,
        });
    }

    /// `r0 = value; exit`.
    pub fn ret(&mut self, value: Src) {
        self.push(Op::Ret { value });
    }

    /// Allocates registers and resolves labels.
    pub fn finish(self) -> Result<Function, AsmError> {
        if let Some(e) = self.error {
            return Err(e);
        }
        let Asm {
            ops,
            spans,
            frame_peak: frame,
            ..
        } = self;
        let (ops, spans) = check_and_prune(ops, spans)?;
        let nvregs = ops
            .iter()
            .flat_map(|op| {
                let mut v = Vec::new();
                op.uses(&mut v);
                v.extend(op.def(CTX));
                v
            })
            .map(|v| v.0 + 1)
            .max()
            .unwrap_or(1) as usize;
        let live = Liveness::compute(&ops, nvregs);
        let mut alloc = allocate(&ops, &live, nvregs, &[]);
        if !alloc.spilled.is_empty() {
            alloc = allocate(&ops, &live, nvregs, &SCRATCH);
        }
        let (loc, spill_bytes) = alloc.assign_slots(frame);
        let frame_size = frame + spill_bytes;
        if frame_size > MAX_STACK {
            let span = alloc
                .spilled
                .iter()
                .map(|s| s.0)
                .min()
                .map(|p| spans[p / 2])
                .unwrap_or(Span::DUMMY);
            return Err(AsmError::StackTooLarge {
                span,
                needed: frame_size,
            });
        }
        let mut em = Emitter {
            loc: &loc,
            insns: Vec::new(),
            spans: Vec::new(),
            relocs: Vec::new(),
            span: Span::DUMMY,
            labels: HashMap::new(),
            fixups: Vec::new(),
            last_bind: usize::MAX,
        };
        for (op, span) in ops.iter().zip(&spans) {
            em.span = *span;
            em.op(op);
        }
        em.resolve()?;
        Ok(Function {
            insns: em.insns,
            spans: em.spans,
            relocs: em.relocs,
            frame_size,
        })
    }
}

/// Checks labels, drops unreachable ops (the verifier rejects unreachable
/// instructions) and rejects paths that run off the end.
fn check_and_prune(ops: Vec<Op>, spans: Vec<Span>) -> Result<(Vec<Op>, Vec<Span>), AsmError> {
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
fn successors(ops: &[Op], labels: &HashMap<Label, usize>, i: usize, out: &mut Vec<usize>) {
    out.clear();
    if ops[i].falls_through() && i + 1 < ops.len() {
        out.push(i + 1);
    }
    if let Some(l) = ops[i].target() {
        out.push(labels[&l]);
    }
}

struct Liveness {
    words: usize,
    live_in: Vec<u64>,
    live_out: Vec<u64>,
}

impl Liveness {
    fn compute(ops: &[Op], nvregs: usize) -> Liveness {
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
                if let Some(d) = ops[i].def(CTX) {
                    inn[d.0 as usize / 64] &= !(1 << (d.0 % 64));
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

    fn each(set: &[u64], mut f: impl FnMut(usize)) {
        for (w, &bits) in set.iter().enumerate() {
            let mut b = bits;
            while b != 0 {
                let t = b.trailing_zeros() as usize;
                f(w * 64 + t);
                b &= b - 1;
            }
        }
    }

    fn live_in(&self, i: usize) -> &[u64] {
        &self.live_in[i * self.words..(i + 1) * self.words]
    }

    fn live_out(&self, i: usize) -> &[u64] {
        &self.live_out[i * self.words..(i + 1) * self.words]
    }
}

/// Where a vreg lives for its whole interval.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Loc {
    Reg(Reg),
    /// A stack slot (offset assigned after allocation).
    Spill,
}

/// Scratch registers for reloading spilled operands (kept out of allocation
/// once anything spills). R0 is also the cycle-breaking temporary of the
/// argument parallel move (it is never an argument register).
const SCRATCH: [Reg; 2] = [Reg::R0, Reg::R5];
const CALLEE_SAVED: [Reg; 4] = [Reg::R6, Reg::R7, Reg::R8, Reg::R9];
const ANY: [Reg; 10] = [
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

struct Alloc {
    /// Per vreg: its location (None if it never appears).
    loc: Vec<Option<Loc>>,
    /// (start, end, vreg) of spilled intervals.
    spilled: Vec<(usize, usize, usize)>,
}

/// A resolved location.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum LocFinal {
    Reg(Reg),
    /// Offset from r10.
    Stack(i16),
}

impl Alloc {
    /// Gives every spilled vreg an 8-byte slot below the user frame, sharing
    /// slots between intervals that do not overlap. Returns the final
    /// locations and the bytes of spill slots.
    fn assign_slots(&self, user_frame: u32) -> (Vec<Option<LocFinal>>, u32) {
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

fn allocate(ops: &[Op], live: &Liveness, nvregs: usize, scratch: &[Reg]) -> Alloc {
    const NONE: usize = usize::MAX;
    let mut start = vec![NONE; nvregs];
    let mut end = vec![0usize; nvregs];
    let mut crosses = vec![false; nvregs];
    // Registers each vreg would like, in order of first mention (a call's
    // result wants R0, an argument its argument register).
    let mut hint: Vec<Vec<Reg>> = vec![Vec::new(); nvregs];
    fn want(hints: &mut Vec<Reg>, r: Reg) {
        if !hints.contains(&r) {
            hints.push(r);
        }
    }
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
        let def = op.def(CTX);
        if let Some(d) = def {
            cover(d.0 as usize, 2 * i + 1, &mut start, &mut end);
        }
        Liveness::each(live.live_out(i), |v| {
            cover(v, 2 * i + 1, &mut start, &mut end)
        });
        match op {
            Op::Call { args, ret, .. } => {
                Liveness::each(live.live_out(i), |v| {
                    if Some(VReg(v as u32)) != def {
                        crosses[v] = true;
                    }
                });
                for (k, a) in args.iter().enumerate() {
                    if let Src::Reg(v) = a {
                        want(&mut hint[v.0 as usize], Reg::arg(k));
                    }
                }
                if let Some(r) = ret {
                    want(&mut hint[r.0 as usize], Reg::R0);
                }
            }
            Op::Entry => {
                want(&mut hint[CTX.0 as usize], Reg::R1);
            }
            Op::Ret { value: Src::Reg(v) } => {
                want(&mut hint[v.0 as usize], Reg::R0);
            }
            _ => {}
        }
    }

    let mut order: Vec<usize> = (0..nvregs).filter(|&v| start[v] != NONE).collect();
    order.sort_by_key(|&v| (start[v], v));

    let mut loc: Vec<Option<Loc>> = vec![None; nvregs];
    // Active intervals holding a register: (vreg, reg).
    let mut active: Vec<(usize, Reg)> = Vec::new();
    let mut spilled = Vec::new();
    for &v in &order {
        active.retain(|&(a, _)| end[a] >= start[v]);
        let allowed: Vec<Reg> = if crosses[v] {
            CALLEE_SAVED.to_vec()
        } else {
            ANY.to_vec()
        }
        .into_iter()
        .filter(|r| !scratch.contains(r))
        .collect();
        let busy = |r: Reg| active.iter().any(|&(_, ar)| ar == r);
        let pick = hint[v]
            .iter()
            .copied()
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

struct Emitter<'a> {
    loc: &'a [Option<LocFinal>],
    insns: Vec<Insn>,
    spans: Vec<Span>,
    relocs: Vec<Reloc>,
    span: Span,
    labels: HashMap<Label, usize>,
    /// (slot index, label) of jumps to patch.
    fixups: Vec<(usize, Label)>,
    /// Slot index of the most recent label binding.
    last_bind: usize,
}

const S1: Reg = SCRATCH[0];
const S2: Reg = SCRATCH[1];

impl Emitter<'_> {
    fn emit(&mut self, i: Insn) {
        self.insns.push(i);
        self.spans.push(self.span);
    }

    fn loc(&self, v: VReg) -> LocFinal {
        // Every vreg that appears in a reachable op has a location; a vreg
        // with none is only possible for a def that was pruned, so R0 is as
        // good as anything (its value is never read).
        self.loc
            .get(v.0 as usize)
            .copied()
            .flatten()
            .unwrap_or(LocFinal::Reg(Reg::R0))
    }

    /// The register holding `v`, reloading a spilled `v` into `scratch`.
    fn use_reg(&mut self, v: VReg, scratch: Reg) -> Reg {
        match self.loc(v) {
            LocFinal::Reg(r) => r,
            LocFinal::Stack(off) => {
                // `scratch` still holds the value if we just spilled it from
                // there and no jump lands in between.
                let just_stored = self.last_bind != self.insns.len()
                    && self.insns.last() == Some(&Insn::stx(Size::DW, Reg::R10, off, scratch));
                if !just_stored {
                    self.emit(Insn::ldx(Size::DW, scratch, Reg::R10, off));
                }
                scratch
            }
        }
    }

    /// The register to compute `v` into (`scratch` if `v` is spilled).
    fn def_reg(&self, v: VReg, scratch: Reg) -> Reg {
        match self.loc(v) {
            LocFinal::Reg(r) => r,
            LocFinal::Stack(_) => scratch,
        }
    }

    /// Stores `reg` to `v`'s spill slot if `v` is spilled.
    fn finish_def(&mut self, v: VReg, reg: Reg) {
        if let LocFinal::Stack(off) = self.loc(v) {
            self.emit(Insn::stx(Size::DW, Reg::R10, off, reg));
        }
    }

    fn op(&mut self, op: &Op) {
        match op {
            Op::Entry => match self.loc(CTX) {
                _ if self.loc.first().copied().flatten().is_none() => {}
                LocFinal::Reg(Reg::R1) => {}
                LocFinal::Reg(r) => self.emit(Insn::mov64_reg(r, Reg::R1)),
                LocFinal::Stack(off) => self.emit(Insn::stx(Size::DW, Reg::R10, off, Reg::R1)),
            },
            Op::Mov {
                dst,
                src: Src::Reg(s),
                wide: true,
            } if matches!(self.loc(*dst), LocFinal::Stack(_))
                && matches!(self.loc(*s), LocFinal::Reg(_)) =>
            {
                let s = self.use_reg(*s, S1);
                self.finish_def(*dst, s);
            }
            Op::Mov { dst, src, wide } => {
                let d = self.def_reg(*dst, S1);
                match src {
                    Src::Reg(s) => {
                        let s = self.use_reg(*s, d);
                        if *wide {
                            if s != d {
                                self.emit(Insn::mov64_reg(d, s));
                            }
                        } else {
                            self.emit(Insn::mov32_reg(d, s));
                        }
                    }
                    Src::Imm(k) => {
                        if *wide {
                            self.emit(Insn::mov64_imm(d, *k));
                        } else {
                            self.emit(Insn::mov32_imm(d, *k));
                        }
                    }
                }
                self.finish_def(*dst, d);
            }
            Op::Imm64 { dst, value } => {
                let d = self.def_reg(*dst, S1);
                match i32::try_from(*value) {
                    Ok(k) => self.emit(Insn::mov64_imm(d, k)),
                    // `w = k` zero-extends: one slot for 0x8000_0000..=0xffff_ffff.
                    Err(_) if (0..=u32::MAX as i64).contains(value) => {
                        self.emit(Insn::mov32_imm(d, *value as u32 as i32))
                    }
                    Err(_) => {
                        for i in Insn::ld_imm64(d, *value) {
                            self.emit(i);
                        }
                    }
                }
                self.finish_def(*dst, d);
            }
            Op::Alu { op, dst, src, wide } => {
                let d = self.use_reg(*dst, S1);
                let code = op.code();
                match (src, wide) {
                    (Src::Reg(s), true) => {
                        let s = self.use_reg(*s, S2);
                        self.emit(Insn::alu64_reg(code, d, s));
                    }
                    (Src::Reg(s), false) => {
                        let s = self.use_reg(*s, S2);
                        self.emit(Insn::alu32_reg(code, d, s));
                    }
                    (Src::Imm(k), true) => self.emit(Insn::alu64_imm(code, d, *k)),
                    (Src::Imm(k), false) => self.emit(Insn::alu32_imm(code, d, *k)),
                }
                self.finish_def(*dst, d);
            }
            Op::Neg { dst } => {
                let d = self.use_reg(*dst, S1);
                self.emit(Insn::neg64(d));
                self.finish_def(*dst, d);
            }
            Op::Load { dst, base, off, w } => {
                let b = match base {
                    Base::Reg(b) => self.use_reg(*b, S1),
                    Base::Frame => Reg::R10,
                };
                let d = self.def_reg(*dst, S1);
                self.emit(Insn::ldx(w.size(), d, b, *off));
                self.finish_def(*dst, d);
            }
            Op::Store { base, off, src, w } => {
                let b = match base {
                    Base::Reg(b) => self.use_reg(*b, S1),
                    Base::Frame => Reg::R10,
                };
                match src {
                    Src::Reg(s) => {
                        let s = self.use_reg(*s, S2);
                        self.emit(Insn::stx(w.size(), b, *off, s));
                    }
                    Src::Imm(k) => self.emit(Insn::st(w.size(), b, *off, *k)),
                }
            }
            Op::StackAddr { dst, off } => {
                let d = self.def_reg(*dst, S1);
                self.emit(Insn::mov64_reg(d, Reg::R10));
                self.emit(Insn::alu64_imm(AluCode::Add, d, *off));
                self.finish_def(*dst, d);
            }
            Op::MapPtr { dst, symbol } => {
                let d = self.def_reg(*dst, S1);
                self.relocs.push(Reloc {
                    insn: self.insns.len(),
                    symbol: symbol.clone(),
                });
                for i in Insn::ld_map_fd(d, 0) {
                    self.emit(i);
                }
                self.finish_def(*dst, d);
            }
            Op::Call { helper, args, ret } => {
                self.call_args(args);
                self.emit(Insn::call(helper.0));
                if let Some(r) = ret {
                    match self.loc(*r) {
                        LocFinal::Reg(Reg::R0) => {}
                        LocFinal::Reg(p) => self.emit(Insn::mov64_reg(p, Reg::R0)),
                        LocFinal::Stack(off) => {
                            self.emit(Insn::stx(Size::DW, Reg::R10, off, Reg::R0))
                        }
                    }
                }
            }
            Op::AtomicAdd { base, off, src, w } => {
                let b = self.use_reg(*base, S1);
                let s = self.use_reg(*src, S2);
                self.emit(Insn::atomic_add(w.size(), b, *off, s));
            }
            Op::Jmp { target } => {
                self.fixups.push((self.insns.len(), *target));
                self.emit(Insn::ja(0));
            }
            Op::Br { cond, a, b, target } => {
                let ra = self.use_reg(*a, S1);
                let insn = match b {
                    Src::Reg(b) => {
                        let rb = self.use_reg(*b, S2);
                        Insn::jmp_reg(cond.code(), ra, rb, 0)
                    }
                    Src::Imm(k) => Insn::jmp_imm(cond.code(), ra, *k, 0),
                };
                self.fixups.push((self.insns.len(), *target));
                self.emit(insn);
            }
            Op::Ret { value } => {
                match value {
                    Src::Reg(v) => match self.loc(*v) {
                        LocFinal::Reg(Reg::R0) => {}
                        LocFinal::Reg(r) => self.emit(Insn::mov64_reg(Reg::R0, r)),
                        LocFinal::Stack(off) => {
                            self.emit(Insn::ldx(Size::DW, Reg::R0, Reg::R10, off))
                        }
                    },
                    Src::Imm(k) => self.emit(Insn::mov64_imm(Reg::R0, *k)),
                }
                self.emit(Insn::exit());
            }
            Op::Bind(l) => {
                self.last_bind = self.insns.len();
                self.labels.insert(*l, self.insns.len());
            }
        }
    }

    /// Moves the arguments into R1..R5: register-to-register moves as a
    /// parallel move (cycles broken through R0, which no argument targets),
    /// then reloads of spilled arguments and immediates.
    fn call_args(&mut self, args: &[Src]) {
        let mut moves: Vec<(Reg, Reg)> = Vec::new();
        for (k, a) in args.iter().enumerate() {
            if let Src::Reg(v) = a
                && let LocFinal::Reg(r) = self.loc(*v)
                && r != Reg::arg(k)
            {
                moves.push((Reg::arg(k), r));
            }
        }
        while !moves.is_empty() {
            let ready = (0..moves.len())
                .find(|&i| !moves.iter().any(|&(_, s)| s == moves[i].0))
                .map(|i| moves.remove(i));
            match ready {
                Some((d, s)) => self.emit(Insn::mov64_reg(d, s)),
                None => {
                    // Only cycles remain: save one destination in R0.
                    let d = moves[0].0;
                    self.emit(Insn::mov64_reg(Reg::R0, d));
                    for m in &mut moves {
                        if m.1 == d {
                            m.1 = Reg::R0;
                        }
                    }
                }
            }
        }
        for (k, a) in args.iter().enumerate() {
            match a {
                Src::Reg(v) => {
                    if let LocFinal::Stack(off) = self.loc(*v) {
                        self.emit(Insn::ldx(Size::DW, Reg::arg(k), Reg::R10, off));
                    }
                }
                Src::Imm(x) => self.emit(Insn::mov64_imm(Reg::arg(k), *x)),
            }
        }
    }

    fn resolve(&mut self) -> Result<(), AsmError> {
        for &(at, l) in &self.fixups {
            let target = self.labels[&l];
            let rel = target as i64 - (at as i64 + 1);
            let off = i16::try_from(rel).map_err(|_| AsmError::JumpTooFar {
                span: self.spans[at],
            })?;
            self.insns[at].off = off;
        }
        Ok(())
    }
}

#[cfg(test)]
#[path = "asm_tests.rs"]
mod tests;
