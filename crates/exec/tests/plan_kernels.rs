//! Compiled plans op by op: every sample call of the registry
//! (`ops::defs::samples`) run as a one-node graph by an executor with
//! compiled plans and by the interpreter, which calls the registry's kernel.
//! The results must agree (floats to a relative 1e-5, all else exactly), and
//! the plans must have run for most of them: a plan kernel that drifts from
//! its op's definition fails here, named by the op, not somewhere inside a
//! whole program.

use exec::{ExecOptions, Executor, Value};
use ir::{Body, GraphOrigin, PrimRef, Program};
use ops::KValue;
use tensor::{Buffer, DType};

/// The sample's value, its f64 tensors in `float` (the plans' own kernels
/// are f32's; samples are f64 for the finite-difference checks).
fn value(v: &KValue, float: DType) -> Value {
    match v {
        KValue::Tensor(t) if t.dtype() == DType::F64 => Value::tensor(t.cast(float)),
        KValue::Tensor(t) => Value::tensor(t.clone()),
        KValue::Tuple(items) => Value::tuple(items.iter().map(|i| value(i, float)).collect()),
    }
}

/// `main(a0, ...) = op(a0, ..., attrs)`.
fn one_op(sample: &ops::eager::Sample) -> Program {
    let mut body = Body::default();
    let g = body.add_graph("main", None, GraphOrigin::Named);
    let params: Vec<_> = (0..sample.inputs.len())
        .map(|i| body.add_param(g, format!("a{i}"), None))
        .collect();
    let prim = PrimRef {
        name: sample.op.to_string(),
        attrs: sample
            .attrs
            .iter()
            .map(|(n, v)| (n.to_string(), v.clone()))
            .collect(),
    };
    let out = body.add_prim_call(g, prim, &params, None);
    body.graph_mut(g).output = Some(out);
    Program {
        graphs: vec![("main".into(), std::sync::Arc::new(body))],
        weights: Vec::new(),
    }
}

fn agree(a: &Value, b: &Value, path: &str) -> Result<(), String> {
    match (a, b) {
        (Value::Tensor(x), Value::Tensor(y)) => {
            let (tx, ty) = (x.tensor(), y.tensor());
            if tx.dtype() != ty.dtype() || tx.shape() != ty.shape() {
                return Err(format!(
                    "{path}: plan {}{:?}, kernel {}{:?}",
                    tx.dtype(),
                    tx.shape(),
                    ty.dtype(),
                    ty.shape()
                ));
            }
            let exact = !matches!(tx.buffer(), Buffer::F32(_) | Buffer::F64(_));
            let (vx, vy) = (tx.to_f64_vec(), ty.to_f64_vec());
            let scale = vy.iter().fold(0f64, |m, v| m.max(v.abs())).max(1e-30);
            for (i, (p, q)) in vx.iter().zip(&vy).enumerate() {
                let same = p == q || (p.is_nan() && q.is_nan());
                if !same && (exact || (p - q).abs() > 1e-5 * q.abs() + 1e-6 * scale) {
                    return Err(format!("{path}[{i}]: plan {p}, kernel {q}"));
                }
            }
            Ok(())
        }
        (Value::Tuple(x), Value::Tuple(y)) if x.len() == y.len() => {
            for (i, (p, q)) in x.iter().zip(y.iter()).enumerate() {
                agree(p, q, &format!("{path}.{i}"))?;
            }
            Ok(())
        }
        _ => {
            if format!("{a:?}") == format!("{b:?}") {
                Ok(())
            } else {
                Err(format!("{path}: plan {a:?}, kernel {b:?}"))
            }
        }
    }
}

#[test]
fn every_sample_runs_the_same_in_plans_and_in_the_registry_kernel() {
    let samples = ops::defs::samples();
    let mut failures = Vec::new();
    let mut planned = std::collections::BTreeSet::new();
    let mut checked = 0;
    for (s, float) in samples
        .iter()
        .flat_map(|s| [(s, DType::F32), (s, DType::F64)])
    {
        let program = one_op(s);
        let args: Vec<Value> = s.inputs.iter().map(|v| value(v, float)).collect();
        let mut plans = Executor::new(&program, ExecOptions::default());
        plans.set_compile(true);
        let mut kernel = Executor::new(&program, ExecOptions::default());
        kernel.set_compile(false);
        let a = plans.call("main", args.clone());
        let b = kernel.call("main", args);
        match (a, b) {
            (Ok(a), Ok(b)) => {
                checked += 1;
                if !plans.plan_kernels().is_empty() {
                    planned.insert(s.op);
                }
                if let Err(e) = agree(&a, &b, &format!("{} ({float})", s.op)) {
                    failures.push(e);
                }
            }
            // A sample that is an error (a shape the op refuses) must be one
            // in both, with one message.
            (Err(a), Err(b)) if a.message == b.message => {}
            (a, b) => failures.push(format!(
                "{} ({float}): plan {:?}, kernel {:?}",
                s.op,
                a.map(|_| ()).map_err(|e| e.message),
                b.map(|_| ()).map_err(|e| e.message)
            )),
        }
    }
    println!(
        "{checked} sample calls (f32 and f64) of {} ops agree; {} ops ran the plans' own kernels: {planned:?}",
        samples
            .iter()
            .map(|s| s.op)
            .collect::<std::collections::BTreeSet<_>>()
            .len(),
        planned.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // The plans' own kernels ran for the ops they have kernels of: a plan
    // compiler that silently called the registry for them would pass the
    // comparison above.
    for op in ["MatMul", "Softmax", "Conv2D", "LayerNorm"] {
        assert!(
            planned.contains(op),
            "`{op}` did not run a kernel of the plans"
        );
    }
    assert!(checked > 600, "only {checked} sample calls ran");
}

/// Ops with a formula (`ops::formula`) run in the plans' fused loops, the
/// formula's generated `f32` kernel, on their samples' `f32` values, and give
/// the registry kernel's values bit for bit. (A test, giving a bool, fuses
/// only into a group that consumes it, `Select`'s condition: a bool leaves a
/// group as a registry result; alone it runs the registry.)
#[test]
fn formula_ops_run_fused_with_the_registry_kernels_bits() {
    let mut fused = std::collections::BTreeSet::new();
    let mut failures = Vec::new();
    for s in ops::defs::samples() {
        let Some(f) = ops::lookup(s.op).and_then(|op| op.traits.formula) else {
            continue;
        };
        let floats = s
            .inputs
            .iter()
            .all(|v| matches!(v, KValue::Tensor(t) if t.dtype().is_float()));
        if f.float.is_none() || !floats {
            continue;
        }
        let program = one_op(&s);
        let args: Vec<Value> = s.inputs.iter().map(|v| value(v, DType::F32)).collect();
        let mut plans = Executor::new(&program, ExecOptions::default());
        plans.set_compile(true);
        let mut kernel = Executor::new(&program, ExecOptions::default());
        kernel.set_compile(false);
        let (a, b) = (plans.call("main", args.clone()), kernel.call("main", args));
        let (Ok(Value::Tensor(a)), Ok(Value::Tensor(b))) = (a, b) else {
            failures.push(format!("{}: no tensor result", s.op));
            continue;
        };
        if plans.plan_kernels().iter().any(|k| k.starts_with("fused")) {
            fused.insert(s.op);
        } else if !f.test {
            failures.push(format!("{}: not fused ({:?})", s.op, plans.plan_kernels()));
            continue;
        }
        let (ta, tb) = (a.tensor(), b.tensor());
        let bits = |t: &tensor::Tensor| match t.buffer() {
            Buffer::F32(v) => v.iter().map(|x| x.to_bits() as u64).collect::<Vec<_>>(),
            _ => t.to_f64_vec().iter().map(|x| x.to_bits()).collect(),
        };
        if ta.dtype() != tb.dtype() || bits(ta) != bits(tb) {
            failures.push(format!(
                "{}: plan {:?}, kernel {:?}",
                s.op,
                ta.to_f64_vec(),
                tb.to_f64_vec()
            ));
        }
    }
    println!("{} ops ran fused by their formulas: {fused:?}", fused.len());
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
