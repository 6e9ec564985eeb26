/* Shared definitions for the floor's BPF programs: no vmlinux.h, only the
 * UAPI header and libbpf's helper definitions. Tracepoint contexts are written
 * by hand from /sys/kernel/tracing/events/syscalls/<name>/format. */
#ifndef FLOOR_COMMON_H
#define FLOOR_COMMON_H

#include <linux/types.h>
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

/* common fields of every trace event (offsets 0..7) */
struct trace_entry {
	unsigned short common_type;
	unsigned char common_flags;
	unsigned char common_preempt_count;
	int common_pid;
};

/* sys_enter_*: int __syscall_nr at 8, then the u64 args from 16 */
struct sys_enter_ctx {
	struct trace_entry ent;
	int __syscall_nr;
	unsigned long args[6];
};

/* sys_exit_*: int __syscall_nr at 8, long ret at 16 */
struct sys_exit_ctx {
	struct trace_entry ent;
	int __syscall_nr;
	long ret;
};

/* the traced process; set by the loader in .rodata before load */
const volatile __u32 target_pid = 0;

#define PID_FILTER()                                                      \
	do {                                                                  \
		if ((__u32)(bpf_get_current_pid_tgid() >> 32) != target_pid)   \
			return 0;                                                     \
	} while (0)

/* per-CPU count of failed ring buffer reservations ("Lost N events") */
#define DECLARE_RINGBUF(BYTES)                                            \
	struct {                                                              \
		__uint(type, BPF_MAP_TYPE_RINGBUF);                               \
		__uint(max_entries, BYTES);                                       \
	} events SEC(".maps");                                                \
	struct {                                                              \
		__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);                          \
		__uint(max_entries, 1);                                           \
		__type(key, __u32);                                               \
		__type(value, __u64);                                             \
	} lost SEC(".maps");

struct event {
	__u32 pid;
	__u32 pad;
	__u64 ts;
};

/* batch != 0: wake the consumer only once 256 KiB are waiting (it also polls
 * every 10 ms), instead of on (nearly) every record when it keeps up */
static __always_inline int emit_event(void *rb, void *lostmap, int batch)
{
	struct event *e = bpf_ringbuf_reserve(rb, sizeof(*e), 0);
	if (!e) {
		__u32 k = 0;
		__u64 *n = bpf_map_lookup_elem(lostmap, &k);
		if (n)
			*n += 1;
		return 0;
	}
	e->pid = bpf_get_current_pid_tgid() >> 32;
	e->pad = 0;
	e->ts = bpf_ktime_get_ns();
	__u64 flags = 0;
	if (batch)
		flags = bpf_ringbuf_query(rb, BPF_RB_AVAIL_DATA) >= 256 * 1024 ?
			BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP;
	bpf_ringbuf_submit(e, flags);
	return 0;
}

/* bpftrace-style log2 bucket: 0 for negative, 1 for 0, 2+floor(log2 v) */
#define HIST_SLOTS 66
static __always_inline __u32 hist_slot(__s64 v)
{
	if (v < 0)
		return 0;
	if (v == 0)
		return 1;
	__u64 x = v;
	__u32 r = 0;
	if (x >> 32) { x >>= 32; r += 32; }
	if (x >> 16) { x >>= 16; r += 16; }
	if (x >> 8) { x >>= 8; r += 8; }
	if (x >> 4) { x >>= 4; r += 4; }
	if (x >> 2) { x >>= 2; r += 2; }
	if (x >> 1) { r += 1; }
	return r + 2;
}

#define DECLARE_HIST(NAME)                                                \
	struct {                                                              \
		__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);                          \
		__uint(max_entries, HIST_SLOTS);                                  \
		__type(key, __u32);                                               \
		__type(value, __u64);                                             \
	} NAME SEC(".maps");

static __always_inline void hist_add(void *map, __s64 v)
{
	__u32 k = hist_slot(v);
	__u64 *n = bpf_map_lookup_elem(map, &k);
	if (n)
		*n += 1;
}

/* a per-CPU hash of counts keyed by a u64 (@[tid] = count() and the like) */
#define DECLARE_COUNTS(NAME)                                              \
	struct {                                                              \
		__uint(type, BPF_MAP_TYPE_PERCPU_HASH);                           \
		__uint(max_entries, 4096);                                        \
		__type(key, __u64);                                               \
		__type(value, __u64);                                             \
	} NAME SEC(".maps");

static __always_inline void count_key(void *counts, __u64 key)
{
	__u64 *n = bpf_map_lookup_elem(counts, &key);
	if (n) {
		*n += 1;
	} else {
		__u64 one = 1;
		bpf_map_update_elem(counts, &key, &one, BPF_NOEXIST);
	}
}

static __always_inline __u64 current_tid(void)
{
	return (__u32)bpf_get_current_pid_tgid();
}

/* a stack-trace map (127 frames, as bpftrace) and the counts of its stack
 * ids, printed as @counts[id] */
#define DECLARE_STACKS(NAME)                                              \
	struct {                                                              \
		__uint(type, BPF_MAP_TYPE_STACK_TRACE);                           \
		__uint(max_entries, 4096);                                        \
		__uint(key_size, sizeof(__u32));                                  \
		__uint(value_size, 127 * sizeof(__u64));                          \
	} NAME SEC(".maps");                                                  \
	DECLARE_COUNTS(counts)

static __always_inline void count_stack(void *ctx, void *stacks, void *counts, __u64 flags)
{
	long id = bpf_get_stackid(ctx, stacks, flags);
	if (id >= 0)
		count_key(counts, id);
}

/* the latency pattern: @s[tid] = nsecs at the start; at the end
 * @h = hist(nsecs - @s[tid]) and delete(@s[tid]) */
#define DECLARE_LATENCY(START, HIST)                                      \
	DECLARE_HIST(HIST)                                                    \
	struct {                                                              \
		__uint(type, BPF_MAP_TYPE_HASH);                                  \
		__uint(max_entries, 4096);                                        \
		__type(key, __u64);                                               \
		__type(value, __u64);                                             \
	} START SEC(".maps");

static __always_inline void latency_start(void *start)
{
	__u64 tid = current_tid();
	__u64 ts = bpf_ktime_get_ns();
	bpf_map_update_elem(start, &tid, &ts, BPF_ANY);
}

static __always_inline void latency_end(void *start, void *hist)
{
	__u64 tid = current_tid();
	__u64 *ts = bpf_map_lookup_elem(start, &tid);
	if (!ts)
		return;
	hist_add(hist, (__s64)(bpf_ktime_get_ns() - *ts));
	bpf_map_delete_elem(start, &tid);
}

char LICENSE[] SEC("license") = "GPL";

#endif
