//! MindSpore's backward primitives of the 3-D and argmax poolings, what their
//! gradient rules emit (as MindSpore's bprops do), with MindSpore's argument
//! names and order: `AvgPool3DGrad(origin_input_shape, grads)`,
//! `MaxPool3DGrad(x_origin, out_origin, grad)`,
//! `MaxPool3DGradWithArgmax(x, grads, argmax)`,
//! `MaxPoolGradWithArgmaxV2(x, grad, argmax)` and
//! `AdaptiveMaxPool2DGrad(y_grad, x, argmax)`. The windows are the forward
//! pooling's (`pool::window`, one implementation).
//!
//! Each is linear in its gradient input, with a gradient rule of its own, so
//! gradients of gradients work: `AvgPool3DGrad`'s adjoint is `AvgPool3D`; a
//! max pooling's gradient sends each output's gradient to the cell of its
//! window's maximum, so its adjoint picks the sensitivity at those cells
//! (`_PoolArgmaxGather`, with `_MaxPool3DArgmax` where the forward gives no
//! argmax).

use crate::schema::{why, Override, Schema};
use crate::Traits;
use ir::{AbsVal, AttrValue, DType, Dim};
use tensor::Tensor;

use super::window::{pooling, Kind};
use super::{avg_grad, like};
use crate::defs::backward::sizes::{sizes_abs, sizes_arg, sizes_dims};
use crate::defs::nn::common::ktensor;
use crate::defs::shape::{dims_of, tensor_abs};
use crate::infer::InferCall;
use crate::kernel::{KValue, KernelCall};
use crate::{
    AttrDefault, AttrType, Attrs, Category, GNode, GradBuilder, GradCall, OpDef, OpError,
    OutputDef, ParamDef,
};

// ---------------------------------------------------------------------------
// Kernels.

/// Zeros of `shape` (planes of the last `spatial` dimensions) with each
/// `dout` element added at the cell its `argmax` names (flat within its
/// plane): a max pooling's input gradient.
pub(super) fn scatter_at_argmax(
    op: &str,
    shape: &[usize],
    argmax: &Tensor,
    dout: &Tensor,
    spatial: usize,
) -> Result<KValue, OpError> {
    if dout.shape() != argmax.shape() {
        return Err(OpError::call(format!(
            "`{op}`: the gradient {:?} and argmax {:?} differ in shape",
            dout.shape(),
            argmax.shape()
        )));
    }
    let (planes, sv, av) = planes_of(op, shape, argmax.shape(), spatial)?;
    let (idx, dv) = (argmax.to_f64_vec(), dout.to_f64_vec());
    let mut dx = vec![0.0; planes * sv];
    for p in 0..planes {
        for k in 0..av {
            let i = idx[p * av + k] as usize;
            if i < sv {
                dx[p * sv + i] += dv[p * av + k];
            }
        }
    }
    Ok(ktensor(dout.dtype(), shape.to_vec(), dx))
}

/// The elements of `x` at the cells `argmax` names (flat within each plane
/// of the last `spatial` dimensions), shaped like `argmax`: the adjoint of
/// [`scatter_at_argmax`].
pub(super) fn gather_at_argmax(
    op: &str,
    x: &Tensor,
    argmax: &Tensor,
    spatial: usize,
) -> Result<KValue, OpError> {
    let (planes, sv, av) = planes_of(op, x.shape(), argmax.shape(), spatial)?;
    let (idx, xv) = (argmax.to_f64_vec(), x.to_f64_vec());
    let mut out = vec![0.0; planes * av];
    for p in 0..planes {
        for k in 0..av {
            let i = idx[p * av + k] as usize;
            if i < sv {
                out[p * av + k] = xv[p * sv + i];
            }
        }
    }
    Ok(ktensor(x.dtype(), argmax.shape().to_vec(), out))
}

/// `(planes, plane size of x, plane size of argmax)`: both have the same
/// rank and leading dimensions; the last `spatial` dimensions are the plane.
fn planes_of(
    op: &str,
    s: &[usize],
    a: &[usize],
    sp: usize,
) -> Result<(usize, usize, usize), OpError> {
    if sp > s.len() || s.len() != a.len() || s[..s.len() - sp] != a[..a.len() - sp] {
        return Err(OpError::call(format!(
            "`{op}`: argmax {a:?} does not fit the input {s:?} with {sp} spatial dimensions"
        )));
    }
    let lead = s.len() - sp;
    let planes: usize = s[..lead].iter().product();
    let sv: usize = s[lead..].iter().product();
    let av: usize = a[lead..].iter().product();
    Ok((planes, sv, av))
}

/// AvgPool3DGrad's attributes as AvgPool3D's: `pads` is its `pad`, or, in
/// "pad" mode, `pad_list` where given (MindSpore's bprop sets the forward's
/// `pad_list` and no `pads`).
fn avg_pool3d_attr_list(attrs: &[(&'static str, AttrValue)]) -> Vec<(&'static str, AttrValue)> {
    let pad_mode = attrs.iter().find(|(k, _)| *k == "pad_mode");
    let padded =
        pad_mode.is_none_or(|(_, m)| m.as_str().is_some_and(|m| m.eq_ignore_ascii_case("pad")));
    let list = attrs
        .iter()
        .find(|(k, v)| *k == "pad_list" && !matches!(v, AttrValue::None))
        .filter(|_| padded)
        .map(|(_, v)| v.clone());
    let given = list.is_some();
    attrs
        .iter()
        .filter(|(k, _)| *k != "pad_list" && !(*k == "pads" && given))
        .map(|(k, v)| (if *k == "pads" { "pad" } else { *k }, v.clone()))
        .chain(list.map(|v| ("pad", v)))
        .collect()
}

fn avg_pool3d_attrs(attrs: &Attrs) -> Attrs {
    let list: Vec<(&'static str, AttrValue)> = attrs.iter().cloned().collect();
    Attrs::new(avg_pool3d_attr_list(&list))
}

fn kernel_avg_pool3d_grad(c: &KernelCall) -> Result<KValue, OpError> {
    let op = "AvgPool3DGrad";
    let shape = sizes_arg(c, 0, op)?;
    if shape.len() != 5 {
        return Err(OpError::input(
            0,
            format!("`{op}`: `origin_input_shape` must be 5 sizes (N, C, D, H, W), got {shape:?}"),
        ));
    }
    avg_grad(
        Kind::AvgPool3D,
        &avg_pool3d_attrs(c.attrs),
        &shape,
        c.tensor(1)?,
        1,
    )
}

fn kernel_max_pool3d_grad(c: &KernelCall) -> Result<KValue, OpError> {
    let (x, dout) = (c.tensor(0)?, c.tensor(2)?);
    let p = pooling(Kind::MaxPool3D, c.attrs, x.shape())?;
    let (_, arg) = p.max(&x.to_f64_vec());
    let o = p.out();
    let s = x.shape();
    let argmax = Tensor::from_f64(
        vec![s[0], s[1], o[0], o[1], o[2]],
        arg.iter().map(|&i| i as f64).collect(),
    )
    .map_err(|e| OpError::call(format!("`MaxPool3DGrad`: {e}")))?;
    scatter_at_argmax("MaxPool3DGrad", s, &argmax, dout, 3)
}

/// `(x, grad, argmax)` of MaxPool3DGradWithArgmax / MaxPoolGradWithArgmaxV2,
/// and `(grad, x, argmax)` of AdaptiveMaxPool2DGrad.
fn kernel_argmax_grad(
    c: &KernelCall,
    op: &str,
    x: usize,
    grad: usize,
    spatial: usize,
) -> Result<KValue, OpError> {
    let (x, grad, argmax) = (c.tensor(x)?, c.tensor(grad)?, c.tensor(2)?);
    scatter_at_argmax(op, x.shape(), argmax, grad, spatial)
}

// ---------------------------------------------------------------------------
// Shape rules.

/// `AvgPool3DGrad(origin_input_shape, grads)`: the shape
/// `origin_input_shape` gives (the batch and channels, where it does not
/// know them, `grads`'), in `grads`' dtype.
fn infer_avg_pool3d_grad(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let (dtype, gd) = dims_of(call, 1)?;
    let lead = |k: usize| gd.as_ref().and_then(|d| d.get(k).cloned());
    let Some(sizes) = sizes_abs(call, 0)? else {
        return Ok(AbsVal::Tensor {
            dtype,
            shape: ir::Shape::Unranked,
        });
    };
    if sizes.len() != 5 {
        return Err(OpError::input(
            0,
            format!(
                "`AvgPool3DGrad`: `origin_input_shape` must be 5 sizes (N, C, D, H, W), got {}",
                sizes.len()
            ),
        ));
    }
    let dims: Vec<Dim> = sizes_dims(call, 0, &sizes, &[lead(0), lead(1)])?;
    Ok(tensor_abs(dtype, dims))
}

/// `x`'s shape (input `x`) in the gradient's dtype (input `grad`).
fn infer_like(x: usize, grad: usize) -> impl Fn(&InferCall) -> Result<AbsVal, OpError> {
    move |call| like(call, grad, x)
}

// ---------------------------------------------------------------------------
// Gradient rules.

fn spatial(n: i64) -> Vec<(&'static str, AttrValue)> {
    vec![("spatial", AttrValue::Int(n))]
}

/// `AvgPool3DGrad`'s adjoint: the AvgPool3D of the sensitivity.
fn grad_avg_pool3d_grad(b: &mut dyn GradBuilder, c: &GradCall) -> Vec<Option<GNode>> {
    let list: Vec<(&'static str, AttrValue)> = c.attrs.iter().cloned().collect();
    let attrs = avg_pool3d_attr_list(&list);
    vec![None, Some(b.prim("AvgPool3D", &[c.dout], attrs))]
}

/// `MaxPool3DGrad`'s adjoint in `grad`: the sensitivity at each window's
/// maximum.
fn grad_max_pool3d_grad(b: &mut dyn GradBuilder, c: &GradCall) -> Vec<Option<GNode>> {
    let attrs = c.attrs.iter().map(|(k, v)| (*k, v.clone())).collect();
    let am = b.prim("_MaxPool3DArgmax", &[c.inputs[0]], attrs);
    let d = b.prim("_PoolArgmaxGather", &[c.dout, am], spatial(3));
    vec![None, None, Some(d)]
}

/// The adjoint of a gradient from an argmax (input 2) in its gradient input
/// `grad`, of `inputs` inputs.
fn grad_from_argmax(
    b: &mut dyn GradBuilder,
    c: &GradCall,
    grad: usize,
    n: i64,
) -> Vec<Option<GNode>> {
    let d = b.prim("_PoolArgmaxGather", &[c.dout, c.inputs[2]], spatial(n));
    let mut out = vec![None; c.inputs.len()];
    out[grad] = Some(d);
    out
}

// ---------------------------------------------------------------------------
// The table.

const P_CEIL_MODE: ParamDef = ParamDef::attr(
    "ceil_mode",
    AttrType::Bool,
    Some(AttrDefault::Bool(false)),
    "Round the output size up (pad_mode=\"PAD\" only), as the forward MaxPool3D. Default false.",
);

const P_PAD_LIST: ParamDef = ParamDef::attr(
    "pad_list",
    AttrType::IntTuple,
    Some(AttrDefault::None),
    "The forward's padding `(head, tail, top, bottom, left, right)` as MindSpore's bprop sets it; in \"pad\" mode it is the padding (`pads` is not read). Default none.",
);

const AVG_POOL3D_GRAD_PARAMS: Schema = Schema::ms(
    &[
        Override::attr("kernel_size", AttrType::Ints, Some(AttrDefault::Int(1)), why::TYPE),
        Override::attr("strides", AttrType::Ints, Some(AttrDefault::Int(1)), why::TYPE),
        Override::attr("data_format", AttrType::Str(&["NCDHW"]), Some(AttrDefault::Str("NCDHW")), why::STRINGS),
        Override::attr("pad_mode", AttrType::Str(&["valid", "same", "pad"]), Some(AttrDefault::Str("pad")), why::STRINGS),
        Override::insert("pad_mode", P_PAD_LIST, "MindSpore's bprop sets the forward's `pad_list` on the primitive (and no `pads`), and its kernel reads it there"),
    ],
    &[
        ("origin_input_shape", "The shape of the AvgPool3D input, `(N, C, D, H, W)`, the shape of the result: a tuple of ints (`Shape(x)`) or a 1-D integer tensor."),
        ("grads", "The gradient of the AvgPool3D output, float."),
        ("kernel_size", "The window: an int or `(kd, kh, kw)`. Default 1."),
        ("strides", "The step of the window: an int or `(sd, sh, sw)`. Default 1."),
        ("pads", "The forward's padding for pad_mode=\"pad\": an int or `(head, tail, top, bottom, left, right)`. Default 0."),
        ("ceil_mode", "Round the output size up, as the forward. Default false."),
        ("count_include_pad", "Count the padded cells in each window's mean, as the forward. Default true."),
        ("divisor_override", "If positive, the divisor of every window's sum, as the forward. Default 0."),
        ("data_format", "The layout; only \"NCDHW\"."),
        ("pad_mode", "The forward's padding mode: \"valid\", \"same\" or \"pad\" (the default)."),
    ],
);

const MAX_POOL3D_GRAD_PARAMS: Schema = Schema::ms(
    &[
        Override::attr("pad_mode", AttrType::Str(&["VALID", "SAME", "PAD", "CALCULATED"]), Some(AttrDefault::Str("VALID")), why::STRINGS),
        Override::insert("pad_list", P_CEIL_MODE, "MindSpore's bprop sets the forward's `ceil_mode` on the primitive, and its kernel reads it there"),
        Override::attr("data_format", AttrType::Str(&["NCDHW"]), Some(AttrDefault::Str("NCDHW")), why::STRINGS),
    ],
    &[
        ("x_origin", "The MaxPool3D input, `[N, C, D, H, W]`, float."),
        ("out_origin", "The MaxPool3D output."),
        ("grad", "The gradient of the MaxPool3D output, of `x_origin`'s dtype."),
        ("kernel_size", "The window: an int or `(kd, kh, kw)`. Default 1."),
        ("strides", "The step of the window: an int or `(sd, sh, sw)`. Default 1."),
        ("pad_mode", "\"VALID\" (default), \"SAME\" or \"PAD\" (pad by `pad_list`; \"CALCULATED\", as MindSpore stores it, is \"PAD\"), any case."),
        ("pad_list", "Padding for pad_mode=\"PAD\": an int, `(d, h, w)` for both sides, or `(head, tail, top, bottom, left, right)`. Default 0."),
        ("data_format", "The layout; only \"NCDHW\"."),
    ],
);

const MAX_POOL3D_GRAD_ARGMAX_PARAMS: Schema = Schema::ms(
    &[
        Override::attr("ksize", AttrType::Ints, None, why::TYPE),
        Override::attr("strides", AttrType::Ints, None, why::TYPE),
        Override::attr("pads", AttrType::Ints, None, why::TYPE),
        Override::attr(
            "dilation",
            AttrType::Ints,
            Some(AttrDefault::Ints(&[1, 1, 1])),
            why::TYPE,
        ),
        Override::attr(
            "data_format",
            AttrType::Str(&["NCDHW"]),
            Some(AttrDefault::Str("NCDHW")),
            why::STRINGS,
        ),
    ],
    &[
        ("x", "The MaxPool3DWithArgmax input, `[N, C, D, H, W]`."),
        ("grads", "The gradient of its output."),
        (
            "argmax",
            "Its argmax: the flat index of each maximum within its `D·H·W` plane.",
        ),
        ("ksize", "The window: an int or `(kd, kh, kw)`."),
        (
            "strides",
            "The step of the window: an int or `(sd, sh, sw)`.",
        ),
        (
            "pads",
            "Padding on both sides of each dimension: an int or `(pd, ph, pw)`.",
        ),
        (
            "dilation",
            "The spacing of window cells. Default (1, 1, 1).",
        ),
        ("ceil_mode", "Round the output size up. Default false."),
        ("data_format", "The layout; only \"NCDHW\"."),
    ],
);

const MAX_POOL_GRAD_ARGMAX_V2_PARAMS: Schema = Schema::ms(
    &[
        Override::attr("kernel_size", AttrType::Ints, None, why::TYPE),
        Override::attr(
            "strides",
            AttrType::Ints,
            Some(AttrDefault::None),
            why::TYPE,
        ),
        Override::attr("pads", AttrType::Ints, Some(AttrDefault::Int(0)), why::TYPE),
        Override::attr(
            "dilation",
            AttrType::Ints,
            Some(AttrDefault::Ints(&[1, 1])),
            why::TYPE,
        ),
    ],
    &[
        ("x", "The MaxPoolWithArgmaxV2 input, `[N, C, H, W]`."),
        ("grad", "The gradient of its output."),
        (
            "argmax",
            "Its argmax: the flat index of each maximum within its `H·W` plane.",
        ),
        ("kernel_size", "The window: an int or `(kh, kw)`."),
        (
            "strides",
            "The step of the window: an int or `(sh, sw)`. Default none: the kernel size.",
        ),
        (
            "pads",
            "Padding on both sides: an int or `(ph, pw)`. Default 0.",
        ),
        ("dilation", "The spacing of window cells. Default (1, 1)."),
        ("ceil_mode", "Round the output size up. Default false."),
        (
            "argmax_type",
            "The dtype of `argmax`: int32 or int64 (default).",
        ),
    ],
);

pub const OPS: &[OpDef] = &[
    OpDef {
        name: "AvgPool3DGrad",
        category: Category::Backward,
        doc: "The gradient of AvgPool3D (what its gradient rule emits, as MindSpore's bprop): each output's gradient spread over its window, divided as the mean was, into a tensor of shape `origin_input_shape`. The attributes are the forward's (`pads` its `pad`).",
        schema: AVG_POOL3D_GRAD_PARAMS,
        variadic: false,
        output: OutputDef::Single,
        infer: infer_avg_pool3d_grad,
        grad: Some(grad_avg_pool3d_grad),
        kernel: Some(kernel_avg_pool3d_grad),
        traits: Traits::NONE,
    },
    OpDef {
        name: "MaxPool3DGrad",
        category: Category::Backward,
        doc: "The gradient of MaxPool3D (what its gradient rule emits, as MindSpore's bprop): zeros shaped like `x_origin`, each output's gradient added at its window's maximum (the first on ties).",
        schema: MAX_POOL3D_GRAD_PARAMS,
        variadic: false,
        output: OutputDef::Single,
        infer: |c| like(c, 0, 0),
        grad: Some(grad_max_pool3d_grad),
        kernel: Some(kernel_max_pool3d_grad),
        traits: Traits::NONE,
    },
    OpDef {
        name: "MaxPool3DGradWithArgmax",
        category: Category::Backward,
        doc: "The gradient of MaxPool3DWithArgmax (what its gradient rule emits, as MindSpore's bprop): zeros shaped like `x`, each element of `grads` added at the cell its `argmax` names.",
        schema: MAX_POOL3D_GRAD_ARGMAX_PARAMS,
        variadic: false,
        output: OutputDef::Single,
        infer: |c| infer_like(0, 1)(c),
        grad: Some(|b, c| grad_from_argmax(b, c, 1, 3)),
        kernel: Some(|c| kernel_argmax_grad(c, "MaxPool3DGradWithArgmax", 0, 1, 3)),
        traits: Traits::NONE,
    },
    OpDef {
        name: "MaxPoolGradWithArgmax",
        category: Category::Backward,
        doc: "The gradient of MaxPoolWithArgmax (what its gradient rule emits, as MindSpore's bprop): zeros shaped like `x`, each element of `grad` added at the cell its `argmax` names (flat within `C·H·W`).",
        schema: Schema::Own {
            params: &[
                ParamDef::input("x", "The MaxPoolWithArgmax input, `[N, C, H, W]`."),
                ParamDef::input("grad", "The gradient of its output."),
                ParamDef::input("argmax", "Its argmax: the flat index of each maximum within `C·H·W`."),
                super::P_ARGMAX_KERNEL,
                super::P_ARGMAX_STRIDES,
                super::P_ARGMAX_PAD_MODE,
            ],
            why: super::WHY_ARGMAX_OWN,
        },
        variadic: false,
        output: OutputDef::Single,
        infer: |c| infer_like(0, 1)(c),
        grad: Some(|b, c| grad_from_argmax(b, c, 1, 3)),
        kernel: Some(|c| kernel_argmax_grad(c, "MaxPoolGradWithArgmax", 0, 1, 3)),
        traits: Traits::NONE,
    },
    OpDef {
        name: "MaxPoolGradWithArgmaxV2",
        category: Category::Backward,
        doc: "The gradient of MaxPoolWithArgmaxV2 (what its gradient rule emits, as MindSpore's bprop): zeros shaped like `x`, each element of `grad` added at the cell its `argmax` names.",
        schema: MAX_POOL_GRAD_ARGMAX_V2_PARAMS,
        variadic: false,
        output: OutputDef::Single,
        infer: |c| infer_like(0, 1)(c),
        grad: Some(|b, c| grad_from_argmax(b, c, 1, 2)),
        kernel: Some(|c| kernel_argmax_grad(c, "MaxPoolGradWithArgmaxV2", 0, 1, 2)),
        traits: Traits::NONE,
    },
    OpDef {
        name: "AdaptiveMaxPool2DGrad",
        category: Category::Backward,
        doc: "The gradient of AdaptiveMaxPool2D (what its gradient rule emits, as MindSpore's bprop): zeros shaped like `x`, each element of `y_grad` added at the cell its `argmax` names.",
        schema: Schema::ms(
            &[],
            &[
                ("y_grad", "The gradient of the AdaptiveMaxPool2D output."),
                ("x", "The AdaptiveMaxPool2D input, `[N, C, H, W]` or `[C, H, W]`."),
                ("argmax", "Its argmax: the flat index of each maximum within its `H·W` plane."),
            ],
        ),
        variadic: false,
        output: OutputDef::Single,
        infer: |c| infer_like(1, 0)(c),
        grad: Some(|b, c| grad_from_argmax(b, c, 0, 2)),
        kernel: Some(|c| kernel_argmax_grad(c, "AdaptiveMaxPool2DGrad", 1, 0, 2)),
        traits: Traits::NONE,
    },
];

pub(crate) fn samples() -> Vec<crate::eager::Sample> {
    use crate::eager::{ints, random_f64, Sample};
    let i = AttrValue::Int;
    let b = AttrValue::Bool;
    let s = |v: &str| AttrValue::Str(v.to_string());
    let t = |v: &[i64]| AttrValue::Tuple(v.iter().map(|&x| AttrValue::Int(x)).collect());
    let r = |shape: &[usize], seed: u64| random_f64(shape, seed, -1.0, 1.0);
    let sizes = |v: &[i64]| KValue::Tuple(v.iter().map(|&d| ints(DType::I64, &[], &[d])).collect());
    vec![
        Sample::new(
            "AvgPool3DGrad",
            vec![sizes(&[1, 2, 4, 5, 4]), r(&[1, 2, 2, 2, 2], 420)],
        )
        .attr("kernel_size", i(2))
        .attr("strides", i(2))
        .attr("pad_mode", s("valid")),
        Sample::new(
            "AvgPool3DGrad",
            vec![sizes(&[1, 2, 3, 5, 4]), r(&[1, 2, 3, 3, 2], 421)],
        )
        .attr("kernel_size", t(&[2, 3, 2]))
        .attr("strides", t(&[1, 2, 2]))
        .attr("pads", t(&[1, 0, 1, 1, 0, 1]))
        .attr("ceil_mode", b(true))
        .attr("count_include_pad", b(false)),
        Sample::new(
            "MaxPool3DGrad",
            vec![
                r(&[1, 2, 4, 5, 4], 422),
                r(&[1, 2, 2, 2, 2], 423),
                r(&[1, 2, 2, 2, 2], 424),
            ],
        )
        .attr("kernel_size", i(2))
        .attr("strides", i(2)),
        Sample::new(
            "MaxPool3DGrad",
            vec![
                r(&[1, 1, 3, 5, 4], 425),
                r(&[1, 1, 2, 3, 2], 426),
                r(&[1, 1, 2, 3, 2], 427),
            ],
        )
        .attr("kernel_size", t(&[2, 3, 2]))
        .attr("strides", i(2))
        .attr("pad_mode", s("PAD"))
        .attr("pad_list", t(&[1, 1, 0]))
        .attr("ceil_mode", b(true)),
        Sample::new(
            "MaxPool3DGradWithArgmax",
            vec![
                r(&[1, 1, 2, 3, 3], 428),
                r(&[1, 1, 1, 1, 1], 429),
                ints(DType::I64, &[1, 1, 1, 1, 1], &[13]),
            ],
        )
        .attr("ksize", i(2))
        .attr("strides", i(2))
        .attr("pads", i(0)),
        Sample::new(
            "MaxPoolGradWithArgmaxV2",
            vec![
                r(&[1, 2, 3, 3], 430),
                r(&[1, 2, 1, 2], 431),
                ints(DType::I64, &[1, 2, 1, 2], &[0, 4, 3, 5]),
            ],
        )
        .attr("kernel_size", i(2))
        .attr("strides", t(&[2, 1])),
        Sample::new(
            "MaxPoolGradWithArgmax",
            vec![
                r(&[1, 2, 3, 3], 434),
                r(&[1, 2, 1, 1], 435),
                ints(DType::I32, &[1, 2, 1, 1], &[4, 17]),
            ],
        )
        .attr("kernel_size", i(2))
        .attr("strides", i(2)),
        Sample::new(
            "AdaptiveMaxPool2DGrad",
            vec![
                r(&[1, 2, 2, 1], 432),
                r(&[1, 2, 3, 3], 433),
                ints(DType::I64, &[1, 2, 2, 1], &[0, 4, 8, 2]),
            ],
        ),
    ]
}
