//! More pooling: `AvgPool3D`, `MaxPool3D`, `MaxPool3DWithArgmax` (what
//! `nn.MaxPool2d`/`nn.MaxPool1d` with pad_mode="pad" export),
//! `MaxPoolWithArgmax`, `MaxPoolWithArgmaxV2`, `AdaptiveAvgPool2D` and
//! `AdaptiveMaxPool2D`; their gradients are MindSpore's backward primitives
//! (`pool::grads`), whose own gradients use the helpers `_MaxPool3DArgmax`,
//! `_PoolArgmaxGather` and `_PoolArgmaxGrad` here.
//!
//! One engine serves them all (`pool::window`): each spatial dimension (three;
//! 2-D inputs use a depth of 1) gets a list of windows `(start, length,
//! dilation)` in input coordinates, possibly reaching into the padding; a
//! window's cells outside the input are skipped (max) or not counted (average,
//! unless `count_include_pad`). Max pools also give the flat index of each maximum
//! within its `D·H·W` plane (the first one on ties; `MaxPoolWithArgmax`'s
//! within `C·H·W`), which the gradient uses: MindSpore's MaxPool*Grad sends
//! each output's gradient to that cell.

pub(crate) mod grads;
pub(crate) mod window;

use crate::schema::{why, Override, Schema};
use crate::Traits;
use ir::{AbsVal, AttrValue, DType, Dim};
use tensor::Tensor;

use crate::defs::nn::common::{float_input, kints, ktensor};
use crate::defs::pool::window::{check_format, pooling, Kind, Pooling};
use crate::defs::shape::{dims_of, fmt_dims, tensor_abs, unranked};
use crate::infer::InferCall;
use crate::kernel::{KValue, KernelCall};
use crate::{
    AttrDefault, AttrType, Attrs, Category, GNode, GradBuilder, GradCall, OpDef, OpError,
    OutputDef, ParamDef,
};

// ---------------------------------------------------------------------------
// Shape rules.

fn check_argmax_type(op: &str, attrs: &Attrs) -> Result<(), OpError> {
    if let Some(AttrValue::DType(d)) = attrs.get("argmax_type") {
        if !matches!(d, DType::I32 | DType::I64) {
            return Err(OpError::attr(
                "argmax_type",
                format!("`{op}`: `argmax_type` must be int32 or int64, got {d}"),
            ));
        }
    }
    Ok(())
}

fn infer_pool(call: &InferCall, kind: Kind) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let op = call.op.name;
    let (dtype, xd) = if kind.with_argmax() && kind != Kind::AdaptiveMaxPool2D {
        let (d, dims) = dims_of(call, 0)?;
        if d.is_bool() {
            return Err(OpError::input(
                0,
                format!("`{op}` needs a numeric `x`, got {d}"),
            ));
        }
        (d, dims)
    } else {
        float_input(call, 0)?
    };
    check_argmax_type(op, call.attrs)?;
    if kind.rank5() {
        check_format(op, call.attrs)?;
    }
    let result = |dims: Option<Vec<Dim>>| {
        let y = match &dims {
            Some(d) => tensor_abs(dtype, d.clone()),
            None => unranked(dtype),
        };
        if kind.with_argmax() {
            let am = kind.argmax_dtype(call.attrs);
            let a = match dims {
                Some(d) => tensor_abs(am, d),
                None => unranked(am),
            };
            AbsVal::Tuple(vec![y, a])
        } else {
            y
        }
    };
    let Some(xd) = xd else {
        // Attribute errors still show: check them on a stand-in shape.
        let probe: Vec<usize> = if kind.rank5() {
            vec![1, 1, 64, 64, 64]
        } else {
            vec![1, 1, 64, 64]
        };
        pooling(kind, call.attrs, &probe)?;
        return Ok(result(None));
    };
    let ranks: &[usize] = if kind.rank5() { &[5] } else { &[3, 4] };
    if !ranks.contains(&xd.len()) {
        return Err(OpError::input(
            0,
            format!(
                "`{op}` needs a {} `{}`, got {}",
                if kind.rank5() {
                    "5-D (N, C, D, H, W)"
                } else {
                    "3-D (C, H, W) or 4-D (N, C, H, W)"
                },
                call.input_name(0),
                fmt_dims(&xd)
            ),
        ));
    }
    let spatial = xd.len() - if kind.rank5() { 3 } else { 2 };
    // Known spatial sizes give the output; unknown ones a probe.
    let concrete: Vec<usize> = xd
        .iter()
        .enumerate()
        .map(|(i, d)| match d {
            Dim::Known(n) => *n as usize,
            _ if i >= spatial => 64,
            _ => 1,
        })
        .collect();
    let p = pooling(kind, call.attrs, &concrete)?;
    let out = p.out();
    let mut dims: Vec<Dim> = xd[..spatial].to_vec();
    let first = if kind.rank5() { 0 } else { 1 };
    for j in first..3 {
        let d = &xd[spatial + j - first];
        dims.push(match d {
            Dim::Known(_) => Dim::Known(out[j] as i64),
            // Adaptive sizes do not depend on the input's.
            _ if matches!(kind, Kind::AdaptiveAvgPool2D | Kind::AdaptiveMaxPool2D) => {
                let v = call.attrs.ints("output_size").unwrap_or_default();
                let e = if v.len() == 1 { v[0] } else { v[j - 1] };
                if e > 0 {
                    Dim::Known(e)
                } else {
                    d.clone()
                }
            }
            _ => Dim::Unknown,
        });
    }
    Ok(result(Some(dims)))
}

// ---------------------------------------------------------------------------
// Kernels.

fn out_shape(shape: &[usize], p: &Pooling, rank5: bool) -> Vec<usize> {
    let o = p.out();
    let lead = shape.len() - if rank5 { 3 } else { 2 };
    let mut s = shape[..lead].to_vec();
    s.extend_from_slice(if rank5 { &o[..] } else { &o[1..] });
    s
}

fn kernel_pool(c: &KernelCall, kind: Kind) -> Result<KValue, OpError> {
    let x = c.tensor(0)?;
    let p = pooling(kind, c.attrs, x.shape())?;
    let shape = out_shape(x.shape(), &p, kind.rank5());
    let xv = x.to_f64_vec();
    if !kind.is_max() {
        return Ok(ktensor(x.dtype(), shape, p.avg(&xv)));
    }
    let (y, mut arg) = p.max(&xv);
    if kind == Kind::MaxPoolWithArgmax {
        // MaxPoolWithArgmax's argmax is flat within `C·H·W`, not the plane.
        let s = x.shape();
        let channels = s[s.len() - 3];
        let (svol, ovol) = (p.svol(), p.ovol());
        for (i, a) in arg.iter_mut().enumerate() {
            *a += ((i / ovol.max(1)) % channels * svol) as i64;
        }
    }
    let y = ktensor(x.dtype(), shape.clone(), y);
    if kind.with_argmax() {
        Ok(KValue::Tuple(vec![
            y,
            kints(kind.argmax_dtype(c.attrs), shape, arg),
        ]))
    } else {
        Ok(y)
    }
}

/// `_MaxPool3DArgmax(x)`: MaxPool3D's argmax (for its gradient).
fn kernel_max_pool3d_argmax(c: &KernelCall) -> Result<KValue, OpError> {
    let x = c.tensor(0)?;
    let p = pooling(Kind::MaxPool3D, c.attrs, x.shape())?;
    let shape = out_shape(x.shape(), &p, true);
    let (_, arg) = p.max(&x.to_f64_vec());
    Ok(kints(DType::I64, shape, arg))
}

/// The gradient of an average pooling of an input of shape `x`: `dout`
/// (input `i` of the call) spread over the windows.
fn avg_grad(
    kind: Kind,
    attrs: &Attrs,
    x: &[usize],
    dout: &Tensor,
    i: usize,
) -> Result<KValue, OpError> {
    let p = pooling(kind, attrs, x)?;
    let want = out_shape(x, &p, kind.rank5());
    if dout.shape() != want {
        return Err(OpError::input(
            i,
            format!(
                "`{}` gradient: the output gradient has shape {:?}, the pooling gives {want:?}",
                kind.name(),
                dout.shape()
            ),
        ));
    }
    let dx = p.avg_grad(&dout.to_f64_vec());
    Ok(ktensor(dout.dtype(), x.to_vec(), dx))
}

/// `AdaptiveAvgPool2DGrad`'s kernel (`defs::backward::pool`): `dout`, the
/// gradient of an `AdaptiveAvgPool2D` of an input of shape `x` (3-D or 4-D)
/// to `dout`'s height and width, spread over the windows.
pub(crate) fn adaptive_avg_pool2d_grad(
    op: &str,
    x: &[usize],
    dout: &Tensor,
) -> Result<KValue, OpError> {
    let d = dout.shape();
    if d.len() < 2 || x.len() != d.len() {
        return Err(OpError::call(format!(
            "`{op}`: the gradient {d:?} does not fit an input of shape {x:?}"
        )));
    }
    let size = [d[d.len() - 2] as i64, d[d.len() - 1] as i64];
    let attrs = Attrs::new(vec![(
        "output_size",
        AttrValue::Tuple(size.iter().map(|&v| AttrValue::Int(v)).collect()),
    )]);
    avg_grad(Kind::AdaptiveAvgPool2D, &attrs, x, dout, 0)
}

/// `_PoolArgmaxGrad(x_like, argmax, dout)`: zeros shaped like `x_like` with
/// each `dout` element added at its window's maximum.
fn kernel_argmax_grad(c: &KernelCall) -> Result<KValue, OpError> {
    let (like, argmax, dout) = (c.tensor(0)?, c.tensor(1)?, c.tensor(2)?);
    let spatial = usize::try_from(c.attrs.int("spatial")).unwrap_or(usize::MAX);
    grads::scatter_at_argmax("_PoolArgmaxGrad", like.shape(), argmax, dout, spatial)
}

/// `_PoolArgmaxGather(x, argmax)`: the elements of `x` at each window's
/// maximum, shaped like `argmax`.
fn kernel_argmax_gather(c: &KernelCall) -> Result<KValue, OpError> {
    let (x, argmax) = (c.tensor(0)?, c.tensor(1)?);
    let spatial = usize::try_from(c.attrs.int("spatial")).unwrap_or(usize::MAX);
    grads::gather_at_argmax("_PoolArgmaxGather", x, argmax, spatial)
}

// ---------------------------------------------------------------------------
// Gradient rules.

fn all_attrs(c: &GradCall) -> Vec<(&'static str, AttrValue)> {
    c.attrs.iter().map(|(k, v)| (*k, v.clone())).collect()
}

/// The call's attributes named in `names`, under the names `rename` gives.
fn pick(
    c: &GradCall,
    names: &[&'static str],
    rename: &[(&str, &'static str)],
) -> Vec<(&'static str, AttrValue)> {
    c.attrs
        .iter()
        .filter(|(k, _)| names.contains(k))
        .map(|(k, v)| {
            let name = rename
                .iter()
                .find(|(from, _)| from == k)
                .map_or(*k, |(_, to)| *to);
            (name, v.clone())
        })
        .collect()
}

/// MindSpore's bprop of a max pooling with argmax: its backward primitive
/// `op` of `(x, dy, argmax)` with the forward's attributes in `names`.
fn grad_with_argmax(
    b: &mut dyn GradBuilder,
    c: &GradCall,
    op: &'static str,
    names: &[&'static str],
) -> Vec<Option<GNode>> {
    let dy = b.tuple_get(c.dout, 0);
    let am = b.tuple_get(c.out, 1);
    let attrs = pick(c, names, &[]);
    vec![Some(b.prim(op, &[c.inputs[0], dy, am], attrs))]
}

/// MindSpore's AvgPool3D bprop: `AvgPool3DGrad(shape of x, dout)` with the
/// forward's attributes (`pad` as `pads`).
fn grad_avg_pool3d(b: &mut dyn GradBuilder, c: &GradCall) -> Vec<Option<GNode>> {
    let names = &[
        "kernel_size",
        "strides",
        "pad",
        "ceil_mode",
        "count_include_pad",
        "divisor_override",
        "data_format",
        "pad_mode",
    ];
    let attrs = pick(c, names, &[("pad", "pads")]);
    let shape = b.prim("Shape", &[c.inputs[0]], vec![]);
    vec![Some(b.prim("AvgPool3DGrad", &[shape, c.dout], attrs))]
}

/// MindSpore's MaxPool3D bprop: `MaxPool3DGrad(x, out, dout)` with the
/// forward's attributes (`ceil_mode` false where it is none).
fn grad_max_pool3d(b: &mut dyn GradBuilder, c: &GradCall) -> Vec<Option<GNode>> {
    let names = &[
        "kernel_size",
        "strides",
        "pad_mode",
        "pad_list",
        "data_format",
    ];
    let mut attrs = pick(c, names, &[]);
    let ceil = match c.attrs.get("ceil_mode") {
        Some(AttrValue::Bool(v)) => *v,
        _ => false,
    };
    attrs.push(("ceil_mode", AttrValue::Bool(ceil)));
    vec![Some(b.prim(
        "MaxPool3DGrad",
        &[c.inputs[0], c.out, c.dout],
        attrs,
    ))]
}

// ---------------------------------------------------------------------------
// The table.

const P_DATA_FORMAT3: ParamDef = ParamDef::attr(
    "data_format",
    AttrType::Str(&["NCDHW"]),
    Some(AttrDefault::Str("NCDHW")),
    "The layout; only \"NCDHW\".",
);

const AVG_POOL3D_PARAMS: Schema = Schema::ms(
    &[
        Override::attr("pad_mode", AttrType::Str(&["valid", "same", "pad"]), Some(AttrDefault::Str("valid")), why::STRINGS),
        Override::attr("data_format", AttrType::Str(&["NCDHW"]), Some(AttrDefault::Str("NCDHW")), why::STRINGS),
    ],
    &[
        ("input", "The input, `[N, C, D, H, W]`, float."),
        ("kernel_size", "The window: an int or `(kd, kh, kw)`. Default 1."),
        ("strides", "The step of the window: an int or `(sd, sh, sw)`. Default 1."),
        ("pad_mode", "\"valid\" (default): windows inside the input; \"same\": output `ceil(D/s)`, the padding split evenly (extra cell at the end); \"pad\": pad by `pad`."),
        ("pad", "Padding for pad_mode=\"pad\": an int or `(head, tail, top, bottom, left, right)`. Default 0."),
        ("ceil_mode", "Round the output size up rather than down (a last window starting in the input or the front padding). Default false."),
        ("count_include_pad", "Count the padded cells (of pad_mode \"pad\" or \"same\") in each window's mean. Default true."),
        ("divisor_override", "If positive, divide every window's sum by this instead. Default 0."),
        ("data_format", "The layout; only \"NCDHW\"."),
    ],
);
const MAX_POOL3D_PARAMS: Schema = Schema::own(&[
    ParamDef::input("x", "The input, `[N, C, D, H, W]`, float."),
    ParamDef::attr(
        "kernel_size",
        AttrType::Ints,
        Some(AttrDefault::Int(1)),
        "The window: an int or `(kd, kh, kw)`. Default 1.",
    ),
    ParamDef::attr(
        "strides",
        AttrType::Ints,
        Some(AttrDefault::Int(1)),
        "The step of the window: an int or `(sd, sh, sw)`. Default 1.",
    ),
    ParamDef::attr(
        "pad_mode",
        AttrType::Str(&["VALID", "SAME", "PAD", "CALCULATED"]),
        Some(AttrDefault::Str("VALID")),
        "\"VALID\" (default), \"SAME\" or \"PAD\" (pad by `pad_list`), any case.",
    ),
    ParamDef::attr(
        "pad_list",
        AttrType::Ints,
        Some(AttrDefault::Int(0)),
        "Padding for pad_mode=\"PAD\": an int, `(d, h, w)` for both sides, or `(head, tail, top, bottom, left, right)`. Default 0.",
    ),
    ParamDef::attr(
        "ceil_mode",
        AttrType::Bool,
        Some(AttrDefault::None),
        "Round the output size up (pad_mode=\"PAD\" only). Default none (false).",
    ),
    P_DATA_FORMAT3,
]);

const MAX_POOL3D_ARGMAX_PARAMS: Schema = Schema::ms(
    &[
        Override::attr("data_format", AttrType::Str(&["NCDHW"]), Some(AttrDefault::Str("NCDHW")), why::STRINGS),
    ],
    &[
        ("x", "The input, `[N, C, D, H, W]`, numeric."),
        ("ksize", "The window: an int or `(kd, kh, kw)`."),
        ("strides", "The step of the window: an int or `(sd, sh, sw)`."),
        ("pads", "Padding on both sides of each dimension: an int or `(pd, ph, pw)`, each at most half the kernel."),
        ("dilation", "The spacing of window cells: an int or `(dd, dh, dw)`. Default (1, 1, 1)."),
        ("ceil_mode", "Round the output size up. Default false."),
        ("data_format", "The layout; only \"NCDHW\"."),
        ("argmax_type", "The dtype of `argmax`: int32 or int64 (default)."),
    ],
);

/// MaxPoolWithArgmax's `kernel_size`, `strides` and `pad_mode` (also its
/// gradient's).
pub(super) const P_ARGMAX_KERNEL: ParamDef = ParamDef::attr(
    "kernel_size",
    AttrType::Ints,
    Some(AttrDefault::Int(1)),
    "The window: an int, `(kh, kw)` or `(1, kh, kw, 1)` (as MindSpore stores it). Default 1.",
);
pub(super) const P_ARGMAX_STRIDES: ParamDef = ParamDef::attr(
    "strides",
    AttrType::Ints,
    Some(AttrDefault::Int(1)),
    "The step of the window: an int, `(sh, sw)` or `(1, sh, sw, 1)`. Default 1.",
);
pub(super) const P_ARGMAX_PAD_MODE: ParamDef = ParamDef::attr(
    "pad_mode",
    AttrType::Str(&["valid", "same"]),
    Some(AttrDefault::Str("valid")),
    "\"valid\" (default): windows inside the input; \"same\": `ceil(H/s)` outputs, padding `(k - s) / 2` cells before (as MindSpore's CPU kernel); any case.",
);
/// Why MaxPoolWithArgmax's parameters are the registry's own.
pub(super) const WHY_ARGMAX_OWN: &str = "MindSpore 2.10's table has no signature for it (its Python class is deprecated) and names its gradient's inputs as MaxPoolGrad's; these are its constructor's arguments and its kernels' inputs";

const MAX_POOL_ARGMAX_PARAMS: Schema = Schema::Own {
    params: &[
        ParamDef::input("x", "The input, `[N, C, H, W]`, float."),
        P_ARGMAX_KERNEL,
        P_ARGMAX_STRIDES,
        P_ARGMAX_PAD_MODE,
        ParamDef::attr(
            "data_format",
            AttrType::Str(&["NCHW"]),
            Some(AttrDefault::Str("NCHW")),
            "The layout; only \"NCHW\".",
        ),
    ],
    why: WHY_ARGMAX_OWN,
};

const MAX_POOL_ARGMAX_V2_PARAMS: Schema = Schema::ms(
    &[],
    &[
        ("x", "The input, `[N, C, H, W]`, numeric."),
        ("kernel_size", "The window: an int or `(kh, kw)`."),
        (
            "strides",
            "The step of the window: an int or `(sh, sw)`. Default none: the kernel size.",
        ),
        (
            "pads",
            "Padding on both sides: an int or `(ph, pw)`, each at most half the kernel. Default 0.",
        ),
        (
            "dilation",
            "The spacing of window cells: an int or `(dh, dw)`. Default (1, 1).",
        ),
        ("ceil_mode", "Round the output size up. Default false."),
        (
            "argmax_type",
            "The dtype of `argmax`: int32 or int64 (default).",
        ),
    ],
);

pub const OPS: &[OpDef] = &[
    OpDef {
        name: "AvgPool3D",
        category: Category::NeuralNetwork,
        doc: "3-D average pooling of an NCDHW input (what `nn.AvgPool3d`, and `nn.AvgPool2d`/`nn.AvgPool1d` with pad_mode=\"pad\", export): the mean of each `kernel_size` window stepping by `strides`, with optional padding, ceil-mode sizes, `count_include_pad` and `divisor_override`.",
        schema: AVG_POOL3D_PARAMS,
        variadic: false,
        output: OutputDef::Single,
        infer: |c| infer_pool(c, Kind::AvgPool3D),
        grad: Some(grad_avg_pool3d),
        kernel: Some(|c| kernel_pool(c, Kind::AvgPool3D)),
        traits: Traits::NONE,
    },
    OpDef {
        name: "MaxPool3D",
        category: Category::NeuralNetwork,
        doc: "3-D max pooling of an NCDHW input (what `nn.MaxPool3d` exports): the maximum of each `kernel_size` window stepping by `strides`, with optional padding (`pad_list`, never selected) and ceil-mode sizes.",
        schema: Schema::ms(
            &[
                Override::attr("pad_mode", AttrType::Str(&["VALID", "SAME", "PAD", "CALCULATED"]), Some(AttrDefault::Str("VALID")), why::STRINGS),
                Override::attr("data_format", AttrType::Str(&["NCDHW"]), Some(AttrDefault::Str("NCDHW")), why::STRINGS),
            ],
            &[
                ("x", "The input, `[N, C, D, H, W]`, float."),
                ("kernel_size", "The window: an int or `(kd, kh, kw)`. Default 1."),
                ("strides", "The step of the window: an int or `(sd, sh, sw)`. Default 1."),
                ("pad_mode", "\"VALID\" (default), \"SAME\" or \"PAD\" (pad by `pad_list`; \"CALCULATED\", as MindSpore stores it, is \"PAD\"), any case."),
                ("pad_list", "Padding for pad_mode=\"PAD\": an int, `(d, h, w)` for both sides, or `(head, tail, top, bottom, left, right)`. Default 0."),
                ("ceil_mode", "Round the output size up (pad_mode=\"PAD\" only). Default none (false)."),
                ("data_format", "The layout; only \"NCDHW\"."),
            ],
        ),
        variadic: false,
        output: OutputDef::Single,
        infer: |c| infer_pool(c, Kind::MaxPool3D),
        grad: Some(grad_max_pool3d),
        kernel: Some(|c| kernel_pool(c, Kind::MaxPool3D)),
        traits: Traits::NONE,
    },
    OpDef {
        name: "MaxPool3DWithArgmax",
        category: Category::NeuralNetwork,
        doc: "3-D max pooling that also returns where each maximum is: `(output, argmax)`, `argmax` the flat index `d·H·W + h·W + w` within the input plane. Padding (`pads`, both sides) is never selected; windows may be dilated. `nn.MaxPool2d`/`nn.MaxPool1d` with pad_mode=\"pad\" export it.",
        schema: MAX_POOL3D_ARGMAX_PARAMS,
        variadic: false,
        output: OutputDef::Tuple(&["output", "argmax"]),
        infer: |c| infer_pool(c, Kind::MaxPool3DWithArgmax),
        grad: Some(|b, c| {
            let names = &["ksize", "strides", "pads", "dilation", "ceil_mode", "data_format"];
            grad_with_argmax(b, c, "MaxPool3DGradWithArgmax", names)
        }),
        kernel: Some(|c| kernel_pool(c, Kind::MaxPool3DWithArgmax)),
        traits: Traits::NONE,
    },
    OpDef {
        name: "MaxPoolWithArgmax",
        category: Category::NeuralNetwork,
        doc: "2-D max pooling of an NCHW input that also returns where each maximum is: `(output, argmax)`, `argmax` (int32) the flat index `c·H·W + h·W + w` within its batch item, as MindSpore's. \"same\" gives `ceil(H/s)` outputs, padding (never selected) `(k - s) / 2` cells before, as MindSpore's CPU kernel.",
        schema: MAX_POOL_ARGMAX_PARAMS,
        variadic: false,
        output: OutputDef::Tuple(&["output", "argmax"]),
        infer: |c| infer_pool(c, Kind::MaxPoolWithArgmax),
        grad: Some(|b, c| {
            let names = &["kernel_size", "strides", "pad_mode"];
            grad_with_argmax(b, c, "MaxPoolGradWithArgmax", names)
        }),
        kernel: Some(|c| kernel_pool(c, Kind::MaxPoolWithArgmax)),
        traits: Traits::NONE,
    },
    OpDef {
        name: "MaxPoolWithArgmaxV2",
        category: Category::NeuralNetwork,
        doc: "2-D max pooling of an NCHW input that also returns where each maximum is: `(output, argmax)`, `argmax` the flat index `h·W + w` within the input plane. Padding (`pads`, both sides) is never selected; windows may be dilated.",
        schema: MAX_POOL_ARGMAX_V2_PARAMS,
        variadic: false,
        output: OutputDef::Tuple(&["output", "argmax"]),
        infer: |c| infer_pool(c, Kind::MaxPoolWithArgmaxV2),
        grad: Some(|b, c| {
            let names = &["kernel_size", "strides", "pads", "dilation", "ceil_mode", "argmax_type"];
            grad_with_argmax(b, c, "MaxPoolGradWithArgmaxV2", names)
        }),
        kernel: Some(|c| kernel_pool(c, Kind::MaxPoolWithArgmaxV2)),
        traits: Traits::NONE,
    },
    OpDef {
        name: "AdaptiveAvgPool2D",
        category: Category::NeuralNetwork,
        doc: "2-D adaptive average pooling of a `[N, C, H, W]` or `[C, H, W]` input to `output_size`: output cell `i` averages input rows `⌊i·H/H_out⌋` to `⌈(i+1)·H/H_out⌉ - 1` (and columns likewise).",
        schema: Schema::ms(
            &[Override::inputs(&["input_x"], why::INPUT_NAMES)],
            &[
                ("input_x", "The input, `[N, C, H, W]` or `[C, H, W]`, float."),
                ("output_size", "The output's `(H, W)`, or an int for both; -1 (MindSpore's None) keeps the input's size."),
            ],
        ),
        variadic: false,
        output: OutputDef::Single,
        infer: |c| infer_pool(c, Kind::AdaptiveAvgPool2D),
        grad: Some(|b, c| {
            // MindSpore's bprop: `AdaptiveAvgPool2DGrad(dout, shape of x)`.
            let shape = b.prim("Shape", &[c.inputs[0]], vec![]);
            vec![Some(b.prim(
                "AdaptiveAvgPool2DGrad",
                &[c.dout, shape],
                vec![],
            ))]
        }),
        kernel: Some(|c| kernel_pool(c, Kind::AdaptiveAvgPool2D)),
        traits: Traits::NONE,
    },
    OpDef {
        name: "AdaptiveMaxPool2D",
        category: Category::NeuralNetwork,
        doc: "2-D adaptive max pooling of a `[N, C, H, W]` or `[C, H, W]` input to `output_size` (windows as AdaptiveAvgPool2D's), returning `(output, argmax)`, `argmax` (int64) the flat index `h·W + w` of each maximum in its plane.",
        schema: Schema::ms(
            &[],
            &[
                ("input", "The input, `[N, C, H, W]` or `[C, H, W]`, float."),
                ("output_size", "The output's `(H, W)`; -1 keeps the input's size."),
            ],
        ),
        variadic: false,
        output: OutputDef::Tuple(&["output", "argmax"]),
        infer: |c| infer_pool(c, Kind::AdaptiveMaxPool2D),
        grad: Some(|b, c| {
            // MindSpore's bprop: `AdaptiveMaxPool2DGrad(dy, x, argmax)`.
            let dy = b.tuple_get(c.dout, 0);
            let am = b.tuple_get(c.out, 1);
            vec![Some(b.prim("AdaptiveMaxPool2DGrad", &[dy, c.inputs[0], am], vec![]))]
        }),
        kernel: Some(|c| kernel_pool(c, Kind::AdaptiveMaxPool2D)),
        traits: Traits::NONE,
    },
    OpDef {
        name: "_MaxPool3DArgmax",
        category: Category::Internal,
        doc: "Where each MaxPool3D maximum is (int64 flat indices within the plane), for MaxPool3D's gradient.",
        schema: MAX_POOL3D_PARAMS,
        variadic: false,
        output: OutputDef::Single,
        infer: |c| {
            Ok(match infer_pool(c, Kind::MaxPool3D)? {
                AbsVal::Tensor { shape, .. } => AbsVal::Tensor {
                    dtype: DType::I64,
                    shape,
                },
                other => other,
            })
        },
        grad: None,
        kernel: Some(kernel_max_pool3d_argmax),
        traits: Traits::NONE,
    },
    OpDef {
        name: "_PoolArgmaxGrad",
        category: Category::Internal,
        doc: "The gradient of a max pooling from its argmax: zeros shaped like `x_like`, each `dout` element added at the cell its `argmax` names (flat within the plane).",
        schema: Schema::own(&[
            ParamDef::input("x_like", "The pooling's input, for its shape."),
            ParamDef::input("argmax", "The flat index of each maximum within its plane."),
            ParamDef::input("dout", "The gradient of the pooling's output."),
            ParamDef::attr(
                "spatial",
                AttrType::Int,
                Some(AttrDefault::Int(2)),
                "How many trailing dimensions form a plane (2 or 3). Default 2.",
            ),
        ]),
        variadic: false,
        output: OutputDef::Single,
        infer: |c| like(c, 2, 0),
        grad: Some(|b, c| {
            vec![
                None,
                None,
                Some(b.prim("_PoolArgmaxGather", &[c.dout, c.inputs[1]], all_attrs(c))),
            ]
        }),
        kernel: Some(kernel_argmax_grad),
        traits: Traits::NONE,
    },
    OpDef {
        name: "_PoolArgmaxGather",
        category: Category::Internal,
        doc: "The elements of `x` at the cells `argmax` names (flat within each plane), shaped like `argmax`: the adjoint of `_PoolArgmaxGrad`.",
        schema: Schema::own(&[
            ParamDef::input("x", "A tensor shaped like the pooling's input."),
            ParamDef::input("argmax", "The flat index of each maximum within its plane."),
            ParamDef::attr(
                "spatial",
                AttrType::Int,
                Some(AttrDefault::Int(2)),
                "How many trailing dimensions form a plane (2 or 3). Default 2.",
            ),
        ]),
        variadic: false,
        output: OutputDef::Single,
        infer: |c| like(c, 0, 1),
        grad: Some(|b, c| {
            vec![
                Some(b.prim(
                    "_PoolArgmaxGrad",
                    &[c.inputs[0], c.inputs[1], c.dout],
                    all_attrs(c),
                )),
                None,
            ]
        }),
        kernel: Some(kernel_argmax_gather),
        traits: Traits::NONE,
    },
];

/// A tensor with the dtype of input `d` and the shape of input `s`.
fn like(call: &InferCall, d: usize, s: usize) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let dtype = call.inputs[d]
        .dtype()
        .ok_or_else(|| OpError::input(d, format!("`{}` needs a tensor", call.op.name)))?;
    let shape = call.inputs[s].shape().unwrap_or(ir::Shape::Unranked);
    Ok(AbsVal::Tensor { dtype, shape })
}

pub(crate) fn samples() -> Vec<crate::eager::Sample> {
    use crate::eager::{random_f64, Sample};
    let i = AttrValue::Int;
    let b = AttrValue::Bool;
    let s = |v: &str| AttrValue::Str(v.to_string());
    let t = |v: &[i64]| AttrValue::Tuple(v.iter().map(|&x| AttrValue::Int(x)).collect());
    let x5 = |shape: &[usize], seed: u64| random_f64(shape, seed, -1.0, 1.0);
    vec![
        Sample::new("AvgPool3D", vec![x5(&[1, 2, 4, 5, 4], 400)])
            .attr("kernel_size", i(2))
            .attr("strides", i(2)),
        Sample::new("AvgPool3D", vec![x5(&[1, 2, 3, 5, 4], 401)])
            .attr("kernel_size", t(&[2, 3, 2]))
            .attr("strides", t(&[1, 2, 2]))
            .attr("pad_mode", s("pad"))
            .attr("pad", t(&[1, 0, 1, 1, 0, 1]))
            .attr("ceil_mode", b(true))
            .attr("count_include_pad", b(false)),
        Sample::new("AvgPool3D", vec![x5(&[1, 1, 3, 4, 5], 402)])
            .attr("kernel_size", i(2))
            .attr("strides", i(2))
            .attr("pad_mode", s("same"))
            .attr("divisor_override", i(3)),
        Sample::new("MaxPool3D", vec![x5(&[1, 2, 4, 5, 4], 403)])
            .attr("kernel_size", i(2))
            .attr("strides", i(2)),
        Sample::new("MaxPool3D", vec![x5(&[1, 2, 3, 5, 4], 404)])
            .attr("kernel_size", t(&[2, 3, 2]))
            .attr("strides", i(2))
            .attr("pad_mode", s("pad"))
            .attr("pad_list", t(&[1, 1, 0]))
            .attr("ceil_mode", b(true)),
        Sample::new("MaxPool3DWithArgmax", vec![x5(&[1, 2, 3, 6, 5], 405)])
            .attr("ksize", t(&[1, 3, 2]))
            .attr("strides", t(&[1, 2, 1]))
            .attr("pads", t(&[0, 1, 1])),
        Sample::new("MaxPoolWithArgmax", vec![x5(&[2, 3, 5, 6], 417)])
            .attr("kernel_size", i(2))
            .attr("strides", t(&[2, 1])),
        Sample::new("MaxPoolWithArgmax", vec![x5(&[1, 2, 5, 5], 418)])
            .attr("kernel_size", t(&[1, 3, 2, 1]))
            .attr("strides", t(&[1, 2, 2, 1]))
            .attr("pad_mode", s("SAME")),
        Sample::new("MaxPoolWithArgmaxV2", vec![x5(&[2, 2, 6, 7], 406)])
            .attr("kernel_size", i(3))
            .attr("strides", i(2))
            .attr("pads", i(1))
            .attr("dilation", t(&[1, 2])),
        Sample::new("AdaptiveAvgPool2D", vec![x5(&[2, 2, 7, 5], 407)])
            .attr("output_size", t(&[3, 2])),
        Sample::new("AdaptiveAvgPool2D", vec![x5(&[2, 5, 4], 408)])
            .attr("output_size", t(&[-1, 3])),
        Sample::new("AdaptiveMaxPool2D", vec![x5(&[1, 2, 7, 5], 409)])
            .attr("output_size", t(&[3, 2])),
        Sample::new(
            "_PoolArgmaxGrad",
            vec![
                x5(&[1, 2, 3, 3], 414),
                crate::eager::ints(DType::I64, &[1, 2, 2, 1], &[0, 4, 8, 2]),
                x5(&[1, 2, 2, 1], 415),
            ],
        ),
        Sample::new(
            "_PoolArgmaxGather",
            vec![
                x5(&[1, 2, 3, 3], 416),
                crate::eager::ints(DType::I64, &[1, 2, 2, 1], &[0, 4, 8, 2]),
            ],
        ),
    ]
}
