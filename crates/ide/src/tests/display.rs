//! Diagnostics, inlay hints, symbols, semantic tokens, folding, formatting,
//! code actions and lenses, selection ranges, call hierarchy, linked editing.

use super::*;

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
              related "(": this `(` is never closed
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

#[test]
fn diagnostics_at_rustc_level_arity_dtype_and_brackets() {
    // A missing argument is named; the definition is related.
    check_diagnostics(
        r#"
graph helper(a, b, c) {
  return a + b * c
}
graph f(x: f32[4]) -> f32[4] {
  return helper(x, x)
}
"#,
        expect![[r#"
            E0143 85..97 "helper(x, x)": `helper` takes 3 arguments but is given 2: `c` is missing
              related "helper": `helper(a, b, c)` is defined here
              help: pass `c` after the 2 arguments given
        "#]],
    );
    // Extra arguments are marked, and a fix removes them.
    check_diagnostics(
        r#"
graph helper(a) {
  return a
}
graph f(x: f32[4]) -> f32[4] {
  return helper(x, Neg(x), x)
}
"#,
        expect![[r#"
            E0143 71..91 "helper(x, Neg(x), x)": `helper` takes 1 argument but is given 3: the last 2 arguments are extra
              related "Neg(x)": extra argument
              related "x": extra argument
              related "helper": `helper(a)` is defined here
              fix remove the 2 extra arguments: ", Neg(x), x" -> ""
        "#]],
    );
    // The operand at fault carries its type, and a cast is offered.
    check_diagnostics(
        r#"
graph f(x: f32[4, 4], n: i32[4, 4]) -> f32[4, 4] {
  return MatMul(x, n)
}
"#,
        expect![[r#"
            E0200 70..71 "n": `MatMul` needs operands of one dtype, got f32 and i32
              label: this is i32[4, 4]
              related "x": this is f32[4, 4]
              fix cast to f32: "n" -> "Cast(n, f32)"
        "#]],
    );
    // An unclosed bracket points at its opener.
    check_diagnostics(
        r#"
graph f(x: f32[4]) -> f32[4] {
  y = Add(x, Mul(x, x)
  return y
}
"#,
        expect![[r#"
            E0001 56..62 "return": expected `,` or `)`, found `return`
              related "(": this `(` is never closed
        "#]],
    );
}
