//! The contract between the code generator, the runtime and the output:
//! how values are laid out in BPF maps and ring-buffer records, and the
//! manifest that describes one compiled script.
//!
//! Everything here is plain data; `codegen` produces a [`Manifest`] next to
//! the ELF object, `runtime` uses it to load/attach and to find maps, and
//! `output` uses it to decode bytes into printable values.
//! All integers are little-endian (x86_64, aarch64).

#![forbid(unsafe_code)]

pub mod arch;
mod export;
mod layout;
mod manifest;
pub mod printf;
pub mod stack;
pub mod stream;

pub use export::{MapExport, MetricUnit};
pub use layout::{
    Aggregation, EnumDef, Field, HIST_BUCKETS, HIST_MAX_BITS, Layout, NameTable, NamedField,
    TSERIES_MAX_INTERVALS, TSERIES_SLOT, TseriesAgg, hist_buckets,
};
pub use manifest::{
    Attach, CGROUP_MAP, COUNTERS_MAP, CgroupFilter, CounterIndex, EVENT_HEADER_SIZE, EVENTS_MAP,
    EventKind, GLOBAL_EXITING, GLOBAL_NCPUS, GLOBAL_START_NS, GLOBALS_MAP, GLOBALS_SIZE,
    HelperErrorSite, HelperErrors, JOIN_ARG_SIZE, JOIN_ARGS_OFFSET, JOIN_MAX_ARGS, Manifest,
    MapSpec, MapValue, OWN_MAPS, PACKED_STRING_MIN, PrintfAction, PrintfArg, PrintfSpec,
    ProgramSpec, RunSettings, SCALAR_KEY_SIZE, SCRATCH_MAP, SKB_MAP, SKB_PACKET_OFFSET,
    SkbOutputSite, SourcePlace, ZERO_MAP, attached_probe_count, printf_fields,
};
pub use stack::{StackMapSpec, StackMode};
pub use stream::{StageSpec, StreamCounter, StreamField, StreamLink, StreamSpec};
