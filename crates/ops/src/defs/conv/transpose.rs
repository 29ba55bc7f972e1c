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

use crate::schema::{why, Override, Schema};
use crate::Traits;
use crate::{AttrDefault, AttrType};
use crate::{ConvRole, Family};
use ir::{AbsVal, AttrValue};

use crate::defs::backward::conv::{backprop_input, grad_conv2d_backprop_input, infer_input_grad};
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
    schema: Schema::ms(
        &[
            Override::attr("input_sizes", AttrType::IntTuple, None, "a constant shape in every exported model: the registry takes it as an attribute, and import reads MindSpore's constant tensor into it"),
            Override::attr("pad_mode", AttrType::Str(&["valid", "same", "pad"]), Some(AttrDefault::Str("valid")), why::STRINGS),
            Override::attr("pad_list", AttrType::IntTuple, Some(AttrDefault::None), "the registry keeps the explicit padding (4 ints) that MindSpore stores beside `pad_mode`"),
            Override::attr("data_format", AttrType::Str(&["NCHW", "NHWC"]), Some(AttrDefault::Str("NCHW")), why::STRINGS),
        ],
        &[
            ("out_backprop", "The gradient of a Conv2D result, `[N, out_channel, H_out, W_out]`, float."),
            ("filter", "The Conv2D filters, `[out_channel, C/group, kh, kw]`, of `out_backprop`'s dtype."),
            ("input_sizes", "The shape of the Conv2D input, `(N, C, H, W)`: the shape of the result."),
            ("out_channel", "The number of output channels; must equal the first dimension of `weight`."),
            ("kernel_size", "The kernel's height and width: an int for both, or `(kh, kw)`; must match `weight`'s last two dimensions."),
            ("pad_mode", "\"valid\" (default): no padding, output `floor((H - (kh-1)·d - 1)/s) + 1`; \"same\": output `ceil(H/s)`, padding split as evenly as possible with the extra cell at the bottom/right; \"pad\": pad explicitly by `pad`."),
            ("pad", "Zero padding for pad_mode=\"pad\": an int for all sides, or `(top, bottom, left, right)`. Default 0; must be 0 in the other modes."),
            ("pad_list", "The padding MindSpore's shape inference records, `(top, bottom, left, right)`; checked, the padding used is `pad_mode`'s. Default none."),
            ("mode", "MindSpore's convolution mode; only 1 (the default) exists."),
            ("stride", "The step of the kernel: an int for both directions or `(sh, sw)`. Default 1."),
            ("dilation", "The spacing between kernel cells: an int or `(dh, dw)`. Default 1 (no dilation)."),
            ("group", "The number of groups input and output channels are split into; must divide both. Default 1."),
            ("data_format", "The layout of `x` and the result. Default \"NCHW\", the only one MindSpore's CPU backend (and this one) supports."),
        ],
    ),
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
