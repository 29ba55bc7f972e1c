//! Property tests: the parser takes any text without panicking and reproduces it
//! exactly, and incremental reparsing agrees with parsing from scratch.

use std::path::Path;

use proptest::prelude::*;
use syntax::{TextEdit, TextRange, TextSize};

fn examples() -> Vec<String> {
    let mut texts = Vec::new();
    for dir in ["../../testdata", "test_data/ok", "test_data/err"] {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
        let mut paths: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        paths.sort();
        for path in paths {
            if path.extension().is_some_and(|e| e == "mir") {
                texts.push(std::fs::read_to_string(path).unwrap());
            }
        }
    }
    texts
}

fn floor_char_boundary(text: &str, mut i: usize) -> usize {
    i = i.min(text.len());
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// Text that looks like `.mir` a good part of the time: tokens of the language
/// mixed with arbitrary characters.
fn mir_like() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("graph ".to_string()),
        Just("param ".to_string()),
        Just("return ".to_string()),
        Just("if ".to_string()),
        Just("else ".to_string()),
        Just("fn".to_string()),
        Just("=>".to_string()),
        Just("->".to_string()),
        Just("(".to_string()),
        Just(")".to_string()),
        Just("[".to_string()),
        Just("]".to_string()),
        Just("{".to_string()),
        Just("}".to_string()),
        Just(",".to_string()),
        Just(";".to_string()),
        Just(":".to_string()),
        Just("=".to_string()),
        Just(" + ".to_string()),
        Just("\n".to_string()),
        Just("# c\n".to_string()),
        Just("\"s\\\"".to_string()),
        Just("%1".to_string()),
        Just("f32[B, ?, *]".to_string()),
        "[a-z_][a-z0-9_.]{0,6}",
        "[0-9]{1,3}(\\.[0-9])?",
        any::<char>().prop_map(|c| c.to_string()),
    ];
    prop::collection::vec(piece, 0..60).prop_map(|v| v.concat())
}

fn check_roundtrip(text: &str) {
    let parse = syntax::parse(text);
    assert_eq!(parse.syntax_node().to_string(), text);
    // Typed accessors must not panic on any tree.
    for item in parse.tree().items() {
        let _ = item.name();
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn any_text_round_trips(text in mir_like()) {
        check_roundtrip(&text);
    }

    #[test]
    fn arbitrary_unicode_round_trips(text in "\\PC{0,200}") {
        check_roundtrip(&text);
    }

    #[test]
    fn truncated_and_spliced_examples_round_trip(
        a in any::<prop::sample::Index>(),
        b in any::<prop::sample::Index>(),
        cut1 in any::<prop::sample::Index>(),
        cut2 in any::<prop::sample::Index>(),
    ) {
        let texts = examples();
        let x = &texts[a.index(texts.len())];
        let y = &texts[b.index(texts.len())];
        let i = floor_char_boundary(x, cut1.index(x.len() + 1));
        let j = floor_char_boundary(y, cut2.index(y.len() + 1));
        check_roundtrip(&x[..i]);
        check_roundtrip(&format!("{}{}", &x[..i], &y[j..]));
    }

    /// Reparsing after an edit gives exactly the tree and errors of a full parse.
    #[test]
    fn reparse_agrees_with_full_parse(
        file in any::<prop::sample::Index>(),
        at in any::<prop::sample::Index>(),
        len in 0usize..12,
        insert in prop_oneof![
            Just(String::new()),
            Just("x".to_string()),
            Just(" + 1".to_string()),
            Just("\n  a = b\n".to_string()),
            Just("(".to_string()),
            Just("}".to_string()),
            Just("graph".to_string()),
            Just("\ngraph g() { return 1 }\n".to_string()),
            Just(" *".to_string()),
            Just("[1.0, ".to_string()),
            Just("\"".to_string()),
            Just("# ".to_string()),
            Just("\nparam".to_string()),
            Just("import ".to_string()),
            Just("\r".to_string()),
            "[a-z0-9 ()\\[\\]{},=+\\n#\"]{0,8}",
        ],
    ) {
        let texts = examples();
        let text = &texts[file.index(texts.len())];
        let start = floor_char_boundary(text, at.index(text.len() + 1));
        let end = floor_char_boundary(text, start + len);
        let edit = TextEdit {
            delete: TextRange::new(TextSize::from(start as u32), TextSize::from(end as u32)),
            insert: insert.clone(),
        };
        let old = syntax::parse(text);
        let mut new_text = text.clone();
        edit.apply(&mut new_text);
        let incremental = old.reparse(&edit);
        let full = syntax::parse(&new_text);
        prop_assert_eq!(incremental.syntax_node().to_string(), new_text);
        prop_assert_eq!(incremental.green(), full.green());
        prop_assert_eq!(incremental.errors(), full.errors());
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// A sequence of edits, each reparsed from the last reparse (as an editor's
    /// keystrokes are), agrees with a full parse after every step.
    #[test]
    fn reparse_sequences_agree_with_full_parse(
        file in any::<prop::sample::Index>(),
        edits in prop::collection::vec(
            (
                any::<prop::sample::Index>(),
                0usize..6,
                prop_oneof![
                    Just(String::new()),
                    Just(" *".to_string()),
                    Just("(".to_string()),
                    Just(")".to_string()),
                    Just("{".to_string()),
                    Just("}".to_string()),
                    Just("\n".to_string()),
                    Just("\"".to_string()),
                    Just("graph g() {\n".to_string()),
                    "[a-z0-9 (){},=+\\n#]{0,4}",
                ],
            ),
            1..24,
        ),
    ) {
        let texts = examples();
        let mut text = texts[file.index(texts.len())].clone();
        // Three copies: items before and after every edit.
        text = text.repeat(3);
        let mut parse = syntax::parse(&text);
        for (at, len, insert) in edits {
            let start = floor_char_boundary(&text, at.index(text.len() + 1));
            let end = floor_char_boundary(&text, start + len);
            let edit = TextEdit {
                delete: TextRange::new(TextSize::from(start as u32), TextSize::from(end as u32)),
                insert,
            };
            edit.apply(&mut text);
            parse = parse.reparse(&edit);
            let full = syntax::parse(&text);
            prop_assert_eq!(parse.green(), full.green());
            prop_assert_eq!(parse.errors(), full.errors());
        }
    }
}

/// An edit inside one graph's body reuses the untouched items' green nodes.
#[test]
fn reparse_of_an_edit_in_one_graph_shares_the_other_graphs() {
    let text = "graph f(x) {\n  a = x\n  return a\n}\n\ngraph g(y) {\n  return y\n}\n";
    let old = syntax::parse(text);
    let offset = text.find("a = x").unwrap() + 4;
    let edit = TextEdit {
        delete: TextRange::new(
            TextSize::from(offset as u32),
            TextSize::from(offset as u32 + 1),
        ),
        insert: "Neg(x)".to_string(),
    };
    let new = old.reparse(&edit);
    let old_g = old.syntax_node().children().nth(1).unwrap();
    let new_g = new.syntax_node().children().nth(1).unwrap();
    // Same green node (pointer-equal), not just equal text.
    assert!(std::ptr::eq(old_g.green(), new_g.green()));
    assert!(new.syntax_node().to_string().contains("a = Neg(x)"));
}

/// An edit that leaves a syntax error in one graph (as typing does) and the edit
/// that repairs it are both reparsed in a window: the other items keep their
/// green nodes, and the errors are those of a full parse.
#[test]
fn reparse_of_an_edit_with_a_syntax_error_shares_the_other_items() {
    let text = "param w: f32[2] = zeros\n\ngraph f(x) {\n  a = x\n  return a\n}\n\ngraph g(y) {\n  return y\n}\n\ngraph h(z) {\n  return z\n}\n";
    let offset = TextSize::from((text.find("a = x").unwrap() + 5) as u32);
    let broken = TextEdit {
        delete: TextRange::empty(offset),
        insert: " *".to_string(),
    };
    let old = syntax::parse(text);
    let new = old.reparse(&broken);
    let mut new_text = text.to_string();
    broken.apply(&mut new_text);
    let full = syntax::parse(&new_text);
    assert_eq!(new.green(), full.green());
    assert_eq!(new.errors(), full.errors());
    assert!(!new.errors().is_empty());
    let same = |a: &syntax::Parse, b: &syntax::Parse, i: usize| {
        let x = a.syntax_node().children().nth(i).unwrap();
        let y = b.syntax_node().children().nth(i).unwrap();
        std::ptr::eq(x.green(), y.green())
    };
    // The weight and `g` before and after the window, `h` after it.
    for i in [0, 2, 3] {
        assert!(same(&old, &new, i), "item {i} was rebuilt");
    }
    let repaired = TextEdit {
        delete: TextRange::at(offset, TextSize::from(2)),
        insert: String::new(),
    };
    let back = new.reparse(&repaired);
    assert_eq!(back.green(), old.green());
    assert!(back.errors().is_empty());
    for i in [0, 2, 3] {
        assert!(same(&new, &back, i), "item {i} was rebuilt on repair");
    }
}

/// The binary-searching `token_at_offset` answers as rowan's own walk does,
/// at every offset of every example (and of the examples with errors).
#[test]
fn token_at_offset_agrees_with_rowan() {
    use rowan::TokenAtOffset::{Between, None as Nothing, Single};
    for text in examples() {
        let root = syntax::parse(&text).syntax_node();
        for offset in 0..=text.len() {
            let offset = TextSize::from(offset as u32);
            let ours = syntax::token_at_offset(&root, offset);
            let theirs = root.token_at_offset(offset);
            let same = match (&ours, &theirs) {
                (Single(a), Single(b)) => a == b,
                (Between(a, b), Between(c, d)) => a == c && b == d,
                (Nothing, Nothing) => true,
                _ => false,
            };
            assert!(
                same,
                "at {offset:?} of {text:?}: {ours:?} against {theirs:?}"
            );
        }
    }
}
