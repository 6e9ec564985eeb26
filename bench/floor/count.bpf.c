/* per-event (b): @ = count() -- one per-CPU counter */
#include "common.h"

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} counter SEC(".maps");

SEC("tracepoint/syscalls/sys_enter_getppid")
int on_getppid(struct sys_enter_ctx *ctx)
{
	PID_FILTER();
	__u32 k = 0;
	__u64 *n = bpf_map_lookup_elem(&counter, &k);
	if (n)
		*n += 1;
	return 0;
}
