//! Every diagnostic code weft reports, in one table.
//!
//! A code is stable: it names one kind of diagnostic for good, is never
//! reused for another, and is never retired into a different meaning. The
//! constructors that build diagnostics live in each crate's catalogue
//! (`syntax::diagnostics`, `sema::diagnostics`, codegen and cli), but they can
//! only use codes from this table (a `Code` is not constructible elsewhere), a
//! code defined twice does not compile, and a test (`cli/tests/rules.rs`)
//! checks that each code is used by exactly one constructor.
//!
//! Ranges: E00xx lexer and parser; E02xx names; E03xx types and values;
//! E04xx probes, providers and the kernel; E05xx code generation and loading.
//! Adding a diagnostic: one line here, one constructor in the crate's
//! catalogue.

use std::fmt;

/// A stable diagnostic code such as `E0001`, with a short title.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Code {
    code: &'static str,
    title: &'static str,
}

impl Code {
    /// The code as printed: `E0001`.
    pub fn as_str(self) -> &'static str {
        self.code
    }

    /// What kind of problem the code names, in a few words.
    pub fn title(self) -> &'static str {
        self.title
    }

    /// The code with this text, if the table has it.
    pub fn lookup(code: &str) -> Option<Code> {
        Code::ALL.iter().copied().find(|c| c.code == code)
    }
}

impl Code {
    /// The codes that say what an attach point names does not exist on this
    /// machine (a tracepoint, kernel function, library, symbol or USDT
    /// probe), as opposed to an attach point written wrong or a kernel that
    /// cannot run it: bpftrace's `missing_probes` setting decides what those
    /// are (`sema::providers::missing`).
    pub const MISSING_ATTACH_POINT: &'static [Code] = &[
        Code::E0404,
        Code::E0405,
        Code::E0440,
        Code::E0442,
        Code::E0444,
        Code::E0450,
        Code::E0451,
        Code::E0452,
    ];

    /// The codes of a uprobe placement weft cannot vouch for: inside an
    /// instruction, or where it cannot tell (bytes it does not decode, an
    /// address in no known function, a function of size 0). `--unsafe` places such a probe
    /// anyway, with a warning (`sema::providers::placement`).
    pub const UNSAFE_PLACEMENT: &'static [Code] =
        &[Code::E0455, Code::E0456, Code::E0458, Code::E0460];
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code)
    }
}

impl PartialEq<&str> for Code {
    fn eq(&self, other: &&str) -> bool {
        self.code == *other
    }
}

/// Defines one associated constant per code (named as it prints, so a
/// duplicate does not compile) and `Code::ALL` in table order.
macro_rules! codes {
    ($($name:ident: $title:literal,)*) => {
        impl Code {
            $(
                #[doc = $title]
                pub const $name: Code = Code { code: stringify!($name), title: $title };
            )*
            /// Every code, in table order.
            pub const ALL: &'static [Code] = &[$(Code::$name),*];
        }
    };
}

codes! {
    // E00xx: the lexer.
    E0001: "unterminated string",
    E0002: "unknown escape sequence",
    E0003: "invalid hex escape",
    E0004: "octal escape out of range",
    E0005: "unterminated block comment",
    E0006: "unexpected character",
    E0007: "integer too large",
    E0008: "invalid integer suffix",
    E0009: "invalid integer",
    E0010: "invalid character literal",
    E0011: "positional parameter out of range",
    // E002x–E003x: the parser.
    E0020: "expected a token",
    E0021: "expected a semicolon",
    E0022: "expected an expression",
    E0023: "assignment in a predicate",
    E0024: "probe without a block",
    E0025: "attach point expected",
    E0026: "unclosed delimiter",
    E0027: "nesting too deep",
    E0028: "invalid assignment target",
    E0029: "invalid increment or decrement target",
    E0030: "expected a type",
    E0031: "unterminated predicate",
    E0032: "`let` needs a variable",
    E0033: "`let` at the top level",
    E0034: "`else` needs a block",
    E0035: "unterminated struct definition",
    E0036: "expected a field",
    E0037: "invalid `for` header",
    E0038: "stream clause expected",
    E0039: "conditional directive without `#if`",
    E0040: "conditional directive after `#else`",
    E0041: "unterminated conditional directive",
    E0042: "`keep` needs `first` or `last`",
    // E005x: macro expansion.
    E0050: "macro argument mismatch",
    E0051: "recursive macro",
    E0052: "macro expansion too large",
    E0053: "map not passed to a macro",
    E0056: "macro defined twice",
    // E006x: named program parameters.
    E0060: "invalid getopt() call",
    E0061: "unknown config() field",
    // E007x: imports.
    E0070: "import not found",
    E0071: "import unreadable",
    E0072: "unknown import type",
    E0073: "BPF C import",
    E0074: "import from a world-writable place",
    E0075: "config in an imported script",
    E0076: "imported header holds more than C definitions",
    E0077: "imports nested too deep",
    // E02xx: names.
    E0201: "unknown function",
    E0202: "unknown identifier",
    E0203: "variable used before assignment",
    E0204: "map read but never assigned",
    E0205: "builtin not available in this probe",
    E0206: "not supported yet",
    E0207: "variable shadowed",
    E0208: "unknown macro",
    E0209: "macro called with the wrong number of arguments",
    E0215: "header not found",
    E0218: "uprobe arguments unknown",
    E0219: "source line not found",
    // E03xx: types and values.
    E0301: "wrong number of arguments",
    E0302: "type mismatch",
    E0303: "map value type mismatch",
    E0304: "map key type mismatch",
    E0305: "variable type mismatch",
    E0306: "invalid operands",
    E0307: "no such field",
    E0308: "aggregation read as a value",
    E0309: "invalid printf format",
    E0310: "printf arguments do not match the format",
    E0311: "literal needed",
    E0312: "not assignable",
    E0313: "unroll count out of range",
    E0314: "`break` or `continue` outside a loop",
    E0315: "invalid lhist bucket range",
    E0316: "aggregation not assigned to a map",
    E0317: "unreachable statement",
    E0318: "return value discarded",
    E0319: "implicit conversion of an integer's sign",
    E0320: "`for` over a map without keys",
    E0321: "`for` over a map element",
    E0322: "map without keys where keys are needed",
    E0323: "invalid IP address",
    E0325: "hist() bits out of range",
    E0326: "invalid tseries() argument",
    E0327: "unstable feature not enabled",
    E0328: "unstable feature used",
    E0329: "invalid BPFTRACE_DUMMY_TS_MAP",
    E0340: "invalid stack argument",
    E0341: "unknown clock",
    E0342: "unknown pid namespace",
    E0343: "debugf() is for debugging",
    E0344: "invalid debugf() format",
    E0345: "path() of an untrusted pointer",
    E0346: "fail() reached",
    E0347: "find() result not a variable",
    E0350: "unknown struct",
    E0351: "struct members need BTF",
    E0352: "no such member",
    E0353: "`->` on a non-pointer",
    E0354: "`.` on a pointer",
    E0355: "member type not supported",
    E0356: "invalid struct cast",
    E0357: "invalid C definition",
    E0358: "unknown type",
    E0359: "array index out of bounds",
    E0360: "no such record field",
    E0370: "tuple index out of range",
    E0380: "unknown config key",
    E0381: "config key not supported",
    E0382: "invalid config value",
    E0383: "config key set twice",
    E0384: "config key renamed",
    E0385: "unknown map kind",
    E0386: "invalid map size",
    E0387: "map kind mismatch",
    E0388: "map declared twice",
    E0389: "map declared but unused",
    E0390: "invalid metric directive",
    E0391: "metric directive for an unknown map",
    E0392: "config key deprecated",
    E0393: "config key only in the environment",
    E0394: "invalid config value in the environment",
    E0395: "too many probe programs",
    E0396: "config value not in its list",
    // E04xx: probes, providers and the kernel.
    E0401: "unknown provider",
    E0402: "provider not supported yet",
    E0403: "invalid attach point",
    E0404: "tracepoint not found",
    E0405: "no probe matches",
    E0406: "kernel information unavailable",
    E0407: "no probes",
    E0408: "the kernel has no kprobes",
    E0409: "probe without attach points",
    E0410: "invalid stream shape",
    E0411: "duplicate stage name",
    E0412: "unknown stream",
    E0413: "stream key unreachable",
    // E0414 (a link of the begin key's type) is no longer an error: keys of
    // one type are kept apart by their slot.
    E0415: "emit outside a stream handler",
    E0416: "ambiguous stream key",
    E0417: "stream stage unreachable",
    E0418: "stream key type mismatch",
    E0419: "useless stream link",
    E0420: "unknown perf event",
    E0440: "binary not found",
    E0441: "binary unreadable",
    E0442: "symbol not found",
    E0443: "address not mapped",
    E0444: "USDT probe not found",
    E0445: "invalid USDT arguments",
    E0446: "indirect function unresolved",
    E0447: "reg() needs registers",
    E0448: "unknown register",
    E0450: "kernel function not found",
    E0451: "function not in BTF",
    E0452: "raw tracepoint not found",
    E0453: "offset on a return probe",
    E0454: "the kernel has no BPF trampolines",
    E0455: "uprobe inside an instruction",
    E0456: "uprobe placement cannot be checked",
    E0457: "uprobe offset outside its function",
    E0458: "uprobe address in no known function",
    E0459: "uretprobe inside a function",
    E0460: "uprobe on a symbol of size 0",
    E0470: "uaddr() outside a user probe",
    E0471: "uaddr() needs a literal",
    E0472: "uaddr() symbol not found",
    E0473: "kaddr() needs a literal",
    E0474: "kernel symbol not found",
    E0475: "cgroup not found",
    E0476: "unsafe builtin without --unsafe",
    E0477: "builtin not available in this probe",
    E0478: "invalid signal",
    E0479: "write_user() length out of range",
    E0480: "--probe-filter matches no probe",
    E0481: "every file of a process without -p",
    E0482: "unsupported self signal",
    E0483: "sampling rate above the kernel's limit",
    E0490: "kernel lacks the range iterator",
    E0491: "kernel cannot count map elements",
    E0492: "kernel lacks the map iterator",
    E0493: "per-CPU variable not in the kernel's BTF",
    E0494: "per-CPU variable without an address in kallsyms",
    E0497: "BPF iterator target not found",
    E0498: "iterator probe beside other probes",
    E0499: "iterator pinning not supported",
    // E05xx: code generation and loading.
    E0501: "cannot write the BPF object",
    E0502: "code generation failed",
    E0503: "the verifier rejected a program",
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_well_formed_and_in_order() {
        for pair in Code::ALL.windows(2) {
            assert!(
                pair[0].code < pair[1].code,
                "{} before {}",
                pair[0],
                pair[1]
            );
        }
        for c in Code::ALL {
            assert!(c.code.len() == 5 && c.code.starts_with('E'), "{c}");
            assert!(c.code[1..].bytes().all(|b| b.is_ascii_digit()), "{c}");
            assert!(!c.title.is_empty());
        }
        assert_eq!(Code::lookup("E0302"), Some(Code::E0302));
        assert_eq!(Code::lookup("E0999"), None);
    }
}
