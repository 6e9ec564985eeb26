use crate::layout::{Aggregation, Field, Layout};

// weft's own maps are named for what they hold, as `bpftool map show`
// prints them (the kernel keeps 15 bytes of a name); script maps are
// `AT_name` as in bpftrace, so a name without `AT_` is weft's.

/// ELF/kernel name of the ring buffer that carries every event to user space.
pub const EVENTS_MAP: &str = "event_ringbuf";
/// ELF/kernel name of the per-CPU `u64` array of loss counters, indexed by [`CounterIndex`].
pub const COUNTERS_MAP: &str = "loss_counters";
/// ELF/kernel name of the one-entry array of run-time globals written by user space
/// before attaching: `start_ns: u64` (ktime at start, for `elapsed`) at
/// [`GLOBAL_START_NS`], then `ncpus: u64` (possible CPUs) at [`GLOBAL_NCPUS`],
/// then `exiting: u64` at [`GLOBAL_EXITING`], which only probes write.
pub const GLOBALS_MAP: &str = "run_globals";
/// Offset of `start_ns` in the [`GLOBALS_MAP`] value.
pub const GLOBAL_START_NS: u32 = 0;
/// Offset of `ncpus` in the [`GLOBALS_MAP`] value.
pub const GLOBAL_NCPUS: u32 = 8;
/// Offset of `exiting` in the [`GLOBALS_MAP`] value: 0 until a probe calls
/// `exit()`, which sets it, so probes that fire on other CPUs before user
/// space detaches do nothing more.
pub const GLOBAL_EXITING: u32 = 16;
/// Size of the [`GLOBALS_MAP`] value.
pub const GLOBALS_SIZE: u32 = 24;
/// ELF/kernel name of a one-entry array whose value is all zero bytes: the
/// initial value used when an aggregation creates a key (too big for the stack).
pub const ZERO_MAP: &str = "zero_value";
/// ELF/kernel name of the one-entry cgroup array `--cgroup-tree` fills with
/// its cgroup: probes run only for tasks in it or below it
/// (`bpf_current_task_under_cgroup`).
pub const CGROUP_MAP: &str = "cgroup_tree";
/// ELF/kernel name of the per-CPU array of scratch buffers: values too large
/// for the BPF stack (long strings, tuples holding them) live in the entry
/// of the program that holds them, one entry per program that needs one.
pub const SCRATCH_MAP: &str = "value_scratch";
/// ELF/kernel name of the perf event array `skboutput()` writes packets to
/// (`bpf_skb_output` writes only to a perf buffer); present only in scripts
/// that call it.
pub const SKB_MAP: &str = "skb_perf";
/// Every name above: no program or script map may take one.
pub const OWN_MAPS: [&str; 7] = [
    EVENTS_MAP,
    COUNTERS_MAP,
    GLOBALS_MAP,
    ZERO_MAP,
    CGROUP_MAP,
    SCRATCH_MAP,
    SKB_MAP,
];
/// Keyless maps (`@x = 1`) are stored under a single `u64` key of 0.
pub const SCALAR_KEY_SIZE: u32 = 8;

/// Slots of [`COUNTERS_MAP`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum CounterIndex {
    /// `bpf_ringbuf_reserve` failed: an event was dropped because the buffer was full.
    RingbufFull = 0,
    /// A map update failed (map full): the key was not stored.
    MapFull = 1,
    /// `bpf_get_stackid` returned -EEXIST: the stack hashed to a bucket of
    /// the stack map that holds another stack (weft never passes
    /// `BPF_F_REUSE_STACKID`, which would replace it and misattribute the
    /// other stack's samples). The stack was not captured.
    StackCollision = 2,
    /// `bpf_get_stackid` returned -ENOMEM: the stack map had no free entry.
    StackMapFull = 3,
}

impl CounterIndex {
    pub const COUNT: u32 = 4;
}

/// Every ring-buffer record starts with `kind: u32, id: u32`.
pub const EVENT_HEADER_SIZE: u32 = 8;

/// The `kind` of a ring-buffer record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum EventKind {
    /// `id` indexes [`Manifest::printfs`]; the arguments follow at the offsets it gives.
    Printf = 1,
    /// `exit([code])`: stop the run; the code (an i64) follows the header.
    Exit = 2,
    /// `print(@m[, top[, div]])`: `id` is the map index, followed by `top: u64, div: u64`.
    Print = 3,
    /// `clear(@m)`: `id` is the map index.
    Clear = 4,
    /// `zero(@m)`: `id` is the map index.
    Zero = 5,
    /// `time(fmt)`: `id` indexes [`Manifest::time_formats`].
    Time = 6,
    /// `join(argv[, delim])`: `id` indexes [`Manifest::join_delimiters`]; then
    /// `count: u64` and [`JOIN_MAX_ARGS`] strings of [`JOIN_ARG_SIZE`] bytes.
    Join = 7,
    /// A completed (or, with `incomplete`, expired) stream instance: `id` is
    /// the stream index; the record is laid out as `crate::stream` describes.
    Stream = 8,
    /// `-k`/`-kk`: a helper call failed: `id` indexes
    /// [`Manifest::helper_sites`], then `error: i64` (a negative errno).
    HelperError = 9,
    /// `skboutput(path, skb, len, offset)`, from [`SKB_MAP`] (a perf buffer,
    /// not the ring buffer): `id` indexes [`Manifest::skb_outputs`], then
    /// `ns: u64` (CLOCK_BOOTTIME) and `len: u64`, then the packet's first
    /// `len` bytes (a perf sample is padded to 8 bytes: `len` says where
    /// the packet ends).
    SkbOutput = 10,
    /// `send_ustack()`: the current task's user registers and a copy of its
    /// user stack, laid out as [`crate::stack::UserStackCopy`] describes.
    UserStack = 11,
}

/// Offset of the packet in an [`EventKind::SkbOutput`] record.
pub const SKB_PACKET_OFFSET: u32 = 24;

/// How many array elements `join()` reads.
pub const JOIN_MAX_ARGS: u32 = 16;
/// Bytes kept of each `join()` element, NUL included.
pub const JOIN_ARG_SIZE: u32 = 256;
/// Offset of the first string in a join record.
pub const JOIN_ARGS_OFFSET: u32 = 16;

impl EventKind {
    pub fn from_u32(v: u32) -> Option<EventKind> {
        Some(match v {
            1 => EventKind::Printf,
            2 => EventKind::Exit,
            3 => EventKind::Print,
            4 => EventKind::Clear,
            5 => EventKind::Zero,
            6 => EventKind::Time,
            7 => EventKind::Join,
            8 => EventKind::Stream,
            9 => EventKind::HelperError,
            10 => EventKind::SkbOutput,
            11 => EventKind::UserStack,
            _ => return None,
        })
    }
}

/// What a map holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MapValue {
    /// A plain value (`@x = expr`): a `BPF_MAP_TYPE_HASH`.
    Plain(Layout),
    /// An aggregation (`@x = count()`): a `BPF_MAP_TYPE_PERCPU_HASH` with the
    /// per-CPU layout documented on [`Aggregation`].
    Agg(Aggregation),
}

impl MapValue {
    pub fn size(&self) -> u32 {
        match self {
            MapValue::Plain(l) => l.size().max(1),
            MapValue::Agg(a) => a.value_size(),
        }
    }

    pub fn is_per_cpu(&self) -> bool {
        matches!(self, MapValue::Agg(_))
    }
}

/// One script map.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MapSpec {
    /// The name as written in the script, including `@` (`@start`, or `@` alone).
    pub name: String,
    /// The ELF symbol and kernel map name (at most 15 bytes).
    pub bpf_name: String,
    /// Key layout, or `None` for a keyless map (stored under key `0u64`).
    pub key: Option<Layout>,
    pub value: MapValue,
    pub max_entries: u32,
}

impl MapSpec {
    pub fn key_size(&self) -> u32 {
        self.key
            .as_ref()
            .map_or(crate::SCALAR_KEY_SIZE, |k| k.size().max(1))
    }
}

/// One argument of a printf record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PrintfArg {
    /// Offset from the start of the record (after the 8-byte header, so >= 8).
    /// For a [`PrintfArg::tail`] string, the offset of its length.
    pub field: Field,
    /// A long string (over [`PACKED_STRING_MIN`] bytes) sent at its length:
    /// at `field.offset` a `u32`, the bytes sent (NUL included; the
    /// buffer's size for a string that fills it without one), and the bytes
    /// themselves after the record's fixed part ([`PrintfSpec::fixed_size`]),
    /// right after those of the tail strings before it.
    pub tail: bool,
}

/// Strings in a printf record longer than this are sent at their length
/// ([`PrintfArg::tail`]); shorter ones (`comm`, literals) keep their place.
pub const PACKED_STRING_MIN: u32 = 64;

/// Where each argument's bytes are in the record `rec` of `spec` (short or
/// garbage records give short or empty slices, never a panic).
pub fn printf_fields<'r>(
    spec: &'r PrintfSpec,
    rec: &'r [u8],
) -> impl Iterator<Item = (&'r PrintfArg, &'r [u8])> {
    let slice = move |start: usize, len: usize| {
        let start = start.min(rec.len());
        &rec[start..start.saturating_add(len).min(rec.len())]
    };
    let mut tail = spec.fixed_size as usize;
    spec.args.iter().map(move |a| {
        let at = a.field.offset as usize;
        let size = a.field.layout.size() as usize;
        if !a.tail {
            return (a, slice(at, size));
        }
        let len = slice(at, 4)
            .try_into()
            .map_or(0, |b: [u8; 4]| u32::from_le_bytes(b) as usize)
            .min(size);
        let bytes = slice(tail, len);
        tail = tail.saturating_add(len);
        (a, bytes)
    })
}

/// A printf call site: its format string and where its arguments sit in the record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PrintfSpec {
    /// The format, parsed once (by sema, which checked the arguments against it).
    pub format: crate::printf::Format,
    pub args: Vec<PrintfArg>,
    /// The largest record, header included (every tail string full).
    pub size: u32,
    /// Where the tail strings' bytes begin ([`PrintfArg::tail`]); `size`
    /// when there are none (the record's size is then always `size`).
    pub fixed_size: u32,
    /// What user space does with the formatted text.
    pub action: PrintfAction,
    /// The call in the script: global byte offsets of its span.
    pub span: (u32, u32),
    /// `errorf`/`warnf`: where the call is, for the message (filled in by
    /// whoever holds the script's text): the call first, then each macro
    /// use it was expanded from, innermost first. Empty for the others.
    pub origin: Vec<SourcePlace>,
}

/// A place in the script, for a message printed while the program runs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SourcePlace {
    /// The file's name as diagnostics show it (`stdin`, the script's path).
    pub file: String,
    /// 1-based line and column of the first character.
    pub line: u32,
    pub column: u32,
    /// 1-based line and column just past the last character.
    pub end_line: u32,
    pub end_column: u32,
    /// The lines shown under the message as bpftrace shows them: the line,
    /// then `~` under the text (every line of a place spanning several).
    pub context: Vec<String>,
}

impl SourcePlace {
    /// `stdin:1:9-62` (one line) or `stdin:1-3` (several), as bpftrace
    /// writes a location.
    pub fn location(&self) -> String {
        if self.line != self.end_line {
            return format!("{}:{}-{}", self.file, self.line, self.end_line);
        }
        format!(
            "{}:{}:{}-{}",
            self.file, self.line, self.column, self.end_column
        )
    }
}

/// What a formatted record asks of user space.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PrintfAction {
    /// `printf(fmt, ...)`: print the text.
    Print,
    /// `cat(fmt, ...)`: print the contents of the file the text names.
    Cat,
    /// `system(fmt, ...)`: run the text as a shell command and print what
    /// it writes to its stdout (`--unsafe` only).
    System,
    /// `print(value)`: the format is empty and the one argument is printed
    /// as a value (`print()` of a map has an event of its own).
    Value,
    /// `errorf(fmt, ...)`: the text as an error naming where the call is
    /// (stderr; JSON: an `errorf` record). The run goes on.
    Error,
    /// `warnf(fmt, ...)`: the same as a warning, which `--no-warnings` hides.
    Warning,
    /// A warning about the program's own run (a division by zero): as
    /// `Warning`, with the script's line and `~` under the place, as
    /// bpftrace shows its runtime errors.
    RuntimeWarning,
}

/// Where and how a program attaches.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Attach {
    /// Run once by user space (BPF_PROG_TEST_RUN of a raw_tp program) before other probes attach.
    Begin,
    /// Run once by user space after other probes are detached.
    End,
    /// `tracepoint:category:name`.
    Tracepoint { category: String, name: String },
    /// `interval:...`: a software cpu-clock perf event on one CPU with this period.
    Interval { period_ns: u64 },
    /// `uprobe`/`uretprobe`/`usdt`: a uprobe on `offset` bytes into the file
    /// `path` (a function entry, a return, or a USDT site).
    Uprobe {
        path: String,
        offset: u64,
        retprobe: bool,
        /// `-p PID`: only this process.
        pid: Option<u32>,
        /// File offset of a USDT semaphore the kernel increments while attached, or 0.
        ref_ctr_offset: u64,
        /// One of the functions a wildcard matched: if the kernel cannot
        /// place a uprobe there, the run goes on without it (with a warning).
        from_wildcard: bool,
    },
    /// `profile`, `software` and `hardware`: a sampling perf event of this
    /// `perf_event_attr` type and config, opened on every online CPU, whose
    /// program runs every `period` events (nanoseconds for the clocks).
    PerfEvent {
        event_type: u32,
        config: u64,
        period: u64,
    },
    /// `kprobe`/`kretprobe`: a kprobe on kernel function `func` (in `module`,
    /// or vmlinux) at `offset` bytes past its entry, or at its return.
    Kprobe {
        func: String,
        module: Option<String>,
        offset: u64,
        retprobe: bool,
    },
    /// `fentry`/`fexit`: a BPF trampoline on kernel function `func`; libbpf
    /// finds its BTF id from the program's section (`fentry/func`) at load.
    Fentry { func: String, exit: bool },
    /// `rawtracepoint:name`: the tracepoint's raw arguments (`raw_tp`).
    RawTracepoint { name: String },
    /// `self:signal:SIGNAL`: run by user space (as `Begin`) each time weft
    /// receives this signal.
    Signal { signal: i32 },
    /// `bench:NAME` (`--mode bench`): an XDP program user space runs many
    /// times with `BPF_PROG_TEST_RUN` to time it; never attached.
    Bench { name: String },
    /// `iter:TARGET`: a BPF iterator (`iter/TARGET` section), attached as a
    /// link and then run by user space reading an iterator made from it,
    /// once per kernel object (task, open file, memory mapping).
    Iter { target: String },
}

impl Attach {
    /// Run by user space (`BPF_PROG_TEST_RUN`), never attached to an event.
    pub fn is_run_by_user_space(&self) -> bool {
        matches!(
            self,
            Attach::Begin | Attach::End | Attach::Signal { .. } | Attach::Bench { .. }
        )
    }
}

/// One BPF program of the object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProgramSpec {
    /// ELF symbol of the program (a valid C identifier, at most 15 bytes kept by the kernel).
    pub name: String,
    /// ELF section, which tells libbpf the program type (`tracepoint/cat/name`, `raw_tp/...`, `perf_event`).
    pub section: String,
    pub attach: Attach,
    /// The probe as the user would write it, expanded (`tracepoint:syscalls:sys_enter_read`).
    pub probe: String,
    /// Which of the script's probes (or stream clauses) it was compiled
    /// from: the programs of one probe with the same `probe` (a USDT probe's
    /// locations) are one attached probe, as bpftrace counts them.
    pub item: usize,
}

/// The probes "Attached N probes" counts: each of the script's probes
/// once per probe it expanded to (a wildcard's functions and tracepoints
/// apart, a USDT probe's locations together).
pub fn attached_probe_count<'a>(programs: impl IntoIterator<Item = &'a ProgramSpec>) -> u64 {
    let mut seen = std::collections::HashSet::new();
    programs
        .into_iter()
        .filter(|p| seen.insert((p.item, p.probe.as_str())))
        .count() as u64
}

/// `--cgroup PATH` / `--cgroup-tree PATH`: probes fire only for tasks of one
/// cgroup v2 cgroup (or, with `tree`, of it and its descendants).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CgroupFilter {
    /// The cgroup's id (what `bpf_get_current_cgroup_id()` gives in it).
    pub id: u64,
    /// Its directory, absolute: user space puts it in [`CGROUP_MAP`] for `tree`.
    pub dir: String,
    /// Descendants too (`--cgroup-tree`).
    pub tree: bool,
}

/// `-k` / `-kk`: which failed helper calls are reported, as bpftrace's flags.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub enum HelperErrors {
    /// None (errors stay silent, except the losses weft always counts).
    #[default]
    Off,
    /// `-k`: every checked helper but the memory reads.
    Helpers,
    /// `-kk`: the memory reads (`probe_read_*`) too.
    WithReads,
}

/// A helper call whose failure is reported (`-k`/`-kk`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HelperErrorSite {
    /// The helper as the kernel names it (`probe_read_user`).
    pub helper: String,
    /// The script text that made the call: global byte offsets of a span.
    pub span: (u32, u32),
    /// The probe it is in, as written and expanded.
    pub probe: String,
}

/// Everything user space needs to know about a compiled script.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Manifest {
    pub programs: Vec<ProgramSpec>,
    pub maps: Vec<MapSpec>,
    pub printfs: Vec<PrintfSpec>,
    pub time_formats: Vec<String>,
    /// The delimiter of each `join()` call site.
    pub join_delimiters: Vec<String>,
    /// Every `stream`, indexed by the `id` of its records.
    pub streams: Vec<crate::stream::StreamSpec>,
    /// The stack-trace maps that `kstack`/`ustack` values index, one per frame limit.
    pub stack_maps: Vec<crate::StackMapSpec>,
    /// Size of [`EVENTS_MAP`] in bytes (a power of two, multiple of the page size).
    pub ringbuf_size: u32,
    /// How each map is exported as a metric, indexed like `maps` (empty
    /// when the compiler was not asked: every map then has the defaults).
    pub exports: Vec<crate::MapExport>,
    /// The hierarchy filter of each distinct `cgroup_path(id, filter)`
    /// (`*` when none was given), indexed by the value's filter field.
    pub cgroup_path_filters: Vec<String>,
    /// `--cgroup`/`--cgroup-tree`, compiled into every probe that a task runs.
    pub cgroup_filter: Option<CgroupFilter>,
    /// The helper calls whose failures are reported (`-k`/`-kk`), indexed by
    /// the `id` of [`EventKind::HelperError`] records.
    pub helper_sites: Vec<HelperErrorSite>,
    /// What the script's config says user space does.
    pub settings: RunSettings,
    /// Each `skboutput()` call site, indexed by the `id` of its records.
    pub skb_outputs: Vec<SkbOutputSite>,
}

/// Where one `skboutput(path, skb, len, offset)` call writes: the pcap file
/// and how many bytes of each packet it leaves out (an Ethernet header).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct SkbOutputSite {
    pub path: String,
    pub offset: u64,
}

/// Run-time settings from bpftrace's config keys (the script's `config`
/// block and the `BPFTRACE_*` environment), for user space.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunSettings {
    /// `print_maps_on_exit`: print every map when the run ends.
    pub print_maps_on_exit: bool,
    /// `max_cat_bytes`: what `cat()` prints of a file at most.
    pub max_cat_bytes: u32,
    /// `log_size`: bytes of the buffer the kernel's verifier writes its log
    /// to when a program fails to load; `None`: as large as the log needs.
    pub log_size: Option<u32>,
    /// `str_trunc_trailer`: printed after a string that fills its buffer
    /// without a NUL (one `str()` cut at `max_strlen`).
    pub str_trunc_trailer: String,
    /// `perf_rb_pages`: pages of each CPU's perf buffer, where
    /// `skboutput()` writes packets (a power of two; bpftrace's default 64).
    pub perf_rb_pages: u32,
}

impl Default for RunSettings {
    /// bpftrace's defaults.
    fn default() -> Self {
        RunSettings {
            print_maps_on_exit: true,
            max_cat_bytes: 10240,
            log_size: None,
            str_trunc_trailer: "..".into(),
            perf_rb_pages: 64,
        }
    }
}

impl Manifest {
    pub fn map(&self, name: &str) -> Option<&MapSpec> {
        self.maps.iter().find(|m| m.name == name)
    }

    /// How map `index` is exported (the defaults when nothing was said).
    pub fn export(&self, index: usize) -> crate::MapExport {
        self.exports.get(index).cloned().unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn program(item: usize, probe: &str) -> ProgramSpec {
        ProgramSpec {
            name: String::new(),
            section: String::new(),
            attach: Attach::Begin,
            probe: probe.into(),
            item,
        }
    }

    /// `printf("%s %d %s", long, int, long)`: lengths at 8 and 16, the
    /// integer at 24, the strings' bytes from 32 on.
    fn two_tail_strings() -> PrintfSpec {
        let arg = |offset, layout, tail| PrintfArg {
            field: Field { offset, layout },
            tail,
        };
        let long = Layout::Str { size: 1024 };
        let int = Layout::Int {
            size: 8,
            signed: true,
        };
        PrintfSpec {
            format: crate::printf::Format::parse("%s %d %s"),
            args: vec![
                arg(8, long.clone(), true),
                arg(16, int, false),
                arg(12, long, true),
            ],
            size: 32 + 2048,
            fixed_size: 32,
            action: PrintfAction::Print,
            span: (0, 0),
            origin: Vec::new(),
        }
    }

    #[test]
    fn tail_strings_are_read_at_their_lengths_one_after_another() {
        let spec = two_tail_strings();
        let mut rec = vec![0u8; 32];
        rec[8..12].copy_from_slice(&3u32.to_le_bytes());
        rec[12..16].copy_from_slice(&6u32.to_le_bytes());
        rec[16..24].copy_from_slice(&(-5i64).to_le_bytes());
        rec.extend_from_slice(b"ab\0hello\0");
        let fields: Vec<&[u8]> = printf_fields(&spec, &rec).map(|(_, b)| b).collect();
        assert_eq!(
            fields,
            [&b"ab\0"[..], &(-5i64).to_le_bytes()[..], b"hello\0"]
        );
    }

    #[test]
    fn short_or_lying_records_give_short_fields() {
        let spec = two_tail_strings();
        // A length past the buffer is cut to it; past the record, to the record.
        let mut rec = vec![0u8; 40];
        rec[8..12].copy_from_slice(&u32::MAX.to_le_bytes());
        rec[12..16].copy_from_slice(&4u32.to_le_bytes());
        let lens: Vec<usize> = printf_fields(&spec, &rec).map(|(_, b)| b.len()).collect();
        assert_eq!(lens, [8, 8, 0]);
        let lens: Vec<usize> = printf_fields(&spec, &rec[..10])
            .map(|(_, b)| b.len())
            .collect();
        assert_eq!(lens, [0, 0, 0]);
    }

    #[test]
    fn a_usdt_probes_locations_count_once_and_two_probes_on_one_point_twice() {
        let usdt = "usdt:/bin/x:tracetest:testprobe";
        let programs = [
            // One USDT probe at two locations, another at one.
            program(0, usdt),
            program(0, usdt),
            program(0, "usdt:/bin/x:tracetest:testprobe2"),
            // Two script probes on the same raw tracepoint.
            program(1, "rawtracepoint:sys_enter"),
            program(2, "rawtracepoint:sys_enter"),
        ];
        assert_eq!(attached_probe_count(&programs), 4);
    }
}
