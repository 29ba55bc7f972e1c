//! Every primitive's registry samples on the GPU backend against the CPU
//! kernels, in f64, f32 and f16 (floating inputs cast), with a tolerance per
//! dtype. Needs a CUDA driver, a device, NVRTC and cuBLAS; skipped with the
//! reason printed where any is missing (a failure with
//! `MIRDSL_REQUIRE_TOOLS=gpu`).

use exec::Backend;
use ops::{eager, KArg, KValue, KernelCall};
use tensor::{DType, Tensor};
use test_support::Tool;

fn gpu() -> Option<gpu::GpuBackend> {
    test_support::require(Tool::Gpu, gpu::GpuBackend::new())
}

/// Runs `sample` (inputs in `inputs`) on `backend` as the executor would.
fn run_on(
    backend: &dyn Backend,
    sample: &eager::Sample,
    inputs: &[KValue],
) -> Result<KValue, String> {
    let op = ops::lookup(sample.op).ok_or("unknown primitive")?;
    let given: Vec<(String, ops::AttrValue)> = sample
        .attrs
        .iter()
        .map(|(k, v)| ops::check_attr(op, k, v).map(|v| (k.to_string(), v)))
        .collect::<Result<_, _>>()?;
    let attrs = ops::resolve_attrs(op, &given);
    let abs: Vec<ops::AbsVal> = inputs.iter().map(eager::abstract_of).collect();
    (op.infer)(&ops::InferCall {
        op,
        inputs: &abs,
        attrs: &attrs,
    })
    .map_err(|e| e.message)?;
    let args: Vec<KArg> = inputs.iter().map(KValue::as_arg).collect();
    let weak = vec![false; inputs.len()];
    backend
        .run(
            op,
            &KernelCall {
                inputs: &args,
                weak: &weak,
                attrs: &attrs,
            },
        )
        .map_err(|e| e.message)
}

fn cast_floats(v: &KValue, d: DType) -> KValue {
    match v {
        KValue::Tensor(t) if t.dtype().is_float() => KValue::Tensor(t.cast(d)),
        KValue::Tensor(t) => KValue::Tensor(t.clone()),
        KValue::Tuple(items) => KValue::Tuple(items.iter().map(|i| cast_floats(i, d)).collect()),
    }
}

fn flatten(v: &KValue, out: &mut Vec<Tensor>) {
    match v {
        KValue::Tensor(t) => out.push(t.clone()),
        KValue::Tuple(items) => items.iter().for_each(|i| flatten(i, out)),
    }
}

/// `(relative, absolute)` tolerance for results of dtype `d`.
fn tolerance(d: DType) -> (f64, f64) {
    match d {
        DType::F64 => (1e-9, 1e-10),
        DType::F32 => (2e-5, 1e-6),
        DType::F16 => (2e-3, 1e-3),
        DType::BF16 => (1.6e-2, 1e-2),
        _ => (0.0, 0.0),
    }
}

fn compare(cpu: &KValue, gpu: &KValue) -> Result<(), String> {
    let (mut a, mut b) = (Vec::new(), Vec::new());
    flatten(cpu, &mut a);
    flatten(gpu, &mut b);
    if a.len() != b.len() {
        return Err(format!(
            "{} results on the CPU, {} on the GPU",
            a.len(),
            b.len()
        ));
    }
    for (i, (x, y)) in a.iter().zip(&b).enumerate() {
        if x.dtype() != y.dtype() || x.shape() != y.shape() {
            return Err(format!(
                "result {i}: CPU {}{:?}, GPU {}{:?}",
                x.dtype(),
                x.shape(),
                y.dtype(),
                y.shape()
            ));
        }
        let (rtol, atol) = tolerance(x.dtype());
        for (j, (p, q)) in x.to_f64_vec().iter().zip(y.to_f64_vec()).enumerate() {
            let same = (p.is_nan() && q.is_nan()) || p == &q;
            if !same && (p - q).abs() > atol + rtol * p.abs() {
                return Err(format!("result {i}[{j}]: CPU {p}, GPU {q}"));
            }
        }
    }
    Ok(())
}

#[test]
fn every_sample_matches_the_cpu() {
    let Some(g) = gpu() else {
        return;
    };
    let cpu = exec::CpuBackend;
    let mut failures = Vec::new();
    let mut checked = 0;
    for sample in ops::defs::samples() {
        for d in [DType::F64, DType::F32, DType::F16] {
            let inputs: Vec<KValue> = sample.inputs.iter().map(|v| cast_floats(v, d)).collect();
            let Ok(want) = run_on(&cpu, &sample, &inputs) else {
                continue;
            };
            match run_on(&g, &sample, &inputs) {
                Ok(got) => {
                    checked += 1;
                    if let Err(e) = compare(&want, &got) {
                        failures.push(format!("{} ({d}) {:?}: {e}", sample.op, sample.attrs));
                    }
                }
                Err(e) => failures.push(format!("{} ({d}): the GPU failed: {e}", sample.op)),
            }
        }
    }
    let stats = g.stats();
    let on_gpu = stats.counts().iter().filter(|c| c.1 > 0).count();
    eprintln!("{checked} sample calls checked; {on_gpu} primitives ran on the GPU");
    for line in stats.report() {
        eprintln!("{line}");
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// A chain of kernels keeps its intermediates on the device: only the
/// final result is copied back.
#[test]
fn intermediates_stay_on_the_device() {
    let Some(g) = gpu() else {
        return;
    };
    let x = Tensor::from_f32(vec![2, 3], vec![1.0, -2.0, 3.0, -4.0, 5.0, -6.0]).unwrap();
    let relu = ops::lookup("ReLU").unwrap();
    let exp = ops::lookup("Exp").unwrap();
    let attrs = ops::Attrs::default();
    let call = |t: &Tensor, op| {
        g.run(
            op,
            &KernelCall {
                inputs: &[KArg::Tensor(t)],
                weak: &[false],
                attrs: &attrs,
            },
        )
        .unwrap()
        .into_tensor()
        .unwrap()
    };
    let a = call(&x, relu);
    assert!(!a.is_on_host(), "ReLU's result was copied to the host");
    let b = call(&a, exp);
    assert!(!a.is_on_host() && !b.is_on_host());
    let want: Vec<f64> = [1.0f64, 0.0, 3.0, 0.0, 5.0, 0.0]
        .iter()
        .map(|v| v.exp() as f32 as f64)
        .collect();
    for (p, q) in b.to_f64_vec().iter().zip(want) {
        assert!((p - q).abs() <= 1e-5 * q.abs());
    }
}
