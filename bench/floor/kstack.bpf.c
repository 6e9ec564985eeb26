/* per-event (g): @[kstack] = count() on sys_enter_getppid */
#include "common.h"
DECLARE_STACKS(stacks)

SEC("tracepoint/syscalls/sys_enter_getppid")
int on_getppid(struct sys_enter_ctx *ctx)
{
	PID_FILTER();
	count_stack(ctx, &stacks, &counts, 0);
	return 0;
}
