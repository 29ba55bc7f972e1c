//! MindSpore's backward primitive of StridedSlice, `StridedSliceGrad(dy,
//! shapex, begin, end, strides, masks)`, which MindSpore's bprop emits and
//! its training dumps hold: `dy` added into zeros of shape `shapex` at the
//! positions the slice took. Its own gradient is the slice.
//!
//! The registry's own gradient rule of StridedSlice keeps `_StridedSliceGrad`
//! (written by export as a scatter-add): MindSpore 2.10's CPU kernel of
//! StridedSliceGrad fails ("6 input memory out of bounds", its own bprop's
//! too) on a stride other than 1 along an axis before the last of a rank-3
//! or higher input.

use crate::schema::{why, Override, Schema};
use crate::AttrType;
use ir::{AbsVal, Dim};

use super::sizes::{sizes_abs, sizes_arg};
use crate::defs::shape::{dims_of, scatter_add, strided_slice_dims, strided_slice_offsets};
use crate::defs::shape::{tensor_abs, unranked};
use crate::infer::InferCall;
use crate::kernel::{KValue, KernelCall};
use crate::{Category, GradCall, OpDef, OpError, OutputDef, Traits};

/// The slice's attributes, as its gradient rule passes them on.
fn slice_attrs(c: &GradCall) -> Vec<(&'static str, ir::AttrValue)> {
    c.attrs.iter().map(|(k, v)| (*k, v.clone())).collect()
}

/// The result has `shapex`'s sizes; one not known before run time (a batch
/// `B`) is `dy`'s where the slice takes that dimension whole (found by
/// slicing a stand-in symbol per size), else unknown.
fn infer_strided_slice_grad(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let (dtype, dy) = dims_of(call, 0)?;
    let Some(sizes) = sizes_abs(call, 1)? else {
        return Ok(unranked(dtype));
    };
    // Stand-ins no program can name.
    let stand_in = |k: usize| Dim::Sym(format!("\u{0}{k}"));
    let probe: Vec<Dim> = sizes
        .iter()
        .enumerate()
        .map(|(k, s)| s.map_or_else(|| stand_in(k), Dim::Known))
        .collect();
    let sliced = strided_slice_dims(call.attrs, &probe)?;
    let out = sizes
        .iter()
        .enumerate()
        .map(|(k, s)| match s {
            Some(v) => Dim::Known(*v),
            None => sliced
                .iter()
                .position(|d| *d == stand_in(k))
                .and_then(|j| dy.as_ref().and_then(|dy| dy.get(j).cloned()))
                .unwrap_or(Dim::Unknown),
        })
        .collect();
    Ok(tensor_abs(dtype, out))
}

fn kernel_strided_slice_grad(c: &KernelCall) -> Result<KValue, OpError> {
    let g = c.tensor(0)?;
    let shape = sizes_arg(c, 1, "StridedSliceGrad")?;
    let (_, offsets) = strided_slice_offsets(c.attrs, &shape)?;
    if g.numel() != offsets.len() {
        return Err(OpError::input(
            0,
            format!(
                "`StridedSliceGrad`: `dy` of shape {:?} does not fit the slice of {shape:?}",
                g.shape()
            ),
        ));
    }
    Ok(KValue::Tensor(scatter_add(g, shape, &offsets)))
}

pub const OPS: &[OpDef] = &[OpDef {
    name: "StridedSliceGrad",
    category: Category::Backward,
    doc: "The gradient of StridedSlice (MindSpore's own, which its bprop emits): `dy` added into zeros of shape `shapex` at the positions the slice took.",
    schema: Schema::ms(
        &[
            Override::attr("begin", AttrType::IntTuple, None, why::TYPE),
            Override::attr("end", AttrType::IntTuple, None, why::TYPE),
            Override::attr("strides", AttrType::IntTuple, None, why::TYPE),
        ],
        &[
            ("dy", "The gradient of the slice."),
            ("shapex", "The sliced input's shape: a tuple of ints (`Shape(x)`) or a 1-D integer tensor."),
            ("begin", "As StridedSlice."),
            ("end", "As StridedSlice."),
            ("strides", "As StridedSlice."),
            ("begin_mask", "As StridedSlice. Default 0."),
            ("end_mask", "As StridedSlice. Default 0."),
            ("ellipsis_mask", "As StridedSlice. Default 0."),
            ("new_axis_mask", "As StridedSlice. Default 0."),
            ("shrink_axis_mask", "As StridedSlice. Default 0."),
        ],
    ),
    variadic: false,
    output: OutputDef::Single,
    infer: infer_strided_slice_grad,
    grad: Some(|b, c| vec![Some(b.prim("StridedSlice", &[c.dout], slice_attrs(c))), None]),
    kernel: Some(kernel_strided_slice_grad),
    traits: Traits::NONE,
}];

pub(crate) fn samples() -> Vec<crate::eager::Sample> {
    use crate::eager::{random_f64, Sample};
    use crate::KValue;
    let t = |v: &[i64]| ir::AttrValue::Tuple(v.iter().map(|&i| ir::AttrValue::Int(i)).collect());
    let sizes = |v: &[i64]| {
        KValue::Tuple(
            v.iter()
                .map(|&n| KValue::Tensor(tensor::Tensor::scalar(tensor::DType::I64, n as f64)))
                .collect(),
        )
    };
    vec![
        Sample::new(
            "StridedSliceGrad",
            vec![random_f64(&[2, 3], 129, -1.0, 1.0), sizes(&[4, 5])],
        )
        .attr("begin", t(&[1, 0]))
        .attr("end", t(&[4, 5]))
        .attr("strides", t(&[2, 2])),
        Sample::new(
            "StridedSliceGrad",
            vec![random_f64(&[3, 1, 2], 131, -1.0, 1.0), sizes(&[3, 4, 2])],
        )
        .attr("begin", t(&[0, 1]))
        .attr("end", t(&[0, 3]))
        .attr("strides", t(&[1, 2]))
        .attr("begin_mask", ir::AttrValue::Int(1))
        .attr("end_mask", ir::AttrValue::Int(1)),
    ]
}
