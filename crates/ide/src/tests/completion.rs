//! Completion and signature help.

use super::*;

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
            Metafunction jacrev => jacrev(${1:f})$0
            Metafunction hessian => hessian(${1:f})$0
            Metafunction checkpoint => checkpoint(${1:f})$0
            ... and 194 primitives
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
