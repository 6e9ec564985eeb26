//! The pcap files `skboutput()` writes, as bpftrace writes them through
//! libpcap (`pcap_open_dead(DLT_RAW, 65535)`): the classic format with
//! microsecond times, link type raw IP (`LINKTYPE_RAW`, 101), snap length
//! 65535, and each packet's captured and original lengths both the bytes
//! written. A packet's time is when the probe saw it (the boot clock the
//! record carries) as wall-clock time. Every file is created when the run
//! starts, as bpftrace does, so a run that sees no packet leaves an empty
//! capture; one path named by several calls is one file.

use std::fs::File;
use std::io::{self, BufWriter, Write};

/// `LINKTYPE_RAW`: each packet begins with its IPv4 or IPv6 header.
const LINKTYPE_RAW: u32 = 101;
const SNAPLEN: u32 = 65535;

/// The files of a run's `skboutput()` calls.
pub struct PcapFiles {
    /// One per distinct path.
    files: Vec<(String, BufWriter<File>)>,
    /// For each call site (`abi::Manifest::skb_outputs`): its file and offset.
    sites: Vec<(usize, u64)>,
    /// Wall-clock minus boot-clock time, in ns: a boot-clock time as wall-clock time.
    boot_to_wall: i128,
}

impl PcapFiles {
    /// Creates (truncates) each file and writes its header.
    pub fn create(sites: &[abi::SkbOutputSite]) -> Result<PcapFiles, (String, io::Error)> {
        let mut files: Vec<(String, BufWriter<File>)> = Vec::new();
        let mut at = Vec::new();
        for site in sites {
            let index = match files.iter().position(|(p, _)| *p == site.path) {
                Some(i) => i,
                None => {
                    let fail = |e| (site.path.clone(), e);
                    let mut w = BufWriter::new(File::create(&site.path).map_err(fail)?);
                    w.write_all(&header()).map_err(fail)?;
                    w.flush().map_err(fail)?;
                    files.push((site.path.clone(), w));
                    files.len() - 1
                }
            };
            at.push((index, site.offset));
        }
        Ok(PcapFiles {
            files,
            sites: at,
            boot_to_wall: boot_to_wall(),
        })
    }

    /// Writes one `EventKind::SkbOutput` record's packet (after the call's
    /// offset) to its file; a packet no longer than the offset is left out,
    /// as bpftrace leaves it out.
    pub fn write(
        &mut self,
        site: usize,
        boot_ns: u64,
        packet: &[u8],
    ) -> Result<(), (String, io::Error)> {
        let Some(&(file, offset)) = self.sites.get(site) else {
            return Ok(());
        };
        let Some(data) = usize::try_from(offset).ok().and_then(|o| packet.get(o..)) else {
            return Ok(());
        };
        if data.is_empty() {
            return Ok(());
        }
        let wall = (i128::from(boot_ns) + self.boot_to_wall).max(0) as u128;
        let (path, w) = &mut self.files[file];
        let fail = |e| (path.clone(), e);
        let len = data.len() as u32;
        let mut rec = Vec::with_capacity(16 + data.len());
        rec.extend_from_slice(&((wall / 1_000_000_000) as u32).to_le_bytes());
        rec.extend_from_slice(&((wall % 1_000_000_000 / 1_000) as u32).to_le_bytes());
        rec.extend_from_slice(&len.to_le_bytes());
        rec.extend_from_slice(&len.to_le_bytes());
        rec.extend_from_slice(data);
        w.write_all(&rec).map_err(fail)?;
        // Readers (`tcpdump -r`) see each packet as it comes.
        w.flush().map_err(fail)
    }
}

/// The file header: magic, version 2.4, zone 0, accuracy 0, snap length, link type.
fn header() -> [u8; 24] {
    let mut h = [0u8; 24];
    h[0..4].copy_from_slice(&0xa1b2_c3d4u32.to_le_bytes());
    h[4..6].copy_from_slice(&2u16.to_le_bytes());
    h[6..8].copy_from_slice(&4u16.to_le_bytes());
    h[16..20].copy_from_slice(&SNAPLEN.to_le_bytes());
    h[20..24].copy_from_slice(&LINKTYPE_RAW.to_le_bytes());
    h
}

/// CLOCK_REALTIME minus CLOCK_BOOTTIME, now.
fn boot_to_wall() -> i128 {
    runtime::clock::realtime_minus_boottime_ns()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_and_records_are_libpcap_s() {
        let dir = std::env::temp_dir().join(format!("weft-pcap-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("a.pcap").display().to_string();
        let sites = [
            abi::SkbOutputSite {
                path: path.clone(),
                offset: 2,
            },
            abi::SkbOutputSite {
                path: path.clone(),
                offset: 0,
            },
        ];
        let mut files = PcapFiles::create(&sites).unwrap();
        files.boot_to_wall = 1_000_000_000;
        files.write(0, 2_500_000_123, b"\xaa\xbbIP").unwrap();
        files.write(1, 0, b"x").unwrap();
        // No bytes past the offset: nothing written.
        files.write(0, 0, b"\xaa\xbb").unwrap();
        drop(files);
        let bytes = std::fs::read(&path).unwrap();
        let mut want = vec![
            0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0, 101, 0,
            0, 0,
        ];
        // 3.500000123 s: 3 s and 500000 µs; 2 bytes.
        want.extend_from_slice(&[3, 0, 0, 0, 0x20, 0xa1, 0x07, 0, 2, 0, 0, 0, 2, 0, 0, 0]);
        want.extend_from_slice(b"IP");
        want.extend_from_slice(&[1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0]);
        want.extend_from_slice(b"x");
        assert_eq!(bytes, want);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
