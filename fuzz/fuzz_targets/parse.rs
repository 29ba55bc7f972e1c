//! Any input: the parser must not panic, the tree must be lossless, every typed
//! accessor must be safe to call, and an error-free file must format to a fixed
//! point that still parses cleanly.

#![no_main]

use libfuzzer_sys::fuzz_target;
use syntax::ast::{self, AstNode};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let parse = syntax::parse(text);
    assert_eq!(parse.syntax_node().to_string(), text, "the tree lost text");
    let len = syntax::TextSize::of(text);
    for error in parse.errors() {
        assert!(
            error.range.end() <= len,
            "error range out of the file: {error:?}"
        );
        assert!(
            text.is_char_boundary(error.range.start().into())
                && text.is_char_boundary(error.range.end().into()),
            "error range splits a character: {error:?}"
        );
    }
    walk_file(&parse.tree());

    if parse.errors().is_empty() {
        let once = match fmt::format(text) {
            Ok(once) => once,
            Err(errors) => panic!("format refused a file without syntax errors: {errors:?}"),
        };
        let reparsed = syntax::parse(&once);
        assert!(
            reparsed.errors().is_empty(),
            "formatted text has syntax errors: {:?}\n--- formatted ---\n{once}",
            reparsed.errors()
        );
        let twice = fmt::format(&once).expect("formatted text formats");
        assert_eq!(once, twice, "format is not idempotent");
        // Formatting only moves whitespace: the significant tokens are unchanged.
        assert_eq!(
            significant(&parse),
            significant(&reparsed),
            "format changed the tokens"
        );
    }
});

fn significant(parse: &syntax::Parse) -> Vec<(syntax::SyntaxKind, String)> {
    parse
        .syntax_node()
        .descendants_with_tokens()
        .filter_map(|e| e.into_token())
        .filter(|t| {
            !matches!(
                t.kind(),
                syntax::SyntaxKind::WHITESPACE | syntax::SyntaxKind::NEWLINE
            )
        })
        .map(|t| {
            let text = if t.kind() == syntax::SyntaxKind::COMMENT {
                t.text().trim_end().to_string()
            } else {
                t.text().to_string()
            };
            (t.kind(), text)
        })
        .collect()
}

fn walk_file(file: &ast::SourceFile) {
    for item in file.items() {
        let _ = item.name().map(|n| n.text());
        let _ = item.range();
        match item {
            ast::Item::Graph(g) => walk_graph(&g),
            ast::Item::Weight(w) => {
                let _ = w.name();
                if let Some(ty) = w.ty() {
                    walk_type(&ty);
                }
                if let Some(init) = w.init() {
                    walk_expr(&init);
                }
            }
        }
    }
    file.graphs().for_each(|g| drop(g.name()));
    file.weights().for_each(|w| drop(w.name()));
}

fn walk_graph(g: &ast::Graph) {
    let _ = g.name().map(|n| (n.text(), n.token()));
    for param in g.params() {
        walk_param(&param);
    }
    if let Some(ty) = g.ret_type() {
        walk_type(&ty);
    }
    if let Some(body) = g.body() {
        walk_block(&body);
    }
}

fn walk_param(param: &ast::Param) {
    let _ = param.name().map(|n| n.text());
    if let Some(ty) = param.ty() {
        walk_type(&ty);
    }
}

fn walk_block(block: &ast::Block) {
    let _ = (block.l_brace(), block.r_brace());
    if let Some(tail) = block.tail_expr() {
        let _ = tail.range();
    }
    for stmt in block.stmts() {
        match stmt {
            ast::Stmt::Let(l) => {
                if let Some(pat) = l.pat() {
                    walk_pat(&pat);
                }
                if let Some(ty) = l.ty() {
                    walk_type(&ty);
                }
                if let Some(value) = l.value() {
                    walk_expr(&value);
                }
            }
            ast::Stmt::Return(r) => {
                if let Some(value) = r.value() {
                    walk_expr(&value);
                }
            }
            ast::Stmt::Expr(e) => {
                if let Some(expr) = e.expr() {
                    walk_expr(&expr);
                }
            }
            ast::Stmt::Graph(g) => walk_graph(&g),
        }
    }
}

fn walk_pat(pat: &ast::Pat) {
    match pat {
        ast::Pat::Name(n) => drop(n.text()),
        ast::Pat::Tuple(t) => t.fields().for_each(|f| walk_pat(&f)),
    }
}

fn walk_type(ty: &ast::Type) {
    match ty {
        ast::Type::Named(n) => {
            let _ = n.name_token();
            if let Some(shape) = n.shape() {
                shape.dims().for_each(|d| drop(d.token()));
            }
        }
        ast::Type::Tuple(t) => t.fields().for_each(|f| walk_type(&f)),
        ast::Type::Fn(f) => {
            f.params().for_each(|p| walk_type(&p));
            if let Some(ret) = f.ret() {
                walk_type(&ret);
            }
        }
    }
}

fn walk_expr(expr: &ast::Expr) {
    match expr {
        ast::Expr::Literal(l) => drop(l.kind()),
        ast::Expr::NameRef(n) => drop((n.text(), n.token())),
        ast::Expr::Paren(p) => {
            if let Some(e) = p.expr() {
                walk_expr(&e);
            }
        }
        ast::Expr::Tuple(t) => t.fields().for_each(|f| walk_expr(&f)),
        ast::Expr::Tensor(t) => t.elements().for_each(|e| walk_expr(&e)),
        ast::Expr::Call(c) => {
            if let Some(callee) = c.callee() {
                walk_expr(&callee);
            }
            let _ = c.arg_list();
            for arg in c.args() {
                if let ast::Arg::Keyword(k) = &arg {
                    let _ = k.name().map(|n| n.text());
                }
                if let Some(value) = arg.value() {
                    walk_expr(&value);
                }
            }
        }
        ast::Expr::Index(i) => {
            for e in [i.base(), i.index()].into_iter().flatten() {
                walk_expr(&e);
            }
        }
        ast::Expr::Bin(b) => {
            let _ = (b.op_token(), b.op_kind());
            for e in [b.lhs(), b.rhs()].into_iter().flatten() {
                walk_expr(&e);
            }
        }
        ast::Expr::Prefix(p) => {
            let _ = p.op_kind();
            if let Some(e) = p.operand() {
                walk_expr(&e);
            }
        }
        ast::Expr::If(i) => {
            if let Some(c) = i.condition() {
                walk_expr(&c);
            }
            if let Some(b) = i.then_block() {
                walk_block(&b);
            }
            match i.else_branch() {
                Some(ast::ElseBranch::Block(b)) => walk_block(&b),
                Some(ast::ElseBranch::If(e)) => walk_expr(&ast::Expr::If(e)),
                None => {}
            }
        }
        ast::Expr::Lambda(l) => {
            l.params().for_each(|p| walk_param(&p));
            if let Some(body) = l.body() {
                walk_expr(&body);
            }
        }
    }
}
