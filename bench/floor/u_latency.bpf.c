/* user probes (i): @s[tid] = nsecs on uprobe; @h = hist(nsecs - @s[tid]) and
 * delete(@s[tid]) on uretprobe */
#include "common.h"
DECLARE_HIST(hist)

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u64);
	__type(value, __u64);
} start SEC(".maps");

SEC("uprobe")
int on_marker(void *ctx)
{
	PID_FILTER();
	__u64 tid = (__u32)bpf_get_current_pid_tgid();
	__u64 ts = bpf_ktime_get_ns();
	bpf_map_update_elem(&start, &tid, &ts, BPF_ANY);
	return 0;
}

SEC("uretprobe")
int on_marker_return(void *ctx)
{
	PID_FILTER();
	__u64 tid = (__u32)bpf_get_current_pid_tgid();
	__u64 *ts = bpf_map_lookup_elem(&start, &tid);
	if (!ts)
		return 0;
	hist_add(&hist, (__s64)(bpf_ktime_get_ns() - *ts));
	bpf_map_delete_elem(&start, &tid);
	return 0;
}
