//! Every diagnostic the lexer and parser can report, one constructor each.
//!
//! Codes `E0001`–`E0099` (in the one table, `source::Code`) belong to this
//! crate and are stable: never reuse a retired code.

use source::{Code, Diagnostic, Span};

/// `"abc` without a closing quote on the same line.
pub fn unterminated_string(span: Span) -> Diagnostic {
    Diagnostic::error("unterminated string")
        .with_code(Code::E0001)
        .with_label(span, "string starts here and is not closed on this line")
        .with_help("close the string with `\"`; write a newline inside a string as `\\n`")
}

/// `\q` inside a string.
pub fn unknown_escape(span: Span, ch: char) -> Diagnostic {
    Diagnostic::error(format!("unknown escape sequence `\\{ch}`"))
        .with_code(Code::E0002)
        .with_label(span, "unknown escape")
        .with_help("valid escapes are \\n \\t \\r \\\\ \\\" \\xHH and \\NNN (octal)")
}

/// `\x` not followed by a hex digit.
pub fn invalid_hex_escape(span: Span) -> Diagnostic {
    Diagnostic::error("invalid hex escape sequence")
        .with_code(Code::E0003)
        .with_label(span, "expected one or two hex digits after `\\x`")
}

/// `\777`.
pub fn octal_escape_out_of_range(span: Span) -> Diagnostic {
    Diagnostic::error("octal escape sequence out of range")
        .with_code(Code::E0004)
        .with_label(span, "value is larger than 255 (`\\377`)")
}

/// `/* ...` with no `*/`.
pub fn unterminated_comment(span: Span) -> Diagnostic {
    Diagnostic::error("unterminated block comment")
        .with_code(Code::E0005)
        .with_label(span, "comment starts here")
        .with_help("close the comment with `*/`")
}

/// A character that starts no token.
pub fn unexpected_char(span: Span, ch: char) -> Diagnostic {
    Diagnostic::error(format!("unexpected character {ch:?}"))
        .with_code(Code::E0006)
        .with_label(span, "not valid here")
}

/// An integer literal that does not fit in 64 bits.
pub fn int_too_large(span: Span, text: &str) -> Diagnostic {
    Diagnostic::error(format!("integer literal too large: `{text}`"))
        .with_code(Code::E0007)
        .with_label(span, "does not fit in 64 bits")
        .with_note("the largest integer is 18446744073709551615 (u64::MAX)")
}

/// `12abc`.
pub fn invalid_int_suffix(span: Span, suffix: &str) -> Diagnostic {
    Diagnostic::error(format!("invalid integer suffix `{suffix}`"))
        .with_code(Code::E0008)
        .with_label(span, "unknown suffix")
        .with_help("valid suffixes are u, l, ul, ll, ull and the durations ns, us, ms, s, m, h, d")
}

/// `0x`, `1_`, `09`.
pub fn invalid_int(span: Span, text: &str) -> Diagnostic {
    Diagnostic::error(format!("invalid integer literal `{text}`"))
        .with_code(Code::E0009)
        .with_label(span, "malformed digits")
}

/// `''`, `'ab'`.
pub fn invalid_char_literal(span: Span) -> Diagnostic {
    Diagnostic::error("invalid character literal")
        .with_code(Code::E0010)
        .with_label(span, "expected one ASCII character between `'`")
}

/// `$0` or a positional number that does not fit.
pub fn positional_out_of_range(span: Span) -> Diagnostic {
    Diagnostic::error("positional parameter out of range")
        .with_code(Code::E0011)
        .with_label(span, "positional parameters start at `$1`")
}

/// Generic "expected X, found Y".
pub fn expected(span: Span, expected: &str, found: &str) -> Diagnostic {
    Diagnostic::error(format!("expected {expected}, found {found}"))
        .with_code(Code::E0020)
        .with_label(span, format!("expected {expected}"))
}

/// A statement not followed by `;` or `}`.
pub fn expected_semicolon(span: Span, prev: Span, found: &str) -> Diagnostic {
    Diagnostic::error(format!("expected `;`, found {found}"))
        .with_code(Code::E0021)
        .with_label(span, "unexpected here")
        .with_secondary(prev, "after this statement")
        .with_help("separate statements with `;`")
}

/// Where an expression was required.
pub fn expected_expression(span: Span, found: &str) -> Diagnostic {
    Diagnostic::error(format!("expected expression, found {found}"))
        .with_code(Code::E0022)
        .with_label(span, "expected an expression here")
}

/// `/pid = 1/`.
pub fn assign_in_predicate(span: Span) -> Diagnostic {
    Diagnostic::error("`=` in predicate")
        .with_code(Code::E0023)
        .with_label(span, "assignment is not allowed here")
        .with_help("did you mean `==`?")
}

/// `kprobe:f print(1);`.
pub fn missing_probe_block(span: Span, found: &str) -> Diagnostic {
    Diagnostic::error(format!("missing `{{` after probe, found {found}"))
        .with_code(Code::E0024)
        .with_label(span, "expected `{` to start the action block")
        .with_help("a probe is `provider:target /predicate/ { actions }`")
}

/// A probe list with an empty attach point (`kprobe:a, {`) or none at all.
pub fn attach_point_expected(span: Span, found: &str) -> Diagnostic {
    Diagnostic::error(format!("attach point expected, found {found}"))
        .with_code(Code::E0025)
        .with_label(span, "expected an attach point such as `kprobe:vfs_read`")
}

/// `(` / `[` / `{` never closed.
pub fn unclosed_delimiter(span: Span, open: Span, close: char, found: &str) -> Diagnostic {
    Diagnostic::error(format!("expected `{close}`, found {found}"))
        .with_code(Code::E0026)
        .with_label(span, format!("expected `{close}`"))
        .with_secondary(open, "unclosed delimiter opened here")
}

/// Nesting beyond the parser's depth limit.
pub fn nesting_too_deep(span: Span, limit: usize) -> Diagnostic {
    Diagnostic::error("expression or block nested too deeply")
        .with_code(Code::E0027)
        .with_label(span, format!("more than {limit} levels of nesting"))
        .with_help("split the expression using variables")
}

/// `1 = 2`, `f() += 1`.
pub fn invalid_assign_target(span: Span) -> Diagnostic {
    Diagnostic::error("invalid assignment target")
        .with_code(Code::E0028)
        .with_label(
            span,
            "only scratch variables (`$x`) and maps (`@m`, `@m[k]`) can be assigned",
        )
}

/// `1++`.
pub fn invalid_incdec_target(span: Span) -> Diagnostic {
    Diagnostic::error("invalid increment/decrement target")
        .with_code(Code::E0029)
        .with_label(span, "`++` and `--` need a scratch variable or a map")
}

/// A type was required (cast, `let $x:`, function signature).
pub fn expected_type(span: Span, found: &str) -> Diagnostic {
    Diagnostic::error(format!("expected type, found {found}"))
        .with_code(Code::E0030)
        .with_label(
            span,
            "expected a type such as `uint32` or `struct task_struct *`",
        )
}

/// `/pid == 1` with no closing `/`.
pub fn unterminated_predicate(span: Span, open: Span, found: &str) -> Diagnostic {
    Diagnostic::error(format!(
        "expected `/` to close the predicate, found {found}"
    ))
    .with_code(Code::E0031)
    .with_label(span, "expected `/`")
    .with_secondary(open, "predicate starts here")
}

/// `let x = 1;` inside a block.
pub fn let_needs_variable(span: Span, found: &str) -> Diagnostic {
    Diagnostic::error(format!(
        "expected scratch variable after `let`, found {found}"
    ))
    .with_code(Code::E0032)
    .with_label(span, "expected `$name`")
}

/// A top-level `let` that is not a map declaration.
pub fn top_level_let(span: Span) -> Diagnostic {
    Diagnostic::error("top-level `let` must declare a map")
        .with_code(Code::E0033)
        .with_label(span, "expected `let @name = kind(size);`")
        .with_help("for example `let @m = lruhash(100);`")
}

/// `else` followed by something other than `{` or `if`.
pub fn else_needs_block(span: Span, found: &str) -> Diagnostic {
    Diagnostic::error(format!("expected `{{` or `if` after `else`, found {found}"))
        .with_code(Code::E0034)
        .with_label(span, "expected `{` or `if`")
}

/// `struct X {` never closed.
pub fn unterminated_struct(span: Span) -> Diagnostic {
    Diagnostic::error("unterminated C definition")
        .with_code(Code::E0035)
        .with_label(span, "this definition's `{` is never closed")
}

/// `$t.x1` style field names that are neither identifier nor integer.
pub fn expected_field(span: Span, found: &str) -> Diagnostic {
    Diagnostic::error(format!("expected field name or tuple index, found {found}"))
        .with_code(Code::E0036)
        .with_label(span, "expected a field name")
}

/// `for $i in ..` / `for ($i @m)`.
pub fn bad_for_header(span: Span, found: &str) -> Diagnostic {
    Diagnostic::error(format!("malformed `for` loop header, found {found}"))
        .with_code(Code::E0037)
        .with_label(span, "unexpected here")
        .with_help("write `for ($kv : @map) { }` or `for ($i : 0..10) { }`")
}

/// Something other than a clause inside `stream NAME { ... }`.
pub fn stream_keep_expected(span: Span, found: &str) -> Diagnostic {
    Diagnostic::error(format!(
        "expected `last` or `first` after `keep`, found {found}"
    ))
    .with_code(Code::E0042)
    .with_label(span, "not `last` or `first`")
    .with_help(
        "`keep last` makes a stage's time its last hit; `keep first` (the default) its first",
    )
}

pub fn stream_clause_expected(span: Span, found: &str) -> Diagnostic {
    Diagnostic::error(format!("expected a stream clause, found {found}"))
        .with_code(Code::E0038)
        .with_label(span, "not a stream clause")
        .with_help("a stream holds `begin PROBE by KEY {...}`, `stage PROBE by KEY [link KEY] {...}`, `end PROBE by KEY {...}`, `timeout 10s`, `max N`, `sample N`, `queue N` and `incomplete`")
}

/// `#else`, `#elif` or `#endif` with no open `#if`.
pub fn directive_without_if(span: Span, name: &str) -> Diagnostic {
    Diagnostic::error(format!("`#{name}` without `#if`"))
        .with_code(Code::E0039)
        .with_label(span, "no `#if`, `#ifdef` or `#ifndef` is open here")
}

/// `#else` or `#elif` after the group's `#else`.
pub fn directive_after_else(span: Span, name: &str) -> Diagnostic {
    Diagnostic::error(format!("`#{name}` after `#else`"))
        .with_code(Code::E0040)
        .with_label(span, "this group already had its `#else`")
}

/// `#if` with no `#endif` before the end of the script.
pub fn unterminated_conditional(span: Span) -> Diagnostic {
    Diagnostic::error("unterminated conditional directive")
        .with_code(Code::E0041)
        .with_label(span, "this `#if` has no `#endif`")
        .with_help("close the group with `#endif`")
}

/// A call passes something a macro parameter cannot take (`inc(1)` for `inc($x)`).
pub fn macro_argument(span: Span, name: &str, param: &crate::ast::MacroParam) -> Diagnostic {
    use crate::ast::MacroParamKind;
    let (what, help) = match param.kind {
        MacroParamKind::Var => (
            format!("a scratch variable for `${}`", param.name),
            "the macro may assign to it: pass a variable such as `$a`",
        ),
        MacroParamKind::Map => (
            format!("a map for `@{}`", param.name),
            "pass a whole map such as `@a` (without a key)",
        ),
        MacroParamKind::Expr => (format!("an expression for `{}`", param.name), ""),
    };
    let d = Diagnostic::error(format!("macro `{name}` expects {what}"))
        .with_code(Code::E0050)
        .with_label(span, "this argument")
        .with_secondary(param.span, "the parameter");
    if help.is_empty() {
        d
    } else {
        d.with_help(help)
    }
}

/// A macro that expands itself, directly or through others.
pub fn recursive_macro(span: Span, name: &str, chain: &str) -> Diagnostic {
    Diagnostic::error(format!("macro `{name}` expands itself ({chain})"))
        .with_code(Code::E0051)
        .with_label(span, "expanded again here")
        .with_help("a macro cannot call itself, directly or through other macros; use a `for` loop")
}

/// Expansion copied more than the budget (a macro used in its own arguments nests exponentially).
pub fn macro_expansion_too_large(span: Span, limit: u64) -> Diagnostic {
    Diagnostic::error(format!(
        "macro expansion copies more than {limit} expression nodes"
    ))
    .with_code(Code::E0052)
    .with_label(span, "stopped expanding here")
    .with_help("an expression parameter is copied wherever it is used: bind it to a variable in the macro (`let $v = x;`) to evaluate it once")
}

/// A macro body uses a map it was not given.
pub fn map_not_passed_to_macro(span: Span, name: &str, map: &str) -> Diagnostic {
    Diagnostic::error(format!(
        "macro `{name}` uses `@{map}`, which is not one of its parameters"
    ))
    .with_code(Code::E0053)
    .with_label(span, "not passed in")
    .with_help(format!(
        "a macro sees only the maps and variables passed to it: add a parameter (`macro {name}(@{map}, ...)`) and pass the map"
    ))
}

/// Two definitions with the same name and parameter kinds.
pub fn macro_defined_twice(span: Span, name: &str, first: Span) -> Diagnostic {
    Diagnostic::error(format!(
        "macro `{name}` is defined twice with the same parameters"
    ))
    .with_code(Code::E0056)
    .with_label(span, "defined again here")
    .with_secondary(first, "first defined here")
    .with_help(
        "overloads of a macro differ in the number or kinds (`$x`, `@m`, `x`) of their parameters",
    )
}

/// E0060: a `getopt()` whose name, default or description is not a literal
/// of its kind (`what` says which, `label` under it).
pub fn getopt_call(span: Span, what: &str, label: &str) -> Diagnostic {
    Diagnostic::error(what.to_string())
        .with_code(Code::E0060)
        .with_label(span, label.to_string())
        .with_help("e.g. getopt(\"level\", 3, \"how much to print\"), set by `-- --level=5`")
}

/// E0061: `config().KEY` of a name that is no config key.
pub fn unknown_config_field(span: Span, key: &str) -> Diagnostic {
    Diagnostic::error(format!("config() has no field `{key}`"))
        .with_code(Code::E0061)
        .with_label(span, "not a config key")
        .with_help("its fields are bpftrace's config keys: max_strlen, stack_mode, license, ...")
}

/// `import "name"` that no directory searched holds (`checked`).
pub fn import_not_found(span: Span, name: &str, checked: &[std::path::PathBuf]) -> Diagnostic {
    let listed: Vec<String> = checked.iter().map(|p| p.display().to_string()).collect();
    let d = Diagnostic::error("Unable to find suitable path for import")
        .with_code(Code::E0070)
        .with_label(span, "no such file or directory")
        .with_help(format!("checked: {}", listed.join(",")));
    if name.starts_with("stdlib") {
        return d.with_note(
            "bpftrace's standard library is built into weft: its functions and macros need no import",
        );
    }
    d
}

/// An import whose file or directory cannot be read.
pub fn import_unreadable(span: Span, path: &std::path::Path, why: &str) -> Diagnostic {
    Diagnostic::error(format!("error reading import '{}': {why}", path.display()))
        .with_code(Code::E0071)
        .with_label(span, "imported here")
}

/// An import of a file that is neither `.bt` nor `.h` (nor BPF C).
pub fn import_unknown_type(span: Span, name: &str) -> Diagnostic {
    Diagnostic::error(format!("unknown import type: \"{name}\""))
        .with_code(Code::E0072)
        .with_label(span, "not a script or a header")
        .with_help("import a bpftrace script (`.bt`), a C header (`.h`) or a directory of them")
}

/// `import "x.bpf.c"` or `"x.bpf.o"`.
pub fn import_needs_c_compiler(span: Span, name: &str) -> Diagnostic {
    Diagnostic::error(format!(
        "weft cannot import `{name}`: BPF C needs a C compiler and linker, which weft does not have"
    ))
    .with_code(Code::E0073)
    .with_label(span, "BPF C source or object")
    .with_help("write the function as a bpftrace `macro` in a `.bt` file and import that")
}

/// An import of a file or directory every user may write.
pub fn import_world_writable(span: Span, path: &std::path::Path) -> Diagnostic {
    Diagnostic::error(format!(
        "cowardly refusing to import from a directory with global write permissions: \"{}\"",
        path.display()
    ))
    .with_code(Code::E0074)
    .with_label(span, "any user could change what this imports")
    .with_help("remove the write permission for others (`chmod o-w`) or move the file")
}

/// `config = { ... }` in an imported script.
pub fn config_in_import(span: Span) -> Diagnostic {
    Diagnostic::error("invalid `config` within import")
        .with_code(Code::E0075)
        .with_label(span, "only the main script may configure the run")
        .with_help("move the keys into the main script's `config` block")
}

/// A probe, macro or other script item in an imported `.h` header.
pub fn header_import_not_c(span: Span) -> Diagnostic {
    Diagnostic::error("an imported header may only hold C definitions")
        .with_code(Code::E0076)
        .with_label(span, "not a struct, union, enum or preprocessor line")
        .with_help("put probes and macros in a `.bt` file and import that")
}

/// A chain of imports deeper than `max`.
pub fn import_too_deep(span: Span, max: usize) -> Diagnostic {
    Diagnostic::error(format!("imports nested more than {max} deep"))
        .with_code(Code::E0077)
        .with_label(span, "imported here")
}
