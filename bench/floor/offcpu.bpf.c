/* offcpu floor: as libbpf-tools' offcputime. At sched_switch (tp_btf) the
 * task going off the CPU (prev, the current task) is stamped by tid with its
 * stacks; the task coming back (next) is charged the microseconds since,
 * summed by (pid, user stack, kernel stack, comm). The two task_struct
 * fields are read through CO-RE (a minimal struct, relocated by libbpf). */
#include "common.h"
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

struct task_struct {
	int pid;
	int tgid;
} __attribute__((preserve_access_index));

struct sample_key {
	__u32 pid;
	__s32 ustack;
	__s32 kstack;
	char comm[16];
};

struct stamp {
	__u64 ts;
	struct sample_key key;
};

struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(max_entries, 16384);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, 127 * sizeof(__u64));
} stacks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, struct stamp);
} start SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, struct sample_key);
	__type(value, __u64);
} samples SEC(".maps");

SEC("tp_btf/sched_switch")
int BPF_PROG(on_switch, _Bool preempt, struct task_struct *prev, struct task_struct *next)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = id, pid = id >> 32;
	if (tid != 0 && (!target_pid || pid == target_pid)) {
		struct stamp s = {.ts = bpf_ktime_get_ns(), .key = {.pid = pid}};
		bpf_get_current_comm(s.key.comm, sizeof(s.key.comm));
		s.key.ustack = bpf_get_stackid(ctx, &stacks, BPF_F_USER_STACK);
		s.key.kstack = bpf_get_stackid(ctx, &stacks, 0);
		bpf_map_update_elem(&start, &tid, &s, BPF_ANY);
	}
	__u32 next_tid = next->pid;
	struct stamp *s = bpf_map_lookup_elem(&start, &next_tid);
	if (!s)
		return 0;
	__u64 us = (bpf_ktime_get_ns() - s->ts) / 1000;
	if (us >= 1) {
		__u64 *n = bpf_map_lookup_elem(&samples, &s->key);
		if (n) {
			__sync_fetch_and_add(n, us);
		} else {
			bpf_map_update_elem(&samples, &s->key, &us, BPF_NOEXIST);
		}
	}
	bpf_map_delete_elem(&start, &next_tid);
	return 0;
}
