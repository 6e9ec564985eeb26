//! Every script in `docs/streams.md` runs, and prints what the page shows.
//!
//! A script is a ```` ```weft ```` block. The line after it says how to run
//! it: `<!-- run: STEPS -->` (`weft-workload STEPS` given with `-c`), or
//! `<!-- run: STEPS; OPTIONS -->` with more weft options (`--timeline`
//! gets a file of its own, whose content is then what is compared). The
//! ```` ```text ```` or ```` ```json ```` block after that is the output:
//! stdout's lines and stderr's `weft:` lines, compared line by line with
//! every number (and duration, `1.040us`) allowed to differ.

mod common;

use std::time::Duration;

use common::{run_weft, scratch, workload};

struct Example {
    /// Line of the ```` ```weft ```` fence, for messages.
    line: usize,
    script: String,
    steps: String,
    options: Vec<String>,
    expected: Option<Vec<String>>,
}

/// The examples of a Markdown page; a script without a `run:` line is an error.
fn examples(page: &str) -> Result<Vec<Example>, String> {
    let lines: Vec<&str> = page.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    let block = |from: usize| -> (Vec<String>, usize) {
        let mut j = from;
        let mut body = Vec::new();
        while j < lines.len() && lines[j] != "```" {
            body.push(lines[j].to_string());
            j += 1;
        }
        (body, j + 1)
    };
    let skip_blank = |mut j: usize| {
        while j < lines.len() && lines[j].trim().is_empty() {
            j += 1;
        }
        j
    };
    while i < lines.len() {
        if lines[i] != "```weft" {
            i += 1;
            continue;
        }
        let fence = i + 1;
        let (script, next) = block(i + 1);
        let j = skip_blank(next);
        let run = lines
            .get(j)
            .and_then(|l| l.strip_prefix("<!-- run: "))
            .and_then(|l| l.strip_suffix(" -->"))
            .ok_or(format!(
                "docs/streams.md:{fence}: a script without a `<!-- run: STEPS -->` line"
            ))?;
        let (steps, options) = match run.split_once(';') {
            Some((s, o)) => (s.trim(), o.split_whitespace().map(String::from).collect()),
            None => (run.trim(), Vec::new()),
        };
        let k = skip_blank(j + 1);
        let (expected, after) = match lines.get(k) {
            Some(&"```text") | Some(&"```json") => {
                let (body, after) = block(k + 1);
                (Some(body), after)
            }
            _ => (None, j + 1),
        };
        out.push(Example {
            line: fence,
            script: script.join("\n"),
            steps: steps.to_string(),
            options,
            expected,
        });
        i = after;
    }
    Ok(out)
}

/// Every run of digits (with its decimals and a duration unit) becomes `N`.
fn mask(line: &str) -> String {
    let b = line.as_bytes();
    let mut out = String::new();
    let mut i = 0;
    while i < b.len() {
        if !b[i].is_ascii_digit() {
            out.push(line[i..].chars().next().unwrap());
            i += line[i..].chars().next().unwrap().len_utf8();
            continue;
        }
        while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'.') {
            i += 1;
        }
        for unit in ["ns", "us", "ms", "s"] {
            let end = i + unit.len();
            let bounded = b.get(end).is_none_or(|c| !c.is_ascii_alphanumeric());
            if line[i..].starts_with(unit) && bounded {
                i = end;
                break;
            }
        }
        out.push('N');
    }
    out
}

#[test]
fn masking_keeps_words_and_hides_numbers() {
    assert_eq!(
        mask("x start=2606.029 dur=1.040us [a +0 > b +477ns] bytes=100 sys_enter_pwrite64"),
        "x start=N dur=N [a +N > b +N] bytes=N sys_enter_pwriteN"
    );
    assert_eq!(mask("3s sleeps 10s"), "N sleeps N");
}

#[test]
fn every_script_in_the_streams_reference_runs_as_shown() {
    require_root!();
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/streams.md");
    let page = std::fs::read_to_string(&path).expect("docs/streams.md");
    let examples = examples(&page).unwrap_or_else(|e| panic!("{e}"));
    assert!(examples.len() >= 5, "{} examples", examples.len());
    let mut failures = Vec::new();
    for ex in &examples {
        let cmd = format!("{} {}", workload().display(), ex.steps);
        let timeline = scratch(&format!("docs-{}.json", ex.line));
        let mut args: Vec<String> = vec!["-q".into()];
        for o in &ex.options {
            args.push(o.clone());
            if o == "--timeline" {
                args.push(timeline.display().to_string());
            }
        }
        args.extend(["-c".into(), cmd, "-e".into(), ex.script.clone()]);
        let argv: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = run_weft(&argv, Duration::from_secs(60));
        let _ = std::fs::remove_file("/var/tmp/weft-docs-dio");
        let _ = std::fs::remove_file("/tmp/weft-docs-fd-chain");
        if out.status != Some(0) {
            failures.push(format!(
                "docs/streams.md:{}: weft exited {:?}\n{}",
                ex.line, out.status, out.stderr
            ));
            continue;
        }
        let Some(expected) = &ex.expected else {
            continue;
        };
        let actual: Vec<String> = if ex.options.iter().any(|o| o == "--timeline") {
            let text = std::fs::read_to_string(&timeline).unwrap_or_default();
            let _ = std::fs::remove_file(&timeline);
            text.lines().map(String::from).collect()
        } else {
            out.stdout
                .lines()
                .chain(out.stderr.lines().filter(|l| l.starts_with("weft:")))
                .map(String::from)
                .collect()
        };
        let keep = |lines: &[String]| -> Vec<String> {
            lines
                .iter()
                .filter(|l| !l.trim().is_empty())
                .map(|l| mask(l))
                .collect()
        };
        if keep(expected) != keep(&actual) {
            failures.push(format!(
                "docs/streams.md:{}: the page shows\n{}\nweft printed\n{}\n",
                ex.line,
                expected.join("\n"),
                actual.join("\n")
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
