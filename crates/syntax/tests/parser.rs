//! Snapshot tests of the parser: every `test_data/{ok,err}/*.mir` fixture is
//! parsed and its tree and errors compared with the `.rast` file beside it.
//! `UPDATE_EXPECT=1 cargo test -p syntax` rewrites the snapshots.

use std::path::{Path, PathBuf};

use expect_test::expect_file;

fn fixtures(dir: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("test_data")
        .join(dir);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "mir"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no fixtures in {}", dir.display());
    files
}

/// Every node and token covers exactly its own text, children tile their parent.
fn assert_well_formed(parse: &syntax::Parse, text: &str) {
    let root = parse.syntax_node();
    assert_eq!(root.to_string(), text, "the tree must reproduce the input");
    for node in root.descendants() {
        let mut offset = node.text_range().start();
        for child in node.children_with_tokens() {
            assert_eq!(
                child.text_range().start(),
                offset,
                "gap or overlap in {node:?}"
            );
            offset = child.text_range().end();
        }
        assert_eq!(offset, node.text_range().end());
    }
    for error in parse.errors() {
        assert!(error.range.end() <= root.text_range().end());
    }
}

#[test]
fn ok_fixtures_parse_without_errors() {
    for path in fixtures("ok") {
        let text = std::fs::read_to_string(&path).unwrap();
        let parse = syntax::parse(&text);
        assert_well_formed(&parse, &text);
        assert!(
            parse.errors().is_empty(),
            "{} has errors: {:?}",
            path.display(),
            parse.errors()
        );
        expect_file![path.with_extension("rast")].assert_eq(&parse.debug_dump());
    }
}

#[test]
fn err_fixtures_report_errors_and_recover() {
    for path in fixtures("err") {
        let text = std::fs::read_to_string(&path).unwrap();
        let parse = syntax::parse(&text);
        assert_well_formed(&parse, &text);
        assert!(
            !parse.errors().is_empty(),
            "{} has no errors",
            path.display()
        );
        expect_file![path.with_extension("rast")].assert_eq(&parse.debug_dump());
    }
}

#[test]
fn testdata_examples_parse_cleanly() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata");
    let mut count = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "mir") {
            let text = std::fs::read_to_string(&path).unwrap();
            let parse = syntax::parse(&text);
            assert_well_formed(&parse, &text);
            assert_eq!(parse.errors(), &[], "{}", path.display());
            count += 1;
        }
    }
    assert!(count >= 5);
}

/// After a missing `)`, `}` or a broken statement, every later graph still has a
/// full tree: its name, parameters and a closed body.
#[test]
fn later_graphs_survive_errors() {
    for (fixture, graph) in [
        ("01_missing_rparen", "g"),
        ("03_missing_rbrace", "g"),
        ("04_bad_weight", "g"),
        ("05_garbage", "ok"),
    ] {
        let path =
            Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("test_data/err/{fixture}.mir"));
        let text = std::fs::read_to_string(path).unwrap();
        let file = syntax::parse(&text).tree();
        let g = file
            .graphs()
            .find(|g| g.name().is_some_and(|n| n.text() == graph))
            .unwrap_or_else(|| panic!("{fixture}: graph `{graph}` lost"));
        let body = g.body().expect("body");
        assert!(
            body.r_brace().is_some(),
            "{fixture}: body of `{graph}` not closed"
        );
        assert!(body.stmts().count() >= 1);
        assert!(!g
            .syntax()
            .descendants()
            .any(|n| n.kind() == syntax::SyntaxKind::ERROR));
    }
}

use syntax::AstNode;

#[test]
fn typed_ast_reads_the_mlp_example() {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/mlp.mir"),
    )
    .unwrap();
    let file = syntax::parse(&text).tree();
    let weights: Vec<String> = file.weights().map(|w| w.name().unwrap().text()).collect();
    assert_eq!(
        weights,
        ["fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"]
    );
    let mlp = file.graphs().next().unwrap();
    assert_eq!(mlp.name().unwrap().text(), "mlp");
    let params: Vec<String> = mlp
        .params()
        .map(|p| p.ty().unwrap().syntax().to_string())
        .collect();
    assert_eq!(params, ["f32[B, 784]"]);
    assert_eq!(mlp.ret_type().unwrap().syntax().to_string(), "f32[B, 10]");
    let stmts: Vec<_> = mlp.body().unwrap().stmts().collect();
    assert_eq!(stmts.len(), 2);
    let syntax::ast::Stmt::Let(h) = &stmts[0] else {
        panic!()
    };
    let syntax::ast::Expr::Call(relu) = h.value().unwrap() else {
        panic!()
    };
    assert_eq!(relu.callee().unwrap().syntax().to_string(), "ReLU");
    let syntax::ast::Expr::Call(bias_add) = relu.args().next().unwrap().value().unwrap() else {
        panic!()
    };
    let syntax::ast::Expr::Call(matmul) = bias_add.args().next().unwrap().value().unwrap() else {
        panic!()
    };
    let kw: Vec<_> = matmul
        .args()
        .filter_map(|a| match a {
            syntax::ast::Arg::Keyword(k) => Some((
                k.name().unwrap().text(),
                k.value().unwrap().syntax().to_string(),
            )),
            _ => None,
        })
        .collect();
    assert_eq!(kw, [("transpose_b".to_string(), "true".to_string())]);
}

/// Pathologically deep nesting is an error, not a stack overflow, even on a
/// thread with a 2 MiB stack (what the language server's workers get).
#[test]
fn deep_nesting_is_reported_not_overflowed() {
    let handle = std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(|| {
            for text in [
                format!(
                    "graph f(x) {{\n  a = {}x{}\n  return a\n}}\n",
                    "(".repeat(100_000),
                    ")".repeat(100_000)
                ),
                format!(
                    "graph f(x) {{\n  a = {}x\n  return a\n}}\n",
                    "-".repeat(100_000)
                ),
                format!(
                    "graph f(x: {}f32{}) {{ return x }}\n",
                    "(".repeat(50_000),
                    ",)".repeat(50_000)
                ),
            ] {
                let parse = syntax::parse(&text);
                assert_eq!(parse.syntax_node().to_string(), text);
                assert!(parse
                    .errors()
                    .iter()
                    .any(|e| e.message.contains("nested too deeply")));
                drop(parse);
            }
        })
        .unwrap();
    handle.join().expect("no stack overflow");
}

/// Issue 14, finding 5: a lone `\r` ends a line (and so a statement or a
/// comment) as `\n` and `\r\n` do.
#[test]
fn cr_lf_and_crlf_end_lines() {
    use syntax::SyntaxKind::*;
    let kinds = |text: &str| -> Vec<syntax::SyntaxKind> {
        syntax::tokenize(text).0.iter().map(|t| t.kind).collect()
    };
    for nl in ["\n", "\r\n", "\r"] {
        assert_eq!(
            kinds(&format!("a{nl}# note{nl}b")),
            [IDENT, NEWLINE, COMMENT, NEWLINE, IDENT],
            "{nl:?}"
        );
        let text = format!("graph f(x: f32[3]) {{{nl}  y = Exp(x){nl}  return y{nl}}}{nl}");
        let parse = syntax::parse(&text);
        assert!(parse.errors().is_empty(), "{nl:?}: {:?}", parse.errors());
        assert_well_formed(&parse, &text);
    }
    // Two statements on lines split by a lone CR are two statements.
    let parse = syntax::parse("graph f(x: f32[3]) {\r  y = x\r  return y\r}\r");
    assert!(parse.errors().is_empty(), "{:?}", parse.errors());
}
