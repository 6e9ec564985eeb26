//! pprof's `profile.proto` (github.com/google/pprof, proto/profile.proto),
//! gzipped, as `go tool pprof`, Parca and Pyroscope read it. The messages
//! are declared here with prost's derive (the fields weft fills, with the
//! proto's field numbers), so no protoc runs at build time.
//!
//! Sample types: on-CPU `samples/count` (shown by default) and
//! `cpu/nanoseconds` (a sample is one timer period, `1e9 / HZ` ns); off-CPU `offcpu/nanoseconds`; a
//! script's map `samples/count` for `count()`, else `value/count`. Each
//! sample is labelled with its `comm` and `pid`. Every function is one
//! location (names only: weft symbolizes, pprof need not), kernel functions
//! in the `[kernel.kallsyms]` mapping.

use std::collections::HashMap;
use std::io::{self, Write};

use flate2::Compression;
use flate2::write::GzEncoder;
use prost::Message;

use super::{FrameKind, Profile, ProfileFrame, ProfileKind};

#[derive(Clone, PartialEq, prost::Message)]
pub struct ProfileProto {
    #[prost(message, repeated, tag = "1")]
    pub sample_type: Vec<ValueType>,
    #[prost(message, repeated, tag = "2")]
    pub sample: Vec<Sample>,
    #[prost(message, repeated, tag = "3")]
    pub mapping: Vec<Mapping>,
    #[prost(message, repeated, tag = "4")]
    pub location: Vec<Location>,
    #[prost(message, repeated, tag = "5")]
    pub function: Vec<Function>,
    #[prost(string, repeated, tag = "6")]
    pub string_table: Vec<String>,
    #[prost(int64, tag = "9")]
    pub time_nanos: i64,
    #[prost(int64, tag = "10")]
    pub duration_nanos: i64,
    #[prost(message, optional, tag = "11")]
    pub period_type: Option<ValueType>,
    #[prost(int64, tag = "12")]
    pub period: i64,
    #[prost(int64, repeated, tag = "13")]
    pub comment: Vec<i64>,
    #[prost(int64, tag = "14")]
    pub default_sample_type: i64,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct ValueType {
    #[prost(int64, tag = "1")]
    pub r#type: i64,
    #[prost(int64, tag = "2")]
    pub unit: i64,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Sample {
    /// Innermost first.
    #[prost(uint64, repeated, tag = "1")]
    pub location_id: Vec<u64>,
    #[prost(int64, repeated, tag = "2")]
    pub value: Vec<i64>,
    #[prost(message, repeated, tag = "3")]
    pub label: Vec<Label>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Label {
    #[prost(int64, tag = "1")]
    pub key: i64,
    #[prost(int64, tag = "2")]
    pub str: i64,
    #[prost(int64, tag = "3")]
    pub num: i64,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Mapping {
    #[prost(uint64, tag = "1")]
    pub id: u64,
    #[prost(int64, tag = "5")]
    pub filename: i64,
    #[prost(bool, tag = "7")]
    pub has_functions: bool,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Location {
    #[prost(uint64, tag = "1")]
    pub id: u64,
    #[prost(uint64, tag = "2")]
    pub mapping_id: u64,
    #[prost(uint64, tag = "3")]
    pub address: u64,
    #[prost(message, repeated, tag = "4")]
    pub line: Vec<Line>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Line {
    #[prost(uint64, tag = "1")]
    pub function_id: u64,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Function {
    #[prost(uint64, tag = "1")]
    pub id: u64,
    #[prost(int64, tag = "2")]
    pub name: i64,
    #[prost(int64, tag = "3")]
    pub system_name: i64,
}

/// pprof's string table: index 0 is the empty string.
#[derive(Default)]
struct Strings {
    table: Vec<String>,
    index: HashMap<String, i64>,
}

impl Strings {
    fn new() -> Strings {
        let mut s = Strings::default();
        s.get("");
        s
    }

    fn get(&mut self, text: &str) -> i64 {
        if let Some(&i) = self.index.get(text) {
            return i;
        }
        let i = self.table.len() as i64;
        self.table.push(text.to_string());
        self.index.insert(text.to_string(), i);
        i
    }
}

/// Builds the protobuf message of `profile`.
pub fn to_proto(profile: &Profile) -> ProfileProto {
    let mut strings = Strings::new();
    let vt = |s: &mut Strings, t: &str, u: &str| ValueType {
        r#type: s.get(t),
        unit: s.get(u),
    };
    let (sample_type, period_type, period) = match profile.info.kind {
        ProfileKind::OnCpu { period_ns } => (
            vec![
                vt(&mut strings, "samples", "count"),
                vt(&mut strings, "cpu", "nanoseconds"),
            ],
            Some(vt(&mut strings, "cpu", "nanoseconds")),
            period_ns,
        ),
        ProfileKind::OffCpu => (
            vec![vt(&mut strings, "offcpu", "nanoseconds")],
            Some(vt(&mut strings, "offcpu", "nanoseconds")),
            1,
        ),
        ProfileKind::Values { counts } => {
            let t = if counts { "samples" } else { "value" };
            (
                vec![vt(&mut strings, t, "count")],
                Some(vt(&mut strings, t, "count")),
                1,
            )
        }
    };
    let (comm_key, pid_key) = (strings.get("comm"), strings.get("pid"));
    let mut mappings: Vec<Mapping> = Vec::new();
    let mut mapping_ids: HashMap<String, u64> = HashMap::new();
    let mut functions: Vec<Function> = Vec::new();
    let mut locations: Vec<Location> = Vec::new();
    let mut location_ids: HashMap<(String, FrameKind), u64> = HashMap::new();
    let mut location_of = |frame: &ProfileFrame, strings: &mut Strings| -> u64 {
        let name = super::folded::escape(frame.name.as_deref().unwrap_or("[unknown]")).into_owned();
        if let Some(&id) = location_ids.get(&(name.clone(), frame.kind)) {
            return id;
        }
        let module = match frame.kind {
            FrameKind::Kernel => Some(
                frame
                    .module
                    .clone()
                    .unwrap_or_else(|| "[kernel.kallsyms]".into()),
            ),
            _ => frame.module.clone(),
        };
        let mapping_id = module.map_or(0, |m| {
            *mapping_ids.entry(m.clone()).or_insert_with(|| {
                let id = mappings.len() as u64 + 1;
                mappings.push(Mapping {
                    id,
                    filename: strings.get(&m),
                    has_functions: true,
                });
                id
            })
        });
        let function_id = functions.len() as u64 + 1;
        let n = strings.get(&name);
        functions.push(Function {
            id: function_id,
            name: n,
            system_name: n,
        });
        let id = locations.len() as u64 + 1;
        locations.push(Location {
            id,
            mapping_id,
            address: frame.addr,
            line: vec![Line { function_id }],
        });
        location_ids.insert((name, frame.kind), id);
        id
    };
    // User frames first: pprof names the profile after its first mapping.
    for s in &profile.samples {
        for f in &s.user {
            location_of(f, &mut strings);
        }
    }
    let mut samples = Vec::with_capacity(profile.samples.len());
    for s in profile.samples.iter().filter(|s| s.value > 0) {
        let location_id = s
            .kernel
            .iter()
            .chain(&s.user)
            .map(|f| location_of(f, &mut strings))
            .collect();
        let weight = i64::try_from(s.value).unwrap_or(i64::MAX);
        let value = match profile.info.kind {
            ProfileKind::OnCpu { period_ns } => {
                vec![weight, weight.saturating_mul(period_ns as i64)]
            }
            ProfileKind::OffCpu => vec![weight.saturating_mul(1000)],
            ProfileKind::Values { .. } => vec![weight],
        };
        let mut label = Vec::new();
        if let Some(comm) = &s.comm {
            label.push(Label {
                key: comm_key,
                str: strings.get(comm),
                num: 0,
            });
        }
        if let Some(pid) = s.pid {
            label.push(Label {
                key: pid_key,
                str: 0,
                num: i64::from(pid),
            });
        }
        samples.push(Sample {
            location_id,
            value,
            label,
        });
    }
    let comment = vec![strings.get(&profile.info.command_line)];
    // pprof shows sample counts first (as folded stacks do), `-sample_index=cpu` the time.
    let default_sample_type = sample_type.first().map_or(0, |t| t.r#type);
    ProfileProto {
        sample_type,
        sample: samples,
        mapping: mappings,
        location: locations,
        function: functions,
        time_nanos: profile.info.start_unix_ns as i64,
        duration_nanos: profile.info.duration_ns as i64,
        period_type,
        period: period as i64,
        comment,
        default_sample_type,
        string_table: strings.table,
    }
}

/// Writes `profile` as a gzipped `profile.proto` (the `.pb.gz` files pprof reads).
pub fn write_gz<W: Write>(profile: &Profile, out: W) -> io::Result<()> {
    write_proto_gz(&to_proto(profile), out)
}

/// Writes built messages, gzipped.
pub fn write_proto_gz<W: Write>(proto: &ProfileProto, out: W) -> io::Result<()> {
    let bytes = proto.encode_to_vec();
    let mut gz = GzEncoder::new(out, Compression::default());
    gz.write_all(&bytes)?;
    gz.finish()?.flush()
}

#[cfg(test)]
mod tests {
    use super::super::{ProfileInfo, ProfileSample};
    use super::*;
    use std::io::Read;

    fn frame(name: &str, kind: FrameKind) -> ProfileFrame {
        ProfileFrame {
            name: Some(name.into()),
            kind,
            addr: 0x10,
            module: None,
        }
    }

    fn profile(kind: ProfileKind) -> Profile {
        Profile {
            info: ProfileInfo {
                kind,
                title: "t".into(),
                command_line: "weft profile -F 499".into(),
                start_unix_ns: 5,
                duration_ns: 1_000_000_000,
            },
            samples: vec![
                ProfileSample {
                    comm: Some("weftwl".into()),
                    pid: Some(42),
                    ints: Vec::new(),
                    user: vec![
                        frame("spin", FrameKind::User),
                        frame("main", FrameKind::User),
                    ],
                    kernel: vec![frame("schedule", FrameKind::Kernel)],
                    value: 3,
                    map: None,
                },
                ProfileSample {
                    comm: Some("weftwl".into()),
                    pid: Some(42),
                    ints: Vec::new(),
                    user: vec![frame("main", FrameKind::User)],
                    kernel: Vec::new(),
                    value: 2,
                    map: None,
                },
            ],
        }
    }

    fn string(p: &ProfileProto, i: i64) -> &str {
        &p.string_table[i as usize]
    }

    #[test]
    fn on_cpu_samples_and_cpu_time() {
        let p = to_proto(&profile(ProfileKind::OnCpu {
            period_ns: 2_004_008,
        }));
        assert_eq!(p.string_table[0], "");
        let types: Vec<(&str, &str)> = p
            .sample_type
            .iter()
            .map(|t| (string(&p, t.r#type), string(&p, t.unit)))
            .collect();
        assert_eq!(types, [("samples", "count"), ("cpu", "nanoseconds")]);
        assert_eq!(p.period, 2_004_008);
        assert_eq!(p.sample[0].value, [3, 3 * 2_004_008]);
        // Innermost first: kernel, then user.
        let names: Vec<&str> = p.sample[0]
            .location_id
            .iter()
            .map(|&id| {
                let loc = &p.location[id as usize - 1];
                let f = &p.function[loc.line[0].function_id as usize - 1];
                string(&p, f.name)
            })
            .collect();
        assert_eq!(names, ["schedule", "spin", "main"]);
        // `main` is one location shared by both samples.
        assert_eq!(p.location.len(), 3);
        let kernel = &p.location[p.sample[0].location_id[0] as usize - 1];
        assert_eq!(
            string(&p, p.mapping[kernel.mapping_id as usize - 1].filename),
            "[kernel.kallsyms]"
        );
        assert_eq!(string(&p, p.sample[0].label[0].str), "weftwl");
        assert_eq!(p.sample[0].label[1].num, 42);
        assert_eq!(string(&p, p.comment[0]), "weft profile -F 499");
    }

    #[test]
    fn off_cpu_is_nanoseconds() {
        let p = to_proto(&profile(ProfileKind::OffCpu));
        assert_eq!(p.sample_type.len(), 1);
        assert_eq!(string(&p, p.sample_type[0].r#type), "offcpu");
        assert_eq!(p.sample[0].value, [3000]);
    }

    #[test]
    fn gzipped_bytes_decode_back() {
        let prof = profile(ProfileKind::OnCpu { period_ns: 1000 });
        let mut gz = Vec::new();
        write_gz(&prof, &mut gz).unwrap();
        assert_eq!(&gz[..2], &[0x1f, 0x8b]);
        let mut raw = Vec::new();
        flate2::read::GzDecoder::new(&gz[..])
            .read_to_end(&mut raw)
            .unwrap();
        let back = ProfileProto::decode(&raw[..]).unwrap();
        assert_eq!(back, to_proto(&prof));
    }
}
