//! Numbers written outside expressions, as bpftrace reads them: counts and
//! rates in attach points (`software:cpu:1e6`, `interval:ms:100`,
//! `profile:hz:99`), and `-p PID`.
//!
//! `_` separators are dropped; `0x`, `0b` and a leading `0` give hex,
//! binary and octal; `Ne+X` (N from 1 to 9) is N·10^X; a C suffix (`u`,
//! `ul`, `ull`, `l`, `ll`) is allowed, and a duration suffix (`ns`, `us`,
//! `ms`, `s`, `m`, `h`, `d`) gives nanoseconds.

use std::fmt;

/// Why a text is not a number, worded as bpftrace words it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NumberError {
    /// Nothing that reads as digits.
    Invalid,
    /// Digits followed by something that is no suffix (`111a1`).
    TrailingBytes,
    /// `Ne+X` with N outside 1..=9.
    Coefficient,
    /// More than the type holds.
    Overflow { max: u64 },
}

impl fmt::Display for NumberError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NumberError::Invalid => f.write_str("invalid integer"),
            NumberError::TrailingBytes => f.write_str("invalid trailing bytes"),
            NumberError::Coefficient => {
                f.write_str("the coefficient of a scientific literal must be 1-9")
            }
            NumberError::Overflow { max } => write!(f, "overflow, the maximum is {max}"),
        }
    }
}

/// A non-negative number as bpftrace's attach points and options read one.
pub fn parse_uint(text: &str) -> Result<u64, NumberError> {
    let digits: String = text.chars().filter(|&c| c != '_').collect();
    let lower = digits.to_ascii_lowercase();
    let (radix, body) = if let Some(hex) = lower.strip_prefix("0x") {
        (16, hex)
    } else if let Some(bin) = lower.strip_prefix("0b").filter(|b| !b.is_empty()) {
        (2, bin)
    } else if lower.len() >= 2
        && lower.starts_with('0')
        && matches!(lower.as_bytes()[1], b'0'..=b'7')
    {
        (8, &lower[1..])
    } else {
        (10, lower.as_str())
    };
    let end = body
        .find(|c: char| !c.is_digit(radix))
        .unwrap_or(body.len());
    if end == 0 {
        return Err(NumberError::Invalid);
    }
    let mut value = u64::from_str_radix(&body[..end], radix)
        .map_err(|_| NumberError::Overflow { max: u64::MAX })?;
    let mut rest = &body[end..];
    // `1e6`: a single coefficient digit, then the power of ten.
    if radix == 10
        && let Some(exp) = rest.strip_prefix('e')
        && exp.starts_with(|c: char| ('1'..='9').contains(&c))
    {
        if !(1..=9).contains(&value) {
            return Err(NumberError::Coefficient);
        }
        let exp_end = exp.find(|c: char| !c.is_ascii_digit()).unwrap_or(exp.len());
        let power: u32 = exp[..exp_end]
            .parse()
            .map_err(|_| NumberError::Overflow { max: u64::MAX })?;
        value = 10u64
            .checked_pow(power)
            .and_then(|p| value.checked_mul(p))
            .ok_or(NumberError::Overflow { max: u64::MAX })?;
        rest = &exp[exp_end..];
    }
    let (max, scale): (u64, u64) = match rest {
        "" | "ull" => (u64::MAX, 1),
        "u" => (u32::MAX as u64, 1),
        "ul" => (u64::MAX, 1),
        "l" | "ll" => (i64::MAX as u64, 1),
        "ns" => (u64::MAX, 1),
        "us" => (u64::MAX, 1_000),
        "ms" => (u64::MAX, 1_000_000),
        "s" => (u64::MAX, 1_000_000_000),
        "m" => (u64::MAX, 60_000_000_000),
        "h" => (u64::MAX, 3_600_000_000_000),
        "d" => (u64::MAX, 86_400_000_000_000),
        _ => return Err(NumberError::TrailingBytes),
    };
    if value > max / scale {
        return Err(NumberError::Overflow { max });
    }
    Ok(value * scale)
}

/// A signed number: `-` then [`parse_uint`]'s forms.
pub fn parse_int(text: &str) -> Result<i64, NumberError> {
    match text.strip_prefix('-') {
        Some(magnitude) => {
            let v = parse_uint(magnitude)?;
            if v > i64::MAX as u64 + 1 {
                return Err(NumberError::Overflow {
                    max: i64::MAX as u64,
                });
            }
            Ok((v as i64).wrapping_neg())
        }
        None => {
            let v = parse_uint(text)?;
            i64::try_from(v).map_err(|_| NumberError::Overflow {
                max: i64::MAX as u64,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bases_separators_and_exponents() {
        assert_eq!(parse_uint("100"), Ok(100));
        assert_eq!(parse_uint("1_000"), Ok(1000));
        assert_eq!(parse_uint("0x10"), Ok(16));
        assert_eq!(parse_uint("0XfF"), Ok(255));
        assert_eq!(parse_uint("0b101"), Ok(5));
        assert_eq!(parse_uint("0775"), Ok(0o775));
        assert_eq!(parse_uint("0"), Ok(0));
        assert_eq!(parse_uint("1e6"), Ok(1_000_000));
        assert_eq!(parse_uint("5e3"), Ok(5_000));
        assert_eq!(parse_uint("0xffffffffffffffff"), Ok(u64::MAX));
    }

    #[test]
    fn suffixes() {
        assert_eq!(parse_uint("10u"), Ok(10));
        assert_eq!(parse_uint("10ull"), Ok(10));
        assert_eq!(parse_uint("2s"), Ok(2_000_000_000));
        assert_eq!(parse_uint("100ms"), Ok(100_000_000));
        assert_eq!(parse_uint("5us"), Ok(5_000));
        assert_eq!(parse_uint("1m"), Ok(60_000_000_000));
        assert_eq!(parse_uint("1e3us"), Ok(1_000_000));
    }

    #[test]
    fn errors_are_worded_as_bpftrace_words_them() {
        assert_eq!(
            parse_uint("a1111").unwrap_err().to_string(),
            "invalid integer"
        );
        assert_eq!(
            parse_uint("111a1").unwrap_err().to_string(),
            "invalid trailing bytes"
        );
        assert_eq!(parse_uint("not_a_pid"), Err(NumberError::Invalid));
        assert_eq!(parse_uint(""), Err(NumberError::Invalid));
        assert_eq!(parse_uint("-1"), Err(NumberError::Invalid));
        assert_eq!(parse_uint("10e6"), Err(NumberError::Coefficient));
        assert_eq!(
            parse_uint("5000000000u"),
            Err(NumberError::Overflow {
                max: u32::MAX as u64
            })
        );
        assert!(matches!(
            parse_uint("18446744073709551616"),
            Err(NumberError::Overflow { .. })
        ));
        assert!(matches!(
            parse_uint("9e19"),
            Err(NumberError::Overflow { .. })
        ));
        assert!(matches!(
            parse_uint("1000000d"),
            Err(NumberError::Overflow { .. })
        ));
    }

    #[test]
    fn signed() {
        assert_eq!(parse_int("-10"), Ok(-10));
        assert_eq!(parse_int("0x10"), Ok(16));
        assert_eq!(parse_int("-9223372036854775808"), Ok(i64::MIN));
        assert!(parse_int("9223372036854775808").is_err());
        assert_eq!(parse_int("False"), Err(NumberError::Invalid));
    }
}
