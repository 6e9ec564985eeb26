//! Macro expansion, a syntax-level pass between parsing and checking: each
//! call of a `macro` (`name(args)`, `name!(args)`, or a bare `name` for one
//! without parameters) becomes a block expression holding a copy of the
//! macro's body, as bpftrace's current release expands them:
//!
//! - a `$x` parameter takes a scratch variable and a `@m` parameter a map,
//!   by reference: the body's `$x` and `@m` become the caller's;
//! - a bare `x` parameter takes any expression, copied wherever `x` appears
//!   (evaluated at each use); `typeof(T)` passes a type, usable where the
//!   body writes a type (`(x*)`, `sizeof(x)`, `let $v: x`);
//! - hygiene: the body's other variables are renamed (`$y` becomes `$y#m3`,
//!   shown as `$y`), so they never meet the caller's; a map not passed in is
//!   an error;
//! - macros may call macros, in any definition order; a macro expanding
//!   itself is an error; overloads are chosen by the number and kinds of the
//!   arguments;
//! - a call no macro of that arity matches stays a call (of a builtin).
//!
//! Every copy gets a virtual region of spans (`source::Expansions`), so a
//! diagnostic inside it names the macro line and each call it was expanded
//! from. Expansion is bounded: a copy that grows past [`MAX_EXPANDED_NODES`]
//! stops with an error instead of exhausting memory.

use std::collections::HashMap;

use source::{Diagnostic, Expansions, Span};

use crate::ast::*;
use crate::diagnostics as diag;
use crate::visit::{VisitMut, walk_block, walk_expr, walk_items, walk_stmt, walk_type};

/// The most expression nodes all expansions of a script may copy.
pub const MAX_EXPANDED_NODES: u64 = 1_000_000;

/// Expands every macro call of `program` in place; the diagnostics point at
/// the text (macro lines resolved, calls added as labels).
pub fn expand_macros(program: &mut Program) -> Vec<Diagnostic> {
    let mut macros: HashMap<String, Vec<Macro>> = HashMap::new();
    let mut diags = Vec::new();
    for item in &program.items {
        if let Item::Macro(m) = item {
            let same = macros.entry(m.name.clone()).or_default();
            if let Some(first) = same.iter().find(|o| same_signature(o, m)) {
                diags.push(diag::macro_defined_twice(
                    m.name_span,
                    &m.name,
                    first.name_span,
                ));
                continue;
            }
            same.push(m.clone());
        }
    }
    if macros.is_empty() {
        return diags;
    }
    let mut x = Expander {
        macros,
        next_id: program.node_count,
        expansions: std::mem::take(&mut program.expansions),
        diags,
        active: Vec::new(),
        copied: 0,
        instances: 0,
        exhausted: false,
    };
    walk_items(&mut x, &mut program.items);
    program.node_count = x.next_id;
    let expansions = x.expansions;
    let mut diags = x.diags;
    for d in &mut diags {
        expansions.fix(d);
    }
    program.expansions = expansions;
    diags
}

/// Two definitions one call could not tell apart.
fn same_signature(a: &Macro, b: &Macro) -> bool {
    a.params.len() == b.params.len()
        && a.params
            .iter()
            .zip(&b.params)
            .all(|(p, q)| p.kind == q.kind)
}

/// Whether `arg` may be passed for `param`.
fn accepts(param: &MacroParam, arg: &Expr) -> bool {
    match param.kind {
        MacroParamKind::Var => matches!(arg.kind, ExprKind::Var(_)),
        MacroParamKind::Map => matches!(&arg.kind, ExprKind::Map { keys, .. } if keys.is_empty()),
        MacroParamKind::Expr => true,
    }
}

/// How a variable of a macro body is shown: its name without the suffix
/// that keeps it apart from the caller's (`y#m3` is `y`).
pub fn var_display_name(name: &str) -> &str {
    name.split('#').next().unwrap_or(name)
}

struct Expander {
    /// Definitions by name (overloads by signature).
    macros: HashMap<String, Vec<Macro>>,
    next_id: u32,
    expansions: Expansions,
    diags: Vec<Diagnostic>,
    /// Macros being expanded, outermost first (to refuse recursion).
    active: Vec<String>,
    /// Expression nodes copied so far.
    copied: u64,
    /// Expansions made, numbering the renamed variables.
    instances: u32,
    /// The copy budget ran out (reported once).
    exhausted: bool,
}

impl Expander {
    fn fresh_id(&mut self) -> NodeId {
        let id = NodeId(self.next_id);
        self.next_id += 1;
        id
    }

    /// The definition a call of `name` with `args` expands, if any; a call
    /// that no definition can take is reported (and `Err`).
    fn select(&mut self, name: &str, args: &[Expr]) -> Result<Option<Macro>, ()> {
        // Not a macro: a builtin, or what the checker reports.
        let Some(all) = self.macros.get(name) else {
            return Ok(None);
        };
        let same_arity: Vec<&Macro> = all
            .iter()
            .filter(|m| m.params.len() == args.len())
            .collect();
        if same_arity.is_empty() {
            // A builtin of that name, or a wrong number of arguments the checker reports.
            return Ok(None);
        }
        // The most specific definition whose parameters take the arguments.
        let best = same_arity
            .iter()
            .filter(|m| m.params.iter().zip(args).all(|(p, a)| accepts(p, a)))
            .max_by_key(|m| {
                m.params
                    .iter()
                    .filter(|p| p.kind != MacroParamKind::Expr)
                    .count()
            });
        if let Some(m) = best {
            return Ok(Some((*m).clone()));
        }
        let m = same_arity[0];
        let (param, arg) = m
            .params
            .iter()
            .zip(args)
            .find(|(p, a)| !accepts(p, a))
            .expect("a definition that takes none of the arguments has a mismatch");
        self.diags
            .push(diag::macro_argument(arg.span, &m.name, param));
        Err(())
    }

    /// The block a call expands to.
    fn instantiate(&mut self, m: &Macro, args: Vec<Expr>, id: NodeId, call: Span) -> Expr {
        let error = |span| Expr {
            id,
            kind: ExprKind::Error,
            span,
        };
        if let Some(at) = self.active.iter().position(|n| *n == m.name) {
            let mut chain: Vec<&str> = self.active[at..].iter().map(String::as_str).collect();
            chain.push(&m.name);
            self.diags
                .push(diag::recursive_macro(call, &m.name, &chain.join(" → ")));
            return error(call);
        }
        // What the copy will hold: the body, and each argument once per use.
        let uses = param_uses(m);
        let size = args
            .iter()
            .zip(&uses)
            .fold(count_nodes(&m.body), |n, (a, u)| {
                n.saturating_add(count_expr(a).saturating_mul(*u))
            });
        self.copied = self.copied.saturating_add(size);
        let base = match self.expansions.add(m.span, call, &m.name) {
            Some(base) if self.copied <= MAX_EXPANDED_NODES => base,
            _ => {
                if !self.exhausted {
                    self.exhausted = true;
                    self.diags
                        .push(diag::macro_expansion_too_large(call, MAX_EXPANDED_NODES));
                }
                return error(call);
            }
        };
        self.instances += 1;
        let tag = format!("#m{}", self.instances);
        let mut body = m.body.clone();
        Copy {
            x: self,
            m,
            args: &args,
            base,
            tag,
        }
        .visit_block(&mut body);
        // Calls inside the copy (the body's own, and those of the arguments).
        self.active.push(m.name.clone());
        self.visit_block(&mut body);
        self.active.pop();
        Expr {
            id,
            kind: ExprKind::Block(Box::new(body)),
            span: call,
        }
    }

    /// A copy of an argument for one more use: new node ids, same spans.
    fn fresh_copy(&mut self, arg: &Expr) -> Expr {
        let mut e = arg.clone();
        Renumber { x: self }.visit_expr(&mut e);
        e
    }
}

impl VisitMut for Expander {
    fn visit_expr(&mut self, e: &mut Expr) {
        if self.exhausted {
            return;
        }
        // Arguments first: what a macro receives is already expanded.
        walk_expr(self, e);
        let (name, args) = match &mut e.kind {
            ExprKind::Call { name, args, .. } => (name.clone(), std::mem::take(args)),
            ExprKind::Ident(name) => (name.clone(), Vec::new()),
            _ => return,
        };
        let is_ident = matches!(e.kind, ExprKind::Ident(_));
        match self.select(&name, &args) {
            Ok(Some(m)) => *e = self.instantiate(&m, args, e.id, e.span),
            Ok(None) => {
                if let ExprKind::Call { args: a, .. } = &mut e.kind {
                    *a = args;
                }
            }
            Err(()) if is_ident => {}
            Err(()) => e.kind = ExprKind::Error,
        }
    }
}

/// How often each parameter of `m` appears in its body.
fn param_uses(m: &Macro) -> Vec<u64> {
    struct Uses<'a> {
        m: &'a Macro,
        n: Vec<u64>,
    }
    impl Uses<'_> {
        fn count(&mut self, kind: MacroParamKind, name: &str) {
            if let Some(i) = self
                .m
                .params
                .iter()
                .position(|p| p.kind == kind && p.name == name)
            {
                self.n[i] += 1;
            }
        }
    }
    impl VisitMut for Uses<'_> {
        fn visit_expr(&mut self, e: &mut Expr) {
            if let ExprKind::Ident(name) = &e.kind {
                self.count(MacroParamKind::Expr, &name.clone());
            }
            walk_expr(self, e);
        }
        fn visit_type(&mut self, t: &mut TypeName) {
            self.count(MacroParamKind::Expr, &t.base.clone());
            walk_type(self, t);
        }
    }
    let mut u = Uses {
        m,
        n: vec![0; m.params.len()],
    };
    u.visit_block(&mut m.body.clone());
    // Variables and maps are renamed, not copied.
    u.n.iter()
        .zip(&m.params)
        .map(|(n, p)| {
            if p.kind == MacroParamKind::Expr {
                *n
            } else {
                1
            }
        })
        .collect()
}

/// Counts expression nodes (the copy budget).
fn count_expr(e: &Expr) -> u64 {
    let mut n = Counter(0);
    n.visit_expr(&mut e.clone());
    n.0
}

fn count_nodes(b: &Block) -> u64 {
    let mut n = Counter(0);
    n.visit_block(&mut b.clone());
    n.0
}

struct Counter(u64);

impl VisitMut for Counter {
    fn visit_id(&mut self, _id: &mut NodeId) {
        self.0 += 1;
    }
}

/// Gives every node of a copied argument a new id.
struct Renumber<'a> {
    x: &'a mut Expander,
}

impl VisitMut for Renumber<'_> {
    fn visit_id(&mut self, id: &mut NodeId) {
        *id = self.x.fresh_id();
    }
}

/// Turns a copy of a macro body into one expansion: spans moved into the
/// expansion's region, new node ids, parameters replaced by the arguments,
/// the body's own variables renamed.
struct Copy<'a> {
    x: &'a mut Expander,
    m: &'a Macro,
    args: &'a [Expr],
    base: u32,
    /// Appended to the body's own variables (`#m3`).
    tag: String,
}

impl Copy<'_> {
    fn param(&self, kind: MacroParamKind, name: &str) -> Option<&Expr> {
        self.m
            .params
            .iter()
            .zip(self.args)
            .find(|(p, _)| p.kind == kind && p.name == name)
            .map(|(_, a)| a)
    }

    /// The caller's variable for `$name`, or the body's own, renamed.
    fn var_name(&self, name: &str) -> String {
        match self.param(MacroParamKind::Var, name).map(|a| &a.kind) {
            Some(ExprKind::Var(outer)) => outer.clone(),
            _ => format!("{name}{}", self.tag),
        }
    }
}

impl VisitMut for Copy<'_> {
    fn visit_span(&mut self, span: &mut Span) {
        *span = Expansions::into_region(self.base, self.m.span, *span);
    }

    fn visit_id(&mut self, id: &mut NodeId) {
        *id = self.x.fresh_id();
    }

    fn visit_expr(&mut self, e: &mut Expr) {
        match &mut e.kind {
            ExprKind::Ident(name) => {
                if let Some(arg) = self.param(MacroParamKind::Expr, name) {
                    let arg = arg.clone();
                    *e = self.x.fresh_copy(&arg);
                    return;
                }
            }
            ExprKind::Var(name) => *name = self.var_name(name),
            ExprKind::Map { name, .. } => {
                match self.param(MacroParamKind::Map, name).map(|a| &a.kind) {
                    Some(ExprKind::Map { name: outer, .. }) => *name = outer.clone(),
                    _ => {
                        let span = Expansions::into_region(self.base, self.m.span, e.span);
                        self.x
                            .diags
                            .push(diag::map_not_passed_to_macro(span, &self.m.name, name));
                    }
                }
            }
            _ => {}
        }
        walk_expr(self, e);
    }

    fn visit_stmt(&mut self, s: &mut Stmt) {
        match &mut s.kind {
            StmtKind::Let { name, .. } | StmtKind::For { var: name, .. } => {
                *name = self.var_name(name);
            }
            _ => {}
        }
        walk_stmt(self, s);
    }

    fn visit_block(&mut self, b: &mut Block) {
        walk_block(self, b);
    }

    fn visit_type(&mut self, t: &mut TypeName) {
        let arg = (t.of.is_none())
            .then(|| self.param(MacroParamKind::Expr, &t.base))
            .flatten()
            .cloned();
        let Some(arg) = arg else {
            walk_type(self, t);
            // `typeof(T)` is `T`: a parameter replaced inside one collapses.
            if let Some(TypeOrExpr::Type(inner)) = t.of.as_deref() {
                let inner = inner.clone();
                *t = TypeName {
                    pointer_depth: inner.pointer_depth.saturating_add(t.pointer_depth),
                    array_len: t.array_len.or(inner.array_len),
                    span: t.span,
                    ..inner
                };
            }
            return;
        };
        // The body writes a type where a parameter stands: the argument's
        // type (`typeof(uint8)`), or the type of the expression passed.
        let mut span = t.span;
        self.visit_span(&mut span);
        let arg = self.x.fresh_copy(&arg);
        let (pointer_depth, array_len) = (t.pointer_depth, t.array_len);
        *t = match arg.kind {
            ExprKind::Typeof(TypeOrExpr::Type(inner)) => TypeName {
                pointer_depth: inner.pointer_depth.saturating_add(pointer_depth),
                array_len: array_len.or(inner.array_len),
                span,
                ..inner
            },
            ExprKind::Typeof(TypeOrExpr::Expr(e)) => TypeName {
                base: "typeof".into(),
                pointer_depth,
                array_len,
                of: Some(Box::new(TypeOrExpr::Expr(e))),
                span,
            },
            _ => TypeName {
                base: "typeof".into(),
                pointer_depth,
                array_len,
                of: Some(Box::new(TypeOrExpr::Expr(Box::new(arg)))),
                span,
            },
        };
    }
}
