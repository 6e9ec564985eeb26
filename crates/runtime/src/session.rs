//! The life of one loaded script: load, initialise, run BEGIN, attach,
//! stream events, read maps, detach, run END, unload.

use std::ffi::CString;
use std::io;
use std::ops::ControlFlow;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::ptr::NonNull;
use std::time::Duration;

use abi::{
    Attach, COUNTERS_MAP, CounterIndex, EVENTS_MAP, GLOBALS_MAP, Manifest, ProgramSpec, ZERO_MAP,
};
use libbpf_rs::libbpf_sys;
use libbpf_rs::{AsRawLibbpf, Link, MapCore, MapType, Object, OpenObject, Program};

use crate::attach;
use crate::attach::iter::IteratorRun;
use crate::error::{AttachError, LoadError, MapError, RuntimeError, SyscallError};
use crate::libbpf_log::{Capture, failing_insn, parse_load_failure};
use crate::maps::{FlatEntries, MapEntry, MapInfo, PerCpu};
use crate::reader::SessionReader;
use crate::ringbuf::RingConsumer;
use crate::sys;

/// How to load an object.
#[derive(Debug, Clone, Default)]
pub struct LoadOptions {
    /// libbpf's name for the object (default `weft`).
    pub object_name: Option<String>,
    /// Size in bytes of [`EVENTS_MAP`] (a power of two, multiple of the page size),
    /// overriding the manifest's `ringbuf_size` and the ELF's `max_entries`.
    pub ringbuf_size: Option<u32>,
}

/// A loaded script. Dropping it detaches every probe and unloads every
/// program and map.
/// One timed `bench:` run: the kernel's mean time per repetition and what
/// the program returned (not 0: the benchmark asks to be skipped).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BenchRun {
    pub mean_ns: u64,
    pub retval: u32,
}

pub struct Session {
    // Field order is drop order: links first, then the ring mapping, then the object.
    links: Vec<Link>,
    /// Which of `links` are BPF iterators, with their probe names: they run
    /// when [`Session::run_iterators`] reads them.
    iterators: Vec<(usize, String)>,
    ring: Option<RingConsumer>,
    /// `skboutput()`'s perf buffers, in scripts that call it.
    skb: Option<crate::skb_perf::SkbPerf>,
    epoll: OwnedFd,
    maps: Vec<MapInfo>,
    manifest: Manifest,
    ncpus: usize,
    start_ns: u64,
    attached: bool,
    skipped: Vec<AttachError>,
    /// `BPF_ENABLE_STATS`: the kernel counts run time while it is open.
    stats: Option<OwnedFd>,
    object: Object,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("programs", &self.manifest.programs.len())
            .field("maps", &self.maps.len())
            .field("probes_attached", &self.links.len())
            .finish()
    }
}

/// Opens `elf`; `log_buf` is where the verifier's log goes when a program
/// fails to load (bpftrace's `log_size`: libbpf does not grow it), else
/// libbpf's own buffer, as large as the log needs.
fn open_object(
    elf: &[u8],
    opts: &LoadOptions,
    log_buf: Option<&mut [u8]>,
    capture: &Capture,
) -> Result<OpenObject, LoadError> {
    let name = CString::new(opts.object_name.as_deref().unwrap_or("weft"))
        .unwrap_or_else(|_| CString::from(c"weft"));
    let mut open_opts = libbpf_sys::bpf_object_open_opts {
        sz: std::mem::size_of::<libbpf_sys::bpf_object_open_opts>() as libbpf_sys::size_t,
        object_name: name.as_ptr(),
        ..Default::default()
    };
    if let Some(buf) = log_buf {
        open_opts.kernel_log_buf = buf.as_mut_ptr().cast();
        open_opts.kernel_log_size = buf.len() as libbpf_sys::size_t;
    }
    // SAFETY: `elf` outlives the call (libbpf copies it); `open_opts` is valid.
    let ptr = unsafe {
        libbpf_sys::bpf_object__open_mem(elf.as_ptr().cast(), elf.len() as _, &open_opts)
    };
    // SAFETY: any libbpf pointer may be passed to libbpf_get_error.
    let err = unsafe { libbpf_sys::libbpf_get_error(ptr as *const _) };
    match NonNull::new(ptr) {
        Some(ptr) if err == 0 => {
            // SAFETY: a freshly opened, not yet loaded object that we now own.
            Ok(unsafe { OpenObject::from_ptr(ptr) })
        }
        _ => Err(LoadError::Open {
            source: SyscallError::from_neg(
                "bpf_object__open_mem",
                if err != 0 {
                    err
                } else {
                    -(libc::EINVAL as i64)
                },
            ),
            log: capture.take(),
        }),
    }
}

/// libbpf's warnings with the verifier log from `buf` put where libbpf
/// prints a log of its own, after the failing program's line.
fn with_custom_log(mut text: String, buf: &[u8]) -> String {
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    let log = String::from_utf8_lossy(&buf[..end]);
    if log.is_empty() {
        return text;
    }
    if let Some(f) = crate::libbpf_log::parse_load_failure(&text) {
        text.push_str(&format!(
            "prog '{}': -- BEGIN PROG LOAD LOG --\n{log}-- END PROG LOAD LOG --\n",
            f.program
        ));
    }
    text
}

fn load_error(ret: i32, log: String) -> RuntimeError {
    let source = SyscallError::from_neg("bpf_object__load", ret as i64);
    let failure = parse_load_failure(&log);
    if source.errno() == Some(libc::EPERM) {
        return LoadError::Permission {
            program: failure.map(|f| f.program).unwrap_or_default(),
            source,
            log,
        }
        .into();
    }
    match failure {
        Some(f) if f.log.as_deref().is_some_and(|l| !l.trim().is_empty()) => {
            let vlog = f.log.unwrap_or_default();
            RuntimeError::Verifier {
                program: f.program,
                insn: failing_insn(&vlog),
                log: vlog,
            }
        }
        f => LoadError::Load {
            program: f.map(|f| f.program),
            source,
            log,
        }
        .into(),
    }
}

impl Session {
    /// Opens `elf` from memory, loads it (programs through the verifier), writes
    /// the globals and sets up the ring-buffer consumer. Nothing runs or is
    /// attached yet.
    pub fn load(
        elf: &[u8],
        manifest: &Manifest,
        opts: &LoadOptions,
    ) -> Result<Session, RuntimeError> {
        let capture = Capture::start();
        // A verifier log of the size the config asks, read back on failure.
        let mut log_buf = manifest
            .settings
            .log_size
            .map(|n| vec![0u8; n.max(1) as usize]);
        let mut open = open_object(elf, opts, log_buf.as_deref_mut(), &capture)?;

        let prog_names: Vec<String> = open
            .progs()
            .map(|p| p.name().to_string_lossy().into_owned())
            .collect();
        if let Some(p) = manifest
            .programs
            .iter()
            .find(|p| !prog_names.contains(&p.name))
        {
            return Err(LoadError::MissingProgram(p.name.clone()).into());
        }
        let map_names: Vec<String> = open
            .maps()
            .map(|m| m.name().to_string_lossy().into_owned())
            .collect();
        if let Some(m) = manifest
            .maps
            .iter()
            .find(|m| !map_names.contains(&m.bpf_name))
        {
            return Err(LoadError::MissingMap(m.bpf_name.clone()).into());
        }
        let ringbuf_size = opts
            .ringbuf_size
            .or((manifest.ringbuf_size != 0).then_some(manifest.ringbuf_size));
        if let Some(size) = ringbuf_size {
            for mut m in open.maps_mut() {
                if m.name() == EVENTS_MAP {
                    m.set_max_entries(size).map_err(|e| LoadError::Load {
                        program: None,
                        source: SyscallError::new(
                            "bpf_map__set_max_entries",
                            io::Error::other(e.to_string()),
                        ),
                        log: String::new(),
                    })?;
                }
            }
        }

        // SAFETY: `open` is a valid opened object.
        let ret = unsafe { libbpf_sys::bpf_object__load(open.as_libbpf_object().as_ptr()) };
        if ret < 0 {
            let mut log = capture.take();
            drop(open);
            if let Some(buf) = &log_buf {
                // libbpf leaves a log in a buffer of ours where it found it:
                // put it where libbpf prints its own.
                log = with_custom_log(log, buf);
            }
            return Err(load_error(ret, log));
        }
        // SAFETY: the object loaded successfully; ownership moves to `Object`.
        let object = unsafe { Object::from_ptr(open.take_ptr()) };
        drop(capture);

        let maps: Vec<MapInfo> = object
            .maps()
            .map(|m| MapInfo {
                name: m.name().to_string_lossy().into_owned(),
                fd: m.as_fd().as_raw_fd(),
                map_type: m.map_type(),
                key_size: m.key_size(),
                value_size: m.value_size(),
                max_entries: m.max_entries(),
            })
            .collect();
        let ncpus = libbpf_rs::num_possible_cpus().map_err(|e| LoadError::Load {
            program: None,
            source: SyscallError::new(
                "read /sys/devices/system/cpu/possible",
                io::Error::other(e.to_string()),
            ),
            log: String::new(),
        })?;

        let start_ns = sys::monotonic_ns();
        let init = |name: &str, value: &[u8]| -> Result<(), LoadError> {
            let Some(m) = maps.iter().find(|m| m.name == name) else {
                return Ok(());
            };
            let key = vec![0u8; m.key_size as usize];
            m.write(&key, value, ncpus).map_err(|e| match e {
                MapError::Syscall { map, source } => LoadError::Init { map, source },
                MapError::NotFound(map) => LoadError::MissingMap(map),
            })
        };
        // start_ns, ncpus, exiting (0), cut to the map's value (an older object's is shorter).
        let mut globals = start_ns.to_le_bytes().to_vec();
        globals.extend_from_slice(&(ncpus as u64).to_le_bytes());
        globals.extend_from_slice(&0u64.to_le_bytes());
        if let Some(m) = maps.iter().find(|m| m.name == GLOBALS_MAP) {
            globals.truncate(m.value_size as usize);
        }
        init(GLOBALS_MAP, &globals)?;
        // An ARRAY already holds its zeroed entry; any other kind gets one.
        if maps.iter().any(|m| m.name == ZERO_MAP && !m.is_array()) {
            init(ZERO_MAP, &[])?;
        }
        // `--cgroup-tree`: the cgroup the probes' `bpf_current_task_under_cgroup`
        // compares with (the map holds its own reference to the cgroup).
        if let Some(filter) = manifest.cgroup_filter.as_ref().filter(|f| f.tree) {
            let dir = std::fs::File::open(&filter.dir).map_err(|e| LoadError::Init {
                map: abi::CGROUP_MAP.into(),
                source: SyscallError::new(
                    "open",
                    io::Error::new(e.kind(), format!("{}: {e}", filter.dir)),
                ),
            })?;
            init(abi::CGROUP_MAP, &(dir.as_raw_fd() as u32).to_le_bytes())?;
        }

        let epoll = sys::epoll_create().map_err(LoadError::Ringbuf)?;
        let ring = match maps
            .iter()
            .find(|m| m.name == EVENTS_MAP && m.map_type == MapType::RingBuf)
        {
            Some(m) => {
                let ring = RingConsumer::new(m.fd, m.max_entries).map_err(LoadError::Ringbuf)?;
                sys::epoll_add(epoll.as_fd(), m.fd).map_err(LoadError::Ringbuf)?;
                Some(ring)
            }
            None => None,
        };
        let skb = crate::skb_perf::SkbPerf::open(&object, manifest.settings.perf_rb_pages)
            .map_err(LoadError::Ringbuf)?;
        if let Some(skb) = &skb {
            sys::epoll_add(epoll.as_fd(), skb.epoll_fd()).map_err(LoadError::Ringbuf)?;
        }

        Ok(Session {
            links: Vec::new(),
            iterators: Vec::new(),
            ring,
            skb,
            epoll,
            maps,
            manifest: manifest.clone(),
            ncpus,
            start_ns,
            attached: false,
            skipped: Vec::new(),
            stats: None,
            object,
        })
    }

    /// `CLOCK_MONOTONIC` (ns) written to [`GLOBALS_MAP`] at load: time zero for `elapsed`.
    pub fn start_ns(&self) -> u64 {
        self.start_ns
    }

    /// The manifest this session was loaded with.
    pub fn manifest(&self) -> &Manifest {
        &self.manifest
    }

    fn program(&self, name: &str) -> Option<Program<'_>> {
        self.object.progs().find(|p| p.name() == name)
    }

    /// Kernel ids of the loaded programs.
    pub fn program_ids(&self) -> Vec<u32> {
        self.object
            .progs()
            .filter_map(|p| Program::id_from_fd(p.as_fd()).ok())
            .collect()
    }

    /// Runs every `BEGIN` program once (`BPF_PROG_TEST_RUN`). Returns how many ran.
    pub fn run_begin(&mut self) -> Result<usize, RuntimeError> {
        self.run_once(&Attach::Begin)
    }

    /// Runs every `END` program once. Returns how many ran.
    pub fn run_end(&mut self) -> Result<usize, RuntimeError> {
        self.run_once(&Attach::End)
    }

    /// Runs every `self:signal` program for `signal`, in the script's
    /// order. Returns how many ran.
    pub fn run_signal(&mut self, signal: i32) -> Result<usize, RuntimeError> {
        self.run_once(&Attach::Signal { signal })
    }

    /// The signals some `self:signal` probe waits for, each once.
    pub fn signals_handled(&self) -> Vec<i32> {
        let mut signals: Vec<i32> = self
            .manifest
            .programs
            .iter()
            .filter_map(|p| match p.attach {
                Attach::Signal { signal } => Some(signal),
                _ => None,
            })
            .collect();
        signals.sort_unstable();
        signals.dedup();
        signals
    }

    /// Runs the `bench:NAME` program `repeat` times in one
    /// `BPF_PROG_TEST_RUN` (an XDP run over a 14-byte frame, the least the
    /// kernel takes) and gives the kernel's measure of it.
    pub fn run_bench(&mut self, name: &str, repeat: u32) -> Result<BenchRun, RuntimeError> {
        let spec = self
            .manifest
            .programs
            .iter()
            .find(|p| matches!(&p.attach, Attach::Bench { name: n } if n == name))
            .ok_or_else(|| LoadError::MissingProgram(format!("bench:{name}")))?;
        let prog = self
            .program(&spec.name)
            .ok_or_else(|| LoadError::MissingProgram(spec.name.clone()))?;
        // An Ethernet header's worth of zeros: XDP test runs refuse less.
        let frame = [0u8; 14];
        // SAFETY: all-zero is a valid bpf_test_run_opts.
        let mut opts: libbpf_sys::bpf_test_run_opts = unsafe { std::mem::zeroed() };
        opts.sz = std::mem::size_of::<libbpf_sys::bpf_test_run_opts>() as _;
        opts.data_in = frame.as_ptr().cast();
        opts.data_size_in = frame.len() as u32;
        opts.repeat = repeat.max(1) as _;
        // SAFETY: valid program fd and opts pointing at `frame`, which outlives the call.
        let r = unsafe { libbpf_sys::bpf_prog_test_run_opts(prog.as_fd().as_raw_fd(), &mut opts) };
        if r < 0 {
            return Err(RuntimeError::TestRun {
                program: spec.name.clone(),
                probe: spec.probe.clone(),
                source: SyscallError::from_neg("bpf_prog_test_run_opts", r as i64),
            });
        }
        Ok(BenchRun {
            mean_ns: u64::from(opts.duration),
            retval: opts.retval,
        })
    }

    fn run_once(&self, which: &Attach) -> Result<usize, RuntimeError> {
        let mut ran = 0;
        for spec in self.manifest.programs.iter().filter(|p| &p.attach == which) {
            let prog = self
                .program(&spec.name)
                .ok_or_else(|| LoadError::MissingProgram(spec.name.clone()))?;
            // raw_tp test runs take up to 12 u64 arguments as context.
            let ctx = [0u64; 12];
            // SAFETY: all-zero is a valid bpf_test_run_opts.
            let mut opts: libbpf_sys::bpf_test_run_opts = unsafe { std::mem::zeroed() };
            opts.sz = std::mem::size_of::<libbpf_sys::bpf_test_run_opts>() as _;
            opts.ctx_in = ctx.as_ptr().cast();
            opts.ctx_size_in = std::mem::size_of_val(&ctx) as u32;
            // SAFETY: valid program fd and opts pointing at `ctx`, which outlives the call.
            let r =
                unsafe { libbpf_sys::bpf_prog_test_run_opts(prog.as_fd().as_raw_fd(), &mut opts) };
            if r < 0 {
                return Err(RuntimeError::TestRun {
                    program: spec.name.clone(),
                    probe: spec.probe.clone(),
                    source: SyscallError::from_neg("bpf_prog_test_run_opts", r as i64),
                });
            }
            ran += 1;
        }
        Ok(ran)
    }

    /// Attaches every program that is not `BEGIN`/`END`. Stops at the first
    /// failure (probes attached so far stay attached until [`Session::detach`]).
    /// Returns the number of probes attached by this call.
    pub fn attach(&mut self) -> Result<usize, AttachError> {
        if self.attached {
            return Ok(0);
        }
        let before = self.links.len();
        for spec in attach_order(&self.manifest.programs) {
            if spec.attach.is_run_by_user_space() {
                continue;
            }
            let prog = self
                .object
                .progs()
                .find(|p| p.name() == spec.name.as_str())
                .ok_or_else(|| AttachError::MissingProgram {
                    probe: spec.probe.clone(),
                    program: spec.name.clone(),
                })?;
            match attach::attach(prog.as_libbpf_object(), &spec.attach, &spec.probe) {
                Ok(links) => {
                    if matches!(spec.attach, Attach::Iter { .. }) {
                        let first = self.links.len();
                        self.iterators
                            .extend((first..first + links.len()).map(|i| (i, spec.probe.clone())));
                    }
                    self.links.extend(links)
                }
                // A wildcard's function the kernel cannot probe: go on without it.
                Err(e @ AttachError::UprobeRefused { .. })
                    if matches!(
                        spec.attach,
                        Attach::Uprobe {
                            from_wildcard: true,
                            ..
                        }
                    ) =>
                {
                    self.skipped.push(e)
                }
                Err(e) => return Err(e),
            }
        }
        self.attached = true;
        Ok(self.links.len() - before)
    }

    /// An iterator for each attached `iter:` probe (none when the script
    /// has none): reading one runs its probe over every kernel object, and
    /// the records wait in the ring buffer for [`Session::poll`].
    pub fn open_iterators(&self) -> Result<Vec<IteratorRun>, RuntimeError> {
        self.iterators
            .iter()
            .map(|(index, probe)| {
                IteratorRun::open(&self.links[*index], probe).map_err(|source| {
                    RuntimeError::Iterate {
                        probe: probe.clone(),
                        source,
                    }
                })
            })
            .collect()
    }

    /// Probes that a wildcard matched but the kernel refused, left out by
    /// [`Session::attach`] (the caller warns about them).
    pub fn skipped(&self) -> &[AttachError] {
        &self.skipped
    }

    /// Number of probes currently attached.
    pub fn probes_attached(&self) -> usize {
        self.links.len()
    }

    /// Detaches every probe (programs and maps stay loaded, so maps can still be read).
    pub fn detach(&mut self) {
        self.iterators.clear();
        self.links.clear();
        self.attached = false;
    }

    /// Hands every record waiting in [`EVENTS_MAP`] to `on_event`; if none was
    /// waiting, waits up to `timeout` for some and hands those over. Stops early
    /// when `on_event` returns `Break`. Returns the number of records handed over
    /// (0 on timeout or when a signal interrupted the wait).
    pub fn poll(
        &mut self,
        timeout: Duration,
        on_event: &mut dyn FnMut(&[u8]) -> ControlFlow<()>,
    ) -> Result<usize, RuntimeError> {
        // Packets of `skboutput()` first: they come from their own buffers.
        let packets = self.skb.as_mut().map_or(0, |skb| skb.drain(on_event));
        if let Some(ring) = self.ring.as_mut() {
            let (n, stop) = ring.consume_batched(timeout, on_event);
            if n + packets > 0 || stop || timeout.is_zero() {
                return Ok(n + packets);
            }
        } else if timeout.is_zero() || packets > 0 {
            return Ok(packets);
        }
        let ready = sys::epoll_wait(self.epoll.as_fd(), timeout).map_err(RuntimeError::Poll)?;
        if !ready {
            return Ok(0);
        }
        let packets = self.skb.as_mut().map_or(0, |skb| skb.drain(on_event));
        match self.ring.as_mut() {
            Some(ring) => Ok(ring.consume(on_event).0 + packets),
            None => Ok(packets),
        }
    }

    /// Makes [`Session::poll`] also return when `fd` turns readable (a
    /// process's exit, a watcher's event), so the caller looks at what
    /// changed at once instead of at its next poll. The caller keeps `fd`
    /// open while polling and stops it being readable once seen.
    pub fn wake_on(&self, fd: BorrowedFd<'_>) -> Result<(), RuntimeError> {
        sys::epoll_add(self.epoll.as_fd(), fd.as_raw_fd()).map_err(RuntimeError::Poll)
    }

    /// An epoll fd that is readable while records wait in the ring buffer, for
    /// the cli to wait on together with its signal fd and timers.
    pub fn events_fd(&self) -> BorrowedFd<'_> {
        self.epoll.as_fd()
    }

    fn map(&self, name: &str) -> Result<&MapInfo, MapError> {
        let bpf_name = self
            .manifest
            .map(name)
            .map_or(name, |m| m.bpf_name.as_str());
        self.maps
            .iter()
            .find(|m| m.name == bpf_name)
            .ok_or_else(|| MapError::NotFound(name.to_string()))
    }

    /// Every `(key, values)` of a map named by its script name (`@x`) or kernel
    /// name: one value per possible CPU for per-CPU maps, one otherwise.
    pub fn map_entries(&self, name: &str) -> Result<Vec<MapEntry>, MapError> {
        self.map(name)?.entries(self.ncpus)
    }

    /// The number of keys in a map (by script or kernel name).
    pub fn map_len(&self, name: &str) -> Result<usize, MapError> {
        Ok(self
            .map(name)?
            .entries_flat(self.ncpus, 0, &mut |_, _| true)?
            .len())
    }

    /// Every entry of a map (by script or kernel name) into two flat
    /// buffers: the value of each key is merged over CPUs by `merge` (given
    /// the key's per-CPU values and a zeroed buffer of
    /// `merged_size(value_size)` bytes), which also says whether to keep
    /// the entry. Batch lookups, as [`Session::map_entries`].
    pub fn map_entries_merged(
        &self,
        name: &str,
        merged_size: impl FnOnce(usize) -> usize,
        mut merge: impl FnMut(PerCpu<'_>, &mut [u8]) -> bool,
    ) -> Result<FlatEntries, MapError> {
        let m = self.map(name)?;
        m.entries_flat(self.ncpus, merged_size(m.value_size as usize), &mut merge)
    }

    /// As [`Session::map_entries_merged`], deleting each entry as it is
    /// read (a hash map drained while its probes keep counting).
    pub fn map_take_entries_merged(
        &self,
        name: &str,
        merged_size: impl FnOnce(usize) -> usize,
        mut merge: impl FnMut(PerCpu<'_>, &mut [u8]) -> bool,
    ) -> Result<FlatEntries, MapError> {
        let m = self.map(name)?;
        m.take_flat(self.ncpus, merged_size(m.value_size as usize), &mut merge)
    }

    /// The addresses of stack `id` in the stack-trace map `map` (kernel name,
    /// see `abi::stack`), innermost first, up to the first zero; empty when
    /// the id is not in the map.
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

    /// Deletes every key of a map (an array map is zeroed instead).
    pub fn clear_map(&self, name: &str) -> Result<(), MapError> {
        self.map(name)?.clear(self.ncpus)
    }

    /// Sets every value of a map to zero bytes, keeping its keys.
    pub fn zero_map(&self, name: &str) -> Result<(), MapError> {
        self.map(name)?.zero(self.ncpus)
    }

    /// The loss counters of [`COUNTERS_MAP`], summed over CPUs, indexed by [`CounterIndex`].
    pub fn counters(&self) -> Result<[u64; CounterIndex::COUNT as usize], MapError> {
        let mut out = [0u64; CounterIndex::COUNT as usize];
        self.map(COUNTERS_MAP)?
            .sum_u64_slots(self.ncpus, &mut out)?;
        // `skboutput()` packets a perf buffer had no room for are lost events too.
        out[CounterIndex::RingbufFull as usize] += self.skb.as_ref().map_or(0, |s| s.lost());
        Ok(out)
    }

    /// Turns the kernel's BPF run statistics on (`BPF_ENABLE_STATS`) for as
    /// long as the session lives: the kernel counts while any such
    /// descriptor is open, so nothing stays switched on once it closes,
    /// however weft ends. `kernel.bpf_stats_enabled` is not touched.
    pub fn enable_stats(&mut self) -> Result<(), SyscallError> {
        if self.stats.is_some() {
            return Ok(());
        }
        // SAFETY: plain syscall wrapper; returns a new descriptor or a negative errno.
        let fd = unsafe { libbpf_sys::bpf_enable_stats(libbpf_sys::BPF_STATS_RUN_TIME) };
        if fd < 0 {
            return Err(SyscallError::from_neg("bpf(BPF_ENABLE_STATS)", fd as i64));
        }
        // SAFETY: a fresh descriptor that we now own.
        self.stats = Some(unsafe { <OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(fd) });
        Ok(())
    }

    /// Run count, run time and recursion misses of every program, in the
    /// manifest's order, as the kernel counts them (see
    /// [`Session::enable_stats`]).
    pub fn program_stats(&self) -> Result<Vec<crate::ProgramStats>, MapError> {
        self.manifest
            .programs
            .iter()
            .filter_map(|spec| self.program(&spec.name).map(|p| (spec, p)))
            .map(|(spec, p)| crate::reader::program_stats(&spec.name, p.as_fd().as_raw_fd()))
            .collect()
    }

    /// A read-only view of this session's maps and programs for other
    /// threads (the exporters), holding its own descriptors.
    pub fn reader(&self) -> Result<SessionReader, MapError> {
        let mut programs = Vec::new();
        for p in self.object.progs() {
            let name = p.name().to_string_lossy().into_owned();
            let fd = p
                .as_fd()
                .try_clone_to_owned()
                .map_err(|e| MapError::Syscall {
                    map: name.clone(),
                    source: SyscallError::new("fcntl(F_DUPFD_CLOEXEC)", e),
                })?;
            programs.push((name, fd));
        }
        SessionReader::new(&self.maps, programs, self.ncpus)
    }

    /// Number of possible CPUs (the number of values per per-CPU entry).
    pub fn possible_cpus(&self) -> usize {
        self.ncpus
    }

    /// Deletes one key of a map (by script or kernel name); `Ok(false)` when
    /// the key was not there (any more).
    pub fn delete_key(&self, name: &str, key: &[u8]) -> Result<bool, MapError> {
        self.map(name)?.delete(key)
    }

    /// The values of one key (one per possible CPU for per-CPU maps), or
    /// `None` when the key is not there.
    pub fn lookup_key(&self, name: &str, key: &[u8]) -> Result<Option<Vec<Vec<u8>>>, MapError> {
        let m = self.map(name)?;
        if key.len() != m.key_size as usize {
            return Ok(None);
        }
        m.lookup(key, self.ncpus)
    }

    /// A stream's counters ([`abi::StreamSpec::counters_map`], a per-CPU
    /// `u64` array), summed over CPUs and indexed by [`abi::StreamCounter`].
    pub fn stream_counters(
        &self,
        spec: &abi::StreamSpec,
    ) -> Result<[u64; abi::StreamCounter::COUNT as usize], MapError> {
        let mut out = [0u64; abi::StreamCounter::COUNT as usize];
        self.map(&spec.counters_map)?
            .sum_u64_slots(self.ncpus, &mut out)?;
        Ok(out)
    }
}

/// The order to attach `programs` in so that probes on one place run in the
/// script's order, as bpftrace's run: the kernel runs a uprobe's consumers
/// newest first, so uprobes attach last to first; every other mechanism
/// runs its programs in the order they were attached.
fn attach_order(programs: &[ProgramSpec]) -> Vec<&ProgramSpec> {
    let is_uprobe = |p: &ProgramSpec| matches!(p.attach, Attach::Uprobe { .. });
    let mut uprobes_reversed = programs.iter().filter(|p| is_uprobe(p)).rev();
    programs
        .iter()
        .map(|p| {
            if is_uprobe(p) {
                uprobes_reversed.next().unwrap_or(p)
            } else {
                p
            }
        })
        .collect()
}
