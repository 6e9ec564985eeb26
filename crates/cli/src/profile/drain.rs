//! Empties the count map (`@stacks`) into user space while the profile
//! runs: every [`DRAIN_INTERVAL`] its entries are taken out of the kernel
//! (read and deleted in one step) and their stacks resolved, so the map
//! never fills with the keys of a long run or of thousands of short-lived
//! processes, and the work of resolving is spread over the run instead of
//! all falling after it (on a busy machine, seconds of waiting for a CPU).

use std::time::Instant;

use output::profile::{KeyRole, ProfileSample, sample_from_entry};
use runtime::Session;

use super::args::DRAIN_INTERVAL;
use tracer::stacks::Symbols;

pub struct Drain {
    spec: Option<abi::MapSpec>,
    roles: Vec<KeyRole>,
    last: Option<Instant>,
    /// The samples taken out so far.
    pub samples: Vec<ProfileSample>,
    /// The first error reading the map, said once after the run: the rest
    /// of its keys are then read at exit.
    pub error: Option<String>,
}

impl Drain {
    /// Drains `map` (script name) of `manifest`, whose key elements are `roles`.
    pub fn new(manifest: &abi::Manifest, map: &str, roles: Vec<KeyRole>) -> Drain {
        Drain {
            spec: manifest.maps.iter().find(|m| m.name == map).cloned(),
            roles,
            last: None,
            samples: Vec::new(),
            error: None,
        }
    }

    /// Takes the map's entries if the last drain is [`DRAIN_INTERVAL`] old,
    /// resolving them [`CHUNK`] at a time with `between` run after each
    /// chunk: resolving a busy second's stacks can take seconds of waiting
    /// for a CPU, and a process born and gone meanwhile must still be met
    /// (its mappings kept) while it lives.
    pub fn tick(
        &mut self,
        session: &Session,
        symbols: &mut Symbols,
        between: &mut dyn FnMut(&Session, &mut Symbols),
    ) {
        if self.last.is_some_and(|t| t.elapsed() < DRAIN_INTERVAL) || self.error.is_some() {
            return;
        }
        // Not while kallsyms is still being read (seconds on a busy
        // machine): the loop must stay free to meet new processes, and the
        // map has room for ten seconds.
        if !symbols.kernel_ready() {
            return;
        }
        self.last = Some(Instant::now());
        let Some(spec) = &self.spec else { return };
        let entries = match session.map_take_entries_merged(
            &spec.bpf_name,
            |size| output::merged_value_size(&spec.value, size),
            |per_cpu, out| output::merge_entry(spec, false, per_cpu.iter(), out),
        ) {
            Ok(entries) => entries,
            Err(e) => {
                self.error = Some(e.to_string());
                return;
            }
        };
        let (key_size, value_size) = (entries.key_size(), entries.value_size());
        for first in (0..entries.len()).step_by(CHUNK) {
            let end = (first + CHUNK).min(entries.len());
            let raw = output::RawEntries {
                keys: &entries.keys()[first * key_size..end * key_size],
                key_size,
                values: &entries.values()[first * value_size..end * value_size],
                value_size,
            };
            let mut resolver = symbols.resolver(session);
            let mut map = output::FlatMap::new(spec, raw, Some(&mut resolver));
            for i in 0..map.len() {
                let entry = map.entry(i);
                if let Some(mut sample) = sample_from_entry(&self.roles, &entry.key, &entry.value) {
                    sample.map = Some(spec.name.clone());
                    self.samples.push(sample);
                }
            }
            drop(map);
            between(session, symbols);
        }
    }
}

/// Entries resolved between two looks for new processes.
const CHUNK: usize = 64;
