//! OTLP (OpenTelemetry protocol) encoding, without any I/O: stream records
//! as spans, and metric samples as OTLP metrics. The cli batches, posts and
//! retries (`cli/src/export/otlp.rs`).
//!
//! A stream record becomes one root span named after the stream, from
//! begin to end, and one child span per stage after the first it reached,
//! from the stage reached before it to this one (so a syscall's
//! `enter → exit` shows as the exit stage's span; a stage hit more than
//! once says how often and when last). Attributes use the
//! OpenTelemetry semantic conventions where they exist: `process.pid`,
//! `thread.id`, `thread.name` (the task's `comm`), `process.linux.cgroup`
//! (the cgroup's path, when known) and `linux.cgroup.id`; each captured
//! field is an attribute of its own name. An incomplete record (expired
//! or still open at exit) ends at its last stage and has an error status.

pub mod proto;

use proto::{any_value, number_data_point};

use crate::metrics::{HistogramSample, MetricKind, SampleValue};
use crate::stream::StreamRecord;
use crate::value::Value;

/// Random trace and span ids (splitmix64: ids only need to be unique, and
/// drawing one costs a few nanoseconds).
#[derive(Clone, Debug)]
pub struct SpanIds {
    state: u64,
}

impl SpanIds {
    pub fn new(seed: u64) -> SpanIds {
        SpanIds { state: seed }
    }

    fn next(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// 16 bytes, never all zero (which OTLP reserves for "no id").
    pub fn trace_id(&mut self) -> Vec<u8> {
        let mut id = Vec::with_capacity(16);
        id.extend_from_slice(&self.next().max(1).to_be_bytes());
        id.extend_from_slice(&self.next().to_be_bytes());
        id
    }

    /// 8 bytes, never all zero.
    pub fn span_id(&mut self) -> Vec<u8> {
        self.next().max(1).to_be_bytes().to_vec()
    }
}

/// An attribute.
pub fn kv(key: &str, value: any_value::Value) -> proto::KeyValue {
    proto::KeyValue {
        key: key.to_string(),
        value: Some(proto::AnyValue { value: Some(value) }),
    }
}

/// A string attribute.
pub fn kv_str(key: &str, value: impl Into<String>) -> proto::KeyValue {
    kv(key, any_value::Value::StringValue(value.into()))
}

/// A decoded value as an attribute value: integers as ints (an unsigned
/// value above `i64::MAX` as its bit pattern), strings as strings (invalid
/// UTF-8 replaced), booleans as booleans, anything else as `print()` shows it.
pub fn attribute_value(value: &Value) -> any_value::Value {
    match value {
        Value::Int(v) => any_value::Value::IntValue(*v),
        Value::UInt(v) => any_value::Value::IntValue(*v as i64),
        Value::Bool(b) => any_value::Value::BoolValue(*b),
        Value::Str(bytes) => {
            any_value::Value::StringValue(String::from_utf8_lossy(bytes).into_owned())
        }
        other => any_value::Value::StringValue(crate::metrics::label_value(other)),
    }
}

/// The instrumentation scope of everything weft sends.
pub fn scope() -> proto::InstrumentationScope {
    proto::InstrumentationScope {
        name: "weft".into(),
        version: env!("CARGO_PKG_VERSION").into(),
    }
}

/// Turns CLOCK_MONOTONIC nanoseconds (the kernel's `bpf_ktime_get_ns`)
/// into Unix-epoch nanoseconds.
#[derive(Clone, Copy, Debug)]
pub struct Clock {
    /// `CLOCK_REALTIME - CLOCK_MONOTONIC`, read once.
    pub offset_ns: i128,
}

impl Clock {
    pub fn unix_ns(self, monotonic_ns: u64) -> u64 {
        (i128::from(monotonic_ns) + self.offset_ns).clamp(0, i128::from(u64::MAX)) as u64
    }
}

/// Appends the spans of one stream record to `out`: the root, then one
/// child per stage after the first reached. `cgroup_path` is the path of
/// the record's cgroup, when the caller could find it.
pub fn record_spans(
    record: &StreamRecord<'_>,
    clock: Clock,
    cgroup_path: Option<&str>,
    ids: &mut SpanIds,
    out: &mut Vec<proto::Span>,
) {
    let trace_id = ids.trace_id();
    let root_id = ids.span_id();
    let end_ns = if record.complete {
        record.end_ns
    } else {
        record.last_reached_ns()
    };
    let mut attributes = Vec::with_capacity(5 + record.fields.len());
    attributes.push(kv(
        "process.pid",
        any_value::Value::IntValue(i64::from(record.pid)),
    ));
    attributes.push(kv(
        "thread.id",
        any_value::Value::IntValue(i64::from(record.tid)),
    ));
    attributes.push(kv_str("thread.name", String::from_utf8_lossy(record.comm)));
    if record.cgroup != 0 {
        attributes.push(kv(
            "linux.cgroup.id",
            any_value::Value::IntValue(record.cgroup as i64),
        ));
    }
    if let Some(path) = cgroup_path {
        attributes.push(kv_str("process.linux.cgroup", path));
    }
    for (name, value) in &record.fields {
        attributes.push(kv(name, attribute_value(value)));
    }
    let status = (!record.complete).then(|| proto::Status {
        message:
            "incomplete: the instance never reached its end (timed out, evicted, or open at exit)"
                .into(),
        code: proto::STATUS_CODE_ERROR,
    });
    out.push(proto::Span {
        trace_id: trace_id.clone(),
        span_id: root_id.clone(),
        parent_span_id: Vec::new(),
        name: record.stream.to_string(),
        kind: proto::SPAN_KIND_INTERNAL,
        start_time_unix_nano: clock.unix_ns(record.start_ns),
        end_time_unix_nano: clock.unix_ns(end_ns),
        attributes,
        status,
    });
    let mut previous: Option<u64> = None;
    for stage in &record.stages {
        if stage.ts_ns == 0 {
            continue;
        }
        let Some(from) = previous.replace(stage.ts_ns) else {
            continue;
        };
        let mut attributes = Vec::new();
        if stage.hits > 1 {
            attributes.push(kv(
                "weft.stage.hits",
                any_value::Value::IntValue(stage.hits as i64),
            ));
            if stage.last_ns > stage.ts_ns {
                attributes.push(kv(
                    "weft.stage.last_time_unix_nano",
                    any_value::Value::IntValue(clock.unix_ns(stage.last_ns) as i64),
                ));
            }
        }
        out.push(proto::Span {
            trace_id: trace_id.clone(),
            span_id: ids.span_id(),
            parent_span_id: root_id.clone(),
            name: stage.name.to_string(),
            kind: proto::SPAN_KIND_INTERNAL,
            start_time_unix_nano: clock.unix_ns(from),
            end_time_unix_nano: clock.unix_ns(stage.ts_ns),
            attributes,
            status: None,
        });
    }
}

/// The body of one `POST /v1/traces`.
pub fn traces_request(
    resource: Vec<proto::KeyValue>,
    spans: Vec<proto::Span>,
) -> proto::ExportTraceServiceRequest {
    proto::ExportTraceServiceRequest {
        resource_spans: vec![proto::ResourceSpans {
            resource: Some(proto::Resource {
                attributes: resource,
            }),
            scope_spans: vec![proto::ScopeSpans {
                scope: Some(scope()),
                spans,
            }],
        }],
    }
}

/// One point of a metric: its attributes and value.
pub struct Point {
    pub attributes: Vec<proto::KeyValue>,
    pub value: SampleValue,
}

/// A metric family as OTLP: counters as monotonic cumulative sums, gauges
/// as gauges, histograms with explicit bounds (the `le`s, `+Inf` left out:
/// OTLP's last bucket is everything above the bounds); `start_ns` is when
/// the counting began, `now_ns` the time of the snapshot (Unix epoch).
pub fn metric(
    name: &str,
    help: &str,
    unit: &str,
    kind: MetricKind,
    points: Vec<Point>,
    start_ns: u64,
    now_ns: u64,
) -> proto::Metric {
    let number = |p: Point| proto::NumberDataPoint {
        attributes: p.attributes,
        start_time_unix_nano: start_ns,
        time_unix_nano: now_ns,
        value: Some(match p.value {
            SampleValue::Unsigned(v) => number_data_point::Value::AsInt(v as i64),
            SampleValue::Signed(v) => number_data_point::Value::AsInt(v),
            SampleValue::Float(v) => number_data_point::Value::AsDouble(v),
            SampleValue::Histogram(h) => number_data_point::Value::AsInt(h.count as i64),
        }),
    };
    let data = match kind {
        MetricKind::Counter => proto::metric::Data::Sum(proto::Sum {
            data_points: points.into_iter().map(number).collect(),
            aggregation_temporality: proto::CUMULATIVE,
            is_monotonic: true,
        }),
        MetricKind::Gauge => proto::metric::Data::Gauge(proto::Gauge {
            data_points: points.into_iter().map(number).collect(),
        }),
        MetricKind::Histogram => proto::metric::Data::Histogram(proto::Histogram {
            data_points: points
                .into_iter()
                .map(|p| match p.value {
                    SampleValue::Histogram(h) => {
                        histogram_point(p.attributes, &h, start_ns, now_ns)
                    }
                    other => histogram_point(
                        p.attributes,
                        &HistogramSample {
                            buckets: Vec::new(),
                            sum: other.as_f64(),
                            count: 1,
                        },
                        start_ns,
                        now_ns,
                    ),
                })
                .collect(),
            aggregation_temporality: proto::CUMULATIVE,
        }),
    };
    proto::Metric {
        name: name.to_string(),
        description: help.to_string(),
        unit: unit.to_string(),
        data: Some(data),
    }
}

fn histogram_point(
    attributes: Vec<proto::KeyValue>,
    h: &HistogramSample,
    start_ns: u64,
    now_ns: u64,
) -> proto::HistogramDataPoint {
    let mut explicit_bounds = Vec::with_capacity(h.buckets.len());
    let mut bucket_counts = Vec::with_capacity(h.buckets.len() + 1);
    let mut counted = 0u64;
    for &(le, count) in &h.buckets {
        if le.is_infinite() {
            break;
        }
        explicit_bounds.push(le);
        bucket_counts.push(count);
        counted = counted.wrapping_add(count);
    }
    bucket_counts.push(h.count.saturating_sub(counted));
    proto::HistogramDataPoint {
        attributes,
        start_time_unix_nano: start_ns,
        time_unix_nano: now_ns,
        count: h.count,
        sum: (!h.sum.is_nan()).then_some(h.sum),
        bucket_counts,
        explicit_bounds,
    }
}

/// The body of one `POST /v1/metrics`.
pub fn metrics_request(
    resource: Vec<proto::KeyValue>,
    metrics: Vec<proto::Metric>,
) -> proto::ExportMetricsServiceRequest {
    proto::ExportMetricsServiceRequest {
        resource_metrics: vec![proto::ResourceMetrics {
            resource: Some(proto::Resource {
                attributes: resource,
            }),
            scope_metrics: vec![proto::ScopeMetrics {
                scope: Some(scope()),
                metrics,
            }],
        }],
    }
}

/// The protobuf bytes of a request.
pub fn encode(message: &impl prost::Message) -> Vec<u8> {
    message.encode_to_vec()
}

/// What a collector's reply to `/v1/traces` says it rejected, if anything.
pub fn traces_partial_success(reply: &[u8]) -> Option<proto::ExportPartialSuccess> {
    <proto::ExportTraceServiceResponse as prost::Message>::decode(reply)
        .ok()
        .and_then(|r| r.partial_success)
}

/// What a collector's reply to `/v1/metrics` says it rejected, if anything.
pub fn metrics_partial_success(reply: &[u8]) -> Option<proto::ExportPartialSuccess> {
    <proto::ExportMetricsServiceResponse as prost::Message>::decode(reply)
        .ok()
        .and_then(|r| r.partial_success)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stream::StageRecord;
    use prost::Message;

    fn record(complete: bool) -> StreamRecord<'static> {
        StreamRecord {
            stream: "read_req",
            complete,
            pid: 10,
            tid: 11,
            comm: b"weftwl",
            cgroup: 7,
            cgroup_path: None,
            sample: 1,
            start_ns: 1_000,
            end_ns: if complete { 1_500 } else { 0 },
            duration_ns: if complete { 500 } else { 0 },
            stages: vec![
                StageRecord {
                    name: "enter",
                    ts_ns: 1_000,
                    last_ns: 1_000,
                    offset_ns: 0,
                    delta_ns: 0,
                    hits: 1,
                    pid: 0,
                    tid: 0,
                    comm: b"",
                },
                StageRecord {
                    name: "middle",
                    ts_ns: 0,
                    last_ns: 0,
                    offset_ns: 0,
                    delta_ns: 0,
                    hits: 0,
                    pid: 0,
                    tid: 0,
                    comm: b"",
                },
                StageRecord {
                    name: "exit",
                    ts_ns: if complete { 1_500 } else { 1_200 },
                    last_ns: if complete { 1_500 } else { 1_300 },
                    offset_ns: if complete { 500 } else { 200 },
                    delta_ns: 0,
                    hits: 3,
                    pid: 0,
                    tid: 0,
                    comm: b"",
                },
            ],
            fields: vec![("fd", Value::Int(3)), ("path", Value::str("/tmp/x"))],
            in_order: true,
        }
    }

    fn attr<'a>(span: &'a proto::Span, key: &str) -> Option<&'a any_value::Value> {
        span.attributes
            .iter()
            .find(|a| a.key == key)
            .and_then(|a| a.value.as_ref())
            .and_then(|v| v.value.as_ref())
    }

    #[test]
    fn a_record_is_a_root_and_a_child_per_stage_reached() {
        let mut out = Vec::new();
        let clock = Clock {
            offset_ns: 1_000_000,
        };
        record_spans(
            &record(true),
            clock,
            Some("/system.slice/x"),
            &mut SpanIds::new(1),
            &mut out,
        );
        assert_eq!(out.len(), 2);
        let (root, exit) = (&out[0], &out[1]);
        assert_eq!(root.name, "read_req");
        assert!(root.parent_span_id.is_empty());
        assert_eq!(
            (root.start_time_unix_nano, root.end_time_unix_nano),
            (1_001_000, 1_001_500)
        );
        assert_eq!(root.trace_id.len(), 16);
        assert_eq!(root.span_id.len(), 8);
        assert_eq!(
            attr(root, "process.pid"),
            Some(&any_value::Value::IntValue(10))
        );
        assert_eq!(
            attr(root, "thread.id"),
            Some(&any_value::Value::IntValue(11))
        );
        assert_eq!(
            attr(root, "thread.name"),
            Some(&any_value::Value::StringValue("weftwl".into()))
        );
        assert_eq!(
            attr(root, "linux.cgroup.id"),
            Some(&any_value::Value::IntValue(7))
        );
        assert_eq!(
            attr(root, "process.linux.cgroup"),
            Some(&any_value::Value::StringValue("/system.slice/x".into()))
        );
        assert_eq!(attr(root, "fd"), Some(&any_value::Value::IntValue(3)));
        assert_eq!(
            attr(root, "path"),
            Some(&any_value::Value::StringValue("/tmp/x".into()))
        );
        assert!(root.status.is_none());
        assert_eq!(exit.name, "exit");
        assert_eq!(exit.trace_id, root.trace_id);
        assert_eq!(exit.parent_span_id, root.span_id);
        assert_ne!(exit.span_id, root.span_id);
        assert_eq!(
            (exit.start_time_unix_nano, exit.end_time_unix_nano),
            (1_001_000, 1_001_500)
        );
        assert_eq!(
            attr(exit, "weft.stage.hits"),
            Some(&any_value::Value::IntValue(3))
        );
        // Hit three times, the last at the first: no later time to say.
        assert_eq!(attr(exit, "weft.stage.last_time_unix_nano"), None);
        // It encodes, and decodes back the same.
        let req = traces_request(vec![kv_str("service.name", "weft")], out.clone());
        let bytes = req.encode_to_vec();
        assert_eq!(
            proto::ExportTraceServiceRequest::decode(&bytes[..]).unwrap(),
            req
        );
    }

    #[test]
    fn an_incomplete_record_ends_at_its_last_stage_with_an_error() {
        let mut out = Vec::new();
        record_spans(
            &record(false),
            Clock { offset_ns: 0 },
            None,
            &mut SpanIds::new(2),
            &mut out,
        );
        assert_eq!(out[0].end_time_unix_nano, 1_200);
        assert_eq!(
            out[0].status.as_ref().map(|s| s.code),
            Some(proto::STATUS_CODE_ERROR)
        );
        assert!(attr(&out[0], "process.linux.cgroup").is_none());
        assert_eq!(
            attr(&out[1], "weft.stage.last_time_unix_nano"),
            Some(&any_value::Value::IntValue(1_300))
        );
    }

    #[test]
    fn ids_are_never_zero_and_differ() {
        let mut ids = SpanIds::new(0);
        let a = ids.span_id();
        let b = ids.span_id();
        assert_ne!(a, b);
        assert_ne!(a, vec![0u8; 8]);
        assert_ne!(ids.trace_id(), vec![0u8; 16]);
    }

    #[test]
    fn histograms_leave_infinity_to_the_last_bucket() {
        let h = HistogramSample {
            buckets: vec![(127.0, 600), (255.0, 0), (4095.0, 400)],
            sum: f64::NAN,
            count: 1003,
        };
        let m = metric(
            "weft_sizes",
            "sizes",
            "By",
            MetricKind::Histogram,
            vec![Point {
                attributes: vec![],
                value: SampleValue::Histogram(h),
            }],
            1,
            2,
        );
        let Some(proto::metric::Data::Histogram(hist)) = m.data else {
            panic!()
        };
        let p = &hist.data_points[0];
        assert_eq!(p.explicit_bounds, [127.0, 255.0, 4095.0]);
        assert_eq!(p.bucket_counts, [600, 0, 400, 3]);
        assert_eq!((p.count, p.sum), (1003, None));
        // An lhist's explicit +Inf bucket becomes the overflow.
        let h = HistogramSample {
            buckets: vec![(9.0, 1), (f64::INFINITY, 2)],
            sum: 5.0,
            count: 3,
        };
        let p = histogram_point(vec![], &h, 0, 0);
        assert_eq!(
            (p.explicit_bounds.as_slice(), p.bucket_counts.as_slice()),
            (&[9.0][..], &[1, 2][..])
        );
        assert_eq!(p.sum, Some(5.0));
    }

    #[test]
    fn counters_are_monotonic_cumulative_sums() {
        let m = metric(
            "weft_calls",
            "calls",
            "1",
            MetricKind::Counter,
            vec![Point {
                attributes: vec![kv_str("comm", "weftwl")],
                value: SampleValue::Unsigned(1000),
            }],
            5,
            9,
        );
        let Some(proto::metric::Data::Sum(sum)) = m.data else {
            panic!()
        };
        assert!(sum.is_monotonic);
        assert_eq!(sum.aggregation_temporality, proto::CUMULATIVE);
        assert_eq!(
            sum.data_points[0].value,
            Some(number_data_point::Value::AsInt(1000))
        );
        assert_eq!(
            (
                sum.data_points[0].start_time_unix_nano,
                sum.data_points[0].time_unix_nano
            ),
            (5, 9)
        );
    }
}
