//! Running weft and the workload from tests: every process gets a timeout;
//! kernel tests pass through the one gate (`testgate`), which skips them
//! with a reason when not root, or fails them when kernel tests are required.

#![allow(dead_code)]

pub mod pty;

use std::io::Read;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub fn weft() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_weft"))
}

/// The workload binary, next to weft in the target directory (built by
/// `cargo test --workspace`; built here when a single package is tested).
pub fn workload() -> PathBuf {
    let path = weft().with_file_name("weft-workload");
    if !path.exists() {
        let status = Command::new(env!("CARGO"))
            .args(["build", "-q", "-p", "workload"])
            .status()
            .expect("cargo build -p workload");
        assert!(status.success(), "building the workload failed");
    }
    path
}

/// The gate of every kernel test (`testgate::require_root!`): returns from
/// the test when not root, or fails it when `CI` or `WEFT_KERNEL_TESTS=1` is
/// set; counted in `target/kernel-tests.log`.
#[macro_export]
macro_rules! require_root {
    () => {
        testgate::require_root!()
    };
}

pub struct Outcome {
    pub status: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    pub timed_out: bool,
}

/// Runs weft with `args`, killing it after `timeout`.
pub fn run_weft(args: &[&str], timeout: Duration) -> Outcome {
    run(Command::new(weft()).args(args), timeout)
}

pub fn run(cmd: &mut Command, timeout: Duration) -> Outcome {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let out_reader = reader(child.stdout.take().unwrap());
    let err_reader = reader(child.stderr.take().unwrap());
    let (status, timed_out) = wait_with_timeout(&mut child, timeout);
    Outcome {
        status,
        stdout: out_reader.join().unwrap(),
        stderr: err_reader.join().unwrap(),
        timed_out,
    }
}

fn reader(mut r: impl Read + Send + 'static) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = r.read_to_end(&mut s);
        String::from_utf8_lossy(&s).into_owned()
    })
}

pub fn wait_with_timeout(child: &mut Child, timeout: Duration) -> (Option<i32>, bool) {
    let start = Instant::now();
    loop {
        if let Ok(Some(status)) = child.try_wait() {
            return (status.code(), false);
        }
        if start.elapsed() > timeout {
            let _ = child.kill();
            let _ = child.wait();
            return (None, true);
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// `weft -q -c '<workload> steps' -e script`, expecting success.
pub fn trace_workload(script: &str, steps: &str, extra: &[&str]) -> Outcome {
    let cmd = format!("{} {steps}", workload().display());
    let mut args = vec!["-q", "-c", cmd.as_str(), "-e", script];
    args.extend_from_slice(extra);
    let out = run_weft(&args, Duration::from_secs(30));
    assert_succeeded(&out);
    out
}

/// Asserts that weft finished in time with status 0, showing its output if not.
pub fn assert_succeeded(out: &Outcome) {
    must_succeed(out, "weft");
}

/// Fails the test unless `what` (weft, perf, a compiler) ended with status 0
/// in time, showing what it printed.
pub fn must_succeed(out: &Outcome, what: &str) {
    assert!(
        !out.timed_out,
        "{what} timed out\nstdout:\n{}\nstderr:\n{}",
        out.stdout, out.stderr
    );
    assert_eq!(
        out.status,
        Some(0),
        "{what} failed\nstdout:\n{}\nstderr:\n{}",
        out.stdout,
        out.stderr
    );
}

/// Asserts that each of `lines` is a whole line of `stdout`.
pub fn expect_lines(stdout: &str, stderr: &str, lines: &[&str]) {
    for line in lines {
        assert!(
            stdout.lines().any(|l| l == *line),
            "expected `{line}` in:\n{stdout}\nstderr:\n{stderr}"
        );
    }
}

/// A unique scratch path for this test process.
pub fn scratch(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("weft-test-{}-{name}", std::process::id()))
}

/// Parses, checks and compiles `src` for `kernel`, failing the test on any
/// diagnostic (tests that load programs without running weft).
pub fn compile(src: &str, kernel: &dyn ktypes::KernelInfo) -> codegen::Compiled {
    let mut map = source::SourceMap::new();
    let id = map.add("script.bt", src);
    let (program, diags) = syntax::parse_with(map.file(id), &|n| sema::predefined_macro(kernel, n));
    assert!(
        !diags.has_errors(),
        "{}",
        source::render_all(diags.iter(), &map)
    );
    let (typed, diags) = sema::check(&program, kernel, &sema::CheckOptions::default());
    assert!(
        !diags.has_errors(),
        "{}",
        source::render_all(diags.iter(), &map)
    );
    codegen::compile(&program, &typed).expect("compiles")
}

/// The running kernel, but saying it has kprobes and no BPF trampolines.
pub struct KprobesOnly(pub runtime::SysKernelInfo);

impl ktypes::KernelInfo for KprobesOnly {
    fn tracepoint_format(
        &self,
        c: &str,
        n: &str,
    ) -> Result<ktypes::TracepointFormat, ktypes::KernelInfoError> {
        self.0.tracepoint_format(c, n)
    }
    fn tracepoints(&self) -> Result<Vec<(String, String)>, ktypes::KernelInfoError> {
        self.0.tracepoints()
    }
    fn read_file(&self, path: &str) -> Result<Vec<u8>, ktypes::KernelInfoError> {
        self.0.read_file(path)
    }
    fn executable_search_path(&self) -> Vec<String> {
        self.0.executable_search_path()
    }
    fn ifunc_target(&self, path: &str, symbol: &str) -> Result<u64, ktypes::KernelInfoError> {
        self.0.ifunc_target(path, symbol)
    }
    fn btf(&self) -> Result<&ktypes::Btf, ktypes::KernelInfoError> {
        self.0.btf()
    }
    fn kernel_functions(&self) -> Result<Vec<ktypes::KernelFunction>, ktypes::KernelInfoError> {
        self.0.kernel_functions()
    }
    fn tracing_features(&self) -> Option<ktypes::TracingFeatures> {
        Some(ktypes::TracingFeatures::from_flags(
            self.0.btf().is_ok(),
            false,
            true,
        ))
    }
}

/// The build id of the workload binary in hex, and the offset in its file
/// of `weft_workload_marker`'s first instruction.
pub fn marker_in_file() -> (String, u64) {
    let data = std::fs::read(workload()).expect("the workload");
    let bin = uelf::Binary::parse(&data).expect("an ELF file");
    let id = bin.build_id.expect("a build id");
    let sym = bin
        .functions
        .iter()
        .find(|f| f.name == "weft_workload_marker")
        .expect("the marker function");
    let seg = bin
        .segments
        .iter()
        .find(|s| (s.vaddr..s.vaddr + s.memsz).contains(&sym.address))
        .expect("its segment");
    let hex: String = id.iter().map(|b| format!("{b:02x}")).collect();
    (hex, sym.address - seg.vaddr + seg.offset)
}

/// The stream records of a `-f json` run's output, in order (each record's
/// `data`).
pub fn stream_records(stdout: &str) -> Vec<serde_json::Value> {
    stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v["type"] == "stream")
        .map(|v| v["data"].clone())
        .collect()
}

/// The stage called `name` of a stream record in JSON.
pub fn stage<'a>(record: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    record["stages"]
        .as_array()
        .and_then(|s| s.iter().find(|s| s["name"] == name))
        .unwrap_or_else(|| panic!("no stage {name}: {record}"))
}
