//! The script's items before any body is checked: each probe and stream
//! clause resolved through its provider into the concrete probes
//! (`Instance`s) whose bodies are checked, stream handlers matched to their
//! streams, the `config` block and map declarations read, and what weft does
//! not compile yet reported.

use std::collections::{BTreeMap, HashMap};

use ktypes::KernelInfo;
use source::{Diagnostics, Span};
use syntax::ast::{Item, Program};

use super::CheckOptions;
use crate::diagnostics as diag;
use crate::mechanism::Planned;
use crate::providers::{AttachPointRef, Context, ResolvedProbe, resolve_for, resolve_list};
use crate::streams::{self as streams, StageRef};
use crate::typed::TypedProgram;
use crate::types::Type;

/// Why a program is checked.
#[derive(Clone, Copy, Debug)]
pub(super) enum Role {
    /// An ordinary probe.
    Probe,
    /// A clause of a stream.
    Stage(StageRef),
    /// A `stream:NAME` handler.
    Handler { stream: usize },
}

/// One concrete attach point to check a body for.
pub(super) struct Instance {
    pub(super) item: usize,
    pub(super) resolved: std::sync::Arc<ResolvedProbe>,
    pub(super) role: Role,
}

/// The parser's attach points as providers take them.
fn attach_point_refs(aps: &[syntax::ast::AttachPoint]) -> Vec<AttachPointRef<'_>> {
    aps.iter()
        .map(|ap| AttachPointRef {
            raw: &ap.raw,
            provider: &ap.provider,
            parts: &ap.parts,
            span: ap.span,
            unchecked: false,
        })
        .collect()
}

/// What the items give.
pub(super) struct Items {
    pub(super) instances: Vec<Instance>,
    /// Item index of each stream, in written order.
    pub(super) stream_items: Vec<usize>,
    pub(super) config: crate::config::ScriptConfig,
    pub(super) decls: BTreeMap<String, crate::config::DeclaredMap>,
    pub(super) diags: Diagnostics,
}

/// Resolves every item; `plan_of` holds the mechanism chosen for each kernel
/// function attach point, by span.
pub(super) fn collect(
    program: &Program,
    kernel: &dyn KernelInfo,
    opts: &CheckOptions,
    plan_of: &HashMap<Span, &Planned>,
) -> Items {
    let mut diags = Diagnostics::new();
    let mut instances: Vec<Instance> = Vec::new();
    // Streams are numbered in written order; handlers may come before their stream.
    let stream_items: Vec<usize> = program
        .items
        .iter()
        .enumerate()
        .filter(|(_, i)| matches!(i, Item::Stream(_)))
        .map(|(i, _)| i)
        .collect();
    let stream_names: Vec<&str> = stream_items
        .iter()
        .filter_map(|&i| match &program.items[i] {
            Item::Stream(st) => Some(st.name.as_str()),
            _ => None,
        })
        .collect();
    // Settings first: `missing_probes` decides how probes resolve.
    let mut config = crate::config::ScriptConfig::default();
    let mut config_keys = BTreeMap::new();
    for item in &program.items {
        if let Item::Config(c) = item {
            crate::config::check_config(c, &mut config, &mut config_keys, &mut diags);
        }
    }
    crate::config::apply_env(&opts.env, &mut config, &mut diags);
    let missing_policy = config.missing_probes();
    let mut decls: BTreeMap<String, crate::config::DeclaredMap> = BTreeMap::new();
    for (index, item) in program.items.iter().enumerate() {
        match item {
            Item::Probe(probe) if probe.attach_points.iter().any(|ap| ap.provider == "stream") => {
                for ap in &probe.attach_points {
                    let name = ap.parts.first().map(String::as_str).unwrap_or("");
                    match stream_names.iter().position(|n| *n == name) {
                    Some(k) if ap.provider == "stream" && ap.parts.len() == 1 => instances.push(Instance {
                        item: index,
                        resolved: std::sync::Arc::new(ResolvedProbe {
                            provider: "stream",
                            // Handlers are not attached: their bodies run inside the end programs.
                            attach: abi::Attach::End,
                            section: String::new(),
                            name: ap.raw.clone(),
                            context: Context::Stream(k),
                            short: "stream".into(),
                        }),
                        role: Role::Handler { stream: k },
                    }),
                    _ if ap.provider != "stream" => diags.push(diag::bad_attach_point(
                        ap.span,
                        &ap.raw,
                        "a `stream:NAME` probe on its own (it cannot share a body with other probes)",
                    )),
                    Some(_) => diags.push(diag::bad_attach_point(ap.span, &ap.raw, "stream:NAME")),
                    None => diags.push(diag::unknown_stream(ap.span, name, &stream_names)),
                }
                }
            }
            Item::Stream(st) => {
                let k = stream_items.iter().position(|&i| i == index).unwrap_or(0);
                diags.extend(streams::check_shape(st));
                for (stage, clause) in st.stages.iter().enumerate() {
                    let aps = attach_point_refs(&clause.attach_points);
                    #[allow(clippy::result_large_err, reason = "providers report a Diagnostic")]
                    let (found, ds) = resolve_list(
                        &aps,
                        missing_policy,
                        opts.unsafe_mode,
                        kernel,
                        opts.pid_filter,
                        |r| resolve_for(r, kernel, opts.pid_filter),
                    );
                    diags.extend(ds);
                    instances.extend(found.into_iter().flat_map(|(_, ps)| ps).map(|p| Instance {
                        item: index,
                        resolved: p.into(),
                        role: Role::Stage(StageRef { stream: k, stage }),
                    }));
                }
            }
            Item::Probe(probe) => {
                let aps = attach_point_refs(&probe.attach_points);
                #[allow(clippy::result_large_err, reason = "providers report a Diagnostic")]
                let (found, ds) = resolve_list(
                    &aps,
                    missing_policy,
                    opts.unsafe_mode,
                    kernel,
                    opts.pid_filter,
                    |r| {
                        let planned = plan_of.get(&r.span).copied();
                        crate::mechanism::resolve_probe(r, planned, kernel, opts.pid_filter)
                    },
                );
                diags.extend(ds);
                let tracing = crate::mechanism::usage(probe).tracing_helpers;
                instances.extend(found.into_iter().flat_map(|(_, ps)| ps).map(|mut p| {
                    if tracing {
                        crate::providers::rawtracepoint::as_tracing_program(&mut p, kernel);
                    }
                    Instance {
                        item: index,
                        resolved: p.into(),
                        role: Role::Probe,
                    }
                }));
            }
            Item::Shebang(_) | Item::Preprocessor(_) => {}
            // Read once for the whole script (`crate::ctypes`).
            Item::StructDef(_) => {}
            Item::Config(_) => {}
            Item::Import(i) => diags.push(diag::not_supported_yet(i.span, "`import`")),
            Item::MapDecl(m) => {
                let name = format!("@{}", m.name);
                if let Some(first) = decls.get(&name) {
                    diags.push(diag::map_declared_twice(m.span, &name, first.span));
                } else if let Some(d) = crate::config::check_map_decl(m, &mut diags) {
                    decls.insert(name, d);
                }
            }
            // Expanded where they are called (`syntax::expand_macros`).
            Item::Macro(_) => {}
            Item::Function(f) => {
                diags.push(diag::not_supported_yet(f.span, "a user function (`fn`)"))
            }
        }
    }
    keep_selected(&mut instances, opts, &mut diags);
    if instances.is_empty() && !diags.has_errors() {
        diags.push(diag::no_probes());
    }
    Items {
        instances,
        stream_items,
        config,
        decls,
        diags,
    }
}

/// Probes that run by themselves, not on an event: `--probe-filter` and
/// `--mode bench` leave them in.
fn always_kept(instance: &Instance) -> bool {
    matches!(instance.resolved.provider, "BEGIN" | "END" | "self")
        || !matches!(instance.role, Role::Probe)
}

/// `--mode bench` keeps only `bench:` probes (and those that always run);
/// without it `bench:` probes are left out. `--probe-filter` then keeps the
/// probes whose full name it matches; one that leaves no probe of its own
/// to attach is an error.
fn keep_selected(instances: &mut Vec<Instance>, opts: &CheckOptions, diags: &mut Diagnostics) {
    instances.retain(|i| always_kept(i) || (i.resolved.provider == "bench") == opts.bench);
    let Some(filter) = &opts.probe_filter else {
        return;
    };
    let before = instances.iter().filter(|i| !always_kept(i)).count();
    instances.retain(|i| always_kept(i) || (filter.matches)(&i.resolved.name));
    let after = instances.iter().filter(|i| !always_kept(i)).count();
    if before > 0 && after == 0 && !diags.has_errors() {
        diags.push(diag::probe_filter_matches_nothing(&filter.pattern));
    }
}

/// Gives each declared map its declaration, checking the declared kind
/// against what the map holds (as bpftrace does: aggregations need a
/// per-CPU kind, plain values a kind that is not per-CPU).
pub(super) fn apply_decls(
    typed: &mut TypedProgram,
    decls: BTreeMap<String, crate::config::DeclaredMap>,
    diags: &mut Diagnostics,
) {
    for (name, decl) in decls {
        let Some(m) = typed.maps.iter_mut().find(|m| m.name == name) else {
            diags.push(diag::map_declared_unused(decl.span, &name));
            continue;
        };
        let agg = matches!(m.value, Type::Agg(_));
        if agg != decl.kind.is_per_cpu() {
            let (holds, needs) = if agg {
                ("an aggregation", "`percpuhash` or `percpulruhash`")
            } else {
                ("a plain value", "`hash` or `lruhash`")
            };
            diags.push(diag::map_kind_mismatch(
                m.first_assigned,
                &name,
                decl.kind.as_str(),
                holds,
                needs,
                decl.span,
            ));
        }
        m.decl = Some(decl);
    }
}
