//! Higher-order differentiation (issue #12): `grad(grad(f))`, a
//! Hessian-vector product (`grad` of a graph that calls `grad`), a MAML step
//! (the gradient of a loss taken after an inner gradient step), `jvp`, `hvp`,
//! and metafunctions of closures. Each is checked against central finite
//! differences in f64 of the executor running the first-order program (whose
//! own gradients the executor takes at run time), and the printed gradient
//! program must check and run to the same numbers.

mod common;

use std::path::Path;

use common::*;
use ir::{MetaFn, WrtItem};
use tensor::Tensor;

use WrtItem::Param;

fn here() -> &'static Path {
    Path::new(".")
}

fn t(shape: &[usize], seed: u64) -> Tensor {
    random(shape, seed, -1.0, 1.0)
}

/// Runs `entry` with f64 arguments.
fn run64(text: &str, entry: &str, args: &[Tensor]) -> Vec<Vec<f64>> {
    let prog = program(text);
    let args: Vec<Tensor> = args.iter().map(|a| a.cast(tensor::DType::F64)).collect();
    leaves(&run(&prog, here(), entry, &args))
        .into_iter()
        .map(|t| t.map(|t| t.to_f64_vec()).unwrap_or_default())
        .collect()
}

fn close(a: &[f64], b: &[f64], what: &str) {
    assert_eq!(a.len(), b.len(), "{what}: lengths");
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        assert!(
            (x - y).abs() <= 1e-5 * (1.0 + y.abs()),
            "{what}: element {i}: {x} vs {y}\n{a:?}\n{b:?}"
        );
    }
}

/// The printed gradient of `name` checks, and runs to the numbers the
/// transformation's graphs give.
fn printed_gradient_runs(text: &str, name: &str, meta: &MetaFn, args: &[Tensor]) {
    let prog = program(text);
    let g = gradient_text(&prog, name, meta);
    check_standalone(&g);
    let r = autodiff::differentiate(&prog, &target(name), meta).unwrap();
    let args: Vec<Tensor> = args.iter().map(|a| a.cast(tensor::DType::F64)).collect();
    let direct = leaves(&run(&with_result(&prog, &r), here(), &r.entry, &args));
    let full = program(&format!("{text}\n{g}"));
    let printed = leaves(&run(&full, here(), &r.entry, &args));
    assert_eq!(direct.len(), printed.len());
    for (a, b) in direct.iter().zip(&printed) {
        if let (Some(a), Some(b)) = (a, b) {
            close(&a.to_f64_vec(), &b.to_f64_vec(), "printed gradient");
        }
    }
}

const F: &str = r#"
graph f(x: f32[3]) -> f32[] {
  return ReduceSum(Sin(x) * x + Square(x) * Exp(-x))
}
"#;

#[test]
fn grad_of_grad() {
    // d/dx of sum(grad(f)(x)): the row sums of f's Hessian.
    let text = format!(
        "{F}\ngraph g1(x: f32[3]) -> f32[] {{ return ReduceSum(grad(f)(x)) }}\n\
         graph gg(x: f32[3]) {{ return grad(grad(f))(x) }}\n"
    );
    let x = t(&[3], 1);
    let got = check_gradient(&text, here(), "g1", std::slice::from_ref(&x), &[Param(0)]);
    // The executor's grad(grad(f)) agrees.
    let run = run64(&text, "gg", std::slice::from_ref(&x));
    close(&run[0], &got[0].to_f64_vec(), "grad(grad(f)) at run time");
    printed_gradient_runs(&text, "g1", &MetaFn::Grad { wrt: None }, &[x]);
}

#[test]
fn third_order() {
    let text =
        format!("{F}\ngraph g2(x: f32[3]) -> f32[] {{ return ReduceSum(grad(grad(f))(x)) }}\n");
    check_gradient(&text, here(), "g2", &[t(&[3], 2)], &[Param(0)]);
}

#[test]
fn hessian_vector_product() {
    // grad of a graph that calls grad: H·v, and hvp(f) directly.
    let text = format!(
        "{F}\ngraph gv(x: f32[3], v: f32[3]) -> f32[] {{ return ReduceSum(grad(f)(x) * v) }}\n\
         graph h(x: f32[3], v: f32[3]) {{ return hvp(f)(x, v) }}\n"
    );
    let (x, v) = (t(&[3], 3), t(&[3], 4));
    let got = check_gradient(
        &text,
        here(),
        "gv",
        &[x.clone(), v.clone()],
        &[Param(0), Param(1)],
    );
    let hv = run64(&text, "h", &[x.clone(), v.clone()]);
    close(&hv[0], &got[0].to_f64_vec(), "hvp(f)");
    printed_gradient_runs(&text, "gv", &MetaFn::Grad { wrt: None }, &[x, v]);
}

const MAML: &str = r#"
param w0: f32[3, 2] = normal(std=0.5, seed=3)
graph loss(w: f32[3, 2], x: f32[4, 3], y: f32[4, 2]) -> f32[] {
  d = MatMul(x, w) - y
  return ReduceMean(Square(Tanh(d))) + 0.1 * ReduceSum(Square(w))
}
graph adapted(w: f32[3, 2], x: f32[4, 3], y: f32[4, 2]) -> f32[3, 2] {
  g = grad(loss)(w, x, y)
  return w - 0.5 * g
}
graph maml(w: f32[3, 2], x: f32[4, 3], y: f32[4, 2], x2: f32[4, 3], y2: f32[4, 2]) -> f32[] {
  return loss(adapted(w, x, y), x2, y2)
}
graph two_steps(w: f32[3, 2], x: f32[4, 3], y: f32[4, 2], x2: f32[4, 3], y2: f32[4, 2]) -> f32[] {
  return loss(adapted(adapted(w, x, y), x, y), x2, y2)
}
graph with_weights(x: f32[4, 3], y: f32[4, 2], x2: f32[4, 3], y2: f32[4, 2]) -> f32[] {
  return loss(adapted(w0, x, y), x2, y2) * 2.0
}
"#;

#[test]
fn maml_step() {
    let args = [
        t(&[3, 2], 5),
        t(&[4, 3], 6),
        t(&[4, 2], 7),
        t(&[4, 3], 8),
        t(&[4, 2], 9),
    ];
    check_gradient(MAML, here(), "maml", &args, &[Param(0), Param(1), Param(3)]);
    check_gradient(MAML, here(), "two_steps", &args, &[Param(0)]);
    check_gradient(
        MAML,
        here(),
        "with_weights",
        &args[1..],
        &[WrtItem::Weight("w0".into()), Param(0)],
    );
    printed_gradient_runs(MAML, "maml", &MetaFn::Grad { wrt: None }, &args);
}

#[test]
fn jvp_is_the_directional_derivative() {
    let text = r#"
graph f(x: f32[3], y: f32[2, 3]) { return (Sin(x) * y, ReduceSum(Exp(y))) }
graph j(x: f32[3], y: f32[2, 3], dx: f32[3], dy: f32[2, 3]) { return jvp(f)(x, y, dx, dy) }
"#;
    let (x, y, dx, dy) = (t(&[3], 10), t(&[2, 3], 11), t(&[3], 12), t(&[2, 3], 13));
    let got = run64(text, "j", &[x.clone(), y.clone(), dx.clone(), dy.clone()]);
    // (out0, out1, tangent0, tangent1)
    assert_eq!(got.len(), 4);
    let h = 1e-6;
    let moved = |s: f64| {
        let m = |a: &Tensor, d: &Tensor| {
            let v: Vec<f64> = a
                .to_f64_vec()
                .iter()
                .zip(d.to_f64_vec())
                .map(|(p, q)| p + s * q)
                .collect();
            f64_tensor(a.shape(), v)
        };
        run64(text, "f", &[m(&x, &dx), m(&y, &dy)])
    };
    let (p, m) = (moved(h), moved(-h));
    for k in 0..2 {
        let fd: Vec<f64> = p[k]
            .iter()
            .zip(&m[k])
            .map(|(a, b)| (a - b) / (2.0 * h))
            .collect();
        close(&got[2 + k], &fd, "jvp tangent");
    }
    let out = run64(text, "f", &[x, y]);
    close(&got[0], &out[0], "jvp value");
}

#[test]
fn metafunctions_of_closures() {
    let text = r#"
graph k2(x: f32[3], a: f32[3]) -> f32[] {
  k = fn(y) => ReduceSum(Sin(y * a) * y)
  return ReduceSum(grad(k)(x) * x)
}
graph kk(x: f32[3], a: f32[3]) {
  k = fn(y) => ReduceSum(Sin(y * a) * y)
  return grad(grad(k))(x)
}
graph k1(x: f32[3], a: f32[3]) -> f32[] {
  k = fn(y) => ReduceSum(Sin(y * a) * y)
  return ReduceSum(grad(k)(x))
}
"#;
    let (x, a) = (t(&[3], 14), t(&[3], 15));
    check_gradient(
        text,
        here(),
        "k2",
        &[x.clone(), a.clone()],
        &[Param(0), Param(1)],
    );
    let got = check_gradient(text, here(), "k1", &[x.clone(), a.clone()], &[Param(0)]);
    let run = run64(text, "kk", &[x.clone(), a.clone()]);
    close(
        &run[0],
        &got[0].to_f64_vec(),
        "grad(grad(closure)) at run time",
    );
    printed_gradient_runs(
        text,
        "k2",
        &MetaFn::Grad {
            wrt: Some(vec![Param(0), Param(1)]),
        },
        &[x, a],
    );
}

#[test]
fn value_and_grad_and_vjp_inside() {
    let text = r#"
graph f(x: f32[2, 3], w: f32[3]) -> f32[] { return ReduceSum(Tanh(x * w)) }
graph g(x: f32[2, 3], w: f32[3]) -> f32[] {
  (v, (gx, gw)) = value_and_grad(f, wrt=(0, 1))(x, w)
  (o, bp) = vjp(f)(x, w)
  (dx, dw) = bp(o)
  return v * ReduceSum(gx * x) + ReduceSum(gw * dw) + ReduceSum(dx)
}
"#;
    check_gradient(
        text,
        here(),
        "g",
        &[t(&[2, 3], 16), t(&[3], 17)],
        &[Param(0), Param(1)],
    );
}

#[test]
fn primitives_and_recursion_inside() {
    let text = r#"
graph pw(x: f32[3], n: i64) -> f32[3] {
  r = if n > 0 { Sin(pw(x, n - 1)) * x } else { x }
  return r
}
graph g(x: f32[3]) -> f32[] {
  a = grad(Exp)(x)
  b = grad(pw)(x, 2)
  return ReduceSum(a * b)
}
"#;
    check_gradient(text, here(), "g", &[t(&[3], 18)], &[Param(0)]);
}
