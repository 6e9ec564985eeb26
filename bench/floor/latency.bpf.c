/* per-event (e): @s[tid] = nsecs on enter; @h = hist(nsecs - @s[tid]) and
 * delete(@s[tid]) on exit */
#include "common.h"
DECLARE_LATENCY(start, hist)

SEC("tracepoint/syscalls/sys_enter_getppid")
int on_enter(struct sys_enter_ctx *ctx)
{
	PID_FILTER();
	latency_start(&start);
	return 0;
}

SEC("tracepoint/syscalls/sys_exit_getppid")
int on_exit(struct sys_exit_ctx *ctx)
{
	PID_FILTER();
	latency_end(&start, &hist);
	return 0;
}
