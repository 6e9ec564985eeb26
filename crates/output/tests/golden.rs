//! Replays, through our sinks, what the scripts in `tests/golden/*.bt` did
//! under bpftrace 0.17, and compares with what bpftrace printed
//! (`golden/NAME.txt` for text, `golden/NAME.json` for `-f json`;
//! `golden/generate.sh` regenerates them). Some maps go through
//! `decode_map` from raw per-CPU bytes in a scrambled kernel order, so the
//! goldens also pin down merging and print order.

use abi::{Aggregation, HIST_BUCKETS, Layout, MapSpec, MapValue};
use output::decode::le_bytes;
use output::{
    Format, Integer, JsonSink, MapDump, MapEntry, MapEntryValue, MapKind, Render, Sink, TextSink,
    Value, decode_map, print_maps_at_exit,
};

fn check(name: &str, replay: impl Fn(&mut dyn Sink)) {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden/");
    let mut text = TextSink::new(Vec::new());
    replay(&mut text);
    let mut json = JsonSink::new(Vec::new());
    replay(&mut json);
    let outputs = [("txt", text.into_inner()), ("json", json.into_inner())];
    if let Ok(out) = std::env::var("WEFT_GOLDEN_DUMP") {
        for (ext, got) in &outputs {
            std::fs::write(format!("{out}/{name}.{ext}"), got).unwrap();
        }
    }
    for (ext, got) in outputs {
        let path = format!("{dir}{name}.{ext}");
        let want = std::fs::read(&path).expect("golden file");
        assert!(
            got == want,
            "{path} differs\n--- want\n{}\n--- got\n{}",
            String::from_utf8_lossy(&want),
            String::from_utf8_lossy(&got)
        );
    }
}

fn int(v: i64) -> Value {
    Value::Int(v)
}

fn s(text: &str) -> Value {
    Value::str(text)
}

fn dump(
    name: &str,
    kind: MapKind,
    keyed: bool,
    entries: Vec<(Vec<Value>, MapEntryValue)>,
) -> MapDump {
    MapDump {
        name: name.to_string(),
        kind,
        keyed,
        entries: entries
            .into_iter()
            .map(|(key, value)| MapEntry { key, value })
            .collect(),
    }
}

fn scalar(name: &str, kind: MapKind, value: MapEntryValue) -> MapDump {
    dump(name, kind, false, vec![(vec![], value)])
}

fn hist_index(v: i64) -> usize {
    match v {
        ..0 => 0,
        0 => 1,
        _ => v.ilog2() as usize + 2,
    }
}

fn hist_of(values: &[i64]) -> Vec<u64> {
    let mut buckets = vec![0; HIST_BUCKETS as usize];
    for &v in values {
        buckets[hist_index(v)] += 1;
    }
    buckets
}

fn lhist_of(values: &[i64], min: i64, max: i64, step: i64) -> MapEntryValue {
    let steps = (max - min) / step;
    let mut buckets = vec![0; steps as usize + 2];
    for &v in values {
        let index = if v < min {
            0
        } else if v >= max {
            steps + 1
        } else {
            (v - min) / step + 1
        };
        buckets[index as usize] += 1;
    }
    MapEntryValue::Lhist {
        min,
        max,
        step,
        buckets,
    }
}

fn spec(name: &str, key: Option<Layout>, value: MapValue) -> MapSpec {
    MapSpec {
        name: name.to_string(),
        bpf_name: "m".to_string(),
        key,
        value,
        max_entries: 4096,
    }
}

fn string_layout() -> Layout {
    Layout::Str { size: 64 }
}

fn string_bytes(text: &str) -> Vec<u8> {
    let mut bytes = text.as_bytes().to_vec();
    bytes.resize(64, 0);
    bytes
}

/// A `(int64, string)` key as codegen lays it out.
fn pair_key(n: i64, text: &str) -> Vec<u8> {
    let mut bytes = n.to_le_bytes().to_vec();
    bytes.extend(string_bytes(text));
    bytes
}

/// Splits one CPU's worth of `u64` words over two CPUs (first CPU gets `part`).
fn two_cpus(words: &[u64], part: &[u64]) -> Vec<Vec<u8>> {
    let rest: Vec<u64> = words
        .iter()
        .zip(part)
        .map(|(w, p)| w.wrapping_sub(*p))
        .collect();
    vec![le_bytes(part), le_bytes(&rest)]
}

fn printf(sink: &mut dyn Sink, format: &str, args: &[Value]) {
    sink.printf(&Format::parse(format).render(args)).unwrap();
}

#[test]
fn basic() {
    let b = decode_map(
        &spec(
            "@b",
            Some(Layout::tuple([Layout::i64(), string_layout()])),
            MapValue::Agg(Aggregation::Sum { signed: true }),
        ),
        &[(pair_key(1, "x"), two_cpus(&[5], &[2]))],
    );
    let c = decode_map(
        &spec("@c", None, MapValue::Agg(Aggregation::Hist { bits: 0 })),
        &[(
            le_bytes(&[0]),
            vec![le_bytes(&hist_of(&[])), le_bytes(&hist_of(&[1000]))],
        )],
    );
    let maps = vec![
        scalar("@a", MapKind::Count, MapEntryValue::Count(1)),
        b,
        c,
        scalar(
            "@d",
            MapKind::Lhist {
                min: 0,
                max: 100,
                step: 10,
            },
            lhist_of(&[15], 0, 100, 10),
        ),
        scalar(
            "@e",
            MapKind::Stats,
            MapEntryValue::Stats { count: 1, total: 7 },
        ),
        scalar(
            "@f",
            MapKind::Avg,
            MapEntryValue::Avg { count: 1, total: 9 },
        ),
        scalar("@g", MapKind::Min, MapEntryValue::Min(Integer::Signed(-3))),
        scalar("@h", MapKind::Max, MapEntryValue::Max(Integer::Signed(4))),
        dump(
            "@s",
            MapKind::Plain,
            true,
            vec![(vec![s("k")], MapEntryValue::Plain(int(1)))],
        ),
    ];
    check("basic", |sink| {
        sink.attached_probes(1).unwrap();
        printf(
            sink,
            "%-5d|%5s|%x|%c\n",
            &[int(42), s("ab"), int(255), int(65)],
        );
        // Deliberately out of name order: the exit dump sorts by name.
        let mut shuffled = maps.clone();
        shuffled.reverse();
        print_maps_at_exit(sink, &shuffled).unwrap();
    });
}

#[test]
fn hist() {
    let mut h3 = hist_of(&[-1]);
    // bpftrace 0.17's hist() caps at [2G, 4G): 1 << 33 and 1 << 45 land there.
    h3[33] = 2;
    let h2_spec = spec(
        "@h2",
        Some(Layout::i64()),
        MapValue::Agg(Aggregation::Hist { bits: 0 }),
    );
    let h2 = decode_map(
        &h2_spec,
        &[
            (le_bytes(&[2]), vec![le_bytes(&hist_of(&[5, 7]))]),
            (le_bytes(&[1]), vec![le_bytes(&hist_of(&[5]))]),
            (le_bytes(&[0]), vec![le_bytes(&hist_of(&[100]))]),
        ],
    );
    let maps = vec![
        scalar(
            "@h",
            MapKind::Hist,
            MapEntryValue::Hist(hist_of(&[0, 1, -5, 1500, 1500, 3_000_000, 3])),
        ),
        h2,
        scalar("@h3", MapKind::Hist, MapEntryValue::Hist(h3)),
    ];
    check("hist", |sink| {
        sink.attached_probes(1).unwrap();
        print_maps_at_exit(sink, &maps).unwrap();
    });
}

#[test]
fn lhist() {
    let lhist = |name: &str, values: &[i64], min, max, step| {
        scalar(
            name,
            MapKind::Lhist { min, max, step },
            lhist_of(values, min, max, step),
        )
    };
    let m_spec = spec(
        "@m",
        Some(Layout::i64()),
        MapValue::Agg(Aggregation::Lhist {
            min: 0,
            max: 10,
            step: 1,
        }),
    );
    let bucket_bytes = |values: &[i64]| match lhist_of(values, 0, 10, 1) {
        MapEntryValue::Lhist { buckets, .. } => le_bytes(&buckets),
        _ => unreachable!(),
    };
    let m = decode_map(
        &m_spec,
        &[
            (
                le_bytes(&[2]),
                vec![bucket_bytes(&[3]), bucket_bytes(&[20])],
            ),
            (le_bytes(&[1]), vec![bucket_bytes(&[5]), bucket_bytes(&[])]),
        ],
    );
    let maps = vec![
        lhist("@l", &[-5, 15, 15, 55, 100, 1000], 0, 100, 10),
        lhist("@k", &[3000, 1048576, 5000000], 0, 4194304, 1048576),
        lhist("@j", &[1500, 9000], 1024, 8192, 1024),
        m,
        lhist("@n", &[50], 20, 100, 25),
    ];
    check("lhist", |sink| {
        sink.attached_probes(1).unwrap();
        print_maps_at_exit(sink, &maps).unwrap();
    });
}

#[test]
fn values() {
    let b = decode_map(
        &spec(
            "@b",
            Some(Layout::tuple([Layout::i64(), string_layout()])),
            MapValue::Agg(Aggregation::Sum { signed: true }),
        ),
        &[
            (pair_key(1, "x"), two_cpus(&[5], &[7])),
            (pair_key(2, "y"), two_cpus(&[(-5i64) as u64], &[1])),
        ],
    );
    let es = decode_map(
        &spec(
            "@es",
            Some(Layout::i64()),
            MapValue::Agg(Aggregation::Stats { signed: true }),
        ),
        &[
            (le_bytes(&[1]), two_cpus(&[1, 10], &[0, 0])),
            (le_bytes(&[2]), two_cpus(&[1, 3], &[1, 3])),
        ],
    );
    let fk = decode_map(
        &spec(
            "@fk",
            Some(string_layout()),
            MapValue::Agg(Aggregation::Avg { signed: true }),
        ),
        &[
            (string_bytes("a"), vec![le_bytes(&[1, 10])]),
            (string_bytes("b"), vec![le_bytes(&[1, (-3i64) as u64])]),
        ],
    );
    let g = decode_map(
        &spec("@g", None, MapValue::Agg(Aggregation::Min { signed: true })),
        // The second CPU never saw a value: its 0 must not win.
        &[(
            le_bytes(&[0]),
            vec![le_bytes(&[(-3i64) as u64, 1]), le_bytes(&[0, 0])],
        )],
    );
    let u2 = decode_map(
        &spec(
            "@u2",
            Some(Layout::Int {
                size: 4,
                signed: false,
            }),
            MapValue::Plain(Layout::Int {
                size: 1,
                signed: false,
            }),
        ),
        &[(vec![1, 0, 0, 0], vec![vec![200]])],
    );
    let a = scalar("@a", MapKind::Count, MapEntryValue::Count(1));
    let h = scalar("@h", MapKind::Max, MapEntryValue::Max(Integer::Signed(4)));
    let plain = |name: &str, key: Vec<Value>, value: Value| {
        let keyed = !key.is_empty();
        dump(
            name,
            MapKind::Plain,
            keyed,
            vec![(key, MapEntryValue::Plain(value))],
        )
    };
    let maps = vec![
        a.clone(),
        b.clone(),
        plain("@c", vec![s("q\"uo\\te\ttab")], int(3)),
        scalar(
            "@e",
            MapKind::Stats,
            MapEntryValue::Stats { count: 2, total: 5 },
        ),
        es,
        scalar(
            "@f",
            MapKind::Avg,
            MapEntryValue::Avg {
                count: 2,
                total: 13,
            },
        ),
        fk,
        g,
        h.clone(),
        plain("@s", vec![s("k")], s("str\"v")),
        plain("@t", vec![], Value::Tuple(vec![int(1), s("two"), int(-3)])),
        plain(
            "@tk",
            vec![int(5), s("a")],
            Value::Tuple(vec![int(1), int(2)]),
        ),
        plain("@u", vec![], int(5)),
        u2,
        plain("@neg", vec![int(-1)], int(1)),
    ];
    check("values", |sink| {
        sink.attached_probes(1).unwrap();
        sink.value(&Value::Tuple(vec![int(1), s("x")])).unwrap();
        sink.value(&int(5)).unwrap();
        sink.value(&s("hi\"there")).unwrap();
        sink.map(&a, 0, 0).unwrap();
        sink.map(&b, 0, 0).unwrap();
        sink.map(&h, 0, 0).unwrap();
        print_maps_at_exit(sink, &maps).unwrap();
    });
}

#[test]
fn top_div() {
    let keyed = |name: &str, kind: MapKind, entries: Vec<(i64, MapEntryValue)>| {
        let entries = entries
            .into_iter()
            .map(|(k, v)| (vec![int(k)], v))
            .collect();
        dump(name, kind, true, entries)
    };
    let count = |n| MapEntryValue::Count(n);
    let sum = |n| MapEntryValue::Sum(Integer::Signed(n));
    let hist = |values: &[i64]| MapEntryValue::Hist(hist_of(values));
    let stats = |total| MapEntryValue::Stats { count: 1, total };
    let avg = |total| MapEntryValue::Avg { count: 1, total };
    let lkind = MapKind::Lhist {
        min: 0,
        max: 10,
        step: 5,
    };
    let c = keyed(
        "@c",
        MapKind::Count,
        vec![(1, count(1)), (2, count(2)), (3, count(3))],
    );
    let s_map = keyed(
        "@s",
        MapKind::Sum,
        vec![(3, sum(-2500)), (1, sum(1000)), (2, sum(2500))],
    );
    let h = keyed(
        "@h",
        MapKind::Hist,
        vec![
            (1, hist(&[1])),
            (2, hist(&[2, 2])),
            (3, hist(&[2000, 2000, 2000])),
        ],
    );
    let l = keyed(
        "@l",
        lkind,
        vec![
            (1, lhist_of(&[5], 0, 10, 5)),
            (2, lhist_of(&[5, 5], 0, 10, 5)),
        ],
    );
    let st = keyed(
        "@st",
        MapKind::Stats,
        vec![(1, stats(5)), (2, stats(10)), (3, stats(20))],
    );
    let av = keyed(
        "@av",
        MapKind::Avg,
        vec![(1, avg(1500)), (2, avg(2500)), (3, avg(3500))],
    );
    let mx = keyed(
        "@mx",
        MapKind::Max,
        vec![
            (1, MapEntryValue::Max(Integer::Signed(1000))),
            (2, MapEntryValue::Max(Integer::Signed(3000))),
        ],
    );
    let mn = keyed(
        "@mn",
        MapKind::Min,
        vec![
            (1, MapEntryValue::Min(Integer::Signed(2000))),
            (2, MapEntryValue::Min(Integer::Signed(5000))),
        ],
    );
    let emptied = |map: &MapDump| MapDump {
        entries: Vec::new(),
        ..map.clone()
    };
    let zero_lhist = lhist_of(&[], 0, 10, 5);
    let z_zeroed = keyed("@z", MapKind::Sum, vec![(7, sum(0))]);
    let st_zeroed = keyed(
        "@st",
        MapKind::Stats,
        (1..=3)
            .map(|k| (k, MapEntryValue::Stats { count: 0, total: 0 }))
            .collect(),
    );
    let l_zeroed = keyed("@l", lkind, vec![(1, zero_lhist.clone()), (2, zero_lhist)]);
    check("top_div", |sink| {
        sink.attached_probes(1).unwrap();
        sink.map(&c, 2, 0).unwrap();
        sink.map(&c, 0, 2).unwrap();
        sink.map(&s_map, 2, 1000).unwrap();
        sink.map(&h, 2, 0).unwrap();
        sink.map(&h, 0, 2).unwrap();
        sink.map(&l, 1, 0).unwrap();
        sink.map(&st, 1, 0).unwrap();
        sink.map(&st, 0, 10).unwrap();
        sink.map(&av, 2, 1000).unwrap();
        sink.map(&mx, 1, 1000).unwrap();
        sink.map(&mn, 0, 1000).unwrap();
        sink.map(&emptied(&c), 0, 0).unwrap();
        sink.map(&z_zeroed, 0, 0).unwrap();
        sink.map(&emptied(&h), 0, 0).unwrap();
        sink.map(&st_zeroed, 0, 0).unwrap();
        sink.map(&emptied(&st), 0, 0).unwrap();
        sink.map(&l_zeroed, 0, 0).unwrap();
        let at_exit = [
            av.clone(),
            emptied(&c),
            emptied(&h),
            l_zeroed.clone(),
            mn.clone(),
            mx.clone(),
            s_map.clone(),
            emptied(&st),
            z_zeroed.clone(),
        ];
        print_maps_at_exit(sink, &at_exit).unwrap();
    });
}

#[test]
fn printf_quirks() {
    let u = |v: u64| Value::UInt(v);
    check("printf", |sink| {
        sink.attached_probes(1).unwrap();
        printf(sink, "50%%\n", &[]);
        printf(sink, "%d%%|\n", &[int(5)]);
        printf(sink, "%%|%d\n", &[int(5)]);
        printf(sink, "%%d|\n", &[int(5)]);
        printf(
            sink,
            "[%5d][%-5d][%05d][%.3d][%x][%X][%o][%p][%p][%10p]\n",
            &[
                int(42),
                int(42),
                int(42),
                int(7),
                int(255),
                int(255),
                int(8),
                int(4096),
                int(0),
                int(16),
            ],
        );
        printf(
            sink,
            "[%d][%u][%ld][%lu][%lld][%hd][%hhd][%hhu][%x][%lx]\n",
            &[
                int(4294967301),
                int(-1),
                int(-1),
                int(-1),
                int(-1),
                int(70000),
                int(300),
                int(-1),
                int(-1),
                int(-1),
            ],
        );
        printf(
            sink,
            "[%s][%10s][%-10s][%.2s][%c][%c]\n",
            &[s("abc"), s("abc"), s("abc"), s("abc"), int(65), int(321)],
        );
        printf(sink, "é ü\t\"q\\ \x01 %s\n", &[s("x\"y")]);
        printf(sink, "no newline", &[]);
        printf(sink, "%c|after\n", &[int(0)]);
        printf(
            sink,
            "%-d|%5.3d|%-8.3x|%.0d|%zd|%jd|%td|%llu|%hx|%5c|%-3c|\n",
            &[
                int(3),
                int(4),
                int(5),
                int(0),
                int(6),
                int(7),
                int(8),
                u(9),
                int(65546),
                int(66),
                int(67),
            ],
        );
        print_maps_at_exit(sink, &[]).unwrap();
    });
}

#[test]
fn misc() {
    let plain = |name: &str, key: Vec<Value>, value: Value| {
        let keyed = !key.is_empty();
        dump(
            name,
            MapKind::Plain,
            keyed,
            vec![(key, MapEntryValue::Plain(value))],
        )
    };
    let sk = decode_map(
        &spec(
            "@sk",
            Some(string_layout()),
            MapValue::Plain(string_layout()),
        ),
        &[
            (string_bytes("c"), vec![string_bytes("0")]),
            (string_bytes("a"), vec![string_bytes("1")]),
            (string_bytes("b"), vec![string_bytes("2")]),
        ],
    );
    let t = plain("@t", vec![], Value::Tuple(vec![int(1), s("a\"b"), int(-2)]));
    let maps = vec![
        scalar("@", MapKind::Count, MapEntryValue::Count(1)),
        plain("@p", vec![], Value::Pointer(1234)),
        plain("@pk", vec![Value::Pointer(255)], int(1)),
        t.clone(),
        plain("@str", vec![], s("tab\there")),
        plain("@neg", vec![], int(-5)),
        plain("@u8", vec![], Value::UInt(255)),
        plain("@i8", vec![], int(-1)),
        plain("@k", vec![Value::UInt(200), int(-3)], int(2)),
        sk,
    ];
    check("misc", |sink| {
        sink.attached_probes(1).unwrap();
        sink.value(&int(-5)).unwrap();
        sink.value(&Value::Tuple(vec![
            int(1),
            Value::Tuple(vec![int(2), s("x")]),
        ]))
        .unwrap();
        sink.map(&t, 0, 0).unwrap();
        printf(sink, "%s|%d\n", &[s("z"), int(-7)]);
        print_maps_at_exit(sink, &maps).unwrap();
    });
}
