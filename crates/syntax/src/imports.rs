//! `import "path";` at the top of a script, as bpftrace's current release
//! documents it: the path is taken from the directory of the script that
//! imports (then from the main script's), a `.bt` script's probes, macros
//! and map declarations join the importing script where the import is (so
//! its `begin` probes run first), a `.h` header's C definitions do too, and
//! a directory imports each `.bt` and `.h` file in it (not its
//! subdirectories). A path is imported once however often it is named, an
//! imported script may import in turn, and may not hold a `config` block.
//! bpftrace refuses a file or directory that every user may write; so
//! does weft. BPF C sources (`.bpf.c`, `.bpf.o`) need a C compiler, which
//! weft does not have: an error says so. bpftrace's own `stdlib/...`
//! packages are built into weft (its builtins), so they are not found.
//!
//! The file system is behind [`ImportFiles`] (the `cli` crate reads the
//! disk; tests give files from memory). Every file read joins the
//! [`SourceMap`], so diagnostics name the imported file's lines; macros are
//! expanded once everything is merged, so a macro of an imported file
//! serves the importing script.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use source::{Diagnostic, Diagnostics, FileId, SourceMap};

use crate::ast::{Item, Program};
use crate::cpp::Predefined;
use crate::diagnostics as diag;

/// What an import can see of the file system.
pub trait ImportFiles {
    /// Whether `path` is a directory, a file, or nothing (`None`).
    fn kind(&self, path: &Path) -> Option<EntryKind>;
    /// Whether every user may write `path` (bpftrace refuses such imports).
    fn world_writable(&self, path: &Path) -> bool;
    /// A file's text, or why it cannot be read (`Permission denied`).
    fn read(&self, path: &Path) -> Result<String, String>;
    /// The names of a directory's entries.
    fn list(&self, dir: &Path) -> Result<Vec<String>, String>;
}

/// What a path names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EntryKind {
    File,
    Dir,
}

/// How deep imports may nest (a chain, not a cycle: a cycle stops at the
/// first path imported twice).
const MAX_DEPTH: usize = 32;

/// Parses the script `root` of `sources` with its imports merged in (each
/// imported file added to `sources`), then expands macros as
/// [`crate::parse_with`] does.
pub fn parse_with_imports(
    sources: &mut SourceMap,
    root: FileId,
    predefined: Predefined<'_>,
    files: &dyn ImportFiles,
) -> (Program, Diagnostics) {
    let root_file = sources.file(root);
    let (mut program, diags) =
        crate::parser::Parser::new(&root_file.text, root_file.base, predefined).program();
    let mut diags: Diagnostics = diags.into_iter().collect();
    let root_dir = directory_of(&root_file.name);
    let mut importer = Importer {
        sources,
        predefined,
        files,
        seen: HashSet::new(),
        root_dir: root_dir.clone(),
        next_id: program.node_count,
        diags: Diagnostics::new(),
    };
    importer
        .seen
        .insert(root_dir.join(file_name_of(&importer.sources.file(root).name)));
    if !diags.has_errors() {
        program.items = importer.merge(program.items, &root_dir, 0);
    }
    program.node_count = importer.next_id;
    diags.extend(importer.diags.iter().cloned());
    if !diags.has_errors() {
        diags.extend(crate::expand_macros(&mut program));
        crate::expand_task_macros(&mut program);
        crate::expand_container_of(&mut program);
    }
    (program, diags)
}

struct Importer<'a, 'p> {
    sources: &'a mut SourceMap,
    predefined: Predefined<'p>,
    files: &'a dyn ImportFiles,
    /// Every path imported so far (and the main script's own).
    seen: HashSet<PathBuf>,
    root_dir: PathBuf,
    /// The next free node id: each imported file's nodes follow the last.
    next_id: u32,
    diags: Diagnostics,
}

impl Importer<'_, '_> {
    /// `items` with each `import` replaced by what it imports, in place.
    fn merge(&mut self, items: Vec<Item>, dir: &Path, depth: usize) -> Vec<Item> {
        let mut out = Vec::with_capacity(items.len());
        for item in items {
            let Item::Import(import) = item else {
                out.push(item);
                continue;
            };
            if depth >= MAX_DEPTH {
                self.diags
                    .push(diag::import_too_deep(import.span, MAX_DEPTH));
                continue;
            }
            let Some(path) = self.find(&import.path, dir, import.span) else {
                continue;
            };
            if self.files.world_writable(&path)
                || path
                    .parent()
                    .is_some_and(|p| self.files.world_writable(or_current(p)))
            {
                self.diags
                    .push(diag::import_world_writable(import.span, &path));
                continue;
            }
            match self.files.kind(&path) {
                Some(EntryKind::Dir) => {
                    let mut names = match self.files.list(&path) {
                        Ok(names) => names,
                        Err(why) => {
                            self.diags
                                .push(diag::import_unreadable(import.span, &path, &why));
                            continue;
                        }
                    };
                    // The same order on every machine.
                    names.sort();
                    for name in names {
                        let entry = path.join(&name);
                        if self.files.kind(&entry) != Some(EntryKind::File) {
                            continue;
                        }
                        let Some(kind) = FileKind::of(&name).filter(FileKind::is_merged) else {
                            continue;
                        };
                        if self.files.world_writable(&entry) {
                            self.diags
                                .push(diag::import_world_writable(import.span, &entry));
                            continue;
                        }
                        out.extend(self.import_file(&entry, kind, import.span, depth));
                    }
                }
                _ => {
                    let name = file_name_of(&import.path);
                    match FileKind::of(&name) {
                        Some(kind) if kind.is_merged() => {
                            out.extend(self.import_file(&path, kind, import.span, depth));
                        }
                        Some(FileKind::BpfSource) => self
                            .diags
                            .push(diag::import_needs_c_compiler(import.span, &name)),
                        _ => self
                            .diags
                            .push(diag::import_unknown_type(import.span, &name)),
                    }
                }
            }
        }
        out
    }

    /// Where `name` is: beside the importing file, else beside the main script.
    fn find(&mut self, name: &str, dir: &Path, at: source::Span) -> Option<PathBuf> {
        let mut checked = Vec::new();
        for base in [dir, self.root_dir.as_path()] {
            let path = base.join(name);
            if checked.contains(&path) {
                continue;
            }
            if self.files.kind(&path).is_some() {
                return Some(path);
            }
            checked.push(path);
        }
        self.diags.push(diag::import_not_found(at, name, &checked));
        None
    }

    /// The items of one file (none when it was imported before).
    fn import_file(
        &mut self,
        path: &Path,
        kind: FileKind,
        at: source::Span,
        depth: usize,
    ) -> Vec<Item> {
        if !self.seen.insert(path.to_path_buf()) {
            return Vec::new();
        }
        let text = match self.files.read(path) {
            Ok(text) => text,
            Err(why) => {
                self.diags.push(diag::import_unreadable(at, path, &why));
                return Vec::new();
            }
        };
        let id = self.sources.add(path.display().to_string(), text);
        let file = self.sources.file(id);
        let (program, diags) = crate::parser::Parser::new(&file.text, file.base, self.predefined)
            .starting_at(self.next_id)
            .program();
        self.next_id = program.node_count;
        let failed = diags.iter().any(Diagnostic::is_error);
        self.diags.extend(diags);
        if failed {
            return Vec::new();
        }
        let mut items = Vec::new();
        for item in program.items {
            match (&item, kind) {
                (Item::Config(c), _) => self.diags.push(diag::config_in_import(c.span)),
                // A header holds C definitions and preprocessor lines only.
                (Item::StructDef(_) | Item::Preprocessor(_), _) | (_, FileKind::Script) => {
                    items.push(item)
                }
                (other, FileKind::Header) => {
                    self.diags.push(diag::header_import_not_c(item_span(other)))
                }
                (_, FileKind::BpfSource) => {}
            }
        }
        let dir = path.parent().map_or_else(PathBuf::new, Path::to_path_buf);
        self.merge(items, &dir, depth + 1)
    }
}

/// The kinds of file an import names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum FileKind {
    /// `.bt`: probes, macros, map declarations, C definitions.
    Script,
    /// `.h`: C definitions.
    Header,
    /// `.bpf.c` or `.bpf.o`: BPF C, which weft cannot compile or link.
    BpfSource,
}

impl FileKind {
    fn of(name: &str) -> Option<FileKind> {
        if name.ends_with(".bt") {
            Some(FileKind::Script)
        } else if name.ends_with(".h") {
            Some(FileKind::Header)
        } else if name.ends_with(".bpf.c") || name.ends_with(".bpf.o") {
            Some(FileKind::BpfSource)
        } else {
            None
        }
    }

    /// Whether weft merges files of this kind into the script.
    fn is_merged(&self) -> bool {
        matches!(self, FileKind::Script | FileKind::Header)
    }
}

/// The directory of a script named `name` (`stdin` and `-e` scripts: the
/// current directory, the empty path).
fn directory_of(name: &str) -> PathBuf {
    Path::new(name)
        .parent()
        .map_or_else(PathBuf::new, Path::to_path_buf)
}

fn file_name_of(name: &str) -> String {
    Path::new(name)
        .file_name()
        .map_or_else(|| name.to_string(), |n| n.to_string_lossy().into_owned())
}

/// The empty path (the current directory) as `.`, which the file system takes.
fn or_current(p: &Path) -> &Path {
    if p.as_os_str().is_empty() {
        Path::new(".")
    } else {
        p
    }
}

fn item_span(item: &Item) -> source::Span {
    match item {
        Item::Shebang(r) | Item::Preprocessor(r) => r.span,
        Item::StructDef(d) => d.span,
        Item::Config(c) => c.span,
        Item::Import(i) => i.span,
        Item::MapDecl(m) => m.span,
        Item::Macro(m) => m.span,
        Item::Function(f) => f.span,
        Item::Probe(p) => p.span,
        Item::Stream(s) => s.span,
    }
}
