//! Maps printed through flat buffers (`merge_entry` while reading, `FlatMap`
//! sorted by index and decoded entry by entry) print the same bytes as
//! `decode_map_with` followed by `Sink::map`, in text and JSON, for every
//! kind of key and value, ties, per-CPU merges, `top` and `div`.

use abi::{Aggregation, HIST_BUCKETS, Layout, MapSpec, MapValue};
use output::{
    FlatMap, JsonSink, RawEntries, Sink, TextSink, decode_map_with, merge_entry, merged_value_size,
};

/// xorshift64*: deterministic data without a dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    /// Few distinct values, so that ties are common; some negative.
    fn word(&mut self) -> u64 {
        match self.below(6) {
            0 => 0,
            1 => (self.below(4) as i64 - 2) as u64,
            2 => u64::MAX - self.below(3),
            _ => self.below(5),
        }
    }

    fn bytes(&mut self, layout: &Layout) -> Vec<u8> {
        let size = layout.size() as usize;
        let mut out = vec![0u8; size];
        match layout {
            Layout::Str { .. } => {
                let len = self.below(size as u64 + 1) as usize;
                for b in out.iter_mut().take(len) {
                    *b = b"ab\xc3z"[self.below(4) as usize];
                }
            }
            Layout::Tuple { fields, .. } => {
                for f in fields {
                    let part = self.bytes(&f.layout);
                    let at = f.offset as usize;
                    out[at..at + part.len()].copy_from_slice(&part);
                }
            }
            _ => {
                let w = self.word().to_le_bytes();
                let n = size.min(8);
                out[..n].copy_from_slice(&w[..n]);
            }
        }
        out
    }
}

fn spec(key: Option<Layout>, value: MapValue) -> MapSpec {
    MapSpec {
        name: "@m\"x".to_string(),
        bpf_name: "m".to_string(),
        key,
        value,
        max_entries: 64,
    }
}

/// Per-CPU value bytes for one entry of `value`.
fn per_cpu(rng: &mut Rng, value: &MapValue) -> Vec<Vec<u8>> {
    match value {
        MapValue::Plain(layout) => vec![rng.bytes(layout)],
        MapValue::Agg(agg) => {
            let words = merged_value_size(value, 0) / 8;
            (0..3)
                .map(|_| {
                    let mut cpu: Vec<u8> = (0..words)
                        .flat_map(|i| {
                            let w = match agg {
                                // The `set` word of min/max.
                                Aggregation::Min { .. } | Aggregation::Max { .. } if i == 1 => {
                                    rng.below(2)
                                }
                                _ if rng.below(3) == 0 => 0,
                                _ => rng.word(),
                            };
                            w.to_le_bytes()
                        })
                        .collect();
                    if rng.below(8) == 0 {
                        cpu.iter_mut().for_each(|b| *b = 0);
                    }
                    cpu
                })
                .collect()
        }
    }
}

fn old_path(spec: &MapSpec, entries: &[(Vec<u8>, Vec<Vec<u8>>)], zeroed: bool) -> Vec<Vec<u8>> {
    let dump = decode_map_with(spec, entries, zeroed);
    let mut text = TextSink::new(Vec::new());
    let mut json = JsonSink::new(Vec::new());
    for (top, div) in CASES {
        text.map(&dump, top, div).unwrap();
        json.map(&dump, top, div).unwrap();
    }
    vec![text.into_inner(), json.into_inner()]
}

fn new_path(spec: &MapSpec, entries: &[(Vec<u8>, Vec<Vec<u8>>)], zeroed: bool) -> Vec<Vec<u8>> {
    let key_size = spec.key_size() as usize;
    let value_size = merged_value_size(&spec.value, entries.first().map_or(0, |e| e.1[0].len()));
    let mut keys = Vec::new();
    let mut values = Vec::new();
    for (key, cpus) in entries {
        let mut merged = vec![0u8; value_size];
        if merge_entry(spec, zeroed, cpus.iter().map(Vec::as_slice), &mut merged) {
            keys.extend_from_slice(key);
            values.extend_from_slice(&merged);
        }
    }
    let raw = RawEntries {
        keys: &keys,
        key_size,
        values: &values,
        value_size,
    };
    let mut text = TextSink::new(Vec::new());
    let mut json = JsonSink::new(Vec::new());
    for (top, div) in CASES {
        text.flat_map(&mut FlatMap::new(spec, raw, None), top, div)
            .unwrap();
        json.flat_map(&mut FlatMap::new(spec, raw, None), top, div)
            .unwrap();
    }
    vec![text.into_inner(), json.into_inner()]
}

const CASES: [(u64, u64); 4] = [(0, 0), (2, 0), (0, 3), (1, 1)];

fn values() -> Vec<MapValue> {
    let mut out: Vec<MapValue> = [
        Aggregation::Count,
        Aggregation::Sum { signed: true },
        Aggregation::Sum { signed: false },
        Aggregation::Min { signed: true },
        Aggregation::Min { signed: false },
        Aggregation::Max { signed: true },
        Aggregation::Max { signed: false },
        Aggregation::Avg { signed: true },
        Aggregation::Stats { signed: true },
        Aggregation::Hist { bits: 0 },
        Aggregation::Lhist {
            min: -2,
            max: 6,
            step: 2,
        },
    ]
    .into_iter()
    .map(MapValue::Agg)
    .collect();
    out.extend(
        [
            Layout::i64(),
            Layout::u64(),
            Layout::Int {
                size: 4,
                signed: true,
            },
            Layout::Str { size: 4 },
            Layout::tuple([Layout::i64(), Layout::Str { size: 3 }]),
            Layout::Pointer,
        ]
        .into_iter()
        .map(MapValue::Plain),
    );
    out
}

fn keys() -> Vec<Layout> {
    vec![
        Layout::i64(),
        Layout::u64(),
        Layout::Int {
            size: 4,
            signed: false,
        },
        Layout::Str { size: 3 },
        Layout::Pointer,
        Layout::tuple([Layout::Str { size: 2 }, Layout::i64()]),
        Layout::tuple([
            Layout::Int {
                size: 4,
                signed: true,
            },
            Layout::Str { size: 2 },
            Layout::u64(),
        ]),
    ]
}

#[test]
fn keyed_maps_print_the_same_bytes() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for value in values() {
        for key in keys() {
            let spec = spec(Some(key.clone()), value.clone());
            for len in [0, 1, 2, 7, 40] {
                let entries: Vec<(Vec<u8>, Vec<Vec<u8>>)> = (0..len)
                    .map(|_| (rng.bytes(&key), per_cpu(&mut rng, &value)))
                    .collect();
                assert_eq!(
                    new_path(&spec, &entries, false),
                    old_path(&spec, &entries, false),
                    "{value:?} keyed by {key:?}, {len} entries"
                );
            }
        }
    }
}

#[test]
fn keyless_maps_print_the_same_bytes() {
    let mut rng = Rng(7);
    for value in values() {
        let spec = spec(None, value.clone());
        for zeroed in [false, true] {
            for round in 0..12 {
                let entries: Vec<(Vec<u8>, Vec<Vec<u8>>)> = if round == 0 {
                    Vec::new()
                } else {
                    let mut cpus = per_cpu(&mut rng, &value);
                    if round == 1 {
                        cpus.iter_mut().flatten().for_each(|b| *b = 0);
                    }
                    vec![(vec![0; 8], cpus)]
                };
                assert_eq!(
                    new_path(&spec, &entries, zeroed),
                    old_path(&spec, &entries, zeroed),
                    "keyless {value:?}, zeroed {zeroed}, round {round}"
                );
            }
        }
    }
}

#[test]
fn merged_histograms_keep_every_bucket() {
    let value = MapValue::Agg(Aggregation::Hist { bits: 0 });
    assert_eq!(merged_value_size(&value, 3), HIST_BUCKETS as usize * 8);
    let cpus: Vec<Vec<u8>> = vec![vec![1; HIST_BUCKETS as usize * 8], vec![2; 16]];
    let mut merged = vec![0u8; merged_value_size(&value, 0)];
    output::merge_into(&value, cpus.iter().map(Vec::as_slice), &mut merged);
    assert_eq!(
        output::merge_value(&value, &[merged.as_slice()]),
        output::merge_value(&value, &cpus)
    );
}
