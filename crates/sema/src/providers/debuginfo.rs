//! A user binary's DWARF (`uelf::dwarf`), found the way gdb and bpftrace
//! find it: in the binary itself; else in its separate debug file (by build
//! id under `/usr/lib/debug/.build-id`, by `.gnu_debuglink` beside it, in
//! its `.debug/` or under `/usr/lib/debug`); else in a `--debuginfo` DIR
//! (as `NAME.debug`, by debug link or by build id). Split DWARF: a `.dwo`
//! where the compiler recorded it, or by name beside the binary or in a
//! DIR; a `.dwp` package `NAME.dwp` beside the binary or in a DIR.
//!
//! What uprobes make of it: `args` of a function (its parameters, each in
//! its argument register: [`uprobe_args`]), `-lv` listings, the structs and
//! unions its types name (as if the script defined them, below the
//! script's own), and the address of a source line (`@FILE:LINE`).

use std::rc::Rc;

use ktypes::{FieldKind, KernelInfo, TpField, TracepointFormat};
use uelf::dwarf::{DebugFunction, DebugInfo, DebugType, TypeKind};

/// The file name part of a path.
fn base_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

fn dir_of(path: &str) -> &str {
    path.rsplit_once('/')
        .map_or(".", |(d, _)| if d.is_empty() { "/" } else { d })
}

/// The `--debuginfo` directories for the binary at `path`: a relative one
/// is taken from the binary's directory (as elfutils, which bpftrace uses,
/// takes it), then from the current one.
fn search_dirs(path: &str, kernel: &dyn KernelInfo) -> Vec<String> {
    let mut out = Vec::new();
    for dir in kernel.debuginfo_dirs() {
        for d in dir.split(':').filter(|d| !d.is_empty()) {
            if !d.starts_with('/') {
                out.push(format!("{}/{d}", dir_of(path)));
            }
            out.push(d.to_string());
        }
    }
    out
}

/// Where the DWARF of the binary at `path` was found: the bytes of the ELF
/// file that holds it.
fn dwarf_file(path: &str, bytes: &[u8], kernel: &dyn KernelInfo) -> Option<(String, Vec<u8>)> {
    if uelf::dwarf::has_dwarf(bytes) {
        return Some((path.to_string(), bytes.to_vec()));
    }
    let binary = uelf::Binary::parse(bytes).ok()?;
    let mut candidates = binary.debug_file_paths(path);
    let name = base_name(path);
    for dir in search_dirs(path, kernel) {
        candidates.push(format!("{dir}/{name}.debug"));
        if let Some(link) = &binary.debuglink {
            candidates.push(format!("{dir}/{link}"));
        }
        if let Some(id) = &binary.build_id
            && id.len() > 1
        {
            let hex: String = id.iter().map(|b| format!("{b:02x}")).collect();
            candidates.push(format!("{dir}/.build-id/{}/{}.debug", &hex[..2], &hex[2..]));
        }
        candidates.push(format!("{dir}/{name}"));
    }
    candidates.into_iter().find_map(|candidate| {
        let found = kernel.read_file(&candidate).ok()?;
        let same_build = match (uelf::Binary::parse(&found), &binary.build_id) {
            (Ok(debug), Some(id)) => debug.build_id.as_ref().is_none_or(|d| d == id),
            _ => true,
        };
        (same_build && uelf::dwarf::has_dwarf(&found)).then_some((candidate, found))
    })
}

/// Why a binary's DWARF is missing, and the remedies.
fn no_dwarf(path: &str) -> String {
    format!(
        "{path} has no DWARF debug information: build it with -g, install its debug package (-dbgsym or -dbg), or pass the directory of its separate debug file with --debuginfo=DIR"
    )
}

/// The address where `FILE:LINE[:COLUMN]` of the binary at `path` begins
/// (the first the line table gives, as bpftrace takes it).
pub fn line_address(
    path: &str,
    kernel: &dyn KernelInfo,
    file: &str,
    line: u64,
    column: u64,
) -> Result<u64, String> {
    let bytes = kernel.read_file(path).map_err(|e| e.to_string())?;
    let (found, data) = dwarf_file(path, &bytes, kernel).ok_or_else(|| no_dwarf(path))?;
    let at = uelf::dwarf::line_addresses(&data, file, line, column)
        .map_err(|e| format!("cannot read the line table of {found}: {e}"))?;
    let place = match column {
        0 => format!("{file}:{line}"),
        c => format!("{file}:{line}:{c}"),
    };
    at.first()
        .copied()
        .ok_or_else(|| format!("no code of {path} comes from {place}"))
}

/// The DWARF of the binary at `path` (read once per compilation), or why
/// there is none, in a sentence that names the binary and the remedy.
pub fn debug_info(path: &str, kernel: &dyn KernelInfo) -> Result<Rc<DebugInfo>, String> {
    let load = || -> Result<DebugInfo, String> {
        let bytes = kernel.read_file(path).map_err(|e| e.to_string())?;
        let (found, data) = dwarf_file(path, &bytes, kernel).ok_or_else(|| no_dwarf(path))?;
        let dirs = search_dirs(path, kernel);
        let beside = dir_of(path).to_string();
        let find = |dwo: &str| -> Option<Vec<u8>> {
            if let Ok(b) = kernel.read_file(dwo) {
                return Some(b);
            }
            let name = base_name(dwo);
            std::iter::once(beside.clone())
                .chain(dirs.iter().cloned())
                .find_map(|d| kernel.read_file(&format!("{d}/{name}")).ok())
        };
        let name = base_name(path);
        let dwp = std::iter::once(format!("{path}.dwp"))
            .chain(dirs.iter().map(|d| format!("{d}/{name}.dwp")))
            .find_map(|p| kernel.read_file(&p).ok());
        let info = DebugInfo::parse(&data, &find, dwp.as_deref())
            .map_err(|e| format!("cannot read the DWARF of {found}: {e}"))?;
        if info.functions.is_empty() && !info.missing_dwo.is_empty() {
            return Err(format!(
                "the DWARF of {path} is split, and its {} could not be found: pass its directory with --debuginfo=DIR",
                info.missing_dwo.join(", ")
            ));
        }
        Ok(info)
    };
    match kernel.memo() {
        Some(memo) => memo.get_or_try(&format!("dwarf:{path}"), load),
        None => load().map(Rc::new),
    }
}

/// How a parameter is read from the registers, or why it cannot be.
fn register_field(ty: &DebugType, name: &str, offset: u32) -> TpField {
    let (size, signed, kind) = match &ty.kind {
        TypeKind::Int { size, signed } => (*size, *signed, FieldKind::Int),
        TypeKind::Char { signed } => (1, *signed, FieldKind::Int),
        _ => (8, false, FieldKind::Pointer),
    };
    TpField {
        name: name.to_string(),
        c_type: ty.c_type.clone(),
        offset,
        size,
        signed,
        kind,
    }
}

/// How many general-purpose argument registers a parameter of this type
/// takes under the x86-64 System V convention, or `None` when it is passed
/// elsewhere (a floating-point value in an SSE register, a struct larger
/// than 16 bytes in memory).
fn registers_taken(ty: &DebugType) -> Option<u32> {
    match &ty.kind {
        TypeKind::Int { size, .. } if *size > 8 => Some(size.div_ceil(8)),
        TypeKind::Int { .. } | TypeKind::Char { .. } | TypeKind::Pointer => Some(1),
        TypeKind::Record { size } if *size <= 16 => Some(size.div_ceil(8).max(1)),
        _ => None,
    }
}

/// The parameters of a function as the fields of its uprobe's `args`: each
/// read from its argument register's slot in `struct pt_regs`, in order,
/// as bpftrace reads them. Integers, chars, enums and pointers are fields.
/// A struct passed by value (in one or two registers, or in memory), a
/// 128-bit integer, a floating-point value, and what follows the sixth
/// register are not: the reason is returned with their names, for the
/// error a script that reads one gets.
pub fn uprobe_args(f: &DebugFunction) -> (TracepointFormat, Vec<(String, String)>) {
    let mut fields = Vec::new();
    let mut left_out = Vec::new();
    let mut register = 0usize;
    let offsets = abi::arch::ARG_OFFSETS;
    for p in &f.params {
        let taken = registers_taken(&p.ty);
        let readable = matches!(
            p.ty.kind,
            TypeKind::Int {
                size: 1 | 2 | 4 | 8,
                ..
            } | TypeKind::Char { .. }
                | TypeKind::Pointer
        );
        match taken {
            Some(n) if readable && register < offsets.len() => {
                fields.push(register_field(&p.ty, &p.name, offsets[register]));
                register += n as usize;
            }
            Some(n) => {
                let why = if register >= offsets.len() {
                    "it is passed on the stack, after the six argument registers".to_string()
                } else {
                    format!(
                        "a `{}` passed by value takes {n} argument register{}, which `args` does not read; read them as arg{register}{}",
                        p.ty.c_type,
                        if n == 1 { "" } else { "s" },
                        if n > 1 {
                            format!("..arg{}", register + n as usize - 1)
                        } else {
                            String::new()
                        }
                    )
                };
                left_out.push((p.name.clone(), why));
                register += n as usize;
            }
            None => {
                let why = match p.ty.kind {
                    TypeKind::Float { .. } => format!(
                        "a `{}` is passed in a floating-point register, which uprobes cannot read",
                        p.ty.c_type
                    ),
                    _ => format!(
                        "a `{}` passed by value is copied to the stack, which `args` does not read",
                        p.ty.c_type
                    ),
                };
                left_out.push((p.name.clone(), why));
            }
        }
    }
    let format = TracepointFormat {
        name: f.name.clone(),
        id: 0,
        fields,
        common_fields: Vec::new(),
    };
    (format, left_out)
}

/// `-lv`'s lines for a function: each parameter as bpftrace prints it
/// (`    int* n`).
pub fn param_lines(f: &DebugFunction) -> Vec<String> {
    f.params
        .iter()
        .map(|p| format!("    {} {}", p.ty.listed(), p.name))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use uelf::dwarf::DebugParam;

    fn param(name: &str, c: &str, kind: TypeKind) -> DebugParam {
        DebugParam {
            name: name.into(),
            ty: DebugType {
                c_type: c.into(),
                kind,
            },
        }
    }

    /// Parameters take argument registers in order; a struct passed by
    /// value takes its registers without being a field, a double none.
    #[test]
    fn parameters_map_to_argument_registers_in_order() {
        let f = DebugFunction {
            name: "by_value".into(),
            address: Some(0x1000),
            params: vec![
                param(
                    "small",
                    "short",
                    TypeKind::Int {
                        size: 2,
                        signed: true,
                    },
                ),
                param("p", "struct point", TypeKind::Record { size: 8 }),
                param("ratio", "double", TypeKind::Float { size: 8 }),
                param("label", "const char *", TypeKind::Pointer),
            ],
            variadic: false,
        };
        let (format, left_out) = uprobe_args(&f);
        let fields: Vec<(&str, u32, u32, bool)> = format
            .fields
            .iter()
            .map(|f| (f.name.as_str(), f.offset, f.size, f.signed))
            .collect();
        let offsets = abi::arch::ARG_OFFSETS;
        assert_eq!(
            fields,
            [
                ("small", offsets[0], 2, true),
                ("label", offsets[2], 8, false)
            ]
        );
        let names: Vec<&str> = left_out.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["p", "ratio"]);
        assert!(
            left_out[0].1.contains("read them as arg1"),
            "{}",
            left_out[0].1
        );
    }
}
