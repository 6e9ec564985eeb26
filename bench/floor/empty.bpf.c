/* per-event (a): an empty probe body behind the pid filter */
#include "common.h"

SEC("tracepoint/syscalls/sys_enter_getppid")
int on_getppid(struct sys_enter_ctx *ctx)
{
	PID_FILTER();
	return 0;
}
