//! Issue 14: types as bpftrace's current dialect has them. Enum values:
//! an enumerator of the script's enums, a cast `(enum E)x` and a kernel
//! enum keep their enum type through variables, maps and tuples (so they
//! print as names), and lose it in arithmetic. Each snapshot shows the
//! diagnostics, or the maps, printf sites and the variables' types.

#[macro_use]
mod common;

case!(
    enumerators_keep_their_enum,
    "enum Foo { ONE = 1, TWO = 2 }; BEGIN { $one = ONE; @v = TWO; @k[ONE] = 1; @t = (ONE, TWO); @plain = ONE + 1; printf(\"%d %s\\n\", ONE, ONE); }"
);
case!(
    casts_to_script_and_kernel_enums,
    "enum Foo { ONE = 1 }; BEGIN { $x = 5; @s = (enum Foo)$x; @k = (enum weft_signed)$x; }"
);
case!(
    an_enum_and_an_integer_meet_as_an_integer,
    "enum Foo { ONE = 1 }; BEGIN { @m = ONE; @m = 7; }"
);
case!(
    a_cast_to_an_enum_nobody_defined,
    "BEGIN { @x = (enum nowhere)1; }"
);
case!(
    sizeof_an_enumerator_is_eight,
    "enum Foo { ONE = 1 }; BEGIN { @a = sizeof(ONE); @b = sizeof(WEFT_BELOW_ZERO); }"
);
case!(
    literals_take_the_smallest_signed_type,
    "BEGIN { $a = 1; $b = 200; $c = 70000; $d = 5000000000; $e = -128; $f = -129; $g = 0xffffffffffffffff; $h = 1 + 1; }"
);
case!(
    tuples_pack_integers_at_their_width,
    "BEGIN { @t = ((int8)1, (int16)1, (int32)1); @u = (1, \"ab\", (int64)2); @k[(int16)-1, ((int32)-2, 3)] = 1; $v = (1, 2); $v = (300, 2); }"
);
