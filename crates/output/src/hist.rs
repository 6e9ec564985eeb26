//! Which buckets of a hist/lhist are shown, shared by the text and JSON
//! sinks. Mirrors `Output::hist_prepare` / `lhist_prepare` of bpftrace 0.17,
//! including their `int` truncation of counts.

/// The shown range of a `hist()`: from the first to the last non-empty
/// bucket, and the largest count (for bar widths). `None` if all are empty.
pub(crate) struct HistRange {
    pub first: usize,
    pub last: usize,
    pub max_count: i32,
}

pub(crate) fn hist_range(buckets: &[u64]) -> Option<HistRange> {
    let mut first = None;
    let mut last = 0;
    let mut max_count = 0i32;
    for (index, &count) in buckets.iter().enumerate() {
        // bpftrace reads each count into an `int`.
        let count = count as i32;
        if count > 0 {
            first.get_or_insert(index);
            last = index;
        }
        max_count = max_count.max(count);
    }
    first.map(|first| HistRange {
        first,
        last,
        max_count,
    })
}

/// The shown range of an `lhist()`: first to last non-empty bucket, the
/// number of in-range steps and the largest count.
pub(crate) struct LhistRange {
    pub first: usize,
    pub last: usize,
    pub steps: i64,
    pub max_count: i32,
}

pub(crate) fn lhist_range(buckets: &[u64], min: i64, max: i64, step: i64) -> Option<LhistRange> {
    let steps = max.wrapping_sub(min).checked_div(step).unwrap_or(0);
    let mut max_count = 0i32;
    let mut any = false;
    for &count in buckets {
        let count = count as i32;
        any |= count != 0;
        max_count = max_count.max(count);
    }
    if !any {
        return None;
    }
    let shown = usize::try_from(steps.saturating_add(2))
        .unwrap_or(0)
        .min(buckets.len());
    let non_empty = || (0..shown).filter(|&i| buckets[i] > 0);
    Some(LhistRange {
        first: non_empty().next().unwrap_or(0),
        last: non_empty().next_back().unwrap_or(0),
        steps,
        max_count,
    })
}

/// Bar length in `@`s, computed in `float` like bpftrace; clamped to the
/// 52 columns so that absurd counts cannot allocate without bound.
pub(crate) fn bar_width(count: u64, max_count: i32) -> usize {
    let width = count as f32 / max_count as f32 * 52.0;
    (width as i32).clamp(0, 52) as usize
}
