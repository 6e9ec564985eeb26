//! Types written back as C, as `weft -lv 'struct NAME'` prints a kernel
//! type (the layout libbpf's `btf_dump` gives, which bpftrace prints):
//! members one per line, indented by a tab, anonymous structs and unions
//! written out in place, bit fields with their width, and declarators as C
//! spells them (`int (*fn)(void *)`, `char comm[16]`, `struct list_head *next`).

use super::{Btf, BtfType, MAX_CHAIN, kind};

impl Btf {
    /// The struct, union or enum named `name` of `type_kind` (`struct`,
    /// `union` or `enum`), if BTF has one with a body.
    pub fn find_definition(&self, type_kind: &str, name: &str) -> Option<u32> {
        let wanted = kind_of_keyword(type_kind)?;
        (1..=self.len() as u32).find(|&id| {
            self.type_by_id(id)
                .is_some_and(|t| wanted.contains(&t.kind) && self.name(&t) == name)
        })
    }

    /// Every named struct, union or enum of `type_kind`, sorted, without
    /// duplicates (for `-l 'struct task*'`).
    pub fn definition_names(&self, type_kind: &str) -> Vec<&str> {
        let Some(wanted) = kind_of_keyword(type_kind) else {
            return Vec::new();
        };
        let mut names: Vec<&str> = (1..=self.len() as u32)
            .filter_map(|id| self.type_by_id(id))
            .filter(|t| wanted.contains(&t.kind))
            .map(|t| self.name(&t))
            .filter(|n| !n.is_empty())
            .collect();
        names.sort_unstable();
        names.dedup();
        names
    }

    /// Type `id` (a struct, union or enum) as a C definition, ending with
    /// `};`.
    pub fn c_definition(&self, id: u32) -> Option<String> {
        let t = self.type_by_id(id)?;
        if !matches!(
            t.kind,
            kind::STRUCT | kind::UNION | kind::ENUM | kind::ENUM64
        ) {
            return None;
        }
        let mut out = String::new();
        self.write_body(&t, 0, 0, &mut out);
        out.push(';');
        Some(out)
    }

    /// `struct NAME {` ... `}` (no `;`), members indented one tab past `indent`.
    fn write_body(&self, t: &BtfType, indent: usize, depth: usize, out: &mut String) {
        let keyword = match t.kind {
            kind::STRUCT => "struct",
            kind::UNION => "union",
            _ => "enum",
        };
        let name = self.name(t);
        if name.is_empty() {
            out.push_str(keyword);
            out.push_str(" {\n");
        } else {
            out.push_str(&format!("{keyword} {name} {{\n"));
        }
        let pad = "\t".repeat(indent + 1);
        match t.kind {
            kind::STRUCT | kind::UNION => {
                for i in 0..t.vlen {
                    let at = t.offset + 12 + 12 * i as usize;
                    let (name_off, ty, off) = (
                        self.section_u32(at),
                        self.section_u32(at + 4),
                        self.section_u32(at + 8),
                    );
                    let bits = if t.kind_flag { off >> 24 } else { 0 };
                    out.push_str(&pad);
                    let member = self.string(name_off).to_string();
                    out.push_str(&self.declaration(ty, &member, indent + 1, depth + 1));
                    if bits > 0 {
                        out.push_str(&format!(": {bits}"));
                    }
                    out.push_str(";\n");
                }
            }
            kind::ENUM => {
                let signed = t.kind_flag;
                for i in 0..t.vlen {
                    let (name_off, raw) = self.pair(t, i);
                    let value = if signed {
                        raw as i32 as i64
                    } else {
                        raw as i64
                    };
                    out.push_str(&format!("{pad}{} = {value},\n", self.string(name_off)));
                }
            }
            _ => {
                for i in 0..t.vlen {
                    let at = t.offset + 12 + 12 * i as usize;
                    let name_off = self.section_u32(at);
                    let value =
                        (self.section_u32(at + 8) as u64) << 32 | self.section_u32(at + 4) as u64;
                    let value = if t.kind_flag {
                        (value as i64).to_string()
                    } else {
                        value.to_string()
                    };
                    out.push_str(&format!("{pad}{} = {value},\n", self.string(name_off)));
                }
            }
        }
        out.push_str(&"\t".repeat(indent));
        out.push('}');
    }

    /// `TYPE NAME` as C declares it: the declarator `inner` (a name, or
    /// what outer pointers and arrays made of it) wrapped by type `id`.
    fn declaration(&self, id: u32, inner: &str, indent: usize, depth: usize) -> String {
        let join = |base: &str| {
            if inner.is_empty() {
                base.to_string()
            } else {
                format!("{base} {inner}")
            }
        };
        if depth > MAX_CHAIN {
            return join("?");
        }
        let Some(t) = self.type_by_id(id) else {
            return join("void");
        };
        let name = self.name(&t);
        // An array or a function applied to a pointer needs parentheses.
        let wrapped = || {
            if inner.starts_with('*') {
                format!("({inner})")
            } else {
                inner.to_string()
            }
        };
        match t.kind {
            kind::STRUCT | kind::UNION | kind::ENUM | kind::ENUM64 if name.is_empty() => {
                let mut body = String::new();
                self.write_body(&t, indent, depth, &mut body);
                join(&body)
            }
            kind::STRUCT => join(&format!("struct {name}")),
            kind::UNION => join(&format!("union {name}")),
            kind::ENUM | kind::ENUM64 => join(&format!("enum {name}")),
            kind::FWD if t.kind_flag => join(&format!("union {name}")),
            kind::FWD => join(&format!("struct {name}")),
            kind::INT | kind::TYPEDEF | kind::FLOAT => join(name),
            kind::PTR => self.declaration(t.size_or_type, &format!("*{inner}"), indent, depth + 1),
            kind::CONST | kind::VOLATILE => {
                let word = if t.kind == kind::CONST {
                    "const"
                } else {
                    "volatile"
                };
                match self.type_by_id(t.size_or_type).map(|p| p.kind) {
                    // `char * const p`: the qualifier belongs to the pointer.
                    Some(kind::PTR) => self.declaration(
                        t.size_or_type,
                        &format!("{word} {inner}"),
                        indent,
                        depth + 1,
                    ),
                    _ => format!(
                        "{word} {}",
                        self.declaration(t.size_or_type, inner, indent, depth + 1)
                    ),
                }
            }
            kind::ARRAY => {
                let elem = self.section_u32(t.offset + 12);
                let n = self.section_u32(t.offset + 20);
                self.declaration(elem, &format!("{}[{n}]", wrapped()), indent, depth + 1)
            }
            kind::FUNC_PROTO => {
                let params: Vec<String> = (0..t.vlen)
                    .map(|i| {
                        let (name_off, ty) = self.pair(&t, i);
                        if ty == 0 {
                            "...".to_string()
                        } else {
                            self.declaration(ty, self.string(name_off), indent, depth + 1)
                        }
                    })
                    .collect();
                let params = if params.is_empty() {
                    "void".to_string()
                } else {
                    params.join(", ")
                };
                self.declaration(
                    t.size_or_type,
                    &format!("{}({params})", wrapped()),
                    indent,
                    depth + 1,
                )
            }
            _ => self.declaration(t.size_or_type, inner, indent, depth + 1),
        }
    }
}

/// The BTF kinds a C keyword names.
fn kind_of_keyword(keyword: &str) -> Option<&'static [u32]> {
    match keyword {
        "struct" => Some(&[kind::STRUCT]),
        "union" => Some(&[kind::UNION]),
        "enum" => Some(&[kind::ENUM, kind::ENUM64]),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use crate::btf::{Btf, BtfBuilder};

    #[test]
    fn a_struct_as_c_declares_it() {
        let mut b = BtfBuilder::new();
        let int = b.int("int", 4, true);
        let char_t = b.int("char", 1, true);
        let uint = b.int("unsigned int", 4, false);
        let comm = b.array(char_t, int, 16);
        let list_id = b.next_id();
        let list_ptr = b.ptr(list_id + 1);
        let list = b.structure(
            "list_head",
            16,
            &[("next", list_ptr, 0), ("prev", list_ptr, 64)],
        );
        assert_eq!(list, list_id + 1);
        let void_ptr = b.ptr(0);
        let proto = b.proto(int, &[("", void_ptr)]);
        let fn_ptr = b.ptr(proto);
        let konst = b.konst(char_t);
        let name_ptr = b.ptr(konst);
        let inner = b.union("", 4, &[("a", int, 0), ("b", uint, 0)]);
        let task = b.structure(
            "task",
            64,
            &[
                ("pid", int, 0),
                ("comm", comm, 32),
                ("tasks", list, 160),
                ("fn", fn_ptr, 288),
                ("name", name_ptr, 352),
                ("", inner, 416),
            ],
        );
        let flags = b.structure_bits("flags", 4, &[("on", uint, 0, 1), ("mode", uint, 1, 3)]);
        let btf = Btf::parse(b.build()).unwrap();
        assert_eq!(
            btf.c_definition(task).unwrap(),
            "struct task {\n\tint pid;\n\tchar comm[16];\n\tstruct list_head tasks;\n\tint (*fn)(void *);\n\tconst char *name;\n\tunion {\n\t\tint a;\n\t\tunsigned int b;\n\t};\n};"
        );
        assert_eq!(
            btf.c_definition(list).unwrap(),
            "struct list_head {\n\tstruct list_head *next;\n\tstruct list_head *prev;\n};"
        );
        assert_eq!(
            btf.c_definition(flags).unwrap(),
            "struct flags {\n\tunsigned int on: 1;\n\tunsigned int mode: 3;\n};"
        );
        assert_eq!(btf.find_definition("struct", "task"), Some(task));
        assert_eq!(btf.find_definition("union", "task"), None);
        assert_eq!(
            btf.definition_names("struct"),
            ["flags", "list_head", "task"]
        );
        assert_eq!(btf.c_definition(int), None);
    }

    #[test]
    fn an_enum_with_its_values() {
        let mut b = BtfBuilder::new();
        let e = b.enumeration("state", 4, &[("RUNNING", 0), ("STOPPED", 4)]);
        let btf = Btf::parse(b.build()).unwrap();
        assert_eq!(
            btf.c_definition(e).unwrap(),
            "enum state {\n\tRUNNING = 0,\n\tSTOPPED = 4,\n};"
        );
    }
}
