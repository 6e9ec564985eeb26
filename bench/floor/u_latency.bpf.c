/* user probes (i): @s[tid] = nsecs on uprobe; @h = hist(nsecs - @s[tid]) and
 * delete(@s[tid]) on uretprobe */
#include "common.h"
DECLARE_LATENCY(start, hist)

SEC("uprobe")
int on_marker(void *ctx)
{
	PID_FILTER();
	latency_start(&start);
	return 0;
}

SEC("uretprobe")
int on_marker_return(void *ctx)
{
	PID_FILTER();
	latency_end(&start, &hist);
	return 0;
}
