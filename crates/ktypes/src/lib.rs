//! Facts about the running kernel that the compiler needs, behind one trait.
//!
//! Parsers here take text or bytes, never paths: `runtime::SysKernelInfo`
//! reads the files, tests use [`FixtureKernel`].

mod fixture;
mod tracepoint_format;

pub use fixture::FixtureKernel;
pub use tracepoint_format::{FieldKind, TpField, TracepointFormat, parse_format};

/// Why a kernel fact could not be had.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KernelInfoError {
    /// The thing asked for does not exist on this kernel (unknown tracepoint, ...).
    NotFound(String),
    /// It may exist but could not be read (tracefs not mounted, permission, ...).
    Unavailable(String),
    /// The kernel's description could not be parsed.
    Malformed(String),
}

impl std::fmt::Display for KernelInfoError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            KernelInfoError::NotFound(s)
            | KernelInfoError::Unavailable(s)
            | KernelInfoError::Malformed(s) => f.write_str(s),
        }
    }
}

impl std::error::Error for KernelInfoError {}

/// What the compiler may ask about the kernel it compiles for.
pub trait KernelInfo {
    /// The argument layout of `tracepoint:category:name`.
    fn tracepoint_format(
        &self,
        category: &str,
        name: &str,
    ) -> Result<TracepointFormat, KernelInfoError>;

    /// Every tracepoint as `(category, name)`, sorted; used to expand wildcards and for `-l`.
    fn tracepoints(&self) -> Result<Vec<(String, String)>, KernelInfoError>;
}
