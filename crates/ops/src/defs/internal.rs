//! Helpers for gradient rules. Their names start with `_`; users do not call them.

use crate::batch::BatchRule;
use crate::schema::Schema;
use crate::Family;
use crate::Traits;
use ir::{AbsVal, AttrValue, DType, Shape};
use tensor::{Buffer, Tensor};

use crate::defs::elementwise::make_tensor;
use crate::defs::reduce::axis_mask;
use crate::infer::InferCall;
use crate::kernel::{broadcast_strides, KValue, KernelCall};
use crate::{
    AttrDefault, AttrType, Category, GNode, GradBuilder, GradCall, OpDef, OpError, OutputDef,
    ParamDef,
};

/// Sums `g` over the dimensions `like` was broadcast along, giving `like`'s shape.
pub fn sum_to_shape(g: &Tensor, shape: &[usize]) -> Result<Tensor, OpError> {
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
    let strides = broadcast_strides(shape, &out_shape);
    let n: usize = shape.iter().product();
    let src = g.cast(DType::F64).to_f64_vec();
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
    Ok(Tensor::from_f64(shape.to_vec(), acc)
        .map_err(|e| OpError::call(e.0))?
        .cast(g.dtype()))
}

/// `data` of shape `from` broadcast (NumPy rules) to shape `to`.
pub(crate) fn broadcast_to<T: Copy>(data: &[T], from: &[usize], to: &[usize]) -> Vec<T> {
    let n: usize = to.iter().product();
    if data.len() == n {
        return data.to_vec();
    }
    let strides = broadcast_strides(from, to);
    let mut out = Vec::with_capacity(n);
    let mut index = vec![0usize; to.len()];
    let mut offset = 0usize;
    for _ in 0..n {
        out.push(data[offset]);
        for d in (0..to.len()).rev() {
            index[d] += 1;
            offset += strides[d];
            if index[d] < to[d] {
                break;
            }
            offset -= strides[d] * to[d];
            index[d] = 0;
        }
    }
    out
}

/// The result of a helper whose value has `like`'s shape and `dtype`.
fn shaped_like(like: &AbsVal, dtype: DType) -> AbsVal {
    match like {
        AbsVal::Scalar { weak, .. } => AbsVal::Scalar {
            dtype,
            value: None,
            weak: *weak,
        },
        _ => AbsVal::Tensor {
            dtype,
            shape: like.shape().unwrap_or(Shape::Unranked),
        },
    }
}

/// `_SumToShapeOf`'s dtype: `like`'s when both are floats (the gradient of an
/// input that was promoted comes back in the input's dtype, as MindSpore's
/// implicit `Cast` would give it), else `grad`'s.
fn sum_to_dtype(grad: DType, like: &AbsVal) -> DType {
    match like.dtype() {
        Some(l) if l.is_float() && grad.is_float() && !like.is_weak() => l,
        _ => grad,
    }
}

fn infer_sum_to_shape(call: &InferCall) -> Result<AbsVal, OpError> {
    match (&call.inputs[0], &call.inputs[1]) {
        (AbsVal::Any, _) | (_, AbsVal::Any) => Ok(AbsVal::Any),
        (g, like) => {
            let dtype = g
                .dtype()
                .or(like.dtype())
                .ok_or_else(|| OpError::call("not a tensor"))?;
            Ok(shaped_like(like, sum_to_dtype(dtype, like)))
        }
    }
}

fn infer_broadcast_like(call: &InferCall) -> Result<AbsVal, OpError> {
    match (&call.inputs[0], &call.inputs[1]) {
        (AbsVal::Any, _) | (_, AbsVal::Any) => Ok(AbsVal::Any),
        (g, like) => {
            let dtype = g
                .dtype()
                .ok_or_else(|| OpError::input(0, "`grad` is not a tensor"))?;
            Ok(shaped_like(like, dtype))
        }
    }
}

/// The channel axis of a `BiasAdd` input of rank `rank`.
pub(crate) fn channel_axis(data_format: &str, rank: usize) -> usize {
    if data_format == "NHWC" {
        rank.saturating_sub(1)
    } else {
        1
    }
}

fn k_sum_to_shape(c: &KernelCall) -> Result<KValue, OpError> {
    let g = c.tensor(0)?;
    let like = c.tensor(1)?;
    let r = sum_to_shape(g, like.shape())?;
    let dtype = sum_to_dtype(r.dtype(), &c.abs(1));
    Ok(KValue::Tensor(r.cast(dtype)))
}

fn k_broadcast_like(c: &KernelCall) -> Result<KValue, OpError> {
    let g = c.tensor(0)?;
    let to = c.tensor(1)?.shape();
    let axes = c.attrs.ints("axis").unwrap_or_default();
    let mask = axis_mask("_BroadcastToShapeOf", &axes, to.len())?;
    let from: Vec<usize> = to
        .iter()
        .zip(&mask)
        .map(|(&d, &m)| if m { 1 } else { d })
        .collect();
    if g.numel() != from.iter().product::<usize>() {
        return Err(OpError::call(format!(
            "`_BroadcastToShapeOf`: a gradient of shape {:?} does not fit the reduction of {:?}",
            g.shape(),
            to
        )));
    }
    let count: usize = to
        .iter()
        .zip(&mask)
        .filter(|(_, &m)| m)
        .map(|(&d, _)| d)
        .product();
    let mean = c.attrs.bool("mean");
    let buffer = match g.buffer() {
        Buffer::F32(p) => {
            let mut v = broadcast_to(p, &from, to);
            if mean {
                let k = count as f32;
                v.iter_mut().for_each(|e| *e /= k);
            }
            Buffer::F32(v)
        }
        Buffer::F64(p) => {
            let mut v = broadcast_to(p, &from, to);
            if mean {
                let k = count as f64;
                v.iter_mut().for_each(|e| *e /= k);
            }
            Buffer::F64(v)
        }
        Buffer::I64(p) => {
            let mut v = broadcast_to(p, &from, to);
            if mean && count > 0 {
                let k = count as i64;
                v.iter_mut().for_each(|e| *e /= k);
            }
            Buffer::I64(v)
        }
        Buffer::Bool(p) => Buffer::Bool(broadcast_to(p, &from, to)),
    };
    Ok(KValue::Tensor(make_tensor(g.dtype(), to.to_vec(), buffer)?))
}

const fn internal(
    name: &'static str,
    doc: &'static str,
    params: Schema,
    infer: crate::InferFn,
    grad: crate::GradFn,
    kernel: crate::KernelFn,
) -> OpDef {
    OpDef {
        name,
        category: Category::Internal,
        doc,
        schema: params,
        variadic: false,
        output: OutputDef::Single,
        infer,
        grad: Some(grad),
        kernel: Some(kernel),
        traits: Traits::NONE,
    }
}

/// `_SumToShapeOf` is linear in `grad`: its adjoint broadcasts the
/// sensitivity back to `grad`'s shape (adding zeros like `grad` broadcasts
/// it, NumPy rules) and in `grad`'s dtype (a sum to `grad`'s own shape casts).
fn grad_sum_to_shape(b: &mut dyn GradBuilder, c: &GradCall) -> Vec<Option<GNode>> {
    let g = c.inputs[0];
    let zeros = b.prim("ZerosLike", &[g], vec![]);
    let wide = b.prim("Add", &[c.dout, zeros], vec![]);
    vec![Some(b.prim("_SumToShapeOf", &[wide, g], vec![])), None]
}

/// `_BroadcastToShapeOf` is linear in `grad`: its adjoint is the reduction it
/// undid (a sum, or a mean with `mean`), shaped like `grad`.
fn grad_broadcast_like(b: &mut dyn GradBuilder, c: &GradCall) -> Vec<Option<GNode>> {
    let reduce = if c.attrs.bool("mean") {
        "ReduceMean"
    } else {
        "ReduceSum"
    };
    let axis = c
        .attrs
        .get("axis")
        .cloned()
        .unwrap_or(AttrValue::Tuple(Vec::new()));
    let r = b.prim(
        reduce,
        &[c.dout],
        vec![
            ("axis", axis),
            ("keep_dims", AttrValue::Bool(c.attrs.bool("keep_dims"))),
        ],
    );
    vec![
        Some(b.prim("_ReshapeLike", &[r, c.inputs[0]], vec![])),
        None,
    ]
}

/// `_CastLike(grad, like)`: `grad` in `like`'s dtype where that is a float,
/// zeros of `like`'s dtype otherwise (no gradient reaches an integer).
fn infer_cast_like(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let dtype = call.inputs[1]
        .dtype()
        .ok_or_else(|| OpError::input(1, "`_CastLike` needs a tensor"))?;
    let shape = call.inputs[0].shape().unwrap_or(Shape::Unranked);
    Ok(AbsVal::Tensor { dtype, shape })
}

fn k_cast_like(c: &KernelCall) -> Result<KValue, OpError> {
    let (g, like) = (c.tensor(0)?, c.tensor(1)?);
    let d = like.dtype();
    Ok(KValue::Tensor(if d.is_float() {
        g.cast(d)
    } else {
        Tensor::zeros(d, g.shape().to_vec())
    }))
}

/// Linear in `grad`: the sensitivity back in `grad`'s dtype, and zeros
/// where `like` is not a float (the forward value was zeros).
fn grad_cast_like(b: &mut dyn GradBuilder, c: &GradCall) -> Vec<Option<GNode>> {
    let through = b.prim("_CastLike", &[c.dout, c.inputs[1]], vec![]);
    vec![
        Some(b.prim("_CastLike", &[through, c.inputs[0]], vec![])),
        None,
    ]
}

pub const OPS: &[OpDef] = &[
    internal(
        "_CastLike",
        "`grad` cast to the dtype of `like` when that is a float dtype, zeros of `like`'s dtype otherwise (the gradient of `Cast` when the input's dtype is known only at run time).",
        Schema::own(&[
            ParamDef::input("grad", "The gradient of the cast's result."),
            ParamDef::input("like", "The cast's input, for its dtype."),
        ]),
        infer_cast_like,
        grad_cast_like,
        k_cast_like,
    ),
    internal(
        "_SumToShapeOf",
        "Sums `grad` over the dimensions along which `like` was broadcast, giving `like`'s shape (and `like`'s dtype when both are floats).",
        Schema::own(&[
            ParamDef::input("grad", "A gradient of the broadcast result."),
            ParamDef::input("like", "The input whose shape to reduce to."),
        ]),
        infer_sum_to_shape,
        grad_sum_to_shape,
        k_sum_to_shape,
    )
    .in_family(Family::SumTo { bias_grad: false }),
    internal(
        "_BroadcastToShapeOf",
        "Undoes a reduction of `like` over `axis`: puts back the reduced dimensions of `grad` (unless `keep_dims` kept them) and broadcasts it to `like`'s shape; with `mean`, divides by the number of reduced elements.",
        Schema::own(&[
            ParamDef::input("grad", "The gradient of the reduction's result."),
            ParamDef::input("like", "The reduction's input, whose shape to restore."),
            ParamDef::attr(
                "axis",
                AttrType::Ints,
                Some(AttrDefault::Ints(&[])),
                "The reduction's `axis`; `()` means all dimensions.",
            ),
            ParamDef::attr(
                "keep_dims",
                AttrType::Bool,
                Some(AttrDefault::Bool(false)),
                "The reduction's `keep_dims`.",
            ),
            ParamDef::attr(
                "mean",
                AttrType::Bool,
                Some(AttrDefault::Bool(false)),
                "Divide by the number of elements each result reduced (`ReduceMean`).",
            ),
        ]),
        infer_broadcast_like,
        grad_broadcast_like,
        k_broadcast_like,
    )
    .in_family(Family::BroadcastLike)
    // The gradient of a reduction, as `grad` writes it.
    .batched(BatchRule::Like { axes: Some("axis") }),
];

pub(crate) fn samples() -> Vec<crate::eager::Sample> {
    use crate::eager::{random_f64, Sample};
    let ints = |v: &[i64]| AttrValue::Tuple(v.iter().map(|&i| AttrValue::Int(i)).collect());
    vec![
        Sample::new(
            "_CastLike",
            vec![
                random_f64(&[2, 3], 56, -1.0, 1.0),
                random_f64(&[2, 3], 57, -1.0, 1.0),
            ],
        ),
        Sample::new(
            "_CastLike",
            vec![
                random_f64(&[2, 3], 58, -1.0, 1.0),
                crate::eager::ints(DType::I32, &[2, 3], &[1, 2, 3, 4, 5, 6]),
            ],
        ),
        Sample::new(
            "_SumToShapeOf",
            vec![
                random_f64(&[2, 3, 4], 50, -1.0, 1.0),
                random_f64(&[3, 1], 51, -1.0, 1.0),
            ],
        ),
        Sample::new(
            "_BroadcastToShapeOf",
            vec![
                random_f64(&[2, 4], 52, -1.0, 1.0),
                random_f64(&[2, 3, 4], 53, -1.0, 1.0),
            ],
        )
        .attr("axis", ints(&[-2])),
        Sample::new(
            "_BroadcastToShapeOf",
            vec![
                random_f64(&[1, 1], 54, -1.0, 1.0),
                random_f64(&[2, 3], 55, -1.0, 1.0),
            ],
        )
        .attr("keep_dims", AttrValue::Bool(true))
        .attr("mean", AttrValue::Bool(true)),
        Sample::new(
            "_BroadcastToShapeOf",
            vec![
                random_f64(&[], 60, -1.0, 1.0),
                random_f64(&[2, 3], 61, -1.0, 1.0),
            ],
        )
        .attr("mean", AttrValue::Bool(true)),
        Sample::new(
            "_SumToShapeOf",
            vec![
                random_f64(&[3, 4], 62, -1.0, 1.0),
                random_f64(&[], 63, -1.0, 1.0),
            ],
        ),
    ]
}
