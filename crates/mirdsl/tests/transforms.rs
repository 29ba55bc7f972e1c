//! The functional transforms (spec §7): `vmap`, `jacrev`, `jacfwd` and
//! `hessian`, `checkpoint` and a graph's own backward rule, run by the executor.
//!
//! Checked without any outside tool: `vmap(f)(xs)` equals `f` applied to
//! each example and stacked (the stack property), through the batched form
//! (a tensor-condition `if` and calls of other graphs included) and the
//! per-example one (closures); `vmap(grad(f))` equals
//! the per-example gradients and `grad(vmap(f))` their sum; the Jacobians
//! and the Hessian equal central finite differences (f64). With JAX
//! installed (`pip install jax`; `MIRDSL_REQUIRE_TOOLS=jax` makes it
//! required) the cases of issue 24's "Done means" are also compared with
//! `jax.vmap`, `jax.jacrev`, `jax.jacfwd` and `jax.hessian`; with MindSpore
//! (`MIRDSL_MINDSPORE_PYTHON`), a straight-through estimator's gradient
//! exported from the DSL (its `bprop`) gives what MindSpore's own
//! `Cell.bprop` gives, and the vmap and Jacobian cases match `ops.vmap`,
//! `ops.jacrev` and `ops.jacfwd` (float32). A custom-bprop network exported
//! by MindSpore (tests/data/custom_bprop, made afresh with MindSpore) is
//! imported and its gradient network run to MindSpore's gradient.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use exec::{ExecOptions, Executor, Value};
use tensor::Tensor;
use test_support::Tool;

const SRC: &str = r#"
graph ew(x: f64[3], y: f64[3]) {
  return Sin(x) * y + Exp(x) - 2.0
}
graph v_ew(xs: f64[4, 3], ys: f64[4, 3]) {
  return vmap(ew)(xs, ys)
}

# in_axes=(1, none), out_axes=1 through MatMul and Softmax.
graph mm(x: f64[3], w: f64[3, 2]) {
  return Softmax(MatMul(ExpandDims(x, axis=0), w), axis=-1)
}
graph v_mm(xs: f64[3, 4], w: f64[3, 2]) {
  return vmap(mm, in_axes=(1, none), out_axes=1)(xs, w)
}

# Reductions and a tuple output.
graph red(x: f64[3, 2]) {
  return (ReduceSum(x, axis=1), ReduceMax(x), Transpose(x, perm=(1, 0)))
}
graph v_red(xs: f64[4, 3, 2]) {
  return vmap(red)(xs)
}

# A branch on a tensor condition: both sides run, each example selects its own.
graph branchy(x: f64[3]) {
  r = if ReduceSum(x) > 0.0 { x * 2.0 } else { Neg(x) }
  return r
}
graph v_branchy(xs: f64[5, 3]) {
  return vmap(branchy)(xs)
}

# A call of another graph and a closure.
graph calls(x: f64[3]) {
  k = fn(y) => ew(y, x) * 3.0
  return k(x) + ew(x, x)
}
graph v_calls(xs: f64[4, 3]) {
  return vmap(calls)(xs)
}

# Calls of other graphs only (one of them twice, with a batched and an
# unbatched argument): batched through the calls.
graph through(x: f64[3], w: f64[3, 2]) {
  h = ew(x, Cos(x))
  return mm(h, w) + ReduceSum(ew(h, x)) + mm(x, w)
}
graph v_through(xs: f64[4, 3], w: f64[3, 2]) {
  return vmap(through, in_axes=(0, none))(xs, w)
}

# Pairwise distances by vmap(vmap(...)).
graph dist(a: f64[2], b: f64[2]) {
  d = a - b
  return Sqrt(ReduceSum(d * d))
}
graph pairwise(xs: f64[4, 2], ys: f64[3, 2]) {
  return vmap(vmap(dist, in_axes=(none, 0)), in_axes=(0, none))(xs, ys)
}

# Per-example gradients of an MLP.
graph mlp_loss(w1: f64[3, 4], w2: f64[4, 2], x: f64[3], y: f64[2]) {
  h = Tanh(MatMul(ExpandDims(x, axis=0), w1))
  o = MatMul(h, w2)
  d = Squeeze(o, axis=0) - y
  return ReduceSum(d * d)
}
graph mlp_grad(w1: f64[3, 4], w2: f64[4, 2], x: f64[3], y: f64[2]) {
  return grad(mlp_loss, wrt=(0, 1))(w1, w2, x, y)
}
graph per_example(w1: f64[3, 4], w2: f64[4, 2], xs: f64[5, 3], ys: f64[5, 2]) {
  return vmap(grad(mlp_loss, wrt=(0, 1)), in_axes=(none, none, 0, 0))(w1, w2, xs, ys)
}
graph batch_loss(w1: f64[3, 4], w2: f64[4, 2], xs: f64[5, 3], ys: f64[5, 2]) {
  return ReduceSum(vmap(mlp_loss, in_axes=(none, none, 0, 0))(w1, w2, xs, ys))
}
# The gradients of reductions (keep_dims, a mean, all axes) per example.
graph red_loss(x: f64[3, 2]) {
  return ReduceMean(ReduceSum(x * x, axis=1, keep_dims=true) * Sin(x)) + ReduceSum(ReduceMean(Exp(x), axis=0))
}
graph g_red(x: f64[3, 2]) {
  return grad(red_loss)(x)
}
graph v_g_red(xs: f64[4, 3, 2]) {
  return vmap(grad(red_loss))(xs)
}
graph grad_of_vmap(w1: f64[3, 4], w2: f64[4, 2], xs: f64[5, 3], ys: f64[5, 2]) {
  return grad(batch_loss, wrt=(0, 1))(w1, w2, xs, ys)
}

# Jacobians and Hessians of small networks.
graph net(x: f64[3], w: f64[3, 2]) {
  return Tanh(MatMul(ExpandDims(x, axis=0), w))
}
graph jr(x: f64[3], w: f64[3, 2]) {
  return jacrev(net)(x, w)
}
graph jf(x: f64[3], w: f64[3, 2]) {
  return jacfwd(net)(x, w)
}
graph jr_w(x: f64[3], w: f64[3, 2]) {
  return jacrev(net, wrt=(1,))(x, w)
}
graph jf_w(x: f64[3], w: f64[3, 2]) {
  return jacfwd(net, wrt=(1,))(x, w)
}
graph energy(x: f64[3], w: f64[3, 2]) {
  h = Tanh(MatMul(ExpandDims(x, axis=0), w))
  return ReduceSum(h * h) + ReduceSum(Sin(x))
}
graph g_energy(x: f64[3], w: f64[3, 2]) {
  return grad(energy)(x, w)
}
graph hs(x: f64[3], w: f64[3, 2]) {
  return hessian(energy)(x, w)
}

# Custom backward rules (a nested graph `bprop`, as MindSpore's Cell.bprop).
# A straight-through estimator: the forward rounds, the backward passes
# the sensitivity through, clipped to [-1, 1].
graph ste(x: f64[4]) {
  graph bprop(x, out, dout) {
    return (ClampScalar(dout, min=-1.0, max=1.0),)
  }
  return Round(x)
}
graph ste_loss(x: f64[4]) {
  return ReduceSum(ste(x * 3.0) * x)
}
graph g_ste(x: f64[4]) {
  return grad(ste_loss)(x)
}
# A numerically stable rule for softplus, using the output it is given.
graph softplus(x: f64[3], s: f64[3]) {
  graph bprop(x, s, out, dout) {
    return (dout * s * Sigmoid(x), dout * out / s)
  }
  return Log(1.0 + Exp(x)) * s
}
graph sp_loss(x: f64[3], s: f64[3]) {
  return ReduceSum(Sin(softplus(x, s)))
}
graph g_sp(x: f64[3], s: f64[3]) {
  return grad(sp_loss, wrt=(0, 1))(x, s)
}

# Rematerialisation: checkpoint(block) recomputes block in the backward pass.
graph block(x: f64[2, 3], w: f64[3, 3]) {
  return Tanh(MatMul(x, w))
}
graph ck_loss(x: f64[2, 3], w: f64[3, 3]) {
  h = checkpoint(block)(x, w)
  return ReduceSum(Sin(checkpoint(block)(h, w)))
}
graph plain_loss(x: f64[2, 3], w: f64[3, 3]) {
  h = block(x, w)
  return ReduceSum(Sin(block(h, w)))
}
graph g_ck(x: f64[2, 3], w: f64[3, 3]) {
  return grad(ck_loss, wrt=(0, 1))(x, w)
}
graph g_plain(x: f64[2, 3], w: f64[3, 3]) {
  return grad(plain_loss, wrt=(0, 1))(x, w)
}
graph gg_ck(x: f64[2, 3], w: f64[3, 3]) {
  return grad(fn(w) => ReduceSum(grad(ck_loss)(x, w)))(w)
}
graph gg_plain(x: f64[2, 3], w: f64[3, 3]) {
  return grad(fn(w) => ReduceSum(grad(plain_loss)(x, w)))(w)
}
"#;

fn executor() -> Executor {
    let analysed = analysis::analyze(SRC);
    let errors: Vec<String> = analysed
        .diagnostics
        .iter()
        .filter(|d| d.severity == analysis::Severity::Error)
        .map(|d| d.message.clone())
        .collect();
    assert!(errors.is_empty(), "{errors:?}");
    Executor::new(&analysed.source.program(), ExecOptions::default())
}

/// A deterministic tensor with values in [-1, 1).
fn rand(shape: &[usize], seed: u64) -> Tensor {
    let n: usize = shape.iter().product();
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let data = (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
        })
        .collect();
    Tensor::from_f64(shape.to_vec(), data).unwrap()
}

fn call(ex: &mut Executor, entry: &str, args: &[Tensor]) -> Value {
    let args = args.iter().cloned().map(Value::tensor).collect();
    ex.call(entry, args)
        .unwrap_or_else(|e| panic!("{entry}: {}", e.message))
}

/// The tensors of a value, flattened in order.
fn leaves(v: &Value) -> Vec<Tensor> {
    match v {
        Value::Tensor(t) => vec![t.tensor().clone()],
        Value::Tuple(items) => items.iter().flat_map(leaves).collect(),
        other => panic!("not a tensor or tuple: {}", other.describe()),
    }
}

/// Example `i` of `t` along `axis`.
fn take(t: &Tensor, axis: usize, i: usize) -> Tensor {
    let shape = t.shape();
    let outer: usize = shape[..axis].iter().product();
    let inner: usize = shape[axis + 1..].iter().product();
    let n = shape[axis];
    let data = t.to_f64_vec();
    let mut out = Vec::with_capacity(outer * inner);
    for o in 0..outer {
        out.extend_from_slice(&data[(o * n + i) * inner..(o * n + i + 1) * inner]);
    }
    let mut s = shape.to_vec();
    s.remove(axis);
    Tensor::from_f64(s, out).unwrap()
}

/// `ts` stacked along a new `axis`.
fn stack(ts: &[Tensor], axis: usize) -> Tensor {
    let shape = ts[0].shape().to_vec();
    let outer: usize = shape[..axis].iter().product();
    let inner: usize = shape[axis..].iter().product();
    let datas: Vec<Vec<f64>> = ts.iter().map(Tensor::to_f64_vec).collect();
    let mut out = Vec::new();
    for o in 0..outer {
        for d in &datas {
            out.extend_from_slice(&d[o * inner..(o + 1) * inner]);
        }
    }
    let mut s = shape;
    s.insert(axis, ts.len());
    Tensor::from_f64(s, out).unwrap()
}

fn assert_close(what: &str, got: &Tensor, want: &Tensor, tol: f64) {
    assert_eq!(got.shape(), want.shape(), "{what}: shapes");
    for (i, (a, b)) in got.to_f64_vec().iter().zip(want.to_f64_vec()).enumerate() {
        assert!(
            (a - b).abs() <= tol * (1.0 + b.abs()),
            "{what}: element {i} is {a}, expected {b}"
        );
    }
}

/// `vmap(f)(args)` (entry `mapped`) against `f` (entry `each`) applied
/// to every example (`axes`: the mapped axis of each argument) and
/// stacked along `out_axis`.
fn check_stack(
    ex: &mut Executor,
    mapped: &str,
    each: &str,
    args: &[Tensor],
    axes: &[Option<usize>],
    out_axis: usize,
) {
    let got = leaves(&call(ex, mapped, args));
    let n = args
        .iter()
        .zip(axes)
        .find_map(|(a, ax)| ax.map(|ax| a.shape()[ax]))
        .unwrap();
    let per: Vec<Vec<Tensor>> = (0..n)
        .map(|i| {
            let xs: Vec<Tensor> = args
                .iter()
                .zip(axes)
                .map(|(a, ax)| ax.map_or(a.clone(), |ax| take(a, ax, i)))
                .collect();
            leaves(&call(ex, each, &xs))
        })
        .collect();
    assert_eq!(got.len(), per[0].len(), "{mapped}: outputs");
    for (k, g) in got.iter().enumerate() {
        let items: Vec<Tensor> = per.iter().map(|p| p[k].clone()).collect();
        assert_close(
            &format!("{mapped} output {k}"),
            g,
            &stack(&items, out_axis),
            1e-12,
        );
    }
}

#[test]
fn vmap_equals_stacking_each_example() {
    let mut ex = executor();
    let (a, b) = (rand(&[4, 3], 1), rand(&[4, 3], 2));
    check_stack(&mut ex, "v_ew", "ew", &[a, b], &[Some(0), Some(0)], 0);
    let (xs, w) = (rand(&[3, 4], 3), rand(&[3, 2], 4));
    check_stack(&mut ex, "v_mm", "mm", &[xs, w], &[Some(1), None], 1);
    check_stack(
        &mut ex,
        "v_red",
        "red",
        &[rand(&[4, 3, 2], 5)],
        &[Some(0)],
        0,
    );
    check_stack(
        &mut ex,
        "v_branchy",
        "branchy",
        &[rand(&[5, 3], 6)],
        &[Some(0)],
        0,
    );
    check_stack(
        &mut ex,
        "v_calls",
        "calls",
        &[rand(&[4, 3], 7)],
        &[Some(0)],
        0,
    );
    check_stack(
        &mut ex,
        "v_through",
        "through",
        &[rand(&[4, 3], 7), rand(&[3, 2], 4)],
        &[Some(0), None],
        0,
    );
    // The flat graphs were batched primitive by primitive, the branch on
    // a batched condition as both sides and a Select, and the graph of
    // calls through the batched forms of its callees; the closure ran per
    // example.
    let notes = ex.transform_notes().join("\n");
    for f in ["ew", "mm", "red", "branchy", "through"] {
        assert!(
            notes.contains(&format!("vmap of `{f}`: batched")),
            "{notes}"
        );
    }
    assert!(notes.contains("vmap of `calls`: per example"), "{notes}");
    assert!(!notes.contains("vmap of `through`: per example"), "{notes}");
    assert!(!notes.contains("vmap of `ew`: per example"), "{notes}");
    assert!(!notes.contains("vmap of `mm`: per example"), "{notes}");
}

#[test]
fn vmap_of_vmap_gives_pairwise_distances() {
    let mut ex = executor();
    let (xs, ys) = (rand(&[4, 2], 8), rand(&[3, 2], 9));
    let got = leaves(&call(&mut ex, "pairwise", &[xs.clone(), ys.clone()])).remove(0);
    let mut want = Vec::new();
    for i in 0..4 {
        for j in 0..3 {
            let (a, b) = (take(&xs, 0, i).to_f64_vec(), take(&ys, 0, j).to_f64_vec());
            want.push(((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2)).sqrt());
        }
    }
    assert_close(
        "pairwise",
        &got,
        &Tensor::from_f64(vec![4, 3], want).unwrap(),
        1e-12,
    );
}

#[test]
fn per_example_gradients_and_the_gradient_of_a_vmap() {
    let mut ex = executor();
    let args = [
        rand(&[3, 4], 10),
        rand(&[4, 2], 11),
        rand(&[5, 3], 12),
        rand(&[5, 2], 13),
    ];
    check_stack(
        &mut ex,
        "per_example",
        "mlp_grad",
        &args,
        &[None, None, Some(0), Some(0)],
        0,
    );
    // grad(vmap(f)) of the summed batch is the sum of the per-example gradients.
    let per = leaves(&call(&mut ex, "per_example", &args));
    let total = leaves(&call(&mut ex, "grad_of_vmap", &args));
    for (p, t) in per.iter().zip(&total) {
        let n = p.shape()[0];
        let mut sum = vec![0.0; t.numel()];
        for i in 0..n {
            for (s, v) in sum.iter_mut().zip(take(p, 0, i).to_f64_vec()) {
                *s += v;
            }
        }
        assert_close(
            "grad(vmap)",
            t,
            &Tensor::from_f64(t.shape().to_vec(), sum).unwrap(),
            1e-12,
        );
    }
    // The gradients of reductions batch too (no primitive per example).
    check_stack(
        &mut ex,
        "v_g_red",
        "g_red",
        &[rand(&[4, 3, 2], 20)],
        &[Some(0)],
        0,
    );
    let notes = ex.transform_notes().join("\n");
    for f in ["grad_mlp_loss", "grad_red_loss"] {
        assert!(
            notes.contains(&format!("vmap of `{f}`: batched\n"))
                || notes.ends_with(&format!("vmap of `{f}`: batched")),
            "{notes}"
        );
    }
}

/// The Jacobian of entry `f`'s (only) output with respect to argument
/// `p`, by central differences: shaped `out.shape + x.shape`.
fn fd_jacobian(ex: &mut Executor, f: &str, args: &[Tensor], p: usize) -> Tensor {
    let h = 1e-6;
    let x = &args[p];
    let mut cols: Vec<Vec<f64>> = Vec::new();
    let mut out_shape = Vec::new();
    for j in 0..x.numel() {
        let mut at = |s: f64| {
            let mut v = x.to_f64_vec();
            v[j] += s;
            let mut a = args.to_vec();
            a[p] = Tensor::from_f64(x.shape().to_vec(), v).unwrap();
            leaves(&call(ex, f, &a)).remove(0)
        };
        let (plus, minus) = (at(h), at(-h));
        out_shape = plus.shape().to_vec();
        cols.push(
            plus.to_f64_vec()
                .iter()
                .zip(minus.to_f64_vec())
                .map(|(a, b)| (a - b) / (2.0 * h))
                .collect(),
        );
    }
    let n_out = cols[0].len();
    let data: Vec<f64> = (0..n_out)
        .flat_map(|o| cols.iter().map(move |c| c[o]))
        .collect();
    let mut shape = out_shape;
    shape.extend(x.shape());
    Tensor::from_f64(shape, data).unwrap()
}

#[test]
fn jacobians_and_hessian_match_finite_differences() {
    let mut ex = executor();
    let args = [rand(&[3], 14), rand(&[3, 2], 15)];
    let want_x = fd_jacobian(&mut ex, "net", &args, 0);
    assert_eq!(want_x.shape(), &[1, 2, 3]);
    let want_w = fd_jacobian(&mut ex, "net", &args, 1);
    for (entry, want) in [
        ("jr", &want_x),
        ("jf", &want_x),
        ("jr_w", &want_w),
        ("jf_w", &want_w),
    ] {
        let got = leaves(&call(&mut ex, entry, &args)).remove(0);
        assert_close(entry, &got, want, 1e-7);
    }
    let want_h = fd_jacobian(&mut ex, "g_energy", &args, 0);
    let got = leaves(&call(&mut ex, "hs", &args)).remove(0);
    assert_eq!(got.shape(), &[3, 3]);
    assert_close("hessian", &got, &want_h, 1e-7);
}

/// The same cases in JAX (float64): each prints its outputs as JSON lists.
const JAX: &str = r#"
import json, sys
import jax, jax.numpy as jnp
jax.config.update("jax_enable_x64", True)
args = {k: [jnp.array(a) for a in v] for k, v in json.load(sys.stdin).items()}

def mm(x, w): return jax.nn.softmax((x[None, :] @ w), axis=-1)
def branchy(x): return jax.lax.cond(jnp.sum(x) > 0, lambda x: x * 2.0, lambda x: -x, x)
def dist(a, b): return jnp.sqrt(jnp.sum((a - b) ** 2))
def mlp_loss(w1, w2, x, y):
    h = jnp.tanh(x[None, :] @ w1)
    return jnp.sum(((h @ w2)[0] - y) ** 2)
def net(x, w): return jnp.tanh(x[None, :] @ w)
def ew(x, y): return jnp.sin(x) * y + jnp.exp(x) - 2.0
def through(x, w):
    h = ew(x, jnp.cos(x))
    return mm(h, w) + jnp.sum(ew(h, x)) + mm(x, w)
def energy(x, w):
    h = jnp.tanh(x[None, :] @ w)
    return jnp.sum(h * h) + jnp.sum(jnp.sin(x))

cases = {
    "v_mm": lambda xs, w: jax.vmap(mm, in_axes=(1, None), out_axes=1)(xs, w),
    "v_branchy": lambda xs: jax.vmap(branchy)(xs),
    "v_through": lambda xs, w: jax.vmap(through, in_axes=(0, None))(xs, w),
    "pairwise": lambda xs, ys: jax.vmap(jax.vmap(dist, in_axes=(None, 0)), in_axes=(0, None))(xs, ys),
    "per_example": lambda w1, w2, xs, ys: jax.vmap(jax.grad(mlp_loss, argnums=(0, 1)), in_axes=(None, None, 0, 0))(w1, w2, xs, ys),
    "jr": lambda x, w: jax.jacrev(net)(x, w),
    "jf": lambda x, w: jax.jacfwd(net)(x, w),
    "jr_w": lambda x, w: jax.jacrev(net, argnums=(1,))(x, w),
    "hs": lambda x, w: jax.hessian(energy)(x, w),
}
out = {}
for name, f in cases.items():
    leaves = jax.tree_util.tree_leaves(f(*args[name]))
    out[name] = [[list(l.shape), [float(v) for v in jnp.ravel(l)]] for l in leaves]
print(json.dumps(out))
"#;

#[test]
fn transforms_match_jax() {
    if test_support::require(Tool::Jax, test_support::jax()).is_none() {
        return;
    }
    let cases: Vec<(&str, Vec<Tensor>)> = vec![
        ("v_mm", vec![rand(&[3, 4], 3), rand(&[3, 2], 4)]),
        ("v_branchy", vec![rand(&[5, 3], 6)]),
        ("v_through", vec![rand(&[4, 3], 7), rand(&[3, 2], 4)]),
        ("pairwise", vec![rand(&[4, 2], 8), rand(&[3, 2], 9)]),
        (
            "per_example",
            vec![
                rand(&[3, 4], 10),
                rand(&[4, 2], 11),
                rand(&[5, 3], 12),
                rand(&[5, 2], 13),
            ],
        ),
        ("jr", vec![rand(&[3], 14), rand(&[3, 2], 15)]),
        ("jf", vec![rand(&[3], 14), rand(&[3, 2], 15)]),
        ("jr_w", vec![rand(&[3], 14), rand(&[3, 2], 15)]),
        ("hs", vec![rand(&[3], 14), rand(&[3, 2], 15)]),
    ];
    let nested = |t: &Tensor| -> serde_json::Value {
        fn go(shape: &[usize], data: &[f64]) -> serde_json::Value {
            match shape.split_first() {
                None => serde_json::json!(data[0]),
                Some((&n, rest)) => {
                    let step = rest.iter().product::<usize>();
                    serde_json::Value::Array((0..n).map(|i| go(rest, &data[i * step..])).collect())
                }
            }
        }
        go(t.shape(), &t.to_f64_vec())
    };
    let input: serde_json::Map<String, serde_json::Value> = cases
        .iter()
        .map(|(n, a)| {
            (
                n.to_string(),
                serde_json::Value::Array(a.iter().map(nested).collect()),
            )
        })
        .collect();
    let mut child = Command::new("python3")
        .args(["-c", JAX])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python3 runs");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(serde_json::Value::Object(input).to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let jax: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut ex = executor();
    for (name, args) in &cases {
        let got = leaves(&call(&mut ex, name, args));
        let want = jax[name].as_array().unwrap();
        assert_eq!(got.len(), want.len(), "{name}: outputs");
        for (k, (g, w)) in got.iter().zip(want).enumerate() {
            let shape: Vec<usize> = w[0]
                .as_array()
                .unwrap()
                .iter()
                .map(|d| d.as_u64().unwrap() as usize)
                .collect();
            let data: Vec<f64> = w[1]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_f64().unwrap())
                .collect();
            assert_close(
                &format!("{name} output {k} against JAX"),
                g,
                &Tensor::from_f64(shape, data).unwrap(),
                1e-9,
            );
        }
    }
}

#[test]
fn a_graph_s_own_backward_rule_replaces_its_derivative() {
    let mut ex = executor();
    // d/dx sum(ste(3x) * x) = round(3x) + 3 * clamp(x, -1, 1) under the rule
    // (the derivative of Round itself is zero).
    let x = Tensor::from_f64(vec![4], vec![0.1, 0.5, -0.7, 0.2]).unwrap();
    let got = leaves(&call(&mut ex, "g_ste", &[x])).remove(0);
    let want = Tensor::from_f64(vec![4], vec![0.3, 3.5, -4.1, 1.6]).unwrap();
    assert_close("straight-through", &got, &want, 1e-12);
    // A rule that is the true derivative gives the true gradient (central
    // differences), through the parameters and the output it is given.
    let args = [rand(&[3], 16), rand(&[3], 17)];
    let got = leaves(&call(&mut ex, "g_sp", &args));
    for (p, g) in got.iter().enumerate() {
        let fd = fd_jacobian(&mut ex, "sp_loss", &args, p)
            .reshaped(vec![3])
            .unwrap();
        assert_close(&format!("softplus rule, parameter {p}"), g, &fd, 1e-7);
    }
}

#[test]
fn checkpoint_gives_the_same_derivatives() {
    let mut ex = executor();
    let args = [rand(&[2, 3], 18), rand(&[3, 3], 19)];
    for (ck, plain) in [
        ("ck_loss", "plain_loss"),
        ("g_ck", "g_plain"),
        ("gg_ck", "gg_plain"),
    ] {
        let got = leaves(&call(&mut ex, ck, &args));
        let want = leaves(&call(&mut ex, plain, &args));
        assert_eq!(got.len(), want.len());
        for (g, w) in got.iter().zip(&want) {
            assert_close(ck, g, w, 1e-12);
        }
    }
}

/// A straight-through estimator as MindSpore writes it (`Cell.bprop`),
/// and its gradient program from the DSL exported to MindSpore.
const STE_MINDSPORE: &str = r#"
import sys
import numpy as np, mindspore as ms
from mindspore import nn, ops, Tensor
ms.set_context(mode=ms.GRAPH_MODE)
x = Tensor(np.array([0.1, 0.5, -0.7, 0.2], np.float32))
class Ste(nn.Cell):
    def construct(self, x): return ops.round(x)
    def bprop(self, x, out, dout): return (ops.clamp(dout, -1.0, 1.0),)
class Loss(nn.Cell):
    def __init__(self):
        super().__init__()
        self.ste = Ste()
    def construct(self, x): return (self.ste(x * 3.0) * x).sum()
own = ms.grad(Loss())(x).asnumpy()
exported = nn.GraphCell(ms.load(sys.argv[1]))(x).asnumpy()
print(" ".join(repr(float(v)) for v in own))
print(" ".join(repr(float(v)) for v in exported))
"#;

#[test]
fn a_custom_bprop_gradient_exports_and_matches_mindspore_cell_bprop() {
    let dir = std::env::temp_dir().join(format!("mirdsl-transforms-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let src = dir.join("ste.mir");
    std::fs::write(
        &src,
        "graph ste(x: f32[4]) {\n  graph bprop(x, out, dout) {\n    return (ClampScalar(dout, min=-1.0, max=1.0),)\n  }\n  return Round(x)\n}\n\
         graph loss(x: f32[4]) {\n  return ReduceSum(ste(x * 3.0) * x)\n}\n\
         graph main(x: f32[4]) {\n  return grad(loss)(x)\n}\n",
    )
    .unwrap();
    let model = dir.join("ste.mindir");
    let out = Command::new(env!("CARGO_BIN_EXE_mirdsl"))
        .args(["export", "--entry", "main", "-o"])
        .arg(&model)
        .arg(&src)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let Some(python) = test_support::require(Tool::MindSpore, test_support::mindspore_python())
    else {
        return;
    };
    // MindSpore compiles a Cell from its source file.
    let script = dir.join("ste_mindspore.py");
    std::fs::write(&script, STE_MINDSPORE).unwrap();
    let out = Command::new(python)
        .arg(&script)
        .arg(&model)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let rows: Vec<Vec<f64>> = text
        .lines()
        .rev()
        .take(2)
        .map(|l| l.split(' ').map(|v| v.parse().unwrap()).collect())
        .collect();
    let want = [0.3, 3.5, -4.1, 1.6];
    for row in &rows {
        for (a, b) in row.iter().zip(want) {
            assert!((a - b).abs() < 1e-6, "{rows:?}");
        }
    }
}

/// The same cases in MindSpore 2.10 (`ops.vmap`, `ops.jacrev`,
/// `ops.jacfwd`, float32, graph mode), reading the arguments as JSON.
/// MindSpore's `ops.vmap` of `MatMul` with `in_axes=1` fails its own shape
/// check ("shape1[-1] must be equal to shape2[-2]"), so `v_mm` gives it the
/// examples on axis 0 (the same numbers).
const MINDSPORE: &str = r#"
import json, sys
import numpy as np, mindspore as ms
from mindspore import ops, Tensor
ms.set_context(mode=ms.GRAPH_MODE)
args = {k: [Tensor(np.array(a, np.float32)) for a in v] for k, v in json.load(open(sys.argv[1])).items()}

def mm(x, w): return ops.softmax(ops.matmul(x.expand_dims(0), w), axis=-1)
def dist(a, b): return ops.sqrt(ops.reduce_sum((a - b) ** 2))
def mlp_loss(w1, w2, x, y):
    h = ops.tanh(ops.matmul(x.expand_dims(0), w1))
    return ops.reduce_sum((ops.matmul(h, w2)[0] - y) ** 2)
def net(x, w): return ops.tanh(ops.matmul(x.expand_dims(0), w))

cases = {
    "v_mm": lambda xs, w: ops.vmap(mm, in_axes=(0, None), out_axes=1)(Tensor(xs.asnumpy().T.copy()), w),
    "pairwise": lambda xs, ys: ops.vmap(ops.vmap(dist, in_axes=(None, 0)), in_axes=(0, None))(xs, ys),
    "per_example": lambda w1, w2, xs, ys: ops.vmap(ms.grad(mlp_loss, grad_position=(0, 1)), in_axes=(None, None, 0, 0))(w1, w2, xs, ys),
    "jr": lambda x, w: ops.jacrev(net, grad_position=0)(x, w),
    "jf": lambda x, w: ops.jacfwd(net, grad_position=0)(x, w),
}
out = {}
for name, f in cases.items():
    r = f(*args[name])
    leaves = list(r) if isinstance(r, (tuple, list)) else [r]
    out[name] = [[list(l.shape), [float(v) for v in l.asnumpy().ravel()]] for l in leaves]
print(json.dumps(out))
"#;

#[test]
fn transforms_match_mindspore() {
    let Some(python) = test_support::require(Tool::MindSpore, test_support::mindspore_python())
    else {
        return;
    };
    let cases: Vec<(&str, Vec<Tensor>)> = vec![
        ("v_mm", vec![rand(&[3, 4], 3), rand(&[3, 2], 4)]),
        ("pairwise", vec![rand(&[4, 2], 8), rand(&[3, 2], 9)]),
        (
            "per_example",
            vec![
                rand(&[3, 4], 10),
                rand(&[4, 2], 11),
                rand(&[5, 3], 12),
                rand(&[5, 2], 13),
            ],
        ),
        ("jr", vec![rand(&[3], 14), rand(&[3, 2], 15)]),
        ("jf", vec![rand(&[3], 14), rand(&[3, 2], 15)]),
    ];
    fn nested(shape: &[usize], data: &[f64]) -> serde_json::Value {
        match shape.split_first() {
            None => serde_json::json!(data[0]),
            Some((&n, rest)) => {
                let step = rest.iter().product::<usize>();
                serde_json::Value::Array((0..n).map(|i| nested(rest, &data[i * step..])).collect())
            }
        }
    }
    let input: serde_json::Map<String, serde_json::Value> = cases
        .iter()
        .map(|(n, a)| {
            let items = a
                .iter()
                .map(|t| nested(t.shape(), &t.to_f64_vec()))
                .collect();
            (n.to_string(), serde_json::Value::Array(items))
        })
        .collect();
    let dir = std::env::temp_dir().join(format!("mirdsl-transforms-ms-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (script, json) = (dir.join("transforms.py"), dir.join("args.json"));
    std::fs::write(&script, MINDSPORE).unwrap();
    std::fs::write(&json, serde_json::Value::Object(input).to_string()).unwrap();
    let out = Command::new(python)
        .arg(&script)
        .arg(&json)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout
        .lines()
        .rev()
        .find(|l| l.starts_with('{'))
        .expect("JSON");
    let ms: serde_json::Value = serde_json::from_str(line).unwrap();
    let mut ex = executor();
    for (name, args) in &cases {
        let got = leaves(&call(&mut ex, name, args));
        let want = ms[name].as_array().unwrap();
        assert_eq!(got.len(), want.len(), "{name}: outputs");
        for (k, (g, w)) in got.iter().zip(want).enumerate() {
            let shape: Vec<usize> = w[0]
                .as_array()
                .unwrap()
                .iter()
                .map(|d| d.as_u64().unwrap() as usize)
                .collect();
            let data: Vec<f64> = w[1]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_f64().unwrap())
                .collect();
            // MindSpore computes in float32.
            assert_close(
                &format!("{name} output {k} against MindSpore"),
                g,
                &Tensor::from_f64(shape, data).unwrap(),
                1e-5,
            );
        }
    }
}

/// The flat `data` of every tensor in `mirdsl run --format json`'s output.
fn json_leaves(v: &serde_json::Value, out: &mut Vec<Vec<f64>>) {
    match v {
        serde_json::Value::Array(items) => items.iter().for_each(|i| json_leaves(i, out)),
        serde_json::Value::Object(map) => out.push(
            map["data"]
                .as_array()
                .unwrap()
                .iter()
                .map(|d| d.as_f64().unwrap())
                .collect(),
        ),
        other => panic!("not a tensor: {other}"),
    }
}

/// `mirdsl import MODEL`, then `mirdsl run` of it (with `extra` appended to
/// the imported text) at `entry` on `x.npy`: the first output's data.
fn import_and_run(dir: &std::path::Path, model: &str, extra: &str, entry: &str) -> Vec<f64> {
    let bin = env!("CARGO_BIN_EXE_mirdsl");
    let out = Command::new(bin)
        .arg("import")
        .arg(dir.join(model))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap() + extra;
    let tmp = std::env::temp_dir().join(format!(
        "mirdsl-custom-bprop-{}-{model}.mir",
        std::process::id()
    ));
    std::fs::write(&tmp, &text).unwrap();
    let out = Command::new(bin)
        .args(["run", "--format", "json", "--entry", entry, "--arg"])
        .arg(format!("x={}", dir.join("x.npy").display()))
        .arg(&tmp)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut leaves = Vec::new();
    json_leaves(&v, &mut leaves);
    leaves.remove(0)
}

/// A network with a custom `Cell.bprop` (a clipped straight-through
/// estimator: Round, whose own derivative is zero, with the gradient passed
/// where |x w| <= 1) as MindSpore 2.10 exports it. MindIR cannot hold the
/// rule itself (MindSpore keeps it in the FuncGraph's "bprop" transform,
/// which the GraphProto has no field for: the forward model reloaded in
/// MindSpore differentiates Round), so the custom gradient comes as
/// MindSpore writes it: the exported gradient network (GradOperation). Its
/// import run by mirdsl gives MindSpore's custom-bprop gradient, and
/// mirdsl's `grad` of the imported forward model gives what MindSpore's
/// grad of its reloaded forward model gives. The checked-in files are
/// `tests/data/custom_bprop/gen.py`'s output; with MindSpore
/// (`MIRDSL_MINDSPORE_PYTHON`) they are made afresh first.
#[test]
fn a_custom_bprop_network_from_mindspore_matches_its_gradients() {
    let mut dir =
        std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/custom_bprop");
    if let Some(python) = test_support::require(Tool::MindSpore, test_support::mindspore_python()) {
        let fresh =
            std::env::temp_dir().join(format!("mirdsl-custom-bprop-{}", std::process::id()));
        std::fs::create_dir_all(&fresh).unwrap();
        let out = Command::new(python)
            .arg(dir.join("gen.py"))
            .arg(&fresh)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        dir = fresh;
    }
    let expected: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("expected.json")).unwrap()).unwrap();
    let want = |key: &str| -> Vec<f64> {
        expected[key]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap())
            .collect()
    };
    let (custom, reloaded) = (want("custom"), want("reloaded_forward"));
    // The rule differs from the true derivative, so the comparison tells.
    assert!(custom
        .iter()
        .zip(&reloaded)
        .any(|(a, b)| (a - b).abs() > 0.1));
    let close = |what: &str, got: &[f64], want: &[f64]| {
        assert_eq!(got.len(), want.len(), "{what}");
        for (g, w) in got.iter().zip(want) {
            assert!(
                (g - w).abs() < 1e-6,
                "{what}: {got:?} vs MindSpore's {want:?}"
            );
        }
    };
    let got = import_and_run(&dir, "ste_grad.mindir", "", "main");
    close("imported gradient network", &got, &custom);
    let got = import_and_run(
        &dir,
        "ste_loss.mindir",
        "\ngraph g(x: f32[4]) {\n  return grad(main)(x)\n}\n",
        "g",
    );
    close("grad of the imported forward network", &got, &reloaded);
}

/// The same network's compile dumps (`save_graphs=2`, checked in): a stage
/// before `opt_a` still differentiates the cell (`J`) whose rule the dump
/// does not hold, so importing it is refused at the lines that say so, never
/// run to the true derivative; from `opt_a` on the rule is applied, and the
/// dump runs to MindSpore's custom gradient.
#[test]
fn a_dump_that_still_differentiates_a_custom_bprop_is_refused() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/custom_bprop");
    let run = |dump: &str| {
        Command::new(env!("CARGO_BIN_EXE_mirdsl"))
            .arg("run")
            .arg(dir.join(dump))
            .arg("--arg")
            .arg(format!("0={}", dir.join("x.npy").display()))
            .arg("--load-weights")
            .arg(dir.join("w.ckpt"))
            .arg("--format")
            .arg("json")
            .output()
            .unwrap()
    };
    let before = run("before_grad.ir");
    let err = String::from_utf8_lossy(&before.stderr);
    assert!(!before.status.success(), "{err}");
    assert!(
        err.contains("line 321") && err.contains("primal_of_bprop") && err.contains("line 455"),
        "{err}"
    );
    let after = run("after_opt_a.ir");
    let out = String::from_utf8_lossy(&after.stdout);
    assert!(
        after.status.success(),
        "{}",
        String::from_utf8_lossy(&after.stderr)
    );
    let json: serde_json::Value = serde_json::from_str(&out).unwrap();
    let mut got = Vec::new();
    collect_numbers(&json, &mut got);
    let want = [0.4, -1.75, -1.0, 1.75];
    assert_eq!(got.len(), want.len(), "{out}");
    for (g, w) in got.iter().zip(want) {
        assert!((g - w).abs() < 1e-6, "{got:?} vs MindSpore's {want:?}");
    }
}

fn collect_numbers(v: &serde_json::Value, out: &mut Vec<f64>) {
    match v {
        serde_json::Value::Number(n) => out.extend(n.as_f64()),
        serde_json::Value::Array(a) => a.iter().for_each(|x| collect_numbers(x, out)),
        serde_json::Value::Object(o) => {
            if let Some(d) = o.get("data") {
                collect_numbers(d, out)
            }
        }
        _ => {}
    }
}
