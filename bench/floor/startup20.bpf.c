/* startup, 20 probes: the same event from clock_nanosleep, plus 19 probes on
 * other syscalls (the same list as bench/run's STARTUP20_SYSCALLS). */
#include "common.h"
DECLARE_RINGBUF(64 * 1024)

#define PROBE(NAME)                                                       \
	SEC("tracepoint/syscalls/sys_enter_" #NAME)                           \
	int on_##NAME(struct sys_enter_ctx *ctx)                              \
	{                                                                     \
		PID_FILTER();                                                     \
		return emit_event(&events, &lost, 0);                                \
	}

PROBE(nanosleep)
PROBE(read)
PROBE(write)
PROBE(openat)
PROBE(close)
PROBE(mmap)
PROBE(munmap)
PROBE(brk)
PROBE(ioctl)
PROBE(pread64)
PROBE(pwrite64)
PROBE(readv)
PROBE(writev)
PROBE(access)
PROBE(pipe)
PROBE(select)
PROBE(sched_yield)
PROBE(mremap)
PROBE(msync)
PROBE(madvise)
