//! The assembler's instruction model: virtual registers, operands, labels,
//! stack slots, helper ids, the ops the lowering emits (before registers
//! are assigned) and the assembled [`Function`].

use std::fmt;

use source::Span;

use crate::insn::{AluCode, Insn, JmpCode, Size};

/// The BPF stack limit of one frame.
pub const MAX_STACK: u32 = 512;
/// The largest scratch buffer: a per-CPU map value holds at most 32 KiB
/// (the kernel's `PCPU_MIN_UNIT_SIZE`), and its offsets must fit the 16
/// bits of an instruction's.
pub const MAX_SCRATCH: u32 = 32 * 1024;

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

/// A call's arguments (at most five, R1..R5), kept in the op itself: a
/// program makes dozens of calls, and each would otherwise be an allocation.
#[derive(Clone, Copy, Debug)]
pub(super) struct CallArgs {
    items: [Src; 5],
    len: u8,
}

impl CallArgs {
    /// The first five of `args` (the assembler refuses more).
    pub(super) fn new(args: &[Src]) -> CallArgs {
        let mut items = [Src::Imm(0); 5];
        let len = args.len().min(5);
        items[..len].copy_from_slice(&args[..len]);
        CallArgs {
            items,
            len: len as u8,
        }
    }
}

impl std::ops::Deref for CallArgs {
    type Target = [Src];
    fn deref(&self) -> &[Src] {
        &self.items[..self.len as usize]
    }
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

    pub(super) fn size(self) -> Size {
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
    pub(super) fn code(self) -> AluCode {
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
    pub(super) fn code(self) -> JmpCode {
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
pub struct Label(pub(super) u32);

/// A piece of the stack frame from [`Asm::stack`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Slot {
    pub(super) off: i32,
    pub(super) size: u32,
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
    CURRENT_TASK_UNDER_CGROUP = 37, "bpf_current_task_under_cgroup";
    PROBE_WRITE_USER = 36, "bpf_probe_write_user";
    GET_NUMA_NODE_ID = 42, "bpf_get_numa_node_id";
    PROBE_READ_STR = 45, "bpf_probe_read_str";
    GET_SOCKET_COOKIE = 46, "bpf_get_socket_cookie";
    PERF_EVENT_READ_VALUE = 55, "bpf_perf_event_read_value";
    OVERRIDE_RETURN = 58, "bpf_override_return";
    GET_STACK = 67, "bpf_get_stack";
    GET_CURRENT_CGROUP_ID = 80, "bpf_get_current_cgroup_id";
    MAP_PUSH_ELEM = 87, "bpf_map_push_elem";
    MAP_POP_ELEM = 88, "bpf_map_pop_elem";
    SEND_SIGNAL = 109, "bpf_send_signal";
    SKB_OUTPUT = 111, "bpf_skb_output";
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
    PER_CPU_PTR = 153, "bpf_per_cpu_ptr";
    THIS_CPU_PTR = 154, "bpf_this_cpu_ptr";
    GET_CURRENT_TASK_BTF = 158, "bpf_get_current_task_btf";
    KTIME_GET_COARSE_NS = 160, "bpf_ktime_get_coarse_ns";
    FOR_EACH_MAP_ELEM = 164, "bpf_for_each_map_elem";
    SNPRINTF = 165, "bpf_snprintf";
    GET_FUNC_IP = 173, "bpf_get_func_ip";
    TASK_PT_REGS = 175, "bpf_task_pt_regs";
    TRACE_VPRINTK = 177, "bpf_trace_vprintk";
    GET_ATTACH_COOKIE = 174, "bpf_get_attach_cookie";
    LOOP = 181, "bpf_loop";
    STRNCMP = 182, "bpf_strncmp";
    GET_FUNC_ARG = 183, "bpf_get_func_arg";
    GET_FUNC_RET = 184, "bpf_get_func_ret";
    GET_FUNC_ARG_CNT = 185, "bpf_get_func_arg_cnt";
    MAP_LOOKUP_PERCPU_ELEM = 195, "bpf_map_lookup_percpu_elem";
    KTIME_GET_TAI_NS = 208, "bpf_ktime_get_tai_ns";
}

/// A relocation: the `ld_imm64` at slot `insn` loads the address of map
/// `symbol` (in [`Function::relocs`]) or of subprogram `symbol` (in
/// [`Function::func_refs`]).
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
    /// The `ld_imm64`s that load a subprogram's address (a callback's,
    /// `BPF_PSEUDO_FUNC`): the ELF writer relocates them against the
    /// subprogram's symbol, [`crate::link`] resolves them in place.
    pub func_refs: Vec<Reloc>,
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
    /// The values kept in the scratch buffer need more than [`MAX_SCRATCH`] bytes.
    ScratchTooLarge { span: Span, needed: u32 },
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
            | AsmError::FallsOffEnd { span }
            | AsmError::ScratchTooLarge { span, .. } => span,
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
            AsmError::ScratchTooLarge { needed, .. } => write!(
                f,
                "the values this program holds at once need {needed} bytes of scratch memory, \
                 more than the {MAX_SCRATCH} bytes a per-CPU buffer holds (lower max_strlen)"
            ),
        }
    }
}

impl std::error::Error for AsmError {}

/// Base of a memory access: a register or the frame pointer r10.
#[derive(Clone, Copy, Debug)]
pub(super) enum Base {
    Reg(VReg),
    Frame,
}

#[derive(Clone, Debug)]
pub(super) enum Op {
    /// Defines vregs `0..params` from R1..R(params) (the ctx vreg is 0).
    Entry {
        params: u32,
    },
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
    /// `dst = &subprogram` (a callback for a helper).
    FuncAddr {
        dst: VReg,
        symbol: String,
    },
    /// `dst = &kernel variable`, by its vmlinux BTF id (the verifier
    /// resolves it; a per-CPU one is only for `bpf_per_cpu_ptr`).
    BtfVarAddr {
        dst: VReg,
        btf_id: u32,
    },
    /// A helper call, or (`kfunc`) a call of the kernel function whose
    /// vmlinux BTF id is `helper.0`; both clobber r1-r5.
    Call {
        helper: Helper,
        args: CallArgs,
        ret: Option<VReg>,
        kfunc: bool,
    },
    AtomicAdd {
        base: VReg,
        off: i16,
        src: VReg,
        w: Width,
    },
    /// `val = xchg(*(base + off), val)`, or with `add` `val =
    /// fetch_add(*(base + off), val)`: reads and redefines `val`.
    AtomicFetch {
        base: VReg,
        off: i16,
        val: VReg,
        w: Width,
        add: bool,
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
    pub(super) fn uses(&self, out: &mut Vec<VReg>) {
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
            Op::Entry { .. }
            | Op::Imm64 { .. }
            | Op::StackAddr { .. }
            | Op::MapPtr { .. }
            | Op::FuncAddr { .. }
            | Op::BtfVarAddr { .. }
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
            Op::AtomicFetch { base, val, .. } => {
                out.push(*base);
                out.push(*val);
            }
            Op::Br { a, b, .. } => {
                out.push(*a);
                src(b, out);
            }
            Op::Ret { value } => src(value, out),
        }
    }

    /// The vregs the op defines, as a range of numbers (only the entry
    /// defines more than one: the parameters).
    pub(super) fn defs(&self) -> std::ops::Range<u32> {
        let one = |v: &VReg| v.0..v.0 + 1;
        match self {
            Op::Entry { params } => 0..*params,
            Op::Mov { dst, .. }
            | Op::Imm64 { dst, .. }
            | Op::Alu { dst, .. }
            | Op::Neg { dst }
            | Op::Load { dst, .. }
            | Op::StackAddr { dst, .. }
            | Op::MapPtr { dst, .. }
            | Op::FuncAddr { dst, .. }
            | Op::BtfVarAddr { dst, .. } => one(dst),
            Op::AtomicFetch { val, .. } => one(val),
            Op::Call { ret, .. } => ret.as_ref().map_or(0..0, one),
            Op::Store { .. }
            | Op::AtomicAdd { .. }
            | Op::Jmp { .. }
            | Op::Br { .. }
            | Op::Ret { .. }
            | Op::Bind(_) => 0..0,
        }
    }

    /// Whether control can continue to the next op.
    pub(super) fn falls_through(&self) -> bool {
        !matches!(self, Op::Jmp { .. } | Op::Ret { .. })
    }

    pub(super) fn target(&self) -> Option<Label> {
        match self {
            Op::Jmp { target } | Op::Br { target, .. } => Some(*target),
            _ => None,
        }
    }
}
