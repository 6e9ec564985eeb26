//! A tiny, valid x86_64 ELF file made in memory, for tests of uprobe and
//! USDT resolution that must not depend on the binaries of the machine.
//!
//! One `PT_LOAD` segment maps the whole file at [`LOAD_VADDR`], so a
//! symbol's address is its file offset plus [`LOAD_VADDR`]: tests see the
//! address-to-offset translation at work.

/// Virtual address of file offset 0.
pub const LOAD_VADDR: u64 = 0x10000;
/// File offset of the first function; each function is 16 bytes of `ret`
/// (or of the code [`with_code`] puts there).
pub const TEXT_OFFSET: u64 = 0x1000;

/// A USDT probe to put in the file's `.note.stapsdt` (semaphore is an address or 0).
pub struct Probe<'a> {
    pub provider: &'a str,
    pub name: &'a str,
    pub args: &'a str,
    pub semaphore: u64,
}

fn align(v: &mut Vec<u8>, to: usize) {
    v.resize(v.len().next_multiple_of(to), 0);
}

fn push_u16(v: &mut Vec<u8>, x: u16) {
    v.extend_from_slice(&x.to_le_bytes());
}

fn push_u32(v: &mut Vec<u8>, x: u32) {
    v.extend_from_slice(&x.to_le_bytes());
}

fn push_u64(v: &mut Vec<u8>, x: u64) {
    v.extend_from_slice(&x.to_le_bytes());
}

/// An `ET_DYN` file with these functions (in order, at [`TEXT_OFFSET`] + 16·i;
/// a name written `ifunc:NAME` is an indirect function `NAME`, one written
/// `nosize:NAME` a function whose symbol has size 0, as `_init`'s) and USDT
/// probes (the i-th at the start of the i-th function).
pub fn tiny_elf(functions: &[&str], probes: &[Probe<'_>]) -> Vec<u8> {
    tiny_library(functions, probes, &[])
}

/// [`tiny_elf`] that also needs these libraries (`DT_NEEDED` entries in a
/// `.dynamic` section), as a shared library names its dependencies.
pub fn tiny_library(functions: &[&str], probes: &[Probe<'_>], needed: &[&str]) -> Vec<u8> {
    let mut f = vec![0u8; TEXT_OFFSET as usize];
    let text_off = f.len();
    f.resize(text_off + 16 * functions.len().max(1), 0xc3);
    let text_size = f.len() - text_off;

    align(&mut f, 8);
    let note_off = f.len();
    for (i, p) in probes.iter().enumerate() {
        let mut desc = Vec::new();
        push_u64(&mut desc, LOAD_VADDR + TEXT_OFFSET + 16 * i as u64);
        push_u64(&mut desc, 0);
        push_u64(&mut desc, p.semaphore);
        for s in [p.provider, p.name, p.args] {
            desc.extend_from_slice(s.as_bytes());
            desc.push(0);
        }
        push_u32(&mut f, 8);
        push_u32(&mut f, desc.len() as u32);
        push_u32(&mut f, 3);
        f.extend_from_slice(b"stapsdt\0");
        f.extend_from_slice(&desc);
        align(&mut f, 4);
    }
    let note_size = f.len() - note_off;

    let strtab_off = f.len();
    f.push(0);
    let mut name_offsets = Vec::new();
    for name in functions {
        name_offsets.push((f.len() - strtab_off) as u32);
        let name = name.trim_start_matches("ifunc:");
        f.extend_from_slice(name.trim_start_matches("nosize:").as_bytes());
        f.push(0);
    }
    let strtab_size = f.len() - strtab_off;

    align(&mut f, 8);
    let symtab_off = f.len();
    f.extend_from_slice(&[0u8; 24]);
    for (i, off) in name_offsets.iter().enumerate() {
        push_u32(&mut f, *off);
        // STB_GLOBAL with STT_GNU_IFUNC or STT_FUNC
        f.push(if functions[i].starts_with("ifunc:") {
            0x1a
        } else {
            0x12
        });
        f.push(0);
        push_u16(&mut f, 1); // .text
        push_u64(&mut f, LOAD_VADDR + TEXT_OFFSET + 16 * i as u64);
        push_u64(
            &mut f,
            if functions[i].starts_with("nosize:") {
                0
            } else {
                16
            },
        );
    }
    let symtab_size = f.len() - symtab_off;

    let dynstr_off = f.len();
    f.push(0);
    let mut needed_offsets = Vec::new();
    for name in needed {
        needed_offsets.push((f.len() - dynstr_off) as u64);
        f.extend_from_slice(name.as_bytes());
        f.push(0);
    }
    let dynstr_size = f.len() - dynstr_off;
    align(&mut f, 8);
    let dynamic_off = f.len();
    for off in &needed_offsets {
        push_u64(&mut f, 1); // DT_NEEDED
        push_u64(&mut f, *off);
    }
    f.extend_from_slice(&[0u8; 16]); // DT_NULL
    let dynamic_size = f.len() - dynamic_off;

    let shstrtab_off = f.len();
    let names = b"\0.text\0.note.stapsdt\0.symtab\0.strtab\0.shstrtab\0.dynstr\0.dynamic\0";
    f.extend_from_slice(names);
    let name_at = |n: &str| {
        names
            .windows(n.len())
            .position(|w| w == n.as_bytes())
            .unwrap_or(0) as u32
    };
    let file_size = f.len() as u64;

    align(&mut f, 8);
    let shoff = f.len();
    let mut section = |name: u32,
                       ty: u32,
                       flags: u64,
                       off: usize,
                       size: usize,
                       link: u32,
                       info: u32,
                       entsize: u64| {
        push_u32(&mut f, name);
        push_u32(&mut f, ty);
        push_u64(&mut f, flags);
        let addr = if flags & 2 != 0 {
            LOAD_VADDR + off as u64
        } else {
            0
        };
        push_u64(&mut f, addr);
        push_u64(&mut f, off as u64);
        push_u64(&mut f, size as u64);
        push_u32(&mut f, link);
        push_u32(&mut f, info);
        push_u64(&mut f, if entsize == 0 { 1 } else { 8 });
        push_u64(&mut f, entsize);
    };
    section(0, 0, 0, 0, 0, 0, 0, 0);
    section(name_at(".text"), 1, 6, text_off, text_size, 0, 0, 0);
    section(name_at(".note.stapsdt"), 7, 0, note_off, note_size, 0, 0, 0);
    section(name_at(".symtab"), 2, 0, symtab_off, symtab_size, 4, 1, 24);
    section(name_at(".strtab"), 3, 0, strtab_off, strtab_size, 0, 0, 0);
    section(
        name_at(".shstrtab"),
        3,
        0,
        shstrtab_off,
        names.len(),
        0,
        0,
        0,
    );
    if !needed.is_empty() {
        section(name_at(".dynstr"), 3, 2, dynstr_off, dynstr_size, 0, 0, 0);
        section(
            name_at(".dynamic"),
            6,
            2,
            dynamic_off,
            dynamic_size,
            6,
            0,
            16,
        );
    }
    let section_count: u16 = if needed.is_empty() { 6 } else { 8 };

    // ELF header.
    let mut h = Vec::new();
    h.extend_from_slice(b"\x7fELF\x02\x01\x01");
    h.resize(16, 0);
    push_u16(&mut h, 3); // ET_DYN
    push_u16(&mut h, 62); // EM_X86_64
    push_u32(&mut h, 1);
    push_u64(&mut h, 0);
    push_u64(&mut h, 64); // e_phoff
    push_u64(&mut h, shoff as u64);
    push_u32(&mut h, 0);
    push_u16(&mut h, 64);
    push_u16(&mut h, 56);
    push_u16(&mut h, 1);
    push_u16(&mut h, 64);
    push_u16(&mut h, section_count);
    push_u16(&mut h, 5); // e_shstrndx
    // PT_LOAD, R+X, the whole file at LOAD_VADDR.
    push_u32(&mut h, 1);
    push_u32(&mut h, 5);
    push_u64(&mut h, 0);
    push_u64(&mut h, LOAD_VADDR);
    push_u64(&mut h, LOAD_VADDR);
    push_u64(&mut h, file_size);
    push_u64(&mut h, file_size);
    push_u64(&mut h, 0x1000);
    f[..h.len()].copy_from_slice(&h);
    f
}

/// `elf` (made by [`tiny_elf`] or [`tiny_library`]) with the first bytes of
/// its `index`-th function replaced by `code` (machine code, at most its 16
/// bytes; the rest stays `ret`), for tests that decode instructions.
pub fn with_code(mut elf: Vec<u8>, index: usize, code: &[u8]) -> Vec<u8> {
    assert!(code.len() <= 16, "a tiny ELF function has 16 bytes");
    let at = TEXT_OFFSET as usize + 16 * index;
    elf[at..at + code.len()].copy_from_slice(code);
    elf
}
