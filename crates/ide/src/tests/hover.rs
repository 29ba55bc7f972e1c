//! Hover: types, shapes, signatures and documentation, as well-formed markdown.

use super::*;

// ---------------------------------------------------------------------------
// Hover.

#[test]
fn hover_binding_shows_type_and_shape() {
    check_hover(
        r#"
        graph f(x: f32[2, 3]) {
          s$0 = ReduceSum(x, axis=1)
          return s
        }
        "#,
        expect![[r#"
            s
            ---
            ```mindir
            let s: f32[2]
            ```
        "#]],
    );
}

#[test]
fn hover_use_of_a_parameter() {
    check_hover(
        r#"
        graph f(x: f32[B, 784]) {
          return ReLU(x$0)
        }
        "#,
        expect![[r#"
            x
            ---
            ```mindir
            param x: f32[B, 784]
            ```

            declared `f32[B, 784]`
        "#]],
    );
}

#[test]
fn hover_primitive_shows_signature_docs_and_result() {
    let f = Fixture::new(
        r#"
        graph f(a: f32[2, 3], b: f32[4, 3]) {
          return Mat$0Mul(a, b, transpose_b=true)
        }
        "#,
    );
    let h = f.analysis().hover(f.offset).unwrap();
    assert_eq!(&f.text[h.range], "MatMul");
    assert!(
        h.markdown.starts_with("call result: `f32[2, 4]`"),
        "{}",
        h.markdown
    );
    assert!(h
        .markdown
        .contains("MatMul(x, y, transpose_a=false, transpose_b=false)"));
    assert!(h.markdown.contains("- `transpose_b`:"));
}

#[test]
fn hover_mindspore_primitive_without_support() {
    check_hover(
        r#"
        graph f(x: f32[3]) {
          return CTCGreedy$0Decoder(x, x)
        }
        "#,
        expect![[r#"
            CTCGreedyDecoder
            ---
            ```mindir
            CTCGreedyDecoder(inputs: Tensor, sequence_length: Tensor, merge_repeated: bool = True)
            ```

            **Not supported by mirdsl yet** (`E0145`): a MindSpore 2.10 primitive. Performs greedy decoding on the logits given in inputs.

            `CTCGreedyDecoder` is an old-style primitive: `merge_repeated` is an attribute on the primitive.

            Defined in MindSpore's `ops/operations/nn_ops.py`.
        "#]],
    );
}

#[test]
fn hover_attribute_name() {
    check_hover(
        r#"
        graph f(a: f32[2, 3], b: f32[4, 3]) {
          return MatMul(a, b, transpose$0_b=true)
        }
        "#,
        expect![[r#"
            transpose_b
            ---
            `MatMul` attribute `transpose_b` (bool, default `false`)

            Transpose `y` first.
        "#]],
    );
}

#[test]
fn hover_graph_call_shows_signature_and_result() {
    check_hover(
        r#"
        # Adds one.
        graph inc(x) { return x + 1 }
        graph main(v: f32[3]) {
          return in$0c(v)
        }
        "#,
        expect![[r#"
            inc
            ---
            ```mindir
            graph inc(x)
            ```

            Adds one.

            ---

            call result: `f32[3]`
        "#]],
    );
}

#[test]
fn hover_graph_definition_with_inferred_return() {
    check_hover(
        r#"
        graph tw$0ice(x: f32[3]) { return x * 2.0 }
        "#,
        expect![[r#"
            twice
            ---
            ```mindir
            graph twice(x: f32[3]) -> f32[3]
            ```
        "#]],
    );
}

#[test]
fn hover_weight() {
    check_hover(
        r#"
        param fc1.weight: f32[128, 784] = normal(std=0.01, seed=1)
        graph f(x: f32[B, 784]) {
          return MatMul(x, fc1.wei$0ght, transpose_b=true)
        }
        "#,
        expect![[r#"
            fc1.weight
            ---
            ```mindir
            param fc1.weight: f32[128, 784] = normal(std=0.01, seed=1)
            ```

            weight, 100352 elements
        "#]],
    );
}

#[test]
fn hover_expression_operator() {
    check_hover(
        r#"
        graph f(x: f32[3], y: f32[2, 1]) {
          return x $0+ y
        }
        "#,
        expect![[r#"
            x + y
            ---
            ```mindir
            f32[2, 3]
            ```
        "#]],
    );
}

#[test]
fn hover_tuple_destructuring_and_closure() {
    check_hover(
        r#"
        graph f(x: f32[4, 8], gamma: f32[8], beta: f32[8]) {
          (y, m$0ean, var) = LayerNorm(x, gamma, beta)
          return y
        }
        "#,
        expect![[r#"
            mean
            ---
            ```mindir
            let mean: f32[4, 1]
            ```
        "#]],
    );
    check_hover(
        r#"
        graph outer(a: f32[2]) {
          graph inner(c) { return a + c }
          return in$0ner
        }
        "#,
        expect![[r#"
            inner
            ---
            ```mindir
            graph inner(c)
            ```

            nested in `outer`
        "#]],
    );
}

#[test]
fn hover_dtype_and_metafunction() {
    check_hover(
        r#"
        graph f(x: f32[3]) { return Cast(x, i$032) }
        "#,
        expect![[r#"
            i32
            ---
            ```mindir
            i32
            ```

            dtype `i32`
        "#]],
    );
    let f = Fixture::new(
        r#"
        graph loss(x: f32[3]) { return ReduceSum(x * x) }
        graph g(x: f32[3]) { return gr$0ad(loss)(x) }
        "#,
    );
    let h = f.analysis().hover(f.offset).unwrap();
    assert!(
        h.markdown.contains("MindSpore's `GradOperation()`"),
        "{}",
        h.markdown
    );
}

#[test]
fn hover_non_ascii_text_around() {
    check_hover(
        r#"
        # 日本語のコメント 😀
        graph f(x: f32[3]) {
          s = "émoji 😀"
          y$0 = x * 2.0 # ü
          return (y, s)
        }
        "#,
        expect![[r#"
            y
            ---
            ```mindir
            let y: f32[3]
            ```
        "#]],
    );
}

#[test]
fn hover_in_intact_graph_of_broken_file() {
    check_hover(
        r#"
        graph broken(x {
          return x +
        }
        graph ok(x: f32[2]) {
          y$0 = x * 2.0
          return y
        }
        "#,
        expect![[r#"
            y
            ---
            ```mindir
            let y: f32[2]
            ```
        "#]],
    );
}

/// Markdown a client renders as meant: code blocks hold no backticks (the
/// DSL has none), and outside them every run of backticks opening an inline
/// code span is closed by a run of the same length on its line.
fn assert_markdown_well_formed(md: &str) {
    let mut in_block = false;
    for line in md.lines() {
        if line.starts_with("```") {
            in_block = !in_block;
            continue;
        }
        if in_block {
            assert!(
                !line.contains('`'),
                "a backtick in a code block: {line:?}\n{md}"
            );
            continue;
        }
        let bytes = line.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            if bytes[i] != b'`' {
                i += 1;
                continue;
            }
            let n = bytes[i..].iter().take_while(|&&b| b == b'`').count();
            // Find the closing run of exactly n backticks.
            let mut j = i + n;
            let mut closed = None;
            while j < bytes.len() {
                if bytes[j] == b'`' {
                    let m = bytes[j..].iter().take_while(|&&b| b == b'`').count();
                    if m == n {
                        closed = Some(j + m);
                        break;
                    }
                    j += m;
                } else {
                    j += 1;
                }
            }
            match closed {
                Some(end) => i = end,
                None => panic!("an unclosed run of {n} backtick(s) in {line:?}\n{md}"),
            }
        }
    }
    assert!(!in_block, "an unclosed code block\n{md}");
}

/// Issue 14, finding 5: doc comments are found above an item whatever the
/// file's line breaks.
#[test]
fn hover_doc_comments_with_any_line_break() {
    for nl in ["\n", "\r\n", "\r"] {
        let text = format!("# Adds one.{nl}# Twice.{nl}graph inc(x) {{ return x + 1 }}{nl}graph main(v: f32[3]) {{{nl}  return inc(v){nl}}}{nl}");
        let f = Fixture::new(&text);
        let at = TextSize::from(f.text.find("inc(v)").unwrap() as u32);
        let h = f.analysis().hover(at).unwrap();
        assert!(
            h.markdown.contains("Adds one.\nTwice."),
            "{nl:?}: {}",
            h.markdown
        );
    }
}

/// Issue 14, finding 7: hovers over functions made by metafunctions (whose
/// descriptions name other things) are well-formed markdown.
#[test]
fn hover_markdown_is_well_formed_for_functions_of_functions() {
    let text = r#"
        graph loss(x: f32[3]) {
          return ReduceSum(x * x)
        }
        graph main(x: f32[3]) {
          g = grad(loss)
          v = value_and_grad(loss)
          sq = fn(a) => a * a
          return (g(x), v(x), sq(x), vjp(loss)(x))
        }
        "#;
    let f = Fixture::new(text);
    let mut checked = 0;
    for (i, _) in f.text.char_indices() {
        if let Some(h) = f.analysis().hover(TextSize::from(i as u32)) {
            assert_markdown_well_formed(&h.markdown);
            checked += 1;
        }
    }
    assert!(checked > 20, "{checked} hovers");
    // The description itself reads well.
    let at = f.text.find("grad(loss)").unwrap();
    let h = f.analysis().hover(TextSize::from(at as u32)).unwrap();
    assert!(h.markdown.contains("grad of graph loss"), "{}", h.markdown);
}

#[test]
fn hover_on_a_lambda_shows_its_inferred_signature() {
    check_hover(
        "graph f(x: f32[4]) -> f32[4] {\n  g$0 = fn(a) => a * x\n  return g(x)\n}\n",
        expect![[r#"
            g
            ---
            ```mindir
            let g: fn(a: f32[4]) -> f32[4]
            ```
        "#]],
    );
    check_hover(
        "graph f(x: f32[4]) -> f32[4] {\n  g = f$0n(a) => a * x\n  return g(x)\n}\n",
        expect![[r#"
            fn
            ---
            ```mindir
            fn(a: f32[4]) -> f32[4]
            ```

            a lambda
        "#]],
    );
    // Never called: what is known without a call.
    check_hover(
        "graph f(x: f32[4]) -> f32[4] {\n  _g$0 = fn(a) => a * x\n  return x\n}\n",
        expect![[r#"
            _g
            ---
            ```mindir
            let _g: fn(a: ?) -> ?
            ```
        "#]],
    );
}
