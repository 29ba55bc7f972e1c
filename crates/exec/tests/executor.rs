//! The executor on small programs.

use std::path::{Path, PathBuf};

use exec::{ErrorKind, ExecOptions, Executor, RunError, Value};
use ir::ScalarConst;
use tensor::{DType, Tensor};

fn program(src: &str) -> ir::Program {
    let a = analysis::analyze(src);
    let errors: Vec<_> = a
        .diagnostics
        .iter()
        .filter(|d| d.severity == analysis::Severity::Error)
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
    a.source.program()
}

fn executor(src: &str) -> Executor {
    Executor::new(&program(src), ExecOptions::default())
}

fn run(src: &str, entry: &str, args: Vec<Value>) -> Result<Value, RunError> {
    executor(src).call(entry, args)
}

fn f32s(shape: &[usize], data: &[f32]) -> Value {
    Value::tensor(Tensor::from_f32(shape.to_vec(), data.to_vec()).unwrap())
}

fn int(i: i64) -> Value {
    Value::scalar(ScalarConst::Int(i), DType::I64)
}

fn boolean(b: bool) -> Value {
    Value::scalar(ScalarConst::Bool(b), DType::Bool)
}

fn data(v: &Value) -> Vec<f64> {
    v.as_tensor().expect("a tensor").tensor().to_f64_vec()
}

fn json(v: &Value) -> String {
    exec::output::to_json(v).to_string()
}

/// The source text a span covers.
fn spanned<'a>(src: &'a str, e: &RunError) -> &'a str {
    let s = e.span.expect("a span");
    &src[usize::from(s.start())..usize::from(s.end())]
}

const SEED: &str = r#"
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

graph hof(x: f32[2]) {
  graph f(x) { return x + 3 }
  graph g(function, x) {
    return function(x) * function(x)
  }
  res = g(f, x)
  return res
}

graph fibonacci(n: i64) -> i64 {
  r = if n < 1 { 0 } else if n == 1 { 1 } else {
    a = fibonacci(n - 1)
    b = fibonacci(n - 2)
    a + b
  }
  return r
}

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
"#;

#[test]
fn anf_example() {
    let v = run(
        SEED,
        "test_f",
        vec![f32s(&[3], &[1.0, 2.0, 3.0]), f32s(&[3], &[4.0, 5.0, 6.0])],
    )
    .unwrap();
    // a = x - 1, b = a + y, c = b * (a / b) = a
    assert_eq!(data(&v), vec![0.0, 1.0, 2.0]);
    assert_eq!(v.as_tensor().unwrap().dtype(), DType::F32);
    assert!(!v.as_tensor().unwrap().scalar);
}

#[test]
fn higher_order_functions() {
    let v = run(SEED, "hof", vec![f32s(&[2], &[1.0, 2.0])]).unwrap();
    assert_eq!(data(&v), vec![16.0, 25.0]);
}

#[test]
fn closures_capture_by_value() {
    let v = run(SEED, "ms_closure", vec![]).unwrap();
    assert_eq!(
        json(&v),
        r#"[{"dtype":"i64","value":4},{"dtype":"i64","value":5}]"#
    );
}

#[test]
fn recursion_with_switch() {
    let mut ex = executor(SEED);
    let v = ex.call("fibonacci", vec![int(20)]).unwrap();
    assert_eq!(json(&v), r#"{"dtype":"i64","value":6765}"#);
    assert!(ex.deepest_call() >= 20);
}

const LOOPS: &str = r#"
graph count(n: i64, acc: i64) -> i64 {
  r = if n == 0 { acc } else { count(n - 1, acc + n) }
  return r
}

graph forever(n: i64) -> i64 {
  r = if n < 0 { 0 } else { forever(n + 1) }
  return r
}
"#;

#[test]
fn deep_recursion_uses_no_native_stack() {
    let v = run(LOOPS, "count", vec![int(20_000), int(0)]).unwrap();
    assert_eq!(json(&v), r#"{"dtype":"i64","value":200010000}"#);
}

#[test]
fn infinite_recursion_is_an_error() {
    let e = run(LOOPS, "forever", vec![int(0)]).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Recursion);
    assert!(e.message.contains("recursion too deep"), "{}", e.message);
    assert_eq!(spanned(LOOPS, &e), "forever(n + 1)");
    assert!(!e.trace.is_empty());
}

#[test]
fn depth_limit_is_configurable() {
    let options = ExecOptions {
        max_depth: 50,
        ..ExecOptions::default()
    };
    let mut ex = Executor::new(&program(LOOPS), options);
    assert_eq!(
        ex.call("count", vec![int(10), int(0)])
            .unwrap()
            .as_tensor()
            .unwrap()
            .item_f64(),
        Some(55.0)
    );
    let e = ex.call("count", vec![int(100), int(0)]).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Recursion);
}

#[test]
fn long_chains_of_function_values_drop_without_recursion() {
    // A partial application of a partial application of ... 200,000 deep.
    let mut f = Value::func(exec::Func::MetaOp(ir::MetaFn::Vjp));
    for i in 0..200_000 {
        f = Value::func(exec::Func::Partial {
            f,
            args: vec![Value::tuple(vec![int(i)])],
        });
    }
    drop(f);
}

const SWITCH: &str = r#"
graph pick(x, c) {
  r = if c { Reshape(x, (7,)) } else { x * 2 }
  return r
}
"#;

#[test]
fn switch_runs_only_the_chosen_branch() {
    // The `true` branch would fail at run time (4 elements cannot be 7).
    let v = run(
        SWITCH,
        "pick",
        vec![f32s(&[4], &[1.0, 2.0, 3.0, 4.0]), boolean(false)],
    )
    .unwrap();
    assert_eq!(data(&v), vec![2.0, 4.0, 6.0, 8.0]);
    let e = run(
        SWITCH,
        "pick",
        vec![f32s(&[4], &[1.0, 2.0, 3.0, 4.0]), boolean(true)],
    )
    .unwrap_err();
    assert_eq!(e.kind, ErrorKind::Shape);
    assert_eq!(spanned(SWITCH, &e), "Reshape(x, (7,))");
}

#[test]
fn runtime_shape_error_has_the_span_of_the_node() {
    let src = "graph f(x, y) {\n  z = Add(x, y)\n  return z\n}\n";
    let e = run(
        src,
        "f",
        vec![f32s(&[2], &[1.0, 2.0]), f32s(&[3], &[1.0, 2.0, 3.0])],
    )
    .unwrap_err();
    assert_eq!(e.kind, ErrorKind::Shape);
    assert_eq!(spanned(src, &e), "Add(x, y)");
    assert!(e.message.contains("broadcast"), "{}", e.message);
}

#[test]
fn tensor_condition_and_nested_ifs() {
    let src = r#"
graph f(x: f32[4]) {
  m = ReduceMean(x, axis=(0,))
  r = if m < 0.0 { Square(x) } else { x * m }
  return r
}
"#;
    let v = run(src, "f", vec![f32s(&[4], &[1.0, 2.0, 3.0, 6.0])]).unwrap();
    assert_eq!(data(&v), vec![3.0, 6.0, 9.0, 18.0]);
    let v = run(src, "f", vec![f32s(&[4], &[-1.0, -2.0, 1.0, 0.0])]).unwrap();
    assert_eq!(data(&v), vec![1.0, 4.0, 1.0, 0.0]);
}

#[test]
fn tuples_and_destructuring() {
    let src = r#"
graph f(x: f32[2]) {
  t = (x, (x + 1, 5))
  (a, b) = t
  (c, d) = b
  return (a * c, d, t[1][0], ())
}
"#;
    let v = run(src, "f", vec![f32s(&[2], &[1.0, 2.0])]).unwrap();
    assert_eq!(
        json(&v),
        r#"[{"data":[2.0,6.0],"dtype":"f32","shape":[2]},{"dtype":"i64","value":5},{"data":[2.0,3.0],"dtype":"f32","shape":[2]},[]]"#
    );
}

#[test]
fn partial_application_and_lambdas() {
    let src = r#"
graph add3(a, b, c) { return a + b + c }

graph f(x: f32[2]) {
  p = Partial(add3, x, 10.0)
  q = Partial(Mul, x)
  sq = fn(v) => v * v
  return (p(1.0), q(x), sq(x))
}
"#;
    let v = run(src, "f", vec![f32s(&[2], &[1.0, 2.0])]).unwrap();
    let Value::Tuple(items) = &v else { panic!() };
    assert_eq!(data(&items[0]), vec![12.0, 13.0]);
    assert_eq!(data(&items[1]), vec![1.0, 4.0]);
    assert_eq!(data(&items[2]), vec![1.0, 4.0]);
}

#[test]
fn closures_of_siblings_and_recursive_nested_graphs() {
    let src = r#"
graph f(x: f32[2], n: i64) {
  y = x * 2
  graph a(v) { return b(v) }
  graph b(v) { return v + y }
  graph repeat(i, acc) {
    r = if i == 0 { acc } else { repeat(i - 1, acc + x) }
    return r
  }
  return (a(x), repeat(n, y))
}
"#;
    let v = run(src, "f", vec![f32s(&[2], &[1.0, 2.0]), int(3)]).unwrap();
    let Value::Tuple(items) = &v else { panic!() };
    assert_eq!(data(&items[0]), vec![3.0, 6.0]);
    assert_eq!(data(&items[1]), vec![5.0, 10.0]);
}

#[test]
fn dead_nodes_do_not_run() {
    // `bad` is never used: as in MindSpore, it is not part of the graph that runs.
    let src = "graph f(x) {\n  bad = Reshape(x, (7,))\n  return x + 1\n}\n";
    let v = run(src, "f", vec![f32s(&[2], &[1.0, 2.0])]).unwrap();
    assert_eq!(data(&v), vec![2.0, 3.0]);
}

#[test]
fn depend_and_stop_gradient() {
    let src = r#"
graph f(x: f32[2]) {
  y = StopGradient(x * 3)
  return Depend(y, x)
}
"#;
    let v = run(src, "f", vec![f32s(&[2], &[1.0, 2.0])]).unwrap();
    assert_eq!(data(&v), vec![3.0, 6.0]);
}

#[test]
fn scalars_and_weak_literals() {
    let src = r#"
graph f(x: f32[2], n: i64) {
  k = n * 2
  h = x * k
  return (k, h, 1.5 * 2)
}
"#;
    let v = run(src, "f", vec![f32s(&[2], &[1.0, 2.0]), int(3)]).unwrap();
    assert_eq!(
        json(&v),
        r#"[{"dtype":"i64","value":6},{"data":[6.0,12.0],"dtype":"f32","shape":[2]},{"dtype":"f32","value":3.0}]"#
    );
}

#[test]
fn calling_a_non_function_is_an_error() {
    let src = "graph f(g, x) {\n  return g(x)\n}\n";
    let e = run(src, "f", vec![int(1), int(2)]).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Type);
    assert_eq!(spanned(src, &e), "g(x)");
}

// ---------------------------------------------------------------------------
// Weights

const WEIGHTS: &str = r#"
param w.normal: f32[3, 4] = normal(mean=1.0, std=0.5, seed=42)
param w.uniform: f64[5] = uniform(low=-2.0, high=3.0, seed=7)
param w.ones: f32[2] = ones
param w.zeros: i32[2] = zeros
param w.const: f32[2, 2] = constant(2.5)
param w.lit: f32[2] = [1, 2]
param lr: f32[] = constant(0.1)

graph main() {
  return (w.normal, w.uniform, w.ones, w.zeros, w.const, w.lit, lr)
}
"#;

#[test]
fn weights_initialise_deterministically() {
    let a = run(WEIGHTS, "main", vec![]).unwrap();
    let b = run(WEIGHTS, "main", vec![]).unwrap();
    assert_eq!(json(&a), json(&b));
    let Value::Tuple(items) = &a else { panic!() };
    let normal = data(&items[0]);
    assert_eq!(normal.len(), 12);
    let expected: Vec<f64> = exec::weights::normal(12, 1.0, 0.5, 42)
        .into_iter()
        .map(|x| x as f32 as f64)
        .collect();
    assert_eq!(normal, expected);
    let uniform = data(&items[1]);
    assert_eq!(items[1].as_tensor().unwrap().dtype(), DType::F64);
    assert!(uniform.iter().all(|&x| (-2.0..3.0).contains(&x)));
    assert_eq!(uniform, exec::weights::uniform(5, -2.0, 3.0, 7));
    assert_eq!(data(&items[2]), vec![1.0, 1.0]);
    assert_eq!(items[3].as_tensor().unwrap().dtype(), DType::I32);
    assert_eq!(data(&items[4]), vec![2.5; 4]);
    assert_eq!(data(&items[5]), vec![1.0, 2.0]);
    assert_eq!(
        json(&items[6]),
        format!(r#"{{"data":[{}],"dtype":"f32","shape":[]}}"#, 0.1f32 as f64)
    );
}

/// A fresh directory under the system's temporary directory.
fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("exec-test-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn run_in(dir: &Path, src: &str) -> Result<Value, RunError> {
    let options = ExecOptions {
        base_dir: dir.to_path_buf(),
        ..ExecOptions::default()
    };
    Executor::new(&program(src), options).call("main", vec![])
}

#[test]
fn weights_load_npy_and_safetensors() {
    let dir = temp_dir("load");
    let t = Tensor::from_f32(vec![2, 3], vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]).unwrap();
    std::fs::write(dir.join("w.npy"), tensor::npy::write(&t)).unwrap();
    let b = Tensor::from_i64(DType::I32, vec![2], vec![7, 8]).unwrap();
    std::fs::write(
        dir.join("m.safetensors"),
        tensor::safetensors::write(&[("w", &t), ("b", &b)]),
    )
    .unwrap();
    let src = r#"
param a: f32[2, 3] = load("w.npy")
param b: i32[2] = load("m.safetensors", "b")
graph main() { return (a, b) }
"#;
    let v = run_in(&dir, src).unwrap();
    assert_eq!(
        json(&v),
        r#"[{"data":[1.0,2.0,3.0,4.0,5.0,6.0],"dtype":"f32","shape":[2,3]},{"data":[7,8],"dtype":"i32","shape":[2]}]"#
    );

    // Errors point at the weight's definition.
    let missing = "param a: f32[2, 3] = load(\"nope.npy\")\ngraph main() { return a }\n";
    let e = run_in(&dir, missing).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Weight);
    assert!(e.message.contains("no such file"), "{}", e.message);
    assert!(spanned(missing, &e).starts_with("param a"));

    let shape = "param a: f32[3, 2] = load(\"w.npy\")\ngraph main() { return a }\n";
    let e = run_in(&dir, shape).unwrap_err();
    assert!(e.message.contains("shape [2, 3]"), "{}", e.message);

    let dtype = "param a: f64[2, 3] = load(\"w.npy\")\ngraph main() { return a }\n";
    let e = run_in(&dir, dtype).unwrap_err();
    assert!(e.message.contains("holds f32"), "{}", e.message);

    let key = "param a: f32[2, 3] = load(\"m.safetensors\", \"nope\")\ngraph main() { return a }\n";
    let e = run_in(&dir, key).unwrap_err();
    assert!(e.message.contains("no tensor `nope`"), "{}", e.message);

    std::fs::write(dir.join("bad.npy"), b"not numpy").unwrap();
    let bad = "param a: f32[2] = load(\"bad.npy\")\ngraph main() { return a }\n";
    let e = run_in(&dir, bad).unwrap_err();
    assert!(e.message.contains("not a valid .npy"), "{}", e.message);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn unused_weights_are_not_loaded() {
    let src = "param a: f32[2] = load(\"missing.npy\")\ngraph main(x) { return x }\n";
    let v = run(src, "main", vec![int(3)]).unwrap();
    assert_eq!(json(&v), r#"{"dtype":"i64","value":3}"#);
}

// ---------------------------------------------------------------------------
// Memory

#[test]
fn intermediates_are_freed_after_their_last_use() {
    let src = r#"
graph chain(x: f32[N]) {
  a = x + 1
  b = a * 2
  c = b - 3
  d = c * c
  e = d + 1
  f = e * 2
  g = f - 1
  return ReduceSum(g, axis=(0,))
}
"#;
    let n = 1 << 18;
    let bytes = n * 4;
    for compile in [false, true] {
        let mut ex = executor(src);
        ex.set_compile(compile);
        let x = ex.tensor(Tensor::full(DType::F32, vec![n], 1.0));
        let v = ex.call("chain", vec![x]).unwrap();
        let m = ex.memory();
        // At most an input and an output of one step (and scalars) at once;
        // a compiled plan runs the chain in place in one arena block.
        assert!(
            m.peak_bytes <= 2 * bytes + 1024,
            "compile {compile}: peak {} for {} per tensor",
            m.peak_bytes,
            bytes
        );
        assert!(m.peak_bytes >= bytes);
        drop(v);
        // The interpreter keeps nothing; a compiled plan keeps its arena
        // (one tensor here) for its next call.
        let kept = if compile { bytes } else { 0 };
        assert!(
            ex.memory().current_bytes < kept + 1024,
            "compile {compile}: {:?}",
            ex.memory()
        );
    }
}

// ---------------------------------------------------------------------------
// NaN checks

#[test]
fn check_nan_reports_the_node() {
    let src = "graph f(x: f32[3]) {\n  y = Log(x)\n  return y * 2\n}\n";
    let x = f32s(&[3], &[1.0, -1.0, 2.0]);
    let v = run(src, "f", vec![x.clone()]).unwrap();
    assert!(data(&v)[1].is_nan());
    assert_eq!(
        json(&v),
        r#"{"data":[0.0,"nan",1.3862943649291992],"dtype":"f32","shape":[3]}"#
    );
    let options = ExecOptions {
        check_nan: true,
        ..ExecOptions::default()
    };
    let e = Executor::new(&program(src), options)
        .call("f", vec![x])
        .unwrap_err();
    assert_eq!(e.kind, ErrorKind::NaN);
    assert_eq!(spanned(src, &e), "Log(x)");
    assert!(e.message.contains("[1]"), "{}", e.message);
}

// ---------------------------------------------------------------------------
// Metafunctions

const AD: &str = r#"
graph cube(x) { return x * x * x }
graph loss(x: f32[3], y: f32[3]) { return ReduceSum(x * y * x, axis=(0,)) }
graph rec(x: f32[], n: i64) -> f32[] {
  r = if n == 0 { x } else { rec(x * x, n - 1) }
  return r
}

graph grads(x: f32[3], y: f32[3], d: f32[3]) {
  (out, back) = vjp(cube)(x)
  p = Partial(loss, x)
  return (
    grad(cube)(x),
    value_and_grad(loss, wrt=(0, 1))(x, y),
    back(d),
    grad(Sin)(x),
    grad(p)(y),
    grad(rec)(Cast(ReduceSum(x, axis=(0,)), f32), 2)
  )
}

graph captured(x: f32[3], y: f32[3]) {
  graph g(z) { return z * y }
  return grad(g)(x)
}
"#;

#[test]
fn metafunctions_go_through_autodiff() {
    let x = f32s(&[3], &[1.0, 2.0, 0.5]);
    let y = f32s(&[3], &[4.0, 5.0, 6.0]);
    let d = f32s(&[3], &[1.0, 0.0, 2.0]);
    let mut ex = executor(AD);
    let v = ex.call("grads", vec![x.clone(), y.clone(), d]).unwrap();
    let Value::Tuple(items) = &v else { panic!() };
    assert_eq!(data(&items[0]), vec![3.0, 12.0, 0.75]);
    let Value::Tuple(vg) = &items[1] else {
        panic!()
    };
    assert_eq!(data(&vg[0]), vec![4.0 + 20.0 + 1.5]);
    let Value::Tuple(g) = &vg[1] else { panic!() };
    assert_eq!(data(&g[0]), vec![8.0, 20.0, 6.0]);
    assert_eq!(data(&g[1]), vec![1.0, 4.0, 0.25]);
    let Value::Tuple(b) = &items[2] else { panic!() };
    assert_eq!(data(&b[0]), vec![3.0, 0.0, 1.5]);
    let cos: Vec<f64> = [1.0f32, 2.0, 0.5].iter().map(|v| v.cos() as f64).collect();
    let sin_grad = data(&items[3]);
    for (a, b) in sin_grad.iter().zip(&cos) {
        assert!((a - b).abs() < 1e-6, "{sin_grad:?} vs {cos:?}");
    }
    assert_eq!(data(&items[4]), vec![1.0, 4.0, 0.25]);
    // d/dx (x^2)^2 = 4 x^3 at x = 3.5.
    assert_eq!(data(&items[5]), vec![4.0 * 3.5f64.powi(3)]);
    // The second call reuses the differentiated graphs.
    let again = ex
        .call("grads", vec![x.clone(), y.clone(), f32s(&[3], &[0.0; 3])])
        .unwrap();
    let Value::Tuple(items2) = &again else {
        panic!()
    };
    assert_eq!(data(&items2[0]), data(&items[0]));

    // A closure's derivative takes the values it captures (issue #12):
    // d/dz (z * y) is y.
    let v = ex.call("captured", vec![x, y.clone()]).unwrap();
    assert_eq!(data(&v), data(&y));
}

// ---------------------------------------------------------------------------
// Output

#[test]
fn text_output_reads_like_literals() {
    let v = Value::tuple(vec![
        f32s(&[2, 2], &[1.0, -2.5, 3.0, 4.0]),
        int(7),
        Value::None,
    ]);
    assert_eq!(
        exec::output::to_text(&v),
        "(\n  [[ 1.0, -2.5],\n   [ 3.0,  4.0]],  # f32[2, 2]\n  7,  # i64\n  none,\n)\n"
    );
    let big = Value::tensor(Tensor::zeros(DType::I64, vec![40, 40]));
    let text = exec::output::to_text(&big);
    assert!(text.contains("..."), "{text}");
    assert!(text.lines().count() < 12, "{text}");
}

#[test]
fn npy_output_flattens_tuples() {
    let dir = temp_dir("out");
    let v = Value::tuple(vec![
        f32s(&[2], &[1.0, 2.0]),
        Value::tuple(vec![int(3), Value::None]),
    ]);
    let paths = exec::output::write_npy(&v, &dir.join("o")).unwrap();
    assert_eq!(paths.len(), 2);
    let t = tensor::npy::read(&std::fs::read(&paths[1]).unwrap()).unwrap();
    assert_eq!(t.to_f64_vec(), vec![3.0]);
    assert_eq!(t.dtype(), DType::I64);
    let _ = std::fs::remove_dir_all(&dir);
}

/// `grad` of an unannotated graph is differentiated for the run-time argument
/// types, so rules that depend on dtypes (Cast's) see them.
#[test]
fn gradient_of_a_generic_graph_uses_the_argument_types() {
    let src = "graph f(x) {\n  y = Cast(x, f64)\n  return ReduceSum(Square(y))\n}\n\ngraph main(x: f32[3]) {\n  return grad(f)(x)\n}\n";
    let out = run(src, "main", vec![f32s(&[3], &[1.0, 2.0, 3.0])]).unwrap();
    assert_eq!(data(&out), vec![2.0, 4.0, 6.0]);
}

// ---------------------------------------------------------------------------
// Limits and stopping (issue 13): the hooks `mirdsl run` and the language
// server use.

const FIB: &str = r#"
graph fib(n: i64) -> i64 {
  r = if n < 2 { n } else { fib(n - 1) + fib(n - 2) }
  return r
}
"#;

#[test]
fn an_interrupt_stops_a_run_from_another_thread() {
    let flag = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let options = ExecOptions {
        interrupt: Some(flag.clone()),
        ..ExecOptions::default()
    };
    let mut ex = Executor::new(&program(FIB), options);
    let setter = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(200));
        flag.store(true, std::sync::atomic::Ordering::Relaxed);
    });
    let start = std::time::Instant::now();
    let e = ex.call("fib", vec![int(60)]).unwrap_err();
    setter.join().unwrap();
    assert_eq!(e.kind, ErrorKind::Interrupted, "{}", e.message);
    assert!(start.elapsed() < std::time::Duration::from_secs(10));
    // What the run made is freed (only the plans' constants stay).
    assert!(ex.memory().current_bytes < 1024, "{:?}", ex.memory());
}

#[test]
fn a_deadline_stops_a_run() {
    let options = ExecOptions {
        deadline: Some(std::time::Instant::now() + std::time::Duration::from_millis(100)),
        ..ExecOptions::default()
    };
    let mut ex = Executor::new(&program(FIB), options);
    let e = ex.call("fib", vec![int(60)]).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Timeout, "{}", e.message);
    assert!(e.span.is_some());
}

#[test]
fn the_memory_budget_refuses_before_allocating() {
    let src = r#"
param w: f32[1000, 1000] = zeros
graph big(x: f32[1000, 1]) {
  return x * Ones((1, 1000), f32)
}
graph weight() {
  return ReduceSum(w)
}
"#;
    let options = ExecOptions {
        max_memory: 1 << 20,
        ..ExecOptions::default()
    };
    let mut ex = Executor::new(&program(src), options.clone());
    let x = ex.tensor(Tensor::zeros(DType::F32, vec![1000, 1]));
    let e = ex.call("big", vec![x]).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Memory);
    assert!(
        e.message
            .contains("`Mul`'s result f32[1000, 1000] needs 3.8 MiB (4000000 bytes)"),
        "{}",
        e.message
    );
    assert_eq!(spanned(src, &e), "x * Ones((1, 1000), f32)");
    let mut ex = Executor::new(&program(src), options);
    let e = ex.call("weight", vec![]).unwrap_err();
    assert!(
        e.message.contains("more than the memory budget"),
        "{}",
        e.message
    );
    // Within the budget, the same program runs.
    let mut ex = Executor::new(&program(src), ExecOptions::default());
    let x = ex.tensor(Tensor::zeros(DType::F32, vec![1000, 1]));
    assert!(ex.call("big", vec![x]).is_ok());
}

#[test]
fn an_absent_optional_input_reaches_the_kernel_as_none() {
    // `none` as an argument value (not a literal in the call): a loss's
    // weights, and `Dense`'s bias in the gradient graph, which passes it on.
    let src = r#"
graph bce(x, y, w) {
  return BCEWithLogitsLoss(x, y, w, w, reduction="sum")
}
graph f(x: f32[2], w: f32[1, 2]) {
  return ReduceSum(Dense(x, w, none))
}
graph main(x: f32[2], w: f32[1, 2]) {
  return (bce(x, ZerosLike(x), none), grad(f, wrt=(0, 1))(x, w))
}
"#;
    let out = run(
        src,
        "main",
        vec![f32s(&[2], &[0.0, 0.0]), f32s(&[1, 2], &[3.0, 4.0])],
    )
    .unwrap();
    // log(1 + e^0) twice; d/dx = w, d/dw = x.
    fn flat(v: &Value) -> Vec<f64> {
        match v {
            Value::Tuple(items) => items.iter().flat_map(flat).collect(),
            _ => data(v),
        }
    }
    let got = flat(&out);
    assert!((got[0] - 2.0 * 2f64.ln()).abs() < 1e-6, "{got:?}");
    assert_eq!(got[1..], [3.0, 4.0, 0.0, 0.0]);
}
