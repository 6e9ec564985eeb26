//! `weft profile` and `weft offcpu` flags, and the script each runs: the
//! BPF programs are compiled from bpftrace-language text by weft's own
//! compiler (`weft profile -v` prints it), so a profile is a script like any
//! other, with a stack-keyed map that the profile writers read at exit.

use std::ffi::OsString;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::Duration;

/// On-CPU samples or off-CPU time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    OnCpu,
    OffCpu,
}

impl Mode {
    pub fn command(self) -> &'static str {
        match self {
            Mode::OnCpu => "profile",
            Mode::OffCpu => "offcpu",
        }
    }
}

pub const PROFILE_USAGE: &str = "\
USAGE:
    weft profile [options]               every CPU, until Ctrl-C
    weft profile [options] -p PID        one process, until it exits
    weft profile [options] -c 'CMD ...'  a command and its children, until it exits

Samples stacks on every CPU at HZ per second (a perf timer event, as bcc's
`profile` and `perf record -g`), counted in the kernel by process, user stack
and kernel stack, and writes them by the extension of -o: a flame graph
(.svg), folded stacks (.folded, .txt) or a gzipped pprof profile (.pb.gz).
Without -o, folded stacks go to standard output.

OPTIONS:
    -F HZ            samples per second on each CPU (default 99)
    -p PID           only this process (its threads)
    -c CMD           run CMD (split on spaces) and profile it and its children
    -d SECONDS       stop after SECONDS (may be fractional)
    -U               user stacks only        -K    kernel stacks only
    --include-idle   keep samples of the idle task (left out by default)
    -o FILE          write FILE (.svg, .folded, .txt or .pb.gz)
    --pid-frames     show the pid after the comm in folded stacks (`comm-PID`)
    --stack-storage-size N   stacks the kernel keeps (default: sized for the run)
    --frame-pointers walk user stacks by frame pointer in the kernel (cheaper;
                     shallow through code built without them) instead of
                     unwinding a copy of each with DWARF call-frame information
    -q               no progress or summary on standard error
    -v               print the generated script and where the time went
    -h, --help       print this help
";

pub const OFFCPU_USAGE: &str = "\
USAGE:
    weft offcpu [options]               every thread, until Ctrl-C
    weft offcpu [options] -p PID        one process, until it exits
    weft offcpu [options] -c 'CMD ...'  a command and its children, until it exits

Time spent blocked, by stack, in microseconds (as libbpf-tools' offcputime):
a thread is stamped with its stacks when the scheduler switches it out, and
charged the time until it is switched back in; threads are summed by
process. Uses the sched_switch tracepoint as a BTF-typed tracing program
(tp_btf) where the kernel loads one, else as a raw tracepoint. Output as
`weft profile`.

OPTIONS:
    --min-us N       leave out blocks shorter than N microseconds (default 1)
    --max-us N       leave out blocks longer than N microseconds
    --state STATES   only threads that blocked in these states (letters, e.g. `SD`):
                     R (preempted/runnable), S (sleeping), D (disk/uninterruptible),
                     I (idle kernel thread), T (stopped), t (traced)
    -p PID, -c CMD, -d SECONDS, -U, -K, -o FILE, --pid-frames,
    --stack-storage-size N, --frame-pointers, -q, -v   as in `weft profile`
    -h, --help       print this help
";

/// What the user asked for.
#[derive(Clone, Debug, PartialEq)]
pub struct ProfileArgs {
    pub mode: Mode,
    pub hz: u64,
    pub pid: Option<u32>,
    pub command: Option<String>,
    pub duration: Option<Duration>,
    pub user_only: bool,
    pub kernel_only: bool,
    pub include_idle: bool,
    pub output: Option<PathBuf>,
    pub min_us: u64,
    pub max_us: Option<u64>,
    /// `--state` letters, validated.
    pub states: Option<String>,
    pub pid_frames: bool,
    pub stack_storage: Option<u32>,
    /// `--frame-pointers`: user stacks walked by frame pointer in the
    /// kernel (counted there) instead of unwound from copies in user space.
    pub frame_pointers: bool,
    pub quiet: bool,
    pub verbose: bool,
    pub help: bool,
}

/// The output formats, by the extension of `-o`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutputKind {
    Svg,
    Folded,
    Pprof,
}

impl OutputKind {
    /// The format of `path`, by its extension.
    pub fn of(path: &std::path::Path) -> Result<OutputKind, String> {
        let name = path.to_string_lossy().to_ascii_lowercase();
        if name.ends_with(".svg") {
            Ok(OutputKind::Svg)
        } else if name.ends_with(".folded") || name.ends_with(".txt") {
            Ok(OutputKind::Folded)
        } else if name.ends_with(".pb.gz") {
            Ok(OutputKind::Pprof)
        } else {
            Err(format!(
                "cannot tell the format of {} by its extension: use .svg (flame graph), .folded or .txt (folded stacks), or .pb.gz (pprof)",
                path.display()
            ))
        }
    }
}

const STATE_LETTERS: &str = "RSDITt";

pub fn parse(mode: Mode, args: &[OsString]) -> Result<ProfileArgs, String> {
    let args: Vec<String> = args
        .iter()
        .map(|a| {
            a.clone()
                .into_string()
                .map_err(|a| format!("argument {a:?} is not valid UTF-8"))
        })
        .collect::<Result<_, _>>()?;
    let see = format!("see weft {} --help", mode.command());
    let mut out = ProfileArgs {
        mode,
        hz: 99,
        pid: None,
        command: None,
        duration: None,
        user_only: false,
        kernel_only: false,
        include_idle: false,
        output: None,
        min_us: 1,
        max_us: None,
        states: None,
        pid_frames: false,
        stack_storage: None,
        frame_pointers: false,
        quiet: false,
        verbose: false,
        help: false,
    };
    let mut i = 0;
    while i < args.len() {
        let arg = args[i].as_str();
        let mut value = |flag: &str| -> Result<String, String> {
            i += 1;
            args.get(i)
                .cloned()
                .ok_or_else(|| format!("option {flag} needs a value ({see})"))
        };
        let number = |flag: &str, v: &str| -> Result<u64, String> {
            v.parse::<u64>()
                .map_err(|_| format!("{flag} needs a whole number, not `{v}`"))
        };
        match (mode, arg) {
            (_, "-h" | "--help") => out.help = true,
            (Mode::OnCpu, "-F") => {
                let v = value("-F")?;
                out.hz = number("-F", &v)?;
                if !(1..=1_000_000).contains(&out.hz) {
                    return Err(format!("-F needs a rate from 1 to 1000000 Hz, not {v}"));
                }
            }
            (_, "-p") => {
                let v = value("-p")?;
                out.pid = Some(
                    v.parse()
                        .ok()
                        .filter(|&p| p > 0)
                        .ok_or_else(|| format!("-p needs a process id, not `{v}`"))?,
                );
            }
            (_, "-c") => out.command = Some(value("-c")?),
            (_, "-d") => {
                let v = value("-d")?;
                let secs: f64 = v
                    .parse()
                    .ok()
                    .filter(|s: &f64| s.is_finite() && *s > 0.0 && *s < 1e9)
                    .ok_or_else(|| format!("-d needs a number of seconds, not `{v}`"))?;
                out.duration = Some(Duration::from_secs_f64(secs));
            }
            (_, "-U") => out.user_only = true,
            (_, "-K") => out.kernel_only = true,
            (Mode::OnCpu, "--include-idle") => out.include_idle = true,
            (_, "-o") => out.output = Some(value("-o")?.into()),
            (Mode::OffCpu, "--min-us") => {
                let v = value("--min-us")?;
                out.min_us = number("--min-us", &v)?;
            }
            (Mode::OffCpu, "--max-us") => {
                let v = value("--max-us")?;
                out.max_us = Some(number("--max-us", &v)?);
            }
            (Mode::OffCpu, "--state") => {
                let v = value("--state")?;
                if v.is_empty() || !v.chars().all(|c| STATE_LETTERS.contains(c)) {
                    return Err(format!(
                        "--state takes letters of {STATE_LETTERS} (R running or preempted, S sleeping, D uninterruptible, I idle, T stopped, t traced), not `{v}`"
                    ));
                }
                out.states = Some(v);
            }
            (_, "--pid-frames") => out.pid_frames = true,
            (_, "--stack-storage-size") => {
                let v = value("--stack-storage-size")?;
                let n = number("--stack-storage-size", &v)?;
                out.stack_storage = Some(
                    u32::try_from(n)
                        .ok()
                        .filter(|n| (1..=1 << 20).contains(n))
                        .ok_or_else(|| {
                            format!("--stack-storage-size needs 1 to 1048576 stacks, not {v}")
                        })?,
                );
            }
            (_, "--frame-pointers") => out.frame_pointers = true,
            (_, "-q") => out.quiet = true,
            (_, "-v") => out.verbose = true,
            _ => return Err(format!("unknown option or argument `{arg}` ({see})")),
        }
        i += 1;
    }
    if out.user_only && out.kernel_only {
        return Err("-U and -K exclude each other: give one, or neither for both stacks".into());
    }
    if out.pid.is_some() && out.command.is_some() {
        return Err("-p and -c exclude each other".into());
    }
    if let Some(max) = out.max_us
        && max < out.min_us
    {
        return Err(format!(
            "--max-us {max} is below --min-us {}: nothing could be kept",
            out.min_us
        ));
    }
    if let Some(path) = &out.output {
        OutputKind::of(path)?;
    }
    Ok(out)
}

/// The sample rate's period in nanoseconds.
pub fn period_ns(hz: u64) -> u64 {
    1_000_000_000 / hz.max(1)
}

/// How many stacks the stack map holds: `--stack-storage-size`, else four
/// times the stacks the run can capture (HZ × CPUs × seconds, one or two
/// stacks a sample), from 8192 to 65536, as a power of two; 32768 without a
/// duration; 16384 for an off-CPU run. The kernel keeps one stack per
/// hash bucket, so a stack whose bucket is taken is lost (counted and
/// reported): the map is kept several times larger than the stacks it holds,
/// at about 1 KiB of kernel memory per entry.
pub fn stack_entries(args: &ProfileArgs, cpus: u64) -> u32 {
    if let Some(n) = args.stack_storage {
        return n;
    }
    let per_sample = if args.user_only || args.kernel_only {
        1
    } else {
        2
    };
    let expected = match (args.mode, args.duration) {
        (Mode::OnCpu, Some(d)) => {
            (args.hz as f64 * cpus as f64 * d.as_secs_f64() * per_sample as f64 * 4.0) as u64
        }
        (Mode::OnCpu, None) => 32768,
        // bcc's offcputime: an off-CPU stack is taken per block, of far fewer kinds.
        (Mode::OffCpu, _) => 16384,
    };
    expected.clamp(8192, 65536).next_power_of_two() as u32
}

/// The map the stacks are counted in, and the keyless count for progress.
pub const STACKS_MAP: &str = "@stacks";
pub const EVENTS_MAP: &str = "@events";
/// The processes met so far, with when they were met: the first stack of a
/// new one also sends a record, which wakes weft to keep its mappings while
/// it still lives. `exec` forgets the process, so the new program's
/// mappings are kept when it is met again.
pub const PIDS_MAP: &str = "@pids";

/// Notes a process met for the first time (see [`PIDS_MAP`]).
const NEW_PID: &str = r#"if (@pids[pid] == 0) { @pids[pid] = nsecs; printf("%d\n", pid); }"#;

/// Forgets a process that replaced its program.
const EXEC: &str = "tracepoint:sched:sched_process_exec { delete(@pids[pid]); }\n";

/// The same, telling the user-space unwinder too (its mappings changed).
const EXEC_DWARF: &str =
    "tracepoint:sched:sched_process_exec { delete(@pids[pid]); print((pid, 0)); }\n";

/// The stack key of either script: process, comm, then the stacks asked for.
fn stack_key(args: &ProfileArgs, user: &str, kernel: &str) -> String {
    let mut key = String::from("pid, comm");
    if !args.kernel_only {
        let _ = write!(key, ", {user}");
    }
    if !args.user_only {
        let _ = write!(key, ", {kernel}");
    }
    key
}

/// The predicate for the current task: its process (`-p`), the command's
/// tree (`-c`, followed through `@follow`), else every task but idle.
fn task_filter(args: &ProfileArgs) -> Option<String> {
    if let Some(pid) = args.pid {
        Some(format!("pid == {pid}"))
    } else if args.command.is_some() {
        Some("@follow[tid]".to_string())
    } else if args.include_idle {
        None
    } else {
        Some("pid != 0".to_string())
    }
}

/// Probes that keep `@follow` to the command's threads and descendants.
fn follow_probes(args: &ProfileArgs, out: &mut String) {
    if args.command.is_none() {
        return;
    }
    out.push_str(
        "BEGIN { @follow[cpid] = 1; }\n\
         tracepoint:sched:sched_process_fork /@follow[args->parent_pid]/ { @follow[args->child_pid] = 1; }\n\
         tracepoint:sched:sched_process_exit /@follow[tid]/ { delete(@follow[tid]); }\n",
    );
}

/// `--state` as a condition on the switch's `preempt` and `prev_state`
/// (the task's `__state` bits: 1 interruptible, 2 uninterruptible, 4
/// stopped, 8 traced, 0x400 no-load, which with 2 is an idle kernel thread).
fn state_condition(states: &str, preempt: &str, state: &str) -> String {
    let part = |c: char| match c {
        'R' => format!("({preempt} || {state} == 0)"),
        'S' => format!("(!{preempt} && ({state} & 1))"),
        'D' => format!("(!{preempt} && ({state} & 0x402) == 2)"),
        'I' => format!("(!{preempt} && ({state} & 0x402) == 0x402)"),
        'T' => format!("(!{preempt} && ({state} & 4))"),
        _ => format!("(!{preempt} && ({state} & 8))"),
    };
    let parts: Vec<String> = states.chars().map(part).collect();
    format!("({})", parts.join(" || "))
}

/// How `weft offcpu` reads `sched_switch`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SwitchProbe {
    /// `tp_btf:sched_switch`: the same tracepoint as a BTF-typed tracing program.
    TpBtf,
    /// `rawtracepoint:sched_switch`.
    RawTracepoint,
}

impl SwitchProbe {
    fn probe(self) -> &'static str {
        match self {
            SwitchProbe::TpBtf => "tp_btf:sched_switch",
            SwitchProbe::RawTracepoint => "rawtracepoint:sched_switch",
        }
    }
}

/// Whether user stacks are unwound in user space from copies (the
/// default) rather than walked by frame pointer in the kernel.
pub fn dwarf(args: &ProfileArgs) -> bool {
    !args.frame_pointers && !args.kernel_only
}

/// The ring buffer's pages when stacks are copied: 8 MiB, a second of
/// 999 Hz samples on 4 CPUs at their largest copy.
const DWARF_RB_PAGES: u32 = 2048;

/// The copy of the user stack: bounded by the main thread's stack top
/// (other threads copy up to the most, less where their stack ends).
const SEND_USTACK: &str = "send_ustack(curtask->mm->start_stack + 512);";

/// The sample the user-space unwinder joins to its thread's copy: `kstack`,
/// or 0 with `-U`.
fn sample_print(
    args: &ProfileArgs,
    tid: &str,
    pid: &str,
    comm: &str,
    kstack: &str,
    weight: &str,
) -> String {
    let kstack = if args.user_only { "0" } else { kstack };
    format!("print(({tid}, {pid}, {comm}, {kstack}, {weight}));")
}

/// The script `weft profile` / `weft offcpu` runs, for a kernel that has
/// `switch` (off-CPU only).
pub fn script(args: &ProfileArgs, switch: SwitchProbe) -> String {
    if dwarf(args) {
        return dwarf_script(args, switch);
    }
    let mut s = format!("let @pids = hash(65536);\n{EXEC}");
    follow_probes(args, &mut s);
    match args.mode {
        Mode::OnCpu => {
            let pred = task_filter(args)
                .map(|f| format!(" /{f}/"))
                .unwrap_or_default();
            let _ = writeln!(
                s,
                "profile:hz:{}{pred} {{ {EVENTS_MAP} = count(); {STACKS_MAP}[{}] = count(); {NEW_PID} }}",
                args.hz,
                stack_key(args, "ustack", "kstack"),
            );
        }
        Mode::OffCpu => {
            // Stamped at switch-out (the current task is `prev`, its stacks
            // are where it blocked), charged at switch-in, keyed by tid.
            let mut stamp = vec!["tid != 0".to_string()];
            stamp.extend(task_filter(args).filter(|f| f != "pid != 0"));
            if args.command.is_some() {
                // weft traces the command (it holds it at exit to read its
                // symbols): a ptrace stop (`__TASK_TRACED`) is weft's, not the command's.
                stamp.push("!(args->prev_state & 8)".to_string());
            }
            if let Some(states) = &args.states {
                stamp.push(state_condition(states, "args->preempt", "args->prev_state"));
            }
            let mut value = String::from("nsecs, pid, comm");
            if !args.kernel_only {
                value.push_str(", ustack");
            }
            if !args.user_only {
                value.push_str(", kstack");
            }
            let stacks = if args.kernel_only || args.user_only {
                "$s.3"
            } else {
                "$s.3, $s.4"
            };
            let mut keep = format!("$us >= {}", args.min_us);
            if let Some(max) = args.max_us {
                let _ = write!(keep, " && $us <= {max}");
            }
            let _ = write!(
                s,
                "let @start = hash(65536);\n\
                 {probe} {{\n\
                 \x20   if ({stamp}) {{ @start[tid] = ({value}); {NEW_PID} }}\n\
                 \x20   $next = args->next->pid;\n\
                 \x20   $s = @start[$next];\n\
                 \x20   if ($s.0 != 0) {{\n\
                 \x20       delete(@start[$next]);\n\
                 \x20       $us = (nsecs - $s.0) / 1000;\n\
                 \x20       if ({keep}) {{ {EVENTS_MAP} = count(); {STACKS_MAP}[$s.1, $s.2, {stacks}] = sum($us); }}\n\
                 \x20   }}\n\
                 }}\n",
                probe = switch.probe(),
                stamp = stamp.join(" && "),
            );
        }
    }
    if let Some(d) = args.duration {
        let ms = d.as_millis().max(1);
        let _ = writeln!(s, "interval:ms:{ms} {{ exit(); }}");
    }
    s
}

/// The script with user stacks copied for unwinding in user space: each
/// sample (on-CPU) or block (off-CPU, copied where it began) is sent.
fn dwarf_script(args: &ProfileArgs, switch: SwitchProbe) -> String {
    let mut s = format!(
        "config = {{ perf_rb_pages = {DWARF_RB_PAGES} }}\nlet @pids = hash(65536);\n{EXEC_DWARF}"
    );
    follow_probes(args, &mut s);
    match args.mode {
        Mode::OnCpu => {
            let pred = task_filter(args)
                .map(|f| format!(" /{f}/"))
                .unwrap_or_default();
            let _ = writeln!(
                s,
                "profile:hz:{}{pred} {{ {EVENTS_MAP} = count(); {SEND_USTACK} {} {NEW_PID} }}",
                args.hz,
                sample_print(args, "tid", "pid", "comm", "kstack", "1"),
            );
        }
        Mode::OffCpu => {
            let mut stamp = vec!["tid != 0".to_string()];
            stamp.extend(task_filter(args).filter(|f| f != "pid != 0"));
            if args.command.is_some() {
                stamp.push("!(args->prev_state & 8)".to_string());
            }
            if let Some(states) = &args.states {
                stamp.push(state_condition(states, "args->preempt", "args->prev_state"));
            }
            let value = if args.user_only {
                "nsecs, pid, comm"
            } else {
                "nsecs, pid, comm, kstack"
            };
            let mut keep = format!("$us >= {}", args.min_us);
            if let Some(max) = args.max_us {
                let _ = write!(keep, " && $us <= {max}");
            }
            let _ = write!(
                s,
                "let @start = hash(65536);\n\
                 {probe} {{\n\
                 \x20   if ({stamp}) {{ @start[tid] = ({value}); {SEND_USTACK} {NEW_PID} }}\n\
                 \x20   $next = args->next->pid;\n\
                 \x20   $s = @start[$next];\n\
                 \x20   if ($s.0 != 0) {{\n\
                 \x20       delete(@start[$next]);\n\
                 \x20       $us = (nsecs - $s.0) / 1000;\n\
                 \x20       if ({keep}) {{ {EVENTS_MAP} = count(); {print} }}\n\
                 \x20   }}\n\
                 }}\n",
                probe = switch.probe(),
                stamp = stamp.join(" && "),
                print = sample_print(args, "$next", "$s.1", "$s.2", "$s.3", "$us"),
            );
        }
    }
    if let Some(d) = args.duration {
        let ms = d.as_millis().max(1);
        let _ = writeln!(s, "interval:ms:{ms} {{ exit(); }}");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(mode: Mode, args: &[&str]) -> Result<ProfileArgs, String> {
        parse(mode, &args.iter().map(OsString::from).collect::<Vec<_>>())
    }

    #[test]
    fn flags() {
        let a = p(
            Mode::OnCpu,
            &["-F", "499", "-p", "42", "-d", "1.5", "-U", "-o", "x.svg"],
        )
        .unwrap();
        assert_eq!((a.hz, a.pid, a.user_only), (499, Some(42), true));
        assert_eq!(a.duration, Some(Duration::from_millis(1500)));
        let o = p(
            Mode::OffCpu,
            &["--min-us", "20000", "--state", "SD", "-c", "sleep 1"],
        )
        .unwrap();
        assert_eq!((o.min_us, o.states.as_deref()), (20000, Some("SD")));
        assert_eq!(o.command.as_deref(), Some("sleep 1"));
    }

    #[test]
    fn bad_flags_are_sentences() {
        let e = |mode, args: &[&str]| p(mode, args).unwrap_err();
        assert!(e(Mode::OnCpu, &["-U", "-K"]).contains("exclude"));
        assert!(e(Mode::OnCpu, &["-F", "0"]).contains("rate"));
        assert!(e(Mode::OnCpu, &["-F", "x"]).contains("whole number"));
        assert!(e(Mode::OnCpu, &["-d", "-1"]).contains("seconds"));
        assert!(e(Mode::OnCpu, &["-o", "x.png"]).contains(".svg"));
        assert!(e(Mode::OnCpu, &["--min-us", "3"]).contains("unknown option"));
        assert!(e(Mode::OffCpu, &["-F", "99"]).contains("unknown option"));
        assert!(e(Mode::OffCpu, &["--state", "X"]).contains("letters"));
        assert!(e(Mode::OffCpu, &["--min-us", "10", "--max-us", "5"]).contains("below"));
        assert!(e(Mode::OnCpu, &["-p", "1", "-c", "x"]).contains("exclude"));
        assert!(e(Mode::OnCpu, &["-p"]).contains("needs a value"));
    }

    #[test]
    fn on_cpu_scripts() {
        let a = p(
            Mode::OnCpu,
            &["-F", "499", "-p", "42", "-d", "2", "--frame-pointers"],
        )
        .unwrap();
        assert_eq!(
            script(&a, SwitchProbe::RawTracepoint),
            format!(
                "let @pids = hash(65536);\n{EXEC}\
                 profile:hz:499 /pid == 42/ {{ @events = count(); @stacks[pid, comm, ustack, kstack] = count(); {NEW_PID} }}\n\
                 interval:ms:2000 {{ exit(); }}\n"
            )
        );
        let idle = p(Mode::OnCpu, &["--include-idle", "-K"]).unwrap();
        assert_eq!(
            script(&idle, SwitchProbe::RawTracepoint),
            format!(
                "let @pids = hash(65536);\n{EXEC}\
                 profile:hz:99 {{ @events = count(); @stacks[pid, comm, kstack] = count(); {NEW_PID} }}\n"
            )
        );
        let cmd = p(Mode::OnCpu, &["-c", "make", "--frame-pointers"]).unwrap();
        let s = script(&cmd, SwitchProbe::RawTracepoint);
        assert!(s.contains("\nBEGIN { @follow[cpid] = 1; }\n"), "{s}");
        assert!(s.contains("sched_process_fork /@follow[args->parent_pid]/"));
        assert!(s.contains("profile:hz:99 /@follow[tid]/"));
    }

    #[test]
    fn off_cpu_script() {
        let a = p(
            Mode::OffCpu,
            &[
                "--min-us",
                "5",
                "--max-us",
                "9",
                "--state",
                "D",
                "-U",
                "--frame-pointers",
            ],
        )
        .unwrap();
        let s = script(&a, SwitchProbe::RawTracepoint);
        assert!(s.contains("rawtracepoint:sched_switch {"), "{s}");
        assert!(s.contains(
            "if (tid != 0 && ((!args->preempt && (args->prev_state & 0x402) == 2))) { @start[tid] = (nsecs, pid, comm, ustack); if (@pids"
        ), "{s}");
        assert!(s.contains("if ($us >= 5 && $us <= 9) { @events = count(); @stacks[$s.1, $s.2, $s.3] = sum($us); }"), "{s}");
        let all = p(Mode::OffCpu, &["-p", "7", "--frame-pointers"]).unwrap();
        let s = script(&all, SwitchProbe::TpBtf);
        assert!(s.contains("tp_btf:sched_switch {"));
        assert!(
            s.contains(
                "if (tid != 0 && pid == 7) { @start[tid] = (nsecs, pid, comm, ustack, kstack); if (@pids"
            ),
            "{s}"
        );
        assert!(s.contains("@stacks[$s.1, $s.2, $s.3, $s.4] = sum($us)"));
    }

    #[test]
    fn dwarf_scripts_copy_the_user_stack_and_print_each_sample() {
        let a = p(Mode::OnCpu, &["-F", "999", "-p", "42"]).unwrap();
        assert!(dwarf(&a));
        assert_eq!(
            script(&a, SwitchProbe::RawTracepoint),
            format!(
                "config = {{ perf_rb_pages = 2048 }}\nlet @pids = hash(65536);\n{EXEC_DWARF}\
                 profile:hz:999 /pid == 42/ {{ @events = count(); {SEND_USTACK} print((tid, pid, comm, kstack, 1)); {NEW_PID} }}\n"
            )
        );
        let k = p(Mode::OnCpu, &["-K"]).unwrap();
        assert!(!dwarf(&k), "kernel stacks only: nothing to copy");
        let o = p(Mode::OffCpu, &["-U", "--min-us", "10"]).unwrap();
        let s = script(&o, SwitchProbe::TpBtf);
        assert!(
            s.contains(&format!(
                "if (tid != 0) {{ @start[tid] = (nsecs, pid, comm); {SEND_USTACK} if (@pids"
            )),
            "{s}"
        );
        assert!(
            s.contains("if ($us >= 10) { @events = count(); print(($next, $s.1, $s.2, 0, $us)); }"),
            "{s}"
        );
    }

    #[test]
    fn stack_maps_are_sized_for_the_run() {
        let a = p(Mode::OnCpu, &["-F", "99", "-d", "10"]).unwrap();
        // 99 Hz × 2 CPUs × 10 s × 2 stacks × 4 = 15840 → 16384.
        assert_eq!(stack_entries(&a, 2), 16384);
        let fast = p(Mode::OnCpu, &["-F", "999", "-d", "60"]).unwrap();
        assert_eq!(stack_entries(&fast, 2), 65536);
        let short = p(Mode::OnCpu, &["-d", "0.1"]).unwrap();
        assert_eq!(stack_entries(&short, 2), 8192);
        let open = p(Mode::OnCpu, &[]).unwrap();
        assert_eq!(stack_entries(&open, 2), 32768);
        let set = p(Mode::OnCpu, &["--stack-storage-size", "3"]).unwrap();
        assert_eq!(stack_entries(&set, 2), 3);
    }

    #[test]
    fn output_kinds() {
        let k = |p: &str| OutputKind::of(std::path::Path::new(p));
        assert_eq!(k("a.svg"), Ok(OutputKind::Svg));
        assert_eq!(k("a.folded"), Ok(OutputKind::Folded));
        assert_eq!(k("a.TXT"), Ok(OutputKind::Folded));
        assert_eq!(k("a.pb.gz"), Ok(OutputKind::Pprof));
        assert!(k("a.gz").is_err());
    }
}
