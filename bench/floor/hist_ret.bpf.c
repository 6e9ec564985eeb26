/* per-event (d): @ = hist(args->ret) on sys_exit_getppid */
#include "common.h"
DECLARE_HIST(hist)

SEC("tracepoint/syscalls/sys_exit_getppid")
int on_getppid_exit(struct sys_exit_ctx *ctx)
{
	PID_FILTER();
	hist_add(&hist, ctx->ret);
	return 0;
}
