/* streaming: printf("%d %d\n", pid, nsecs) per event -> one 16-byte ring
 * buffer record; a failed reserve is counted per CPU */
#include "common.h"
DECLARE_RINGBUF(4 * 1024 * 1024)

SEC("tracepoint/syscalls/sys_enter_getppid")
int on_getppid(struct sys_enter_ctx *ctx)
{
	PID_FILTER();
	return emit_event(&events, &lost, 1);
}
