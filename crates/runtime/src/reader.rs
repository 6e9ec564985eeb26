//! A read-only view of a loaded session's maps and programs that another
//! thread can hold: the exporters (a Prometheus scrape, an OTLP metrics
//! snapshot) read maps at their own pace while the event loop keeps the
//! [`crate::Session`] busy draining the ring buffer.
//!
//! The reader holds its own duplicates of the map and program descriptors,
//! so it needs no borrow of the session; the kernel frees the maps when the
//! last descriptor closes, which is when both the session and every reader
//! are gone (at the latest when weft exits).

use std::os::fd::{AsFd, AsRawFd, OwnedFd};

use abi::{COUNTERS_MAP, CounterIndex, StreamCounter, StreamSpec};
use libbpf_rs::libbpf_sys as sys;

use crate::error::{MapError, SyscallError};
use crate::maps::{FlatEntries, MapInfo, PerCpu};

/// How often and how long one BPF program ran, as the kernel counts it
/// (`bpf_prog_info.run_cnt` and `run_time_ns`). The kernel counts only
/// while run statistics are enabled (`kernel.bpf_stats_enabled`, or a
/// `BPF_ENABLE_STATS` descriptor held open); otherwise both stay 0.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProgramStats {
    /// The program's symbol (see `abi::ProgramSpec::name`).
    pub name: String,
    /// The kernel's id of the program.
    pub id: u32,
    pub run_count: u64,
    pub run_time_ns: u64,
    /// Runs the kernel skipped because the program was already running on
    /// that CPU (`bpf_prog_info.recursion_misses`).
    pub recursion_misses: u64,
}

/// A session's maps and programs, by duplicated descriptors. `Send` and
/// `Sync`: every read is one syscall on a descriptor.
#[derive(Debug)]
pub struct SessionReader {
    /// The maps, their `fd` fields pointing at the descriptors in `_map_fds`.
    maps: Vec<MapInfo>,
    _map_fds: Vec<OwnedFd>,
    programs: Vec<(String, OwnedFd)>,
    ncpus: usize,
}

impl SessionReader {
    /// Duplicates the descriptors of `maps`; `programs` (name, descriptor)
    /// are already the reader's own.
    pub(crate) fn new(
        maps: &[MapInfo],
        programs: Vec<(String, OwnedFd)>,
        ncpus: usize,
    ) -> Result<SessionReader, MapError> {
        let mut owned = Vec::with_capacity(maps.len());
        let mut infos = Vec::with_capacity(maps.len());
        for m in maps {
            // SAFETY: `m.fd` is a map descriptor the session keeps open for this call.
            let borrowed = unsafe { std::os::fd::BorrowedFd::borrow_raw(m.fd) };
            let fd = borrowed
                .try_clone_to_owned()
                .map_err(|e| MapError::Syscall {
                    map: m.name.clone(),
                    source: SyscallError::new("fcntl(F_DUPFD_CLOEXEC)", e),
                })?;
            let mut info = m.clone();
            info.fd = fd.as_raw_fd();
            infos.push(info);
            owned.push(fd);
        }
        Ok(SessionReader {
            maps: infos,
            _map_fds: owned,
            programs,
            ncpus,
        })
    }

    fn map(&self, bpf_name: &str) -> Result<&MapInfo, MapError> {
        self.maps
            .iter()
            .find(|m| m.name == bpf_name)
            .ok_or_else(|| MapError::NotFound(bpf_name.to_string()))
    }

    /// Every entry of the map of kernel name `bpf_name`, merged over CPUs,
    /// as [`crate::Session::map_entries_merged`] (batch lookups).
    pub fn map_entries_merged(
        &self,
        bpf_name: &str,
        merged_size: impl FnOnce(usize) -> usize,
        mut merge: impl FnMut(PerCpu<'_>, &mut [u8]) -> bool,
    ) -> Result<FlatEntries, MapError> {
        let m = self.map(bpf_name)?;
        m.entries_flat(self.ncpus, merged_size(m.value_size as usize), &mut merge)
    }

    /// The number of keys in a map (batch lookups, values not merged).
    pub fn map_len(&self, bpf_name: &str) -> Result<usize, MapError> {
        let m = self.map(bpf_name)?;
        Ok(m.entries_flat(self.ncpus, 0, &mut |_, _| true)?.len())
    }

    /// The capacity of a map (`max_entries`), as loaded.
    pub fn map_capacity(&self, bpf_name: &str) -> Result<u32, MapError> {
        Ok(self.map(bpf_name)?.max_entries)
    }

    /// The loss counters, as [`crate::Session::counters`].
    pub fn counters(&self) -> Result<[u64; CounterIndex::COUNT as usize], MapError> {
        let mut out = [0u64; CounterIndex::COUNT as usize];
        self.map(COUNTERS_MAP)?
            .sum_u64_slots(self.ncpus, &mut out)?;
        Ok(out)
    }

    /// A stream's counters, as [`crate::Session::stream_counters`].
    pub fn stream_counters(
        &self,
        spec: &StreamSpec,
    ) -> Result<[u64; StreamCounter::COUNT as usize], MapError> {
        let mut out = [0u64; StreamCounter::COUNT as usize];
        self.map(&spec.counters_map)?
            .sum_u64_slots(self.ncpus, &mut out)?;
        Ok(out)
    }

    /// The addresses of stack `id` in the stack-trace map `map`, as
    /// [`crate::Session::stack_addresses`].
    pub fn stack_addresses(&self, map: &str, id: u32) -> Result<Vec<u64>, MapError> {
        let info = self.map(map)?;
        let Some(values) = info.lookup(&id.to_le_bytes(), self.ncpus)? else {
            return Ok(Vec::new());
        };
        let bytes = values.into_iter().next().unwrap_or_default();
        Ok(bytes
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
            .take_while(|&a| a != 0)
            .collect())
    }

    /// Run count and run time of every program (see [`ProgramStats`]).
    pub fn program_stats(&self) -> Result<Vec<ProgramStats>, MapError> {
        self.programs
            .iter()
            .map(|(name, fd)| program_stats(name, fd.as_fd().as_raw_fd()))
            .collect()
    }
}

/// The run statistics of the program `name` behind `fd`.
pub(crate) fn program_stats(name: &str, fd: i32) -> Result<ProgramStats, MapError> {
    program_info(fd)
        .map(|info| ProgramStats {
            name: name.to_string(),
            id: info.id,
            run_count: info.run_cnt,
            run_time_ns: info.run_time_ns,
            recursion_misses: info.recursion_misses,
        })
        .map_err(|source| MapError::Syscall {
            map: name.to_string(),
            source,
        })
}

/// `bpf_prog_get_info_by_fd`.
fn program_info(fd: i32) -> Result<sys::bpf_prog_info, SyscallError> {
    // SAFETY: all-zero is a valid bpf_prog_info to be filled.
    let mut info: sys::bpf_prog_info = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<sys::bpf_prog_info>() as u32;
    // SAFETY: `info` is writable for `len` bytes; `fd` is a program descriptor we hold.
    let r = unsafe { sys::bpf_prog_get_info_by_fd(fd, &mut info, &mut len) };
    if r < 0 {
        return Err(SyscallError::from_neg("bpf_prog_get_info_by_fd", r as i64));
    }
    Ok(info)
}
