/* user probes (h): uprobe on the workload's marker, @[tid] = count() */
#include "common.h"

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u64);
	__type(value, __u64);
} counts SEC(".maps");

SEC("uprobe")
int on_marker(void *ctx)
{
	PID_FILTER();
	__u64 tid = (__u32)bpf_get_current_pid_tgid();
	__u64 *n = bpf_map_lookup_elem(&counts, &tid);
	if (n) {
		*n += 1;
	} else {
		__u64 one = 1;
		bpf_map_update_elem(&counts, &tid, &one, BPF_NOEXIST);
	}
	return 0;
}
