//! The BTF reader on a blob built in the test, and (when readable) on this
//! machine's `/sys/kernel/btf/vmlinux`.

use std::fmt::Write as _;

use ktypes::btf::{Btf, BtfBuilder, BtfFunction, fixture_btf, kind};

fn render(f: &BtfFunction) -> String {
    let mut s = format!("{}:\n", f.name);
    for p in &f.params {
        let _ = writeln!(
            s,
            "    {} {} (size {}, signed {}, pointer {})",
            p.c_type, p.name, p.size, p.signed, p.pointer
        );
    }
    if let Some(r) = &f.ret {
        let _ = writeln!(
            s,
            "    {} retval (size {}, signed {})",
            r.c_type, r.size, r.signed
        );
    }
    s
}

#[test]
fn functions_and_raw_tracepoints_of_the_fixture() {
    let btf = Btf::parse(fixture_btf()).unwrap();
    let mut out = String::new();
    for name in ["vfs_read", "do_sys_openat2"] {
        out.push_str(&render(&btf.function(name).unwrap()));
    }
    for name in ["sys_enter", "sched_switch"] {
        out.push_str(&render(&btf.raw_tracepoint(name).unwrap()));
    }
    let _ = writeln!(out, "raw tracepoints: {:?}", btf.raw_tracepoint_names());
    let _ = writeln!(out, "functions: {:?}", btf.names_of(kind::FUNC));
    insta::assert_snapshot!(out);
}

#[test]
fn struct_members_through_pointers_and_nesting() {
    let btf = Btf::parse(fixture_btf()).unwrap();
    let read = btf.function("vfs_read").unwrap();
    let file = btf.pointee_struct(read.params[0].type_id).unwrap();
    let f_pos = btf.member(file, "f_pos").unwrap();
    assert_eq!(
        (f_pos.bit_offset, btf.member_param(&f_pos).c_type.as_str()),
        (152 * 8, "loff_t")
    );
    let f_path = btf.member(file, "f_path").unwrap();
    let dentry = btf.member(f_path.type_id, "dentry").unwrap();
    assert_eq!(dentry.bit_offset, 64);
    assert_eq!(btf.c_type(dentry.type_id), "struct dentry *");
    assert!(btf.member(file, "nope").is_none());
    assert!(btf.pointee_struct(read.params[2].type_id).is_none());
}

#[test]
fn missing_names_and_bad_blobs() {
    let btf = Btf::parse(fixture_btf()).unwrap();
    assert!(btf.function("no_such_function").is_none());
    assert!(btf.raw_tracepoint("no_such_tp").is_none());
    // Before and after the name index exists, lookups agree.
    assert_eq!(btf.find(kind::FUNC, "vfs_read"), {
        let _ = btf.names_of(kind::FUNC);
        btf.find(kind::FUNC, "vfs_read")
    });
    for bad in [
        Vec::new(),
        vec![0u8; 24],
        {
            let mut b = fixture_btf();
            b.truncate(40);
            b
        },
        {
            // An unknown kind in the first record.
            let mut b = BtfBuilder::new();
            b.int("int", 4, true);
            let mut bytes = b.build();
            bytes[24 + 7] = 0x1f;
            bytes
        },
    ] {
        let err = Btf::parse(bad).unwrap_err();
        assert!(err.to_string().starts_with("BTF: "), "{err}");
    }
    // Every prefix of a valid blob is rejected or read without panicking.
    let full = fixture_btf();
    for n in 0..full.len() {
        if let Ok(b) = Btf::parse(full[..n].to_vec()) {
            let _ = b.function("vfs_read");
        }
    }
}

#[test]
fn enumerators_by_name() {
    let btf = Btf::parse(fixture_btf()).unwrap();
    assert_eq!(btf.enum_value("TCP_ESTABLISHED"), Some(1));
    assert_eq!(btf.enum_value("TCP_FIN_WAIT1"), Some(4));
    assert_eq!(btf.enum_value("WEFT_BELOW_ZERO"), Some(-3));
    assert_eq!(btf.enum_value("TCP_NO_SUCH_STATE"), None);
    assert_eq!(btf.enum_value(""), None);
}

#[test]
fn the_running_kernels_vmlinux() {
    let Ok(bytes) = std::fs::read("/sys/kernel/btf/vmlinux") else {
        eprintln!("skipped: /sys/kernel/btf/vmlinux is not readable here");
        return;
    };
    let start = std::time::Instant::now();
    let btf = Btf::parse(bytes).unwrap();
    let read = btf.function("vfs_read").expect("vmlinux has vfs_read");
    let elapsed = start.elapsed();
    let params: Vec<String> = read
        .params
        .iter()
        .map(|p| format!("{} {}", p.c_type, p.name))
        .collect();
    assert_eq!(
        params,
        [
            "struct file * file",
            "char * buf",
            "size_t count",
            "loff_t * pos"
        ]
    );
    assert_eq!(
        read.ret.as_ref().map(|r| r.c_type.as_str()),
        Some("ssize_t")
    );
    // Enumerators of the real kernel (values fixed by its ABI).
    assert_eq!(btf.enum_value("TCP_ESTABLISHED"), Some(1));
    assert_eq!(btf.enum_value("TCP_FIN_WAIT1"), Some(4));
    assert_eq!(btf.enum_value("BPF_MAP_TYPE_RINGBUF"), Some(27));
    let enter = btf
        .raw_tracepoint("sys_enter")
        .expect("btf_trace_sys_enter");
    assert_eq!(enter.params.len(), 2);
    assert_eq!(enter.params[1].name, "id");
    eprintln!(
        "vmlinux BTF: {} types, index + one lookup in {elapsed:?}",
        btf.len()
    );
}
