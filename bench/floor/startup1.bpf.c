/* startup, one probe: first clock_nanosleep of the target -> one event */
#include "common.h"
DECLARE_RINGBUF(64 * 1024)

SEC("tracepoint/syscalls/sys_enter_nanosleep")
int on_nanosleep(struct sys_enter_ctx *ctx)
{
	PID_FILTER();
	return emit_event(&events, &lost, 0);
}
