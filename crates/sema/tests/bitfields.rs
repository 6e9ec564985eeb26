//! Bitfields (issue 14): members of the script's C structs and of the
//! kernel's BTF structs, read as the unsigned value of their bits; each
//! access shows the bytes read and the bits kept. A struct with bitfields
//! held by value keeps its layout (so `print` shows it).

#[macro_use]
mod common;

case!(
    script_struct_bitfields_through_a_pointer,
    "struct Foo { unsigned int a:4, b:8, c:3, d:1, e:16; } \
     tracepoint:syscalls:sys_enter_read { $foo = (struct Foo *)args->buf; printf(\"%d %d %d %d %d\\n\", $foo.a, $foo.b, $foo.c, $foo.d, $foo.e); }"
);
case!(
    a_btf_bitfield_of_curtask,
    "tracepoint:syscalls:sys_enter_getppid { @io = curtask->in_iowait; }"
);
case!(
    a_struct_value_with_bitfields_keeps_its_layout,
    "struct foo { unsigned long long x_0:1; unsigned long long x_1:1; unsigned long long x_2:2; } \
     BEGIN { $val = (uint64)0x1e; $f = *(struct foo *)(&$val); @f = $f; @x = $f.x_2; }"
);
case!(
    a_bitfield_must_be_an_integer_that_holds_it,
    "struct bad { char c:9; } BEGIN { }"
);
