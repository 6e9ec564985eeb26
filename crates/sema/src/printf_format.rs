//! The conversions of a printf format string, for checking its arguments.

/// What kind of argument a conversion takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArgClass {
    /// `%d %i %u %x %X %o %c`
    Int,
    /// `%s`
    Str,
    /// `%p`
    Pointer,
}

/// A conversion and its byte range in the format string.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Conversion {
    pub class: ArgClass,
    pub start: usize,
    pub end: usize,
}

/// Finds the conversions, or says what is wrong and at which byte.
pub fn conversions(format: &str) -> Result<Vec<Conversion>, (usize, String)> {
    let b = format.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'%' {
            i += 1;
            continue;
        }
        let start = i;
        i += 1;
        if b.get(i) == Some(&b'%') {
            i += 1;
            continue;
        }
        while i < b.len() && b"-+ #0".contains(&b[i]) {
            i += 1;
        }
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        if b.get(i) == Some(&b'.') {
            i += 1;
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
        }
        while i < b.len() && b"hlzjt".contains(&b[i]) {
            i += 1;
        }
        let class = match b.get(i) {
            Some(b'd' | b'i' | b'u' | b'x' | b'X' | b'o' | b'c') => ArgClass::Int,
            Some(b's') => ArgClass::Str,
            Some(b'p') => ArgClass::Pointer,
            Some(&c) => return Err((i, format!("unknown conversion `%{}`", c as char))),
            None => return Err((start, "the format ends inside a conversion".into())),
        };
        i += 1;
        out.push(Conversion {
            class,
            start,
            end: i,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_conversions_with_flags_and_lengths() {
        let c = conversions("%-6d %-16s %% %lu %llx %p %c %05.2d").unwrap();
        let classes: Vec<_> = c.iter().map(|c| c.class).collect();
        use ArgClass::*;
        assert_eq!(classes, [Int, Str, Int, Int, Pointer, Int, Int]);
        assert_eq!((c[1].start, c[1].end), (5, 10));
    }

    #[test]
    fn reports_bad_conversions() {
        assert_eq!(conversions("%q").unwrap_err().0, 1);
        assert!(conversions("abc %").is_err());
    }
}
