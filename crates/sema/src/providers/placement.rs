//! Where a uprobe may go: only where an instruction begins.
//!
//! A uprobe replaces the first byte of its instruction with a breakpoint
//! in the file's pages, which every process that maps the file shares.
//! Inside an instruction that byte changes what the instruction does, and
//! every process that runs it computes wrong results or crashes. So
//! `FUNCTION+OFFSET` and an address are checked by decoding the function
//! from its entry up to the offset ([`uelf::place`]), as bpftrace checks
//! them with its disassembler. A place inside an instruction, or one weft
//! cannot check (bytes its decoder does not know, an address in no
//! function), is refused; `--unsafe` places it anyway, with a warning
//! ([`unsafe_placement`]). An offset past the function's end, or a
//! uretprobe anywhere but at an entry, is refused either way.

use source::{Code, Diagnostic, Severity, Span};
use uelf::{Binary, Placement, Symbol};

use crate::diagnostics as diag;

/// The longest x86-64 instruction, in bytes.
const MAX_INSTRUCTION: u64 = 15;

/// How many bytes an error shows of what could not be decoded.
const SHOWN_BYTES: usize = 8;

/// The function a probed place is in.
pub(super) struct Function<'a> {
    /// As the user named it (`strchr`, also when the implementation of an
    /// indirect function is what is decoded), or the symbol that holds the
    /// address the user wrote.
    pub name: &'a str,
    /// The virtual address where its instructions begin.
    pub entry: u64,
    /// Its size from the symbol table; `None` when unknown (an indirect
    /// function's implementation without debug symbols, a size of 0): its
    /// bytes are then decoded from the entry up to the offset only.
    pub size: Option<u64>,
    /// The user wrote an address: places are shown as addresses too.
    pub by_address: bool,
}

impl Function<'_> {
    /// `offset` bytes into the function, as the user would write it.
    fn at(&self, offset: u64) -> String {
        if self.by_address {
            format!("{:#x} ({}+{offset})", self.entry + offset, self.name)
        } else {
            format!("{}+{offset}", self.name)
        }
    }
}

/// The function whose body holds `address`: the nearest symbol that starts
/// at or before it and covers it (a symbol of size 0 only its first byte).
pub(super) fn function_holding(binary: &Binary, address: u64) -> Option<&Symbol> {
    binary
        .functions
        .iter()
        .filter(|s| s.address <= address && address - s.address < s.size.max(1))
        .max_by_key(|s| s.address)
}

/// The size of the function that begins at `entry` (an indirect function's
/// implementation, named only by debug symbols), if a symbol says it.
pub(super) fn size_of_function_at(binary: &Binary, entry: u64) -> Option<u64> {
    binary
        .functions
        .iter()
        .filter(|s| s.address == entry && !s.ifunc)
        .map(|s| s.size)
        .max()
        .filter(|&size| size > 0)
}

/// Checks that an instruction of `func` begins `offset` bytes into it;
/// `unchecked` (`--unsafe`) skips what only the decoder can tell.
pub(super) fn check(
    span: Span,
    binary: &Binary,
    bytes: &[u8],
    func: &Function<'_>,
    offset: u64,
    unchecked: bool,
) -> Result<(), Diagnostic> {
    if let Some(size) = func.size.filter(|&size| offset >= size) {
        return Err(diag::uprobe_offset_outside_function(
            span,
            &func.at(offset),
            func.name,
            size,
        ));
    }
    if offset == 0 || unchecked {
        return Ok(());
    }
    let code = code_at(
        binary,
        bytes,
        func.entry,
        func.size.unwrap_or(offset + MAX_INSTRUCTION),
    );
    match uelf::place(code, offset) {
        Placement::Boundary => Ok(()),
        Placement::Inside { start, len } => {
            let instruction = format!(
                "the {len}-byte instruction `{}` at {}",
                hex(&code[start as usize..start as usize + len]),
                func.at(start)
            );
            Err(diag::uprobe_inside_instruction(
                span,
                &func.at(offset),
                &instruction,
                &func.at(start),
                &func.at(start + len as u64),
            ))
        }
        Placement::Undecodable { at, error } => {
            let from = (at as usize).min(code.len());
            let shown = &code[from..(from + SHOWN_BYTES).min(code.len())];
            let why = match error {
                uelf::DecodeError::Truncated => "end before the instruction does".to_string(),
                uelf::DecodeError::Invalid => "are not an instruction in 64-bit mode".to_string(),
                uelf::DecodeError::Unsupported(what) => {
                    format!("are {what}, which weft does not decode")
                }
            };
            Err(diag::uprobe_placement_unchecked(
                span,
                &func.at(offset),
                &func.at(at),
                &hex(shown),
                &why,
            ))
        }
    }
}

/// Up to `len` bytes of the file from virtual address `entry`, within the
/// segment that maps it.
fn code_at<'b>(binary: &Binary, bytes: &'b [u8], entry: u64, len: u64) -> &'b [u8] {
    let Some(segment) = binary
        .segments
        .iter()
        .find(|s| entry >= s.vaddr && entry - s.vaddr < s.filesz)
    else {
        return &[];
    };
    let start = segment.offset + (entry - segment.vaddr);
    let end = (segment.offset + segment.filesz).min(start.saturating_add(len));
    let clamp = |at: u64| (at as usize).min(bytes.len());
    &bytes[clamp(start)..clamp(end)]
}

fn hex(bytes: &[u8]) -> String {
    let shown: Vec<String> = bytes.iter().map(|b| format!("{b:02x}")).collect();
    shown.join(" ")
}

/// Whether a diagnostic refuses a uprobe placement that `--unsafe` allows.
pub(crate) fn is_unsafe_placement(d: &Diagnostic) -> bool {
    d.code.is_some_and(|c| Code::UNSAFE_PLACEMENT.contains(&c))
}

/// A refused placement as reported: an error that says what `--unsafe`
/// does (`allowed == false`), or the warning that it was placed anyway.
pub(crate) fn unsafe_placement(mut d: Diagnostic, allowed: bool) -> Diagnostic {
    if allowed {
        d.severity = Severity::Warning;
        // A message's own advice to use --unsafe (bpftrace's second line).
        if let Some((first, _)) = d.message.split_once('\n') {
            d.message = first.to_string();
        }
        d.notes.push(
            "placed anyway (--unsafe): the processes that run this code may compute wrong results or crash"
                .into(),
        );
    } else if !d.message.contains("--unsafe") {
        d.help.push(
            "--unsafe places the probe anyway, at the risk of corrupting the processes that run it"
                .into(),
        );
    }
    d
}
