//! Local variables in stream clauses, on the running kernel: `let`, `for`,
//! `while`, `unroll`, `if` and `break` work in `begin`, `stage` and `end`
//! blocks as in a probe, and only the fields reach records and the timeline.

mod common;

use std::collections::BTreeSet;
use std::time::Duration;

use common::{run_weft, scratch, stream_records, trace_workload, workload};
use serde_json::Value;

const SCRIPT: &str = r#"stream loc {
    begin tracepoint:syscalls:sys_enter_nanosleep /pid == cpid/ by tid {
        let $i = 0;
        let $acc = 0;
        while ($i < 10) { $acc += $i; $i++; }
        for ($k : 0..5) { $acc += $k; }
        $begun = $acc;
        $hits_sum = 0;
    }
    stage hit tracepoint:syscalls:sys_enter_getppid by tid {
        let $j = 0;
        let $s = 0;
        while ($j < 100) { if ($j == 20) { break; } $s += 2; $j++; }
        unroll(3) { $s++; }
        $hits_sum += $s;
    }
    end tracepoint:syscalls:sys_enter_write by tid {
        let $tmp = $hits_sum * 2;
        for ($k : 0..3) { $tmp += 1; }
        $total = $tmp;
    }
}"#;

#[test]
fn let_for_while_in_every_clause_and_only_fields_in_the_record() {
    require_root!();
    let timeline = scratch("locals.timeline");
    let t = timeline.display().to_string();
    let out = trace_workload(
        SCRIPT,
        "nanosleep 1000 1 getppid 3 write 1 1",
        &["-f", "json", "--timeline", &t],
    );
    let records: Vec<Value> = stream_records(&out.stdout);
    assert_eq!(records.len(), 1, "{}\n{}", out.stdout, out.stderr);
    let fields = &records[0]["fields"];
    // begin: 0+1+...+9 by `while`, then 0+...+4 by `for`; each of the 3
    // hits: 20 rounds of += 2 until `break`, then 3 by `unroll`; end: twice
    // the sum plus 3 by `for`.
    assert_eq!(fields["begun"], 55, "{fields}");
    assert_eq!(fields["hits_sum"], 3 * 43, "{fields}");
    assert_eq!(fields["total"], 2 * 129 + 3, "{fields}");
    let names: BTreeSet<&str> = fields
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(names, BTreeSet::from(["begun", "hits_sum", "total"]));

    let text = std::fs::read_to_string(&timeline).expect("timeline written");
    let _ = std::fs::remove_file(&timeline);
    let v: Value = serde_json::from_str(&text).unwrap();
    let instance = v["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == "loc")
        .unwrap_or_else(|| panic!("{text}"));
    let args: BTreeSet<&str> = instance["args"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .filter(|k| *k != "cgroup")
        .collect();
    assert_eq!(
        args,
        BTreeSet::from(["begun", "hits_sum", "total"]),
        "{text}"
    );
}

#[test]
fn a_loop_counted_by_a_field_says_to_count_it_with_let() {
    require_root!();
    // `$i` is a field, kept in the instance's record in a map, where the
    // verifier does not follow its value: the loop looks endless to it.
    let script = r#"stream w {
    begin tracepoint:syscalls:sys_enter_nanosleep /pid == cpid/ by tid { $i = 0; }
    stage hit tracepoint:syscalls:sys_enter_getppid by tid { $i = 0; while ($i < 10) { $i++; } }
    end tracepoint:syscalls:sys_enter_write by tid
}"#;
    let cmd = format!("{} getppid 1", workload().display());
    let out = run_weft(&["-q", "-c", &cmd, "-e", script], Duration::from_secs(60));
    assert_eq!(out.status, Some(1), "{}", out.stderr);
    assert!(
        out.stderr
            .contains("rejected probe program `w_stage_sys_enter_getppid`: infinite loop detected"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("count the loop with a `let` variable"),
        "{}",
        out.stderr
    );
}
