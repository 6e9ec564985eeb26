//! Root-only tests of the runtime against the live kernel, with objects from
//! the test fixture writer in `common/`.

mod common;

use std::ops::ControlFlow;
use std::time::{Duration, Instant};

use abi::{Attach, COUNTERS_MAP, EVENTS_MAP, GLOBALS_MAP, Manifest, ProgramSpec, ZERO_MAP};
use common::*;
use runtime::{AttachError, LoadOptions, MapError, RuntimeError, Session};

const CNT: &str = "wt_cnt";
const HASH: &str = "wt_hash";
const PCPU: &str = "wt_pcpu";

fn std_maps() -> Vec<MapDef> {
    vec![
        MapDef {
            name: EVENTS_MAP,
            map_type: BPF_MAP_TYPE_RINGBUF,
            key_size: 0,
            value_size: 0,
            max_entries: 256 * 1024,
        },
        MapDef {
            name: COUNTERS_MAP,
            map_type: BPF_MAP_TYPE_PERCPU_ARRAY,
            key_size: 4,
            value_size: 8,
            max_entries: 2,
        },
        MapDef {
            name: GLOBALS_MAP,
            map_type: BPF_MAP_TYPE_ARRAY,
            key_size: 4,
            value_size: 8,
            max_entries: 1,
        },
        MapDef {
            name: ZERO_MAP,
            map_type: BPF_MAP_TYPE_ARRAY,
            key_size: 4,
            value_size: 64,
            max_entries: 1,
        },
        MapDef {
            name: CNT,
            map_type: BPF_MAP_TYPE_ARRAY,
            key_size: 4,
            value_size: 8,
            max_entries: 1,
        },
        MapDef {
            name: HASH,
            map_type: BPF_MAP_TYPE_HASH,
            key_size: 8,
            value_size: 8,
            max_entries: 16,
        },
        MapDef {
            name: PCPU,
            map_type: BPF_MAP_TYPE_PERCPU_HASH,
            key_size: 8,
            value_size: 8,
            max_entries: 16,
        },
    ]
}

/// BEGIN: `@cnt[0] += 1` (array, atomic add), `@hash[5] = 7`, `@pcpu[5] = 7`.
fn begin_prog(name: &'static str) -> ProgDef {
    let mut a = Asm::default();
    a.mov_imm(1, 0)
        .stx_w(10, -4, 1)
        .mov_reg(2, 10)
        .add_imm(2, -4)
        .ld_map(1, CNT)
        .call(1);
    a.jeq_imm(0, 0, 2).mov_imm(1, 1).atomic_add_dw(0, 0, 1);
    a.mov_imm(1, 5)
        .stx_dw(10, -16, 1)
        .mov_imm(1, 7)
        .stx_dw(10, -24, 1);
    for map in [HASH, PCPU] {
        a.ld_map(1, map)
            .mov_reg(2, 10)
            .add_imm(2, -16)
            .mov_reg(3, 10)
            .add_imm(3, -24)
            .mov_imm(4, 0)
            .call(2);
    }
    a.mov_imm(0, 0).exit();
    ProgDef {
        name,
        section: "raw_tp",
        asm: a,
    }
}

/// A tracepoint program emitting `{kind: u32 = 1, id: u32 = 0, pid: u64}` per hit.
fn emit_pid_prog(name: &'static str, section: &'static str) -> ProgDef {
    let mut a = Asm::default();
    a.ld_map(1, EVENTS_MAP)
        .mov_imm(2, 16)
        .mov_imm(3, 0)
        .call(131); // bpf_ringbuf_reserve
    a.jeq_imm(0, 0, 9);
    a.mov_reg(6, 0).st_w(6, 0, 1).st_w(6, 4, 0);
    a.call(14).rsh_imm(0, 32).stx_dw(6, 8, 0); // bpf_get_current_pid_tgid >> 32
    a.mov_reg(1, 6).mov_imm(2, 0).call(132); // bpf_ringbuf_submit
    a.mov_imm(0, 0).exit();
    ProgDef {
        name,
        section,
        asm: a,
    }
}

fn spec(name: &str, attach: Attach, probe: &str) -> ProgramSpec {
    ProgramSpec {
        name: name.into(),
        section: String::new(),
        attach,
        probe: probe.into(),
        item: 0,
    }
}

fn getppid_tp() -> Attach {
    Attach::Tracepoint {
        category: "syscalls".into(),
        name: "sys_enter_getppid".into(),
    }
}

#[test]
fn begin_runs_once_and_maps_read_exactly() {
    testgate::require_root!();
    let elf = write_object(&std_maps(), vec![begin_prog("wt_begin")]);
    let manifest = Manifest {
        programs: vec![spec("wt_begin", Attach::Begin, "BEGIN")],
        ..Manifest::default()
    };
    let mut s = Session::load(&elf, &manifest, &LoadOptions::default()).unwrap();
    assert_eq!(s.run_begin().unwrap(), 1);
    assert_eq!(s.run_end().unwrap(), 0);

    let cnt = s.map_entries(CNT).unwrap();
    assert_eq!(
        cnt,
        vec![(
            0u32.to_le_bytes().to_vec(),
            vec![1u64.to_le_bytes().to_vec()]
        )]
    );

    let hash = s.map_entries(HASH).unwrap();
    assert_eq!(
        hash,
        vec![(
            5u64.to_le_bytes().to_vec(),
            vec![7u64.to_le_bytes().to_vec()]
        )]
    );

    let pcpu = s.map_entries(PCPU).unwrap();
    assert_eq!(pcpu.len(), 1);
    assert_eq!(pcpu[0].0, 5u64.to_le_bytes());
    assert_eq!(pcpu[0].1.len(), s.possible_cpus());
    let total: u64 = pcpu[0]
        .1
        .iter()
        .map(|v| u64::from_le_bytes(v[..].try_into().unwrap()))
        .sum();
    assert_eq!(total, 7, "one CPU ran BEGIN");

    // Globals hold start_ns; the zero map has its zeroed entry; counters are 0.
    let g = s.map_entries(GLOBALS_MAP).unwrap();
    assert_eq!(g[0].1[0], s.start_ns().to_le_bytes());
    let z = s.map_entries(ZERO_MAP).unwrap();
    assert_eq!(z, vec![(vec![0; 4], vec![vec![0; 64]])]);
    assert_eq!(s.counters().unwrap(), [0, 0, 0, 0]);
    let counters = s.map_entries(COUNTERS_MAP).unwrap();
    assert_eq!(counters.len(), 2);
    assert!(counters.iter().all(|(_, v)| v.len() == s.possible_cpus()));

    // A second run adds one more.
    s.run_begin().unwrap();
    assert_eq!(s.map_entries(CNT).unwrap()[0].1[0], 2u64.to_le_bytes());

    // zero keeps keys, clear removes them (arrays are zeroed).
    s.zero_map(HASH).unwrap();
    s.zero_map(PCPU).unwrap();
    assert_eq!(
        s.map_entries(HASH).unwrap(),
        vec![(5u64.to_le_bytes().to_vec(), vec![vec![0; 8]])]
    );
    assert!(
        s.map_entries(PCPU).unwrap()[0]
            .1
            .iter()
            .all(|v| v == &[0; 8])
    );
    s.clear_map(HASH).unwrap();
    s.clear_map(PCPU).unwrap();
    s.clear_map(CNT).unwrap();
    assert!(s.map_entries(HASH).unwrap().is_empty());
    assert!(s.map_entries(PCPU).unwrap().is_empty());
    assert_eq!(s.map_entries(CNT).unwrap()[0].1[0], [0; 8]);

    assert!(matches!(s.map_entries("@nope"), Err(MapError::NotFound(_))));
}

#[test]
fn tracepoint_events_arrive_exactly_once_each() {
    testgate::require_root!();
    let elf = write_object(
        &std_maps(),
        vec![emit_pid_prog(
            "wt_getppid",
            "tracepoint/syscalls/sys_enter_getppid",
        )],
    );
    let manifest = Manifest {
        programs: vec![spec(
            "wt_getppid",
            getppid_tp(),
            "tracepoint:syscalls:sys_enter_getppid",
        )],
        ..Manifest::default()
    };
    let t0 = Instant::now();
    let mut s = Session::load(&elf, &manifest, &LoadOptions::default()).unwrap();
    let t_load = t0.elapsed();
    assert_eq!(s.attach().unwrap(), 1);
    let t_attach = t0.elapsed();
    eprintln!("one-probe object: load {t_load:?}, load+attach {t_attach:?}");
    assert_eq!(s.probes_attached(), 1);

    let pid = std::process::id() as u64;
    const N: usize = 1000;
    let mine = std::cell::Cell::new(0);
    let mut on_event = |rec: &[u8]| {
        assert_eq!(rec.len(), 16);
        assert_eq!(u32::from_le_bytes(rec[0..4].try_into().unwrap()), 1);
        assert_eq!(u32::from_le_bytes(rec[4..8].try_into().unwrap()), 0);
        if u64::from_le_bytes(rec[8..16].try_into().unwrap()) == pid {
            mine.set(mine.get() + 1);
        }
        ControlFlow::Continue(())
    };
    // Drain once before to be sure the buffer starts empty of our records.
    s.poll(Duration::ZERO, &mut on_event).unwrap();
    for _ in 0..N {
        // SAFETY: getppid has no preconditions.
        unsafe { libc::getppid() };
    }
    let deadline = Instant::now() + Duration::from_secs(2);
    while mine.get() < N && Instant::now() < deadline {
        s.poll(Duration::from_millis(50), &mut on_event).unwrap();
    }
    // Nothing more than N either.
    s.poll(Duration::from_millis(20), &mut on_event).unwrap();
    assert_eq!(mine.get(), N);
    assert_eq!(s.counters().unwrap(), [0, 0, 0, 0]);

    // Break stops the drain after one record; the rest wait for the next call.
    for _ in 0..3 {
        unsafe { libc::getppid() };
    }
    let mut seen = 0;
    let n = s
        .poll(Duration::from_millis(100), &mut |_| {
            seen += 1;
            ControlFlow::Break(())
        })
        .unwrap();
    assert_eq!((n, seen), (1, 1));
    let rest = s
        .poll(Duration::ZERO, &mut |_| ControlFlow::Continue(()))
        .unwrap();
    assert!(rest >= 2, "the other records are still there: {rest}");

    // Detached: no more records.
    s.detach();
    assert_eq!(s.probes_attached(), 0);
    unsafe { libc::getppid() };
    let mut after = 0;
    s.poll(Duration::from_millis(20), &mut |rec| {
        if u64::from_le_bytes(rec[8..16].try_into().unwrap()) == pid {
            after += 1;
        }
        ControlFlow::Continue(())
    })
    .unwrap();
    assert_eq!(after, 0);
}

#[test]
fn interval_probe_fires() {
    testgate::require_root!();
    let elf = write_object(
        &std_maps(),
        vec![emit_pid_prog("wt_interval", "perf_event")],
    );
    let manifest = Manifest {
        programs: vec![spec(
            "wt_interval",
            Attach::Interval {
                period_ns: 10_000_000,
            },
            "interval:ms:10",
        )],
        ..Manifest::default()
    };
    let mut s = Session::load(&elf, &manifest, &LoadOptions::default()).unwrap();
    assert_eq!(s.attach().unwrap(), 1);
    let mut n = 0;
    let deadline = Instant::now() + Duration::from_millis(300);
    while Instant::now() < deadline {
        n += s
            .poll(
                Duration::from_millis(20),
                &mut |_| ControlFlow::Continue(()),
            )
            .unwrap();
    }
    // 10 ms period over 300 ms: ~30 samples on CPU 0 (when CPU 0 is busy or idle alike).
    assert!(n >= 10, "only {n} interval events");
}

#[test]
fn dropping_a_session_unloads_everything() {
    testgate::require_root!();
    let elf = write_object(
        &std_maps(),
        vec![
            begin_prog("wt_drop_begin"),
            emit_pid_prog("wt_drop_tp", "tracepoint/syscalls/sys_enter_getppid"),
        ],
    );
    let manifest = Manifest {
        programs: vec![
            spec("wt_drop_begin", Attach::Begin, "BEGIN"),
            spec(
                "wt_drop_tp",
                getppid_tp(),
                "tracepoint:syscalls:sys_enter_getppid",
            ),
        ],
        ..Manifest::default()
    };
    let mut s = Session::load(&elf, &manifest, &LoadOptions::default()).unwrap();
    s.run_begin().unwrap();
    s.attach().unwrap();
    let ids = s.program_ids();
    assert_eq!(ids.len(), 2);
    let live = |id: u32| libbpf_rs::Program::fd_from_id(id).is_ok();
    assert!(ids.iter().all(|&id| live(id)));
    drop(s);
    // Program release may be deferred by the kernel (RCU); give it a moment.
    let deadline = Instant::now() + Duration::from_secs(2);
    while ids.iter().any(|&id| live(id)) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(
        ids.iter().all(|&id| !live(id)),
        "programs still loaded after drop"
    );
    let out = std::process::Command::new("bpftool")
        .args(["prog", "show"])
        .output();
    if let Ok(out) = out {
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            !text.contains("wt_drop_"),
            "bpftool still lists our programs:\n{text}"
        );
    }
}

#[test]
fn verifier_rejection_names_program_and_instruction() {
    testgate::require_root!();
    // Dereferencing a HASH lookup result without a NULL check, at instruction 7.
    let mut a = Asm::default();
    a.mov_imm(1, 0)
        .stx_dw(10, -8, 1)
        .mov_reg(2, 10)
        .add_imm(2, -8)
        .ld_map(1, HASH)
        .call(1);
    assert_eq!(a.len(), 7);
    a.ldx_dw(0, 0, 0).mov_imm(0, 0).exit();
    let elf = write_object(
        &std_maps(),
        vec![ProgDef {
            name: "wt_bad_null",
            section: "raw_tp",
            asm: a,
        }],
    );
    let err = Session::load(&elf, &Manifest::default(), &LoadOptions::default()).unwrap_err();
    match err {
        RuntimeError::Verifier { program, log, insn } => {
            assert_eq!(program, "wt_bad_null");
            assert_eq!(insn, Some(7), "log:\n{log}");
            assert!(log.contains("invalid mem access"), "log:\n{log}");
        }
        other => panic!("expected a verifier error, got {other:?}"),
    }

    // Reading an uninitialised register, at instruction 2.
    let mut a = Asm::default();
    a.mov_imm(0, 0).mov_imm(1, 1).mov_reg(0, 5).exit();
    let elf = write_object(
        &std_maps(),
        vec![ProgDef {
            name: "wt_bad_uninit",
            section: "raw_tp",
            asm: a,
        }],
    );
    match Session::load(&elf, &Manifest::default(), &LoadOptions::default()).unwrap_err() {
        RuntimeError::Verifier { program, log, insn } => {
            assert_eq!(program, "wt_bad_uninit");
            assert_eq!(insn, Some(2), "log:\n{log}");
            assert!(log.contains("R5 !read_ok"), "log:\n{log}");
        }
        other => panic!("expected a verifier error, got {other:?}"),
    }
}

#[test]
fn unknown_tracepoint_is_a_typed_not_found() {
    testgate::require_root!();
    let elf = write_object(
        &std_maps(),
        vec![emit_pid_prog(
            "wt_nope",
            "tracepoint/syscalls/sys_enter_weft_nope",
        )],
    );
    let probe = "tracepoint:syscalls:sys_enter_weft_nope";
    let manifest = Manifest {
        programs: vec![spec(
            "wt_nope",
            Attach::Tracepoint {
                category: "syscalls".into(),
                name: "sys_enter_weft_nope".into(),
            },
            probe,
        )],
        ..Manifest::default()
    };
    let mut s = Session::load(&elf, &manifest, &LoadOptions::default()).unwrap();
    match s.attach() {
        Err(e @ AttachError::TracepointNotFound { .. }) => assert_eq!(e.probe(), probe),
        other => panic!("expected TracepointNotFound, got {other:?}"),
    }
    assert_eq!(s.probes_attached(), 0);
}

#[test]
fn manifest_mismatch_is_reported() {
    testgate::require_root!();
    let elf = write_object(&std_maps(), vec![begin_prog("wt_begin2")]);
    let manifest = Manifest {
        programs: vec![spec("wt_other", Attach::Begin, "BEGIN")],
        ..Manifest::default()
    };
    let err = Session::load(&elf, &manifest, &LoadOptions::default()).unwrap_err();
    assert!(
        matches!(err, RuntimeError::Load(runtime::LoadError::MissingProgram(ref p)) if p == "wt_other"),
        "{err:?}"
    );
}
