//! uprobe, uretprobe and usdt attach points against a tiny ELF made in
//! memory: what each resolves to (file offsets, semaphores, the context),
//! and the diagnostic for each mistake.

use ktypes::FixtureKernel;
use sema::{CheckOptions, check};
use source::{SourceMap, render_all};
use uelf::testing::{LOAD_VADDR, Probe, TEXT_OFFSET, tiny_elf, with_code};

fn kernel() -> FixtureKernel {
    let probes = [
        Probe {
            provider: "weft",
            name: "tick",
            args: "-4@%edi 8@%rsi",
            semaphore: LOAD_VADDR + 0x10,
        },
        Probe {
            provider: "weft",
            name: "broken",
            args: "8@label(%rip)",
            semaphore: 0,
        },
    ];
    let elf = tiny_elf(&["marker", "answer", "read_line"], &probes);
    let cache = {
        // An ld.so.cache naming one library, in glibc's 1.1 format.
        let mut c = b"glibc-ld.so.cache1.1".to_vec();
        c.extend_from_slice(&1u32.to_le_bytes());
        c.resize(48, 0);
        let strings = 48 + 24;
        c.extend_from_slice(&0x303i32.to_le_bytes());
        c.extend_from_slice(&(strings as u32).to_le_bytes());
        c.extend_from_slice(&(strings as u32 + 11).to_le_bytes());
        c.resize(strings, 0);
        c.extend_from_slice(b"libapp.so\0\0/opt/lib/libapp.so.1\0");
        c
    };
    FixtureKernel::typical()
        .with_file("/opt/app", elf.clone())
        .with_file("/opt/lib/libapp.so.1", elf)
        .with_file("/etc/ld.so.cache", cache)
        // Two indirect functions; this machine's loader resolves `fast_len`
        // to `plain` and cannot resolve `slow_len`.
        .with_file(
            "/opt/lib/libifunc.so",
            tiny_elf(&["plain", "ifunc:fast_len", "ifunc:slow_len"], &[]),
        )
        .with_ifunc("/opt/lib/libifunc.so", "fast_len", LOAD_VADDR + TEXT_OFFSET)
        .with_file("/opt/code", code())
        // `_init`'s symbol has size 0, as in most executables.
        .with_file("/opt/init", tiny_elf(&["nosize:_init", "main"], &[]))
        // `pick` lands on `pick_fast`, whose code is `answer`'s.
        .with_file(
            "/opt/lib/libpick.so",
            with_code(tiny_elf(&["pick_fast", "ifunc:pick"], &[]), 0, ANSWER),
        )
        .with_ifunc("/opt/lib/libpick.so", "pick", LOAD_VADDR + TEXT_OFFSET)
}

/// push %rbp; mov %rsp,%rbp; lea (%rdi,%rdi,1),%eax; pop %rbp; ret:
/// instructions begin at +0, +1, +4, +7 and +8.
const ANSWER: &[u8] = &[0x55, 0x48, 0x89, 0xe5, 0x8d, 0x04, 0x3f, 0x5d, 0xc3];

/// A binary with real code: `answer` at 0x11000, and `old_amd` at 0x11010,
/// whose second instruction is 3DNow! (`pfmul`), which weft does not decode.
fn code() -> Vec<u8> {
    let elf = tiny_elf(&["answer", "old_amd"], &[]);
    let elf = with_code(elf, 0, ANSWER);
    with_code(elf, 1, &[0x55, 0x0f, 0x0f, 0xc1, 0xb4, 0x5d, 0xc3])
}

fn run(src: &str, pid: Option<u32>) -> String {
    let opts = CheckOptions {
        pid_filter: pid,
        ..CheckOptions::default()
    };
    run_with(src, &opts, false)
}

/// With `--unsafe`; warnings are shown too.
fn run_unsafe(src: &str) -> String {
    let opts = CheckOptions {
        unsafe_mode: true,
        ..CheckOptions::default()
    };
    run_with(src, &opts, true)
}

fn run_with(src: &str, opts: &CheckOptions, warnings: bool) -> String {
    let mut map = SourceMap::new();
    let id = map.add("script.bt", src);
    let (program, mut diags) = syntax::parse(map.file(id));
    let (typed, sema_diags) = check(&program, &kernel(), opts);
    diags.extend(sema_diags.iter().cloned());
    if diags.has_errors() {
        return render_all(diags.iter(), &map);
    }
    let mut out = if warnings {
        render_all(diags.iter(), &map)
    } else {
        String::new()
    };
    for p in &typed.probes {
        out.push_str(&format!(
            "{} [{}] {:?}\n",
            p.resolved.name, p.resolved.section, p.resolved.attach
        ));
    }
    out
}

macro_rules! case {
    ($name:ident, $src:expr) => {
        case!($name, $src, None);
    };
    ($name:ident, $src:expr, $pid:expr) => {
        #[test]
        fn $name() {
            insta::assert_snapshot!(stringify!($name), run($src, $pid), $src);
        }
    };
}

case!(
    function_offsets_through_program_headers,
    "uprobe:/opt/app:answer { @ = sum(arg0); } uretprobe:/opt/app:answer { @r = sum(retval); }"
);
case!(
    offset_address_and_wildcard,
    "uprobe:/opt/app:marker+4, uprobe:/opt/app:0x11020, u:/opt/app:*er { @[func] = count(); }"
);
case!(
    func_shares_a_map_with_usym,
    "uprobe:/opt/app:answer { @[func] = count(); } uretprobe:/opt/app:answer { @[usym(reg(\"ip\"))] = count(); }"
);
case!(
    library_by_short_name_with_pid,
    "uprobe:libapp:marker { @ = count(); }",
    Some(4242)
);
case!(
    usdt_with_semaphore,
    "usdt:/opt/app:weft:tick { @ = sum(arg0); @s[str(arg1)] = count(); }"
);
case!(
    indirect_function_at_its_implementation,
    "uprobe:/opt/lib/libifunc.so:fast_len, uretprobe:/opt/lib/libifunc.so:fast_len { }"
);
case!(
    wildcard_leaves_out_unresolved_indirect_functions,
    "uprobe:/opt/lib/libifunc.so:*_len { @[func] = count(); }"
);
case!(
    err_indirect_function_unresolved,
    "uprobe:/opt/lib/libifunc.so:slow_len { }"
);
case!(err_unknown_binary, "uprobe:nosuchthing:marker { }");
// A binary without DWARF: `args` and `@FILE:LINE` say what to install or pass.
case!(
    err_args_without_dwarf,
    "uprobe:/opt/app:marker { @ = args.n; }"
);
case!(
    err_args_value_without_dwarf,
    "uprobe:/opt/app:marker { print(args); }"
);
case!(
    err_args_in_uretprobe,
    "uretprobe:/opt/app:marker { @ = args.n; }"
);
case!(
    err_args_inside_a_function,
    "uprobe:/opt/app:marker+4 { @ = args.n; }"
);
case!(
    err_source_line_without_dwarf,
    "uprobe:/opt/app@app.c:12 { }"
);
case!(
    err_source_line_not_a_number,
    "uprobe:/opt/app@app.c:twelve { }"
);
case!(err_unknown_symbol, "uprobe:/opt/app:markr { }");
case!(err_wildcard_matches_nothing, "uprobe:/opt/app:zz* { }");
case!(err_offset_on_uretprobe, "uretprobe:/opt/app:marker+4 { }");
case!(err_address_outside_segments, "uprobe:/opt/app:0x5 { }");
case!(
    err_retval_in_uprobe,
    "uprobe:/opt/app:marker { @ = retval; }"
);
case!(
    err_arg_in_uretprobe,
    "uretprobe:/opt/app:marker { @ = arg0; }"
);
case!(
    err_arg_in_tracepoint,
    "tracepoint:syscalls:sys_enter_read { @ = arg0; }"
);
case!(err_usdt_missing_arg, "usdt:/opt/app:tick { @ = arg2; }");
case!(err_usdt_unknown_probe, "usdt:/opt/app:weft:tock { }");
case!(err_usdt_symbolic_operand, "usdt:/opt/app:weft:broken { }");
case!(err_usdt_bad_attach_point, "usdt:/opt/app { }");
case!(
    err_reg_outside_register_probes,
    "tracepoint:syscalls:sys_enter_read { @ = reg(\"ip\"); }"
);
case!(
    err_reg_unknown_register,
    "uprobe:/opt/app:marker { @ = reg(\"rip\"); }"
);

// Only where an instruction begins: FUNCTION+OFFSET and addresses are
// checked by decoding the function from its entry.
case!(
    offsets_and_addresses_where_instructions_begin,
    "uprobe:/opt/code:answer+1, uprobe:/opt/code:answer+7, uprobe:/opt/code:0x11004, \
     uprobe:/opt/code:0x11010, uretprobe:/opt/code:0x11000 { }"
);
case!(
    err_offset_inside_an_instruction,
    "uprobe:/opt/code:answer+2 { }"
);
case!(
    err_address_inside_an_instruction,
    "uprobe:/opt/code:0x11005 { }"
);
case!(
    err_offset_inside_an_indirect_functions_implementation,
    "uprobe:/opt/lib/libpick.so:pick+5 { }"
);
case!(
    err_offset_past_undecodable_bytes,
    "uprobe:/opt/code:old_amd+5 { }"
);
case!(
    err_offset_outside_the_function,
    "uprobe:/opt/code:answer+16 { }"
);
case!(err_address_in_no_function, "uprobe:/opt/code:0x10040 { }");
case!(
    err_uretprobe_address_inside_a_function,
    "uretprobe:/opt/code:0x11004 { }"
);

#[test]
fn unsafe_places_unchecked_uprobes_with_a_warning() {
    let src = "uprobe:/opt/code:answer+2, uprobe:/opt/code:old_amd+5, uprobe:/opt/code:0x10040 { }";
    insta::assert_snapshot!("unsafe_places_unchecked_uprobes", run_unsafe(src), src);
}

/// bpftrace's words for a function of unknown size, refused without a place
/// in the first line (as bpftrace reports it) and placed by --unsafe.
#[test]
fn a_symbol_of_size_0_is_refused_unless_unsafe() {
    let src = "uprobe:/opt/init:_init { }";
    insta::assert_snapshot!("err_symbol_of_size_0", run(src, None), src);
    insta::assert_snapshot!("unsafe_symbol_of_size_0", run_unsafe(src), src);
}

#[test]
fn unsafe_does_not_move_an_offset_past_the_function() {
    let src = "uprobe:/opt/code:answer+16 { }";
    insta::assert_snapshot!("unsafe_keeps_the_function_bounds", run_unsafe(src), src);
}

/// Counts the reads of each file: a library many uprobes name is read and
/// parsed once per check (5 MB libcrypto, 18 attach points in sslsnoop.bt:
/// 10 ms each before).
struct CountingKernel {
    inner: FixtureKernel,
    reads: std::cell::RefCell<std::collections::BTreeMap<String, usize>>,
}

impl ktypes::KernelInfo for CountingKernel {
    fn tracepoint_format(
        &self,
        c: &str,
        n: &str,
    ) -> Result<ktypes::TracepointFormat, ktypes::KernelInfoError> {
        self.inner.tracepoint_format(c, n)
    }
    fn tracepoints(&self) -> Result<Vec<(String, String)>, ktypes::KernelInfoError> {
        self.inner.tracepoints()
    }
    fn read_file(&self, path: &str) -> Result<Vec<u8>, ktypes::KernelInfoError> {
        *self.reads.borrow_mut().entry(path.to_string()).or_default() += 1;
        self.inner.read_file(path)
    }
}

#[test]
fn a_binary_named_by_many_probes_is_read_once() {
    let kernel = CountingKernel {
        inner: kernel(),
        reads: Default::default(),
    };
    let mut map = SourceMap::new();
    let id = map.add(
        "script.bt",
        "uprobe:/opt/app:marker, uprobe:/opt/app:answer, uretprobe:/opt/app:marker { @[probe] = count(); } uprobe:/opt/app:read_line { @x = 1; }",
    );
    let (program, diags) = syntax::parse(map.file(id));
    assert!(!diags.has_errors());
    let (typed, diags) = check(&program, &kernel, &CheckOptions::default());
    assert!(!diags.has_errors(), "{}", render_all(diags.iter(), &map));
    assert_eq!(typed.probes.len(), 4);
    assert_eq!(kernel.reads.borrow().get("/opt/app"), Some(&1));
}
