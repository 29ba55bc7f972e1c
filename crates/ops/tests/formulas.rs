//! Every op with a formula ([`ops::formula`]): its generated Rust kernels
//! (the slice kernels the compiled plans' fused loops run) give the
//! registry kernel's values bit for bit on the registry's samples, in `f32`
//! and in `f64`; integer-only formulas on the samples' integers.

use ops::eager::Sample;
use ops::formula::Formula;
use ops::kernel::{broadcast_shape, broadcast_strides};
use ops::{AttrValue, KValue};
use tensor::{Buffer, DType, Tensor};

/// `t`'s elements broadcast to `out`, in row-major order.
fn broadcast(t: &Tensor, out: &[usize]) -> Vec<f64> {
    let v = t.to_f64_vec();
    let strides = broadcast_strides(t.shape(), out);
    let n: usize = out.iter().product();
    (0..n)
        .map(|mut i| {
            let mut off = 0;
            for d in (0..out.len()).rev() {
                off += (i % out[d]) * strides[d];
                i /= out[d];
            }
            v[off]
        })
        .collect()
}

/// The sample's attribute values the formula reads, as the registry's
/// kernels read them (MindSpore holds float attributes as `f32`).
fn params(s: &Sample, f: &Formula) -> Vec<f64> {
    let op = ops::lookup(s.op).unwrap();
    let given: Vec<(String, AttrValue)> = s
        .attrs
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect();
    let attrs = ops::resolve_attrs(op, &given);
    f.params
        .iter()
        .map(|p| {
            let v = attrs.get(p).and_then(|v| v.as_f64());
            v.unwrap_or_else(|| panic!("{}: no attribute {p}", s.op)) as f32 as f64
        })
        .collect()
}

/// The formula's values on `inputs` (already in the compute dtype `dtype`)
/// broadcast to `out`, as a tensor of the registry's result dtype `result`.
fn by_formula(
    f: &Formula,
    inputs: &[Tensor],
    out: &[usize],
    (dtype, result): (DType, DType),
    p: &[f64],
) -> Tensor {
    let ins: Vec<Vec<f64>> = inputs.iter().map(|t| broadcast(t, out)).collect();
    let (a, b) = (&ins[0], ins.get(1).unwrap_or(&ins[0]));
    let n = a.len();
    let values: Vec<f64> = match dtype {
        DType::F32 => {
            let (a, b): (Vec<f32>, Vec<f32>) = (
                a.iter().map(|&v| v as f32).collect(),
                b.iter().map(|&v| v as f32).collect(),
            );
            let mut r = vec![0f32; n];
            (f.kernels().f32)(&a, &b, p, &mut r);
            r.into_iter().map(f64::from).collect()
        }
        DType::F64 => {
            let mut r = vec![0f64; n];
            (f.kernels().f64)(a, b, p, &mut r);
            r
        }
        _ => a
            .iter()
            .zip(b)
            .map(|(&x, &y)| f.int(x as i64, y as i64) as f64)
            .collect(),
    };
    if f.test {
        let bools = values.iter().map(|&v| v != 0.0).collect();
        return Tensor::from_bool(out.to_vec(), bools).unwrap();
    }
    match result {
        DType::F32 => Tensor::new(
            DType::F32,
            out.to_vec(),
            Buffer::F32(values.iter().map(|&v| v as f32).collect()),
        )
        .unwrap(),
        DType::F64 => Tensor::from_f64(out.to_vec(), values).unwrap(),
        d => Tensor::from_f64(out.to_vec(), values).unwrap().cast(d),
    }
}

fn same_bits(x: &Tensor, y: &Tensor) -> bool {
    x.dtype() == y.dtype()
        && x.shape() == y.shape()
        && match (x.buffer(), y.buffer()) {
            (Buffer::F32(p), Buffer::F32(q)) => p
                .iter()
                .zip(q)
                .all(|(a, b)| a.to_bits() == b.to_bits() || a.is_nan() && b.is_nan()),
            (Buffer::F64(p), Buffer::F64(q)) => p
                .iter()
                .zip(q)
                .all(|(a, b)| a.to_bits() == b.to_bits() || a.is_nan() && b.is_nan()),
            (Buffer::I64(p), Buffer::I64(q)) => p == q,
            (Buffer::Bool(p), Buffer::Bool(q)) => p == q,
            _ => false,
        }
}

#[test]
fn generated_kernels_agree_with_the_registry_on_its_samples() {
    let mut checked = std::collections::BTreeMap::<&str, usize>::new();
    let mut failures = Vec::new();
    for s in ops::defs::samples() {
        let Some(f) = ops::lookup(s.op).and_then(|op| op.traits.formula) else {
            continue;
        };
        let tensors: Option<Vec<&Tensor>> = s
            .inputs
            .iter()
            .take(f.arity)
            .map(|v| match v {
                KValue::Tensor(t) => Some(t),
                _ => None,
            })
            .collect();
        let Some(tensors) = tensors else { continue };
        // Float inputs are checked in f32 and f64; integer and bool inputs
        // (`OnesLike` of an `i32`, `LogicalAnd` of bools) and the mixed
        // operands of a test (`LogicalXor` of an f32 and an i32) as they
        // are, the formula computing on them as f64 values.
        let floats = tensors.iter().all(|t| t.dtype().is_float());
        let others = tensors.iter().all(|t| !t.dtype().is_float());
        let dtypes: &[DType] = if f.float.is_some() {
            if floats {
                &[DType::F32, DType::F64]
            } else if others || f.test {
                &[DType::F64]
            } else {
                continue;
            }
        } else {
            if !tensors.iter().all(|t| t.dtype().is_int()) {
                continue;
            }
            &[DType::I64]
        };
        for &d in dtypes {
            let inputs: Vec<KValue> = s
                .inputs
                .iter()
                .map(|v| match v {
                    KValue::Tensor(t) if floats || f.float.is_none() => KValue::Tensor(t.cast(d)),
                    other => other.clone(),
                })
                .collect();
            let Ok(KValue::Tensor(want)) = ops::eager::call(s.op, &inputs, s.attrs.clone()) else {
                failures.push(format!("{} ({d}): the registry refused its sample", s.op));
                continue;
            };
            let cast: Vec<Tensor> = tensors.iter().map(|t| t.cast(d)).collect();
            let out = match &cast[..] {
                [a] => a.shape().to_vec(),
                [a, b] => broadcast_shape(a.shape(), b.shape()).unwrap(),
                _ => unreachable!("arity 1 or 2"),
            };
            let got = by_formula(f, &cast, &out, (d, want.dtype()), &params(&s, f));
            if same_bits(&got, &want) {
                *checked.entry(s.op).or_default() += 1;
            } else {
                failures.push(format!(
                    "{} ({d}): formula `{}` gives {:?}, the registry {:?}",
                    s.op,
                    f.source,
                    got.to_f64_vec(),
                    want.to_f64_vec()
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // Every op with a formula was checked on a sample of its own.
    let unchecked: Vec<&str> = ops::registry()
        .values()
        .filter(|op| op.traits.formula.is_some() && !checked.contains_key(op.name))
        .map(|op| op.name)
        .collect();
    assert!(
        unchecked.is_empty(),
        "ops with a formula and no sample to check it on: {unchecked:?}"
    );
    println!(
        "{} ops' formulas agree with their registry kernels",
        checked.len()
    );
}

/// Each formula's text names only `a`, `b`, `p0`, `p1` and the functions
/// the CUDA prelude and CUDA's math library define (so the generated CUDA is
/// well formed wherever NVRTC is absent).
#[test]
fn formulas_name_only_known_functions() {
    const KNOWN: &[&str] = &[
        "a",
        "b",
        "p0",
        "p1",
        "exp",
        "log",
        "sqrt",
        "tanh",
        "sin",
        "cos",
        "erf",
        "fabs",
        "expm1",
        "log1p",
        "exp2",
        "log2",
        "log10",
        "tan",
        "sinh",
        "cosh",
        "asin",
        "acos",
        "atan",
        "asinh",
        "acosh",
        "atanh",
        "erfc",
        "erfinv",
        "floor",
        "ceil",
        "trunc",
        "rint",
        "pow",
        "atan2",
        "hypot",
        "isnan",
        "isinf",
        "isfinite",
        "select",
        "gt",
        "ge",
        "lt",
        "le",
        "eq",
        "ne",
        "both",
        "either",
        "bnot",
        "sigm",
        "softplus_",
        "gelu_slope_",
        "silu_slope_",
    ];
    let prelude = ops::formula::cuda_prelude();
    for op in ops::registry().values() {
        let Some(f) = op.traits.formula else { continue };
        for text in [f.source].into_iter().chain(f.int_source) {
            let words = text
                .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .filter(|w| w.chars().next().is_some_and(|c| c.is_ascii_alphabetic()));
            for w in words {
                assert!(KNOWN.contains(&w), "{}: `{w}` in `{text}`", op.name);
            }
        }
    }
    for h in [
        "sigm",
        "softplus_",
        "gelu_slope_",
        "silu_slope_",
        "select",
        "gt",
        "bnot",
    ] {
        assert!(
            prelude.contains(&format!(" {h}(")),
            "{h} is not in the prelude"
        );
    }
}
