//! Differentiation through each construct of the language, checked against
//! central finite differences (f64) by running the gradient with the executor.

mod common;

use std::path::Path;

use autodiff::{differentiate, GradTarget};
use common::*;
use ir::{GraphId, MetaFn, WrtItem};
use tensor::{DType, Tensor};

use WrtItem::{Param, Weight};

fn here() -> &'static Path {
    Path::new(".")
}

fn v3(seed: u64) -> Tensor {
    random(&[3], seed, 0.5, 1.5)
}

#[test]
fn partial_applications() {
    let text = r#"
graph scale(a, x) { return a * Sin(x) }
graph f(x: f32[3], y: f32[3]) {
  p = Partial(Mul, x)
  q = Partial(scale, y)
  return p(y) + q(x) * x
}
"#;
    check_gradient(text, here(), "f", &[v3(1), v3(2)], &[Param(0), Param(1)]);
}

#[test]
fn tuples_indexing_and_tuple_outputs() {
    let text = r#"
graph pair(x, y) { return (x * y, Exp(x)) }
graph f(x: f32[3], y: f32[3]) {
  (p, e) = pair(x, y)
  t = (p, (e, y))
  u = t[1]
  return (u[0] * p, Sin(t[0]))
}
"#;
    check_gradient(text, here(), "f", &[v3(3), v3(4)], &[Param(0), Param(1)]);
}

#[test]
fn depend_and_stop_gradient() {
    // No gradient flows through StopGradient (finite differences would see
    // through it): d/dx = exp(x) * s, d/dy = 1.
    let text = r#"
graph f(x: f32[3], y: f32[3]) {
  s = StopGradient(x * y)
  d = Depend(Exp(x), s)
  return d * s + y
}
"#;
    let prog = program(text);
    let r = differentiate(&prog, &target("f"), &grad_wrt(&[Param(0), Param(1)])).unwrap();
    let (x, y) = (v3(5), v3(6));
    let got = leaves(&run(
        &with_result(&prog, &r),
        here(),
        &r.entry,
        &[x.clone(), y.clone()],
    ));
    let (xs, ys) = (x.to_f64_vec(), y.to_f64_vec());
    let want: Vec<f64> = (0..3).map(|i| xs[i].exp() * xs[i] * ys[i]).collect();
    let dx = got[0].as_ref().unwrap().to_f64_vec();
    assert!(
        dx.iter().zip(&want).all(|(a, b)| (a - b).abs() < 1e-12),
        "{dx:?} vs {want:?}"
    );
    assert_eq!(got[1].as_ref().unwrap().to_f64_vec(), vec![1.0; 3]);
}

#[test]
fn weights_through_calls_closures_and_hofs() {
    let text = r#"
param w: f32[3] = constant(0.5)
param b: f32[3] = constant(-0.25)
graph apply(f, x) { return f(x) }
graph layer(x) {
  graph act(z) { return Tanh(z * w) }
  return apply(act, x) + b
}
graph f(x: f32[3]) {
  return layer(layer(x)) * w
}
"#;
    check_gradient(
        text,
        here(),
        "f",
        &[v3(7)],
        &[Weight("b".into()), Param(0), Weight("w".into())],
    );
}

#[test]
fn closures_passed_to_and_returned_from_other_graphs() {
    let text = r#"
graph twice(f, x) { return f(f(x)) }
graph make(a) {
  graph k(x) { return x * a + Sin(a) }
  return k
}
graph f(x: f32[3], a: f32[3]) {
  k = make(a)
  return twice(k, x) + k(a)
}
"#;
    check_gradient(text, here(), "f", &[v3(8), v3(9)], &[Param(0), Param(1)]);
}

#[test]
fn primitives_as_function_values() {
    let text = r#"
graph apply(f, x) { return f(x) }
graph f(x: f32[3]) {
  return apply(Exp, x) * apply(Sin, x) + apply(fn(z) => ReduceSum(z * z, axis=(0,)), x)
}
"#;
    check_gradient(text, here(), "f", &[v3(10)], &[Param(0)]);
}

#[test]
fn switch_between_closures_that_capture_different_values() {
    // (An `if` whose branches are different closures does not check yet; the
    // Switch it lowers to does.)
    let text = r#"
graph f(x: f32[3], a: f32[3], b: f32[3], c: bool) {
  h = Switch(c, fn(z) => z * a, fn(z) => z + Exp(b))
  return h(x) * h(a)
}
"#;
    for c in [true, false] {
        let cond = Tensor::from_bool(vec![], vec![c]).unwrap();
        check_gradient(
            text,
            here(),
            "f",
            &[v3(11), v3(12), v3(13), cond],
            &[Param(0), Param(1), Param(2)],
        );
    }
}

#[test]
fn recursion_with_tuple_state() {
    // A loop as recursion: (acc, x) -> (acc * x + 1, x), n times.
    let text = r#"
graph step(state, n: i64) {
  (acc, x) = state
  r = if n < 1 { state } else { step((acc * x + Sin(acc), x), n - 1) }
  return r
}
graph f(x: f32[3], n: i64) {
  (acc, _x) = step((x, x * 0.5), n)
  return acc
}
"#;
    let n = Tensor::from_i64(DType::I64, vec![], vec![3]).unwrap();
    check_gradient(text, here(), "f", &[v3(14), n], &[Param(0)]);
}

#[test]
fn closure_captured_by_a_recursive_graph() {
    let text = r#"
graph f(x: f32[3], a: f32[3]) {
  graph k(z) { return z * a }
  graph go(z, n) {
    r = if n < 1 { z } else { go(k(z) + x, n - 1) }
    return r
  }
  return go(x, 3)
}
"#;
    check_gradient(text, here(), "f", &[v3(15), v3(16)], &[Param(0), Param(1)]);
}

#[test]
fn integer_parameters_get_zero_gradients() {
    let text = r#"
graph f(x: f32[3], n: i64) {
  return x * Cast(n, f32) + Cast(n * n, f32)
}
"#;
    let prog = program(text);
    let r = differentiate(&prog, &target("f"), &grad_wrt(&[Param(0), Param(1)])).unwrap();
    let full = with_result(&prog, &r);
    let n = Tensor::from_i64(DType::I64, vec![], vec![4]).unwrap();
    let got = leaves(&run(&full, here(), &r.entry, &[v3(17).cast(DType::F32), n]));
    assert_eq!(got[0].as_ref().unwrap().to_f64_vec(), vec![4.0; 3]);
    let dn = got[1].as_ref().unwrap();
    assert_eq!((dn.dtype(), dn.to_f64_vec()), (DType::I64, vec![0.0]));
}

#[test]
fn value_and_grad_and_vjp_of_tuple_outputs() {
    let text = r#"
graph f(x: f32[3], y: f32[3]) { return (x * y, Exp(x)) }
"#;
    let prog = program(text);
    let (x, y) = (v3(18), v3(19));
    let vg = MetaFn::ValueAndGrad { wrt: None };
    let r = differentiate(&prog, &target("f"), &vg).unwrap();
    let got = leaves(&run(
        &with_result(&prog, &r),
        here(),
        &r.entry,
        &[x.clone(), y.clone()],
    ));
    let (xs, ys) = (x.to_f64_vec(), y.to_f64_vec());
    let want_dx: Vec<f64> = (0..3).map(|i| ys[i] + xs[i].exp()).collect();
    let close = |a: &[f64], b: &[f64]| a.iter().zip(b).all(|(p, q)| (p - q).abs() < 1e-9);
    assert_eq!(got.len(), 3); // (x * y, exp(x)), grad
    assert!(close(&got[2].as_ref().unwrap().to_f64_vec(), &want_dx));

    // vjp: (output, backprop); backprop((dp, de)) = (dp * y + de * exp(x), dp * x).
    let vjp = differentiate(&prog, &target("f"), &MetaFn::Vjp).unwrap();
    let full = with_result(&prog, &vjp);
    let text = format!(
        "{}\ngraph check(x: f32[3], y: f32[3], dp: f32[3], de: f32[3]) {{\n  (out, back) = {}(x, y)\n  return back((dp, de))\n}}\n",
        text, vjp.entry
    );
    let _ = text;
    let dp = random(&[3], 20, -1.0, 1.0);
    let de = random(&[3], 21, -1.0, 1.0);
    let mut ex = exec::Executor::new(&full, exec::ExecOptions::default());
    let args = vec![ex.tensor(x.clone()), ex.tensor(y.clone())];
    let pair = ex.call(&vjp.entry, args).unwrap();
    let exec::Value::Tuple(items) = pair else {
        panic!("a pair")
    };
    let dout = exec::Value::tuple(vec![ex.tensor(dp.clone()), ex.tensor(de.clone())]);
    let grads = leaves(&ex.call_value(items[1].clone(), vec![dout]).unwrap());
    let (dps, des) = (dp.to_f64_vec(), de.to_f64_vec());
    let want_x: Vec<f64> = (0..3)
        .map(|i| dps[i] * ys[i] + des[i] * xs[i].exp())
        .collect();
    let want_y: Vec<f64> = (0..3).map(|i| dps[i] * xs[i]).collect();
    assert!(close(&grads[0].as_ref().unwrap().to_f64_vec(), &want_x));
    assert!(close(&grads[1].as_ref().unwrap().to_f64_vec(), &want_y));
}

#[test]
fn wrt_order_mixes_parameters_and_weights() {
    let text = r#"
param w: f32[3] = constant(2.0)
graph f(x: f32[3], y: f32[3]) { return x * w + y * y }
"#;
    let g = check_gradient(
        text,
        here(),
        "f",
        &[v3(22), v3(23)],
        &[Weight("w".into()), Param(1), Param(0), Weight("w".into())],
    );
    assert_eq!(g[0].to_f64_vec(), g[3].to_f64_vec());
}

#[test]
fn nested_target_without_captures() {
    let text = r#"
graph hof(x: f32[2]) {
  graph f(x) { return x * x + 3 }
  graph g(function, x) { return function(x) * function(x) }
  return g(f, x)
}
"#;
    let prog = program(text);
    // `f` is graph 1 of `hof`.
    let t = GradTarget {
        item: "hof".into(),
        graph: GraphId(1),
    };
    let r = differentiate(&prog, &t, &MetaFn::Grad { wrt: None }).unwrap();
    let x = random(&[2], 24, -1.0, 1.0);
    let got = leaves(&run(
        &with_result(&prog, &r),
        here(),
        &r.entry,
        std::slice::from_ref(&x),
    ));
    let want: Vec<f64> = x.to_f64_vec().iter().map(|v| 2.0 * v).collect();
    assert_eq!(got[0].as_ref().unwrap().to_f64_vec(), want);
    // A nested graph that captures values is lifted: its derivative takes
    // the captured values after its own parameters.
    let text =
        "graph h(x: f32[2]) {\n  graph inner(y) { return x * Sin(y) }\n  return inner(x)\n}\n";
    let prog = program(text);
    let t = GradTarget {
        item: "h".into(),
        graph: GraphId(1),
    };
    let r = differentiate(&prog, &t, &MetaFn::Grad { wrt: None }).unwrap();
    let (y, x) = (random(&[2], 25, -1.0, 1.0), random(&[2], 26, -1.0, 1.0));
    let got = leaves(&run(
        &with_result(&prog, &r),
        here(),
        &r.entry,
        &[y.clone(), x.clone()],
    ));
    let want: Vec<f64> = x
        .to_f64_vec()
        .iter()
        .zip(y.to_f64_vec())
        .map(|(a, b)| a * b.cos())
        .collect();
    let got = got[0].as_ref().unwrap().to_f64_vec();
    assert!(
        got.iter().zip(&want).all(|(a, b)| (a - b).abs() < 1e-6),
        "{got:?} vs {want:?}"
    );
}

#[test]
fn errors() {
    let prog = program("param w: f32[2] = ones\ngraph f() { return w }\ngraph g(x: f32[2]) {\n  graph k(y) { return x * y }\n  return k\n}\n");
    let e = |name: &str, meta: MetaFn| differentiate(&prog, &target(name), &meta).unwrap_err().0;
    assert!(e("f", MetaFn::Grad { wrt: None }).contains("at least one parameter"));
    assert!(e("f", grad_wrt(&[Weight("nope".into())])).contains("not a weight"));
    assert!(e("g", MetaFn::Grad { wrt: None }).contains("function"));
    assert!(e("missing", MetaFn::Grad { wrt: None }).contains("no graph"));
    // With `wrt=` weights, a graph without parameters has gradients.
    let r = differentiate(&prog, &target("f"), &grad_wrt(&[Weight("w".into())])).unwrap();
    let got = leaves(&run(&with_result(&prog, &r), here(), &r.entry, &[]));
    assert_eq!(got[0].as_ref().unwrap().to_f64_vec(), vec![1.0, 1.0]);
}

#[test]
fn switch_between_values() {
    let text = r#"
graph f(x: f32[3], y: f32[3], c: bool) {
  s = Switch(c, x * y, Exp(x))
  return s * y
}
"#;
    for c in [true, false] {
        let cond = Tensor::from_bool(vec![], vec![c]).unwrap();
        check_gradient(
            text,
            here(),
            "f",
            &[v3(25), v3(26), cond],
            &[Param(0), Param(1)],
        );
    }
}

#[test]
fn weights_in_branches_of_a_recursive_graph() {
    let text = r#"
param w: f32[3] = constant(0.75)
graph f(x: f32[3], n: i64) {
  r = if n < 1 { x * w } else { f(Sin(x) * w + x, n - 1) }
  return r
}
"#;
    let n = Tensor::from_i64(DType::I64, vec![], vec![3]).unwrap();
    check_gradient(
        text,
        here(),
        "f",
        &[v3(27), n],
        &[Param(0), Weight("w".into())],
    );
}

#[test]
fn argument_values_given_by_the_caller() {
    // An unannotated target: shapes come from `Options::param_values`, and the
    // broadcast reductions of the gradient rules resolve.
    let text = "graph f(x, y) {\n  return x * y + x\n}\n";
    let prog = program(text);
    let t = ir::AbsVal::tensor(DType::F32, &[3]);
    let options = autodiff::Options {
        param_values: Some(vec![t.clone(), t]),
        optimize: true,
        ..Default::default()
    };
    let r =
        autodiff::differentiate_with(&prog, &target("f"), &MetaFn::Grad { wrt: None }, &options)
            .unwrap();
    expect_test::expect![[r#"
        graph grad_f(x, y) {
          %0 = OnesLike(x)
          %1 = Add(%0, y)
          return %1
        }
    "#]]
    .assert_eq(&autodiff::print_result(&r));
}

#[test]
fn closures_of_different_graphs_meeting_in_one_function() {
    // `apply`'s `f` is either `k` (analysed once for both calls): each
    // closure's environment has a slot for what the other captures, which it
    // cannot see; it holds a placeholder zero there.
    let text = r#"
graph apply(f, x) { return f(x) }
graph a1(x, w) {
  graph k(z) { return z * w }
  return apply(k, x)
}
graph a2(x, v) {
  graph k(z) { return z + Exp(v) }
  return apply(k, x) + apply(Sin, v)
}
graph f(x: f32[3], w: f32[3], v: f32[3]) { return a1(x, w) * a2(x, v) }
"#;
    check_gradient(
        text,
        here(),
        "f",
        &[v3(28), v3(29), v3(30)],
        &[Param(0), Param(1), Param(2)],
    );
}

/// Issue #12's reproducer: the `zeros` pass rewrote `_SumToShapeOf` into
/// `ReduceSum` nodes the analysis had not seen, then asked for their values
/// (an index out of bounds in `Analysis::value`).
#[test]
fn clean_up_asks_about_nodes_created_after_the_analysis() {
    let text = r#"
graph f(x: f32[2, 3], y: f32[3]) -> f32[2, 3] {
  b = 1 + Square(y)
  return x / b
}
"#;
    let x = random(&[2, 3], 11, -1.0, 1.0);
    let y = random(&[3], 12, -1.0, 1.0);
    check_gradient(text, here(), "f", &[x, y], &[Param(0), Param(1)]);
    let prog = program(text);
    let g = gradient_text(&prog, "f", &grad_wrt(&[Param(0), Param(1)]));
    check_standalone(&g);
}

/// `Options::unroll` (what export asks for): a recursion whose depth the
/// arguments decide (`go(x, 3)`, and `lstm`'s steps over a sequence of known
/// length) unrolls into straight-line code — no graph of the gradient calls
/// itself, no backpropagator passes through a recursive call — and computes
/// the gradient the recursive form computes. A depth given as an argument
/// stays a recursion, and [`autodiff::remaining_recursion`] finds it.
#[test]
fn unrolling_a_recursion_of_known_depth() {
    let text = r#"
graph f(x: f32[3], a: f32[3]) {
  graph k(z) { return z * a }
  graph go(z, n) {
    r = if n < 1 { z } else { go(Tanh(k(z)) + x, n - 1) }
    return r
  }
  return ReduceSum(go(x, 3) * go(a, 2))
}
graph g(x: f32[3], n: i64) {
  graph go(z, m) {
    r = if m < 1 { z } else { go(Sin(z) * x, m - 1) }
    return r
  }
  return ReduceSum(go(x, n))
}
"#;
    let prog = program(text);
    let meta = grad_wrt(&[Param(0), Param(1)]);
    let plain = differentiate(&prog, &target("f"), &meta).unwrap();
    assert!(autodiff::remaining_recursion(&plain).is_some());
    let options = autodiff::Options {
        unroll: true,
        ..Default::default()
    };
    let unrolled = autodiff::differentiate_with(&prog, &target("f"), &meta, &options).unwrap();
    assert_eq!(autodiff::remaining_recursion(&unrolled), None);
    let text_unrolled = autodiff::print_result(&unrolled);
    assert!(!text_unrolled.contains("Switch"), "{text_unrolled}");
    let args = [v3(41), v3(42)];
    let want = leaves(&run(
        &with_result(&prog, &plain),
        here(),
        &plain.entry,
        &args,
    ));
    let got = leaves(&run(
        &with_result(&prog, &unrolled),
        here(),
        &unrolled.entry,
        &args,
    ));
    assert_eq!(got.len(), want.len());
    for (g, w) in got.iter().zip(&want) {
        let (g, w) = (
            g.as_ref().unwrap().to_f64_vec(),
            w.as_ref().unwrap().to_f64_vec(),
        );
        assert!(
            g.iter().zip(&w).all(|(a, b)| (a - b).abs() < 1e-6),
            "{g:?} vs {w:?}"
        );
    }
    // The depth an argument: nothing to unroll by.
    let meta = grad_wrt(&[Param(0)]);
    let r = autodiff::differentiate_with(&prog, &target("g"), &meta, &options).unwrap();
    assert!(autodiff::remaining_recursion(&r).is_some());
}
