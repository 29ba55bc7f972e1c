//! More 2-D convolutions: `Conv2DTranspose` (what `nn.Conv2dTranspose`
//! exports), MindSpore's subclass of `Conv2DBackpropInput` that takes the
//! result's shape as an attribute. Its shape rule, kernel and gradient rule
//! are `Conv2DBackpropInput`'s (`defs::backward::conv`), on `conv`'s
//! im2col + GEMM kernels. 3-D convolutions are in `conv::conv3d`.
//!
//! A transposed convolution is the gradient of a convolution with respect to
//! its input: `Conv2DTranspose(dout, w, input_sizes)` is the input gradient of
//! the `Conv2D` that maps a tensor of shape `input_sizes` to one of `dout`'s
//! shape. Gradients follow MindSpore's bprops: the input gradient of a
//! transposed convolution is the forward convolution, the weight gradient the
//! filter gradient with the roles of input and output swapped.

use crate::Traits;
use crate::{ConvRole, Family};
use ir::{AbsVal, AttrValue};

use crate::defs::backward::conv::{
    backprop_input, grad_conv2d_backprop_input, infer_input_grad, CONV2D_TRANSPOSE_PARAMS,
};
use crate::defs::nn::common::known;
use crate::defs::shape::fmt_ints;
use crate::infer::InferCall;
use crate::kernel::{KValue, KernelCall};
use crate::{Attrs, Category, OpDef, OpError, OutputDef};

/// The `input_sizes` attribute: 4 non-negative ints.
fn input_sizes(op: &str, attrs: &Attrs) -> Result<Vec<usize>, OpError> {
    let v = attrs.ints("input_sizes").unwrap_or_default();
    if v.len() != 4 || v.iter().any(|&d| d < 0) {
        return Err(OpError::attr(
            "input_sizes",
            format!(
                "`{op}`: `input_sizes` must be 4 non-negative sizes (N, C, H, W), got {}",
                fmt_ints(&v)
            ),
        ));
    }
    Ok(v.iter().map(|&d| d as usize).collect())
}

fn infer_conv2d_transpose(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let sizes = input_sizes(call.op.name, call.attrs)?;
    infer_input_grad(call, known(&sizes), None)
}

fn kernel_conv2d_transpose(c: &KernelCall) -> Result<KValue, OpError> {
    let op = "Conv2DTranspose";
    backprop_input(c, op, input_sizes(op, c.attrs)?)
}

pub const OPS: &[OpDef] = &[OpDef {
    name: "Conv2DTranspose",
    category: Category::NeuralNetwork,
    doc: "2-D transposed convolution (what `nn.Conv2dTranspose` exports), MindSpore's subclass of Conv2DBackpropInput: the input gradient of the Conv2D whose input has shape `input_sizes` and whose output gradient is `out_backprop`. `out_channel` is that Conv2D's output channels, the channels of `out_backprop`.",
    schema: CONV2D_TRANSPOSE_PARAMS,
    variadic: false,
    output: OutputDef::Single,
    infer: infer_conv2d_transpose,
    grad: Some(grad_conv2d_backprop_input),
    kernel: Some(kernel_conv2d_transpose),
    traits: Traits::of(Family::Conv2D(ConvRole::InputGrad)),
}];

pub(crate) fn samples() -> Vec<crate::eager::Sample> {
    use crate::eager::{random_f64, Sample};
    let i = AttrValue::Int;
    let s = |v: &str| AttrValue::Str(v.to_string());
    let t = |v: &[i64]| AttrValue::Tuple(v.iter().map(|&x| AttrValue::Int(x)).collect());
    let transpose = |dout: &[usize], w: &[usize], x: &[i64], seed: u64| {
        Sample::new(
            "Conv2DTranspose",
            vec![
                random_f64(dout, seed, -1.0, 1.0),
                random_f64(w, seed + 1, -1.0, 1.0),
            ],
        )
        .attr("input_sizes", t(x))
        .attr("out_channel", i(w[0] as i64))
        .attr("kernel_size", t(&[w[2] as i64, w[3] as i64]))
    };
    vec![
        transpose(&[1, 4, 3, 3], &[4, 2, 3, 3], &[1, 4, 5, 6], 302)
            .attr("pad_mode", s("same"))
            .attr("stride", i(2))
            .attr("group", i(2)),
        transpose(&[1, 2, 3, 4], &[2, 2, 2, 2], &[1, 2, 5, 5], 304)
            .attr("pad_mode", s("pad"))
            .attr("pad", t(&[1, 0, 0, 1]))
            .attr("stride", t(&[2, 1]))
            .attr("dilation", t(&[1, 2])),
    ]
}
