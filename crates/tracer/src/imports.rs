//! The disk as `import` sees it (`syntax::ImportFiles`): what a path is,
//! whether others may write it, a file's text, a directory's entries.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use syntax::{EntryKind, ImportFiles};

/// Imports read from the file system.
pub struct DiskFiles;

impl ImportFiles for DiskFiles {
    fn kind(&self, path: &Path) -> Option<EntryKind> {
        let meta = std::fs::metadata(path).ok()?;
        Some(if meta.is_dir() {
            EntryKind::Dir
        } else {
            EntryKind::File
        })
    }

    fn world_writable(&self, path: &Path) -> bool {
        std::fs::metadata(path).is_ok_and(|m| m.permissions().mode() & 0o002 != 0)
    }

    fn read(&self, path: &Path) -> Result<String, String> {
        std::fs::read_to_string(path).map_err(|e| crate::run_error::io_reason(&e))
    }

    fn list(&self, dir: &Path) -> Result<Vec<String>, String> {
        let entries = std::fs::read_dir(dir).map_err(|e| crate::run_error::io_reason(&e))?;
        Ok(entries
            .filter_map(Result::ok)
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect())
    }
}
