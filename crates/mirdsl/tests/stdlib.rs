//! The standard library of layers (`lib/nn/*.mir`) against MindSpore 2.10's
//! `nn`.
//!
//! `stdlib/gen_oracle.py` (optional: it needs MindSpore) builds each layer's
//! MindSpore counterpart (`nn.Dense`, `nn.Conv2d` + `nn.BatchNorm2d` +
//! `nn.ReLU`, ResNet basic blocks, `nn.BatchNorm2d` in training,
//! `nn.MultiheadAttention`, `nn.LayerNorm`, `nn.Embedding`, `nn.LSTMCell`,
//! `nn.GRUCell`, `nn.LSTM`, `nn.GRU`, the losses, and two steps of `nn.SGD`/`nn.Momentum`/`nn.Adam`/
//! `nn.AdamWeightDecay`) on fixed random inputs and weights and
//! records `stdlib/oracle.json`: outputs, and the gradients of
//! `sum(outputs · ct)` (a fixed random cotangent) with respect to every float
//! input and weight. This test replays it with the executor, always:
//!
//! - every library file checks on its own, without errors or warnings, and is
//!   formatted; all of them together check too (no graph name twice);
//! - each layer case's model (`stdlib/<case>.mir`, which names the library
//!   files it uses in a `# lib:` line) imports the library
//!   ([`program_with_library`]); its `main` returns `(outputs, gradients)`,
//!   compared with MindSpore's within the case's tolerance; a gradient
//!   MindSpore does not give (recorded as null: it treats BatchNorm's running
//!   statistics in inference and a softmax cross entropy's labels as
//!   constants) is checked by central finite differences of the model's `f`;
//! - each optimizer case's model declares the weights and optimizer state as
//!   `param`s and a `step(g0, g1)` graph that applies the library's update rule
//!   with `Assign`; two steps on MindSpore's gradients must leave the weights
//!   and the state MindSpore's optimizer left.
//!
//! - optionally (`MIRDSL_MINDSPORE_PYTHON` names a python with MindSpore
//!   2.10), each layer case's objective is exported with `mirdsl export` and
//!   run in MindSpore, which must give the executor's value.
//!
//! It prints one line per case with the largest absolute and relative errors.

use std::path::{Path, PathBuf};

use exec::{ExecOptions, Executor, Value};
use serde_json::Value as Json;
use tensor::{DType, Tensor};

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn case_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/stdlib")
}

/// Checks a program made of library files (paths under `lib/`, e.g.
/// `"nn/dense.mir"`) and a model that uses their graphs: the model with an
/// `import "@std/<file>"` line per library file, linked as `mirdsl run` links
/// it; its IR, or the error diagnostics.
fn program_with_library(lib_files: &[&str], model_src: &str) -> Result<ir::Program, String> {
    let mut src = String::new();
    for file in lib_files {
        src.push_str(&format!("import \"@std/{file}\"\n"));
    }
    src.push_str(model_src);
    let linked = analysis::link::link(
        &case_dir().join("model.mir"),
        Some(std::sync::Arc::from(src.as_str())),
        &analysis::modules::FsLoader,
    );
    if !linked.has_errors() {
        return Ok(linked.analysis.source.program());
    }
    let errors: Vec<String> = linked
        .diagnostics
        .iter()
        .flatten()
        .filter(|d| d.severity == analysis::Severity::Error)
        .map(|d| format!("{:?}: {}", d.code, d.message))
        .collect();
    Err(format!("does not check:\n{}", errors.join("\n")))
}

/// The library files a case's model names in its `# lib: a.mir b.mir` line.
fn model(case: &str) -> (Vec<String>, String) {
    let path = case_dir().join(format!("{case}.mir"));
    let src = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let libs = src
        .lines()
        .find_map(|l| l.strip_prefix("# lib:"))
        .map(|l| l.split_whitespace().map(String::from).collect())
        .unwrap_or_default();
    (libs, src)
}

fn number(v: &Json) -> f64 {
    match v {
        Json::Number(n) => n.as_f64().expect("a number"),
        other => panic!("not a number: {other}"),
    }
}

fn tensor(v: &Json) -> Tensor {
    let dtype: DType = v["dtype"].as_str().unwrap().parse().expect("a dtype");
    let shape: Vec<usize> = v["shape"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_u64().unwrap() as usize)
        .collect();
    let data: Vec<f64> = v["data"].as_array().unwrap().iter().map(number).collect();
    Tensor::from_f64(shape, data)
        .expect("sizes match")
        .cast(dtype)
}

fn value(t: &Json) -> Value {
    Value::tensor(tensor(t))
}

/// The largest absolute and relative errors seen, and the first failure.
#[derive(Default)]
struct Errors {
    abs: f64,
    rel: f64,
    failure: Option<String>,
}

impl Errors {
    fn fail(&mut self, message: String) {
        self.failure.get_or_insert(message);
    }

    fn tensors(&mut self, got: &Tensor, want: &Tensor, rtol: f64, atol: f64, at: &str) {
        if got.dtype() != want.dtype() || got.shape() != want.shape() {
            self.fail(format!(
                "{at}: {}{:?} vs MindSpore's {}{:?}",
                got.dtype(),
                got.shape(),
                want.dtype(),
                want.shape()
            ));
            return;
        }
        for (i, (a, b)) in got
            .to_f64_vec()
            .into_iter()
            .zip(want.to_f64_vec())
            .enumerate()
        {
            let d = (a - b).abs();
            self.abs = self.abs.max(d);
            if b.abs() > 1e-3 {
                self.rel = self.rel.max(d / b.abs());
            }
            if d.is_nan() || d > atol + rtol * b.abs() {
                self.fail(format!("{at}[{i}]: {a} vs MindSpore's {b}"));
            }
        }
    }

    fn values(&mut self, got: &Value, want: &Json, rtol: f64, atol: f64, at: &str) {
        match (got, want) {
            (_, Json::Null) => {}
            (Value::Tuple(items), Json::Array(wants)) if items.len() == wants.len() => {
                for (i, (g, w)) in items.iter().zip(wants).enumerate() {
                    self.values(g, w, rtol, atol, &format!("{at}.{i}"));
                }
            }
            (Value::Tensor(g), Json::Object(_)) => {
                self.tensors(g.tensor(), &tensor(want), rtol, atol, at)
            }
            _ => self.fail(format!(
                "{at}: {} vs MindSpore's {want}",
                exec::output::to_json(got)
            )),
        }
    }
}

/// The value of a float scalar result.
fn scalar(v: &Value) -> f64 {
    let t = v.as_tensor().expect("a tensor").tensor().to_f64_vec();
    assert_eq!(t.len(), 1, "a scalar");
    t[0]
}

/// Checks `grad` of argument `w` (the model's `f` is the objective) by central
/// differences: the executor runs in f32, so the step is 1e-3 and the
/// tolerance loose (1e-2 relative, 2e-3 absolute).
fn finite_differences(
    ex: &mut Executor,
    args: &[Value],
    w: usize,
    analytic: &Value,
    errors: &mut Errors,
    at: &str,
) {
    let x = args[w].as_tensor().expect("a tensor").tensor().clone();
    let Some(g) = analytic.as_tensor() else {
        return errors.fail(format!("{at}: the gradient is {}", analytic.describe()));
    };
    let g = g.tensor().to_f64_vec();
    let base = x.to_f64_vec();
    for (e, a) in g.into_iter().enumerate() {
        let h = 1e-3 * base[e].abs().max(1.0);
        let mut at_delta = |delta: f64| {
            let mut data = base.clone();
            data[e] += delta;
            let mut a = args.to_vec();
            a[w] = Value::tensor(
                Tensor::from_f64(x.shape().to_vec(), data)
                    .unwrap()
                    .cast(x.dtype()),
            );
            scalar(&ex.call("f", a).expect("f runs"))
        };
        let numeric = (at_delta(h) - at_delta(-h)) / (2.0 * h);
        let d = (a - numeric).abs();
        if d > 2e-3 + 1e-2 * numeric.abs() {
            errors.fail(format!(
                "{at}[{e}]: grad gives {a}, finite differences {numeric}"
            ));
        }
    }
}

fn oracle() -> Json {
    let path = case_dir().join("oracle.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).expect("valid JSON")
}

fn program(case: &str) -> Result<ir::Program, String> {
    let (libs, src) = model(case);
    let libs: Vec<&str> = libs.iter().map(String::as_str).collect();
    program_with_library(&libs, &src)
}

fn layer(case: &Json) -> Errors {
    let name = case["name"].as_str().unwrap();
    let mut errors = Errors::default();
    let program = match program(name) {
        Ok(p) => p,
        Err(e) => {
            errors.fail(e);
            return errors;
        }
    };
    let mut ex = Executor::new(&program, ExecOptions::default());
    let args: Vec<Value> = case["inputs"]
        .as_array()
        .unwrap()
        .iter()
        .map(value)
        .collect();
    let (rtol, atol) = (number(&case["rtol"]), number(&case["atol"]));
    let got = match ex.call("main", args.clone()) {
        Ok(v) => v,
        Err(e) => {
            errors.fail(format!("main fails: {}", e.message));
            return errors;
        }
    };
    errors.values(&got, &case["expected"], rtol, atol, "main");
    // Gradients MindSpore does not give: by finite differences.
    let wrt: Vec<usize> = case["wrt"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_u64().unwrap() as usize)
        .collect();
    let Value::Tuple(parts) = &got else {
        return errors;
    };
    let Some(Value::Tuple(grads)) = parts.get(1) else {
        return errors;
    };
    for (i, want) in case["expected"][1].as_array().unwrap().iter().enumerate() {
        if want.is_null() {
            let at = format!("d/d arg {}", wrt[i]);
            finite_differences(&mut ex, &args, wrt[i], &grads[i], &mut errors, &at);
        }
    }
    errors
}

fn optimizer(case: &Json) -> Errors {
    let name = case["name"].as_str().unwrap();
    let mut errors = Errors::default();
    let program = match program(name) {
        Ok(p) => p,
        Err(e) => {
            errors.fail(e);
            return errors;
        }
    };
    let mut ex = Executor::new(&program, ExecOptions::default());
    for (w, v) in case["init"].as_object().unwrap() {
        ex.set_weight(w, value(v))
            .expect("the model declares the weight");
    }
    let (rtol, atol) = (number(&case["rtol"]), number(&case["atol"]));
    let steps = case["steps"].as_array().unwrap();
    for (k, (grads, after)) in case["grads"]
        .as_array()
        .unwrap()
        .iter()
        .zip(steps)
        .enumerate()
    {
        let args = grads.as_array().unwrap().iter().map(value).collect();
        if let Err(e) = ex.call("step", args) {
            errors.fail(format!("step {k} fails: {}", e.message));
            return errors;
        }
        for (w, want) in after.as_object().unwrap() {
            match ex.weight_value(w) {
                Ok(got) => errors.values(&got, want, rtol, atol, &format!("step {k}: {w}")),
                Err(e) => errors.fail(format!("{w}: {}", e.message)),
            }
        }
    }
    errors
}

#[test]
fn library_files_check_on_their_own() {
    let dir = repo_root().join("lib/nn");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "mir"))
        .collect();
    files.sort();
    assert!(files.len() >= 8, "{files:?}");
    let mut problems = Vec::new();
    for file in &files {
        let src = std::fs::read_to_string(file).unwrap();
        for d in analysis::analyze(&src).diagnostics {
            problems.push(format!("{}: {:?} {}", file.display(), d.code, d.message));
        }
        if fmt::format(&src).ok().as_deref() != Some(src.as_str()) {
            problems.push(format!("{}: not formatted (`mirdsl fmt`)", file.display()));
        }
    }
    // Together (as one program importing them all sees them): no name twice.
    let all: Vec<String> = files
        .iter()
        .map(|f| std::fs::read_to_string(f).unwrap())
        .collect();
    for d in analysis::analyze(&all.join("\n")).diagnostics {
        problems.push(format!("all files together: {:?} {}", d.code, d.message));
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn layers_match_mindspore() {
    let oracle = oracle();
    let mut failures = Vec::new();
    let mut seen = 0;
    for case in oracle["cases"].as_array().unwrap() {
        let name = case["name"].as_str().unwrap();
        let optim = case.get("optimizer").is_some_and(|o| o == true);
        let e = if optim { optimizer(case) } else { layer(case) };
        seen += 1;
        println!(
            "{name:32} max abs {:.2e}  max rel {:.2e}  {}",
            e.abs,
            e.rel,
            if e.failure.is_some() { "FAIL" } else { "ok" }
        );
        if let Some(f) = e.failure {
            failures.push(format!("{name}: {f}"));
        }
    }
    assert!(seen >= 34, "{seen} cases");
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// A deterministic uniform sample in `[lo, hi)`.
fn uniform(n: usize, lo: f64, hi: f64, seed: &mut u64) -> Vec<f64> {
    (0..n)
        .map(|_| {
            *seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            lo + (hi - lo) * ((*seed >> 11) as f64 / (1u64 << 53) as f64)
        })
        .collect()
}

/// An argument of a finite-difference case: its kind and shape.
type Arg = (char, &'static [usize]);

/// Graphs of the library that no MindSpore case covers (or only partly: the
/// masks, the training-mode batch norm, the `_none` reductions) are checked
/// by finite differences: each model's `f` returns a scalar; every float
/// argument's `grad` must agree with central differences.
#[test]
fn other_graphs_match_finite_differences() {
    // (library file, model, arguments: `f` float in [-1, 1), `p` in [0.5, 1.5), `i` ids in [0, 6)).
    let cases: &[(&str, &str, &[Arg])] = &[
        (
            "nn/attention.mir",
            "graph f(q, k, v, mask, ct) {\n  (o, w) = scaled_dot_product_attention(q, k, v, mask)\n  return ReduceSum(o * ct) + ReduceSum(w)\n}\n",
            &[('f', &[2, 3, 4]), ('f', &[2, 5, 4]), ('f', &[2, 5, 3]), ('f', &[3, 5]), ('f', &[2, 3, 3])],
        ),
        (
            "nn/attention.mir",
            "graph f(q, k, v, in_w, in_b, out_w, out_b, mask, ct, cw) {\n  (o, w) = multi_head_attention_masked(q, k, v, in_w, in_b, out_w, out_b, 2, mask)\n  return ReduceSum(o * ct) + ReduceSum(w * cw)\n}\n",
            &[('f', &[3, 2, 4]), ('f', &[5, 2, 4]), ('f', &[5, 2, 4]), ('f', &[12, 4]), ('f', &[12]), ('f', &[4, 4]), ('f', &[4]), ('f', &[3, 5]), ('f', &[3, 2, 4]), ('f', &[2, 3, 5])],
        ),
        (
            "nn/norm.mir",
            "graph f(x, g, b, m, v, ct) {\n  (y, _m, _v) = batch_norm_train(x, (g, b, m, v), 0.9)\n  return ReduceSum(y * ct)\n}\n",
            &[('f', &[4, 3, 2, 2]), ('p', &[3]), ('f', &[3]), ('f', &[3]), ('p', &[3]), ('f', &[4, 3, 2, 2])],
        ),
        (
            "nn/norm.mir",
            "graph f(x, g, b, ct) {\n  return ReduceSum(layer_norm_1e5(x, g, b) * ct)\n}\n",
            &[('f', &[2, 5]), ('p', &[5]), ('f', &[5]), ('f', &[2, 5])],
        ),
        (
            "nn/dense.mir",
            "graph f(x, w, x3, w3, ct, ct3) {\n  return ReduceSum(dense_no_bias(x, w) * ct) + ReduceSum(linear_no_bias(x3, w3) * ct3)\n}\n",
            &[('f', &[2, 3]), ('f', &[4, 3]), ('f', &[2, 2, 3]), ('f', &[4, 3]), ('f', &[2, 4]), ('f', &[2, 2, 4])],
        ),
        (
            "nn/embedding.mir",
            "graph f(ids, table, ct) {\n  return ReduceSum(embedding_scaled(ids, table, 2.0) * ct)\n}\n",
            &[('i', &[2, 3]), ('f', &[6, 4]), ('f', &[2, 3, 4])],
        ),
        (
            "nn/loss.mir",
            "graph f(p, t, ct) {\n  a = ReduceSum(mse_loss_none(p, t) * ct) + ReduceSum(bce_with_logits_none(p, Sigmoid(t)) * ct)\n  return a + ReduceSum(smooth_l1_loss_none(p * 2.0, t) * ct)\n}\n",
            &[('f', &[3, 4]), ('f', &[3, 4]), ('f', &[3, 4])],
        ),
    ];
    let mut failures = Vec::new();
    let mut seed = 20261125u64;
    for (lib, src, args) in cases {
        let program = match program_with_library(&[lib], src) {
            Ok(p) => p,
            Err(e) => {
                failures.push(e);
                continue;
            }
        };
        let mut ex = Executor::new(&program, ExecOptions::default());
        let values: Vec<Value> = args
            .iter()
            .map(|(kind, shape)| {
                let n = shape.iter().product();
                let t = match kind {
                    'i' => Tensor::from_f64(shape.to_vec(), uniform(n, 0.0, 6.0, &mut seed))
                        .unwrap()
                        .cast(DType::I32),
                    'p' => Tensor::from_f64(shape.to_vec(), uniform(n, 0.5, 1.5, &mut seed))
                        .unwrap()
                        .cast(DType::F32),
                    _ => Tensor::from_f64(shape.to_vec(), uniform(n, -1.0, 1.0, &mut seed))
                        .unwrap()
                        .cast(DType::F32),
                };
                Value::tensor(t)
            })
            .collect();
        let wrt: Vec<usize> = (0..args.len()).filter(|&i| args[i].0 != 'i').collect();
        let names: Vec<String> = (0..args.len()).map(|i| format!("a{i}")).collect();
        let wrt_text: Vec<String> = wrt.iter().map(|w| w.to_string()).collect();
        let grad_src = format!(
            "{src}\ngraph g({0}) {{\n  return grad(f, wrt=({1},))({0})\n}}\n",
            names.join(", "),
            wrt_text.join(", ")
        );
        let program = match program_with_library(&[lib], &grad_src) {
            Ok(p) => p,
            Err(e) => {
                failures.push(e);
                continue;
            }
        };
        let mut gx = Executor::new(&program, ExecOptions::default());
        let grads = match gx.call("g", values.clone()) {
            Ok(Value::Tuple(g)) => g,
            Ok(other) => {
                failures.push(format!("{src}: grad gives {}", other.describe()));
                continue;
            }
            Err(e) => {
                failures.push(format!("{src}: grad fails: {}", e.message));
                continue;
            }
        };
        let mut errors = Errors::default();
        for (g, &w) in grads.iter().zip(&wrt) {
            finite_differences(&mut ex, &values, w, g, &mut errors, &format!("d/d a{w}"));
        }
        println!(
            "{:60} {}",
            src.lines().next().unwrap(),
            if errors.failure.is_some() {
                "FAIL"
            } else {
                "ok"
            }
        );
        if let Some(f) = errors.failure {
            failures.push(format!("{src}{f}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// A model built from the library trains: an MLP classifier (`dense`,
/// `dense_act`, `sparse_softmax_cross_entropy`) whose step applies
/// `adam_step` to every weight with `Assign`; its loss falls over the steps.
#[test]
fn a_model_built_from_the_library_trains() {
    let model = r#"
param fc1.w: f32[8, 4] = normal(std=0.5, seed=1)
param fc1.b: f32[8] = zeros
param fc2.w: f32[3, 8] = normal(std=0.5, seed=2)
param fc2.b: f32[3] = zeros
param m.fc1.w: f32[8, 4] = zeros
param m.fc1.b: f32[8] = zeros
param m.fc2.w: f32[3, 8] = zeros
param m.fc2.b: f32[3] = zeros
param v.fc1.w: f32[8, 4] = zeros
param v.fc1.b: f32[8] = zeros
param v.fc2.w: f32[3, 8] = zeros
param v.fc2.b: f32[3] = zeros
param beta1_power: f32[] = ones
param beta2_power: f32[] = ones

graph loss(x: f32[B, 4], labels: i32[B]) -> f32[] {
  h = dense_act(Tanh, x, fc1.w, fc1.b)
  return sparse_softmax_cross_entropy(dense(h, fc2.w, fc2.b), labels)
}

graph train_step(x: f32[B, 4], labels: i32[B]) -> f32[] {
  (l, (g1, g2, g3, g4)) = value_and_grad(loss, wrt=(fc1.w, fc1.b, fc2.w, fc2.b))(x, labels)
  p1 = Load(beta1_power)
  p2 = Load(beta2_power)
  (w1, m1, v1, q1, q2) = adam_step(fc1.w, m.fc1.w, v.fc1.w, p1, p2, g1, 0.05, 0.9, 0.999, 1e-8)
  Assign(fc1.w, w1)
  Assign(m.fc1.w, m1)
  Assign(v.fc1.w, v1)
  (w2, m2, v2, _a, _b) = adam_step(fc1.b, m.fc1.b, v.fc1.b, p1, p2, g2, 0.05, 0.9, 0.999, 1e-8)
  Assign(fc1.b, w2)
  Assign(m.fc1.b, m2)
  Assign(v.fc1.b, v2)
  (w3, m3, v3, _c, _d) = adam_step(fc2.w, m.fc2.w, v.fc2.w, p1, p2, g3, 0.05, 0.9, 0.999, 1e-8)
  Assign(fc2.w, w3)
  Assign(m.fc2.w, m3)
  Assign(v.fc2.w, v3)
  (w4, m4, v4, _e, _f) = adam_step(fc2.b, m.fc2.b, v.fc2.b, p1, p2, g4, 0.05, 0.9, 0.999, 1e-8)
  Assign(fc2.b, w4)
  Assign(m.fc2.b, m4)
  Assign(v.fc2.b, v4)
  Assign(beta1_power, q1)
  Assign(beta2_power, q2)
  return l
}
"#;
    let program = program_with_library(&["nn/dense.mir", "nn/loss.mir", "nn/optim.mir"], model)
        .unwrap_or_else(|e| panic!("{e}"));
    let mut ex = Executor::new(&program, ExecOptions::default());
    let mut seed = 7u64;
    let x = Tensor::from_f64(vec![12, 4], uniform(48, -1.0, 1.0, &mut seed))
        .unwrap()
        .cast(DType::F32);
    // Labels: which of the first three features is largest.
    let xs = x.to_f64_vec();
    let labels: Vec<f64> = xs
        .chunks(4)
        .map(|r| (0..3).max_by(|&a, &b| r[a].total_cmp(&r[b])).unwrap() as f64)
        .collect();
    let labels = Tensor::from_f64(vec![12], labels).unwrap().cast(DType::I32);
    let args = vec![Value::tensor(x), Value::tensor(labels)];
    let losses: Vec<f64> = (0..40)
        .map(|_| scalar(&ex.call("train_step", args.clone()).expect("a step runs")))
        .collect();
    println!("loss {:.4} -> {:.4} in 40 steps", losses[0], losses[39]);
    assert!(
        losses[39] < losses[0] / 4.0,
        "the loss does not fall: {losses:?}"
    );
    let p1 = ex.weight_value("beta1_power").unwrap();
    assert!((scalar(&p1) - 0.9f64.powi(40)).abs() < 1e-6);
}

/// Layer cases whose models `mirdsl export` cannot write yet: `(case, why)`.
const NOT_EXPORTED: &[(&str, &str)] = &[];

/// The DSL type of a recorded tensor.
fn type_text(t: &Json) -> String {
    let dims: Vec<String> = t["shape"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d.to_string())
        .collect();
    format!("{}[{}]", t["dtype"].as_str().unwrap(), dims.join(", "))
}

/// Writes a case's model (the library files it uses, then `model_src`, which
/// defines `export_entry`) and inputs to `dir/name`, and exports
/// `export_entry` there; the folder, or why the export failed.
fn export_case(
    dir: &Path,
    name: &str,
    libs: &[String],
    model_src: &str,
    inputs: &[Json],
) -> Result<PathBuf, String> {
    let mut text = String::new();
    for lib in libs {
        text.push_str(&std::fs::read_to_string(repo_root().join("lib").join(lib)).unwrap());
        text.push('\n');
    }
    text.push_str(model_src);
    let case_dir = dir.join(name);
    std::fs::create_dir_all(&case_dir).unwrap();
    let mir = case_dir.join("model.mir");
    std::fs::write(&mir, &text).unwrap();
    for (i, t) in inputs.iter().enumerate() {
        std::fs::write(
            case_dir.join(format!("in{i}.npy")),
            tensor::npy::write(&tensor(t)),
        )
        .unwrap();
    }
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_mirdsl"))
        .arg("export")
        .arg(&mir)
        .args(["--entry", "export_entry", "-o"])
        .arg(case_dir.join("model.mindir"))
        .output()
        .unwrap();
    if out.status.success() {
        Ok(case_dir)
    } else {
        Err(format!(
            "{name}: export fails: {}",
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

/// Optional (`MIRDSL_MINDSPORE_PYTHON` names a python with MindSpore 2.10):
/// each layer case's objective `f` (the layer and `sum(outputs · ct)`),
/// exported with `mirdsl export` behind a typed entry, loads and runs in
/// MindSpore and gives the executor's value.
#[test]
fn exported_layers_run_in_mindspore() {
    let Some(python) = test_support::require(
        test_support::Tool::MindSpore,
        test_support::mindspore_python(),
    ) else {
        return;
    };
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("stdlib_export");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let oracle = oracle();
    let mut failures = Vec::new();
    let mut cases = Vec::new();
    for case in oracle["cases"].as_array().unwrap() {
        let name = case["name"].as_str().unwrap();
        if case.get("optimizer").is_some() || NOT_EXPORTED.iter().any(|(n, _)| *n == name) {
            continue;
        }
        let (libs, src) = model(name);
        let inputs = case["inputs"].as_array().unwrap();
        let params: Vec<String> = inputs
            .iter()
            .enumerate()
            .map(|(i, t)| format!("a{i}: {}", type_text(t)))
            .collect();
        let args: Vec<String> = (0..inputs.len()).map(|i| format!("a{i}")).collect();
        let entry = format!(
            "\ngraph export_entry({}) {{\n  return f({})\n}}\n",
            params.join(", "),
            args.join(", ")
        );
        if let Err(e) = export_case(&dir, name, &libs, &format!("{src}{entry}"), inputs) {
            failures.push(e);
            continue;
        }
        // The executor's value of the same objective.
        let program = program(name).unwrap();
        let mut ex = Executor::new(&program, ExecOptions::default());
        let values: Vec<Value> = inputs.iter().map(value).collect();
        let want = scalar(&ex.call("f", values).unwrap());
        cases.push((name.to_string(), inputs.len(), want));
    }
    let script = r#"
import os, sys
import numpy as np
import mindspore as ms
from mindspore import nn, Tensor
ms.set_context(mode=ms.GRAPH_MODE)
ms.set_device("CPU")
d, n = sys.argv[1], int(sys.argv[2])
ins = [Tensor(np.load(os.path.join(d, f"in{i}.npy"))) for i in range(n)]
out = nn.GraphCell(ms.load(os.path.join(d, "model.mindir")))(*ins)
print("RESULT", float(out.asnumpy()))
"#;
    for (name, n, want) in cases {
        let out = std::process::Command::new(&python)
            .args(["-c", script])
            .arg(dir.join(&name))
            .arg(n.to_string())
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let got = stdout
            .lines()
            .find_map(|l| l.strip_prefix("RESULT "))
            .and_then(|v| v.trim().parse::<f64>().ok());
        match got {
            Some(got) if (got - want).abs() <= 1e-5 + 1e-5 * want.abs() => {
                println!("{name:34} MindSpore {got:.7}, mirdsl {want:.7}  ok")
            }
            Some(got) => failures.push(format!("{name}: MindSpore {got}, mirdsl {want}")),
            None => {
                let err = String::from_utf8_lossy(&out.stderr);
                let last: Vec<&str> = err
                    .lines()
                    .filter(|l| !l.contains("WARNING") && !l.trim().is_empty())
                    .collect();
                failures.push(format!(
                    "{name}: MindSpore fails: {}",
                    last.iter()
                        .rev()
                        .take(4)
                        .rev()
                        .cloned()
                        .collect::<Vec<_>>()
                        .join("\n")
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// Layers whose gradient program does not export or run in MindSpore yet,
/// and why (issue 27). Each must still fail: one that passes is to leave the
/// list.
const GRADIENT_NOT_EXPORTED: &[(&str, &str)] = &[];

/// The failures of a MindSpore test against its list of known gaps: the
/// listed cases (failures start `name:`) must fail, every other must pass.
fn assert_known_gaps(failures: Vec<String>, gaps: &[(&str, &str)], list: &str, checked: usize) {
    let name_of = |f: &String| f.split(':').next().unwrap_or_default().to_string();
    let (known, unexpected): (Vec<String>, Vec<String>) = failures
        .into_iter()
        .partition(|f| gaps.iter().any(|(n, _)| *n == name_of(f)));
    let fixed: Vec<&str> = gaps
        .iter()
        .map(|(n, _)| *n)
        .filter(|n| !known.iter().any(|k| name_of(k) == *n))
        .collect();
    println!(
        "{checked} cases match MindSpore; {} known gaps",
        known.len()
    );
    assert!(
        unexpected.is_empty() && fixed.is_empty(),
        "{checked} ok; failed:\n{}\nlisted in {list} but passing now (remove them): {fixed:?}",
        unexpected.join("\n\n")
    );
}

/// Flattens a run's value into its numbers, in order (tuples depth first).
fn flatten(v: &Value, out: &mut Vec<f64>) {
    match v {
        Value::Tuple(items) => items.iter().for_each(|i| flatten(i, out)),
        other => match other.as_tensor() {
            Some(t) => out.extend(t.tensor().to_f64_vec()),
            None => out.push(scalar(other)),
        },
    }
}

/// Optional (`MIRDSL_MINDSPORE_PYTHON`): each layer's gradient program, a
/// training step's core, `value_and_grad(f, wrt=<every float input>)`,
/// exported behind a typed entry, runs in MindSpore to the executor's value
/// and gradients. The gradients are MindSpore's own backward primitives
/// where it has them (`LayerNormGrad`, `MaxPoolGrad`, ...), the rest written
/// with its primitives.
#[test]
fn exported_layer_gradients_run_in_mindspore() {
    let Some(python) = test_support::require(
        test_support::Tool::MindSpore,
        test_support::mindspore_python(),
    ) else {
        return;
    };
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("stdlib_export_grad");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let script = r#"
import json, os, sys
import numpy as np
import mindspore as ms
from mindspore import nn, Tensor
ms.set_context(mode=ms.GRAPH_MODE)
ms.set_device("CPU")
d, n = sys.argv[1], int(sys.argv[2])
ins = [Tensor(np.load(os.path.join(d, f"in{i}.npy"))) for i in range(n)]
out = nn.GraphCell(ms.load(os.path.join(d, "model.mindir")))(*ins)
def flat(v):
    if isinstance(v, (tuple, list)):
        return [x for i in v for x in flat(i)]
    return np.asarray(v.asnumpy(), dtype=np.float64).reshape(-1).tolist()
print("RESULT", json.dumps(flat(out)))
"#;
    let mut failures = Vec::new();
    let mut checked = 0;
    for case in oracle()["cases"].as_array().unwrap() {
        let name = case["name"].as_str().unwrap();
        if case.get("optimizer").is_some() || NOT_EXPORTED.iter().any(|(n, _)| *n == name) {
            continue;
        }
        let (libs, src) = model(name);
        let inputs = case["inputs"].as_array().unwrap();
        let params: Vec<String> = inputs
            .iter()
            .enumerate()
            .map(|(i, t)| format!("a{i}: {}", type_text(t)))
            .collect();
        let args: Vec<String> = (0..inputs.len()).map(|i| format!("a{i}")).collect();
        let wrt: Vec<String> = inputs
            .iter()
            .enumerate()
            .filter(|(_, t)| t["dtype"].as_str().is_some_and(|d| d.starts_with('f')))
            .map(|(i, _)| i.to_string())
            .collect();
        if wrt.is_empty() {
            continue;
        }
        let entry = format!(
            "\ngraph export_entry({}) {{\n  return value_and_grad(f, wrt=({},))({})\n}}\n",
            params.join(", "),
            wrt.join(", "),
            args.join(", ")
        );
        let case_dir = match export_case(&dir, name, &libs, &format!("{src}{entry}"), inputs) {
            Ok(d) => d,
            Err(e) => {
                failures.push(e);
                continue;
            }
        };
        let lib_refs: Vec<&str> = libs.iter().map(String::as_str).collect();
        let program = program_with_library(&lib_refs, &format!("{src}{entry}")).unwrap();
        let mut ex = Executor::new(&program, ExecOptions::default());
        let values: Vec<Value> = inputs.iter().map(value).collect();
        let mut want = Vec::new();
        flatten(&ex.call("export_entry", values).unwrap(), &mut want);
        let out = std::process::Command::new(&python)
            .args(["-c", script])
            .arg(&case_dir)
            .arg(inputs.len().to_string())
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let got: Option<Vec<f64>> = stdout
            .lines()
            .find_map(|l| l.strip_prefix("RESULT "))
            .and_then(|v| serde_json::from_str(v.trim()).ok());
        match got {
            Some(got) => {
                let scale = want.iter().fold(1.0f64, |m, v| m.max(v.abs()));
                let worst = got
                    .iter()
                    .zip(&want)
                    .map(|(g, w)| (g - w).abs())
                    .fold(0.0, f64::max);
                if got.len() != want.len() || worst > 1e-4 * scale {
                    failures.push(format!(
                        "{name}: MindSpore and mirdsl differ ({} vs {} numbers, worst {worst:e})",
                        got.len(),
                        want.len()
                    ));
                } else {
                    checked += 1;
                    println!(
                        "{name:34} {} numbers, worst difference {worst:.1e}  ok",
                        want.len()
                    );
                }
            }
            None => {
                let err = String::from_utf8_lossy(&out.stderr);
                let last: Vec<&str> = err
                    .lines()
                    .filter(|l| !l.contains("WARNING") && !l.trim().is_empty())
                    .collect();
                failures.push(format!(
                    "{name}: MindSpore fails: {}",
                    last[last.len().saturating_sub(4)..].join("\n")
                ));
            }
        }
    }
    assert_known_gaps(
        failures,
        GRADIENT_NOT_EXPORTED,
        "GRADIENT_NOT_EXPORTED",
        checked,
    );
}

/// Optimizer steps whose export does not run in MindSpore yet, and why. Each
/// must still fail: one that passes is to leave the list.
const OPTIMIZER_NOT_EXPORTED: &[(&str, &str)] = &[];

/// Optional (`MIRDSL_MINDSPORE_PYTHON`): each optimizer step of the library
/// (`sgd_step`, `momentum_step`, `adam_step`, ...), in a model whose weights
/// start at the case's values (`load`ed), exported and run in MindSpore for
/// the case's steps: the weights each step returns are those MindSpore's own
/// `nn` optimizers computed (the oracle).
#[test]
fn exported_optimizer_steps_run_in_mindspore() {
    let Some(python) = test_support::require(
        test_support::Tool::MindSpore,
        test_support::mindspore_python(),
    ) else {
        return;
    };
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("stdlib_export_optim");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let script = r#"
import json, os, sys
import numpy as np
import mindspore as ms
from mindspore import nn, Tensor
ms.set_context(mode=ms.GRAPH_MODE)
ms.set_device("CPU")
d, steps, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
step = nn.GraphCell(ms.load(os.path.join(d, "model.mindir")))
out = []
for k in range(steps):
    grads = [Tensor(np.load(os.path.join(d, f"g{k}_{i}.npy"))) for i in range(n)]
    out.append([np.asarray(w.asnumpy(), dtype=np.float64).reshape(-1).tolist() for w in step(*grads)])
print("RESULT", json.dumps(out))
"#;
    let mut failures = Vec::new();
    let mut checked = 0;
    for case in oracle()["cases"].as_array().unwrap() {
        if case.get("optimizer").is_none() {
            continue;
        }
        let name = case["name"].as_str().unwrap();
        let (libs, src) = model(name);
        let case_dir = dir.join(name);
        std::fs::create_dir_all(&case_dir).unwrap();
        // The weights start where the case's do.
        let init = case["init"].as_object().unwrap();
        let mut model_src = String::new();
        for line in src.lines() {
            let weight = line
                .strip_prefix("param ")
                .and_then(|l| l.split(':').next())
                .map(str::trim)
                .filter(|w| init.contains_key(*w));
            match weight {
                Some(w) => {
                    let file = format!("init_{w}.npy");
                    std::fs::write(case_dir.join(&file), tensor::npy::write(&tensor(&init[w])))
                        .unwrap();
                    let head = line.split('=').next().unwrap();
                    model_src.push_str(&format!(
                        "{head}= load(\"{}\")\n",
                        case_dir.join(&file).display()
                    ));
                }
                None => {
                    model_src.push_str(line);
                    model_src.push('\n');
                }
            }
        }
        let model_src = model_src.replace("graph step(", "graph export_entry(");
        let grads = case["grads"].as_array().unwrap();
        if let Err(e) = export_case(&dir, name, &libs, &model_src, &[]) {
            failures.push(e);
            continue;
        }
        let n = grads[0].as_array().unwrap().len();
        for (k, step) in grads.iter().enumerate() {
            for (i, g) in step.as_array().unwrap().iter().enumerate() {
                std::fs::write(
                    case_dir.join(format!("g{k}_{i}.npy")),
                    tensor::npy::write(&tensor(g)),
                )
                .unwrap();
            }
        }
        let out = std::process::Command::new(&python)
            .args(["-c", script])
            .arg(&case_dir)
            .arg(grads.len().to_string())
            .arg(n.to_string())
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let got: Option<Vec<Vec<Vec<f64>>>> = stdout
            .lines()
            .find_map(|l| l.strip_prefix("RESULT "))
            .and_then(|v| serde_json::from_str(v.trim()).ok());
        let Some(got) = got else {
            let err = String::from_utf8_lossy(&out.stderr);
            let last: Vec<&str> = err
                .lines()
                .filter(|l| !l.contains("WARNING") && !l.trim().is_empty())
                .collect();
            failures.push(format!(
                "{name}: MindSpore fails: {}",
                last[last.len().saturating_sub(4)..].join("\n")
            ));
            continue;
        };
        let (rtol, atol) = (number(&case["rtol"]), number(&case["atol"]));
        let steps = case["steps"].as_array().unwrap();
        let mut ok = true;
        for (k, (after, weights)) in steps.iter().zip(&got).enumerate() {
            for (w, values) in ["w0", "w1"].iter().zip(weights) {
                let want = tensor(&after[*w]).to_f64_vec();
                let close = want.len() == values.len()
                    && want
                        .iter()
                        .zip(values)
                        .all(|(a, b)| (a - b).abs() <= atol + rtol * a.abs());
                if !close {
                    ok = false;
                    failures.push(format!(
                        "{name}: step {k}: {w} differs from MindSpore's optimizer"
                    ));
                }
            }
        }
        if ok {
            checked += 1;
            println!(
                "{name:20} {} steps match MindSpore's optimizer",
                steps.len()
            );
        }
    }
    assert_known_gaps(
        failures,
        OPTIMIZER_NOT_EXPORTED,
        "OPTIMIZER_NOT_EXPORTED",
        checked,
    );
}
