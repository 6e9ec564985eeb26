//! Parser for tracefs `events/<category>/<name>/format` files.

use crate::KernelInfoError;

/// How a tracepoint field is stored in the record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FieldKind {
    /// An integer of `size` bytes.
    Int,
    /// A pointer (`const char *`, `struct x *`): 8 bytes holding an address.
    Pointer,
    /// A fixed array of `len` elements (`char comm[16]`).
    Array { len: u32 },
    /// `__data_loc T[] name`: a `u32` whose low 16 bits are the offset of the
    /// data from the start of the record and high 16 bits its length.
    DataLoc,
}

/// One field of a tracepoint record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TpField {
    pub name: String,
    /// The C type as tracefs prints it, without the name or array suffix
    /// (`const char *`, `char`, `__data_loc char[]`, `pid_t`).
    pub c_type: String,
    pub offset: u32,
    pub size: u32,
    pub signed: bool,
    pub kind: FieldKind,
}

impl TpField {
    /// True for `char` arrays and `__data_loc char[]`, which bpftrace treats as strings.
    pub fn is_string(&self) -> bool {
        let base = self.c_type.trim_start_matches("__data_loc").trim();
        let base = base.trim_end_matches("[]").trim();
        let char_like = matches!(
            base,
            "char" | "const char" | "unsigned char" | "signed char"
        );
        char_like && matches!(self.kind, FieldKind::Array { .. } | FieldKind::DataLoc)
    }
}

/// The layout of one tracepoint's record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TracepointFormat {
    pub name: String,
    pub id: u32,
    /// The fields after the `common_*` header fields, in record order.
    pub fields: Vec<TpField>,
    /// The `common_*` fields.
    pub common_fields: Vec<TpField>,
}

impl TracepointFormat {
    pub fn field(&self, name: &str) -> Option<&TpField> {
        self.fields.iter().find(|f| f.name == name)
    }

    /// Size of the record's fixed part (end of the last field).
    pub fn record_size(&self) -> u32 {
        self.fields
            .iter()
            .chain(&self.common_fields)
            .map(|f| f.offset + f.size)
            .max()
            .unwrap_or(0)
    }
}

/// Parses the text of a `format` file.
pub fn parse_format(text: &str) -> Result<TracepointFormat, KernelInfoError> {
    let mut name = String::new();
    let mut id = 0;
    let mut fields = Vec::new();
    let mut common_fields = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        if let Some(rest) = line.strip_prefix("name:") {
            name = rest.trim().to_string();
        } else if let Some(rest) = line.strip_prefix("ID:") {
            id = rest.trim().parse().map_err(|_| malformed(line))?;
        } else if line.starts_with("field:") {
            let field = parse_field(line).ok_or_else(|| malformed(line))?;
            if field.name.starts_with("common_") {
                common_fields.push(field);
            } else {
                fields.push(field);
            }
        }
    }
    if name.is_empty() {
        return Err(KernelInfoError::Malformed(
            "tracepoint format has no name".into(),
        ));
    }
    Ok(TracepointFormat {
        name,
        id,
        fields,
        common_fields,
    })
}

fn malformed(line: &str) -> KernelInfoError {
    KernelInfoError::Malformed(format!("cannot parse tracepoint format line `{line}`"))
}

/// `field:const char * filename;    offset:24;    size:8;    signed:0;`
fn parse_field(line: &str) -> Option<TpField> {
    let mut decl = None;
    let (mut offset, mut size, mut signed) = (None, None, false);
    for part in line.split(';').map(str::trim).filter(|p| !p.is_empty()) {
        let (key, value) = part.split_once(':')?;
        match key.trim() {
            "field" => decl = Some(value.trim()),
            "offset" => offset = value.trim().parse().ok(),
            "size" => size = value.trim().parse().ok(),
            "signed" => signed = value.trim() == "1",
            _ => {}
        }
    }
    let decl = decl?;
    let (offset, size) = (offset?, size?);
    // The name is the last identifier, possibly followed by `[N]`.
    let (decl_no_array, array_len) = match decl.strip_suffix(']') {
        Some(d) if !decl.ends_with("[]") => {
            let open = d.rfind('[')?;
            let len = d[open + 1..].trim();
            // Array sizes may be symbolic (`[TASK_COMM_LEN]`): derive from the byte size then.
            (d[..open].trim_end(), Some(len.parse::<u32>().ok()))
        }
        _ => (decl, None),
    };
    let name_start = decl_no_array.rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))? + 1;
    let name = decl_no_array[name_start..].to_string();
    let c_type = decl_no_array[..name_start].trim().to_string();
    if name.is_empty() || c_type.is_empty() {
        return None;
    }
    let kind = if c_type.starts_with("__data_loc") {
        FieldKind::DataLoc
    } else if let Some(len) = array_len {
        let len = match len {
            Some(n) => n,
            None => size / element_size(&c_type).max(1),
        };
        FieldKind::Array { len }
    } else if c_type.ends_with('*') {
        FieldKind::Pointer
    } else {
        FieldKind::Int
    };
    Some(TpField {
        name,
        c_type,
        offset,
        size,
        signed,
        kind,
    })
}

fn element_size(c_type: &str) -> u32 {
    match c_type
        .trim_start_matches("const ")
        .trim_start_matches("unsigned ")
    {
        "char" | "u8" | "s8" | "__u8" => 1,
        "short" | "u16" | "s16" | "__u16" => 2,
        "int" | "u32" | "s32" | "__u32" => 4,
        _ => 8,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SCHED_SWITCH: &str = "name: sched_switch\nID: 372\nformat:\n\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n\tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;\n\tfield:long prev_state;\toffset:32;\tsize:8;\tsigned:1;\n\tfield:const char * filename;\toffset:40;\tsize:8;\tsigned:0;\n\tfield:__data_loc char[] cmd;\toffset:60;\tsize:4;\tsigned:0;\n\tfield:char name[TASK_COMM_LEN];\toffset:64;\tsize:16;\tsigned:0;\n\nprint fmt: \"prev_comm=%s\", REC->prev_comm\n";

    #[test]
    fn parses_every_field_kind() {
        let f = parse_format(SCHED_SWITCH).unwrap();
        assert_eq!(f.name, "sched_switch");
        assert_eq!(f.id, 372);
        assert_eq!(f.common_fields.len(), 2);
        let names: Vec<_> = f.fields.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "prev_comm",
                "prev_pid",
                "prev_state",
                "filename",
                "cmd",
                "name"
            ]
        );
        let comm = f.field("prev_comm").unwrap();
        assert_eq!(
            (comm.kind.clone(), comm.c_type.as_str(), comm.is_string()),
            (FieldKind::Array { len: 16 }, "char", true)
        );
        let pid = f.field("prev_pid").unwrap();
        assert_eq!(
            (pid.offset, pid.size, pid.signed, pid.c_type.as_str()),
            (24, 4, true, "pid_t")
        );
        assert_eq!(f.field("filename").unwrap().kind, FieldKind::Pointer);
        assert_eq!(f.field("filename").unwrap().c_type, "const char *");
        let cmd = f.field("cmd").unwrap();
        assert_eq!(
            (cmd.kind.clone(), cmd.is_string()),
            (FieldKind::DataLoc, true)
        );
        assert_eq!(f.field("name").unwrap().kind, FieldKind::Array { len: 16 });
        assert_eq!(f.record_size(), 80);
    }

    #[test]
    fn rejects_garbage() {
        assert!(parse_format("hello").is_err());
        assert!(parse_format("name: x\nformat:\n\tfield:int;\toffset:zz;\n").is_err());
    }
}
