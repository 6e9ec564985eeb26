//! `.note.stapsdt`: one ELF note per USDT probe site (systemtap's `sys/sdt.h`).
//!
//! Each note (name `stapsdt`, type 3) holds three addresses (the probe
//! site, the link-time address of `.stapsdt.base`, the semaphore or 0)
//! followed by three NUL-terminated strings: provider, name and argument specs.

use crate::binary::ElfError;

/// One USDT probe site.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UsdtNote {
    pub provider: String,
    pub name: String,
    /// Virtual address of the probe site, adjusted for prelinking.
    pub address: u64,
    /// Virtual address of the probe's semaphore (a `u16` the kernel bumps while the probe is attached), or 0.
    pub semaphore: u64,
    /// The argument specs as written (`-4@%eax 8@-8(%rbp)`).
    pub args: String,
}

const NT_STAPSDT: u32 = 3;

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

/// Parses the bytes of a `.note.stapsdt` section. `stapsdt_base` is the
/// address of the `.stapsdt.base` section, when the file has one.
pub(crate) fn parse_notes(
    data: &[u8],
    stapsdt_base: Option<u64>,
) -> Result<Vec<UsdtNote>, ElfError> {
    let bad = |what: &str| ElfError(format!("malformed .note.stapsdt section: {what}"));
    let mut out = Vec::new();
    let mut at = 0usize;
    while at + 12 <= data.len() {
        let namesz = u32_at(data, at).ok_or_else(|| bad("truncated header"))? as usize;
        let descsz = u32_at(data, at + 4).ok_or_else(|| bad("truncated header"))? as usize;
        let ty = u32_at(data, at + 8).ok_or_else(|| bad("truncated header"))?;
        let name_at = at + 12;
        let desc_at = name_at
            .checked_add(namesz.next_multiple_of(4))
            .ok_or_else(|| bad("note name too long"))?;
        let next = desc_at
            .checked_add(descsz.next_multiple_of(4))
            .ok_or_else(|| bad("note too long"))?;
        let name = data
            .get(name_at..name_at + namesz)
            .ok_or_else(|| bad("truncated note name"))?;
        let desc = data
            .get(desc_at..desc_at + descsz)
            .ok_or_else(|| bad("truncated note"))?;
        at = next;
        if ty != NT_STAPSDT || name.strip_suffix(b"\0").unwrap_or(name) != b"stapsdt" {
            continue;
        }
        let (Some(pc), Some(base), Some(semaphore)) =
            (u64_at(desc, 0), u64_at(desc, 8), u64_at(desc, 16))
        else {
            return Err(bad("note shorter than its three addresses"));
        };
        let mut strings = desc[24..].split(|&b| b == 0);
        let mut text = || -> Result<String, ElfError> {
            let s = strings.next().ok_or_else(|| bad("missing probe strings"))?;
            String::from_utf8(s.to_vec()).map_err(|_| bad("probe strings are not UTF-8"))
        };
        let provider = text()?;
        let name = text()?;
        let args = text().unwrap_or_default();
        // Prelinking moves the file but not the note: shift by how far `.stapsdt.base` moved.
        let address = match stapsdt_base {
            Some(actual) if base != 0 => pc.wrapping_add(actual.wrapping_sub(base)),
            _ => pc,
        };
        out.push(UsdtNote {
            provider,
            name,
            address,
            semaphore,
            args,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn note(pc: u64, base: u64, sema: u64, strings: &[&str]) -> Vec<u8> {
        let mut desc = Vec::new();
        for v in [pc, base, sema] {
            desc.extend_from_slice(&v.to_le_bytes());
        }
        for s in strings {
            desc.extend_from_slice(s.as_bytes());
            desc.push(0);
        }
        let mut n = Vec::new();
        n.extend_from_slice(&8u32.to_le_bytes());
        n.extend_from_slice(&(desc.len() as u32).to_le_bytes());
        n.extend_from_slice(&3u32.to_le_bytes());
        n.extend_from_slice(b"stapsdt\0");
        let len = desc.len();
        n.extend_from_slice(&desc);
        n.resize(n.len() + (len.next_multiple_of(4) - len), 0);
        n
    }

    #[test]
    fn notes_with_base_adjustment() {
        let mut data = note(0x1000, 0x2000, 0, &["weft", "tick", "-4@%eax 8@%rdx"]);
        data.extend(note(0x1100, 0x2000, 0x4010, &["weft", "sema", ""]));
        let notes = parse_notes(&data, Some(0x2100)).unwrap();
        assert_eq!(notes.len(), 2);
        assert_eq!(notes[0].provider, "weft");
        assert_eq!(notes[0].name, "tick");
        assert_eq!(notes[0].address, 0x1100);
        assert_eq!(notes[0].args, "-4@%eax 8@%rdx");
        assert_eq!(notes[1].semaphore, 0x4010);
        assert_eq!(notes[1].args, "");
        let plain = parse_notes(&data, None).unwrap();
        assert_eq!(plain[0].address, 0x1000);
    }

    #[test]
    fn truncated_notes_are_errors() {
        let data = note(0x1000, 0x2000, 0, &["weft", "tick", ""]);
        for cut in 1..data.len() {
            // Never panics; a cut inside a note is an error or skipped.
            let _ = parse_notes(&data[..cut], None);
        }
        assert!(parse_notes(&data[..20], None).is_err());
    }
}
