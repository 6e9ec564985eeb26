//! "did you mean" for every unknown name: which known name the user most
//! likely meant.
//!
//! The rule is a noisy-channel guess: the best candidate maximises
//! `P(candidate) * P(typed | candidate)`.
//! - `P(typed | candidate)` comes from a weighted edit distance. A slip of
//!   the keyboard is rare: a word with one more edit is about 1000 times
//!   less likely (the order of single-edit probabilities in Kernighan,
//!   Church and Gale's spelling channel). Leaving letters out is the most
//!   common slip and how people abbreviate (`cnt`, `prnt`, `hst`), so an
//!   omitted letter costs half an edit; a wrong, extra or swapped letter
//!   costs one.
//! - `P(candidate)` is how often people use the name ([`builtin_uses`]):
//!   `cnt` is one edit from `cat` and two omissions (one edit) from `count`,
//!   and `count` is far more used, so `count` wins. Usage can outweigh half
//!   an edit only for a name used ~30 times more often, so `prnt` stays
//!   `print`, not `printf`.
//!
//! Names that are no builtin (probes, struct members, symbols) have no usage
//! count and are ranked by edit cost alone.

/// An edit's cost in half edits: omitting a letter of the candidate costs 1,
/// any other edit 2.
const OMISSION: u32 = 1;
const EDIT: u32 = 2;

/// How much less likely one more (whole) edit makes a candidate.
const EDIT_ODDS: f64 = 1000.0;

/// How often each builtin appears in the bpftrace scripts people run:
/// bpftrace 0.17's 38 shipped tools plus the one-liners of its tutorial
/// (counted December 2026; the name as a call or a variable, outside
/// comments and strings). Every other name counts 0.
pub fn builtin_uses(name: &str) -> u32 {
    match name {
        "tid" => 102,
        "printf" => 101,
        "delete" => 41,
        "args" => 38,
        "arg0" => 35,
        "comm" => 29,
        "pid" => 28,
        "clear" => 27,
        "nsecs" => 27,
        "ntop" => 26,
        "time" => 23,
        "count" => 10,
        "hist" => 9,
        "func" | "elapsed" | "str" => 7,
        "retval" | "lhist" => 6,
        "print" | "bswap" => 5,
        "kstack" => 4,
        "uid" | "stats" | "arg1" => 3,
        "probe" | "curtask" | "arg2" | "path" => 2,
        "usym" | "kaddr" | "join" | "cpu" | "cat" | "buf" | "arg3" | "exit" => 1,
        _ => 0,
    }
}

/// The candidate the user most likely meant by `typed`, if any is close
/// enough to be a likely slip. Candidates are weighted by [`builtin_uses`].
pub fn did_you_mean<'a>(
    typed: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    did_you_mean_weighted(typed, candidates.into_iter().map(|c| (c, builtin_uses(c))))
}

/// [`did_you_mean`] over candidates with their own usage counts (for a
/// table that carries them).
pub fn did_you_mean_weighted<'a>(
    typed: &str,
    candidates: impl IntoIterator<Item = (&'a str, u32)>,
) -> Option<&'a str> {
    let mut best: Option<(f64, &'a str)> = None;
    for (candidate, uses) in candidates {
        let Some(score) = suggestion_score(typed, candidate, uses) else {
            continue;
        };
        let better = match best {
            None => true,
            Some((s, c)) => {
                score > s || (score == s && (candidate.len(), candidate) < (c.len(), c))
            }
        };
        if better {
            best = Some((score, candidate));
        }
    }
    best.map(|(_, c)| c)
}

/// The log-likelihood that `candidate` (used `uses` times) was meant when
/// `typed` was written; `None` when it is too far to be a slip: more than a
/// third of the typed letters' worth of edits (at least one edit), or fewer
/// than half of the candidate's letters kept.
pub fn suggestion_score(typed: &str, candidate: &str, uses: u32) -> Option<f64> {
    let typed_len = typed.chars().count();
    let candidate_len = candidate.chars().count();
    if typed == candidate || typed_len * 2 < candidate_len {
        return None;
    }
    let limit = EDIT * (typed_len as u32 / 3).max(1);
    // Letters only the candidate has cost an omission each, letters only
    // the typed name has an edit each: too far by length alone is skipped
    // before the table (a kernel has ~80,000 function names to try).
    let by_length = if candidate_len > typed_len {
        (candidate_len - typed_len) as u32 * OMISSION
    } else {
        (typed_len - candidate_len) as u32 * EDIT
    };
    if by_length > limit || letter_bound(typed, candidate) > limit {
        return None;
    }
    let cost = edit_cost(typed, candidate, limit)?;
    let edits = f64::from(cost) / f64::from(EDIT);
    Some(f64::from(uses).ln_1p() - edits * EDIT_ODDS.ln())
}

/// A lower bound of the edit cost from the letters alone: each letter only
/// the typed name has takes a wrong or an extra letter (an edit each), each
/// letter only the candidate has takes at least an omission.
fn letter_bound(typed: &str, candidate: &str) -> u32 {
    // Bytes past ASCII are left out: the bound only gets weaker.
    let mut balance = [0i32; 128];
    for b in typed.bytes().filter(u8::is_ascii) {
        balance[b as usize] += 1;
    }
    for b in candidate.bytes().filter(u8::is_ascii) {
        balance[b as usize] -= 1;
    }
    let only_typed: i32 = balance.iter().filter(|n| **n > 0).sum();
    let only_candidate: i32 = -balance.iter().filter(|n| **n < 0).sum::<i32>();
    (only_typed as u32 * EDIT).max(only_candidate as u32 * OMISSION)
}

/// Weighted optimal-string-alignment distance from `candidate` to `typed`,
/// in half edits; `None` once it must exceed `limit` (two rows in a row
/// above it: later rows only add to their values).
fn edit_cost(typed: &str, candidate: &str, limit: u32) -> Option<u32> {
    let t: Vec<char> = typed.chars().collect();
    let c: Vec<char> = candidate.chars().collect();
    // d[i][j]: cost of writing t[..i] when c[..j] was meant.
    let mut d = vec![vec![0u32; c.len() + 1]; t.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i as u32 * EDIT;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j as u32 * OMISSION;
    }
    let mut previous_min = 0;
    for i in 1..=t.len() {
        let mut row_min = u32::MAX;
        for j in 1..=c.len() {
            let same = t[i - 1] == c[j - 1];
            let mut best = (d[i - 1][j - 1] + if same { 0 } else { EDIT })
                .min(d[i - 1][j] + EDIT)
                .min(d[i][j - 1] + OMISSION);
            if i > 1 && j > 1 && t[i - 1] == c[j - 2] && t[i - 2] == c[j - 1] && !same {
                best = best.min(d[i - 2][j - 2] + EDIT);
            }
            d[i][j] = best;
            row_min = row_min.min(best);
        }
        row_min = row_min.min(d[i][0]);
        if row_min > limit && previous_min > limit {
            return None;
        }
        previous_min = row_min;
    }
    Some(d[t.len()][c.len()]).filter(|&cost| cost <= limit)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builtins::{function_names, variable_names};

    fn builtins() -> Vec<&'static str> {
        let mut names: Vec<&str> = function_names()
            .into_iter()
            .chain(variable_names())
            .collect();
        names.sort_unstable();
        names.dedup();
        names
    }

    #[test]
    fn typos_of_builtins_suggest_what_people_use() {
        let names = builtins();
        for (typed, meant) in [
            // Abbreviations: letters left out.
            ("cnt", "count"),
            ("prnt", "print"),
            ("prntf", "printf"),
            ("hst", "hist"),
            ("nsec", "nsecs"),
            ("cmm", "comm"),
            ("pd", "pid"),
            ("delet", "delete"),
            ("ustak", "ustack"),
            ("clr", "clear"),
            // Swapped, wrong and extra letters.
            ("conut", "count"),
            ("prinft", "printf"),
            ("tdi", "tid"),
            ("comn", "comm"),
            ("avrg", "avg"),
            ("exitt", "exit"),
            ("elpased", "elapsed"),
            ("ksatck", "kstack"),
            ("retvl", "retval"),
        ] {
            assert_eq!(
                did_you_mean(typed, names.iter().copied()),
                Some(meant),
                "{typed}"
            );
        }
    }

    #[test]
    fn names_too_far_from_any_builtin_get_no_suggestion() {
        let names = builtins();
        for typed in ["x", "foo", "bar", "quux", "frobnicate", "qq"] {
            assert_eq!(did_you_mean(typed, names.iter().copied()), None, "{typed}");
        }
    }

    #[test]
    fn usage_breaks_ties_of_equal_cost() {
        // One wrong letter from both: the more used name wins, whatever the order.
        assert_eq!(did_you_mean("pud", ["uid", "pid"]), Some("pid"));
        assert_eq!(did_you_mean("pud", ["pid", "uid"]), Some("pid"));
        // Without usage (struct members, probes), the cheaper edit wins, then the shorter name.
        assert_eq!(did_you_mean("f_mod", ["f_mode", "f_mod_x"]), Some("f_mode"));
        assert_eq!(
            did_you_mean_weighted("ab", [("abc", 0), ("abd", 0)]),
            Some("abc")
        );
    }

    #[test]
    fn an_omitted_letter_costs_half_an_edit() {
        assert_eq!(edit_cost("cnt", "count", u32::MAX), Some(2 * OMISSION));
        assert_eq!(edit_cost("cnt", "cat", u32::MAX), Some(EDIT));
        assert_eq!(edit_cost("prinft", "printf", u32::MAX), Some(EDIT));
        assert_eq!(edit_cost("countt", "count", u32::MAX), Some(EDIT));
        assert_eq!(edit_cost("", "ab", u32::MAX), Some(2 * OMISSION));
        assert_eq!(letter_bound("cnt", "count"), 2 * OMISSION);
        assert_eq!(letter_bound("countt", "count"), EDIT);
        // Past the limit, the table stops early and says so.
        assert_eq!(edit_cost("abcdef", "uvwxyz", EDIT), None);
        assert_eq!(edit_cost("countt", "count", EDIT), Some(EDIT));
    }
}
