//! Stacks printed as bpftrace 0.17 printed them: `golden/stacks_kernel.txt`
//! is the text output and `golden/stacks_kernel.json` the `-f json` output of
//! two off-CPU scripts on `tracepoint:sched:sched_switch` for one `sleep 0.3`
//! (scripts in the comments below). The replays rebuild the same values with
//! the frames bpftrace resolved and compare byte for byte.

use abi::StackMode;
use output::{
    Format, Frame, JsonSink, MapDump, MapEntry, MapEntryValue, MapKind, Render, Sink, Stack,
    Symbol, TextSink, Value, print_maps_at_exit,
};

fn frames(list: &[(u64, &str, u64)]) -> Vec<Frame> {
    list.iter()
        .map(|&(addr, name, offset)| Frame {
            addr,
            symbol: (!name.is_empty()).then(|| Symbol {
                name: name.into(),
                offset,
                module: None,
            }),
            file: None,
        })
        .collect()
}

fn stack(user: bool, mode: StackMode, id: i64, list: &[(u64, &str, u64)]) -> Value {
    Value::Stack(Box::new(Stack {
        user,
        mode,
        limit: 127,
        id,
        pid: 0,
        frames: frames(list),
    }))
}

fn kstack(mode: StackMode, list: &[(u64, &str, u64)]) -> Value {
    stack(false, mode, 1, list)
}

fn counted(name: &str, keys: Vec<Vec<Value>>) -> MapDump {
    MapDump {
        name: name.into(),
        kind: MapKind::Count,
        keyed: true,
        entries: keys
            .into_iter()
            .map(|key| MapEntry {
                key,
                value: MapEntryValue::Count(1),
            })
            .collect(),
    }
}

const SCHEDULE: (u64, &str, u64) = (0xffffffff82265ec8, "__schedule", 1576);
const SLEEP: &[(u64, &str, u64)] = &[
    SCHEDULE,
    (0xffffffff82266833, "schedule", 35),
    (0xffffffff8226d89e, "do_nanosleep", 94),
    (0xffffffff8142e345, "hrtimer_nanosleep", 181),
    (0, "common_nsleep", 48),
    (0, "__x64_sys_clock_nanosleep", 222),
    (0, "do_syscall_64", 113),
    (0, "entry_SYSCALL_64_after_hwframe", 118),
];
const EXIT: &[(u64, &str, u64)] = &[
    SCHEDULE,
    (0xffffffff813b12e7, "do_task_dead", 71),
    (0xffffffff81366f7d, "do_exit", 1869),
    (0xffffffff81367419, "do_group_exit", 41),
    (0, "__x64_sys_exit_group", 20),
    (0, "x64_sys_call", 5366),
    (0, "do_syscall_64", 113),
    (0, "entry_SYSCALL_64_after_hwframe", 118),
];

/// Non-zero addresses for the frames bpftrace-mode output does not show.
fn filled(list: &[(u64, &'static str, u64)]) -> Vec<(u64, &'static str, u64)> {
    list.iter()
        .enumerate()
        .map(|(i, &(a, n, o))| (if a == 0 { 0x1000 + i as u64 } else { a }, n, o))
        .collect()
}

fn printfs(sink: &mut dyn Sink) {
    let format = Format::parse("x%sy\n");
    for second in [SLEEP[1], EXIT[1]] {
        let arg = kstack(StackMode::Bpftrace, &[SCHEDULE, second]);
        sink.printf(&format.render(&[arg])).unwrap();
    }
}

fn check(path: &str, got: Vec<u8>) {
    let path = format!("{}/tests/golden/{path}", env!("CARGO_MANIFEST_DIR"));
    if let Ok(out) = std::env::var("WEFT_GOLDEN_DUMP") {
        let name = std::path::Path::new(&path).file_name().unwrap();
        std::fs::write(std::path::Path::new(&out).join(name), &got).unwrap();
    }
    let want = std::fs::read(&path).expect("golden file");
    assert!(
        got == want,
        "{path} differs\n--- want\n{}\n--- got\n{}",
        String::from_utf8_lossy(&want),
        String::from_utf8_lossy(&got)
    );
}

/// `tracepoint:sched:sched_switch /args->prev_comm == "sleep"/ { @[kstack] = count();
/// @p[kstack(perf, 4)] = count(); @n[kstack(3)] = count(); printf("x%sy\n", kstack(2)); }
/// interval:ms:800 { exit(); }`
#[test]
fn text_matches_bpftrace() {
    let (sleep, exit) = (filled(SLEEP), filled(EXIT));
    let bt = |l: &[(u64, &str, u64)]| vec![kstack(StackMode::Bpftrace, l)];
    let perf = |l: &[(u64, &str, u64)]| vec![kstack(StackMode::Perf, l)];
    let maps = vec![
        counted("@", vec![bt(&sleep), bt(&exit)]),
        counted("@p", vec![perf(&sleep[..4]), perf(&exit[..4])]),
        counted("@n", vec![bt(&sleep[..3]), bt(&exit[..3])]),
    ];
    let mut sink = TextSink::new(Vec::new());
    sink.attached_probes(2).unwrap();
    printfs(&mut sink);
    print_maps_at_exit(&mut sink, &maps).unwrap();
    check("stacks_kernel.txt", sink.into_inner());
}

/// `tracepoint:sched:sched_switch /args->prev_comm == "sleep"/ { @[kstack(3)] = count();
/// @t[kstack(perf, 2), 5, ustack(2)] = count(); printf("x%sy\n", kstack(2)); }
/// interval:ms:800 { exit(); }` with `-f json`. The exiting task's user stack
/// was not captured (empty); the sleeping one's did not resolve (hex).
#[test]
fn json_matches_bpftrace() {
    let (sleep, exit) = (filled(SLEEP), filled(EXIT));
    let bt = |l: &[(u64, &str, u64)]| vec![kstack(StackMode::Bpftrace, l)];
    let tuple =
        |k: &[(u64, &str, u64)], u: Value| vec![kstack(StackMode::Perf, k), Value::Int(5), u];
    let no_ustack = stack(true, StackMode::Bpftrace, -14, &[]);
    let hex_ustack = stack(
        true,
        StackMode::Bpftrace,
        2,
        &[(0x7f73d9aa4503, "", 0), (0x11e1a300, "", 0)],
    );
    let maps = vec![
        counted("@", vec![bt(&exit[..3]), bt(&sleep[..3])]),
        counted(
            "@t",
            vec![tuple(&exit[..2], no_ustack), tuple(&sleep[..2], hex_ustack)],
        ),
    ];
    let mut sink = JsonSink::new(Vec::new());
    sink.attached_probes(2).unwrap();
    printfs(&mut sink);
    print_maps_at_exit(&mut sink, &maps).unwrap();
    check("stacks_kernel.json", sink.into_inner());
}
