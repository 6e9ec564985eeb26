/* user probes (j): uprobe on the marker, @[ustack] = count(): a stack id per
 * event from a stack-trace map, counted in a per-CPU hash keyed by it */
#include "common.h"
DECLARE_STACKS(stacks)

SEC("uprobe")
int on_marker(void *ctx)
{
	PID_FILTER();
	count_stack(ctx, &stacks, &counts, BPF_F_USER_STACK);
	return 0;
}
