//! bpftrace's shipped tools (`/usr/sbin/*.bt` from Debian's bpftrace
//! package), run for real, and the defects and gaps they found (issue 16):
//!
//! - every tool either loads (compiles and passes this kernel's verifier) or
//!   fails with a diagnostic that names what this kernel lacks;
//! - every tool that can attach here runs against a workload step that makes
//!   it fire: bpftrace's header and columns, and the workload's own rows;
//! - `#ifndef BPFTRACE_HAVE_BTF` groups, `kaddr()` and unary `*`, and C
//!   struct definitions, each on memory whose contents the test knows.
//!
//! The scripts are read from the installed package, never copied here. When
//! the package is missing a test says it skipped; in CI (`CI` or
//! `WEFT_KERNEL_TESTS=1` set, where `scripts/setup.sh` installs it) a
//! missing package fails the test instead (`testgate`). `WEFT_TOOL=NAME`
//! runs one tool's case.

mod common;

use std::time::Duration;

use common::KprobesOnly;
use ktypes::KernelInfo;
use runtime::{LoadOptions, Session, SysKernelInfo};

/// Whether the running kernel has BTF.
fn has_btf() -> bool {
    SysKernelInfo::new().btf().is_ok()
}

/// The text of the shipped tool `name` (`execsnoop`), or `None` when the
/// package is missing (the gate says so, and fails the test in CI, where
/// `scripts/setup.sh` installs it).
fn shipped_tool(name: &str) -> Option<String> {
    let path = format!("/usr/sbin/{name}.bt");
    std::fs::read_to_string(&path).ok()
}

/// Returns from the calling test unless bpftrace's tools are installed.
macro_rules! require_tools {
    () => {
        testgate::require!(
            shipped_tool("execsnoop").is_some(),
            "bpftrace's tools (/usr/sbin/*.bt) are not installed: apt-get install bpftrace"
        );
    };
}

/// Defect 2: a struct inside a false `#ifndef BPFTRACE_HAVE_BTF` group is
/// skipped, as bpftrace's preprocessor skips it; the output is bpftrace's,
/// byte for byte.
#[test]
fn a_struct_in_a_false_ifndef_group_is_skipped() {
    require_root!();
    let path = common::scratch("ifn.bt");
    std::fs::write(
        &path,
        "#ifndef BPFTRACE_HAVE_BTF\nstruct foo { int a; };\n#endif\nBEGIN { printf(\"ok\\n\"); exit(); }\n",
    )
    .unwrap();
    let out = common::run_weft(&[path.to_str().unwrap()], Duration::from_secs(20));
    let _ = std::fs::remove_file(&path);
    assert_eq!(out.status, Some(0), "{}", out.stderr);
    assert_eq!(out.stdout, "ok\n\n\n");
}

/// What compiling a shipped tool gives on this kernel (6.18, with BTF;
/// kprobes assumed present so that kprobe tools are checked too).
enum Outcome {
    /// Compiles as written and every program passes this kernel's verifier.
    Loads,
    /// Fails with this diagnostic code and a message naming what is missing.
    Fails(&'static str, &'static str),
}

/// Every tool of Debian's bpftrace 0.17 package, and what it gives here.
const SHIPPED_TOOLS: &[(&str, Outcome)] = &[
    ("bashreadline", Outcome::Loads),
    // The list's newer names exist (`blk_account_io_start`); `__blk_*` warn.
    ("biolatency", Outcome::Loads),
    ("biosnoop", Outcome::Loads),
    ("biostacks", Outcome::Loads),
    ("bitesize", Outcome::Loads),
    ("capable", Outcome::Loads),
    ("cpuwalk", Outcome::Loads),
    ("dcsnoop", Outcome::Loads),
    ("execsnoop", Outcome::Loads),
    ("gethostlatency", Outcome::Loads),
    ("killsnoop", Outcome::Loads),
    // avenrun is a data symbol: kallsyms lists it only with CONFIG_KALLSYMS_ALL.
    (
        "loads",
        Outcome::Fails("E0474", "Failed to resolve kernel symbol: avenrun"),
    ),
    // 6.18 has no md_flush_request (bpftrace cannot attach it either).
    (
        "mdflush",
        Outcome::Fails("E0450", "No matches for kprobe md_flush_request."),
    ),
    ("naptime", Outcome::Loads),
    ("oomkill", Outcome::Loads),
    ("opensnoop", Outcome::Loads),
    ("pidpersec", Outcome::Loads),
    ("runqlat", Outcome::Loads),
    // 6.18's struct cfs_rq has no nr_running (bpftrace fails the same way).
    (
        "runqlen",
        Outcome::Fails("E0352", "`struct cfs_rq` has no member `nr_running`"),
    ),
    ("setuids", Outcome::Loads),
    ("ssllatency", Outcome::Loads),
    ("sslsnoop", Outcome::Loads),
    ("statsnoop", Outcome::Loads),
    // 6.18 has no swap_readpage (it became swap_read_folio).
    (
        "swapin",
        Outcome::Fails("E0450", "No matches for kprobe swap_readpage."),
    ),
    ("syncsnoop", Outcome::Loads),
    ("syscount", Outcome::Loads),
    ("tcpaccept", Outcome::Loads),
    ("tcpconnect", Outcome::Loads),
    ("tcpdrop", Outcome::Loads),
    ("tcplife", Outcome::Loads),
    ("tcpretrans", Outcome::Loads),
    ("tcpsynbl", Outcome::Loads),
    ("threadsnoop", Outcome::Loads),
    ("undump", Outcome::Loads),
    ("vfscount", Outcome::Loads),
    ("vfsstat", Outcome::Loads),
    ("writeback", Outcome::Loads),
    ("xfsdist", Outcome::Loads),
];

/// Parses and checks `src` for `kernel`: the compiled program, or the
/// rendered errors.
fn compile_tool(src: &str, kernel: &dyn KernelInfo) -> Result<codegen::Compiled, String> {
    let mut map = source::SourceMap::new();
    let id = map.add("tool.bt", src);
    let (program, mut diags) =
        syntax::parse_with(map.file(id), &|n| sema::predefined_macro(kernel, n));
    if !diags.has_errors() {
        let (typed, sema_diags) = sema::check(&program, kernel, &sema::CheckOptions::default());
        diags.extend(sema_diags.iter().cloned());
        if !diags.has_errors() {
            return codegen::compile(&program, &typed).map_err(|d| d.message);
        }
    }
    let errors: Vec<_> = diags.iter().filter(|d| d.is_error()).cloned().collect();
    Err(source::render_all(errors.iter(), &map))
}

/// Every tool bpftrace ships (`/usr/sbin/*.bt` of Debian's package) either
/// compiles as written and passes this kernel's verifier (kprobe tools
/// load here; only attaching them fails), or fails with a diagnostic that
/// names what this kernel lacks.
#[test]
fn every_shipped_tool_loads_or_names_what_is_missing() {
    require_root!();
    testgate::require!(has_btf(), "this kernel has no BTF, which these tools need");
    require_tools!();
    let kernel = KprobesOnly(SysKernelInfo::new());
    let installed: Vec<String> = std::fs::read_dir("/usr/sbin")
        .unwrap()
        .filter_map(|e| {
            e.ok()?
                .file_name()
                .to_str()?
                .strip_suffix(".bt")
                .map(str::to_string)
        })
        .collect();
    let mut failures = Vec::new();
    for name in &installed {
        if !SHIPPED_TOOLS.iter().any(|(t, _)| t == name) {
            failures.push(format!("{name}.bt is installed but not in SHIPPED_TOOLS"));
        }
    }
    for (tool, outcome) in SHIPPED_TOOLS {
        let Some(src) = shipped_tool(tool) else {
            failures.push(format!("/usr/sbin/{tool}.bt is missing"));
            continue;
        };
        match (compile_tool(&src, &kernel), outcome) {
            (Ok(compiled), Outcome::Loads) => {
                if let Err(e) =
                    Session::load(&compiled.elf, &compiled.manifest, &LoadOptions::default())
                {
                    failures.push(format!("{tool}: the verifier must accept it: {e}"));
                }
            }
            (Err(errors), Outcome::Fails(code, says)) => {
                if !errors.contains(&format!("CODE: {code}")) || !errors.contains(says) {
                    failures.push(format!(
                        "{tool}: expected {code} saying `{says}`, got:\n{errors}"
                    ));
                }
            }
            (Ok(_), Outcome::Fails(code, _)) => {
                failures.push(format!("{tool}: compiles, but {code} was expected"))
            }
            (Err(errors), Outcome::Loads) => failures.push(format!("{tool}:\n{errors}")),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// loads.bt's `kaddr()` and unary `*`: `kaddr("vfs_read")` is the address
/// /proc/kallsyms lists, and `*` reads through a user pointer the value the
/// workload put there (a `uint64` for an integer address, the pointee's
/// width for a typed pointer).
#[test]
fn kaddr_and_unary_star_read_kernel_and_user_memory() {
    require_root!();
    let kallsyms = std::fs::read_to_string("/proc/kallsyms").unwrap();
    let vfs_read = kallsyms
        .lines()
        .find_map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            (w.get(2) == Some(&"vfs_read")).then(|| u64::from_str_radix(w[0], 16).unwrap())
        })
        .expect("vfs_read in /proc/kallsyms");
    let out = common::trace_workload(
        "tracepoint:syscalls:sys_enter_nanosleep /pid == cpid/ { @addr = kaddr(\"vfs_read\"); @ns[*((uint64)args->rqtp + 8)] = count(); @ns16[*(int16 *)((uint64)args->rqtp + 8)] = count(); @sec[*(uint64 *)args->rqtp] = count(); }",
        "nanosleep 1234567 3",
        &[],
    );
    // 1234567 is 0x12d687: its low 16 bits are -10617 as an int16. The
    // address is cast to an integer first: `args->rqtp + 8` would move by 8
    // timespecs, as C and bpftrace scale pointer arithmetic.
    for line in [
        format!("@addr: {vfs_read}"),
        "@ns[1234567]: 3".into(),
        "@ns16[-10617]: 3".into(),
        "@sec[0]: 3".into(),
    ] {
        assert!(
            out.stdout.lines().any(|l| l == line),
            "expected `{line}` in:\n{}",
            out.stdout
        );
    }
}

/// runqlen.bt's and dcsnoop.bt's C struct definitions: a struct the script
/// defines overlays memory as C lays it out (here the workload's `struct
/// timespec`, read through nanosleep's user pointer, under a name of the
/// script's own), and `sizeof`/`offsetof` see the same layout.
#[test]
fn a_script_struct_reads_the_memory_it_describes() {
    require_root!();
    let out = common::trace_workload(
        "struct wl_ts { char pad[3]; long sec_low_bytes_skipped; };\nstruct wl_timespec { long sec; long nsec; };\ntracepoint:syscalls:sys_enter_nanosleep /pid == cpid/ { $t = (struct wl_timespec *)args->rqtp; @[$t->sec, $t->nsec] = count(); @size = sizeof(struct wl_timespec); @off = offsetof(struct wl_timespec, nsec); @pad = sizeof(struct wl_ts); }",
        "nanosleep 1234567 3",
        &[],
    );
    for line in ["@[0, 1234567]: 3", "@size: 16", "@off: 8", "@pad: 16"] {
        assert!(
            out.stdout.lines().any(|l| l == line),
            "expected `{line}` in:\n{}",
            out.stdout
        );
    }
}

/// One run of a shipped tool under `weft -c`.
struct ToolRun {
    /// The tool's output, line by line.
    lines: Vec<String>,
    stderr: String,
    /// The workload's pid, from its `pid` step (`None` for other commands).
    cpid: Option<u32>,
}

impl ToolRun {
    /// The lines after the header `header` (which must open the output);
    /// its `Attached N probes` line is on stderr, as bpftrace writes it.
    fn body(&self, header: &[&str]) -> Result<&[String], String> {
        let (attached, header): (Vec<&str>, Vec<&str>) =
            header.iter().partition(|l| l.starts_with("Attached "));
        for line in attached {
            if !self.stderr.lines().any(|l| l == line) {
                return Err(format!("no `{line}` on stderr:\n{}", self.stderr));
            }
        }
        let got: Vec<&str> = self
            .lines
            .iter()
            .take(header.len())
            .map(String::as_str)
            .collect();
        if got != header {
            return Err(format!("the header is {got:?}, expected {header:?}"));
        }
        Ok(&self.lines[header.len()..])
    }

    fn cpid(&self) -> u32 {
        self.cpid.expect("the workload printed its pid")
    }
}

/// `line` without its leading `%H:%M:%S ` (or `%H:%M:%S  `) time column.
fn after_time(line: &str) -> Option<&str> {
    let (time, rest) = line.split_at_checked(8)?;
    let is_time = time.bytes().enumerate().all(|(i, b)| match i {
        2 | 5 => b == b':',
        _ => b.is_ascii_digit(),
    });
    is_time.then(|| rest.trim_start())
}

/// `line` as it is (rows without a time column).
fn as_is(line: &str) -> Option<&str> {
    Some(line)
}

/// `line` without its leading `%-10u ` elapsed-milliseconds column.
fn after_elapsed(line: &str) -> Option<&str> {
    let (ms, rest) = line.split_at_checked(11)?;
    ms.trim().parse::<u64>().ok().map(|_| rest)
}

/// Checks that every line of `want` appears in `rows` (after `strip`), in
/// this order.
fn rows_in_order(
    rows: &[String],
    strip: fn(&str) -> Option<&str>,
    want: &[String],
) -> Result<(), String> {
    let mut rest = rows.iter().filter_map(|r| strip(r));
    for w in want {
        if !rest.any(|r| r == w) {
            return Err(format!(
                "no row `{w}` (in order) among:\n{}",
                rows.join("\n")
            ));
        }
    }
    Ok(())
}

/// The counts of a histogram printed after the line `name`, summed.
fn histogram_total(rows: &[String], name: &str) -> u64 {
    rows.iter()
        .skip_while(|l| l.as_str() != name)
        .skip(1)
        .take_while(|l| l.starts_with('['))
        .filter_map(|l| l.split_whitespace().rev().nth(1)?.parse::<u64>().ok())
        .sum()
}

/// The count of one histogram bucket (`[4K, 8K)`) after the line `name`.
fn histogram_bucket(rows: &[String], name: &str, bucket: &str) -> u64 {
    rows.iter()
        .skip_while(|l| l.as_str() != name)
        .skip(1)
        .take_while(|l| l.starts_with('['))
        .find(|l| l.starts_with(bucket))
        .and_then(|l| l[bucket.len()..].split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

/// Runs `/usr/sbin/TOOL.bt` under `weft -c COMMAND` (the command ends the run).
fn run_tool(tool: &str, command: &str) -> Result<ToolRun, String> {
    let path = format!("/usr/sbin/{tool}.bt");
    let out = common::run_weft(&["-c", command, &path], Duration::from_secs(90));
    if out.timed_out || out.status != Some(0) {
        return Err(format!(
            "weft {path} failed (status {:?}, timed out: {})\nstdout:\n{}\nstderr:\n{}",
            out.status, out.timed_out, out.stdout, out.stderr
        ));
    }
    let weft_error = |l: &str| l.contains("ERROR: ");
    if out.stderr.lines().any(weft_error) {
        return Err(format!("errors on stderr:\n{}", out.stderr));
    }
    let cpid = out
        .stderr
        .lines()
        .find_map(|l| l.strip_prefix("weft-workload pid=")?.trim().parse().ok());
    Ok(ToolRun {
        lines: out.stdout.lines().map(str::to_string).collect(),
        stderr: out.stderr,
        cpid,
    })
}

/// A TLS server on 127.0.0.1 (`openssl s_server`, one connection, killed
/// when dropped) and the client command that talks to it.
struct TlsServer {
    child: std::process::Child,
    dir: std::path::PathBuf,
    port: u16,
}

impl TlsServer {
    fn start() -> Result<TlsServer, String> {
        let dir = common::scratch("tls");
        std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
        let (key, cert) = (dir.join("key.pem"), dir.join("cert.pem"));
        let made = common::run(
            std::process::Command::new("openssl")
                .args(["req", "-x509", "-newkey", "ec", "-pkeyopt"])
                .args(["ec_paramgen_curve:prime256v1", "-nodes", "-days", "1"])
                .args(["-subj", "/CN=localhost", "-keyout"])
                .arg(&key)
                .arg("-out")
                .arg(&cert),
            Duration::from_secs(30),
        );
        if made.status != Some(0) {
            return Err(format!("openssl req failed: {}", made.stderr));
        }
        // A free port: bound by the kernel, released, then taken by the server.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map_err(|e| e.to_string())?
            .port();
        let child = std::process::Command::new("timeout")
            .args(["90", "openssl", "s_server", "-quiet", "-naccept", "1"])
            .args(["-accept", &format!("127.0.0.1:{port}"), "-cert"])
            .arg(&cert)
            .arg("-key")
            .arg(&key)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .map_err(|e| format!("openssl s_server: {e}"))?;
        let server = TlsServer { child, dir, port };
        // Ready when it accepts: a plain TCP probe would use up `-naccept 1`,
        // so wait for the port to be listening instead.
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        while !listening(port) {
            if std::time::Instant::now() > deadline {
                return Err("openssl s_server did not start listening".into());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(server)
    }

    fn client(&self) -> String {
        format!(
            "/usr/bin/openssl s_client -quiet -connect 127.0.0.1:{}",
            self.port
        )
    }
}

impl Drop for TlsServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Whether something listens on 127.0.0.1:`port` (from /proc/net/tcp).
fn listening(port: u16) -> bool {
    let want = format!("0100007F:{port:04X}");
    std::fs::read_to_string("/proc/net/tcp").is_ok_and(|t| {
        t.lines().any(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            f.get(1) == Some(&want.as_str()) && f.get(3) == Some(&"0A")
        })
    })
}

/// What a case runs: workload steps (after `pid`), or a TLS client.
enum Command {
    Workload(&'static str),
    TlsClient,
}

/// One shipped tool against the workload step that makes it fire.
struct ToolCase {
    tool: &'static str,
    command: Command,
    check: fn(&ToolRun, &Fixture) -> Result<(), String>,
}

/// Paths and the workload a case refers to.
struct Fixture {
    workload: String,
    scratch: String,
}

const TOOL_CASES: &[ToolCase] = &[
    ToolCase {
        tool: "bashreadline",
        command: Command::Workload("readline 2"),
        check: |run, _| {
            let rows = run.body(&[
                "Attached 2 probes",
                "Tracing bash commands... Hit Ctrl-C to end.",
                "TIME      PID    COMMAND",
            ])?;
            // bash is the workload's child: one pid, three lines read.
            let bash = rows
                .iter()
                .filter_map(|r| after_time(r))
                .find(|r| r.ends_with(": weft readline 1"))
                .and_then(|r| r.split_whitespace().next())
                .ok_or("no row for `: weft readline 1`")?
                .to_string();
            let want: Vec<String> = [": weft readline 1", ": weft readline 2", "exit"]
                .iter()
                .map(|l| format!("{bash:<6} {l}"))
                .collect();
            rows_in_order(rows, after_time, &want)
        },
    },
    ToolCase {
        tool: "bitesize",
        command: Command::Workload("dio-write {scratch} 4096 8"),
        check: |run, _| {
            let rows = run.body(&[
                "Attached 3 probes",
                "Tracing block device I/O... Hit Ctrl-C to end.",
                "",
                "I/O size (bytes) histograms by process name:",
            ])?;
            // Eight O_DIRECT writes of 4 KiB, each one request (the file's
            // preallocation and journal add requests of their own).
            let n = histogram_bucket(rows, "@[weftwl]:", "[4K, 8K)");
            if n < 8 {
                return Err(format!(
                    "@[weftwl] has {n} requests of [4K, 8K):\n{}",
                    rows.join("\n")
                ));
            }
            Ok(())
        },
    },
    ToolCase {
        tool: "cpuwalk",
        command: Command::Workload("spin 300"),
        check: |run, _| {
            let rows = run.body(&[
                "Attached 2 probes",
                "Sampling CPU at 99hz... Hit Ctrl-C to end.",
            ])?;
            // 300 ms of spinning at 99 Hz: about 30 samples on its CPU.
            let n = histogram_total(rows, "@cpu:");
            if n < 20 {
                return Err(format!("@cpu holds {n} samples:\n{}", rows.join("\n")));
            }
            Ok(())
        },
    },
    ToolCase {
        tool: "execsnoop",
        command: Command::Workload("spawn 2"),
        check: |run, fx| {
            let rows = run.body(&["Attached 3 probes", "TIME(ms)   PID   ARGS"])?;
            // The workload's own exec (it runs after the probes attach), then its children.
            rows_in_order(
                rows,
                after_elapsed,
                &[format!("{:<5} {} pid spawn 2", run.cpid(), fx.workload)],
            )?;
            for i in 1..=2 {
                let want = format!("/bin/true weft-spawn {i}");
                if !rows
                    .iter()
                    .filter_map(|r| after_elapsed(r))
                    .any(|r| r.ends_with(&want))
                {
                    return Err(format!("no row for `{want}`:\n{}", rows.join("\n")));
                }
            }
            Ok(())
        },
    },
    ToolCase {
        tool: "gethostlatency",
        command: Command::Workload("getaddrinfo localhost 2"),
        check: |run, _| {
            let rows = run.body(&[
                "Attached 7 probes",
                "Tracing getaddr/gethost calls... Hit Ctrl-C to end.",
                "TIME      PID    COMM              LATms HOST",
            ])?;
            let ours: Vec<Vec<&str>> = rows
                .iter()
                .filter_map(|r| after_time(r))
                .map(|r| r.split_whitespace().collect::<Vec<_>>())
                .filter(|f| f.first() == Some(&run.cpid().to_string().as_str()))
                .collect();
            let ok = ours.len() == 2
                && ours.iter().all(|f| {
                    f.len() == 4
                        && f[1] == "weftwl"
                        && f[2].parse::<u64>().is_ok()
                        && f[3] == "localhost"
                });
            if !ok {
                return Err(format!(
                    "expected two getaddrinfo(localhost) rows:\n{}",
                    rows.join("\n")
                ));
            }
            Ok(())
        },
    },
    ToolCase {
        tool: "killsnoop",
        command: Command::Workload("kill 2"),
        check: |run, _| {
            let rows = run.body(&[
                "Attached 3 probes",
                "Tracing kill() signals... Hit Ctrl-C to end.",
                "TIME      PID    COMM             SIG  TPID   RESULT",
            ])?;
            let p = run.cpid();
            let row = format!("{p:<6} {:<16} {:<4} {p:<6} {}", "weftwl", 0, 0);
            rows_in_order(rows, after_time, &[row.clone(), row])
        },
    },
    ToolCase {
        tool: "naptime",
        command: Command::Workload("nanosleep 1234567 2"),
        check: |run, _| {
            let rows = run.body(&[
                "Attached 2 probes",
                "Tracing sleeps. Hit Ctrl-C to end.",
                "TIME     PPID   PCOMM            PID    COMM             SECONDS",
            ])?;
            // The workload's parent is weft (`-c`); 1234567 ns is 0.001 s.
            let ours: Vec<Vec<&str>> = rows
                .iter()
                .filter_map(|r| after_time(r))
                .map(|r| r.split_whitespace().collect::<Vec<_>>())
                .filter(|f| f.get(2) == Some(&run.cpid().to_string().as_str()))
                .collect();
            let ok = ours.len() == 2
                && ours
                    .iter()
                    .all(|f| f.len() == 5 && f[1] == "weft" && f[3] == "weftwl" && f[4] == "0.001");
            if !ok {
                return Err(format!("expected two 0.001 s sleeps:\n{}", rows.join("\n")));
            }
            Ok(())
        },
    },
    ToolCase {
        tool: "opensnoop",
        command: Command::Workload("openat {scratch} 2"),
        check: |run, fx| {
            let rows = run.body(&[
                "Attached 6 probes",
                "Tracing open syscalls... Hit Ctrl-C to end.",
                "PID    COMM               FD ERR PATH",
            ])?;
            let row = format!(
                "{:<6} {:<16} {:>4} {:>3} {}",
                run.cpid(),
                "weftwl",
                3,
                0,
                fx.scratch
            );
            rows_in_order(rows, as_is, &[row.clone(), row])
        },
    },
    ToolCase {
        tool: "pidpersec",
        command: Command::Workload("fork 20 sleep 1100"),
        check: |run, _| {
            let rows = run.body(&[
                "Attached 4 probes",
                "Tracing new processes... Hit Ctrl-C to end.",
            ])?;
            // Each second: `HH:MM:SS PIDs/sec: @: N`; the workload forks 20.
            let forks: u64 = rows
                .iter()
                .filter_map(|r| {
                    after_time(r)?
                        .strip_prefix("PIDs/sec: @: ")?
                        .parse::<u64>()
                        .ok()
                })
                .sum();
            if forks < 20 {
                return Err(format!(
                    "{forks} new processes counted:\n{}",
                    rows.join("\n")
                ));
            }
            Ok(())
        },
    },
    ToolCase {
        tool: "runqlat",
        command: Command::Workload("nanosleep 1000000 20"),
        check: |run, _| {
            let rows = run.body(&[
                "Attached 5 probes",
                "Tracing CPU scheduler... Hit Ctrl-C to end.",
            ])?;
            // Every wakeup of the workload's 20 sleeps is a run-queue latency.
            let n = histogram_total(rows, "@usecs:");
            if n < 20 {
                return Err(format!("@usecs holds {n} latencies:\n{}", rows.join("\n")));
            }
            Ok(())
        },
    },
    ToolCase {
        tool: "setuids",
        command: Command::Workload("setuid 2"),
        check: |run, _| {
            let rows = run.body(&[
                "Attached 7 probes",
                "Tracing setuid(2) family syscalls. Hit Ctrl-C to end.",
                "TIME     PID    COMM             UID    SYSCALL   ARGS (RET)",
            ])?;
            let row = format!(
                "{:<6} {:<16} {:<6} setuid    uid=0 (0)",
                run.cpid(),
                "weftwl",
                0
            );
            rows_in_order(rows, after_time, &[row.clone(), row])
        },
    },
    ToolCase {
        tool: "sslsnoop",
        command: Command::TlsClient,
        check: |run, _| {
            let rows = run.body(&[
                "Attached 11 probes",
                "Tracing SSL/TLS handshake... Hit Ctrl-C to end.",
                "TIME(us)   TID      COMM     LAT(us)   RET FUNC",
            ])?;
            // TIME TID COMM LAT RET FUNC from the client and the server.
            let funcs: Vec<&str> = rows
                .iter()
                .map(|r| r.split_whitespace().collect::<Vec<_>>())
                .filter(|f| {
                    f.len() == 6
                        && f[2] == "openssl"
                        && f[3].parse::<u64>().is_ok()
                        && f[4].parse::<i64>().is_ok()
                })
                .map(|f| f[5])
                .collect();
            for func in ["SSL_write", "SSL_read"] {
                if !funcs.contains(&func) {
                    return Err(format!("no {func} row:\n{}", rows.join("\n")));
                }
            }
            Ok(())
        },
    },
    ToolCase {
        tool: "ssllatency",
        command: Command::TlsClient,
        check: |run, _| {
            let rows = run.body(&[
                "Attached 12 probes",
                "Tracing SSL/TLS handshake... Hit Ctrl-C to end.",
            ])?;
            if !rows
                .iter()
                .any(|r| r == "Latency distribution in microsecond:")
            {
                return Err(format!("no END line:\n{}", rows.join("\n")));
            }
            // Each function is one key of each map (issue 16's defect 1 made
            // one key per call here).
            let keys: Vec<&String> = rows
                .iter()
                .filter(|r| r.starts_with('@') && r.contains('['))
                .collect();
            let mut seen = std::collections::HashSet::new();
            for k in &keys {
                let key = k.split(':').next().unwrap_or(k);
                if !seen.insert(key.to_string()) {
                    return Err(format!("`{key}` is printed twice:\n{}", rows.join("\n")));
                }
            }
            if !keys
                .iter()
                .any(|k| k.starts_with("@stat[SSL_write]") || k.starts_with("@statF[SSL_write]"))
            {
                return Err(format!("no SSL_write statistics:\n{}", rows.join("\n")));
            }
            Ok(())
        },
    },
    ToolCase {
        tool: "statsnoop",
        command: Command::Workload("statx {scratch} 2"),
        check: |run, fx| {
            let rows = run.body(&[
                "Attached 10 probes",
                "Tracing stat syscalls... Hit Ctrl-C to end.",
                "PID    COMM             ERR PATH",
            ])?;
            let row = format!("{:<6} {:<16} {:>3} {}", run.cpid(), "weftwl", 2, fx.scratch);
            rows_in_order(rows, as_is, &[row.clone(), row])
        },
    },
    ToolCase {
        tool: "syncsnoop",
        command: Command::Workload("fsync {scratch} 2 sync"),
        check: |run, _| {
            let rows = run.body(&[
                "Attached 7 probes",
                "Tracing sync syscalls... Hit Ctrl-C to end.",
                "TIME      PID    COMM             EVENT",
            ])?;
            let row = |call: &str| {
                format!(
                    "{:<6} {:<16} tracepoint:syscalls:sys_enter_{call}",
                    run.cpid(),
                    "weftwl"
                )
            };
            rows_in_order(rows, after_time, &[row("fsync"), row("fsync"), row("sync")])
        },
    },
    ToolCase {
        tool: "syscount",
        command: Command::Workload("getppid 3000"),
        check: |run, _| {
            let rows = run.body(&[
                "Attached 3 probes",
                "Counting syscalls... Hit Ctrl-C to end.",
            ])?;
            let count = |prefix: &str| -> u64 {
                rows.iter()
                    .find_map(|r| r.strip_prefix(prefix)?.parse().ok())
                    .unwrap_or(0)
            };
            // getppid is syscall 110 on x86-64; the workload makes 3000.
            let (calls, procs) = (count("@syscall[110]: "), count("@process[weftwl]: "));
            if calls < 3000 || procs < 3000 {
                return Err(format!(
                    "getppid {calls}, weftwl {procs}:\n{}",
                    rows.join("\n")
                ));
            }
            Ok(())
        },
    },
    ToolCase {
        tool: "tcpdrop",
        command: Command::Workload("sleep 100"),
        check: |run, _| {
            // It attaches and runs; no drop here carries a TCP socket (on
            // loopback the kernel drops received packets before they are
            // owned by one), so it prints its header only.
            run.body(&[
                "Attached 3 probes",
                "Tracing tcp drops. Hit Ctrl-C to end.",
                "TIME     PID      COMM             SADDR:SPORT           DADDR:DPORT           STATE   ",
            ])
            .map(|_| ())
        },
    },
    ToolCase {
        tool: "threadsnoop",
        command: Command::Workload("threads 2"),
        check: |run, _| {
            let rows = run.body(&[
                "Attached 2 probes",
                "TIME(ms)   PID    COMM             FUNC",
            ])?;
            // Each std::thread::spawn is a pthread_create of its start routine.
            let starts = rows
                .iter()
                .filter_map(|r| after_elapsed(r))
                .filter(|r| {
                    r.starts_with(&format!("{:<6} {:<16} ", run.cpid(), "weftwl"))
                        && r.ends_with("thread_start")
                })
                .count();
            if starts != 2 {
                return Err(format!("{starts} thread starts:\n{}", rows.join("\n")));
            }
            if !run.stderr.contains("`pthread_create` is not in") {
                return Err(format!(
                    "no warning that pthread_create moved:\n{}",
                    run.stderr
                ));
            }
            Ok(())
        },
    },
    ToolCase {
        tool: "writeback",
        command: Command::Workload("fsync {scratch} 1 sync"),
        check: |run, _| {
            let rows = run.body(&[
                "Attached 4 probes",
                "Tracing writeback... Hit Ctrl-C to end.",
                "TIME      DEVICE   PAGES    REASON           ms",
            ])?;
            // sync() starts writeback with reason `sync`: DEVICE PAGES REASON ms.
            let synced = rows
                .iter()
                .filter_map(|r| after_time(r))
                .any(|r| r.split_whitespace().nth(2) == Some("sync"));
            if !synced {
                return Err(format!("no writeback for sync:\n{}", rows.join("\n")));
            }
            Ok(())
        },
    },
];

/// Every shipped tool that can attach on this kernel (tracepoints,
/// uprobes, profile), run against a workload that makes it fire: bpftrace's
/// header and columns, and the workload's own rows, exact where the
/// workload makes them exact.
#[test]
fn shipped_tools_run_against_the_workload() {
    require_root!();
    testgate::require!(has_btf(), "this kernel has no BTF, which these tools need");
    require_tools!();
    testgate::require!(
        std::process::Command::new("openssl")
            .arg("version")
            .output()
            .is_ok(),
        "openssl is not installed (sslsnoop's server and client): apt-get install openssl"
    );
    let workload = common::workload().display().to_string();
    let only = std::env::var("WEFT_TOOL").ok();
    let mut failures = Vec::new();
    let mut ran = 0;
    for case in TOOL_CASES {
        if only.as_deref().is_some_and(|t| t != case.tool) {
            continue;
        }
        let fx = Fixture {
            workload: workload.clone(),
            scratch: format!("/var/tmp/weft-test-{}-{}", std::process::id(), case.tool),
        };
        let outcome = match &case.command {
            Command::Workload(steps) => {
                let steps = steps.replace("{scratch}", &fx.scratch);
                run_tool(case.tool, &format!("{workload} pid {steps}"))
            }
            Command::TlsClient => {
                TlsServer::start().and_then(|server| run_tool(case.tool, &server.client()))
            }
        };
        let _ = std::fs::remove_file(&fx.scratch);
        if let Err(e) = outcome.and_then(|run| (case.check)(&run, &fx)) {
            failures.push(format!("{}: {e}", case.tool));
        }
        ran += 1;
    }
    assert!(ran > 0, "WEFT_TOOL names no case");
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
