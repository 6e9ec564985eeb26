/* The floor of the profile cases: a libbpf loader that symbolizes.
 *
 *   profile OBJECT.bpf.o PID HZ SECONDS
 *
 * Loads OBJECT (profile.bpf.o or offcpu.bpf.o), sets target_pid (0: every
 * process), opens a cpu-clock perf event at HZ on every CPU for the
 * perf_event program (HZ 0: none, the off-CPU case), attaches, prints
 * __BPFTRACE_NOTIFY_PROBES_ATTACHED on stderr, runs SECONDS (or until
 * SIGINT), then prints the `samples` map as folded stacks
 * (`comm;user frames;kernel frames count`, root first): kernel frames from
 * /proc/kallsyms, user frames from the ELF symbol tables of the files each
 * process maps (read once per file with libelf, at exit). It is the least a
 * tool that names the stacks it took has to do. */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

struct sample_key {
	unsigned int pid;
	int ustack;
	int kstack;
	char comm[16];
};

static volatile sig_atomic_t stop;
static void on_signal(int sig) { (void)sig; stop = 1; }

static int libbpf_quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return level == LIBBPF_WARN ? vfprintf(stderr, fmt, ap) : 0;
}

/* ---- symbol tables: (address, name) sorted by address */
struct sym { unsigned long long addr; char *name; };
struct table { struct sym *syms; size_t n, cap; };

static void table_add(struct table *t, unsigned long long addr, const char *name)
{
	if (t->n == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 1024;
		t->syms = realloc(t->syms, t->cap * sizeof(*t->syms));
	}
	t->syms[t->n].addr = addr;
	t->syms[t->n].name = strdup(name);
	t->n++;
}

static int by_addr(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static const char *table_find(const struct table *t, unsigned long long addr)
{
	size_t lo = 0, hi = t->n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (t->syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? t->syms[lo - 1].name : NULL;
}

static struct table kallsyms;

static void load_kallsyms(void)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	if (!f)
		return;
	static char buf[1 << 20];
	setvbuf(f, buf, _IOFBF, sizeof(buf));
	char line[512], name[256], type;
	unsigned long long addr;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %255s", &addr, &type, name) == 3 && addr &&
		    strncmp(name, "__pfx_", 6))
			table_add(&kallsyms, addr, name);
	}
	fclose(f);
	qsort(kallsyms.syms, kallsyms.n, sizeof(struct sym), by_addr);
}

/* ---- user space: one symbol table per file (by path), file offsets */
struct file_syms {
	char *path;
	struct table t; /* keyed by file offset of each function */
	struct file_syms *next;
};
static struct file_syms *files;

static struct file_syms *file_symbols(const char *path)
{
	for (struct file_syms *f = files; f; f = f->next)
		if (!strcmp(f->path, path))
			return f;
	struct file_syms *f = calloc(1, sizeof(*f));
	f->path = strdup(path);
	f->next = files;
	files = f;
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return f;
	Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	/* section vaddr -> file offset, for symbols (st_value is a vaddr) */
	Elf_Scn *scn = NULL;
	while (e && (scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM))
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		size_t n = sh.sh_entsize ? sh.sh_size / sh.sh_entsize : 0;
		for (size_t i = 0; d && i < n; i++) {
			GElf_Sym s;
			if (!gelf_getsym(d, i, &s) || GELF_ST_TYPE(s.st_info) != STT_FUNC || !s.st_value)
				continue;
			Elf_Scn *in = elf_getscn(e, s.st_shndx);
			GElf_Shdr ish;
			if (!in || !gelf_getshdr(in, &ish))
				continue;
			const char *name = elf_strptr(e, sh.sh_link, s.st_name);
			if (name)
				table_add(&f->t, s.st_value - ish.sh_addr + ish.sh_offset, name);
		}
	}
	if (e)
		elf_end(e);
	close(fd);
	qsort(f->t.syms, f->t.n, sizeof(struct sym), by_addr);
	return f;
}

/* one process's executable mappings */
struct mapping { unsigned long long start, end, off; char path[256]; };
struct proc_maps { unsigned int pid; struct mapping *m; size_t n; struct proc_maps *next; };
static struct proc_maps *procs;

static struct proc_maps *proc_maps(unsigned int pid)
{
	for (struct proc_maps *p = procs; p; p = p->next)
		if (p->pid == pid)
			return p;
	struct proc_maps *p = calloc(1, sizeof(*p));
	p->pid = pid;
	p->next = procs;
	procs = p;
	char path[64], line[512];
	snprintf(path, sizeof(path), "/proc/%u/maps", pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return p;
	size_t cap = 0;
	while (fgets(line, sizeof(line), f)) {
		struct mapping m = {0};
		char perms[8];
		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %255s", &m.start, &m.end, perms, &m.off,
			   m.path) != 5 || !strchr(perms, 'x') || m.path[0] != '/')
			continue;
		if (p->n == cap) {
			cap = cap ? 2 * cap : 16;
			p->m = realloc(p->m, cap * sizeof(*p->m));
		}
		p->m[p->n++] = m;
	}
	fclose(f);
	return p;
}

static const char *user_symbol(unsigned int pid, unsigned long long addr)
{
	struct proc_maps *p = proc_maps(pid);
	for (size_t i = 0; i < p->n; i++)
		if (addr >= p->m[i].start && addr < p->m[i].end)
			return table_find(&file_symbols(p->m[i].path)->t,
					  addr - p->m[i].start + p->m[i].off);
	return NULL;
}

/* ---- output */
static void print_stack(int fd, int id, unsigned int pid, int user)
{
	if (id < 0)
		return;
	unsigned long long ips[127] = {0};
	if (bpf_map_lookup_elem(fd, &id, ips))
		return;
	int n = 0;
	while (n < 127 && ips[n])
		n++;
	for (int i = n - 1; i >= 0; i--) {
		/* return addresses are looked up one byte back */
		unsigned long long a = i ? ips[i] - 1 : ips[i];
		const char *s = user ? user_symbol(pid, a) : table_find(&kallsyms, a);
		printf(";%s%s", s ? s : "[unknown]", user ? "" : "_[k]");
	}
}

int main(int argc, char **argv)
{
	if (argc != 5) {
		fprintf(stderr, "usage: profile OBJECT.bpf.o PID HZ SECONDS\n");
		return 2;
	}
	unsigned int pid = strtoul(argv[2], NULL, 10);
	unsigned long hz = strtoul(argv[3], NULL, 10);
	double seconds = atof(argv[4]);
	libbpf_set_print(libbpf_quiet);
	elf_version(EV_CURRENT);
	static char outbuf[1 << 20];
	setvbuf(stdout, outbuf, _IOFBF, sizeof(outbuf));
	struct sigaction sa = {0};
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	struct bpf_object *obj = bpf_object__open_file(argv[1], NULL);
	if (!obj) {
		fprintf(stderr, "profile: cannot open %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	struct bpf_map *map;
	bpf_object__for_each_map(map, obj) {
		const char *n = bpf_map__name(map);
		size_t len = strlen(n), sz;
		if (len >= 7 && !strcmp(n + len - 7, ".rodata")) {
			unsigned int *ro = (unsigned int *)bpf_map__initial_value(map, &sz);
			if (ro && sz >= sizeof(*ro))
				*ro = pid;
		}
	}
	if (bpf_object__load(obj)) {
		fprintf(stderr, "profile: load failed: %s\n", strerror(errno));
		return 1;
	}
	struct bpf_program *prog;
	bpf_object__for_each_program(prog, obj) {
		if (hz && !strcmp(bpf_program__section_name(prog), "perf_event")) {
			int ncpu = libbpf_num_possible_cpus();
			for (int cpu = 0; cpu < ncpu; cpu++) {
				struct perf_event_attr attr = {
					.type = PERF_TYPE_SOFTWARE,
					.config = PERF_COUNT_SW_CPU_CLOCK,
					.size = sizeof(attr),
					.sample_period = 1000000000ul / hz,
				};
				int fd = syscall(SYS_perf_event_open, &attr, -1, cpu, -1, 0);
				if (fd < 0)
					continue; /* an offline CPU */
				if (!bpf_program__attach_perf_event(prog, fd)) {
					fprintf(stderr, "profile: attach: %s\n", strerror(errno));
					return 1;
				}
			}
		} else if (!bpf_program__attach(prog)) {
			fprintf(stderr, "profile: attach %s: %s\n", bpf_program__name(prog),
				strerror(errno));
			return 1;
		}
	}
	fputs("__BPFTRACE_NOTIFY_PROBES_ATTACHED\n", stderr);
	struct timespec t = {(time_t)seconds, (long)((seconds - (time_t)seconds) * 1e9)};
	while (!stop && nanosleep(&t, &t) && errno == EINTR)
		;

	load_kallsyms();
	int stacks = bpf_object__find_map_fd_by_name(obj, "stacks");
	int samples = bpf_object__find_map_fd_by_name(obj, "samples");
	struct sample_key key, next, *prev = NULL;
	while (!bpf_map_get_next_key(samples, prev, &next)) {
		key = next;
		prev = &key;
		unsigned long long v;
		if (bpf_map_lookup_elem(samples, &key, &v))
			continue;
		printf("%.16s", key.comm);
		print_stack(stacks, key.ustack, key.pid, 1);
		print_stack(stacks, key.kstack, key.pid, 0);
		printf(" %llu\n", v);
	}
	fflush(stdout);
	return 0;
}
