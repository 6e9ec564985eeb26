//! Top-level script settings: `config = { ... }` blocks and map
//! declarations (`let @m = lruhash(100);`).
//!
//! Precedence follows bpftrace: a value in the script wins over weft's
//! default, and the environment variable (`BPFTRACE_MAP_KEYS_MAX`,
//! `BPFTRACE_PERF_RB_PAGES`) wins over the script. The environment is read
//! by the command line; here only the script's values are collected.

use std::collections::BTreeMap;

use source::{Diagnostics, Span};
use syntax::ast::{Config, ExprKind, MapDecl};

use crate::diagnostics as diag;

/// Settings a script's `config` blocks give; `None` where the script is silent.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ScriptConfig {
    /// `max_map_keys`: how many keys each map holds.
    pub max_map_keys: Option<u32>,
    /// `perf_rb_pages`: the ring buffer's size in pages.
    pub perf_rb_pages: Option<u32>,
    /// `missing_probes`: what an attach point that does not exist here is.
    pub missing_probes: Option<MissingProbes>,
}

/// What an attach point that does not exist on this machine is (a kernel
/// function, tracepoint, library symbol or USDT probe that is not there),
/// as bpftrace's `missing_probes` setting chooses. Without the setting, the
/// rule of bpftrace's tools applies (see `providers::missing`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MissingProbes {
    /// Every missing attach point is an error (bpftrace's current default).
    Error,
    /// A warning names each one; the run goes on with what exists.
    Warn,
    /// Silently left out.
    Ignore,
}

impl MissingProbes {
    pub const NAMES: [&'static str; 3] = ["error", "warn", "ignore"];

    /// `"error"`, `"warn"` or `"ignore"` (also as the environment spells them).
    pub fn from_name(name: &str) -> Option<MissingProbes> {
        Some(match name.to_ascii_lowercase().as_str() {
            "error" => MissingProbes::Error,
            "warn" => MissingProbes::Warn,
            "ignore" => MissingProbes::Ignore,
            _ => return None,
        })
    }
}

/// The kind of a declared map.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MapKind {
    Hash,
    LruHash,
    PercpuHash,
    PercpuLruHash,
}

impl MapKind {
    pub const NAMES: [&'static str; 4] = ["hash", "lruhash", "percpuhash", "percpulruhash"];

    pub fn from_name(name: &str) -> Option<MapKind> {
        Some(match name {
            "hash" => MapKind::Hash,
            "lruhash" => MapKind::LruHash,
            "percpuhash" => MapKind::PercpuHash,
            "percpulruhash" => MapKind::PercpuLruHash,
            _ => return None,
        })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            MapKind::Hash => "hash",
            MapKind::LruHash => "lruhash",
            MapKind::PercpuHash => "percpuhash",
            MapKind::PercpuLruHash => "percpulruhash",
        }
    }

    /// One value per CPU: what aggregations need.
    pub fn is_per_cpu(self) -> bool {
        matches!(self, MapKind::PercpuHash | MapKind::PercpuLruHash)
    }

    /// Evicts the least recently used key instead of failing when full.
    pub fn is_lru(self) -> bool {
        matches!(self, MapKind::LruHash | MapKind::PercpuLruHash)
    }
}

/// `let @m = kind(max_entries);`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeclaredMap {
    pub kind: MapKind,
    pub max_entries: u32,
    pub span: Span,
}

/// bpftrace's config keys weft applies, with their environment-variable spellings.
const SUPPORTED: [(&str, &[&str]); 3] = [
    (
        "max_map_keys",
        &["BPFTRACE_MAX_MAP_KEYS", "BPFTRACE_MAP_KEYS_MAX"],
    ),
    ("perf_rb_pages", &["BPFTRACE_PERF_RB_PAGES"]),
    ("missing_probes", &["BPFTRACE_MISSING_PROBES"]),
];

/// bpftrace's config keys that only switch on unstable features: accepted and ignored.
const ACCEPTED: [&str; 4] = [
    "unstable_map_decl",
    "unstable_macro",
    "unstable_import",
    "unstable_tseries",
];

/// bpftrace's other config keys: known, but weft does not apply them yet.
const UNSUPPORTED: [&str; 16] = [
    "cache_user_symbols",
    "cpp_demangle",
    "lazy_symbolication",
    "license",
    "log_size",
    "max_bpf_progs",
    "max_cat_bytes",
    "max_probes",
    "max_strlen",
    "max_type_res_iterations",
    "on_stack_limit",
    "print_maps_on_exit",
    "show_debug_info",
    "stack_mode",
    "str_trunc_trailer",
    "symbol_source",
];

/// The largest `perf_rb_pages` (as for `BPFTRACE_PERF_RB_PAGES`).
pub const MAX_RB_PAGES: u64 = 1 << 18;

/// Normalises a key: bpftrace also accepts the environment variable's name.
fn canonical_key(key: &str) -> String {
    for (name, env) in SUPPORTED {
        if env.iter().any(|e| e.eq_ignore_ascii_case(key)) {
            return name.to_string();
        }
    }
    match key.get(..9) {
        Some(prefix) if prefix.eq_ignore_ascii_case("BPFTRACE_") => key[9..].to_ascii_lowercase(),
        _ => key.to_string(),
    }
}

/// Reads one `config` block into `out`.
pub(crate) fn check_config(
    c: &Config,
    out: &mut ScriptConfig,
    seen: &mut BTreeMap<String, Span>,
    diags: &mut Diagnostics,
) {
    let known: Vec<&str> = SUPPORTED
        .iter()
        .map(|(k, _)| *k)
        .chain(ACCEPTED)
        .chain(UNSUPPORTED)
        .collect();
    for entry in &c.entries {
        let key = canonical_key(&entry.key);
        if let Some(&first) = seen.get(&key) {
            diags.push(diag::config_key_twice(entry.key_span, &entry.key, first));
            continue;
        }
        seen.insert(key.clone(), entry.key_span);
        let int = match &entry.value.kind {
            ExprKind::Int { value, .. } => Some(*value),
            _ => None,
        };
        match key.as_str() {
            "max_map_keys" => match int {
                Some(n @ 1..) if n <= u64::from(u32::MAX) => out.max_map_keys = Some(n as u32),
                _ => diags.push(diag::bad_config_value(
                    entry.value.span,
                    &entry.key,
                    &format!("a number of keys from 1 to {}", u32::MAX),
                )),
            },
            "perf_rb_pages" => match int {
                Some(n @ 1..) if n <= MAX_RB_PAGES => out.perf_rb_pages = Some(n as u32),
                _ => diags.push(diag::bad_config_value(
                    entry.value.span,
                    &entry.key,
                    &format!("a number of pages from 1 to {MAX_RB_PAGES}"),
                )),
            },
            "missing_probes" => {
                let name = match &entry.value.kind {
                    ExprKind::Str(bytes) => Some(String::from_utf8_lossy(bytes).into_owned()),
                    ExprKind::Ident(name) => Some(name.clone()),
                    _ => None,
                };
                match name.as_deref().and_then(MissingProbes::from_name) {
                    Some(m) => out.missing_probes = Some(m),
                    None => diags.push(diag::bad_config_value(
                        entry.value.span,
                        &entry.key,
                        "\"error\", \"warn\" or \"ignore\"",
                    )),
                }
            }
            k if ACCEPTED.contains(&k) => {}
            k if UNSUPPORTED.contains(&k) => {
                diags.push(diag::config_key_not_supported(entry.key_span, &entry.key))
            }
            _ => diags.push(diag::unknown_config_key(entry.key_span, &entry.key, &known)),
        }
    }
}

/// Reads one map declaration; `None` after reporting why it is not usable.
pub(crate) fn check_map_decl(m: &MapDecl, diags: &mut Diagnostics) -> Option<DeclaredMap> {
    let Some(kind) = MapKind::from_name(&m.kind) else {
        diags.push(diag::unknown_map_kind(m.span, &m.kind, &MapKind::NAMES));
        return None;
    };
    match m.args.as_slice() {
        [arg] => match arg.kind {
            ExprKind::Int { value: n @ 1.., .. } if n <= u64::from(u32::MAX) => Some(DeclaredMap {
                kind,
                max_entries: n as u32,
                span: m.span,
            }),
            _ => {
                diags.push(diag::bad_map_decl_size(arg.span, &m.kind));
                None
            }
        },
        _ => {
            diags.push(diag::wrong_arg_count(
                m.span,
                &m.kind,
                "1 argument (the number of keys)",
                m.args.len(),
            ));
            None
        }
    }
}
