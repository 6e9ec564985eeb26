//! Top-level script settings: bpftrace's config variables (`config = { ... }`
//! blocks and their `BPFTRACE_*` environment variables) and map
//! declarations (`let @m = lruhash(100);`).
//!
//! Every key bpftrace knows is a row of [`KEYS`]: its name, the values it
//! takes, weft's default and what weft does with it. Precedence follows
//! bpftrace: a value in the script wins over the default, and the
//! environment variable (`BPFTRACE_` and the key in capitals, e.g.
//! `BPFTRACE_STACK_MODE`) wins over the script. A key may also be written in
//! the script as its environment variable's name (`BPFTRACE_STACK_MODE=raw`).
//! The command line hands the environment in ([`crate::CheckOptions::env`]);
//! nothing here reads it.

use std::collections::BTreeMap;

use abi::StackMode;
use source::{Diagnostics, Span};
use syntax::ast::{Config, ExprKind, MapDecl};

use crate::diagnostics as diag;

/// A config value, as bpftrace's `config()` record shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ConfigValue {
    Int(u64),
    Bool(bool),
    Str(String),
}

/// What values a key takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A number from `min` to `max`.
    Count { min: u64, max: u64 },
    /// `true`/`false`, `1`/`0`.
    Bool,
    /// One of these names (any case).
    Choice(&'static [&'static str]),
    /// One of these texts, exactly as written.
    Exact(&'static [&'static str]),
    /// Any text.
    Text,
}

/// A count from 1 to what the kernel takes in 32 bits: most size keys.
const POSITIVE_U32: Kind = Kind::Count {
    min: 1,
    max: u32::MAX as u64,
};

/// What weft does with a key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Effect {
    /// Applied as bpftrace applies it.
    Applied,
    /// weft already behaves as any value asks: nothing to change.
    Inherent(&'static str),
    /// weft cannot do what a value other than the default asks; saying so
    /// is a warning, and the run goes on as with the default.
    Unavailable(&'static str),
}

/// One of bpftrace's config keys.
#[derive(Debug)]
pub struct Key {
    pub name: &'static str,
    pub kind: Kind,
    /// weft's default.
    pub default: fn() -> ConfigValue,
    pub effect: Effect,
    /// What it sets, in a sentence.
    pub help: &'static str,
}

/// The values `unstable_*` feature gates take.
const UNSTABLE: &[&str] = &["enable", "warn", "error"];
/// The licences the kernel accepts as GPL-compatible (bpftrace's list).
pub const LICENSES: &[&str] = &[
    "Dual MIT/GPL",
    "Dual BSD/GPL",
    "Dual MPL/GPL",
    "GPL and additional rights",
    "GPL v2",
    "GPL",
];
/// The stack modes (`stack_mode`, and `kstack(mode)`/`ustack(mode)`).
pub const STACK_MODES: &[&str] = &["bpftrace", "perf", "raw", "build_id"];

/// The longest `max_strlen`: strings too large for the BPF stack live in a
/// per-CPU scratch buffer of at most 32 KiB, which a program shares among
/// the values it holds at once.
pub const MAX_STRLEN_LIMIT: u64 = 16 * 1024;

/// The default `max_strlen`, as in bpftrace's current release
/// (`BPFTRACE_MAX_STRLEN`; bpftrace 0.17 had 64).
pub const DEFAULT_MAX_STRLEN: u64 = 1024;

/// The largest `perf_rb_pages` (as for `BPFTRACE_PERF_RB_PAGES`).
pub const MAX_RB_PAGES: u64 = 1 << 18;

/// Every config key of bpftrace's current release, in its documentation's order.
pub static KEYS: &[Key] = &[
    Key {
        name: "cache_user_symbols",
        kind: Kind::Choice(&["PER_PID", "PER_PROGRAM", "NONE"]),
        default: || ConfigValue::Str("PER_PID".into()),
        effect: Effect::Inherent(
            "weft keeps each process's mappings from when it first sees it, so ASLR never misleads it",
        ),
        help: "how user-space symbols are cached",
    },
    Key {
        name: "cpp_demangle",
        kind: Kind::Bool,
        default: || ConfigValue::Bool(true),
        effect: Effect::Unavailable("weft always demangles C++ names in user stacks"),
        help: "demangle C++ symbols in user stacks",
    },
    Key {
        name: "lazy_symbolication",
        kind: Kind::Bool,
        default: || ConfigValue::Bool(true),
        effect: Effect::Inherent("weft resolves each user address when it prints it"),
        help: "resolve user symbols on demand",
    },
    Key {
        name: "license",
        kind: Kind::Exact(LICENSES),
        default: || ConfigValue::Str("GPL".into()),
        effect: Effect::Applied,
        help: "the licence the BPF programs are loaded under",
    },
    Key {
        name: "log_size",
        kind: POSITIVE_U32,
        default: || ConfigValue::Int(1_000_000),
        effect: Effect::Applied,
        help: "the size in bytes of the kernel verifier's log",
    },
    Key {
        name: "max_bpf_progs",
        kind: POSITIVE_U32,
        default: || ConfigValue::Int(1024),
        effect: Effect::Applied,
        help: "the most BPF programs a script may generate",
    },
    Key {
        name: "max_cat_bytes",
        kind: POSITIVE_U32,
        default: || ConfigValue::Int(10240),
        effect: Effect::Applied,
        help: "the most bytes cat() prints of a file",
    },
    Key {
        name: "max_map_keys",
        kind: POSITIVE_U32,
        default: || ConfigValue::Int(4096),
        effect: Effect::Applied,
        help: "how many keys each map holds",
    },
    Key {
        name: "max_probes",
        kind: POSITIVE_U32,
        default: || ConfigValue::Int(1024),
        effect: Effect::Applied,
        help: "the most attach points a script may attach",
    },
    Key {
        name: "max_strlen",
        kind: Kind::Count {
            min: 1,
            max: MAX_STRLEN_LIMIT,
        },
        default: || ConfigValue::Int(DEFAULT_MAX_STRLEN),
        effect: Effect::Applied,
        help: "the size in bytes of strings read by str() and of buf()",
    },
    Key {
        name: "missing_probes",
        kind: Kind::Choice(&["error", "warn", "ignore"]),
        default: || ConfigValue::Str("error".into()),
        effect: Effect::Applied,
        help: "what an attach point that does not exist here is",
    },
    Key {
        name: "on_stack_limit",
        kind: Kind::Count {
            min: 0,
            max: u32::MAX as u64,
        },
        default: || ConfigValue::Int(32),
        effect: Effect::Unavailable(
            "weft places values itself: up to 256 bytes on the BPF stack, larger ones (and large stream records) in per-CPU scratch memory",
        ),
        help: "the largest value kept on the BPF stack",
    },
    Key {
        name: "perf_rb_pages",
        kind: Kind::Count {
            min: 1,
            max: MAX_RB_PAGES,
        },
        default: || ConfigValue::Int(0),
        effect: Effect::Applied,
        help: "the size of the ring buffer in pages, and of each CPU's perf buffer skboutput() writes to",
    },
    Key {
        name: "print_maps_on_exit",
        kind: Kind::Bool,
        default: || ConfigValue::Bool(true),
        effect: Effect::Applied,
        help: "print every map when the run ends",
    },
    Key {
        name: "show_debug_info",
        kind: Kind::Bool,
        default: || ConfigValue::Bool(false),
        effect: Effect::Unavailable("weft does not print source files and lines in stacks"),
        help: "add the source file and line to stack frames",
    },
    Key {
        name: "stack_mode",
        kind: Kind::Choice(STACK_MODES),
        default: || ConfigValue::Str("bpftrace".into()),
        effect: Effect::Applied,
        help: "how kstack and ustack print by default",
    },
    Key {
        name: "str_trunc_trailer",
        kind: Kind::Text,
        default: || ConfigValue::Str("..".into()),
        effect: Effect::Applied,
        help: "what is printed after a string str() truncated",
    },
    Key {
        name: "use_blazesym",
        kind: Kind::Bool,
        default: || ConfigValue::Bool(true),
        effect: Effect::Inherent("weft always symbolizes user space with blazesym"),
        help: "symbolize with blazesym",
    },
    Key {
        name: "unstable_import_statement",
        kind: Kind::Choice(UNSTABLE),
        default: || ConfigValue::Str("error".into()),
        effect: Effect::Inherent("weft does not compile `import` inside a block yet"),
        help: "allow `import` inside a block",
    },
    Key {
        name: "unstable_tseries",
        kind: Kind::Choice(UNSTABLE),
        default: || ConfigValue::Str("warn".into()),
        effect: Effect::Applied,
        help: "allow tseries()",
    },
    Key {
        name: "unstable_typeinfo",
        kind: Kind::Choice(UNSTABLE),
        default: || ConfigValue::Str("error".into()),
        effect: Effect::Inherent("weft has no typeinfo()"),
        help: "allow typeinfo()",
    },
    Key {
        name: "unstable_dw_ustack",
        kind: Kind::Choice(UNSTABLE),
        default: || ConfigValue::Str("warn".into()),
        effect: Effect::Inherent("weft has no dw_ustack()"),
        help: "allow dw_ustack()",
    },
];

/// Keys bpftrace renamed: the old name still sets the new key, with a warning.
const RENAMED: &[(&str, &str)] = &[
    ("strlen", "max_strlen"),
    ("no_cpp_demangle", "cpp_demangle"),
    ("cat_bytes_max", "max_cat_bytes"),
    ("map_keys_max", "max_map_keys"),
];

/// Keys bpftrace no longer has: accepted with a warning, without effect.
const DEPRECATED: &[&str] = &[
    "symbol_source",
    "max_type_res_iterations",
    "unstable_addr",
    "unstable_import",
    "unstable_macro",
    "unstable_map_decl",
];

/// Settings bpftrace reads only from the environment (kernel headers and
/// BTF locations): a script cannot set them.
const ENV_ONLY: &[&str] = &["btf", "kernel_build", "kernel_source", "vmlinux"];

/// The key `key` names: its own name, its environment variable's
/// (`BPFTRACE_STACK_MODE`) in any case, or an old name bpftrace renamed.
fn lookup(key: &str) -> Lookup {
    let lower = key.to_ascii_lowercase();
    let bare = lower.strip_prefix("bpftrace_").unwrap_or(&lower);
    if let Some(k) = KEYS.iter().find(|k| k.name == bare) {
        return Lookup::Key(k);
    }
    if let Some((_, new)) = RENAMED.iter().find(|(old, _)| *old == bare) {
        let k = KEYS
            .iter()
            .find(|k| k.name == *new)
            .expect("renamed to a key");
        return Lookup::Renamed(k);
    }
    if DEPRECATED.contains(&bare) {
        return Lookup::Deprecated;
    }
    if ENV_ONLY.contains(&bare) {
        return Lookup::EnvOnly;
    }
    Lookup::Unknown
}

enum Lookup {
    Key(&'static Key),
    Renamed(&'static Key),
    Deprecated,
    EnvOnly,
    Unknown,
}

/// A value as written: a number, or text (an identifier, a string
/// literal or an environment variable's value).
#[derive(Clone, Copy)]
enum Raw<'a> {
    Int(u64),
    Bool(bool),
    Text(&'a str),
}

/// `raw` as a value of `key`, or what the key expects.
fn parse(key: &Key, raw: Raw<'_>) -> Result<ConfigValue, String> {
    let text_int = |t: &str| -> Option<u64> {
        let t = t.trim();
        match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
            Some(hex) => u64::from_str_radix(hex, 16).ok(),
            None => t.parse().ok(),
        }
    };
    match key.kind {
        Kind::Count { min, max } => {
            let n = match raw {
                Raw::Int(n) => Some(n),
                Raw::Text(t) => text_int(t),
                Raw::Bool(_) => None,
            };
            match n {
                Some(n) if (min..=max).contains(&n) => Ok(ConfigValue::Int(n)),
                _ if key.name == "max_strlen" && n.is_some_and(|n| n > max) => Err(format!(
                    "a length from {min} to {max}: long strings live in a per-CPU scratch buffer of 32 KiB"
                )),
                _ => Err(format!("a number from {min} to {max}")),
            }
        }
        Kind::Bool => match raw {
            Raw::Int(n) => Ok(ConfigValue::Bool(n != 0)),
            Raw::Bool(b) => Ok(ConfigValue::Bool(b)),
            Raw::Text(t) => match t.trim().to_ascii_lowercase().as_str() {
                "1" | "true" => Ok(ConfigValue::Bool(true)),
                "0" | "false" => Ok(ConfigValue::Bool(false)),
                _ => Err("true, false, 1 or 0".into()),
            },
        },
        Kind::Choice(names) => {
            let found = match raw {
                Raw::Text(t) => names.iter().find(|n| n.eq_ignore_ascii_case(t.trim())),
                // The unstable gates take 1/0 and true/false as enable/error.
                Raw::Int(n) if names == UNSTABLE => Some(if n != 0 { &"enable" } else { &"error" }),
                Raw::Bool(b) if names == UNSTABLE => Some(if b { &"enable" } else { &"error" }),
                _ => None,
            };
            found
                .map(|n| ConfigValue::Str((*n).to_string()))
                .ok_or_else(|| one_of(names))
        }
        Kind::Exact(names) => match raw {
            Raw::Text(t) if names.contains(&t) => Ok(ConfigValue::Str(t.to_string())),
            _ => Err(one_of(names)),
        },
        Kind::Text => match raw {
            Raw::Text(t) => Ok(ConfigValue::Str(t.to_string())),
            Raw::Int(n) => Ok(ConfigValue::Str(n.to_string())),
            Raw::Bool(b) => Ok(ConfigValue::Str(b.to_string())),
        },
    }
}

fn one_of(names: &[&str]) -> String {
    let quoted: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
    match quoted.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("one of {} or {last}", rest.join(", ")),
        None => String::new(),
    }
}

/// The settings of a run: the script's `config` blocks and the
/// environment, over weft's defaults.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ScriptConfig {
    /// The keys set, by name; the others have their default.
    set: BTreeMap<&'static str, ConfigValue>,
}

impl ScriptConfig {
    /// The value of `key` (its default when nothing set it); `None` for a
    /// name that is no key.
    pub fn get(&self, key: &str) -> Option<ConfigValue> {
        let k = KEYS.iter().find(|k| k.name == key)?;
        Some(self.set.get(k.name).cloned().unwrap_or_else(k.default))
    }

    /// Whether the script or the environment set `key`.
    pub fn is_set(&self, key: &str) -> bool {
        self.set.contains_key(key)
    }

    fn int(&self, key: &str) -> u64 {
        match self.get(key) {
            Some(ConfigValue::Int(n)) => n,
            _ => 0,
        }
    }

    fn set_int(&self, key: &str) -> Option<u32> {
        self.set.get(key).and_then(|v| match v {
            ConfigValue::Int(n) => u32::try_from(*n).ok(),
            _ => None,
        })
    }

    fn text(&self, key: &str) -> String {
        match self.get(key) {
            Some(ConfigValue::Str(s)) => s,
            _ => String::new(),
        }
    }

    fn flag(&self, key: &str) -> bool {
        matches!(self.get(key), Some(ConfigValue::Bool(true)))
    }

    /// `max_map_keys` when set: how many keys each map holds.
    pub fn max_map_keys(&self) -> Option<u32> {
        self.set_int("max_map_keys")
    }

    /// `perf_rb_pages` when set: the ring buffer's size in pages.
    pub fn perf_rb_pages(&self) -> Option<u32> {
        self.set_int("perf_rb_pages")
    }

    /// `missing_probes` when set.
    pub fn missing_probes(&self) -> Option<MissingProbes> {
        self.set.get("missing_probes").and_then(|v| match v {
            ConfigValue::Str(s) => MissingProbes::from_name(s),
            _ => None,
        })
    }

    /// `max_strlen`: the size of strings `str()` reads, NUL included.
    pub fn max_strlen(&self) -> u32 {
        self.int("max_strlen") as u32
    }

    /// `stack_mode`: how stacks print when the call does not say.
    pub fn stack_mode(&self) -> StackMode {
        StackMode::from_name(&self.text("stack_mode")).unwrap_or(StackMode::Bpftrace)
    }

    /// `print_maps_on_exit`.
    pub fn print_maps_on_exit(&self) -> bool {
        self.flag("print_maps_on_exit")
    }

    /// `license`: the text of the object's `license` section.
    pub fn license(&self) -> String {
        self.text("license")
    }

    /// `log_size` when set: bytes of the verifier's log (without it, the
    /// buffer grows to what the log needs).
    pub fn log_size(&self) -> Option<u32> {
        self.set_int("log_size")
    }

    /// `max_cat_bytes`: what `cat()` prints of a file at most.
    pub fn max_cat_bytes(&self) -> u32 {
        self.int("max_cat_bytes") as u32
    }

    /// `max_bpf_progs`.
    pub fn max_bpf_progs(&self) -> u64 {
        self.int("max_bpf_progs")
    }

    /// `max_probes`.
    pub fn max_probes(&self) -> u64 {
        self.int("max_probes")
    }

    /// `str_trunc_trailer`.
    pub fn str_trunc_trailer(&self) -> String {
        self.text("str_trunc_trailer")
    }

    /// The gate of an unstable feature (`"tseries"`): `enable`, `warn` or `error`.
    pub fn unstable(&self, feature: &str) -> String {
        self.text(&format!("unstable_{feature}"))
    }
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

/// The settings the `config` blocks of `program` and the `BPFTRACE_*`
/// variables of `env` make, as the checker reads them (it reports their
/// problems; here they are dropped): what `config().KEY` gives.
pub fn settings(program: &syntax::ast::Program, env: &[(String, String)]) -> ScriptConfig {
    let mut config = ScriptConfig::default();
    let mut seen = BTreeMap::new();
    let mut ignored = Diagnostics::new();
    for item in &program.items {
        if let syntax::ast::Item::Config(c) = item {
            check_config(c, &mut config, &mut seen, &mut ignored);
        }
    }
    apply_env(env, &mut config, &mut ignored);
    config
}

/// Reads one `config` block into `out`.
pub(crate) fn check_config(
    c: &Config,
    out: &mut ScriptConfig,
    seen: &mut BTreeMap<String, Span>,
    diags: &mut Diagnostics,
) {
    let known: Vec<&str> = KEYS.iter().map(|k| k.name).collect();
    for entry in &c.entries {
        let key = match lookup(&entry.key) {
            Lookup::Key(k) => k,
            Lookup::Renamed(k) => {
                diags.push(diag::config_key_renamed(entry.key_span, &entry.key, k.name));
                k
            }
            Lookup::Deprecated => {
                diags.push(diag::config_key_deprecated(entry.key_span, &entry.key));
                continue;
            }
            Lookup::EnvOnly => {
                diags.push(diag::config_key_env_only(entry.key_span, &entry.key));
                continue;
            }
            Lookup::Unknown => {
                diags.push(diag::unknown_config_key(entry.span, &entry.key, &known));
                continue;
            }
        };
        if let Some(&first) = seen.get(key.name) {
            diags.push(diag::config_key_twice(entry.key_span, &entry.key, first));
            continue;
        }
        seen.insert(key.name.to_string(), entry.key_span);
        let text;
        let raw = match &entry.value.kind {
            ExprKind::Int { value, .. } => Raw::Int(*value),
            ExprKind::Bool(b) => Raw::Bool(*b),
            ExprKind::Str(bytes) => {
                text = String::from_utf8_lossy(bytes).into_owned();
                Raw::Text(&text)
            }
            ExprKind::Ident(name) => Raw::Text(name),
            _ => {
                diags.push(diag::bad_config_value(
                    entry.value.span,
                    &entry.key,
                    "a number, a name or a string",
                ));
                continue;
            }
        };
        match parse(key, raw) {
            Ok(v) => {
                if let Effect::Unavailable(why) = key.effect
                    && v != (key.default)()
                {
                    diags.push(diag::config_key_not_supported(
                        entry.key_span,
                        &entry.key,
                        why,
                    ));
                }
                out.set.insert(key.name, v);
            }
            Err(_) if let Kind::Exact(valid) = key.kind => {
                let found = match raw {
                    Raw::Int(n) => n.to_string(),
                    Raw::Bool(b) => b.to_string(),
                    Raw::Text(t) => t.to_string(),
                };
                diags.push(diag::config_value_not_listed(
                    entry.value.span,
                    &entry.key,
                    &found,
                    valid,
                ));
            }
            Err(expected) => diags.push(diag::bad_config_value(
                entry.value.span,
                &entry.key,
                &expected,
            )),
        }
    }
}

/// Applies the environment's `BPFTRACE_*` variables (`name`, `value`) over
/// the script's settings, as bpftrace does; variables that name no key are
/// someone else's (`BPFTRACE_KERNEL_SOURCE`) and left alone.
pub(crate) fn apply_env(env: &[(String, String)], out: &mut ScriptConfig, diags: &mut Diagnostics) {
    for (name, value) in env {
        let Some(bare) = name.strip_prefix("BPFTRACE_") else {
            continue;
        };
        // weft's older spelling of max_map_keys (bpftrace 0.17's variable).
        let bare = if bare == "MAP_KEYS_MAX" {
            "MAX_MAP_KEYS"
        } else {
            bare
        };
        let Some(key) = KEYS.iter().find(|k| k.name.eq_ignore_ascii_case(bare)) else {
            continue;
        };
        match parse(key, Raw::Text(value)) {
            Ok(v) => {
                out.set.insert(key.name, v);
            }
            Err(expected) => diags.push(diag::bad_config_env(name, value, &expected)),
        }
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

/// As bpftrace prints a config value (`config()` and `-d types`).
impl std::fmt::Display for ConfigValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ConfigValue::Int(n) => write!(f, "{n}"),
            ConfigValue::Bool(b) => write!(f, "{b}"),
            ConfigValue::Str(s) => f.write_str(s),
        }
    }
}
