//! C types as scripts write them: integer type names (`unsigned long`,
//! `u32`, `pid_t`), what a pointer type points to, and (see
//! [`ScriptTypes`]) the structs, unions and enums a script defines.

/// The size and signedness of a C or bpftrace integer type name
/// (qualifiers ignored), if it is one.
pub fn int_type(name: &str) -> Option<(u8, bool)> {
    let words: Vec<&str> = name
        .split_whitespace()
        .filter(|w| !matches!(*w, "const" | "volatile" | "restrict" | "__restrict"))
        .collect();
    let one = match words.as_slice() {
        [w] => Some(*w),
        _ => None,
    };
    if let Some(w) = one {
        let fixed = match w {
            "int8" | "s8" | "__s8" | "int8_t" | "i8" => Some((1, true)),
            "uint8" | "u8" | "__u8" | "uint8_t" | "bool" | "_Bool" => Some((1, false)),
            "int16" | "s16" | "__s16" | "int16_t" | "i16" => Some((2, true)),
            "uint16" | "u16" | "__u16" | "uint16_t" | "__be16" | "__le16" => Some((2, false)),
            "int32" | "s32" | "__s32" | "int32_t" | "i32" | "pid_t" | "ssize32_t" => {
                Some((4, true))
            }
            "uint32" | "u32" | "__u32" | "uint32_t" | "__be32" | "__le32" | "uid_t" | "gid_t"
            | "dev_t" | "umode_t" | "__kernel_dev_t" => Some((4, false)),
            "int64" | "s64" | "__s64" | "int64_t" | "i64" | "ssize_t" | "loff_t" | "time64_t" => {
                Some((8, true))
            }
            "uint64" | "u64" | "__u64" | "uint64_t" | "__be64" | "__le64" | "size_t"
            | "uintptr_t" | "sector_t" => Some((8, false)),
            _ => None,
        };
        if fixed.is_some() {
            return fixed;
        }
    }
    // C's own spellings: `unsigned long long int`, `signed char`, `short`.
    let mut signed = true;
    let mut explicit_sign = false;
    let mut longs = 0;
    let mut base = None;
    for w in &words {
        match *w {
            "unsigned" => {
                signed = false;
                explicit_sign = true;
            }
            "signed" => explicit_sign = true,
            "long" => longs += 1,
            "char" | "short" | "int" if base.is_none() => base = Some(*w),
            _ => return None,
        }
    }
    let size = match (base, longs) {
        (Some("char"), 0) => 1,
        (Some("short"), 0) => 2,
        (Some("int") | None, 0) if explicit_sign || base.is_some() => 4,
        (Some("int") | None, 1 | 2) => 8,
        _ => return None,
    };
    // A plain `char` is signed on x86-64, as the kernel is built.
    Some((size, signed))
}

/// What a pointer's C type (`int *`, `struct file **`) points to, without
/// the last `*`; `None` when it is no pointer type.
pub fn pointee(c_type: &str) -> Option<&str> {
    c_type
        .trim_end()
        .strip_suffix('*')
        .map(str::trim_end)
        .filter(|p| !p.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_type_names() {
        assert_eq!(int_type("int"), Some((4, true)));
        assert_eq!(int_type("unsigned int"), Some((4, false)));
        assert_eq!(int_type("const unsigned long"), Some((8, false)));
        assert_eq!(int_type("long long int"), Some((8, true)));
        assert_eq!(int_type("unsigned"), Some((4, false)));
        assert_eq!(int_type("signed char"), Some((1, true)));
        assert_eq!(int_type("unsigned char"), Some((1, false)));
        assert_eq!(int_type("short"), Some((2, true)));
        assert_eq!(int_type("u32"), Some((4, false)));
        assert_eq!(int_type("__s64"), Some((8, true)));
        assert_eq!(int_type("pid_t"), Some((4, true)));
        assert_eq!(int_type("uint64"), Some((8, false)));
        assert_eq!(int_type("struct file"), None);
        assert_eq!(int_type("void"), None);
        assert_eq!(int_type("long double"), None);
    }

    #[test]
    fn pointees() {
        assert_eq!(pointee("int *"), Some("int"));
        assert_eq!(pointee("struct file **"), Some("struct file *"));
        assert_eq!(pointee("int"), None);
        assert_eq!(pointee("*"), None);
    }
}
