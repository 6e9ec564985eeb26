// The per-event cost behind one design choice of weft's streams: a link key
// in a map of its own slot (an 8-byte key) or in one map for every slot with
// a slot tag in the key (16 bytes). Each program does, on a link map shaped
// like weft's (LRU hash, 10,240 entries, value = begin key + start), what a
// stage does: a lookup; or what a linking stage and the end do: an update, a
// lookup and a delete. See run.c.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct tagged { __u64 tag; __u64 key; };
struct link { __u64 begin_key; __u64 start; };

struct { __uint(type, BPF_MAP_TYPE_LRU_HASH); __uint(max_entries, 10240);
         __type(key, __u64); __type(value, struct link); } slot SEC(".maps");
struct { __uint(type, BPF_MAP_TYPE_LRU_HASH); __uint(max_entries, 10240);
         __type(key, struct tagged); __type(value, struct link); } tagged SEC(".maps");

static volatile __u64 key_value = 0xffff888012345678ULL;

SEC("xdp") int file_lookup_delete_slot(struct xdp_md *ctx) {
    __u64 k = key_value;
    struct link v = { 4242, 1000 };
    bpf_map_update_elem(&slot, &k, &v, BPF_ANY);
    struct link *p = bpf_map_lookup_elem(&slot, &k);
    if (p) bpf_map_delete_elem(&slot, &k);
    return XDP_PASS;
}
SEC("xdp") int file_lookup_delete_tagged(struct xdp_md *ctx) {
    struct tagged k = { 1, key_value };
    struct link v = { 4242, 1000 };
    bpf_map_update_elem(&tagged, &k, &v, BPF_ANY);
    struct link *p = bpf_map_lookup_elem(&tagged, &k);
    if (p) bpf_map_delete_elem(&tagged, &k);
    return XDP_PASS;
}
SEC("xdp") int lookup_slot(struct xdp_md *ctx) {
    __u64 k = key_value;
    struct link *p = bpf_map_lookup_elem(&slot, &k);
    return p ? XDP_PASS : XDP_DROP;
}
SEC("xdp") int lookup_tagged(struct xdp_md *ctx) {
    struct tagged k = { 1, key_value };
    struct link *p = bpf_map_lookup_elem(&tagged, &k);
    return p ? XDP_PASS : XDP_DROP;
}
char LICENSE[] SEC("license") = "GPL";
