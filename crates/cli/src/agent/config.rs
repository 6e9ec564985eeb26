//! The agent's configuration file: a small subset of TOML, read without a
//! TOML library (weft's dependencies stay few):
//!
//! ```toml
//! # /etc/weft/agent.toml
//! [agent]
//! prometheus = ":9464"              # serve /metrics and /healthz here
//! max_series = 10000                # --prometheus-max-series
//! otlp = "http://127.0.0.1:4318"    # stream records as spans (optional)
//! otlp_metrics_interval = "30s"     # and maps as OTLP metrics (optional)
//!
//! [[script]]
//! name = "reads"                    # the `script` label of its metrics
//! file = "/etc/weft/reads.bt"
//!
//! [[script]]
//! name = "runq"
//! program = "tracepoint:sched:sched_wakeup { @[comm] = count(); }"
//! output = "/var/log/weft/runq.log" # its printf and exit output (default: none)
//!
//! [profile]                         # a low-frequency profile, as pprof files
//! frequency = 49
//! interval = "60s"
//! output = "/var/lib/weft/profiles"
//! keep = 60                         # the newest 60 files
//! ```
//!
//! Values are double-quoted strings (with `\"`, `\\`, `\n`, `\t`), single-
//! quoted literal strings, integers or booleans; `#` starts a comment.
//! Anything else is an error naming its line.

use std::path::{Path, PathBuf};
use std::time::Duration;

/// One script the agent runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScriptConfig {
    /// Unique; the `script` label of its metrics.
    pub name: String,
    pub source: ScriptSource,
    /// Where its printf, stream and exit output goes (none when `None`).
    pub output: Option<PathBuf>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ScriptSource {
    File(PathBuf),
    Program(String),
}

/// `[profile]`: a low-frequency CPU profile written as pprof on an interval.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProfileConfig {
    pub frequency: u32,
    pub interval: Duration,
    pub output: PathBuf,
    /// Profiles kept at most (the oldest go).
    pub keep: usize,
}

/// The whole file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AgentConfig {
    pub prometheus: Option<std::net::SocketAddr>,
    pub max_series: Option<usize>,
    pub otlp: Option<export::http::Url>,
    pub otlp_metrics_interval: Option<Duration>,
    pub scripts: Vec<ScriptConfig>,
    pub profile: Option<ProfileConfig>,
}

/// A value as written.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Value {
    Str(String),
    Int(i64),
    Bool(bool),
}

impl Value {
    fn describe(&self) -> &'static str {
        match self {
            Value::Str(_) => "a string",
            Value::Int(_) => "an integer",
            Value::Bool(_) => "a boolean",
        }
    }
}

/// Which table the lines belong to.
enum Section {
    Top,
    Agent,
    Script(usize),
    Profile,
}

/// Reads `path`; relative script files are relative to the file's directory.
pub fn load(path: &Path) -> Result<AgentConfig, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let dir = path.parent().unwrap_or(Path::new("."));
    parse(&text, dir).map_err(|e| format!("{}:{e}", path.display()))
}

/// Parses a configuration; errors are `LINE: what is wrong`.
pub fn parse(text: &str, dir: &Path) -> Result<AgentConfig, String> {
    let mut config = AgentConfig {
        prometheus: None,
        max_series: None,
        otlp: None,
        otlp_metrics_interval: None,
        scripts: Vec::new(),
        profile: None,
    };
    // Per script: its settings as read, checked at the end.
    let mut scripts: Vec<Vec<(usize, String, Value)>> = Vec::new();
    let mut profile: Option<Vec<(usize, String, Value)>> = None;
    let mut section = Section::Top;
    for (index, raw) in text.lines().enumerate() {
        let line_no = index + 1;
        let line = strip_comment(raw).trim();
        if line.is_empty() {
            continue;
        }
        let err = |what: String| format!("{line_no}: {what}");
        if line == "[[script]]" {
            scripts.push(Vec::new());
            section = Section::Script(scripts.len() - 1);
            continue;
        }
        if line == "[agent]" {
            section = Section::Agent;
            continue;
        }
        if line == "[profile]" {
            profile.get_or_insert_with(Vec::new);
            section = Section::Profile;
            continue;
        }
        if line.starts_with('[') {
            return Err(err(format!(
                "unknown table {line}: the tables are [agent], [[script]] and [profile]"
            )));
        }
        let (key, value) = line
            .split_once('=')
            .ok_or_else(|| err(format!("expected `key = value`, found `{line}`")))?;
        let key = key.trim().to_string();
        let value = parse_value(value.trim()).map_err(err)?;
        match section {
            Section::Top | Section::Agent => {
                agent_setting(&mut config, &key, value).map_err(err)?
            }
            Section::Script(i) => scripts[i].push((line_no, key, value)),
            Section::Profile => {
                if let Some(p) = profile.as_mut() {
                    p.push((line_no, key, value));
                }
            }
        }
    }
    for settings in scripts {
        let script = script_config(settings, dir)?;
        if config.scripts.iter().any(|s| s.name == script.name) {
            return Err(format!(
                "two scripts are named `{}`: names must be unique",
                script.name
            ));
        }
        config.scripts.push(script);
    }
    if let Some(settings) = profile {
        config.profile = Some(profile_config(settings, dir)?);
    }
    if config.scripts.is_empty() && config.profile.is_none() {
        return Err("1: no [[script]] to run".into());
    }
    Ok(config)
}

/// The line without its `#` comment (outside quotes).
fn strip_comment(line: &str) -> &str {
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for (i, c) in line.char_indices() {
        match (quote, c) {
            (Some('"'), '\\') if !escaped => {
                escaped = true;
                continue;
            }
            (Some(q), c) if c == q && !escaped => quote = None,
            (None, '"' | '\'') => quote = Some(c),
            (None, '#') => return &line[..i],
            _ => {}
        }
        escaped = false;
    }
    line
}

fn parse_value(text: &str) -> Result<Value, String> {
    if let Some(rest) = text.strip_prefix('"') {
        let mut out = String::new();
        let mut chars = rest.chars();
        while let Some(c) = chars.next() {
            match c {
                '"' => {
                    let tail: String = chars.collect();
                    if !tail.trim().is_empty() {
                        return Err(format!("unexpected `{}` after the string", tail.trim()));
                    }
                    return Ok(Value::Str(out));
                }
                '\\' => match chars.next() {
                    Some('"') => out.push('"'),
                    Some('\\') => out.push('\\'),
                    Some('n') => out.push('\n'),
                    Some('t') => out.push('\t'),
                    other => {
                        return Err(format!(
                            "unknown escape `\\{}` in a string",
                            other.map(String::from).unwrap_or_default()
                        ));
                    }
                },
                c => out.push(c),
            }
        }
        return Err("the string never ends (multi-line strings: use file = ...)".into());
    }
    if let Some(rest) = text.strip_prefix('\'') {
        let end = rest
            .find('\'')
            .ok_or("the string never ends (multi-line strings: use file = ...)")?;
        if !rest[end + 1..].trim().is_empty() {
            return Err(format!(
                "unexpected `{}` after the string",
                rest[end + 1..].trim()
            ));
        }
        return Ok(Value::Str(rest[..end].to_string()));
    }
    match text {
        "true" => return Ok(Value::Bool(true)),
        "false" => return Ok(Value::Bool(false)),
        _ => {}
    }
    text.replace('_', "")
        .parse::<i64>()
        .map(Value::Int)
        .map_err(|_| format!("`{text}` is not a value: quote strings (\"...\")"))
}

fn string(key: &str, value: Value) -> Result<String, String> {
    match value {
        Value::Str(s) => Ok(s),
        other => Err(format!("{key} is a string, not {}", other.describe())),
    }
}

fn duration(key: &str, value: Value) -> Result<Duration, String> {
    let text = string(key, value)?;
    crate::args::parse_duration(&text)
        .filter(|d| !d.is_zero())
        .ok_or_else(|| format!("{key} is a duration such as \"30s\" or \"1m\", not `{text}`"))
}

fn positive(key: &str, value: Value) -> Result<i64, String> {
    match value {
        Value::Int(n) if n > 0 => Ok(n),
        other => Err(format!("{key} is a positive integer, not {other:?}")),
    }
}

fn agent_setting(config: &mut AgentConfig, key: &str, value: Value) -> Result<(), String> {
    match key {
        "prometheus" => {
            config.prometheus = Some(export::http::parse_listen_address(&string(key, value)?)?)
        }
        "max_series" => config.max_series = Some(positive(key, value)? as usize),
        "otlp" => {
            config.otlp = Some(export::http::Url::parse(&string(key, value)?)?);
        }
        "otlp_metrics_interval" => config.otlp_metrics_interval = Some(duration(key, value)?),
        other => {
            return Err(format!(
                "unknown setting `{other}` in [agent]: the settings are prometheus, max_series, otlp and otlp_metrics_interval"
            ));
        }
    }
    Ok(())
}

fn script_config(
    settings: Vec<(usize, String, Value)>,
    dir: &Path,
) -> Result<ScriptConfig, String> {
    let first = settings.first().map_or(0, |s| s.0);
    let (mut name, mut file, mut program, mut output) = (None, None, None, None);
    for (line, key, value) in settings {
        let err = |e: String| format!("{line}: {e}");
        match key.as_str() {
            "name" => {
                let n = string(&key, value).map_err(err)?;
                if n.is_empty()
                    || !n
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c))
                {
                    return Err(err(format!(
                        "a script's name has letters, digits, `_`, `-` and `.` only, not `{n}`"
                    )));
                }
                name = Some(n);
            }
            "file" => file = Some(dir.join(string(&key, value).map_err(err)?)),
            "program" => program = Some(string(&key, value).map_err(err)?),
            "output" => output = Some(dir.join(string(&key, value).map_err(err)?)),
            other => {
                return Err(err(format!(
                    "unknown setting `{other}` in [[script]]: the settings are name, file, program and output"
                )));
            }
        }
    }
    let name = name.ok_or_else(|| format!("{first}: a [[script]] needs a name"))?;
    let source = match (file, program) {
        (Some(f), None) => ScriptSource::File(f),
        (None, Some(p)) => ScriptSource::Program(p),
        _ => {
            return Err(format!(
                "{first}: script `{name}` needs a file or a program (one of them)"
            ));
        }
    };
    Ok(ScriptConfig {
        name,
        source,
        output,
    })
}

fn profile_config(
    settings: Vec<(usize, String, Value)>,
    dir: &Path,
) -> Result<ProfileConfig, String> {
    let mut out = ProfileConfig {
        frequency: 49,
        interval: Duration::from_secs(60),
        output: PathBuf::from("/var/lib/weft/profiles"),
        keep: 60,
    };
    for (line, key, value) in settings {
        let err = |e: String| format!("{line}: {e}");
        match key.as_str() {
            "frequency" => {
                out.frequency = u32::try_from(positive(&key, value).map_err(err)?)
                    .map_err(|_| err("frequency is too large".into()))?
            }
            "interval" => out.interval = duration(&key, value).map_err(err)?,
            "output" => out.output = dir.join(string(&key, value).map_err(err)?),
            "keep" => out.keep = positive(&key, value).map_err(err)? as usize,
            other => {
                return Err(err(format!(
                    "unknown setting `{other}` in [profile]: the settings are frequency, interval, output and keep"
                )));
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_whole_configuration() {
        let text = r##"
# comment
[agent]
prometheus = ":9464"   # where
max_series = 5_000
otlp = "http://127.0.0.1:4318"
otlp_metrics_interval = "30s"

[[script]]
name = "reads"
file = "reads.bt"

[[script]]
name = "runq"
program = 'tracepoint:sched:sched_wakeup { @["#"] = count(); }'
output = "/var/log/runq.log"

[profile]
frequency = 19
"##;
        let c = parse(text, Path::new("/etc/weft")).unwrap();
        assert_eq!(c.prometheus, Some("0.0.0.0:9464".parse().unwrap()));
        assert_eq!(c.max_series, Some(5000));
        assert_eq!(c.otlp.as_ref().map(|u| u.port), Some(4318));
        assert_eq!(c.otlp_metrics_interval, Some(Duration::from_secs(30)));
        assert_eq!(c.scripts.len(), 2);
        assert_eq!(
            c.scripts[0].source,
            ScriptSource::File("/etc/weft/reads.bt".into())
        );
        assert_eq!(
            c.scripts[1].source,
            ScriptSource::Program("tracepoint:sched:sched_wakeup { @[\"#\"] = count(); }".into())
        );
        assert_eq!(
            c.scripts[1].output,
            Some(PathBuf::from("/var/log/runq.log"))
        );
        let p = c.profile.unwrap();
        assert_eq!((p.frequency, p.interval), (19, Duration::from_secs(60)));
    }

    #[test]
    fn mistakes_name_their_line() {
        let err = |text: &str| parse(text, Path::new("/")).unwrap_err();
        assert_eq!(
            err("[[script]]\nname = \"a\"\nfile = \"x\"\ncolour = \"red\"\n"),
            "4: unknown setting `colour` in [[script]]: the settings are name, file, program and output"
        );
        assert!(err("[[script]]\nname = a\n").starts_with("2: `a` is not a value"));
        assert!(err("[[script]]\nname = \"a\"\n").contains("needs a file or a program"));
        assert!(err("[[script]]\nfile = \"x\"\n").contains("needs a name"));
        assert!(
            err("[[script]]\nname = \"a\"\nfile = \"x\"\n[[script]]\nname = \"a\"\nfile = \"y\"\n")
                .contains("two scripts are named `a`")
        );
        assert!(err("[agent]\nprometheus = 9464\n").contains("prometheus is a string"));
        assert!(err("[tables]\n").contains("unknown table"));
        assert!(err("[agent]\nprometheus = \":1\"\n").contains("no [[script]]"));
        assert!(err("[[script]]\nname = \"a b\"\nfile = \"x\"\n").contains("letters, digits"));
        assert!(err("[profile]\ninterval = \"soon\"\n").contains("duration"));
    }
}
