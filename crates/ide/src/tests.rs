//! Fixture tests of every feature, with `$0` cursors and expect-test snapshots
//! (`UPDATE_EXPECT=1 cargo test -p ide` rewrites them).

use expect_test::{expect, Expect};
use syntax::{TextRange, TextSize};

use crate::fixture::Fixture;
use crate::{CompletionKind, TOKEN_KINDS, TOKEN_MODIFIERS};

// ---------------------------------------------------------------------------
// Helpers.

fn check_hover(fixture: &str, expect: Expect) {
    let f = Fixture::new(fixture);
    let actual = match f.analysis().hover(f.offset) {
        Some(h) => format!("{}\n---\n{}\n", &f.text[h.range], h.markdown),
        None => "no hover\n".into(),
    };
    expect.assert_eq(&actual);
}

fn check_inlays(fixture: &str, expect: Expect) {
    let f = Fixture::new(fixture);
    let hints = f.analysis().inlay_hints(None);
    let mut out = String::new();
    let mut last = 0;
    for h in hints {
        let o = usize::from(h.offset);
        out.push_str(&f.text[last..o]);
        out.push_str(&format!("⟨{}⟩", h.label));
        last = o;
    }
    out.push_str(&f.text[last..]);
    expect.assert_eq(&out);
}

fn check_goto(fixture: &str, expect: Expect) {
    let f = Fixture::new(fixture);
    let actual = match f.analysis().goto_definition(f.offset) {
        Some(nav) => f.annotate(&[
            (nav.focus_range, "def".into()),
            (nav.full_range, "full".into()),
        ]),
        None => "no definition\n".into(),
    };
    expect.assert_eq(&actual);
}

fn check_refs(fixture: &str, expect: Expect) {
    let f = Fixture::new(fixture);
    let refs = f.analysis().references(f.offset, true);
    let ranges: Vec<(TextRange, String)> = refs.into_iter().map(|r| (r, String::new())).collect();
    expect.assert_eq(&f.annotate(&ranges));
}

fn check_highlight(fixture: &str, expect: Expect) {
    let f = Fixture::new(fixture);
    let hs = f.analysis().highlight(f.offset);
    let ranges: Vec<(TextRange, String)> = hs
        .into_iter()
        .map(|h| (h.range, if h.is_def { "w".into() } else { "r".into() }))
        .collect();
    expect.assert_eq(&f.annotate(&ranges));
}

fn check_rename(fixture: &str, new_name: &str, expect: Expect) {
    let f = Fixture::new(fixture);
    let actual = match f.analysis().rename(f.offset, new_name) {
        Ok(mut edits) => {
            edits.sort_by_key(|e| std::cmp::Reverse(e.range.start()));
            let mut text = f.text.clone();
            for e in edits {
                text.replace_range(
                    usize::from(e.range.start())..usize::from(e.range.end()),
                    &e.new_text,
                );
            }
            text
        }
        Err(e) => format!("error: {e}\n"),
    };
    expect.assert_eq(&actual);
}

fn check_prepare_rename(fixture: &str, expect: Expect) {
    let f = Fixture::new(fixture);
    let actual = match f.analysis().prepare_rename(f.offset) {
        Ok((r, text)) => format!("{:?} {text}\n", r),
        Err(e) => format!("error: {e}\n"),
    };
    expect.assert_eq(&actual);
}

/// Completions without the primitives (unless `prims`), one a line.
fn completion_list(fixture: &str, prims: bool) -> String {
    let f = Fixture::new(fixture);
    let items = f.analysis().completions(f.offset);
    let mut out = String::new();
    let mut prim_count = 0;
    let mut unsupported = false;
    for c in &items {
        let not_supported = c
            .detail
            .as_deref()
            .is_some_and(|d| d.starts_with("not supported yet"));
        if c.kind == CompletionKind::Primitive && not_supported {
            unsupported = true;
            continue;
        }
        if c.kind == CompletionKind::Primitive && !prims {
            prim_count += 1;
            continue;
        }
        out.push_str(&format!("{:?} {}", c.kind, c.label));
        if c.is_snippet {
            out.push_str(&format!(" => {}", c.insert_text.replace('\n', "⏎")));
        }
        if let Some(d) = &c.detail {
            out.push_str(&format!("  // {d}"));
        }
        out.push('\n');
    }
    if prim_count > 0 {
        out.push_str(&format!("... and {prim_count} primitives\n"));
    }
    if unsupported {
        out.push_str("... then MindSpore primitives mirdsl does not support yet\n");
    }
    if let Some(c) = items.first() {
        out.push_str(&format!("replace: {:?}\n", &f.text[c.replace]));
    }
    out
}

fn check_completions(fixture: &str, expect: Expect) {
    expect.assert_eq(&completion_list(fixture, false));
}

fn check_signature(fixture: &str, expect: Expect) {
    let f = Fixture::new(fixture);
    let actual = match f.analysis().signature_help(f.offset) {
        Some(h) => {
            let mut label = h.label.clone();
            if let Some(r) = h
                .active_parameter
                .and_then(|i| h.parameters.get(i))
                .map(|p| p.0.clone())
            {
                label.insert(r.end, '>');
                label.insert(r.start, '<');
            }
            format!(
                "{label}\nactive: {:?}\ndoc: {}\n",
                h.active_parameter,
                h.documentation.as_ref().map_or("no", |d| if d.is_empty() {
                    "empty"
                } else {
                    "yes"
                })
            )
        }
        None => "no signature\n".into(),
    };
    expect.assert_eq(&actual);
}

fn check_tokens(fixture: &str, expect: Expect) {
    let f = Fixture::new(fixture);
    let range = (!f.range.is_empty()).then_some(f.range);
    let tokens = f.analysis().semantic_tokens(range);
    let mut out = String::new();
    for t in tokens {
        let mods: Vec<&str> = (0..TOKEN_MODIFIERS.len())
            .filter(|i| t.modifiers & (1 << i) != 0)
            .map(|i| TOKEN_MODIFIERS[i])
            .collect();
        out.push_str(&format!(
            "{:<14} {}{}\n",
            &f.text[t.range],
            TOKEN_KINDS[t.kind as usize],
            if mods.is_empty() {
                String::new()
            } else {
                format!(" +{}", mods.join(" +"))
            }
        ));
    }
    expect.assert_eq(&out);
}

fn check_diagnostics(fixture: &str, expect: Expect) {
    let f = Fixture::new(fixture);
    let ds = f.analysis().diagnostics();
    let mut out = String::new();
    for d in ds.iter() {
        out.push_str(&format!(
            "{} {:?} {:?}: {}\n",
            d.code.as_str(),
            d.range,
            &f.text[d.range],
            d.message
        ));
        for (r, note) in &d.related {
            out.push_str(&format!("  related {:?}: {note}\n", &f.text[*r]));
        }
        for note in &d.notes {
            out.push_str(&format!("  note: {note}\n"));
        }
        for fix in &d.fixes {
            out.push_str(&format!(
                "  fix {}: {:?} -> {:?}\n",
                fix.label, &f.text[fix.range], fix.replacement
            ));
        }
    }
    expect.assert_eq(&out);
}

fn check_actions(fixture: &str, expect: Expect) {
    let f = Fixture::new(fixture);
    let actions = f.analysis().code_actions(f.range);
    let mut out = String::new();
    for a in actions {
        let mut text = f.text.clone();
        let mut edits = a.edits.clone();
        edits.sort_by_key(|e| std::cmp::Reverse(e.range.start()));
        for e in edits {
            text.replace_range(
                usize::from(e.range.start())..usize::from(e.range.end()),
                &e.new_text,
            );
        }
        out.push_str(&format!(
            "{:?} {}{}\n{text}",
            a.kind,
            a.title,
            if a.is_preferred { " (preferred)" } else { "" }
        ));
    }
    expect.assert_eq(&out);
}

// ---------------------------------------------------------------------------
// Diagnostics.

#[test]
fn diagnostics_with_codes_related_and_fixes() {
    check_diagnostics(
        r#"
        graph f(x: f32[2, 3], y: f32[4, 5]) {
          unused = x
          z = MatMul(x, y)
          return Relu(z)
        }
        "#,
        expect![[r#"
            E0201 57..69 "MatMul(x, y)": `MatMul` inner dimensions differ: `x` [2, 3] has 3 columns, `y` [4, 5] has 4 rows
              related "x": this is f32[2, 3]
              related "y": this is f32[4, 5]
              note: transpose_a=false, transpose_b=false
            E0140 79..83 "Relu": unknown primitive `Relu`; did you mean `ReLU`?
              note: MindSpore 2.10's `Relu` is mirdsl's `ReLU`
              fix change to `ReLU`: "Relu" -> "ReLU"
        "#]],
    );
}

#[test]
fn diagnostics_of_a_file_with_syntax_errors_keep_the_rest() {
    check_diagnostics(
        r#"
        graph ok(x: f32[3]) {
          return Undefined(x)
        }
        graph broken(x {
          return x
        }
        graph after(x: f32[3]) {
          return y
        }
        "#,
        expect![[r#"
            E0140 31..40 "Undefined": unknown primitive `Undefined`
            E0001 61..62 "{": expected `,` or `)`, found `{`
            E0100 110..111 "y": `y` is not defined; did you mean `x`?
              fix change to `x`: "y" -> "x"
        "#]],
    );
}

#[test]
fn diagnostics_of_mindspore_primitives_without_support() {
    check_diagnostics(
        r#"
        graph f(x: f32[3]) {
          a = Relu(x)
          return CTCGreedyDecoder(a, a)
        }
        "#,
        expect![[r#"
            E0140 27..31 "Relu": unknown primitive `Relu`; did you mean `ReLU`?
              note: MindSpore 2.10's `Relu` is mirdsl's `ReLU`
              fix change to `ReLU`: "Relu" -> "ReLU"
            E0145 44..60 "CTCGreedyDecoder": `CTCGreedyDecoder` is a MindSpore 2.10 primitive that mirdsl does not support yet
              note: MindSpore 2.10: `CTCGreedyDecoder(inputs: Tensor, sequence_length: Tensor, merge_repeated: bool = True)`
              note: `CTCGreedyDecoder` is an old-style primitive: `merge_repeated` is an attribute on the primitive
        "#]],
    );
}

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

// ---------------------------------------------------------------------------
// Inlay hints.

#[test]
fn inlay_hints_after_bindings_and_unannotated_params() {
    check_inlays(
        r#"
        graph helper(a, b) {
          return a * b
        }
        graph main(x: f32[2, 3]) {
          s = ReduceSum(x, axis=0)
          t: f32[3] = s
          (u, v) = (s, 1)
          w = helper(x, 2.0)
          return (t, u, v, w)
        }
        "#,
        expect![[r#"
            graph helper(a, b) {
              return a * b
            }
            graph main(x: f32[2, 3]) {
              s⟨: f32[3]⟩ = ReduceSum(x, axis=0)
              t: f32[3] = s
              (u⟨: f32[3]⟩, v⟨: i64⟩) = (s, 1)
              w⟨: f32[2, 3]⟩ = helper(x, 2.0)
              return (t, u, v, w)
            }
        "#]],
    );
}

#[test]
fn inlay_hints_in_nested_graphs_and_branches() {
    check_inlays(
        r#"
        graph f(n: i64, x: f32[3]) {
          graph g(y) { return y + x }
          r = if n > 0 { a = g(x); a } else { x }
          return r
        }
        "#,
        expect![[r#"
            graph f(n: i64, x: f32[3]) {
              graph g(y⟨: f32[3]⟩) { return y + x }
              r⟨: f32[3]⟩ = if n > 0 { a⟨: f32[3]⟩ = g(x); a } else { x }
              return r
            }
        "#]],
    );
}

// ---------------------------------------------------------------------------
// Navigation.

#[test]
fn goto_local_definition() {
    check_goto(
        r#"
        graph f(x: f32[3]) {
          y = x + 1
          return y$0
        }
        "#,
        expect![[r#"
            graph f(x: f32[3]) {
              [[y]def = x + 1]full
              return y
            }
        "#]],
    );
}

#[test]
fn goto_parameter_graph_and_weight() {
    check_goto(
        r#"
        graph f(x: f32[3]) {
          return Exp(x$0)
        }
        "#,
        expect![[r#"
            graph f([[x]def: f32[3]]full) {
              return Exp(x)
            }
        "#]],
    );
    check_goto(
        r#"
        param w: f32[3] = ones
        graph g(x) { return x }
        graph f(x: f32[3]) {
          return g$0(x * w)
        }
        "#,
        expect![[r#"
            param w: f32[3] = ones
            [graph [g]def(x) { return x }]full
            graph f(x: f32[3]) {
              return g(x * w)
            }
        "#]],
    );
    check_goto(
        r#"
        param w: f32[3] = ones
        graph f(x: f32[3]) {
          return x * w$0
        }
        "#,
        expect![[r#"
            [param [w]def: f32[3] = ones]full
            graph f(x: f32[3]) {
              return x * w
            }
        "#]],
    );
}

#[test]
fn goto_nested_graph_and_free_variable() {
    check_goto(
        r#"
        graph outer(a: f32[2]) {
          graph inner(c) { return a$0 + c }
          return inner(a)
        }
        "#,
        expect![[r#"
            graph outer([[a]def: f32[2]]full) {
              graph inner(c) { return a + c }
              return inner(a)
            }
        "#]],
    );
    check_goto(
        r#"
        graph outer(a: f32[2]) {
          r = inner$0(a)
          graph inner(c) { return c }
          return r
        }
        "#,
        expect![[r#"
            graph outer(a: f32[2]) {
              r = inner(a)
              [graph [inner]def(c) { return c }]full
              return r
            }
        "#]],
    );
}

#[test]
fn goto_primitive_has_no_location() {
    check_goto(
        r#"
        graph f(x: f32[3]) { return Ex$0p(x) }
        "#,
        expect![[r#"
            no definition
        "#]],
    );
}

#[test]
fn references_of_a_graph_across_the_file() {
    check_refs(
        r#"
        graph sq$0(x) { return x * x }
        graph a(x: f32[3]) { return sq(x) }
        graph b(x: f32[3]) { return sq(sq(x)) + grad(sq)(x) }
        "#,
        expect![[r#"
            graph [sq](x) { return x * x }
            graph a(x: f32[3]) { return [sq](x) }
            graph b(x: f32[3]) { return [sq]([sq](x)) + grad([sq])(x) }
        "#]],
    );
}

#[test]
fn references_of_a_weight_include_wrt() {
    check_refs(
        r#"
        param w$0: f32[3] = ones
        graph loss(x: f32[3]) { return ReduceSum(x * w) }
        graph g(x: f32[3]) { return grad(loss, wrt=(w,))(x) }
        "#,
        expect![[r#"
            param [w]: f32[3] = ones
            graph loss(x: f32[3]) { return ReduceSum(x * [w]) }
            graph g(x: f32[3]) { return grad(loss, wrt=([w],))(x) }
        "#]],
    );
}

#[test]
fn references_of_an_alias_are_its_own() {
    // `y = x` binds `y` to `x`'s node; their references stay apart.
    check_refs(
        r#"
        graph f(x: f32[3]) {
          y$0 = x
          return x + y
        }
        "#,
        expect![[r#"
            graph f(x: f32[3]) {
              [y] = x
              return x + [y]
            }
        "#]],
    );
}

#[test]
fn document_highlight_reads_and_writes() {
    check_highlight(
        r#"
        graph f(x: f32[3]) {
          h = x * 2.0
          return h$0 + Exp(h)
        }
        "#,
        expect![[r#"
            graph f(x: f32[3]) {
              [h]w = x * 2.0
              return [h]r + Exp([h]r)
            }
        "#]],
    );
}

// ---------------------------------------------------------------------------
// Rename.

#[test]
fn rename_local() {
    check_rename(
        r#"
        graph f(x: f32[3]) {
          h$0 = x * 2.0
          graph g(y) { return y + h }
          return g(h)
        }
        "#,
        "hidden",
        expect![[r#"
            graph f(x: f32[3]) {
              hidden = x * 2.0
              graph g(y) { return y + hidden }
              return g(hidden)
            }
        "#]],
    );
}

#[test]
fn rename_graph_and_weight() {
    check_rename(
        r#"
        param w: f32[3] = ones
        graph sq(x) { return x * x * w }
        graph main(x: f32[3]) { return s$0q(x) + grad(sq, wrt=(w,))(x)[0] }
        "#,
        "square",
        expect![[r#"
            param w: f32[3] = ones
            graph square(x) { return x * x * w }
            graph main(x: f32[3]) { return square(x) + grad(square, wrt=(w,))(x)[0] }
        "#]],
    );
    check_rename(
        r#"
        param w$0: f32[3] = ones
        graph sq(x) { return x * x * w }
        graph main(x: f32[3]) { return grad(sq, wrt=(w,))(x)[0] }
        "#,
        "layer.scale",
        expect![[r#"
            param layer.scale: f32[3] = ones
            graph sq(x) { return x * x * layer.scale }
            graph main(x: f32[3]) { return grad(sq, wrt=(layer.scale,))(x)[0] }
        "#]],
    );
}

#[test]
fn rename_refuses_keywords_invalid_names_primitives_and_clashes() {
    let f = r#"
        graph f(x: f32[3]) {
          h$0 = x * 2.0
          k = h
          return Exp(k)
        }
        "#;
    check_rename(
        f,
        "return",
        expect![[r#"
        error: `return` is a keyword
    "#]],
    );
    check_rename(
        f,
        "1abc",
        expect![[r#"
        error: `1abc` is not a valid name
    "#]],
    );
    check_rename(
        f,
        "Exp",
        expect![[r#"
        error: `Exp` is a primitive; the new name would hide it
    "#]],
    );
    check_rename(
        f,
        "k",
        expect![[r#"
        error: `k` is already bound in `f`
    "#]],
    );
    check_prepare_rename(
        r#"
        graph f(x: f32[3]) { return Ex$0p(x) }
        "#,
        expect![[r#"
            error: `Exp` is a primitive; it cannot be renamed
        "#]],
    );
    check_prepare_rename(
        r#"
        graph f(x: f32[3]) { return Exp(x$0) }
        "#,
        expect![[r#"
            32..33 x
        "#]],
    );
    check_prepare_rename(
        r#"
        graph f(x: f32[3]) { return $0 Exp(x) }
        "#,
        expect![[r#"
            error: no name to rename here
        "#]],
    );
}

/// Issue 14, finding 3: renaming to a metafunction's, a primitive's, a
/// dtype's name or a keyword is refused (the name would hide the built-in at
/// every use), and so is renaming a built-in or a keyword.
#[test]
fn rename_refuses_the_names_of_built_ins() {
    let graph = r#"
        graph lo$0ss(x: f32[3]) { return ReduceSum(x * x) }
        graph main(x: f32[3]) {
          y = x * 2.0
          return grad(loss)(y)
        }
        "#;
    let local = r#"
        graph main(x: f32[3]) {
          y$0 = x * 2.0
          return Exp(y)
        }
        "#;
    for f in [graph, local] {
        for (name, expected) in [
            (
                "grad",
                "`grad` is a metafunction; the new name would hide it",
            ),
            (
                "value_and_grad",
                "`value_and_grad` is a metafunction; the new name would hide it",
            ),
            ("vjp", "`vjp` is a metafunction; the new name would hide it"),
            (
                "MatMul",
                "`MatMul` is a primitive; the new name would hide it",
            ),
            (
                "_SumToShapeOf",
                "`_SumToShapeOf` is a primitive; the new name would hide it",
            ),
            ("f32", "`f32` is a dtype; the new name would hide it"),
            ("return", "`return` is a keyword"),
            ("graph", "`graph` is a keyword"),
        ] {
            let fx = Fixture::new(f);
            assert_eq!(
                fx.analysis().rename(fx.offset, name),
                Err(expected.to_string())
            );
        }
    }
    for (at, expected) in [
        (
            "gr$0ad(loss)",
            "`grad` is a metafunction; it cannot be renamed",
        ),
        (
            "Reduce$0Sum",
            "`ReduceSum` is a primitive; it cannot be renamed",
        ),
        ("f3$0", "`f32` is a dtype; it cannot be renamed"),
        (
            "ret$0urn grad",
            "`return` is a keyword; it cannot be renamed",
        ),
        ("gra$0ph main", "`graph` is a keyword; it cannot be renamed"),
    ] {
        let text = graph
            .replace("lo$0ss", "loss")
            .replacen(&at.replace("$0", ""), at, 1);
        let fx = Fixture::new(&text);
        assert_eq!(
            fx.analysis().prepare_rename(fx.offset),
            Err(expected.to_string()),
            "{at}"
        );
    }
}

// ---------------------------------------------------------------------------
// Completion.

/// MindSpore primitives mirdsl does not support come after everything else,
/// marked, and only for a typed prefix.
#[test]
fn completion_offers_unsupported_mindspore_primitives_last() {
    let f = Fixture::new(
        r#"
        graph f(x: f32[3]) {
          return Re$0
        }
        "#,
    );
    let items = f.analysis().completions(f.offset);
    let first_unsupported = items
        .iter()
        .position(|c| {
            c.detail
                .as_deref()
                .is_some_and(|d| d.starts_with("not supported yet"))
        })
        .expect("unsupported MindSpore primitives starting with `Re`");
    assert!(items[..first_unsupported]
        .iter()
        .any(|c| c.label == "ReLU" && c.kind == CompletionKind::Primitive));
    let unsupported = &items[first_unsupported..];
    assert!(unsupported
        .iter()
        .all(|c| c.kind == CompletionKind::Primitive
            && c.detail
                .as_deref()
                .unwrap()
                .starts_with("not supported yet: MindSpore 2.10 ")
            && !c.is_snippet
            && c.label.to_ascii_lowercase().starts_with("re")));
    let rev = unsupported
        .iter()
        .find(|c| c.label == "ReservoirReplayBufferCreate")
        .expect("ReservoirReplayBufferCreate");
    assert!(rev
        .documentation
        .as_deref()
        .unwrap()
        .contains("**Not supported by mirdsl yet**"));
    // None without a prefix.
    let f = Fixture::new(
        r#"
        graph f(x: f32[3]) {
          return $0
        }
        "#,
    );
    assert!(!f.analysis().completions(f.offset).iter().any(|c| c
        .detail
        .as_deref()
        .is_some_and(|d| d.starts_with("not supported yet"))));
}

#[test]
fn completion_names_in_scope() {
    check_completions(
        r#"
        param w: f32[3] = ones
        graph helper(a) { return a }
        graph f(x: f32[3]) {
          early = x
          graph nested(q) { return q }
          y = e$0
          late = x
          return y
        }
        "#,
        expect![[r#"
            Local early  // f32[3]
            NestedGraph nested  // graph nested
            Graph helper  // graph helper(a)
            ... and 197 primitives
            replace: "e"
        "#]],
    );
}

#[test]
fn completion_primitives_with_argument_snippets() {
    let list = completion_list(
        r#"
        graph f(x: f32[3]) {
          return Mat$0
        }
        "#,
        true,
    );
    assert!(
        list.contains("Primitive MatMul => MatMul(${1:x}, ${2:y})$0  // MatMul(x, y, transpose_a=false, transpose_b=false)"),
        "{list}"
    );
    assert!(!list.contains("Primitive ReLU"), "{list}");
    let list = completion_list(
        r#"
        graph f(x: f32[3]) {
          return Rel$0
        }
        "#,
        true,
    );
    assert!(list.contains("Primitive ReLU => ReLU(${1:x})$0"), "{list}");
    // Before an existing `(`, no parentheses are inserted.
    let list = completion_list(
        r#"
        graph f(x: f32[3]) {
          return Mat$0(x, x)
        }
        "#,
        true,
    );
    assert!(list.contains("Primitive MatMul  // MatMul("), "{list}");
}

#[test]
fn completion_attribute_names_in_primitive_call() {
    check_completions(
        r#"
        graph f(x: f32[2, 3], y: f32[3, 4]) {
          return MatMul(x, y, trans$0
        }
        "#,
        expect![[r#"
            Attribute transpose_a => transpose_a=${1}  // bool = false
            Attribute transpose_b => transpose_b=${1}  // bool = false
            ... and 4 primitives
            ... then MindSpore primitives mirdsl does not support yet
            replace: "trans"
        "#]],
    );
    // Attributes already given are not offered again.
    let list = completion_list(
        r#"
        graph f(x: f32[2, 3]) {
          return ReduceSum(x, keep_dims=true, $0)
        }
        "#,
        false,
    );
    assert!(list.contains("Attribute axis"), "{list}");
    assert!(!list.contains("Attribute keep_dims"), "{list}");
}

#[test]
fn completion_wrt_for_grad() {
    let list = completion_list(
        r#"
        graph loss(x: f32[3]) { return ReduceSum(x) }
        graph f(x: f32[3]) {
          return grad(loss, w$0)(x)
        }
        "#,
        false,
    );
    assert!(list.starts_with("Attribute wrt => wrt=(${1:0})"), "{list}");
}

#[test]
fn completion_dtypes_in_type_positions() {
    check_completions(
        r#"
        graph f(x: $0) {
          return x
        }
        "#,
        expect![[r#"
            DType bf16  // dtype
            DType bool  // dtype
            DType f16  // dtype
            DType f32  // dtype
            DType f64  // dtype
            DType i16  // dtype
            DType i32  // dtype
            DType i64  // dtype
            DType i8  // dtype
            DType u8  // dtype
            DType none  // the none value
            DType str  // string
            Keyword fn => fn(${1}) -> ${0}  // a function type
            replace: ""
        "#]],
    );
    let list = completion_list(
        r#"
        graph f(x: f32[3]) -> f$0 {
          y: i = x
          return x
        }
        "#,
        false,
    );
    assert!(list.starts_with("DType f16"), "{list}");
    let list = completion_list(
        r#"
        graph f(x: f32[3]) {
          y: i$0 = x
          return x
        }
        "#,
        false,
    );
    assert!(list.contains("DType i64"), "{list}");
}

#[test]
fn completion_top_level_and_weight_initialisers() {
    check_completions(
        r#"
        gr$0
        "#,
        expect![[r#"
            Keyword graph => graph ${1:name}(${2}) {⏎  $0⏎}  // a graph
            replace: "gr"
        "#]],
    );
    let list = completion_list(
        r#"
        param w: f32[3] = no$0
        "#,
        false,
    );
    assert!(
        list.contains("Initializer normal => normal(mean=${1:0.0}"),
        "{list}"
    );
    // Filtered by what is typed.
    assert!(!list.contains("Initializer zeros"), "{list}");
}

#[test]
fn completion_in_lambda_and_if_branch() {
    let list = completion_list(
        r#"
        graph f(x: f32[3], n: i64) {
          g = fn(alpha) => alp$0
          return g
        }
        "#,
        false,
    );
    assert!(list.starts_with("Local alpha"), "{list}");
    let list = completion_list(
        r#"
        graph f(x: f32[3], n: i64) {
          r = if n > 0 { inner = x; in$0 } else { x }
          return r
        }
        "#,
        false,
    );
    assert!(list.starts_with("Local inner"), "{list}");
}

#[test]
fn no_completion_in_comments_and_strings() {
    check_completions(
        r#"
        graph f(x: f32[3]) {
          return x # com$0ment
        }
        "#,
        expect![""],
    );
}

// ---------------------------------------------------------------------------
// Signature help.

#[test]
fn signature_help_primitive_active_parameter() {
    check_signature(
        r#"
        graph f(a: f32[2, 3], b: f32[3, 4]) {
          return MatMul(a, $0
        }
        "#,
        expect![[r#"
            MatMul(x, <y>, transpose_a=false, transpose_b=false)
            active: Some(1)
            doc: yes
        "#]],
    );
    check_signature(
        r#"
        graph f(a: f32[2, 3], b: f32[3, 4]) {
          return MatMul(a, b, transpose_b=tr$0ue)
        }
        "#,
        expect![[r#"
            MatMul(x, y, transpose_a=false, <transpose_b=false>)
            active: Some(3)
            doc: yes
        "#]],
    );
}

#[test]
fn signature_help_graph_and_nested_calls() {
    check_signature(
        r#"
        # Scales.
        graph scale(x: f32[3], k) { return x * k }
        graph f(v: f32[3]) {
          return scale(v, Exp($0))
        }
        "#,
        expect![[r#"
            Exp(<x>)
            active: Some(0)
            doc: yes
        "#]],
    );
    check_signature(
        r#"
        # Scales.
        graph scale(x: f32[3], k) { return x * k }
        graph f(v: f32[3]) {
          return scale(v, 2.0$0)
        }
        "#,
        expect![[r#"
            scale(x: f32[3], <k>)
            active: Some(1)
            doc: yes
        "#]],
    );
    check_signature(
        r#"
        graph f(v: f32[3]) {
          return v$0
        }
        "#,
        expect![[r#"
            no signature
        "#]],
    );
}

// ---------------------------------------------------------------------------
// Symbols.

#[test]
fn document_symbols_nest_nested_graphs() {
    let f = Fixture::new(
        r#"
        param fc.w: f32[2, 2] = ones
        graph outer(a: f32[2]) -> f32[2] {
          graph inner(c) {
            graph innermost() { return c }
            return innermost()
          }
          return inner(a)
        }
        graph other() { return 1 }
        "#,
    );
    let symbols = f.analysis().document_symbols();
    fn dump(s: &crate::Symbol, depth: usize, out: &mut String) {
        out.push_str(&format!(
            "{}{:?} {} {}\n",
            "  ".repeat(depth),
            s.kind,
            s.name,
            s.detail.clone().unwrap_or_default()
        ));
        for c in &s.children {
            dump(c, depth + 1, out);
        }
    }
    let mut out = String::new();
    symbols.iter().for_each(|s| dump(s, 0, &mut out));
    expect![[r#"
        Weight fc.w f32[2, 2]
        Graph outer (a: f32[2]) -> f32[2]
          NestedGraph inner (c)
            NestedGraph innermost ()
        Graph other ()
    "#]]
    .assert_eq(&out);
    let ws = crate::workspace_symbols(&f.db, &[f.file], "inn");
    let names: Vec<String> = ws
        .iter()
        .map(|s| format!("{} in {:?}", s.name, s.container))
        .collect();
    assert_eq!(
        names,
        ["inner in Some(\"outer\")", "innermost in Some(\"inner\")"]
    );
    let ws = crate::workspace_symbols(&f.db, &[f.file], "OTR");
    assert_eq!(ws.len(), 2, "{ws:?}"); // outer (o-t-r... no: o,t,r in order) and other
}

// ---------------------------------------------------------------------------
// Semantic tokens.

#[test]
fn semantic_tokens_classify_names() {
    check_tokens(
        r#"
        # c
        param w: f32[B] = ones
        graph f(x: f32[3], n) -> f32[3] {
          y = MatMul(x, w, transpose_b=true) + 1.5
          return grad(f)(y, "s")
        }
        "#,
        expect![[r#"
            # c            comment
            param          keyword
            w              variable +declaration +static
            f32            type
            B              typeParameter
            =              operator
            ones           variable
            graph          keyword
            f              function +declaration
            x              parameter +declaration
            f32            type
            3              number
            n              parameter +declaration
            ->             operator
            f32            type
            3              number
            y              variable +declaration
            =              operator
            MatMul         function +defaultLibrary
            x              parameter
            w              variable +static
            transpose_b    property
            =              operator
            true           keyword
            +              operator
            1.5            number
            return         keyword
            grad           function +defaultLibrary
            f              function
            y              variable
            "s"            string
        "#]],
    );
}

#[test]
fn semantic_tokens_in_a_range() {
    check_tokens(
        r#"
        graph a(x) { return x }
        $0graph b(y) { return y }$0
        graph c(z) { return z }
        "#,
        expect![[r#"
            graph          keyword
            b              function +declaration
            y              parameter +declaration
            return         keyword
            y              parameter
        "#]],
    );
}

// ---------------------------------------------------------------------------
// Folding, formatting.

#[test]
fn folding_ranges_of_blocks_calls_and_comments() {
    let f = Fixture::new(
        r#"
        # one
        # two
        # three
        graph f(x: f32[3]) {
          y = Add(
            x,
            x,
          )
          return y
        }
        "#,
    );
    let folds: Vec<String> = f
        .analysis()
        .folding_ranges()
        .iter()
        .map(|f| format!("{}..={} {:?}", f.start_line, f.end_line, f.kind))
        .collect();
    expect![[r#"
        [
            "0..=2 Comment",
            "3..=8 Region",
            "4..=6 Region",
        ]
    "#]]
    .assert_debug_eq(&folds);
}

#[test]
fn formatting_and_refusal_with_syntax_errors() {
    let f = Fixture::new("graph f(x){\nreturn x+1\n}\n");
    let edits = f.analysis().format().unwrap();
    let mut text = f.text.clone();
    for e in edits.iter().rev() {
        text.replace_range(
            usize::from(e.range.start())..usize::from(e.range.end()),
            &e.new_text,
        );
    }
    expect![[r#"
        graph f(x) {
          return x + 1
        }
    "#]]
    .assert_eq(&text);
    // The edit is minimal: the common prefix `graph f(x)` is kept.
    assert_eq!(edits.len(), 1);
    assert_eq!(edits[0].range.start(), TextSize::from(10));
    let broken = Fixture::new("graph f(x {\n return x\n}\n");
    expect![[r#"
        Err(
            "the file has 1 syntax error; fix it before formatting",
        )
    "#]]
    .assert_debug_eq(&broken.analysis().format());
}

// ---------------------------------------------------------------------------
// Code actions and lenses.

#[test]
fn code_action_quick_fix_from_diagnostic() {
    check_actions(
        r#"
        graph f(x: f32[3]) {
          return $0Sigmoidd$0(x)
        }
        "#,
        expect![[r#"
            QuickFix change to `Sigmoid` (preferred)
            graph f(x: f32[3]) {
              return Sigmoid(x)
            }
        "#]],
    );
}

#[test]
fn code_action_add_type_annotation() {
    check_actions(
        r#"
        graph f(x: f32[2, 3]) {
          s$0 = ReduceSum(x, axis=1, keep_dims=true)
          return s
        }
        "#,
        expect![[r#"
            RefactorRewrite Add type annotation `: f32[2, 1]`
            graph f(x: f32[2, 3]) {
              s: f32[2, 1] = ReduceSum(x, axis=1, keep_dims=true)
              return s
            }
        "#]],
    );
    // Nothing to add where a type is written or unknown.
    check_actions(
        r#"
        graph f(x: f32[2, 3]) {
          s$0: f32[2, 3] = x
          return s
        }
        "#,
        expect![""],
    );
}

#[test]
fn code_lenses_above_each_graph() {
    let f = Fixture::new(
        r#"
        param w: f32[1] = ones
        graph a() { return 1 }
        graph b(x) { return x }
        "#,
    );
    let lenses: Vec<String> = f
        .analysis()
        .code_lenses()
        .iter()
        .map(|l| format!("{} {} {} {}", &f.text[l.range], l.title, l.command, l.graph))
        .collect();
    expect![[r#"
        [
            "a ▶ Run mirdsl.run a",
            "a Show graph mirdsl.showGraph a",
            "a Show gradient mirdsl.showGradient a",
            "b ▶ Run mirdsl.run b",
            "b Show graph mirdsl.showGraph b",
            "b Show gradient mirdsl.showGradient b",
        ]
    "#]]
    .assert_debug_eq(&lenses);
}

#[test]
fn features_work_after_incremental_edits() {
    let mut f = Fixture::new(
        r#"
        graph a(x: f32[3]) { return x }
        graph b(x: f32[2]) {
          y = x * 2.0
          return y
        }
        "#,
    );
    // Insert a line in `a`: `b`'s hover still finds `y` at its new place.
    let at = TextSize::from(f.text.find("return x }").unwrap() as u32);
    f.db.apply_edits(
        f.file,
        vec![syntax::TextEdit {
            delete: TextRange::empty(at),
            insert: "z = Exp(x) # 😀\n  ".into(),
        }],
    );
    let text = f.file.text(&f.db).to_string();
    let y = TextSize::from(text.find("y = x").unwrap() as u32);
    let h = crate::Analysis::new(&f.db, f.file).hover(y).unwrap();
    assert_eq!(&text[h.range], "y");
    assert!(h.markdown.contains("f32[2]"), "{}", h.markdown);
}

#[test]
fn minimal_edit_keeps_common_parts() {
    let e = crate::minimal_edit("abc😀def", "abc😁def").unwrap();
    assert_eq!(
        (e.range, e.new_text.as_str()),
        (TextRange::new(3.into(), 7.into()), "😁")
    );
    assert!(crate::minimal_edit("same", "same").is_none());
    let e = crate::minimal_edit("aaa", "aaaa").unwrap();
    assert_eq!(e.new_text, "a");
}

#[test]
fn valid_names() {
    assert!(crate::is_valid_name("fc1.weight"));
    assert!(crate::is_valid_name("%t1"));
    assert!(crate::is_valid_name("_x"));
    assert!(!crate::is_valid_name("graph"));
    assert!(!crate::is_valid_name("a.if"));
    assert!(!crate::is_valid_name("a-b"));
    assert!(!crate::is_valid_name("layer.0_bias"));
    assert!(!crate::is_valid_name(""));
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

/// Issue 14, finding 8: completion is filtered by what is typed and ranked
/// by match and scope, and a few hundred items at most are offered (a
/// 20k-line file offered 3,700).
#[test]
fn completion_is_filtered_ranked_and_bounded() {
    let mut text = String::new();
    for i in 0..3000 {
        text.push_str(&format!("graph layer{i}(x) {{ return x }}\n"));
    }
    text.push_str("graph main(lay_local: f32[3]) {\n  return la$0\n}\n");
    let f = Fixture::new(&text);
    let list = f.analysis().completion_list(f.offset);
    assert!(list.items.len() <= crate::MAX_ITEMS, "{}", list.items.len());
    assert!(list.is_incomplete);
    // The local first, then the graphs whose names start with what is typed.
    assert_eq!(list.items[0].label, "lay_local");
    assert!(list.items[1..20]
        .iter()
        .all(|c| c.label.starts_with("layer")));
    // Typing more narrows it to what matches.
    let narrow = Fixture::new(&text.replace("return la$0", "return layer299$0"));
    let list = narrow.analysis().completion_list(narrow.offset);
    assert!(!list.is_incomplete);
    let labels: Vec<&str> = list.items.iter().map(|c| c.label.as_str()).collect();
    assert_eq!(&labels[..2], ["layer299", "layer2990"], "{labels:?}");
    // Prefix matches first (11 of them), then subsequences (`layer1299`).
    assert!(
        labels[..11].iter().all(|l| l.starts_with("layer299")),
        "{labels:?}"
    );
    assert!(
        labels[11..].iter().all(|l| !l.starts_with("layer299")),
        "{labels:?}"
    );
    // A case-insensitive prefix and a subsequence match too, after exact ones.
    let fuzzy = Fixture::new("graph f(x: f32[3]) {\n  return mmul$0\n}\n");
    let labels: Vec<String> = fuzzy
        .analysis()
        .completions(fuzzy.offset)
        .into_iter()
        .map(|c| c.label)
        .collect();
    assert!(labels.contains(&"MatMul".to_string()), "{labels:?}");
}

// ---------------------------------------------------------------------------
// Selection ranges, call hierarchy, linked editing, range formatting.

#[test]
fn selection_ranges_grow_from_the_token_to_the_file() {
    let f = Fixture::new(
        r#"
        graph f(x: f32[3]) {
          y = Exp(x$0 * 2.0)
          return y
        }
        "#,
    );
    let ranges = f.analysis().selection_ranges(f.offset);
    let texts: Vec<&str> = ranges.iter().map(|r| &f.text[*r]).collect();
    expect![[r#"
        [
            "x",
            "x * 2.0",
            "(x * 2.0)",
            "Exp(x * 2.0)",
            "y = Exp(x * 2.0)",
            "{\n  y = Exp(x * 2.0)\n  return y\n}",
            "graph f(x: f32[3]) {\n  y = Exp(x * 2.0)\n  return y\n}",
        ]
    "#]]
    .assert_debug_eq(&texts);
    for w in ranges.windows(2) {
        assert!(w[1].contains_range(w[0]) && w[1] != w[0]);
    }
}

const CALLS: &str = r#"
    graph leaf(x) { return x * 2.0 }
    graph mid(x) { return leaf(leaf(x)) + 1.0 }
    graph top(x: f32[3]) {
      a = mid(x)
      return leaf(a)
    }
    "#;

#[test]
fn call_hierarchy_incoming_and_outgoing() {
    let f = Fixture::new(CALLS);
    let at = |s: &str| TextSize::from(f.text.find(s).unwrap() as u32);
    let item = f.analysis().prepare_call_hierarchy(at("mid(x) {")).unwrap();
    assert_eq!(item.name, "mid");
    assert_eq!(&f.text[item.selection_range], "mid");
    assert_eq!(item.detail.as_deref(), Some("graph mid(x)"));
    // From a use too.
    let used = f.analysis().prepare_call_hierarchy(at("mid(x)\n")).unwrap();
    assert_eq!(used.name, "mid");
    let show = |calls: Vec<crate::Calls>| -> Vec<String> {
        calls
            .iter()
            .map(|c| {
                let at: Vec<String> = c.ranges.iter().map(|r| format!("{r:?}")).collect();
                format!("{} at {}", c.item.name, at.join(" "))
            })
            .collect()
    };
    expect![[r#"
        [
            "mid at 55..59 60..64",
            "top at 122..126",
        ]
    "#]]
    .assert_debug_eq(&show(f.analysis().incoming_calls("leaf")));
    expect![[r#"
        [
            "mid at 106..109",
            "leaf at 122..126",
        ]
    "#]]
    .assert_debug_eq(&show(f.analysis().outgoing_calls("top")));
    assert!(f.analysis().outgoing_calls("leaf").is_empty());
    // Not a graph: no item.
    assert!(f.analysis().prepare_call_hierarchy(at("x * 2.0")).is_none());
}

#[test]
fn linked_editing_covers_a_local_names_occurrences() {
    let f = Fixture::new(
        r#"
        graph f(x: f32[3]) {
          h$0 = x * 2.0
          k = h + h
          return k
        }
        "#,
    );
    let ranges = f.analysis().linked_editing_ranges(f.offset).unwrap();
    let annotated: Vec<(TextRange, String)> = ranges.iter().map(|r| (*r, String::new())).collect();
    expect![[r#"
        graph f(x: f32[3]) {
          [h] = x * 2.0
          k = [h] + [h]
          return k
        }
    "#]]
    .assert_eq(&f.annotate(&annotated));
    // A top-level name is rename's business.
    let g = Fixture::new("graph g$0(x) { return x }\ngraph m(y) { return g(y) }\n");
    assert!(g.analysis().linked_editing_ranges(g.offset).is_none());
}

#[test]
fn range_formatting_formats_the_items_it_touches() {
    let f = Fixture::new(
        "graph a( x ){return x}\n\ngraph b( x ){\nreturn  $0x*2.0$0\n}\n\ngraph c( x ){return x}\n",
    );
    let edits = f.analysis().format_range(f.range).unwrap();
    let mut text = f.text.clone();
    for e in edits.iter().rev() {
        text.replace_range(
            usize::from(e.range.start())..usize::from(e.range.end()),
            &e.new_text,
        );
    }
    expect![[r#"
        graph a( x ){return x}

        graph b(x) {
          return x * 2.0
        }

        graph c( x ){return x}
    "#]]
    .assert_eq(&text);
    let broken = Fixture::new("graph a( {\n");
    assert!(broken
        .analysis()
        .format_range(TextRange::up_to(TextSize::of(broken.text.as_str())))
        .is_err());
}
