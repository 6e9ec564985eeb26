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
        let ks = self.key_size as usize;
        let vlen = self.value_buf_len(ncpus);
        let chunk = self.max_entries.clamp(1, 4096);
        let mut keys = vec![0u8; ks * chunk as usize];
        let mut values = vec![0u8; vlen * chunk as usize];
        let token_len = ks.max(8);
        let mut in_batch: Option<Vec<u8>> = None;
        let mut out_batch = vec![0u8; token_len];
        let mut out = Vec::new();
        loop {
            let mut count = chunk;
            let in_ptr = in_batch
                .as_mut()
                .map_or(ptr::null_mut(), |b| b.as_mut_ptr().cast::<c_void>());
            // SAFETY: buffers are sized for `chunk` keys/values and one batch token.
            let r = unsafe {
                sys::bpf_map_lookup_batch(
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
                    return Ok(None);
                }
                return Err(self.err("bpf_map_lookup_batch", r));
            }
            for i in 0..count as usize {
                out.push((
                    keys[i * ks..(i + 1) * ks].to_vec(),
                    self.split_values(&values[i * vlen..(i + 1) * vlen], ncpus),
                ));
            }
            if done {
                return Ok(Some(out));
            }
            in_batch = Some(out_batch.clone());
        }
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
