//! `weft -d ast`: an indented tree, one node per line.

use crate::ast::*;
use std::fmt::Write as _;

/// Prints the tree without spans.
pub fn print_ast(program: &Program) -> String {
    Printer {
        out: String::new(),
        spans: false,
    }
    .program(program)
}

/// Prints the tree with each node's byte span, e.g. `Int 1 @4..5`.
pub fn print_ast_with_spans(program: &Program) -> String {
    Printer {
        out: String::new(),
        spans: true,
    }
    .program(program)
}

struct Printer {
    out: String,
    spans: bool,
}

impl Printer {
    fn line(&mut self, depth: usize, text: &str, span: source::Span) {
        let _ = write!(self.out, "{:width$}{text}", "", width = depth * 2);
        if self.spans {
            let _ = write!(self.out, " @{}..{}", span.start, span.end);
        }
        self.out.push('\n');
    }

    fn program(mut self, p: &Program) -> String {
        self.line(0, "Program", p.span);
        for item in &p.items {
            self.item(1, item);
        }
        self.out
    }

    fn item(&mut self, d: usize, item: &Item) {
        match item {
            Item::Shebang(r) => self.line(d, &format!("Shebang {:?}", r.text), r.span),
            Item::Preprocessor(r) => self.line(d, &format!("Preprocessor {:?}", r.text), r.span),
            Item::StructDef(s) => {
                self.line(d, &format!("StructDef {} {:?}", s.keyword, s.name), s.span);
                self.line(d + 1, &format!("{:?}", s.text), s.span);
            }
            Item::Config(c) => {
                self.line(d, "Config", c.span);
                for e in &c.entries {
                    self.line(d + 1, &format!("{} =", e.key), e.span);
                    self.expr(d + 2, &e.value);
                }
            }
            Item::Import(i) => self.line(d, &format!("Import {:?}", i.path), i.span),
            Item::MapDecl(m) => {
                self.line(d, &format!("MapDecl @{} {}", m.name, m.kind), m.span);
                for a in &m.args {
                    self.expr(d + 1, a);
                }
            }
            Item::Macro(m) => {
                let params: Vec<String> = m
                    .params
                    .iter()
                    .map(|p| match p.kind {
                        MacroParamKind::Var => format!("${}", p.name),
                        MacroParamKind::Map => format!("@{}", p.name),
                        MacroParamKind::Expr => p.name.clone(),
                    })
                    .collect();
                self.line(
                    d,
                    &format!("Macro {}({})", m.name, params.join(", ")),
                    m.span,
                );
                self.block(d + 1, &m.body);
            }
            Item::Function(f) => {
                let params: Vec<String> = f
                    .params
                    .iter()
                    .map(|p| format!("${}: {}", p.name, type_str(&p.ty)))
                    .collect();
                let text = format!(
                    "Function {}({}): {}",
                    f.name,
                    params.join(", "),
                    type_str(&f.ret)
                );
                self.line(d, &text, f.span);
                self.block(d + 1, &f.body);
            }
            Item::Probe(p) => {
                self.line(d, "Probe", p.span);
                for ap in &p.attach_points {
                    let text = format!(
                        "AttachPoint {} provider={:?} parts={:?}",
                        ap.raw, ap.provider, ap.parts
                    );
                    self.line(d + 1, &text, ap.span);
                }
                if let Some(pred) = &p.predicate {
                    self.line(d + 1, "Predicate", pred.span);
                    self.expr(d + 2, pred);
                }
                self.block(d + 1, &p.body);
            }
            Item::Stream(st) => {
                self.line(d, &format!("Stream {}", st.name), st.span);
                for stage in &st.stages {
                    let name = stage
                        .name
                        .as_ref()
                        .map(|(n, _)| format!(" {n}"))
                        .unwrap_or_default();
                    self.line(
                        d + 1,
                        &format!("Stage {}{name}", stage.role.as_str()),
                        stage.span,
                    );
                    for ap in &stage.attach_points {
                        let text = format!(
                            "AttachPoint {} provider={:?} parts={:?}",
                            ap.raw, ap.provider, ap.parts
                        );
                        self.line(d + 2, &text, ap.span);
                    }
                    if let Some(pred) = &stage.predicate {
                        self.line(d + 2, "Predicate", pred.span);
                        self.expr(d + 3, pred);
                    }
                    if let Some(key) = &stage.key {
                        let name = key.name.as_ref().map(|(n, _)| format!(" as {n}"));
                        let text = format!("By{}", name.unwrap_or_default());
                        self.line(d + 2, &text, key.expr.span);
                        self.expr(d + 3, &key.expr);
                    }
                    for link in &stage.links {
                        let name = link.name.as_ref().map(|(n, _)| format!(" as {n}"));
                        let text = format!("Link{}", name.unwrap_or_default());
                        self.line(d + 2, &text, link.expr.span);
                        self.expr(d + 3, &link.expr);
                    }
                    if stage.keep_last {
                        self.line(d + 2, "KeepLast", stage.span);
                    }
                    if let Some(body) = &stage.body {
                        self.block(d + 2, body);
                    }
                }
                if let Some(t) = &st.timeout {
                    self.line(d + 1, "Timeout", t.span);
                    self.expr(d + 2, t);
                }
                if let Some(m) = &st.max {
                    self.line(d + 1, "Max", m.span);
                    self.expr(d + 2, m);
                }
                if let Some(s) = &st.sample {
                    self.line(d + 1, "Sample", s.span);
                    self.expr(d + 2, s);
                }
                if let Some(q) = &st.queue {
                    self.line(d + 1, "Queue", q.span);
                    self.expr(d + 2, q);
                }
                if st.incomplete {
                    self.line(d + 1, "Incomplete", st.span);
                }
            }
        }
    }

    fn block(&mut self, d: usize, b: &Block) {
        self.line(d, "Block", b.span);
        for s in &b.stmts {
            self.stmt(d + 1, s);
        }
        if let Some(t) = &b.tail {
            self.line(d + 1, "Value", t.span);
            self.expr(d + 2, t);
        }
    }

    fn stmt(&mut self, d: usize, s: &Stmt) {
        match &s.kind {
            StmtKind::Expr(e) => {
                self.line(d, "ExprStmt", s.span);
                self.expr(d + 1, e);
            }
            StmtKind::Assign { target, op, value } => {
                self.line(d, &format!("Assign {}", op.as_str()), s.span);
                self.expr(d + 1, target);
                self.expr(d + 1, value);
            }
            StmtKind::Discard(e) => {
                self.line(d, "Discard", s.span);
                self.expr(d + 1, e);
            }
            StmtKind::Let {
                name, ty, value, ..
            } => {
                let s_ty = ty.as_ref();
                let ty = ty
                    .as_ref()
                    .map(|t| format!(": {}", type_str(t)))
                    .unwrap_or_default();
                self.line(d, &format!("Let ${name}{ty}"), s.span);
                if let Some(TypeOrExpr::Expr(of)) = s_ty.and_then(|t| t.of.as_deref()) {
                    self.line(d + 1, "Typeof", of.span);
                    self.expr(d + 2, of);
                }
                if let Some(v) = value {
                    self.expr(d + 1, v);
                }
            }
            StmtKind::If {
                cond,
                then,
                else_branch,
            } => {
                self.line(d, "If", s.span);
                self.expr(d + 1, cond);
                self.block(d + 1, then);
                if let Some(e) = else_branch {
                    self.line(d + 1, "Else", e.span);
                    self.stmt(d + 2, e);
                }
            }
            StmtKind::Unroll { count, body } => {
                self.line(d, "Unroll", s.span);
                self.expr(d + 1, count);
                self.block(d + 1, body);
            }
            StmtKind::While { cond, body } => {
                self.line(d, "While", s.span);
                self.expr(d + 1, cond);
                self.block(d + 1, body);
            }
            StmtKind::For {
                var, iter, body, ..
            } => {
                self.line(d, &format!("For ${var}"), s.span);
                match iter {
                    ForIter::Map(m) => self.expr(d + 1, m),
                    ForIter::Range { start, end } => {
                        self.line(d + 1, "Range", start.span.to(end.span));
                        self.expr(d + 2, start);
                        self.expr(d + 2, end);
                    }
                }
                self.block(d + 1, body);
            }
            StmtKind::Break => self.line(d, "Break", s.span),
            StmtKind::Continue => self.line(d, "Continue", s.span),
            StmtKind::Return(v) => {
                self.line(d, "Return", s.span);
                if let Some(v) = v {
                    self.expr(d + 1, v);
                }
            }
            StmtKind::Block(b) => self.block(d, b),
            StmtKind::Import(p) => self.line(d, &format!("Import {p:?}"), s.span),
        }
    }

    fn type_or_expr(&mut self, d: usize, t: &TypeOrExpr) {
        match t {
            TypeOrExpr::Type(t) => self.line(d, &format!("Type {}", type_str(t)), t.span),
            TypeOrExpr::Expr(e) => self.expr(d, e),
        }
    }

    fn expr(&mut self, d: usize, e: &Expr) {
        let sp = e.span;
        match &e.kind {
            ExprKind::Error => self.line(d, "Error", sp),
            ExprKind::Int { value, form } => {
                let form = match form {
                    IntForm::Plain => String::new(),
                    IntForm::CSuffix => " (C suffix)".to_string(),
                    IntForm::Duration(u) => format!(" ({})", u.as_str()),
                    IntForm::Char => " (char)".to_string(),
                };
                self.line(d, &format!("Int {value}{form}"), sp)
            }
            ExprKind::Str(b) => self.line(d, &format!("Str {:?}", String::from_utf8_lossy(b)), sp),
            ExprKind::Bool(b) => self.line(d, &format!("Bool {b}"), sp),
            ExprKind::Ident(n) => self.line(d, &format!("Ident {n}"), sp),
            ExprKind::Var(n) => self.line(d, &format!("Var ${n}"), sp),
            ExprKind::Map { name, keys } => {
                self.line(d, &format!("Map @{name}"), sp);
                for k in keys {
                    self.expr(d + 1, k);
                }
            }
            ExprKind::Positional(n) => self.line(d, &format!("Positional ${n}"), sp),
            ExprKind::PositionalCount => self.line(d, "PositionalCount $#", sp),
            ExprKind::Call {
                name, args, bang, ..
            } => {
                let bang = if *bang { "!" } else { "" };
                self.line(d, &format!("Call {name}{bang}"), sp);
                for a in args {
                    self.expr(d + 1, a);
                }
            }
            ExprKind::Unary { op, expr } => {
                self.line(d, &format!("Unary {}", op.as_str()), sp);
                self.expr(d + 1, expr);
            }
            ExprKind::Binary { op, lhs, rhs } => {
                self.line(d, &format!("Binary {}", op.as_str()), sp);
                self.expr(d + 1, lhs);
                self.expr(d + 1, rhs);
            }
            ExprKind::Ternary { cond, then, else_ } => {
                let label = if then.is_some() {
                    "Ternary"
                } else {
                    "Ternary ?:"
                };
                self.line(d, label, sp);
                self.expr(d + 1, cond);
                if let Some(t) = then {
                    self.expr(d + 1, t);
                }
                self.expr(d + 1, else_);
            }
            ExprKind::IncDec { op, prefix, target } => {
                let op = match op {
                    IncDecOp::Inc => "++",
                    IncDecOp::Dec => "--",
                };
                let fix = if *prefix { "prefix" } else { "postfix" };
                self.line(d, &format!("IncDec {fix} {op}"), sp);
                self.expr(d + 1, target);
            }
            ExprKind::Field { expr, name, arrow } => {
                let op = if *arrow { "->" } else { "." };
                self.line(d, &format!("Field {op}{name}"), sp);
                self.expr(d + 1, expr);
            }
            ExprKind::TupleIndex { expr, index } => {
                self.line(d, &format!("TupleIndex .{index}"), sp);
                self.expr(d + 1, expr);
            }
            ExprKind::Index { expr, index } => {
                self.line(d, "Index", sp);
                self.expr(d + 1, expr);
                self.expr(d + 1, index);
            }
            ExprKind::Cast { ty, expr } => {
                self.line(d, &format!("Cast ({})", type_str(ty)), sp);
                self.expr(d + 1, expr);
            }
            ExprKind::Tuple(elems) => {
                self.line(d, "Tuple", sp);
                for x in elems {
                    self.expr(d + 1, x);
                }
            }
            ExprKind::Record(fields) => {
                self.line(d, "Record", sp);
                for (name, x) in fields {
                    self.line(d + 1, &format!("{name} ="), x.span);
                    self.expr(d + 2, x);
                }
            }
            ExprKind::Sizeof(t) => {
                self.line(d, "Sizeof", sp);
                self.type_or_expr(d + 1, t);
            }
            ExprKind::Typeof(t) => {
                self.line(d, "Typeof", sp);
                self.type_or_expr(d + 1, t);
            }
            ExprKind::Offsetof { ty, fields } => {
                self.line(d, &format!("Offsetof {}", fields.join(".")), sp);
                self.type_or_expr(d + 1, ty);
            }
            ExprKind::Block(b) => self.block(d, b),
            ExprKind::If { cond, then, else_ } => {
                self.line(d, "IfExpr", sp);
                self.expr(d + 1, cond);
                self.block(d + 1, then);
                if let Some(e) = else_ {
                    self.line(d + 1, "Else", e.span);
                    self.expr(d + 2, e);
                }
            }
        }
    }
}

/// `struct task_struct **`, `uint8[4]`.
pub(crate) fn type_str(t: &TypeName) -> String {
    let mut s = match t.of.as_deref() {
        Some(TypeOrExpr::Type(of)) => format!("typeof({})", type_str(of)),
        Some(TypeOrExpr::Expr(_)) => "typeof(expression)".to_string(),
        None => t.base.clone(),
    };
    if t.pointer_depth > 0 {
        s.push(' ');
        s.push_str(&"*".repeat(t.pointer_depth as usize));
    }
    if let Some(n) = t.array_len {
        let _ = write!(s, "[{n}]");
    }
    s
}
