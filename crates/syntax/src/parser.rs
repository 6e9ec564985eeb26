//! Recursive-descent parser with error recovery.
//!
//! The parser pulls tokens from [`crate::lexer`] on demand, so it can switch
//! to raw-text scanning for attach points, preprocessor lines and C
//! definitions. Errors never stop parsing: the failing construct becomes an
//! [`ExprKind::Error`] (or is dropped) and parsing resumes at the next `;`,
//! `}` or item.

use crate::ast::*;
use crate::cpp::{self, Conditionals, Effect, Predefined};
use crate::diagnostics as diag;
use crate::lexer::{Tok, Token, lex_token, skip_trivia, span};
use source::{Diagnostic, Span};

/// Deepest nesting of expressions and blocks before giving up with a diagnostic.
pub const MAX_DEPTH: usize = 128;
/// Stop recording errors after this many; the rest are noise.
const MAX_ERRORS: usize = 100;

/// Names that are never types, so `(pid) - 1` is a subtraction, not a cast.
const BUILTINS: &[&str] = &[
    "args", "ctx", "kstack", "ustack", "nsecs", "elapsed", "pid", "tid", "uid", "gid", "cpu",
    "ncpus", "comm", "retval", "func", "probe", "curtask", "rand", "cgroup", "cpid", "username",
    "jiffies", "numaid", "usermode",
];

fn is_builtin(name: &str) -> bool {
    BUILTINS.contains(&name)
        || name.starts_with("__builtin_")
        || ["arg", "sarg"].iter().any(|p| {
            name.strip_prefix(p)
                .is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
        })
}

#[derive(Clone)]
struct State {
    tok: Token,
    tok_diags: Vec<Diagnostic>,
    prev_end: usize,
    next_id: u32,
    diag_len: usize,
    last_error_at: Option<u32>,
}

pub(crate) struct Parser<'a> {
    text: &'a str,
    src: &'a [u8],
    base: u32,
    tok: Token,
    tok_diags: Vec<Diagnostic>,
    prev_end: usize,
    next_id: u32,
    diags: Vec<Diagnostic>,
    last_error_at: Option<u32>,
    depth: usize,
    too_deep: bool,
    /// Inside a predicate at bracket depth 0: `/` ends the expression.
    no_slash: bool,
    /// In an unparenthesised `if` condition: `{` starts the body, not a block expression.
    no_brace: bool,
    /// The preprocessor's `#if` groups: lines of a false group are skipped.
    cpp: Conditionals<'a>,
}

impl<'a> Parser<'a> {
    pub(crate) fn new(text: &'a str, base: u32, predefined: Predefined<'a>) -> Parser<'a> {
        let mut p = Parser {
            text,
            src: text.as_bytes(),
            base,
            tok: Token {
                tok: Tok::Eof,
                start: 0,
                end: 0,
            },
            tok_diags: Vec::new(),
            prev_end: 0,
            next_id: 0,
            diags: Vec::new(),
            last_error_at: None,
            depth: 0,
            too_deep: false,
            no_slash: false,
            no_brace: false,
            cpp: Conditionals::new(predefined),
        };
        p.relex(0);
        p
    }

    /// The parser with node ids from `first` on (an imported file's nodes
    /// follow those of the files parsed before it).
    pub(crate) fn starting_at(mut self, first: u32) -> Parser<'a> {
        self.next_id = first;
        self
    }

    // ---- token plumbing -------------------------------------------------

    /// Makes the token at (or after trivia from) `pos` current.
    fn relex(&mut self, pos: usize) {
        let (p, comment) = skip_trivia(self.src, pos, self.base);
        let (tok, mut diags) = lex_token(self.src, p, self.base);
        if let Some(d) = comment {
            diags.insert(0, d);
        }
        self.tok = tok;
        self.tok_diags = diags;
    }

    fn bump(&mut self) {
        for d in std::mem::take(&mut self.tok_diags) {
            self.error(d);
        }
        self.prev_end = self.tok.end;
        if self.tok.tok != Tok::Eof {
            self.relex(self.tok.end);
        }
    }

    fn at(&self, tok: &Tok) -> bool {
        &self.tok.tok == tok
    }

    fn eat(&mut self, tok: &Tok) -> bool {
        let hit = self.at(tok);
        if hit {
            self.bump();
        }
        hit
    }

    fn tok_text(&self) -> &'a str {
        &self.text[self.tok.start..self.tok.end]
    }

    fn at_ident(&self, word: &str) -> bool {
        self.tok.tok == Tok::Ident && self.tok_text() == word
    }

    /// The token `n` places after the current one (no diagnostics reported).
    fn peek_nth(&self, n: usize) -> Token {
        let mut t = self.tok.clone();
        for _ in 0..n {
            if t.tok == Tok::Eof {
                break;
            }
            let (p, _) = skip_trivia(self.src, t.end, self.base);
            t = lex_token(self.src, p, self.base).0;
        }
        t
    }

    fn tok_span(&self) -> Span {
        span(self.base, self.tok.start, self.tok.end)
    }

    fn span_from(&self, start: usize) -> Span {
        span(self.base, start, self.prev_end.max(start))
    }

    fn found(&self) -> String {
        match &self.tok.tok {
            Tok::Ident => format!("`{}`", self.tok_text()),
            Tok::Eof => "end of file".to_string(),
            t => t.describe().to_string(),
        }
    }

    fn save(&self) -> State {
        State {
            tok: self.tok.clone(),
            tok_diags: self.tok_diags.clone(),
            prev_end: self.prev_end,
            next_id: self.next_id,
            diag_len: self.diags.len(),
            last_error_at: self.last_error_at,
        }
    }

    fn restore(&mut self, s: State) {
        self.tok = s.tok;
        self.tok_diags = s.tok_diags;
        self.prev_end = s.prev_end;
        self.next_id = s.next_id;
        self.diags.truncate(s.diag_len);
        self.last_error_at = s.last_error_at;
    }

    fn error(&mut self, d: Diagnostic) {
        let at = d.primary_span().map(|s| s.start);
        // After the nesting limit the rest of the input was skipped: stay quiet.
        if self.too_deep {
            return;
        }
        if at.is_some() && at == self.last_error_at {
            return;
        }
        self.last_error_at = at;
        if self.diags.iter().filter(|d| d.is_error()).count() < MAX_ERRORS {
            self.diags.push(d);
        }
    }

    fn expect(&mut self, tok: Tok) -> bool {
        if self.eat(&tok) {
            return true;
        }
        let d = diag::expected(self.tok_span(), tok.describe(), &self.found());
        self.error(d);
        false
    }

    fn expect_close(&mut self, close: Tok, open_start: usize) -> bool {
        if self.eat(&close) {
            return true;
        }
        let ch = match close {
            Tok::RParen => ')',
            Tok::RBracket => ']',
            _ => '}',
        };
        let open = span(self.base, open_start, open_start + 1);
        let d = diag::unclosed_delimiter(self.tok_span(), open, ch, &self.found());
        self.error(d);
        false
    }

    fn expect_ident(&mut self, what: &str) -> Option<(String, Span)> {
        if self.tok.tok == Tok::Ident {
            let r = (self.tok_text().to_string(), self.tok_span());
            self.bump();
            return Some(r);
        }
        let d = diag::expected(self.tok_span(), what, &self.found());
        self.error(d);
        None
    }

    fn mk(&mut self, kind: ExprKind, span: Span) -> Expr {
        let id = self.new_id();
        Expr { id, kind, span }
    }

    fn new_id(&mut self) -> NodeId {
        let id = NodeId(self.next_id);
        self.next_id += 1;
        id
    }

    fn error_expr(&mut self) -> Expr {
        let s = span(self.base, self.tok.start, self.tok.start);
        self.mk(ExprKind::Error, s)
    }

    /// Enters one nesting level; false (with one diagnostic, and the rest of
    /// the input skipped) when the limit is exceeded.
    fn enter(&mut self) -> bool {
        if self.too_deep {
            return false;
        }
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            self.depth -= 1;
            let d = diag::nesting_too_deep(self.tok_span(), MAX_DEPTH);
            self.error(d);
            self.too_deep = true;
            self.prev_end = self.src.len();
            self.relex(self.src.len());
            return false;
        }
        true
    }

    fn leave(&mut self) {
        self.depth -= 1;
    }

    /// Skips to just after the next `;` or to the next `}` at bracket depth 0,
    /// or to the first token on a later line than `line_of`.
    fn recover_stmt(&mut self, line_of: usize) {
        let mut depth = 0usize;
        loop {
            match self.tok.tok {
                Tok::Eof => return,
                Tok::Semi if depth == 0 => {
                    self.bump();
                    return;
                }
                Tok::RBrace if depth == 0 => return,
                Tok::LBrace | Tok::LParen | Tok::LBracket => depth += 1,
                Tok::RBrace | Tok::RParen | Tok::RBracket => depth = depth.saturating_sub(1),
                _ => {}
            }
            if depth == 0 && self.text[line_of.min(self.tok.start)..self.tok.start].contains('\n') {
                return;
            }
            self.bump();
        }
    }

    // ---- items ------------------------------------------------------------

    pub(crate) fn program(mut self) -> (Program, Vec<Diagnostic>) {
        let mut items = Vec::new();
        while self.tok.tok != Tok::Eof {
            let before = self.tok.start;
            if let Some(item) = self.item() {
                items.push(item);
            }
            if self.tok.start == before && self.tok.tok != Tok::Eof {
                self.bump();
            }
        }
        self.bump(); // report diagnostics attached to EOF (unterminated comment)
        let open: Vec<Span> = self.cpp.unterminated().collect();
        for at in open {
            self.error(diag::unterminated_conditional(at));
        }
        let program = Program {
            items,
            node_count: self.next_id,
            span: span(self.base, 0, self.src.len()),
            expansions: source::Expansions::default(),
        };
        (program, self.diags)
    }

    fn item(&mut self) -> Option<Item> {
        let start = self.tok.start;
        let next = self.peek_nth(1).tok;
        match &self.tok.tok {
            Tok::Hash => self.raw_line(),
            Tok::Semi => {
                self.bump();
                None
            }
            Tok::Ident => match self.tok_text() {
                "config" if next == Tok::Eq => self.config().map(Item::Config),
                "import" if matches!(next, Tok::Str(_)) => {
                    self.bump();
                    let path = self.string_lit();
                    self.eat(&Tok::Semi);
                    Some(Item::Import(Import {
                        path,
                        span: self.span_from(start),
                    }))
                }
                "let" => self.map_decl(),
                "stream" if next == Tok::Ident => self.stream().map(Item::Stream),
                "macro" if next == Tok::Ident => self.macro_def().map(Item::Macro),
                "fn" if next == Tok::Ident => self.function().map(Item::Function),
                "struct" | "union" | "enum" if matches!(next, Tok::Ident | Tok::LBrace) => {
                    Some(self.struct_def())
                }
                _ => self.probe().map(Item::Probe),
            },
            Tok::RBrace | Tok::LBrace | Tok::Slash => {
                let d = diag::attach_point_expected(self.tok_span(), &self.found());
                self.error(d);
                self.bump();
                None
            }
            _ => self.probe().map(Item::Probe),
        }
    }

    fn string_lit(&mut self) -> String {
        match &self.tok.tok {
            Tok::Str(bytes) => {
                let s = String::from_utf8_lossy(bytes).into_owned();
                self.bump();
                s
            }
            _ => {
                let d = diag::expected(self.tok_span(), "string", &self.found());
                self.error(d);
                String::new()
            }
        }
    }

    /// `#!...` shebang or a preprocessor line (with `\` continuations):
    /// `#include`/`#define` lines are kept as items; conditionals are
    /// applied here, skipping the lines of a false group.
    fn raw_line(&mut self) -> Option<Item> {
        let start = self.tok.start;
        let end = self.line_end(start);
        let text = self.text[start..end].trim_end().to_string();
        let sp = span(self.base, start, start + text.len());
        self.prev_end = end;
        self.relex(end);
        let raw = RawText { text, span: sp };
        if start == 0 && raw.text.starts_with("#!") {
            return Some(Item::Shebang(raw));
        }
        match self.cpp.directive(&raw.text, sp) {
            Ok(Effect::Keep) => Some(Item::Preprocessor(raw)),
            Ok(Effect::Consumed) => {
                if !self.cpp.active() {
                    self.skip_false_group(end);
                }
                None
            }
            Err(d) => {
                self.error(d);
                None
            }
        }
    }

    /// Where the line starting at `start` ends, following `\` continuations.
    fn line_end(&self, start: usize) -> usize {
        let mut end = start;
        loop {
            let nl = self.text[end..]
                .find('\n')
                .map_or(self.src.len(), |i| end + i);
            end = nl;
            if nl < self.src.len() && self.text[..nl].trim_end_matches('\r').ends_with('\\') {
                end = nl + 1;
                continue;
            }
            return end;
        }
    }

    /// Skips whole lines from `pos` until a directive makes lines active again
    /// (or the script ends), as cpp drops a false group unread.
    fn skip_false_group(&mut self, mut pos: usize) {
        while pos < self.src.len() && !self.cpp.active() {
            let start = pos + usize::from(self.src[pos] == b'\n');
            let end = self.line_end(start);
            let line = &self.text[start..end];
            if let Some((name, _)) = cpp::split_directive(line)
                && cpp::is_conditional(name)
            {
                let trimmed = line.trim();
                let at = start + (line.len() - line.trim_start().len());
                let sp = span(self.base, at, at + trimmed.len());
                if let Err(d) = self.cpp.directive(trimmed, sp) {
                    self.error(d);
                }
            }
            pos = end;
        }
        self.prev_end = pos;
        self.relex(pos);
    }

    fn struct_def(&mut self) -> Item {
        let start = self.tok.start;
        let keyword = self.tok_text().to_string();
        let next = self.peek_nth(1);
        let name = if next.tok == Tok::Ident {
            self.text[next.start..next.end].to_string()
        } else {
            String::new()
        };
        let mut depth = 0usize;
        let mut end = None;
        let mut i = start;
        while i < self.src.len() {
            match self.src[i] {
                b'{' => depth += 1,
                b'}' => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        end = Some(i + 1);
                        break;
                    }
                }
                b';' if depth == 0 => {
                    end = Some(i);
                    break;
                }
                _ => {}
            }
            i += 1;
        }
        let mut end = end.unwrap_or_else(|| {
            let d = diag::unterminated_struct(span(self.base, start, start + keyword.len()));
            self.error(d);
            self.src.len()
        });
        // `__attribute__((packed))` after the body, as often as written,
        // comments and spaces around (the C reader applies them).
        loop {
            let at = skip_c_space(self.text, end);
            if !self.text[at..].starts_with("__attribute__") {
                break;
            }
            let open = skip_c_space(self.text, at + "__attribute__".len());
            match balanced_parens(self.text, open) {
                Some(close) => end = close,
                None => break,
            }
        }
        // Optional trailing `;` (possibly after whitespace).
        let after = end + self.text[end..].len() - self.text[end..].trim_start().len();
        if self.src.get(after) == Some(&b';') {
            end = after + 1;
        }
        self.prev_end = end;
        self.relex(end);
        Item::StructDef(StructDef {
            keyword,
            name,
            text: self.text[start..end].to_string(),
            span: span(self.base, start, end),
        })
    }

    fn config(&mut self) -> Option<Config> {
        let start = self.tok.start;
        self.bump(); // config
        self.bump(); // =
        let open = self.tok.start;
        if !self.expect(Tok::LBrace) {
            self.recover_stmt(start);
            return None;
        }
        let mut entries = Vec::new();
        while !matches!(self.tok.tok, Tok::RBrace | Tok::Eof) {
            let before = self.tok.start;
            if self.eat(&Tok::Semi) || self.eat(&Tok::Comma) {
                continue;
            }
            let entry_start = self.tok.start;
            if let Some((key, key_span)) = self.expect_ident("config key")
                && self.expect(Tok::Eq)
            {
                let value = self.expr();
                entries.push(ConfigEntry {
                    key,
                    key_span,
                    value,
                    span: self.span_from(entry_start),
                });
            } else {
                self.recover_stmt(before);
            }
            if self.tok.start == before {
                self.bump();
            }
        }
        self.expect_close(Tok::RBrace, open);
        self.eat(&Tok::Semi);
        Some(Config {
            entries,
            span: self.span_from(start),
        })
    }

    fn map_decl(&mut self) -> Option<Item> {
        let start = self.tok.start;
        self.bump(); // let
        if self.tok.tok != Tok::Map {
            let d = diag::top_level_let(span(self.base, start, self.tok.end));
            self.error(d);
            self.recover_stmt(start);
            return None;
        }
        let name = self.tok_text()[1..].to_string();
        self.bump();
        if !self.expect(Tok::Eq) {
            self.recover_stmt(start);
            return None;
        }
        let (kind, _) = self.expect_ident("map kind such as `hash` or `lruhash`")?;
        let open = self.tok.start;
        let mut args = Vec::new();
        if self.expect(Tok::LParen) {
            args = self.expr_list(Tok::RParen);
            self.expect_close(Tok::RParen, open);
        }
        self.eat(&Tok::Semi);
        Some(Item::MapDecl(MapDecl {
            name,
            kind,
            args,
            span: self.span_from(start),
        }))
    }

    fn macro_def(&mut self) -> Option<Macro> {
        let start = self.tok.start;
        self.bump(); // macro
        let (name, name_span) = self.expect_ident("macro name")?;
        let mut params = Vec::new();
        if self.at(&Tok::LParen) {
            let open = self.tok.start;
            self.bump();
            while !matches!(self.tok.tok, Tok::RParen | Tok::Eof) {
                let text = self.tok_text();
                let kind = match self.tok.tok {
                    Tok::Var => MacroParamKind::Var,
                    Tok::Map => MacroParamKind::Map,
                    Tok::Ident => MacroParamKind::Expr,
                    _ => {
                        let d = diag::expected(self.tok_span(), "macro parameter", &self.found());
                        self.error(d);
                        break;
                    }
                };
                let name = match kind {
                    MacroParamKind::Expr => text.to_string(),
                    _ => text[1..].to_string(),
                };
                params.push(MacroParam {
                    kind,
                    name,
                    span: self.tok_span(),
                });
                self.bump();
                if !self.eat(&Tok::Comma) {
                    break;
                }
            }
            self.expect_close(Tok::RParen, open);
        }
        let body = self.block(true);
        Some(Macro {
            name,
            name_span,
            params,
            body,
            span: self.span_from(start),
        })
    }

    fn function(&mut self) -> Option<Function> {
        let start = self.tok.start;
        self.bump(); // fn
        let (name, name_span) = self.expect_ident("function name")?;
        let open = self.tok.start;
        let mut params = Vec::new();
        if self.expect(Tok::LParen) {
            while self.tok.tok == Tok::Var {
                let p_start = self.tok.start;
                let pname = self.tok_text()[1..].to_string();
                self.bump();
                self.expect(Tok::Colon);
                let ty = self.type_name_or_error();
                params.push(Param {
                    name: pname,
                    ty,
                    span: self.span_from(p_start),
                });
                if !self.eat(&Tok::Comma) {
                    break;
                }
            }
            self.expect_close(Tok::RParen, open);
        }
        self.expect(Tok::Colon);
        let ret = self.type_name_or_error();
        let body = self.block(false);
        Some(Function {
            name,
            name_span,
            params,
            ret,
            body,
            span: self.span_from(start),
        })
    }

    fn probe(&mut self) -> Option<Probe> {
        let start = self.tok.start;
        let mut attach_points = Vec::new();
        attach_points.push(self.attach_point()?);
        loop {
            if self.eat(&Tok::Comma) {
                if matches!(self.tok.tok, Tok::LBrace | Tok::Slash) {
                    break; // trailing comma
                }
                match self.attach_point() {
                    Some(ap) => attach_points.push(ap),
                    None => break,
                }
            } else if self.tok.tok == Tok::Ident && self.newline_before_tok() {
                // Newline-separated attach point list.
                match self.attach_point() {
                    Some(ap) => attach_points.push(ap),
                    None => break,
                }
            } else {
                break;
            }
        }
        let predicate = self.predicate();
        if !self.at(&Tok::LBrace) {
            let d = diag::missing_probe_block(self.tok_span(), &self.found());
            self.error(d);
            // Skip to the end of what was probably meant as the body.
            while !matches!(self.tok.tok, Tok::RBrace | Tok::Eof) {
                self.bump();
            }
            self.bump();
            return None;
        }
        let body = self.block(false);
        Some(Probe {
            attach_points,
            predicate,
            body,
            span: self.span_from(start),
        })
    }

    /// `stream NAME { clauses }` (see [`Stream`]).
    fn stream(&mut self) -> Option<Stream> {
        let start = self.tok.start;
        self.bump(); // `stream`
        let (name, name_span) = self.expect_ident("a stream name")?;
        let open = self.tok.start;
        if !self.expect(Tok::LBrace) {
            return None;
        }
        let mut stream = Stream {
            name,
            name_span,
            stages: Vec::new(),
            timeout: None,
            max: None,
            sample: None,
            queue: None,
            incomplete: false,
            span: Span::DUMMY,
        };
        loop {
            while self.eat(&Tok::Semi) {}
            if self.at(&Tok::RBrace) || self.at(&Tok::Eof) {
                break;
            }
            let clause_start = self.tok.start;
            let word = if self.tok.tok == Tok::Ident {
                self.tok_text()
            } else {
                ""
            };
            match word {
                "begin" | "stage" | "end" => {
                    let role = match word {
                        "begin" => StageRole::Begin,
                        "stage" => StageRole::Stage,
                        _ => StageRole::End,
                    };
                    self.bump();
                    match self.stream_stage(role, clause_start) {
                        Some(stage) => stream.stages.push(stage),
                        None => self.skip_stream_clause(),
                    }
                }
                "timeout" => {
                    self.bump();
                    stream.timeout = Some(self.stream_value());
                }
                "max" => {
                    self.bump();
                    stream.max = Some(self.stream_value());
                }
                "sample" => {
                    self.bump();
                    stream.sample = Some(self.stream_value());
                }
                "queue" => {
                    self.bump();
                    stream.queue = Some(self.stream_value());
                }
                "incomplete" => {
                    self.bump();
                    stream.incomplete = true;
                }
                _ => {
                    let d = diag::stream_clause_expected(self.tok_span(), &self.found());
                    self.error(d);
                    self.skip_stream_clause();
                }
            }
        }
        self.expect_close(Tok::RBrace, open);
        stream.span = self.span_from(start);
        Some(stream)
    }

    /// A `timeout`/`max`/`sample`/`queue` value: an expression without a block after it.
    fn stream_value(&mut self) -> Expr {
        let saved = self.no_brace;
        self.no_brace = true;
        let e = self.expr();
        self.no_brace = saved;
        e
    }

    /// One `begin`/`stage`/`end` clause after its keyword.
    fn stream_stage(&mut self, role: StageRole, start: usize) -> Option<StreamStage> {
        // An optional name: an identifier not followed by `:` (which would make it a provider).
        let name = if self.tok.tok == Tok::Ident && self.peek_nth(1).tok == Tok::Ident {
            let n = (self.tok_text().to_string(), self.tok_span());
            self.bump();
            Some(n)
        } else {
            None
        };
        let mut attach_points = vec![self.attach_point()?];
        while self.eat(&Tok::Comma) {
            attach_points.push(self.attach_point()?);
        }
        let predicate = self.predicate();
        let mut key = None;
        let mut links = Vec::new();
        let mut keep_last = false;
        loop {
            if self.at_ident("by") && key.is_none() {
                self.bump();
                key = Some(self.stream_key()?);
            } else if self.at_ident("link") {
                self.bump();
                links.push(self.stream_key()?);
            } else if self.at_ident("keep") {
                self.bump();
                if self.at_ident("last") {
                    keep_last = true;
                } else if !self.at_ident("first") {
                    let d = diag::stream_keep_expected(self.tok_span(), &self.found());
                    self.error(d);
                    return None;
                }
                self.bump();
            } else {
                break;
            }
        }
        let body = if self.at(&Tok::LBrace) {
            Some(self.block(false))
        } else {
            None
        };
        Some(StreamStage {
            role,
            name,
            attach_points,
            predicate,
            key,
            links,
            keep_last,
            body,
            span: self.span_from(start),
        })
    }

    /// A `by` or `link` key: an expression, then `as NAME` optionally.
    fn stream_key(&mut self) -> Option<StreamKey> {
        let start = self.tok.start;
        let expr = self.stream_value();
        let text = compact(&self.text[start..self.prev_end.max(start)]);
        let name = if self.at_ident("as") {
            self.bump();
            Some(self.expect_ident("a key name after `as`")?)
        } else {
            None
        };
        Some(StreamKey { expr, name, text })
    }

    /// Skips to the start of the next clause (a clause keyword at the start of
    /// a line, `;`, or the stream's closing brace).
    fn skip_stream_clause(&mut self) {
        let mut depth = 0usize;
        loop {
            match self.tok.tok {
                Tok::Eof => return,
                Tok::LBrace => depth += 1,
                Tok::RBrace if depth == 0 => return,
                Tok::RBrace => {
                    depth -= 1;
                    if depth == 0 {
                        self.bump();
                        return;
                    }
                }
                Tok::Semi if depth == 0 => {
                    self.bump();
                    return;
                }
                _ => {}
            }
            self.bump();
            if depth == 0
                && self.newline_before_tok()
                && matches!(
                    self.tok_text(),
                    "begin"
                        | "stage"
                        | "end"
                        | "timeout"
                        | "max"
                        | "sample"
                        | "queue"
                        | "incomplete"
                )
            {
                return;
            }
        }
    }

    fn newline_before_tok(&self) -> bool {
        self.text[self.prev_end..self.tok.start].contains('\n')
    }

    /// Scans one attach point as raw text from the current token.
    fn attach_point(&mut self) -> Option<AttachPoint> {
        let start = self.tok.start;
        let src = self.src;
        let mut i = start;
        let mut seen_colon = false;
        while i < src.len() {
            let c = src[i];
            let next = src.get(i + 1).copied().unwrap_or(0);
            // A control byte (a NUL among them) is never part of a probe's
            // name: it ends it, and the lexer reports it.
            if c.is_ascii_whitespace()
                || c.is_ascii_control()
                || matches!(c, b'{' | b',' | b';' | b'}')
            {
                break;
            }
            if c == b'/' && (!seen_colon || next == b'/' || next == b'*') {
                break;
            }
            if c == b':' {
                seen_colon = true;
            }
            if c == b'"' {
                i += 1;
                while i < src.len() && src[i] != b'"' && src[i] != b'\n' {
                    i += if src[i] == b'\\' { 2 } else { 1 };
                }
                if src.get(i) == Some(&b'"') {
                    i += 1;
                } else {
                    let d = diag::unterminated_string(span(self.base, start, i.min(src.len())));
                    self.error(d);
                }
                continue;
            }
            i += 1;
        }
        let i = i.min(src.len());
        if i == start || !(src[start].is_ascii_alphanumeric() || b"_$\"".contains(&src[start])) {
            let d = diag::attach_point_expected(self.tok_span(), &self.found());
            self.error(d);
            return None;
        }
        let raw = self.text[start..i].to_string();
        let mut pieces = split_attach_point(&raw).into_iter();
        let provider = pieces.next().unwrap_or_default();
        self.prev_end = i;
        self.relex(i);
        Some(AttachPoint {
            provider,
            parts: pieces.collect(),
            raw,
            span: span(self.base, start, i),
        })
    }

    fn predicate(&mut self) -> Option<Expr> {
        if !self.at(&Tok::Slash) {
            return None;
        }
        let open = span(self.base, self.tok.start, self.tok.end);
        self.bump();
        let saved = (self.no_slash, self.no_brace);
        self.no_slash = true;
        self.no_brace = false;
        let mut e = self.expr();
        if self.at(&Tok::Eq) {
            let d = diag::assign_in_predicate(self.tok_span());
            self.error(d);
            self.bump();
            e = self.expr();
        }
        (self.no_slash, self.no_brace) = saved;
        if !self.eat(&Tok::Slash) {
            let d = diag::unterminated_predicate(self.tok_span(), open, &self.found());
            self.error(d);
        }
        Some(e)
    }

    // ---- blocks and statements -------------------------------------------

    /// `{ stmts }`. With `allow_tail`, a final expression without `;` becomes the block's value.
    fn block(&mut self, allow_tail: bool) -> Block {
        let start = self.tok.start;
        if !self.at(&Tok::LBrace) {
            let d = diag::expected(self.tok_span(), "`{`", &self.found());
            self.error(d);
            return Block {
                stmts: Vec::new(),
                tail: None,
                span: span(self.base, start, start),
            };
        }
        if !self.enter() {
            return Block {
                stmts: Vec::new(),
                tail: None,
                span: span(self.base, start, start),
            };
        }
        let saved = (self.no_slash, self.no_brace);
        (self.no_slash, self.no_brace) = (false, false);
        self.bump();
        let mut stmts = Vec::new();
        let mut tail = None;
        while !matches!(self.tok.tok, Tok::RBrace | Tok::Eof) {
            let before = self.tok.start;
            if self.eat(&Tok::Semi) {
                continue;
            }
            let (stmt, needs_semi) = self.stmt();
            if self.at(&Tok::Semi) {
                self.bump();
                stmts.push(stmt);
            } else if self.at(&Tok::RBrace) || !needs_semi {
                match stmt.kind {
                    StmtKind::Expr(e) if allow_tail && self.at(&Tok::RBrace) => {
                        tail = Some(Box::new(e));
                    }
                    // `{ ...; if c { a } else { b } }`: the `if` is the block's value.
                    StmtKind::If {
                        ref then,
                        else_branch: Some(_),
                        ..
                    } if allow_tail && self.at(&Tok::RBrace) && then.tail.is_some() => {
                        tail = Some(Box::new(self.if_value(stmt.kind, stmt.span)));
                    }
                    kind => stmts.push(Stmt { kind, ..stmt }),
                }
            } else if let Tok::Unknown(_) = self.tok.tok {
                // Reports the unexpected character itself.
                stmts.push(stmt);
                self.bump();
            } else {
                if self.tok.tok != Tok::Eof {
                    let d = diag::expected_semicolon(self.tok_span(), stmt.span, &self.found());
                    self.error(d);
                }
                stmts.push(stmt);
                self.recover_stmt(self.prev_end);
            }
            if self.tok.start == before && self.tok.tok != Tok::Eof {
                self.bump();
            }
        }
        self.expect_close(Tok::RBrace, start);
        (self.no_slash, self.no_brace) = saved;
        self.leave();
        Block {
            stmts,
            tail,
            span: self.span_from(start),
        }
    }

    /// One statement; the flag says whether it must be followed by `;` (or `}`).
    fn stmt(&mut self) -> (Stmt, bool) {
        let start = self.tok.start;
        let (kind, needs_semi) = match self.tok.tok {
            Tok::LBrace => (StmtKind::Block(self.block(false)), false),
            Tok::Ident => match self.tok_text() {
                "let" => (self.let_stmt(), true),
                "if" => (self.if_stmt(), false),
                "unroll" | "while" => {
                    let is_unroll = self.tok_text() == "unroll";
                    self.bump();
                    let cond = self.paren_expr();
                    let body = self.block(false);
                    if is_unroll {
                        (StmtKind::Unroll { count: cond, body }, false)
                    } else {
                        (StmtKind::While { cond, body }, false)
                    }
                }
                "for" => (self.for_stmt(), false),
                "break" => {
                    self.bump();
                    (StmtKind::Break, true)
                }
                "continue" => {
                    self.bump();
                    (StmtKind::Continue, true)
                }
                "return" => {
                    self.bump();
                    let value = if matches!(self.tok.tok, Tok::Semi | Tok::RBrace | Tok::Eof) {
                        None
                    } else {
                        Some(self.expr())
                    };
                    (StmtKind::Return(value), true)
                }
                "import" if matches!(self.peek_nth(1).tok, Tok::Str(_)) => {
                    self.bump();
                    (StmtKind::Import(self.string_lit()), true)
                }
                "_" if self.peek_nth(1).tok == Tok::Eq => {
                    self.bump();
                    self.bump();
                    (StmtKind::Discard(self.expr()), true)
                }
                _ => (self.expr_or_assign(), true),
            },
            _ => (self.expr_or_assign(), true),
        };
        let stmt = Stmt {
            kind,
            span: self.span_from(start),
        };
        (stmt, needs_semi)
    }

    fn expr_or_assign(&mut self) -> StmtKind {
        let target = self.expr();
        let op = match self.tok.tok {
            Tok::Eq => AssignOp::Assign,
            Tok::PlusEq => AssignOp::Compound(BinaryOp::Add),
            Tok::MinusEq => AssignOp::Compound(BinaryOp::Sub),
            Tok::StarEq => AssignOp::Compound(BinaryOp::Mul),
            Tok::SlashEq => AssignOp::Compound(BinaryOp::Div),
            Tok::PercentEq => AssignOp::Compound(BinaryOp::Mod),
            Tok::AmpEq => AssignOp::Compound(BinaryOp::BitAnd),
            Tok::PipeEq => AssignOp::Compound(BinaryOp::BitOr),
            Tok::CaretEq => AssignOp::Compound(BinaryOp::BitXor),
            Tok::ShlEq => AssignOp::Compound(BinaryOp::Shl),
            Tok::ShrEq => AssignOp::Compound(BinaryOp::Shr),
            _ => return StmtKind::Expr(target),
        };
        if !matches!(
            target.kind,
            ExprKind::Var(_) | ExprKind::Map { .. } | ExprKind::Error
        ) {
            self.error(diag::invalid_assign_target(target.span));
        }
        self.bump();
        let value = self.expr();
        StmtKind::Assign { target, op, value }
    }

    fn let_stmt(&mut self) -> StmtKind {
        self.bump(); // let
        let (name, name_span) = if self.tok.tok == Tok::Var {
            let r = (self.tok_text()[1..].to_string(), self.tok_span());
            self.bump();
            r
        } else {
            let d = diag::let_needs_variable(self.tok_span(), &self.found());
            self.error(d);
            (String::new(), self.tok_span())
        };
        let ty = if self.eat(&Tok::Colon) {
            Some(self.type_name_or_error())
        } else {
            None
        };
        let value = if self.eat(&Tok::Eq) {
            Some(self.expr())
        } else {
            None
        };
        StmtKind::Let {
            id: self.new_id(),
            name,
            name_span,
            ty,
            value,
        }
    }

    fn if_stmt(&mut self) -> StmtKind {
        self.bump(); // if
        let cond = if self.at(&Tok::LParen) && self.paren_is_whole_condition() {
            self.paren_expr()
        } else {
            let saved = self.no_brace;
            self.no_brace = true;
            let c = self.expr();
            self.no_brace = saved;
            c
        };
        // A block's last expression may be its value: `if` is also an expression.
        let then = self.block(true);
        let else_branch = if self.at_ident("else") {
            self.bump();
            let start = self.tok.start;
            if self.at_ident("if") {
                let kind = self.if_stmt();
                Some(Box::new(Stmt {
                    kind,
                    span: self.span_from(start),
                }))
            } else if self.at(&Tok::LBrace) {
                let b = self.block(true);
                Some(Box::new(Stmt {
                    span: b.span,
                    kind: StmtKind::Block(b),
                }))
            } else {
                let d = diag::else_needs_block(self.tok_span(), &self.found());
                self.error(d);
                None
            }
        } else {
            None
        };
        StmtKind::If {
            cond,
            then,
            else_branch,
        }
    }

    /// An `if` statement as an expression: the value of the branch taken.
    fn if_value(&mut self, kind: StmtKind, span: Span) -> Expr {
        let StmtKind::If {
            cond,
            then,
            else_branch,
        } = kind
        else {
            return self.mk(ExprKind::Error, span);
        };
        let else_ = else_branch.map(|e| {
            let Stmt { kind, span } = *e;
            Box::new(match kind {
                StmtKind::Block(b) => self.mk(ExprKind::Block(Box::new(b)), span),
                kind => self.if_value(kind, span),
            })
        });
        self.mk(
            ExprKind::If {
                cond: Box::new(cond),
                then: Box::new(then),
                else_,
            },
            span,
        )
    }

    /// True when the `(` at the current token closes right before the `{` of the body.
    fn paren_is_whole_condition(&self) -> bool {
        let mut depth = 0usize;
        let mut t = self.tok.clone();
        for _ in 0..100_000 {
            match t.tok {
                Tok::LParen | Tok::LBracket => depth += 1,
                Tok::RParen | Tok::RBracket => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        let (p, _) = skip_trivia(self.src, t.end, self.base);
                        return self.src.get(p) == Some(&b'{');
                    }
                }
                Tok::Eof | Tok::LBrace | Tok::RBrace | Tok::Semi => return false,
                _ => {}
            }
            let (p, _) = skip_trivia(self.src, t.end, self.base);
            t = lex_token(self.src, p, self.base).0;
        }
        false
    }

    /// `( expr )` as used by `if`, `while`, `unroll`.
    fn paren_expr(&mut self) -> Expr {
        let open = self.tok.start;
        if !self.expect(Tok::LParen) {
            return self.error_expr();
        }
        let saved = (self.no_slash, self.no_brace);
        (self.no_slash, self.no_brace) = (false, false);
        let e = self.expr();
        (self.no_slash, self.no_brace) = saved;
        self.expect_close(Tok::RParen, open);
        e
    }

    fn for_stmt(&mut self) -> StmtKind {
        self.bump(); // for
        let open = self.tok.start;
        let has_paren = self.eat(&Tok::LParen);
        let (var, var_span) = if self.tok.tok == Tok::Var {
            let r = (self.tok_text()[1..].to_string(), self.tok_span());
            self.bump();
            r
        } else {
            let d = diag::bad_for_header(self.tok_span(), &self.found());
            self.error(d);
            (String::new(), self.tok_span())
        };
        if !self.eat(&Tok::Colon) {
            let d = diag::bad_for_header(self.tok_span(), &self.found());
            self.error(d);
        }
        let saved = self.no_brace;
        self.no_brace = !has_paren;
        let first = self.expr();
        let iter = if self.eat(&Tok::DotDot) {
            let end = self.expr();
            ForIter::Range { start: first, end }
        } else {
            ForIter::Map(first)
        };
        self.no_brace = saved;
        if has_paren {
            self.expect_close(Tok::RParen, open);
        }
        let body = self.block(false);
        StmtKind::For {
            id: self.new_id(),
            var,
            var_span,
            iter,
            body,
        }
    }

    // ---- types ------------------------------------------------------------

    /// Parses a type without reporting; `None` if the tokens are not a type.
    fn type_name(&mut self) -> Option<TypeName> {
        if self.tok.tok != Tok::Ident {
            return None;
        }
        let start = self.tok.start;
        let mut base = self.tok_text().to_string();
        self.bump();
        let mut of = None;
        if base == "typeof" {
            let open = self.tok.start;
            if !self.eat(&Tok::LParen) {
                return None;
            }
            of = Some(Box::new(self.nested(|p| p.type_or_expr())));
            self.expect_close(Tok::RParen, open);
        }
        if matches!(base.as_str(), "struct" | "union" | "enum") {
            if self.tok.tok != Tok::Ident {
                return None;
            }
            base = format!("{base} {}", self.tok_text());
            self.bump();
        }
        let mut pointer_depth = 0u8;
        let mut array_len = None;
        loop {
            if self.eat(&Tok::Star) {
                pointer_depth = pointer_depth.saturating_add(1);
            } else if self.at(&Tok::LBracket) {
                self.bump();
                match self.tok.tok {
                    Tok::Int(n, _) => {
                        array_len = Some(n);
                        self.bump();
                    }
                    _ => array_len = Some(0),
                }
                if !self.eat(&Tok::RBracket) {
                    return None;
                }
            } else {
                break;
            }
        }
        Some(TypeName {
            base,
            pointer_depth,
            array_len,
            of,
            span: self.span_from(start),
        })
    }

    fn type_name_or_error(&mut self) -> TypeName {
        let start = self.tok.start;
        let saved = self.save();
        if let Some(t) = self.type_name() {
            return t;
        }
        self.restore(saved);
        let d = diag::expected_type(self.tok_span(), &self.found());
        self.error(d);
        TypeName {
            base: String::new(),
            pointer_depth: 0,
            array_len: None,
            of: None,
            span: span(self.base, start, start),
        }
    }

    // ---- expressions ------------------------------------------------------

    pub(crate) fn expr(&mut self) -> Expr {
        if !self.enter() {
            return self.error_expr();
        }
        let e = self.ternary();
        self.leave();
        e
    }

    fn ternary(&mut self) -> Expr {
        let cond = self.binary(1);
        if !self.at(&Tok::Question) {
            return cond;
        }
        self.bump();
        let then = if self.eat(&Tok::Colon) {
            None
        } else {
            let t = self.expr();
            self.expect(Tok::Colon);
            Some(Box::new(t))
        };
        let else_ = self.expr();
        let span = cond.span.to(else_.span);
        self.mk(
            ExprKind::Ternary {
                cond: Box::new(cond),
                then,
                else_: Box::new(else_),
            },
            span,
        )
    }

    fn binop(&self) -> Option<BinaryOp> {
        Some(match self.tok.tok {
            Tok::OrOr => BinaryOp::LogOr,
            Tok::AndAnd => BinaryOp::LogAnd,
            Tok::Pipe => BinaryOp::BitOr,
            Tok::Caret => BinaryOp::BitXor,
            Tok::Amp => BinaryOp::BitAnd,
            Tok::EqEq => BinaryOp::Eq,
            Tok::Ne => BinaryOp::Ne,
            Tok::Lt => BinaryOp::Lt,
            Tok::Le => BinaryOp::Le,
            Tok::Gt => BinaryOp::Gt,
            Tok::Ge => BinaryOp::Ge,
            Tok::Shl => BinaryOp::Shl,
            Tok::Shr => BinaryOp::Shr,
            Tok::Plus => BinaryOp::Add,
            Tok::Minus => BinaryOp::Sub,
            Tok::Star => BinaryOp::Mul,
            Tok::Slash if !self.no_slash => BinaryOp::Div,
            Tok::Percent => BinaryOp::Mod,
            _ => return None,
        })
    }

    /// Precedence climbing; every binary operator is left-associative.
    fn binary(&mut self, min_prec: u8) -> Expr {
        let mut lhs = self.unary();
        while let Some(op) = self.binop() {
            let prec = op.precedence();
            if prec < min_prec {
                break;
            }
            self.bump();
            let rhs = self.binary(prec + 1);
            let span = lhs.span.to(rhs.span);
            lhs = self.mk(
                ExprKind::Binary {
                    op,
                    lhs: Box::new(lhs),
                    rhs: Box::new(rhs),
                },
                span,
            );
        }
        lhs
    }

    fn unary(&mut self) -> Expr {
        let start = self.tok.start;
        let op = match self.tok.tok {
            Tok::Bang => Some(UnaryOp::Not),
            Tok::Tilde => Some(UnaryOp::BitNot),
            Tok::Minus => Some(UnaryOp::Neg),
            Tok::Star => Some(UnaryOp::Deref),
            Tok::Amp => Some(UnaryOp::AddrOf),
            _ => None,
        };
        if let Some(op) = op {
            self.bump();
            if !self.enter() {
                return self.error_expr();
            }
            let operand = self.unary();
            self.leave();
            let span = self.span_from(start);
            return self.mk(
                ExprKind::Unary {
                    op,
                    expr: Box::new(operand),
                },
                span,
            );
        }
        if matches!(self.tok.tok, Tok::PlusPlus | Tok::MinusMinus) {
            let op = if self.at(&Tok::PlusPlus) {
                IncDecOp::Inc
            } else {
                IncDecOp::Dec
            };
            self.bump();
            if !self.enter() {
                return self.error_expr();
            }
            let target = self.unary();
            self.leave();
            if !matches!(
                target.kind,
                ExprKind::Var(_) | ExprKind::Map { .. } | ExprKind::Error
            ) {
                self.error(diag::invalid_incdec_target(target.span));
            }
            let span = self.span_from(start);
            return self.mk(
                ExprKind::IncDec {
                    op,
                    prefix: true,
                    target: Box::new(target),
                },
                span,
            );
        }
        let e = self.primary();
        self.postfix(e)
    }

    fn postfix(&mut self, mut e: Expr) -> Expr {
        let start = self.span_start(&e);
        loop {
            match self.tok.tok {
                Tok::Dot => {
                    self.bump();
                    match self.tok.tok {
                        Tok::Int(n, IntForm::Plain) => {
                            self.bump();
                            let span = self.span_from(start);
                            e = self.mk(
                                ExprKind::TupleIndex {
                                    expr: Box::new(e),
                                    index: n.min(u32::MAX as u64) as u32,
                                },
                                span,
                            );
                        }
                        Tok::Ident => {
                            let name = self.tok_text().to_string();
                            self.bump();
                            let span = self.span_from(start);
                            e = self.mk(
                                ExprKind::Field {
                                    expr: Box::new(e),
                                    name,
                                    arrow: false,
                                },
                                span,
                            );
                        }
                        _ => {
                            let d = diag::expected_field(self.tok_span(), &self.found());
                            self.error(d);
                            return e;
                        }
                    }
                }
                Tok::Arrow => {
                    self.bump();
                    let Some((name, _)) = self.expect_ident("field name") else {
                        return e;
                    };
                    let span = self.span_from(start);
                    e = self.mk(
                        ExprKind::Field {
                            expr: Box::new(e),
                            name,
                            arrow: true,
                        },
                        span,
                    );
                }
                Tok::LBracket => {
                    let open = self.tok.start;
                    self.bump();
                    let index = self.nested(|p| p.expr());
                    self.expect_close(Tok::RBracket, open);
                    let span = self.span_from(start);
                    e = self.mk(
                        ExprKind::Index {
                            expr: Box::new(e),
                            index: Box::new(index),
                        },
                        span,
                    );
                }
                Tok::PlusPlus | Tok::MinusMinus => {
                    let op = if self.at(&Tok::PlusPlus) {
                        IncDecOp::Inc
                    } else {
                        IncDecOp::Dec
                    };
                    if !matches!(
                        e.kind,
                        ExprKind::Var(_) | ExprKind::Map { .. } | ExprKind::Error
                    ) {
                        let d = diag::invalid_incdec_target(e.span);
                        self.error(d);
                    }
                    self.bump();
                    let span = self.span_from(start);
                    e = self.mk(
                        ExprKind::IncDec {
                            op,
                            prefix: false,
                            target: Box::new(e),
                        },
                        span,
                    );
                }
                _ => return e,
            }
        }
    }

    fn span_start(&self, e: &Expr) -> usize {
        (e.span.start - self.base) as usize
    }

    /// Runs `f` inside brackets: `/` divides again and `{` starts block expressions.
    fn nested<T>(&mut self, f: impl FnOnce(&mut Self) -> T) -> T {
        let saved = (self.no_slash, self.no_brace);
        (self.no_slash, self.no_brace) = (false, false);
        let r = f(self);
        (self.no_slash, self.no_brace) = saved;
        r
    }

    /// Comma-separated expressions up to (not including) `close`; trailing comma allowed.
    fn expr_list(&mut self, close: Tok) -> Vec<Expr> {
        let mut out = Vec::new();
        self.nested(|p| {
            while !p.at(&close) && p.tok.tok != Tok::Eof {
                let before = p.tok.start;
                out.push(p.expr());
                if !p.eat(&Tok::Comma) || p.tok.start == before {
                    break;
                }
            }
        });
        out
    }

    fn primary(&mut self) -> Expr {
        let start = self.tok.start;
        let sp = self.tok_span();
        match self.tok.tok.clone() {
            Tok::Int(value, form) => {
                self.bump();
                self.mk(ExprKind::Int { value, form }, sp)
            }
            Tok::Str(bytes) => {
                self.bump();
                self.mk(ExprKind::Str(bytes), sp)
            }
            Tok::Var => {
                let name = self.tok_text()[1..].to_string();
                self.bump();
                self.mk(ExprKind::Var(name), sp)
            }
            Tok::Positional(n) => {
                self.bump();
                self.mk(ExprKind::Positional(n), sp)
            }
            Tok::PositionalCount => {
                self.bump();
                self.mk(ExprKind::PositionalCount, sp)
            }
            Tok::Map => {
                let name = self.tok_text()[1..].to_string();
                self.bump();
                let mut keys = Vec::new();
                if self.at(&Tok::LBracket) && self.tok.start == self.prev_end {
                    let open = self.tok.start;
                    self.bump();
                    keys = self.expr_list(Tok::RBracket);
                    self.expect_close(Tok::RBracket, open);
                }
                let span = self.span_from(start);
                self.mk(ExprKind::Map { name, keys }, span)
            }
            Tok::LParen => self.paren(),
            Tok::LBrace if !self.no_brace => {
                let b = self.block(true);
                let span = b.span;
                self.mk(ExprKind::Block(Box::new(b)), span)
            }
            Tok::Ident if self.tok_text() == "if" => {
                let kind = self.if_stmt();
                let span = self.span_from(start);
                self.if_value(kind, span)
            }
            Tok::Ident => self.ident_expr(),
            Tok::Unknown(_) => {
                let e = self.error_expr();
                self.bump(); // reports the unexpected character
                e
            }
            _ => {
                let d = diag::expected_expression(self.tok_span(), &self.found());
                self.error(d);
                self.error_expr()
            }
        }
    }

    fn ident_expr(&mut self) -> Expr {
        let start = self.tok.start;
        let name = self.tok_text().to_string();
        let name_span = self.tok_span();
        self.bump();
        match name.as_str() {
            "true" | "false" => return self.mk(ExprKind::Bool(name == "true"), name_span),
            "sizeof" | "typeof" | "offsetof" if self.at(&Tok::LParen) => {
                let open = self.tok.start;
                self.bump();
                let kind = self.nested(|p| {
                    let ty = p.type_or_expr();
                    match name.as_str() {
                        "sizeof" => ExprKind::Sizeof(ty),
                        "typeof" => ExprKind::Typeof(ty),
                        _ => {
                            let mut fields = Vec::new();
                            if p.expect(Tok::Comma) {
                                while let Some((f, _)) = p.expect_ident("field name") {
                                    fields.push(f);
                                    if !p.eat(&Tok::Dot) {
                                        break;
                                    }
                                }
                            }
                            ExprKind::Offsetof { ty, fields }
                        }
                    }
                });
                self.expect_close(Tok::RParen, open);
                let span = self.span_from(start);
                return self.mk(kind, span);
            }
            _ => {}
        }
        let bang = self.at(&Tok::Bang) && self.peek_nth(1).tok == Tok::LParen;
        if bang {
            self.bump();
        }
        if self.at(&Tok::LParen) {
            let open = self.tok.start;
            self.bump();
            let args = self.expr_list(Tok::RParen);
            self.expect_close(Tok::RParen, open);
            let span = self.span_from(start);
            return self.mk(
                ExprKind::Call {
                    name,
                    name_span,
                    args,
                    bang,
                },
                span,
            );
        }
        self.mk(ExprKind::Ident(name), name_span)
    }

    /// In `sizeof(..)`/`typeof(..)`/`offsetof(..)`: a type if it parses as
    /// one and is followed by `)` or `,`, otherwise an expression.
    fn type_or_expr(&mut self) -> TypeOrExpr {
        if self.tok.tok == Tok::Ident && !is_builtin(self.tok_text()) {
            let saved = self.save();
            if let Some(t) = self.type_name()
                && matches!(self.tok.tok, Tok::RParen | Tok::Comma)
            {
                return TypeOrExpr::Type(t);
            }
            self.restore(saved);
        }
        TypeOrExpr::Expr(Box::new(self.expr()))
    }

    /// After `(`: unit, record, cast, tuple or grouping.
    fn paren(&mut self) -> Expr {
        let start = self.tok.start;
        self.bump(); // (
        if self.eat(&Tok::RParen) {
            let span = self.span_from(start);
            return self.mk(ExprKind::Tuple(Vec::new()), span);
        }
        // Record: `(name = e, ...)`.
        if self.tok.tok == Tok::Ident
            && self.peek_nth(1).tok == Tok::Eq
            && !is_builtin(self.tok_text())
        {
            let mut fields = Vec::new();
            self.nested(|p| {
                while let Some((name, _)) = p.expect_ident("record field name") {
                    p.expect(Tok::Eq);
                    fields.push((name, p.expr()));
                    if !p.eat(&Tok::Comma) || p.at(&Tok::RParen) {
                        break;
                    }
                }
            });
            self.expect_close(Tok::RParen, start);
            let span = self.span_from(start);
            return self.mk(ExprKind::Record(fields), span);
        }
        // Cast: `(type)` followed by something that starts an expression.
        if self.tok.tok == Tok::Ident && !is_builtin(self.tok_text()) {
            let saved = self.save();
            if let Some(ty) = self.type_name()
                && self.eat(&Tok::RParen)
                && self.starts_expr()
            {
                if !self.enter() {
                    return self.error_expr();
                }
                let operand = self.unary();
                self.leave();
                let span = self.span_from(start);
                return self.mk(
                    ExprKind::Cast {
                        ty,
                        expr: Box::new(operand),
                    },
                    span,
                );
            }
            self.restore(saved);
        }
        let first = self.nested(|p| p.expr());
        if !self.at(&Tok::Comma) {
            self.expect_close(Tok::RParen, start);
            return first;
        }
        self.bump();
        let mut elems = vec![first];
        elems.extend(self.expr_list(Tok::RParen));
        self.expect_close(Tok::RParen, start);
        let span = self.span_from(start);
        self.mk(ExprKind::Tuple(elems), span)
    }

    fn starts_expr(&self) -> bool {
        matches!(
            self.tok.tok,
            Tok::Int(..)
                | Tok::Str(_)
                | Tok::Var
                | Tok::Map
                | Tok::Positional(_)
                | Tok::PositionalCount
                | Tok::LParen
                | Tok::Minus
                | Tok::Bang
                | Tok::Tilde
                | Tok::Star
                | Tok::Amp
                | Tok::Ident
                | Tok::PlusPlus
                | Tok::MinusMinus
        )
    }
}

/// Splits `uprobe:"/a:b":f` at `:` outside quotes, removing quotes and resolving `\` escapes in them.
pub(crate) fn split_attach_point(raw: &str) -> Vec<String> {
    let mut parts = vec![String::new()];
    let mut chars = raw.chars();
    let mut quoted = false;
    while let Some(c) = chars.next() {
        match c {
            '"' => quoted = !quoted,
            '\\' if quoted => {
                if let (Some(n), Some(p)) = (chars.next(), parts.last_mut()) {
                    p.push(n);
                }
            }
            ':' if !quoted => parts.push(String::new()),
            c => {
                if let Some(p) = parts.last_mut() {
                    p.push(c);
                }
            }
        }
    }
    parts
}

/// Source text without its spaces, except inside string and character
/// literals: `args -> sk` and `args->sk` name the same stream key slot.
fn compact(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut quote = None;
    let mut escaped = false;
    for c in text.chars() {
        match quote {
            Some(q) => {
                out.push(c);
                if escaped {
                    escaped = false;
                } else if c == '\\' {
                    escaped = true;
                } else if c == q {
                    quote = None;
                }
            }
            None if c.is_whitespace() => {}
            None => {
                if c == '"' || c == '\'' {
                    quote = Some(c);
                }
                out.push(c);
            }
        }
    }
    out
}

/// The offset of the first byte at or after `at` that is neither white
/// space nor inside a C comment.
fn skip_c_space(text: &str, mut at: usize) -> usize {
    loop {
        let rest = &text[at..];
        let trimmed = rest.trim_start();
        at += rest.len() - trimmed.len();
        if let Some(comment) = trimmed.strip_prefix("/*") {
            at = comment.find("*/").map_or(text.len(), |n| at + 2 + n + 2);
        } else if trimmed.starts_with("//") {
            at = trimmed.find('\n').map_or(text.len(), |n| at + n);
        } else {
            return at;
        }
    }
}

/// The offset just after the `)` closing the `(` at `open`, if `open`
/// holds one and it is closed.
fn balanced_parens(text: &str, open: usize) -> Option<usize> {
    if text.as_bytes().get(open) != Some(&b'(') {
        return None;
    }
    let mut depth = 0usize;
    for (i, b) in text.bytes().enumerate().skip(open) {
        match b {
            b'(' => depth += 1,
            b')' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            _ => {}
        }
    }
    None
}
