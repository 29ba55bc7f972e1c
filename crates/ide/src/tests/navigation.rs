//! Navigation: definitions, references, highlights, rename.

use super::*;

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
