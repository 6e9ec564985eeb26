//! Lowering: from the checked AST to BPF functions through [`crate::asm`],
//! plus the [`abi::Manifest`] that tells user space what the object holds.
//!
//! Values are kept two ways: scalars (integers, pointers) in virtual
//! registers, normalised to 64 bits (sign- or zero-extended by their type);
//! strings and tuples in memory (a stack slot, a map value or a ring-buffer
//! record), written in place by [`Lower::write_into`] so nothing is copied twice.

mod builtins;
mod events;
mod expr;
mod map_loop;
mod maps;
mod members;
mod stack_maps;
mod stmt;
mod streams;

use std::collections::HashMap;

use abi::{Manifest, MapSpec, MapValue, PrintfArg, PrintfSpec, ProgramSpec};
use sema::{MapKind, Type, TypedProbe, TypedProgram};
use source::{Code, Diagnostic, Span};
use syntax::ast::{Item, Program};

use crate::asm::{Asm, AsmError, Function, Label, Slot, Src, VReg, Width};
use crate::elf::{ElfMap, ElfProgram, ElfSubprogram, write_object_licensed};

/// The result of compiling a script.
pub struct Compiled {
    pub elf: Vec<u8>,
    pub manifest: Manifest,
    /// Program symbol and its instructions, for `-d bpf` and verifier error
    /// mapping: each program followed by the subprograms it uses, as the
    /// loader joins them ([`crate::link`]).
    pub functions: Vec<(String, Function)>,
    /// Where expanded macro code comes from, for the spans of `functions`.
    pub expansions: source::Expansions,
}

/// BPF map type numbers (`enum bpf_map_type`).
mod map_type {
    pub const HASH: u32 = 1;
    pub const ARRAY: u32 = 2;
    pub const PERCPU_HASH: u32 = 5;
    pub const PERCPU_ARRAY: u32 = 6;
    pub const PERF_EVENT_ARRAY: u32 = 4;
    pub const CGROUP_ARRAY: u32 = 8;
    pub const LRU_HASH: u32 = 9;
    pub const QUEUE: u32 = 22;
    pub const LRU_PERCPU_HASH: u32 = 10;
    pub const RINGBUF: u32 = 27;
}

/// The largest value kept on the BPF stack; larger ones (long strings,
/// tuples holding them) live in the program's scratch buffer, so the 512
/// bytes of stack go to the small values that are most of a program.
pub(crate) const STACK_VALUE_MAX: u32 = 256;

/// Default number of keys a script map may hold (bpftrace's default is 4096).
pub const DEFAULT_MAP_ENTRIES: u32 = 4096;

/// Compiles a checked program into an ELF object and its manifest.
#[allow(
    clippy::result_large_err,
    reason = "a diagnostic is made once, when compiling stops; boxing it would not speed anything"
)]
pub fn compile(program: &Program, typed: &TypedProgram) -> Result<Compiled, Diagnostic> {
    compile_with(program, typed, &Options::default())
}

/// Knobs a user may turn (bpftrace's environment variables).
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// How many keys each script map holds (`BPFTRACE_MAP_KEYS_MAX`);
    /// `None`: the script's `config = { max_map_keys = N }`, else
    /// [`DEFAULT_MAP_ENTRIES`]. A map declaration (`let @m = hash(N)`)
    /// sizes its own map.
    pub max_map_entries: Option<u32>,
    /// How many stacks each stack-trace map holds; `None`: as many as a
    /// script map's keys. `weft profile` sizes it for the run.
    pub stack_map_entries: Option<u32>,
    /// `-k`/`-kk`: report failed helper calls.
    pub helper_errors: abi::HelperErrors,
    /// Threads register allocation may use (0 or 1: this one only). The
    /// caller says how many CPUs it may take.
    pub workers: usize,
}

/// [`compile`] with options.
#[allow(
    clippy::result_large_err,
    reason = "a diagnostic is made once, when compiling stops; boxing it would not speed anything"
)]
pub fn compile_with(
    program: &Program,
    typed: &TypedProgram,
    options: &Options,
) -> Result<Compiled, Diagnostic> {
    // The environment wins over the script's config, which wins over the default.
    let max_map_entries = options
        .max_map_entries
        .or(typed.config.max_map_keys())
        .unwrap_or(DEFAULT_MAP_ENTRIES)
        .max(1);
    let mut names = SymbolNames::default();
    let manifest_maps: Vec<MapSpec> = typed
        .maps
        .iter()
        .map(|m| {
            let size = m.decl.as_ref().map_or(max_map_entries, |d| d.max_entries);
            map_spec(&mut names, m, size.max(1))
        })
        .collect();
    let printfs: Vec<PrintfSpec> = typed
        .printfs
        .iter()
        .map(|p| printf_spec(&p.args, &p.format, p.action, p.span))
        .collect();
    let needs_stream = !typed.printfs.is_empty()
        || !typed.time_formats.is_empty()
        || !typed.join_delimiters.is_empty()
        || !typed.streams.is_empty();
    let stream_layouts: Vec<streams::StreamLayout> = typed
        .streams
        .iter()
        .map(|s| streams::StreamLayout::new(&mut names, s))
        .collect();
    let ringbuf_size = match typed.config.perf_rb_pages() {
        // As `BPFTRACE_PERF_RB_PAGES`: the kernel wants a power of two.
        Some(pages) => (pages.max(1) * 4096).next_power_of_two(),
        None if needs_stream => 1 << 20,
        None => 64 << 10,
    };

    // Decided by sema (`MapInfo::array_backed`): each probe is lowered once.
    let arrays: Vec<bool> = typed.maps.iter().map(sema::MapInfo::array_backed).collect();
    let mut programs = Vec::new();
    let mut helper_sites = Vec::new();
    let fail = |e: AsmError| {
        let mut d = asm_error(e);
        program.expansions.fix(&mut d);
        d
    };
    // Programs that keep values in a scratch buffer, and the largest buffer.
    let (mut scratch_users, mut scratch_size) = (0u32, 0u32);
    // Asked once: every program of a script that calls exit() is guarded.
    let calls_exit = typed.calls_exit();
    // Each program lowered, in order: its assembler, then its subprograms'
    // (their symbols already unique), and how the subprograms were renamed.
    let mut shapes: Vec<(usize, HashMap<String, String>)> = Vec::new();
    let mut sub_names: Vec<String> = Vec::new();
    // Register allocation and emission, the one expensive step that needs
    // nothing from other programs, runs on the workers while the next
    // programs are lowered.
    let finished = finish_while_lowering(options.workers, typed.probes.len(), |finish| {
        for probe in &typed.probes {
            let name = names.unique(&program_name(typed, probe));
            let mut lower = Lower::new(typed, probe, &manifest_maps, &printfs);
            lower.exit_guard = calls_exit;
            lower.arrays = &arrays;
            lower.helper_errors = options.helper_errors;
            lower.helper_site_base = helper_sites.len();
            lower.program_name = name.clone();
            lower.scratch_index = scratch_users;
            let main = match (&program.items[probe.item], probe.stage) {
                (Item::Stream(st), Some(stage)) => {
                    lower.stream_stage(program, st, stage, &stream_layouts[stage.stream])
                }
                (Item::Probe(ast), None) => lower.probe(ast),
                _ => continue,
            };
            finish(main);
            let subs = std::mem::take(&mut lower.subprograms);
            let nsubs = subs.len();
            let mut renamed = HashMap::new();
            for (sub_name, sub) in subs {
                let unique = names.unique(&sub_name);
                if unique != sub_name {
                    renamed.insert(sub_name, unique.clone());
                }
                sub_names.push(unique);
                finish(sub);
            }
            shapes.push((nsubs, renamed));
            helper_sites.append(&mut lower.helper_sites);
            if lower.scratch_size > 0 {
                scratch_users += 1;
                scratch_size = scratch_size.max(lower.scratch_size);
            }
            programs.push(ProgramSpec {
                name,
                section: probe.resolved.section.clone(),
                attach: probe.resolved.attach.clone(),
                probe: probe.resolved.name.clone(),
                item: probe.item,
            });
        }
    });
    let mut finished = finished.into_iter();
    let mut sub_names = sub_names.into_iter();
    let mut functions = Vec::new();
    let mut mains: Vec<Function> = Vec::new();
    let mut subprograms: Vec<(String, Function)> = Vec::new();
    for (spec, (nsubs, renamed)) in programs.iter().zip(shapes) {
        let Some(main) = finished.next() else {
            break;
        };
        let mut func = main.map_err(fail)?;
        let mut subs = Vec::with_capacity(nsubs);
        for (sub, sub_name) in finished.by_ref().take(nsubs).zip(sub_names.by_ref()) {
            subs.push((sub_name, sub.map_err(fail)?));
        }
        rename_calls(&renamed, &mut func, &mut subs);
        let by_name: HashMap<&str, &Function> = subs.iter().map(|(n, f)| (n.as_str(), f)).collect();
        crate::link::check_stack(&func, &by_name).map_err(fail)?;
        let linked = crate::link::link(&func, &by_name);
        functions.push((spec.name.clone(), linked));
        mains.push(func);
        subprograms.extend(subs);
    }

    let mut elf_maps: Vec<ElfMap> = manifest_maps
        .iter()
        .zip(&arrays)
        .zip(&typed.maps)
        .map(|((m, &array), info)| ElfMap {
            name: m.bpf_name.clone(),
            map_type: match (array, info.decl.as_ref().map(|d| d.kind)) {
                (true, _) => map_type::PERCPU_ARRAY,
                (false, Some(MapKind::Hash)) => map_type::HASH,
                (false, Some(MapKind::LruHash)) => map_type::LRU_HASH,
                (false, Some(MapKind::PercpuHash)) => map_type::PERCPU_HASH,
                (false, Some(MapKind::PercpuLruHash)) => map_type::LRU_PERCPU_HASH,
                (false, None) if m.value.is_per_cpu() => map_type::PERCPU_HASH,
                (false, None) => map_type::HASH,
            },
            key_size: if array { 4 } else { m.key_size() },
            value_size: m.value.size(),
            max_entries: if array { 1 } else { m.max_entries },
            flags: 0,
        })
        .collect();
    elf_maps.push(ElfMap {
        name: abi::EVENTS_MAP.into(),
        map_type: map_type::RINGBUF,
        key_size: 0,
        value_size: 0,
        max_entries: ringbuf_size,
        flags: 0,
    });
    elf_maps.push(ElfMap {
        name: abi::COUNTERS_MAP.into(),
        map_type: map_type::PERCPU_ARRAY,
        key_size: 4,
        value_size: 8,
        max_entries: abi::CounterIndex::COUNT,
        flags: 0,
    });
    if !typed.skb_outputs.is_empty() {
        // One perf buffer per CPU: max_entries 0 has libbpf size it to the
        // possible CPUs.
        elf_maps.push(ElfMap {
            name: abi::SKB_MAP.into(),
            map_type: map_type::PERF_EVENT_ARRAY,
            key_size: 4,
            value_size: 4,
            max_entries: 0,
            flags: 0,
        });
    }
    if typed.cgroup_filter.as_ref().is_some_and(|f| f.tree) {
        elf_maps.push(ElfMap {
            name: abi::CGROUP_MAP.into(),
            map_type: map_type::CGROUP_ARRAY,
            key_size: 4,
            value_size: 4,
            max_entries: 1,
            flags: 0,
        });
    }
    if scratch_users > 0 {
        elf_maps.push(ElfMap {
            name: abi::SCRATCH_MAP.into(),
            map_type: map_type::PERCPU_ARRAY,
            key_size: 4,
            value_size: scratch_size,
            max_entries: scratch_users,
            flags: 0,
        });
    }
    elf_maps.push(ElfMap {
        name: abi::GLOBALS_MAP.into(),
        map_type: map_type::ARRAY,
        key_size: 4,
        value_size: abi::GLOBALS_SIZE,
        max_entries: 1,
        flags: 0,
    });
    let zero_size = manifest_maps
        .iter()
        .map(|m| m.value.size())
        .max()
        .unwrap_or(8)
        .max(8);
    elf_maps.extend(
        stream_layouts
            .iter()
            .flat_map(streams::StreamLayout::elf_maps),
    );
    elf_maps.push(ElfMap {
        name: abi::ZERO_MAP.into(),
        map_type: map_type::ARRAY,
        key_size: 4,
        value_size: zero_size,
        max_entries: 1,
        flags: 0,
    });

    let stack_maps = stack_maps::stack_maps(
        typed,
        options.stack_map_entries.unwrap_or(max_map_entries).max(1),
    );
    elf_maps.extend(stack_maps.iter().map(stack_maps::elf_map));

    let elf_programs: Vec<ElfProgram<'_>> = programs
        .iter()
        .zip(&mains)
        .map(|(p, f)| ElfProgram {
            name: &p.name,
            section: &p.section,
            func: f,
        })
        .collect();
    let elf_subprograms: Vec<ElfSubprogram<'_>> = subprograms
        .iter()
        .map(|(name, func)| ElfSubprogram {
            name,
            params: map_loop::CALLBACK_PARAMS,
            func,
        })
        .collect();
    let elf = write_object_licensed(
        &elf_programs,
        &elf_subprograms,
        &elf_maps,
        &typed.config.license(),
    )
    .map_err(|e| {
        Diagnostic::error(format!("cannot write the BPF object: {e}")).with_code(Code::E0501)
    })?;
    let manifest = Manifest {
        programs,
        maps: manifest_maps,
        printfs,
        time_formats: typed.time_formats.clone(),
        join_delimiters: typed.join_delimiters.clone(),
        streams: stream_layouts.iter().map(|l| l.spec.clone()).collect(),
        stack_maps,
        ringbuf_size,
        exports: Vec::new(),
        cgroup_path_filters: typed.cgroup_path_filters.clone(),
        skb_outputs: typed.skb_outputs.clone(),
        cgroup_filter: typed.cgroup_filter.clone(),
        helper_sites,
        settings: abi::RunSettings {
            print_maps_on_exit: typed.config.print_maps_on_exit(),
            max_cat_bytes: typed.config.max_cat_bytes(),
            log_size: typed.config.log_size(),
            str_trunc_trailer: typed.config.str_trunc_trailer(),
            // libbpf takes a power of two.
            perf_rb_pages: typed
                .config
                .perf_rb_pages()
                .map_or(64, |n| n.max(1).next_power_of_two()),
        },
    };
    Ok(Compiled {
        elf,
        manifest,
        functions,
        expansions: program.expansions.clone(),
    })
}

/// Gives each subprogram a symbol no other function or map has (its name
/// as lowered, `PROGRAM_forN`, unless that is taken), and points the
/// references at the names given.
/// Points the calls of a program and its subprograms at the subprograms'
/// unique symbols (`renamed`: from the name each was lowered with).
fn rename_calls(
    renamed: &HashMap<String, String>,
    main: &mut Function,
    subprograms: &mut [(String, Function)],
) {
    if renamed.is_empty() {
        return;
    }
    let functions = std::iter::once(main).chain(subprograms.iter_mut().map(|(_, f)| f));
    for f in functions {
        for r in &mut f.func_refs {
            if let Some(n) = renamed.get(&r.symbol) {
                r.symbol = n.clone();
            }
        }
    }
}

/// Runs `lower`, which hands each function it lowers to `finish`, and
/// finishes them (see [`Asm::finish`]): with more than one worker, on
/// threads that start on the first functions while the next are lowered,
/// then on this thread too. The results come in the order given. Scripts
/// of few programs stay on this thread (starting threads costs more).
fn finish_while_lowering(
    workers: usize,
    programs: usize,
    lower: impl FnOnce(&mut dyn FnMut(Asm)),
) -> Vec<Result<Function, AsmError>> {
    const PER_WORKER: usize = 64;
    let workers = workers.clamp(1, programs.div_ceil(PER_WORKER).max(1));
    if workers == 1 {
        let mut done = Vec::new();
        lower(&mut |asm| done.push(asm.finish()));
        return done;
    }
    // Functions go to the workers in batches: one wake-up per function
    // cost more in futex calls than a small function takes to finish.
    const BATCH: usize = 16;
    let (queue, jobs) = std::sync::mpsc::channel::<Vec<(usize, Asm)>>();
    let jobs = std::sync::Mutex::new(jobs);
    // What each batch leaves goes back to be freed on this thread, where it
    // was allocated, as lowering goes on (memory is reused, not held).
    let (spent, leftovers) = std::sync::mpsc::channel::<Vec<crate::asm::Leftovers>>();
    let work = || {
        let mut done = Vec::new();
        while let Some(batch) = jobs.lock().ok().and_then(|j| j.recv().ok()) {
            let mut left = Vec::with_capacity(batch.len());
            for (i, asm) in batch {
                let (function, leftover) = asm.finish_keeping();
                done.push((i, function));
                left.push(leftover);
            }
            // This thread's own receiver: it cannot be gone.
            let _ = spent.send(left);
        }
        done
    };
    std::thread::scope(|scope| {
        let helpers: Vec<_> = (1..workers).map(|_| scope.spawn(work)).collect();
        let mut submitted = 0;
        let mut batch = Vec::with_capacity(BATCH);
        lower(&mut |asm| {
            batch.push((submitted, asm));
            submitted += 1;
            if batch.len() == BATCH {
                // The receiver lives until every worker is done: this cannot fail.
                let _ = queue.send(std::mem::replace(&mut batch, Vec::with_capacity(BATCH)));
                leftovers.try_iter().for_each(drop);
            }
        });
        if !batch.is_empty() {
            let _ = queue.send(batch);
        }
        drop(queue);
        let mut done = work();
        for helper in helpers {
            done.extend(
                helper
                    .join()
                    .unwrap_or_else(|p| std::panic::resume_unwind(p)),
            );
        }
        leftovers.try_iter().for_each(drop);
        done.sort_unstable_by_key(|(i, _)| *i);
        done.into_iter().map(|(_, function)| function).collect()
    })
}

fn asm_error(e: AsmError) -> Diagnostic {
    let span = e.span();
    let d = Diagnostic::error(e.to_string()).with_code(Code::E0502);
    if span == Span::DUMMY {
        d
    } else {
        d.with_label(span, "generated from here")
    }
}

/// The longest program or map symbol kept (the kernel keeps the first 15
/// bytes as the object's name; a program's full name is in its BTF).
const MAX_SYMBOL: usize = 64;
/// The longest name the kernel keeps (`BPF_OBJ_NAME_LEN` less its NUL).
const MAX_KERNEL_NAME: usize = 15;

/// The ELF symbols of the object's programs and script maps: identifiers
/// (letters, digits, `_`), each used once. They are what `bpftool prog
/// show` and `bpftool map show` print, so they say what the user wrote.
pub(crate) struct SymbolNames {
    used: foldhash::HashSet<String>,
    /// For a name already taken (and its length limit): the suffix to try
    /// next, so that the thousandth probe on one tracepoint does not try
    /// the 999 names before it.
    next_suffix: foldhash::HashMap<(String, usize), usize>,
}

impl Default for SymbolNames {
    /// weft's own maps keep their names.
    fn default() -> Self {
        SymbolNames {
            used: abi::OWN_MAPS.into_iter().map(String::from).collect(),
            next_suffix: Default::default(),
        }
    }
}

impl SymbolNames {
    /// `base` made an identifier and unique (`_2`, `_3`, ... on a repeat).
    fn unique(&mut self, base: &str) -> String {
        self.unique_within(base, MAX_SYMBOL)
    }

    /// [`Self::unique`] for a map weft makes for itself, whose whole name
    /// the kernel keeps: at most 15 bytes, unique in those (a repeat ends
    /// in `_2`, `_3`, ... within them).
    pub(crate) fn unique_kernel(&mut self, base: &str) -> String {
        self.unique_within(base, MAX_KERNEL_NAME)
    }

    fn unique_within(&mut self, base: &str, max: usize) -> String {
        let mut s: String = base
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .take(max)
            .collect();
        // Stack maps are `stacks_N`.
        if s.is_empty()
            || s.starts_with(|c: char| c.is_ascii_digit())
            || s.starts_with(abi::stack::STACK_MAP_PREFIX)
        {
            s.insert(0, '_');
            s.truncate(max);
        }
        if !self.used.contains(&s) {
            self.used.insert(s.clone());
            return s;
        }
        let mut n = self
            .next_suffix
            .get(&(s.clone(), max))
            .copied()
            .unwrap_or(2);
        let name = loop {
            let suffix = format!("_{n}");
            // `s` is ASCII: any byte is a character boundary.
            let stem = &s[..s.len().min(max.saturating_sub(suffix.len()))];
            let name = format!("{stem}{suffix}");
            n += 1;
            if !self.used.contains(&name) {
                break name;
            }
        };
        self.used.insert(name.clone());
        self.next_suffix.insert((s, max), n);
        name
    }
}

/// A program's name: what its probe fires on (`sys_enter_openat`,
/// `vfs_read`, `readline`, `profile_hz99`), `_ret` for a return probe,
/// `BEGIN`/`END`, and a stream clause's stream and role first
/// (`read_req_begin_sys_enter_read`).
fn program_name(typed: &TypedProgram, probe: &TypedProbe) -> String {
    use abi::Attach;
    let short = &probe.resolved.short;
    let base = match &probe.resolved.attach {
        Attach::Begin => "BEGIN".to_string(),
        Attach::End => "END".to_string(),
        Attach::Kprobe { retprobe: true, .. }
        | Attach::Uprobe { retprobe: true, .. }
        | Attach::Fentry { exit: true, .. } => format!("{short}_ret"),
        _ => short.clone(),
    };
    match probe.stage {
        Some(stage) => {
            let stream = &typed.streams[stage.stream];
            let role = stream.stages[stage.stage].role.as_str();
            format!("{}_{role}_{base}", stream.name)
        }
        None => base,
    }
}

/// A script map `@name` is `AT_name` in the kernel, as bpftrace names it.
fn map_spec(names: &mut SymbolNames, m: &sema::MapInfo, max_entries: u32) -> MapSpec {
    let value = match &m.value {
        Type::Agg(a) => MapValue::Agg(a.clone()),
        t => MapValue::Plain(t.layout()),
    };
    MapSpec {
        name: m.name.clone(),
        bpf_name: names.unique(&format!("AT_{}", m.name.trim_start_matches('@'))),
        key: m.key.as_ref().map(Type::layout),
        value,
        max_entries,
    }
}

/// Record layout of a printf: the 8-byte header, then each argument aligned
/// (a long string as its length, its bytes after the fixed part: see
/// `abi::PrintfArg::tail`).
fn printf_spec(
    args: &[Type],
    format: &abi::printf::Format,
    action: abi::PrintfAction,
    span: source::Span,
) -> PrintfSpec {
    let mut offset = abi::EVENT_HEADER_SIZE;
    let mut tail_size = 0;
    let mut out = Vec::new();
    for t in args {
        let layout = t.layout();
        let tail = matches!(t, Type::Str { size } if *size > abi::PACKED_STRING_MIN);
        let (align, size) = if tail {
            tail_size += layout.size();
            (4, 4)
        } else {
            (layout.align().max(1), layout.size())
        };
        offset = offset.next_multiple_of(align);
        out.push(PrintfArg {
            field: abi::Field { offset, layout },
            tail,
        });
        offset += size;
    }
    let fixed_size = offset.next_multiple_of(8);
    PrintfSpec {
        format: format.clone(),
        args: out,
        size: (fixed_size + tail_size).next_multiple_of(8),
        fixed_size,
        action,
        span: (span.start, span.end),
        origin: Vec::new(),
    }
}

/// Where a value in memory lives. Offsets are checked to fit an
/// instruction's 16 bits where they are used (a large record or scratch
/// value may reach past them).
#[derive(Clone, Copy, Debug)]
pub(crate) enum Place {
    /// A stack slot plus a byte offset.
    Stack(Slot, i32),
    /// A pointer held in a register (map value, ring-buffer record, the
    /// scratch buffer) plus an offset.
    Ptr(VReg, i32),
}

/// The widest access (at most `remaining` bytes) that is aligned at `at`, a
/// byte offset from an 8-aligned base (stack slots, map values and
/// ring-buffer records all are).
/// How a scalar of type `t` is kept in memory: a boolean in one byte (as C
/// and bpftrace keep it, so `bool` arrays and records line up), every other
/// scalar as 64 bits.
pub(crate) fn scalar_width(t: &Type) -> Width {
    match t {
        Type::Bool => Width::B,
        _ => Width::DW,
    }
}

pub(crate) fn chunk(at: i64, remaining: u32) -> (Width, u32) {
    for (w, n) in [(Width::DW, 8u32), (Width::W, 4), (Width::H, 2)] {
        if remaining >= n && at.rem_euclid(n as i64) == 0 {
            return (w, n);
        }
    }
    (Width::B, 1)
}

impl Place {
    /// The byte offset from the place's 8-aligned base.
    pub(crate) fn base_offset(self) -> i64 {
        match self {
            Place::Stack(_, o) | Place::Ptr(_, o) => o as i64,
        }
    }

    pub(crate) fn offset(self, by: u32) -> Place {
        match self {
            Place::Stack(s, o) => Place::Stack(s, o.saturating_add_unsigned(by)),
            Place::Ptr(r, o) => Place::Ptr(r, o.saturating_add_unsigned(by)),
        }
    }
}

/// Where the program's context pointer is.
#[derive(Clone, Copy, Debug)]
pub(crate) enum CtxAt {
    /// In a register (the program itself).
    Reg(VReg),
    /// In the word at this offset from a pointer (a callback: the loop's context).
    Saved(VReg, i16),
}

/// Loop labels for `break` and `continue`.
struct LoopLabels {
    brk: Label,
    cont: Label,
}

/// State for lowering one program.
pub(crate) struct Lower<'a> {
    pub(crate) asm: Asm,
    pub(crate) typed: &'a TypedProgram,
    pub(crate) probe: &'a TypedProbe,
    pub(crate) maps: &'a [MapSpec],
    pub(crate) printfs: &'a [PrintfSpec],
    /// Stack slot of every scratch variable.
    vars: HashMap<String, Place>,
    loops: Vec<LoopLabels>,
    /// The iterators of the range loops around the code being lowered,
    /// outermost first: leaving early ends each.
    range_iters: Vec<Slot>,
    /// The label every early exit jumps to (`return 0`).
    exit: Label,
    /// Where the program's context pointer is (see [`Lower::ctx`]).
    ctx: CtxAt,
    /// The program's symbol: its subprograms are named after it.
    program_name: String,
    /// The subprograms lowered so far (map loops' callbacks), by symbol.
    subprograms: Vec<(String, Asm)>,
    /// Map loops met so far (they number the callbacks).
    map_loops: usize,
    /// In a map loop's callback: the loop's context (see `map_loop`).
    loop_context: Option<VReg>,
    /// Per map: kept in a one-entry per-CPU array (`sema::MapInfo::array_backed`).
    pub(crate) arrays: &'a [bool],
    /// The script calls `exit()`: event probes check its flag first.
    pub(crate) exit_guard: bool,
    /// In a stream clause or handler: the instance's state (its record) and layout.
    stream_record: Option<(VReg, abi::StreamSpec)>,
    /// Whether strings written now must be zero past their terminator (and
    /// tuples and buffers zero in their unused bytes), so that equal values
    /// are equal bytes. Always, except while filling a printf record, which
    /// user space reads only up to each string's NUL.
    pub(crate) canonical: bool,
    /// `-k`/`-kk`: which failed helper calls send a record.
    helper_errors: abi::HelperErrors,
    /// The helper calls checked in this program, numbered from
    /// `helper_site_base` (the sites of the programs lowered before).
    helper_sites: Vec<abi::HelperErrorSite>,
    helper_site_base: usize,
    /// The program's scratch buffer (a pointer into `abi::SCRATCH_MAP`'s
    /// entry `scratch_index`), looked up first thing when the body uses it
    /// (a map loop's callback looks it up too: see `map_loop`).
    pub(crate) scratch_base: VReg,
    scratch_index: u32,
    /// Bytes of scratch buffer the finished program needs (0: none).
    scratch_size: u32,
}

impl<'a> Lower<'a> {
    fn new(
        typed: &'a TypedProgram,
        probe: &'a TypedProbe,
        maps: &'a [MapSpec],
        printfs: &'a [PrintfSpec],
    ) -> Lower<'a> {
        let mut asm = Asm::new();
        let ctx = asm.ctx();
        let exit = asm.label();
        let scratch_base = asm.vreg();
        Lower {
            asm,
            typed,
            probe,
            maps,
            printfs,
            vars: HashMap::new(),
            loops: Vec::new(),
            range_iters: Vec::new(),
            exit,
            ctx: CtxAt::Reg(ctx),
            program_name: String::new(),
            subprograms: Vec::new(),
            map_loops: 0,
            loop_context: None,
            arrays: &[],
            exit_guard: false,
            stream_record: None,
            canonical: true,
            helper_errors: abi::HelperErrors::Off,
            helper_sites: Vec::new(),
            helper_site_base: 0,
            scratch_base,
            scratch_index: 0,
            scratch_size: 0,
        }
    }

    fn probe(&mut self, ast: &syntax::ast::Probe) -> Asm {
        // Variables live for the whole program: give each its slot up front, zeroed,
        // so the verifier never sees an uninitialised read on any path.
        let vars: Vec<(String, Type)> = self
            .probe
            .vars
            .iter()
            .map(|(n, t)| (n.clone(), t.clone()))
            .collect();
        self.asm.set_span(ast.span);
        for (name, t) in vars {
            let size = t.layout().size().max(8).next_multiple_of(8);
            let place = self.value_place(size);
            self.zero(place, size);
            self.vars.insert(name, place);
        }
        self.exit_guard_prologue();
        self.task_filter_prologue();
        self.iterator_end_prologue();
        if let Some(pred) = &ast.predicate {
            let exit = self.exit;
            self.branch_on(pred, false, exit);
        }
        self.block(&ast.body);
        let exit = self.exit;
        self.asm.bind(exit);
        self.asm.set_span(ast.span);
        self.asm.ret(Src::Imm(0));
        self.finish_function()
    }

    /// Ends the program: when its body kept values in the scratch buffer,
    /// the buffer's lookup goes first (a program without large values pays
    /// nothing). Registers are allocated later ([`Asm::finish`]), for every
    /// program at once.
    pub(crate) fn finish_function(&mut self) -> Asm {
        self.scratch_size = self.asm.scratch_size();
        if self.scratch_size > 0 {
            self.look_up_scratch_first();
        }
        std::mem::take(&mut self.asm)
    }

    /// Looks the program's scratch buffer up into `scratch_base` first thing
    /// in the function being lowered (a program, or a map loop's callback).
    pub(crate) fn look_up_scratch_first(&mut self) {
        {
            let start = self.asm.position();
            self.asm.set_span(Span::DUMMY);
            let key = self.asm.stack(8);
            self.asm
                .store_stack(key, 0, Src::Imm(self.scratch_index as i32), Width::DW);
            let map = self.asm.vreg();
            self.asm.map_ptr(map, abi::SCRATCH_MAP);
            let key_ptr = self.asm.vreg();
            self.asm.stack_addr(key_ptr, key, 0);
            let base = self.scratch_base;
            self.asm.call(
                crate::asm::Helper::MAP_LOOKUP_ELEM,
                &[Src::Reg(map), Src::Reg(key_ptr)],
                Some(base),
            );
            // Never null for an index below the map's size; the verifier wants the check.
            let exit = self.exit;
            self.asm.br(crate::asm::Cond::Eq, base, Src::Imm(0), exit);
            self.asm.move_to_start(start);
        }
    }

    /// In a script that calls `exit()`, a probe that fires after some probe
    /// called it (on another CPU, before user space has detached) returns
    /// at once: nothing is printed or counted after `exit()`. BEGIN, END and
    /// what user space runs are not guarded.
    fn exit_guard_prologue(&mut self) {
        if !self.exit_guard || self.probe.resolved.attach.is_run_by_user_space() {
            return;
        }
        let exiting = self.global(abi::GLOBAL_EXITING);
        let exit = self.exit;
        self.asm
            .br(crate::asm::Cond::Ne, exiting, Src::Imm(0), exit);
    }

    /// Sets a `u64` of the globals map (see [`Lower::global`]).
    pub(crate) fn set_global(&mut self, offset: u32, value: i32) {
        let g = self.globals_value();
        let none = self.asm.label();
        self.asm.br(crate::asm::Cond::Eq, g, Src::Imm(0), none);
        self.asm.store(g, offset as i16, Src::Imm(value), Width::DW);
        self.asm.bind(none);
    }

    /// An `iter:` program is called once more after the last object, with
    /// a NULL object (the second field of its context): it does nothing then.
    fn iterator_end_prologue(&mut self) {
        if !matches!(
            self.probe.resolved.context,
            sema::providers::Context::Iter { .. }
        ) {
            return;
        }
        let object = self.asm.vreg();
        let ctx = self.ctx();
        self.asm.load(object, ctx, 8, Width::DW);
        let exit = self.exit;
        self.asm.br(crate::asm::Cond::Eq, object, Src::Imm(0), exit);
    }

    /// Memory for a value of `size` bytes that lives while the program
    /// runs or until the statement ends: a stack slot, or for a value larger
    /// than [`STACK_VALUE_MAX`], a place in the program's scratch buffer
    /// (the stack holds 512 bytes in all).
    pub(crate) fn value_place(&mut self, size: u32) -> Place {
        let size = size.max(8).next_multiple_of(8);
        if size > STACK_VALUE_MAX {
            let at = self.asm.scratch(size);
            Place::Ptr(self.scratch_base, at as i32)
        } else {
            Place::Stack(self.asm.stack(size), 0)
        }
    }

    /// `-p PID`, `--cgroup` and `--cgroup-tree`: probes of providers whose
    /// events belong to a task (`ProviderDef::pid_filter`) return early for
    /// other processes and other cgroups, before anything else runs.
    pub(crate) fn task_filter_prologue(&mut self) {
        if !sema::providers::pid_filter_applies(self.probe.resolved.provider) {
            return;
        }
        let exit = self.exit;
        if let Some(pid) = self.typed.pid_filter {
            let current = self.pid();
            self.asm
                .br(crate::asm::Cond::Ne, current, Src::Imm(pid as i32), exit);
        }
        match &self.typed.cgroup_filter {
            Some(abi::CgroupFilter { tree: true, .. }) => {
                // 1: the task is in the cgroup of slot 0 or below it; 0: not; < 0: an error.
                let map = self.asm.vreg();
                self.asm.map_ptr(map, abi::CGROUP_MAP);
                let under = self.asm.vreg();
                self.asm.call(
                    crate::asm::Helper::CURRENT_TASK_UNDER_CGROUP,
                    &[Src::Reg(map), Src::Imm(0)],
                    Some(under),
                );
                self.asm.br(crate::asm::Cond::Ne, under, Src::Imm(1), exit);
            }
            Some(abi::CgroupFilter { id, .. }) => {
                let want = self.constant(*id as i64);
                let current = self.asm.vreg();
                self.asm.call(
                    crate::asm::Helper::GET_CURRENT_CGROUP_ID,
                    &[],
                    Some(current),
                );
                self.asm
                    .br(crate::asm::Cond::Ne, current, Src::Reg(want), exit);
            }
            None => {}
        }
    }

    /// The program's context pointer (`ctx`): in the program, the register
    /// it arrived in; in a callback, loaded from the loop's context.
    pub(crate) fn ctx(&mut self) -> VReg {
        match self.ctx {
            CtxAt::Reg(v) => v,
            CtxAt::Saved(base, off) => {
                let r = self.asm.vreg();
                self.asm.load(r, base, off, Width::DW);
                r
            }
        }
    }

    /// `return value;`: the program ends here with `value`.
    pub(crate) fn return_value(&mut self, value: VReg) {
        for iter in self.range_iters.clone().into_iter().rev() {
            self.destroy_range_iter(iter);
        }
        if !self.return_value_from_callback(value) {
            self.asm.ret(Src::Reg(value));
        }
    }

    /// Leaves the program now (`return`, `exit()`).
    pub(crate) fn return_now(&mut self) {
        for iter in self.range_iters.clone().into_iter().rev() {
            self.destroy_range_iter(iter);
        }
        let exit = self.exit;
        self.asm.jmp(exit);
    }

    /// A pointer to the globals map's one value, or 0 if the lookup fails.
    fn globals_value(&mut self) -> VReg {
        let key = self.asm.stack(8);
        self.asm.store_stack(key, 0, Src::Imm(0), Width::DW);
        let map = self.asm.vreg();
        self.asm.map_ptr(map, abi::GLOBALS_MAP);
        let kp = self.asm.vreg();
        self.asm.stack_addr(kp, key, 0);
        let g = self.asm.vreg();
        self.asm.call(
            crate::asm::Helper::MAP_LOOKUP_ELEM,
            &[Src::Reg(map), Src::Reg(kp)],
            Some(g),
        );
        g
    }

    /// The `u64` at `offset` of the globals user space writes at load
    /// (`abi::GLOBALS_MAP`); 0 if the lookup fails (it cannot: an array).
    pub(crate) fn global(&mut self, offset: u32) -> VReg {
        let g = self.globals_value();
        let value = self.asm.vreg();
        self.asm.mov(value, Src::Imm(0));
        let none = self.asm.label();
        self.asm.br(crate::asm::Cond::Eq, g, Src::Imm(0), none);
        self.asm.load(value, g, offset as i16, Width::DW);
        self.asm.bind(none);
        value
    }

    pub(crate) fn set_span(&mut self, span: Span) {
        self.asm.set_span(span);
    }

    /// Stores zeros over bytes `from..to` of `place`, where a value must be
    /// canonical (see `canonical`).
    pub(crate) fn zero_range(&mut self, place: Place, from: u32, to: u32) {
        if from < to && self.canonical {
            self.zero(place.offset(from), to - from);
        }
    }

    /// Stores zeros over `size` bytes (a long stretch in one helper call:
    /// `bpf_probe_read_kernel` from address 0 fails at once and then zeroes
    /// its destination, as the kernel documents).
    pub(crate) fn zero(&mut self, place: Place, size: u32) {
        if size > STACK_VALUE_MAX {
            let dst = self.addr(place);
            self.asm.call(
                crate::asm::Helper::PROBE_READ_KERNEL,
                &[Src::Reg(dst), Src::Imm(size as i32), Src::Imm(0)],
                None,
            );
            return;
        }
        let mut off = 0;
        while off < size {
            let (w, n) = chunk(place.offset(off).base_offset(), size - off);
            self.store(place.offset(off), Src::Imm(0), w);
            off += n;
        }
    }

    pub(crate) fn store(&mut self, place: Place, src: Src, w: Width) {
        match place {
            Place::Stack(slot, off) => {
                let off = self.asm.offset16(off);
                self.asm.store_stack(slot, off, src, w)
            }
            Place::Ptr(base, off) => {
                let off = self.asm.offset16(off);
                self.asm.store(base, off, src, w)
            }
        }
    }

    pub(crate) fn load(&mut self, dst: VReg, place: Place, w: Width) {
        match place {
            Place::Stack(slot, off) => {
                let off = self.asm.offset16(off);
                self.asm.load_stack(dst, slot, off, w)
            }
            Place::Ptr(base, off) => {
                let off = self.asm.offset16(off);
                self.asm.load(dst, base, off, w)
            }
        }
    }

    /// A register holding the address of `place`.
    pub(crate) fn addr(&mut self, place: Place) -> VReg {
        let r = self.asm.vreg();
        match place {
            Place::Stack(slot, off) => {
                let off = self.asm.offset16(off);
                self.asm.stack_addr(r, slot, off)
            }
            Place::Ptr(base, off) => {
                self.asm.mov(r, Src::Reg(base));
                if off != 0 {
                    self.asm.alu(crate::asm::AluOp::Add, r, Src::Imm(off));
                }
            }
        }
        r
    }

    /// Copies `size` bytes from one place to another with loads and stores
    /// (a long stretch in one `bpf_probe_read_kernel`).
    pub(crate) fn copy(&mut self, dst: Place, src: Place, size: u32) {
        if size > STACK_VALUE_MAX {
            let (to, from) = (self.addr(dst), self.addr(src));
            self.asm.call(
                crate::asm::Helper::PROBE_READ_KERNEL,
                &[Src::Reg(to), Src::Imm(size as i32), Src::Reg(from)],
                None,
            );
            return;
        }
        let tmp = self.asm.vreg();
        let mut off = 0;
        while off < size {
            // Both sides must be aligned for the width (the verifier rejects
            // misaligned stack accesses).
            let (w, n) = chunk(
                src.offset(off).base_offset() | dst.offset(off).base_offset(),
                size - off,
            );
            self.load(tmp, src.offset(off), w);
            self.store(dst.offset(off), Src::Reg(tmp), w);
            off += n;
        }
    }

    /// A new stack slot big enough for `t` (not zeroed: what is written into
    /// it writes every byte, see [`Lower::write_into`]).
    pub(crate) fn temp(&mut self, t: &Type) -> Place {
        self.value_place(t.layout().size())
    }

    /// The type of `e`'s value; for a variable, the type it is stored as
    /// (the widest of its assignments: a read where it holds a shorter
    /// string is typed narrower, but the bytes are laid out as stored).
    pub(crate) fn ty(&self, e: &syntax::ast::Expr) -> Type {
        if let syntax::ast::ExprKind::Var(name) = &e.kind
            && let Some(t) = self.probe.vars.get(self.probe.var_key(e.id, name))
        {
            return t.clone();
        }
        self.probe.types.get(&e.id).cloned().unwrap_or(Type::I64)
    }

    /// Increments one of the loss counters (per-CPU, so no atomics).
    pub(crate) fn count_loss(&mut self, which: abi::CounterIndex) {
        self.bump_counter(abi::COUNTERS_MAP, which as u32);
    }

    /// Adds one to slot `index` of a per-CPU `u64` array of counters (per-CPU,
    /// so no atomics).
    pub(crate) fn bump_counter(&mut self, map_name: &str, index: u32) {
        let key = self.asm.stack(8);
        self.asm
            .store_stack(key, 0, Src::Imm(index as i32), Width::W);
        let map = self.asm.vreg();
        self.asm.map_ptr(map, map_name);
        let key_ptr = self.asm.vreg();
        self.asm.stack_addr(key_ptr, key, 0);
        let value = self.asm.vreg();
        self.asm.call(
            crate::asm::Helper::MAP_LOOKUP_ELEM,
            &[Src::Reg(map), Src::Reg(key_ptr)],
            Some(value),
        );
        let done = self.asm.label();
        self.asm.br(crate::asm::Cond::Eq, value, Src::Imm(0), done);
        let n = self.asm.vreg();
        self.asm.load(n, value, 0, Width::DW);
        self.asm.alu(crate::asm::AluOp::Add, n, Src::Imm(1));
        self.asm.store(value, 0, Src::Reg(n), Width::DW);
        self.asm.bind(done);
    }

    pub(crate) fn map_index(&self, e: &syntax::ast::Expr) -> usize {
        self.probe.maps.get(&e.id).copied().unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::SymbolNames;

    #[test]
    fn map_names_weft_makes_fit_the_kernel_and_stay_unique() {
        let mut names = SymbolNames::default();
        // Two streams whose names share their first 15 bytes.
        assert_eq!(
            names.unique_kernel("state_http_request_in"),
            "state_http_requ"
        );
        assert_eq!(
            names.unique_kernel("state_http_request_out"),
            "state_http_re_2"
        );
        assert_eq!(names.unique_kernel("state_http_requ"), "state_http_re_3");
        // weft's own names are taken; a stack map's prefix is kept for them.
        assert_eq!(names.unique_kernel(abi::EVENTS_MAP), "event_ringbuf_2");
        assert_eq!(names.unique_kernel("stacks_x"), "_stacks_x");
        // Programs keep up to 64 bytes.
        assert_eq!(
            names.unique("a_program_named_for_a_long_function_name"),
            "a_program_named_for_a_long_function_name"
        );
    }

    #[test]
    fn many_programs_on_one_probe_number_on_from_the_last() {
        let mut names = SymbolNames::default();
        // A name someone already took is skipped, wherever it falls.
        assert_eq!(names.unique("sys_enter_read_3"), "sys_enter_read_3");
        let given: Vec<String> = (0..1000).map(|_| names.unique("sys_enter_read")).collect();
        assert_eq!(given[0], "sys_enter_read");
        assert_eq!(given[1], "sys_enter_read_2");
        assert_eq!(given[2], "sys_enter_read_4");
        assert_eq!(given[999], "sys_enter_read_1001");
        // Near the kernel's 15 bytes the stem gives way to the suffix.
        let kernel: Vec<String> = (0..11)
            .map(|_| names.unique_kernel("state_http_req"))
            .collect();
        assert_eq!(kernel[9], "state_http_r_10");
        assert_eq!(kernel[10], "state_http_r_11");
    }
}
