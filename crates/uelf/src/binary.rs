//! An ELF executable or shared library: its loadable segments, function
//! symbols and USDT notes.

use object::read::elf::{ElfFile64, FileHeader, ProgramHeader, SectionHeader, Sym};
use object::{Endianness, elf};

use crate::usdt::{self, UsdtNote};

/// Why a file could not be read as an ELF binary.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ElfError(pub String);

impl std::fmt::Display for ElfError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ElfError {}

/// The build id in a `.note.gnu.build-id` section (note type 3, owner "GNU").
fn gnu_build_id(notes: &[u8]) -> Option<Vec<u8>> {
    let word = |at: usize| -> Option<usize> {
        Some(u32::from_le_bytes(notes.get(at..at + 4)?.try_into().ok()?) as usize)
    };
    let mut at = 0;
    while at + 12 <= notes.len() {
        let (namesz, descsz, kind) = (word(at)?, word(at + 4)?, word(at + 8)?);
        let name_at = at + 12;
        let desc_at = name_at + namesz.next_multiple_of(4);
        let desc = notes.get(desc_at..desc_at.checked_add(descsz)?)?;
        if kind == 3 && notes.get(name_at..name_at + namesz)? == b"GNU\0" {
            return Some(desc.to_vec());
        }
        at = desc_at + descsz.next_multiple_of(4);
    }
    None
}

/// A `PT_LOAD` program header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    pub vaddr: u64,
    pub memsz: u64,
    pub offset: u64,
    pub filesz: u64,
    pub executable: bool,
}

/// A defined function symbol.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Symbol {
    pub name: String,
    /// Virtual address as linked (`st_value`).
    pub address: u64,
    pub size: u64,
    /// An indirect function (`STT_GNU_IFUNC`, like glibc's `strlen`):
    /// `address` is its resolver, which picks the implementation that
    /// calls reach when the library is loaded.
    pub ifunc: bool,
}

/// The parts of an ELF file probes need.
#[derive(Clone, Debug, Default)]
pub struct Binary {
    pub segments: Vec<Segment>,
    /// Function symbols from `.symtab` and `.dynsym`, one per name, sorted by name.
    pub functions: Vec<Symbol>,
    /// Data symbols (`STT_OBJECT`) from `.symtab` and `.dynsym`, one per
    /// name, sorted by name: what `uaddr()` names besides functions.
    pub objects: Vec<Symbol>,
    /// USDT probes, in the order of the notes.
    pub usdt: Vec<UsdtNote>,
    /// `ET_DYN` (a PIE executable or a shared library) rather than `ET_EXEC`.
    pub position_independent: bool,
    /// The `NT_GNU_BUILD_ID` note: names the separate debug file in
    /// `/usr/lib/debug/.build-id/`.
    pub build_id: Option<Vec<u8>>,
    /// The file name in `.gnu_debuglink`: the separate debug file beside
    /// the binary (see [`Binary::debug_file_paths`]).
    pub debuglink: Option<String>,
    /// The libraries it needs (`DT_NEEDED`, as `libc.so.6`), in order: where
    /// the dynamic loader finds the symbols it does not define.
    pub needed: Vec<String>,
    /// Not an ELF file but raw code (a flat binary run from memory): one
    /// segment maps the whole file at address 0, so an address is its file
    /// offset; it has no symbols.
    pub flat: bool,
}

impl Binary {
    /// A file that is not ELF, `len` bytes of raw code: addresses in it are
    /// file offsets.
    pub fn flat(len: u64) -> Binary {
        Binary {
            segments: vec![Segment {
                vaddr: 0,
                memsz: len,
                offset: 0,
                filesz: len,
                executable: true,
            }],
            flat: true,
            ..Binary::default()
        }
    }

    /// Whether `data` begins as an ELF file does.
    pub fn is_elf(data: &[u8]) -> bool {
        data.starts_with(b"\x7fELF")
    }

    /// Reads an ELF file from its bytes.
    pub fn parse(data: &[u8]) -> Result<Binary, ElfError> {
        if data.get(..4) != Some(b"\x7fELF".as_slice()) {
            return Err(ElfError("not an ELF file".into()));
        }
        if data.get(4) != Some(&2) {
            // EI_CLASS 2 is ELFCLASS64.
            return Err(ElfError(
                "a 32-bit ELF file (only 64-bit is supported)".into(),
            ));
        }
        let file = ElfFile64::<Endianness>::parse(data)
            .map_err(|e| ElfError(format!("malformed ELF file: {e}")))?;
        let endian = file.endian();
        let header = file.elf_header();
        let position_independent = header.e_type(endian) == elf::ET_DYN;

        let segments = file
            .elf_program_headers()
            .iter()
            .filter(|p| p.p_type(endian) == elf::PT_LOAD)
            .map(|p| Segment {
                vaddr: p.p_vaddr(endian),
                memsz: p.p_memsz(endian),
                offset: p.p_offset(endian),
                filesz: p.p_filesz(endian),
                executable: p.p_flags(endian).contains(elf::PF_X),
            })
            .collect();

        let mut functions: Vec<Symbol> = Vec::new();
        let mut objects: Vec<Symbol> = Vec::new();
        for table in [file.elf_symbol_table(), file.elf_dynamic_symbol_table()] {
            for sym in table.symbols() {
                let ifunc = sym.st_type() == elf::STT_GNU_IFUNC;
                let list = match sym.st_type() {
                    elf::STT_FUNC | elf::STT_GNU_IFUNC => &mut functions,
                    elf::STT_OBJECT => &mut objects,
                    _ => continue,
                };
                if sym.st_shndx(endian) == elf::SHN_UNDEF || sym.st_value(endian) == 0 {
                    continue;
                }
                let Ok(name) = table.symbol_name(endian, sym) else {
                    continue;
                };
                let Ok(name) = std::str::from_utf8(name) else {
                    continue;
                };
                if name.is_empty() {
                    continue;
                }
                list.push(Symbol {
                    name: name.to_string(),
                    address: sym.st_value(endian),
                    size: sym.st_size(endian),
                    ifunc,
                });
            }
        }
        // `.symtab` comes first, so a name keeps its full symbol-table entry.
        functions.sort_by(|a, b| a.name.cmp(&b.name));
        functions.dedup_by(|a, b| a.name == b.name);
        objects.sort_by(|a, b| a.name.cmp(&b.name));
        objects.dedup_by(|a, b| a.name == b.name);

        let sections = file.elf_section_table();
        let mut note_data: Option<&[u8]> = None;
        let mut stapsdt_base: Option<u64> = None;
        let mut build_id = None;
        let mut debuglink = None;
        for section in sections.iter() {
            let name = sections.section_name(endian, section).unwrap_or(b"");
            let is_note = section.sh_type(endian) == elf::SHT_NOTE;
            match name {
                b".note.stapsdt" if is_note => {
                    note_data = section.data(endian, data).ok();
                }
                b".stapsdt.base" => stapsdt_base = Some(section.sh_addr(endian)),
                b".note.gnu.build-id" if is_note => {
                    build_id = section.data(endian, data).ok().and_then(gnu_build_id);
                }
                b".gnu_debuglink" => {
                    debuglink = section
                        .data(endian, data)
                        .ok()
                        .and_then(|d| d.split(|&b| b == 0).next())
                        .and_then(|n| std::str::from_utf8(n).ok())
                        .filter(|n| !n.is_empty() && !n.contains('/'))
                        .map(str::to_string);
                }
                _ => {}
            }
        }
        let needed = sections
            .dynamic_table(endian, data)
            .map(|table| {
                table
                    .iter()
                    .filter(|d| d.tag == elf::DT_NEEDED)
                    .filter_map(|d| table.string(d).ok())
                    .filter_map(|name| std::str::from_utf8(name).ok())
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default();
        let usdt = match note_data {
            Some(bytes) => usdt::parse_notes(bytes, stapsdt_base)?,
            None => Vec::new(),
        };
        Ok(Binary {
            segments,
            functions,
            objects,
            usdt,
            position_independent,
            build_id,
            debuglink,
            needed,
            flat: false,
        })
    }

    /// Where the separate debug file of this binary, found at `path`, may
    /// be, in the order gdb looks: by build id, then by debug link beside
    /// the binary, in its `.debug/`, and under `/usr/lib/debug`.
    pub fn debug_file_paths(&self, path: &str) -> Vec<String> {
        let mut out = Vec::new();
        if let Some(id) = self.build_id.as_ref().filter(|id| id.len() >= 2) {
            let hex: String = id.iter().map(|b| format!("{b:02x}")).collect();
            out.push(format!(
                "/usr/lib/debug/.build-id/{}/{}.debug",
                &hex[..2],
                &hex[2..]
            ));
        }
        if let Some(link) = &self.debuglink {
            let dir = path.rsplit_once('/').map_or(".", |(d, _)| d);
            out.push(format!("{dir}/{link}"));
            out.push(format!("{dir}/.debug/{link}"));
            out.push(format!("/usr/lib/debug{dir}/{link}"));
        }
        out.retain(|p| p != path);
        out
    }

    /// Adds the symbols of this binary's separate debug file (local
    /// functions that stripping removed); a name already known keeps its
    /// symbol. A debug file whose build id differs is for another build and
    /// is ignored; returns whether the symbols were taken.
    pub fn add_debug_symbols(&mut self, debug: &Binary) -> bool {
        if let (Some(a), Some(b)) = (&self.build_id, &debug.build_id)
            && a != b
        {
            return false;
        }
        for (mine, theirs) in [
            (&mut self.functions, &debug.functions),
            (&mut self.objects, &debug.objects),
        ] {
            mine.extend(theirs.iter().cloned());
            // stable: the binary's own entry comes first and stays
            mine.sort_by(|a, b| a.name.cmp(&b.name));
            mine.dedup_by(|a, b| a.name == b.name);
        }
        true
    }

    /// The file offset of virtual address `addr`, through the `PT_LOAD`
    /// segment that maps it; `None` if no segment holds it in the file.
    pub fn file_offset(&self, addr: u64) -> Option<u64> {
        self.segments
            .iter()
            .find(|s| addr >= s.vaddr && addr - s.vaddr < s.filesz.max(s.memsz))
            .filter(|s| addr - s.vaddr < s.filesz)
            .map(|s| addr - s.vaddr + s.offset)
    }

    /// The virtual address as linked of file offset `offset`, through the
    /// `PT_LOAD` segment that maps it (the inverse of [`Binary::file_offset`]).
    pub fn virtual_address(&self, offset: u64) -> Option<u64> {
        self.segments
            .iter()
            .find(|s| offset >= s.offset && offset - s.offset < s.filesz)
            .map(|s| offset - s.offset + s.vaddr)
    }

    /// The function symbol called `name`.
    pub fn function(&self, name: &str) -> Option<&Symbol> {
        self.functions
            .binary_search_by(|s| s.name.as_str().cmp(name))
            .ok()
            .map(|i| &self.functions[i])
    }

    /// The data or function symbol called `name` (data first, as a name
    /// means one symbol in a linked file).
    pub fn symbol(&self, name: &str) -> Option<&Symbol> {
        self.objects
            .binary_search_by(|s| s.name.as_str().cmp(name))
            .ok()
            .map(|i| &self.objects[i])
            .or_else(|| self.function(name))
    }

    /// The function whose body holds `addr`, if any.
    pub fn function_at(&self, addr: u64) -> Option<&Symbol> {
        self.functions
            .iter()
            .find(|s| addr >= s.address && addr < s.address + s.size.max(1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{LOAD_VADDR, Probe, TEXT_OFFSET, tiny_elf, tiny_library};

    #[test]
    fn needed_libraries_in_order() {
        let b = Binary::parse(&tiny_library(&["f"], &[], &["libc.so.6", "libm.so.6"])).unwrap();
        assert_eq!(b.needed, ["libc.so.6", "libm.so.6"]);
        assert_eq!(b.functions.len(), 1);
        assert!(
            Binary::parse(&tiny_elf(&["f"], &[]))
                .unwrap()
                .needed
                .is_empty()
        );
    }

    #[test]
    fn tiny_elf_round_trip() {
        let probes = [Probe {
            provider: "weft",
            name: "tick",
            args: "-4@%edi",
            semaphore: LOAD_VADDR + 8,
        }];
        let b = Binary::parse(&tiny_elf(&["marker", "answer"], &probes)).unwrap();
        assert!(b.position_independent);
        let answer = b.function("answer").unwrap();
        assert_eq!(answer.address, LOAD_VADDR + TEXT_OFFSET + 16);
        assert_eq!(b.file_offset(answer.address), Some(TEXT_OFFSET + 16));
        assert_eq!(b.function_at(answer.address + 3).unwrap().name, "answer");
        assert_eq!(b.file_offset(1), None);
        assert_eq!(b.usdt.len(), 1);
        assert_eq!(b.usdt[0].address, LOAD_VADDR + TEXT_OFFSET);
        assert_eq!(b.file_offset(b.usdt[0].semaphore), Some(8));
        assert!(!answer.ifunc);
    }

    #[test]
    fn debug_files_are_looked_for_by_build_id_then_by_debug_link() {
        let b = Binary {
            build_id: Some(vec![0x93, 0xac, 0x61, 0x0e]),
            debuglink: Some("libc.so.6.debug".into()),
            ..Binary::default()
        };
        assert_eq!(
            b.debug_file_paths("/lib/x86_64-linux-gnu/libc.so.6"),
            [
                "/usr/lib/debug/.build-id/93/ac610e.debug",
                "/lib/x86_64-linux-gnu/libc.so.6.debug",
                "/lib/x86_64-linux-gnu/.debug/libc.so.6.debug",
                "/usr/lib/debug/lib/x86_64-linux-gnu/libc.so.6.debug",
            ]
        );
        assert!(Binary::default().debug_file_paths("/bin/true").is_empty());
    }

    #[test]
    fn debug_symbols_add_names_and_keep_the_binarys_own() {
        let mut b = Binary::parse(&tiny_elf(&["marker", "answer"], &[])).unwrap();
        let debug = Binary::parse(&tiny_elf(&["local_a", "answer", "local_b"], &[])).unwrap();
        assert!(b.add_debug_symbols(&debug));
        let names: Vec<&str> = b.functions.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["answer", "local_a", "local_b", "marker"]);
        // `answer` keeps the binary's address (second function), not the debug file's (first).
        assert_eq!(
            b.function("answer").unwrap().address,
            LOAD_VADDR + TEXT_OFFSET + 16
        );
        // A debug file of another build is refused.
        let mut other = Binary::parse(&tiny_elf(&["marker"], &[])).unwrap();
        other.build_id = Some(vec![1; 20]);
        let mut foreign = debug.clone();
        foreign.build_id = Some(vec![2; 20]);
        assert!(!other.add_debug_symbols(&foreign));
        assert!(other.function("local_a").is_none());
    }

    #[test]
    fn build_id_notes() {
        let mut notes = Vec::new();
        // an unrelated note first, then the GNU build id
        for (name, kind, desc) in [
            (&b"XYZ\0"[..], 1u32, &[7u8, 7][..]),
            (b"GNU\0", 3, &[0xab, 0xcd, 0xef]),
        ] {
            notes.extend_from_slice(&(name.len() as u32).to_le_bytes());
            notes.extend_from_slice(&(desc.len() as u32).to_le_bytes());
            notes.extend_from_slice(&kind.to_le_bytes());
            notes.extend_from_slice(name);
            notes.extend_from_slice(desc);
            notes.resize(notes.len().next_multiple_of(4), 0);
        }
        assert_eq!(gnu_build_id(&notes), Some(vec![0xab, 0xcd, 0xef]));
        assert_eq!(gnu_build_id(&notes[..20]), None);
        assert_eq!(gnu_build_id(&[]), None);
    }

    #[test]
    fn indirect_functions_are_functions_marked_as_such() {
        let b = Binary::parse(&tiny_elf(&["marker", "ifunc:strlen"], &[])).unwrap();
        let strlen = b.function("strlen").unwrap();
        assert!(strlen.ifunc);
        assert_eq!(strlen.address, LOAD_VADDR + TEXT_OFFSET + 16);
        assert!(!b.function("marker").unwrap().ifunc);
    }

    #[test]
    fn not_elf_and_truncated_files_are_errors() {
        assert!(Binary::parse(b"hello").is_err());
        let elf = tiny_elf(&["marker"], &[]);
        for cut in [0, 10, 63, 64, 200, elf.len() - 1] {
            // Errors or a partial read, never a panic.
            let _ = Binary::parse(&elf[..cut]);
        }
    }
}
