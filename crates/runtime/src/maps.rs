//! Reading and writing the object's maps by fd (libbpf's low-level map calls,
//! which return `-errno`).

use std::ffi::c_void;
use std::os::fd::RawFd;
use std::ptr;

use libbpf_rs::MapType;
use libbpf_rs::libbpf_sys as sys;

use crate::error::{MapError, SyscallError};

/// One map of the loaded object.
#[derive(Debug, Clone)]
pub(crate) struct MapInfo {
    pub(crate) name: String,
    pub(crate) fd: RawFd,
    pub(crate) map_type: MapType,
    pub(crate) key_size: u32,
    pub(crate) value_size: u32,
    pub(crate) max_entries: u32,
}

/// `(key, values)`: one value per possible CPU for per-CPU maps, one otherwise.
pub type MapEntry = (Vec<u8>, Vec<Vec<u8>>);

const ENOTSUPP: i32 = 524;

/// The values of one entry as the kernel returns them: one per possible CPU
/// for per-CPU maps (each padded to 8 bytes), one otherwise.
#[derive(Clone, Copy, Debug)]
pub struct PerCpu<'a> {
    buf: &'a [u8],
    stride: usize,
    value_size: usize,
}

impl<'a> PerCpu<'a> {
    /// One value buffer per CPU, each `value_size` bytes.
    pub fn iter(&self) -> impl Iterator<Item = &'a [u8]> + Clone + use<'a> {
        let size = self.value_size;
        self.buf
            .chunks_exact(self.stride.max(1))
            .map(move |c| &c[..size.min(c.len())])
    }
}

/// A batch read that leaves the map as it is, or one that empties it.
#[derive(Clone, Copy)]
enum Batch {
    Lookup,
    LookupAndDelete,
}

/// Every entry of a map in two flat buffers, in the kernel's iteration
/// order: `len()` keys of `key_size()` bytes, and as many values of
/// `value_size()` bytes, each merged over CPUs while reading (see
/// [`crate::Session::map_entries_merged`]).
#[derive(Debug, Default)]
pub struct FlatEntries {
    key_size: usize,
    value_size: usize,
    keys: Vec<u8>,
    values: Vec<u8>,
}

impl FlatEntries {
    pub fn len(&self) -> usize {
        self.keys.len().checked_div(self.key_size).unwrap_or(0)
    }

    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    pub fn key_size(&self) -> usize {
        self.key_size
    }

    pub fn value_size(&self) -> usize {
        self.value_size
    }

    /// Every key, back to back.
    pub fn keys(&self) -> &[u8] {
        &self.keys
    }

    /// Every merged value, back to back.
    pub fn values(&self) -> &[u8] {
        &self.values
    }

    /// Appends one entry unless `merge` (filling the merged value from the
    /// per-CPU values) says to drop it.
    fn push(
        &mut self,
        key: &[u8],
        per_cpu: PerCpu<'_>,
        merge: &mut dyn FnMut(PerCpu<'_>, &mut [u8]) -> bool,
    ) {
        let at = self.values.len();
        self.values.resize(at + self.value_size, 0);
        if merge(per_cpu, &mut self.values[at..]) {
            self.keys.extend_from_slice(key);
        } else {
            self.values.truncate(at);
        }
    }
}

impl MapInfo {
    fn err(&self, call: &'static str, ret: i32) -> MapError {
        MapError::Syscall {
            map: self.name.clone(),
            source: SyscallError::from_neg(call, ret as i64),
        }
    }

    pub(crate) fn is_array(&self) -> bool {
        matches!(
            self.map_type,
            MapType::Array | MapType::PercpuArray | MapType::CgroupArray | MapType::PerfEventArray
        )
    }

    fn cpus(&self, ncpus: usize) -> usize {
        if self.map_type.is_percpu() { ncpus } else { 1 }
    }

    /// Bytes of one lookup result: per-CPU values are padded to 8 bytes each.
    fn stride(&self) -> usize {
        if self.map_type.is_percpu() {
            (self.value_size as usize).next_multiple_of(8)
        } else {
            self.value_size as usize
        }
    }

    fn value_buf_len(&self, ncpus: usize) -> usize {
        self.stride() * self.cpus(ncpus)
    }

    fn split_values(&self, buf: &[u8], ncpus: usize) -> Vec<Vec<u8>> {
        let stride = self.stride();
        (0..self.cpus(ncpus))
            .map(|c| buf[c * stride..c * stride + self.value_size as usize].to_vec())
            .collect()
    }

    /// Looks up one key; `None` if absent.
    pub(crate) fn lookup(
        &self,
        key: &[u8],
        ncpus: usize,
    ) -> Result<Option<Vec<Vec<u8>>>, MapError> {
        let mut buf = vec![0u8; self.value_buf_len(ncpus)];
        // SAFETY: key has key_size bytes (checked), buf is sized for the map's values.
        assert_eq!(key.len(), self.key_size as usize, "key size");
        let r = unsafe {
            sys::bpf_map_lookup_elem(self.fd, key.as_ptr().cast(), buf.as_mut_ptr().cast())
        };
        match r {
            0 => Ok(Some(self.split_values(&buf, ncpus))),
            r if -r == libc::ENOENT => Ok(None),
            r => Err(self.err("bpf_map_lookup_elem", r)),
        }
    }

    /// All keys, by `BPF_MAP_GET_NEXT_KEY`.
    pub(crate) fn keys(&self) -> Result<Vec<Vec<u8>>, MapError> {
        let ks = self.key_size as usize;
        let mut keys: Vec<Vec<u8>> = Vec::new();
        let mut next = vec![0u8; ks];
        loop {
            let prev = keys
                .last()
                .map_or(ptr::null(), |k| k.as_ptr().cast::<c_void>());
            // SAFETY: prev is NULL or a key_size buffer; next is key_size bytes.
            let r = unsafe { sys::bpf_map_get_next_key(self.fd, prev, next.as_mut_ptr().cast()) };
            match r {
                0 => keys.push(next.clone()),
                r if -r == libc::ENOENT => return Ok(keys),
                r => return Err(self.err("bpf_map_get_next_key", r)),
            }
        }
    }

    /// Every entry: batch lookup when the kernel supports it for this map,
    /// else key by key.
    pub(crate) fn entries(&self, ncpus: usize) -> Result<Vec<MapEntry>, MapError> {
        match self.entries_batch(ncpus)? {
            Some(v) => Ok(v),
            None => {
                let mut out = Vec::new();
                for key in self.keys()? {
                    if let Some(values) = self.lookup(&key, ncpus)? {
                        out.push((key, values));
                    }
                }
                Ok(out)
            }
        }
    }

    /// `None` when batch lookup is not supported for this map type.
    fn entries_batch(&self, ncpus: usize) -> Result<Option<Vec<MapEntry>>, MapError> {
        let mut out = Vec::new();
        let supported = self.each_batched(ncpus, Batch::Lookup, &mut |key, values| {
            out.push((key.to_vec(), self.split_values(values, ncpus)));
        })?;
        Ok(supported.then_some(out))
    }

    /// Walks the map with batch lookups (deleting what was read with
    /// [`Batch::LookupAndDelete`]), handing each key and its value buffer
    /// (all CPUs) to `f`; `false` when batch lookup is not supported for
    /// this map type.
    fn each_batched(
        &self,
        ncpus: usize,
        batch: Batch,
        f: &mut dyn FnMut(&[u8], &[u8]),
    ) -> Result<bool, MapError> {
        let ks = self.key_size as usize;
        let vlen = self.value_buf_len(ncpus);
        let chunk = self.max_entries.clamp(1, 4096);
        let mut keys = vec![0u8; ks * chunk as usize];
        let mut values = vec![0u8; vlen * chunk as usize];
        let token_len = ks.max(8);
        let mut in_batch: Option<Vec<u8>> = None;
        let mut out_batch = vec![0u8; token_len];
        loop {
            let mut count = chunk;
            let in_ptr = in_batch
                .as_mut()
                .map_or(ptr::null_mut(), |b| b.as_mut_ptr().cast::<c_void>());
            let call = match batch {
                Batch::Lookup => sys::bpf_map_lookup_batch,
                Batch::LookupAndDelete => sys::bpf_map_lookup_and_delete_batch,
            };
            // SAFETY: buffers are sized for `chunk` keys/values and one batch token.
            let r = unsafe {
                call(
                    self.fd,
                    in_ptr,
                    out_batch.as_mut_ptr().cast(),
                    keys.as_mut_ptr().cast(),
                    values.as_mut_ptr().cast(),
                    &mut count,
                    ptr::null(),
                )
            };
            let done = r < 0 && -r == libc::ENOENT;
            if r < 0 && !done {
                let e = -r;
                if in_batch.is_none()
                    && (e == libc::EINVAL || e == ENOTSUPP || e == libc::EOPNOTSUPP)
                {
                    return Ok(false);
                }
                return Err(self.err(
                    match batch {
                        Batch::Lookup => "bpf_map_lookup_batch",
                        Batch::LookupAndDelete => "bpf_map_lookup_and_delete_batch",
                    },
                    r,
                ));
            }
            for i in 0..(count.min(chunk)) as usize {
                f(
                    &keys[i * ks..(i + 1) * ks],
                    &values[i * vlen..(i + 1) * vlen],
                );
            }
            if done {
                return Ok(true);
            }
            match in_batch.as_mut() {
                Some(b) => b.copy_from_slice(&out_batch),
                None => in_batch = Some(out_batch.clone()),
            }
        }
    }

    fn per_cpu<'b>(&self, buf: &'b [u8]) -> PerCpu<'b> {
        PerCpu {
            buf,
            stride: self.stride(),
            value_size: self.value_size as usize,
        }
    }

    /// No entries yet, laid out for this map's keys and `merged_size`-byte
    /// merged values.
    fn empty_flat(&self, merged_size: usize) -> FlatEntries {
        FlatEntries {
            key_size: self.key_size as usize,
            value_size: merged_size,
            ..FlatEntries::default()
        }
    }

    /// Every entry into flat buffers, values merged by `merge` into
    /// `merged_size` bytes each: batch lookup when the kernel supports it
    /// for this map, else key by key.
    pub(crate) fn entries_flat(
        &self,
        ncpus: usize,
        merged_size: usize,
        merge: &mut dyn FnMut(PerCpu<'_>, &mut [u8]) -> bool,
    ) -> Result<FlatEntries, MapError> {
        let mut out = self.empty_flat(merged_size);
        if self.entries_batch_flat(ncpus, &mut out, merge)? {
            return Ok(out);
        }
        // Key by key, each key looked up as soon as it is found.
        let ks = self.key_size as usize;
        let mut prev: Option<Vec<u8>> = None;
        let mut next = vec![0u8; ks];
        let mut buf = vec![0u8; self.value_buf_len(ncpus)];
        loop {
            let prev_ptr = prev
                .as_ref()
                .map_or(ptr::null(), |k| k.as_ptr().cast::<c_void>());
            // SAFETY: prev is NULL or a key_size buffer; next is key_size bytes.
            let r =
                unsafe { sys::bpf_map_get_next_key(self.fd, prev_ptr, next.as_mut_ptr().cast()) };
            match r {
                0 => {}
                r if -r == libc::ENOENT => return Ok(out),
                r => return Err(self.err("bpf_map_get_next_key", r)),
            }
            // SAFETY: next is key_size bytes, buf is sized for the map's values.
            let r = unsafe {
                sys::bpf_map_lookup_elem(self.fd, next.as_ptr().cast(), buf.as_mut_ptr().cast())
            };
            match r {
                0 => out.push(&next, self.per_cpu(&buf), merge),
                r if -r == libc::ENOENT => {}
                r => return Err(self.err("bpf_map_lookup_elem", r)),
            }
            let key = prev.get_or_insert_with(|| vec![0u8; ks]);
            key.copy_from_slice(&next);
        }
    }

    /// Every entry into flat buffers as [`MapInfo::entries_flat`], each
    /// deleted as it is read in one step (`BPF_MAP_LOOKUP_AND_DELETE_BATCH`
    /// holds the bucket's lock), so an update racing the read lands either
    /// in what is returned or in the map afterwards, never in neither.
    pub(crate) fn take_flat(
        &self,
        ncpus: usize,
        merged_size: usize,
        merge: &mut dyn FnMut(PerCpu<'_>, &mut [u8]) -> bool,
    ) -> Result<FlatEntries, MapError> {
        let mut out = self.empty_flat(merged_size);
        let supported = self.each_batched(ncpus, Batch::LookupAndDelete, &mut |key, values| {
            out.push(key, self.per_cpu(values), merge)
        })?;
        if !supported {
            return Err(self.err("bpf_map_lookup_and_delete_batch", -libc::EOPNOTSUPP));
        }
        Ok(out)
    }

    /// Batch lookups into `out`; `false` when batch lookup is not supported
    /// for this map type.
    fn entries_batch_flat(
        &self,
        ncpus: usize,
        out: &mut FlatEntries,
        merge: &mut dyn FnMut(PerCpu<'_>, &mut [u8]) -> bool,
    ) -> Result<bool, MapError> {
        self.each_batched(ncpus, Batch::Lookup, &mut |key, values| {
            out.push(key, self.per_cpu(values), merge)
        })
    }

    fn update(&self, key: &[u8], value: &[u8], flags: u64) -> Result<(), MapError> {
        // SAFETY: key and value are sized for this map.
        let r = unsafe {
            sys::bpf_map_update_elem(self.fd, key.as_ptr().cast(), value.as_ptr().cast(), flags)
        };
        if r < 0 {
            // A key deleted meanwhile is fine for zeroing.
            if -r == libc::ENOENT && flags == sys::BPF_EXIST as u64 {
                return Ok(());
            }
            return Err(self.err("bpf_map_update_elem", r));
        }
        Ok(())
    }

    /// Writes `value` (one CPU's worth, padded with zeros; replicated to every CPU
    /// for per-CPU maps) under `key`.
    pub(crate) fn write(&self, key: &[u8], value: &[u8], ncpus: usize) -> Result<(), MapError> {
        let stride = self.stride();
        let mut buf = vec![0u8; self.value_buf_len(ncpus)];
        for c in 0..self.cpus(ncpus) {
            let n = value.len().min(self.value_size as usize);
            buf[c * stride..c * stride + n].copy_from_slice(&value[..n]);
        }
        self.update(key, &buf, sys::BPF_ANY as u64)
    }

    /// Sets every existing value to zero bytes, keeping the keys.
    pub(crate) fn zero(&self, ncpus: usize) -> Result<(), MapError> {
        let zeros = vec![0u8; self.value_buf_len(ncpus)];
        let flags = if self.is_array() {
            sys::BPF_ANY
        } else {
            sys::BPF_EXIST
        };
        for key in self.keys()? {
            self.update(&key, &zeros, flags as u64)?;
        }
        Ok(())
    }

    /// Sums over CPUs the `u64` of each slot `0..out.len()` of a per-CPU
    /// array (loss and stream counters) into `out`; a missing slot stays 0.
    pub(crate) fn sum_u64_slots(&self, ncpus: usize, out: &mut [u64]) -> Result<(), MapError> {
        for (i, slot) in out.iter_mut().enumerate() {
            let mut key = vec![0u8; self.key_size as usize];
            let idx = (i as u32).to_le_bytes();
            let n = key.len().min(4);
            key[..n].copy_from_slice(&idx[..n]);
            if let Some(values) = self.lookup(&key, ncpus)? {
                *slot = values.iter().fold(0u64, |sum, v| {
                    let mut b = [0u8; 8];
                    let n = v.len().min(8);
                    b[..n].copy_from_slice(&v[..n]);
                    sum.wrapping_add(u64::from_le_bytes(b))
                });
            }
        }
        Ok(())
    }

    /// Deletes one key; `Ok(false)` when it was not there.
    pub(crate) fn delete(&self, key: &[u8]) -> Result<bool, MapError> {
        if key.len() != self.key_size as usize {
            return Err(self.err("bpf_map_delete_elem", -libc::EINVAL));
        }
        // SAFETY: key is key_size bytes (checked above).
        let r = unsafe { sys::bpf_map_delete_elem(self.fd, key.as_ptr().cast()) };
        match r {
            0 => Ok(true),
            r if -r == libc::ENOENT => Ok(false),
            r => Err(self.err("bpf_map_delete_elem", r)),
        }
    }

    /// Deletes every key (arrays cannot lose keys: they are zeroed instead).
    pub(crate) fn clear(&self, ncpus: usize) -> Result<(), MapError> {
        if self.is_array() {
            return self.zero(ncpus);
        }
        for key in self.keys()? {
            // SAFETY: key is key_size bytes.
            let r = unsafe { sys::bpf_map_delete_elem(self.fd, key.as_ptr().cast()) };
            if r < 0 && -r != libc::ENOENT {
                return Err(self.err("bpf_map_delete_elem", r));
            }
        }
        Ok(())
    }
}
