//! MindSpore's convolution backward primitives: `Conv2DBackpropInput` and
//! `Conv2DBackpropFilter`, what `Conv2D`'s gradient rule emits (as
//! MindSpore's bprop: `Conv2DBackpropInput(dout, w, shape of x)`,
//! `Conv2DBackpropFilter(dout, x, shape of w)`, with Conv2D's attributes and
//! `pad_list`), with MindSpore's argument names and order: the shape of the
//! result is an input, a tuple of ints (`Shape(x)` in a gradient, so one
//! program serves every batch size) or a 1-D integer tensor. The kernels are
//! `conv`'s im2col + GEMM; `Conv2DTranspose` (`conv::transpose`), which takes
//! the shape as an attribute, shares them.
//!
//! Gradients follow MindSpore's bprops: each of the three is linear in each of
//! its tensors, and the adjoints are the other two (`Conv2D` for the output
//! gradient, the filter or input gradient with roles swapped).

use crate::schema::{why, Override, Schema};
use crate::Traits;
use crate::{ConvRole, Family};
use ir::{AbsVal, AttrValue, Dim};
use tensor::Tensor;

use super::sizes::{layout_sizes, sizes_arg};
use crate::defs::conv::{
    conv_attrs, conv_backprop_filter, conv_backprop_input, conv_geom, divides, out_size,
    ColumnGeom, PadMode,
};
use crate::defs::nn::common::{float_input, real_dispatch, tensor_out};
use crate::defs::shape::{dims_of, fmt_dims, fmt_ints, tensor_abs};
use crate::infer::InferCall;
use crate::kernel::{KValue, KernelCall};
use crate::{
    AttrDefault, AttrType, Attrs, Category, GNode, GradBuilder, GradCall, OpDef, OpError, OutputDef,
};

// ---------------------------------------------------------------------------
// Shape rules.

pub(crate) fn check_pad_list(op: &str, attrs: &Attrs) -> Result<(), OpError> {
    if let Some(p) = attrs.ints("pad_list") {
        if p.len() != 4 || p.iter().any(|&x| x < -1) {
            return Err(OpError::attr(
                "pad_list",
                format!(
                    "`{op}`: `pad_list` must be 4 ints (top, bottom, left, right), each -1 or more, got {}",
                    fmt_ints(&p)
                ),
            ));
        }
    }
    Ok(())
}

/// The Conv2D output `[N, out_channel, H_out, W_out]` of an input of `x`
/// dims by a weight of `w` dims, checking that they fit. Errors about `x`
/// and `w` go to those inputs, or (`None`) to the attribute giving the shape.
pub(crate) fn conv2d_out_dims(
    call: &InferCall,
    x: &[Dim],
    w: Option<&[Dim]>,
    x_input: Option<usize>,
    w_input: Option<usize>,
) -> Result<Vec<Dim>, OpError> {
    let op = call.op.name;
    let a = conv_attrs(op, call.attrs)?;
    let at = |i: Option<usize>, attr: &'static str, m: String| match i {
        Some(i) => OpError::input(i, m),
        None => OpError::attr(attr, m),
    };
    if !divides(a.group, a.out_channel) {
        return Err(OpError::attr(
            "group",
            format!(
                "`{op}`: `group` {} does not divide `out_channel` {}",
                a.group, a.out_channel
            ),
        ));
    }
    if let Dim::Known(c) = x[1] {
        if !divides(a.group, c as usize) {
            return Err(at(
                x_input,
                "input_sizes",
                format!(
                    "`{op}`: `group` {} does not divide the {c} input channels of {}",
                    a.group,
                    fmt_dims(x)
                ),
            ));
        }
    }
    if let Some(w) = w {
        let want = [
            Dim::Known(a.out_channel as i64),
            match x[1] {
                Dim::Known(c) => Dim::Known(c / a.group as i64),
                _ => Dim::Unknown,
            },
            Dim::Known(a.kernel.0 as i64),
            Dim::Known(a.kernel.1 as i64),
        ];
        if !dims_fit(w, &want) {
            return Err(at(
                w_input,
                "filter_sizes",
                format!(
                    "`{op}`: the filter {} does not fit: expected {} (out_channel={}, C/group, kernel_size=({}, {}))",
                    fmt_dims(w),
                    fmt_dims(&want),
                    a.out_channel,
                    a.kernel.0,
                    a.kernel.1
                ),
            ));
        }
    }
    let mut out = vec![x[0].clone(), Dim::Known(a.out_channel as i64)];
    for (j, (size, k, s, d, pad)) in [
        (
            &x[2],
            a.kernel.0,
            a.stride.0,
            a.dilation.0,
            (a.pad[0], a.pad[1]),
        ),
        (
            &x[3],
            a.kernel.1,
            a.stride.1,
            a.dilation.1,
            (a.pad[2], a.pad[3]),
        ),
    ]
    .into_iter()
    .enumerate()
    {
        out.push(match size {
            Dim::Known(n) => match out_size(a.mode, *n as usize, k, s, d, pad) {
                Some((o, _)) if o > 0 || a.mode == PadMode::Same => Dim::Known(o as i64),
                _ => {
                    return Err(at(
                        x_input,
                        "input_sizes",
                        format!(
                            "`{op}`: the {} of the convolution input, {n}, is smaller than the (dilated) kernel",
                            if j == 0 { "height" } else { "width" }
                        ),
                    ))
                }
            },
            _ => Dim::Unknown,
        });
    }
    Ok(out)
}

/// Whether `dims` may be `want`: the same rank, and equal where both sizes
/// are known.
pub(crate) fn dims_fit(dims: &[Dim], want: &[Dim]) -> bool {
    dims.len() == want.len()
        && dims.iter().zip(want).all(|(p, q)| match (p, q) {
            (Dim::Known(p), Dim::Known(q)) => p == q,
            _ => true,
        })
}

/// Checks that `dims` (input `i`) fits the expected convolution output.
pub(crate) fn check_conv_out(
    call: &InferCall,
    i: usize,
    dims: &[Dim],
    want: &[Dim],
) -> Result<(), OpError> {
    if !dims_fit(dims, want) {
        return Err(OpError::input(
            i,
            format!(
                "`{}`: `{}` is {}, but the convolution it is the gradient of gives {}",
                call.op.name,
                call.input_name(i),
                fmt_dims(dims),
                fmt_dims(want)
            ),
        ));
    }
    Ok(())
}

/// The input gradient's type: `out_backprop` (input 0) and `filter` (input 1)
/// checked against the convolution of an input of dims `xd`, which input
/// `x_input` (or, `None`, the attribute `input_sizes`) gives.
pub(crate) fn infer_input_grad(
    call: &InferCall,
    xd: Vec<Dim>,
    x_input: Option<usize>,
) -> Result<AbsVal, OpError> {
    let op = call.op.name;
    let (dtype, dd) = float_input(call, 0)?;
    let (wdtype, wd) = dims_of(call, 1)?;
    if wdtype != dtype {
        return Err(OpError::input(
            1,
            format!(
                "`{op}` needs `out_backprop` and `filter` of one dtype, got {dtype} and {wdtype}"
            ),
        ));
    }
    check_pad_list(op, call.attrs)?;
    let want = conv2d_out_dims(call, &xd, wd.as_deref(), x_input, Some(1))?;
    if let Some(dd) = dd {
        check_conv_out(call, 0, &dd, &want)?;
    }
    Ok(tensor_abs(dtype, xd))
}

/// Sizes input `i`, `(N, C, H, W)`, as dimensions; a size unknown before run
/// time is `fallback`'s.
fn four_sizes(call: &InferCall, i: usize, fallback: [Option<Dim>; 4]) -> Result<Vec<Dim>, OpError> {
    layout_sizes(call, i, "N, C, H, W", &fallback)
}

fn infer_conv2d_backprop_input(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    // The batch, where `input_sizes` does not know it (`Shape(x)` of a
    // symbolic `x`), is `out_backprop`'s.
    let (_, dd) = dims_of(call, 0)?;
    let batch = dd.as_ref().and_then(|d| d.first().cloned());
    let xd = four_sizes(call, 2, [batch, None, None, None])?;
    infer_input_grad(call, xd, Some(2))
}

fn infer_conv2d_backprop_filter(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let op = call.op.name;
    let (dtype, dd) = float_input(call, 0)?;
    let (xdtype, xd) = dims_of(call, 1)?;
    if xdtype != dtype {
        return Err(OpError::input(
            1,
            format!(
                "`{op}` needs `out_backprop` and `input` of one dtype, got {dtype} and {xdtype}"
            ),
        ));
    }
    check_pad_list(op, call.attrs)?;
    let a = conv_attrs(op, call.attrs)?;
    // What the attributes say of the filter, where `filter_sizes` does not.
    let oc = Some(Dim::Known(a.out_channel as i64));
    let cg = xd
        .as_ref()
        .and_then(|x| x.get(1).and_then(Dim::known))
        .map(|c| Dim::Known(c / a.group as i64));
    let kh = Some(Dim::Known(a.kernel.0 as i64));
    let kw = Some(Dim::Known(a.kernel.1 as i64));
    let wd = four_sizes(call, 2, [oc, cg, kh, kw])?;
    if let Some(xd) = xd {
        if xd.len() != 4 {
            return Err(OpError::input(
                1,
                format!(
                    "`{op}` needs a 4-D `input` (N, C, H, W), got {}",
                    fmt_dims(&xd)
                ),
            ));
        }
        let want = conv2d_out_dims(call, &xd, Some(&wd), Some(1), Some(2))?;
        if let Some(dd) = dd {
            check_conv_out(call, 0, &dd, &want)?;
        }
    }
    Ok(tensor_abs(dtype, wd))
}

// ---------------------------------------------------------------------------
// Kernels.

fn check_dout(op: &str, dout: &Tensor, expected: &[usize]) -> Result<(), OpError> {
    if dout.shape() != expected {
        return Err(OpError::input(
            0,
            format!(
                "`{op}`: the output gradient has shape {:?}, but the convolution gives {expected:?}",
                dout.shape()
            ),
        ));
    }
    Ok(())
}

fn four(op: &str, sizes: Vec<usize>, what: &str) -> Result<Vec<usize>, OpError> {
    if sizes.len() != 4 {
        return Err(OpError::call(format!(
            "`{op}`: `{what}` must be 4 sizes (N, C, H, W), got {sizes:?}"
        )));
    }
    Ok(sizes)
}

/// The input gradient `(out_backprop, filter)` of a Conv2D of an input of
/// shape `sizes` (also `Conv2DTranspose`'s kernel).
pub(crate) fn backprop_input(
    c: &KernelCall,
    op: &str,
    sizes: Vec<usize>,
) -> Result<KValue, OpError> {
    let (dout, w) = (c.tensor(0)?, c.tensor(1)?);
    let sizes = four(op, sizes, "input_sizes")?;
    let g = conv_geom(&sizes, w.shape(), c.attrs)?;
    check_dout(op, dout, &[g.n, g.oc, g.oh, g.ow])?;
    g.check_scratch(op, dout.dtype().size_of())?;
    let buffer = real_dispatch!(op, [dout, w], |dv, wv| conv_backprop_input(dv, wv, &g));
    tensor_out(dout.dtype(), sizes, buffer)
}

fn kernel_conv2d_backprop_input(c: &KernelCall) -> Result<KValue, OpError> {
    let op = "Conv2DBackpropInput";
    backprop_input(c, op, sizes_arg(c, 2, op)?)
}

fn kernel_conv2d_backprop_filter(c: &KernelCall) -> Result<KValue, OpError> {
    let op = "Conv2DBackpropFilter";
    let (dout, x) = (c.tensor(0)?, c.tensor(1)?);
    let sizes = four(op, sizes_arg(c, 2, op)?, "filter_sizes")?;
    let g = conv_geom(x.shape(), &sizes, c.attrs)?;
    check_dout(op, dout, &[g.n, g.oc, g.oh, g.ow])?;
    g.check_scratch(op, dout.dtype().size_of())?;
    let buffer = real_dispatch!(op, [dout, x], |dv, xv| conv_backprop_filter(dv, xv, &g));
    tensor_out(dout.dtype(), sizes, buffer)
}

// ---------------------------------------------------------------------------
// Gradient rules.

/// The attributes a `Conv2D` takes.
const CONV2D_ATTRS: &[&str] = &[
    "out_channel",
    "kernel_size",
    "mode",
    "pad_mode",
    "pad",
    "stride",
    "dilation",
    "group",
    "data_format",
];

/// The call's attributes that a `Conv2D` takes.
pub(crate) fn conv2d_attrs(c: &GradCall) -> Vec<(&'static str, AttrValue)> {
    c.attrs
        .iter()
        .filter(|(k, _)| CONV2D_ATTRS.contains(k))
        .map(|(k, v)| (*k, v.clone()))
        .collect()
}

/// The attributes of the backward primitives: Conv2D's, and `pad_list` where
/// it is known.
fn backprop_attrs(c: &GradCall, pad_list: Option<[i64; 4]>) -> Vec<(&'static str, AttrValue)> {
    let mut attrs = conv2d_attrs(c);
    let given = c
        .attrs
        .get("pad_list")
        .filter(|v| !matches!(v, AttrValue::None))
        .cloned();
    let computed =
        pad_list.map(|p| AttrValue::Tuple(p.iter().map(|&v| AttrValue::Int(v)).collect()));
    if let Some(p) = given.or(computed) {
        attrs.push(("pad_list", p));
    }
    attrs
}

/// The padding `(top, bottom, left, right)` of a Conv2D of an input of `x`
/// dims, as MindSpore's shape inference records it in `pad_list`; `None`
/// where it depends on a size not known before run time ("same").
fn pad_list_of(c: &GradCall, x: &AbsVal) -> Option<[i64; 4]> {
    let a = conv_attrs("Conv2D", c.attrs).ok()?;
    match a.mode {
        PadMode::Valid => return Some([0; 4]),
        PadMode::Pad => return Some(a.pad.map(|p| p as i64)),
        PadMode::Same => {}
    }
    let dims = x.shape()?;
    let dims = dims.dims()?;
    let side = |size: &Dim, k: usize, s: usize, d: usize| -> Option<(i64, i64)> {
        let n = size.known()? as usize;
        let (out, before) = out_size(PadMode::Same, n, k, s, d, (0, 0))?;
        let total = ((out.max(1) - 1) * s + (k - 1) * d + 1).saturating_sub(n);
        Some((before as i64, (total - before) as i64))
    };
    if dims.len() != 4 {
        return None;
    }
    let (t, b) = side(&dims[2], a.kernel.0, a.stride.0, a.dilation.0)?;
    let (l, r) = side(&dims[3], a.kernel.1, a.stride.1, a.dilation.1)?;
    Some([t, b, l, r])
}

/// MindSpore's Conv2D bprop: `(dx, dw)` of `Conv2D(x, w)` for sensitivity
/// `dout`.
pub(crate) fn conv2d_backprops(
    b: &mut dyn GradBuilder,
    c: &GradCall,
    x: GNode,
    w: GNode,
) -> (GNode, GNode) {
    let attrs = backprop_attrs(c, pad_list_of(c, &c.input_values[0]));
    let xs = b.prim("Shape", &[x], vec![]);
    let ws = b.prim("Shape", &[w], vec![]);
    let dx = b.prim("Conv2DBackpropInput", &[c.dout, w, xs], attrs.clone());
    let dw = b.prim("Conv2DBackpropFilter", &[c.dout, x, ws], attrs);
    (dx, dw)
}

/// An input gradient `Conv2DBackpropInput(dy, w, sizes)` (or
/// `Conv2DTranspose`'s, sizes an attribute): with sensitivity `u` (shaped like
/// the convolution's input), `d dy = Conv2D(u, w)` and
/// `d w = Conv2DBackpropFilter(dy, u, shape of w)`.
pub(crate) fn grad_conv2d_backprop_input(
    b: &mut dyn GradBuilder,
    c: &GradCall,
) -> Vec<Option<GNode>> {
    let (dy, w) = (c.inputs[0], c.inputs[1]);
    let ddy = b.prim("Conv2D", &[c.dout, w], conv2d_attrs(c));
    let ws = b.prim("Shape", &[w], vec![]);
    let dw = b.prim(
        "Conv2DBackpropFilter",
        &[dy, c.dout, ws],
        backprop_attrs(c, None),
    );
    let mut grads = vec![Some(ddy), Some(dw)];
    grads.resize(c.inputs.len(), None);
    grads
}

/// A filter gradient `Conv2DBackpropFilter(dy, x, sizes)`: with sensitivity
/// `u` (shaped like the filter), `d dy = Conv2D(x, u)` and
/// `d x = Conv2DBackpropInput(dy, u, shape of x)`.
fn grad_conv2d_backprop_filter(b: &mut dyn GradBuilder, c: &GradCall) -> Vec<Option<GNode>> {
    let (dy, x) = (c.inputs[0], c.inputs[1]);
    let ddy = b.prim("Conv2D", &[x, c.dout], conv2d_attrs(c));
    let xs = b.prim("Shape", &[x], vec![]);
    let dx = b.prim(
        "Conv2DBackpropInput",
        &[dy, c.dout, xs],
        backprop_attrs(c, None),
    );
    vec![Some(ddy), Some(dx), None]
}

// ---------------------------------------------------------------------------
// The table.

const BPI_PARAMS: Schema = Schema::ms(
    &[
        Override::attr("kernel_size", AttrType::Ints, None, why::TYPE),
        Override::attr("pad_mode", AttrType::Str(&["valid", "same", "pad"]), Some(AttrDefault::Str("valid")), why::STRINGS),
        Override::attr("pad_list", AttrType::IntTuple, Some(AttrDefault::None), why::TYPE),
        Override::attr("stride", AttrType::Ints, Some(AttrDefault::Int(1)), why::TYPE),
        Override::attr("dilation", AttrType::Ints, Some(AttrDefault::Int(1)), why::TYPE),
        Override::attr("data_format", AttrType::Str(&["NCHW", "NHWC"]), Some(AttrDefault::Str("NCHW")), why::STRINGS),
    ],
    &[
        ("out_backprop", "The gradient of a Conv2D result, `[N, out_channel, H_out, W_out]`, float."),
        ("filter", "The Conv2D filters, `[out_channel, C/group, kh, kw]`, of `out_backprop`'s dtype."),
        ("input_sizes", "The shape of the Conv2D input, `(N, C, H, W)`, the shape of the result: a tuple of ints (`Shape(x)`) or a 1-D integer tensor."),
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
);

const BPF_PARAMS: Schema = Schema::ms(
    &[
        Override::attr("pad_mode", AttrType::Str(&["valid", "same", "pad"]), Some(AttrDefault::Str("valid")), why::STRINGS),
        Override::attr("stride", AttrType::Ints, Some(AttrDefault::Int(1)), why::TYPE),
        Override::attr("dilation", AttrType::Ints, Some(AttrDefault::Int(1)), why::TYPE),
        Override::attr("data_format", AttrType::Str(&["NCHW", "NHWC"]), Some(AttrDefault::Str("NCHW")), why::STRINGS),
    ],
    &[
        ("out_backprop", "The gradient of a Conv2D result, `[N, out_channel, H_out, W_out]`, float."),
        ("input", "The Conv2D input `[N, C, H, W]`, of `out_backprop`'s dtype."),
        ("filter_sizes", "The shape of the filter, `(out_channel, C/group, kh, kw)`, the shape of the result: a tuple of ints (`Shape(w)`) or a 1-D integer tensor."),
        ("out_channel", "The number of output channels; must equal the first dimension of `weight`."),
        ("kernel_size", "The kernel's height and width: an int for both, or `(kh, kw)`; must match `weight`'s last two dimensions."),
        ("pad_mode", "\"valid\" (default): no padding, output `floor((H - (kh-1)·d - 1)/s) + 1`; \"same\": output `ceil(H/s)`, padding split as evenly as possible with the extra cell at the bottom/right; \"pad\": pad explicitly by `pad`."),
        ("pad", "Zero padding for pad_mode=\"pad\": an int for all sides, or `(top, bottom, left, right)`. Default 0; must be 0 in the other modes."),
        ("pad_list", "The padding MindSpore's shape inference records, `(top, bottom, left, right)`; checked, the padding used is `pad_mode`'s. Default (0, 0, 0, 0)."),
        ("mode", "MindSpore's convolution mode; only 1 (the default) exists."),
        ("stride", "The step of the kernel: an int for both directions or `(sh, sw)`. Default 1."),
        ("dilation", "The spacing between kernel cells: an int or `(dh, dw)`. Default 1 (no dilation)."),
        ("group", "The number of groups input and output channels are split into; must divide both. Default 1."),
        ("data_format", "The layout of `x` and the result. Default \"NCHW\", the only one MindSpore's CPU backend (and this one) supports."),
    ],
);

pub const OPS: &[OpDef] = &[
    OpDef {
        name: "Conv2DBackpropInput",
        category: Category::Backward,
        doc: "The gradient of a Conv2D with respect to its input (what Conv2D's gradient rule emits; also a 2-D transposed convolution, what `nn.Conv1dTranspose` exports): the input gradient of the `Conv2D(x, filter)` with `x` of shape `input_sizes` whose output gradient is `out_backprop`. The attributes describe that Conv2D.",
        schema: BPI_PARAMS,
        variadic: false,
        output: OutputDef::Single,
        infer: infer_conv2d_backprop_input,
        grad: Some(grad_conv2d_backprop_input),
        kernel: Some(kernel_conv2d_backprop_input),
        traits: Traits::of(Family::Conv2D(ConvRole::InputGrad)),
    },
    OpDef {
        name: "Conv2DBackpropFilter",
        category: Category::Backward,
        doc: "The gradient of a Conv2D with respect to its filter (what Conv2D's gradient rule emits): for `Conv2D(input, w)` with `w` of shape `filter_sizes` and output gradient `out_backprop`, the gradient of `w` (im2col and GEMM).",
        schema: BPF_PARAMS,
        variadic: false,
        output: OutputDef::Single,
        infer: infer_conv2d_backprop_filter,
        grad: Some(grad_conv2d_backprop_filter),
        kernel: Some(kernel_conv2d_backprop_filter),
        traits: Traits::of(Family::Conv2D(ConvRole::FilterGrad)),
    },
];

pub(crate) fn samples() -> Vec<crate::eager::Sample> {
    use crate::eager::{ints, random_f64, Sample};
    use tensor::DType;
    let i = AttrValue::Int;
    let s = |v: &str| AttrValue::Str(v.to_string());
    let t = |v: &[i64]| AttrValue::Tuple(v.iter().map(|&x| AttrValue::Int(x)).collect());
    let sizes = |v: &[usize]| {
        KValue::Tuple(
            v.iter()
                .map(|&d| ints(DType::I64, &[], &[d as i64]))
                .collect(),
        )
    };
    let r = |shape: &[usize], seed: u64| random_f64(shape, seed, -1.0, 1.0);
    // `Conv2DBackpropInput(dout, w, x shape)`, `Conv2DBackpropFilter(dout,
    // x, w shape)`, by the shapes of the Conv2D of `x` by `w`.
    let bpi = |dout: &[usize], w: &[usize], x: &[usize], seed: u64| {
        Sample::new(
            "Conv2DBackpropInput",
            vec![r(dout, seed), r(w, seed + 1), sizes(x)],
        )
        .attr("out_channel", i(w[0] as i64))
        .attr("kernel_size", t(&[w[2] as i64, w[3] as i64]))
    };
    let bpf = |dout: &[usize], x: &[usize], w: &[usize], seed: u64| {
        Sample::new(
            "Conv2DBackpropFilter",
            vec![r(dout, seed), r(x, seed + 1), sizes(w)],
        )
        .attr("out_channel", i(w[0] as i64))
        .attr("kernel_size", t(&[w[2] as i64, w[3] as i64]))
    };
    vec![
        bpi(&[2, 3, 3, 2], &[3, 2, 2, 3], &[2, 2, 4, 4], 300),
        bpi(&[1, 4, 3, 3], &[4, 2, 3, 3], &[1, 4, 5, 6], 302)
            .attr("pad_mode", s("same"))
            .attr("stride", i(2))
            .attr("group", i(2)),
        bpi(&[1, 2, 3, 4], &[2, 2, 2, 2], &[1, 2, 5, 5], 304)
            .attr("pad_mode", s("pad"))
            .attr("pad", t(&[1, 0, 0, 1]))
            .attr("stride", t(&[2, 1]))
            .attr("dilation", t(&[1, 2])),
        bpi(&[1, 3, 3, 4], &[3, 2, 2, 3], &[1, 2, 3, 4], 342)
            .attr("pad_mode", s("same"))
            .attr("pad_list", t(&[0, 1, 1, 1])),
        // The shape as a 1-D tensor (MindSpore's dynamic-shape form).
        Sample::new(
            "Conv2DBackpropInput",
            vec![
                r(&[2, 3, 3, 2], 344),
                r(&[3, 2, 2, 3], 345),
                ints(DType::I64, &[4], &[2, 2, 4, 4]),
            ],
        )
        .attr("out_channel", i(3))
        .attr("kernel_size", t(&[2, 3])),
        bpf(&[2, 3, 3, 2], &[2, 2, 4, 4], &[3, 2, 2, 3], 306),
        bpf(&[1, 3, 3, 4], &[1, 2, 3, 4], &[3, 2, 2, 3], 346).attr("pad_mode", s("same")),
        bpf(&[1, 4, 3, 2], &[1, 4, 6, 5], &[4, 2, 3, 3], 348)
            .attr("pad_mode", s("pad"))
            .attr("pad", i(1))
            .attr("stride", i(2))
            .attr("dilation", t(&[1, 2]))
            .attr("group", i(2)),
    ]
}
