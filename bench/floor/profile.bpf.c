/* profile floor: on-CPU samples counted by (pid, user stack, kernel stack,
 * comm), the idle task left out, as bcc's profile and `weft profile` do.
 * The loader (profile.c) opens the timer perf events and attaches this to
 * each. target_pid 0: every process. */
#include "common.h"

struct sample_key {
	__u32 pid;
	__s32 ustack;
	__s32 kstack;
	char comm[16];
};

struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(max_entries, 16384);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, 127 * sizeof(__u64));
} stacks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, struct sample_key);
	__type(value, __u64);
} samples SEC(".maps");

SEC("perf_event")
int on_sample(void *ctx)
{
	__u32 pid = bpf_get_current_pid_tgid() >> 32;
	if (pid == 0 || (target_pid && pid != target_pid))
		return 0;
	struct sample_key key = {.pid = pid};
	bpf_get_current_comm(key.comm, sizeof(key.comm));
	key.ustack = bpf_get_stackid(ctx, &stacks, BPF_F_USER_STACK);
	key.kstack = bpf_get_stackid(ctx, &stacks, 0);
	__u64 *n = bpf_map_lookup_elem(&samples, &key);
	if (n) {
		__sync_fetch_and_add(n, 1);
	} else {
		__u64 one = 1;
		bpf_map_update_elem(&samples, &key, &one, BPF_NOEXIST);
	}
	return 0;
}
