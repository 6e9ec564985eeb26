//! Semantic analysis: resolves probes through their providers, infers the
//! types of expressions, maps and variables across the whole script, and
//! reports what cannot be compiled. The result, [`TypedProgram`], is what
//! the code generator lowers.

#![forbid(unsafe_code)]
#![allow(
    clippy::result_large_err,
    reason = "a Diagnostic is the error of every rule and resolution; errors are rare, never hot"
)]

pub mod builtins;
mod check;
pub mod config;
pub mod ctypes;
pub mod diagnostics;
mod macros;
pub mod mechanism;
pub mod metrics;
pub mod numbers;
pub mod providers;
pub mod streams;
pub mod suggest;
mod typed;
mod types;

pub use check::members::{MemberAccess, MemberValue};
pub use check::{CheckOptions, ProbeFilter, check};
pub use config::{DeclaredMap, MapKind, MissingProbes, ScriptConfig};
pub use macros::{Includes, predefined_macro};
pub use numbers::{NumberError, parse_int, parse_uint};
pub use providers::{Context, ResolvedProbe};
pub use typed::{
    BuiltinVar, Call, CallValue, FieldAccess, MapInfo, NodeMap, PrintfSite, RangeIter, TypedProbe,
    TypedProgram, print_types,
};
pub use types::{COMM_SIZE, DEFAULT_STR_SIZE, Type};
