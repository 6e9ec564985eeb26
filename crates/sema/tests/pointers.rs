//! Issue 14: pointers and arrays as bpftrace's current dialect has them.
//! Casts to any pointer type, `*p` of any pointer, `&x`, `p[i]`, pointer
//! arithmetic scaled by the pointee's size as in C, `.` reading through a
//! pointer. Each snapshot shows the diagnostics, or the maps, the variables'
//! types, the scale of each scaled node and every read through memory.

#[macro_use]
mod common;

case!(
    arithmetic_scales_by_the_pointee,
    "struct A { int32_t a; int32_t b; char c[28] } BEGIN { @p8 = (int8 *)0x32; @p8 += 1; @p32 = (int32 *)0x32; @p32++; @p32 -= 6; $a = (struct A *)1024; $b = $a - 5; $c = 2 + (uint64 *)0; $v = (void *)0; $v++; $c--; }"
);
case!(
    deref_index_and_address_of,
    "BEGIN { $v = (uint64)0x1122; $p = &$v; @x = *$p; $b = (uint8 *)$p; @y = $b[1]; $i = 3; @z = $b[$i]; $pp = (int32 **)0; @w = **($pp + 1); }"
);
case!(
    dot_and_star_on_struct_pointers,
    "struct Foo { int a; char b[10]; } BEGIN { $pp = (struct Foo **)0; @a = (*$pp).a; $f = (struct Foo *)0; @b = $f.a; @c = &$f->a; }"
);
case!(
    pointer_casts_of_kernel_types,
    "kprobe:vfs_read { $f = (struct file *)arg0; @s = $f.f_pos; @n = $f.f_path.dentry.d_name.len; $l = (long *)0; @l = *$l; $q = (size_t *)0; @q = $q[2]; $fp = (struct file **)arg1; @m = $fp[1].f_mode; }"
);
case!(
    star_on_a_void_pointer,
    "BEGIN { $v = (void *)0; @x = *$v; }"
);
case!(
    cast_to_an_unknown_pointer_type,
    "BEGIN { $v = (frob_t *)0; }"
);
case!(address_of_a_literal, "BEGIN { $v = &1; }");
