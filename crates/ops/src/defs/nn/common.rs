//! Helpers shared by the extended neural-network families (`conv::transpose`,
//! `pool`, `resize`, `norm::group`, `loss`, `rnn`, `nn::layers`): optional
//! tensor inputs, float-tuple attributes, `reduction`, and float kernels that
//! compute in f64 and round to the input's dtype.
//!
//! Optional inputs. MindSpore's primitive functions take some tensors as
//! `None` by default (`BinaryCrossEntropy`'s `weight`, `GroupNorm`'s `weight`
//! and `bias`). Here such an input is still a positional input; a shape rule
//! reads `None` (or the empty tuple `()`) as "not given", and a kernel reads
//! the empty tuple (or a missing argument) so.

use ir::{AbsVal, AttrValue, DType, Dim};
use tensor::Tensor;

use crate::defs::shape::{dims_of, tensor_abs, unranked};
use crate::infer::InferCall;
use crate::kernel::{KArg, KValue, KernelCall};
use crate::{Attrs, GradCall, OpError};

/// Whether an abstract input stands for an absent optional tensor.
pub(crate) fn is_absent(v: &AbsVal) -> bool {
    match v {
        AbsVal::None => true,
        AbsVal::Tuple(items) => items.is_empty(),
        _ => false,
    }
}

/// Whether optional input `i` of a shape rule is given.
pub(crate) fn given(call: &InferCall, i: usize) -> bool {
    call.inputs.get(i).is_some_and(|v| !is_absent(v))
}

/// Whether optional input `i` of a gradient rule's forward call was given.
pub(crate) fn grad_given(c: &GradCall, i: usize) -> bool {
    c.input_values.get(i).is_some_and(|v| !is_absent(v))
}

/// Optional input `i` of a kernel: `None` for the empty tuple or no argument.
pub(crate) fn opt_tensor<'a>(c: &KernelCall<'a>, i: usize) -> Result<Option<&'a Tensor>, OpError> {
    match c.inputs.get(i) {
        None => Ok(None),
        Some(KArg::Tuple([])) => Ok(None),
        Some(KArg::Tensor(t)) => Ok(Some(t)),
        Some(KArg::Tuple(_)) => Err(OpError::input(
            i,
            format!("input {i} must be a tensor or none"),
        )),
    }
}

/// A float `f64`-or-tuple attribute as a list; `none` gives `None`.
pub(crate) fn floats(attrs: &Attrs, name: &str) -> Option<Vec<f64>> {
    match attrs.get(name) {
        None | Some(AttrValue::None) => None,
        Some(AttrValue::Tuple(items)) => Some(items.iter().filter_map(AttrValue::as_f64).collect()),
        Some(v) => v.as_f64().map(|x| vec![x]),
    }
}

/// Input `i` of a shape rule: a float tensor (dtype, dims when ranked).
pub(crate) fn float_input(
    call: &InferCall,
    i: usize,
) -> Result<(DType, Option<Vec<Dim>>), OpError> {
    let (dtype, dims) = dims_of(call, i)?;
    if !dtype.is_float() {
        return Err(OpError::input(
            i,
            format!(
                "`{}` needs a float `{}`, got {dtype}",
                call.op.name,
                call.input_name(i)
            ),
        ));
    }
    Ok((dtype, dims))
}

/// A tensor of `dtype` and `dims`, or unranked.
pub(crate) fn maybe_ranked(dtype: DType, dims: Option<Vec<Dim>>) -> AbsVal {
    match dims {
        Some(d) => tensor_abs(dtype, d),
        None => unranked(dtype),
    }
}

/// Dims from concrete sizes.
pub(crate) fn known(v: &[usize]) -> Vec<Dim> {
    v.iter().map(|&d| Dim::Known(d as i64)).collect()
}

/// A tensor of `dtype` from f64 data (rounded to the dtype's storage).
pub(crate) fn from_f64(dtype: DType, shape: Vec<usize>, data: Vec<f64>) -> Tensor {
    Tensor::from_f64(shape, data)
        .expect("data matches the shape")
        .cast(dtype)
}

pub(crate) fn ktensor(dtype: DType, shape: Vec<usize>, data: Vec<f64>) -> KValue {
    KValue::Tensor(from_f64(dtype, shape, data))
}

/// An `i64`-valued tensor of `dtype` (an index output).
pub(crate) fn kints(dtype: DType, shape: Vec<usize>, data: Vec<i64>) -> KValue {
    KValue::Tensor(Tensor::from_i64(dtype, shape, data).expect("data matches the shape"))
}

// ---------------------------------------------------------------------------
// `reduction`

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reduction {
    None,
    Mean,
    Sum,
}

impl Reduction {
    pub(crate) fn of(attrs: &Attrs) -> Reduction {
        match attrs.str("reduction").to_ascii_lowercase().as_str() {
            "none" => Reduction::None,
            "sum" => Reduction::Sum,
            _ => Reduction::Mean,
        }
    }

    /// Reduces elementwise losses to the result (`none` keeps them).
    pub(crate) fn apply(self, loss: Vec<f64>, shape: &[usize]) -> (Vec<usize>, Vec<f64>) {
        match self {
            Reduction::None => (shape.to_vec(), loss),
            Reduction::Sum => (vec![], vec![loss.iter().sum()]),
            Reduction::Mean => {
                let n = loss.len();
                let s: f64 = loss.iter().sum();
                (vec![], vec![if n == 0 { f64::NAN } else { s / n as f64 }])
            }
        }
    }

    /// The sensitivity of each element's loss, given the result's `dout`.
    pub(crate) fn spread(self, dout: &[f64], n: usize) -> Vec<f64> {
        match self {
            Reduction::None => dout.to_vec(),
            Reduction::Sum => vec![dout.first().copied().unwrap_or(0.0); n],
            Reduction::Mean => vec![dout.first().copied().unwrap_or(0.0) / n.max(1) as f64; n],
        }
    }

    /// The result of a loss over input dims `dims` (a scalar unless `none`).
    pub(crate) fn result(self, dtype: DType, dims: Option<Vec<Dim>>) -> AbsVal {
        match self {
            Reduction::None => maybe_ranked(dtype, dims),
            _ => tensor_abs(dtype, vec![]),
        }
    }
}

/// Runs `$body` on the f32 or f64 data of same-storage float tensors (f16 and
/// bf16 live in f32), giving a `Buffer` of that storage.
macro_rules! real_dispatch {
    ($op:expr, [$($t:expr),+], |$($v:ident),+| $body:expr) => {{
        use tensor::Buffer;
        let bufs = [$($t.buffer()),+];
        if bufs.iter().all(|b| matches!(b, Buffer::F32(_))) {
            let mut it = bufs.iter().map(|b| match b { Buffer::F32(v) => v.as_slice(), _ => unreachable!() });
            $(let $v: &[f32] = it.next().unwrap();)+
            Buffer::F32($body)
        } else if bufs.iter().all(|b| matches!(b, Buffer::F64(_))) {
            let mut it = bufs.iter().map(|b| match b { Buffer::F64(v) => v.as_slice(), _ => unreachable!() });
            $(let $v: &[f64] = it.next().unwrap();)+
            Buffer::F64($body)
        } else {
            return Err(OpError::call(format!(
                "`{}` needs float tensors of one dtype",
                $op
            )));
        }
    }};
}
pub(crate) use real_dispatch;

/// A kernel result from a buffer.
pub(crate) fn tensor_out(
    dtype: DType,
    shape: Vec<usize>,
    buffer: tensor::Buffer,
) -> Result<KValue, OpError> {
    Ok(KValue::Tensor(
        Tensor::new(dtype, shape, buffer).map_err(|e| OpError::call(e.0))?,
    ))
}
