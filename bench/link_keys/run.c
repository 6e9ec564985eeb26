// Runs each program of link_keys.bpf.c 1,000,000 times with
// BPF_PROG_TEST_RUN, 7 rounds, and prints its mean ns per run (the kernel's
// own timer, which stops while the test is preempted, so a busy machine
// changes the figures little). As root:
//   clang -O2 -g -target bpf -I/usr/include/$(uname -m)-linux-gnu -c link_keys.bpf.c -o /tmp/link_keys.bpf.o
//   cc -O2 run.c -o /tmp/link_keys -lbpf && (cd /tmp && ./link_keys)
#include <stdio.h>
#include <string.h>
#include <bpf/libbpf.h>
#include <bpf/bpf.h>
struct link { unsigned long long a, b; };
struct tagged { unsigned long long tag, key; };
static unsigned run(int fd) {
    char pkt[64] = {0};
    LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = pkt, .data_size_in = sizeof pkt, .repeat = 1000000);
    if (bpf_prog_test_run_opts(fd, &o)) { perror("test_run"); return 0; }
    return o.duration;
}
int main(void) {
    struct bpf_object *obj = bpf_object__open_file("link_keys.bpf.o", NULL);
    if (!obj || bpf_object__load(obj)) { fprintf(stderr, "load failed\n"); return 1; }
    const char *names[] = {"lookup_slot", "lookup_tagged", "file_lookup_delete_slot", "file_lookup_delete_tagged"};
    int fds[4];
    for (int i = 0; i < 4; i++) fds[i] = bpf_program__fd(bpf_object__find_program_by_name(obj, names[i]));
    // Entries for the lookup-only programs.
    unsigned long long k = 0xffff888012345678ULL; struct link v = {4242, 1000};
    struct tagged tk = {1, k};
    bpf_map_update_elem(bpf_object__find_map_fd_by_name(obj, "slot"), &k, &v, 0);
    bpf_map_update_elem(bpf_object__find_map_fd_by_name(obj, "tagged"), &tk, &v, 0);
    for (int round = 0; round < 7; round++) {
        for (int i = 0; i < 4; i++) printf("%s %u\n", names[i], run(fds[i]));
        // the lookup programs need their entries back after the update/delete ones
        bpf_map_update_elem(bpf_object__find_map_fd_by_name(obj, "slot"), &k, &v, 0);
        bpf_map_update_elem(bpf_object__find_map_fd_by_name(obj, "tagged"), &tk, &v, 0);
    }
    return 0;
}
