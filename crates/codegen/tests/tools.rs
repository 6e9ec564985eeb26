//! The ELF object against the standard tools: `llvm-objdump -d` reads it
//! with our encodings, and `bpftool prog loadall` (libbpf + the kernel
//! verifier) accepts tracepoint, perf_event and raw_tp programs using
//! ring buffer, hash, per-CPU array and array maps. Gated by `testgate` on
//! the tools (and, for bpftool, root).

use std::path::PathBuf;
use std::process::Command;

use codegen::asm::{AluOp, Asm, Cond, Helper, Src, Width};
use codegen::elf::{ElfMap, ElfProgram, MapType, write_object};
use codegen::{Function, disasm};

/// Whether `name` runs (`scripts/setup.sh` installs both tools).
fn installed(name: &str) -> bool {
    Command::new(name).arg("--version").output().is_ok()
}

fn temp_path(tag: &str) -> PathBuf {
    std::env::temp_dir().join(format!("weft-codegen-{}-{tag}", std::process::id()))
}

fn maps() -> Vec<ElfMap> {
    vec![
        ElfMap {
            name: abi::EVENTS_MAP.into(),
            map_type: MapType::RingBuf.id(),
            key_size: 0,
            value_size: 0,
            max_entries: 256 * 1024,
            flags: 0,
        },
        ElfMap {
            name: abi::COUNTERS_MAP.into(),
            map_type: MapType::PerCpuArray.id(),
            key_size: 4,
            value_size: 8,
            max_entries: 2,
            flags: 0,
        },
        ElfMap {
            name: "m_start".into(),
            map_type: MapType::Hash.id(),
            key_size: 8,
            value_size: 8,
            max_entries: 4096,
            flags: 0,
        },
        ElfMap {
            name: "m_lru".into(),
            map_type: MapType::LruHash.id(),
            key_size: 16,
            value_size: 24,
            max_entries: 1024,
            flags: 0,
        },
    ]
}

/// `@start[tid] = nsecs` plus a ring-buffer record `{kind, id, pid}` whose
/// reserve failure bumps counter 0.
fn tracepoint_body() -> Function {
    let mut a = Asm::new();
    // key = pid_tgid
    let key = a.stack(8);
    let val = a.stack(8);
    let pid = a.vreg();
    a.call(Helper::GET_CURRENT_PID_TGID, &[], Some(pid));
    a.store_stack(key, 0, Src::Reg(pid), Width::DW);
    let now = a.vreg();
    a.call(Helper::KTIME_GET_NS, &[], Some(now));
    a.store_stack(val, 0, Src::Reg(now), Width::DW);
    let m = a.vreg();
    a.map_ptr(m, "m_start");
    let (kp, vp) = (a.vreg(), a.vreg());
    a.stack_addr(kp, key, 0);
    a.stack_addr(vp, val, 0);
    a.call(
        Helper::MAP_UPDATE_ELEM,
        &[Src::Reg(m), Src::Reg(kp), Src::Reg(vp), Src::Imm(0)],
        None,
    );
    // Ring buffer record.
    let rb = a.vreg();
    a.map_ptr(rb, abi::EVENTS_MAP);
    let rec = a.vreg();
    a.call(
        Helper::RINGBUF_RESERVE,
        &[Src::Reg(rb), Src::Imm(16), Src::Imm(0)],
        Some(rec),
    );
    let full = a.label();
    let done = a.label();
    a.br(Cond::Eq, rec, Src::Imm(0), full);
    a.store(rec, 0, Src::Imm(1), Width::W);
    a.store(rec, 4, Src::Imm(7), Width::W);
    a.alu(AluOp::Rsh, pid, Src::Imm(32));
    a.store(rec, 8, Src::Reg(pid), Width::DW);
    a.call(Helper::RINGBUF_SUBMIT, &[Src::Reg(rec), Src::Imm(0)], None);
    a.jmp(done);
    a.bind(full);
    let ck = a.stack(4);
    a.store_stack(ck, 0, Src::Imm(0), Width::W);
    let (cm, ckp, cv) = (a.vreg(), a.vreg(), a.vreg());
    a.map_ptr(cm, abi::COUNTERS_MAP);
    a.stack_addr(ckp, ck, 0);
    a.call(
        Helper::MAP_LOOKUP_ELEM,
        &[Src::Reg(cm), Src::Reg(ckp)],
        Some(cv),
    );
    a.br(Cond::Eq, cv, Src::Imm(0), done);
    let one = a.vreg();
    a.mov(one, Src::Imm(1));
    a.atomic_add(cv, 0, one, Width::DW);
    a.bind(done);
    a.ret(Src::Imm(0));
    a.finish().unwrap()
}

/// Reads `@start[tid]` and deletes it, using the LRU map too.
fn second_body() -> Function {
    let mut a = Asm::new();
    let key = a.stack(16);
    a.store_stack(key, 0, Src::Imm(1), Width::DW);
    a.store_stack(key, 8, Src::Imm(2), Width::DW);
    let (m, kp, v) = (a.vreg(), a.vreg(), a.vreg());
    a.map_ptr(m, "m_lru");
    a.stack_addr(kp, key, 0);
    a.call(
        Helper::MAP_LOOKUP_ELEM,
        &[Src::Reg(m), Src::Reg(kp)],
        Some(v),
    );
    let out = a.label();
    a.br(Cond::Eq, v, Src::Imm(0), out);
    let x = a.vreg();
    a.load(x, v, 16, Width::DW);
    a.ret(Src::Reg(x));
    a.bind(out);
    a.ret(Src::Imm(0));
    a.finish().unwrap()
}

fn object() -> (Vec<u8>, Function, Function) {
    let f = tracepoint_body();
    let g = second_body();
    let obj = write_object(
        &[
            ElfProgram {
                name: "tp_getppid",
                section: "tracepoint/syscalls/sys_enter_getppid",
                func: &f,
            },
            ElfProgram {
                name: "tp_getppid_2",
                section: "tracepoint/syscalls/sys_enter_getppid",
                func: &g,
            },
            ElfProgram {
                name: "prof",
                section: "perf_event",
                func: &g,
            },
            ElfProgram {
                name: "weft_begin",
                section: "raw_tp/weft_begin",
                func: &f,
            },
        ],
        &maps(),
    )
    .unwrap();
    (obj, f, g)
}

#[test]
fn llvm_objdump_reads_our_encoding() {
    testgate::require!(
        installed("llvm-objdump"),
        "llvm-objdump is not installed (apt-get install llvm)"
    );
    let (obj, f, _) = object();
    let path = temp_path("objdump.o");
    std::fs::write(&path, &obj).unwrap();
    let out = Command::new("llvm-objdump")
        .arg("-dr")
        .arg(&path)
        .output()
        .unwrap();
    if std::env::var_os("WEFT_KEEP").is_none() {
        std::fs::remove_file(&path).unwrap();
    }
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("file format elf64-bpf"), "{text}");
    assert!(
        text.contains("Disassembly of section tracepoint/syscalls/sys_enter_getppid:"),
        "{text}"
    );
    assert!(text.contains("<tp_getppid>:"), "{text}");
    assert!(text.contains("<tp_getppid_2>:"), "{text}");
    assert!(text.contains("R_BPF_64_64\tm_start"), "{text}");
    assert!(text.contains("R_BPF_64_64\tevent_ringbuf"), "{text}");

    // Each of our instructions, as bytes and as LLVM's text, in order for
    // the first function.
    let ours = disasm(&f);
    let mut llvm_lines = text
        .lines()
        .skip_while(|l| !l.contains("<tp_getppid>:"))
        .skip(1)
        .filter(|l| l.contains(":\t"));
    let mut checked = 0;
    for (i, insn) in f.insns.iter().enumerate() {
        if i > 0 && f.insns[i - 1].is_ld_imm64() {
            continue;
        }
        let line = llvm_lines.next().unwrap();
        let hex: String = insn
            .encode()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<Vec<_>>()
            .join(" ");
        assert!(line.contains(&hex), "insn {i}: {hex} vs {line}\n{ours}");
        let llvm_text = line.rsplit('\t').next().unwrap().trim();
        // Spot-check a few forms against LLVM's own syntax.
        let our_text = ours
            .lines()
            .find(|l| l.trim_start().starts_with(&format!("{i}:")))
            .unwrap()
            .split_once(": ")
            .unwrap()
            .1;
        if our_text.starts_with("call ") {
            let id = our_text.rsplit('#').next().unwrap();
            assert_eq!(llvm_text, format!("call {id}"));
        } else if our_text.contains(" = map[") {
            assert!(line.contains("ld_pseudo\tr"), "{line}");
            assert!(llvm_text.ends_with(", 1, 0"), "{line}");
        } else if llvm_text == "<unknown>" {
            // LLVM 14 prints store-immediate as <unknown>.
            assert!(our_text.starts_with("*(") && !our_text.contains("= r"));
        } else if our_text.starts_with("goto ") {
            assert!(llvm_text.starts_with(our_text), "{llvm_text} vs {our_text}");
        } else if let Some((cond, _)) = our_text.split_once(" goto ") {
            // LLVM prints immediates in decimal and the target after the offset.
            let cond = cond.replace("0x0", "0").replace("0x1", "1");
            assert!(llvm_text.starts_with(&cond), "{llvm_text} vs {our_text}");
        } else {
            assert_eq!(llvm_text, our_text, "insn {i}");
        }
        checked += 1;
    }
    assert!(checked > 20);
}

#[test]
fn bpftool_loads_every_program() {
    testgate::require_root!();
    testgate::require!(
        installed("bpftool"),
        "bpftool is not installed (apt-get install bpftool)"
    );
    testgate::require!(
        std::path::Path::new("/sys/fs/bpf").exists(),
        "/sys/fs/bpf is not mounted"
    );
    let (obj, _, _) = object();
    let path = temp_path("loadall.o");
    std::fs::write(&path, &obj).unwrap();
    let pin = PathBuf::from(format!("/sys/fs/bpf/weft_test_{}", std::process::id()));
    let out = Command::new("bpftool")
        .args(["prog", "loadall"])
        .arg(&path)
        .arg(&pin)
        .output()
        .unwrap();
    let pinned: Vec<String> = std::fs::read_dir(&pin)
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    let _ = std::fs::remove_dir_all(&pin);
    std::fs::remove_file(&path).unwrap();
    assert!(
        out.status.success(),
        "bpftool prog loadall failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let mut pinned = pinned;
    pinned.sort();
    assert_eq!(
        pinned,
        ["prof", "tp_getppid", "tp_getppid_2", "weft_begin"],
        "{pinned:?}"
    );
}
