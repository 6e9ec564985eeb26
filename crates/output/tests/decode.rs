//! Decoding and print order, from raw bytes.

use abi::{Aggregation, Field, Layout, MapSpec, MapValue};
use output::decode::le_bytes;
use output::{ArgKind, Integer, MapEntryValue, Value, decode, decode_map, validate};

fn spec(key: Option<Layout>, value: MapValue) -> MapSpec {
    MapSpec {
        name: "@m".to_string(),
        bpf_name: "m".to_string(),
        key,
        value,
        max_entries: 16,
    }
}

fn keys(dump: &output::MapDump) -> Vec<Vec<Value>> {
    dump.entries.iter().map(|e| e.key.clone()).collect()
}

#[test]
fn short_and_garbage_bytes_decode_without_panicking() {
    let layouts = [
        Layout::i64(),
        Layout::Int {
            size: 2,
            signed: true,
        },
        Layout::Str { size: 64 },
        Layout::Pointer,
        Layout::Bool,
        Layout::Bytes { size: 9 },
        Layout::None,
        Layout::Tuple {
            fields: vec![Field {
                offset: u32::MAX,
                layout: Layout::u64(),
            }],
            size: 3,
        },
        Layout::tuple([Layout::i64(), Layout::Str { size: 5 }]),
    ];
    for layout in &layouts {
        for len in 0..12 {
            decode(layout, &vec![0xff; len]);
        }
    }
    let aggs = [
        Aggregation::Count,
        Aggregation::Min { signed: true },
        Aggregation::Avg { signed: true },
        Aggregation::Hist { bits: 0 },
        Aggregation::Lhist {
            min: 0,
            max: 1 << 40,
            step: 1,
        },
    ];
    for agg in aggs {
        let dump = decode_map(
            &spec(Some(Layout::i64()), MapValue::Agg(agg)),
            &[(vec![1], vec![vec![], vec![7; 3]]), (vec![], vec![])],
        );
        assert_eq!(dump.entries.len(), 2);
    }
}

#[test]
fn integers_sign_extend_and_strings_stop_at_nul() {
    assert_eq!(
        decode(
            &Layout::Int {
                size: 2,
                signed: true
            },
            &[0xfe, 0xff]
        ),
        Value::Int(-2)
    );
    assert_eq!(
        decode(
            &Layout::Int {
                size: 4,
                signed: false
            },
            &[1, 0, 0, 1]
        ),
        Value::UInt(0x0100_0001)
    );
    assert_eq!(
        decode(&Layout::Str { size: 8 }, b"ab\0cd\0\0\0"),
        Value::str("ab")
    );
    // Unterminated: the buffer size bounds it, and bpftrace's trailer says
    // it was cut (`..` unless `str_trunc_trailer` says; the cli sets it).
    assert_eq!(
        decode(&Layout::Str { size: 3 }, b"abcdef"),
        Value::str("abc..")
    );
    // A short record (missing bytes read as zero) is not a cut string.
    assert_eq!(decode(&Layout::Str { size: 8 }, b"abc"), Value::str("abc"));
}

#[test]
fn per_cpu_values_merge() {
    let merge = |agg, cpus: Vec<Vec<u64>>| {
        let per_cpu = cpus.iter().map(|c| le_bytes(c)).collect();
        decode_map(
            &spec(None, MapValue::Agg(agg)),
            &[(le_bytes(&[0]), per_cpu)],
        )
        .entries[0]
            .value
            .clone()
    };
    assert_eq!(
        merge(Aggregation::Count, vec![vec![2], vec![3]]),
        MapEntryValue::Count(5)
    );
    let neg = |v: i64| v as u64;
    assert_eq!(
        merge(
            Aggregation::Max { signed: true },
            vec![vec![neg(-9), 1], vec![0, 0], vec![neg(-4), 1]]
        ),
        MapEntryValue::Max(Integer::Signed(-4))
    );
    assert_eq!(
        merge(
            Aggregation::Min { signed: false },
            vec![vec![0, 0], vec![8, 1], vec![6, 1]]
        ),
        MapEntryValue::Min(Integer::Unsigned(6))
    );
    assert_eq!(
        merge(
            Aggregation::Avg { signed: true },
            vec![vec![1, neg(-7)], vec![2, 1]]
        ),
        MapEntryValue::Avg {
            count: 3,
            total: -6
        }
    );
}

#[test]
fn count_maps_sort_by_value_keeping_kernel_order_for_ties() {
    let dump = decode_map(
        &spec(Some(Layout::i64()), MapValue::Agg(Aggregation::Count)),
        &[
            (le_bytes(&[3]), vec![le_bytes(&[5])]),
            (le_bytes(&[9]), vec![le_bytes(&[1])]),
            (le_bytes(&[1]), vec![le_bytes(&[5])]),
        ],
    );
    assert_eq!(
        keys(&dump),
        [[Value::Int(9)], [Value::Int(3)], [Value::Int(1)]]
    );
}

#[test]
fn hist_ties_follow_key_bytes_like_bpftraces_std_map() {
    let mut one = vec![0u64; 66];
    one[3] = 1;
    let dump = decode_map(
        &spec(
            Some(Layout::i64()),
            MapValue::Agg(Aggregation::Hist { bits: 0 }),
        ),
        &[
            (le_bytes(&[1]), vec![le_bytes(&one)]),
            // 256 is [0, 1, 0, ...] little-endian: before 1 in byte order.
            (le_bytes(&[256]), vec![le_bytes(&one)]),
        ],
    );
    assert_eq!(keys(&dump), [[Value::Int(256)], [Value::Int(1)]]);
}

#[test]
fn non_integer_maps_sort_by_key_arguments() {
    let key = Layout::tuple([Layout::Str { size: 4 }, Layout::i64()]);
    let entry = |text: &[u8; 4], n: i64| {
        let mut bytes = text.to_vec();
        bytes.extend([0; 4]);
        bytes.extend(n.to_le_bytes());
        (bytes, vec![b"v\0".to_vec()])
    };
    let dump = decode_map(
        &spec(Some(key), MapValue::Plain(Layout::Str { size: 2 })),
        &[
            entry(b"b\0\0\0", 1),
            entry(b"a\0\0\0", -1),
            entry(b"a\0\0\0", 2),
        ],
    );
    // Integers compare as signed integers (bpftrace 0.17 compared them
    // unsigned and put -1 last).
    assert_eq!(
        keys(&dump),
        [
            [Value::str("a"), Value::Int(-1)],
            [Value::str("a"), Value::Int(2)],
            [Value::str("b"), Value::Int(1)],
        ]
    );
}

#[test]
fn validate_reports_kinds_and_problems() {
    assert_eq!(
        validate("%-5d %s %llx %r %c %p 100%%\n"),
        Ok(vec![
            ArgKind::Integer,
            ArgKind::String,
            ArgKind::Integer,
            ArgKind::Buffer,
            ArgKind::Integer,
            ArgKind::Integer,
        ])
    );
    // Text after the last conversion is printed raw, so anything goes there.
    assert_eq!(validate("100% %f done"), Ok(vec![]));
    let err = validate("%f %d").unwrap_err();
    assert_eq!(err.offset, 0);
    let err = validate("x %+d %d").unwrap_err();
    assert_eq!(err.offset, 2);
    assert!(validate("%5s|%-3d").is_ok());
}

#[test]
fn sinks_survive_absurd_values() {
    use output::{JsonSink, MapDump, MapEntry, MapKind, Sink, TextSink};
    let mut hist = vec![u64::MAX; 66];
    hist[5] = 1 << 31;
    let values = [
        MapEntryValue::Hist(hist),
        MapEntryValue::Lhist {
            min: i64::MIN,
            max: i64::MAX,
            step: 0,
            buckets: vec![1; 4],
        },
        MapEntryValue::Lhist {
            min: i64::MAX,
            max: i64::MIN,
            step: -1,
            buckets: vec![u64::MAX; 3],
        },
        MapEntryValue::Avg {
            count: u64::MAX,
            total: i64::MIN,
        },
        MapEntryValue::Sum(Integer::Signed(i64::MIN)),
    ];
    for value in values {
        let map = MapDump {
            name: "@x".to_string(),
            kind: MapKind::Hist,
            keyed: false,
            entries: vec![MapEntry { key: vec![], value }],
        };
        TextSink::new(Vec::new())
            .map(&map, u64::MAX, u64::MAX)
            .unwrap();
        JsonSink::new(Vec::new()).map(&map, 1, 0).unwrap();
    }
}

#[test]
fn enum_values_print_their_names_in_text_and_numbers_in_json() {
    let def = std::sync::Arc::new(abi::EnumDef {
        name: "Foo".into(),
        variants: vec![(1, "ONE".into()), (99999, "OTHER".into())],
    });
    let layout = Layout::tuple([
        Layout::Enum {
            size: 8,
            def: def.clone(),
        },
        Layout::Enum { size: 4, def },
    ]);
    let bytes = [1u64.to_le_bytes(), 7u64.to_le_bytes()].concat();
    let value = decode(&layout, &bytes);
    // An enumerator's value prints as its name; one no enumerator has, as the number.
    assert_eq!(output::text::value_text(&value), b"(ONE, 7)");
    assert_eq!(output::json::value_json(&value, 1), b"[1,7]");
}
