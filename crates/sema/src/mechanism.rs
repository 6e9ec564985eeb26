//! fentry or kprobe: weft uses what the kernel has.
//!
//! A kernel function can be traced two ways: a BPF trampoline (`fentry`,
//! `fexit`; cheap, typed by BTF) or a kprobe (`kprobe`, `kretprobe`; a
//! breakpoint, works without BTF). A script names one, but kernels lack one
//! or the other (CONFIG_KPROBES off; no trampolines on some architectures,
//! under some lockdown modes, or where loading tracing programs is refused).
//! [`choose`] is the whole decision, a pure function of the written probe,
//! the kernel's [`TracingFeatures`] and what the body uses. The checker
//! makes it once per attach point ([`plan`]) before anything else: when
//! neither mechanism can run a probe it reports what the kernel lacks
//! ([`missing_kernel_features`], E0454/E0408) and nothing more; otherwise it
//! resolves each probe for the chosen mechanism ([`resolve_probe`]) and keeps
//! the plan in the typed program, for `-v` to say what was chosen and why.
//!
//! | written | BTF | trampolines | kprobes | runs as |
//! |---|---|---|---|---|
//! | fentry/fexit | yes | yes | any | fentry/fexit |
//! | fentry | yes | no | yes | kprobe: `args->NAME` from the argument registers, typed by BTF |
//! | fexit | yes | no | yes | kretprobe: `retval` from rax, typed by BTF; `args->NAME` rejected (the registers are reused by then) |
//! | fentry/fexit | no | any | yes | kprobe/kretprobe when `args` is not used (`retval` a u64) |
//! | kprobe/kretprobe | any | any | yes | kprobe/kretprobe |
//! | kprobe/kretprobe | yes | yes | no | fentry/fexit when only `argN`/`retval` are read and there is no `+OFFSET`: `argN` is the Nth BTF parameter |
//! | anything else | | | | neither: rejected with the reason |
//!
//! fexit run as a kretprobe does not save the entry values in a per-thread
//! map: a script that wants them says so with an fentry probe and a map
//! keyed by `tid`, the way kretprobe scripts do; the diagnostic says how.

use ktypes::{KernelInfo, Support, TracingFeatures};
use source::{Diagnostic, Span};
use syntax::ast::{Block, Expr, ExprKind, ForIter, Item, Probe, Program, Stmt, StmtKind};

use crate::providers::kprobe::{Kind, resolve_running_as};
use crate::providers::{AttachPointRef, ResolvedProbe, provider_def, resolve_for};

/// The kernel function probe as written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Written {
    Kprobe,
    Kretprobe,
    Fentry,
    Fexit,
}

impl Written {
    /// The kernel function probe a provider name (or alias) denotes.
    pub fn of_provider(provider: &str) -> Option<Written> {
        Some(match provider_def(provider)?.name {
            "kprobe" => Written::Kprobe,
            "kretprobe" => Written::Kretprobe,
            "fentry" => Written::Fentry,
            "fexit" => Written::Fexit,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            Written::Kprobe => "kprobe",
            Written::Kretprobe => "kretprobe",
            Written::Fentry => "fentry",
            Written::Fexit => "fexit",
        }
    }

    fn is_return(self) -> bool {
        matches!(self, Written::Kretprobe | Written::Fexit)
    }

    fn is_trampoline(self) -> bool {
        matches!(self, Written::Fentry | Written::Fexit)
    }

    fn kind(self) -> Kind {
        match self {
            Written::Kprobe => Kind::Kprobe,
            Written::Kretprobe => Kind::Kretprobe,
            Written::Fentry => Kind::Fentry,
            Written::Fexit => Kind::Fexit,
        }
    }

    /// The same probe through the other mechanism, as `-v` and help name it.
    fn other_name(self) -> &'static str {
        match self {
            Written::Kprobe => "fentry",
            Written::Kretprobe => "fexit",
            Written::Fentry => "kprobe",
            Written::Fexit => "kretprobe",
        }
    }
}

/// What a probe's predicate and body read that matters to the choice.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Usage {
    /// `args` (`args->NAME`): needs BTF, and entry values in an exit probe.
    pub named_args: bool,
    /// The attach point has `+OFFSET`: only a kprobe attaches inside a function.
    pub offset: bool,
    /// A call of a helper the kernel gives only to BTF-typed tracing
    /// programs (`socket_cookie`, `skboutput`): a `rawtracepoint` probe then
    /// loads as one (`providers::rawtracepoint::as_tracing_program`).
    pub tracing_helpers: bool,
}

/// How a kernel function probe runs.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Mechanism {
    /// A BPF trampoline: fentry (or fexit for return probes).
    Fentry,
    /// A kprobe (or kretprobe for return probes).
    Kprobe,
    /// Neither works on this kernel, and why.
    Neither(String),
}

/// The decision and its reason in words, for `-v`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Choice {
    pub mechanism: Mechanism,
    pub why: String,
}

/// Chooses the mechanism for a probe written as `written` on a kernel with
/// `features`, given what the body `uses`. Pure: the table in the module docs.
pub fn choose(written: Written, features: &TracingFeatures, uses: Usage) -> Choice {
    let (btf, trampolines, kprobes) = (
        features.btf.is_yes(),
        features.trampolines.is_yes(),
        features.kprobes.is_yes(),
    );
    let name = written.name();
    let other = written.other_name();
    let ok = |mechanism: Mechanism, why: String| Choice { mechanism, why };
    let neither = |why: String| Choice {
        mechanism: Mechanism::Neither(why.clone()),
        why,
    };
    if written.is_trampoline() {
        if btf && trampolines {
            return ok(
                Mechanism::Fentry,
                format!("{name}: the kernel has BTF and BPF trampolines work"),
            );
        }
        let lacking = if btf {
            "BPF trampolines do not work"
        } else {
            "the kernel has no BTF"
        };
        if !kprobes {
            return neither(format!(
                "{lacking}, and the kernel has no kprobes to run {name} as a {other}"
            ));
        }
        if uses.named_args && !btf {
            return neither(
                "the kernel has no BTF, which `args->NAME` needs to name and type the arguments"
                    .to_string(),
            );
        }
        if uses.named_args && written.is_return() {
            return neither(format!(
                "{lacking}, so {name} would run as a {other}, and `args->NAME` in it needs the values at entry: the registers that held them are reused by the time the function returns"
            ));
        }
        let typed = if btf {
            if written.is_return() {
                ", `retval` typed by BTF"
            } else {
                ", `args->NAME` read from the argument registers, typed by BTF"
            }
        } else {
            ""
        };
        return ok(
            Mechanism::Kprobe,
            format!("{name} runs as a {other}: {lacking}, and kprobes exist{typed}"),
        );
    }
    if kprobes {
        return ok(Mechanism::Kprobe, format!("{name}: the kernel has kprobes"));
    }
    if !(btf && trampolines) {
        let lacking = if btf {
            "BPF trampolines do not work"
        } else {
            "it has no BTF"
        };
        return neither(format!(
            "the kernel has no kprobes (CONFIG_KPROBES is off), and {lacking}, so {name} cannot run as {other} either"
        ));
    }
    if uses.offset {
        return neither(format!(
            "the kernel has no kprobes (CONFIG_KPROBES is off), and {other}, which it has, attaches at a function's entry only, not at an offset"
        ));
    }
    if uses.named_args {
        return neither(format!(
            "the kernel has no kprobes (CONFIG_KPROBES is off); {name} may run as {other} when it reads only `argN` and `retval`"
        ));
    }
    ok(
        Mechanism::Fentry,
        format!(
            "{name} runs as {other}: the kernel has no kprobes, BPF trampolines work, and BTF types `argN`{}",
            if written.is_return() {
                " and `retval`"
            } else {
                ""
            }
        ),
    )
}

/// One kernel function attach point of a script and the mechanism chosen for it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Planned {
    /// The item (probe) of the script it belongs to.
    pub item: usize,
    pub span: Span,
    /// The attach point as written.
    pub raw: String,
    pub written: Written,
    /// The function (the last part, without `+OFFSET`).
    pub function: String,
    pub choice: Choice,
}

/// The choice for every kernel function attach point of the script's probes
/// (stream clauses run as written), or nothing when the kernel's features
/// are unknown.
pub fn plan(program: &Program, kernel: &dyn KernelInfo) -> Vec<Planned> {
    let mut out = Vec::new();
    // Probing the kernel's features loads BTF and a test program: only for
    // kernel function probes.
    let mut features = None;
    for (index, item) in program.items.iter().enumerate() {
        let Item::Probe(probe) = item else { continue };
        for ap in &probe.attach_points {
            let Some(written) = Written::of_provider(&ap.provider) else {
                continue;
            };
            let Some(f) = features.get_or_insert_with(|| kernel.tracing_features()) else {
                return Vec::new();
            };
            let target = ap.parts.last().map(String::as_str).unwrap_or("");
            let (function, offset) = match target.split_once('+') {
                Some((f, _)) => (f, true),
                None => (target, false),
            };
            let uses = Usage {
                offset,
                ..usage(probe)
            };
            out.push(Planned {
                item: index,
                span: ap.span,
                raw: ap.raw.clone(),
                written,
                function: function.to_string(),
                choice: choose(written, f, uses),
            });
        }
    }
    out
}

/// Kernel function probes that can run neither as written nor through the
/// other mechanism, one error each (E0454 for fentry/fexit, E0408 for
/// kprobe/kretprobe), with the system call tracepoint to use instead when
/// there is one: the user hears what the kernel lacks, not just that a
/// probe does not fit.
pub fn missing_kernel_features(planned: &[Planned], kernel: &dyn KernelInfo) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for p in planned {
        let Mechanism::Neither(why) = &p.choice.mechanism else {
            continue;
        };
        let Some(features) = kernel.tracing_features() else {
            continue;
        };
        let kind = p.written.name();
        let function = p.function.as_str();
        let syscall = function
            .trim_start_matches("vfs_")
            .trim_start_matches("ksys_")
            .trim_start_matches("__x64_sys_");
        let direction = if p.written.is_return() {
            "exit"
        } else {
            "enter"
        };
        let tp = format!("sys_{direction}_{syscall}");
        let instead = kernel
            .tracepoint_format("syscalls", &tp)
            .is_ok()
            .then(|| format!("tracepoint:syscalls:{tp}"));
        out.push(if p.written.is_trampoline() {
            let lacking = match (&features.trampolines, &features.btf) {
                (Support::No(why), _) | (Support::Yes, Support::No(why)) => why.as_str(),
                (Support::Yes, Support::Yes) => "BPF trampolines do not work",
            };
            crate::diagnostics::trampolines_missing(p.span, kind, lacking, why, instead.as_deref())
        } else {
            let lacking = features.kprobes.why_not().unwrap_or("it has no kprobes");
            crate::diagnostics::kprobes_missing(p.span, kind, lacking, why, instead.as_deref())
        });
    }
    out
}

/// Resolves an attach point for the mechanism [`plan`] chose for it
/// (`planned`); as written when it is not a kernel function probe or the
/// kernel's features are unknown.
pub(crate) fn resolve_probe(
    ap: &AttachPointRef<'_>,
    planned: Option<&Planned>,
    kernel: &dyn KernelInfo,
    pid: Option<u32>,
) -> Result<Vec<ResolvedProbe>, Diagnostic> {
    let Some(p) = planned else {
        return resolve_for(ap, kernel, pid);
    };
    let other = match p.choice.mechanism {
        Mechanism::Fentry => !p.written.is_trampoline(),
        Mechanism::Kprobe => p.written.is_trampoline(),
        // Reported by `missing_kernel_features` before anything is resolved.
        Mechanism::Neither(_) => false,
    };
    resolve_running_as(ap, kernel, p.written.kind(), other)
}

/// What the predicate and body of `probe` use.
pub fn usage(probe: &Probe) -> Usage {
    let mut u = Usage::default();
    if let Some(p) = &probe.predicate {
        expr(p, &mut u);
    }
    block(&probe.body, &mut u);
    u
}

fn block(b: &Block, u: &mut Usage) {
    for s in &b.stmts {
        stmt(s, u);
    }
    if let Some(t) = &b.tail {
        expr(t, u);
    }
}

fn stmt(s: &Stmt, u: &mut Usage) {
    match &s.kind {
        StmtKind::Expr(e) | StmtKind::Discard(e) | StmtKind::Return(Some(e)) => expr(e, u),
        StmtKind::Assign { target, value, .. } => {
            expr(target, u);
            expr(value, u);
        }
        StmtKind::Let { value, .. } => {
            if let Some(v) = value {
                expr(v, u);
            }
        }
        StmtKind::If {
            cond,
            then,
            else_branch,
        } => {
            expr(cond, u);
            block(then, u);
            if let Some(e) = else_branch {
                stmt(e, u);
            }
        }
        StmtKind::Unroll { count: c, body } | StmtKind::While { cond: c, body } => {
            expr(c, u);
            block(body, u);
        }
        StmtKind::For { iter, body, .. } => {
            match iter {
                ForIter::Map(e) => expr(e, u),
                ForIter::Range { start, end } => {
                    expr(start, u);
                    expr(end, u);
                }
            }
            block(body, u);
        }
        StmtKind::Block(b) => block(b, u),
        StmtKind::Break | StmtKind::Continue | StmtKind::Return(None) | StmtKind::Import(_) => {}
    }
}

fn expr(e: &Expr, u: &mut Usage) {
    match &e.kind {
        ExprKind::Ident(name) if name == "args" => u.named_args = true,
        ExprKind::Call { name, args, .. } if crate::builtins::needs_tracing_program(name) => {
            u.tracing_helpers = true;
            args.iter().for_each(|a| expr(a, u));
        }
        ExprKind::Map { keys: items, .. }
        | ExprKind::Call { args: items, .. }
        | ExprKind::Tuple(items) => items.iter().for_each(|i| expr(i, u)),
        ExprKind::Unary { expr: x, .. }
        | ExprKind::Field { expr: x, .. }
        | ExprKind::TupleIndex { expr: x, .. }
        | ExprKind::Cast { expr: x, .. }
        | ExprKind::IncDec { target: x, .. } => expr(x, u),
        ExprKind::Binary { lhs, rhs, .. }
        | ExprKind::Index {
            expr: lhs,
            index: rhs,
        } => {
            expr(lhs, u);
            expr(rhs, u);
        }
        ExprKind::Ternary { cond, then, else_ } => {
            expr(cond, u);
            if let Some(t) = then {
                expr(t, u);
            }
            expr(else_, u);
        }
        ExprKind::Record(fields) => fields.iter().for_each(|(_, v)| expr(v, u)),
        ExprKind::Block(b) => block(b, u),
        ExprKind::If { cond, then, else_ } => {
            expr(cond, u);
            block(then, u);
            if let Some(e) = else_ {
                expr(e, u);
            }
        }
        ExprKind::Error
        | ExprKind::Int { .. }
        | ExprKind::Str(_)
        | ExprKind::Bool(_)
        | ExprKind::Ident(_)
        | ExprKind::Var(_)
        | ExprKind::Positional(_)
        | ExprKind::PositionalCount
        | ExprKind::Sizeof(_)
        | ExprKind::Offsetof { .. }
        | ExprKind::Typeof(_) => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const WRITTEN: [Written; 4] = [
        Written::Kprobe,
        Written::Kretprobe,
        Written::Fentry,
        Written::Fexit,
    ];

    fn features(bits: u8) -> TracingFeatures {
        TracingFeatures::from_flags(bits & 4 != 0, bits & 2 != 0, bits & 1 != 0)
    }

    fn short(m: &Mechanism) -> &'static str {
        match m {
            Mechanism::Fentry => "fentry",
            Mechanism::Kprobe => "kprobe",
            Mechanism::Neither(_) => "-",
        }
    }

    /// Every written probe × every kernel × every usage, one letter each:
    /// the whole table of the module docs.
    #[test]
    fn the_whole_decision_table() {
        let mut rows = Vec::new();
        for written in WRITTEN {
            for (uname, uses) in [
                ("plain", Usage::default()),
                (
                    "args",
                    Usage {
                        named_args: true,
                        offset: false,
                        ..Usage::default()
                    },
                ),
                (
                    "offset",
                    Usage {
                        named_args: false,
                        offset: true,
                        ..Usage::default()
                    },
                ),
            ] {
                let cells: Vec<&str> = (0..8u8)
                    .map(|b| short(&choose(written, &features(b), uses).mechanism))
                    .collect();
                rows.push(format!(
                    "{:9} {uname:6} {}",
                    written.name(),
                    cells.join(" ")
                ));
            }
        }
        // Columns: (btf, trampolines, kprobes) = 000 001 010 011 100 101 110 111.
        let expected = [
            "kprobe    plain  - kprobe - kprobe - kprobe fentry kprobe",
            "kprobe    args   - kprobe - kprobe - kprobe - kprobe",
            "kprobe    offset - kprobe - kprobe - kprobe - kprobe",
            "kretprobe plain  - kprobe - kprobe - kprobe fentry kprobe",
            "kretprobe args   - kprobe - kprobe - kprobe - kprobe",
            "kretprobe offset - kprobe - kprobe - kprobe - kprobe",
            "fentry    plain  - kprobe - kprobe - kprobe fentry fentry",
            "fentry    args   - - - - - kprobe fentry fentry",
            "fentry    offset - kprobe - kprobe - kprobe fentry fentry",
            "fexit     plain  - kprobe - kprobe - kprobe fentry fentry",
            "fexit     args   - - - - - - fentry fentry",
            "fexit     offset - kprobe - kprobe - kprobe fentry fentry",
        ];
        assert_eq!(rows, expected, "\n{}", rows.join("\n"));
    }

    #[test]
    fn reasons_say_why() {
        let no_tramp = features(0b101);
        let c = choose(
            Written::Fexit,
            &no_tramp,
            Usage {
                named_args: true,
                offset: false,
                ..Usage::default()
            },
        );
        let Mechanism::Neither(why) = &c.mechanism else {
            panic!("{c:?}")
        };
        assert!(
            why.contains("reused by the time the function returns"),
            "{why}"
        );
        let c = choose(Written::Fentry, &no_tramp, Usage::default());
        assert_eq!(
            c.why,
            "fentry runs as a kprobe: BPF trampolines do not work, and kprobes exist, `args->NAME` read from the argument registers, typed by BTF"
        );
        let c = choose(Written::Kprobe, &features(0b110), Usage::default());
        assert_eq!(
            c.why,
            "kprobe runs as fentry: the kernel has no kprobes, BPF trampolines work, and BTF types `argN`"
        );
        let c = choose(
            Written::Kprobe,
            &features(0b110),
            Usage {
                named_args: false,
                offset: true,
                ..Usage::default()
            },
        );
        assert!(matches!(c.mechanism, Mechanism::Neither(ref w) if w.contains("not at an offset")));
        let c = choose(Written::Fentry, &features(0), Usage::default());
        assert_eq!(
            c.why,
            "the kernel has no BTF, and the kernel has no kprobes to run fentry as a kprobe"
        );
    }

    #[test]
    fn usage_finds_args_anywhere() {
        let parse = |src: &str| {
            let mut map = source::SourceMap::new();
            let id = map.add("t.bt", src);
            let (program, _) = syntax::parse(map.file(id));
            match &program.items[0] {
                Item::Probe(p) => usage(p),
                _ => panic!("not a probe"),
            }
        };
        assert!(!parse("kprobe:f { @[arg0] = count(); }").named_args);
        assert!(parse("fentry:f /args->count > 1/ { @ = count(); }").named_args);
        assert!(parse("fentry:f { if (1) { @[str(args->buf)] = count(); } }").named_args);
        assert!(parse("fentry:f { $x = (1, args->count).1; }").named_args);
    }
}
