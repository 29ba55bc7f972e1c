//! Compiled plans give the interpreter's values: every graph of the
//! examples in `testdata/` and a set of training steps (MLP, LeNet-5, a
//! Transformer encoder layer, ResNet basic blocks, optimizers writing
//! weights), each run several times in a row by an executor with compiled
//! plans and by one without, comparing every result and every weight after.

use std::collections::HashMap;
use std::path::Path;

use exec::{ExecOptions, Executor, Value};
use tensor::{Buffer, DType, Tensor};

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

/// Whether two values agree: same structure, dtypes, shapes and flags;
/// floats to a relative 1e-4 (summation orders differ in places).
fn close(a: &Value, b: &Value, path: &str) -> Result<(), String> {
    match (a, b) {
        (Value::Tensor(x), Value::Tensor(y)) => {
            let (tx, ty) = (x.tensor(), y.tensor());
            if tx.dtype() != ty.dtype() || tx.shape() != ty.shape() {
                return Err(format!(
                    "{path}: {}{:?} vs {}{:?}",
                    tx.dtype(),
                    tx.shape(),
                    ty.dtype(),
                    ty.shape()
                ));
            }
            if x.scalar != y.scalar || x.weak != y.weak {
                return Err(format!("{path}: scalar/weak flags differ"));
            }
            let exact = !matches!(tx.buffer(), Buffer::F32(_) | Buffer::F64(_));
            let (vx, vy) = (tx.to_f64_vec(), ty.to_f64_vec());
            let scale = vy.iter().fold(0f64, |m, v| m.max(v.abs())).max(1e-30);
            for (i, (p, q)) in vx.iter().zip(&vy).enumerate() {
                let same = p == q || (p.is_nan() && q.is_nan());
                let ok = same || (!exact && (p - q).abs() <= 1e-4 * q.abs() + 1e-6 * scale + 1e-9);
                if !ok {
                    return Err(format!("{path}[{i}]: compiled {p} vs interpreted {q}"));
                }
            }
            Ok(())
        }
        (Value::Tuple(x), Value::Tuple(y)) if x.len() == y.len() => {
            for (i, (p, q)) in x.iter().zip(y.iter()).enumerate() {
                close(p, q, &format!("{path}.{i}"))?;
            }
            Ok(())
        }
        (Value::None, Value::None) => Ok(()),
        (Value::Str(x), Value::Str(y)) if x == y => Ok(()),
        (Value::Func(_), Value::Func(_)) => Ok(()),
        _ => Err(format!("{path}: {} vs {}", a.describe(), b.describe())),
    }
}

fn random(shape: &[usize], dtype: DType, seed: u64) -> Value {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let n: usize = shape.iter().product();
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        ((state >> 40) as f64 / (1u64 << 24) as f64) - 0.5
    };
    let t = if dtype.is_int() {
        Tensor::from_i64(
            dtype,
            shape.to_vec(),
            (0..n).map(|i| (i % 3) as i64).collect(),
        )
    } else if dtype == DType::Bool {
        Tensor::from_bool(shape.to_vec(), (0..n).map(|i| i % 2 == 0).collect())
    } else {
        Tensor::new(
            dtype,
            shape.to_vec(),
            match dtype.storage() {
                DType::F64 => Buffer::F64((0..n).map(|_| next()).collect()),
                _ => Buffer::F32((0..n).map(|_| next() as f32).collect()),
            },
        )
    };
    Value::tensor(t.unwrap())
}

/// Runs `entry` `steps` times on `args` with and without compiled plans;
/// returns how many calls ran compiled plans.
fn compare(src: &str, entry: &str, args: Vec<Value>, steps: usize) -> usize {
    let p = program(src);
    let mut compiled = Executor::new(&p, ExecOptions::default());
    compiled.set_compile(true);
    let mut interp = Executor::new(&p, ExecOptions::default());
    interp.set_compile(false);
    for step in 0..steps {
        let a = compiled.call(entry, args.clone());
        let b = interp.call(entry, args.clone());
        match (a, b) {
            (Ok(a), Ok(b)) => {
                if let Err(e) = close(&a, &b, "out") {
                    panic!("`{entry}` step {step}: {e}");
                }
            }
            (Err(a), Err(b)) => {
                assert_eq!(a.message, b.message, "`{entry}` step {step}: errors differ");
                assert_eq!(a.span, b.span, "`{entry}` step {step}: error spans differ");
            }
            (a, b) => panic!(
                "`{entry}` step {step}: compiled {:?} vs interpreted {:?}",
                a.map(|_| ()).map_err(|e| e.message),
                b.map(|_| ()).map_err(|e| e.message)
            ),
        }
    }
    let wa = compiled.weights().expect("weights");
    let wb = interp.weights().expect("weights");
    for ((n, a), (_, b)) in wa.iter().zip(&wb) {
        if let Err(e) = close(a, b, n) {
            panic!("`{entry}`: weight after {steps} steps: {e}");
        }
    }
    compiled.plan_stats().runs
}

/// Arguments for a graph's annotated parameters (`B` = 4, other symbols 3).
fn args_for(p: &ir::Program, entry: &str) -> Option<Vec<Value>> {
    let params = exec::args::entry_params(p.graph(entry)?);
    let mut out = Vec::new();
    for (i, param) in params.iter().enumerate() {
        let ty = param.ty.as_ref()?;
        out.push(value_of_type(ty, i as u64)?);
    }
    Some(out)
}

fn value_of_type(ty: &ir::Ty, seed: u64) -> Option<Value> {
    match ty {
        ir::Ty::Tensor(d, shape) => {
            let dims = shape.dims()?;
            let dims: Vec<usize> = dims
                .iter()
                .map(|d| match d {
                    ir::Dim::Known(n) => Some(*n as usize),
                    ir::Dim::Sym(s) if s == "B" => Some(4),
                    ir::Dim::Sym(_) => Some(3),
                    _ => None,
                })
                .collect::<Option<_>>()?;
            Some(random(&dims, *d, seed))
        }
        ir::Ty::Scalar(d) => Some(Value::scalar(
            if d.is_int() {
                ir::ScalarConst::Int(3)
            } else if *d == DType::Bool {
                ir::ScalarConst::Bool(true)
            } else {
                ir::ScalarConst::Float(0.25)
            },
            *d,
        )),
        ir::Ty::Tuple(items) => Some(Value::tuple(
            items
                .iter()
                .enumerate()
                .map(|(i, t)| value_of_type(t, seed * 7 + i as u64))
                .collect::<Option<_>>()?,
        )),
        _ => None,
    }
}

#[test]
fn every_graph_of_the_examples() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "mir"))
        .collect();
    files.sort();
    let mut compiled_runs = 0;
    let mut graphs = 0;
    for f in files {
        let src = std::fs::read_to_string(&f).unwrap();
        let p = program(&src);
        for (name, _) in &p.graphs {
            let Some(args) = args_for(&p, name) else {
                continue;
            };
            graphs += 1;
            compiled_runs += compare(&src, name, args, 3);
        }
    }
    assert!(graphs >= 15, "only {graphs} graphs compared");
    assert!(compiled_runs >= 10, "only {compiled_runs} compiled runs");
}

fn labels(n: usize, classes: i64) -> Value {
    Value::tensor(
        Tensor::from_i64(
            DType::I32,
            vec![n],
            (0..n as i64).map(|i| i % classes).collect(),
        )
        .unwrap(),
    )
}

pub const MODELS: &[(&str, &str)] = &[
    ("mlp", include_str!("../../bench/models/mlp.mir")),
    ("lenet", include_str!("../../bench/models/lenet.mir")),
    (
        "transformer",
        include_str!("../../bench/models/transformer.mir"),
    ),
    ("resnet", include_str!("../../bench/models/resnet.mir")),
];

fn model(name: &str) -> &'static str {
    MODELS.iter().find(|(n, _)| *n == name).unwrap().1
}

#[test]
fn mlp_training_steps() {
    let runs = compare(
        model("mlp"),
        "step",
        vec![random(&[16, 784], DType::F32, 1), labels(16, 10)],
        3,
    );
    assert_eq!(runs, 3);
}

#[test]
fn lenet_training_steps() {
    let runs = compare(
        model("lenet"),
        "step",
        vec![random(&[4, 1, 32, 32], DType::F32, 2), labels(4, 10)],
        3,
    );
    assert_eq!(runs, 3);
}

/// At the benchmark's batch, where the convolution, pooling and elementwise
/// kernels split their work over the threads.
#[test]
fn lenet_training_steps_at_the_bench_batch() {
    let runs = compare(
        model("lenet"),
        "step",
        vec![random(&[32, 1, 32, 32], DType::F32, 6), labels(32, 10)],
        2,
    );
    assert_eq!(runs, 2);
}

#[test]
fn transformer_training_steps() {
    let runs = compare(
        model("transformer"),
        "step",
        vec![random(&[1, 128, 256], DType::F32, 3), labels(1, 10)],
        2,
    );
    assert_eq!(runs, 2);
}

#[test]
fn resnet_training_steps() {
    let runs = compare(
        model("resnet"),
        "step",
        vec![random(&[2, 64, 8, 8], DType::F32, 4), labels(2, 10)],
        2,
    );
    assert_eq!(runs, 2);
}

/// Weight updates keep their order: reads before and after an `Assign` see
/// the old and the new value, optimizers update state in place, and a plan
/// that fails at run time restores what it wrote and reruns in the
/// interpreter.
const EFFECTS: &str = r#"
param w: f32[4] = ones
param m: f32[4] = zeros
param count: i32[] = zeros

graph loss(x: f32[4]) -> f32[] {
  return ReduceSum(Square(x * w))
}

graph step(x: f32[4]) {
  before = w * 2.0
  (l, (g,)) = value_and_grad(loss, wrt=(w,))(x)
  ApplyMomentum(w, m, 0.1, g, 0.9)
  after = w * 2.0
  Assign(w, after * 0.5 + 0.25)
  AssignAdd(count, Cast(1, i32))
  return (l, before, after, w, count)
}
"#;

#[test]
fn effects_keep_their_order() {
    let x = random(&[4], DType::F32, 5);
    let runs = compare(EFFECTS, "step", vec![x], 4);
    assert_eq!(runs, 4);
}

#[test]
fn plans_are_reused_and_specialised_by_shape() {
    let p = program(model("mlp"));
    let mut ex = Executor::new(&p, ExecOptions::default());
    for _ in 0..3 {
        ex.call(
            "step",
            vec![random(&[8, 784], DType::F32, 1), labels(8, 10)],
        )
        .unwrap();
    }
    ex.call(
        "step",
        vec![random(&[5, 784], DType::F32, 1), labels(5, 10)],
    )
    .unwrap();
    let s = ex.plan_stats();
    assert_eq!((s.compiled, s.runs), (2, 4), "{s:?}");
}

#[test]
fn dynamic_programs_fall_back_to_the_interpreter() {
    // Recursion with a data-dependent Switch: the recursive graph runs in the
    // interpreter; the static graph it calls is compiled.
    let src = r#"
graph body(x: f32[3]) -> f32[3] {
  return Tanh(x) * 0.5 + x
}

graph loop(x: f32[3], n: i64) -> f32[3] {
  return if n > 0 { loop(body(x), n - 1) } else { x }
}
"#;
    let p = program(src);
    let mut ex = Executor::new(&p, ExecOptions::default());
    let x = random(&[3], DType::F32, 9);
    let n = Value::scalar(ir::ScalarConst::Int(5), DType::I64);
    let got = ex.call("loop", vec![x.clone(), n.clone()]).unwrap();
    let mut interp = Executor::new(&p, ExecOptions::default());
    interp.set_compile(false);
    let want = interp.call("loop", vec![x, n]).unwrap();
    close(&got, &want, "out").unwrap();
    let s = ex.plan_stats();
    assert!(s.runs >= 5, "{s:?}");
    assert!(s.declined >= 1, "{s:?}");
    let _: HashMap<(), ()> = HashMap::new();
}

/// The plans' own Transpose and LayerNorm kernels (forward and gradient,
/// normalising over one or two axes) against the interpreter's.
#[test]
fn transposes_and_layer_norms() {
    let src = r#"
graph t(x: f32[2, 3, 4, 5]) {
  return (Transpose(x, (0, 2, 1, 3)), Transpose(x, (3, 2, 1, 0)), Transpose(x, (1, 0, 3, 2)), Transpose(x, (-1, 0, 1, 2)))
}

graph ln(x: f32[6, 3, 5], g: f32[3, 5], b: f32[3, 5]) {
  (y, m, v) = LayerNorm(x, g, b, begin_norm_axis=1, begin_params_axis=1, epsilon=1e-5)
  (y2, _m, _v) = LayerNorm(x, ReduceSum(b, axis=0), ReduceMean(g, axis=0), begin_norm_axis=-1, begin_params_axis=-1, epsilon=1e-3)
  return ReduceSum(Square(y) * x) + ReduceSum(m * v) + ReduceSum(y2 * y2 * x)
}

graph step(x: f32[6, 3, 5], g: f32[3, 5], b: f32[3, 5]) {
  return value_and_grad(ln, wrt=(0, 1, 2))(x, g, b)
}
"#;
    assert_eq!(
        compare(src, "t", vec![random(&[2, 3, 4, 5], DType::F32, 1)], 2),
        2
    );
    let args = vec![
        random(&[6, 3, 5], DType::F32, 2),
        random(&[3, 5], DType::F32, 3),
        random(&[3, 5], DType::F32, 4),
    ];
    assert_eq!(compare(src, "step", args.clone(), 2), 2);
    // The plans' own kernels ran, not the registry's.
    let p = program(src);
    let mut ex = Executor::new(&p, ExecOptions::default());
    ex.call("t", vec![random(&[2, 3, 4, 5], DType::F32, 1)])
        .unwrap();
    ex.call("step", args).unwrap();
    let kernels = ex.plan_kernels();
    for want in [
        "transpose [2, 3, 4, 5] by [0, 2, 1, 3]",
        "transpose [2, 3, 4, 5] by [3, 0, 1, 2]",
        "layer norm rows 6x15",
        "layer norm rows 18x5",
        "layer norm grad rows 6x15",
        "layer norm grad rows 18x5",
    ] {
        assert!(
            kernels.iter().any(|k| k == want),
            "no `{want}` in {kernels:?}"
        );
    }
}

/// The plans' own Softmax kernel and its gradient, `SoftmaxBackward(dout,
/// out, dim)` as MindSpore's bprop emits it, over the last axis, against the
/// interpreter's.
#[test]
fn softmax_and_softmax_backward() {
    let src = r#"
graph sm(x: f32[6, 7]) {
  y = Softmax(x)
  return ReduceSum(y * y * x)
}

graph step(x: f32[6, 7]) {
  return value_and_grad(sm)(x)
}
"#;
    let args = vec![random(&[6, 7], DType::F32, 5)];
    assert_eq!(compare(src, "step", args.clone(), 2), 2);
    let p = program(src);
    let mut ex = Executor::new(&p, ExecOptions::default());
    ex.call("step", args).unwrap();
    let kernels = ex.plan_kernels();
    for want in ["softmax rows 6x7", "softmax grad rows 6x7"] {
        assert!(
            kernels.iter().any(|k| k == want),
            "no `{want}` in {kernels:?}"
        );
    }
}

/// The activations' backward primitives their bprops emit (`SigmoidGrad`,
/// `TanhGrad`, `ReLU6Grad`, `SiLUGrad`) run inside the plans' fused loops,
/// with the interpreter's values.
#[test]
fn activation_backward_primitives_fuse() {
    let src = r#"
graph act(x: f32[8, 33]) {
  return ReduceSum(Sigmoid(x) * Tanh(x) + ReLU6(x * 4.0) * SiLU(x))
}

graph step(x: f32[8, 33]) {
  return value_and_grad(act)(x)
}
"#;
    let args = vec![random(&[8, 33], DType::F32, 6)];
    assert_eq!(compare(src, "step", args.clone(), 2), 2);
    let p = program(src);
    let mut ex = Executor::new(&p, ExecOptions::default());
    ex.call("step", args).unwrap();
    let fused = ex.plan_kernels().join("\n");
    for want in ["SigmoidGrad", "TanhGrad", "ReLU6Grad", "SiLUGrad"] {
        assert!(fused.contains(want), "no fused `{want}` in {fused}");
    }
}

/// The GEMM epilogues and the concurrent pair are chosen for the MLP: its
/// BiasAdd+ReLU run in the GEMM, and a layer's two backward GEMMs at once.
/// LeNet's gradient runs MindSpore's backward primitives (`MaxPoolGrad`,
/// `Conv2DBackpropInput` and `Conv2DBackpropFilter` with their sizes from
/// `Shape`) on the plan's threaded kernels.
#[test]
fn lenet_plan_runs_the_backward_primitives_on_plan_kernels() {
    let p = program(model("lenet"));
    let mut ex = Executor::new(&p, ExecOptions::default());
    ex.call(
        "step",
        vec![random(&[4, 1, 32, 32], DType::F32, 2), labels(4, 10)],
    )
    .unwrap();
    let kernels = ex.plan_kernels();
    for want in ["conv2d grad input", "conv2d grad filter", "maxpool grad"] {
        assert!(
            kernels.iter().any(|k| k.starts_with(want)),
            "no `{want}` in {kernels:?}"
        );
    }
}

#[test]
fn mlp_plan_uses_gemm_epilogues_and_pairs() {
    let p = program(model("mlp"));
    let mut ex = Executor::new(&p, ExecOptions::default());
    ex.call(
        "step",
        vec![random(&[128, 784], DType::F32, 1), labels(128, 10)],
    )
    .unwrap();
    let kernels = ex.plan_kernels();
    for want in [
        "gemm 128x256x784 +bias relu",
        "gemm 128x10x256 +bias",
        "gemm 128x256x256 || gemm 256x256x128",
    ] {
        assert!(
            kernels.iter().any(|k| k == want),
            "no `{want}` in {kernels:?}"
        );
    }
}

/// A backend on another device (as the GPU one is), running the CPU kernels
/// and counting the primitives it is given.
struct CountingDevice(std::sync::Arc<std::sync::Mutex<HashMap<&'static str, usize>>>);

impl exec::Backend for CountingDevice {
    fn device(&self) -> exec::Device {
        exec::Device::Gpu
    }
    fn supports(&self, op: &ops::OpDef) -> bool {
        op.kernel.is_some()
    }
    fn run(
        &self,
        op: &'static ops::OpDef,
        call: &ops::KernelCall,
    ) -> Result<ops::KValue, ops::OpError> {
        *self.0.lock().unwrap().entry(op.name).or_default() += 1;
        exec::CpuBackend.run(op, call)
    }
}

/// Plans run the CPU's own kernels, so on a device backend none is compiled
/// and every primitive call reaches the backend (a plan taking over once
/// made `--device gpu` run nothing on the GPU).
#[test]
fn a_device_backend_gets_every_primitive() {
    let p = program(model("mlp"));
    let seen = std::sync::Arc::default();
    let mut ex = Executor::with_backend(
        &p,
        ExecOptions::default(),
        Box::new(CountingDevice(std::sync::Arc::clone(&seen))),
    );
    for _ in 0..2 {
        ex.call(
            "step",
            vec![random(&[16, 784], DType::F32, 1), labels(16, 10)],
        )
        .unwrap();
    }
    assert!(ex.plan_kernels().is_empty(), "{:?}", ex.plan_kernels());
    let seen = seen.lock().unwrap();
    // Eight per step: three forward, and five backward (no input gradient
    // for the first layer).
    let matmuls = seen.get("MatMul").copied().unwrap_or(0);
    assert!(matmuls >= 16, "{seen:?}");
    assert!(
        seen.contains_key("SparseSoftmaxCrossEntropyWithLogits"),
        "{seen:?}"
    );
}
