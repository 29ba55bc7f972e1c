//! Every gradient rule in the registry against central finite differences, in
//! f64, on the samples each primitive family lists; and every kernel against
//! its shape rule.

use ops::eager::{self, Sample};
use ops::KValue;
use tensor::{DType, Tensor};
use test_support::rule_calls::sensitivity;

fn flatten(v: &KValue, out: &mut Vec<Tensor>) {
    match v {
        KValue::Tensor(t) => out.push(t.clone()),
        KValue::Tuple(items) => items.iter().for_each(|i| flatten(i, out)),
    }
}

/// `sum(out · dout)` over every float tensor of the output.
fn objective(sample: &Sample, inputs: &[KValue], dout: &KValue) -> f64 {
    let out = eager::call(sample.op, inputs, sample.attrs.clone()).expect("forward");
    let (mut outs, mut douts) = (Vec::new(), Vec::new());
    flatten(&out, &mut outs);
    flatten(dout, &mut douts);
    outs.iter()
        .zip(&douts)
        .filter(|(o, _)| o.dtype().is_float())
        .map(|(o, d)| {
            o.to_f64_vec()
                .iter()
                .zip(d.to_f64_vec())
                .map(|(a, b)| a * b)
                .sum::<f64>()
        })
        .sum()
}

/// Where MindSpore's bprop deliberately stops short of the full derivative:
/// `(primitive, inputs it gives no gradient, outputs whose sensitivity it
/// ignores)`. The check skips those inputs and zeroes those sensitivities.
const MINDSPORE_BPROP_CONVENTIONS: &[(&str, &[usize], &[usize])] = &[
    // bprop: `(out[1] * dout[0][:, None], zeros_like(labels))`.
    ("SoftmaxCrossEntropyWithLogits", &[1], &[1]),
    // LayerNormGrad(x, dout[0], variance, mean, gamma): the statistics'
    // sensitivities are not propagated.
    ("LayerNorm", &[], &[1, 2]),
    // BatchNormGrad from dout[0] only; `mean` and `variance` get zeros.
    ("BatchNorm", &[3, 4], &[1, 2, 3, 4]),
    // PadV3's `constant_value` gets `OutZeros`.
    ("PadV3", &[1], &[]),
];

fn conventions(op: &str) -> (&'static [usize], &'static [usize]) {
    MINDSPORE_BPROP_CONVENTIONS
        .iter()
        .find(|(name, _, _)| *name == op)
        .map_or((&[], &[]), |(_, skip, ignore)| (*skip, *ignore))
}

fn check(sample: &Sample) -> Result<(), String> {
    let out =
        eager::call(sample.op, &sample.inputs, sample.attrs.clone()).map_err(|e| e.message)?;
    let (skipped, ignored) = conventions(sample.op);
    let dout = match sensitivity(&out, 7) {
        KValue::Tuple(items) => KValue::Tuple(
            items
                .into_iter()
                .enumerate()
                .map(|(k, v)| match v {
                    KValue::Tensor(t) if ignored.contains(&k) => {
                        KValue::Tensor(Tensor::zeros(t.dtype(), t.shape().to_vec()))
                    }
                    other => other,
                })
                .collect(),
        ),
        single => single,
    };
    let grads = eager::gradient(sample.op, &sample.inputs, sample.attrs.clone(), &dout)
        .map_err(|e| e.message)?;
    if grads.len() != sample.inputs.len() {
        return Err(format!(
            "{} gradients for {} inputs",
            grads.len(),
            sample.inputs.len()
        ));
    }
    for (i, (input, grad)) in sample.inputs.iter().zip(&grads).enumerate() {
        if skipped.contains(&i) {
            continue;
        }
        match input {
            KValue::Tensor(x) => check_leaf(sample, &dout, i, None, x, grad.as_ref())?,
            // A tuple input (Concat's) gets one gradient: a tuple with one
            // gradient per element, each checked like a tensor input's.
            KValue::Tuple(items) => {
                let parts: Vec<Option<&KValue>> = match grad {
                    None => vec![None; items.len()],
                    Some(KValue::Tuple(gs)) if gs.len() == items.len() => {
                        gs.iter().map(Some).collect()
                    }
                    Some(_) => {
                        return Err(format!(
                            "gradient {i} should be a tuple of {} gradients",
                            items.len()
                        ))
                    }
                };
                for (k, (item, g)) in items.iter().zip(parts).enumerate() {
                    if let KValue::Tensor(x) = item {
                        check_leaf(sample, &dout, i, Some(k), x, g)?;
                    }
                }
            }
        }
    }
    Ok(())
}

/// Checks the gradient of input `i` (of element `k` of it, for a tuple
/// input), whose value is `x`, against central finite differences.
fn check_leaf(
    sample: &Sample,
    dout: &KValue,
    i: usize,
    k: Option<usize>,
    x: &Tensor,
    grad: Option<&KValue>,
) -> Result<(), String> {
    let name = match k {
        Some(k) => format!("input{i}.{k}"),
        None => format!("input{i}"),
    };
    if !x.dtype().is_float() {
        if let Some(KValue::Tensor(g)) = grad {
            if g.to_f64_vec().iter().any(|&v| v != 0.0) {
                return Err(format!(
                    "{name} is {} but got a non-zero gradient",
                    x.dtype()
                ));
            }
        }
        return Ok(());
    }
    let analytic = match grad {
        Some(KValue::Tensor(g)) => {
            if g.shape() != x.shape() {
                return Err(format!(
                    "gradient of {name} has shape {:?}, input has {:?}",
                    g.shape(),
                    x.shape()
                ));
            }
            g.to_f64_vec()
        }
        Some(KValue::Tuple(_)) => return Err(format!("gradient of {name} is a tuple")),
        None => vec![0.0; x.numel()],
    };
    let with = |data: Vec<f64>| {
        let t = KValue::Tensor(
            Tensor::from_f64(x.shape().to_vec(), data)
                .unwrap()
                .cast(x.dtype()),
        );
        let mut inputs = sample.inputs.clone();
        match (k, &mut inputs[i]) {
            (Some(k), KValue::Tuple(items)) => items[k] = t,
            (_, slot) => *slot = t,
        }
        inputs
    };
    let base = x.to_f64_vec();
    let h = 1e-6;
    for (j, &a) in analytic.iter().enumerate() {
        let mut plus = base.clone();
        plus[j] += h;
        let mut minus = base.clone();
        minus[j] -= h;
        let fp = objective(sample, &with(plus), dout);
        let fm = objective(sample, &with(minus), dout);
        let numeric = (fp - fm) / (2.0 * h);
        if (numeric - a).abs() > 1e-5 + 1e-4 * numeric.abs() {
            return Err(format!(
                "d/d {name}[{j}]: rule gives {a}, finite differences {numeric}"
            ));
        }
    }
    Ok(())
}

#[test]
fn every_gradient_rule_matches_finite_differences() {
    let samples = ops::defs::samples();
    let mut failures = Vec::new();
    for sample in &samples {
        if ops::lookup(sample.op).and_then(|o| o.grad).is_none() {
            continue;
        }
        if let Err(e) = check(sample) {
            failures.push(format!("{} {:?}: {e}", sample.op, sample.attrs));
        }
    }
    assert!(
        failures.is_empty(),
        "gradient mismatches:\n{}",
        failures.join("\n")
    );
}

#[test]
fn every_differentiable_primitive_has_a_sample() {
    let samples = ops::defs::samples();
    let missing: Vec<&str> = ops::registry()
        .values()
        .filter(|op| op.grad.is_some())
        .filter(|op| !samples.iter().any(|s| s.op == op.name))
        .map(|op| op.name)
        .collect();
    assert!(missing.is_empty(), "no gradient sample for: {missing:?}");
}

/// A predicted value as a kernel's result describes it: kernels return
/// scalars (`Shape`'s elements) as rank-0 tensors.
fn concrete(v: ops::AbsVal) -> ops::AbsVal {
    match v {
        ops::AbsVal::Scalar { dtype, .. } => ops::AbsVal::tensor(dtype, &[]),
        ops::AbsVal::Tuple(items) => ops::AbsVal::Tuple(items.into_iter().map(concrete).collect()),
        other => other,
    }
}

/// A prediction with its unknown sizes (`Range`'s length, which depends on
/// values) taken from the actual result.
fn fill_unknown(p: ops::AbsVal, actual: &ops::AbsVal) -> ops::AbsVal {
    use ir::{Dim, Shape};
    match (p, actual) {
        (
            ops::AbsVal::Tensor {
                dtype,
                shape: Shape::Ranked(dims),
            },
            ops::AbsVal::Tensor {
                shape: Shape::Ranked(real),
                ..
            },
        ) if dims.len() == real.len() => ops::AbsVal::Tensor {
            dtype,
            shape: Shape::Ranked(
                dims.into_iter()
                    .zip(real)
                    .map(|(d, r)| if d == Dim::Unknown { r.clone() } else { d })
                    .collect(),
            ),
        },
        (ops::AbsVal::Tuple(items), ops::AbsVal::Tuple(real)) if items.len() == real.len() => {
            ops::AbsVal::Tuple(
                items
                    .into_iter()
                    .zip(real)
                    .map(|(p, r)| fill_unknown(p, r))
                    .collect(),
            )
        }
        (p, _) => p,
    }
}

/// The kernel's result agrees with the shape rule's prediction on every sample.
#[test]
fn kernels_agree_with_shape_rules() {
    for sample in ops::defs::samples() {
        let op = ops::lookup(sample.op).unwrap();
        let inputs: Vec<ops::AbsVal> = sample.inputs.iter().map(eager::abstract_of).collect();
        let given: Vec<(String, ops::AttrValue)> = sample
            .attrs
            .iter()
            .map(|(k, v)| (k.to_string(), ops::check_attr(op, k, v).unwrap()))
            .collect();
        let attrs = ops::resolve_attrs(op, &given);
        let predicted = concrete(
            (op.infer)(&ops::InferCall {
                op,
                inputs: &inputs,
                attrs: &attrs,
            })
            .unwrap(),
        );
        let actual = eager::abstract_of(
            &eager::call(sample.op, &sample.inputs, sample.attrs.clone()).unwrap(),
        );
        let predicted = fill_unknown(predicted, &actual);
        assert_eq!(
            predicted, actual,
            "{}: shape rule and kernel disagree",
            sample.op
        );
    }
}

#[test]
fn f32_and_f64_kernels_agree() {
    for sample in ops::defs::samples() {
        let to_f32 = |v: &KValue| match v {
            KValue::Tensor(t) if t.dtype() == DType::F64 => KValue::Tensor(t.cast(DType::F32)),
            other => other.clone(),
        };
        let inputs32: Vec<KValue> = sample.inputs.iter().map(to_f32).collect();
        let (Ok(a), Ok(b)) = (
            eager::call(sample.op, &sample.inputs, sample.attrs.clone()),
            eager::call(sample.op, &inputs32, sample.attrs.clone()),
        ) else {
            continue;
        };
        let (mut xs, mut ys) = (Vec::new(), Vec::new());
        flatten(&a, &mut xs);
        flatten(&b, &mut ys);
        for (x, y) in xs.iter().zip(&ys) {
            for (p, q) in x.to_f64_vec().iter().zip(y.to_f64_vec()) {
                assert!(
                    (p - q).abs() <= 1e-4 + 1e-4 * p.abs(),
                    "{}: f64 {p} vs f32 {q}",
                    sample.op
                );
            }
        }
    }
}

/// Records the primitives a gradient rule emits (evaluating them eagerly).
struct Recorder {
    inner: eager::EagerGrad,
    emitted: Vec<(String, KValue)>,
}

impl ops::GradBuilder for Recorder {
    fn prim(
        &mut self,
        name: &str,
        inputs: &[ops::GNode],
        attrs: Vec<(&'static str, ops::AttrValue)>,
    ) -> ops::GNode {
        let n = self.inner.prim(name, inputs, attrs);
        self.emitted
            .push((name.to_string(), self.inner.get(n).clone()));
        n
    }
    fn scalar(&mut self, value: f64) -> ops::GNode {
        self.inner.scalar(value)
    }
    fn int(&mut self, value: i64) -> ops::GNode {
        self.inner.int(value)
    }
    fn tuple_get(&mut self, tuple: ops::GNode, index: usize) -> ops::GNode {
        self.inner.tuple_get(tuple, index)
    }
    fn make_tuple(&mut self, items: &[ops::GNode]) -> ops::GNode {
        self.inner.make_tuple(items)
    }
}

/// Primitives whose derivative is zero wherever it exists: a gradient rule
/// may use them on float values without a gradient rule of their own.
const PIECEWISE_CONSTANT: &[&str] = &[
    "ZerosLike",
    "OnesLike",
    "Sign",
    "Floor",
    "Ceil",
    "Round",
    "FloorDiv",
    "TruncateDiv",
    "ScalarFloorDiv",
];

fn has_float(v: &KValue) -> bool {
    match v {
        KValue::Tensor(t) => t.dtype().is_float(),
        KValue::Tuple(items) => items.iter().any(has_float),
    }
}

/// Helpers a first-order rule emits that have neither a gradient rule of
/// their own nor an expansion (`crates/ops/composite/gradient-helpers.mir`)
/// yet, so second order through their primitives is refused.
const WITHOUT_RULE_YET: &[&str] = &["LSTMGrad"];

/// Higher order: every primitive a gradient rule emits on a float value has a
/// gradient rule itself, or an expansion into primitives that have (the
/// autodiff inlines it where it differentiates the helper: crates/exec's
/// `expansions` and `second_order` tests check those), so a gradient can be
/// differentiated again (a primitive without either would silently
/// contribute zero).
#[test]
fn gradient_rules_emit_only_differentiable_primitives() {
    let mut missing: std::collections::BTreeMap<String, std::collections::BTreeSet<&str>> =
        Default::default();
    for sample in ops::defs::samples() {
        let op = ops::lookup(sample.op).unwrap();
        let Some(rule) = op.grad else { continue };
        let Ok(out) = eager::call(sample.op, &sample.inputs, sample.attrs.clone()) else {
            continue;
        };
        let dout = sensitivity(&out, 3);
        let given: Vec<(String, ops::AttrValue)> = sample
            .attrs
            .iter()
            .map(|(k, v)| (k.to_string(), ops::check_attr(op, k, v).unwrap()))
            .collect();
        let attrs = ops::resolve_attrs(op, &given);
        let mut b = Recorder {
            inner: eager::EagerGrad::new(DType::F64),
            emitted: Vec::new(),
        };
        let ins: Vec<ops::GNode> = sample
            .inputs
            .iter()
            .map(|v| b.inner.push(v.clone()))
            .collect();
        let o = b.inner.push(out);
        let d = b.inner.push(dout);
        let values: Vec<ops::AbsVal> = sample.inputs.iter().map(eager::abstract_of).collect();
        rule(
            &mut b,
            &ops::GradCall {
                inputs: &ins,
                out: o,
                dout: d,
                attrs: &attrs,
                input_values: &values,
            },
        );
        for (name, value) in &b.emitted {
            let emitted = ops::lookup(name).unwrap();
            if emitted.grad.is_none()
                && ops::composite::expansion(name).is_none()
                && has_float(value)
                && !PIECEWISE_CONSTANT.contains(&emitted.name)
            {
                missing.entry(name.clone()).or_default().insert(sample.op);
            }
        }
    }
    // Not yet differentiable twice: each must leave this list when it gets a
    // rule or an expansion (a gradient of a gradient through it is refused,
    // "has no gradient rule", never a wrong number).
    for helper in WITHOUT_RULE_YET {
        assert!(
            missing.remove(*helper).is_some(),
            "`{helper}` has a gradient rule or an expansion now (or is no longer emitted): take it off WITHOUT_RULE_YET"
        );
    }
    assert!(
        missing.is_empty(),
        "primitives gradient rules emit without a gradient rule of their own:\n{}",
        missing
            .iter()
            .map(|(k, v)| format!("{k} (emitted by {v:?})"))
            .collect::<Vec<_>>()
            .join("\n")
    );
}
