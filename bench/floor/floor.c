/* The floor's user side: one minimal libbpf loader for every case.
 *
 *   floor OBJECT.bpf.o PID [BINARY FUNCTION]
 *
 * Opens OBJECT, sets target_pid, loads, attaches every program (uprobe and
 * uretprobe programs to FUNCTION in BINARY, for every process), prints
 * __BPFTRACE_NOTIFY_PROBES_ATTACHED on stderr, then by case (the object's
 * base name):
 *   startup1/startup20  print (and flush) "hit" per ring buffer record until
 *                       SIGINT (the harness sends it at the first one)
 *   stream              print "%d %llu\n" per record through one buffered
 *                       stdio stream until SIGINT, then drain (the BPF side
 *                       batches wake-ups; we poll every 10 ms)
 *   others              wait for SIGINT
 * At exit it prints its maps (bpftrace-like, plainly) and, when the lost
 * counter is non-zero, "Lost N events" on stderr. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

struct event {
	unsigned int pid;
	unsigned int pad;
	unsigned long long ts;
};

static volatile sig_atomic_t stop;
static int first_only;
static int ncpu;

static void on_signal(int sig) { (void)sig; stop = 1; }

static int libbpf_quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_WARN)
		return vfprintf(stderr, fmt, ap);
	return 0;
}

static int on_record(void *ctx, void *data, size_t size)
{
	(void)ctx;
	(void)size;
	const struct event *e = data;
	if (first_only) {
		fputs("hit\n", stdout);
		fflush(stdout);
		return 0;
	}
	fprintf(stdout, "%u %llu\n", e->pid, e->ts);
	return 0;
}

static unsigned long long percpu_sum(int fd, const void *key)
{
	unsigned long long vals[ncpu];
	unsigned long long s = 0;
	if (bpf_map_lookup_elem(fd, key, vals))
		return 0;
	for (int i = 0; i < ncpu; i++)
		s += vals[i];
	return s;
}

static void print_map(struct bpf_map *map)
{
	const char *name = bpf_map__name(map);
	enum bpf_map_type t = bpf_map__type(map);
	int fd = bpf_map__fd(map);
	if (strchr(name, '.') || !strcmp(name, "events") || !strcmp(name, "start") ||
	    t == BPF_MAP_TYPE_STACK_TRACE)
		return;
	if (!strcmp(name, "lost")) {
		unsigned int k = 0;
		unsigned long long n = percpu_sum(fd, &k);
		if (n)
			fprintf(stderr, "Lost %llu events\n", n);
		return;
	}
	if (t == BPF_MAP_TYPE_PERCPU_ARRAY && bpf_map__max_entries(map) == 1) {
		unsigned int k = 0;
		printf("@%s: %llu\n", name, percpu_sum(fd, &k));
	} else if (t == BPF_MAP_TYPE_PERCPU_ARRAY) { /* a log2 histogram */
		printf("@%s:\n", name);
		for (unsigned int k = 0; k < bpf_map__max_entries(map); k++) {
			unsigned long long n = percpu_sum(fd, &k);
			if (n)
				printf("slot %u: %llu\n", k, n);
		}
	} else { /* hashes keyed by u64 */
		unsigned long long key, next, *pk = NULL;
		while (!bpf_map_get_next_key(fd, pk, &next)) {
			key = next;
			pk = &key;
			unsigned long long v;
			if (t == BPF_MAP_TYPE_PERCPU_HASH)
				v = percpu_sum(fd, &key);
			else if (bpf_map_lookup_elem(fd, &key, &v))
				continue;
			printf("@%s[%llu]: %llu\n", name, key, v);
		}
	}
}

int main(int argc, char **argv)
{
	if (argc != 3 && argc != 5) {
		fprintf(stderr, "usage: floor OBJECT.bpf.o PID [BINARY FUNCTION]\n");
		return 2;
	}
	const char *binary = argc == 5 ? argv[3] : NULL;
	const char *function = argc == 5 ? argv[4] : NULL;
	const char *path = argv[1];
	unsigned int pid = (unsigned int)strtoul(argv[2], NULL, 10);
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	first_only = !strncmp(base, "startup", 7);
	ncpu = libbpf_num_possible_cpus();
	libbpf_set_print(libbpf_quiet);

	static char outbuf[1 << 20];
	setvbuf(stdout, outbuf, _IOFBF, sizeof(outbuf));

	struct sigaction sa = {0};
	sa.sa_handler = on_signal; /* no SA_RESTART: let poll return EINTR */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	struct bpf_object *obj = bpf_object__open_file(path, NULL);
	if (!obj) {
		fprintf(stderr, "floor: cannot open %s: %s\n", path, strerror(errno));
		return 1;
	}
	struct bpf_map *map;
	bpf_object__for_each_map(map, obj) {
		const char *n = bpf_map__name(map);
		size_t len = strlen(n);
		if (len >= 7 && !strcmp(n + len - 7, ".rodata")) {
			size_t sz;
			unsigned int *ro = (unsigned int *)bpf_map__initial_value(map, &sz);
			if (!ro || sz < sizeof(*ro)) {
				fprintf(stderr, "floor: no .rodata to set the pid in\n");
				return 1;
			}
			*ro = pid;
		}
	}
	if (bpf_object__load(obj)) {
		fprintf(stderr, "floor: load failed: %s\n", strerror(errno));
		return 1;
	}
	struct bpf_program *prog;
	bpf_object__for_each_program(prog, obj) {
		const char *sec = bpf_program__section_name(prog);
		int ret = !strcmp(sec, "uretprobe");
		if (ret || !strcmp(sec, "uprobe")) {
			if (!binary) {
				fprintf(stderr, "floor: %s needs BINARY FUNCTION\n", sec);
				return 2;
			}
			LIBBPF_OPTS(bpf_uprobe_opts, uo, .func_name = function, .retprobe = ret);
			if (!bpf_program__attach_uprobe_opts(prog, -1, binary, 0, &uo)) {
				fprintf(stderr, "floor: attach %s to %s:%s failed: %s\n", sec,
					binary, function, strerror(errno));
				return 1;
			}
			continue;
		}
		if (!bpf_program__attach(prog)) {
			fprintf(stderr, "floor: attach %s failed: %s\n",
				bpf_program__name(prog), strerror(errno));
			return 1;
		}
	}
	struct ring_buffer *rb = NULL;
	struct bpf_map *events = bpf_object__find_map_by_name(obj, "events");
	if (events) {
		rb = ring_buffer__new(bpf_map__fd(events), on_record, NULL, NULL);
		if (!rb) {
			fprintf(stderr, "floor: ring buffer: %s\n", strerror(errno));
			return 1;
		}
	}
	fputs("__BPFTRACE_NOTIFY_PROBES_ATTACHED\n", stderr);

	if (rb) {
		while (!stop) {
			/* the stream case wakes us only per 256 KiB: poll often */
			int r = ring_buffer__poll(rb, first_only ? 100 : 10);
			if (r < 0 && r != -EINTR)
				break;
		}
		if (!first_only)
			ring_buffer__consume(rb); /* drain what is left */
	} else {
		while (!stop)
			pause();
	}
	bpf_object__for_each_map(map, obj) print_map(map);
	fflush(stdout);
	return 0;
}
