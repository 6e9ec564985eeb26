//! The buckets of a hist/lhist that are shown and their bounds, shared by
//! the text and JSON sinks, as bpftrace's current release builds them
//! (`build_histogram` / `build_linear_histogram`): from the first to the
//! last non-empty bucket, each bounded by labels that are plain integers
//! or, for large powers and round lhist steps, numbers with a suffix
//! (`1K`, `4M`) that keep their numeric value for JSON.

/// A bucket bound.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Label {
    /// A plain integer (two adjacent ones make a one-value bucket: `[3]`).
    Int(i64),
    /// A number shown with a suffix; JSON shows its value (an unsigned
    /// 64-bit number, as bpftrace keeps it, negative lhist bounds included).
    Symbolic { text: String, value: u64 },
}

impl Label {
    pub(crate) fn text(&self) -> String {
        match self {
            Label::Int(v) => v.to_string(),
            Label::Symbolic { text, .. } => text.clone(),
        }
    }

    /// JSON's closed upper bound: one less than the (exclusive) label.
    pub(crate) fn one_less(&self) -> i64 {
        match self {
            Label::Int(v) => v.wrapping_sub(1),
            Label::Symbolic { value: 0, .. } => -1,
            Label::Symbolic { value, .. } => (value - 1) as i64,
        }
    }
}

/// One shown bucket: `[lower, upper)`, `(..., upper)` without a lower
/// bound (values below the first), `[lower, ...)` without an upper one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Bucket {
    pub lower: Option<Label>,
    pub upper: Option<Label>,
    pub count: u64,
}

impl Bucket {
    /// The text header: `[0]` for a one-value bucket of plain integers.
    pub(crate) fn header(&self) -> String {
        match (&self.lower, &self.upper) {
            (None, Some(upper)) => format!("(..., {})", upper.text()),
            (Some(lower), None) => format!("[{}, ...)", lower.text()),
            (Some(Label::Int(a)), Some(Label::Int(b))) if a.checked_add(1) == Some(*b) => {
                format!("[{a}]")
            }
            (Some(lower), Some(upper)) => format!("[{}, {})", lower.text(), upper.text()),
            (None, None) => String::new(),
        }
    }
}

/// The first and last bucket with a count, as bpftrace finds them: each
/// count read into an `int`, so only those that are positive as one count.
fn shown_indices(buckets: &[u64]) -> Option<(usize, usize)> {
    let positive = |&(_, &count): &(usize, &u64)| (count as i32) > 0;
    let first = buckets.iter().enumerate().find(positive)?.0;
    let last = buckets.iter().enumerate().rfind(positive)?.0;
    Some((first, last))
}

/// The label of `hist()` bucket `index` with `bits` sub-buckets per power
/// of two (its exclusive upper bound), past the first `2 << bits` buckets.
fn power_label(index: usize, bits: u32) -> Label {
    let n = 1u64 << bits;
    let interval = index as u64 & (n - 1);
    let mut power = (index as u64 >> bits).saturating_sub(1);
    let value = 1u64
        .checked_shl(power as u32)
        .unwrap_or(0)
        .wrapping_mul(n + interval);
    let decade = (power / 10).min(6);
    power -= 10 * decade;
    let suffix = ["", "K", "M", "G", "T", "P", "E"][decade as usize];
    let text = format!("{}{suffix}", (1u64 << power).wrapping_mul(n + interval));
    Label::Symbolic { text, value }
}

/// The label of `hist()` bucket `index`: plain for the first `2 << bits`.
fn hist_label(index: usize, bits: u32) -> Label {
    if index as u64 <= 2u64 << bits {
        Label::Int(index as i64)
    } else {
        power_label(index, bits)
    }
}

/// The exclusive upper bound of `hist()` bucket `index` (at least 1) with
/// `bits` sub-buckets per power of two.
pub(crate) fn hist_upper(index: usize, bits: u32) -> u64 {
    match hist_label(index, bits) {
        Label::Int(v) => v as u64,
        Label::Symbolic { value, .. } => value,
    }
}

/// The `bits` of a `hist()` value with `len` buckets (each `bits` has its
/// own count, `abi::hist_buckets`).
pub(crate) fn bits_of(len: usize) -> u32 {
    (0..=u32::from(abi::HIST_MAX_BITS))
        .find(|&bits| abi::hist_buckets(bits as u8) as usize == len)
        .unwrap_or(0)
}

/// The shown buckets of a `hist()` (index 0 negative values, 1 zero, then
/// powers of two), counts divided by `div`. Empty when all are empty.
pub(crate) fn hist_buckets(buckets: &[u64], bits: u32, div: u64) -> Vec<Bucket> {
    let Some((first, last)) = shown_indices(buckets) else {
        return Vec::new();
    };
    let div = div.max(1);
    let mut lower = (first != 0).then(|| hist_label(first - 1, bits));
    let mut out = Vec::new();
    for (index, &count) in buckets.iter().enumerate().take(last + 1).skip(first) {
        let upper = if index == 0 {
            Label::Int(0)
        } else {
            hist_label(index, bits)
        };
        out.push(Bucket {
            lower: lower.take(),
            upper: Some(upper.clone()),
            count: count / div,
        });
        lower = Some(upper);
    }
    out
}

/// The label of an lhist bound: suffixed only when the step is a multiple
/// of 1024 (`lhist_index_label`, computed in `int`).
fn lhist_label(number: i64, step: i64) -> Label {
    const KILO: i64 = 1024;
    const MEGA: i64 = 1024 * 1024;
    let number = number as i32 as i64;
    if step % KILO != 0 {
        return Label::Int(number);
    }
    let text = if number == 0 {
        "0".to_string()
    } else if number % MEGA == 0 {
        format!("{}M", number / MEGA)
    } else if number % KILO == 0 {
        format!("{}K", number / KILO)
    } else {
        number.to_string()
    };
    Label::Symbolic {
        text,
        value: number as u64,
    }
}

/// The shown buckets of an `lhist()` (index 0 below `min`, `1..=n` the
/// steps, the last at or above `max`). `print()`'s divisor does not apply.
pub(crate) fn lhist_buckets(buckets: &[u64], min: i64, max: i64, step: i64) -> Vec<Bucket> {
    let Some((first, last)) = shown_indices(buckets) else {
        return Vec::new();
    };
    let bound = |i: usize| min.wrapping_add((i as i64).wrapping_mul(step));
    let mut lower = (first != 0).then(|| lhist_label(bound(first - 1), step));
    let mut out = Vec::new();
    for (index, &count) in buckets.iter().enumerate().take(last + 1).skip(first) {
        // The last bucket has no upper bound.
        let upper = (bound(index) <= max).then(|| lhist_label(bound(index), step));
        out.push(Bucket {
            lower: lower.take(),
            upper: upper.clone(),
            count,
        });
        lower = upper;
    }
    out
}

/// Bar length in `@`s: the count over the largest shown count, times the 52
/// columns, computed in `float` as bpftrace does.
pub(crate) fn bar_width(count: u64, max_count: u64) -> usize {
    let width = count as f32 / max_count as f32 * 52.0;
    if width.is_nan() {
        0
    } else {
        (width as i32).clamp(0, 52) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(buckets: &[Bucket]) -> Vec<String> {
        buckets.iter().map(Bucket::header).collect()
    }

    #[test]
    fn hist_headers_from_negative_to_kilo() {
        let mut b = vec![0u64; 66];
        b[0] = 1; // negative
        b[3] = 2; // [2, 4)
        b[11] = 1; // [512, 1K)
        let shown = hist_buckets(&b, 0, 1);
        let h = headers(&shown);
        assert_eq!(h[0], "(..., 0)");
        assert_eq!(h[1], "[0]");
        assert_eq!(h[2], "[1]");
        assert_eq!(h[3], "[2, 4)");
        assert_eq!(h[11], "[512, 1K)");
        assert_eq!(h.len(), 12);
    }

    #[test]
    fn hist_labels_reach_exa_with_their_values() {
        let mut b = vec![0u64; 66];
        b[35] = 1; // [8G, 16G)
        b[64] = 1; // [4E, 8E)
        let shown = hist_buckets(&b, 0, 1);
        assert_eq!(shown[0].header(), "[8G, 16G)");
        assert_eq!(
            shown[0].lower,
            Some(Label::Symbolic {
                text: "8G".into(),
                value: 1 << 33
            })
        );
        assert_eq!(shown[0].upper.as_ref().unwrap().one_less(), (1 << 34) - 1);
        assert_eq!(shown.last().unwrap().header(), "[4E, 8E)");
    }

    #[test]
    fn lhist_one_value_steps_collapse_and_round_steps_get_suffixes() {
        let mut b = vec![0u64; 12];
        b[4] = 1;
        b[11] = 1;
        let shown = lhist_buckets(&b, 0, 10, 1);
        assert_eq!(shown[0].header(), "[3]");
        assert_eq!(shown.last().unwrap().header(), "[10, ...)");
        let mut k = vec![0u64; 6];
        k[1] = 1;
        k[2] = 1;
        let shown = lhist_buckets(&k, 0, 4 << 20, 1 << 20);
        assert_eq!(headers(&shown), ["[0, 1M)", "[1M, 2M)"]);
    }

    #[test]
    fn only_the_overflow_bucket() {
        let mut b = vec![0u64; 12];
        b[11] = 3;
        let shown = lhist_buckets(&b, 0, 100, 10);
        assert_eq!(headers(&shown), ["[100, ...)"]);
    }
}
