//! MindSpore's pooling backward primitives: `MaxPoolGrad`, `MaxPoolGradGrad`,
//! `AvgPoolGrad` and `AdaptiveAvgPool2DGrad`, what the gradient rules of
//! `MaxPool`, `AvgPool` and `AdaptiveAvgPool2D` emit (as MindSpore's bprops
//! do), with MindSpore's argument names and order. The window geometry and the
//! kernels are `conv`'s and `pool`'s (one implementation per pooling).
//!
//! Each has a gradient rule of its own, so gradients of gradients work:
//! `MaxPoolGrad` and `MaxPoolGradGrad` are each other's adjoints in the
//! gradient (the windows' maxima do not move under small changes of `x`),
//! `AvgPoolGrad`'s adjoint is `AvgPool`, `AdaptiveAvgPool2DGrad`'s
//! `AdaptiveAvgPool2D`.

use crate::schema::{why, Override, Schema};
use crate::{AttrDefault, AttrType};
use crate::{Family, PoolReduce, Traits};
use ir::{AbsVal, AttrValue, Dim};

use super::sizes::{sizes_abs, sizes_arg, sizes_dims};
use crate::defs::conv::{avg_pool_grad, infer_pool, max_pool_grad, max_pool_grad_grad, pool_geom};
use crate::defs::nn::common::{float_input, maybe_ranked, real_dispatch, tensor_out};
use crate::defs::pool::adaptive_avg_pool2d_grad;
use crate::defs::shape::{dims_of, fmt_dims, tensor_abs, unranked};
use crate::infer::InferCall;
use crate::kernel::{KValue, KernelCall};
use crate::{Attrs, Category, GNode, GradBuilder, GradCall, OpDef, OpError, OutputDef};

// ---------------------------------------------------------------------------
// Shape rules.

/// Checks that `got` (input `i`) fits `want` where both sizes are known.
fn check_dims(
    call: &InferCall,
    i: usize,
    got: &[Dim],
    want: &[Dim],
    what: &str,
) -> Result<(), OpError> {
    if super::conv::dims_fit(got, want) {
        return Ok(());
    }
    Err(OpError::input(
        i,
        format!(
            "`{}`: `{}` is {}, but {what} {}",
            call.op.name,
            call.input_name(i),
            fmt_dims(got),
            fmt_dims(want)
        ),
    ))
}

/// The attributes with MindSpore's implied `data_format="NCHW"`, for the
/// primitives that have no `data_format` (`MaxPoolGradGrad`).
fn nchw(attrs: &Attrs) -> Attrs {
    let mut values: Vec<(&'static str, AttrValue)> = attrs.iter().cloned().collect();
    if attrs.get("data_format").is_none() {
        values.push(("data_format", AttrValue::Str("NCHW".into())));
    }
    Attrs::new(values)
}

/// The dimensions the forward pooling of input 0 (`x_origin`) gives.
fn pooled(call: &InferCall, attrs: &Attrs) -> Result<Option<Vec<Dim>>, OpError> {
    let forward = InferCall {
        op: call.op,
        inputs: &call.inputs[..1],
        attrs,
    };
    Ok(match infer_pool(&forward)? {
        AbsVal::Tensor { shape, .. } => shape.dims().map(<[Dim]>::to_vec),
        _ => None,
    })
}

/// `MaxPoolGrad` / `AvgPoolGrad(x, out, dout)`: `x`'s shape, in the dtype of
/// input `dtype_of` (the max gradient computes in `x`'s, the mean's in
/// `dout`'s, as their kernels).
fn infer_pool_grad(call: &InferCall, dtype_of: usize) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let (xdtype, xd) = float_input(call, 0)?;
    dims_of(call, 1)?;
    let (gdtype, gd) = float_input(call, 2)?;
    let want = pooled(call, call.attrs)?;
    if let (Some(gd), Some(want)) = (&gd, &want) {
        check_dims(call, 2, gd, want, "the pooling of the input gives")?;
    }
    let dtype = if dtype_of == 0 { xdtype } else { gdtype };
    Ok(maybe_ranked(dtype, xd))
}

/// `MaxPoolGradGrad(x, out, grad)`: the pooled shape, in `x`'s dtype.
fn infer_max_pool_grad_grad(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let (xdtype, xd) = float_input(call, 0)?;
    dims_of(call, 1)?;
    let (_, gd) = float_input(call, 2)?;
    if let (Some(gd), Some(xd)) = (&gd, &xd) {
        check_dims(call, 2, gd, xd, "it must be shaped like `x_origin`,")?;
    }
    let want = pooled(call, &nchw(call.attrs))?;
    Ok(maybe_ranked(xdtype, want))
}

/// `AdaptiveAvgPool2DGrad(input_grad, orig_input_shape)`: the shape
/// `orig_input_shape` gives (the batch and channels, where it does not know
/// them, `input_grad`'s), in `input_grad`'s dtype.
fn infer_adaptive_avg_pool2d_grad(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let op = call.op.name;
    let (dtype, gd) = float_input(call, 0)?;
    let rank_error = |i: usize, what: String| {
        OpError::input(
            i,
            format!("`{op}` needs a 3-D or 4-D input ((N,) C, H, W), got {what}"),
        )
    };
    if let Some(gd) = &gd {
        if !(3..=4).contains(&gd.len()) {
            return Err(rank_error(0, format!("`input_grad` {}", fmt_dims(gd))));
        }
    }
    let Some(sizes) = sizes_abs(call, 1)? else {
        return Ok(match &gd {
            Some(gd) => {
                let r = gd.len();
                let mut dims = gd[..r - 2].to_vec();
                dims.extend([Dim::Unknown, Dim::Unknown]);
                tensor_abs(dtype, dims)
            }
            None => unranked(dtype),
        });
    };
    let r = sizes.len();
    if !(3..=4).contains(&r) {
        return Err(rank_error(1, format!("{r} sizes in `orig_input_shape`")));
    }
    if let Some(gd) = &gd {
        if gd.len() != r {
            return Err(OpError::input(
                1,
                format!(
                    "`{op}`: `orig_input_shape` has {r} sizes, but `input_grad` {} has rank {}",
                    fmt_dims(gd),
                    gd.len()
                ),
            ));
        }
    }
    if let Some(gd) = &gd {
        for k in 0..r - 2 {
            if let (Some(v), Dim::Known(g)) = (sizes[k], &gd[k]) {
                if v != *g {
                    return Err(OpError::input(
                        1,
                        format!(
                            "`{op}`: `orig_input_shape` gives size {v} to dimension {k}, where `input_grad` {} has {g}",
                            fmt_dims(gd)
                        ),
                    ));
                }
            }
        }
    }
    let fallback: Vec<Option<Dim>> = (0..r)
        .map(|k| {
            (k < r - 2)
                .then(|| gd.as_ref().map(|g| g[k].clone()))
                .flatten()
        })
        .collect();
    Ok(tensor_abs(dtype, sizes_dims(call, 1, &sizes, &fallback)?))
}

// ---------------------------------------------------------------------------
// Kernels.

fn check_pooled(op: &str, i: usize, got: &[usize], want: &[usize]) -> Result<(), OpError> {
    if got != want {
        return Err(OpError::input(
            i,
            format!("`{op}`: the gradient has shape {got:?}, but the pooling gives {want:?}"),
        ));
    }
    Ok(())
}

/// `MaxPoolGrad(x_origin, out_origin, grad)`: each window's gradient to its
/// first maximum, computed in `x_origin`'s dtype.
pub(crate) fn kernel_max_pool_grad(c: &KernelCall) -> Result<KValue, OpError> {
    let op = "MaxPoolGrad";
    let (x, dout) = (c.tensor(0)?, c.tensor(2)?);
    let g = pool_geom(op, x.shape(), c.attrs)?;
    let s = x.shape();
    check_pooled(op, 2, dout.shape(), &[s[0], s[1], g.oh, g.ow])?;
    let dout = dout.cast(x.dtype());
    let buffer = real_dispatch!(op, [x, dout], |xv, dv| max_pool_grad(xv, dv, &g));
    tensor_out(x.dtype(), s.to_vec(), buffer)
}

/// `MaxPoolGradGrad(x_origin, out_origin, grad)`: `grad` (shaped like
/// `x_origin`) read at each window's first maximum.
fn kernel_max_pool_grad_grad(c: &KernelCall) -> Result<KValue, OpError> {
    let op = "MaxPoolGradGrad";
    let (x, grad) = (c.tensor(0)?, c.tensor(2)?);
    let g = pool_geom(op, x.shape(), &nchw(c.attrs))?;
    let s = x.shape();
    if grad.shape() != s {
        return Err(OpError::input(
            2,
            format!(
                "`{op}`: `grad` has shape {:?}, `x_origin` {s:?}",
                grad.shape()
            ),
        ));
    }
    let grad = grad.cast(x.dtype());
    let buffer = real_dispatch!(op, [x, grad], |xv, gv| max_pool_grad_grad(xv, gv, &g));
    tensor_out(x.dtype(), vec![s[0], s[1], g.oh, g.ow], buffer)
}

/// `AvgPoolGrad(x, out, dout)`: each window's gradient spread evenly over the
/// cells its mean counted, in `dout`'s dtype.
pub(crate) fn kernel_avg_pool_grad(c: &KernelCall) -> Result<KValue, OpError> {
    let op = "AvgPoolGrad";
    let (x, dout) = (c.tensor(0)?, c.tensor(2)?);
    let g = pool_geom(op, x.shape(), c.attrs)?;
    let s = x.shape();
    check_pooled(op, 2, dout.shape(), &[s[0], s[1], g.oh, g.ow])?;
    let buffer = real_dispatch!(op, [dout], |dv| avg_pool_grad(dv, &g));
    tensor_out(dout.dtype(), s.to_vec(), buffer)
}

fn kernel_adaptive_avg_pool2d_grad(c: &KernelCall) -> Result<KValue, OpError> {
    let op = "AdaptiveAvgPool2DGrad";
    let dout = c.tensor(0)?;
    let sizes = sizes_arg(c, 1, op)?;
    let (d, r) = (dout.shape(), dout.rank());
    if !(3..=4).contains(&r) || sizes.len() != r || sizes[..r - 2] != d[..r - 2] {
        return Err(OpError::call(format!(
            "`{op}`: `orig_input_shape` {sizes:?} does not fit `input_grad` {d:?} (3-D or 4-D, the same batch and channels)"
        )));
    }
    adaptive_avg_pool2d_grad(op, &sizes, dout)
}

// ---------------------------------------------------------------------------
// Gradient rules.

/// The call's attributes of these names, to pass on.
fn pick(c: &GradCall, names: &[&str]) -> Vec<(&'static str, AttrValue)> {
    c.attrs
        .iter()
        .filter(|(k, _)| names.contains(k))
        .map(|(k, v)| (*k, v.clone()))
        .collect()
}

const WINDOW: &[&str] = &["kernel_size", "strides", "pad_mode"];

/// MindSpore's MaxPoolGrad bprop: `MaxPoolGradGrad(x, out, dout)` for `grad`;
/// `x` and `out` only choose the maxima.
fn grad_max_pool_grad(b: &mut dyn GradBuilder, c: &GradCall) -> Vec<Option<GNode>> {
    let (x, out) = (c.inputs[0], c.inputs[1]);
    let d = b.prim("MaxPoolGradGrad", &[x, out, c.dout], pick(c, WINDOW));
    vec![None, None, Some(d)]
}

/// MaxPoolGradGrad gathers `grad` at the maxima; its adjoint scatters there.
fn grad_max_pool_grad_grad(b: &mut dyn GradBuilder, c: &GradCall) -> Vec<Option<GNode>> {
    let (x, out) = (c.inputs[0], c.inputs[1]);
    let d = b.prim("MaxPoolGrad", &[x, out, c.dout], pick(c, WINDOW));
    vec![None, None, Some(d)]
}

/// AvgPoolGrad is linear in `dout`, the adjoint of AvgPool.
fn grad_avg_pool_grad(b: &mut dyn GradBuilder, c: &GradCall) -> Vec<Option<GNode>> {
    let attrs = c.attrs.iter().map(|(k, v)| (*k, v.clone())).collect();
    vec![None, None, Some(b.prim("AvgPool", &[c.dout], attrs))]
}

/// AdaptiveAvgPool2DGrad is linear in `input_grad`, the adjoint of
/// `AdaptiveAvgPool2D` to `input_grad`'s size. A size unknown before run time
/// is -1 (the input's size): a forward `AdaptiveAvgPool2D` leaves its output's
/// size unknown only where its `output_size` is -1.
fn grad_adaptive_avg_pool2d_grad(b: &mut dyn GradBuilder, c: &GradCall) -> Vec<Option<GNode>> {
    let spatial: Vec<AttrValue> = match c.input_values[0].shape().and_then(|s| s.rank()) {
        Some(r) if r >= 2 => {
            let dims = c.input_values[0].shape().unwrap();
            let dims = dims.dims().unwrap();
            dims[r - 2..]
                .iter()
                .map(|d| AttrValue::Int(d.known().unwrap_or(-1)))
                .collect()
        }
        _ => vec![AttrValue::Int(-1), AttrValue::Int(-1)],
    };
    let d = b.prim(
        "AdaptiveAvgPool2D",
        &[c.dout],
        vec![("output_size", AttrValue::Tuple(spatial))],
    );
    vec![Some(d), None]
}

// ---------------------------------------------------------------------------
// The table.

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
        "MaxPoolGrad",
        "The gradient of `MaxPool` (what its gradient rule emits): zeros shaped like `x_origin`, with each output's gradient added at the first maximum of its window.",
        Schema::ms(
            &[
                Override::attr("pad_mode", AttrType::Str(&["valid", "same"]), Some(AttrDefault::Str("valid")), why::STRINGS),
                Override::attr("data_format", AttrType::Str(&["NCHW", "NHWC"]), Some(AttrDefault::Str("NCHW")), why::STRINGS),
            ],
            &[
                ("x_origin", "MaxPool's input, `[N, C, H, W]`, float."),
                ("out_origin", "MaxPool's output (MindSpore passes it; the maxima are found again in `x_origin`)."),
                ("grad", "The gradient of MaxPool's output, shaped like it."),
                ("kernel_size", "The window's height and width: an int for both, or `(kh, kw)`. Default 1."),
                ("strides", "The step of the window: an int for both directions, or `(sh, sw)`. Default 1."),
                ("pad_mode", "\"valid\" (default): windows inside the input only, output `floor((H - kh)/s) + 1`; \"same\": output `ceil(H/s)`, padding split evenly with the extra cell at the bottom/right."),
                ("data_format", "The layout of `x` and the result. Default \"NCHW\", the only one MindSpore's CPU backend (and this one) supports."),
            ],
        ),
        |c| infer_pool_grad(c, 0),
        grad_max_pool_grad,
        kernel_max_pool_grad,
    )
    .in_family(Family::Pool2D {
        reduce: PoolReduce::Max,
        grad: true,
    }),
    backward(
        "MaxPoolGradGrad",
        "The gradient of `MaxPoolGrad` with respect to its `grad`: `grad` (shaped like `x_origin`) read at the first maximum of each MaxPool window, shaped like MaxPool's output.",
        Schema::ms(
            &[
                Override::attr("pad_mode", AttrType::Str(&["valid", "same"]), Some(AttrDefault::Str("valid")), why::STRINGS),
            ],
            &[
                ("x_origin", "MaxPool's input, `[N, C, H, W]`, float."),
                ("out_origin", "MaxPool's output (MindSpore passes it; the maxima are found again in `x_origin`)."),
                ("grad", "A tensor shaped like `x_origin`."),
                ("kernel_size", "The window's height and width: an int for both, or `(kh, kw)`. Default 1."),
                ("strides", "The step of the window: an int for both directions, or `(sh, sw)`. Default 1."),
                ("pad_mode", "\"valid\" (default): windows inside the input only, output `floor((H - kh)/s) + 1`; \"same\": output `ceil(H/s)`, padding split evenly with the extra cell at the bottom/right."),
            ],
        ),
        infer_max_pool_grad_grad,
        grad_max_pool_grad_grad,
        kernel_max_pool_grad_grad,
    ),
    backward(
        "AvgPoolGrad",
        "The gradient of `AvgPool` (what its gradient rule emits): each output's gradient spread evenly over the cells its mean counted (padding is not counted), shaped like `x`.",
        Schema::ms(
            &[
                Override::attr("pad_mode", AttrType::Str(&["valid", "same"]), Some(AttrDefault::Str("valid")), why::STRINGS),
                Override::attr("data_format", AttrType::Str(&["NCHW", "NHWC"]), Some(AttrDefault::Str("NCHW")), why::STRINGS),
            ],
            &[
                ("x", "AvgPool's input, `[N, C, H, W]` (its shape is used)."),
                ("out", "AvgPool's output."),
                ("dout", "The gradient of AvgPool's output, shaped like it."),
                ("kernel_size", "The window's height and width: an int for both, or `(kh, kw)`. Default 1."),
                ("strides", "The step of the window: an int for both directions, or `(sh, sw)`. Default 1."),
                ("pad_mode", "\"valid\" (default): windows inside the input only, output `floor((H - kh)/s) + 1`; \"same\": output `ceil(H/s)`, padding split evenly with the extra cell at the bottom/right."),
                ("data_format", "The layout of `x` and the result. Default \"NCHW\", the only one MindSpore's CPU backend (and this one) supports."),
            ],
        ),
        |c| infer_pool_grad(c, 2),
        grad_avg_pool_grad,
        kernel_avg_pool_grad,
    )
    .in_family(Family::Pool2D {
        reduce: PoolReduce::Avg,
        grad: true,
    }),
    backward(
        "AdaptiveAvgPool2DGrad",
        "The gradient of `AdaptiveAvgPool2D` (what its gradient rule emits): each output's gradient spread evenly over its window of an input of shape `orig_input_shape`; the windows follow from that shape and `input_grad`'s.",
        Schema::ms(
            &[],
            &[
                ("input_grad", "The gradient of AdaptiveAvgPool2D's output, `[N, C, H_out, W_out]` or `[C, H_out, W_out]`, float."),
                ("orig_input_shape", "The shape of AdaptiveAvgPool2D's input: a tuple of ints (`Shape(x)`) or a 1-D integer tensor (`TensorShape(x)`, as MindSpore's bprop passes it)."),
            ],
        ),
        infer_adaptive_avg_pool2d_grad,
        grad_adaptive_avg_pool2d_grad,
        kernel_adaptive_avg_pool2d_grad,
    ),
];

pub(crate) fn samples() -> Vec<crate::eager::Sample> {
    use crate::eager::{ints, random_f64, Sample};
    use tensor::DType;
    let s = |v: &str| AttrValue::Str(v.to_string());
    let t = |v: &[i64]| AttrValue::Tuple(v.iter().map(|&i| AttrValue::Int(i)).collect());
    let r = |shape: &[usize], seed: u64| random_f64(shape, seed, -1.0, 1.0);
    let shape_tuple =
        |v: &[i64]| KValue::Tuple(v.iter().map(|&d| ints(DType::I64, &[], &[d])).collect());
    let pool = |op: &'static str, x: &[usize], out: &[usize], g: &[usize], seed: u64| {
        Sample::new(op, vec![r(x, seed), r(out, seed + 1), r(g, seed + 2)])
    };
    vec![
        // Overlapping windows (3x3 every 2): a cell can be the maximum of
        // several, and its gradient is their sum.
        pool(
            "MaxPoolGrad",
            &[2, 2, 7, 7],
            &[2, 2, 3, 3],
            &[2, 2, 3, 3],
            146,
        )
        .attr("kernel_size", t(&[3, 3]))
        .attr("strides", t(&[2, 2])),
        pool(
            "MaxPoolGrad",
            &[1, 3, 5, 6],
            &[1, 3, 3, 3],
            &[1, 3, 3, 3],
            149,
        )
        .attr("kernel_size", t(&[2, 2]))
        .attr("strides", t(&[2, 2]))
        .attr("pad_mode", s("same")),
        pool(
            "MaxPoolGradGrad",
            &[2, 2, 7, 7],
            &[2, 2, 3, 3],
            &[2, 2, 7, 7],
            152,
        )
        .attr("kernel_size", t(&[3, 3]))
        .attr("strides", t(&[2, 2])),
        pool(
            "MaxPoolGradGrad",
            &[1, 2, 5, 5],
            &[1, 2, 3, 3],
            &[1, 2, 5, 5],
            155,
        )
        .attr("kernel_size", t(&[3, 2]))
        .attr("strides", t(&[2, 2]))
        .attr("pad_mode", s("same")),
        pool(
            "AvgPoolGrad",
            &[1, 2, 5, 5],
            &[1, 2, 3, 3],
            &[1, 2, 3, 3],
            140,
        )
        .attr("kernel_size", t(&[2, 2]))
        .attr("strides", t(&[2, 2]))
        .attr("pad_mode", s("same")),
        pool(
            "AvgPoolGrad",
            &[1, 1, 5, 6],
            &[1, 1, 2, 3],
            &[1, 1, 2, 3],
            143,
        )
        .attr("kernel_size", t(&[3, 2]))
        .attr("strides", t(&[2, 2])),
        Sample::new(
            "AdaptiveAvgPool2DGrad",
            vec![r(&[2, 2, 3, 2], 412), shape_tuple(&[2, 2, 7, 5])],
        ),
        Sample::new(
            "AdaptiveAvgPool2DGrad",
            vec![r(&[2, 3, 4], 413), ints(DType::I64, &[3], &[2, 5, 6])],
        ),
    ]
}
