//! `uelf::dwarf` on a C fixture (`fixtures/dwarf_target.c`) compiled here
//! with `cc -g`: parameters and their C types, struct members (arrays,
//! nested, anonymous union, typedef), source line addresses; the same
//! DWARF found through a `.dwo` file (`-gsplit-dwarf`).

use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;

use uelf::dwarf::{DebugInfo, TypeKind, line_addresses};

fn fixture() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/dwarf_target.c")
}

/// A scratch directory of this test binary.
fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("uelf-dwarf")
        .join(name);
    std::fs::create_dir_all(&dir).expect("make the scratch directory");
    dir
}

/// Compiles the fixture into `dir` with these flags; returns the binary's path.
fn compile(dir: &PathBuf, flags: &[&str]) -> PathBuf {
    let out = dir.join("dwarf_target");
    let status = Command::new("cc")
        .current_dir(dir)
        .args(flags)
        .arg("-o")
        .arg(&out)
        .arg(fixture())
        .status()
        .expect("run cc (the C compiler; scripts/setup.sh installs it)");
    assert!(status.success(), "cc {flags:?} failed");
    out
}

fn plain() -> &'static (PathBuf, Vec<u8>) {
    static B: OnceLock<(PathBuf, Vec<u8>)> = OnceLock::new();
    B.get_or_init(|| {
        let path = compile(&scratch("plain"), &["-g", "-O0"]);
        let bytes = std::fs::read(&path).unwrap();
        (path, bytes)
    })
}

fn no_split_files(_: &str) -> Option<Vec<u8>> {
    None
}

#[test]
fn parameters_have_their_c_types() {
    let info = DebugInfo::parse(&plain().1, &no_split_files, None).unwrap();
    let take = &info.functions["take"];
    let params: Vec<(String, String)> = take
        .params
        .iter()
        .map(|p| (p.name.clone(), p.ty.listed()))
        .collect();
    assert_eq!(
        params,
        [
            ("n".to_string(), "int*".to_string()),
            ("c".into(), "char".into()),
            ("s".into(), "struct shape*".into()),
        ]
    );
    assert_eq!(take.params[1].ty.kind, TypeKind::Char { signed: true });
    let main = &info.functions["main"];
    let listed: Vec<String> = main.params.iter().map(|p| p.ty.listed()).collect();
    assert_eq!(listed, ["int", "char**"]);
    let by_value = &info.functions["by_value"];
    let kinds: Vec<&TypeKind> = by_value.params.iter().map(|p| &p.ty.kind).collect();
    assert_eq!(
        kinds,
        [
            &TypeKind::Int {
                size: 2,
                signed: true
            },
            &TypeKind::Record { size: 8 },
            &TypeKind::Float { size: 8 },
            &TypeKind::Pointer,
        ]
    );
    assert_eq!(by_value.params[3].ty.c_type, "const char *");
    assert!(take.address.is_some());
}

#[test]
fn struct_members_with_offsets_and_types() {
    let info = DebugInfo::parse(&plain().1, &no_split_files, None).unwrap();
    let shape = info.record("struct shape").expect("struct shape");
    let members: Vec<(&str, u32, &str)> = shape
        .members
        .iter()
        .map(|m| (m.name.as_str(), m.offset, m.ty.c_type.as_str()))
        .collect();
    assert_eq!(members[0], ("id", 0, "int"));
    assert_eq!(members[1], ("name", 4, "char [8]"));
    assert_eq!(members[2], ("sides", 12, "int [3]"));
    assert_eq!(members[3], ("origin", 24, "struct point *"));
    assert_eq!(members[4], ("corner", 32, "struct point"));
    // The anonymous union: no name, a made-up type name that finds it.
    assert_eq!(members[5].0, "");
    assert_eq!(members[5].1, 40);
    let union = info.record(members[5].2).expect("the anonymous union");
    assert_eq!(union.size, 8);
    assert_eq!(members[6], ("hits", 48, "counter_t"));
    assert_eq!(
        shape.members[6].ty.kind,
        TypeKind::Int {
            size: 8,
            signed: false
        }
    );
    assert_eq!(members[7], ("points", 56, "struct point * [2]"));
    assert_eq!(shape.size, 72);
    assert_eq!(info.record("struct point").unwrap().size, 8);
}

#[test]
fn bitfields_have_their_first_bit_and_width() {
    let info = DebugInfo::parse(&plain().1, &no_split_files, None).unwrap();
    let flags = info.record("struct flags").expect("struct flags");
    let members: Vec<(&str, u32, u32, Option<u32>)> = flags
        .members
        .iter()
        .map(|m| (m.name.as_str(), m.offset, m.bit_size, m.bit_offset))
        .collect();
    assert_eq!(
        members,
        [
            ("a", 0, 4, Some(0)),
            ("b", 0, 8, Some(4)),
            ("c", 1, 3, Some(12)),
            ("d", 1, 1, Some(15)),
            ("e", 2, 16, Some(16)),
            ("s", 4, 5, Some(32)),
        ]
    );
    assert_eq!(flags.size, 8);
}

#[test]
fn a_source_line_is_where_its_code_begins() {
    let bytes = &plain().1;
    let info = DebugInfo::parse(bytes, &no_split_files, None).unwrap();
    let source = std::fs::read_to_string(fixture()).unwrap();
    // The line of `take`'s opening brace is where the function begins.
    let brace = source
        .lines()
        .position(|l| l.contains("int take("))
        .expect("take's line") as u64
        + 2;
    let at = line_addresses(bytes, "dwarf_target.c", brace, 0).unwrap();
    assert_eq!(at, [info.functions["take"].address.unwrap()]);
    assert!(
        line_addresses(bytes, "other.c", brace, 0)
            .unwrap()
            .is_empty()
    );
    assert!(
        line_addresses(bytes, "dwarf_target.c", 1, 0)
            .unwrap()
            .is_empty()
    );
}

#[test]
fn split_dwarf_is_read_from_the_dwo_file() {
    let dir = scratch("split");
    let path = compile(&dir, &["-g", "-O0", "-gsplit-dwarf"]);
    let bytes = std::fs::read(&path).unwrap();
    let asked = std::cell::RefCell::new(Vec::new());
    let find = |p: &str| {
        asked.borrow_mut().push(p.to_string());
        std::fs::read(p).ok()
    };
    let info = DebugInfo::parse(&bytes, &find, None).unwrap();
    assert_eq!(asked.borrow().len(), 1, "{asked:?}");
    assert!(asked.borrow()[0].ends_with(".dwo"), "{asked:?}");
    let listed: Vec<String> = info.functions["take"]
        .params
        .iter()
        .map(|p| p.ty.listed())
        .collect();
    assert_eq!(listed, ["int*", "char", "struct shape*"]);
    // Without the .dwo, the binary names what is missing.
    let info = DebugInfo::parse(&bytes, &no_split_files, None).unwrap();
    assert!(info.functions.is_empty());
    assert_eq!(info.missing_dwo.len(), 1);
}

#[test]
fn a_binary_without_dwarf_has_none() {
    let dir = scratch("nodebug");
    let path = compile(&dir, &["-O0"]);
    let bytes = std::fs::read(path).unwrap();
    assert!(!uelf::dwarf::has_dwarf(&bytes));
    assert!(uelf::dwarf::has_dwarf(&plain().1));
    assert!(
        DebugInfo::parse(&bytes, &no_split_files, None)
            .unwrap()
            .functions
            .is_empty()
    );
}
