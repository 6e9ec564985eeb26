//! Everything weft prints, byte for byte like bpftrace's current release
//! (bpftrace 0.17 printed maps, stats and histograms a little differently;
//! `tests/golden/README.md` lists how).
//!
//! - [`value`]: the value model ([`Value`], [`MapDump`]), free of any format;
//! - [`decode`]: raw map and record bytes into values, using the `abi` layouts;
//! - [`flat`]: maps read into flat buffers, sorted by index and decoded
//!   entry by entry while printed;
//! - `hist`: the buckets of histograms and their labels;
//! - `tseries`: time series merged over CPUs, and their graphs;
//! - [`printf`]: bpftrace's printf rendered per event (parsed once, by `abi::printf`);
//! - [`text`] and [`json`]: the two output formats, as [`Sink`]s writing to
//!   any `std::io::Write`;
//! - [`stream`]: `stream` records decoded (each format renders them in its module);
//! - [`timeline`]: stream records as a Perfetto/Chrome trace-event file;
//! - [`metrics`]: maps and streams as metric families for the exporters
//!   (names, kinds, labels, histogram buckets);
//! - [`otlp`]: stream records as OpenTelemetry spans and samples as OTLP
//!   metrics (the protobuf messages, by `prost` derive);
//! - [`stats`]: `--stats`, the probes' and weft's cost over a run;
//! - [`profile`]: stack-keyed maps as profiles: folded stacks and pprof
//!   protobufs; bpftrace's printed stack maps read back.

#![forbid(unsafe_code)]

pub mod decode;
pub mod flat;
mod hist;
pub mod json;
pub mod metrics;
pub mod names;
pub mod otlp;
pub mod printf;
pub mod profile;
mod sink;
pub mod stack;
pub mod stats;
pub mod stream;
pub mod text;
pub mod timeline;
mod tseries;
pub mod value;

pub use decode::{
    decode, decode_key, decode_map, decode_map_with, map_kind, merge_entry, merge_into,
    merge_value, merged_value_size, set_string_trailer,
};
pub use flat::{FlatMap, RawEntries};
pub use json::JsonSink;
pub use printf::{ArgKind, Conversion, Format, FormatError, Render, validate};
pub use sink::{Severity, Sink, print_maps_at_exit};
pub use stack::{
    CgroupPathValue, FileOffset, Frame, Stack, StackResolver, SymValue, Symbol, TimestampValue,
    UserValue, resolve_dump, resolve_value,
};
pub use stream::{StageRecord, StreamRecord, decode_stream_record};
pub use text::{TextSink, source_message_text};
pub use timeline::TimelineWriter;
pub use value::{Integer, MapDump, MapEntry, MapEntryValue, MapKind, Value, average};
