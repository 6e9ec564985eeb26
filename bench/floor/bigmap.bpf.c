/* memory, long run: @m[nsecs] = count() -- one key per event (100k keys) */
#include "common.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 262144);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u64);
	__type(value, __u64);
} m SEC(".maps");

SEC("tracepoint/syscalls/sys_enter_getppid")
int on_getppid(struct sys_enter_ctx *ctx)
{
	PID_FILTER();
	__u64 k = bpf_ktime_get_ns();
	__u64 *n = bpf_map_lookup_elem(&m, &k);
	if (n) {
		__sync_fetch_and_add(n, 1);
	} else {
		__u64 one = 1;
		bpf_map_update_elem(&m, &k, &one, BPF_ANY);
	}
	return 0;
}
