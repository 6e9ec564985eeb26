//! A [`Sink`] that keeps the stack-keyed maps printed at exit as profile
//! samples (their stacks already resolved on the way), and hands everything
//! on to an inner sink when there is one (a script run with `--flamegraph`
//! still prints its maps).

use std::io;

use abi::{Aggregation, MapSpec, MapValue};
use output::profile::{KeyRole, ProfileSample, key_roles, sample_from_entry};
use output::{FlatMap, MapDump, Sink, StreamRecord, Value};

/// Which maps are profiles, and the roles of their key elements.
pub type Roles = Box<dyn Fn(&MapSpec) -> Option<Vec<KeyRole>>>;

/// The roles of any script's stack-keyed `count()` or `sum()` map.
pub fn script_roles() -> Roles {
    Box::new(|spec: &MapSpec| {
        let weighs = matches!(
            spec.value,
            MapValue::Agg(Aggregation::Count | Aggregation::Sum { .. })
        );
        if weighs {
            key_roles(spec.key.as_ref())
        } else {
            None
        }
    })
}

pub struct ProfileSink<'a> {
    inner: Option<&'a mut dyn Sink>,
    roles: Roles,
    /// Maps are collected only once the run has ended (`print()` during the
    /// run would count them twice).
    at_exit: bool,
    pub samples: Vec<ProfileSample>,
    /// The stack-keyed maps seen, by name.
    pub maps: Vec<String>,
    /// What keyless count maps held at exit, by name.
    pub counts: Vec<(String, u64)>,
    /// User stacks unwound here from `send_ustack()` copies, joined to the
    /// `print()`ed samples (`weft profile`/`offcpu` without `--frame-pointers`).
    pub dwarf: Option<super::dwarf::DwarfStacks>,
}

impl<'a> ProfileSink<'a> {
    pub fn new(inner: Option<&'a mut dyn Sink>, roles: Roles) -> ProfileSink<'a> {
        ProfileSink {
            inner,
            roles,
            at_exit: false,
            samples: Vec::new(),
            maps: Vec::new(),
            counts: Vec::new(),
            dwarf: None,
        }
    }

    /// The keyless count `name` held at exit (0 if it never fired).
    pub fn count(&self, name: &str) -> u64 {
        self.counts
            .iter()
            .find(|(n, _)| n == name)
            .map_or(0, |c| c.1)
    }

    fn collect(&mut self, map: &mut FlatMap<'_>) {
        if map.spec().key.is_none() && map.spec().value == MapValue::Agg(Aggregation::Count) {
            let total = (0..map.len())
                .map(|i| match map.entry(i).value {
                    output::MapEntryValue::Count(n) => n,
                    _ => 0,
                })
                .sum();
            self.counts.push((map.name().to_string(), total));
            return;
        }
        let Some(roles) = (self.roles)(map.spec()) else {
            return;
        };
        let name = map.name().to_string();
        for i in 0..map.len() {
            let entry = map.entry(i);
            if let Some(mut sample) = sample_from_entry(&roles, &entry.key, &entry.value) {
                sample.map = Some(name.clone());
                self.samples.push(sample);
            }
        }
        self.maps.push(name);
    }
}

impl Sink for ProfileSink<'_> {
    fn attached_probes(&mut self, count: u64) -> io::Result<()> {
        match self.inner.as_deref_mut() {
            Some(s) => s.attached_probes(count),
            None => Ok(()),
        }
    }

    fn lost_events(&mut self, count: u64) -> io::Result<()> {
        match self.inner.as_deref_mut() {
            Some(s) => s.lost_events(count),
            None => {
                eprintln!("weft: {count} event(s) lost: the ring buffer was full");
                Ok(())
            }
        }
    }

    fn printf(&mut self, text: &[u8]) -> io::Result<()> {
        match self.inner.as_deref_mut() {
            Some(s) => s.printf(text),
            None => Ok(()),
        }
    }

    fn system(&mut self, output: &[u8]) -> io::Result<()> {
        match self.inner.as_deref_mut() {
            Some(s) => s.system(output),
            None => Ok(()),
        }
    }

    fn cat(&mut self, contents: &[u8]) -> io::Result<()> {
        match self.inner.as_deref_mut() {
            Some(s) => s.cat(contents),
            None => Ok(()),
        }
    }

    fn source_message(
        &mut self,
        severity: output::Severity,
        text: &[u8],
        origin: &[abi::SourcePlace],
    ) -> io::Result<()> {
        match self.inner.as_deref_mut() {
            Some(s) => s.source_message(severity, text, origin),
            None => {
                eprint!("{}", output::source_message_text(severity, text, origin));
                Ok(())
            }
        }
    }

    fn time(&mut self, text: &[u8]) -> io::Result<()> {
        match self.inner.as_deref_mut() {
            Some(s) => s.time(text),
            None => Ok(()),
        }
    }

    fn join(&mut self, text: &[u8]) -> io::Result<()> {
        match self.inner.as_deref_mut() {
            Some(s) => s.join(text),
            None => Ok(()),
        }
    }

    fn value(&mut self, value: &Value) -> io::Result<()> {
        if let Some(dwarf) = self.dwarf.as_mut()
            && dwarf.sample(value)
        {
            return Ok(());
        }
        match self.inner.as_deref_mut() {
            Some(s) => s.value(value),
            None => Ok(()),
        }
    }

    fn map(&mut self, map: &MapDump, top: u64, div: u64) -> io::Result<()> {
        match self.inner.as_deref_mut() {
            Some(s) => s.map(map, top, div),
            None => Ok(()),
        }
    }

    fn flat_map(&mut self, map: &mut FlatMap<'_>, top: u64, div: u64) -> io::Result<()> {
        if self.at_exit {
            self.collect(map);
        }
        match self.inner.as_deref_mut() {
            Some(s) => s.flat_map(map, top, div),
            None => Ok(()),
        }
    }

    fn run_stats(&mut self, stats: &output::stats::RunStats) -> io::Result<()> {
        match self.inner.as_deref_mut() {
            Some(s) => s.run_stats(stats),
            None => Ok(()),
        }
    }

    fn carries_stats(&self) -> bool {
        self.inner.as_deref().is_some_and(|s| s.carries_stats())
    }

    fn stream_record(&mut self, record: &StreamRecord<'_>) -> io::Result<()> {
        match self.inner.as_deref_mut() {
            Some(s) => s.stream_record(record),
            None => Ok(()),
        }
    }

    fn user_stack(&mut self, record: &[u8]) -> io::Result<()> {
        if let Some(dwarf) = self.dwarf.as_mut() {
            dwarf.record(record);
        }
        Ok(())
    }

    fn exit_separator(&mut self) -> io::Result<()> {
        self.at_exit = true;
        match self.inner.as_deref_mut() {
            Some(s) => s.exit_separator(),
            None => Ok(()),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self.inner.as_deref_mut() {
            Some(s) => s.flush(),
            None => Ok(()),
        }
    }
}
