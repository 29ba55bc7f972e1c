//! State updates (docs/language.md §12): statement order, reads before and
//! after updates, effects in called graphs and in `if` branches, and weights
//! that persist from one run to the next.

use exec::{ExecOptions, Executor, Value};
use tensor::Tensor;

fn executor(src: &str) -> Executor {
    let a = analysis::analyze(src);
    let errors: Vec<_> = a
        .diagnostics
        .iter()
        .filter(|d| d.severity == analysis::Severity::Error)
        .map(|d| (d.code, d.message.clone()))
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
    Executor::new(&a.source.program(), ExecOptions::default())
}

fn f32s(data: &[f32]) -> Value {
    Value::tensor(Tensor::from_f32(vec![data.len()], data.to_vec()).unwrap())
}

fn values(v: &Value) -> Vec<f64> {
    match v {
        Value::Tuple(items) => items.iter().flat_map(values).collect(),
        _ => v.as_tensor().expect("a tensor").tensor().to_f64_vec(),
    }
}

fn weight(ex: &mut Executor, name: &str) -> Vec<f64> {
    values(&ex.weight_value(name).unwrap())
}

#[test]
fn reads_see_earlier_updates_and_not_later_ones() {
    let mut ex = executor(
        r#"
param w: f32[2] = ones
graph main(x: f32[2]) {
  before = Load(w)
  a = w * 2
  Assign(w, x)
  b = w * 2
  AssignAdd(w, x)
  return (before, a, b, w)
}
"#,
    );
    let out = ex.call("main", vec![f32s(&[3.0, 5.0])]).unwrap();
    assert_eq!(values(&out), [1.0, 1.0, 2.0, 2.0, 6.0, 10.0, 6.0, 10.0]);
    assert_eq!(weight(&mut ex, "w"), [6.0, 10.0]);
}

#[test]
fn weights_persist_across_runs() {
    let mut ex = executor(
        r#"
param count: f32[] = zeros
graph main() {
  AssignAdd(count, 1.0)
  return count
}
"#,
    );
    for k in 1..=3 {
        let out = ex.call("main", vec![]).unwrap();
        assert_eq!(values(&out), [k as f64]);
    }
}

#[test]
fn updates_in_called_graphs_and_in_the_taken_branch_only() {
    let mut ex = executor(
        r#"
param w: f32[2] = zeros
param hits: f32[] = zeros
graph bump(x: f32[2]) {
  AssignAdd(w, x)
  return none
}
graph main(x: f32[2], flag: bool) {
  bump(x)
  r = if flag {
    AssignAdd(hits, 1.0)
    w * 1
  } else {
    AssignSub(hits, 1.0)
    w * -1
  }
  bump(x)
  return (r, w, hits)
}
"#,
    );
    let t = Value::scalar(ir::ScalarConst::Bool(true), tensor::DType::Bool);
    let out = ex.call("main", vec![f32s(&[1.0, 2.0]), t]).unwrap();
    // r sees one bump; w sees both; one hit.
    assert_eq!(values(&out), [1.0, 2.0, 2.0, 4.0, 1.0]);
    let f = Value::scalar(ir::ScalarConst::Bool(false), tensor::DType::Bool);
    let out = ex.call("main", vec![f32s(&[1.0, 2.0]), f]).unwrap();
    assert_eq!(values(&out), [-3.0, -6.0, 4.0, 8.0, 0.0]);
}

#[test]
fn a_training_step_lowers_its_loss() {
    let mut ex = executor(
        r#"
param w: f32[2] = constant(1.0)
param m: f32[2] = zeros
graph loss(x: f32[2]) -> f32[] {
  return ReduceSum(Square(x * w - 1))
}
graph step(x: f32[2]) -> f32[] {
  (l, (g,)) = value_and_grad(loss, wrt=(w,))(x)
  ApplyMomentum(w, m, 0.05, g, 0.5)
  return l
}
"#,
    );
    let x = f32s(&[2.0, 3.0]);
    let losses: Vec<f64> = (0..5)
        .map(|_| values(&ex.call("step", vec![x.clone()]).unwrap())[0])
        .collect();
    // By hand: loss = sum((x w - 1)^2) = 5 at w = 1, gradient 2 x (x w - 1) =
    // [4, 12], so m = [4, 12] and w = 1 - 0.05 m = [0.8, 0.4], loss 0.36 + 0.04.
    assert_eq!(losses[0], 5.0);
    assert!((losses[1] - 0.4).abs() < 1e-6, "{losses:?}");
    assert!(losses[4] < losses[0] / 10.0, "{losses:?}");
}

#[test]
fn updating_a_non_weight_is_refused_and_pure_statements_stay_errors() {
    for (src, code) in [
        (
            "graph main(x: f32[2]) {\n  Assign(x, x)\n  return x\n}\n",
            analysis::Code::NotAWeight,
        ),
        (
            "graph f(x) { return x }\ngraph main(x: f32[2]) {\n  f(x)\n  return x\n}\n",
            analysis::Code::UselessExpression,
        ),
    ] {
        let a = analysis::analyze(src);
        assert!(
            a.diagnostics.iter().any(|d| d.code == code),
            "{src}: {:?}",
            a.diagnostics
        );
    }
}

#[test]
fn a_graph_with_effects_is_not_differentiated() {
    let src = r#"
param w: f32[2] = zeros
graph f(x: f32[2]) -> f32[] {
  AssignAdd(w, x)
  return ReduceSum(x)
}
graph main(x: f32[2]) {
  return grad(f)(x)
}
"#;
    let mut ex = executor(src);
    let e = ex.call("main", vec![f32s(&[1.0, 2.0])]).unwrap_err();
    assert!(
        e.message.contains("cannot be differentiated"),
        "{}",
        e.message
    );
}
