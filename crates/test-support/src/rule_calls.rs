//! The calls the registry's gradient rules make, run eagerly on every
//! primitive's samples (`ops::defs::samples`): what the tests of the
//! helpers' expansions (`crates/exec/tests/expansions.rs`) and export
//! lowerings (`crates/interop/tests/export_lowerings.rs`) check against the
//! helpers' kernels.

use std::collections::BTreeMap;

use ::ops::eager::{self, EagerGrad};
use ::ops::{AttrValue, GNode, GradBuilder, KValue};
use tensor::DType;

/// One call of a primitive a gradient rule made: the sample's primitive, the
/// call's attributes, inputs and the kernel's result.
pub struct RuleCall {
    pub from: &'static str,
    pub attrs: Vec<(String, AttrValue)>,
    pub inputs: Vec<KValue>,
    pub out: KValue,
}

/// A sensitivity shaped like `out`: deterministic values in [-1, 1) (zeros
/// for integers).
pub fn sensitivity(out: &KValue, seed: u64) -> KValue {
    match out {
        KValue::Tensor(t) if t.dtype().is_float() => {
            let KValue::Tensor(r) = eager::random_f64(t.shape(), seed, -1.0, 1.0) else {
                unreachable!()
            };
            KValue::Tensor(r.cast(t.dtype()))
        }
        KValue::Tensor(t) => KValue::Tensor(tensor::Tensor::zeros(t.dtype(), t.shape().to_vec())),
        KValue::Tuple(items) => KValue::Tuple(
            items
                .iter()
                .enumerate()
                .map(|(i, v)| sensitivity(v, seed + i as u64 + 1))
                .collect(),
        ),
    }
}

/// Records the calls of the primitives `wanted` picks.
struct Recorder<'w> {
    inner: EagerGrad,
    from: &'static str,
    wanted: &'w dyn Fn(&str) -> bool,
    calls: BTreeMap<String, Vec<RuleCall>>,
}

impl GradBuilder for Recorder<'_> {
    fn prim(
        &mut self,
        name: &str,
        inputs: &[GNode],
        attrs: Vec<(&'static str, AttrValue)>,
    ) -> GNode {
        let values: Vec<KValue> = inputs.iter().map(|&i| self.inner.get(i).clone()).collect();
        let n = self.inner.prim(name, inputs, attrs.clone());
        if (self.wanted)(name) {
            self.calls
                .entry(name.to_string())
                .or_default()
                .push(RuleCall {
                    from: self.from,
                    attrs: attrs
                        .iter()
                        .map(|(k, v)| (k.to_string(), v.clone()))
                        .collect(),
                    inputs: values,
                    out: self.inner.get(n).clone(),
                });
        }
        n
    }
    fn scalar(&mut self, value: f64) -> GNode {
        self.inner.scalar(value)
    }
    fn int(&mut self, value: i64) -> GNode {
        self.inner.int(value)
    }
    fn tuple_get(&mut self, tuple: GNode, index: usize) -> GNode {
        self.inner.tuple_get(tuple, index)
    }
    fn make_tuple(&mut self, items: &[GNode]) -> GNode {
        self.inner.make_tuple(items)
    }
}

/// Every call of a primitive `wanted` picks that the gradient rules make on
/// the samples (in f64), by primitive.
pub fn rule_calls(wanted: &dyn Fn(&str) -> bool) -> BTreeMap<String, Vec<RuleCall>> {
    let mut r = Recorder {
        inner: EagerGrad::new(DType::F64),
        from: "",
        wanted,
        calls: BTreeMap::new(),
    };
    for sample in ::ops::defs::samples() {
        let op = ::ops::lookup(sample.op).expect("a sample of a registry primitive");
        let Some(rule) = op.grad else { continue };
        let Ok(out) = eager::call(sample.op, &sample.inputs, sample.attrs.clone()) else {
            continue;
        };
        let given: Vec<(String, AttrValue)> = sample
            .attrs
            .iter()
            .map(|(k, v)| {
                (
                    k.to_string(),
                    ::ops::check_attr(op, k, v).expect("an attribute"),
                )
            })
            .collect();
        let attrs = ::ops::resolve_attrs(op, &given);
        r.inner = EagerGrad::new(DType::F64);
        r.from = sample.op;
        let ins: Vec<GNode> = sample
            .inputs
            .iter()
            .map(|v| r.inner.push(v.clone()))
            .collect();
        let dout = sensitivity(&out, 11);
        let o = r.inner.push(out);
        let d = r.inner.push(dout);
        let values: Vec<::ops::AbsVal> = sample.inputs.iter().map(eager::abstract_of).collect();
        rule(
            &mut r,
            &::ops::GradCall {
                inputs: &ins,
                out: o,
                dout: d,
                attrs: &attrs,
                input_values: &values,
            },
        );
    }
    r.calls
}

/// Compares what a program computed for a call with the kernel's result, to
/// 1e-9: the first difference, by its path (`out.1[3]`).
pub fn compare(got: &KValue, want: &KValue, path: &str) -> Result<(), String> {
    match (got, want) {
        (KValue::Tuple(gs), KValue::Tuple(ws)) if gs.len() == ws.len() => {
            for (i, (g, w)) in gs.iter().zip(ws).enumerate() {
                compare(g, w, &format!("{path}.{i}"))?;
            }
            Ok(())
        }
        (KValue::Tensor(g), KValue::Tensor(w)) => {
            if g.shape() != w.shape() {
                return Err(format!(
                    "{path}: shape {:?}, the kernel's {:?}",
                    g.shape(),
                    w.shape()
                ));
            }
            for (k, (a, b)) in g.to_f64_vec().iter().zip(w.to_f64_vec()).enumerate() {
                if (a - b).abs() > 1e-9 + 1e-9 * b.abs() {
                    return Err(format!("{path}[{k}]: {a}, the kernel's {b}"));
                }
            }
            Ok(())
        }
        (g, w) => Err(format!("{path}: {g:?} where the kernel gives {w:?}")),
    }
}
