//! The stack-trace maps a script needs: one per frame limit used by a
//! `kstack`/`ustack` anywhere (probe bodies, map keys and values).

use abi::StackMapSpec;
use sema::{Type, TypedProgram};

use crate::elf::ElfMap;

/// `BPF_MAP_TYPE_STACK_TRACE`.
const STACK_TRACE: u32 = 7;

/// The stack maps of `typed`, ordered by limit.
pub(crate) fn stack_maps(typed: &TypedProgram, max_entries: u32) -> Vec<StackMapSpec> {
    let mut limits = std::collections::BTreeSet::new();
    let mut visit = |t: &Type| collect(t, &mut limits);
    for probe in &typed.probes {
        probe.types.values().for_each(&mut visit);
        probe.vars.values().for_each(&mut visit);
    }
    for m in &typed.maps {
        m.key.iter().for_each(&mut visit);
        visit(&m.value);
    }
    limits
        .into_iter()
        .map(|limit| StackMapSpec {
            bpf_name: abi::stack::stack_map_name(limit),
            limit,
            max_entries,
        })
        .collect()
}

fn collect(t: &Type, limits: &mut std::collections::BTreeSet<u32>) {
    match t {
        Type::Stack { limit, .. } => {
            limits.insert(*limit);
        }
        Type::Tuple(items) => items.iter().for_each(|i| collect(i, limits)),
        _ => {}
    }
}

/// The ELF declaration of a stack map: `u32` id to `limit` addresses.
pub(crate) fn elf_map(spec: &StackMapSpec) -> ElfMap {
    ElfMap {
        name: spec.bpf_name.clone(),
        map_type: STACK_TRACE,
        key_size: 4,
        value_size: spec.limit * 8,
        max_entries: spec.max_entries,
        flags: 0,
    }
}
