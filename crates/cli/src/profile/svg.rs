//! Flame graph SVGs drawn by `inferno` from folded stacks, and differential
//! flame graphs of two folded profiles. (Here rather than in `output`:
//! inferno's hash maps seed from `getrandom`, which makes a syscall.)
//!
//! Colours: on-CPU graphs use the FlameGraph suite's JavaScript palette,
//! which reads perf's annotations: kernel frames (`_[k]`) orange, JIT frames
//! (`_[j]`) green, C++/Rust (`::`) yellow, other user code red. Off-CPU
//! graphs are blue (the suite's `--color=io` convention) with kernel frames
//! aqua. A differential graph is coloured by change: red grew, blue shrank.
//! Within its hue, each frame's shade follows a hash of its whole name
//! (inferno's `deterministic`), so neighbours differ and a function keeps
//! its colour from one graph to the next.

use std::collections::HashSet;
use std::io::{self, BufRead, Write};

use inferno::flamegraph::color::{BasicPalette, Color, MultiPalette, Palette, PaletteMap};
use inferno::flamegraph::{self, Options};

/// How a graph is coloured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Colors {
    OnCpu,
    OffCpu,
}

/// What the picture says about itself.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SvgOptions {
    pub title: String,
    /// The command line that made the profile, shown under the title.
    pub subtitle: Option<String>,
    /// The unit of a weight (`samples`, `us`).
    pub unit: String,
    pub colors: Colors,
}

/// Why a graph could not be drawn.
#[derive(Debug)]
pub enum SvgError {
    /// No line had a stack and a weight.
    Empty,
    Io(io::Error),
}

impl std::fmt::Display for SvgError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SvgError::Empty => f.write_str("no stacks with a count to draw"),
            SvgError::Io(e) => e.fmt(f),
        }
    }
}

impl From<io::Error> for SvgError {
    fn from(e: io::Error) -> SvgError {
        SvgError::Io(e)
    }
}

/// Aqua for off-CPU kernel frames: inferno's `Aqua` spectrum, picked by the
/// same name hash inferno uses for the rest.
fn aqua(name: &str) -> Color {
    // FNV-1a, as inferno's deterministic colours.
    let mut hash: u64 = 0xcbf29ce484222325;
    for b in name.as_bytes() {
        hash ^= u64::from(*b);
        hash = hash.wrapping_mul(0x100000001b3);
    }
    let v = (hash >> 40) as f32 / (1u64 << 24) as f32;
    Color {
        r: 50 + (60.0 * v) as u8,
        g: 165 + (55.0 * v) as u8,
        b: 165 + (55.0 * v) as u8,
    }
}

fn options<'a>(opts: &SvgOptions, palette_map: Option<&'a mut PaletteMap>) -> Options<'a> {
    let mut o = Options::default();
    o.title = opts.title.clone();
    o.subtitle = opts.subtitle.clone();
    o.count_name = opts.unit.clone();
    o.colors = match opts.colors {
        Colors::OnCpu => Palette::Multi(MultiPalette::Js),
        Colors::OffCpu => Palette::Basic(BasicPalette::Blue),
    };
    // Each name its own colour (a hash of the whole name): `hash` weighs the
    // first letters, so most frames came out the same salmon.
    o.deterministic = true;
    o.palette_map = palette_map;
    o
}

/// Draws `lines` (folded stacks) as a flame graph.
pub fn write_svg<'a, W: Write>(
    lines: impl IntoIterator<Item = &'a str>,
    opts: &SvgOptions,
    out: W,
) -> Result<(), SvgError> {
    let collapsed: Vec<std::borrow::Cow<'a, str>> = lines
        .into_iter()
        .filter(|l| output::profile::folded::parse_line(l).is_some())
        .map(collapse_unknown_runs)
        .collect();
    let lines: Vec<&str> = collapsed.iter().map(|l| l.as_ref()).collect();
    if lines.is_empty() {
        return Err(SvgError::Empty);
    }
    let min_width = Options::default().min_width;
    let visible = visible_lines(lines.clone(), min_width);
    let lines: Vec<&str> = match &visible {
        Some(v) => v.iter().map(String::as_str).collect(),
        None => lines,
    };
    draw(lines, opts, out)
}

/// A line whose stack has a run of `[unknown]` frames (a frame-pointer
/// walk through code without them), with the run as one frame: one sample
/// of 127 would make the picture 127 frames tall.
fn collapse_unknown_runs(line: &str) -> std::borrow::Cow<'_, str> {
    const RUN: &str = "[unknown];[unknown]";
    if !line.contains(RUN) {
        return std::borrow::Cow::Borrowed(line);
    }
    let mut out = line.to_string();
    while out.contains(RUN) {
        out = out.replace(RUN, "[unknown]");
    }
    std::borrow::Cow::Owned(out)
}

/// inferno draws a frame only when it is at least `min_width` percent of
/// the picture wide, but builds every frame first: with 100,000 distinct
/// stacks that is millions of frames, nearly all too narrow to draw. This
/// cuts each stack below its first frame too narrow to draw (that frame
/// kept, with the stack's samples), which draws the same picture from a
/// few thousand lines. `None` when the lines must go as they are: a
/// differential's (two counts), or nothing to cut.
fn visible_lines(mut lines: Vec<&str>, min_width: f64) -> Option<Vec<String>> {
    use output::profile::folded::parse_line;
    // inferno's own order: trimmed lines, sorted as strings.
    for l in lines.iter_mut() {
        *l = l.trim();
    }
    lines.sort_unstable();
    let mut parsed: Vec<(&str, u64)> = Vec::with_capacity(lines.len());
    for l in &lines {
        let (stack, count) = parse_line(l)?;
        // A second count (a differential line) colours frames: not cut.
        if l.rsplit_once(' ')?.0.trim_end() != stack {
            return None;
        }
        parsed.push((stack, count));
    }
    let total: u64 = parsed.iter().map(|p| p.1).sum();
    // As inferno decides: a frame is dropped when its samples are below this.
    let min_time = min_width / (100.0 / total as f64);
    let drawn = |samples: u64| (samples as f64) >= min_time;

    // Frames drawn on each line's path (the root aside), found as inferno
    // merges: a frame spans the run of sorted lines that share its prefix.
    let mut shown = vec![0usize; parsed.len()];
    let mut open: Vec<(&str, usize, u64)> = Vec::new(); // (name, first line, time)
    let mut time = 0u64;
    let close = |open: &mut Vec<(&str, usize, u64)>,
                 keep: usize,
                 line: usize,
                 time: u64,
                 shown: &mut [usize]| {
        while open.len() > keep {
            let depth = open.len();
            let (_, first, start) = open.pop().unwrap();
            if drawn(time - start) {
                for s in &mut shown[first..line] {
                    *s = (*s).max(depth);
                }
            }
        }
    };
    for (i, &(stack, count)) in parsed.iter().enumerate() {
        let frames: Vec<&str> = stack.split(';').collect();
        let shared = open
            .iter()
            .zip(&frames)
            .take_while(|(o, f)| o.0 == **f)
            .count();
        close(&mut open, shared, i, time, &mut shown);
        for f in &frames[shared..] {
            open.push((f, i, time));
        }
        time += count;
    }
    close(&mut open, 0, parsed.len(), time, &mut shown);

    // Each stack cut after its first frame too narrow, runs of equal cuts
    // summed. A cut `P;G` moves the line only among lines that start with
    // `P;G` and a byte between ` ` and `;`: where such a line exists, the
    // lines stay whole.
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    let mut cut_any = false;
    while i < parsed.len() {
        let (stack, _) = parsed[i];
        let cut = prefix_frames(stack, shown[i] + 1);
        let mut j = i;
        let mut sum = 0u64;
        while j < parsed.len() && prefix_frames(parsed[j].0, shown[j] + 1) == cut {
            sum += parsed[j].1;
            j += 1;
        }
        let whole = j == i + 1 && cut.len() == stack.len();
        if whole || !cut_is_safe(&lines, cut) {
            out.extend(lines[i..j].iter().map(|l| l.to_string()));
        } else {
            cut_any = true;
            out.push(format!("{cut} {sum}"));
        }
        i = j;
    }
    cut_any.then_some(out)
}

/// The first `n` frames of `stack`, as text.
fn prefix_frames(stack: &str, n: usize) -> &str {
    match stack.match_indices(';').nth(n.saturating_sub(1)) {
        Some((at, _)) if n > 0 => &stack[..at],
        _ => stack,
    }
}

/// Whether a line cut to `cut` sorts among the others where its stack did:
/// no line starts with `cut` and then a byte from `!` to `:` (those sort
/// between `cut N` and `cut;...`).
fn cut_is_safe(sorted: &[&str], cut: &str) -> bool {
    let probe = format!("{cut}!");
    let at = sorted.partition_point(|l| *l < probe.as_str());
    !sorted.get(at).is_some_and(|l| {
        l.strip_prefix(cut)
            .and_then(|rest| rest.bytes().next())
            .is_some_and(|b| (b'!'..=b':').contains(&b))
    })
}

/// inferno's drawing of `lines`, with the palettes of `opts`.
fn draw<W: Write>(lines: Vec<&str>, opts: &SvgOptions, out: W) -> Result<(), SvgError> {
    let mut kernel_colors = PaletteMap::default();
    let map = if opts.colors == Colors::OffCpu {
        let mut seen: HashSet<&str> = HashSet::new();
        for line in &lines {
            let stack = output::profile::folded::parse_line(line).map_or("", |(s, _)| s);
            for frame in stack.split(';').filter(|f| f.ends_with("_[k]")) {
                if seen.insert(frame) {
                    kernel_colors.insert(frame, aqua(frame));
                }
            }
        }
        Some(&mut kernel_colors)
    } else {
        None
    };
    let mut o = options(opts, map);
    flamegraph::from_lines(&mut o, lines, out)?;
    Ok(())
}

/// Draws the difference between two folded profiles: frames are as wide as
/// in `after`, red where they grew and blue where they shrank, and each
/// frame's title carries the change in percent of the total.
/// `normalize` scales `before` to `after`'s total first.
pub fn write_diff_svg<W: Write>(
    before: impl BufRead,
    after: impl BufRead,
    normalize: bool,
    opts: &SvgOptions,
    out: W,
) -> Result<(), SvgError> {
    let mut both = Vec::new();
    let diff = inferno::differential::Options {
        normalize,
        strip_hex: false,
    };
    inferno::differential::from_readers(diff, before, after, &mut both)?;
    let text = String::from_utf8_lossy(&both);
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| output::profile::folded::parse_line(l).is_some())
        .collect();
    if lines.is_empty() {
        return Err(SvgError::Empty);
    }
    draw(lines, opts, out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn on_cpu() -> SvgOptions {
        SvgOptions {
            title: "On-CPU".into(),
            subtitle: Some("weft profile -F 99".into()),
            unit: "samples".into(),
            colors: Colors::OnCpu,
        }
    }

    fn svg(lines: &[&str], opts: &SvgOptions) -> String {
        let mut out = Vec::new();
        write_svg(lines.iter().copied(), opts, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    /// The `fill` of the rectangle drawn for `title`'s frame.
    fn fill_of(svg: &str, name: &str) -> String {
        let at = svg
            .find(&format!("<title>{name} ("))
            .unwrap_or_else(|| panic!("{name} not drawn"));
        let rest = &svg[at..];
        let fill = rest.find("fill=\"").unwrap() + 6;
        rest[fill..fill + rest[fill..].find('"').unwrap()].to_string()
    }

    #[test]
    fn titles_units_and_frames() {
        let s = svg(
            &["weftwl;main;spin 90", "weftwl;main;read;ksys_read_[k] 10"],
            &on_cpu(),
        );
        assert!(s.contains(">On-CPU</text>"), "{s}");
        assert!(s.contains(">weft profile -F 99</text>"));
        assert!(
            s.contains("<title>spin (90 samples, 90.00%)</title>"),
            "{s}"
        );
        // The annotation colours the frame and is not shown.
        assert!(s.contains("<title>ksys_read (10 samples, 10.00%)</title>"));
        assert!(!s.contains("_[k]"));
        let kernel = fill_of(&s, "ksys_read");
        let user = fill_of(&s, "spin");
        assert_ne!(kernel, user);
    }

    #[test]
    fn off_cpu_is_blue_with_aqua_kernel_frames() {
        let opts = SvgOptions {
            colors: Colors::OffCpu,
            unit: "us".into(),
            ..on_cpu()
        };
        let s = svg(&["sleep;main;nanosleep;schedule_[k] 200"], &opts);
        assert!(
            s.contains("<title>schedule (200 us, 100.00%)</title>"),
            "{s}"
        );
        let rgb = |fill: String| -> (u8, u8, u8) {
            let inner = fill.trim_start_matches("rgb(").trim_end_matches(')');
            let v: Vec<u8> = inner.split(',').map(|x| x.parse().unwrap()).collect();
            (v[0], v[1], v[2])
        };
        let (r, g, b) = rgb(fill_of(&s, "main"));
        assert!(b > r && b > g, "user frames are blue: {r},{g},{b}");
        let (r, g, b) = rgb(fill_of(&s, "schedule"));
        assert!(
            g >= 165 && b >= 165 && r < 120,
            "kernel frames are aqua: {r},{g},{b}"
        );
    }

    #[test]
    fn nothing_to_draw_is_an_error() {
        let mut out = Vec::new();
        assert!(matches!(
            write_svg(["", "# no", "junk"], &on_cpu(), &mut out),
            Err(SvgError::Empty)
        ));
    }

    #[test]
    fn differential_titles_carry_the_change() {
        let before = "a;b 30\na;c 70\n";
        let after = "a;b 60\na;c 40\n";
        let mut out = Vec::new();
        write_diff_svg(
            before.as_bytes(),
            after.as_bytes(),
            false,
            &on_cpu(),
            &mut out,
        )
        .unwrap();
        let s = String::from_utf8(out).unwrap();
        // b grew by 30 of 100 samples, c shrank by 30.
        assert!(
            s.contains("<title>b (60 samples, 60.00%; +30.00%)</title>"),
            "{s}"
        );
        assert!(
            s.contains("<title>c (40 samples, 40.00%; -30.00%)</title>"),
            "{s}"
        );
        assert!(fill_of(&s, "b").starts_with("rgb(255,"), "grew: red");
        assert!(fill_of(&s, "c").ends_with(",255)"), "shrank: blue");
    }

    /// Folded lines of `n` distinct stacks: names that are prefixes of
    /// their siblings (`f`, `f.isra.0`, `f:x`, `f-1`), a few heavy stacks and
    /// many light ones, from a fixed seed.
    fn many_stacks(n: usize) -> Vec<String> {
        let names = [
            "f", "f.isra.0", "f:x", "f-1", "g", "g_[k]", "h", "main", "a b", "f0",
        ];
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = |m: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % m
        };
        let mut seen = HashSet::new();
        let mut lines = Vec::new();
        while lines.len() < n {
            let depth = 1 + next(8) as usize;
            let stack: Vec<&str> = (0..depth)
                .map(|_| names[next(names.len() as u64) as usize])
                .collect();
            let stack = stack.join(";");
            if seen.insert(stack.clone()) {
                let count = if next(50) == 0 {
                    5000 + next(5000)
                } else {
                    1 + next(3)
                };
                lines.push(format!("{stack} {count}"));
            }
        }
        lines
    }

    #[test]
    fn cutting_narrow_frames_draws_the_same_picture() {
        for colors in [Colors::OnCpu, Colors::OffCpu] {
            let opts = SvgOptions { colors, ..on_cpu() };
            let lines = many_stacks(20_000);
            let all: Vec<&str> = lines.iter().map(String::as_str).collect();
            let cut = visible_lines(all.clone(), Options::default().min_width)
                .expect("narrow frames to cut");
            assert!(cut.len() * 2 < all.len(), "{} of {}", cut.len(), all.len());
            let mut whole = Vec::new();
            draw(all.clone(), &opts, &mut whole).unwrap();
            let mut pruned = Vec::new();
            write_svg(all.iter().copied(), &opts, &mut pruned).unwrap();
            assert!(
                whole == pruned,
                "the pictures differ:\n{}\n---\n{}",
                String::from_utf8_lossy(&whole),
                String::from_utf8_lossy(&pruned)
            );
        }
    }

    #[test]
    fn a_cut_that_would_move_among_its_siblings_is_not_made() {
        // `a;f N` would sort before `a;f.isra.0;...`, splitting f in two.
        let lines = ["a;f.isra.0;x 100000", "a;f;y 1", "a;f;z 1"];
        let cut = visible_lines(lines.to_vec(), 1.0);
        assert_eq!(cut, None);
        let lines = ["a;g;x 100000", "a;f;y 1", "a;f;z 1"];
        let cut = visible_lines(lines.to_vec(), 1.0).unwrap();
        assert_eq!(cut, ["a;f 2", "a;g;x 100000"]);
        // Differential lines are left alone.
        assert_eq!(visible_lines(vec!["a;b 1 2", "a;c 5 1"], 1.0), None);
    }
}
