//! More 2-D convolutions: the public `Conv2DBackpropInput` and
//! `Conv2DTranspose` (what `nn.Conv1dTranspose` and `nn.Conv2dTranspose`
//! export) and `Conv2DBackpropFilter`, built on `nn_conv`'s im2col + GEMM
//! kernels; and the gradient rules of `nn_conv`'s internal helpers
//! `_Conv2DBackpropInput` / `_Conv2DBackpropFilter` (second order). 3-D
//! convolutions are in `nn_conv3d`.
//!
//! A transposed convolution is the gradient of a convolution with respect to
//! its input: `Conv2DTranspose(dout, w, input_sizes)` is the input gradient of
//! the `Conv2D` that maps a tensor of shape `input_sizes` to one of `dout`'s
//! shape. Gradients follow MindSpore's bprops: the input gradient of a
//! transposed convolution is the forward convolution, the weight gradient the
//! filter gradient with the roles of input and output swapped.

use ir::{AbsVal, AttrValue, Dim};
use tensor::Tensor;

use crate::defs::nn_conv::{
    conv_attrs, conv_backprop_filter, conv_backprop_input, conv_geom, divides, out_size,
    ColumnGeom, PadMode, P_CONV_PAD_MODE, P_DATA_FORMAT, P_DILATION, P_GROUP, P_KERNEL, P_MODE,
    P_OUT_CHANNEL, P_PAD, P_STRIDE,
};
use crate::defs::nn_ext::{float_input, known, real_dispatch, tensor_out};
use crate::defs::shape::{dims_of, fmt_dims, fmt_ints, tensor_abs};
use crate::infer::InferCall;
use crate::kernel::{KValue, KernelCall};
use crate::{
    AttrDefault, AttrType, Attrs, Category, GNode, GradBuilder, GradCall, OpDef, OpError,
    OutputDef, ParamDef,
};

// ---------------------------------------------------------------------------
// Conv2DBackpropInput / Conv2DTranspose / Conv2DBackpropFilter

/// A shape attribute (`input_sizes`, `filter_sizes`) of 4 non-negative ints.
fn shape_attr(op: &str, attrs: &Attrs, name: &'static str) -> Result<Vec<usize>, OpError> {
    let v = attrs.ints(name).unwrap_or_default();
    if v.len() != 4 || v.iter().any(|&d| d < 0) {
        return Err(OpError::attr(
            name,
            format!(
                "`{op}`: `{name}` must be 4 non-negative sizes (N, C, H, W), got {}",
                fmt_ints(&v)
            ),
        ));
    }
    Ok(v.iter().map(|&d| d as usize).collect())
}

fn check_pad_list(op: &str, attrs: &Attrs) -> Result<(), OpError> {
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
/// dims by a weight of `w` dims, checking that they fit (shape rules).
fn conv2d_out_dims(
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
        let fits = w.len() == 4
            && w.iter().zip(&want).all(|(p, q)| match (p, q) {
                (Dim::Known(p), Dim::Known(q)) => p == q,
                _ => true,
            });
        if !fits {
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

/// Checks that `dims` (input `i`) fits the expected convolution output.
fn check_conv_out(call: &InferCall, i: usize, dims: &[Dim], want: &[Dim]) -> Result<(), OpError> {
    let fits = dims.len() == want.len()
        && dims.iter().zip(want).all(|(p, q)| match (p, q) {
            (Dim::Known(p), Dim::Known(q)) => p == q,
            _ => true,
        });
    if !fits {
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

fn infer_conv2d_backprop_input(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
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
    let sizes = shape_attr(op, call.attrs, "input_sizes")?;
    let xd = known(&sizes);
    let want = conv2d_out_dims(call, &xd, wd.as_deref(), None, Some(1))?;
    if let Some(dd) = dd {
        check_conv_out(call, 0, &dd, &want)?;
    }
    Ok(tensor_abs(dtype, xd))
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
    let sizes = shape_attr(op, call.attrs, "filter_sizes")?;
    let wd = known(&sizes);
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
        let want = conv2d_out_dims(call, &xd, Some(&wd), Some(1), None)?;
        if let Some(dd) = dd {
            check_conv_out(call, 0, &dd, &want)?;
        }
    }
    Ok(tensor_abs(dtype, wd))
}

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

fn kernel_conv2d_backprop_input(c: &KernelCall, op: &str) -> Result<KValue, OpError> {
    let (dout, w) = (c.tensor(0)?, c.tensor(1)?);
    let sizes = shape_attr(op, c.attrs, "input_sizes")?;
    let g = conv_geom(&sizes, w.shape(), c.attrs)?;
    check_dout(op, dout, &[g.n, g.oc, g.oh, g.ow])?;
    g.check_scratch(op, dout.dtype().size_of())?;
    let buffer = real_dispatch!(op, [dout, w], |dv, wv| conv_backprop_input(dv, wv, &g));
    tensor_out(dout.dtype(), sizes, buffer)
}

fn kernel_conv2d_backprop_filter(c: &KernelCall) -> Result<KValue, OpError> {
    let op = "Conv2DBackpropFilter";
    let (dout, x) = (c.tensor(0)?, c.tensor(1)?);
    let sizes = shape_attr(op, c.attrs, "filter_sizes")?;
    let g = conv_geom(x.shape(), &sizes, c.attrs)?;
    check_dout(op, dout, &[g.n, g.oc, g.oh, g.ow])?;
    g.check_scratch(op, dout.dtype().size_of())?;
    let buffer = real_dispatch!(op, [dout, x], |dv, xv| conv_backprop_filter(dv, xv, &g));
    tensor_out(dout.dtype(), sizes, buffer)
}

/// The attributes a `Conv2D` (or its gradient helpers) takes.
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

fn conv2d_attrs(c: &GradCall) -> Vec<(&'static str, AttrValue)> {
    c.attrs
        .iter()
        .filter(|(k, _)| CONV2D_ATTRS.contains(k))
        .map(|(k, v)| (*k, v.clone()))
        .collect()
}

/// MindSpore's Conv2DTranspose bprop: `dx = Conv2D(dout, w)`,
/// `dw = Conv2DBackpropFilter(x, dout, w.shape)`.
fn grad_conv2d_backprop_input(b: &mut dyn GradBuilder, c: &GradCall) -> Vec<Option<GNode>> {
    let (x, w) = (c.inputs[0], c.inputs[1]);
    let dx = b.prim("Conv2D", &[c.dout, w], conv2d_attrs(c));
    let dw = b.prim("_Conv2DBackpropFilter", &[x, c.dout, w], conv2d_attrs(c));
    vec![Some(dx), Some(dw)]
}

/// The gradient of a filter gradient `dw(dy, x)`, linear in each: with
/// sensitivity `ddw`, `d dy = Conv2D(x, ddw)` and `d x = BackpropInput(dy, ddw)`.
fn grad_conv2d_backprop_filter(b: &mut dyn GradBuilder, c: &GradCall) -> Vec<Option<GNode>> {
    let (dy, x) = (c.inputs[0], c.inputs[1]);
    let ddy = b.prim("Conv2D", &[x, c.dout], conv2d_attrs(c));
    let dx = b.prim("_Conv2DBackpropInput", &[dy, c.dout, x], conv2d_attrs(c));
    vec![Some(ddy), Some(dx)]
}

/// The gradient rule of the internal `_Conv2DBackpropInput(dout, weight,
/// x_like)` (used by `internal_nn`): as Conv2DTranspose's.
pub(crate) fn grad_internal_conv2d_backprop_input(
    b: &mut dyn GradBuilder,
    c: &GradCall,
) -> Vec<Option<GNode>> {
    let mut g = grad_conv2d_backprop_input(b, c);
    g.push(None);
    g
}

/// The gradient rule of the internal `_Conv2DBackpropFilter(dout, x,
/// weight_like)` (used by `internal_nn`).
pub(crate) fn grad_internal_conv2d_backprop_filter(
    b: &mut dyn GradBuilder,
    c: &GradCall,
) -> Vec<Option<GNode>> {
    let mut g = grad_conv2d_backprop_filter(b, c);
    g.push(None);
    g
}

const CONV2D_BPI_PARAMS: &[ParamDef] = &[
    ParamDef::input(
        "out_backprop",
        "The gradient of a Conv2D result (the transposed convolution's input), `[N, out_channel, H_out, W_out]`, float.",
    ),
    ParamDef::input(
        "filter",
        "The Conv2D filters, `[out_channel, C/group, kh, kw]`, of `out_backprop`'s dtype.",
    ),
    ParamDef::attr(
        "input_sizes",
        AttrType::IntTuple,
        None,
        "The shape of the Conv2D input, `(N, C, H, W)`: the shape of the result.",
    ),
    P_OUT_CHANNEL,
    P_KERNEL,
    P_CONV_PAD_MODE,
    P_PAD,
    ParamDef::attr(
        "pad_list",
        AttrType::IntTuple,
        Some(AttrDefault::None),
        "The padding MindSpore's shape inference records, `(top, bottom, left, right)`; checked, the padding used is `pad_mode`'s. Default none.",
    ),
    P_MODE,
    P_STRIDE,
    P_DILATION,
    P_GROUP,
    P_DATA_FORMAT,
];

const CONV2D_BPF_PARAMS: &[ParamDef] = &[
    ParamDef::input(
        "out_backprop",
        "The gradient of the Conv2D result, `[N, out_channel, H_out, W_out]`, float.",
    ),
    ParamDef::input("input", "The Conv2D input `[N, C, H, W]`, of `out_backprop`'s dtype."),
    ParamDef::attr(
        "filter_sizes",
        AttrType::IntTuple,
        None,
        "The shape of the filter, `(out_channel, C/group, kh, kw)`: the shape of the result.",
    ),
    P_OUT_CHANNEL,
    P_KERNEL,
    P_CONV_PAD_MODE,
    P_PAD,
    ParamDef::attr(
        "pad_list",
        AttrType::IntTuple,
        Some(AttrDefault::Ints(&[0, 0, 0, 0])),
        "The padding MindSpore's shape inference records, `(top, bottom, left, right)`; checked, the padding used is `pad_mode`'s. Default (0, 0, 0, 0).",
    ),
    P_MODE,
    P_STRIDE,
    P_DILATION,
    P_GROUP,
    P_DATA_FORMAT,
];
pub const OPS: &[OpDef] = &[
    OpDef {
        name: "Conv2DBackpropInput",
        category: Category::NeuralNetwork,
        doc: "The gradient of a Conv2D with respect to its input, also a 2-D transposed convolution (what `nn.Conv1dTranspose` exports): the input gradient of the `Conv2D(x, filter)` with `x` of shape `input_sizes` whose output gradient is `out_backprop`. The attributes describe that Conv2D.",
        params: CONV2D_BPI_PARAMS,
        variadic: false,
        output: OutputDef::Single,
        infer: infer_conv2d_backprop_input,
        grad: Some(grad_conv2d_backprop_input),
        kernel: Some(|c| kernel_conv2d_backprop_input(c, "Conv2DBackpropInput")),
    },
    OpDef {
        name: "Conv2DTranspose",
        category: Category::NeuralNetwork,
        doc: "2-D transposed convolution (what `nn.Conv2dTranspose` exports), MindSpore's subclass of Conv2DBackpropInput: the input gradient of the Conv2D whose input has shape `input_sizes` and whose output gradient is `out_backprop`. `out_channel` is that Conv2D's output channels, the channels of `out_backprop`.",
        params: CONV2D_BPI_PARAMS,
        variadic: false,
        output: OutputDef::Single,
        infer: infer_conv2d_backprop_input,
        grad: Some(grad_conv2d_backprop_input),
        kernel: Some(|c| kernel_conv2d_backprop_input(c, "Conv2DTranspose")),
    },
    OpDef {
        name: "Conv2DBackpropFilter",
        category: Category::NeuralNetwork,
        doc: "The gradient of a Conv2D with respect to its filter: for `Conv2D(input, w)` with `w` of shape `filter_sizes` and output gradient `out_backprop`, the gradient of `w` (im2col and GEMM).",
        params: CONV2D_BPF_PARAMS,
        variadic: false,
        output: OutputDef::Single,
        infer: infer_conv2d_backprop_filter,
        grad: Some(grad_conv2d_backprop_filter),
        kernel: Some(kernel_conv2d_backprop_filter),
    },
];

pub(crate) fn samples() -> Vec<crate::eager::Sample> {
    use crate::eager::{random_f64, Sample};
    let i = AttrValue::Int;
    let s = |v: &str| AttrValue::Str(v.to_string());
    let t = |v: &[i64]| AttrValue::Tuple(v.iter().map(|&x| AttrValue::Int(x)).collect());
    let bpi = |op: &'static str, dout: &[usize], w: &[usize], x: &[i64], seed: u64| {
        Sample::new(
            op,
            vec![
                random_f64(dout, seed, -1.0, 1.0),
                random_f64(w, seed + 1, -1.0, 1.0),
            ],
        )
        .attr("input_sizes", t(x))
        .attr("out_channel", i(w[0] as i64))
        .attr("kernel_size", t(&[w[2] as i64, w[3] as i64]))
    };
    let mut v = vec![
        bpi(
            "Conv2DBackpropInput",
            &[2, 3, 3, 2],
            &[3, 2, 2, 3],
            &[2, 2, 4, 4],
            300,
        ),
        bpi(
            "Conv2DTranspose",
            &[1, 4, 3, 3],
            &[4, 2, 3, 3],
            &[1, 4, 5, 6],
            302,
        )
        .attr("pad_mode", s("same"))
        .attr("stride", i(2))
        .attr("group", i(2)),
        bpi(
            "Conv2DTranspose",
            &[1, 2, 3, 4],
            &[2, 2, 2, 2],
            &[1, 2, 5, 5],
            304,
        )
        .attr("pad_mode", s("pad"))
        .attr("pad", t(&[1, 0, 0, 1]))
        .attr("stride", t(&[2, 1]))
        .attr("dilation", t(&[1, 2])),
        Sample::new(
            "Conv2DBackpropFilter",
            vec![
                random_f64(&[2, 3, 3, 2], 306, -1.0, 1.0),
                random_f64(&[2, 2, 4, 4], 307, -1.0, 1.0),
            ],
        )
        .attr("filter_sizes", t(&[3, 2, 2, 3]))
        .attr("out_channel", i(3))
        .attr("kernel_size", t(&[2, 3])),
    ];
    let c2 = |op: &'static str, a: &[usize], b2: &[usize], c: &[usize], seed: u64| {
        Sample::new(
            op,
            vec![
                random_f64(a, seed, -1.0, 1.0),
                random_f64(b2, seed + 1, -1.0, 1.0),
                random_f64(c, seed + 2, -1.0, 1.0),
            ],
        )
        .attr("out_channel", i(3))
        .attr("kernel_size", t(&[2, 3]))
        .attr("pad_mode", s("same"))
    };
    v.push(c2(
        "_Conv2DBackpropInput",
        &[1, 3, 3, 4],
        &[3, 2, 2, 3],
        &[1, 2, 3, 4],
        342,
    ));
    v.push(c2(
        "_Conv2DBackpropFilter",
        &[1, 3, 3, 4],
        &[1, 2, 3, 4],
        &[3, 2, 2, 3],
        345,
    ));
    v
}
