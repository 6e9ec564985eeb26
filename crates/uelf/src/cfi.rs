//! DWARF call-frame information (`.eh_frame`, `.debug_frame`) of x86-64
//! ELF files, and one unwinding step from it: given the registers of a
//! frame and a way to read the stack, the registers of its caller. What a
//! profiler needs for code built without frame pointers (Debian's libc and
//! libm, any plain `-O2` program); perf's `--call-graph dwarf` does the same
//! from the stack bytes it copies with each sample.
//!
//! Pure: the caller passes the file's bytes, finds the file of an address
//! (`/proc/PID/maps`) and reads the copied stack; rules are looked up by
//! the file's own virtual addresses.

use std::sync::Arc;

use gimli::{
    BaseAddresses, DebugFrame, EhFrame, EndianArcSlice, LittleEndian, RegisterRule, UnwindContext,
    UnwindSection, X86_64,
};
use object::{Object, ObjectSection};

type Reader = EndianArcSlice<LittleEndian>;

/// A register an unwinding rule refers to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reg {
    Sp,
    Bp,
    Ip,
}

/// How the canonical frame address (the caller's stack pointer before the
/// call) is found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Cfa {
    /// A register plus an offset (nearly every row of every function).
    Offset { base: Reg, offset: i64 },
    /// A DWARF expression (PLT stubs: `rsp + 8 + (rip & 15 >= 11) * 8`).
    Expression(Arc<[u8]>),
    /// Something this unwinder cannot follow (another register as base).
    Unsupported,
}

/// Where the caller's value of a register is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Saved {
    /// Not recoverable: for the return address, the outermost frame.
    Undefined,
    /// Unchanged by this frame.
    Same,
    /// Stored at CFA + offset.
    AtCfa(i64),
    /// Is CFA + offset.
    CfaPlus(i64),
    /// A rule this unwinder cannot follow.
    Unsupported,
}

/// The rule for one address: how to find the caller's frame.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FrameRule {
    pub cfa: Cfa,
    pub return_address: Saved,
    pub bp: Saved,
}

impl FrameRule {
    /// The rule of a function that keeps a frame pointer (`push rbp; mov
    /// rbp, rsp`), for code without call-frame information (JIT code).
    pub const FRAME_POINTER: FrameRule = FrameRule {
        cfa: Cfa::Offset {
            base: Reg::Bp,
            offset: 16,
        },
        return_address: Saved::AtCfa(-8),
        bp: Saved::AtCfa(-16),
    };
}

/// The registers unwinding follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Regs {
    pub ip: u64,
    pub sp: u64,
    pub bp: u64,
}

/// Why a step found no caller.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StepEnd {
    /// The return address is undefined: the outermost frame (`_start`,
    /// a thread's `clone3`).
    Outermost,
    /// A read at this address failed (outside the copied stack).
    Memory(u64),
    /// The rule cannot be followed, or gave an impossible frame.
    Bad,
}

/// One FDE: the addresses it covers and where it is.
#[derive(Clone, Copy, Debug)]
struct FdeEntry {
    start: u64,
    end: u64,
    offset: usize,
    in_debug_frame: bool,
}

/// The call-frame information of one ELF file.
pub struct CallFrameInfo {
    eh_frame: Option<(EhFrame<Reader>, BaseAddresses)>,
    debug_frame: Option<(DebugFrame<Reader>, BaseAddresses)>,
    /// Sorted by start address.
    fdes: Vec<FdeEntry>,
    context: Box<UnwindContext<usize>>,
}

impl std::fmt::Debug for CallFrameInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "CallFrameInfo({} FDEs)", self.fdes.len())
    }
}

impl CallFrameInfo {
    /// Reads `.eh_frame` and `.debug_frame` (uncompressed) from an ELF
    /// file's bytes. A file with neither has no FDEs, which is no error.
    pub fn parse(data: &[u8]) -> Result<CallFrameInfo, crate::ElfError> {
        let file = object::File::parse(data)
            .map_err(|e| crate::ElfError(format!("malformed ELF file: {e}")))?;
        let section = |name: &str| {
            let s = file.section_by_name(name)?;
            let bytes = s.data().ok()?;
            // A compressed section (a debug file's) would need inflating first.
            let compressed = s
                .compressed_file_range()
                .map_or(true, |r| r.format != object::CompressionFormat::None);
            (!bytes.is_empty() && !compressed).then(|| (s.address(), bytes.to_vec()))
        };
        let text = file.section_by_name(".text").map_or(0, |s| s.address());
        Ok(CallFrameInfo::from_sections(
            section(".eh_frame"),
            section(".debug_frame").map(|(_, b)| b),
            text,
        ))
    }

    /// From the sections themselves (a caller that reads only them of a
    /// large file): `.eh_frame` with its address, `.debug_frame`, and the
    /// address of `.text`.
    pub fn from_sections(
        eh_frame: Option<(u64, Vec<u8>)>,
        debug_frame: Option<Vec<u8>>,
        text: u64,
    ) -> CallFrameInfo {
        let eh_frame = eh_frame.map(|(address, bytes)| {
            let mut s = EhFrame::from(Reader::new(Arc::from(bytes), LittleEndian));
            s.set_address_size(8);
            let bases = BaseAddresses::default()
                .set_eh_frame(address)
                .set_text(text);
            (s, bases)
        });
        let debug_frame = debug_frame.map(|bytes| {
            let mut s = DebugFrame::from(Reader::new(Arc::from(bytes), LittleEndian));
            s.set_address_size(8);
            (s, BaseAddresses::default().set_text(text))
        });
        let mut fdes = Vec::new();
        if let Some((s, bases)) = &eh_frame {
            index(s, bases, false, &mut fdes);
        }
        if let Some((s, bases)) = &debug_frame {
            index(s, bases, true, &mut fdes);
        }
        fdes.sort_by_key(|f| (f.start, f.in_debug_frame));
        CallFrameInfo {
            eh_frame,
            debug_frame,
            fdes,
            context: Box::new(UnwindContext::new()),
        }
    }

    /// How many functions have a rule.
    pub fn len(&self) -> usize {
        self.fdes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.fdes.is_empty()
    }

    /// The rule at virtual address `addr` (as the file is linked), if an
    /// FDE covers it.
    pub fn rule_at(&mut self, addr: u64) -> Option<FrameRule> {
        let i = self.fdes.partition_point(|f| f.start <= addr);
        // FDEs may nest or overlap (rare): look back a few.
        for f in self.fdes[..i].iter().rev().take(4).copied() {
            if addr >= f.end {
                continue;
            }
            let rule = if f.in_debug_frame {
                let (s, bases) = self.debug_frame.as_ref()?;
                rule_in(s, bases, f.offset, addr, &mut self.context)
            } else {
                let (s, bases) = self.eh_frame.as_ref()?;
                rule_in(s, bases, f.offset, addr, &mut self.context)
            };
            if rule.is_some() {
                return rule;
            }
        }
        None
    }
}

/// Adds every FDE of `section` to `out`.
fn index<S: UnwindSection<Reader>>(
    section: &S,
    bases: &BaseAddresses,
    in_debug_frame: bool,
    out: &mut Vec<FdeEntry>,
) where
    S::Offset: gimli::UnwindOffset<usize>,
{
    let mut entries = section.entries(bases);
    // A malformed entry ends the section (its length is not to be trusted).
    while let Ok(Some(entry)) = entries.next() {
        if let gimli::CieOrFde::Fde(partial) = entry {
            let offset = partial.offset();
            if let Ok(fde) = partial.parse(UnwindSection::cie_from_offset)
                && fde.len() > 0
            {
                out.push(FdeEntry {
                    start: fde.initial_address(),
                    end: fde.end_address(),
                    offset,
                    in_debug_frame,
                });
            }
        }
    }
}

fn rule_in<S: UnwindSection<Reader>>(
    section: &S,
    bases: &BaseAddresses,
    offset: usize,
    addr: u64,
    context: &mut UnwindContext<usize>,
) -> Option<FrameRule>
where
    S::Offset: gimli::UnwindOffset<usize>,
{
    let fde = section
        .fde_from_offset(bases, offset.into(), UnwindSection::cie_from_offset)
        .ok()?;
    let row = fde
        .unwind_info_for_address(section, bases, context, addr)
        .ok()?;
    let expression = |e: &gimli::UnwindExpression<usize>| -> Option<Arc<[u8]>> {
        let expr = e.get(section).ok()?;
        Some(Arc::from(gimli::Reader::to_slice(&expr.0).ok()?.as_ref()))
    };
    let cfa = match row.cfa() {
        gimli::CfaRule::RegisterAndOffset { register, offset } => match reg(*register) {
            Some(base) => Cfa::Offset {
                base,
                offset: *offset,
            },
            None => Cfa::Unsupported,
        },
        gimli::CfaRule::Expression(e) => expression(e).map_or(Cfa::Unsupported, Cfa::Expression),
    };
    let saved = |rule: Option<RegisterRule<usize>>, unlisted: Saved| match rule {
        None => unlisted,
        Some(RegisterRule::Undefined) => Saved::Undefined,
        Some(RegisterRule::SameValue) => Saved::Same,
        Some(RegisterRule::Offset(n)) => Saved::AtCfa(n),
        Some(RegisterRule::ValOffset(n)) => Saved::CfaPlus(n),
        Some(_) => Saved::Unsupported,
    };
    Some(FrameRule {
        cfa,
        // An unlisted return address column is undefined: the outermost
        // frame (what `_start`'s CIE says with DW_CFA_undefined too).
        return_address: saved(row.register(X86_64::RA), Saved::Undefined),
        bp: saved(row.register(X86_64::RBP), Saved::Same),
    })
}

fn reg(r: gimli::Register) -> Option<Reg> {
    match r {
        X86_64::RSP => Some(Reg::Sp),
        X86_64::RBP => Some(Reg::Bp),
        X86_64::RA => Some(Reg::Ip),
        _ => None,
    }
}

impl Regs {
    fn get(&self, r: Reg) -> u64 {
        match r {
            Reg::Sp => self.sp,
            Reg::Bp => self.bp,
            Reg::Ip => self.ip,
        }
    }
}

/// The caller's registers by `rule`; `read` reads 8 bytes of the stack.
pub fn step(
    rule: &FrameRule,
    regs: &Regs,
    read: &mut dyn FnMut(u64) -> Option<u64>,
) -> Result<Regs, StepEnd> {
    let cfa = match &rule.cfa {
        Cfa::Offset { base, offset } => regs.get(*base).wrapping_add(*offset as u64),
        Cfa::Expression(bytes) => evaluate(bytes, regs, read)?,
        Cfa::Unsupported => return Err(StepEnd::Bad),
    };
    let value = |saved: Saved, current: u64, read: &mut dyn FnMut(u64) -> Option<u64>| match saved {
        Saved::Same => Ok(Some(current)),
        Saved::Undefined => Ok(None),
        Saved::AtCfa(n) => {
            let at = cfa.wrapping_add(n as u64);
            read(at).map(Some).ok_or(StepEnd::Memory(at))
        }
        Saved::CfaPlus(n) => Ok(Some(cfa.wrapping_add(n as u64))),
        Saved::Unsupported => Err(StepEnd::Bad),
    };
    let Some(ip) = value(rule.return_address, regs.ip, read)? else {
        return Err(StepEnd::Outermost);
    };
    let bp = value(rule.bp, regs.bp, read)?.unwrap_or(0);
    // The stack grows down: a caller's frame is above its callee's.
    if cfa <= regs.sp {
        return Err(StepEnd::Bad);
    }
    if ip == 0 {
        return Err(StepEnd::Outermost);
    }
    Ok(Regs { ip, sp: cfa, bp })
}

/// Evaluates a CFA expression (the PLT's) with the frame's registers.
fn evaluate(
    bytes: &[u8],
    regs: &Regs,
    read: &mut dyn FnMut(u64) -> Option<u64>,
) -> Result<u64, StepEnd> {
    let expr = gimli::Expression(gimli::EndianSlice::new(bytes, LittleEndian));
    let encoding = gimli::Encoding {
        format: gimli::Format::Dwarf64,
        version: 4,
        address_size: 8,
    };
    let mut eval = expr.evaluation(encoding);
    eval.set_max_iterations(64);
    let mut result = eval.evaluate().map_err(|_| StepEnd::Bad)?;
    loop {
        result = match result {
            gimli::EvaluationResult::Complete => break,
            gimli::EvaluationResult::RequiresRegister { register, .. } => {
                let v = reg(register).map(|r| regs.get(r)).ok_or(StepEnd::Bad)?;
                eval.resume_with_register(gimli::Value::Generic(v))
            }
            gimli::EvaluationResult::RequiresMemory {
                address, size: 8, ..
            } => {
                let v = read(address).ok_or(StepEnd::Memory(address))?;
                eval.resume_with_memory(gimli::Value::Generic(v))
            }
            _ => return Err(StepEnd::Bad),
        }
        .map_err(|_| StepEnd::Bad)?;
    }
    match eval.result().first().map(|p| &p.location) {
        Some(gimli::Location::Address { address }) => Ok(*address),
        _ => Err(StepEnd::Bad),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frame_pointer_step_reads_the_saved_pair() {
        // [bp] = caller's bp, [bp + 8] = return address.
        let stack = [0x7000u64, 0x40_1234];
        let base = 0x1000u64;
        let mut read = |a: u64| {
            let i = a.checked_sub(base)? / 8;
            stack.get(i as usize).copied()
        };
        let regs = Regs {
            ip: 0x40_0000,
            sp: 0xff0,
            bp: base,
        };
        let caller = step(&FrameRule::FRAME_POINTER, &regs, &mut read).unwrap();
        assert_eq!(
            caller,
            Regs {
                ip: 0x40_1234,
                sp: base + 16,
                bp: 0x7000
            }
        );
    }

    #[test]
    fn a_read_past_the_copy_is_reported_with_its_address() {
        let rule = FrameRule {
            cfa: Cfa::Offset {
                base: Reg::Sp,
                offset: 32,
            },
            return_address: Saved::AtCfa(-8),
            bp: Saved::Same,
        };
        let regs = Regs {
            ip: 1,
            sp: 0x100,
            bp: 5,
        };
        let mut nothing = |_| None;
        assert_eq!(
            step(&rule, &regs, &mut nothing),
            Err(StepEnd::Memory(0x118))
        );
    }

    #[test]
    fn the_plt_expression_evaluates() {
        // DW_OP_breg7 8; DW_OP_breg16 0; DW_OP_lit15; DW_OP_and;
        // DW_OP_lit11; DW_OP_ge; DW_OP_lit3; DW_OP_shl; DW_OP_plus
        let bytes: Arc<[u8]> =
            Arc::from(&[0x77, 8, 0x80, 0, 0x3f, 0x1a, 0x3b, 0x2a, 0x33, 0x24, 0x22][..]);
        let rule = FrameRule {
            cfa: Cfa::Expression(bytes),
            return_address: Saved::AtCfa(-8),
            bp: Saved::Same,
        };
        let mut read = |_: u64| Some(0x55);
        let early = Regs {
            ip: 0x2004,
            sp: 0x1000,
            bp: 0,
        };
        assert_eq!(step(&rule, &early, &mut read).unwrap().sp, 0x1008);
        let late = Regs {
            ip: 0x200b,
            sp: 0x1000,
            bp: 0,
        };
        assert_eq!(step(&rule, &late, &mut read).unwrap().sp, 0x1010);
    }

    #[test]
    fn a_frame_below_its_callee_is_refused() {
        let rule = FrameRule {
            cfa: Cfa::Offset {
                base: Reg::Sp,
                offset: -8,
            },
            return_address: Saved::AtCfa(0),
            bp: Saved::Same,
        };
        let regs = Regs {
            ip: 1,
            sp: 0x100,
            bp: 0,
        };
        let mut read = |_| Some(7);
        assert_eq!(step(&rule, &regs, &mut read), Err(StepEnd::Bad));
    }

    #[test]
    fn this_test_binary_has_rules_for_its_functions() {
        let exe = std::fs::read("/proc/self/exe").unwrap();
        let mut cfi = CallFrameInfo::parse(&exe).unwrap();
        assert!(cfi.len() > 100, "{cfi:?}");
        let binary = crate::Binary::parse(&exe).unwrap();
        let f = binary
            .functions
            .iter()
            .find(|f| f.name.contains("this_test_binary_has_rules") && f.size > 0)
            .expect("the test's own symbol");
        // At the entry the CFA is rsp + 8 and the return address at CFA - 8.
        let rule = cfi.rule_at(f.address).unwrap();
        assert_eq!(
            rule.cfa,
            Cfa::Offset {
                base: Reg::Sp,
                offset: 8
            }
        );
        assert_eq!(rule.return_address, Saved::AtCfa(-8));
    }
}
