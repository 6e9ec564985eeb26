//! How a script's maps leave the machine as metrics (`--prometheus`,
//! `--otlp`): the label name of each key argument, and what the script's
//! `// weft:metric` directive asks for (a name, help text, a unit, other
//! label names, or leaving the map out). The exporters in `output` turn
//! this into metric families; this is only the data the compiler knows.

/// The unit of a map's values (and of its histogram buckets), as declared
/// by `unit=` in a `// weft:metric` directive. Time units are exported in
/// seconds, Prometheus's base unit.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum MetricUnit {
    /// Nothing declared: values are exported as they are, without a unit suffix.
    #[default]
    None,
    Nanoseconds,
    Microseconds,
    Milliseconds,
    Seconds,
    Bytes,
}

impl MetricUnit {
    /// The unit as written in a directive (`ns`, `us`, `ms`, `s`, `bytes`).
    pub fn parse(text: &str) -> Option<MetricUnit> {
        Some(match text {
            "ns" | "nanoseconds" => MetricUnit::Nanoseconds,
            "us" | "microseconds" => MetricUnit::Microseconds,
            "ms" | "milliseconds" => MetricUnit::Milliseconds,
            "s" | "seconds" => MetricUnit::Seconds,
            "bytes" | "B" => MetricUnit::Bytes,
            _ => return None,
        })
    }

    /// What the map's values are divided by to give the exported base
    /// unit (a division, so that `2500 us` is exactly `0.0025` seconds).
    pub fn divisor(self) -> f64 {
        match self {
            MetricUnit::Nanoseconds => 1e9,
            MetricUnit::Microseconds => 1e6,
            MetricUnit::Milliseconds => 1e3,
            MetricUnit::None | MetricUnit::Seconds | MetricUnit::Bytes => 1.0,
        }
    }

    /// The base unit's name, which ends the metric name (`_seconds`).
    pub fn base_name(self) -> Option<&'static str> {
        match self {
            MetricUnit::None => None,
            MetricUnit::Bytes => Some("bytes"),
            _ => Some("seconds"),
        }
    }
}

/// What the exporters know of one map ([`crate::Manifest::exports`] has one
/// per map, in the same order as [`crate::Manifest::maps`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MapExport {
    /// One label name per key argument (none for a keyless map): named
    /// after the key expression (`comm`, `pid`, `args->fd` → `fd`,
    /// `$fd` → `fd`), `None` where the expression has no name (the
    /// exporter then says `key0`, `key1`, ...).
    pub labels: Vec<Option<String>>,
    /// `name=`: the metric's name, after the `weft_` prefix.
    pub name: Option<String>,
    /// `help=`: the metric's help text.
    pub help: Option<String>,
    /// `unit=`: the unit of the values.
    pub unit: MetricUnit,
    /// `skip`: the map is not exported (scratch state such as `@start[tid]`).
    pub skip: bool,
}
