//! [`ktypes::KernelInfo`] answered by the running kernel.

use std::io;

use ktypes::{KernelInfo, KernelInfoError, TracepointFormat, parse_format};

use crate::tracefs::Tracefs;

/// The live kernel. Reads nothing until asked; tracefs is found (or mounted)
/// on the first tracepoint question.
#[derive(Debug, Default, Clone, Copy)]
pub struct SysKernelInfo;

impl SysKernelInfo {
    pub fn new() -> SysKernelInfo {
        SysKernelInfo
    }

    fn tracefs(&self) -> Result<&'static Tracefs, KernelInfoError> {
        Tracefs::shared().map_err(|e| KernelInfoError::Unavailable(e.to_string()))
    }
}

fn io_error(what: String, e: io::Error) -> KernelInfoError {
    match e.kind() {
        io::ErrorKind::NotFound => KernelInfoError::NotFound(what),
        _ => KernelInfoError::Unavailable(format!("{what}: {e}")),
    }
}

impl KernelInfo for SysKernelInfo {
    fn tracepoint_format(
        &self,
        category: &str,
        name: &str,
    ) -> Result<TracepointFormat, KernelInfoError> {
        let tracefs = self.tracefs()?;
        let text = tracefs.format(category, name).map_err(|e| {
            let what = match e.kind() {
                io::ErrorKind::NotFound => format!("tracepoint {category}:{name} not found"),
                _ => format!("cannot read the format of tracepoint {category}:{name}"),
            };
            io_error(what, e)
        })?;
        parse_format(&text)
    }

    fn tracepoints(&self) -> Result<Vec<(String, String)>, KernelInfoError> {
        let tracefs = self.tracefs()?;
        tracefs.tracepoints().map_err(|e| {
            KernelInfoError::Unavailable(format!(
                "cannot list tracepoints in {}: {e}",
                tracefs.root().display()
            ))
        })
    }
}
