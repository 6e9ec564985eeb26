//! Language pieces of bpftrace's current dialect: buffers compared and
//! chosen by a ternary, a ternary of two effects, a tuple's field by a
//! constant index; and what is refused, with its help.

#[macro_use]
mod common;

case!(
    ok_buffers_compare_and_unify_in_a_ternary,
    r#"BEGIN { $a = buf("hi", 2); $b = buf("bye", 3); @eq = $a == $b; @ne = $a != $a; $t = nsecs ? buf("hi", 2) : buf("bye", 3); }"#
);
case!(
    err_buffer_compared_with_a_string,
    r#"BEGIN { $a = buf("hi", 2); @eq = $a == "hi"; }"#
);
case!(
    ok_ternary_of_two_effects,
    r#"BEGIN { nsecs ? printf("yes\n") : printf("no\n"); }"#
);
case!(
    err_ternary_of_effects_has_no_value,
    r#"BEGIN { $x = nsecs ? printf("yes\n") : printf("no\n"); }"#
);
case!(
    ok_tuple_index_by_constant,
    r#"BEGIN { $a = (1, "two", (3, 4)); @x = $a[1 + 1]; @s = $a[1]; @n = $a[0]; }"#
);
case!(
    err_tuple_index_past_the_end,
    r#"BEGIN { $a = (1, 2, 3); @x = $a[3]; }"#
);
case!(
    err_tuple_index_not_constant,
    r#"BEGIN { $a = (1, 2, 3); @x = $a[nsecs]; }"#
);
case!(
    ok_divisions_that_may_divide_by_zero_get_a_warning,
    // `/ 2` and `% 3` cannot: only the divisions by a variable, a map and
    // a literal 0 (and `/=`) carry the warning.
    r#"BEGIN { $z = 0; @a = 10 / $z; @b = 10 % @a; @c = 10 / 0; $z /= $z; @d = 10 / 2 + 10 % 3; }"#
);
case!(
    ok_a_block_whose_value_is_an_aggregation_folds_into_the_map,
    r#"BEGIN { @a = { let $a = 100; avg($a) }; @c[1] = { $x = 2; count() }; }"#
);
case!(
    err_an_aggregation_in_a_block_assigned_to_a_variable,
    r#"BEGIN { $v = { let $a = 100; avg($a) }; }"#
);
case!(
    ok_variables_declared_with_struct_types,
    "struct W { int a; char b[2]; }; BEGIN { let $w: struct W[2]; let $v: struct W; @a = $w[1].a + $v.a; }"
);
case!(
    err_variable_declared_with_an_unknown_type,
    "BEGIN { let $w: struct Nowhere[2]; }"
);
case!(
    err_a_floating_point_member_cannot_be_read,
    "union N { int i; float f; }; struct Foo { int m; union N n; double d; }; BEGIN { $s = *(struct Foo *)0; @i = $s.n.i; @f = ((struct Foo *)0)->d; }"
);
case!(
    ok_the_address_of_a_tuple_points_to_the_tuple,
    r#"BEGIN { $a = (1, "hello", 2); $p = &$a; @t = *$p; @s = (*$p).1; }"#
);
case!(
    ok_the_address_of_a_string_points_to_the_string,
    r#"BEGIN { $a = "hello"; $p = &$a; @s = *$p; $c = (int8 *)&$a; @c = *$c; }"#
);
case!(
    err_import_inside_a_block,
    r#"BEGIN { import "helpers.bt"; }"#
);
case!(
    ok_an_array_index_that_may_be_past_the_end_gets_a_warning,
    // Only `$a.x[$i]`: a literal index is checked when compiling.
    "struct A { int x[4]; } BEGIN { $a = (struct A *)0; $i = 5; @v = $a.x[$i]; @w = $a.x[3]; }"
);
case!(
    ok_buf_of_an_array_holds_its_bytes,
    "struct S { int d[4]; unsigned char c[3]; } BEGIN { $s = (struct S *)0; @a = buf($s.d); @b = buf($s.d, 6); @c = buf($s.c); }"
);
case!(
    ok_the_address_of_a_builtins_value_points_to_it,
    r#"BEGIN { $u = username; $p = &$u; @u = *$p; $e = strerror(2); $q = &$e; @e = *$q; }"#
);
