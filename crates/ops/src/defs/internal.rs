//! Helpers for gradient rules. Their names start with `_`; users do not call them.

use ir::{AbsVal, Shape};

use crate::infer::InferCall;
use crate::kernel::{KValue, KernelCall};
use crate::{Category, OpDef, OpError, OutputDef, ParamDef};

/// Sums `g` over the dimensions `like` was broadcast along, giving `like`'s shape.
pub fn sum_to_shape(g: &tensor::Tensor, shape: &[usize]) -> Result<tensor::Tensor, OpError> {
    if g.shape() == shape {
        return Ok(g.clone());
    }
    let out_shape = g.shape().to_vec();
    let rank = out_shape.len();
    if shape.len() > rank {
        return Err(OpError::call(format!(
            "cannot sum {:?} to {:?}",
            g.shape(),
            shape
        )));
    }
    let strides = crate::kernel::broadcast_strides(shape, &out_shape);
    let n: usize = shape.iter().product();
    let src = g.cast(tensor::DType::F64).to_f64_vec();
    let mut acc = vec![0f64; n];
    let mut index = vec![0usize; rank];
    let mut offset = 0usize;
    for &v in &src {
        acc[offset] += v;
        for d in (0..rank).rev() {
            index[d] += 1;
            offset += strides[d];
            if index[d] < out_shape[d] {
                break;
            }
            offset -= strides[d] * out_shape[d];
            index[d] = 0;
        }
    }
    Ok(tensor::Tensor::from_f64(shape.to_vec(), acc)
        .map_err(|e| OpError::call(e.0))?
        .cast(g.dtype()))
}

fn infer_like_second(call: &InferCall) -> Result<AbsVal, OpError> {
    match (&call.inputs[0], &call.inputs[1]) {
        (AbsVal::Any, _) | (_, AbsVal::Any) => Ok(AbsVal::Any),
        (g, like) => {
            let dtype = g
                .dtype()
                .or(like.dtype())
                .ok_or_else(|| OpError::call("not a tensor"))?;
            match like {
                AbsVal::Scalar { weak, .. } => Ok(AbsVal::Scalar {
                    dtype,
                    value: None,
                    weak: *weak,
                }),
                _ => Ok(AbsVal::Tensor {
                    dtype,
                    shape: like.shape().unwrap_or(Shape::Unranked),
                }),
            }
        }
    }
}

pub const OPS: &[OpDef] = &[OpDef {
    name: "_SumToShapeOf",
    category: Category::Internal,
    doc: "Sums `grad` over the dimensions along which `like` was broadcast, giving `like`'s shape.",
    params: &[
        ParamDef::input("grad", "A gradient of the broadcast result."),
        ParamDef::input("like", "The input whose shape to reduce to."),
    ],
    variadic: false,
    output: OutputDef::Single,
    infer: infer_like_second,
    grad: None,
    kernel: Some(|c: &KernelCall| {
        let g = c.tensor(0)?;
        let like = c.tensor(1)?;
        Ok(KValue::Tensor(sum_to_shape(g, like.shape())?))
    }),
}];

pub(crate) fn samples() -> Vec<crate::eager::Sample> {
    Vec::new()
}
