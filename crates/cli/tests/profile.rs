//! `weft profile`, `weft offcpu`, `weft flamegraph` and a script's
//! `--flamegraph`/`--folded`: exact sample counts and off-CPU totals of the
//! workload, pprof read back by `go tool pprof`, SVGs parsed as XML.
//!
//! The on-CPU workload spins for 1 s of its own CPU time, so at 499 Hz it
//! takes 499 samples however loaded the machine is. The off-CPU workload
//! runs under SCHED_FIFO (`chrt`), so the time from its wake-up to its
//! switch-in (also off-CPU) stays small on a busy machine.

mod common;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use common::{Outcome, must_succeed, run, run_weft, scratch, workload};

const TIMEOUT: Duration = Duration::from_secs(60);

/// `stack -> count` of a folded file.
fn folded(path: &Path) -> HashMap<String, u64> {
    let text = std::fs::read_to_string(path).expect("folded output");
    text.lines()
        .filter_map(|l| {
            let (stack, n) = l.rsplit_once(' ')?;
            Some((stack.to_string(), n.parse().ok()?))
        })
        .collect()
}

fn total_where(stacks: &HashMap<String, u64>, pred: impl Fn(&str) -> bool) -> u64 {
    stacks.iter().filter(|(s, _)| pred(s)).map(|(_, n)| n).sum()
}

/// `weft profile FLAGS -c COMMAND -o OUT`, which must succeed.
fn profile_command(flags: &[&str], command: &str, out: &Path) -> Outcome {
    let mut args = vec!["profile"];
    args.extend_from_slice(flags);
    args.extend_from_slice(&["-c", command, "-o", out.to_str().unwrap()]);
    let o = run_weft(&args, TIMEOUT);
    must_succeed(&o, &format!("weft {}", args.join(" ")));
    o
}

/// The workload run with `steps`, as a `-c` command.
fn workload_command(steps: &str) -> String {
    format!("{} {steps}", workload().display())
}

/// `weft profile -F 499` of the workload spinning 1 s of CPU, written to `out`.
fn profile_spin(out: &Path) -> Outcome {
    profile_command(&["-F", "499"], &workload_command("spin-cpu 1000"), out)
}

/// Profiles sample the whole machine, so one test's workload shows up in
/// another's samples and timer windows; they run one at a time.
fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

#[test]
fn on_cpu_samples_of_a_spinning_function() {
    require_root!();
    let _serial = one_at_a_time();
    let path = scratch("oncpu.folded");
    let o = profile_spin(&path);
    let stacks = folded(&path);
    let _ = std::fs::remove_file(&path);
    let all = total_where(&stacks, |_| true);
    let spinning = total_where(&stacks, |s| s.contains(";weft_workload_spin_cpu"));
    // 1 s of CPU at 499 Hz, within 20 %.
    assert!(
        (399..=599).contains(&all),
        "{all} samples:\n{stacks:#?}\n{}",
        o.stderr
    );
    assert!(
        spinning * 10 >= all * 9,
        "{spinning} of {all} samples in the function:\n{stacks:#?}"
    );
    // Root first: the comm, then user frames; offsets are gone.
    assert!(
        stacks
            .keys()
            .any(|s| s.starts_with("weftwl;") && s.ends_with(";weft_workload_spin_cpu")),
        "{stacks:#?}"
    );
    assert!(!stacks.keys().any(|s| s.contains('+')), "{stacks:#?}");
    assert!(
        o.stderr.contains(" samples of 1 process(es)"),
        "{}",
        o.stderr
    );
}

#[test]
fn off_cpu_time_of_sleeps_and_min_us() {
    require_root!();
    let _serial = one_at_a_time();
    testgate::require!(
        Command::new("chrt").arg("--help").output().is_ok(),
        "chrt (util-linux) is not installed"
    );
    // 20 sleeps of 10 ms: 200 ms blocked in nanosleep, never less; the
    // workload times each call, which its off-CPU part cannot outlast
    // however long a busy machine makes the wake-up wait for a CPU.
    let walls = scratch("offcpu-walls");
    let cmd = format!(
        "chrt -f 10 {} timed-nanosleep 10000000 20 {}",
        workload().display(),
        walls.display()
    );
    let path = scratch("offcpu.folded");
    let o = run_weft(
        &["offcpu", "-c", &cmd, "-o", path.to_str().unwrap()],
        TIMEOUT,
    );
    must_succeed(&o, "weft offcpu");
    let stacks = folded(&path);
    let sleeping = total_where(&stacks, |s| {
        s.starts_with("weftwl;") && s.contains("do_nanosleep_[k]")
    });
    let calls_us = wall_times_us(&walls);
    let in_calls: u64 = calls_us.iter().sum();
    assert!(
        (180_000..=in_calls).contains(&sleeping),
        "{sleeping} us in nanosleep, {in_calls} us in the calls ({calls_us:?}):\n{stacks:#?}"
    );
    // Kernel frames are annotated, root first, and BPF's own frames are left out.
    assert!(
        stacks
            .keys()
            .any(|s| s.contains("__x64_sys_nanosleep_[k];hrtimer_nanosleep_[k];do_nanosleep_[k]")),
        "{stacks:#?}"
    );
    assert!(
        !stacks.keys().any(|s| s.contains("bpf_prog_")),
        "{stacks:#?}"
    );

    // Blocks of 10 ms are below 20 ms: none is kept, but for a call the
    // machine kept from waking for as long again.
    let o = run_weft(
        &[
            "offcpu",
            "--min-us",
            "20000",
            "-c",
            &cmd,
            "-o",
            path.to_str().unwrap(),
        ],
        TIMEOUT,
    );
    assert!(!o.timed_out);
    let kept = if o.status == Some(0) {
        total_where(&folded(&path), |s| s.contains("do_nanosleep_[k]"))
    } else {
        assert!(o.stderr.contains("no off-CPU time"), "{}", o.stderr);
        0
    };
    let calls_us = wall_times_us(&walls);
    let _ = std::fs::remove_file(&path);
    let _ = std::fs::remove_file(&walls);
    let in_long_calls: u64 = calls_us.iter().filter(|us| **us >= 20_000).sum();
    assert!(
        kept <= in_long_calls,
        "{kept} us kept, calls {calls_us:?}: {}",
        o.stderr
    );
}

/// The wall time of each of the workload's `timed-nanosleep` calls, in
/// nanoseconds, as it wrote them to `path`.
fn wall_times_ns(path: &Path) -> Vec<u64> {
    std::fs::read_to_string(path)
        .expect("the workload's call times")
        .lines()
        .map(|ns| ns.parse::<u64>().expect("nanoseconds"))
        .collect()
}

/// The same in microseconds (rounded down, as weft's folded output is).
fn wall_times_us(path: &Path) -> Vec<u64> {
    wall_times_ns(path).iter().map(|ns| ns / 1000).collect()
}

#[test]
fn pprof_is_read_by_go_tool_pprof() {
    require_root!();
    let _serial = one_at_a_time();
    let go = Command::new("go").arg("version").output();
    testgate::require!(
        go.is_ok_and(|o| o.status.success()),
        "go tool pprof needs Debian's golang-go (scripts/setup.sh installs it)"
    );
    let path = scratch("oncpu.pb.gz");
    profile_spin(&path);
    // go wants a home and a build cache; both in a scratch directory.
    let home = scratch("gohome");
    std::fs::create_dir_all(&home).unwrap();
    let pprof_top = |extra: &[&str]| {
        let o = run(
            Command::new("go")
                .args(["tool", "pprof", "-top"])
                .args(extra)
                .arg(&path)
                .env("HOME", &home)
                .env("GOCACHE", home.join("cache"))
                .env("GOPATH", home.join("go")),
            Duration::from_secs(120),
        );
        must_succeed(&o, "go tool pprof");
        o.stdout
    };
    // `      flat  flat%   sum%        cum   cum%` then `499 99.40% ... weft_workload_spin_cpu`.
    let flat_of_spin = |top: &str| -> String {
        top.lines()
            .find(|l| l.trim_end().ends_with(" weft_workload_spin_cpu"))
            .and_then(|l| l.split_whitespace().next())
            .unwrap_or_else(|| panic!("no weft_workload_spin_cpu line:\n{top}"))
            .to_string()
    };
    let samples_top = pprof_top(&[]);
    // The second sample type: one 1e9/499 ns timer period per sample.
    let cpu_top = pprof_top(&["-sample_index=cpu", "-unit=ms"]);
    let _ = std::fs::remove_file(&path);
    let _ = std::fs::remove_dir_all(&home);
    assert!(samples_top.contains("Type: samples"), "{samples_top}");
    let samples: u64 = flat_of_spin(&samples_top).parse().unwrap();
    assert!((399..=599).contains(&samples), "{samples_top}");
    assert!(cpu_top.contains("Type: cpu"), "{cpu_top}");
    let ms: f64 = flat_of_spin(&cpu_top)
        .trim_end_matches("ms")
        .parse()
        .unwrap_or_else(|_| panic!("{cpu_top}"));
    let expected = samples as f64 * 1e3 / 499.0;
    assert!(
        (ms - expected).abs() < 1.0,
        "{ms} ms for {samples} samples:\n{cpu_top}"
    );
}

/// Every `<title>` of an SVG, after checking that it is well-formed XML.
fn svg_titles(svg: &str) -> Vec<String> {
    use quick_xml::events::Event;
    let mut reader = quick_xml::Reader::from_str(svg);
    let mut titles = Vec::new();
    let mut title: Option<String> = None;
    let mut depth = 0i64;
    loop {
        match reader.read_event().expect("well-formed XML") {
            Event::Start(e) => {
                depth += 1;
                if e.name().as_ref() == b"title" {
                    title = Some(String::new());
                }
            }
            Event::End(_) => {
                depth -= 1;
                titles.extend(title.take());
            }
            Event::Text(t) => {
                if let Some(title) = title.as_mut() {
                    title.push_str(&t.xml10_content().unwrap());
                }
            }
            Event::GeneralRef(r) => {
                if let Some(title) = title.as_mut() {
                    title.push_str(match r.decode().unwrap().as_ref() {
                        "lt" => "<",
                        "gt" => ">",
                        "amp" => "&",
                        "quot" => "\"",
                        _ => "'",
                    });
                }
            }
            Event::Eof => break,
            _ => {}
        }
    }
    assert_eq!(depth, 0, "unbalanced elements");
    titles
}

#[test]
fn svg_is_xml_with_the_frames() {
    require_root!();
    let _serial = one_at_a_time();
    let path = scratch("oncpu.svg");
    profile_spin(&path);
    let svg = std::fs::read_to_string(&path).unwrap();
    let _ = std::fs::remove_file(&path);
    let titles = svg_titles(&svg);
    assert!(
        titles
            .iter()
            .any(|t| t.starts_with("weft_workload_spin_cpu (") && t.contains(" samples, ")),
        "{titles:?}"
    );
    assert!(
        titles.iter().any(|t| t.starts_with("weftwl (")),
        "{titles:?}"
    );
    assert!(svg.contains(">On-CPU Flame Graph</text>"));
    assert!(
        svg.contains("weft profile -F 499 -c"),
        "the command line is shown"
    );
    // The subtitle: rate, duration and the sample total.
    let total: u64 = titles
        .iter()
        .find_map(|t| t.strip_prefix("all ("))
        .and_then(|t| t.split(' ').next())
        .and_then(|n| n.replace(',', "").parse().ok())
        .unwrap_or_else(|| panic!("no `all` frame: {titles:?}"));
    assert!(
        svg.contains(&": 499 Hz, ".to_string())
            && svg.contains(&format!(" s, {total} samples</text>")),
        "{}",
        svg.lines()
            .find(|l| l.contains("subtitle"))
            .unwrap_or("no subtitle")
    );
}

/// `(title, fill)` of each frame of an inferno SVG, and the picture's height.
fn svg_frames(svg: &str) -> (Vec<(String, String)>, u64) {
    use quick_xml::events::Event;
    let titles = svg_titles(svg);
    let mut reader = quick_xml::Reader::from_str(svg);
    let mut fills = Vec::new();
    let mut height = 0;
    loop {
        match reader.read_event().expect("well-formed XML") {
            Event::Start(e) | Event::Empty(e) => {
                let attr = |name: &[u8]| {
                    e.attributes()
                        .flatten()
                        .find(|a| a.key.as_ref() == name)
                        .map(|a| String::from_utf8_lossy(&a.value).into_owned())
                };
                match e.name().as_ref() {
                    b"svg" => height = attr(b"height").and_then(|h| h.parse().ok()).unwrap_or(0),
                    b"rect" if attr(b"fill").is_some_and(|f| f.starts_with("rgb(")) => {
                        fills.extend(attr(b"fill"));
                    }
                    _ => {}
                }
            }
            Event::Eof => break,
            _ => {}
        }
    }
    // Each frame has a title and a rect, in order.
    assert_eq!(titles.len(), fills.len(), "{titles:?}");
    (titles.into_iter().zip(fills).collect(), height)
}

#[test]
fn pictures_collapse_unknown_runs_vary_colours_and_name_their_inputs() {
    let unknowns = vec!["[unknown]"; 127].join(";");
    let input = write(
        "pictures.folded",
        &format!(
            "app;main;{unknowns};leaf 1\napp;main;alpha 10\napp;main;beta 10\napp;main;gamma 10\n\
             app;main;delta 10\napp;main;read;sys_read_[k] 5\n"
        ),
    );
    let svg_path = scratch("pictures.svg");
    let o = run_weft(
        &[
            "flamegraph",
            input.to_str().unwrap(),
            "-o",
            svg_path.to_str().unwrap(),
        ],
        TIMEOUT,
    );
    must_succeed(&o, "weft flamegraph");
    let svg = std::fs::read_to_string(&svg_path).unwrap();
    let (frames, height) = svg_frames(&svg);
    let unknown = frames
        .iter()
        .filter(|(t, _)| t.starts_with("[unknown] ("))
        .count();
    assert_eq!(unknown, 1, "{frames:?}");
    // Title, subtitle and 6 rows of frames, not 130.
    assert!(height < 400, "{height} px tall");
    let fill = |name: &str| {
        frames
            .iter()
            .find(|(t, _)| t.starts_with(&format!("{name} (")))
            .map(|(_, f)| f.clone())
            .unwrap_or_else(|| panic!("no {name}: {frames:?}"))
    };
    let user: std::collections::HashSet<String> =
        ["alpha", "beta", "gamma", "delta", "main", "app"]
            .iter()
            .map(|n| fill(n))
            .collect();
    assert!(user.len() >= 5, "on-CPU colours of six names: {user:?}");
    assert!(
        !user.contains(&fill("sys_read")),
        "a kernel frame has a colour of its own"
    );
    // A diff names its inputs and says whether it was normalized.
    let after = write(
        "pictures-after.folded",
        "app;main;alpha 30\napp;main;beta 10\n",
    );
    let diff_path = scratch("pictures-diff.svg");
    for (flags, said) in [
        (&["--normalize"][..], "before normalized to the after total"),
        (&[][..], "not normalized"),
    ] {
        let mut args = vec![
            "flamegraph",
            "--diff",
            input.to_str().unwrap(),
            after.to_str().unwrap(),
            "-o",
            diff_path.to_str().unwrap(),
        ];
        args.extend_from_slice(flags);
        must_succeed(&run_weft(&args, TIMEOUT), "weft flamegraph --diff");
        let svg = std::fs::read_to_string(&diff_path).unwrap();
        assert!(
            svg.contains(&format!(
                "before: {}, after: {} (widths: after; colour: change, {said})",
                input.display(),
                after.display()
            )),
            "{}",
            svg.lines()
                .find(|l| l.contains("subtitle"))
                .unwrap_or("no subtitle")
        );
    }
    // A second -o is refused, not silently the only file written.
    let twice = run_weft(
        &["profile", "-o", "a.svg", "-o", "b.folded", "-d", "1"],
        TIMEOUT,
    );
    assert_eq!(twice.status, Some(2), "{}", twice.stderr);
    assert!(twice.stderr.contains("-o given twice"), "{}", twice.stderr);
    for p in [input, after, svg_path, diff_path] {
        let _ = std::fs::remove_file(p);
    }
}

fn write(name: &str, text: &str) -> PathBuf {
    let p = scratch(name);
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn differential_flame_graph_titles_carry_the_deltas() {
    let before = write("before.folded", "main;work;a 30\nmain;work;b 70\n");
    let after = write(
        "after.folded",
        "main;work;a 60\nmain;work;b 40\nmain;new 20\n",
    );
    let out = scratch("diff.svg");
    let o = run_weft(
        &[
            "flamegraph",
            "--diff",
            before.to_str().unwrap(),
            after.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
        ],
        TIMEOUT,
    );
    must_succeed(&o, "weft flamegraph --diff");
    let titles = svg_titles(&std::fs::read_to_string(&out).unwrap());
    // Of 120 samples after: a grew by 30 (+25%), b shrank by 30, new is new.
    for want in [
        "a (60 samples, 50.00%; +25.00%)",
        "b (40 samples, 33.33%; -25.00%)",
        "new (20 samples, 16.67%; +16.67%)",
        "work (100 samples, 83.33%; 0.00%)",
    ] {
        assert!(titles.iter().any(|t| t == want), "{want} in {titles:?}");
    }
    // Normalized: before scaled to 120 samples (a 36, b 84).
    let o = run_weft(
        &[
            "flamegraph",
            "--diff",
            "--normalize",
            before.to_str().unwrap(),
            after.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
        ],
        TIMEOUT,
    );
    must_succeed(&o, "weft flamegraph --diff --normalize");
    let titles = svg_titles(&std::fs::read_to_string(&out).unwrap());
    for p in [&before, &after, &out] {
        let _ = std::fs::remove_file(p);
    }
    assert!(
        titles
            .iter()
            .any(|t| t == "a (60 samples, 50.00%; +20.00%)"),
        "{titles:?}"
    );
    assert!(
        titles
            .iter()
            .any(|t| t == "b (40 samples, 33.33%; -36.67%)"),
        "{titles:?}"
    );
}

#[test]
fn flamegraph_reads_bpftrace_output_and_says_what_is_wrong() {
    let text = "Attaching 1 probe...\n\n\n@[\n    do_nanosleep+10\n    entry_SYSCALL_64_after_hwframe+118\n, \n    clock_nanosleep+101\n, sleep]: 7\n@[, , swapper/0]: 3\n";
    let input = write("bpftrace.txt", text);
    let out = scratch("bpftrace.svg");
    let o = run_weft(
        &[
            "flamegraph",
            input.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
        ],
        TIMEOUT,
    );
    must_succeed(&o, "weft flamegraph");
    let titles = svg_titles(&std::fs::read_to_string(&out).unwrap());
    for want in [
        "sleep (7 samples, 70.00%)",
        "clock_nanosleep (7 samples, 70.00%)",
        "do_nanosleep (7 samples, 70.00%)",
        "swapper/0 (3 samples, 30.00%)",
    ] {
        assert!(titles.iter().any(|t| t == want), "{want} in {titles:?}");
    }
    // Input with no stacks: one sentence, non-zero exit, no panic.
    let empty = write("empty.folded", "nothing here\n");
    let o = run_weft(&["flamegraph", empty.to_str().unwrap()], TIMEOUT);
    for p in [&input, &out, &empty] {
        let _ = std::fs::remove_file(p);
    }
    assert_eq!(o.status, Some(1), "{}", o.stderr);
    assert!(
        o.stderr.contains("holds no stacks with counts"),
        "{}",
        o.stderr
    );
}

#[test]
fn a_script_draws_its_stack_maps() {
    require_root!();
    let _serial = one_at_a_time();
    let svg = scratch("script.svg");
    let fold = scratch("script.folded");
    let cmd = format!("{} spin-cpu 300", workload().display());
    let o = run_weft(
        &[
            "-q",
            "--flamegraph",
            svg.to_str().unwrap(),
            "--folded",
            fold.to_str().unwrap(),
            "-c",
            &cmd,
            "-e",
            "profile:hz:99 /pid == cpid/ { @[kstack, ustack, comm] = count(); }",
        ],
        TIMEOUT,
    );
    must_succeed(&o, "weft --flamegraph");
    let stacks = folded(&fold);
    let titles = svg_titles(&std::fs::read_to_string(&svg).unwrap());
    let _ = std::fs::remove_file(&svg);
    let _ = std::fs::remove_file(&fold);
    // The map still prints as bpftrace prints it.
    assert!(o.stdout.contains(", weftwl]: "), "{}", o.stdout);
    assert!(
        total_where(&stacks, |s| s.starts_with("weftwl;")
            && s.contains(";weft_workload_spin_cpu"))
            >= 15,
        "{stacks:#?}"
    );
    assert!(
        titles
            .iter()
            .any(|t| t.starts_with("weft_workload_spin_cpu (")),
        "{titles:?}"
    );
    // A script without a stack map cannot be drawn: said before it runs.
    let o = run_weft(
        &[
            "--flamegraph",
            svg.to_str().unwrap(),
            "-e",
            "BEGIN { @x = count(); exit(); }",
        ],
        TIMEOUT,
    );
    assert_eq!(o.status, Some(1));
    assert!(
        o.stderr.contains("need a map keyed by kstack"),
        "{}",
        o.stderr
    );
}

#[test]
fn stack_collisions_are_counted_and_shown() {
    require_root!();
    let _serial = one_at_a_time();
    // One slot: every stack but the first collides.
    let path = scratch("collide.folded");
    let o = profile_command(
        // The stack map holds user stacks only when they are walked by frame pointer.
        &[
            "-F",
            "999",
            "-U",
            "--frame-pointers",
            "--stack-storage-size",
            "1",
        ],
        &workload_command("spin-cpu 300"),
        &path,
    );
    let stacks = folded(&path);
    let _ = std::fs::remove_file(&path);
    let missed = total_where(&stacks, |s| s.contains("[Missed User Stack]"));
    let reported: u64 = o
        .stderr
        .lines()
        .find_map(|l| {
            l.strip_prefix("weft: ")?
                .split_once(" stack(s) were not captured")
        })
        .and_then(|(n, _)| n.parse().ok())
        .unwrap_or_else(|| panic!("no collision report:\n{}", o.stderr));
    assert!(missed > 0, "{stacks:#?}");
    assert_eq!(missed, reported, "{stacks:#?}\n{}", o.stderr);
}

#[test]
fn a_process_that_exits_during_the_run_keeps_its_symbols() {
    require_root!();
    let _serial = one_at_a_time();
    let path = scratch("exited.folded");
    let mut weft = Command::new(common::weft())
        // Frame-pointer stacks, resolved from the mappings kept while the
        // process lived (DWARF samples are unwound from copies as they come).
        .args([
            "profile",
            // Every process of a busy machine: the in-kernel walk keeps up where
            // unwinding each copy in a debug build falls behind (docs/profiles.md).
            "--frame-pointers",
            "-q",
            "--frame-pointers",
            "-F",
            "499",
            "-d",
            "4",
            "--pid-frames",
            "-o",
        ])
        .arg(&path)
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1000));
    // 150 ms of CPU, then gone well before weft stops and symbolizes.
    let mut spin = Command::new(workload())
        .args(["spin-cpu", "150"])
        .spawn()
        .unwrap();
    // Other tests' workloads run too: this one is told by its pid.
    let comm = format!("weftwl-{};", spin.id());
    assert!(spin.wait().unwrap().success());
    let (status, timed_out) = common::wait_with_timeout(&mut weft, TIMEOUT);
    assert!(!timed_out && status == Some(0));
    let stacks = folded(&path);
    let _ = std::fs::remove_file(&path);
    let named = total_where(&stacks, |s| {
        s.starts_with(&comm) && s.contains(";weft_workload_spin_cpu")
    });
    let all = total_where(&stacks, |s| s.starts_with(&comm));
    assert!(all >= 30, "{all} samples of the workload");
    assert!(
        named * 10 >= all * 9,
        "{named} of {all} named:\n{stacks:#?}"
    );
}

#[test]
fn a_profile_without_samples_says_why() {
    require_root!();
    let _serial = one_at_a_time();
    // A process that sleeps the whole time is never on a CPU.
    let mut sleeper = Command::new("sleep").arg("30").spawn().unwrap();
    let pid = sleeper.id().to_string();
    let o = run_weft(&["profile", "-p", &pid, "-d", "0.5"], TIMEOUT);
    let _ = sleeper.kill();
    let _ = sleeper.wait();
    assert_eq!(o.status, Some(1), "{}", o.stderr);
    assert!(
        o.stderr.contains(&format!(
            "weft: no samples: process {pid} did not run on a CPU"
        )),
        "{}",
        o.stderr
    );
    // A process that goes away during the run ends it, and is named.
    let mut short = Command::new("sleep").arg("0.5").spawn().unwrap();
    let pid = short.id().to_string();
    let o = run_weft(&["profile", "-p", &pid, "-d", "20"], TIMEOUT);
    let _ = short.wait();
    assert_eq!(o.status, Some(1), "{}", o.stderr);
    assert!(
        o.stderr.contains(&format!(
            "weft: no samples: process {pid} exited before a sample was taken"
        )),
        "{}",
        o.stderr
    );
    let o = run_weft(&["profile", "-p", "4194304"], TIMEOUT);
    assert_eq!(o.status, Some(1));
    assert!(
        o.stderr.contains("there is no process 4194304"),
        "{}",
        o.stderr
    );
}

#[test]
fn tuple_strings_and_stacks_read_from_maps() {
    require_root!();
    let _serial = one_at_a_time();
    // A tuple's string element used as a key, and a missing key read as zeros
    // (its slot held an earlier statement's bytes).
    let o = run_weft(
        &[
            "-q",
            "-e",
            "BEGIN { @s[1] = (7, \"abc\"); @x[\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"] = 1; \
             $t = @s[2]; @n = $t.0; $u = @s[1]; @k[$u.1] = count(); exit(); }",
        ],
        TIMEOUT,
    );
    must_succeed(&o, "weft");
    assert!(o.stdout.contains("@n: 0\n"), "{}", o.stdout);
    assert!(o.stdout.contains("@k[abc]: 1\n"), "{}", o.stdout);
}

#[test]
fn a_map_read_before_its_first_store_is_that_map() {
    require_root!();
    let _serial = one_at_a_time();
    // The profile scripts' `if (@pids[pid] == 0) { @pids[pid] = 1; }`: the
    // read comes first in the program, after another map.
    let o = run_weft(
        &[
            "-q",
            "-e",
            "BEGIN { @a[1] = 7; if (@b[1] == 0) { @b[1] = 5; } delete(@c[1]); @c[2] = 3; exit(); }",
        ],
        TIMEOUT,
    );
    must_succeed(&o, "weft");
    assert!(o.stdout.contains("@a[1]: 7\n"), "{}", o.stdout);
    assert!(o.stdout.contains("@b[1]: 5\n"), "{}", o.stdout);
    assert!(o.stdout.contains("@c[2]: 3\n"), "{}", o.stdout);
}

#[test]
fn tp_btf_sees_the_switches_into_the_workload() {
    require_root!();
    let _serial = one_at_a_time();
    let features = run_weft(&["--info"], TIMEOUT);
    testgate::require!(
        features
            .stdout
            .contains("tp_btf (BTF-typed raw tracepoints): yes"),
        "this kernel does not load tp_btf programs"
    );
    // Five sleeps: the workload is switched in at least once after each.
    let o = common::trace_workload(
        "tp_btf:sched_switch /args->next->pid == cpid/ { @in = count(); } \
         rawtracepoint:sched_switch /args->next->pid == cpid/ { @raw = count(); }",
        "nanosleep 1000000 5",
        &[],
    );
    let count = |name: &str| -> u64 {
        o.stdout
            .lines()
            .find_map(|l| l.strip_prefix(&format!("{name}: ")))
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("no {name} in {}", o.stdout))
    };
    assert!(count("@in") >= 5, "{}", o.stdout);
    // The same tracepoint either way.
    assert_eq!(count("@in"), count("@raw"), "{}", o.stdout);
}

#[test]
fn jit_frames_are_named_from_the_perf_map() {
    require_root!();
    let _serial = one_at_a_time();
    // The workload writes a loop into anonymous memory and names it in
    // /tmp/perf-PID.map, as node or a JVM agent does; it has exited (and
    // its perf map stays) when weft names the frames.
    let path = scratch("jit.folded");
    profile_command(
        &["-F", "499", "--pid-frames"],
        &workload_command("jit-spin 300"),
        &path,
    );
    let stacks = folded(&path);
    let _ = std::fs::remove_file(&path);
    for pid in stacks
        .keys()
        .filter_map(|s| s.strip_prefix("weftwl-")?.split(';').next())
    {
        let _ = std::fs::remove_file(format!("/tmp/perf-{pid}.map"));
    }
    let all = total_where(&stacks, |s| s.starts_with("weftwl-"));
    let jit = total_where(&stacks, |s| {
        s.starts_with("weftwl-") && s.ends_with(";weft_jit_spin_[j]")
    });
    assert!(all >= 100, "{all} samples:\n{stacks:#?}");
    assert!(
        jit * 10 >= all * 9,
        "{jit} of {all} in JIT code:\n{stacks:#?}"
    );
}

#[test]
fn a_stripped_pie_is_named_through_its_debug_file() {
    require_root!();
    let _serial = one_at_a_time();
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/profile_target.c");
    let full = scratch("pt-full").display().to_string();
    let stripped = scratch("pt-stripped").display().to_string();
    let debug = scratch("pt-stripped.debug").display().to_string();
    let run_ok = |cmd: &str, args: &[&str]| {
        Command::new(cmd)
            .args(args)
            .status()
            .is_ok_and(|s| s.success())
    };
    let link = format!("--add-gnu-debuglink={debug}");
    let built = run_ok(
        "cc",
        &[
            "-O1",
            "-g",
            "-fpie",
            "-pie",
            "-o",
            &full,
            src.to_str().unwrap(),
        ],
    ) && run_ok("objcopy", &["--only-keep-debug", &full, &debug])
        && run_ok("objcopy", &["--strip-all", &link, &full, &stripped]);
    testgate::require!(
        built,
        "cc and objcopy (scripts/setup.sh installs gcc; binutils comes with it)"
    );
    let path = scratch("pt.folded");
    profile_command(&["-F", "499"], &stripped, &path);
    let stacks = folded(&path);
    for p in [&full, &stripped, &debug] {
        let _ = std::fs::remove_file(p);
    }
    let _ = std::fs::remove_file(&path);
    let all = total_where(&stacks, |s| s.starts_with("weftpie;"));
    let named = total_where(&stacks, |s| {
        s.starts_with("weftpie;") && s.ends_with(";hot_local")
    });
    assert!(all >= 100, "{all} samples:\n{stacks:#?}");
    assert!(
        named * 10 >= all * 9,
        "{named} of {all} in hot_local:\n{stacks:#?}"
    );
}

#[test]
fn off_cpu_state_and_max_us_filters() {
    require_root!();
    let _serial = one_at_a_time();
    testgate::require!(
        Command::new("chrt").arg("--help").output().is_ok(),
        "chrt (util-linux) is not installed"
    );
    // 10 calls of 10 ms, each timed by the workload.
    let walls = scratch("offcpu-filters-walls");
    let cmd = format!(
        "chrt -f 10 {} timed-nanosleep 10000000 10 {}",
        workload().display(),
        walls.display()
    );
    let path = scratch("offcpu-filters.folded");
    // nanosleep sleeps interruptibly (S): D keeps none of it, S keeps it all.
    let sleeping = |extra: &[&str]| -> u64 {
        let mut args = vec!["offcpu", "-c", cmd.as_str(), "-o", path.to_str().unwrap()];
        args.extend_from_slice(extra);
        let o = run_weft(&args, TIMEOUT);
        assert!(!o.timed_out);
        if o.status != Some(0) {
            assert!(o.stderr.contains("no off-CPU time"), "{}", o.stderr);
            return 0;
        }
        total_where(&folded(&path), |s| {
            s.starts_with("weftwl;") && s.contains("do_nanosleep_[k]")
        })
    };
    let s = sleeping(&["--state", "S"]);
    let calls_us = wall_times_us(&walls);
    let d = sleeping(&["--state", "D"]);
    let short = sleeping(&["--max-us", "5000"]);
    let _ = std::fs::remove_file(&path);
    let _ = std::fs::remove_file(&walls);
    // Never short; never longer than the calls took, however long a busy
    // machine made the wake-ups wait.
    let in_calls: u64 = calls_us.iter().sum();
    assert!(
        (90_000..=in_calls).contains(&s),
        "--state S: {s} us, {in_calls} us in the calls ({calls_us:?})"
    );
    assert_eq!(d, 0, "--state D");
    assert_eq!(short, 0, "--max-us 5000");
}

/// A file of `tests/fixtures`.
fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// `weft flamegraph ARGS -o scratch.svg`, expecting success: the titles.
fn flamegraph_titles(args: &[&str]) -> Vec<String> {
    let out = scratch("flamegraph-titles.svg");
    let mut all = vec!["flamegraph"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["-o", out.to_str().unwrap()]);
    let o = run_weft(&all, TIMEOUT);
    must_succeed(&o, "weft flamegraph");
    let svg = std::fs::read_to_string(&out).unwrap();
    let _ = std::fs::remove_file(&out);
    svg_titles(&svg)
}

fn assert_titles(titles: &[String], wanted: &[&str]) {
    for want in wanted {
        assert!(titles.iter().any(|t| t == want), "{want} in {titles:?}");
    }
}

#[test]
fn the_seed_s_bpftrace_files_are_drawn_as_they_are() {
    // bpftrace 0.17's own output of the seed's one-liner
    // `profile:hz:99 { @[kstack, ustack, comm] = count(); }` (with an
    // interval probe to end it), cut to four of its entries: a user-only
    // stack of hex frames, kernel and user frames, a C++ symbol with `, `
    // inside, a kernel thread without a user stack.
    let stacks = fixture("bpftrace-seed-stacks.txt");
    let titles = flamegraph_titles(&[stacks.to_str().unwrap()]);
    assert_titles(
        &titles,
        &[
            "all (38 samples, 100%)",
            "weftwl (36 samples, 94.74%)",
            "finish_task_switch.isra.0 (1 samples, 2.63%)",
            "opt cgu.3 (1 samples, 2.63%)",
            "llvm::DomTreeBuilder::SemiNCAInfo<llvm::DominatorTreeBase<llvm::BasicBlock, false> >::CalculateFromScratch(llvm::DominatorTreeBase<llvm::BasicBlock, false>&, llvm::DomTreeBuilder::SemiNCAInfo<llvm::DominatorTreeBase<llvm::BasicBlock, false> >::BatchUpdateInfo*) (1 samples, 2.63%)",
            "ksoftirqd/0 (1 samples, 2.63%)",
            "put_pid (1 samples, 2.63%)",
        ],
    );
    // Root first: the comm, then user frames, then the kernel's.
    let ksoftirqd = titles.iter().position(|t| t.starts_with("ksoftirqd/0 ("));
    let fork = titles
        .iter()
        .position(|t| t.starts_with("ret_from_fork_asm ("));
    assert!(ksoftirqd < fork, "{titles:?}");

    // The seed's differential: `@[kstack] = count()` before and after, as
    // bpftrace 0.17 printed them (164 and 166 samples, four stacks, one
    // of them the user-mode samples' empty kernel stack).
    let before = fixture("bpftrace-seed-before.txt");
    let after = fixture("bpftrace-seed-after.txt");
    let (before, after) = (before.to_str().unwrap(), after.to_str().unwrap());
    // Changes in percent of after's 166 samples: 3 -> 6, 3 -> 1, 1 -> 2.
    assert_titles(
        &flamegraph_titles(&["--diff", before, after]),
        &[
            "all (166 samples, 100%)",
            "[unknown] (157 samples, 94.58%; 0.00%)",
            "exc_page_fault (7 samples, 4.22%; +1.81%)",
            "clear_page_erms (1 samples, 0.60%; -1.20%)",
            "copy_folio_from_iter_atomic (2 samples, 1.20%; +0.60%)",
            "vfs_write (2 samples, 1.20%; 0.00%)",
        ],
    );
    // Normalized, before is scaled to 166 (truncated, as difffolded.pl
    // does): 157 -> 158, so the unchanged stack shows -1 sample.
    assert_titles(
        &flamegraph_titles(&["--diff", "--normalize", before, after]),
        &[
            "[unknown] (157 samples, 94.58%; -0.60%)",
            "exc_page_fault (7 samples, 4.22%; +1.81%)",
            "clear_page_erms (1 samples, 0.60%; -1.20%)",
        ],
    );
}

#[test]
fn bpftrace_s_live_output_is_drawn_whole() {
    require_root!();
    let _serial = one_at_a_time();
    testgate::require!(
        Command::new("bpftrace")
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success()),
        "bpftrace is not installed (scripts/setup.sh installs it)"
    );
    // The seed's one-liner, ended by an interval probe (bpftrace 0.17 can
    // hang symbolizing after Ctrl-C on a busy machine), while the workload
    // spins, so it holds kernel, user and comm keys of many processes.
    let mut spin = Command::new(workload())
        .args(["spin-cpu", "3000"])
        .spawn()
        .unwrap();
    let o = run(
        Command::new("bpftrace").args([
            "-e",
            "profile:hz:99 { @[kstack, ustack, comm] = count(); } interval:s:1 { exit(); }",
        ]),
        TIMEOUT,
    );
    let _ = spin.kill();
    let _ = spin.wait();
    must_succeed(&o, "bpftrace");
    let input = write("bpftrace-live.txt", &o.stdout);
    let titles = flamegraph_titles(&[input.to_str().unwrap()]);
    let _ = std::fs::remove_file(&input);
    // Every entry is read: the picture's total is bpftrace's.
    let total: u64 = o
        .stdout
        .lines()
        .filter_map(|l| l.rsplit_once("]: ")?.1.parse::<u64>().ok())
        .sum();
    assert!(total >= 50, "{}", o.stdout);
    assert_titles(&titles, &[&format!("all ({total} samples, 100%)")]);
    assert!(
        titles.iter().any(|t| t.starts_with("weftwl (")),
        "{titles:?}"
    );
}

#[test]
fn user_or_kernel_stacks_only() {
    require_root!();
    let _serial = one_at_a_time();
    // Spinning in user code, then in and out of the kernel.
    let cmd = workload_command("spin-cpu 300 getppid 300000");
    let path = scratch("only.folded");
    let stacks_with = |flag: &str| -> HashMap<String, u64> {
        profile_command(&["-F", "499", flag], &cmd, &path);
        let stacks = folded(&path);
        let _ = std::fs::remove_file(&path);
        stacks
            .into_iter()
            .filter(|(s, _)| s == "weftwl" || s.starts_with("weftwl;"))
            .collect()
    };
    let frames = |s: &str| s.split(';').skip(1).map(str::to_string).collect::<Vec<_>>();

    let user = stacks_with("-U");
    assert!(
        total_where(&user, |s| s.ends_with(";weft_workload_spin_cpu")) >= 50,
        "{user:#?}"
    );
    assert!(
        user.keys()
            .all(|s| frames(s).iter().all(|f| !f.ends_with("_[k]"))),
        "-U: kernel frames\n{user:#?}"
    );

    let kernel = stacks_with("-K");
    assert!(
        kernel
            .keys()
            .all(|s| frames(s).iter().all(|f| f.ends_with("_[k]"))),
        "-K: user frames\n{kernel:#?}"
    );
    assert!(
        total_where(&kernel, |s| s.contains("do_syscall_64_[k]")) >= 5,
        "{kernel:#?}"
    );
    // Samples taken in user mode have no kernel stack: the comm alone.
    assert!(
        kernel.get("weftwl").is_some_and(|&n| n >= 50),
        "{kernel:#?}"
    );
}

/// Idle time of every CPU so far, in seconds (`/proc/stat`, USER_HZ 100).
fn idle_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/stat").unwrap();
    let cpu = stat.lines().next().unwrap();
    let idle: u64 = cpu.split_whitespace().nth(4).unwrap().parse().unwrap();
    idle as f64 / 100.0
}

#[test]
fn idle_samples_only_when_asked() {
    require_root!();
    let _serial = one_at_a_time();
    let path = scratch("idle.folded");
    let idle_samples = |extra: &[&str]| -> (u64, f64) {
        let mut args = vec!["profile", "-q", "-F", "199", "-d", "2"];
        args.extend_from_slice(extra);
        args.extend_from_slice(&["-o", path.to_str().unwrap()]);
        let before = idle_seconds();
        let o = run_weft(&args, TIMEOUT);
        let idle = idle_seconds() - before;
        must_succeed(&o, "weft profile");
        let stacks = folded(&path);
        let _ = std::fs::remove_file(&path);
        (total_where(&stacks, |s| s.starts_with("swapper/")), idle)
    };
    let (left_out, _) = idle_samples(&[]);
    assert_eq!(left_out, 0, "idle samples without --include-idle");
    // With it, the idle task's samples follow the CPUs' idle time (none
    // when the machine is busy). The idle time is read around the whole
    // run, start-up and exit included, while samples come from the 2 s
    // window only: at most 199 a second of it, and at least a fifth.
    let (kept, idle) = idle_samples(&["--include-idle"]);
    let expected = idle * 199.0;
    assert!(
        kept as f64 <= expected * 1.25 + 40.0 && kept as f64 >= expected * 0.2 - 40.0,
        "{kept} idle samples for {idle:.2} s of idle CPU time"
    );
}

#[test]
fn progress_on_a_terminal() {
    require_root!();
    let _serial = one_at_a_time();
    let path = scratch("progress.folded");
    // Something to sample: on a quiet machine only the idle task runs, and
    // a run without samples ends with status 1.
    let mut spin = Command::new(workload())
        .args(["spin-cpu", "3500"])
        .spawn()
        .unwrap();
    let (status, screen) = common::pty::run_on_pty(&[
        "profile",
        // Every process of a busy machine: the in-kernel walk keeps up where
        // unwinding each copy in a debug build falls behind (docs/profiles.md).
        "--frame-pointers",
        "-F",
        "99",
        "-d",
        "3",
        "-o",
        path.to_str().unwrap(),
    ]);
    let _ = spin.kill();
    let _ = spin.wait();
    let _ = std::fs::remove_file(&path);
    assert_eq!(status, Some(0), "{screen}");
    // `\rweft: N samples, T s (Ctrl-C to stop)\x1b[K`, redrawn in place.
    let lines: Vec<(u64, f64)> = screen
        .split('\r')
        .filter_map(|piece| {
            let rest = piece
                .strip_prefix("weft: ")?
                .strip_suffix(" s (Ctrl-C to stop)\x1b[K")?;
            let (n, t) = rest.split_once(" samples, ")?;
            Some((n.parse().ok()?, t.parse().ok()?))
        })
        .collect();
    assert!(lines.len() >= 3, "{screen:?}");
    assert!(
        lines
            .windows(2)
            .all(|w| w[0].0 <= w[1].0 && w[0].1 <= w[1].1),
        "{lines:?}"
    );
    assert!(lines.last().unwrap().0 > 0, "{lines:?}");
    // Erased before the summary, which ends the screen on a line of its own.
    let summary = screen
        .rsplit_once(common::pty::ERASE)
        .map_or("", |(_, s)| s);
    assert!(
        summary.starts_with("weft: ")
            && summary.contains(" samples of ")
            && summary.ends_with('\n'),
        "{screen:?}"
    );
    // Without a terminal, or with -q, no progress.
    let o = run_weft(
        &[
            "profile",
            "-F",
            "99",
            "-d",
            "0.5",
            "-o",
            path.to_str().unwrap(),
        ],
        TIMEOUT,
    );
    let _ = std::fs::remove_file(&path);
    assert!(!o.stderr.contains("Ctrl-C to stop"), "{}", o.stderr);
    let (_, screen) = common::pty::run_on_pty(&[
        "profile",
        "-q",
        "-F",
        "99",
        "-d",
        "1",
        "-o",
        path.to_str().unwrap(),
    ]);
    let _ = std::fs::remove_file(&path);
    assert!(!screen.contains("Ctrl-C to stop"), "{screen:?}");
}

#[test]
fn off_cpu_pprof_is_nanoseconds_blocked() {
    require_root!();
    let _serial = one_at_a_time();
    let go = Command::new("go").arg("version").output();
    testgate::require!(
        go.is_ok_and(|o| o.status.success()),
        "go tool pprof needs Debian's golang-go (scripts/setup.sh installs it)"
    );
    testgate::require!(
        Command::new("chrt").arg("--help").output().is_ok(),
        "chrt (util-linux) is not installed"
    );
    let walls = scratch("offcpu-pprof-walls");
    let cmd = format!(
        "chrt -f 10 {} timed-nanosleep 10000000 20 {}",
        workload().display(),
        walls.display()
    );
    let path = scratch("offcpu.pb.gz");
    let o = run_weft(
        &["offcpu", "-c", &cmd, "-o", path.to_str().unwrap()],
        TIMEOUT,
    );
    must_succeed(&o, "weft offcpu");
    let home = scratch("gohome-offcpu");
    std::fs::create_dir_all(&home).unwrap();
    let o = run(
        Command::new("go")
            .args(["tool", "pprof", "-top", "-unit=ms"])
            .arg(&path)
            .env("HOME", &home)
            .env("GOCACHE", home.join("cache"))
            .env("GOPATH", home.join("go")),
        Duration::from_secs(120),
    );
    let _ = std::fs::remove_file(&path);
    let _ = std::fs::remove_dir_all(&home);
    must_succeed(&o, "go tool pprof");
    assert!(o.stdout.contains("Type: offcpu"), "{}", o.stdout);
    // `flat flat% sum% cum cum% name`: 20 x 10 ms under do_nanosleep.
    let cum: f64 = o
        .stdout
        .lines()
        .find(|l| l.trim_end().ends_with(" do_nanosleep"))
        .and_then(|l| {
            l.split_whitespace()
                .nth(3)?
                .strip_suffix("ms")?
                .parse()
                .ok()
        })
        .unwrap_or_else(|| panic!("no do_nanosleep line:\n{}", o.stdout));
    // Never short; never longer than the calls took (as the workload timed
    // them), however long a busy machine made the wake-ups wait; pprof
    // prints hundredths of a millisecond.
    let calls_ns = wall_times_ns(&walls);
    let _ = std::fs::remove_file(&walls);
    let in_calls_ms = calls_ns.iter().sum::<u64>() as f64 / 1e6;
    assert!(
        (180.0..=in_calls_ms + 0.005).contains(&cum),
        "{cum} ms, {in_calls_ms} ms in the calls ({calls_ns:?}):\n{}",
        o.stdout
    );
}

#[test]
fn one_process_until_it_exits_folded_to_stdout() {
    require_root!();
    let _serial = one_at_a_time();
    // 1.5 s of CPU; weft attaches to it while it runs and stops when it ends.
    let mut spin = Command::new(workload())
        .args(["spin-cpu", "1500"])
        .spawn()
        .unwrap();
    let pid = spin.id().to_string();
    let o = run_weft(&["profile", "-F", "499", "-p", &pid], TIMEOUT);
    let _ = spin.wait();
    must_succeed(&o, "weft profile -p");
    // No -o: folded stacks on stdout, of that process alone.
    let stacks: HashMap<String, u64> = o
        .stdout
        .lines()
        .filter_map(|l| {
            let (stack, n) = l.rsplit_once(' ')?;
            Some((stack.to_string(), n.parse().ok()?))
        })
        .collect();
    let all = total_where(&stacks, |_| true);
    assert!(all >= 200, "{all} samples:\n{}", o.stdout);
    assert!(
        stacks.keys().all(|s| s.starts_with("weftwl;")),
        "{stacks:#?}"
    );
    let spinning = total_where(&stacks, |s| s.contains(";weft_workload_spin_cpu"));
    assert!(spinning * 10 >= all * 9, "{spinning} of {all}");
}

#[test]
fn off_cpu_threads_are_summed_by_process() {
    require_root!();
    let _serial = one_at_a_time();
    // Two threads pass a byte back and forth 2,000 times: each blocks in
    // a pipe read about 2,000 times.
    let cmd = format!("{} pingpong 2000", workload().display());
    let path = scratch("offcpu-threads.folded");
    let o = run_weft(
        &[
            "offcpu",
            "--pid-frames",
            "-c",
            &cmd,
            "-o",
            path.to_str().unwrap(),
        ],
        TIMEOUT,
    );
    must_succeed(&o, "weft offcpu");
    let stacks = folded(&path);
    let _ = std::fs::remove_file(&path);
    let piped: HashMap<&String, &u64> = stacks
        .iter()
        .filter(|(s, _)| s.starts_with("weftwl-") && s.contains("anon_pipe_read_[k]"))
        .collect();
    // One process: every stack carries its pid, none a thread's.
    let pids: std::collections::HashSet<&str> =
        piped.keys().filter_map(|s| s.split(';').next()).collect();
    assert_eq!(pids.len(), 1, "{stacks:#?}");
    // Both threads' blocks are in it: `... in N blocks of 1 process(es)`.
    let blocks: u64 = o
        .stderr
        .split(" blocks of ")
        .next()
        .and_then(|s| s.rsplit(' ').next()?.parse().ok())
        .unwrap_or_else(|| panic!("no block count:\n{}", o.stderr));
    assert!(blocks >= 3000, "{blocks} blocks\n{}", o.stderr);
}

/// A shell starting short-lived processes as fast as it can for `secs`
/// seconds (`timeout` ends it even if the test fails first).
fn busy_machine(secs: u32) -> std::process::Child {
    Command::new("timeout")
        .args([&secs.to_string(), "sh", "-c", "while :; do /bin/true; done"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("sh")
}

/// `weft: T taken, C counted, L lost (...)` of `-v`: (T, C, L).
fn sample_accounting(stderr: &str) -> (u64, u64, u64) {
    let line = stderr
        .lines()
        .find_map(|l| l.strip_prefix("weft: ").filter(|l| l.contains(" taken, ")))
        .unwrap_or_else(|| panic!("no accounting line:\n{stderr}"));
    let numbers: Vec<u64> = line
        .split(|c: char| !c.is_ascii_digit())
        .filter_map(|w| w.parse().ok())
        .take(3)
        .collect();
    (numbers[0], numbers[1], numbers[2])
}

/// Every sample the probe takes (`@events`, counted first thing in the BPF
/// program) is in the output or in the kernel's count of failed updates,
/// while thousands of processes start and end; and `-d 2` ends on time.
/// (The frame-pointer mode: its stacks are counted in the kernel's map.)
#[test]
fn every_sample_is_counted_on_a_busy_machine() {
    require_root!();
    let _serial = one_at_a_time();
    let path = scratch("busy.folded");
    let mut busy = busy_machine(8);
    std::thread::sleep(Duration::from_millis(300));
    let started = std::time::Instant::now();
    let o = run_weft(
        &[
            "profile",
            "-v",
            "--frame-pointers",
            "-F",
            "999",
            "-d",
            "2",
            "-o",
            path.to_str().unwrap(),
        ],
        TIMEOUT,
    );
    let wall = started.elapsed();
    let _ = busy.kill();
    let _ = busy.wait();
    must_succeed(&o, "weft profile -F 999 -d 2 on a busy machine");
    let stacks = folded(&path);
    let _ = std::fs::remove_file(&path);
    let (taken, counted, lost) = sample_accounting(&o.stderr);
    let in_file = total_where(&stacks, |_| true);
    assert_eq!(counted, in_file, "{}", o.stderr);
    assert_eq!(taken, counted + lost, "{}", o.stderr);
    assert_eq!(lost, 0, "the count map filled:\n{}", o.stderr);
    // 2 CPUs at 999 Hz for 2 s, busy with the loop: most of 3996.
    assert!(taken > 2000, "{}", o.stderr);
    let processes = stacks
        .keys()
        .filter(|s| s.starts_with("true;") || s.starts_with("sh;"))
        .count();
    assert!(processes > 0, "the loop was not sampled:\n{}", o.stderr);
    // The time weft waited for a CPU (other work on this shared machine)
    // is not its own: the rest must stay within a second of the 2 s.
    let waited: u64 = o
        .stderr
        .lines()
        .find_map(|l| {
            l.split_once("; weft waited ")?
                .1
                .strip_suffix(" ms for a CPU")
        })
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no CPU wait in -v:\n{}", o.stderr));
    let own = wall.saturating_sub(Duration::from_millis(waited));
    assert!(
        own < Duration::from_secs(3),
        "-d 2 took {wall:?}, {waited} ms of it waiting for a CPU:\n{}",
        o.stderr
    );
}

/// A count map too small for the run: what it could not take is counted,
/// the sum still holds, and the advice is a flag of `weft profile`.
#[test]
fn a_full_count_map_is_counted_and_named_by_its_flag() {
    require_root!();
    let _serial = one_at_a_time();
    let path = scratch("full.folded");
    let mut busy = busy_machine(5);
    let o = run_weft(
        &[
            "profile",
            "-v",
            "--frame-pointers",
            "-F",
            "999",
            "-d",
            "1",
            "--max-stacks",
            "4",
            "-o",
            path.to_str().unwrap(),
        ],
        TIMEOUT,
    );
    let _ = busy.kill();
    let _ = busy.wait();
    must_succeed(&o, "weft profile --max-stacks 4");
    let stacks = folded(&path);
    let _ = std::fs::remove_file(&path);
    let (taken, counted, lost) = sample_accounting(&o.stderr);
    assert_eq!(counted, total_where(&stacks, |_| true), "{}", o.stderr);
    assert_eq!(taken, counted + lost, "{}", o.stderr);
    assert!(lost > 0, "{}", o.stderr);
    assert!(
        o.stderr.contains(&format!(
            "weft: {lost} samples of {taken} were lost: the count map's 4 keys were full before weft read them (--max-stacks 16 gives it more)"
        )),
        "{}",
        o.stderr
    );
    assert!(!o.stderr.contains("let @a"), "{}", o.stderr);
}
