//! MindSpore's backward primitives: the `...Grad` operators its gradient rules
//! emit and that exported training graphs call (`ReluGrad`, `BiasAddGrad`...).
//! They are public, with MindSpore's names and argument order, so an imported
//! training step reads and runs as MindSpore wrote it; each has a gradient
//! rule of its own, so gradients of gradients work through them.

pub mod activation;
pub mod conv;
pub mod norm;
pub mod pad;
pub mod pool;
pub mod resize;
pub mod sizes;
pub mod slices;

use crate::schema::{why, Override, Schema};
use crate::Family;
use crate::Traits;
use ir::{AbsVal, AttrValue, Dim, Shape};
use tensor::Buffer;

use crate::defs::elementwise::make_tensor;
use crate::defs::internal::channel_axis;
use crate::defs::reduce::reduce_generic;
use crate::infer::{broadcast_shapes, InferCall};
use crate::kernel::{KValue, KernelCall};
use crate::{
    AttrDefault, AttrType, Category, GNode, GradBuilder, GradCall, OpDef, OpError, OutputDef,
};

fn infer_bias_add_grad(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let (dtype, shape) = call.tensor(0)?;
    let Some(dims) = shape.dims() else {
        return Ok(AbsVal::Tensor {
            dtype,
            shape: Shape::Ranked(vec![Dim::Unknown]),
        });
    };
    if dims.len() < 2 {
        return Err(OpError::input(
            0,
            format!("`BiasAddGrad` needs a gradient of rank 2 or more, got {shape}"),
        ));
    }
    let axis = channel_axis(call.attrs.str("data_format"), dims.len());
    Ok(AbsVal::Tensor {
        dtype,
        shape: Shape::Ranked(vec![dims[axis].clone()]),
    })
}

fn k_bias_add_grad(c: &KernelCall) -> Result<KValue, OpError> {
    let g = c.tensor(0)?;
    let shape = g.shape();
    if shape.len() < 2 {
        return Err(OpError::input(0, "`BiasAddGrad` needs rank 2 or more"));
    }
    let axis = channel_axis(c.attrs.str("data_format"), shape.len());
    let mask: Vec<bool> = (0..shape.len()).map(|i| i != axis).collect();
    let out = vec![shape[axis]];
    let buffer = match g.buffer() {
        Buffer::F32(p) => Buffer::F32(
            reduce_generic(p, shape, &mask, 0f64, |a, v| a + v as f64)
                .into_iter()
                .map(|v| v as f32)
                .collect(),
        ),
        Buffer::F64(p) => Buffer::F64(reduce_generic(p, shape, &mask, 0f64, |a, v| a + v)),
        Buffer::I64(p) => Buffer::I64(reduce_generic(p, shape, &mask, 0i64, |a, v| {
            a.wrapping_add(v)
        })),
        Buffer::Bool(_) => return Err(OpError::input(0, "a bool gradient")),
    };
    Ok(KValue::Tensor(make_tensor(g.dtype(), out, buffer)?))
}

fn grad_bias_add_grad(b: &mut dyn GradBuilder, c: &GradCall) -> Vec<Option<GNode>> {
    // Linear: the sensitivity broadcast back along the non-channel axes.
    let zeros = b.prim("ZerosLike", &[c.inputs[0]], vec![]);
    let format = AttrValue::Str(c.attrs.str("data_format").to_string());
    vec![Some(b.prim(
        "BiasAdd",
        &[zeros, c.dout],
        vec![("data_format", format)],
    ))]
}

fn infer_relu_grad(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let (dtype, sa) = call.tensor(0)?;
    let (_, sb) = call.tensor(1)?;
    let shape = broadcast_shapes(&sa, &sb).map_err(OpError::call)?;
    Ok(AbsVal::Tensor { dtype, shape })
}

crate::formula! {
    /// `ReluGrad(dy, x)`: `dy` where `x` is positive.
    pub RELU_GRAD = [ints] |a, b| select(gt(b, 0.0), a, 0.0)
}

fn k_relu_grad(c: &KernelCall) -> Result<KValue, OpError> {
    let (dy, y) = (c.tensor(0)?, c.tensor(1)?);
    if dy.shape() != y.shape() {
        return Err(OpError::call(format!(
            "`ReluGrad`: `y_backprop` has shape {:?} but `x` has {:?}",
            dy.shape(),
            y.shape()
        )));
    }
    let mask = y.to_f64_vec();
    let g = dy.to_f64_vec();
    let data = g
        .iter()
        .zip(&mask)
        .map(|(&d, &m)| RELU_GRAD.bin64(d, m, &[]))
        .collect();
    let t = tensor::Tensor::from_f64(dy.shape().to_vec(), data).map_err(|e| OpError::call(e.0))?;
    Ok(KValue::Tensor(t.cast(dy.dtype())))
}

fn grad_relu_grad(b: &mut dyn GradBuilder, c: &GradCall) -> Vec<Option<GNode>> {
    // Linear in `y_backprop` with the same mask; `x` only selects.
    vec![
        Some(b.prim("ReluGrad", &[c.dout, c.inputs[1]], vec![])),
        None,
    ]
}

const fn backward(
    name: &'static str,
    doc: &'static str,
    params: Schema,
    infer: crate::InferFn,
    grad: crate::GradFn,
    kernel: crate::KernelFn,
) -> OpDef {
    OpDef {
        name,
        category: Category::Backward,
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

pub const OPS: &[OpDef] = &[
    backward(
        "BiasAddGrad",
        "The gradient of `BiasAdd`'s bias: `dout` summed over every dimension but the channel one (axis 1, or the last for `NHWC`).",
        Schema::ms(
            &[
                Override::attr("data_format", AttrType::Str(&["NCHW", "NHWC", "NCDHW"]), Some(AttrDefault::Str("NCHW")), why::STRINGS),
            ],
            &[
                ("dout", "The gradient of `BiasAdd`'s result, of rank 2 or more."),
                ("data_format", "`BiasAdd`'s data format: the channel axis is 1, or the last for `NHWC`."),
            ],
        ),
        infer_bias_add_grad,
        grad_bias_add_grad,
        k_bias_add_grad,
    )
    .in_family(Family::SumTo { bias_grad: true }),
    backward(
        "ReluGrad",
        "The gradient of `ReLU`: `y_backprop` where `x` (ReLU's output) is positive, 0 elsewhere.",
        Schema::ms(
            &[],
            &[
                ("y_backprop", "The gradient of ReLU's result."),
                ("x", "ReLU's output (or input: only its sign matters)."),
            ],
        ),
        infer_relu_grad,
        grad_relu_grad,
        k_relu_grad,
    )
    .with_formula(&RELU_GRAD),
];

pub(crate) fn samples() -> Vec<crate::eager::Sample> {
    use crate::eager::{random_f64, Sample};
    vec![
        Sample::new(
            "BiasAddGrad",
            vec![random_f64(&[2, 3, 4, 5], 56, -1.0, 1.0)],
        ),
        Sample::new(
            "BiasAddGrad",
            vec![random_f64(&[2, 4, 5, 3], 57, -1.0, 1.0)],
        )
        .attr("data_format", AttrValue::Str("NHWC".into())),
        Sample::new(
            "ReluGrad",
            vec![
                random_f64(&[2, 3], 58, -1.0, 1.0),
                random_f64(&[2, 3], 59, -1.0, 1.0),
            ],
        ),
    ]
}
