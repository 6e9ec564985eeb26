//! The syntax tree produced by [`crate::parse`].
//!
//! Every node carries the [`Span`] of the text it was parsed from. Every
//! [`Expr`] also carries a [`NodeId`], dense from 0 to
//! [`Program::node_count`], so later passes can keep side tables indexed by it.

use source::Span;

/// Identity of one expression node; dense from 0 within a [`Program`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodeId(pub u32);

/// A whole script.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Program {
    pub items: Vec<Item>,
    /// Number of [`NodeId`]s handed out: every id is `< node_count`.
    pub node_count: u32,
    pub span: Span,
    /// Where the code that macro expansion copied comes from.
    pub expansions: source::Expansions,
}

/// A top-level item.
#[derive(Clone, Debug, PartialEq, Eq)]
#[allow(
    clippy::large_enum_variant,
    reason = "a script has a few items, each built once: boxing the probe would cost more than it saves"
)]
pub enum Item {
    /// `#!/usr/bin/env bpftrace` on the first line.
    Shebang(RawText),
    /// A C preprocessor line such as `#include <linux/sched.h>` or `#define X 1`, kept verbatim.
    Preprocessor(RawText),
    /// A C `struct`/`union`/`enum` definition, kept verbatim for the C type parser.
    StructDef(StructDef),
    /// `config = { key = value; ... }`.
    Config(Config),
    /// `import "path";`.
    Import(Import),
    /// `let @name = hash(100);`.
    MapDecl(MapDecl),
    /// `macro name(params) { ... }`.
    Macro(Macro),
    /// `fn name($a: int64): int64 { ... }`.
    Function(Function),
    /// Attach points, an optional predicate and an action block.
    Probe(Probe),
    /// `stream name { begin ... stage ... end ... }`: a weft extension.
    Stream(Stream),
}

/// A declared life cycle of one kind of request across probes (weft's
/// extension to the language):
///
/// ```text
/// stream read_req {
///     begin tracepoint:syscalls:sys_enter_read /comm == "x"/ by tid { $fd = args->fd; }
///     stage [name] PROBE [/pred/] [by KEY [as NAME]] [link KEY [as NAME] ...] [keep last] [{ ... }]
///     end   tracepoint:syscalls:sys_exit_read by tid { $bytes = args->ret; }
///     timeout 5s
///     max 10240
///     sample 100
///     queue 64
///     incomplete
/// }
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stream {
    pub name: String,
    pub name_span: Span,
    /// The `begin`, `stage` and `end` clauses in written order.
    pub stages: Vec<StreamStage>,
    /// `timeout DURATION`.
    pub timeout: Option<Expr>,
    /// `max N`: how many instances may be open at once.
    pub max: Option<Expr>,
    /// `sample N`: begin only one in N instances (chosen at random).
    pub sample: Option<Expr>,
    /// `queue N`: up to N open instances per key, taken in begin order.
    pub queue: Option<Expr>,
    /// `incomplete`: emit records for expired and evicted instances too.
    pub incomplete: bool,
    pub span: Span,
}

/// The role of a stream clause.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StageRole {
    Begin,
    Stage,
    End,
}

impl StageRole {
    pub fn as_str(self) -> &'static str {
        match self {
            StageRole::Begin => "begin",
            StageRole::Stage => "stage",
            StageRole::End => "end",
        }
    }
}

/// One `begin`/`stage`/`end` clause of a stream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StreamStage {
    pub role: StageRole,
    /// An explicit stage name (`stage issue tracepoint:...`).
    pub name: Option<(String, Span)>,
    pub attach_points: Vec<AttachPoint>,
    pub predicate: Option<Expr>,
    /// `by KEY`: the key that finds (or, at begin, files) the instance.
    pub key: Option<StreamKey>,
    /// `link KEY`s: also file the instance under these keys for later stages.
    pub links: Vec<StreamKey>,
    /// `keep last`: the stage's time is its last hit, not its first.
    pub keep_last: bool,
    pub body: Option<Block>,
    pub span: Span,
}

/// A `by` or `link` key of a stream clause, with the name of its key slot:
/// `as NAME` when written, else the expression's own text without spaces
/// (`args->skaddr`), so that the same expression names the same slot.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StreamKey {
    pub expr: Expr,
    /// `as NAME`.
    pub name: Option<(String, Span)>,
    /// The expression as written, spaces outside string literals removed.
    pub text: String,
}

impl StreamKey {
    /// The slot this key names: `as NAME`, else its text.
    pub fn slot_name(&self) -> &str {
        self.name.as_ref().map_or(self.text.as_str(), |(n, _)| n)
    }
}

/// Verbatim source text (without the trailing newline).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RawText {
    pub text: String,
    pub span: Span,
}

/// `struct X { ... };` kept as text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StructDef {
    /// `struct`, `union` or `enum`.
    pub keyword: String,
    /// The tag name, e.g. `X`; empty if anonymous.
    pub name: String,
    /// The whole definition from the keyword through the closing `}` (and `;` if present).
    pub text: String,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    pub entries: Vec<ConfigEntry>,
    pub span: Span,
}

/// `key = value` inside a config block; the value is an expression (often a bare identifier).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigEntry {
    pub key: String,
    pub key_span: Span,
    pub value: Expr,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Import {
    pub path: String,
    pub span: Span,
}

/// `let @name = kind(args);`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MapDecl {
    /// Map name without `@`.
    pub name: String,
    /// Map kind as written: `hash`, `lruhash`, `percpuhash`, `percpulruhash`, `percpuarray`, ...
    pub kind: String,
    pub args: Vec<Expr>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Macro {
    pub name: String,
    pub name_span: Span,
    /// Empty both for `macro m() {}` and `macro m {}`.
    pub params: Vec<MacroParam>,
    /// The body; its `tail` (if any) is the macro's value.
    pub body: Block,
    pub span: Span,
}

/// A macro parameter: `$a`, `@b` or bare `c`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MacroParam {
    pub kind: MacroParamKind,
    /// Name without sigil.
    pub name: String,
    pub span: Span,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MacroParamKind {
    /// `$a`: the argument must be a scratch variable.
    Var,
    /// `@a`: the argument must be a map.
    Map,
    /// `a`: any expression, substituted where `a` is used.
    Expr,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Function {
    pub name: String,
    pub name_span: Span,
    pub params: Vec<Param>,
    pub ret: TypeName,
    pub body: Block,
    pub span: Span,
}

/// `$name: type` in a function signature.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Param {
    /// Name without `$`.
    pub name: String,
    pub ty: TypeName,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Probe {
    pub attach_points: Vec<AttachPoint>,
    pub predicate: Option<Expr>,
    pub body: Block,
    pub span: Span,
}

/// One attach point, kept as text; providers interpret `parts`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AttachPoint {
    /// The text as written, e.g. `uprobe:"/a b/c":main+0x10`.
    pub raw: String,
    /// The provider as written (`kprobe`, `k`, `BEGIN`, ...).
    pub provider: String,
    /// The `:`-separated parts after the provider, quotes removed and escapes resolved.
    pub parts: Vec<String>,
    pub span: Span,
}

/// `{ stmts }`, optionally ending in a value expression.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Block {
    pub stmts: Vec<Stmt>,
    /// The final expression without `;`, only for block expressions and
    /// macro bodies; in statement position it becomes an [`StmtKind::Expr`].
    pub tail: Option<Box<Expr>>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stmt {
    pub kind: StmtKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StmtKind {
    /// An expression evaluated for its effect: `print(x);`, `@x++;`.
    Expr(Expr),
    /// `target op value` where target is a `Var` or `Map` expression.
    Assign {
        target: Expr,
        op: AssignOp,
        value: Expr,
    },
    /// `_ = value;`: evaluate and drop without a warning.
    Discard(Expr),
    /// `let $name [: ty] [= value];`.
    Let {
        /// Identity of the declared variable (the checker's side tables key on it).
        id: NodeId,
        name: String,
        name_span: Span,
        ty: Option<TypeName>,
        value: Option<Expr>,
    },
    /// `if (cond) { } else ...`; parentheses around `cond` are optional.
    If {
        cond: Expr,
        then: Block,
        /// An `If` or `Block` statement.
        else_branch: Option<Box<Stmt>>,
    },
    /// `unroll (count) { }`.
    Unroll {
        count: Expr,
        body: Block,
    },
    /// `while (cond) { }`.
    While {
        cond: Expr,
        body: Block,
    },
    /// `for ($var : iter) { }`.
    For {
        /// Identity of the loop variable (the checker's side tables key on it).
        id: NodeId,
        var: String,
        var_span: Span,
        iter: ForIter,
        body: Block,
    },
    Break,
    Continue,
    Return(Option<Expr>),
    /// A nested `{ }`.
    Block(Block),
    /// `import "path";` inside a block.
    Import(String),
}

/// What a `for` loop iterates over.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ForIter {
    /// `for ($kv : @map)`.
    Map(Expr),
    /// `for ($i : start..end)`, end exclusive.
    Range { start: Expr, end: Expr },
}

/// `=` and the compound assignment operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AssignOp {
    Assign,
    /// `op=` for a binary operator.
    Compound(BinaryOp),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Expr {
    pub id: NodeId,
    pub kind: ExprKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ExprKind {
    /// Stands in for an expression that failed to parse (a diagnostic was reported).
    Error,
    /// Integer literal; durations are already scaled to nanoseconds, scientific notation expanded.
    Int {
        value: u64,
        form: IntForm,
    },
    /// String literal with escapes resolved (bytes may be non-UTF-8, hence `Vec<u8>`).
    Str(Vec<u8>),
    Bool(bool),
    /// A bare identifier: builtins (`pid`, `comm`, `args`, `arg0`, `retval`...), macro params, enum values.
    Ident(String),
    /// A scratch variable `$x` (name without `$`).
    Var(String),
    /// `@name`, `@name[k]`, `@name[k1, k2]`; name without `@`, empty for `@`.
    Map {
        name: String,
        keys: Vec<Expr>,
    },
    /// `$1`, `$2`, ...
    Positional(u32),
    /// `$#`.
    PositionalCount,
    /// `name(args)`; `bang` for the macro-call form `name!(args)`.
    Call {
        name: String,
        name_span: Span,
        args: Vec<Expr>,
        bang: bool,
    },
    Unary {
        op: UnaryOp,
        expr: Box<Expr>,
    },
    Binary {
        op: BinaryOp,
        lhs: Box<Expr>,
        rhs: Box<Expr>,
    },
    /// `cond ? then : else_`; `then` is `None` for the GNU form `cond ?: else_`.
    Ternary {
        cond: Box<Expr>,
        then: Option<Box<Expr>>,
        else_: Box<Expr>,
    },
    /// `++x`, `x++`, `--x`, `x--`.
    IncDec {
        op: IncDecOp,
        prefix: bool,
        target: Box<Expr>,
    },
    /// `expr.name` or `expr->name`.
    Field {
        expr: Box<Expr>,
        name: String,
        arrow: bool,
    },
    /// `expr.0`.
    TupleIndex {
        expr: Box<Expr>,
        index: u32,
    },
    /// `expr[index]` on a non-map.
    Index {
        expr: Box<Expr>,
        index: Box<Expr>,
    },
    /// `(type)expr`.
    Cast {
        ty: TypeName,
        expr: Box<Expr>,
    },
    /// `(a, b)`, `()`.
    Tuple(Vec<Expr>),
    /// `(a = 1, b = "x")`.
    Record(Vec<(String, Expr)>),
    /// `sizeof(T)` / `sizeof(expr)`.
    Sizeof(TypeOrExpr),
    /// `offsetof(T, a.b)`.
    Offsetof {
        ty: TypeOrExpr,
        fields: Vec<String>,
    },
    /// `typeof(T)` / `typeof(expr)`, used as a macro argument.
    Typeof(TypeOrExpr),
    /// `{ stmts; value }` used as a value.
    Block(Box<Block>),
    /// `if cond { ... } else { ... }` used as a value (each block's tail is its value).
    If {
        cond: Box<Expr>,
        then: Box<Block>,
        /// An `ExprKind::Block` or another `ExprKind::If`.
        else_: Option<Box<Expr>>,
    },
}

/// How an integer literal was written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IntForm {
    /// No suffix.
    Plain,
    /// A C suffix (`u`, `l`, `ul`, `ll`, `ull`), which has no effect on the type.
    CSuffix,
    /// A duration suffix; the value is in nanoseconds.
    Duration(TimeUnit),
    /// A character literal `'a'` (a weft extension; bpftrace has none).
    Char,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeUnit {
    Ns,
    Us,
    Ms,
    S,
    M,
    H,
    D,
}

impl TimeUnit {
    /// Nanoseconds per unit.
    pub fn nanos(self) -> u64 {
        match self {
            TimeUnit::Ns => 1,
            TimeUnit::Us => 1_000,
            TimeUnit::Ms => 1_000_000,
            TimeUnit::S => 1_000_000_000,
            TimeUnit::M => 60_000_000_000,
            TimeUnit::H => 3_600_000_000_000,
            TimeUnit::D => 86_400_000_000_000,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            TimeUnit::Ns => "ns",
            TimeUnit::Us => "us",
            TimeUnit::Ms => "ms",
            TimeUnit::S => "s",
            TimeUnit::M => "m",
            TimeUnit::H => "h",
            TimeUnit::D => "d",
        }
    }
}

/// Argument of `sizeof`, `offsetof` and `typeof`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TypeOrExpr {
    Type(TypeName),
    Expr(Box<Expr>),
}

/// A written type: `uint32`, `struct task_struct *`, `uint8[4]`,
/// `typeof($x)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TypeName {
    /// Base name, with `struct `/`union `/`enum ` prefix when written;
    /// `typeof` for `typeof(...)`.
    pub base: String,
    pub pointer_depth: u8,
    pub array_len: Option<u64>,
    /// The argument of `typeof(...)` (then `base` is `typeof`).
    pub of: Option<Box<TypeOrExpr>>,
    pub span: Span,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnaryOp {
    /// `!`
    Not,
    /// `~`
    BitNot,
    /// `-`
    Neg,
    /// `*`
    Deref,
    /// `&`
    AddrOf,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IncDecOp {
    Inc,
    Dec,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinaryOp {
    LogOr,
    LogAnd,
    BitOr,
    BitXor,
    BitAnd,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Shl,
    Shr,
    Add,
    Sub,
    Mul,
    Div,
    Mod,
}

impl UnaryOp {
    pub fn as_str(self) -> &'static str {
        match self {
            UnaryOp::Not => "!",
            UnaryOp::BitNot => "~",
            UnaryOp::Neg => "-",
            UnaryOp::Deref => "*",
            UnaryOp::AddrOf => "&",
        }
    }
}

impl BinaryOp {
    pub fn as_str(self) -> &'static str {
        match self {
            BinaryOp::LogOr => "||",
            BinaryOp::LogAnd => "&&",
            BinaryOp::BitOr => "|",
            BinaryOp::BitXor => "^",
            BinaryOp::BitAnd => "&",
            BinaryOp::Eq => "==",
            BinaryOp::Ne => "!=",
            BinaryOp::Lt => "<",
            BinaryOp::Le => "<=",
            BinaryOp::Gt => ">",
            BinaryOp::Ge => ">=",
            BinaryOp::Shl => "<<",
            BinaryOp::Shr => ">>",
            BinaryOp::Add => "+",
            BinaryOp::Sub => "-",
            BinaryOp::Mul => "*",
            BinaryOp::Div => "/",
            BinaryOp::Mod => "%",
        }
    }

    /// Binding power; higher binds tighter. All binary operators are left-associative.
    pub fn precedence(self) -> u8 {
        match self {
            BinaryOp::LogOr => 1,
            BinaryOp::LogAnd => 2,
            BinaryOp::BitOr => 3,
            BinaryOp::BitXor => 4,
            BinaryOp::BitAnd => 5,
            BinaryOp::Eq | BinaryOp::Ne => 6,
            BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge => 7,
            BinaryOp::Shl | BinaryOp::Shr => 8,
            BinaryOp::Add | BinaryOp::Sub => 9,
            BinaryOp::Mul | BinaryOp::Div | BinaryOp::Mod => 10,
        }
    }
}

impl AssignOp {
    pub fn as_str(self) -> &'static str {
        match self {
            AssignOp::Assign => "=",
            AssignOp::Compound(op) => match op {
                BinaryOp::Add => "+=",
                BinaryOp::Sub => "-=",
                BinaryOp::Mul => "*=",
                BinaryOp::Div => "/=",
                BinaryOp::Mod => "%=",
                BinaryOp::BitAnd => "&=",
                BinaryOp::BitOr => "|=",
                BinaryOp::BitXor => "^=",
                BinaryOp::Shl => "<<=",
                BinaryOp::Shr => ">>=",
                BinaryOp::LogOr
                | BinaryOp::LogAnd
                | BinaryOp::Eq
                | BinaryOp::Ne
                | BinaryOp::Lt
                | BinaryOp::Le
                | BinaryOp::Gt
                | BinaryOp::Ge => "?=",
            },
        }
    }
}
