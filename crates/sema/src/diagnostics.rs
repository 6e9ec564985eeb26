//! Every diagnostic the checker reports, one constructor each.
//! Codes (from the one table, `source::Code`): E02xx names, E03xx types,
//! E04xx probes and the kernel.

use ktypes::KernelInfoError;
use source::{Code, Diagnostic, Span};

use crate::types::Type;

pub use crate::suggest::did_you_mean;

fn with_suggestion(d: Diagnostic, name: &str, candidates: &[&str]) -> Diagnostic {
    match did_you_mean(name, candidates.iter().copied()) {
        Some(s) => d.with_help(format!("did you mean `{s}`?")),
        None => d,
    }
}

pub fn unknown_function(span: Span, name: &str, known: &[&str]) -> Diagnostic {
    let d = Diagnostic::error(format!("unknown function `{name}`"))
        .with_code(Code::E0201)
        .with_label(span, "not a function weft knows");
    with_suggestion(d, name, known)
}

pub fn unknown_builtin(span: Span, name: &str, known: &[&str]) -> Diagnostic {
    let d = Diagnostic::error(format!("unknown identifier `{name}`"))
        .with_code(Code::E0202)
        .with_label(span, "not a builtin variable");
    // `exit` where `exit()` was meant.
    if let Some(f) = crate::builtins::function_def(name) {
        let args_optional = [format!("{name}()"), format!("{name}([")]
            .iter()
            .any(|start| f.signature.starts_with(start.as_str()));
        let call = if args_optional {
            format!("{name}()")
        } else {
            f.signature.to_string()
        };
        return d.with_help(format!("`{name}` is a function: call it, `{call}`"));
    }
    let d = with_suggestion(d, name, known);
    if name.starts_with(|c: char| c.is_ascii_alphabetic())
        && did_you_mean(name, known.iter().copied()).is_none()
    {
        d.with_help(format!(
            "scratch variables start with `$` (`${name}`), maps with `@` (`@{name}`)"
        ))
    } else {
        d
    }
}

pub fn undefined_variable(span: Span, name: &str) -> Diagnostic {
    let name = syntax::var_display_name(name);
    Diagnostic::error(format!("variable `${name}` is used before it is assigned"))
        .with_code(Code::E0203)
        .with_label(span, "never assigned in this probe before this point")
}

pub fn variable_shadowed(span: Span, name: &str, what: &str, first: Option<Span>) -> Diagnostic {
    let name = syntax::var_display_name(name);
    let d = Diagnostic::error(format!(
        "{what} declares `${name}` again, but it is already in scope"
    ))
    .with_code(Code::E0207)
    .with_label(span, "shadows a variable in scope")
    .with_help(format!(
        "variables cannot be shadowed: use another name, or assign `${name}` without `let`"
    ));
    match first {
        Some(first) => d.with_secondary(first, "declared here"),
        None => d,
    }
}

pub fn for_over_scalar_map(span: Span, name: &str, first: Span) -> Diagnostic {
    Diagnostic::error(format!(
        "`{name}` has no keys: a `for` loop cannot iterate over it"
    ))
    .with_code(Code::E0320)
    .with_label(span, "a map without keys")
    .with_secondary(first, "assigned without a key here")
    .with_help("a `for` loop walks the keys of a map such as `@m[k]`; read a keyless map directly")
}

/// `len(@m)` / `has_key(@m, k)` of a map without keys (bpftrace's words).
pub fn map_needs_keys(span: Span, function: &str, name: &str, first: Span) -> Diagnostic {
    Diagnostic::error(format!(
        "call to {function}() expects a map with explicit keys (non-scalar map)"
    ))
    .with_code(Code::E0322)
    .with_label(span, format!("`{name}` has no keys"))
    .with_secondary(first, "assigned without a key here")
}

/// `pton("...")` of text that is no IPv4 or IPv6 address.
pub fn invalid_ip_address(span: Span, text: &str) -> Diagnostic {
    Diagnostic::error(format!(
        "pton() expects an IPv4 or IPv6 address, found \"{text}\""
    ))
    .with_code(Code::E0323)
    .with_label(span, "not an address")
    .with_help("write an IPv4 address as `127.0.0.1`, an IPv6 address as `::1`")
}

/// `len(@m)` on a kernel without the `bpf_map_sum_elem_count` kfunc.
pub fn no_map_elem_count(span: Span) -> Diagnostic {
    Diagnostic::error(
        "this kernel cannot count a map's elements: it has no bpf_map_sum_elem_count kfunc (Linux 6.6 and later, with BTF)",
    )
    .with_code(Code::E0491)
    .with_label(span, "needs bpf_map_sum_elem_count")
    .with_help("count the elements yourself: `@n++` where an element is added")
}

pub fn for_over_element(span: Span, name: &str) -> Diagnostic {
    Diagnostic::error(format!(
        "a `for` loop iterates over a whole map, not an element of `{name}`"
    ))
    .with_code(Code::E0321)
    .with_label(span, "a map element")
    .with_help(format!(
        "write `for ($kv : {name})`: `$kv.0` is each key, `$kv.1` its value"
    ))
}

/// What needs the kernel's numeric iterator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IterUse {
    /// `for ($i : a..b)`.
    RangeLoop,
    /// `@count > 5` on an aggregation, summed over the CPUs.
    AggregationRead,
}

/// A range loop or an aggregation read on a kernel without the numeric
/// iterator kfuncs.
pub fn no_range_iterator(span: Span, usage: IterUse) -> Diagnostic {
    let (what, help) = match usage {
        IterUse::RangeLoop => (
            "run a `for` loop over a range",
            "write the loop with `while` and a constant bound, or `unroll`",
        ),
        IterUse::AggregationRead => (
            "read an aggregation inside a probe (its per-CPU values are merged in a loop)",
            "keep a plain value beside the aggregation (`@n += 1`) and read that",
        ),
    };
    Diagnostic::error(format!(
        "this kernel cannot {what}: it has no bpf_iter_num kfuncs (Linux 6.4 and later, with BTF)"
    ))
    .with_code(Code::E0490)
    .with_label(span, "needs bpf_iter_num_new/next/destroy")
    .with_help(help)
}

/// `for ($kv : @map)` on a kernel without `bpf_for_each_map_elem`.
pub fn no_map_iterator(span: Span) -> Diagnostic {
    Diagnostic::error(
        "this kernel cannot run a `for` loop over a map: it has no bpf_for_each_map_elem helper (Linux 5.13 and later)",
    )
    .with_code(Code::E0492)
    .with_label(span, "needs bpf_for_each_map_elem")
    .with_help("print the map with `print(@map)`, or keep what the loop would compute in another map as events arrive")
}

/// `name!(...)` with no macro of that name.
pub fn unknown_macro(span: Span, name: &str) -> Diagnostic {
    Diagnostic::error(format!("no macro named `{name}`"))
        .with_code(Code::E0208)
        .with_label(span, "not defined in this script")
}

/// A call of a macro with a number of arguments none of its definitions takes.
pub fn macro_arity(span: Span, name: &str, takes: &[usize], given: usize) -> Diagnostic {
    let takes: Vec<String> = takes.iter().map(usize::to_string).collect();
    Diagnostic::error(format!(
        "macro `{name}` takes {} argument(s), not {given}",
        takes.join(" or ")
    ))
    .with_code(Code::E0209)
    .with_label(span, "no definition of this macro takes these arguments")
}

pub fn map_never_assigned(span: Span, name: &str) -> Diagnostic {
    Diagnostic::error(format!("map `{name}` is read but never assigned"))
        .with_code(Code::E0204)
        .with_label(span, "no probe stores into this map")
}

pub fn builtin_not_in_probe(span: Span, name: &str, probe: &str, help: &str) -> Diagnostic {
    Diagnostic::error(format!("`{name}` is not available in {probe} probes"))
        .with_code(Code::E0205)
        .with_label(span, "not available here")
        .with_help(help.to_string())
}

/// `uprobe:BIN@FILE:LINE` whose line has no code (or no line table).
pub fn source_line_unknown(span: Span, probe: &str, why: &str) -> Diagnostic {
    Diagnostic::error(format!("cannot attach {probe}: {why}"))
        .with_code(Code::E0219)
        .with_label(span, "no address for this source line")
}

/// `args` in a uprobe whose parameters weft cannot know (no DWARF, a
/// uretprobe, a probe inside the function).
pub fn uprobe_args_unknown(span: Span, probe: &str, why: &str) -> Diagnostic {
    Diagnostic::error(format!("the arguments of {probe} are unknown: {why}"))
        .with_code(Code::E0218)
        .with_label(span, "`args` needs the function's parameters")
        .with_help("arg0..argN read the argument registers without debug information")
}

pub fn not_supported_yet(span: Span, what: &str) -> Diagnostic {
    Diagnostic::error(format!("{what} is not supported by weft yet"))
        .with_code(Code::E0206)
        .with_label(span, "parsed, but weft cannot compile this yet")
}

pub fn wrong_arg_count(span: Span, name: &str, expected: &str, got: usize) -> Diagnostic {
    Diagnostic::error(format!("`{name}` takes {expected}, but {got} were given"))
        .with_code(Code::E0301)
        .with_label(span, "wrong number of arguments")
}

pub fn type_mismatch(span: Span, what: &str, expected: &str, found: &Type) -> Diagnostic {
    Diagnostic::error(format!("{what} expects {expected}, found `{found}`"))
        .with_code(Code::E0302)
        .with_label(span, format!("this is `{found}`"))
}

pub fn map_value_mismatch(
    span: Span,
    map: &str,
    existing: &Type,
    new: &Type,
    first: Span,
) -> Diagnostic {
    Diagnostic::error(format!(
        "type mismatch for {map}: assigning a value of type `{new}` to a map that holds `{existing}`"
    ))
    .with_code(Code::E0303)
    .with_label(span, format!("this is `{new}`"))
    .with_secondary(first, format!("{map} first gets `{existing}` here"))
}

/// A map used with a key of another type than before, or with a key where
/// it had none (`existing`/`new` `None`), and the other way round.
pub fn map_key_mismatch(
    span: Span,
    map: &str,
    existing: Option<&str>,
    new: Option<&str>,
    first: Span,
) -> Diagnostic {
    let message = match (existing, new) {
        (Some(existing), Some(new)) => {
            format!("key mismatch for {map}: used with key `{new}`, but its key is `{existing}`")
        }
        (Some(existing), None) => {
            format!("key mismatch for {map}: used without a key, but its key is `{existing}`")
        }
        (None, Some(new)) => {
            format!("key mismatch for {map}: used with key `{new}`, but it has no key")
        }
        (None, None) => format!("key mismatch for {map}"),
    };
    let label = match new {
        Some(new) => format!("key of type `{new}`"),
        None => "no key".to_string(),
    };
    let first_label = match existing {
        Some(existing) => format!("{map} is first keyed by `{existing}` here"),
        None => format!("{map} is first used without a key here"),
    };
    Diagnostic::error(message)
        .with_code(Code::E0304)
        .with_label(span, label)
        .with_secondary(first, first_label)
}

pub fn variable_type_mismatch(span: Span, name: &str, existing: &Type, new: &Type) -> Diagnostic {
    let name = syntax::var_display_name(name);
    Diagnostic::error(format!(
        "type mismatch for ${name}: assigning `{new}` to a variable of type `{existing}`"
    ))
    .with_code(Code::E0305)
    .with_label(span, format!("this is `{new}`"))
}

pub fn bad_operands(span: Span, op: &str, lhs: &Type, rhs: &Type) -> Diagnostic {
    Diagnostic::error(format!(
        "operator `{op}` cannot combine `{lhs}` and `{rhs}`"
    ))
    .with_code(Code::E0306)
    .with_label(span, "invalid operands")
}

pub fn no_such_field(span: Span, field: &str, probe: &str, fields: &[&str]) -> Diagnostic {
    let d = Diagnostic::error(format!("{probe} has no argument `{field}`"))
        .with_code(Code::E0307)
        .with_label(span, "unknown field");
    let d = with_suggestion(d, field, fields);
    d.with_note(format!("its arguments are: {}", fields.join(", ")))
}

pub fn aggregation_read(span: Span, map: &str, agg: &str) -> Diagnostic {
    Diagnostic::error(format!(
        "{map} holds a {agg}() aggregation, which cannot be read inside a probe"
    ))
    .with_code(Code::E0308)
    .with_label(span, "read here")
    .with_help(
        "count, sum, min, max and avg read as numbers; a stats, hist or lhist map is only printed",
    )
}

pub fn printf_format(span: Span, message: &str) -> Diagnostic {
    Diagnostic::error(format!("invalid printf format: {message}"))
        .with_code(Code::E0309)
        .with_label(span, message.to_string())
}

pub fn printf_args(span: Span, conversions: usize, args: usize) -> Diagnostic {
    Diagnostic::error(format!(
        "printf format has {conversions} conversion(s) but {args} argument(s) were given"
    ))
    .with_code(Code::E0310)
    .with_label(span, "argument count does not match the format")
}

pub fn needs_literal(span: Span, what: &str) -> Diagnostic {
    Diagnostic::error(format!("{what} must be a literal"))
        .with_code(Code::E0311)
        .with_label(span, "not a literal")
}

/// `count`: the count written, below 1 or above 100.
pub fn unroll_count_out_of_range(span: Span, count: u64) -> Diagnostic {
    let message = if count < 1 {
        "unroll minimum value is 1"
    } else {
        "unroll maximum value is 100"
    };
    Diagnostic::error(message)
        .with_code(Code::E0313)
        .with_label(span, "out of range")
}

/// A value assigned to a variable whose type (over the whole probe) has
/// the other sign and cannot hold every value of it, in bpftrace's words.
pub fn implicit_sign_cast(span: Span, from: &Type, to: &Type) -> Diagnostic {
    Diagnostic::warning(format!(
        "Expression of type: {from} being cast to type: {to}. This may cause unexpected results. Use an explicit cast to suppress this warning."
    ))
    .with_code(Code::E0319)
    .with_label(span, format!("converted to `{to}`"))
}

/// A statement whose value nothing uses (`{ 1 }`, `has_key(@a, 1);`), in
/// bpftrace's words.
pub fn return_value_discarded(span: Span) -> Diagnostic {
    Diagnostic::warning("Return value discarded.")
        .with_code(Code::E0318)
        .with_label(span, "this value is not used")
        .with_help("assign it to `_` to discard it on purpose: `_ = ...;`")
}

/// A statement after `exit()` or `return` in the same block, in bpftrace's
/// words; `end`: the statement that ends the probe.
pub fn unreachable_statement(span: Span, end: Span) -> Diagnostic {
    Diagnostic::warning("Unreachable statement")
        .with_code(Code::E0317)
        .with_label(span, "never runs")
        .with_secondary(end, "the probe ends here")
}

pub fn break_outside_loop(span: Span) -> Diagnostic {
    Diagnostic::error("`break` and `continue` must be inside a loop")
        .with_code(Code::E0314)
        .with_label(span, "not in a loop")
}

pub fn bad_lhist_range(span: Span) -> Diagnostic {
    Diagnostic::error("lhist() needs min < max, step > 0 and at most 1000 buckets")
        .with_code(Code::E0315)
        .with_label(span, "invalid bucket range")
}

pub fn bad_hist_bits(span: Span, bits: u64) -> Diagnostic {
    Diagnostic::error(format!("hist: bits {bits} must be 0..5"))
        .with_code(Code::E0325)
        .with_label(span, "out of range")
        .with_help("each power of two is split in 2^bits buckets: 0 (the default) to 5")
}

/// A `tseries()` argument that is out of its range; `problem` in
/// bpftrace's words (`tseries() num_intervals must be >= 1 (0 provided)`).
pub fn bad_tseries_arg(span: Span, problem: String, help: &str) -> Diagnostic {
    Diagnostic::error(problem)
        .with_code(Code::E0326)
        .with_label(span, "invalid")
        .with_help(help.to_string())
}

/// An unstable feature (`tseries`) used while its `unstable_NAME` config is `error`.
pub fn unstable_feature_disabled(span: Span, feature: &str) -> Diagnostic {
    Diagnostic::error(format!(
        "{feature} feature is not enabled by default. To enable this unstable feature, set the config flag to enable. unstable_{feature}=enable"
    ))
    .with_code(Code::E0327)
    .with_label(span, "unstable feature")
    .with_help(format!("add `config = {{ unstable_{feature} = enable }}` to the script"))
}

/// An unstable feature used while its `unstable_NAME` config is `warn` (the
/// default). Without the script's line, as bpftrace warns: it is about the
/// script as a whole, reported once.
pub fn unstable_feature_used(feature: &str) -> Diagnostic {
    Diagnostic::warning(format!(
        "Script is using an unstable feature: {feature}. To prevent this warning you must explicitly enable it in the config e.g. unstable_{feature}=enable"
    ))
    .with_code(Code::E0328)
}

/// `BPFTRACE_DUMMY_TS_MAP` names no scalar map of integers.
pub fn bad_dummy_clock_map(name: &str, why: &str) -> Diagnostic {
    Diagnostic::error(format!("BPFTRACE_DUMMY_TS_MAP: map `{name}` {why}"))
        .with_code(Code::E0329)
        .with_help("name a keyless map the script assigns integers, as `@ts = (uint64)0`")
}

pub fn aggregation_not_assigned(span: Span, name: &str) -> Diagnostic {
    Diagnostic::error(format!("{name}() can only be assigned to a map"))
        .with_code(Code::E0316)
        .with_label(span, "not assigned to a map")
        .with_help(format!("write `@name = {name}(...)`"))
}

/// `fail("...")` reached: the script's own error, its text formatted.
pub fn fail_reached(span: Span, text: &str) -> Diagnostic {
    Diagnostic::error(text.to_string())
        .with_code(Code::E0346)
        .with_label(span, "fail() is reached here")
}

/// `find(@m, k, x)` where `x` is not a `$variable`.
pub fn find_needs_a_variable(span: Span) -> Diagnostic {
    Diagnostic::error("find() stores the value it finds in a variable")
        .with_code(Code::E0347)
        .with_label(span, "not a `$variable`")
        .with_help("write `let $v; if (find(@m, key, $v)) { ... }`")
}

pub fn not_assignable(span: Span) -> Diagnostic {
    Diagnostic::error("this expression cannot be assigned to")
        .with_code(Code::E0312)
        .with_label(span, "only maps and $variables can be assigned")
}

pub fn unknown_provider(span: Span, provider: &str, known: &[&str]) -> Diagnostic {
    let d = Diagnostic::error(format!("unknown probe type `{provider}`"))
        .with_code(Code::E0401)
        .with_label(span, "no such provider");
    with_suggestion(d, provider, known)
}

/// `compiled`: the probe types weft does compile, named in the help.
pub fn provider_not_yet_supported(span: Span, provider: &str, compiled: &[&str]) -> Diagnostic {
    Diagnostic::error(format!("{provider} probes are not supported by weft yet"))
        .with_code(Code::E0402)
        .with_label(span, "recognised, but not compiled by this version")
        .with_help(format!(
            "weft compiles these probe types: {}",
            compiled.join(", ")
        ))
}

pub fn bad_attach_point(span: Span, raw: &str, usage: &str) -> Diagnostic {
    Diagnostic::error(format!("invalid attach point `{raw}`"))
        .with_code(Code::E0403)
        .with_label(span, "cannot read this attach point")
        .with_help(format!("expected {usage}"))
}

/// bpftrace's words for an attach point that names nothing here:
/// `No matches for tracepoint syscalls:nonsense.` (the provider's full name,
/// whatever alias was written).
fn no_matches(provider: &str, target: &str) -> String {
    let provider = crate::providers::provider_def(provider).map_or(provider, |p| p.name);
    format!("No matches for {provider} {target}.")
}

/// A tracepoint this kernel lacks; `known` (every category and name) gives
/// the hint: the nearest category when the category is not one (listing a
/// category that does not exist would show nothing), else the nearest
/// name in it.
pub fn tracepoint_not_found(
    span: Span,
    category: &str,
    name: &str,
    known: &[(String, String)],
) -> Diagnostic {
    let d = Diagnostic::error(no_matches("tracepoint", &format!("{category}:{name}")))
        .with_code(Code::E0404)
        .with_label(span, "this kernel has no such tracepoint");
    let category_exists = known.iter().any(|(c, _)| c == category);
    if !category_exists && !known.is_empty() {
        let mut categories: Vec<&str> = known.iter().map(|(c, _)| c.as_str()).collect();
        categories.dedup();
        return match did_you_mean(category, categories.iter().copied()) {
            Some(near) => d.with_help(format!(
                "there is no category `{category}`; did you mean `{near}`? list it with: weft -l 'tracepoint:{near}:*'"
            )),
            None => d.with_help(format!(
                "there is no category `{category}`; list every tracepoint with: weft -l 'tracepoint:*'"
            )),
        };
    }
    let names = known
        .iter()
        .filter(|(c, _)| c == category)
        .map(|(_, n)| n.as_str());
    let d = match did_you_mean(name, names) {
        Some(near) => d.with_help(format!("did you mean `tracepoint:{category}:{near}`?")),
        None => d,
    };
    d.with_help(format!(
        "list the tracepoints with: weft -l 'tracepoint:{category}:*'"
    ))
}

pub fn no_probe_matches(span: Span, raw: &str) -> Diagnostic {
    let message = match raw.split_once(':') {
        Some((provider, target)) => no_matches(provider, target),
        None => format!("No matches for {raw}."),
    };
    Diagnostic::error(message)
        .with_code(Code::E0405)
        .with_label(span, "the wildcard matches nothing on this kernel")
        .with_help(format!("list what exists with: weft -l '{raw}'"))
}

pub fn kernel_info(span: Span, e: &KernelInfoError) -> Diagnostic {
    Diagnostic::error(format!("cannot read the kernel's probe information: {e}"))
        .with_code(Code::E0406)
        .with_label(span, "needed for this probe")
        .with_help(
            "weft needs tracefs at /sys/kernel/tracing and root (or CAP_SYS_ADMIN) to read it",
        )
}

pub fn no_probes() -> Diagnostic {
    Diagnostic::error("the program has no probes").with_code(Code::E0407)
}

pub fn probe_filter_matches_nothing(pattern: &str) -> Diagnostic {
    Diagnostic::error(format!(
        "No probes to attach: --probe-filter `{pattern}` matches none of the program's probes"
    ))
    .with_code(Code::E0480)
    .with_note("the filter is matched against each probe's full name, wildcards expanded (`interval:ms:100`, `tracepoint:syscalls:sys_enter_read`)")
    .with_help("weft -l -e 'PROGRAM' lists the probes of a program")
}

pub fn unknown_perf_event(span: Span, provider: &str, event: &str, known: &[&str]) -> Diagnostic {
    let d = Diagnostic::error(format!("unknown {provider} event `{event}`"))
        .with_code(Code::E0420)
        .with_label(span, "no such event");
    with_suggestion(d, event, known)
}

pub fn bad_stack_argument(span: Span, function: &str, problem: &str) -> Diagnostic {
    Diagnostic::error(format!("invalid argument to {function}(): {problem}"))
        .with_code(Code::E0340)
        .with_label(span, "here")
        .with_help(format!(
            "write {function}(), {function}(N), {function}(MODE) or {function}(MODE, N), with MODE bpftrace, perf, raw or build_id and N from 1 to {}",
            abi::stack::MAX_STACK_LIMIT
        ))
}

pub fn unknown_clock(span: Span, name: &str, clocks: &[&str]) -> Diagnostic {
    let d = Diagnostic::error(if name.is_empty() {
        "nsecs() takes the name of a clock".to_string()
    } else {
        format!("unknown clock `{name}`")
    })
    .with_code(Code::E0341)
    .with_label(span, "not a clock")
    .with_help(format!("the clocks are {}", clocks.join(", ")));
    with_suggestion(d, name, clocks)
}

pub fn unknown_pid_namespace(span: Span, function: &str, name: &str) -> Diagnostic {
    let d = Diagnostic::error(if name.is_empty() {
        format!("{function}() takes `curr_ns` or `init`")
    } else {
        format!("unknown pid namespace `{name}`")
    })
    .with_code(Code::E0342)
    .with_label(span, "not a pid namespace")
    .with_help(format!(
        "`{function}(curr_ns)` is the id seen from weft's pid namespace (what `{function}` gives), `{function}(init)` the id in the initial one"
    ));
    with_suggestion(d, name, &["curr_ns", "init"])
}

/// bpftrace's warning on every `debugf()`, with where its lines go.
pub fn debugf_for_debugging(span: Span) -> Diagnostic {
    Diagnostic::warning(
        "The debugf() builtin is not recommended for production use. For more information see bpf_trace_printk in bpf-helpers(7).",
    )
    .with_code(Code::E0343)
    .with_label(span, "written to the kernel's trace buffer, not to weft's output")
    .with_help("read its lines with `cat /sys/kernel/tracing/trace_pipe`; printf() prints to weft's output")
}

/// A `debugf()` conversion the kernel's `bpf_trace_printk` does not take,
/// or an argument that does not fit it.
pub fn debugf_format(span: Span, message: &str) -> Diagnostic {
    Diagnostic::error(format!("invalid debugf() format: {message}"))
        .with_code(Code::E0344)
        .with_label(span, message.to_string())
        .with_help("the kernel's bpf_trace_printk takes %d %i %u %x (with l or ll), %p and %s, at most 12 of them")
}

pub fn path_needs_trusted_pointer(span: Span) -> Diagnostic {
    Diagnostic::error("path() needs a pointer the kernel's verifier trusts")
        .with_code(Code::E0345)
        .with_label(span, "this pointer is read from kernel memory, which the verifier does not trust")
        .with_help("give path() a struct path reached from a pointer of the probe's context: `ctx.file->f_path` (iter), `args.file->f_path` (fentry)")
}

// User-space probes (uprobe, uretprobe, usdt): E0440–E0449.

pub fn binary_not_found(span: Span, name: &str, looked: &str) -> Diagnostic {
    Diagnostic::error(format!("cannot find the binary or library `{name}`"))
        .with_code(Code::E0440)
        .with_label(span, "no such file")
        .with_note(format!("looked {looked}"))
        .with_help("give a path (`uprobe:/usr/bin/bash:readline`) or a library's short name (`uprobe:libc:malloc`)")
}

pub fn unsupported_self_signal(span: Span, signal: &str) -> Diagnostic {
    Diagnostic::error(format!(
        "`{signal}` is not a signal a self probe can wait for"
    ))
    .with_code(Code::E0482)
    .with_label(span, "not supported")
    .with_help("write self:signal:SIGUSR1 (the one signal self probes take, as in bpftrace)")
}

pub fn sample_rate_too_high(span: Span, hz: u64, max: u64) -> Diagnostic {
    Diagnostic::error(format!(
        "{hz} Hz is above this kernel's highest sampling rate, {max} Hz"
    ))
    .with_code(Code::E0483)
    .with_label(span, "too fast")
    .with_note("the kernel's limit is /proc/sys/kernel/perf_event_max_sample_rate (it lowers it by itself when sampling costs too much)")
    .with_help(format!("sample at {max} Hz or less"))
}

pub fn binaries_need_pid(span: Span, written: &str) -> Diagnostic {
    let written = if written.is_empty() {
        "an empty binary"
    } else {
        "`*` as the binary"
    };
    Diagnostic::error(format!("{written} means every file of a process: it needs -p PID"))
        .with_code(Code::E0481)
        .with_label(span, "which process?")
        .with_help("give -p PID, or name the binary (`uprobe:/usr/bin/bash:readline`, `usdt:./app:provider:probe`)")
}

pub fn binary_unreadable(span: Span, path: &str, why: &str) -> Diagnostic {
    Diagnostic::error(format!("cannot read `{path}` as an ELF binary: {why}"))
        .with_code(Code::E0441)
        .with_label(span, "needed for this probe")
}

/// `provider`: `uprobe` or `uretprobe`, as bpftrace names it.
pub fn symbol_not_found(
    span: Span,
    provider: &str,
    path: &str,
    symbol: &str,
    known: &[&str],
) -> Diagnostic {
    let d = Diagnostic::error(no_matches(provider, &format!("{path}:{symbol}")))
        .with_code(Code::E0442)
        .with_label(span, format!("`{path}` has no function `{symbol}`"))
        .with_help(format!(
            "list its functions with: weft -l 'uprobe:{path}:*'"
        ));
    with_suggestion(d, symbol, known)
}

pub fn address_not_mapped(span: Span, path: &str, address: u64) -> Diagnostic {
    Diagnostic::error(format!(
        "address {address:#x} is not in any loadable segment of `{path}`"
    ))
    .with_code(Code::E0443)
    .with_label(span, "cannot turn this address into a file offset")
}

pub fn uprobe_inside_instruction(
    span: Span,
    place: &str,
    instruction: &str,
    before: &str,
    after: &str,
) -> Diagnostic {
    Diagnostic::error(format!(
        "{place} is inside an instruction: a uprobe there would corrupt it"
    ))
    .with_code(Code::E0455)
    .with_label(span, format!("inside {instruction}"))
    .with_help(format!(
        "the nearest instructions begin at {before} and {after}"
    ))
}

pub fn uprobe_placement_unchecked(
    span: Span,
    place: &str,
    stuck: &str,
    bytes: &str,
    why: &str,
) -> Diagnostic {
    Diagnostic::error(format!(
        "weft cannot check that an instruction begins at {place}: the bytes at {stuck} ({bytes}) {why}"
    ))
    .with_code(Code::E0456)
    .with_label(
        span,
        format!("the function is decoded from its start, and decoding stops at {stuck}"),
    )
}

pub fn uprobe_offset_outside_function(
    span: Span,
    place: &str,
    func: &str,
    size: u64,
) -> Diagnostic {
    Diagnostic::error(format!(
        "Offset outside the function bounds ('{func}' size is {size})"
    ))
    .with_code(Code::E0457)
    .with_label(
        span,
        format!("{place}: an offset names an instruction inside the function"),
    )
}

/// bpftrace's words, without a place as bpftrace has it.
pub fn uprobe_address_in_no_function(span: Span, path: &str, address: u64) -> Diagnostic {
    Diagnostic::error(format!("Could not resolve address: {path}:{address:#x}"))
    .with_code(Code::E0458)
    .with_bare_header()
    .with_label(
        span,
        format!("no function of `{path}` holds this address: weft cannot check that an instruction begins there"),
    )
    .with_help(format!(
        "probe a function by name, or at FUNCTION+OFFSET (list them with: weft -l 'uprobe:{path}:*')"
    ))
}

/// A function whose symbol has size 0 (`_init`): where its instructions
/// end is unknown, so a uprobe there is refused, in bpftrace's words and
/// without a place as bpftrace has it; the line after the first is the
/// advice that `--unsafe` drops ([`crate::providers::placement`]).
pub fn uprobe_symbol_without_size(span: Span, name: &str) -> Diagnostic {
    Diagnostic::error(format!(
        "Could not determine boundary for {name} (symbol has size 0).\nUse --unsafe to force attachment. WARNING: This option could lead to data corruption in the target process."
    ))
    .with_code(Code::E0460)
    .with_bare_header()
    .with_label(span, format!("the symbol table gives `{name}` no size"))
}

pub fn uretprobe_inside_function(
    span: Span,
    address: u64,
    place: &str,
    func: &str,
    path: &str,
) -> Diagnostic {
    Diagnostic::error(format!(
        "a uretprobe goes on a function's entry, and {address:#x} is {place}"
    ))
    .with_code(Code::E0459)
    .with_label(span, "not where a function begins")
    .with_help(format!(
        "uretprobe:{path}:{func} fires where `{func}` returns"
    ))
}

pub fn usdt_not_found(span: Span, path: &str, probe: &str) -> Diagnostic {
    Diagnostic::error(no_matches("usdt", &format!("{path}:{probe}")))
        .with_code(Code::E0444)
        .with_label(
            span,
            format!("`{path}` has no USDT probe `{probe}` in its .note.stapsdt notes"),
        )
        .with_help(format!("list its probes with: weft -l 'usdt:{path}:*'"))
}

pub fn usdt_bad_args(span: Span, probe: &str, spec: &str, at: usize, message: &str) -> Diagnostic {
    Diagnostic::error(format!(
        "cannot read the argument spec of USDT probe {probe}: {message}"
    ))
    .with_code(Code::E0445)
    .with_label(span, "this probe's arguments cannot be compiled")
    .with_note(format!("the spec is:\n    {spec}\n    {}^", " ".repeat(at)))
}

pub fn reg_needs_registers(span: Span) -> Diagnostic {
    Diagnostic::error(
        "reg() reads the probed task's registers, which only kprobe, uprobe and usdt probes have",
    )
    .with_code(Code::E0447)
    .with_label(span, "no registers in this probe")
    .with_help("in a tracepoint, read its arguments with `args->NAME`")
}

pub fn unknown_register(span: Span, name: &str, known: &[&str]) -> Diagnostic {
    let d = Diagnostic::error(format!("reg() knows no register `{name}`"))
        .with_code(Code::E0448)
        .with_label(span, "not a register of struct pt_regs")
        .with_help(format!("registers: {}", known.join(", ")));
    with_suggestion(d, name, known)
}

pub fn ifunc_unresolved(span: Span, path: &str, symbol: &str, why: &str) -> Diagnostic {
    Diagnostic::error(format!(
        "`{symbol}` in `{path}` is an indirect function whose implementation is not known here"
    ))
    .with_code(Code::E0446)
    .with_label(
        span,
        "an IFUNC: calls reach the implementation its resolver picked at load time",
    )
    .with_note(why.to_string())
    .with_help(format!(
        "probe an implementation by name; list them with: weft -l 'uprobe:{path}:*{symbol}*'"
    ))
}

pub fn stream_shape(span: Span, stream: &str, needs: &str) -> Diagnostic {
    Diagnostic::error(format!("stream `{stream}` needs {needs}"))
        .with_code(Code::E0410)
        .with_label(span, "in this stream")
        .with_help("a stream is `begin PROBE by KEY { ... }`, then any `stage PROBE by KEY`, then `end PROBE by KEY`")
}

pub fn duplicate_stage_name(span: Span, name: &str, first: Span) -> Diagnostic {
    Diagnostic::error(format!("two stages of this stream are named `{name}`"))
        .with_code(Code::E0411)
        .with_label(span, "second stage with this name")
        .with_secondary(first, "first one here")
        .with_help("name a stage explicitly: `stage NAME tracepoint:...`")
}

pub fn unknown_stream(span: Span, name: &str, known: &[&str]) -> Diagnostic {
    let d = Diagnostic::error(format!("no stream named `{name}`"))
        .with_code(Code::E0412)
        .with_label(
            span,
            "a `stream:NAME` probe needs a `stream NAME { ... }` in the script",
        );
    with_suggestion(d, name, known)
}

pub fn stream_key_unreachable(span: Span, stage: &str, key: &str, slots: &str) -> Diagnostic {
    Diagnostic::error(format!(
        "stage `{stage}` looks instances up by `{key}`, which is neither the begin key nor a key any clause links"
    ))
    .with_code(Code::E0413)
    .with_label(span, "nothing files the instance under this key")
    .with_note(format!("the instance is filed under {slots}"))
    .with_help(
        "write the key as it was filed (`by` of `begin`, or a `link`), or add `link KEY` (or `link KEY as NAME`) to the clause that knows this key",
    )
}

/// A `by` key whose text names no slot, where slots of its type exist: a
/// key is never matched by its type alone.
pub fn stream_key_ambiguous(
    span: Span,
    stage: &str,
    key: &str,
    ty: &Type,
    same_type: &[&str],
    slots: &str,
) -> Diagnostic {
    let names: Vec<String> = same_type.iter().map(|n| format!("`{n}`")).collect();
    Diagnostic::error(format!(
        "stage `{stage}` looks instances up by `{key}`, which names no key slot (a `{ty}` key is not matched by its type alone)"
    ))
    .with_code(Code::E0416)
    .with_label(
        span,
        format!("no slot is named `{key}`; of its type: {}", names.join(", ")),
    )
    .with_note(format!("the instance is filed under {slots}"))
    .with_help(
        "write the key as it was filed, or name the slot: `as NAME` where it is filed (`by KEY as NAME` on `begin`, `link KEY as NAME`) and `by KEY as NAME` here",
    )
}

pub fn stream_stage_unreachable(
    span: Span,
    stage: &str,
    slot: &str,
    filers: &[&str],
) -> Diagnostic {
    let by = if filers.is_empty() {
        String::new()
    } else {
        let names: Vec<String> = filers.iter().map(|n| format!("`{n}`")).collect();
        format!(" by {}", names.join(", "))
    };
    Diagnostic::error(format!(
        "stage `{stage}` can never match: the key `{slot}` it looks instances up by is filed only{by}, which no instance reaches from `begin`"
    ))
    .with_code(Code::E0417)
    .with_label(span, format!("`{slot}` is never filed for a live instance"))
    .with_help("a stage is reached through the begin key or through a key that a reachable stage links")
}

pub fn stream_key_type_mismatch(span: Span, slot: &str, slot_ty: &Type, ty: &Type) -> Diagnostic {
    Diagnostic::error(format!(
        "the stream key `{slot}` is a `{slot_ty}`, not a `{ty}`"
    ))
    .with_code(Code::E0418)
    .with_label(span, format!("a `{ty}`"))
    .with_help("every key filed or looked up under one name has one type: name this one differently with `as NAME`")
}

pub fn stream_link_unused(span: Span, why: &str) -> Diagnostic {
    Diagnostic::error(format!("this `link` is never used: {why}"))
        .with_code(Code::E0419)
        .with_label(span, "never looked up")
        .with_help("link a key in a clause before the ones that look the instance up by it")
}

pub fn emit_outside_handler(span: Span) -> Diagnostic {
    Diagnostic::error("`emit()` is only available in `stream:NAME` probes")
        .with_code(Code::E0415)
        .with_label(span, "not in a stream handler")
}

// Kernel function probes and raw tracepoints: E0450–E0469.

pub fn kernel_function_not_found(span: Span, kind: &str, func: &str, known: &[&str]) -> Diagnostic {
    let d = Diagnostic::error(no_matches(kind, func))
        .with_code(Code::E0450)
        .with_label(
            span,
            format!("this kernel has no {kind}-able function `{func}`"),
        );
    match did_you_mean(func, known.iter().copied()) {
        Some(s) => d.with_help(format!("did you mean `{s}`?")),
        None => d.with_help(format!("list the functions with: weft -l '{kind}:{func}*'")),
    }
}

pub fn btf_function_not_found(span: Span, kind: &str, func: &str, why: &str) -> Diagnostic {
    Diagnostic::error(format!(
        "{kind}:{func}: no BTF description of `{func}`: {why}"
    ))
    .with_code(Code::E0451)
    .with_label(
        span,
        format!("{kind} probes need the function's prototype from BTF"),
    )
    .with_help(format!(
        "a kprobe works without BTF: kprobe:{func} (arguments as arg0..argN)"
    ))
}

/// `iter:TARGET` for a target the kernel has no iterator for.
/// `iter:TARGET:PIN`: bpftrace pins the iterator in bpffs; weft runs it.
pub fn iterator_pin_unsupported(span: Span, target: &str, pin: &str) -> Diagnostic {
    Diagnostic::error(format!(
        "pinning an iterator (`:{pin}`) is not supported by weft: it runs the iterator once and prints what it gives"
    ))
    .with_code(Code::E0499)
    .with_label(span, "pinned iterator")
    .with_help(format!("run it now with `iter:{target}`"))
}

pub fn iterator_not_found(span: Span, target: &str, known: &[String]) -> Diagnostic {
    let d = Diagnostic::error(format!("this kernel has no BPF iterator `{target}`"))
        .with_code(Code::E0497)
        .with_label(span, "no such iterator target")
        .with_help("list them with: weft -l 'iter:*'");
    let names: Vec<&str> = known.iter().map(String::as_str).collect();
    with_suggestion(d, target, &names)
}

/// An `iter:` probe beside another probe: the iteration is the whole run.
pub fn iterator_not_alone(span: Span, other: &str) -> Diagnostic {
    Diagnostic::error(
        "an iterator probe runs alone: the script can have no other probe but BEGIN and END",
    )
    .with_code(Code::E0498)
    .with_label(span, format!("`{other}` beside an iterator"))
    .with_help(
        "run the iterator in a script of its own; it ends when every object has been visited",
    )
}

/// `module`: the module written (`rawtracepoint:MODULE:NAME`), whose raw
/// tracepoints weft does not read unless it is vmlinux.
pub fn raw_tracepoint_not_found(span: Span, module: Option<&str>, name: &str) -> Diagnostic {
    let (target, label) = match module {
        Some(module) => (
            format!("{module}:{name}"),
            "weft finds the raw tracepoints of vmlinux, not of modules",
        ),
        None => (name.to_string(), "this kernel has no such tracepoint"),
    };
    Diagnostic::error(no_matches("rawtracepoint", &target))
        .with_code(Code::E0452)
        .with_label(span, label)
        .with_help("list them with: weft -l 'rawtracepoint:*'")
}

/// A probe none of whose attach points exists here, in bpftrace's words:
/// an error, or (`removed`, with `missing_probes = "warn"`) a warning that
/// the program runs without it.
pub fn probe_without_attach_points(span: Span, removed: bool) -> Diagnostic {
    let d = if removed {
        Diagnostic::warning(
            "Probe has no valid attach points. It is being removed which may cause issues with program behavior.",
        )
    } else {
        Diagnostic::error("Probe has no valid attach points.")
            .with_help("if this is expected, set the 'missing_probes' config variable to 'warn'")
    };
    d.with_code(Code::E0409)
        .with_label(span, "none of its attach points exists on this machine")
}

pub fn kprobe_offset_on_return(span: Span, raw: &str, kind: &str) -> Diagnostic {
    Diagnostic::error(format!(
        "invalid attach point `{raw}`: {kind} cannot take an offset"
    ))
    .with_code(Code::E0453)
    .with_label(span, "an offset names an instruction inside the function")
    .with_help("only kprobe takes FUNCTION+OFFSET; a return probe fires where the function returns")
}

/// What to use instead of a kernel function probe this kernel cannot run:
/// the system call's tracepoint when there is one.
fn trace_instead(d: Diagnostic, tracepoint: Option<&str>) -> Diagnostic {
    match tracepoint {
        Some(tp) => d.with_help(format!("trace the system call instead: {tp}")),
        None => d.with_help("look for a tracepoint that covers it: weft -l 'tracepoint:*'"),
    }
}

/// fentry/fexit on a kernel without BPF trampolines, which cannot run it as
/// a kprobe either (`why`).
pub fn trampolines_missing(
    span: Span,
    kind: &str,
    lacking: &str,
    why: &str,
    tracepoint: Option<&str>,
) -> Diagnostic {
    let d = Diagnostic::error(format!(
        "this kernel cannot attach {kind} probes: {lacking}"
    ))
    .with_code(Code::E0454)
    .with_label(span, "needs BPF trampolines")
    .with_note(format!("weft cannot run it as a kprobe either: {why}"));
    trace_instead(d, tracepoint)
}

/// kprobe/kretprobe on a kernel without kprobes, which cannot run it as
/// fentry either (`why`).
pub fn kprobes_missing(
    span: Span,
    kind: &str,
    lacking: &str,
    why: &str,
    tracepoint: Option<&str>,
) -> Diagnostic {
    let d = Diagnostic::error(format!(
        "this kernel cannot attach {kind} probes: {lacking}"
    ))
    .with_code(Code::E0408)
    .with_label(span, "needs kprobes")
    .with_note(format!("weft cannot run it as fentry either: {why}"));
    trace_instead(d, tracepoint)
}

// uaddr() and user-space symbols: E0470–E0479.

pub fn uaddr_outside_user_probe(span: Span) -> Diagnostic {
    Diagnostic::error("uaddr() is only valid in uprobe, uretprobe and usdt probes")
        .with_code(Code::E0470)
        .with_label(
            span,
            "this probe has no user-space binary to look the symbol up in",
        )
        .with_help(
            "uaddr(\"NAME\") gives the address of NAME in the binary a uprobe or usdt probe names",
        )
}

pub fn uaddr_needs_literal(span: Span) -> Diagnostic {
    Diagnostic::error("uaddr() expects a string literal")
        .with_code(Code::E0471)
        .with_label(span, "the symbol is looked up when the script is compiled")
        .with_help("write the symbol's name in quotes: uaddr(\"my_global\")")
}

pub fn kaddr_needs_literal(span: Span) -> Diagnostic {
    Diagnostic::error("kaddr() expects a string literal")
        .with_code(Code::E0473)
        .with_label(span, "the symbol is looked up when the script is compiled")
        .with_help("write the symbol's name in quotes: kaddr(\"avenrun\")")
}

/// `span`: the whole `kaddr(...)` call, as bpftrace underlines it.
pub fn kernel_symbol_unavailable(span: Span, symbol: &str, why: &str) -> Diagnostic {
    Diagnostic::error(format!("Failed to resolve kernel symbol: {symbol}"))
        .with_code(Code::E0474)
        .with_label(span, "")
        .with_note(format!("looked up in /proc/kallsyms: {why}"))
}

pub fn percpu_variable_unknown(span: Span, name: &str) -> Diagnostic {
    Diagnostic::error(format!(
        "the kernel has no per-CPU variable `{name}`"
    ))
    .with_code(Code::E0493)
    .with_label(span, "not among the kernel's per-CPU variables")
    .with_help("percpu_kaddr() takes a variable of the kernel's `.data..percpu` section in its BTF (`runqueues`, `process_counts`); `kaddr()` gives the address of other symbols")
}

pub fn percpu_variable_without_address(span: Span, name: &str) -> Diagnostic {
    Diagnostic::error(format!(
        "percpu_kaddr(\"{name}\") cannot work on this kernel: it does not list `{name}` in /proc/kallsyms, where the BPF verifier looks up a per-CPU variable's address (data symbols are listed only in kernels built with CONFIG_KALLSYMS_ALL)"
    ))
    .with_code(Code::E0494)
    .with_label(span, "the verifier would refuse this")
}

pub fn needs_unsafe(span: Span, name: &str, what: &str) -> Diagnostic {
    Diagnostic::error(format!(
        "{name}() is unsafe. To use you need the --unsafe flag"
    ))
    .with_code(Code::E0476)
    .with_label(span, what.to_string())
        .with_help(format!(
            "run weft with --unsafe if you mean it (it allows {name}() and the other actions that change the system: system(), signal(), override())"
        ))
}

pub fn not_in_this_probe(span: Span, name: &str, probe: &str, allowed: &str) -> Diagnostic {
    Diagnostic::error(format!("{name}() cannot be used in {probe} probes"))
        .with_code(Code::E0477)
        .with_label(span, format!("not available in {probe}"))
        .with_help(format!("{name}() works in {allowed}"))
}

/// `write_user(dst, src, len)` with a literal `len` of 0 or past `src`'s size.
pub fn write_user_length(span: Span, len: u64, size: u32) -> Diagnostic {
    Diagnostic::error(format!(
        "write_user() writes 1 to {size} bytes of this value, not {len}"
    ))
    .with_code(Code::E0479)
    .with_label(span, format!("the value holds {size} bytes"))
}

pub fn invalid_signal(span: Span, what: &str) -> Diagnostic {
    Diagnostic::error(format!("{what} is not a valid signal"))
        .with_code(Code::E0478)
        .with_label(
            span,
            "signals are 1 to 64, or names such as SIGKILL and SIGUSR1",
        )
}

pub fn cgroup_not_found(span: Span, path: &str, why: &str) -> Diagnostic {
    Diagnostic::error(format!("cannot resolve the cgroup `{path}`"))
        .with_code(Code::E0475)
        .with_label(span, "its id is looked up when the script is compiled")
        .with_note(why.to_string())
        .with_help("name a cgroup v2 directory, e.g. cgroupid(\"/sys/fs/cgroup/system.slice\")")
}

pub fn uaddr_symbol_not_found(span: Span, path: &str, symbol: &str, known: &[&str]) -> Diagnostic {
    let d = Diagnostic::error(format!("`{path}` has no symbol `{symbol}`"))
        .with_code(Code::E0472)
        .with_label(
            span,
            "no data or function symbol of this name in the binary",
        )
        .with_help(format!("list its symbols with: nm {path}"));
    with_suggestion(d, symbol, known)
}

// Struct members through BTF (`->`, `.`, casts to struct pointers): E0350–E0359.

pub fn unknown_struct(span: Span, name: &str, known: &[&str]) -> Diagnostic {
    let d = Diagnostic::error(format!("unknown type `{name}`"))
        .with_code(Code::E0350)
        .with_label(span, "the kernel's BTF has no struct or union of this name");
    with_suggestion(d, name.rsplit(' ').next().unwrap_or(name), known)
}

pub fn struct_needs_btf(span: Span, name: &str, why: &str) -> Diagnostic {
    Diagnostic::error(format!("`{name}` needs the kernel's BTF: {why}"))
        .with_code(Code::E0351)
        .with_label(span, "struct layouts come from /sys/kernel/btf/vmlinux")
}

pub fn no_such_member(span: Span, ty: &str, member: &str, members: &[&str]) -> Diagnostic {
    let d = Diagnostic::error(format!("`{ty}` has no member `{member}`"))
        .with_code(Code::E0352)
        .with_label(span, "unknown member");
    with_suggestion(d, member, members)
}

pub fn arrow_on_non_pointer(span: Span, found: &Type) -> Diagnostic {
    Diagnostic::error(format!(
        "`->` needs a pointer to a struct or union, found `{found}`"
    ))
    .with_code(Code::E0353)
    .with_label(span, format!("this is `{found}`"))
    .with_help("cast an address to the struct it points to first: ((struct file *)arg0)->f_pos")
}

pub fn dot_on_pointer(span: Span, found: &Type) -> Diagnostic {
    Diagnostic::error(format!(
        "`.` on the pointer `{found}`, which points to no struct or union"
    ))
    .with_code(Code::E0354)
    .with_label(span, "no members here")
    .with_help("read what it points to with `*`, or cast it to a struct pointer first")
}

pub fn member_not_supported(span: Span, ty: &str, member: &str, what: &str) -> Diagnostic {
    Diagnostic::error(format!(
        "member `{member}` of `{ty}` is {what}, which weft cannot read yet"
    ))
    .with_code(Code::E0355)
    .with_label(span, "not supported")
}

pub fn bad_c_definition(span: Span, problem: &str) -> Diagnostic {
    Diagnostic::error(format!("cannot read this C definition: {problem}"))
        .with_code(Code::E0357)
        .with_label(span, "here")
        .with_help("weft reads struct, union and enum definitions with integer, pointer, array, enum and struct members, and bitfields of integer types")
}

pub fn header_not_found(span: Span, header: &str, searched: &[String]) -> Diagnostic {
    Diagnostic::error(format!("header `{header}` not found"))
        .with_code(Code::E0215)
        .with_label(span, "no include directory holds this file")
        .with_help(format!(
            "searched {}; -I DIR adds a directory",
            searched.join(", ")
        ))
}

pub fn unknown_c_type(span: Span, name: &str) -> Diagnostic {
    Diagnostic::error(format!("unknown type `{name}`"))
        .with_code(Code::E0358)
        .with_label(
            span,
            "not an integer type, a struct of the script or a type of the kernel's BTF",
        )
}

/// `$t[index]` past the last of a tuple's `len` fields, in bpftrace's words.
pub fn tuple_index_out_of_range(span: Span, index: i64, len: usize) -> Diagnostic {
    Diagnostic::error(format!(
        "Invalid tuple index: {index}. Found {len} elements in tuple."
    ))
    .with_code(Code::E0370)
    .with_label(span, "no such field")
    .with_help(format!(
        "a field of this tuple is 0 to {}",
        len.saturating_sub(1)
    ))
}

pub fn index_out_of_bounds(span: Span, index: u64, len: u32) -> Diagnostic {
    Diagnostic::error(format!(
        "the index {index} is out of bounds for array of size {len}"
    ))
    .with_code(Code::E0359)
    .with_label(span, "out of bounds")
    .with_help(format!(
        "an index of this array is 0 to {}",
        len.saturating_sub(1)
    ))
}

pub fn no_such_record_field(span: Span, field: &str, record: &Type, fields: &[&str]) -> Diagnostic {
    let d = Diagnostic::error(format!("`{record}` has no field `{field}`"))
        .with_code(Code::E0360)
        .with_label(span, "unknown field");
    let d = with_suggestion(d, field, fields);
    d.with_note(format!("its fields are: {}", fields.join(", ")))
}

pub fn bad_struct_cast(span: Span, found: &Type) -> Diagnostic {
    Diagnostic::error(format!(
        "a cast to a struct pointer expects an address, found `{found}`"
    ))
    .with_code(Code::E0356)
    .with_label(span, format!("this is `{found}`"))
}

// `config = { ... }` blocks and map declarations: E0380–E0389.

/// `span`: the whole `key = value` entry, as bpftrace underlines it.
pub fn unknown_config_key(span: Span, key: &str, known: &[&str]) -> Diagnostic {
    let d = Diagnostic::error(format!("{key}: not a known configuration option"))
        .with_code(Code::E0380)
        .with_label(span, "not a bpftrace config key");
    with_suggestion(d, key, known)
}

pub fn config_key_not_supported(span: Span, key: &str, why: &str) -> Diagnostic {
    Diagnostic::warning(format!("config key `{key}` has no effect in weft"))
        .with_code(Code::E0381)
        .with_label(span, "weft goes on as with bpftrace's default")
        .with_note(why.to_string())
}

pub fn too_many_programs(span: Span, count: u64, limit: u64, key: &str) -> Diagnostic {
    Diagnostic::error(format!(
        "the script expands to {count} probe programs, more than the limit of {limit} (`{key}`)"
    ))
    .with_code(Code::E0395)
    .with_label(span, format!("probe {} is past the limit", limit + 1))
    .with_help(format!(
        "raise the limit with BPFTRACE_{} or `config = {{ {key} = N }}`; many probes can slow the system down",
        key.to_ascii_uppercase()
    ))
}

pub fn config_key_renamed(span: Span, key: &str, new: &str) -> Diagnostic {
    Diagnostic::warning(format!("config key `{key}` has been renamed to `{new}`"))
        .with_code(Code::E0384)
        .with_label(span, format!("sets `{new}`"))
        .with_help(format!("write `{new}`"))
}

pub fn config_key_deprecated(span: Span, key: &str) -> Diagnostic {
    Diagnostic::warning(format!(
        "config key `{key}` is deprecated and has no effect"
    ))
    .with_code(Code::E0392)
    .with_label(span, "bpftrace no longer has this setting")
}

pub fn config_key_env_only(span: Span, key: &str) -> Diagnostic {
    Diagnostic::error(format!(
        "config key `{key}` can only be set as an environment variable"
    ))
    .with_code(Code::E0393)
    .with_label(span, "not settable in a script")
    .with_help(format!(
        "set BPFTRACE_{} in the environment",
        key.to_ascii_uppercase()
    ))
}

pub fn bad_config_env(name: &str, value: &str, expected: &str) -> Diagnostic {
    Diagnostic::error(format!("{name} expects {expected}, not `{value}`")).with_code(Code::E0394)
}

pub fn bad_config_value(span: Span, key: &str, expected: &str) -> Diagnostic {
    Diagnostic::error(format!("config key `{key}` expects {expected}"))
        .with_code(Code::E0382)
        .with_label(span, "not a valid value for this key")
}

/// A value outside a key's fixed list, in bpftrace's words (`Invalid value
/// for license. Found: Potato. Valid values: ...`).
pub fn config_value_not_listed(span: Span, key: &str, found: &str, valid: &[&str]) -> Diagnostic {
    Diagnostic::error(format!(
        "Invalid value for {key}. Found: {found}. Valid values: {}",
        valid.join(", ")
    ))
    .with_code(Code::E0396)
    .with_label(span, "not a valid value for this key")
}

pub fn config_key_twice(span: Span, key: &str, first: Span) -> Diagnostic {
    Diagnostic::error(format!("config key `{key}` is set twice"))
        .with_code(Code::E0383)
        .with_label(span, "set again here")
        .with_secondary(first, "first set here")
}

pub fn unknown_map_kind(span: Span, kind: &str, known: &[&str]) -> Diagnostic {
    let d = Diagnostic::error(format!("unknown map kind `{kind}`"))
        .with_code(Code::E0385)
        .with_label(
            span,
            "weft declares `hash`, `lruhash`, `percpuhash` and `percpulruhash` maps",
        );
    with_suggestion(d, kind, known)
}

pub fn bad_map_decl_size(span: Span, kind: &str) -> Diagnostic {
    Diagnostic::error(format!(
        "`{kind}(N)` expects N, the number of keys, as an integer literal from 1 to {}",
        u32::MAX
    ))
    .with_code(Code::E0386)
    .with_label(span, "expected a positive integer literal")
}

pub fn map_kind_mismatch(
    span: Span,
    map: &str,
    declared: &str,
    holds: &str,
    needs: &str,
    decl: Span,
) -> Diagnostic {
    Diagnostic::error(format!(
        "{map} is declared `{declared}`, but it holds {holds}, which needs {needs}"
    ))
    .with_code(Code::E0387)
    .with_label(span, format!("{map} gets {holds} here"))
    .with_secondary(decl, "declared here")
}

pub fn map_declared_twice(span: Span, map: &str, first: Span) -> Diagnostic {
    Diagnostic::error(format!("{map} is declared twice"))
        .with_code(Code::E0388)
        .with_label(span, "declared again here")
        .with_secondary(first, "first declared here")
}

pub fn map_declared_unused(span: Span, map: &str) -> Diagnostic {
    Diagnostic::warning(format!("Unused map: {map}"))
        .with_code(Code::E0389)
        .with_label(span, "no probe reads or stores this map")
}

pub fn invalid_metric_directive(span: Span, problem: &str, help: &str) -> Diagnostic {
    Diagnostic::error(format!("invalid `// weft:metric` directive: {problem}"))
        .with_code(Code::E0390)
        .with_label(span, problem.to_string())
        .with_help(help.to_string())
}

pub fn metric_directive_unknown_map(span: Span, map: &str, maps: &[&str]) -> Diagnostic {
    let d = Diagnostic::error(format!(
        "a `// weft:metric` directive names {map}, which the script never stores into"
    ))
    .with_code(Code::E0391)
    .with_label(span, "no such map");
    match did_you_mean(map, maps.iter().copied()) {
        Some(near) => d.with_help(format!("did you mean {near}?")),
        None => d.with_help("a directive names a map by its full name, `@` included"),
    }
}
