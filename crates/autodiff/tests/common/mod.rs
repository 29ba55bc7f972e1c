//! Helpers for the integration tests: lowering programs, running them with the
//! executor, finite differences, and the round trip through DSL text.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use autodiff::{differentiate, GradResult, GradTarget};
use ir::{DType, GraphId, MetaFn, Program, Shape, Ty, WeightInit, WrtItem};
use tensor::Tensor;

pub fn oracle_dir() -> PathBuf {
    PathBuf::from("/work/shared/fixtures/oracle/cases")
}

pub fn testdata_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data")
}

/// Lowers a program that must check without errors.
pub fn program(text: &str) -> Program {
    let a = analysis::analyze(text);
    let errors: Vec<String> = a
        .diagnostics
        .iter()
        .filter(|d| d.severity == analysis::Severity::Error)
        .map(|d| format!("{:?}: {} at `{}`", d.code, d.message, &text[d.range]))
        .collect();
    assert!(errors.is_empty(), "the program has errors: {errors:#?}");
    a.source.program()
}

pub fn target(name: &str) -> GradTarget {
    GradTarget {
        item: name.to_string(),
        graph: GraphId(0),
    }
}

pub fn grad_wrt(items: &[WrtItem]) -> MetaFn {
    MetaFn::Grad {
        wrt: Some(items.to_vec()),
    }
}

/// The program with the generated graphs added.
pub fn with_result(program: &Program, r: &GradResult) -> Program {
    let mut p = program.clone();
    p.graphs.extend(r.graphs.iter().cloned());
    p
}

/// The gradient graphs as text (what `mirdsl grad` prints).
pub fn gradient_text(program: &Program, name: &str, meta: &MetaFn) -> String {
    autodiff::gradient_program_text(program, &target(name), meta, &autodiff::Options::default())
        .expect("differentiates")
}

/// Diagnostics that stand in the way of checking printed gradients for reasons
/// outside this crate: the lowering does not resolve the registry's internal
/// `_`-prefixed primitives the gradient rules use (nor their attributes), and
/// the checker cannot join values holding different closures (the branches of
/// a `J`-transformed `if` each return their own backpropagator).
/// Checks the printed gradient on its own (it carries the weights and graphs
/// of `source` it needs): it must parse, lower and check with no errors.
pub fn check_standalone(gradient: &str) {
    let full = gradient;
    let a = analysis::analyze(full);
    for d in &a.diagnostics {
        if d.severity != analysis::Severity::Error {
            continue;
        }
        panic!(
            "the printed gradient does not check: {:?} {} at `{}`\n{full}",
            d.code, d.message, &full[d.range]
        );
    }
}

/// Runs `entry` of `program` with the executor.
pub fn run(program: &Program, base: &Path, entry: &str, args: &[Tensor]) -> exec::Value {
    let mut ex = exec::Executor::new(
        program,
        exec::ExecOptions {
            base_dir: base.to_path_buf(),
            ..Default::default()
        },
    );
    let args: Vec<exec::Value> = args.iter().map(|t| ex.tensor(t.clone())).collect();
    match ex.call(entry, args) {
        Ok(v) => v,
        Err(e) => panic!("running `{entry}` failed: {e:?}"),
    }
}

/// The tensors of a value, depth first (`None` for `none`).
pub fn leaves(v: &exec::Value) -> Vec<Option<Tensor>> {
    match v {
        exec::Value::Tensor(t) => vec![Some(t.tensor().clone())],
        exec::Value::Tuple(items) => items.iter().flat_map(leaves).collect(),
        exec::Value::None => vec![None],
        other => panic!("unexpected value {}", other.describe()),
    }
}

/// The sum of every float element of a value (what `OnesLike` differentiates).
pub fn total(v: &exec::Value) -> f64 {
    leaves(v)
        .into_iter()
        .flatten()
        .filter(|t| t.dtype().is_float())
        .map(|t| t.to_f64_vec().iter().sum::<f64>())
        .sum()
}

pub fn f64_tensor(shape: &[usize], data: Vec<f64>) -> Tensor {
    Tensor::from_f64(shape.to_vec(), data).unwrap()
}

/// Deterministic values in [lo, hi).
pub fn random(shape: &[usize], seed: u64, lo: f64, hi: f64) -> Tensor {
    match ops::eager::random_f64(shape, seed, lo, hi) {
        ops::KValue::Tensor(t) => t,
        _ => unreachable!(),
    }
}

/// Weights read and widened to f64 (declared f64 too), for exact checks.
pub fn weights_to_f64(program: &mut Program, base: &Path) {
    for w in &mut program.weights {
        let (t, _) = exec::weights::init_weight(w, base).expect("weight initialises");
        let t = if t.dtype().is_float() {
            t.cast(DType::F64)
        } else {
            t
        };
        if let Ty::Tensor(_, shape) = &w.ty {
            if t.dtype() == DType::F64 {
                w.ty = Ty::Tensor(DType::F64, shape.clone());
            }
        }
        w.init = WeightInit::Tensor(Arc::new(t));
    }
}

fn with_element(t: &Tensor, j: usize, delta: f64) -> Tensor {
    let mut data = t.to_f64_vec();
    data[j] += delta;
    Tensor::from_f64(t.shape().to_vec(), data)
        .unwrap()
        .cast(t.dtype())
}

fn weight_tensor(program: &Program, name: &str) -> Tensor {
    match &program.weight(name).expect("a weight").init {
        WeightInit::Tensor(t) => (**t).clone(),
        _ => panic!("weights must be widened first"),
    }
}

fn set_weight(program: &mut Program, name: &str, t: Tensor) {
    let w = program.weights.iter_mut().find(|w| w.name == name).unwrap();
    w.init = WeightInit::Tensor(Arc::new(t));
}

/// Checks `grad(target, wrt=...)` against central finite differences of the
/// sum of `target`'s outputs, in f64. Float arguments are widened to f64.
/// Returns the gradients.
pub fn check_gradient(
    text: &str,
    base: &Path,
    name: &str,
    args: &[Tensor],
    wrt: &[WrtItem],
) -> Vec<Tensor> {
    let mut prog = program(text);
    weights_to_f64(&mut prog, base);
    let args: Vec<Tensor> = args
        .iter()
        .map(|t| {
            if t.dtype().is_float() {
                t.cast(DType::F64)
            } else {
                t.clone()
            }
        })
        .collect();
    let r = differentiate(&prog, &target(name), &grad_wrt(wrt)).expect("differentiates");
    let full = with_result(&prog, &r);
    let got: Vec<Tensor> = leaves(&run(&full, base, &r.entry, &args))
        .into_iter()
        .map(|t| t.expect("a gradient"))
        .collect();
    assert_eq!(got.len(), wrt.len(), "one gradient per `wrt` item");
    let h = 1e-6;
    for (k, w) in wrt.iter().enumerate() {
        let base_value = match w {
            WrtItem::Param(i) => args[*i].clone(),
            WrtItem::Weight(n) => weight_tensor(&prog, n),
        };
        assert_eq!(
            got[k].shape(),
            base_value.shape(),
            "gradient {k} has the input's shape"
        );
        let ad = got[k].to_f64_vec();
        for (j, &ad_j) in ad.iter().enumerate() {
            let eval = |delta: f64| {
                let mut p = prog.clone();
                let mut a = args.clone();
                let moved = with_element(&base_value, j, delta);
                match w {
                    WrtItem::Param(i) => a[*i] = moved,
                    WrtItem::Weight(n) => set_weight(&mut p, n, moved),
                }
                total(&run(&p, base, name, &a))
            };
            let fd = (eval(h) - eval(-h)) / (2.0 * h);
            let tol = 1e-5 * (1.0 + fd.abs());
            assert!(
                (ad_j - fd).abs() <= tol,
                "`{name}`: gradient {w:?} element {j}: autodiff {ad_j} vs finite differences {fd}\n{}",
                autodiff::print_result(&r)
            );
        }
    }
    got
}

/// A tensor from the oracle's JSON (`{"dtype", "shape", "data"}`).
pub fn json_tensor(v: &serde_json::Value) -> Tensor {
    let shape: Vec<usize> = v["shape"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_u64().unwrap() as usize)
        .collect();
    let data: Vec<f64> = v["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_f64().unwrap())
        .collect();
    Tensor::from_f64(shape, data).unwrap()
}

/// Compares a run's value with the oracle's expected JSON.
pub fn assert_matches_json(got: &exec::Value, expected: &serde_json::Value, what: &str) {
    match (got, expected) {
        (exec::Value::Tuple(items), serde_json::Value::Array(exp)) => {
            assert_eq!(items.len(), exp.len(), "{what}: tuple length");
            for (i, (g, e)) in items.iter().zip(exp).enumerate() {
                assert_matches_json(g, e, &format!("{what}[{i}]"));
            }
        }
        (exec::Value::Tensor(t), e) if e.get("shape").is_some() => {
            let want = json_tensor(e);
            let t = t.tensor();
            assert_eq!(t.shape(), want.shape(), "{what}: shape");
            for (j, (a, b)) in t.to_f64_vec().iter().zip(want.to_f64_vec()).enumerate() {
                assert!(
                    (a - b).abs() <= 1e-4 * (1.0 + b.abs()),
                    "{what}: element {j}: {a} vs expected {b}"
                );
            }
        }
        (exec::Value::Tensor(t), e) if e.get("value").is_some() => {
            let a = t.tensor().to_f64_vec()[0];
            let b = e["value"].as_f64().unwrap();
            assert!(
                (a - b).abs() <= 1e-4 * (1.0 + b.abs()),
                "{what}: {a} vs expected {b}"
            );
        }
        (g, e) => panic!("{what}: got {} but expected {e}", g.describe()),
    }
}

pub fn scalar_shape() -> Shape {
    Shape::scalar()
}
