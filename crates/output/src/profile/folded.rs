//! Folded stacks, the FlameGraph suite's text format: one line per stack,
//! frames root first separated by `;`, then a space and the weight:
//!
//! ```text
//! weftwl;_start;main;weft_workload_spin 480
//! weftwl;__libc_start_main;syscall;entry_SYSCALL_64_after_hwframe_[k];do_syscall_64_[k] 3
//! ```
//!
//! The comm comes first, then the user frames, then the kernel frames.
//! Offsets are left out, so a function's samples merge; an unresolved frame
//! is `[unknown]`; `;` inside a name becomes `:` (as `stackcollapse-perf.pl`
//! does) and line breaks spaces, so a line always splits back into the same
//! frames. Kernel frames end in `_[k]` and JIT frames in `_[j]` (perf's
//! annotations, as `stackcollapse-perf.pl --all` and bcc's `profile -a` write
//! them), which flame graphs colour and show without the suffix.

use std::borrow::Cow;
use std::collections::HashMap;
use std::io::{self, Write};

use super::{FrameKind, Profile, ProfileFrame, ProfileSample};

/// What goes into a folded line besides the frames.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FoldOptions {
    /// `_[k]` after kernel frames, `_[j]` after JIT frames.
    pub annotate: bool,
    /// The map's name as the root frame (a profile of several maps).
    pub map_roots: bool,
    /// The pid after the comm (`comm-PID`), as `stackcollapse-perf.pl --pid`.
    pub pids: bool,
}

impl Default for FoldOptions {
    fn default() -> Self {
        FoldOptions {
            annotate: true,
            map_roots: false,
            pids: false,
        }
    }
}

/// A frame name made safe for a folded line.
pub fn escape(name: &str) -> Cow<'_, str> {
    if name.is_empty() {
        return Cow::Borrowed("[unknown]");
    }
    if !name.contains([';', '\n', '\r']) {
        return Cow::Borrowed(name);
    }
    Cow::Owned(
        name.chars()
            .map(|c| match c {
                ';' => ':',
                '\n' | '\r' => ' ',
                c => c,
            })
            .collect(),
    )
}

/// Whether a name is a marker of weft's (`[unknown]`, `[Missed Kernel
/// Stack]`), not code: it takes no `_[k]`/`_[j]` annotation.
fn is_marker(name: &str) -> bool {
    name.starts_with('[') && name.ends_with(']')
}

fn push_frame(line: &mut String, frame: &ProfileFrame, annotate: bool) {
    if !line.is_empty() {
        line.push(';');
    }
    let name = escape(frame.name.as_deref().unwrap_or("[unknown]"));
    line.push_str(&name);
    if annotate && !is_marker(&name) {
        match frame.kind {
            FrameKind::Kernel => line.push_str("_[k]"),
            FrameKind::Jit => line.push_str("_[j]"),
            FrameKind::User => {}
        }
    }
}

/// The stack part of a sample's folded line (without the weight).
pub fn stack_line(sample: &ProfileSample, opts: FoldOptions) -> String {
    let mut line = String::new();
    if opts.map_roots
        && let Some(map) = &sample.map
    {
        line.push_str(&escape(map));
    }
    let mut root = sample.comm.as_deref().map(escape).unwrap_or_default();
    let mut ids: Vec<i64> = Vec::new();
    if opts.pids {
        ids.extend(sample.pid.map(i64::from));
    }
    ids.extend(&sample.ints);
    for (i, id) in ids.iter().enumerate() {
        let sep = if i == 0 { '-' } else { '/' };
        let root = root.to_mut();
        if !root.is_empty() || i > 0 {
            root.push(sep);
        }
        root.push_str(&id.to_string());
    }
    if !root.is_empty() {
        if !line.is_empty() {
            line.push(';');
        }
        line.push_str(&root);
    }
    // A run of frames that did not resolve (a frame-pointer walk through
    // code without them) is one `[unknown]`: 127 of them in one sample
    // would make the picture 127 frames tall.
    let mut last_unknown: Option<FrameKind> = None;
    for frame in sample.user.iter().rev().chain(sample.kernel.iter().rev()) {
        let unknown = frame.name.as_deref().is_none_or(str::is_empty);
        if !(unknown && last_unknown == Some(frame.kind)) {
            push_frame(&mut line, frame, opts.annotate);
        }
        last_unknown = unknown.then_some(frame.kind);
    }
    if line.is_empty() {
        line.push_str("[unknown]");
    }
    line
}

/// Every distinct stack of `profile` with its summed weight, in byte order
/// of the stack (what `flamegraph.pl` sorts by); stacks of weight 0 are left out.
pub fn fold(profile: &Profile, opts: FoldOptions) -> Vec<(String, u64)> {
    let mut merged: HashMap<String, u64> = HashMap::with_capacity(profile.samples.len());
    for sample in &profile.samples {
        if sample.value == 0 {
            continue;
        }
        let total = merged.entry(stack_line(sample, opts)).or_insert(0);
        *total = total.saturating_add(sample.value);
    }
    let mut lines: Vec<(String, u64)> = merged.into_iter().collect();
    lines.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    lines
}

/// Writes folded lines.
pub fn write<W: Write + ?Sized>(lines: &[(String, u64)], out: &mut W) -> io::Result<()> {
    for (stack, count) in lines {
        writeln!(out, "{stack} {count}")?;
    }
    Ok(())
}

/// Splits a folded line into its stack and weight; `None` for blank lines,
/// `#` comments and lines without a weight. A differential line
/// (`stack before after`) gives its last number.
pub fn parse_line(line: &str) -> Option<(&str, u64)> {
    let line = line.trim_end();
    if line.is_empty() || line.starts_with('#') {
        return None;
    }
    let (stack, count) = line.rsplit_once(' ')?;
    let count = count.parse::<u64>().ok()?;
    let stack = stack.trim_end();
    // A differential line's first count.
    let stack = match stack.rsplit_once(' ') {
        Some((s, n)) if n.parse::<u64>().is_ok() => s.trim_end(),
        _ => stack,
    };
    (!stack.is_empty()).then_some((stack, count))
}

#[cfg(test)]
mod tests {
    use super::super::{ProfileInfo, ProfileKind};
    use super::*;

    fn frame(name: Option<&str>, kind: FrameKind) -> ProfileFrame {
        ProfileFrame {
            name: name.map(str::to_string),
            kind,
            addr: 1,
            module: None,
        }
    }

    fn sample(comm: &str, user: &[&str], kernel: &[&str], value: u64) -> ProfileSample {
        let frames = |names: &[&str], kind| {
            names
                .iter()
                .map(|n| frame((!n.is_empty()).then_some(*n), kind))
                .collect()
        };
        ProfileSample {
            comm: Some(comm.into()),
            pid: Some(42),
            ints: Vec::new(),
            user: frames(user, FrameKind::User),
            kernel: frames(kernel, FrameKind::Kernel),
            value,
            map: None,
        }
    }

    fn profile(samples: Vec<ProfileSample>) -> Profile {
        Profile {
            info: ProfileInfo {
                kind: ProfileKind::OnCpu {
                    period_ns: 10_101_010,
                },
                title: "t".into(),
                command_line: "weft profile".into(),
                start_unix_ns: 0,
                duration_ns: 0,
            },
            samples,
        }
    }

    #[test]
    fn root_first_comm_user_then_kernel() {
        // Innermost first in the sample, root first in the line.
        let s = sample(
            "weftwl",
            &["syscall", "main", "_start"],
            &["do_syscall_64", "entry_SYSCALL_64"],
            3,
        );
        assert_eq!(
            stack_line(&s, FoldOptions::default()),
            "weftwl;_start;main;syscall;entry_SYSCALL_64_[k];do_syscall_64_[k]"
        );
        let plain = FoldOptions {
            annotate: false,
            ..FoldOptions::default()
        };
        assert_eq!(
            stack_line(&s, plain),
            "weftwl;_start;main;syscall;entry_SYSCALL_64;do_syscall_64"
        );
    }

    #[test]
    fn unknown_frames_escapes_and_ids() {
        let mut s = sample("a;b", &["", "<[u8; 8] as Foo>::bar"], &[], 1);
        s.user.push(frame(Some("multi\nline"), FrameKind::Jit));
        assert_eq!(
            stack_line(&s, FoldOptions::default()),
            "a:b;multi line_[j];<[u8: 8] as Foo>::bar;[unknown]"
        );
        s.ints = vec![7, 9];
        s.user.clear();
        let opts = FoldOptions {
            pids: true,
            ..FoldOptions::default()
        };
        assert_eq!(stack_line(&s, opts), "a:b-42/7/9");
        s.comm = None;
        s.pid = None;
        assert_eq!(stack_line(&s, FoldOptions::default()), "7/9");
        s.ints.clear();
        assert_eq!(stack_line(&s, FoldOptions::default()), "[unknown]");
    }

    #[test]
    fn runs_of_unknown_frames_are_one_and_markers_take_no_annotation() {
        let mut s = sample("sh", &["main"], &[], 1);
        // Innermost first: 127 unresolved frames called from `main`, which
        // one more unresolved frame called.
        s.user
            .splice(0..0, (0..127).map(|_| frame(None, FrameKind::User)));
        s.user.push(frame(None, FrameKind::User));
        s.kernel = vec![
            frame(None, FrameKind::Kernel),
            frame(None, FrameKind::Kernel),
            frame(Some("[Missed Kernel Stack]"), FrameKind::Kernel),
        ];
        assert_eq!(
            stack_line(&s, FoldOptions::default()),
            "sh;[unknown];main;[unknown];[Missed Kernel Stack];[unknown]"
        );
    }

    #[test]
    fn map_names_are_roots_when_asked() {
        let mut s = sample("sh", &["main"], &[], 1);
        s.map = Some("@cpu".into());
        let opts = FoldOptions {
            map_roots: true,
            ..FoldOptions::default()
        };
        assert_eq!(stack_line(&s, opts), "@cpu;sh;main");
        assert_eq!(stack_line(&s, FoldOptions::default()), "sh;main");
    }

    #[test]
    fn equal_stacks_merge_and_lines_sort() {
        let p = profile(vec![
            sample("b", &["main"], &[], 2),
            sample("a", &["main"], &[], 1),
            // Differs only by pid (left out) and offset (never shown): merges.
            sample("b", &["main"], &[], 5),
            sample("c", &["main"], &[], 0),
        ]);
        let lines = fold(&p, FoldOptions::default());
        assert_eq!(
            lines,
            vec![("a;main".to_string(), 1), ("b;main".to_string(), 7)]
        );
        let mut out = Vec::new();
        write(&lines, &mut out).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), "a;main 1\nb;main 7\n");
    }

    #[test]
    fn lines_parse_back() {
        assert_eq!(parse_line("a;b c;d 12"), Some(("a;b c;d", 12)));
        assert_eq!(parse_line("a;b 3 12\n"), Some(("a;b", 12)));
        assert_eq!(parse_line("# comment 3"), None);
        assert_eq!(parse_line("nocount"), None);
        assert_eq!(parse_line(" 5"), None);
        assert_eq!(parse_line(""), None);
    }
}
