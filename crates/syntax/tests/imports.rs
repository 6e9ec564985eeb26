//! `import "path";`: files from an in-memory file system merged into the
//! script where each import is, once per path, with macros expanded
//! across files; and every refusal as a diagnostic naming the import (or
//! the imported file's line), with its help.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use source::{SourceMap, render_all};
use syntax::{EntryKind, ImportFiles, Item, parse_with_imports, print_ast};

/// Files by path; a directory is any prefix of one, or listed in `dirs`.
#[derive(Default)]
struct Files {
    files: BTreeMap<PathBuf, String>,
    world_writable: Vec<PathBuf>,
    unreadable: Vec<PathBuf>,
}

impl Files {
    fn with(files: &[(&str, &str)]) -> Files {
        Files {
            files: files
                .iter()
                .map(|(p, t)| (PathBuf::from(p), t.to_string()))
                .collect(),
            ..Files::default()
        }
    }
}

impl ImportFiles for Files {
    fn kind(&self, path: &Path) -> Option<EntryKind> {
        if self.files.contains_key(path) {
            return Some(EntryKind::File);
        }
        self.files
            .keys()
            .any(|f| f.starts_with(path) && f != path)
            .then_some(EntryKind::Dir)
    }

    fn world_writable(&self, path: &Path) -> bool {
        self.world_writable.iter().any(|p| p == path)
    }

    fn read(&self, path: &Path) -> Result<String, String> {
        if self.unreadable.iter().any(|p| p == path) {
            return Err("Permission denied".into());
        }
        self.files.get(path).cloned().ok_or("No such file".into())
    }

    fn list(&self, dir: &Path) -> Result<Vec<String>, String> {
        let mut names: Vec<String> = self
            .files
            .keys()
            .filter_map(|f| f.strip_prefix(dir).ok())
            .filter_map(|rest| rest.iter().next())
            .map(|n| n.to_string_lossy().into_owned())
            .collect();
        names.dedup();
        // Unsorted on purpose: the importer sorts.
        names.reverse();
        Ok(names)
    }
}

/// The script at `name` parsed with its imports: the AST, or the diagnostics.
fn run(name: &str, script: &str, files: &Files) -> String {
    let mut sources = SourceMap::new();
    let root = sources.add(name, script);
    let (program, diags) = parse_with_imports(&mut sources, root, &|_| false, files);
    if diags.has_errors() {
        return render_all(diags.iter(), &sources);
    }
    assert!(
        !program.items.iter().any(|i| matches!(i, Item::Import(_))),
        "an import left in the program"
    );
    print_ast(&program)
}

#[test]
fn scripts_headers_and_directories_merge_where_imported_once_each() {
    let files = Files::with(&[
        (
            "/s/helpers.bt",
            "import \"lib/inner.bt\";\nmacro greet(x) { printf(\"hello %d\\n\", x); }\nbegin { printf(\"helper\\n\"); }\n",
        ),
        ("/s/lib/inner.bt", "macro twice(x) { x * 2 }\n"),
        ("/s/lib/types.h", "struct pair { int a; int b; };\n"),
        ("/s/lib/notes.txt", "not imported\n"),
        (
            "/s/lib/sub/deep.bt",
            "begin { printf(\"not imported\\n\"); }\n",
        ),
    ]);
    let script = "import \"helpers.bt\";\nimport \"lib\";\nimport \"helpers.bt\";\nbegin { greet(twice(3)); }\n";
    insta::assert_snapshot!(run("/s/main.bt", script, &files));
}

#[test]
fn a_cycle_imports_each_file_once() {
    let files = Files::with(&[
        ("a.bt", "import \"b.bt\";\nbegin { printf(\"a\\n\"); }\n"),
        ("b.bt", "import \"a.bt\";\nbegin { printf(\"b\\n\"); }\n"),
    ]);
    let ast = run("stdin", "import \"a.bt\";\nend { }\n", &files);
    assert_eq!(ast.matches("Probe").count(), 3, "{ast}");
}

#[test]
fn an_import_nested_in_a_directory_is_found_beside_its_importer() {
    // `lib/a.bt` imports `b.bt`: `lib/b.bt` first, then the main script's `b.bt`.
    let files = Files::with(&[
        ("/s/lib/a.bt", "import \"b.bt\";\nimport \"c.bt\";\n"),
        ("/s/lib/b.bt", "begin { printf(\"lib b\\n\"); }\n"),
        ("/s/c.bt", "begin { printf(\"main c\\n\"); }\n"),
    ]);
    let ast = run("/s/main.bt", "import \"lib/a.bt\";\n", &files);
    assert!(ast.contains("lib b") && ast.contains("main c"), "{ast}");
}

#[test]
fn refusals_name_the_import_or_the_imported_line() {
    let mut files = Files::with(&[
        ("/s/cfg.bt", "config = { max_map_keys = 10 }\nbegin { }\n"),
        ("/s/probe.h", "struct s { int a; };\nbegin { }\n"),
        ("/s/syntax.bt", "begin { $x = ; }\n"),
        ("/s/c.bpf.c", "int __add_one(int v) { return v + 1; }\n"),
        ("/s/data.json", "{}\n"),
        ("/s/open/x.bt", "begin { }\n"),
        ("/s/secret.bt", "begin { }\n"),
        ("/s/lib/fine.bt", "begin { }\n"),
        ("/s/lib/open.bt", "begin { }\n"),
    ]);
    files.world_writable.push(PathBuf::from("/s/open"));
    files.world_writable.push(PathBuf::from("/s/lib/open.bt"));
    files.unreadable.push(PathBuf::from("/s/secret.bt"));
    let script = [
        "import \"missing.bt\";",
        "import \"stdlib/test\";",
        "import \"cfg.bt\";",
        "import \"probe.h\";",
        "import \"syntax.bt\";",
        "import \"c.bpf.c\";",
        "import \"data.json\";",
        "import \"open/x.bt\";",
        "import \"secret.bt\";",
        "import \"lib\";",
        "begin { }",
    ]
    .join("\n");
    insta::assert_snapshot!(run("/s/main.bt", &script, &files));
}
