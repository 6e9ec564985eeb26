//! One run of a weft script, for every front end (`weft`, `weft profile`,
//! `weft offcpu`, `weft agent`) and for programs that embed weft.
//!
//! - [`pipeline`]: source to a loadable object (parse, check, compile),
//!   with `import` read from the disk ([`imports`]);
//! - [`run`]: the life of a loaded session: BEGIN, attach, the event loop
//!   that drains the ring buffer into an [`output::Sink`], detach, END, the
//!   maps at exit; its errors and their help text in [`run_error`];
//! - what the loop keeps on the way: streams ([`streams`]; exporters watch
//!   them through [`streams::StreamObserver`]), stack and symbol resolution
//!   ([`stacks`]), `strftime` texts ([`times`]), `skboutput()` capture files
//!   ([`pcap`]), failed helper calls ([`helper_errors`]), the live status
//!   line ([`status`]), what the run cost ([`overhead`]), `--mode bench`
//!   ([`bench`]).
//!
//! Syscalls are runtime's: this crate has none of its own.

#![forbid(unsafe_code)]

pub mod bench;
pub mod helper_errors;
pub mod imports;
pub mod overhead;
pub mod pcap;
pub mod pipeline;
pub mod run;
pub mod run_error;
pub mod stacks;
pub mod status;
pub mod streams;
pub mod times;
