//! Reads stack-keyed maps as bpftrace prints them (what
//! `stackcollapse-bpftrace.pl` reads), so files saved from
//! `bpftrace -e 'profile:hz:99 { @[kstack, ustack, comm] = count(); }' > out.txt`
//! become profiles as they are:
//!
//! ```text
//! @[
//!     do_syscall_64+113
//!     entry_SYSCALL_64_after_hwframe+118
//! ,
//!     0x7f4a8d9504e0
//! , sed]: 1
//! @[, , swapper/0]: 197
//! ```
//!
//! Stacks are the indented lines (`symbol+offset` or a hex address;
//! `address symbol+offset (module)` in perf mode); other key elements are
//! the comm (the first text) and integers. Entries without a stack, or
//! whose value is no number (histograms), are skipped. Whether a stack is
//! the kernel's is told from its addresses (kernel addresses are in the
//! top half) or, when every frame has a name, from its outermost frame,
//! which for a kernel stack is an entry point (`entry_SYSCALL_64…`,
//! `asm_exc_…`, `ret_from_fork…`, the idle loop's `…startup_64`).

use super::{FrameKind, ProfileFrame, ProfileSample};

/// The first kernel address on x86-64 and arm64 (the top half).
const KERNEL_START: u64 = 0xffff_8000_0000_0000;

/// Outermost frames of kernel stacks.
const KERNEL_ROOTS: &[&str] = &[
    "entry_SYSCALL_64",
    "entry_SYSCALL_64_after_hwframe",
    "entry_SYSCALL_compat",
    "asm_",
    "ret_from_fork",
    "common_startup_64",
    "secondary_startup_64",
    "start_kernel",
    "x86_64_start_kernel",
    "kthread",
    "cpu_startup_entry",
    "el0t_64_sync",
    "el0t_64_irq",
];

/// One element of a printed key.
#[derive(Debug, PartialEq)]
enum Element<'a> {
    Stack(Vec<ProfileFrame>),
    Text(&'a str),
}

/// Every stack-keyed entry of `text` as a sample, its map's name (`@`,
/// `@offcpu_us`) in [`ProfileSample::map`].
pub fn parse(text: &str) -> Vec<ProfileSample> {
    let mut samples = Vec::new();
    let mut entry: Option<String> = None;
    for line in text.lines() {
        if line.starts_with('@') {
            entry = Some(String::new());
        }
        let Some(buf) = entry.as_mut() else { continue };
        if !buf.is_empty() {
            buf.push('\n');
        }
        buf.push_str(line);
        if let Some(sample) = entry_end(buf) {
            samples.extend(sample);
            entry = None;
        }
    }
    samples
}

/// The sample of a whole entry (`Some(None)` when complete but no
/// profile), or `None` while the entry goes on.
fn entry_end(buf: &str) -> Option<Option<ProfileSample>> {
    let (head, value) = buf.rsplit_once("]: ")?;
    let value: u64 = match value.trim().parse() {
        Ok(v) => v,
        // `@h[x]: ` followed by a histogram, or an unfinished line.
        Err(_) if value.trim().is_empty() => return None,
        Err(_) => return Some(None),
    };
    let open = head.find('[')?;
    let map = &head[..open];
    let elements = elements(&head[open + 1..])?;
    let mut sample = ProfileSample {
        comm: None,
        pid: None,
        ints: Vec::new(),
        user: Vec::new(),
        kernel: Vec::new(),
        value,
        map: Some(map.to_string()),
    };
    let mut stacks = 0;
    for element in elements {
        match element {
            Element::Stack(frames) => {
                stacks += 1;
                if frames.first().is_some_and(|f| f.kind == FrameKind::Kernel) {
                    sample.kernel = frames;
                } else {
                    sample.user = frames;
                }
            }
            Element::Text("") => stacks += 1,
            Element::Text(t) => match t.parse::<i64>() {
                Ok(n) => sample.ints.push(n),
                Err(_) if sample.comm.is_none() => sample.comm = Some(t.to_string()),
                Err(_) => return Some(None),
            },
        }
    }
    Some((stacks > 0).then_some(sample))
}

/// Splits a key's text into its elements; `None` if it is not a key.
fn elements(key: &str) -> Option<Vec<Element<'_>>> {
    let mut out = Vec::new();
    let mut rest = key;
    loop {
        if let Some(body) = rest.strip_prefix('\n') {
            // A stack: indented lines up to the next one that is not.
            let mut end = 0;
            let mut frames = Vec::new();
            for line in body.split_inclusive('\n') {
                if !line.starts_with([' ', '\t']) {
                    break;
                }
                end += line.len();
                if let Some(frame) = frame(line.trim()) {
                    frames.push(frame);
                }
            }
            let kind = stack_kind(&frames);
            for f in &mut frames {
                f.kind = kind;
            }
            out.push(Element::Stack(frames));
            rest = &body[end..];
        } else {
            let end = rest.find(", ").unwrap_or(rest.len());
            out.push(Element::Text(&rest[..end]));
            rest = &rest[end..];
        }
        if rest.is_empty() {
            return Some(out);
        }
        rest = rest.strip_prefix(", ")?;
    }
}

/// One frame line: `sym+off`, `0xaddr`, or (perf mode) `addr sym+off (module)`.
fn frame(line: &str) -> Option<ProfileFrame> {
    if line.is_empty() {
        return None;
    }
    let hex = |t: &str| u64::from_str_radix(t.trim_start_matches("0x"), 16).ok();
    let (addr, symbol) = match line.split_once(' ') {
        Some((a, rest)) if hex(a).is_some() => (hex(a).unwrap_or(0), rest.trim()),
        _ => (0, line),
    };
    let (symbol, module) = match symbol.rsplit_once(" (") {
        Some((s, m)) if m.ends_with(')') => (s, Some(m.trim_end_matches(')').to_string())),
        _ => (symbol, None),
    };
    let unresolved = symbol.starts_with("0x") && hex(symbol).is_some();
    let addr = if unresolved && addr == 0 {
        hex(symbol).unwrap_or(0)
    } else {
        addr
    };
    let name = match symbol.rsplit_once('+') {
        Some((n, off)) if !n.is_empty() && off.bytes().all(|b| b.is_ascii_digit()) => n,
        _ => symbol,
    };
    Some(ProfileFrame {
        name: (!unresolved).then(|| name.to_string()),
        kind: FrameKind::User,
        addr,
        module: module.filter(|m| m != "[unknown]"),
    })
}

/// Kernel if an address is a kernel one, or every frame is named and the
/// outermost is a kernel entry point.
fn stack_kind(frames: &[ProfileFrame]) -> FrameKind {
    if frames.iter().any(|f| f.addr >= KERNEL_START) {
        return FrameKind::Kernel;
    }
    if frames.iter().any(|f| f.addr != 0) {
        return FrameKind::User;
    }
    let root = frames.last().and_then(|f| f.name.as_deref()).unwrap_or("");
    if KERNEL_ROOTS.iter().any(|k| root.starts_with(k)) {
        FrameKind::Kernel
    } else {
        FrameKind::User
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PRINTED: &str = "Attaching 2 probes...


@[
    next_uptodate_folio+314
    do_fault+748
    asm_exc_page_fault+34
, 
    0x7f4a8d9504e0
    0x7f4a8dae9e39
, sed]: 1
@[, 
    0x7fe4432040fe
, cat]: 1
@[
    __get_user_8+23
    entry_SYSCALL_64_after_hwframe+118
, 
    clock_nanosleep+101
, python3]: 4
@[, , swapper/0]: 197
@hist[1]: 
[0]                    1 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|

@plain[12]: 3
";

    fn names(frames: &[ProfileFrame]) -> Vec<&str> {
        frames
            .iter()
            .map(|f| f.name.as_deref().unwrap_or("?"))
            .collect()
    }

    #[test]
    fn reads_kernel_user_and_comm() {
        let samples = parse(PRINTED);
        assert_eq!(samples.len(), 4, "{samples:#?}");
        let s = &samples[0];
        assert_eq!(s.map.as_deref(), Some("@"));
        assert_eq!(s.comm.as_deref(), Some("sed"));
        assert_eq!(s.value, 1);
        assert_eq!(
            names(&s.kernel),
            ["next_uptodate_folio", "do_fault", "asm_exc_page_fault"]
        );
        assert_eq!(names(&s.user), ["?", "?"]);
        assert_eq!(s.user[0].addr, 0x7f4a8d9504e0);
        // Empty kernel stack, one unresolved user frame.
        assert!(samples[1].kernel.is_empty());
        assert_eq!(samples[1].user.len(), 1);
        // Named frames only: the entry point tells the kernel stack.
        assert_eq!(samples[2].kernel.len(), 2);
        assert_eq!(names(&samples[2].user), ["clock_nanosleep"]);
        assert_eq!(samples[2].value, 4);
        let idle = &samples[3];
        assert_eq!(idle.comm.as_deref(), Some("swapper/0"));
        assert!(idle.kernel.is_empty() && idle.user.is_empty());
        assert_eq!(idle.value, 197);
    }

    #[test]
    fn perf_mode_and_single_stack_keys() {
        let text = "@us[\n\tffffffff82265ec8 __schedule+1576\n\tffffffff82266833 schedule+35\n]: 20\n\
                    @[\n\t56316962716f weft_spin+22 (/tmp/spin)\n\t7faab9362b46 0x7faab9362b46 ([unknown])\n, 42]: 7\n";
        let samples = parse(text);
        assert_eq!(samples.len(), 2);
        assert_eq!(samples[0].map.as_deref(), Some("@us"));
        assert_eq!(names(&samples[0].kernel), ["__schedule", "schedule"]);
        assert_eq!(samples[0].kernel[0].kind, FrameKind::Kernel);
        let u = &samples[1];
        assert_eq!(names(&u.user), ["weft_spin", "?"]);
        assert_eq!(u.user[0].module.as_deref(), Some("/tmp/spin"));
        assert_eq!(u.user[1].module, None);
        assert_eq!(u.ints, [42]);
    }

    #[test]
    fn no_stack_no_sample_and_garbage_is_ignored() {
        assert!(parse("@[comm]: 3\n@x: 5\n").is_empty());
        assert!(parse("random\ntext ]: 4\n@[\n    f+1\n").is_empty());
        assert!(parse("").is_empty());
    }
}
