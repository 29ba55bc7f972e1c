//! A hand-written recursive-descent parser that builds `rowan` green trees.
//!
//! Newlines end statements, except inside `(`/`[` or after a binary operator or
//! a comma (spec §1). The parser keeps a stack of bracket modes: inside
//! parentheses a newline is trivia, inside `{ }` it separates statements.
//! Trivia before a node's first token goes to the enclosing node, so nodes start
//! and end on significant tokens.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use rowan::{GreenNode, GreenNodeData, GreenToken, GreenTokenData, NodeOrToken};

use crate::lexer::Token;
use crate::{SyntaxError, SyntaxKind, SyntaxKind::*, TextRange, TextSize};

/// Parses a file's tokens (or a window of top-level children, when reparsing).
pub(crate) fn parse_tokens(text: &str, tokens: &[Token]) -> (GreenNode, Vec<SyntaxError>) {
    let mut starts = Vec::with_capacity(tokens.len() + 1);
    let mut offset = TextSize::from(0);
    for token in tokens {
        starts.push(offset);
        offset += token.len;
    }
    starts.push(offset);
    let mut p = Parser {
        text,
        tokens,
        starts,
        pos: 0,
        builder: Builder::new(tokens.len()),
        errors: Vec::new(),
        newline_is_trivia: vec![false],
        last_significant_end: TextSize::from(0),
        depth: 0,
    };
    source_file(&mut p);
    (p.builder.finish(), p.errors)
}

struct Parser<'t> {
    text: &'t str,
    tokens: &'t [Token],
    starts: Vec<TextSize>,
    pos: usize,
    builder: Builder<'t>,
    errors: Vec<SyntaxError>,
    /// One entry per open bracket: whether a newline is trivia inside it.
    newline_is_trivia: Vec<bool>,
    last_significant_end: TextSize,
    /// Nesting depth of the grammar's recursive rules (see `MAX_NESTING`).
    depth: u32,
}

const STMT_END: &[SyntaxKind] = &[NEWLINE, SEMI, R_BRACE, EOF];
/// Tokens an expression never consumes while recovering from an error.
const EXPR_RECOVERY: &[SyntaxKind] = &[
    NEWLINE, SEMI, R_BRACE, R_PAREN, R_BRACK, COMMA, EOF, GRAPH_KW, PARAM_KW, RETURN_KW, L_BRACE,
];

impl<'t> Parser<'t> {
    fn is_trivia(&self, kind: SyntaxKind) -> bool {
        match kind {
            WHITESPACE | COMMENT => true,
            NEWLINE => *self.newline_is_trivia.last().unwrap_or(&false),
            _ => false,
        }
    }

    /// Index of the `n`-th significant token from the cursor (`tokens.len()` at the end).
    fn nth_index(&self, mut n: usize) -> usize {
        let mut i = self.pos;
        loop {
            while i < self.tokens.len() && self.is_trivia(self.tokens[i].kind) {
                i += 1;
            }
            if n == 0 || i >= self.tokens.len() {
                return i;
            }
            n -= 1;
            i += 1;
        }
    }

    fn nth(&self, n: usize) -> SyntaxKind {
        let i = self.nth_index(n);
        self.tokens.get(i).map_or(EOF, |t| t.kind)
    }

    fn current(&self) -> SyntaxKind {
        self.nth(0)
    }

    fn at(&self, kind: SyntaxKind) -> bool {
        self.current() == kind
    }

    fn at_any(&self, kinds: &[SyntaxKind]) -> bool {
        kinds.contains(&self.current())
    }

    fn token_range(&self, i: usize) -> TextRange {
        TextRange::new(self.starts[i], self.starts[i + 1])
    }

    fn emit(&mut self, i: usize) {
        let range = self.token_range(i);
        let kind = self.tokens[i].kind;
        self.builder
            .token(kind, &self.text[range.start().into()..range.end().into()]);
    }

    fn flush_trivia(&mut self) {
        while self.pos < self.tokens.len() && self.is_trivia(self.tokens[self.pos].kind) {
            self.emit(self.pos);
            self.pos += 1;
        }
    }

    /// Adds the current significant token (and the trivia before it) to the tree.
    fn bump(&mut self) {
        self.flush_trivia();
        if self.pos < self.tokens.len() {
            self.emit(self.pos);
            if !self.tokens[self.pos].kind.is_trivia() {
                self.last_significant_end = self.starts[self.pos + 1];
            }
            self.pos += 1;
        }
    }

    /// Whether the current token is the identifier `text` (a contextual keyword).
    fn at_contextual(&self, text: &str) -> bool {
        let i = self.nth_index(0);
        i < self.tokens.len()
            && self.tokens[i].kind == IDENT
            && &self.text[self.token_range(i).start().into()..self.token_range(i).end().into()]
                == text
    }

    /// Adds the current token as a token of kind `kind` (a contextual keyword).
    fn bump_as(&mut self, kind: SyntaxKind) {
        self.flush_trivia();
        if self.pos < self.tokens.len() {
            let range = self.token_range(self.pos);
            self.builder
                .token(kind, &self.text[range.start().into()..range.end().into()]);
            self.last_significant_end = range.end();
            self.pos += 1;
        }
    }

    /// After a binary operator or a comma a newline does not end the statement.
    fn bump_newlines(&mut self) {
        while self.pos < self.tokens.len() && self.tokens[self.pos].kind.is_trivia() {
            self.emit(self.pos);
            self.pos += 1;
        }
    }

    fn start_node(&mut self, kind: SyntaxKind) {
        self.flush_trivia();
        self.builder.start_node(kind);
    }

    fn finish_node(&mut self) {
        self.builder.finish_node();
    }

    fn checkpoint(&mut self) -> usize {
        self.flush_trivia();
        self.builder.checkpoint()
    }

    fn start_node_at(&mut self, checkpoint: usize, kind: SyntaxKind) {
        self.builder.start_node_at(checkpoint, kind);
    }

    fn open(&mut self, newline_is_trivia: bool) {
        self.bump();
        self.newline_is_trivia.push(newline_is_trivia);
    }

    fn close(&mut self) {
        self.newline_is_trivia.pop();
    }

    /// Whether a line break separates the cursor from the next significant token.
    fn newline_before_current(&self) -> bool {
        let i = self.nth_index(0);
        self.tokens[self.pos..i].iter().any(|t| t.kind == NEWLINE)
    }

    /// Whether the next significant token starts a line, unindented.
    fn current_at_column_zero(&self) -> bool {
        let i = self.nth_index(0);
        i == 0 || self.tokens.get(i - 1).is_some_and(|t| t.kind == NEWLINE)
    }

    fn found(&self) -> String {
        let i = self.nth_index(0);
        match self.tokens.get(i) {
            None => "end of file".to_string(),
            Some(t) if t.kind == NEWLINE => "end of line".to_string(),
            Some(t) => {
                let range = self.token_range(i);
                let text = &self.text[range.start().into()..range.end().into()];
                let text: String = text.chars().take(24).collect();
                match t.kind {
                    IDENT | TEMP | INT | FLOAT | STRING => {
                        format!("{} `{}`", t.kind.describe(), text)
                    }
                    _ => format!("`{text}`"),
                }
            }
        }
    }

    /// Reports an error at the next significant token (or just after the last one,
    /// when the next is the end of a line or of the file). One error per position.
    fn error_here(&mut self, expected: &str) {
        let i = self.nth_index(0);
        let range = match self.tokens.get(i) {
            Some(t) if t.kind != NEWLINE => self.token_range(i),
            _ => TextRange::empty(self.last_significant_end),
        };
        if self
            .errors
            .last()
            .is_some_and(|e| e.range.start() == range.start())
        {
            return;
        }
        let message = format!("{expected}, found {}", self.found());
        self.errors.push(SyntaxError::new(message, range));
    }

    /// Reports an error whose message already says what is wrong at the next token.
    fn error_plain(&mut self, message: &str) {
        let i = self.nth_index(0);
        let range = match self.tokens.get(i) {
            Some(t) if t.kind != NEWLINE => self.token_range(i),
            _ => TextRange::empty(self.last_significant_end),
        };
        self.errors.push(SyntaxError::new(message, range));
    }

    /// The last significant token consumed (an opening bracket, right after [`Parser::open`]).
    fn last_bumped(&self) -> Option<(TextRange, String)> {
        let i = (0..self.pos)
            .rev()
            .find(|&i| !self.tokens[i].kind.is_trivia() && self.tokens[i].kind != NEWLINE)?;
        let range = self.token_range(i);
        Some((
            range,
            self.text[range.start().into()..range.end().into()].to_string(),
        ))
    }

    /// Marks the errors reported since there were `before` as leaving `opener` unclosed.
    fn unclosed_since(&mut self, before: usize, opener: &Option<(TextRange, String)>) {
        for e in &mut self.errors[before..] {
            e.opener = opener.clone();
        }
    }

    fn expect(&mut self, kind: SyntaxKind) -> bool {
        if self.at(kind) {
            self.bump();
            true
        } else {
            self.error_here(&format!("expected {}", kind.describe()));
            false
        }
    }

    /// Wraps tokens in an ERROR node until one of `stop` (or the end of input).
    fn recover_until(&mut self, stop: &[SyntaxKind]) {
        if self.at_any(stop) || self.at(EOF) {
            return;
        }
        self.start_node(ERROR);
        while !self.at_any(stop) && !self.at(EOF) {
            self.bump();
        }
        self.finish_node();
    }

    fn bump_as_error(&mut self) {
        self.start_node(ERROR);
        self.bump();
        self.finish_node();
    }
}

fn source_file(p: &mut Parser) {
    p.builder.start_node(SOURCE_FILE);
    loop {
        match p.current() {
            EOF => break,
            NEWLINE | SEMI => p.bump(),
            GRAPH_KW | PARAM_KW => item(p),
            IDENT if p.at_contextual("import") => item(p),
            _ => {
                p.error_here("expected `graph`, `param` or `import` at the top level");
                p.recover_until(&[GRAPH_KW, PARAM_KW]);
            }
        }
    }
    p.flush_trivia();
    p.finish_node();
}

fn item(p: &mut Parser) {
    match p.current() {
        GRAPH_KW => graph(p),
        PARAM_KW => weight(p),
        IDENT if p.at_contextual("import") => import(p),
        _ => p.error_here("expected `graph`, `param` or `import`"),
    }
    if !p.at_any(&[NEWLINE, SEMI, EOF, GRAPH_KW, PARAM_KW]) {
        p.error_here("expected a new line after the item");
        p.recover_until(&[NEWLINE, GRAPH_KW, PARAM_KW]);
    }
}

/// `import "PATH"` or `import "PATH" as NAME` (spec §10).
fn import(p: &mut Parser) {
    p.start_node(IMPORT);
    p.bump_as(IMPORT_KW);
    if p.at(STRING) {
        p.bump();
    } else {
        p.error_here("expected the path of a `.mir` file in double quotes");
    }
    if p.at(IDENT) && p.at_contextual("as") {
        p.bump_as(AS_KW);
        name(p, "a name after `as`");
    }
    p.finish_node();
}

fn name(p: &mut Parser, what: &str) -> bool {
    if p.at_any(&[IDENT, TEMP]) {
        p.start_node(NAME);
        p.bump();
        p.finish_node();
        true
    } else {
        p.error_here(&format!("expected {what}"));
        false
    }
}

/// `graph NAME(PARAMS) -> TYPE { BODY }`, at the top level or nested.
fn graph(p: &mut Parser) {
    p.start_node(GRAPH);
    p.bump(); // `graph`
    name(p, "a graph name");
    const HEADER: &[SyntaxKind] = &[L_PAREN, THIN_ARROW, L_BRACE, NEWLINE, GRAPH_KW, PARAM_KW];
    let mut header_ok = true;
    if !p.at_any(HEADER) {
        p.error_here("expected `(`");
        p.recover_until(HEADER);
        header_ok = false;
    }
    if p.at(L_PAREN) {
        param_list(p);
    } else if header_ok {
        p.error_here("expected `(` and the graph's parameters");
    }
    if p.at(THIN_ARROW) {
        p.start_node(RET_TYPE);
        p.bump();
        ty(p);
        p.finish_node();
    }
    if !p.at(L_BRACE) && !p.at_any(&[NEWLINE, GRAPH_KW, PARAM_KW, EOF]) {
        p.error_here("expected `{`");
        p.recover_until(&[L_BRACE, NEWLINE, GRAPH_KW, PARAM_KW]);
    }
    if p.at(L_BRACE) {
        block(p);
    } else {
        p.error_here("expected `{` and the graph's body");
    }
    p.finish_node();
}

/// `param NAME: TYPE = INIT`
fn weight(p: &mut Parser) {
    p.start_node(WEIGHT);
    p.bump(); // `param`
    name(p, "a weight name");
    if p.expect(COLON) {
        ty(p);
    }
    if p.expect(EQ) {
        expr(p);
    }
    p.finish_node();
}

/// A comma-separated list up to `close`; the opener is already consumed.
/// `elem` parses one element and returns false if nothing was consumed.
fn list(p: &mut Parser, close: SyntaxKind, what: &str, elem: fn(&mut Parser) -> bool) {
    let opener = p.last_bumped();
    loop {
        if p.at(close) || p.at(EOF) {
            break;
        }
        let before = p.pos;
        if !elem(p) {
            if p.at_any(&[L_BRACE, R_BRACE, GRAPH_KW, PARAM_KW, RETURN_KW]) || p.at(close) {
                break;
            }
            if p.pos == before {
                p.bump_as_error();
            }
            continue;
        }
        if p.at(COMMA) {
            p.bump();
            p.bump_newlines();
            continue;
        }
        if p.at(close) {
            break;
        }
        // Something else follows the element. On a new line, or a token that
        // cannot be inside the list, the closer is most likely missing.
        let before = p.errors.len();
        p.error_here(&format!("expected `,` or {}", close.describe()));
        if p.newline_before_current()
            || p.at_any(&[
                L_BRACE, R_BRACE, GRAPH_KW, PARAM_KW, RETURN_KW, R_PAREN, R_BRACK, EQ, THIN_ARROW,
                FAT_ARROW,
            ])
        {
            p.unclosed_since(before, &opener);
            return;
        }
        p.bump_as_error();
    }
    if p.at(close) {
        p.bump();
    } else {
        let before = p.errors.len();
        p.error_here(&format!(
            "expected {} to close the {what}",
            close.describe()
        ));
        p.unclosed_since(before, &opener);
    }
}

fn param_list(p: &mut Parser) {
    p.start_node(PARAM_LIST);
    p.open(true);
    list(p, R_PAREN, "parameter list", param);
    p.close();
    p.finish_node();
}

fn param(p: &mut Parser) -> bool {
    if !p.at_any(&[IDENT, TEMP]) {
        p.error_here("expected a parameter name");
        return false;
    }
    p.start_node(PARAM);
    name(p, "a parameter name");
    if p.at(COLON) {
        p.bump();
        ty(p);
    }
    // `= CONST`: an attribute parameter with its default (composite primitives).
    if p.at(EQ) {
        p.bump();
        expr(p);
    }
    p.finish_node();
    true
}

fn ty(p: &mut Parser) -> bool {
    nested(p, ty_inner)
}

fn ty_inner(p: &mut Parser) -> bool {
    match p.current() {
        IDENT | NONE_KW => {
            p.start_node(NAMED_TYPE);
            p.bump();
            if p.at(L_BRACK) {
                p.start_node(SHAPE);
                p.open(true);
                list(p, R_BRACK, "shape", dim);
                p.close();
                p.finish_node();
            }
            p.finish_node();
        }
        L_PAREN => {
            p.start_node(TUPLE_TYPE);
            p.open(true);
            list(p, R_PAREN, "tuple type", ty);
            p.close();
            p.finish_node();
        }
        FN_KW => {
            p.start_node(FN_TYPE);
            p.bump();
            if p.at(L_PAREN) {
                p.start_node(PARAM_LIST);
                p.open(true);
                list(p, R_PAREN, "parameter types", ty);
                p.close();
                p.finish_node();
            } else {
                p.error_here("expected `(` and the parameter types");
            }
            if p.expect(THIN_ARROW) {
                ty(p);
            }
            p.finish_node();
        }
        _ => {
            p.error_here("expected a type");
            return false;
        }
    }
    true
}

fn dim(p: &mut Parser) -> bool {
    if p.at_any(&[INT, IDENT, QUESTION, STAR]) {
        p.start_node(DIM);
        p.bump();
        p.finish_node();
        true
    } else {
        p.error_here("expected a dimension (an integer, a symbol, `?` or `*`)");
        false
    }
}

/// `{ STMTS }`: a graph body, or a branch of `if` (whose last statement is its value).
fn block(p: &mut Parser) {
    p.start_node(BLOCK);
    p.open(false);
    let opener = p.last_bumped();
    loop {
        match p.current() {
            NEWLINE | SEMI => p.bump(),
            R_BRACE | EOF => break,
            // An unindented item keyword: the `}` of this block is probably missing.
            GRAPH_KW | PARAM_KW if p.current_at_column_zero() => break,
            _ => {
                let before = p.pos;
                stmt(p);
                if p.pos == before {
                    p.bump_as_error();
                }
            }
        }
    }
    p.close();
    if p.at(R_BRACE) {
        p.bump();
    } else {
        let before = p.errors.len();
        p.error_here("expected `}`");
        p.unclosed_since(before, &opener);
    }
    p.finish_node();
}

fn stmt(p: &mut Parser) {
    let errors_before = p.errors.len();
    match p.current() {
        GRAPH_KW => graph(p),
        RETURN_KW => {
            p.start_node(RETURN_STMT);
            p.bump();
            if p.at_any(STMT_END) {
                p.error_here("expected an expression after `return`");
            } else {
                expr(p);
            }
            p.finish_node();
        }
        PARAM_KW => {
            p.error_plain("`param` declares a weight and is only allowed at the top level");
            p.recover_until(STMT_END);
        }
        IDENT | TEMP if matches!(p.nth(1), EQ | COLON) => let_stmt(p),
        L_PAREN if at_tuple_pattern(p) => let_stmt(p),
        _ => {
            p.start_node(EXPR_STMT);
            expr(p);
            p.finish_node();
        }
    }
    if !p.at_any(STMT_END) {
        if p.errors.len() == errors_before {
            p.error_here("expected the end of the statement (a new line or `;`)");
        }
        // A token that starts a line or a statement is left for the next statement.
        let starts_statement = p.newline_before_current() || p.at_any(&[RETURN_KW, GRAPH_KW]);
        if !starts_statement || p.errors.len() == errors_before {
            p.recover_until(STMT_END);
        }
    }
}

/// At `(`: does a tuple pattern follow, i.e. is the matching `)` followed by `=`?
fn at_tuple_pattern(p: &Parser) -> bool {
    let mut depth = 0usize;
    let start = p.nth_index(0);
    for (i, token) in p.tokens[start..].iter().enumerate().take(4096) {
        match token.kind {
            L_PAREN | L_BRACK => depth += 1,
            R_PAREN | R_BRACK => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    let rest = &p.tokens[start + i + 1..];
                    return rest
                        .iter()
                        .find(|t| !matches!(t.kind, WHITESPACE | COMMENT))
                        .is_some_and(|t| t.kind == EQ);
                }
            }
            L_BRACE | R_BRACE | GRAPH_KW | RETURN_KW => return false,
            _ => {}
        }
    }
    false
}

fn let_stmt(p: &mut Parser) {
    p.start_node(LET_STMT);
    if p.at(L_PAREN) {
        tuple_pat(p);
    } else {
        name(p, "a name");
    }
    if p.at(COLON) {
        p.bump();
        ty(p);
    }
    if p.expect(EQ) {
        expr(p);
    }
    p.finish_node();
}

fn tuple_pat(p: &mut Parser) {
    nested(p, |p| {
        tuple_pat_inner(p);
        true
    });
}

fn tuple_pat_inner(p: &mut Parser) {
    p.start_node(TUPLE_PAT);
    p.open(true);
    list(p, R_PAREN, "tuple pattern", |p| {
        if p.at(L_PAREN) {
            tuple_pat(p);
            true
        } else {
            name(p, "a name to bind")
        }
    });
    p.close();
    p.finish_node();
}

fn expr(p: &mut Parser) -> bool {
    expr_bp(p, 0)
}

fn expr_bp(p: &mut Parser, min_precedence: u8) -> bool {
    nested(p, |p| expr_bp_inner(p, min_precedence))
}

fn expr_bp_inner(p: &mut Parser, min_precedence: u8) -> bool {
    let checkpoint = p.checkpoint();
    if !unary(p) {
        return false;
    }
    // Each operator of a chain (`a + b + c ...`) wraps the expression so far
    // in one more node: a level of the tree like any other (`MAX_NESTING`).
    let outer = p.depth;
    while let Some(precedence) = p.current().binary_precedence() {
        if precedence <= min_precedence {
            break;
        }
        p.start_node_at(checkpoint, BIN_EXPR);
        p.bump();
        p.bump_newlines();
        p.depth += 1;
        if !expr_bp(p, precedence) {
            p.finish_node();
            break;
        }
        p.finish_node();
    }
    p.depth = outer;
    true
}

fn unary(p: &mut Parser) -> bool {
    nested(p, unary_inner)
}

fn unary_inner(p: &mut Parser) -> bool {
    if p.at_any(&[MINUS, NOT_KW]) {
        p.start_node(PREFIX_EXPR);
        p.bump();
        unary(p);
        p.finish_node();
        return true;
    }
    postfix(p)
}

fn postfix(p: &mut Parser) -> bool {
    let checkpoint = p.checkpoint();
    if !atom(p) {
        return false;
    }
    // As for operator chains: `f(x)(y)[0]...` nests one level per call or index.
    let outer = p.depth;
    let chained = postfix_chain(p, checkpoint);
    p.depth = outer;
    chained
}

fn postfix_chain(p: &mut Parser, checkpoint: usize) -> bool {
    loop {
        if matches!(p.current(), L_PAREN | L_BRACK) {
            if p.depth >= MAX_NESTING {
                // Reports the nesting and skips the rest of the line.
                nested(p, |_| true);
                return true;
            }
            p.depth += 1;
        }
        match p.current() {
            L_PAREN => {
                p.start_node_at(checkpoint, CALL_EXPR);
                arg_list(p);
                p.finish_node();
            }
            L_BRACK => {
                p.start_node_at(checkpoint, INDEX_EXPR);
                p.open(true);
                expr(p);
                p.close();
                p.expect(R_BRACK);
                p.finish_node();
            }
            _ => break,
        }
    }
    true
}

fn arg_list(p: &mut Parser) {
    p.start_node(ARG_LIST);
    p.open(true);
    list(p, R_PAREN, "argument list", |p| {
        if p.at(IDENT) && p.nth(1) == EQ {
            p.start_node(KEYWORD_ARG);
            p.start_node(NAME);
            p.bump();
            p.finish_node();
            p.bump(); // `=`
            expr(p);
            p.finish_node();
            true
        } else {
            expr(p)
        }
    });
    p.close();
    p.finish_node();
}

fn atom(p: &mut Parser) -> bool {
    match p.current() {
        INT | FLOAT | STRING | TRUE_KW | FALSE_KW | NONE_KW => {
            p.start_node(LITERAL);
            p.bump();
            p.finish_node();
        }
        IDENT | TEMP => {
            p.start_node(NAME_REF);
            p.bump();
            p.finish_node();
        }
        L_PAREN => {
            let checkpoint = p.checkpoint();
            p.open(true);
            let mut kind = TUPLE_EXPR;
            if !p.at(R_PAREN) {
                expr(p);
                if p.at(COMMA) {
                    p.bump();
                    p.bump_newlines();
                    list(p, R_PAREN, "tuple", expr);
                } else {
                    kind = PAREN_EXPR;
                    p.expect(R_PAREN);
                }
            } else {
                p.bump();
            }
            p.close();
            p.start_node_at(checkpoint, kind);
            p.finish_node();
        }
        L_BRACK => {
            p.start_node(TENSOR_EXPR);
            p.open(true);
            list(p, R_BRACK, "tensor literal", expr);
            p.close();
            p.finish_node();
        }
        IF_KW => if_expr(p),
        FN_KW => {
            p.start_node(LAMBDA_EXPR);
            p.bump();
            if p.at(L_PAREN) {
                param_list(p);
            } else {
                p.error_here("expected `(` and the lambda's parameters");
            }
            if p.expect(FAT_ARROW) {
                expr(p);
            }
            p.finish_node();
        }
        _ => {
            p.error_here("expected an expression");
            if !p.at_any(EXPR_RECOVERY) {
                p.bump_as_error();
            }
            return false;
        }
    }
    true
}

/// `if COND { ... } else if COND { ... } else { ... }`
fn if_expr(p: &mut Parser) {
    nested(p, |p| {
        if_expr_inner(p);
        true
    });
}

fn if_expr_inner(p: &mut Parser) {
    p.start_node(IF_EXPR);
    p.bump(); // `if`
    expr(p);
    if p.at(L_BRACE) {
        block(p);
    } else {
        p.error_here("expected `{` after the condition");
    }
    // `else` may start the next line: no statement can begin with it.
    let next = p.tokens[p.pos..]
        .iter()
        .find(|t| !t.kind.is_trivia())
        .map(|t| t.kind);
    if next == Some(ELSE_KW) {
        p.bump_newlines();
        p.bump(); // `else`
        match p.current() {
            IF_KW => if_expr(p),
            L_BRACE => block(p),
            _ => p.error_here("expected `{` or `if` after `else`"),
        }
    }
    p.finish_node();
}

/// Builds the green tree like `rowan::GreenNodeBuilder` and shares equal tokens
/// and equal small nodes the same way (the trees are equal, `==`), with less work
/// per token, which is most of the cost of a parse:
/// - one atomic reference-count increment per token and no more (rowan's cache
///   is as frugal, but a naive per-kind cache of `GreenToken`s is not);
/// - a one-entry cache per token kind (punctuation, keywords, common whitespace)
///   and a small direct-mapped cache (frequent names) in front of the intern
///   table spare most tokens a hash-table lookup;
/// - a small node is looked up by a hash of its children's identities (they are
///   shared already), so neither a lookup nor a growing table rehashes subtrees,
///   which made up about a sixth of rowan's time on large files.
struct Builder<'t> {
    /// Open nodes: kind and index of the first child in `children`.
    parents: Vec<(SyntaxKind, usize)>,
    /// Finished children of the open nodes, each with its identity: the address
    /// of its shared green data, or 0 if it is not shared.
    children: Vec<(u64, GreenElement)>,
    /// The distinct tokens so far.
    interned: Vec<GreenToken>,
    /// Per kind, the index in `interned` of the last token of that kind, plus 1.
    last_token: Vec<u32>,
    /// A direct-mapped cache in front of `tokens`, indexed by a cheap hash of the
    /// kind and text: an index in `interned` plus 1. Its length is a power of 2.
    recent: Vec<u32>,
    tokens: HashMap<(SyntaxKind, &'t str), u32, FxBuild>,
    /// Small nodes by the hash of their kind and children's identities.
    nodes: HashMap<u64, GreenNode, FxBuild>,
}

type GreenElement = NodeOrToken<GreenNode, GreenToken>;
type FxBuild = BuildHasherDefault<FxHasher>;

/// Nodes with more children than this are not shared (as in rowan).
const MAX_SHARED_CHILDREN: usize = 3;

impl<'t> Builder<'t> {
    fn new(token_count: usize) -> Self {
        let capacity = (token_count / 64).clamp(16, 1 << 12);
        Builder {
            parents: Vec::with_capacity(32),
            children: Vec::with_capacity(64),
            interned: Vec::with_capacity(capacity),
            last_token: vec![0; SyntaxKind::__LAST as usize],
            recent: vec![0; token_count.next_power_of_two().clamp(64, 4096)],
            tokens: HashMap::with_capacity_and_hasher(capacity, FxBuild::default()),
            nodes: HashMap::with_capacity_and_hasher(capacity, FxBuild::default()),
        }
    }

    fn token(&mut self, kind: SyntaxKind, text: &'t str) {
        let index = self.intern(kind, text);
        // Each `GreenToken` clone is an atomic increment: one per token, no more.
        let token = self.interned[index].clone();
        let id = &*token as *const GreenTokenData as u64;
        self.children.push((id, NodeOrToken::Token(token)));
    }

    /// The index in `interned` of the token: from the last token of its kind, the
    /// direct-mapped cache, or the table (in that order of cost).
    fn intern(&mut self, kind: SyntaxKind, text: &'t str) -> usize {
        let last = self.last_token[kind as usize] as usize;
        if let Some(i) = last.checked_sub(1) {
            if self.interned[i].text() == text {
                return i;
            }
        }
        let bytes = text.as_bytes();
        let (first, last) = (bytes.first().copied(), bytes.last().copied());
        let slot = (usize::from(first.unwrap_or(0)) * 31
            + usize::from(last.unwrap_or(0)) * 7
            + bytes.len() * 131)
            ^ ((kind as usize) << 3);
        let slot = slot & (self.recent.len() - 1);
        let i = match (self.recent[slot] as usize).checked_sub(1) {
            Some(i)
                if self.interned[i].kind() == kind.into() && self.interned[i].text() == text =>
            {
                i
            }
            _ => {
                let interned = &mut self.interned;
                let i = *self.tokens.entry((kind, text)).or_insert_with(|| {
                    interned.push(GreenToken::new(kind.into(), text));
                    (interned.len() - 1) as u32
                }) as usize;
                self.recent[slot] = i as u32 + 1;
                i
            }
        };
        self.last_token[kind as usize] = i as u32 + 1;
        i
    }

    fn start_node(&mut self, kind: SyntaxKind) {
        self.parents.push((kind, self.children.len()));
    }

    fn finish_node(&mut self) {
        let (kind, first_child) = self.parents.pop().expect("a node is open");
        let children = &self.children[first_child..];
        let shareable = children.len() <= MAX_SHARED_CHILDREN && children.iter().all(|c| c.0 != 0);
        let element = if shareable {
            let mut h = FxHasher::default();
            h.write_u16(kind as u16);
            for (id, _) in children {
                h.add(*id);
            }
            let hash = h.finish();
            let same = |node: &GreenNode| {
                node.kind() == kind.into()
                    && node.children().len() == children.len()
                    && node.children().zip(children).all(|(a, (id, _))| {
                        let address = match a {
                            NodeOrToken::Node(n) => n as *const GreenNodeData as u64,
                            NodeOrToken::Token(t) => t as *const GreenTokenData as u64,
                        };
                        address == *id
                    })
            };
            match self.nodes.get(&hash) {
                Some(node) if same(node) => {
                    let node = node.clone();
                    self.children.truncate(first_child);
                    (&*node as *const GreenNodeData as u64, node)
                }
                found => {
                    let collision = found.is_some();
                    let node = GreenNode::new(
                        kind.into(),
                        self.children.drain(first_child..).map(|(_, c)| c),
                    );
                    if collision {
                        // Another node has this hash: keep it, leave this one unshared.
                        (0, node)
                    } else {
                        self.nodes.insert(hash, node.clone());
                        (&*node as *const GreenNodeData as u64, node)
                    }
                }
            }
        } else {
            let node = GreenNode::new(
                kind.into(),
                self.children.drain(first_child..).map(|(_, c)| c),
            );
            (0, node)
        };
        self.children
            .push((element.0, NodeOrToken::Node(element.1)));
    }

    fn checkpoint(&self) -> usize {
        self.children.len()
    }

    fn start_node_at(&mut self, checkpoint: usize, kind: SyntaxKind) {
        assert!(checkpoint <= self.children.len(), "stale checkpoint");
        if let Some(&(_, first_child)) = self.parents.last() {
            assert!(
                checkpoint >= first_child,
                "checkpoint outside the open node"
            );
        }
        self.parents.push((kind, checkpoint));
    }

    fn finish(mut self) -> GreenNode {
        assert!(self.parents.is_empty() && self.children.len() == 1);
        match self.children.pop() {
            Some((_, NodeOrToken::Node(node))) => node,
            _ => unreachable!("the root is a node"),
        }
    }
}

/// The Fx hash (as in rustc and rowan): fast and good enough for short keys.
#[derive(Default)]
struct FxHasher(u64);

impl FxHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

impl Hasher for FxHasher {
    #[inline]
    fn write(&mut self, mut bytes: &[u8]) {
        while let Some((chunk, rest)) = bytes.split_first_chunk::<8>() {
            self.add(u64::from_le_bytes(*chunk));
            bytes = rest;
        }
        if let Some((chunk, rest)) = bytes.split_first_chunk::<4>() {
            self.add(u64::from(u32::from_le_bytes(*chunk)));
            bytes = rest;
        }
        for &b in bytes {
            self.add(u64::from(b));
        }
    }

    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.add(u64::from(i));
    }

    #[inline]
    fn write_u16(&mut self, i: u16) {
        self.add(u64::from(i));
    }

    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }

    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
}

/// Deeper nesting than this is reported rather than parsed, so neither the
/// parser nor a tree (which is dropped recursively) can overflow the stack, even
/// on a thread with a small stack.
const MAX_NESTING: u32 = 256;

/// Runs a recursive grammar rule one level deeper, or, past `MAX_NESTING`,
/// reports the nesting and skips the rest of the line without recursing.
fn nested(p: &mut Parser, rule: impl FnOnce(&mut Parser) -> bool) -> bool {
    if p.depth >= MAX_NESTING {
        p.error_plain("nested too deeply (more than 256 levels): split this into several bindings");
        p.start_node(ERROR);
        while p.pos < p.tokens.len() && p.tokens[p.pos].kind != NEWLINE {
            p.emit(p.pos);
            p.pos += 1;
        }
        p.finish_node();
        return false;
    }
    p.depth += 1;
    let parsed = rule(p);
    p.depth -= 1;
    parsed
}
