//! The checker's result: the side tables the code generator reads next to the AST.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;

use ktypes::TpField;
use source::Span;
use syntax::ast::NodeId;

use crate::config::{DeclaredMap, ScriptConfig};
use crate::providers::ResolvedProbe;
use crate::types::Type;

/// One map of the script, with the types inferred over all probes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MapInfo {
    /// Name with `@` (`@start`, `@`).
    pub name: String,
    /// `None` for a keyless map.
    pub key: Option<Type>,
    /// Stored value type, or `Type::Agg` for aggregations.
    pub value: Type,
    /// Where the map first got its value type.
    pub first_assigned: Span,
    /// `let @m = kind(n);`, if the script declares the map.
    pub decl: Option<DeclaredMap>,
    /// Some probe deletes an element of it (`delete(@m[k])`, `delete(@m)`).
    pub deleted: bool,
    /// The exporters' label name of each key argument, after the key
    /// expressions of the stores (see [`crate::metrics::key_labels`]).
    pub key_labels: Vec<Option<String>>,
}

impl MapInfo {
    /// Whether the map lives in a one-entry per-CPU array (key `0u32`, a
    /// lookup the verifier inlines and that never misses) rather than a
    /// hash: an undeclared keyless aggregation that no probe deletes, whose
    /// values tell whether it ever fired (user space prints an untouched one
    /// as bpftrace prints a missing entry). `sum()` cannot tell a sum of
    /// zeros from nothing, so it stays a hash.
    pub fn array_backed(&self) -> bool {
        self.decl.is_none()
            && !self.deleted
            && self.key.is_none()
            && matches!(&self.value, Type::Agg(a) if !matches!(a, abi::Aggregation::Sum { .. }))
    }
}

/// A printf (or other formatted output) call site.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PrintfSite {
    /// The format, parsed once here; codegen hands it on in the manifest.
    pub format: abi::printf::Format,
    /// Stored types of the arguments, in order.
    pub args: Vec<Type>,
    /// What user space does with the text: print it, print the file it
    /// names (`cat`), or run it (`system`).
    pub action: abi::PrintfAction,
    /// The call (what `errorf`/`warnf` name when they print).
    pub span: source::Span,
}

/// A builtin variable as the checker resolved it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BuiltinVar {
    /// Its name: the key of its definition (`sema::builtins::VARIABLES`)
    /// and of its lowering (`arg` for `arg0`..`argN`).
    pub name: &'static str,
    /// The number of a numbered one (`arg2`: 2), else 0.
    pub index: u8,
}

/// A call of a builtin function, as the checker resolved it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Call {
    /// The builtin's name: the key of its definition
    /// (`sema::builtins::FUNCTIONS`) and of its lowering.
    pub name: &'static str,
    /// What the type rule found that the lowering needs.
    pub value: CallValue,
}

/// What a builtin's type rule hands its lowering, besides the types.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CallValue {
    None,
    /// A number known when checking: `uaddr`'s address, `reg`'s offset,
    /// `bswap`'s width.
    Constant(i64),
    /// An index into one of the program's tables: a printf site, a time
    /// format, a `join()` delimiter.
    Site(usize),
    /// An address in a position-independent binary, found at run time:
    /// `linked` (an address as linked) moved by as much as the probe's own
    /// address (`bpf_get_func_ip`) is from where it was linked (`probe_linked`).
    LoadRelative {
        linked: u64,
        probe_linked: u64,
    },
}

/// `args->field` resolved against the tracepoint format.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldAccess {
    pub field: TpField,
}

/// Facts about expression nodes, by node. Node ids are small dense
/// numbers, not attacker-chosen keys: a fast fixed hasher (foldhash) keeps
/// the thousands of lookups of a large script cheap and the order stable.
pub type NodeMap<V> = HashMap<NodeId, V, foldhash::fast::FixedState>;

/// One program to generate: a probe body for one concrete attach point.
#[derive(Clone, Debug)]
pub struct TypedProbe {
    /// Index of the probe in `Program::items`.
    pub item: usize,
    pub resolved: std::sync::Arc<ResolvedProbe>,
    pub types: NodeMap<Type>,
    pub builtins: NodeMap<BuiltinVar>,
    /// Builtin function calls, by call expression.
    pub calls: NodeMap<Call>,
    pub fields: NodeMap<FieldAccess>,
    /// What `args` as a value is made of (a uprobe's parameters, from
    /// DWARF): one record field per entry, read from the context.
    pub args_fields: Vec<TpField>,
    /// `ptr->member` and `value.member` resolved through BTF.
    pub members: NodeMap<crate::check::members::MemberAccess>,
    /// Map index of every map expression.
    pub maps: NodeMap<usize>,
    /// Scratch variables and their stored types (in a stream clause: the
    /// instance's fields).
    pub vars: BTreeMap<String, Type>,
    /// The stream clause this program belongs to, if any.
    pub stage: Option<crate::streams::StageRef>,
    /// `args->NAME` in a `stream:NAME` handler.
    pub stream_args: NodeMap<crate::streams::StreamArg>,
    /// Identifiers that name a kernel enumerator (`TCP_FIN_WAIT1`), with its value.
    pub constants: NodeMap<i64>,
    /// The size of what a pointer points to, by node, where C scales by it:
    /// `ptr + n` and `ptr - n` (the binary node), `ptr++`, `@p += n` (the
    /// node that changes it) and `ptr[i]` (the index node).
    pub scales: NodeMap<u32>,
    /// `record.name` and `tuple[N]`: the field's position in its record or
    /// tuple, by `Field` or `Index` node.
    pub record_fields: NodeMap<u32>,
    /// The key in `vars` of each `$x`, `let` and `for` variable whose key
    /// is not its name (a later declaration of the name in another scope).
    pub var_keys: NodeMap<String>,
    /// `for ($i : a..b)`: the kernel's numeric iterator kfuncs, by their
    /// vmlinux BTF ids (one set for the program; `None` without ranges).
    pub range_iter: Option<RangeIter>,
    /// The printf site of the warning a node sends when its run-time check
    /// fails (`check::runtime_checks`): `a / b`, `a % b` (the binary node)
    /// and `x /= b`, `x %= b` (the target's node) whose divisor may be
    /// zero; `a[i]` whose index may be past the array's end.
    pub runtime_warnings: NodeMap<usize>,
}

/// The BTF ids of `bpf_iter_num_new`, `bpf_iter_num_next` and
/// `bpf_iter_num_destroy` (Linux 6.4 and later): a range loop runs in the
/// program itself, the verifier bounding it through the iterator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RangeIter {
    pub new: u32,
    pub next: u32,
    pub destroy: u32,
}

impl TypedProbe {
    /// The key in `vars` of the variable `name` at node `id`.
    pub fn var_key<'a>(&'a self, id: NodeId, name: &'a str) -> &'a str {
        self.var_keys.get(&id).map_or(name, String::as_str)
    }
}

/// A checked script.
#[derive(Clone, Debug, Default)]
pub struct TypedProgram {
    /// How each kernel function probe runs (fentry or kprobe), and why.
    pub planned: Vec<crate::mechanism::Planned>,
    pub probes: Vec<TypedProbe>,
    pub maps: Vec<MapInfo>,
    pub printfs: Vec<PrintfSite>,
    pub time_formats: Vec<String>,
    pub join_delimiters: Vec<String>,
    /// Positional parameters as given on the command line.
    pub positional: Vec<String>,
    /// Every `stream`, in written order.
    pub streams: Vec<crate::streams::StreamInfo>,
    /// `stream:NAME` handlers: not programs of their own; their bodies run
    /// inside the end programs of their stream.
    pub handlers: Vec<TypedProbe>,
    /// Pid of the `-c` command, compiled in as `cpid`.
    pub cpid: Option<u32>,
    /// `-p PID`: the process every event probe is limited to.
    pub pid_filter: Option<u32>,
    /// The pid namespace weft runs in when it is not the initial one:
    /// `pid`, `tid` (and `-p`, `cpid` and user stacks, which compare or
    /// keep them) are read as seen from there.
    pub pid_namespace: Option<ktypes::PidNamespace>,
    /// `--cgroup`/`--cgroup-tree`: the cgroup every event probe is limited to.
    pub cgroup_filter: Option<abi::CgroupFilter>,
    /// The hierarchy filter of each distinct `cgroup_path(id, filter)`.
    pub cgroup_path_filters: Vec<String>,
    /// Where each distinct `skboutput()` writes, indexed by its records' id.
    pub skb_outputs: Vec<abi::SkbOutputSite>,
    /// The script's `config` block.
    pub config: ScriptConfig,
    /// The scalar map `tseries()` reads the time from instead of the clock
    /// (`BPFTRACE_DUMMY_TS_MAP`, for tests).
    pub dummy_clock: Option<usize>,
}

impl TypedProgram {
    /// Whether some probe or stream handler calls `exit()` (or `assert()`,
    /// which exits when its condition is false).
    pub fn calls_exit(&self) -> bool {
        self.probes.iter().chain(&self.handlers).any(|p| {
            p.calls
                .values()
                .any(|c| c.name == "exit" || c.name == "assert")
        })
    }

    pub fn map_index(&self, name: &str) -> Option<usize> {
        self.maps.iter().position(|m| m.name == name)
    }
}

/// `weft -d types`: maps, variables and probes with their types.
pub fn print_types(p: &TypedProgram) -> String {
    let mut s = String::new();
    for key in crate::config::KEYS {
        if p.config.is_set(key.name)
            && let Some(v) = p.config.get(key.name)
        {
            writeln!(s, "config {} = {v}", key.name).ok();
        }
    }
    for m in &p.maps {
        let decl = m
            .decl
            .as_ref()
            .map(|d| format!(" ({}, {} keys)", d.kind.as_str(), d.max_entries))
            .unwrap_or_default();
        match &m.key {
            Some(k) => writeln!(s, "map {}[{k}]: {}{decl}", m.name, m.value),
            None => writeln!(s, "map {}: {}{decl}", m.name, m.value),
        }
        .ok();
    }
    for (i, f) in p.printfs.iter().enumerate() {
        let args: Vec<String> = f.args.iter().map(Type::to_string).collect();
        if f.action == abi::PrintfAction::Value {
            writeln!(s, "print #{i} ({})", args.join(", ")).ok();
        } else {
            writeln!(s, "printf #{i} {:?} ({})", f.format.text(), args.join(", ")).ok();
        }
    }
    for st in &p.streams {
        writeln!(
            s,
            "stream {} (timeout {}ns, max {}{})",
            st.name,
            st.timeout_ns,
            st.max_instances,
            if st.incomplete { ", incomplete" } else { "" }
        )
        .ok();
        for (i, stage) in st.stages.iter().enumerate() {
            let lookup = match stage.lookup {
                crate::streams::KeyLookup::Primary => "state".to_string(),
                crate::streams::KeyLookup::Link(l) => format!("link{l}"),
            };
            let link: String = stage
                .links
                .iter()
                .map(|&l| {
                    let slot = &st.links[l];
                    format!(", files into link{l} ({} as {})", slot.key, slot.name)
                })
                .collect();
            let link = if stage.keep_last {
                format!("{link}, keeps the last hit")
            } else {
                link
            };
            writeln!(
                s,
                "  {i}: {} {} by {} via {lookup}{link}",
                stage.role.as_str(),
                stage.name,
                stage.key
            )
            .ok();
        }
        for (name, t) in &st.fields {
            writeln!(s, "  ${name}: {t}").ok();
        }
    }
    for probe in &p.probes {
        writeln!(
            s,
            "probe {} ({})",
            probe.resolved.name, probe.resolved.section
        )
        .ok();
        for (name, t) in &probe.vars {
            writeln!(s, "  ${name}: {t}").ok();
        }
    }
    s
}
