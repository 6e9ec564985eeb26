/* user probes (h): uprobe on the workload's marker, @[tid] = count() */
#include "common.h"
DECLARE_COUNTS(counts)

SEC("uprobe")
int on_marker(void *ctx)
{
	PID_FILTER();
	count_key(&counts, current_tid());
	return 0;
}
