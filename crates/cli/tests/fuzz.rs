//! Bad input never crashes: every script weft's tests and bpftrace's
//! shipped tools hold, and random mutations of them (tokens deleted,
//! swapped, duplicated and inserted, bytes flipped), go through the whole front end
//! and code generation (parse, `#define`s and metric directives, checks,
//! `-d ast`/`-d types` printing, lowering, the ELF writer, disassembly)
//! without root. Nothing may panic or hang, no case may take more than
//! 100 ms of CPU (release build; ten times that in a debug build, which is
//! ten times slower), and every diagnostic's span must lie inside its
//! source.
//!
//! The number of cases is bounded for CI; `WEFT_FUZZ_CASES=N` mutates each
//! seed script N times instead (default 6), and `WEFT_FUZZ_SEED=S` picks
//! another random sequence. A failing case is written to
//! `target/fuzz-failures/` to be replayed.

use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ktypes::{
    Btf, FixtureKernel, KernelFunction, KernelInfo, KernelInfoError, TracepointFormat,
    TracingFeatures,
};
use source::SourceMap;

/// The workspace root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A kernel for the fuzz: the fixture's tracepoints, and for any other a
/// format with the fields scripts commonly read; the machine's BTF when
/// readable (it is, without root); the kernel functions the seed scripts
/// name (so their kprobes resolve without a list of 80,000); both fentry
/// and kprobes; the machine's files (for uprobes, `kaddr()`), each read
/// once for all cases so that a case's time is weft's own work.
struct FuzzKernel {
    fixture: FixtureKernel,
    functions: Vec<KernelFunction>,
    files: Mutex<std::collections::HashMap<String, Result<Vec<u8>, String>>>,
}

const COMMON: &str = "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n";

/// Fields scripts read from tracepoints, at offsets past the common ones.
const FIELDS: &[(&str, u32, bool)] = &[
    ("int __syscall_nr", 4, true),
    ("const char * filename", 8, false),
    ("unsigned int fd", 8, false),
    ("long ret", 8, true),
    ("size_t count", 8, false),
    ("char * buf", 8, false),
    ("pid_t pid", 4, true),
    ("char comm[16]", 16, false),
    ("dev_t dev", 4, false),
    ("sector_t sector", 8, false),
    ("unsigned int nr_sector", 4, false),
    ("unsigned int bytes", 4, false),
    ("char rwbs[10]", 10, false),
    ("int flags", 4, true),
    ("umode_t mode", 2, false),
    ("char prev_comm[16]", 16, false),
    ("pid_t prev_pid", 4, true),
    ("long prev_state", 8, true),
    ("char next_comm[16]", 16, false),
    ("pid_t next_pid", 4, true),
    ("const void * skaddr", 8, false),
    ("int oldstate", 4, true),
    ("int newstate", 4, true),
    ("__u16 sport", 2, false),
    ("__u16 dport", 2, false),
    ("__u16 family", 2, false),
    ("__u8 saddr[4]", 4, false),
    ("__u8 daddr[4]", 4, false),
    ("int sig", 4, true),
    ("unsigned long args[6]", 48, false),
    ("long id", 8, true),
    ("const char *const * argv", 8, false),
    ("unsigned long size", 8, false),
    ("int error", 4, true),
];

fn synthetic_format(name: &str) -> String {
    let mut text = format!("name: {name}\nID: 1\nformat:\n{COMMON}");
    let mut offset = 8u32;
    for (decl, size, signed) in FIELDS {
        let align = (*size).clamp(1, 8);
        offset = offset.next_multiple_of(if align.is_power_of_two() { align } else { 1 });
        text.push_str(&format!(
            "\tfield:{decl};\toffset:{offset};\tsize:{size};\tsigned:{};\n",
            u8::from(*signed)
        ));
        offset += size;
    }
    text.push_str("\nprint fmt: \"\"\n");
    text
}

impl KernelInfo for FuzzKernel {
    fn tracepoint_format(
        &self,
        category: &str,
        name: &str,
    ) -> Result<TracepointFormat, KernelInfoError> {
        self.fixture
            .tracepoint_format(category, name)
            .or_else(|_| ktypes::parse_format(&synthetic_format(name)))
    }

    fn tracepoints(&self) -> Result<Vec<(String, String)>, KernelInfoError> {
        self.fixture.tracepoints()
    }

    fn read_file(&self, path: &str) -> Result<Vec<u8>, KernelInfoError> {
        let mut files = self.files.lock().unwrap();
        files
            .entry(path.to_string())
            .or_insert_with(|| std::fs::read(path).map_err(|e| format!("{path}: {e}")))
            .clone()
            .map_err(KernelInfoError::NotFound)
    }

    fn executable_search_path(&self) -> Vec<String> {
        vec!["/usr/bin".into(), "/bin".into(), "/usr/sbin".into()]
    }

    fn btf(&self) -> Result<&Btf, KernelInfoError> {
        runtime::vmlinux_btf().or_else(|_| self.fixture.btf())
    }

    fn tracing_features(&self) -> Option<TracingFeatures> {
        Some(TracingFeatures::from_flags(true, true, true))
    }

    fn kernel_functions(&self) -> Result<Vec<KernelFunction>, KernelInfoError> {
        Ok(self.functions.clone())
    }

    fn cgroup_id(&self, path: &str) -> Result<u64, KernelInfoError> {
        Err(KernelInfoError::NotFound(format!("{path}: no such cgroup")))
    }
}

/// The scripts to start from: bpftrace's tools, the repository's `.bt`
/// files, and the scripts written inside the tests' sources.
fn seeds() -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = REGRESSIONS
        .iter()
        .map(|(what, text)| (format!("regression: {what}"), text.to_string()))
        .collect();
    let mut bt_files = Vec::new();
    if let Ok(dir) = std::fs::read_dir("/usr/sbin") {
        bt_files.extend(dir.flatten().map(|e| e.path()));
    }
    let mut stack = vec![root().join("examples"), root().join("crates")];
    let mut rust_tests = Vec::new();
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "bt") {
                bt_files.push(p);
            } else if p.extension().is_some_and(|x| x == "rs")
                && p.components().any(|c| c.as_os_str() == "tests")
            {
                rust_tests.push(p);
            }
        }
    }
    bt_files.sort();
    for p in bt_files
        .iter()
        .filter(|p| p.extension().is_some_and(|x| x == "bt"))
    {
        if let Ok(text) = std::fs::read_to_string(p) {
            out.push((p.display().to_string(), text));
        }
    }
    rust_tests.sort();
    for p in rust_tests {
        let Ok(text) = std::fs::read_to_string(&p) else {
            continue;
        };
        for (i, script) in embedded_scripts(&text).into_iter().enumerate() {
            out.push((format!("{}#{i}", p.display()), script));
        }
    }
    out
}

/// The raw strings (`r#"..."#`) of a Rust file that look like scripts.
fn embedded_scripts(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("r#\"") {
        let body = &rest[start + 3..];
        let Some(end) = body.find("\"#") else {
            break;
        };
        let s = &body[..end];
        if s.contains('{') && (s.contains(':') || s.contains("BEGIN")) {
            out.push(s.to_string());
        }
        rest = &body[end + 2..];
    }
    out
}

/// Kernel function names the seeds probe (`kprobe:NAME`, `kretprobe:NAME`,
/// `fentry:NAME`, ...), plus the fixture's.
fn functions_named(seeds: &[(String, String)]) -> Vec<KernelFunction> {
    let mut names = std::collections::BTreeSet::new();
    for (_, text) in seeds {
        for prefix in [
            "kprobe:",
            "kretprobe:",
            "fentry:",
            "fexit:",
            "kfunc:",
            "kretfunc:",
        ] {
            for (i, _) in text.match_indices(prefix) {
                let name: String = text[i + prefix.len()..]
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                if !name.is_empty() {
                    names.insert(name);
                }
            }
        }
    }
    for n in ["vfs_read", "vfs_write", "do_sys_openat2", "ksys_read"] {
        names.insert(n.to_string());
    }
    names
        .into_iter()
        .map(|name| KernelFunction { name, module: None })
        .collect()
}

/// Cases the fuzz found, each fixed; run first, every time.
const REGRESSIONS: &[(&str, &str)] = &[(
    // A NUL in a probe's name reached the ELF writer, whose string table
    // panicked on it (`assertion failed: !string.contains(&0)`).
    "a NUL in an attach point",
    "tracepoint:syscalls:\0sys_enter_getppid /pid == cpid/ { @c[\"ab\"] = count(); }",
)];

/// xorshift64*: small, fast, reproducible.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Tokens as far as mutation cares: words, numbers, string literals,
/// runs of spaces, and single other characters.
fn tokens(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let start = i;
        let c = bytes[i];
        if c.is_ascii_alphanumeric() || c == b'_' || c == b'$' || c == b'@' {
            i += 1;
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                i += 1;
            }
        } else if c == b'"' {
            i += 1;
            while i < bytes.len() && bytes[i] != b'"' {
                i += if bytes[i] == b'\\' { 2 } else { 1 };
            }
            i = (i + 1).min(bytes.len());
        } else if c.is_ascii_whitespace() {
            while i < bytes.len() && bytes[i].is_ascii_whitespace() {
                i += 1;
            }
        } else {
            i += 1;
            while i < bytes.len() && !text.is_char_boundary(i) {
                i += 1;
            }
        }
        out.push(&text[start..i]);
    }
    out
}

/// Tokens inserted at random: the language's keywords and punctuation,
/// and values at the edges of what the lexer and checker take.
const POOL: &[&str] = &[
    "{",
    "}",
    "(",
    ")",
    "[",
    "]",
    "/",
    ";",
    ",",
    ":",
    "->",
    ".",
    "=",
    "==",
    "+=",
    "++",
    "!",
    "?",
    "&&",
    "||",
    "<<",
    ">>",
    "\"",
    "$x",
    "$1",
    "$#",
    "@",
    "@m[",
    "@m",
    "args",
    "args->",
    "stream",
    "begin",
    "stage",
    "end",
    "by",
    "link",
    "as",
    "keep last",
    "timeout",
    "max",
    "incomplete",
    "sample",
    "if",
    "else",
    "while",
    "unroll",
    "return",
    "BEGIN",
    "END",
    "tracepoint:syscalls:sys_enter_read",
    "kprobe:vfs_read",
    "uprobe:/bin/sh:main",
    "interval:s:1",
    "profile:hz:99",
    "*",
    "0",
    "-1",
    "18446744073709551615",
    "-9223372036854775808",
    "0x",
    "1e99",
    "1s",
    "'",
    "\\",
    "#include <x.h>\n",
    "#define A (A)\n",
    "#if\n",
    "struct s { int a; };",
    "(struct task_struct *)",
    "sizeof(",
    "str(",
    "printf(\"%d %s\\n\", ",
    "count()",
    "hist(",
    "lhist(",
    "kstack",
    "ustack(",
    "cgroup_path(",
    "signal(",
    "system(",
    "\u{7f}",
    "\0",
];

/// `text` with one to five random edits.
fn mutate(text: &str, rng: &mut Rng) -> String {
    let mut bytes = text.as_bytes().to_vec();
    for _ in 0..1 + rng.below(5) {
        let current = String::from_utf8_lossy(&bytes).into_owned();
        let toks = tokens(&current);
        if toks.is_empty() {
            break;
        }
        let i = rng.below(toks.len());
        let mut t: Vec<&str> = toks.clone();
        match rng.below(5) {
            0 => {
                t.remove(i);
            }
            3 => {
                t.insert(i, POOL[rng.below(POOL.len())]);
            }
            1 => {
                let j = rng.below(t.len());
                t.swap(i, j);
            }
            2 => {
                t.insert(i, toks[i]);
            }
            _ => {
                if !bytes.is_empty() {
                    let at = rng.below(bytes.len());
                    bytes[at] ^= 1 << rng.below(8);
                }
                continue;
            }
        }
        bytes = t.concat().into_bytes();
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

/// What went wrong with one case.
enum Failure {
    Panic(String),
    SpanOutside(String),
    Slow(Duration),
}

/// CPU time of the calling thread.
fn thread_cpu() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid timespec to fill.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// The most CPU one case may take.
fn budget() -> Duration {
    if cfg!(debug_assertions) {
        Duration::from_millis(1000)
    } else {
        Duration::from_millis(100)
    }
}

/// How far a case went.
#[derive(Clone, Copy, Default)]
struct Reached {
    checked: bool,
    compiled: bool,
}

/// Runs the whole front end and code generation on one script.
fn run_case(kernel: &FuzzKernel, text: &str) -> Result<(Duration, Reached), Failure> {
    let started = thread_cpu();
    let outcome = std::panic::catch_unwind(AssertUnwindSafe(|| compile_all(kernel, text)));
    let spent = thread_cpu().saturating_sub(started);
    match outcome {
        Err(p) => Err(Failure::Panic(
            p.downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default(),
        )),
        Ok(Err(why)) => Err(Failure::SpanOutside(why)),
        Ok(Ok(_)) if spent > budget() => Err(Failure::Slow(spent)),
        Ok(Ok(reached)) => Ok((spent, reached)),
    }
}

/// The cli's pipeline, stage by stage, going as far as the script allows;
/// `Err` names a diagnostic whose span is outside the source.
fn compile_all(kernel: &FuzzKernel, text: &str) -> Result<Reached, String> {
    let mut reached = Reached::default();
    let mut map = SourceMap::new();
    // A first file, so the script's global offsets do not start at 0.
    map.add("before.bt", "BEGIN {}\n");
    let id = map.add("script.bt", text);
    let file = map.file(id);
    let (lo, hi) = (file.base, file.base + file.text.len() as u32);
    let mut all = source::Diagnostics::new();
    let predefined = |name: &str| sema::predefined_macro(kernel, name);
    let (program, diags) = syntax::parse_with(file, &predefined);
    all.extend(diags.iter().cloned());
    let (directives, ddiags) = sema::metrics::parse_directives(&file.text, file.base);
    all.extend(ddiags.iter().cloned());
    let _ = syntax::print_ast(&program);
    if !all.has_errors() {
        let opts = sema::CheckOptions {
            positional: vec!["1".into(), "x".into()],
            ..Default::default()
        };
        let (typed, sdiags) = sema::check(&program, kernel, &opts);
        all.extend(sdiags.iter().cloned());
        let _ = sema::print_types(&typed);
        if !all.has_errors() {
            reached.checked = true;
            let (_, ediags) = sema::metrics::exports(&typed, &directives);
            all.extend(ediags.iter().cloned());
            match codegen::compile_with(&program, &typed, &codegen::Options::default()) {
                Ok(compiled) => {
                    reached.compiled = true;
                    for (_, f) in &compiled.functions {
                        let _ = codegen::disasm(f);
                    }
                }
                Err(d) => all.push(d),
            }
        }
    }
    for d in all.iter() {
        for label in &d.labels {
            let s = label.span;
            if s != source::Span::DUMMY && (s.start < lo || s.end > hi || s.start > s.end) {
                return Err(format!(
                    "{}: span {}..{} outside the source {lo}..{hi}",
                    d.message, s.start, s.end
                ));
            }
        }
    }
    // Rendering must not panic either.
    let _ = source::render_all(all.iter(), &map);
    Ok(reached)
}

#[test]
fn bad_input_never_crashes_hangs_or_strays() {
    let seeds = Arc::new(seeds());
    let seed_count = seeds.len();
    assert!(seed_count >= 20, "only {seed_count} seed scripts");
    let per_seed: usize = std::env::var("WEFT_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(6);
    let seed: u64 = std::env::var("WEFT_FUZZ_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0x5e_ed0f_3eef);
    let kernel = Arc::new(FuzzKernel {
        fixture: FixtureKernel::typical(),
        functions: functions_named(&seeds),
        files: Mutex::default(),
    });
    // The kernel's symbol table is read once, before any case is timed.
    let _ = kernel.read_file("/proc/kallsyms");
    let _ = kernel.btf();
    // The current case, for a hang report; cases done, for progress.
    let current = Arc::new(Mutex::new(String::new()));
    let done = Arc::new(AtomicUsize::new(0));
    let worker = {
        let (kernel, current, done) =
            (Arc::clone(&kernel), Arc::clone(&current), Arc::clone(&done));
        let seeds = Arc::clone(&seeds);
        std::thread::spawn(move || {
            // Panics are caught per case; keep their messages off the output.
            std::panic::set_hook(Box::new(|_| {}));
            let mut rng = Rng(seed | 1);
            let mut failures = Vec::new();
            let mut slowest = (Duration::ZERO, String::new());
            let mut cases = 0usize;
            let (mut checked, mut compiled) = (0usize, 0usize);
            for (name, text) in seeds.iter() {
                let mut variants = vec![text.clone()];
                variants.extend((0..per_seed).map(|_| mutate(text, &mut rng)));
                for (k, variant) in variants.iter().enumerate() {
                    *current.lock().unwrap() = variant.clone();
                    match run_case(&kernel, variant) {
                        Ok((spent, reached)) => {
                            checked += usize::from(reached.checked);
                            compiled += usize::from(reached.compiled);
                            if spent > slowest.0 {
                                slowest = (spent, format!("{name} (variant {k})"));
                            }
                        }
                        Err(f) => {
                            failures.push((format!("{name} (variant {k})"), variant.clone(), f))
                        }
                    }
                    cases += 1;
                    done.fetch_add(1, Ordering::SeqCst);
                }
            }
            let _ = std::panic::take_hook();
            (cases, failures, slowest, checked, compiled)
        })
    };
    // A case that takes this long is a hang.
    let mut last = (0, Instant::now());
    while !worker.is_finished() {
        std::thread::sleep(Duration::from_millis(200));
        let n = done.load(Ordering::SeqCst);
        if n != last.0 {
            last = (n, Instant::now());
        }
        assert!(
            last.1.elapsed() < Duration::from_secs(60),
            "a case hangs (60 s without progress):\n{}",
            current.lock().unwrap()
        );
    }
    let (cases, failures, slowest, checked, compiled) = worker.join().unwrap();
    eprintln!(
        "fuzz: {cases} cases from {seed_count} seeds (WEFT_FUZZ_CASES={per_seed}, WEFT_FUZZ_SEED={seed}): {checked} passed the checker, {compiled} compiled; slowest {:?} ({})",
        slowest.0, slowest.1
    );
    if failures.is_empty() {
        return;
    }
    let dir = root().join("target/fuzz-failures");
    let _ = std::fs::create_dir_all(&dir);
    let mut report = String::new();
    for (i, (name, text, f)) in failures.iter().enumerate() {
        let path = dir.join(format!("case-{i}.bt"));
        let _ = std::fs::write(&path, text);
        let what = match f {
            Failure::Panic(m) => format!("panicked: {m}"),
            Failure::SpanOutside(m) => format!("diagnostic outside its source: {m}"),
            Failure::Slow(d) => format!("took {d:?} of CPU (budget {:?})", budget()),
        };
        report.push_str(&format!("{name}: {what} ({})\n", path.display()));
    }
    panic!("{} of {cases} cases failed:\n{report}", failures.len());
}
