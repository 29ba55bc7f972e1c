//! Eager evaluation of primitives, and a [`GradBuilder`] that runs gradient
//! rules immediately. Used to check every gradient rule against finite
//! differences without the IR, and by small tools.

use ir::{AbsVal, AttrValue};
use tensor::{DType, Tensor};

use crate::{
    check_attr, lookup, resolve_attrs, GNode, GradBuilder, GradCall, InferCall, KArg, KValue,
    KernelCall, OpError,
};

/// Runs primitive `name` on concrete values (shape rule first, then kernel).
pub fn call(
    name: &str,
    inputs: &[KValue],
    attrs: Vec<(&'static str, AttrValue)>,
) -> Result<KValue, OpError> {
    let op = lookup(name).ok_or_else(|| OpError::call(format!("unknown primitive {name}")))?;
    let given: Vec<(String, AttrValue)> = attrs
        .into_iter()
        .map(|(k, v)| {
            check_attr(op, k, &v)
                .map(|v| (k.to_string(), v))
                .map_err(OpError::call)
        })
        .collect::<Result<_, _>>()?;
    let attrs = resolve_attrs(op, &given);
    let abstract_inputs: Vec<AbsVal> = inputs.iter().map(abstract_of).collect();
    (op.infer)(&InferCall {
        op,
        inputs: &abstract_inputs,
        attrs: &attrs,
    })?;
    let kernel = op
        .kernel
        .ok_or_else(|| OpError::call(format!("{name} has no kernel")))?;
    let args: Vec<KArg> = inputs.iter().map(KValue::as_arg).collect();
    let weak = vec![false; inputs.len()];
    kernel(&KernelCall {
        inputs: &args,
        weak: &weak,
        attrs: &attrs,
    })
}

/// The abstract value of a concrete one (shapes fully known, never weak).
pub fn abstract_of(v: &KValue) -> AbsVal {
    match v {
        KValue::Tensor(t) => AbsVal::tensor(
            t.dtype(),
            &t.shape().iter().map(|&d| d as i64).collect::<Vec<_>>(),
        ),
        KValue::Tuple(items) => AbsVal::Tuple(items.iter().map(abstract_of).collect()),
    }
}

/// A gradient builder that evaluates as it goes. Scalars it makes are rank-0
/// tensors of `float_dtype` (so an f64 check stays in f64).
pub struct EagerGrad {
    pub values: Vec<KValue>,
    pub float_dtype: DType,
}

impl EagerGrad {
    pub fn new(float_dtype: DType) -> EagerGrad {
        EagerGrad {
            values: Vec::new(),
            float_dtype,
        }
    }

    pub fn push(&mut self, v: KValue) -> GNode {
        self.values.push(v);
        GNode(self.values.len() as u32 - 1)
    }

    pub fn get(&self, n: GNode) -> &KValue {
        &self.values[n.0 as usize]
    }
}

impl GradBuilder for EagerGrad {
    fn prim(
        &mut self,
        name: &str,
        inputs: &[GNode],
        attrs: Vec<(&'static str, AttrValue)>,
    ) -> GNode {
        let args: Vec<KValue> = inputs.iter().map(|&n| self.get(n).clone()).collect();
        let v = call(name, &args, attrs)
            .unwrap_or_else(|e| panic!("gradient rule called {name}: {}", e.message));
        self.push(v)
    }

    fn scalar(&mut self, value: f64) -> GNode {
        self.push(KValue::Tensor(Tensor::scalar(self.float_dtype, value)))
    }

    fn int(&mut self, value: i64) -> GNode {
        self.push(KValue::Tensor(Tensor::scalar(DType::I64, value as f64)))
    }

    fn tuple_get(&mut self, tuple: GNode, index: usize) -> GNode {
        let KValue::Tuple(items) = self.get(tuple).clone() else {
            panic!("tuple_get on a tensor")
        };
        self.push(items[index].clone())
    }

    fn make_tuple(&mut self, items: &[GNode]) -> GNode {
        let v = KValue::Tuple(items.iter().map(|&n| self.get(n).clone()).collect());
        self.push(v)
    }
}

/// Runs `name`'s gradient rule on concrete inputs with sensitivity `dout`;
/// returns one gradient per input (`None`: no gradient).
pub fn gradient(
    name: &str,
    inputs: &[KValue],
    attrs: Vec<(&'static str, AttrValue)>,
    dout: &KValue,
) -> Result<Vec<Option<KValue>>, OpError> {
    let op = lookup(name).ok_or_else(|| OpError::call(format!("unknown primitive {name}")))?;
    let grad = op
        .grad
        .ok_or_else(|| OpError::call(format!("{name} has no gradient rule")))?;
    let out = call(name, inputs, attrs.clone())?;
    let given: Vec<(String, AttrValue)> = attrs
        .into_iter()
        .map(|(k, v)| (k.to_string(), check_attr(op, k, &v).unwrap()))
        .collect();
    let resolved = resolve_attrs(op, &given);
    let mut b = EagerGrad::new(DType::F64);
    let input_nodes: Vec<GNode> = inputs.iter().map(|v| b.push(v.clone())).collect();
    let out_node = b.push(out);
    let dout_node = b.push(dout.clone());
    let input_values: Vec<AbsVal> = inputs.iter().map(abstract_of).collect();
    let grads = grad(
        &mut b,
        &GradCall {
            inputs: &input_nodes,
            out: out_node,
            dout: dout_node,
            attrs: &resolved,
            input_values: &input_values,
        },
    );
    Ok(grads
        .into_iter()
        .map(|g| g.map(|n| b.get(n).clone()))
        .collect())
}

/// A sample call of a primitive, for the registry-wide checks: its gradient
/// against central finite differences (in f64), and its kernel against the
/// shape rule. Each family file lists samples next to its primitives.
#[derive(Debug, Clone)]
pub struct Sample {
    pub op: &'static str,
    pub inputs: Vec<KValue>,
    pub attrs: Vec<(&'static str, AttrValue)>,
}

impl Sample {
    pub fn new(op: &'static str, inputs: Vec<KValue>) -> Sample {
        Sample {
            op,
            inputs,
            attrs: Vec::new(),
        }
    }

    pub fn attr(mut self, name: &'static str, value: AttrValue) -> Sample {
        self.attrs.push((name, value));
        self
    }
}

/// A deterministic pseudo-random f64 tensor with values in `[lo, hi)`.
pub fn random_f64(shape: &[usize], seed: u64, lo: f64, hi: f64) -> KValue {
    let mut state = seed
        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
        .wrapping_add(0x2545_F491_4F6C_DD1D);
    let n: usize = shape.iter().product();
    let data = (0..n)
        .map(|_| {
            // xorshift64*
            state ^= state >> 12;
            state ^= state << 25;
            state ^= state >> 27;
            let r = (state.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64;
            lo + (hi - lo) * r
        })
        .collect();
    KValue::Tensor(Tensor::from_f64(shape.to_vec(), data).expect("sizes match"))
}

/// An integer tensor with the given values.
pub fn ints(dtype: DType, shape: &[usize], data: &[i64]) -> KValue {
    KValue::Tensor(Tensor::from_i64(dtype, shape.to_vec(), data.to_vec()).expect("sizes match"))
}
