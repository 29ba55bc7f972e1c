use std::path::Path;

use expect_test::{expect, Expect};
use proptest::prelude::*;
use syntax::SyntaxKind;

fn check(input: &str, expected: Expect) {
    let formatted = fmt::format(input).unwrap();
    expected.assert_eq(&formatted);
    assert_eq!(
        fmt::format(&formatted).unwrap(),
        formatted,
        "not idempotent"
    );
}

#[test]
fn normalises_spacing() {
    check(
        "graph   f( x ,y:f32[ 2,3 ] )->f32[2,3]{return Add( x,y )}",
        expect![[r#"
            graph f(x, y: f32[2, 3]) -> f32[2, 3] { return Add(x, y) }
        "#]],
    );
}

#[test]
fn operators_keywords_and_literals() {
    check(
        "graph f(a,b){\n x=-a*b+not a and b\n y = (a,)\n z=t[ 0 ]\n w=[ [1,2],[3,4] ]\n k=MatMul(a,b,transpose_b = true)\n l=fn( v )=>v*v\n return(x,y)\n}",
        expect![[r#"
            graph f(a, b) {
              x = -a * b + not a and b
              y = (a,)
              z = t[0]
              w = [[1, 2], [3, 4]]
              k = MatMul(a, b, transpose_b=true)
              l = fn(v) => v * v
              return (x, y)
            }
        "#]],
    );
}

#[test]
fn indents_blocks_and_keeps_comments() {
    check(
        "# header\n\n\n\ngraph f(n) {   # why\n\n\n      r = if n < 1 { 0 } else {\n   # inner\n a = n\n       a   # tail\n}\n return r\n}\ngraph g(x) { return x }",
        expect![[r#"
            # header

            graph f(n) {  # why

              r = if n < 1 { 0 } else {
                # inner
                a = n
                a  # tail
              }
              return r
            }

            graph g(x) { return x }
        "#]],
    );
}

#[test]
fn continuation_lines() {
    check(
        "graph f(x,\ny) {\nm = Concat((x,\ny), axis=0)\nlong = x +\ny\nreturn m\n}",
        expect![[r#"
            graph f(x,
              y) {
              m = Concat((x,
                y), axis=0)
              long = x +
                  y
              return m
            }
        "#]],
    );
}

#[test]
fn params_group_and_graphs_are_separated() {
    check(
        "param a: f32[2] = zeros\nparam b: f32[2] = ones\ngraph f() { return a }\n\n\n\ngraph g() { return b }\n",
        expect![[r#"
            param a: f32[2] = zeros
            param b: f32[2] = ones

            graph f() { return a }

            graph g() { return b }
        "#]],
    );
}

#[test]
fn refuses_files_with_syntax_errors() {
    let errors = fmt::format("graph f(x) {\n  a = Add(x\n  return a\n}\n").unwrap_err();
    assert!(
        errors[0].message.contains("expected `,` or `)`"),
        "{errors:?}"
    );
}

/// The checked formatter asks its caller every few thousand tokens whether
/// to go on (a language server unwinds from there when an edit comes), and
/// formats as the plain one does.
#[test]
fn the_checked_formatter_asks_as_it_goes() {
    let text: String = (0..400)
        .map(|i| format!("graph g{i}(x:f32[3]){{\n    y=Exp( x )+1.0\n  return y\n}}\n"))
        .collect();
    let parse = syntax::parse(&text);
    let mut asked = 0;
    let checked = fmt::format_parse_checked(&parse, &mut || asked += 1).unwrap();
    assert_eq!(checked, fmt::format(&text).unwrap());
    let tokens = parse
        .syntax_node()
        .descendants_with_tokens()
        .filter(|e| e.as_token().is_some())
        .count();
    assert!(tokens > 8192, "{tokens} tokens");
    assert_eq!(asked, tokens / 4096, "{tokens} tokens");
}

fn example_files() -> Vec<(String, String)> {
    let mut out = Vec::new();
    for dir in ["../../testdata", "../syntax/test_data/ok"] {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
        let mut paths: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        paths.sort();
        for p in paths {
            if p.extension().is_some_and(|e| e == "mir") {
                out.push((
                    p.display().to_string(),
                    std::fs::read_to_string(&p).unwrap(),
                ));
            }
        }
    }
    out
}

/// The significant tokens (comments trimmed): formatting may only change whitespace.
fn token_stream(text: &str) -> Vec<(SyntaxKind, String)> {
    syntax::parse(text)
        .syntax_node()
        .descendants_with_tokens()
        .filter_map(|e| e.into_token())
        .filter(|t| !matches!(t.kind(), SyntaxKind::WHITESPACE | SyntaxKind::NEWLINE))
        .map(|t| (t.kind(), t.text().trim_end().to_string()))
        .collect()
}

fn check_invariants(name: &str, text: &str) {
    let once = fmt::format(text).unwrap_or_else(|e| panic!("{name}: {e:?}"));
    let twice = fmt::format(&once).unwrap_or_else(|e| panic!("{name} (formatted): {e:?}"));
    assert_eq!(once, twice, "{name}: formatting is not idempotent");
    assert_eq!(
        token_stream(text),
        token_stream(&once),
        "{name}: tokens changed"
    );
    assert!(syntax::parse(&once).errors().is_empty());
}

#[test]
fn testdata_is_formatted_and_examples_are_stable() {
    for (name, text) in example_files() {
        check_invariants(&name, &text);
        if name.contains("testdata") {
            assert_eq!(
                fmt::format(&text).unwrap(),
                text,
                "{name} is not in canonical form"
            );
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Re-spacing an example (any horizontal space between tokens, extra blank
    /// lines) never changes what the formatter keeps: tokens, and a fixed point.
    #[test]
    fn formatting_is_idempotent_and_keeps_tokens(
        file in any::<prop::sample::Index>(),
        spaces in prop::collection::vec(0usize..4, 512),
        newlines in prop::collection::vec(1usize..4, 512),
    ) {
        let files = example_files();
        let (name, text) = &files[file.index(files.len())];
        let parse = syntax::parse(text);
        let mut respaced = String::new();
        let (mut s, mut n) = (0, 0);
        let mut had_space = false;
        for token in parse.syntax_node().descendants_with_tokens().filter_map(|e| e.into_token()) {
            match token.kind() {
                SyntaxKind::WHITESPACE => had_space = true,
                SyntaxKind::NEWLINE => {
                    n += 1;
                    respaced.push_str(&"\n".repeat(newlines[n % newlines.len()]));
                    had_space = false;
                }
                _ => {
                    s += 1;
                    // Where the source had space, keep at least one (`if n` must
                    // not become `ifn`); elsewhere any amount may be added.
                    let count = spaces[s % spaces.len()].max(usize::from(had_space));
                    respaced.push_str(&" \t  "[..count]);
                    respaced.push_str(token.text());
                    had_space = false;
                }
            }
        }
        check_invariants(name, &respaced);
    }
}

/// Issue 14, finding 5: a file keeps its own line ending (its first line
/// break's), and a lone CR separates lines as LF does.
#[test]
fn keeps_the_files_line_ending() {
    let lf = "graph f(x) {\n  # note\n  y = Exp(x)\n  return y\n}\n";
    for nl in ["\n", "\r\n", "\r"] {
        let input = format!("graph f( x ){{{nl}  # note{nl}y=Exp( x ){nl}  return y{nl}}}{nl}");
        let formatted = fmt::format(&input).unwrap();
        assert_eq!(formatted, lf.replace('\n', nl), "{nl:?}");
        assert_eq!(fmt::format(&formatted).unwrap(), formatted, "{nl:?}");
    }
    // A file of mixed endings takes its first one throughout.
    let mixed = "graph f(x) {\r\n  y = x\n  return y\r}\n";
    assert_eq!(
        fmt::format(mixed).unwrap(),
        "graph f(x) {\r\n  y = x\r\n  return y\r\n}\r\n"
    );
}
