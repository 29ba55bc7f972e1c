//! The MindSpore `.ir` and DOT printers on the spec's examples (lowered and
//! inferred by `analysis`), as snapshots; every DOT file must be accepted by
//! Graphviz's `dot` when it is installed.

use std::path::Path;

use ir::{AbsVal, NodeId};

/// The spec's §8 examples, one program per example.
const EXAMPLES: &[(&str, &str)] = &[
    (
        "test_f",
        r#"
graph func(x, y) {
  ret = x / y
  return ret
}

graph test_f(x: f32[3], y: f32[3]) -> f32[3] {
  a = x - 1
  b = a + y
  %1 = func(a, b)
  c = b * %1
  return c
}
"#,
    ),
    (
        "hof",
        r#"
graph hof(x: f32[2]) {
  graph f(x) { return x + 3 }
  graph g(function, x) {
    return function(x) * function(x)
  }
  res = g(f, x)
  return res
}
"#,
    ),
    (
        "fibonacci",
        r#"
graph fibonacci(n: i64) -> i64 {
  r = if n < 1 { 0 } else if n == 1 { 1 } else {
    a = fibonacci(n - 1)
    b = fibonacci(n - 2)
    a + b
  }
  return r
}
"#,
    ),
    (
        "closure",
        r#"
graph func_outer(a, b) {
  graph func_inner(c) { return a + b + c }
  return func_inner
}

graph ms_closure() {
  closure = func_outer(1, 2)
  out1 = closure(1)
  out2 = closure(2)
  return (out1, out2)
}
"#,
    ),
    (
        "mlp",
        r#"
param fc1.weight: f32[128, 784] = normal(std=0.01, seed=1)
param fc1.bias: f32[128] = zeros
param fc2.weight: f32[10, 128] = normal(std=0.01, seed=2)
param fc2.bias: f32[10] = zeros

graph mlp(x: f32[B, 784]) -> f32[B, 10] {
  h = ReLU(BiasAdd(MatMul(x, fc1.weight, transpose_b=true), fc1.bias))
  return BiasAdd(MatMul(h, fc2.weight, transpose_b=true), fc2.bias)
}

graph loss(x: f32[B, 784], labels: i32[B]) -> f32[] {
  logits = mlp(x)
  return SparseSoftmaxCrossEntropyWithLogits(logits, labels)
}

graph train_grads(x: f32[B, 784], labels: i32[B]) {
  return grad(loss, wrt=(fc1.weight, fc1.bias, fc2.weight, fc2.bias))(x, labels)
}
"#,
    ),
];

fn example(name: &str) -> &'static str {
    EXAMPLES.iter().find(|(n, _)| *n == name).unwrap().1
}

/// Lowers and infers `text`; returns the program and the type of every node.
fn analyzed(text: &str) -> (ir::Program, impl Fn(&str, NodeId) -> Option<AbsVal>) {
    let analysis = analysis::analyze(text);
    assert!(
        !analysis.has_errors(),
        "example has errors: {:?}",
        analysis.diagnostics
    );
    let program = analysis.source.program();
    // Every value inference saw (the entry's own check and the
    // specialisations other graphs' calls made), joined.
    let types = move |item: &str, node: NodeId| {
        let values = analysis.values_of(item, node);
        let mut it = values.into_iter();
        let first = it.next()?;
        Some(it.fold(first, |acc, v| acc.join(&v).unwrap_or(AbsVal::Any)))
    };
    (program, types)
}

fn ms_ir(name: &str) -> String {
    let (program, types) = analyzed(example(name));
    ir::print_ms::print_program(&program, &types)
}

fn dot(name: &str) -> String {
    let (program, types) = analyzed(example(name));
    ir::print_dot::print_program(&program, &types)
}

#[test]
fn ms_ir_test_f() {
    expect_test::expect_file!["../test_data/printers/test_f.ir"].assert_eq(&ms_ir("test_f"));
}

#[test]
fn ms_ir_hof() {
    expect_test::expect_file!["../test_data/printers/hof.ir"].assert_eq(&ms_ir("hof"));
}

#[test]
fn ms_ir_fibonacci() {
    expect_test::expect_file!["../test_data/printers/fibonacci.ir"].assert_eq(&ms_ir("fibonacci"));
}

#[test]
fn ms_ir_closure() {
    expect_test::expect_file!["../test_data/printers/closure.ir"].assert_eq(&ms_ir("closure"));
}

#[test]
fn ms_ir_mlp() {
    expect_test::expect_file!["../test_data/printers/mlp.ir"].assert_eq(&ms_ir("mlp"));
}

#[test]
fn dot_test_f() {
    expect_test::expect_file!["../test_data/printers/test_f.dot"].assert_eq(&dot("test_f"));
}

#[test]
fn dot_hof() {
    expect_test::expect_file!["../test_data/printers/hof.dot"].assert_eq(&dot("hof"));
}

#[test]
fn dot_fibonacci() {
    expect_test::expect_file!["../test_data/printers/fibonacci.dot"].assert_eq(&dot("fibonacci"));
}

#[test]
fn dot_closure() {
    expect_test::expect_file!["../test_data/printers/closure.dot"].assert_eq(&dot("closure"));
}

#[test]
fn dot_mlp() {
    expect_test::expect_file!["../test_data/printers/mlp.dot"].assert_eq(&dot("mlp"));
}

/// Every DOT id of a node maps back to a node of the IR.
#[test]
fn dot_ids_map_back_to_ir() {
    for (name, text) in EXAMPLES {
        let (program, types) = analyzed(text);
        let out = ir::print_dot::print_program(&program, &types);
        for line in out.lines() {
            let Some(rest) = line.trim_start().strip_prefix("id=\"") else {
                continue;
            };
            let id = &rest[..rest.find('"').unwrap()];
            match ir::print_dot::parse_id(id) {
                Some(ir::print_dot::DotRef::Graph { item, graph }) => {
                    let body = program.graph(&item).expect("item exists");
                    assert!((graph.0 as usize) < body.graphs.len(), "{name}: {id}");
                }
                other => panic!("{name}: cluster id {id} read back as {other:?}"),
            }
        }
        for part in out.split("[id=\"").skip(1) {
            let id = &part[..part.find('"').unwrap()];
            match ir::print_dot::parse_id(id) {
                Some(ir::print_dot::DotRef::Node { item, node }) => {
                    let body = program.graph(&item).expect("item exists");
                    assert!((node.0 as usize) < body.nodes.len(), "{name}: {id}");
                }
                Some(ir::print_dot::DotRef::Weight(w)) => {
                    assert!(program.weight(&w).is_some(), "{name}: {id}")
                }
                Some(ir::print_dot::DotRef::Return { item, graph }) => {
                    let body = program.graph(&item).expect("item exists");
                    assert!((graph.0 as usize) < body.graphs.len(), "{name}: {id}");
                }
                other => panic!("{name}: node id {id} read back as {other:?}"),
            }
        }
    }
}

/// Graphviz accepts every printed file (skipped, with the reason printed,
/// when `dot` is not installed: `apt-get install -y graphviz`; a failure
/// with `MIRDSL_REQUIRE_TOOLS=1` or `graphviz`).
#[test]
fn graphviz_accepts_every_dot_file() {
    if test_support::require(test_support::Tool::Graphviz, test_support::graphviz()).is_none() {
        return;
    }
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("ir-dot");
    std::fs::create_dir_all(&dir).unwrap();
    for (name, _) in EXAMPLES {
        let path = dir.join(format!("{name}.dot"));
        std::fs::write(&path, dot(name)).unwrap();
        let out = std::process::Command::new("dot")
            .arg("-Tsvg")
            .arg(&path)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "dot rejected {name}.dot:\n{stderr}");
        assert!(
            !stderr.contains("Error") && !stderr.contains("Warning"),
            "dot complained about {name}.dot:\n{stderr}"
        );
        let svg = String::from_utf8_lossy(&out.stdout);
        assert!(svg.contains("<svg"), "{name}: no SVG");
    }
}
