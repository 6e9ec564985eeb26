//! Streams compile to ordinary programs and maps (see `sema::streams`):
//! the begin clause builds a record (on its stack, or in a per-CPU scratch
//! value when it is too big) and files it in the stream's state map; each
//! later clause finds its instance there (directly by the begin key, or
//! through a link table), stamps its stage, runs its block with the
//! instance's `$fields` in place, and the end clause sends the instance's
//! state as one ring-buffer record (`bpf_ringbuf_output` of the map value,
//! which starts with the record header) before deleting it.
//!
//! The state map is an LRU hash: past `max` open instances the kernel evicts
//! one silently, and user space counts it. A stream with `incomplete` must
//! emit every instance that does not end, so its state map is a plain hash
//! and the begin evicts by itself: a queue holds `(key, start)` of the
//! instances in the order they began, and a begin that finds the map full
//! pops it until it finds an instance still open, emits it and takes its
//! place (or, when none is found, emits its own instance as refused).

use abi::stream::{
    STREAM_CGROUP_OFFSET, STREAM_COMM_OFFSET, STREAM_COMM_SIZE, STREAM_END_OFFSET,
    STREAM_PID_TGID_OFFSET, STREAM_STAGES_OFFSET, STREAM_START_OFFSET,
};
use abi::{EventKind, Field, StageSpec, StreamCounter, StreamField, StreamLink, StreamSpec};
use sema::streams::{KeyLookup, StageRef, StreamArg, StreamInfo};
use sema::{Type, TypedProbe};
use syntax::ast::{Expr, ExprKind, Item, Program, StageRole, Stream};

use super::{Lower, Place, SymbolNames, map_type};
use crate::asm::{AluOp, Asm, Cond, Helper, Src, VReg, Width};
use crate::elf::ElfMap;

/// `-EEXIST`, from `bpf_map_update_elem` with `BPF_NOEXIST` on a present key.
const EEXIST: i32 = -17;
/// Records up to this size are built on the stack at begin (the stack holds 512 bytes).
const STACK_RECORD_MAX: u32 = 256;
/// `BPF_EXIST` for a queue push: when full, the oldest element makes room.
const BPF_EXIST: i32 = 2;
/// How many queued instances a begin that finds the state map full looks
/// at for one still open (the others ended or were evicted already).
const EVICT_TRIES: usize = 4;

/// How many exchanges a stage's time gets to settle under contention
/// (see [`Lower::settle_time`]); each extra one needs another CPU to store
/// a better time of the same instance within a few instructions.
const SETTLE_TRIES: usize = 4;

/// How many numbers of gone instances (timed out, pushed out of the queue)
/// a `queue N` stage skips for one event before it gives up.
const QUEUE_SKIPS: usize = 4;

/// Which of two times a stage keeps.
#[derive(Clone, Copy)]
enum Extreme {
    Earliest,
    Latest,
}

/// Where everything of one stream lives.
#[derive(Clone, Debug)]
pub(crate) struct StreamLayout {
    pub spec: StreamSpec,
    /// Size of a state map key: the begin key (8-aligned), and with
    /// `queue N` its sequence number after it.
    pub key_size: u32,
    /// Size of the begin key (8-aligned): the key of the queue map.
    pub begin_key_size: u32,
    /// Per-CPU array where a begin builds a record too big for its stack.
    pub scratch_map: Option<String>,
    /// With `incomplete`: the queue of `(begin key, start_ns)` in begin order.
    pub order_queue: Option<String>,
}

impl StreamLayout {
    /// The stream's layout; its maps are named for what they hold, the
    /// role first so that it survives the kernel's 15 bytes: `state_NAME`,
    /// `link_NAME_SLOT`, `counts_NAME`, `scratch_NAME`, `order_NAME`.
    pub(crate) fn new(names: &mut SymbolNames, info: &StreamInfo) -> StreamLayout {
        let n = info.stages.len() as u32;
        let stages = info
            .stages
            .iter()
            .enumerate()
            .map(|(i, s)| StageSpec {
                name: s.name.clone(),
                ts_offset: STREAM_STAGES_OFFSET + 8 * i as u32,
                last_offset: STREAM_STAGES_OFFSET + 8 * (n + i as u32),
                hits_offset: STREAM_STAGES_OFFSET + 8 * (2 * n + i as u32),
                // The begin stage's task is the record's own; each later
                // stage has a task and a comm after the hits.
                task_offset: match i as u32 {
                    0 => STREAM_PID_TGID_OFFSET,
                    i => STREAM_STAGES_OFFSET + 24 * n + 8 * (i - 1),
                },
                comm_offset: match i as u32 {
                    0 => STREAM_COMM_OFFSET,
                    i => STREAM_STAGES_OFFSET + 32 * n - 8 + STREAM_COMM_SIZE * (i - 1),
                },
            })
            .collect();
        let stream = &info.name;
        let state_map = names.unique_kernel(&format!("state_{stream}"));
        let mut offset =
            STREAM_STAGES_OFFSET + 24 * n + (8 + STREAM_COMM_SIZE) * n.saturating_sub(1);
        let links_filed_offset = if info.links.is_empty() {
            0
        } else {
            offset += 8;
            offset - 8
        };
        let links = info
            .links
            .iter()
            .map(|slot| {
                let key_size = slot.key.layout().size().max(1).next_multiple_of(8);
                let link = StreamLink {
                    name: slot.name.clone(),
                    map: names.unique_kernel(&format!("link_{stream}_{}", slot.name)),
                    key_offset: offset,
                    key_size,
                };
                offset += key_size;
                link
            })
            .collect();
        let counters_map = names.unique_kernel(&format!("counts_{stream}"));
        let mut fields = Vec::new();
        for (name, t) in &info.fields {
            // Every field starts 8-aligned, and integers of any width take
            // 8 bytes: scalars are written and read as 64-bit words (the
            // registers' normal form) wherever a stage runs, and the stack
            // path's stores must be aligned.
            let layout = t.stored().layout();
            offset = offset.next_multiple_of(8);
            let size = layout.size();
            fields.push(StreamField {
                name: name.clone(),
                field: Field { offset, layout },
            });
            offset += size;
        }
        let record_size = offset.next_multiple_of(8);
        let begin_key_size = info
            .stages
            .first()
            .map_or(8, |s| s.key.layout().size().max(1))
            .next_multiple_of(8);
        let queued = info.queue > 0;
        let key_size = begin_key_size + if queued { 8 } else { 0 };
        let queue_map = if queued {
            names.unique_kernel(&format!("queue_{stream}"))
        } else {
            String::new()
        };
        StreamLayout {
            scratch_map: (record_size > STACK_RECORD_MAX)
                .then(|| names.unique_kernel(&format!("scratch_{stream}"))),
            order_queue: info
                .incomplete
                .then(|| names.unique_kernel(&format!("order_{stream}"))),
            spec: StreamSpec {
                name: info.name.clone(),
                state_map,
                links,
                links_filed_offset,
                counters_map,
                record_size,
                stages,
                fields,
                timeout_ns: info.timeout_ns,
                max_instances: info.max_instances,
                emit_incomplete: info.incomplete,
                sample: info.sample,
                queue: info.queue,
                queue_map,
                captures_identity: info.captures_identity,
                emits_records: info.emits_records,
            },
            key_size,
            begin_key_size,
        }
    }

    /// The stream's maps: state, links, counters, and the scratch record
    /// and begin-order queue when it has them.
    pub(crate) fn elf_maps(&self) -> Vec<ElfMap> {
        let hash = |name: &str, map_type: u32, key_size: u32, value_size: u32| ElfMap {
            name: name.to_string(),
            map_type,
            key_size,
            value_size,
            max_entries: self.spec.max_instances,
            flags: 0,
        };
        let state_type = if self.order_queue.is_some() {
            map_type::HASH
        } else {
            map_type::LRU_HASH
        };
        let mut maps = vec![hash(
            &self.spec.state_map,
            state_type,
            self.key_size,
            self.spec.record_size,
        )];
        for link in &self.spec.links {
            // A link holds the begin key and the instance's start, to tell a reused key apart.
            maps.push(hash(
                &link.map,
                map_type::LRU_HASH,
                link.key_size,
                self.key_size + 8,
            ));
        }
        maps.push(ElfMap {
            name: self.spec.counters_map.clone(),
            map_type: map_type::PERCPU_ARRAY,
            key_size: 4,
            value_size: 8,
            max_entries: StreamCounter::COUNT,
            flags: 0,
        });
        if let Some(name) = &self.scratch_map {
            maps.push(ElfMap {
                name: name.clone(),
                map_type: map_type::PERCPU_ARRAY,
                key_size: 4,
                value_size: self.spec.record_size,
                max_entries: 1,
                flags: 0,
            });
        }
        if let Some(name) = &self.order_queue {
            maps.push(hash(name, map_type::QUEUE, 0, self.key_size + 8));
        }
        if self.spec.queue > 0 {
            // Per begin key: the next sequence number to begin, then the
            // next one each later stage takes.
            let counters = 8 * self.spec.stages.len().max(1) as u32;
            maps.push(hash(
                &self.spec.queue_map,
                map_type::LRU_HASH,
                self.begin_key_size,
                counters,
            ));
        }
        maps
    }
}

impl<'a> Lower<'a> {
    /// The program of one stream clause for one resolved probe.
    pub(crate) fn stream_stage(
        &mut self,
        program: &'a Program,
        stream: &Stream,
        stage: StageRef,
        layout: &StreamLayout,
    ) -> Asm {
        let info = &self.typed.streams[stage.stream];
        let clause = &stream.stages[stage.stage];
        let spec = &layout.spec;
        let stage_info = &info.stages[stage.stage];
        self.asm.set_span(clause.span);
        self.task_filter_prologue();
        let now = self.asm.vreg();
        self.asm.call(Helper::KTIME_GET_NS, &[], Some(now));
        let locals = self.block_locals(spec);

        let key_ty = stage_info.key.clone();
        if clause.role == StageRole::Begin {
            return self.begin_instance(stream, stage, layout, now, &locals);
        }
        // A predicate that reads no field (`/pid == cpid/`) runs first: an
        // event it turns away then costs no lookup.
        let early = clause.predicate.as_ref().filter(|p| !reads_instance(p));
        if let Some(pred) = early {
            let c = self.scalar(pred);
            self.asm.br(Cond::Eq, c, Src::Imm(0), self.exit);
        }
        let by = clause.key.as_ref().map(|k| &k.expr);
        // The slot the instance was found through, and the key used there.
        let mut came_through = None;
        let (state, key) = match stage_info.lookup {
            KeyLookup::Primary if spec.queue > 0 => {
                let key = self.stream_key(by, &key_ty, layout.key_size);
                (self.take_from_queue(layout, stage.stage, key), key)
            }
            KeyLookup::Primary => {
                let key = self.stream_key(by, &key_ty, layout.key_size);
                (self.lookup_named(&spec.state_map, key), key)
            }
            KeyLookup::Link(l) => {
                let link_spec = &spec.links[l];
                let lkey = self.stream_key(by, &key_ty, link_spec.key_size);
                let link = self.lookup_named(&link_spec.map, lkey);
                self.asm.br(Cond::Eq, link, Src::Imm(0), self.exit);
                let key = Place::Ptr(link, 0);
                let state = self.lookup_named(&spec.state_map, key);
                self.asm.br(Cond::Eq, state, Src::Imm(0), self.exit);
                // A link left by an instance that has ended may name a newer one under the same key.
                let (a, b) = (self.asm.vreg(), self.asm.vreg());
                self.asm
                    .load(a, state, STREAM_START_OFFSET as i16, Width::DW);
                self.asm.load(b, link, layout.key_size as i16, Width::DW);
                self.asm.br(Cond::Ne, a, Src::Reg(b), self.exit);
                came_through = Some((l, lkey));
                (state, key)
            }
        };
        self.asm.br(Cond::Eq, state, Src::Imm(0), self.exit);
        self.expire_if_old(layout, state, key, now);
        // Any other predicate runs once the instance is found, so it may read its fields.
        self.bind_fields(spec, state, &locals);
        if let Some(pred) = clause.predicate.as_ref().filter(|_| early.is_none()) {
            let c = self.scalar(pred);
            self.asm.br(Cond::Eq, c, Src::Imm(0), self.exit);
        }
        self.stamp_stage(spec, stage.stage, stage_info.keep_last, state, now);
        self.bind_fields(spec, state, &locals);

        if let Some(body) = &clause.body {
            self.clause_body(body);
        }
        let record = Place::Ptr(state, 0);
        let linked = self.write_links(stream, stage, layout, record);
        self.publish_links(layout, &linked, key, record);
        if clause.role == StageRole::End {
            self.asm.set_span(clause.span);
            self.asm
                .store(state, STREAM_END_OFFSET as i16, Src::Reg(now), Width::DW);
            if info.has_handlers {
                self.run_handlers(program, stage.stream, spec, state);
            } else {
                self.emit_record(spec, state);
            }
            self.bump_stream_counter(spec, StreamCounter::Completed);
            // The links first (they are read from the record), the instance,
            // then the link it was found through (its value is the key).
            self.retire_links(layout, state, came_through.map(|(l, _)| l));
            self.delete_named(&spec.state_map, key);
            if let Some((l, lkey)) = came_through {
                self.delete_named(&spec.links[l].map, lkey);
            }
        }
        let exit = self.exit;
        self.asm.bind(exit);
        self.asm.set_span(clause.span);
        self.asm.ret(Src::Imm(0));
        self.finish_function()
    }

    /// `queue N` at begin: numbers the new instance after the last one of
    /// its key (an atomic fetch-add of the key's next number, so that two
    /// CPUs beginning at once get two numbers) and writes the number after
    /// the begin key in `key`. A key with N instances open pushes out its
    /// oldest (counted; emitted with `incomplete`). Without room in the
    /// queue map the begin ends here, counted as refused.
    fn append_to_queue(&mut self, layout: &StreamLayout, key: Place) {
        let spec = &layout.spec;
        let counters = self.queue_counters(layout, key);
        let seq = self.constant(1);
        self.asm.atomic_fetch_add(counters, 0, seq, Width::DW);
        self.store(key.offset(layout.begin_key_size), Src::Reg(seq), Width::DW);
        // The oldest instance still queued is the next one `end` takes.
        let end_at = 8 * (spec.stages.len() as i16 - 1);
        let (oldest, depth) = (self.asm.vreg(), self.asm.vreg());
        self.asm.load(oldest, counters, end_at, Width::DW);
        self.asm.mov(depth, Src::Reg(seq));
        self.asm.alu(AluOp::Sub, depth, Src::Reg(oldest));
        let room = self.asm.label();
        let limit = self.constant(i64::from(spec.queue));
        self.asm.br(Cond::Lt, depth, Src::Reg(limit), room);
        let taken = self.constant(1);
        self.asm
            .atomic_fetch_add(counters, end_at, taken, Width::DW);
        let victim_key = Place::Stack(self.asm.stack(layout.key_size), 0);
        self.copy(victim_key, key, layout.begin_key_size);
        self.store(
            victim_key.offset(layout.begin_key_size),
            Src::Reg(taken),
            Width::DW,
        );
        self.bump_stream_counter(spec, StreamCounter::QueueOverflow);
        let victim = self.lookup_named(&spec.state_map, victim_key);
        self.asm.br(Cond::Eq, victim, Src::Imm(0), room);
        if spec.emit_incomplete {
            self.emit_record(spec, victim);
        }
        self.retire_links(layout, victim, None);
        self.delete_named(&spec.state_map, victim_key);
        self.asm.bind(room);
    }

    /// The queue map's counters of the begin key at the start of `key`,
    /// created (zero) on the key's first begin; exits when the map has no
    /// room (counted as refused).
    fn queue_counters(&mut self, layout: &StreamLayout, key: Place) -> VReg {
        let spec = &layout.spec;
        let found = self.asm.label();
        let counters = self.lookup_named(&spec.queue_map, key);
        self.asm.br(Cond::Ne, counters, Src::Imm(0), found);
        let size = 8 * spec.stages.len() as u32;
        let zeros = Place::Stack(self.asm.stack(size), 0);
        self.zero(zeros, size);
        // BPF_NOEXIST: a begin on another CPU may have created it meanwhile.
        let ptr = self.addr(zeros);
        self.update_raw(&spec.queue_map, key, Src::Reg(ptr), 1);
        let again = self.lookup_named(&spec.queue_map, key);
        self.asm.mov(counters, Src::Reg(again));
        self.asm.br(Cond::Ne, counters, Src::Imm(0), found);
        self.bump_stream_counter(spec, StreamCounter::MapFull);
        self.asm.jmp(self.exit);
        self.asm.bind(found);
        counters
    }

    /// `queue N` at a later stage: takes the oldest instance of the key that
    /// has not passed this stage. Each stage keeps the next number it takes;
    /// it claims one with an atomic fetch-add (two CPUs take two instances),
    /// never past the key's last begun instance, and skips numbers whose
    /// instance has gone (timed out, pushed out) up to [`QUEUE_SKIPS`]
    /// times. A stage that fell behind `end` (it did not fire for some
    /// instances) starts again from `end`'s next. Returns the instance
    /// (null: none) with its number written in `key`.
    fn take_from_queue(&mut self, layout: &StreamLayout, stage: usize, key: Place) -> VReg {
        let spec = &layout.spec;
        let state = self.asm.vreg();
        self.asm.mov(state, Src::Imm(0));
        let counters = self.lookup_named(&spec.queue_map, key);
        let done = self.asm.label();
        self.asm.br(Cond::Eq, counters, Src::Imm(0), done);
        let at = 8 * stage as i16;
        let end_at = 8 * (spec.stages.len() as i16 - 1);
        if at != end_at {
            let (next, end_next) = (self.asm.vreg(), self.asm.vreg());
            let ahead = self.asm.label();
            self.asm.load(next, counters, at, Width::DW);
            self.asm.load(end_next, counters, end_at, Width::DW);
            self.asm.br(Cond::Ge, next, Src::Reg(end_next), ahead);
            self.asm.store(counters, at, Src::Reg(end_next), Width::DW);
            self.asm.bind(ahead);
        }
        for _ in 0..QUEUE_SKIPS {
            let (begun, next) = (self.asm.vreg(), self.asm.vreg());
            self.asm.load(begun, counters, 0, Width::DW);
            self.asm.load(next, counters, at, Width::DW);
            self.asm.br(Cond::Ge, next, Src::Reg(begun), done);
            let taken = self.constant(1);
            self.asm.atomic_fetch_add(counters, at, taken, Width::DW);
            let claimed = self.asm.label();
            self.asm.br(Cond::Lt, taken, Src::Reg(begun), claimed);
            // Another CPU took the last one first: give the number back.
            let back = self.constant(-1);
            self.asm.atomic_add(counters, at, back, Width::DW);
            self.asm.jmp(done);
            self.asm.bind(claimed);
            self.store(
                key.offset(layout.begin_key_size),
                Src::Reg(taken),
                Width::DW,
            );
            let found = self.lookup_named(&spec.state_map, key);
            self.asm.mov(state, Src::Reg(found));
            self.asm.br(Cond::Ne, state, Src::Imm(0), done);
        }
        self.asm.bind(done);
        state
    }

    /// Records a hit of stage `index`: its first time (every hit's with
    /// `keep last`), its last time, one more hit. Exact however many CPUs
    /// run the stage at once: the hits are one atomic add, and each time is
    /// settled by [`Self::settle_time`] (the first the earliest hit, the
    /// last the latest), never by a plain store that a slower CPU could
    /// overwrite with an older time.
    fn stamp_stage(
        &mut self,
        spec: &StreamSpec,
        index: usize,
        keep_last: bool,
        state: VReg,
        now: VReg,
    ) {
        let st = &spec.stages[index];
        let first = if keep_last {
            Extreme::Latest
        } else {
            Extreme::Earliest
        };
        self.settle_time(spec, state, st.ts_offset, now, first);
        self.settle_time(spec, state, st.last_offset, now, Extreme::Latest);
        // The hit that counts first records its task: the stage's task.
        let earlier = self.constant(1);
        self.asm
            .atomic_fetch_add(state, st.hits_offset as i16, earlier, Width::DW);
        let counted = self.asm.label();
        self.asm.br(Cond::Ne, earlier, Src::Imm(0), counted);
        self.record_task(spec, Place::Ptr(state, 0), index);
        self.asm.bind(counted);
    }

    /// Writes the task running now as the one of stage `index` (its
    /// pid_tgid, and its comm when it is not the `begin` task and the
    /// stream shows identity: the records only show another task's).
    fn record_task(&mut self, spec: &StreamSpec, record: Place, index: usize) {
        let st = &spec.stages[index];
        let pid_tgid = self.asm.vreg();
        self.asm
            .call(Helper::GET_CURRENT_PID_TGID, &[], Some(pid_tgid));
        self.store(record.offset(st.task_offset), Src::Reg(pid_tgid), Width::DW);
        if spec.captures_identity {
            let same = self.asm.label();
            let began = self.asm.vreg();
            self.load(began, record.offset(STREAM_PID_TGID_OFFSET), Width::DW);
            self.asm.br(Cond::Eq, began, Src::Reg(pid_tgid), same);
            let comm = self.addr(record.offset(st.comm_offset));
            self.asm.call(
                Helper::GET_CURRENT_COMM,
                &[Src::Reg(comm), Src::Imm(STREAM_COMM_SIZE as i32)],
                None,
            );
            self.asm.bind(same);
        }
    }

    /// Makes the time at `state + offset` the earliest (0 being unset) or
    /// the latest of itself and `now`, with atomic exchanges: a CPU puts
    /// its time in and takes out what was there; when what it took out is
    /// better (another CPU's time, stored in between), it puts that back,
    /// and so on. The best time is never lost: it is either in the record
    /// or held by a CPU that will put it back. Each round needs another
    /// CPU to have stored a better time in the few instructions between
    /// two exchanges; after [`SETTLE_TRIES`] the time is left to the other
    /// CPUs and counted ([`StreamCounter::TimeContended`]).
    fn settle_time(
        &mut self,
        spec: &StreamSpec,
        state: VReg,
        offset: u32,
        now: VReg,
        want: Extreme,
    ) {
        let done = self.asm.label();
        let off = offset as i16;
        // Most hits find a time already better than theirs, or come last:
        // one load decides the first, one exchange the last.
        let current = self.asm.vreg();
        self.asm.load(current, state, off, Width::DW);
        let held = self.asm.vreg();
        self.asm.mov(held, Src::Reg(now));
        match want {
            Extreme::Earliest => {
                let unset = self.asm.label();
                self.asm.br(Cond::Eq, current, Src::Imm(0), unset);
                self.asm.br(Cond::Le, current, Src::Reg(now), done);
                self.asm.bind(unset);
            }
            Extreme::Latest => self.asm.br(Cond::Ge, current, Src::Reg(now), done),
        }
        for _ in 0..SETTLE_TRIES {
            let out = self.asm.vreg();
            self.asm.mov(out, Src::Reg(held));
            self.asm.atomic_xchg(state, off, out, Width::DW);
            match want {
                Extreme::Earliest => {
                    self.asm.br(Cond::Eq, out, Src::Imm(0), done);
                    self.asm.br(Cond::Ge, out, Src::Reg(held), done);
                }
                Extreme::Latest => self.asm.br(Cond::Le, out, Src::Reg(held), done),
            }
            self.asm.mov(held, Src::Reg(out));
        }
        self.bump_stream_counter(spec, StreamCounter::TimeContended);
        self.asm.bind(done);
    }

    /// The begin clause: builds the record (on the stack when it fits, else
    /// in the stream's per-CPU scratch value), runs the block on it, and
    /// files it with one map update (then its links).
    fn begin_instance(
        &mut self,
        stream: &Stream,
        stage: StageRef,
        layout: &StreamLayout,
        now: VReg,
        locals: &[(String, Place)],
    ) -> Asm {
        let info = &self.typed.streams[stage.stream];
        let clause = &stream.stages[stage.stage];
        let spec = &layout.spec;
        if let Some(pred) = &clause.predicate {
            let c = self.scalar(pred);
            self.asm.br(Cond::Eq, c, Src::Imm(0), self.exit);
        }
        // `sample N`: one in N instances, chosen at random before anything
        // of it is written; the others are only counted.
        if info.sample > 1 {
            let draw = self.asm.vreg();
            self.asm.call(Helper::GET_PRANDOM_U32, &[], Some(draw));
            let n = self.constant(i64::from(info.sample));
            self.asm.alu(AluOp::Mod, draw, Src::Reg(n));
            let chosen = self.asm.label();
            self.asm.br(Cond::Eq, draw, Src::Imm(0), chosen);
            self.bump_stream_counter(spec, StreamCounter::SampledOut);
            self.asm.jmp(self.exit);
            self.asm.bind(chosen);
        }
        let by = clause.key.as_ref().map(|k| &k.expr);
        let key = self.stream_key(by, &info.stages[0].key, layout.key_size);
        let rec = match &layout.scratch_map {
            Some(scratch) => {
                let zero = self.asm.stack(8);
                self.asm.store_stack(zero, 0, Src::Imm(0), Width::DW);
                let value = self.lookup_named(scratch, Place::Stack(zero, 0));
                self.asm.br(Cond::Eq, value, Src::Imm(0), self.exit);
                Place::Ptr(value, 0)
            }
            None => Place::Stack(self.asm.stack(spec.record_size), 0),
        };
        self.zero(rec, spec.record_size);
        self.fill_fixed_part(rec, stage.stream, spec, now);
        self.vars.clear();
        for f in &spec.fields {
            self.vars.insert(f.name.clone(), rec.offset(f.field.offset));
        }
        self.vars.extend(locals.iter().cloned());
        if let Some(body) = &clause.body {
            self.clause_body(body);
        }
        // The linked keys go in the record before it is filed.
        let linked = self.write_links(stream, stage, layout, rec);
        self.asm.set_span(clause.span);
        if spec.queue > 0 {
            self.append_to_queue(layout, key);
        }
        self.file_instance(layout, key, rec);
        self.bump_stream_counter(spec, StreamCounter::Begun);
        self.publish_links(layout, &linked, key, rec);
        let exit = self.exit;
        self.asm.bind(exit);
        self.asm.ret(Src::Imm(0));
        self.finish_function()
    }

    /// `link KEY`s: writes each key into its slot's place in the record
    /// (where the instance's end finds it to remove the link) and marks
    /// the slot filed. Returns the slots written.
    fn write_links(
        &mut self,
        stream: &Stream,
        stage: StageRef,
        layout: &StreamLayout,
        record: Place,
    ) -> Vec<usize> {
        let info = &self.typed.streams[stage.stream];
        let clause = &stream.stages[stage.stage];
        let spec = &layout.spec;
        let slots = info.stages[stage.stage].links.clone();
        for (link, &slot) in clause.links.iter().zip(&slots) {
            self.asm.set_span(link.expr.span);
            let link_spec = &spec.links[slot];
            let area = record.offset(link_spec.key_offset);
            self.write_key(
                area,
                Some(&link.expr),
                &info.links[slot].key,
                link_spec.key_size,
            );
            if slot < 64 {
                let (filed, bit) = (self.asm.vreg(), self.constant(1i64 << slot));
                let at = record.offset(spec.links_filed_offset);
                self.load(filed, at, Width::DW);
                self.asm.alu(AluOp::Or, filed, Src::Reg(bit));
                self.store(at, Src::Reg(filed), Width::DW);
            }
        }
        slots
    }

    /// Files the instance (its begin key and start time) under the keys
    /// [`Self::write_links`] put in the record.
    fn publish_links(&mut self, layout: &StreamLayout, slots: &[usize], key: Place, record: Place) {
        if slots.is_empty() {
            return;
        }
        let value = Place::Stack(self.asm.stack(layout.key_size + 8), 0);
        self.copy(value, key, layout.key_size);
        let start = self.asm.vreg();
        self.load(start, record.offset(STREAM_START_OFFSET), Width::DW);
        self.store(value.offset(layout.key_size), Src::Reg(start), Width::DW);
        for &slot in slots {
            let link = &layout.spec.links[slot];
            self.update_named(&link.map, record.offset(link.key_offset), value, 0);
        }
    }

    /// Removes the links of the instance whose record is at `record` that
    /// still name it (a key reused by a newer instance is left alone),
    /// except those of slot `skip` (the caller removes the one it used).
    fn retire_links(&mut self, layout: &StreamLayout, record: VReg, skip: Option<usize>) {
        let spec = &layout.spec;
        if spec.links.is_empty() {
            return;
        }
        let filed = self.asm.vreg();
        self.asm
            .load(filed, record, spec.links_filed_offset as i16, Width::DW);
        for (slot, link) in spec.links.iter().enumerate() {
            if Some(slot) == skip || slot >= 64 {
                continue;
            }
            let next = self.asm.label();
            let (bit, mask) = (self.asm.vreg(), self.constant(1i64 << slot));
            self.asm.mov(bit, Src::Reg(filed));
            self.asm.alu(AluOp::And, bit, Src::Reg(mask));
            self.asm.br(Cond::Eq, bit, Src::Imm(0), next);
            let key = Place::Ptr(record, link.key_offset as i32);
            let value = self.lookup_named(&link.map, key);
            self.asm.br(Cond::Eq, value, Src::Imm(0), next);
            let (a, b) = (self.asm.vreg(), self.asm.vreg());
            self.asm.load(a, value, layout.key_size as i16, Width::DW);
            self.asm
                .load(b, record, STREAM_START_OFFSET as i16, Width::DW);
            self.asm.br(Cond::Ne, a, Src::Reg(b), next);
            self.delete_named(&link.map, key);
            self.asm.bind(next);
        }
    }

    /// The key of a clause in a zeroed stack slot: its `by` expression, or `tid`.
    fn stream_key(&mut self, expr: Option<&Expr>, ty: &Type, size: u32) -> Place {
        let place = Place::Stack(self.asm.stack(size), 0);
        self.write_key(place, expr, ty, size);
        place
    }

    /// Zeroes `size` bytes at `place` (the kernel hashes every byte of a
    /// key) and writes the key there as `ty`: the expression, or `tid`.
    fn write_key(&mut self, place: Place, expr: Option<&Expr>, ty: &Type, size: u32) {
        self.zero(place, size);
        match expr {
            Some(e) => match (ty, &e.kind) {
                (Type::Tuple(elems), ExprKind::Tuple(items)) => {
                    let abi::Layout::Tuple { fields, .. } = ty.layout() else {
                        return;
                    };
                    for ((item, field), t) in items.iter().zip(&fields).zip(elems) {
                        self.write_into(item, place.offset(field.offset), t);
                    }
                }
                _ => self.write_into(e, place, ty),
            },
            None => {
                let tid = self.tid();
                self.store(place, Src::Reg(tid), Width::DW);
            }
        }
    }

    /// Files the record at `rec` under `key` in the state map. An open
    /// instance under the same key is replaced (and counted). A full map
    /// (only a stream with `incomplete` has one that fills: the others are
    /// LRU) makes room by evicting the oldest instance still open. Without
    /// room the new instance is refused: counted, and ends the program.
    /// With `incomplete`, every instance replaced, evicted or refused is
    /// emitted as an incomplete record, and every one filed is queued.
    fn file_instance(&mut self, layout: &StreamLayout, key: Place, rec: Place) {
        let spec = &layout.spec;
        let ptr = self.addr(rec);
        let ret = self.update_raw(&spec.state_map, key, Src::Reg(ptr), 1);
        let (created, refused, full) = (self.asm.label(), self.asm.label(), self.asm.label());
        self.asm.br(Cond::Eq, ret, Src::Imm(0), created);
        self.asm.br(Cond::Ne, ret, Src::Imm(EEXIST), full);
        self.bump_stream_counter(spec, StreamCounter::Replaced);
        if spec.emit_incomplete || !spec.links.is_empty() {
            let old = self.lookup_named(&spec.state_map, key);
            let gone = self.asm.label();
            self.asm.br(Cond::Eq, old, Src::Imm(0), gone);
            if spec.emit_incomplete {
                self.emit_record(spec, old);
            }
            self.retire_links(layout, old, None);
            self.asm.bind(gone);
        }
        let ptr = self.addr(rec);
        let again = self.update_raw(&spec.state_map, key, Src::Reg(ptr), 0);
        self.asm.br(Cond::Eq, again, Src::Imm(0), created);
        if let Some(queue) = &layout.order_queue {
            self.asm.jmp(refused);
            self.asm.bind(full);
            self.evict_oldest(layout, queue, key, rec, created, refused);
        } else {
            self.asm.bind(full);
        }
        self.asm.bind(refused);
        self.bump_stream_counter(spec, StreamCounter::MapFull);
        if spec.emit_incomplete {
            let ptr = self.addr(rec);
            self.emit_record(spec, ptr);
        }
        self.asm.jmp(self.exit);
        self.asm.bind(created);
        if let Some(queue) = &layout.order_queue {
            let entry = Place::Stack(self.asm.stack(layout.key_size + 8), 0);
            self.copy(entry, key, layout.key_size);
            let start = self.asm.vreg();
            self.load(start, rec.offset(STREAM_START_OFFSET), Width::DW);
            self.store(entry.offset(layout.key_size), Src::Reg(start), Width::DW);
            let (map, entry_ptr) = (self.asm.vreg(), self.addr(entry));
            self.asm.map_ptr(map, queue);
            // A full queue drops its oldest entry, which names an instance
            // that ended long ago or that the timeout will expire.
            self.asm.call(
                Helper::MAP_PUSH_ELEM,
                &[Src::Reg(map), Src::Reg(entry_ptr), Src::Imm(BPF_EXIST)],
                None,
            );
        }
    }

    /// Pops the begin-order queue until an instance still open comes out
    /// (its start matches: the key may have begun again since), emits it,
    /// deletes it and files the new record in its place (jumping to
    /// `created`); after [`EVICT_TRIES`] entries, or an empty queue, or a
    /// failed update, jumps to `refused`.
    fn evict_oldest(
        &mut self,
        layout: &StreamLayout,
        queue: &str,
        key: Place,
        rec: Place,
        created: crate::asm::Label,
        refused: crate::asm::Label,
    ) {
        let spec = &layout.spec;
        let entry = Place::Stack(self.asm.stack(layout.key_size + 8), 0);
        for _ in 0..EVICT_TRIES {
            let next = self.asm.label();
            let (map, entry_ptr, ret) = (self.asm.vreg(), self.addr(entry), self.asm.vreg());
            self.asm.map_ptr(map, queue);
            self.asm.call(
                Helper::MAP_POP_ELEM,
                &[Src::Reg(map), Src::Reg(entry_ptr)],
                Some(ret),
            );
            self.asm.br(Cond::Ne, ret, Src::Imm(0), refused);
            let victim = self.lookup_named(&spec.state_map, entry);
            self.asm.br(Cond::Eq, victim, Src::Imm(0), next);
            let (start, queued) = (self.asm.vreg(), self.asm.vreg());
            self.asm
                .load(start, victim, STREAM_START_OFFSET as i16, Width::DW);
            self.load(queued, entry.offset(layout.key_size), Width::DW);
            self.asm.br(Cond::Ne, start, Src::Reg(queued), next);
            self.emit_record(spec, victim);
            self.retire_links(layout, victim, None);
            self.delete_named(&spec.state_map, entry);
            let ptr = self.addr(rec);
            let ret = self.update_raw(&spec.state_map, key, Src::Reg(ptr), 1);
            self.asm.br(Cond::Eq, ret, Src::Imm(0), created);
            self.asm.jmp(refused);
            self.asm.bind(next);
        }
        self.asm.jmp(refused);
    }

    /// The fixed part of a new record (see `abi::stream`): header, start,
    /// the begin stage, and who began it.
    fn fill_fixed_part(&mut self, rec: Place, stream: usize, spec: &StreamSpec, now: VReg) {
        self.store(rec, Src::Imm(EventKind::Stream as i32), Width::W);
        self.store(rec.offset(4), Src::Imm(stream as i32), Width::W);
        self.store(rec.offset(STREAM_START_OFFSET), Src::Reg(now), Width::DW);
        self.store(
            rec.offset(spec.stages[0].ts_offset),
            Src::Reg(now),
            Width::DW,
        );
        self.store(
            rec.offset(spec.stages[0].last_offset),
            Src::Reg(now),
            Width::DW,
        );
        self.store(
            rec.offset(spec.stages[0].hits_offset),
            Src::Imm(1),
            Width::DW,
        );
        let pid_tgid = self.asm.vreg();
        self.asm
            .call(Helper::GET_CURRENT_PID_TGID, &[], Some(pid_tgid));
        self.store(
            rec.offset(STREAM_PID_TGID_OFFSET),
            Src::Reg(pid_tgid),
            Width::DW,
        );

        if !spec.captures_identity {
            return;
        }
        let cgroup = self.asm.vreg();
        self.asm
            .call(Helper::GET_CURRENT_CGROUP_ID, &[], Some(cgroup));
        self.store(
            rec.offset(STREAM_CGROUP_OFFSET),
            Src::Reg(cgroup),
            Width::DW,
        );
        let comm = self.addr(rec.offset(STREAM_COMM_OFFSET));
        self.asm.call(
            Helper::GET_CURRENT_COMM,
            &[Src::Reg(comm), Src::Imm(STREAM_COMM_SIZE as i32)],
            None,
        );
    }

    /// A clause's block; `return` in it ends the block, not the instance's bookkeeping.
    fn clause_body(&mut self, body: &syntax::ast::Block) {
        let (outer, after) = (self.exit, self.asm.label());
        self.exit = after;
        self.block(body);
        self.exit = outer;
        self.asm.bind(after);
    }

    /// An instance older than the stream's timeout is dropped (counted, and
    /// sent as incomplete when asked) instead of matching.
    fn expire_if_old(&mut self, layout: &StreamLayout, state: VReg, key: Place, now: VReg) {
        let spec = &layout.spec;
        let fresh = self.asm.label();
        let age = self.asm.vreg();
        let start = self.asm.vreg();
        self.asm
            .load(start, state, STREAM_START_OFFSET as i16, Width::DW);
        self.asm.mov(age, Src::Reg(now));
        self.asm.alu(AluOp::Sub, age, Src::Reg(start));
        let limit = self.constant(spec.timeout_ns.min(i64::MAX as u64) as i64);
        self.asm.br(Cond::Le, age, Src::Reg(limit), fresh);
        self.bump_stream_counter(spec, StreamCounter::Expired);
        if spec.emit_incomplete {
            self.emit_record(spec, state);
        }
        self.retire_links(layout, state, None);
        self.delete_named(&spec.state_map, key);
        self.asm.jmp(self.exit);
        self.asm.bind(fresh);
    }

    /// The instance's `$fields` are the clause's variables, with its
    /// `let` and `for` variables.
    fn bind_fields(&mut self, spec: &StreamSpec, state: VReg, locals: &[(String, Place)]) {
        self.vars.clear();
        for f in &spec.fields {
            self.vars
                .insert(f.name.clone(), Place::Ptr(state, f.field.offset as i32));
        }
        self.vars.extend(locals.iter().cloned());
        self.stream_record = Some((state, spec.clone()));
    }

    /// The clause's `let` and `for` variables (its variables that are no
    /// field): each a zeroed slot of its own for the whole program, as a
    /// probe's variables have, so the verifier follows their values (a loop
    /// counter in the record would look unbounded to it).
    fn block_locals(&mut self, spec: &StreamSpec) -> Vec<(String, Place)> {
        let locals: Vec<(String, Type)> = self
            .probe
            .vars
            .iter()
            .filter(|(name, _)| !spec.fields.iter().any(|f| &f.name == *name))
            .map(|(name, t)| (name.clone(), t.clone()))
            .collect();
        locals
            .into_iter()
            .map(|(name, t)| {
                let size = t.layout().size().max(8).next_multiple_of(8);
                let place = self.value_place(size);
                self.zero(place, size);
                (name, place)
            })
            .collect()
    }

    /// The record a stage or end clause found, when `place` is one of its
    /// fields: memory other CPUs may update at the same time.
    fn shared_field(&self, place: Place) -> Option<(VReg, i16)> {
        let (state, _) = self.stream_record.as_ref()?;
        match place {
            Place::Ptr(base, off) if base == *state => Some((base, off as i16)),
            _ => None,
        }
    }

    /// `$field += value` (or `-=`) as a statement in a stage or end clause:
    /// one atomic add, so that counts and sums kept in a field are exact
    /// when several CPUs run the clause at once. False when `place` is no
    /// field of a found instance (the caller does the ordinary update).
    pub(crate) fn add_to_shared_field(&mut self, place: Place, value: &Expr, negate: bool) -> bool {
        let Some((state, off)) = self.shared_field(place) else {
            return false;
        };
        let v = self.scalar(value);
        let delta = self.asm.vreg();
        self.asm.mov(delta, Src::Reg(v));
        if negate {
            self.asm.neg(delta);
        }
        self.asm.atomic_add(state, off, delta, Width::DW);
        true
    }

    /// `$field++` or `$field--` as a statement: [`Self::add_to_shared_field`] by a constant.
    pub(crate) fn add_to_shared_field_const(&mut self, place: Place, delta: i64) -> bool {
        let Some((state, off)) = self.shared_field(place) else {
            return false;
        };
        let d = self.constant(delta);
        self.asm.atomic_add(state, off, d, Width::DW);
        true
    }

    /// Sends the instance's state as a record; a full ring buffer is counted.
    fn emit_record(&mut self, spec: &StreamSpec, state: VReg) {
        let map = self.asm.vreg();
        self.asm.map_ptr(map, abi::EVENTS_MAP);
        let ret = self.asm.vreg();
        self.asm.call(
            Helper::RINGBUF_OUTPUT,
            &[
                Src::Reg(map),
                Src::Reg(state),
                Src::Imm(spec.record_size as i32),
                Src::Imm(0),
            ],
            Some(ret),
        );
        let ok = self.asm.label();
        self.asm.br(Cond::SGe, ret, Src::Imm(0), ok);
        self.count_loss(abi::CounterIndex::RingbufFull);
        self.asm.bind(ok);
    }

    /// Inlines every `stream:NAME` handler of this stream, with the record as `args`.
    fn run_handlers(
        &mut self,
        program: &'a Program,
        stream: usize,
        spec: &StreamSpec,
        state: VReg,
    ) {
        let typed = self.typed;
        for handler in typed
            .handlers
            .iter()
            .filter(|h| matches!(h.resolved.context, sema::Context::Stream(k) if k == stream))
        {
            let Item::Probe(ast) = &program.items[handler.item] else {
                continue;
            };
            self.inline_handler(handler, ast, spec, state);
        }
    }

    fn inline_handler(
        &mut self,
        handler: &'a TypedProbe,
        ast: &syntax::ast::Probe,
        spec: &StreamSpec,
        state: VReg,
    ) {
        let saved_probe = std::mem::replace(&mut self.probe, handler);
        let saved_vars = std::mem::take(&mut self.vars);
        let saved_exit = self.exit;
        let done = self.asm.label();
        self.exit = done;
        self.stream_record = Some((state, spec.clone()));
        self.asm.set_span(ast.span);
        for (name, t) in &handler.vars {
            let size = t.layout().size().max(8).next_multiple_of(8);
            let slot = self.asm.stack(size);
            self.zero(Place::Stack(slot, 0), size);
            self.vars.insert(name.clone(), Place::Stack(slot, 0));
        }
        if let Some(pred) = &ast.predicate {
            let c = self.scalar(pred);
            self.asm.br(Cond::Eq, c, Src::Imm(0), done);
        }
        self.block(&ast.body);
        self.asm.bind(done);
        self.exit = saved_exit;
        self.vars = saved_vars;
        self.probe = saved_probe;
    }

    /// `emit()` in a handler.
    pub(crate) fn emit_stream_record(&mut self) {
        if let Some((state, spec)) = self.stream_record.clone() {
            self.emit_record(&spec, state);
        }
    }

    /// `args->NAME` of a handler as a scalar.
    pub(crate) fn stream_arg_scalar(&mut self, arg: &StreamArg) -> VReg {
        let r = self.asm.vreg();
        let Some((state, spec)) = self.stream_record.clone() else {
            self.asm.mov(r, Src::Imm(0));
            return r;
        };
        match arg {
            StreamArg::Start => self
                .asm
                .load(r, state, STREAM_START_OFFSET as i16, Width::DW),
            StreamArg::End => self.asm.load(r, state, STREAM_END_OFFSET as i16, Width::DW),
            StreamArg::Duration => {
                let start = self.asm.vreg();
                self.asm.load(r, state, STREAM_END_OFFSET as i16, Width::DW);
                self.asm
                    .load(start, state, STREAM_START_OFFSET as i16, Width::DW);
                self.asm.alu(AluOp::Sub, r, Src::Reg(start));
            }
            StreamArg::Pid => {
                self.asm
                    .load(r, state, STREAM_PID_TGID_OFFSET as i16, Width::DW);
                self.asm.alu(AluOp::Rsh, r, Src::Imm(32));
            }
            StreamArg::Tid => self
                .asm
                .load(r, state, STREAM_PID_TGID_OFFSET as i16, Width::W),
            StreamArg::Cgroup => self
                .asm
                .load(r, state, STREAM_CGROUP_OFFSET as i16, Width::DW),
            StreamArg::Sample => {
                let n = self.constant(i64::from(spec.sample));
                self.asm.mov(r, Src::Reg(n));
            }
            StreamArg::StageTs(i) => {
                let off = spec.stages.get(*i).map_or(0, |s| s.ts_offset);
                self.asm.load(r, state, off as i16, Width::DW);
            }
            StreamArg::Field(name) => match spec.fields.iter().find(|f| &f.name == name) {
                Some(f) => self.asm.load(r, state, f.field.offset as i16, Width::DW),
                None => self.asm.mov(r, Src::Imm(0)),
            },
            StreamArg::Comm => self.asm.mov(r, Src::Imm(0)),
        }
        r
    }

    /// The memory of a string or tuple `args->NAME` (the record itself).
    pub(crate) fn stream_arg_place(&mut self, arg: &StreamArg) -> Option<Place> {
        let (state, spec) = self.stream_record.clone()?;
        match arg {
            StreamArg::Comm => Some(Place::Ptr(state, STREAM_COMM_OFFSET as i32)),
            StreamArg::Field(name) => spec
                .fields
                .iter()
                .find(|f| &f.name == name)
                .map(|f| Place::Ptr(state, f.field.offset as i32)),
            _ => None,
        }
    }

    fn bump_stream_counter(&mut self, spec: &StreamSpec, which: StreamCounter) {
        self.bump_counter(&spec.counters_map, which as u32);
    }

    fn lookup_named(&mut self, map_name: &str, key: Place) -> VReg {
        let map = self.asm.vreg();
        self.asm.map_ptr(map, map_name);
        let key_ptr = self.addr(key);
        let value = self.asm.vreg();
        self.asm.call(
            Helper::MAP_LOOKUP_ELEM,
            &[Src::Reg(map), Src::Reg(key_ptr)],
            Some(value),
        );
        value
    }

    fn update_raw(&mut self, map_name: &str, key: Place, value: Src, flags: i32) -> VReg {
        let map = self.asm.vreg();
        self.asm.map_ptr(map, map_name);
        let key_ptr = self.addr(key);
        let ret = self.asm.vreg();
        self.asm.call(
            Helper::MAP_UPDATE_ELEM,
            &[Src::Reg(map), Src::Reg(key_ptr), value, Src::Imm(flags)],
            Some(ret),
        );
        ret
    }

    /// An update whose failure is counted as a full map.
    fn update_named(&mut self, map_name: &str, key: Place, value: Place, flags: i32) {
        let value_ptr = self.addr(value);
        let ret = self.update_raw(map_name, key, Src::Reg(value_ptr), flags);
        let ok = self.asm.label();
        self.asm.br(Cond::SGe, ret, Src::Imm(0), ok);
        self.count_loss(abi::CounterIndex::MapFull);
        self.asm.bind(ok);
    }

    fn delete_named(&mut self, map_name: &str, key: Place) {
        let map = self.asm.vreg();
        self.asm.map_ptr(map, map_name);
        let key_ptr = self.addr(key);
        self.asm.call(
            Helper::MAP_DELETE_ELEM,
            &[Src::Reg(map), Src::Reg(key_ptr)],
            None,
        );
    }
}

/// Whether an expression may read the instance's fields or have an effect
/// (so it must run after the lookup, once, on the instance): a `$field`, an
/// increment, a block, or a call other than `str()`. Conservative: what is
/// not known to be free of both counts as reading.
fn reads_instance(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Var(_) | ExprKind::IncDec { .. } | ExprKind::Block(_) | ExprKind::If { .. } => {
            true
        }
        ExprKind::Call { name, args, .. } => name != "str" || args.iter().any(reads_instance),
        ExprKind::Error
        | ExprKind::Int { .. }
        | ExprKind::Str(_)
        | ExprKind::Bool(_)
        | ExprKind::Ident(_)
        | ExprKind::Positional(_)
        | ExprKind::PositionalCount => false,
        ExprKind::Map { keys, .. } => keys.iter().any(reads_instance),
        ExprKind::Unary { expr, .. }
        | ExprKind::Field { expr, .. }
        | ExprKind::TupleIndex { expr, .. }
        | ExprKind::Cast { expr, .. } => reads_instance(expr),
        ExprKind::Binary { lhs, rhs, .. } => reads_instance(lhs) || reads_instance(rhs),
        ExprKind::Index { expr, index } => reads_instance(expr) || reads_instance(index),
        ExprKind::Ternary { cond, then, else_ } => {
            reads_instance(cond)
                || then.as_deref().is_some_and(reads_instance)
                || reads_instance(else_)
        }
        ExprKind::Tuple(items) => items.iter().any(reads_instance),
        ExprKind::Record(_)
        | ExprKind::Sizeof(_)
        | ExprKind::Offsetof { .. }
        | ExprKind::Typeof(_) => true,
    }
}
