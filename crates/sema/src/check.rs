//! The type checker. It runs over every probe body once per concrete attach
//! point (a wildcard gives each tracepoint its own `args`), first a few
//! silent rounds to let map types settle across probes (a map may be read
//! in a probe written before the one that assigns it), then a reporting round.
//!
//! This file holds the driver and the expression rules; beside it:
//! `items` (the script's items resolved into concrete probes), `stmts`
//! (statements), `maps` (map types and references), `stream_checks`
//! (stream clauses and layouts), `members` (struct members through BTF),
//! `pointers` (`*p`, `&x`, `p[i]`, arithmetic scaled by the pointee) and
//! `call` (what a builtin's rule may ask: the builtins themselves are units
//! of `crate::builtins`).

use std::collections::{BTreeMap, HashMap};

use ktypes::{FieldKind, KernelInfo, TpField};
use source::{Diagnostic, Diagnostics, Span};
use syntax::ast::{BinaryOp, Expr, ExprKind, Item, Program, TypeName, UnaryOp};

use crate::diagnostics as diag;
use crate::providers::Context;
use crate::typed::{FieldAccess, MapInfo, PrintfSite, TypedProbe, TypedProgram};
use crate::types::{DEFAULT_STR_SIZE, Type};

mod call;
mod items;
mod maps;
mod pointers;
mod runtime_checks;
mod scopes;
mod stmts;
mod stream_checks;
mod tuples;
mod values;

use items::{Instance, Items, Role, apply_decls};

/// True when the script uses `args` or names a struct or union type (in a
/// cast, `sizeof`, `offsetof` or a declaration): what a user binary's DWARF
/// types are read for.
fn needs_c_types(program: &Program) -> bool {
    use syntax::visit::{VisitMut, walk_expr};
    struct Finder(bool);
    impl VisitMut for Finder {
        fn visit_expr(&mut self, e: &mut Expr) {
            if matches!(&e.kind, ExprKind::Ident(n) if n == "args") {
                self.0 = true;
            }
            walk_expr(self, e);
        }
        fn visit_type(&mut self, t: &mut TypeName) {
            if t.base.starts_with("struct ") || t.base.starts_with("union ") {
                self.0 = true;
            }
            syntax::visit::walk_type(self, t);
        }
    }
    let mut finder = Finder(false);
    // The walk takes the tree mutably; it changes nothing.
    let mut items = program.items.clone();
    syntax::visit::walk_items(&mut finder, &mut items);
    finder.0
}

/// A uprobe's parameters read as `args` fields, and those left out with why.
type UprobeArgs = (ktypes::TracepointFormat, Vec<(String, String)>);
pub(crate) mod members;

pub use call::CallCheck;

/// Inputs to the checker besides the AST and the kernel.
#[derive(Clone, Debug, Default)]
pub struct CheckOptions {
    /// Positional parameters `$1`, `$2`, ... as given on the command line.
    pub positional: Vec<String>,
    /// Named parameters (`-- --name=value`), read by `getopt()`.
    pub named: Vec<syntax::NamedParam>,
    /// Pid of the `-c` command, for `cpid`.
    pub cpid: Option<u32>,
    /// `-p PID`: probes fire only for this process (BEGIN, END and interval excepted).
    pub pid_filter: Option<u32>,
    /// `--unsafe`: the user takes the risks weft otherwise refuses (actions
    /// that change the system: `system()`, `signal()`, `override()`; a
    /// uprobe where weft cannot check that an instruction begins).
    pub unsafe_mode: bool,
    /// `-I DIR` and `--include FILE`: where `#include`d headers are looked
    /// for first, and headers included before the script's first line.
    pub includes: crate::macros::Includes,
    /// `--cgroup`/`--cgroup-tree`: probes fire only for tasks of this cgroup
    /// (as `-p`), resolved by the caller (`ktypes::cgroup::resolve_cgroup`).
    pub cgroup_filter: Option<abi::CgroupFilter>,
    /// The environment's `BPFTRACE_*` variables (name, value): bpftrace's
    /// config keys (`BPFTRACE_STACK_MODE`), which win over the script's
    /// `config` block, as in bpftrace. Others are ignored.
    pub env: Vec<(String, String)>,
    /// `--probe-filter REGEX`: only probes whose full name it matches are
    /// compiled (BEGIN, END, `self` and stream clauses always are).
    pub probe_filter: Option<ProbeFilter>,
    /// `--mode bench`: `bench:NAME` probes (with BEGIN and END) are the
    /// program; without it they are left out.
    pub bench: bool,
}

/// `--probe-filter`: the pattern as written and the test it stands for
/// (the caller compiles the regular expression).
#[derive(Clone)]
pub struct ProbeFilter {
    pub pattern: String,
    pub matches: std::sync::Arc<dyn Fn(&str) -> bool + Send + Sync>,
}

impl std::fmt::Debug for ProbeFilter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ProbeFilter({:?})", self.pattern)
    }
}

/// Checks a parsed program. Always returns a program; it is only usable
/// when the diagnostics hold no error.
pub fn check(
    program: &Program,
    kernel: &dyn KernelInfo,
    opts: &CheckOptions,
) -> (TypedProgram, Diagnostics) {
    // What is worked out from the kernel once (a library many uprobes name)
    // is kept for this check.
    let memoized = ktypes::Memoized::new(kernel);
    let kernel: &dyn KernelInfo = if kernel.memo().is_some() {
        kernel
    } else {
        &memoized
    };
    // fentry or kprobe, decided once per attach point; a probe neither can
    // run is all there is to say.
    let planned = crate::mechanism::plan(program, kernel);
    let missing = crate::mechanism::missing_kernel_features(&planned, kernel);
    if !missing.is_empty() {
        return (TypedProgram::default(), missing.into_iter().collect());
    }
    let plan_of: HashMap<Span, &crate::mechanism::Planned> =
        planned.iter().map(|p| (p.span, p)).collect();
    let Items {
        instances,
        stream_items,
        config,
        decls,
        mut diags,
    } = items::collect(program, kernel, opts, &plan_of);
    diags.extend(crate::macros::missing_headers(
        &program.items,
        kernel,
        &opts.includes,
    ));
    if let Some(d) = too_many_programs(program, &instances, &config) {
        diags.push(d);
        return (TypedProgram::default(), diags);
    }
    if let Some(d) = iterator_beside_others(program, &instances) {
        diags.push(d);
        return (TypedProgram::default(), diags);
    }

    let binaries = crate::builtins::uaddr::Binaries::new(kernel);
    let macros = std::cell::OnceCell::new();
    let range_iter = std::cell::OnceCell::new();
    // The script's C definitions; kernel structs they hold by value are
    // sized through BTF, read only when there are definitions.
    let mut script_types = if program
        .items
        .iter()
        .any(|i| matches!(i, Item::StructDef(_)))
    {
        let (types, ds) = crate::ctypes::ScriptTypes::collect(&program.items, kernel.btf().ok());
        diags.extend(ds);
        types
    } else {
        crate::ctypes::ScriptTypes::default()
    };
    // The structs and unions of each uprobe binary's DWARF, below the
    // script's own, read when the script names a struct or uses `args`.
    let has_uprobes = instances
        .iter()
        .any(|i| matches!(i.resolved.context, Context::Uprobe { .. }));
    let wanted = has_uprobes && needs_c_types(program);
    let mut user_binaries: Vec<&str> = instances
        .iter()
        .filter(|_| wanted)
        .filter_map(|i| match (&i.resolved.context, &i.resolved.attach) {
            (Context::Uprobe { .. }, abi::Attach::Uprobe { path, .. }) => Some(path.as_str()),
            _ => None,
        })
        .collect();
    user_binaries.sort_unstable();
    user_binaries.dedup();
    for path in user_binaries {
        if let Ok(info) = crate::providers::debuginfo::debug_info(path, kernel) {
            script_types.add_debug_records(&info);
        }
    }
    let kallsyms = crate::builtins::kaddr::Kallsyms::new();
    // One round over every probe. A reporting round starts from the known
    // maps, so a map used in a probe written before the one that first
    // assigns it has its index, and it keeps its diagnostics.
    let round = |known: Vec<MapInfo>,
                 known_fields: Vec<BTreeMap<String, Type>>,
                 known_vars: Vec<scopes::BodyFacts>,
                 report: bool| {
        let mut checker = Checker::new(
            program,
            opts,
            &config,
            known,
            report,
            &stream_items,
            known_fields,
        );
        if report {
            checker.maps = checker.known.clone();
            checker.map_index = checker.known_index.clone();
        }
        checker.binaries = Some(&binaries);
        checker.kernel = Some(kernel);
        checker.macros = Some(&macros);
        checker.range_iter = Some(&range_iter);
        checker.kallsyms = Some(&kallsyms);
        checker.script_types = Some(&script_types);
        checker.known_vars = known_vars;
        checker.run(&instances);
        checker
    };
    // A silent round learns the maps; then a reporting round on what it
    // learnt. When the reporting round changes nothing, it is the last one
    // (the usual case: two rounds in all); otherwise another silent round
    // learns from the first, up to four.
    let mut learnt = round(
        Vec::new(),
        vec![BTreeMap::new(); stream_items.len()],
        Vec::new(),
        false,
    );
    let mut silent_rounds = 1;
    let mut checker = loop {
        let known = std::mem::take(&mut learnt.maps);
        let known_fields = std::mem::take(&mut learnt.stream_fields);
        let known_vars = std::mem::take(&mut learnt.instance_vars);
        let reporting = round(
            known.clone(),
            known_fields.clone(),
            known_vars.clone(),
            true,
        );
        let settled = reporting.maps == known
            && reporting.stream_fields == known_fields
            && reporting.instance_vars == known_vars;
        if settled || silent_rounds == 4 {
            break reporting;
        }
        learnt = round(known, known_fields, known_vars, false);
        silent_rounds += 1;
    };
    let streams = checker.finish_streams(&instances);
    let mut typed = TypedProgram {
        planned,
        probes: checker.probes,
        maps: checker.maps,
        printfs: checker.printfs,
        time_formats: checker.time_formats,
        join_delimiters: checker.join_delimiters,
        streams,
        handlers: checker.handlers,
        positional: opts.positional.clone(),
        cpid: opts.cpid,
        pid_filter: opts.pid_filter,
        pid_namespace: kernel.pid_namespace(),
        cgroup_filter: opts.cgroup_filter.clone(),
        cgroup_path_filters: checker.cgroup_path_filters,
        skb_outputs: checker.skb_outputs,
        config: config.clone(),
        dummy_clock: None,
    };
    // A map assigned only in a probe that failed to resolve still needs an entry.
    typed.maps.retain(|m| !matches!(m.value, Type::Void));
    typed.dummy_clock = crate::builtins::tseries::dummy_clock(&typed, &opts.env, &mut diags);
    apply_decls(&mut typed, decls, &mut diags);
    let mut seen = std::collections::HashSet::new();
    for d in checker.diags.iter() {
        // Wildcards check one body many times: report each problem once.
        if seen.insert((d.message.clone(), d.primary_span())) {
            diags.push(d.clone());
        }
    }
    program.expansions.fix_all(&mut diags);
    diags.sort_by_position();
    (typed, diags)
}

struct Checker<'a> {
    program: &'a Program,
    opts: &'a CheckOptions,
    /// The run's settings (the script's `config` and the environment).
    config: &'a crate::config::ScriptConfig,
    /// Map types from the previous round, for reads that come before any assignment.
    known: Vec<MapInfo>,
    /// Index of each map of `known` and `maps` by name (`@x`): scripts with
    /// thousands of maps must not search them linearly.
    known_index: foldhash::HashMap<String, usize>,
    map_index: foldhash::HashMap<String, usize>,
    maps: Vec<MapInfo>,
    printfs: Vec<PrintfSite>,
    time_formats: Vec<String>,
    join_delimiters: Vec<String>,
    /// Distinct `cgroup_path()` filters, in order of first use.
    cgroup_path_filters: Vec<String>,
    /// Distinct `skboutput()` destinations, in order of first use.
    skb_outputs: Vec<abi::SkbOutputSite>,
    probes: Vec<TypedProbe>,
    diags: Diagnostics,
    report: bool,
    /// Item index of each stream.
    stream_items: &'a [usize],
    /// Each stream's `$fields` as assigned in this round.
    stream_fields: Vec<BTreeMap<String, Type>>,
    /// The previous round's fields, for reads before any assignment.
    known_fields: Vec<BTreeMap<String, Type>>,
    /// Key and link types of each stream clause, as checked in this round.
    stage_keys: HashMap<(usize, usize), (Type, Span)>,
    /// Each clause's `link` keys in written order.
    stage_links: HashMap<(usize, usize), Vec<(Type, Span)>>,
    handlers: Vec<TypedProbe>,
    /// Binaries `uaddr()` reads, shared by every round (`None`: no binaries).
    binaries: Option<&'a crate::builtins::uaddr::Binaries<'a>>,
    /// The kernel's BTF, for struct members (`->`, `.`, casts).
    /// Asked for vmlinux BTF only when a script reads a struct member:
    /// reading it costs milliseconds and megabytes.
    kernel: Option<&'a dyn KernelInfo>,
    /// The script's preprocessor constants, read on the first identifier
    /// that is no builtin (shared by every round).
    macros: Option<&'a std::cell::OnceCell<crate::macros::Macros>>,
    /// The kernel's range-iterator kfuncs, looked up in BTF once per script
    /// (a scan of every vmlinux type) on the first range loop.
    range_iter: Option<&'a std::cell::OnceCell<Option<crate::RangeIter>>>,
    /// `/proc/kallsyms`, read on the first `kaddr()` (shared by every round).
    kallsyms: Option<&'a crate::builtins::kaddr::Kallsyms>,
    /// The structs, unions and enums the script defines.
    script_types: Option<&'a crate::ctypes::ScriptTypes>,
    /// Each instance's variable types at the end of the previous round.
    known_vars: Vec<scopes::BodyFacts>,
    /// Each instance's variable types at the end of this round.
    instance_vars: Vec<scopes::BodyFacts>,
    /// The values `&$t` points to that C cannot spell (tuples, records), by
    /// the spelling their pointer type is given (`(int8, string[6]) *`).
    value_pointees: HashMap<String, Type>,
}

/// Per-program state while checking one body.
struct Scope {
    probe: TypedProbe,
    loop_depth: u32,
    /// The lexical scopes of scratch variables.
    scopes: scopes::Scopes,
    /// What the previous round found about this body's variables.
    known_vars: scopes::BodyFacts,
    /// How many enclosing branches have a literal condition that never
    /// takes them (`fail()` there is not reached).
    never_taken: u32,
    /// This round's [`scopes::BodyFacts::typed_by_values`].
    typed_by_values: BTreeMap<String, Type>,
}

impl<'a> Checker<'a> {
    fn new(
        program: &'a Program,
        opts: &'a CheckOptions,
        config: &'a crate::config::ScriptConfig,
        known: Vec<MapInfo>,
        report: bool,
        stream_items: &'a [usize],
        known_fields: Vec<BTreeMap<String, Type>>,
    ) -> Checker<'a> {
        Checker {
            program,
            opts,
            config,
            known_index: known
                .iter()
                .enumerate()
                .map(|(i, m)| (m.name.clone(), i))
                .collect(),
            map_index: Default::default(),
            known,
            maps: Vec::new(),
            printfs: Vec::new(),
            time_formats: Vec::new(),
            join_delimiters: Vec::new(),
            cgroup_path_filters: Vec::new(),
            skb_outputs: Vec::new(),
            probes: Vec::new(),
            diags: Diagnostics::new(),
            report,
            stream_items,
            stream_fields: vec![BTreeMap::new(); stream_items.len()],
            known_fields,
            stage_keys: HashMap::new(),
            stage_links: HashMap::new(),
            handlers: Vec::new(),
            binaries: None,
            kernel: None,
            macros: None,
            range_iter: None,
            kallsyms: None,
            script_types: None,
            known_vars: Vec::new(),
            instance_vars: Vec::new(),
            value_pointees: HashMap::new(),
        }
    }

    fn error(&mut self, d: Diagnostic) {
        if self.report {
            self.diags.push(d);
        }
    }

    fn run(&mut self, instances: &[Instance]) {
        for (n, inst) in instances.iter().enumerate() {
            let mut scope = Scope {
                probe: TypedProbe {
                    item: inst.item,
                    resolved: inst.resolved.clone(),
                    types: Default::default(),
                    builtins: Default::default(),
                    calls: Default::default(),
                    fields: Default::default(),
                    args_fields: Vec::new(),
                    members: Default::default(),
                    maps: Default::default(),
                    vars: Default::default(),
                    stage: None,
                    stream_args: Default::default(),
                    constants: Default::default(),
                    scales: Default::default(),
                    record_fields: Default::default(),
                    var_keys: Default::default(),
                    range_iter: None,
                    runtime_warnings: Default::default(),
                },
                loop_depth: 0,
                never_taken: 0,
                typed_by_values: BTreeMap::new(),
                known_vars: self.known_vars.get(n).cloned().unwrap_or_default(),
                scopes: scopes::Scopes::default(),
            };
            scope.scopes = scopes::Scopes::with_names(scope.known_vars.hoisted.iter());
            match (inst.role, &self.program.items[inst.item]) {
                (Role::Probe | Role::Handler { .. }, Item::Probe(probe)) => {
                    if let Some(pred) = &probe.predicate {
                        let t = self.expr(&mut scope, pred);
                        self.expect_condition(pred, &t);
                    }
                    self.block(&mut scope, &probe.body);
                    self.finish_vars(&mut scope);
                    if matches!(inst.role, Role::Handler { .. }) {
                        self.handlers.push(scope.probe);
                    } else {
                        self.probes.push(scope.probe);
                    }
                }
                (Role::Stage(stage), Item::Stream(st)) => {
                    self.stage(scope, stage, &st.stages[stage.stage]);
                }
                _ => self.instance_vars.push(scopes::BodyFacts::default()),
            }
        }
    }

    /// At the end of a body: a variable never assigned (`let $x;`) is an
    /// `int64` zero; the types are kept for the next round.
    fn finish_vars(&mut self, s: &mut Scope) {
        for t in s.probe.vars.values_mut() {
            if matches!(t, Type::Void) {
                *t = Type::I64;
            }
        }
        // Once hoisted, always: the next round reads the name in the root
        // scope, so it would not find it again.
        let mut hoisted = std::mem::take(&mut s.scopes.hoisted);
        hoisted.extend(s.known_vars.hoisted.iter().cloned());
        self.instance_vars.push(scopes::BodyFacts {
            vars: s.probe.vars.clone(),
            hoisted,
            typed_by_values: std::mem::take(&mut s.typed_by_values),
        });
    }

    fn expect_condition(&mut self, e: &Expr, t: &Type) {
        if !t.is_scalar() && !matches!(t, Type::Void) {
            self.error(diag::type_mismatch(e.span, "a condition", "an integer", t));
        }
    }

    /// Reports and returns false unless `t` is an integer (or pointer).
    fn expect_int(&mut self, e: &Expr, t: &Type, what: &str) -> bool {
        if t.is_scalar() {
            return true;
        }
        self.error(diag::type_mismatch(e.span, what, "an integer", t));
        false
    }

    fn type_name(&mut self, s: &mut Scope, t: &TypeName) -> Option<Type> {
        // `typeof(x)`: a macro's type parameter, or a `let` typed like a value.
        if let Some(of) = &t.of {
            let inner = match of.as_ref() {
                syntax::ast::TypeOrExpr::Expr(x) => Some(self.expr(s, x).stored()),
                syntax::ast::TypeOrExpr::Type(inner) => self.type_name(s, inner),
            }?;
            if t.pointer_depth == 0 && t.array_len.is_none() {
                return Some(inner);
            }
            self.error(diag::not_supported_yet(
                t.span,
                "a pointer or array of `typeof(...)`",
            ));
            return None;
        }
        if t.pointer_depth > 0 && t.array_len.is_none() {
            // `(uint32 *)`, `(void *)`, `(size_t **)`: an address whose
            // pointee `*` reads.
            let base = t.base.trim();
            if base == "void" || self.c_value_type(base).is_some() {
                let stars = "*".repeat(t.pointer_depth as usize);
                return Some(Type::Pointer {
                    c_type: format!("{base} {stars}"),
                });
            }
            self.error(diag::unknown_c_type(t.span, base));
            return None;
        }
        if let Some(len) = t.array_len {
            // `int8[8]`, `struct Foo *[2]`; `int8[]` (length 0 here) takes
            // its length from what is cast (see `Checker::cast_to_array`).
            let elem = self.type_name(
                s,
                &TypeName {
                    array_len: None,
                    ..t.clone()
                },
            )?;
            let Ok(len) = u32::try_from(len) else {
                self.error(diag::not_supported_yet(t.span, "an array this long"));
                return None;
            };
            return Some(Type::Array {
                elem: Box::new(elem),
                len,
            });
        }
        let int = |size: u8, signed: bool| Some(Type::Int { size, signed });
        match t.base.as_str() {
            "int8" | "s8" | "i8" => int(1, true),
            "int16" | "s16" | "i16" => int(2, true),
            "int32" | "s32" | "i32" | "int" => int(4, true),
            "int64" | "s64" | "i64" => int(8, true),
            "uint8" | "u8" => int(1, false),
            "bool" => Some(Type::Bool),
            "uint16" | "u16" => int(2, false),
            "uint32" | "u32" => int(4, false),
            "uint64" | "u64" => int(8, false),
            "string" => Some(Type::Str {
                size: DEFAULT_STR_SIZE,
            }),
            base if base.starts_with("enum ") => {
                let name = base["enum ".len()..].trim();
                let found = self.enum_type(name, Some(8));
                if found.is_none() {
                    self.error(diag::unknown_c_type(t.span, base));
                }
                found
            }
            // `let $s: struct W`, `struct W[10]`, a typedef: a C type held by value.
            base => match self.c_value_type(base) {
                Some(c) => Some(c),
                None if base.starts_with("struct ") || base.starts_with("union ") => {
                    self.error(diag::unknown_c_type(t.span, base));
                    None
                }
                None => {
                    self.error(diag::not_supported_yet(
                        t.span,
                        &format!("the type `{}`", t.base),
                    ));
                    None
                }
            },
        }
    }

    fn expr(&mut self, s: &mut Scope, e: &Expr) -> Type {
        let t = self.expr_inner(s, e);
        s.probe.types.insert(e.id, t.clone());
        t
    }

    fn expr_inner(&mut self, s: &mut Scope, e: &Expr) -> Type {
        match &e.kind {
            ExprKind::Error => Type::Void,
            ExprKind::Int { value, .. } => literal_type(*value),
            ExprKind::Str(bytes) => Type::Str {
                size: bytes.len() as u32 + 1,
            },
            ExprKind::Bool(_) => Type::Bool,
            ExprKind::Ident(name) => self.ident(s, e, name),
            ExprKind::Var(name) => match self.var_in_scope(s, e.id, name, e.span) {
                Some(key) => self.var_type(s, &key),
                None => Type::I64,
            },
            ExprKind::Map { name, keys } => self.map_read(s, e, name, keys),
            ExprKind::Positional(n) => match self.opts.positional.get(*n as usize - 1) {
                Some(v) if syntax::positional_int(v).is_some() => Type::I64,
                Some(v) => Type::Str {
                    size: v.len() as u32 + 1,
                },
                None => Type::I64,
            },
            ExprKind::PositionalCount => Type::I64,
            ExprKind::Call {
                name,
                name_span,
                args,
                ..
            } => self.call(s, e, name, *name_span, args),
            ExprKind::Unary {
                op: UnaryOp::AddrOf,
                expr,
            } => self.addr_of(s, expr),
            ExprKind::Unary { op, expr } => {
                let t = self.expr(s, expr);
                match op {
                    UnaryOp::Not => {
                        self.expect_int(expr, &t, "`!`");
                        Type::Bool
                    }
                    UnaryOp::BitNot => {
                        self.expect_int(expr, &t, "`~`");
                        t.stored()
                    }
                    UnaryOp::Neg => {
                        self.expect_int(expr, &t, "`-`");
                        match &expr.kind {
                            // `-4` is the smallest signed integer holding it.
                            ExprKind::Int { value, .. } if *value <= i64::MAX as u64 => {
                                negative_literal_type(*value)
                            }
                            _ => Type::I64,
                        }
                    }
                    UnaryOp::Deref => self.deref(s, e, expr, &t),
                    UnaryOp::AddrOf => unreachable!("checked above"),
                }
            }
            ExprKind::Binary { op, lhs, rhs } => {
                let (l, r) = (self.expr(s, lhs), self.expr(s, rhs));
                match self.pointer_arithmetic(s, e, *op, &l, &r) {
                    Some(t) => t,
                    None => {
                        let t = self.binary(e, *op, &l, &r);
                        if t.is_int() {
                            self.note_division(s, e.id, *op, rhs, e.span);
                        }
                        t
                    }
                }
            }
            ExprKind::Ternary { cond, then, else_ } => {
                let c = self.expr(s, cond);
                self.expect_condition(cond, &c);
                let t = match then {
                    Some(t) => self.expr(s, t),
                    None => c.clone(),
                };
                let f = self.expr(s, else_);
                match t.stored().unify(&f.stored()) {
                    Some(u) if is_storable(&u) => u,
                    // `c ? printf(..) : exit()`: a choice of effects, a statement.
                    Some(Type::Void) => Type::Void,
                    _ => {
                        self.error(diag::bad_operands(e.span, "?:", &t, &f));
                        Type::I64
                    }
                }
            }
            ExprKind::IncDec { target, .. } => match &target.kind {
                ExprKind::Map { name, keys } => {
                    let key = self.map_key(s, keys);
                    let t = self.updated_map_value(name);
                    self.scale_update(s, target, &t);
                    self.store_map(s, target, name, key, t.clone(), e.span);
                    t
                }
                ExprKind::Var(name) => match self.var_in_scope(s, target.id, name, target.span) {
                    Some(key) => {
                        let t = self.var_type(s, &key);
                        if !matches!(t, Type::Void) {
                            self.expect_int(target, &t, "`++`/`--`");
                            self.scale_update(s, target, &t);
                        }
                        s.probe.types.insert(target.id, t.clone());
                        t
                    }
                    None => Type::I64,
                },
                _ => {
                    self.error(diag::not_assignable(target.span));
                    Type::I64
                }
            },
            ExprKind::Field { expr, name, arrow } => {
                if matches!(&expr.kind, ExprKind::Ident(n) if n == "args")
                    && let Some(args) = self.uprobe_args(s)
                {
                    return self.uprobe_arg_field(s, e, args, name);
                }
                let base = self.expr(s, expr);
                match (&base, s.probe.resolved.context.args_format()) {
                    (Type::TracepointArgs, Some(format)) => match format.field(name) {
                        Some(field) => {
                            let t = match field.c_type.trim().strip_prefix("enum ") {
                                // An enum field prints as its enumerator's name.
                                Some(name) if matches!(field.kind, FieldKind::Int) => self
                                    .enum_type(name.trim(), Some(field.size.clamp(1, 8) as u8))
                                    .unwrap_or_else(|| field_type(field)),
                                _ => field_type(field),
                            };
                            s.probe.fields.insert(
                                e.id,
                                FieldAccess {
                                    field: field.clone(),
                                },
                            );
                            t
                        }
                        None => {
                            let fields: Vec<&str> =
                                format.fields.iter().map(|f| f.name.as_str()).collect();
                            let probe = s.probe.resolved.name.clone();
                            self.error(diag::no_such_field(e.span, name, &probe, &fields));
                            Type::I64
                        }
                    },
                    (Type::StreamArgs(k), _) => {
                        let Some(view) = self.stream_view(*k) else {
                            return Type::I64;
                        };
                        match crate::streams::StreamArg::resolve(&view, name) {
                            Some((arg, t)) => {
                                s.probe.stream_args.insert(e.id, arg);
                                t
                            }
                            None => {
                                let names = crate::streams::StreamArg::names(&view);
                                let names: Vec<&str> = names.iter().map(String::as_str).collect();
                                let probe = format!("stream:{}", view.name);
                                self.error(diag::no_such_field(e.span, name, &probe, &names));
                                Type::I64
                            }
                        }
                    }
                    // `args` outside a tracepoint was already reported.
                    _ if matches!(&expr.kind, ExprKind::Ident(n) if n == "args") => Type::I64,
                    (Type::Record(fs), _) if !*arrow => {
                        match fs.iter().position(|(n, _)| n == name) {
                            Some(i) => {
                                s.probe.record_fields.insert(e.id, i as u32);
                                fs[i].1.clone()
                            }
                            None => {
                                let names: Vec<&str> = fs.iter().map(|(n, _)| n.as_str()).collect();
                                self.error(diag::no_such_record_field(e.span, name, &base, &names));
                                Type::I64
                            }
                        }
                    }
                    // Struct members through BTF: `check/members.rs`.
                    _ if members::applies(&base, expr) => {
                        self.member(s, e, expr, &base, name, *arrow)
                    }
                    _ => {
                        let op = if *arrow { "->" } else { "." };
                        self.error(diag::not_supported_yet(
                            e.span,
                            &format!("`{op}` on a `{base}`"),
                        ));
                        Type::I64
                    }
                }
            }
            ExprKind::TupleIndex { expr, index } => match self.expr(s, expr) {
                Type::Tuple(ts) if (*index as usize) < ts.len() => ts[*index as usize].clone(),
                Type::Record(fs) if (*index as usize) < fs.len() => fs[*index as usize].1.clone(),
                t => {
                    self.error(diag::type_mismatch(
                        e.span,
                        "`.N`",
                        "a tuple with that many fields",
                        &t,
                    ));
                    Type::I64
                }
            },
            ExprKind::Index { expr, index } => {
                let base = self.expr(s, expr);
                let it = self.expr(s, index);
                self.expect_int(index, &it, "an index");
                if let Type::Pointer { c_type } = &base {
                    return self.pointer_index(s, e, c_type);
                }
                if let Type::Array { elem, len } = &base {
                    return self.array_index(s, e, index, elem, *len);
                }
                if let Type::Tuple(fields) = &base {
                    return self.tuple_index(s, e, index, fields);
                }
                // A string's byte, a `char` (0 past the string's buffer).
                if base.is_str() {
                    return Type::Int {
                        size: 1,
                        signed: true,
                    };
                }
                let field = s.probe.fields.get(&expr.id).map(|f| f.field.clone());
                match (field, &index.kind) {
                    (Some(f), ExprKind::Int { value, .. })
                        if matches!(f.kind, FieldKind::Array { .. }) =>
                    {
                        let FieldKind::Array { len } = f.kind else {
                            unreachable!()
                        };
                        let elem = f.size / len.max(1);
                        if *value >= len as u64 || !matches!(elem, 1 | 2 | 4 | 8) {
                            self.error(diag::type_mismatch(
                                index.span,
                                "an array index",
                                &format!("an index below {len}"),
                                &base,
                            ));
                        }
                        Type::Int {
                            size: elem.clamp(1, 8) as u8,
                            signed: f.signed,
                        }
                    }
                    _ => {
                        self.error(diag::not_supported_yet(
                            e.span,
                            "indexing other than `args->array[constant]`",
                        ));
                        Type::I64
                    }
                }
            }
            ExprKind::Cast { ty, expr } if members::is_struct_pointer(ty) => {
                self.struct_pointer_cast(s, ty, expr)
            }
            ExprKind::Cast { ty, expr } => {
                let from = self.expr(s, expr);
                let to = self.type_name(s, ty);
                match to {
                    // The bytes of an array of the integer's size (`(uint32)pton(...)`).
                    Some(t @ Type::Int { size, .. })
                        if matches!(from, Type::Array { .. })
                            && from.layout().size() == u32::from(size) =>
                    {
                        t
                    }
                    Some(t @ (Type::Int { .. } | Type::Enum { .. })) => {
                        self.expect_int(expr, &from, "a cast to an integer");
                        t
                    }
                    Some(Type::Bool) => {
                        self.expect_int(expr, &from, "a cast to `bool`");
                        Type::Bool
                    }
                    Some(Type::Array { elem, len }) => self.cast_to_array(expr, &from, *elem, len),
                    Some(t @ Type::Pointer { .. }) => {
                        self.expect_int(expr, &from, "a cast to a pointer");
                        t
                    }
                    Some(t) => {
                        self.error(diag::not_supported_yet(
                            ty.span,
                            &format!("a cast to `{t}`"),
                        ));
                        Type::I64
                    }
                    None => Type::I64,
                }
            }
            ExprKind::Tuple(items) => {
                let ts: Vec<Type> = items.iter().map(|i| self.expr(s, i).in_tuple()).collect();
                for (i, t) in items.iter().zip(&ts) {
                    if !is_storable(t) {
                        self.error(diag::type_mismatch(
                            i.span,
                            "a tuple element",
                            "a value that can be stored",
                            t,
                        ));
                    }
                }
                Type::Tuple(ts)
            }
            ExprKind::Record(fields) => self.record(s, fields),
            ExprKind::Sizeof(arg) => self.size_of(s, e, arg),
            ExprKind::Offsetof { ty, fields } => self.offset_of(s, e, ty, fields),
            ExprKind::Typeof(_) => self.unsupported(e, "`typeof`"),
            ExprKind::Block(b) => self.block(s, b),
            ExprKind::If { cond, then, else_ } => {
                let c = self.expr(s, cond);
                self.expect_condition(cond, &c);
                let t = self.block(s, then);
                let Some(else_) = else_ else {
                    return Type::Void;
                };
                let f = self.expr(s, else_);
                match (&t, &f) {
                    (Type::Void, _) | (_, Type::Void) => Type::Void,
                    _ => match t.stored().unify(&f.stored()) {
                        Some(u) if is_storable(&u) => u,
                        _ => {
                            self.error(diag::bad_operands(e.span, "if/else", &t, &f));
                            Type::I64
                        }
                    },
                }
            }
        }
    }

    fn unsupported(&mut self, e: &Expr, what: &str) -> Type {
        self.error(diag::not_supported_yet(e.span, what));
        Type::I64
    }

    /// A uprobe's parameters as `args` fields (with the ones left out and
    /// why), from the binary's DWARF; `None` outside uprobes.
    fn uprobe_args(&self, s: &Scope) -> Option<Result<UprobeArgs, String>> {
        let resolved = &s.probe.resolved;
        let Context::Uprobe { retprobe, func } = &resolved.context else {
            return None;
        };
        let abi::Attach::Uprobe { path, .. } = &resolved.attach else {
            return None;
        };
        if *retprobe {
            return Some(Err("a uretprobe runs when the function returns, when its argument registers hold other values: read `args` in a uprobe on the same function (keep what you need in a map keyed by tid)".into()));
        }
        if !resolved.name.ends_with(&format!(":{func}")) {
            return Some(Err(format!(
                "`args` are the parameters at the entry of a function, and this probe is not at the entry of `{func}`"
            )));
        }
        let kernel = self.kernel?;
        let debuginfo = crate::providers::debuginfo::debug_info(path, kernel);
        Some(debuginfo.and_then(|info| {
            info.functions
                .get(func.as_str())
                .map(crate::providers::debuginfo::uprobe_args)
                .ok_or_else(|| {
                    format!("the DWARF of {path} does not describe the function `{func}`")
                })
        }))
    }

    /// `args.NAME` / `args->NAME` in a uprobe: the parameter's register.
    fn uprobe_arg_field(
        &mut self,
        s: &mut Scope,
        e: &Expr,
        args: Result<UprobeArgs, String>,
        name: &str,
    ) -> Type {
        let probe = s.probe.resolved.name.clone();
        let (format, left_out) = match args {
            Ok(a) => a,
            Err(why) => {
                self.error(diag::uprobe_args_unknown(e.span, &probe, &why));
                return Type::I64;
            }
        };
        if let Some(field) = format.field(name) {
            let t = field_type(field);
            let field = field.clone();
            s.probe.fields.insert(e.id, FieldAccess { field });
            return t;
        }
        if let Some((_, why)) = left_out.iter().find(|(n, _)| n == name) {
            self.error(diag::member_not_supported(e.span, "args", name, why));
            return Type::I64;
        }
        let mut names: Vec<&str> = format.fields.iter().map(|f| f.name.as_str()).collect();
        names.extend(left_out.iter().map(|(n, _)| n.as_str()));
        self.error(diag::no_such_field(e.span, name, &probe, &names));
        Type::I64
    }

    fn ident(&mut self, s: &mut Scope, e: &Expr, name: &str) -> Type {
        // `__builtin_comm` is `comm` (bpftrace's standard library wraps each builtin so).
        let name = name.strip_prefix("__builtin_").unwrap_or(name);
        // A uprobe's `args` as a value: a record of its parameters.
        if name == "args"
            && let Some(args) = self.uprobe_args(s)
        {
            return match args {
                Ok((format, _)) => {
                    let var = crate::typed::BuiltinVar {
                        name: "args",
                        index: 0,
                    };
                    s.probe.builtins.insert(e.id, var);
                    let t = Type::Record(
                        format
                            .fields
                            .iter()
                            .map(|f| (f.name.clone(), field_type(f).stored()))
                            .collect(),
                    );
                    s.probe.args_fields = format.fields;
                    t
                }
                Err(why) => {
                    let probe = s.probe.resolved.name.clone();
                    self.error(diag::uprobe_args_unknown(e.span, &probe, &why));
                    Type::I64
                }
            };
        }
        match crate::builtins::variable_def(name) {
            Some((def, index)) => match (def.ty)(&s.probe.resolved.context, index, self.config) {
                Ok(t) => {
                    let var = crate::typed::BuiltinVar {
                        name: def.name,
                        index,
                    };
                    s.probe.builtins.insert(e.id, var);
                    t
                }
                Err(help) => {
                    let kind = s
                        .probe
                        .resolved
                        .name
                        .split(':')
                        .next()
                        .unwrap_or("these")
                        .to_string();
                    self.error(diag::builtin_not_in_probe(e.span, name, &kind, help));
                    Type::I64
                }
            },
            None if crate::builtins::planned_variable(name) => {
                let what = if name.starts_with("arg") {
                    format!("`{name}` (in tracepoints, use `args->NAME`)")
                } else {
                    format!("the builtin `{name}`")
                };
                self.unsupported(e, &what)
            }
            None => {
                // A constant of the script's headers (`AF_INET`), an
                // enumerator of the kernel's types (`TCP_FIN_WAIT1`), as
                // bpftrace's preprocessor and headers give them, or a
                // kernel macro no header here defines (`TASK_RUNNING`).
                // An enumerator of the script's enums prints as its name.
                if self.macro_value(name).is_none()
                    && let Some((v, def)) = self
                        .script_types
                        .and_then(|t| Some((t.enumerator(name)?, t.enumerator_enum(name)?)))
                {
                    s.probe.constants.insert(e.id, v);
                    return Type::Enum { size: 8, def };
                }
                // So is an enumerator of the kernel's named enums, as in
                // bpftrace (`SKB_DROP_REASON_SOCKET_FILTER` with `%s`).
                if self.macro_value(name).is_none()
                    && self.script_types.and_then(|t| t.enumerator(name)).is_none()
                    && let Some(btf) = self.btf()
                    && let Some((v, id)) = btf.enumerator(name)
                    && let Some(t) = btf.type_by_id(id)
                    && !btf.name(&t).is_empty()
                {
                    let def = abi::EnumDef {
                        name: btf.name(&t).to_string(),
                        variants: btf.enum_variants(id),
                    };
                    s.probe.constants.insert(e.id, v);
                    return Type::Enum {
                        size: 8,
                        def: std::sync::Arc::new(def),
                    };
                }
                if let Some(v) = self
                    .macro_value(name)
                    .or_else(|| self.script_types.and_then(|t| t.enumerator(name)))
                    .or_else(|| self.btf().and_then(|btf| btf.enum_value(name)))
                    .or_else(|| crate::macros::kernel_macro(name))
                {
                    s.probe.constants.insert(e.id, v);
                    return Type::I64;
                }
                let known = crate::builtins::variable_names();
                self.error(diag::unknown_builtin(e.span, name, &known));
                Type::I64
            }
        }
    }

    fn binary(&mut self, e: &Expr, op: BinaryOp, l: &Type, r: &Type) -> Type {
        use BinaryOp::*;
        let bool_ty = Type::Bool;
        match op {
            Eq | Ne if l.is_str() && r.is_str() => bool_ty,
            // Byte for byte, as bpftrace compares arrays.
            Eq | Ne if matches!(l, Type::Array { len, .. } if *len > 0) && l == r => bool_ty,
            // Length and bytes (the bytes past the length are zero).
            Eq | Ne if matches!(l, Type::Buf { .. }) && matches!(r, Type::Buf { .. }) => bool_ty,
            LogAnd | LogOr | Eq | Ne | Lt | Le | Gt | Ge if l.is_scalar() && r.is_scalar() => {
                bool_ty
            }
            BitOr | BitXor | BitAnd | Shl | Shr | Add | Sub | Mul | Div | Mod
                if l.is_scalar() && r.is_scalar() =>
            {
                // As bpftrace's current release: a literal that is not
                // negative takes the other side's sign (`$u % 10` stays
                // unsigned), the result is signed when either side is, and a
                // difference is always signed.
                let literal = |x: &Expr| matches!(x.kind, ExprKind::Int { value, .. } if value <= i64::MAX as u64);
                // (An enumerator keeps a literal signed: it may stand for a
                // negative value.)
                let adopts = |t: &Type| matches!(t, Type::Int { .. } | Type::Bool);
                let (mut lsigned, mut rsigned) = (l.is_signed(), r.is_signed());
                if let ExprKind::Binary { lhs, rhs, .. } = &e.kind {
                    match (literal(lhs), literal(rhs)) {
                        (true, false) if adopts(r) => lsigned = rsigned,
                        (false, true) if adopts(l) => rsigned = lsigned,
                        _ => {}
                    }
                }
                let signed = lsigned || rsigned || op == Sub;
                Type::Int {
                    size: 8,
                    signed: signed
                        && !(matches!(l, Type::Pointer { .. })
                            || matches!(r, Type::Pointer { .. })),
                }
            }
            _ => {
                self.error(diag::bad_operands(e.span, op.as_str(), l, r));
                Type::I64
            }
        }
    }

    /// A call: the builtin of that name checks it (`crate::builtins`).
    fn call(
        &mut self,
        s: &mut Scope,
        e: &Expr,
        name: &str,
        name_span: Span,
        args: &[Expr],
    ) -> Type {
        match crate::builtins::function_def(name) {
            Some(def) => self.builtin_call(s, e, def, args, false),
            // `comm()`: a builtin variable's call form, as bpftrace's standard library has it.
            None if args.is_empty() && crate::builtins::variable_def(name).is_some() => {
                self.ident(s, e, name)
            }
            None => {
                // A whole map (`f(@m)`) is not read as a value: a map with
                // keys would give a second, misleading error.
                for a in args {
                    if !matches!(&a.kind, ExprKind::Map { keys, .. } if keys.is_empty()) {
                        self.expr(s, a);
                    }
                }
                if crate::builtins::planned_function(name) {
                    return self.unsupported(e, &format!("the function `{name}()`"));
                }
                let macros: Vec<usize> = self
                    .program
                    .items
                    .iter()
                    .filter_map(|i| match i {
                        Item::Macro(m) if m.name == name => Some(m.params.len()),
                        _ => None,
                    })
                    .collect();
                if !macros.is_empty() {
                    self.error(diag::macro_arity(name_span, name, &macros, args.len()));
                    return Type::I64;
                }
                if matches!(e.kind, ExprKind::Call { bang: true, .. }) {
                    self.error(diag::unknown_macro(name_span, name));
                    return Type::I64;
                }
                let known = crate::builtins::function_names();
                self.error(diag::unknown_function(name_span, name, &known));
                Type::I64
            }
        }
    }

    /// Runs `def`'s rule on call `e` and records the call for the lowering.
    fn builtin_call(
        &mut self,
        s: &mut Scope,
        e: &Expr,
        def: &'static crate::builtins::FunctionDef,
        args: &[Expr],
        assigned_to_map: bool,
    ) -> Type {
        let mut cx = CallCheck::new(self, s, e, def.name, args, assigned_to_map);
        let t = (def.check)(&mut cx);
        let value = cx.value();
        let call = crate::typed::Call {
            name: def.name,
            value,
        };
        s.probe.calls.insert(e.id, call);
        t
    }
}

/// `max_bpf_progs` and `max_probes`: a script whose attach points expand to
/// more programs (each concrete probe is a program and an attachment in
/// weft) than the config allows is an error, reported at the probe that
/// crosses the limit, as bpftrace reports it.
fn too_many_programs(
    program: &Program,
    instances: &[Instance],
    config: &crate::config::ScriptConfig,
) -> Option<Diagnostic> {
    let programs: Vec<&Instance> = instances
        .iter()
        .filter(|i| !matches!(i.role, Role::Handler { .. }))
        .collect();
    let count = programs.len() as u64;
    let (limit, key) = [
        (config.max_bpf_progs(), "max_bpf_progs"),
        (config.max_probes(), "max_probes"),
    ]
    .into_iter()
    .find(|(limit, _)| count > *limit)?;
    let span = match &program.items[programs[limit as usize].item] {
        Item::Probe(p) => p.span,
        Item::Stream(st) => st.span,
        _ => Span::DUMMY,
    };
    Some(diag::too_many_programs(span, count, limit, key))
}

/// An `iter:` probe with any probe but BEGIN and END beside it (another
/// iterator included): the iteration is the whole run, as in bpftrace.
fn iterator_beside_others(program: &Program, instances: &[Instance]) -> Option<Diagnostic> {
    let probes: Vec<&Instance> = instances
        .iter()
        .filter(|i| {
            matches!(i.role, Role::Probe) && !matches!(i.resolved.provider, "BEGIN" | "END")
        })
        .collect();
    let first_iter = probes.iter().position(|i| i.resolved.provider == "iter")?;
    let other = probes
        .iter()
        .enumerate()
        .find(|(n, _)| *n != first_iter)
        .map(|(_, i)| *i)?;
    let span = match &program.items[other.item] {
        Item::Probe(p) => p.span,
        _ => Span::DUMMY,
    };
    Some(diag::iterator_not_alone(span, &other.resolved.name))
}

/// The type of an integer literal: the smallest signed integer that holds
/// it, as bpftrace types literals (`sizeof(1)` is 1), or `uint64` above
/// `i64::MAX`. In registers every integer is 64 bits; the width shows in
/// `sizeof` and where a tuple packs it.
fn literal_type(value: u64) -> Type {
    let size = match value {
        0..=0x7f => 1,
        0x80..=0x7fff => 2,
        0x8000..=0x7fff_ffff => 4,
        v if v <= i64::MAX as u64 => 8,
        _ => return Type::U64,
    };
    Type::Int { size, signed: true }
}

/// The type of `-value` for a literal `value` (at most `i64::MAX`).
fn negative_literal_type(value: u64) -> Type {
    let size = match value {
        0..=0x80 => 1,
        0x81..=0x8000 => 2,
        0x8001..=0x8000_0000 => 4,
        _ => 8,
    };
    Type::Int { size, signed: true }
}

/// Values that can live in a map, variable or record.
pub(super) fn is_storable(t: &Type) -> bool {
    match t {
        Type::Int { .. }
        | Type::Enum { .. }
        | Type::Bool
        | Type::Str { .. }
        | Type::Pointer { .. }
        | Type::Inet
        | Type::Named(_)
        | Type::MacAddr => true,
        Type::Tuple(ts) => ts.iter().all(is_storable),
        Type::Record(fs) => fs.iter().all(|(_, t)| is_storable(t)),
        // A flexible array member has no size to copy.
        Type::Array { elem, len } => *len > 0 && is_storable(elem),
        Type::Stack { .. }
        | Type::Sym { .. }
        | Type::Buf { .. }
        | Type::CgroupPath
        | Type::Timestamp { .. } => true,
        Type::Struct { layout, .. } => layout.is_some(),
        Type::Agg(_) | Type::TracepointArgs | Type::StreamArgs(_) | Type::Void => false,
    }
}

/// The type of `args->field`.
fn field_type(f: &TpField) -> Type {
    if f.is_string() {
        return Type::Str {
            size: match f.kind {
                FieldKind::Array { len } => len,
                _ => DEFAULT_STR_SIZE,
            },
        };
    }
    match f.kind {
        FieldKind::Pointer => Type::Pointer {
            c_type: f.c_type.clone(),
        },
        FieldKind::Int if matches!(f.size, 1 | 2 | 4 | 8) => Type::Int {
            size: f.size as u8,
            signed: f.signed,
        },
        // Arrays are only indexed; give the element type.
        _ => Type::Int {
            size: 8,
            signed: f.signed,
        },
    }
}

impl<'a> Checker<'a> {
    /// The kernel's BTF, read on first use.
    fn btf(&self) -> Option<&'a ktypes::Btf> {
        self.kernel?.btf().ok()
    }

    fn macro_value(&self, name: &str) -> Option<i64> {
        let (cell, kernel) = (self.macros?, self.kernel?);
        cell.get_or_init(|| {
            crate::macros::Macros::collect(&self.program.items, kernel, &self.opts.includes)
        })
        .value(name)
    }
}
