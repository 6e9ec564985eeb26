/* per-event (c): @[tid] = count() -- a per-CPU hash keyed by tid */
#include "common.h"
DECLARE_COUNTS(counts)

SEC("tracepoint/syscalls/sys_enter_getppid")
int on_getppid(struct sys_enter_ctx *ctx)
{
	PID_FILTER();
	count_key(&counts, current_tid());
	return 0;
}
