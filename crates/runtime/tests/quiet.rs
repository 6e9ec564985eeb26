//! Nothing the runtime does prints to stderr: not libbpf's chatter, not a
//! failed `RLIMIT_MEMLOCK` bump (this machine lacks CAP_SYS_RESOURCE), not
//! a verifier rejection. Its own binary, because it redirects fd 2.

mod common;

use std::io::{Read, Seek};
use std::os::fd::AsRawFd;

use abi::{Attach, EVENTS_MAP, Manifest, ProgramSpec};
use common::*;
use runtime::{Features, LoadOptions, Session};

fn with_stderr_captured(f: impl FnOnce()) -> String {
    let mut file = std::fs::File::from(std::os::fd::OwnedFd::from(tempfile_in_tmp()));
    // SAFETY: plain fd juggling on fds we own.
    let saved = unsafe { libc::dup(2) };
    unsafe { libc::dup2(file.as_raw_fd(), 2) };
    f();
    unsafe {
        libc::dup2(saved, 2);
        libc::close(saved);
    }
    let mut out = String::new();
    file.rewind().unwrap();
    file.read_to_string(&mut out).unwrap();
    out
}

fn tempfile_in_tmp() -> std::fs::File {
    let path = std::env::temp_dir().join(format!("weft-runtime-quiet-{}", std::process::id()));
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(&path)
        .unwrap();
    let _ = std::fs::remove_file(&path);
    file
}

#[test]
fn nothing_reaches_stderr() {
    testgate::require_root!();
    let memlock = libc::rlimit {
        rlim_cur: libc::RLIM_INFINITY,
        rlim_max: libc::RLIM_INFINITY,
    };
    // SAFETY: valid rlimit.
    let raised = unsafe { libc::setrlimit(libc::RLIMIT_MEMLOCK, &memlock) } == 0;
    eprintln!(
        "setrlimit(MEMLOCK, inf) {}",
        if raised {
            "succeeded"
        } else {
            "failed (as expected here)"
        }
    );

    let mut a = Asm::default();
    a.ld_map(1, EVENTS_MAP)
        .mov_imm(2, 8)
        .mov_imm(3, 0)
        .call(131);
    a.jeq_imm(0, 0, 4)
        .mov_reg(1, 0)
        .st_w(1, 0, 1)
        .mov_imm(2, 0)
        .call(132);
    a.mov_imm(0, 0).exit();
    let maps = [MapDef {
        name: EVENTS_MAP,
        map_type: BPF_MAP_TYPE_RINGBUF,
        key_size: 0,
        value_size: 0,
        max_entries: 4096,
    }];
    let elf = write_object(
        &maps,
        vec![ProgDef {
            name: "wt_quiet",
            section: "tracepoint/syscalls/sys_enter_getppid",
            asm: a,
        }],
    );
    let manifest = Manifest {
        programs: vec![ProgramSpec {
            name: "wt_quiet".into(),
            section: String::new(),
            attach: Attach::Tracepoint {
                category: "syscalls".into(),
                name: "sys_enter_getppid".into(),
            },
            probe: "tracepoint:syscalls:sys_enter_getppid".into(),
            item: 0,
        }],
        ..Manifest::default()
    };
    let mut bad = Asm::default();
    bad.mov_reg(0, 3).exit();
    let bad_elf = write_object(
        &maps,
        vec![ProgDef {
            name: "wt_quiet_bad",
            section: "raw_tp",
            asm: bad,
        }],
    );

    let printed = with_stderr_captured(|| {
        let _ = Features::probe();
        let mut s = Session::load(&elf, &manifest, &LoadOptions::default()).unwrap();
        s.run_begin().unwrap();
        s.attach().unwrap();
        unsafe { libc::getppid() };
        s.poll(std::time::Duration::from_millis(10), &mut |_| {
            std::ops::ControlFlow::Continue(())
        })
        .unwrap();
        drop(s);
        assert!(Session::load(&bad_elf, &Manifest::default(), &LoadOptions::default()).is_err());
        assert!(
            Session::load(b"not an ELF", &Manifest::default(), &LoadOptions::default()).is_err()
        );
    });
    assert_eq!(printed, "", "the runtime printed to stderr");
}
