//! Issue 14: arrays, records and nested tuples as bpftrace's current
//! dialect has them. Array members (of BTF and of the script's structs;
//! only plain `char` arrays of a script are strings), `a[i]` with bounds
//! checked for a constant, arrays compared, cast from and to integers and
//! strings; records `(a = 1, b = "x")` with `.a`, unified by field name;
//! tuples in tuples; structs held by value. Each snapshot shows the diagnostics, or the maps, the
//! variables' types, the scale of each indexed node and every read.

#[macro_use]
mod common;

case!(
    array_members_and_elements,
    "struct A { int x[4]; uint8_t y[4]; char c[4]; int z[2][2]; int *p[2]; int flex[0]; } BEGIN { $a = (struct A *)0; @x = $a.x; @y = $a.y; @c = $a.c; @e = $a.x[3]; $i = 1; @v = $a.z[$i][0]; @row = $a.z[1]; @p = *$a.p[1]; @f = $a.flex[9]; $copy = $a.x; @k[$copy[2]] = 1; @eq = $a.x == $copy; }"
);
case!(
    an_index_past_the_end,
    "struct A { int x[4]; } BEGIN { $a = (struct A *)0; @x = $a.x[4]; }"
);
case!(
    casts_to_and_from_arrays,
    "struct A { uint8_t y[4]; } BEGIN { @a = (int8[8])12345; @b = (int8[])12345; @c = (int8[])\"hello\"; @d = (uint32)((struct A *)0).y; @e = (int16[2])(int32)1; }"
);
case!(
    a_cast_to_an_array_of_another_size,
    "BEGIN { @a = (int8[4])12345; @b = (int8[4])(uint64)12345; }"
);
case!(
    records_and_their_fields,
    "BEGIN { $p = (x = 1, y = \"s\"); $r = (a = $p, b = (1, (2, 3))); @r = $r; @y = $r.a.y; @n = $r.b.1.0; $o = (m = 1, n = 2); $o = (n = 3, m = 4); @o = $o; @k[$p] = 1; }"
);
case!(
    a_record_field_that_is_not_there,
    "BEGIN { $p = (x = 1, y = 2); @z = $p.z; }"
);
case!(
    nested_tuples,
    "BEGIN { @t = (1, (2, \"x\", (3, 4))); @k[(1, (2, 3))] = 1; $t = ((int8)1, ((int8)-2, (int8)3)); @i = $t.1.0; }"
);
case!(
    structs_held_by_value,
    "struct Foo { int m; char name[4]; struct { int a[2]; } in; } BEGIN { $p = (struct Foo *)0; $s = *$p; @s = $s; @m = $s.m; @k[*$p, 1] = 1; @t = (1, *$p); @in = $p.in; @a = $s.in.a[1]; }"
);
