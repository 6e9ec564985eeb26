//! User stacks unwound in user space from a copy of the stack: the BPF
//! program sends the user registers (ip, sp, bp) and the bytes from sp up
//! with each sample (`abi::UserStackCopy`), and this walks them with the
//! DWARF call-frame information of each mapped file (`uelf::cfi`), so code
//! built without frame pointers (libc, libm, plain `-O2`) keeps its callers.
//! Code with no call-frame information (JIT code in anonymous memory) is
//! walked by its frame pointer, so both mix within one stack.
//!
//! A process's mappings are read from `/proc/PID/maps` when it is first
//! met (and again when an address falls outside them); a file's rules are
//! read once and each looked-up rule is cached by (file, address).
//! Unwinding the same stack again (a thread that blocks again and again at
//! the same place) is answered from a memo of the words the walk read.

use std::collections::HashMap;

use uelf::cfi::{CallFrameInfo, FrameRule, Regs, StepEnd, step};
use uelf::{Backing, ProcessMaps, Segment};

use super::user::{ExitMaps, read_process_maps};

/// The frame that ends a stack deeper than the copy reached (its callers
/// were beyond the bytes copied): shown as `[truncated]`.
pub const TRUNCATED_FRAME: u64 = u64::MAX;

/// The most frames one stack gets (the kernel's `perf_event_max_stack`).
pub const MAX_FRAMES: usize = 127;

/// One sample's user registers and stack bytes (from `sp` up).
#[derive(Clone, Copy, Debug)]
pub struct StackCopy<'a> {
    pub pid: u32,
    pub regs: Regs,
    pub stack: &'a [u8],
    /// The copy reached the top of the thread's stack: a read past it is a
    /// bad frame, not a deeper stack.
    pub complete: bool,
}

impl StackCopy<'_> {
    fn read(&self, addr: u64) -> Option<u64> {
        let at = usize::try_from(addr.checked_sub(self.regs.sp)?).ok()?;
        let bytes = self.stack.get(at..at.checked_add(8)?)?;
        Some(u64::from_le_bytes(bytes.try_into().ok()?))
    }
}

/// A file's rules and the segments that turn file offsets into its addresses.
struct FileRules {
    cfi: CallFrameInfo,
    segments: Vec<Segment>,
}

/// A process's mappings.
struct Process {
    maps: ProcessMaps,
    /// Addresses found in no mapping, each of which made a read again.
    missed: std::collections::HashSet<u64>,
}

/// A walk that can be answered again: the words it read and its frames.
struct Memo {
    reads: Vec<(u64, u64)>,
    frames: Vec<u64>,
}

/// Counts for `-v` and the docs' figures.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct UnwindStats {
    pub stacks: u64,
    pub frames: u64,
    pub truncated: u64,
    /// Stacks answered from the memo.
    pub memo_hits: u64,
    pub files: u64,
}

#[derive(Default)]
pub struct Unwinder {
    processes: HashMap<u32, Process>,
    /// By path (the vDSO as `[vdso]`); `None` for a file that could not be read.
    files: HashMap<String, Option<usize>>,
    rules: Vec<FileRules>,
    cache: HashMap<(usize, u64), Option<FrameRule>>,
    memo: HashMap<(u32, u64, u64, u64), Memo>,
    exit_maps: Option<ExitMaps>,
    pub stats: UnwindStats,
}

impl Unwinder {
    pub fn new() -> Unwinder {
        Unwinder::default()
    }

    /// Also keeps each process's memory map in `exit_maps` when it is first
    /// met, so its addresses symbolize after it exits.
    pub fn with_exit_maps(exit_maps: ExitMaps) -> Unwinder {
        Unwinder {
            exit_maps: Some(exit_maps),
            ..Unwinder::default()
        }
    }

    /// Forgets a process's mappings (it ran `exec`).
    pub fn forget(&mut self, pid: u32) {
        self.processes.remove(&pid);
        self.memo.retain(|k, _| k.0 != pid);
    }

    /// The return addresses of `copy`, innermost first (the first is the
    /// interrupted instruction); [`TRUNCATED_FRAME`] last when the stack
    /// goes on beyond the copy.
    pub fn unwind(&mut self, copy: &StackCopy<'_>) -> Vec<u64> {
        self.stats.stacks += 1;
        let key = (copy.pid, copy.regs.ip, copy.regs.sp, copy.regs.bp);
        if let Some(m) = self.memo.get(&key)
            && m.reads.iter().all(|&(a, v)| copy.read(a) == Some(v))
        {
            self.stats.memo_hits += 1;
            self.stats.frames += m.frames.len() as u64;
            return m.frames.clone();
        }
        let mut reads = Vec::new();
        let mut frames = vec![copy.regs.ip];
        let mut regs = copy.regs;
        while frames.len() < MAX_FRAMES {
            // A return address is looked up at the call, which may be the
            // last instruction of its function.
            let at = if frames.len() == 1 {
                regs.ip
            } else {
                regs.ip.wrapping_sub(1)
            };
            let Some(rule) = self.rule(copy.pid, at) else {
                break;
            };
            let mut read = |a: u64| {
                let v = copy.read(a);
                if let Some(v) = v {
                    reads.push((a, v));
                }
                v
            };
            match step(&rule, &regs, &mut read) {
                Ok(caller) => {
                    frames.push(caller.ip);
                    regs = caller;
                }
                Err(StepEnd::Memory(addr))
                    if !copy.complete
                        && addr >= copy.regs.sp.saturating_add(copy.stack.len() as u64) =>
                {
                    frames.push(TRUNCATED_FRAME);
                    self.stats.truncated += 1;
                    break;
                }
                Err(_) => break,
            }
        }
        self.stats.frames += frames.len() as u64;
        if self.memo.len() > 65536 {
            self.memo.clear();
        }
        self.memo.insert(
            key,
            Memo {
                reads,
                frames: frames.clone(),
            },
        );
        frames
    }

    /// Where `addr` of `pid` lies: the file (its path to read and as the
    /// process names it) and the offset in it; `None` outside any file
    /// (anonymous memory, the vDSO, unmapped). Asked right after
    /// [`Unwinder::unwind`], while the mappings it read still hold.
    pub fn locate(&mut self, pid: u32, addr: u64) -> Option<(String, String, u64)> {
        let m = self.mapping_fresh(pid, addr)?;
        match &m.backing {
            Backing::File(path) => Some((
                path.clone(),
                m.path.clone().unwrap_or_else(|| path.clone()),
                m.file_offset(addr),
            )),
            _ => None,
        }
    }

    /// The rule for `addr` in `pid`: from the file mapped there, by frame
    /// pointer in anonymous memory (JIT code), none outside every mapping.
    fn rule(&mut self, pid: u32, addr: u64) -> Option<FrameRule> {
        let (file, file_offset) = self.file_at(pid, addr)?;
        let Some(file) = file else {
            return Some(FrameRule::FRAME_POINTER);
        };
        let vaddr = {
            let r = self.rules.get(file)?;
            r.segments
                .iter()
                .find(|s| file_offset >= s.offset && file_offset - s.offset < s.filesz)
                .map(|s| file_offset - s.offset + s.vaddr)?
        };
        if let Some(rule) = self.cache.get(&(file, vaddr)) {
            return rule.clone();
        }
        let rule = self.rules.get_mut(file)?.cfi.rule_at(vaddr);
        self.cache.insert((file, vaddr), rule.clone());
        rule
    }

    /// The file (an index into `rules`; `None` for anonymous memory) and
    /// the file offset of `addr`.
    fn file_at(&mut self, pid: u32, addr: u64) -> Option<(Option<usize>, u64)> {
        let mapping = self.mapping_fresh(pid, addr)?;
        let offset = mapping.file_offset(addr);
        let key = match &mapping.backing {
            Backing::Anonymous => return Some((None, offset)),
            Backing::Vdso => "[vdso]".to_string(),
            Backing::File(path) => path.clone(),
        };
        if let Some(index) = self.files.get(&key) {
            return index.map(|i| (Some(i), offset));
        }
        let index = load_rules(&key).map(|r| {
            self.rules.push(r);
            self.stats.files += 1;
            self.rules.len() - 1
        });
        self.files.insert(key, index);
        index.map(|i| (Some(i), offset))
    }

    /// The mapping of `addr`, reading the mappings again when it lies
    /// outside them (a library loaded since, a program run by `exec`), at
    /// most once per address a process (an address of no mapping, a bad
    /// frame's, is not worth a read for every stack).
    fn mapping_fresh(&mut self, pid: u32, addr: u64) -> Option<uelf::Mapping> {
        if let Some(m) = self.mapping(pid, addr) {
            return Some(m);
        }
        let process = self.processes.get_mut(&pid)?;
        if !process.missed.insert(addr) || process.missed.len() > 1024 {
            return None;
        }
        let missed = std::mem::take(&mut process.missed);
        self.processes.remove(&pid);
        self.mapping(pid, addr);
        if let Some(p) = self.processes.get_mut(&pid) {
            p.missed = missed;
        }
        self.mapping(pid, addr)
    }

    fn mapping(&mut self, pid: u32, addr: u64) -> Option<uelf::Mapping> {
        if !self.processes.contains_key(&pid) {
            let maps = read_process_maps(pid)?;
            if let Some(exit_maps) = &self.exit_maps {
                exit_maps.record_now(pid);
            }
            self.processes.insert(
                pid,
                Process {
                    maps,
                    missed: std::collections::HashSet::new(),
                },
            );
        }
        self.processes.get(&pid)?.maps.find(addr).cloned()
    }
}

/// The most bytes of `.eh_frame`/`.debug_frame` read from one file.
const MAX_FRAME_SECTION: u64 = 64 << 20;

/// Reads a file's call-frame information (and, where the file has none,
/// its separate debug file's `.debug_frame`): only the ELF headers and
/// those sections are read, so a large library (a compiler's, hundreds of
/// MB) costs its frame sections, not its size.
fn load_rules(path: &str) -> Option<FileRules> {
    if path == "[vdso]" {
        let data = own_vdso()?;
        let binary = uelf::Binary::parse(&data).ok()?;
        return Some(FileRules {
            cfi: CallFrameInfo::parse(&data).ok()?,
            segments: binary.segments,
        });
    }
    let file = ElfSections::open(path)?;
    let mut cfi = file.call_frame_info();
    if cfi.is_empty() {
        for debug in file.debug_file_paths(path) {
            if let Some(found) = ElfSections::open(&debug)
                .map(|d| d.call_frame_info())
                .filter(|c| !c.is_empty())
            {
                cfi = found;
                break;
            }
        }
    }
    Some(FileRules {
        cfi,
        segments: file.segments,
    })
}

/// An ELF64 file's program and section headers, read with the few
/// sections unwinding needs.
struct ElfSections {
    file: std::fs::File,
    segments: Vec<Segment>,
    /// (name, address, file offset, size, flags)
    sections: Vec<(String, u64, u64, u64, u64)>,
}

impl ElfSections {
    fn open(path: &str) -> Option<ElfSections> {
        use std::os::unix::fs::FileExt;
        let file = std::fs::File::open(path).ok()?;
        let mut header = [0u8; 64];
        file.read_exact_at(&mut header, 0).ok()?;
        // 64-bit little-endian ELF only (x86-64).
        if &header[..4] != b"\x7fELF" || header[4] != 2 || header[5] != 1 {
            return None;
        }
        let u16_at = |b: &[u8], at: usize| u16::from_le_bytes([b[at], b[at + 1]]) as u64;
        let u32_at =
            |b: &[u8], at: usize| u32::from_le_bytes(b[at..at + 4].try_into().unwrap()) as u64;
        let u64_at = |b: &[u8], at: usize| u64::from_le_bytes(b[at..at + 8].try_into().unwrap());
        let (phoff, shoff) = (u64_at(&header, 32), u64_at(&header, 40));
        let (phentsize, phnum) = (u16_at(&header, 54), u16_at(&header, 56));
        let (shentsize, shnum, shstrndx) = (
            u16_at(&header, 58),
            u16_at(&header, 60),
            u16_at(&header, 62),
        );
        if phentsize < 56 || shentsize < 64 || phnum > 4096 || shnum > 65535 {
            return None;
        }
        let mut ph = vec![0u8; (phentsize * phnum) as usize];
        file.read_exact_at(&mut ph, phoff).ok()?;
        let segments = ph
            .chunks(phentsize as usize)
            .filter(|p| u32_at(p, 0) == 1) // PT_LOAD
            .map(|p| Segment {
                vaddr: u64_at(p, 16),
                memsz: u64_at(p, 40),
                offset: u64_at(p, 8),
                filesz: u64_at(p, 32),
                executable: u32_at(p, 4) & 1 != 0,
            })
            .collect();
        let mut sh = vec![0u8; (shentsize * shnum) as usize];
        file.read_exact_at(&mut sh, shoff).ok()?;
        let headers: Vec<&[u8]> = sh.chunks(shentsize as usize).collect();
        let strtab = headers.get(shstrndx as usize)?;
        let (str_off, str_size) = (u64_at(strtab, 24), u64_at(strtab, 32));
        if str_size > 1 << 20 {
            return None;
        }
        let mut names = vec![0u8; str_size as usize];
        file.read_exact_at(&mut names, str_off).ok()?;
        let sections = headers
            .iter()
            .map(|h| {
                let at = u32_at(h, 0) as usize;
                let name = names
                    .get(at..)
                    .and_then(|n| n.split(|&b| b == 0).next())
                    .map(|n| String::from_utf8_lossy(n).into_owned())
                    .unwrap_or_default();
                (
                    name,
                    u64_at(h, 16),
                    u64_at(h, 24),
                    u64_at(h, 32),
                    u64_at(h, 8),
                )
            })
            .collect();
        Some(ElfSections {
            file,
            segments,
            sections,
        })
    }

    fn section(&self, name: &str) -> Option<(u64, Vec<u8>)> {
        use std::os::unix::fs::FileExt;
        const SHF_COMPRESSED: u64 = 0x800;
        let (_, addr, offset, size, flags) = self.sections.iter().find(|s| s.0 == name)?;
        if *size == 0 || *size > MAX_FRAME_SECTION || flags & SHF_COMPRESSED != 0 {
            return None;
        }
        let mut bytes = vec![0u8; *size as usize];
        self.file.read_exact_at(&mut bytes, *offset).ok()?;
        Some((*addr, bytes))
    }

    fn call_frame_info(&self) -> CallFrameInfo {
        let text = self.section_address(".text");
        CallFrameInfo::from_sections(
            self.section(".eh_frame"),
            self.section(".debug_frame").map(|s| s.1),
            text,
        )
    }

    fn section_address(&self, name: &str) -> u64 {
        self.sections
            .iter()
            .find(|s| s.0 == name)
            .map_or(0, |s| s.1)
    }

    /// Where the separate debug file may be (by build id, by debug link).
    fn debug_file_paths(&self, path: &str) -> Vec<String> {
        let mut binary = uelf::Binary::default();
        if let Some((_, notes)) = self.section(".note.gnu.build-id") {
            // namesz 4, descsz N, type 3, "GNU\0", then the id.
            if notes.len() > 16 {
                binary.build_id = Some(notes[16..].to_vec());
            }
        }
        if let Some((_, link)) = self.section(".gnu_debuglink") {
            let name = link.split(|&b| b == 0).next().unwrap_or_default();
            binary.debuglink = Some(String::from_utf8_lossy(name).into_owned());
        }
        binary.debug_file_paths(path)
    }
}

/// weft's own vDSO image: the kernel maps the same one into every process.
fn own_vdso() -> Option<Vec<u8>> {
    let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
    let line = maps.lines().find(|l| l.ends_with("[vdso]"))?;
    let (start, end) = line.split_whitespace().next()?.split_once('-')?;
    let start = u64::from_str_radix(start, 16).ok()?;
    let end = u64::from_str_radix(end, 16).ok()?;
    let mut bytes = vec![0u8; usize::try_from(end.checked_sub(start)?).ok()?];
    use std::io::{Read, Seek, SeekFrom};
    let mut mem = std::fs::File::open("/proc/self/mem").ok()?;
    mem.seek(SeekFrom::Start(start)).ok()?;
    mem.read_exact(&mut bytes).ok()?;
    Some(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Unwinds this very thread from a copy of its own stack: the chain of
    /// the three functions below must come back in order.
    #[inline(never)]
    fn copy_here(out: &mut Option<(Regs, Vec<u8>)>) {
        let (ip, sp, bp): (u64, u64, u64);
        // SAFETY: reads three registers into locals; no memory is touched.
        unsafe {
            std::arch::asm!(
                "lea {ip}, [rip]",
                "mov {sp}, rsp",
                "mov {bp}, rbp",
                ip = out(reg) ip,
                sp = out(reg) sp,
                bp = out(reg) bp,
            );
        }
        // Up to 64 KiB above sp, within the mapping of this thread's stack.
        let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
        let end = maps
            .lines()
            .filter_map(|l| {
                let (s, e) = l.split_whitespace().next()?.split_once('-')?;
                Some((
                    u64::from_str_radix(s, 16).ok()?,
                    u64::from_str_radix(e, 16).ok()?,
                ))
            })
            .find(|&(s, e)| s <= sp && sp < e)
            .unwrap()
            .1;
        let len = (end - sp).min(64 * 1024) as usize;
        // SAFETY: the range lies within this thread's live stack.
        let bytes = unsafe { std::slice::from_raw_parts(sp as *const u8, len) }.to_vec();
        *out = Some((Regs { ip, sp, bp }, bytes));
    }

    #[inline(never)]
    fn middle(out: &mut Option<(Regs, Vec<u8>)>) {
        copy_here(out);
        std::hint::black_box(());
    }

    #[inline(never)]
    fn outer(out: &mut Option<(Regs, Vec<u8>)>) {
        middle(out);
        std::hint::black_box(());
    }

    #[test]
    fn unwinds_its_own_stack_through_call_frame_information() {
        let mut copy = None;
        outer(&mut copy);
        let (regs, bytes) = copy.unwrap();
        let mut unwinder = Unwinder::new();
        let pid = std::process::id();
        let frames = unwinder.unwind(&StackCopy {
            pid,
            regs,
            stack: &bytes,
            complete: false,
        });
        let mut symbols = super::super::UserSymbols::new();
        let names: Vec<String> = symbols
            .frames(pid, &frames)
            .into_iter()
            .map(|s| s.map_or("?".to_string(), |s| s.name))
            .collect();
        let at = |f: &str| names.iter().position(|n| n.ends_with(f));
        let (a, b, c) = (at("copy_here"), at("middle"), at("outer"));
        assert!(a.is_some() && a < b && b < c, "{names:?}");
        assert_eq!(b.unwrap() - a.unwrap(), 1, "{names:?}");
        assert_eq!(c.unwrap() - b.unwrap(), 1, "{names:?}");
        // Again: answered from the memo, the same frames.
        let again = unwinder.unwind(&StackCopy {
            pid,
            regs,
            stack: &bytes,
            complete: false,
        });
        assert_eq!(again, frames);
        assert_eq!(unwinder.stats.memo_hits, 1);
    }

    #[test]
    fn a_copy_too_short_ends_in_the_truncation_frame() {
        let mut copy = None;
        outer(&mut copy);
        let (regs, bytes) = copy.unwrap();
        let mut unwinder = Unwinder::new();
        let frames = unwinder.unwind(&StackCopy {
            pid: std::process::id(),
            regs,
            stack: &bytes[..256],
            complete: false,
        });
        assert_eq!(frames.last(), Some(&TRUNCATED_FRAME), "{frames:x?}");
        let complete = unwinder.unwind(&StackCopy {
            pid: std::process::id(),
            regs: Regs { bp: 1, ..regs },
            stack: &bytes[..256],
            complete: true,
        });
        assert_ne!(complete.last(), Some(&TRUNCATED_FRAME), "{complete:x?}");
    }
}
