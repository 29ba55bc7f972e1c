//! More normalisations: `GroupNorm` (what `nn.GroupNorm` and
//! `mint.nn.GroupNorm` export), `InstanceNorm` (`nn.InstanceNorm2d`) and
//! `LayerNormExt` (`mint.nn.LayerNorm`); `RmsNorm`, `L2Normalize` and `LRN`
//! are in `norm::batch_rms_lrn`.
//!
//! GroupNorm, InstanceNorm and LayerNormExt normalise contiguous rows of the
//! input (a group of channels of one sample, one channel of one sample, the
//! trailing `normalized_shape` dimensions) with the biased variance, then
//! scale and shift by per-element parameters. Their gradient kernels take the
//! sensitivities of the statistics outputs too, so the gradients are exact
//! (MindSpore's bprops use `dout[0]` only; the two agree when the statistics
//! are not used downstream). Kernels compute in f64 and round to the dtype.

use crate::schema::{why, Override, Schema};
use crate::{Family, RowNorm, Traits};
use ir::{AbsVal, AttrValue, DType, Dim};

use crate::defs::nn::common::{float_input, given, grad_given, ktensor, maybe_ranked, opt_tensor};
use crate::defs::shape::{dims_may_equal, dims_of, fmt_dims, fmt_ints, tensor_abs};
use crate::infer::InferCall;
use crate::kernel::{KValue, KernelCall};
use crate::{
    AttrType, Attrs, Category, GNode, GradBuilder, GradCall, OpDef, OpError, OutputDef, ParamDef,
};

// ---------------------------------------------------------------------------
// Row normalisation.

/// Rows of `m` contiguous elements; `param(row, k)` is the index into the
/// scale and shift of element `k` of a row.
struct Rows<'a> {
    rows: usize,
    m: usize,
    param: &'a dyn Fn(usize, usize) -> usize,
}

/// `(y, mean, rstd)` of `x`, normalised per row.
fn rows_forward(
    r: &Rows,
    x: &[f64],
    gamma: Option<&[f64]>,
    beta: Option<&[f64]>,
    eps: f64,
) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    let mut y = vec![0.0; x.len()];
    let (mut means, mut rstds) = (vec![0.0; r.rows], vec![0.0; r.rows]);
    for row in 0..r.rows {
        let xs = &x[row * r.m..(row + 1) * r.m];
        let mean = xs.iter().sum::<f64>() / r.m as f64;
        let var = xs.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / r.m as f64;
        let rstd = 1.0 / (var + eps).sqrt();
        for (k, &v) in xs.iter().enumerate() {
            let p = (r.param)(row, k);
            let g = gamma.map_or(1.0, |g| g[p]);
            let b = beta.map_or(0.0, |b| b[p]);
            y[row * r.m + k] = (v - mean) * rstd * g + b;
        }
        means[row] = mean;
        rstds[row] = rstd;
    }
    (y, means, rstds)
}

/// `(dx, dgamma, dbeta)` of a row normalisation, given the sensitivities of
/// `y`, `mean` and `rstd` (`n_params` scale/shift entries).
#[allow(clippy::too_many_arguments)]
fn rows_backward(
    r: &Rows,
    x: &[f64],
    dy: &[f64],
    mean: &[f64],
    rstd: &[f64],
    gamma: Option<&[f64]>,
    dmean: &[f64],
    drstd: &[f64],
    n_params: usize,
) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    let mut dx = vec![0.0; x.len()];
    let (mut dgamma, mut dbeta) = (vec![0.0; n_params], vec![0.0; n_params]);
    let m = r.m as f64;
    for row in 0..r.rows {
        let (mu, rho) = (mean[row], rstd[row]);
        let (mut sum_g, mut sum_gx) = (0.0, 0.0);
        for k in 0..r.m {
            let e = row * r.m + k;
            let p = (r.param)(row, k);
            let xhat = (x[e] - mu) * rho;
            let g = dy[e] * gamma.map_or(1.0, |g| g[p]);
            sum_g += g;
            sum_gx += g * xhat;
            dgamma[p] += dy[e] * xhat;
            dbeta[p] += dy[e];
        }
        let (dm, dr) = (
            dmean.get(row).copied().unwrap_or(0.0),
            drstd.get(row).copied().unwrap_or(0.0),
        );
        for k in 0..r.m {
            let e = row * r.m + k;
            let p = (r.param)(row, k);
            let xhat = (x[e] - mu) * rho;
            let g = dy[e] * gamma.map_or(1.0, |g| g[p]);
            dx[e] = rho * (g - sum_g / m - xhat * sum_gx / m) + dm / m - dr * rho * rho * xhat / m;
        }
    }
    (dx, dgamma, dbeta)
}

fn check_eps(op: &str, name: &'static str, eps: f64) -> Result<(), OpError> {
    if eps.is_nan() || eps < 0.0 {
        return Err(OpError::attr(
            name,
            format!("`{op}`: `{name}` must be non-negative, got {eps}"),
        ));
    }
    Ok(())
}

/// The dtype of f32 statistics (MindSpore's kernels): f64 for an f64 input.
fn stat_dtype(x: DType) -> DType {
    if x == DType::F64 {
        DType::F64
    } else {
        DType::F32
    }
}

/// An optional parameter input `i` of a shape rule: float, of `want` dims.
pub(super) fn check_param(
    call: &InferCall,
    i: usize,
    dtype: DType,
    want: &[Dim],
) -> Result<(), OpError> {
    if !given(call, i) {
        return Ok(());
    }
    let op = call.op.name;
    let (d, dims) = dims_of(call, i)?;
    if !d.is_float() || (d != dtype && dtype != DType::F32) {
        return Err(OpError::input(
            i,
            format!(
                "`{op}` needs `{}` of a float dtype matching the input ({dtype}), got {d}",
                call.input_name(i)
            ),
        ));
    }
    if let Some(dims) = dims {
        if dims.len() != want.len() || dims.iter().zip(want).any(|(a, b)| !dims_may_equal(a, b)) {
            return Err(OpError::input(
                i,
                format!(
                    "`{op}` needs `{}` of shape {}, got {}",
                    call.input_name(i),
                    fmt_dims(want),
                    fmt_dims(&dims)
                ),
            ));
        }
    }
    Ok(())
}

fn vec_of(t: Option<&tensor::Tensor>) -> Option<Vec<f64>> {
    t.map(tensor::Tensor::to_f64_vec)
}

// ---------------------------------------------------------------------------
// GroupNorm

fn group_count(op: &str, attrs: &Attrs, c: Option<usize>) -> Result<usize, OpError> {
    let g = attrs.int("num_groups");
    if g < 1 {
        return Err(OpError::attr(
            "num_groups",
            format!("`{op}`: `num_groups` must be positive, got {g}"),
        ));
    }
    if let Some(c) = c {
        if c % g as usize != 0 {
            return Err(OpError::attr(
                "num_groups",
                format!("`{op}`: `num_groups` {g} does not divide the {c} channels"),
            ));
        }
    }
    Ok(g as usize)
}

fn infer_group_norm(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let op = call.op.name;
    let (dtype, xd) = float_input(call, 0)?;
    check_eps(op, "eps", call.attrs.f64("eps"))?;
    let c = xd.as_ref().and_then(|d| match d.get(1) {
        Some(Dim::Known(c)) => Some(*c as usize),
        _ => None,
    });
    let g = group_count(op, call.attrs, c)?;
    let n = match &xd {
        Some(d) if d.len() < 2 => {
            return Err(OpError::input(
                0,
                format!(
                    "`{op}` needs `input` of rank at least 2 (N, C, ...), got {}",
                    fmt_dims(d)
                ),
            ))
        }
        Some(d) => d[0].clone(),
        None => Dim::Unknown,
    };
    let cdim = xd.as_ref().map_or(Dim::Unknown, |d| d[1].clone());
    for i in [1, 2] {
        check_param(call, i, dtype, std::slice::from_ref(&cdim))?;
    }
    let stat = tensor_abs(dtype, vec![n, Dim::Known(g as i64)]);
    Ok(AbsVal::Tuple(vec![
        maybe_ranked(dtype, xd),
        stat.clone(),
        stat,
    ]))
}

/// `(n, c, spatial, groups)` of a GroupNorm input.
fn group_dims(
    op: &str,
    attrs: &Attrs,
    shape: &[usize],
) -> Result<(usize, usize, usize, usize), OpError> {
    if shape.len() < 2 {
        return Err(OpError::input(
            0,
            format!("`{op}` needs rank at least 2, got {shape:?}"),
        ));
    }
    let g = group_count(op, attrs, Some(shape[1]))?;
    Ok((shape[0], shape[1], shape[2..].iter().product(), g))
}

fn kernel_group_norm(c: &KernelCall) -> Result<KValue, OpError> {
    let op = "GroupNorm";
    let x = c.tensor(0)?;
    let (n, ch, s, g) = group_dims(op, c.attrs, x.shape())?;
    let (gamma, beta) = (vec_of(opt_tensor(c, 1)?), vec_of(opt_tensor(c, 2)?));
    for p in [&gamma, &beta].into_iter().flatten() {
        if p.len() != ch {
            return Err(OpError::call(format!(
                "`{op}`: weight and bias need {ch} elements"
            )));
        }
    }
    let cg = ch / g;
    let param = move |row: usize, k: usize| (row % g) * cg + k / s;
    let rows = Rows {
        rows: n * g,
        m: cg * s,
        param: &param,
    };
    let (y, mean, rstd) = rows_forward(
        &rows,
        &x.to_f64_vec(),
        gamma.as_deref(),
        beta.as_deref(),
        c.attrs.f64("eps"),
    );
    let d = x.dtype();
    Ok(KValue::Tuple(vec![
        ktensor(d, x.shape().to_vec(), y),
        ktensor(d, vec![n, g], mean),
        ktensor(d, vec![n, g], rstd),
    ]))
}

// ---------------------------------------------------------------------------
// InstanceNorm

fn infer_instance_norm(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let op = call.op.name;
    let (dtype, xd) = float_input(call, 0)?;
    let eps = call.attrs.f64("epsilon");
    if !(eps > 0.0 && eps <= 1.0) {
        return Err(OpError::attr(
            "epsilon",
            format!("`{op}`: `epsilon` must lie in (0, 1], got {eps}"),
        ));
    }
    let mo = call.attrs.f64("momentum");
    if !(0.0..=1.0).contains(&mo) {
        return Err(OpError::attr(
            "momentum",
            format!("`{op}`: `momentum` must lie in [0, 1], got {mo}"),
        ));
    }
    if let Some(d) = &xd {
        if d.len() < 3 {
            return Err(OpError::input(
                0,
                format!(
                    "`{op}` needs `input_x` of rank at least 3 (N, C, ...), got {}",
                    fmt_dims(d)
                ),
            ));
        }
    }
    let cdim = xd.as_ref().map_or(Dim::Unknown, |d| d[1].clone());
    for i in 1..5 {
        if !given(call, i) {
            return Err(OpError::input(
                i,
                format!("`{op}` needs `{}`", call.input_name(i)),
            ));
        }
        check_param(call, i, DType::F32, std::slice::from_ref(&cdim))?;
    }
    let nc = match &xd {
        Some(d) => crate::defs::shape::dim_mul(&d[0], &d[1]),
        None => Dim::Unknown,
    };
    let stat = tensor_abs(stat_dtype(dtype), vec![nc]);
    Ok(AbsVal::Tuple(vec![
        maybe_ranked(dtype, xd),
        stat.clone(),
        stat,
    ]))
}

fn kernel_instance_norm(c: &KernelCall) -> Result<KValue, OpError> {
    let op = "InstanceNorm";
    let x = c.tensor(0)?;
    let s = x.shape();
    if s.len() < 3 {
        return Err(OpError::input(
            0,
            format!("`{op}` needs rank at least 3, got {s:?}"),
        ));
    }
    let (n, ch, sp) = (s[0], s[1], s[2..].iter().product::<usize>());
    let (gamma, beta) = (c.tensor(1)?.to_f64_vec(), c.tensor(2)?.to_f64_vec());
    if gamma.len() != ch || beta.len() != ch {
        return Err(OpError::call(format!(
            "`{op}`: gamma and beta need {ch} elements"
        )));
    }
    let param = move |row: usize, _k: usize| row % ch;
    let rows = Rows {
        rows: n * ch,
        m: sp,
        param: &param,
    };
    let (y, mean, rstd) = rows_forward(
        &rows,
        &x.to_f64_vec(),
        Some(&gamma),
        Some(&beta),
        c.attrs.f64("epsilon"),
    );
    Ok(KValue::Tuple(vec![
        ktensor(x.dtype(), s.to_vec(), y),
        ktensor(stat_dtype(x.dtype()), vec![n * ch], mean),
        ktensor(stat_dtype(x.dtype()), vec![n * ch], rstd),
    ]))
}

// ---------------------------------------------------------------------------
// LayerNormExt

fn normalized(op: &str, attrs: &Attrs, rank: usize) -> Result<Vec<i64>, OpError> {
    let ns = attrs.ints("normalized_shape").unwrap_or_default();
    if ns.is_empty() || ns.len() > rank || ns.iter().any(|&d| d < 0) {
        return Err(OpError::attr(
            "normalized_shape",
            format!(
                "`{op}`: `normalized_shape` must be 1 to {rank} non-negative sizes (the trailing dimensions of `input`), got {}",
                fmt_ints(&ns)
            ),
        ));
    }
    Ok(ns)
}

fn infer_layer_norm_ext(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let op = call.op.name;
    let (dtype, xd) = float_input(call, 0)?;
    check_eps(op, "eps", call.attrs.f64("eps"))?;
    let Some(xd) = xd else {
        let u = maybe_ranked(dtype, None);
        return Ok(AbsVal::Tuple(vec![u.clone(), u.clone(), u]));
    };
    let ns = normalized(op, call.attrs, xd.len())?;
    let k = xd.len() - ns.len();
    for (j, &d) in ns.iter().enumerate() {
        if let Dim::Known(x) = xd[k + j] {
            if x != d {
                return Err(OpError::attr(
                    "normalized_shape",
                    format!(
                        "`{op}`: `normalized_shape` {} is not the trailing shape of `input` {}",
                        fmt_ints(&ns),
                        fmt_dims(&xd)
                    ),
                ));
            }
        }
    }
    let want: Vec<Dim> = ns.iter().map(|&d| Dim::Known(d)).collect();
    for i in [2, 3] {
        check_param(call, i, dtype, &want)?;
    }
    let mut stat = xd[..k].to_vec();
    stat.resize(xd.len(), Dim::Known(1));
    Ok(AbsVal::Tuple(vec![
        tensor_abs(dtype, xd),
        tensor_abs(dtype, stat.clone()),
        tensor_abs(dtype, stat),
    ]))
}

/// `(rows, m, stat shape)` of a LayerNormExt input.
fn layer_dims(attrs: &Attrs, shape: &[usize]) -> Result<(usize, usize, Vec<usize>), OpError> {
    let op = "LayerNormExt";
    let ns = normalized(op, attrs, shape.len())?;
    let k = shape.len() - ns.len();
    if shape[k..].iter().zip(&ns).any(|(&a, &b)| a as i64 != b) {
        return Err(OpError::attr(
            "normalized_shape",
            format!(
                "`{op}`: `normalized_shape` {} does not end {shape:?}",
                fmt_ints(&ns)
            ),
        ));
    }
    let mut stat = shape[..k].to_vec();
    stat.resize(shape.len(), 1);
    Ok((
        shape[..k].iter().product(),
        shape[k..].iter().product(),
        stat,
    ))
}

fn kernel_layer_norm_ext(c: &KernelCall) -> Result<KValue, OpError> {
    let x = c.tensor(0)?;
    let (rows, m, stat) = layer_dims(c.attrs, x.shape())?;
    let (gamma, beta) = (vec_of(opt_tensor(c, 1)?), vec_of(opt_tensor(c, 2)?));
    for p in [&gamma, &beta].into_iter().flatten() {
        if p.len() != m {
            return Err(OpError::call(format!(
                "`LayerNormExt`: weight and bias need {m} elements"
            )));
        }
    }
    let param = |_row: usize, k: usize| k;
    let r = Rows {
        rows,
        m,
        param: &param,
    };
    let (y, mean, rstd) = rows_forward(
        &r,
        &x.to_f64_vec(),
        gamma.as_deref(),
        beta.as_deref(),
        c.attrs.f64("eps"),
    );
    let d = x.dtype();
    Ok(KValue::Tuple(vec![
        ktensor(d, x.shape().to_vec(), y),
        ktensor(d, stat.clone(), mean),
        ktensor(d, stat, rstd),
    ]))
}

// ---------------------------------------------------------------------------
// The shared gradient kernel.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum NormKind {
    Group,
    Instance,
    Layer,
}

/// Which scale/shift entry element `k` of row `r` uses.
type ParamIndex = Box<dyn Fn(usize, usize) -> usize>;

/// `_XxxNormGrad(dy, x, mean, rstd, gamma, dmean, drstd)`: `(dx, dgamma, dbeta)`.
fn kernel_norm_grad(c: &KernelCall, kind: NormKind) -> Result<KValue, OpError> {
    let (dy, x, mean, rstd) = (c.tensor(0)?, c.tensor(1)?, c.tensor(2)?, c.tensor(3)?);
    let gamma = vec_of(opt_tensor(c, 4)?);
    let (dmean, drstd) = (c.tensor(5)?.to_f64_vec(), c.tensor(6)?.to_f64_vec());
    let s = x.shape();
    if dy.shape() != s {
        return Err(OpError::input(
            0,
            "normalisation gradient: dy and x differ in shape",
        ));
    }
    let (rows, m, n_params, group_param): (usize, usize, usize, ParamIndex) = match kind {
        NormKind::Group => {
            let (n, ch, sp, g) = group_dims("GroupNorm", c.attrs, s)?;
            let cg = ch / g;
            (
                n * g,
                cg * sp,
                ch,
                Box::new(move |row, k| (row % g) * cg + k / sp),
            )
        }
        NormKind::Instance => {
            if s.len() < 3 {
                return Err(OpError::input(1, "`InstanceNorm` needs rank at least 3"));
            }
            let (n, ch) = (s[0], s[1]);
            (
                n * ch,
                s[2..].iter().product(),
                ch,
                Box::new(move |row, _| row % ch),
            )
        }
        NormKind::Layer => {
            let (rows, m, _) = layer_dims(c.attrs, s)?;
            (rows, m, m, Box::new(|_, k| k))
        }
    };
    if mean.numel() != rows || rstd.numel() != rows {
        return Err(OpError::call(
            "normalisation gradient: statistics do not fit the input",
        ));
    }
    let r = Rows {
        rows,
        m,
        param: &*group_param,
    };
    let (dx, dgamma, dbeta) = rows_backward(
        &r,
        &x.to_f64_vec(),
        &dy.to_f64_vec(),
        &mean.to_f64_vec(),
        &rstd.to_f64_vec(),
        gamma.as_deref(),
        &dmean,
        &drstd,
        n_params,
    );
    let pshape = match kind {
        NormKind::Layer => {
            s[s.len() - normalized("LayerNormExt", c.attrs, s.len())?.len()..].to_vec()
        }
        _ => vec![n_params],
    };
    let pdtype = opt_tensor(c, 4)?.map_or(dy.dtype(), tensor::Tensor::dtype);
    Ok(KValue::Tuple(vec![
        ktensor(dy.dtype(), s.to_vec(), dx),
        ktensor(pdtype, pshape.clone(), dgamma),
        ktensor(pdtype, pshape, dbeta),
    ]))
}

fn infer_norm_grad(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let (dtype, _) = dims_of(call, 0)?;
    let xs = call.inputs[1].shape().unwrap_or(ir::Shape::Unranked);
    let pdims: Option<Vec<Dim>> = match call.op.name {
        "_LayerNormExtGrad" => call
            .attrs
            .ints("normalized_shape")
            .map(|v| v.iter().map(|&d| Dim::Known(d)).collect()),
        _ => xs.dims().and_then(|d| d.get(1).cloned()).map(|c| vec![c]),
    };
    let pdtype = if given(call, 4) {
        call.inputs[4].dtype().unwrap_or(dtype)
    } else {
        dtype
    };
    let p = maybe_ranked(pdtype, pdims);
    Ok(AbsVal::Tuple(vec![
        AbsVal::Tensor { dtype, shape: xs },
        p.clone(),
        p,
    ]))
}

/// The rule of GroupNorm, InstanceNorm and LayerNormExt: `(x, gamma, beta)`
/// are inputs `xi, gi, bi`; the statistics are outputs 1 and 2.
fn grad_norm(
    b: &mut dyn GradBuilder,
    c: &GradCall,
    helper: &str,
    (xi, gi, bi): (usize, usize, usize),
    attrs: Vec<(&'static str, AttrValue)>,
) -> Vec<Option<GNode>> {
    let dy = b.tuple_get(c.dout, 0);
    let dmean = b.tuple_get(c.dout, 1);
    let drstd = b.tuple_get(c.dout, 2);
    let mean = b.tuple_get(c.out, 1);
    let rstd = b.tuple_get(c.out, 2);
    let r = b.prim(
        helper,
        &[dy, c.inputs[xi], mean, rstd, c.inputs[gi], dmean, drstd],
        attrs,
    );
    let mut out = vec![None; c.inputs.len()];
    out[xi] = Some(b.tuple_get(r, 0));
    if grad_given(c, gi) {
        out[gi] = Some(b.tuple_get(r, 1));
    }
    if grad_given(c, bi) {
        out[bi] = Some(b.tuple_get(r, 2));
    }
    out
}

// ---------------------------------------------------------------------------
// The table.

const NORM_GRAD_INPUTS: [ParamDef; 7] = [
    ParamDef::input("dy", "The gradient of the normalised output."),
    ParamDef::input("x", "The forward input."),
    ParamDef::input("mean", "The forward `mean` output."),
    ParamDef::input(
        "rstd",
        "The forward `rstd` output (1/sqrt(variance + eps)).",
    ),
    ParamDef::input("gamma", "The forward scale, or none."),
    ParamDef::input("dmean", "The gradient of `mean`."),
    ParamDef::input("drstd", "The gradient of `rstd`."),
];

pub const OPS: &[OpDef] = &[
    OpDef {
        name: "GroupNorm",
        category: Category::NeuralNetwork,
        doc: "Group normalisation of `input` `[N, C, *]`: the channels are split into `num_groups` groups, each (sample, group) normalised with its mean and biased variance, then scaled by `weight` and shifted by `bias` per channel. Returns `(output, mean, rstd)`, the statistics of shape `[N, num_groups]` (`rstd` = 1/sqrt(variance + eps)).",
        schema: Schema::ms(
            &[],
            &[
                ("input", "The input, `[N, C, *]`, float."),
                ("num_groups", "The number of groups; must divide `C`."),
                ("weight", "The per-channel scale `[C]`, or none (ones)."),
                ("bias", "The per-channel shift `[C]`, or none (zeros)."),
                ("eps", "Added to the variance before the square root. Default 1e-5."),
            ],
        ),
        variadic: false,
        output: OutputDef::Tuple(&["output", "mean", "rstd"]),
        infer: infer_group_norm,
        grad: Some(|b, c| {
            let attrs = vec![
                ("num_groups", AttrValue::Int(c.attrs.int("num_groups"))),
            ];
            grad_norm(b, c, "_GroupNormGrad", (0, 1, 2), attrs)
        }),
        kernel: Some(kernel_group_norm),
        traits: Traits::NONE,
    },
    OpDef {
        name: "InstanceNorm",
        category: Category::NeuralNetwork,
        doc: "Instance normalisation (what `nn.InstanceNorm1d/2d/3d` export): each (sample, channel) of `input_x` `[N, C, *]` normalised over its spatial cells with its mean and biased variance, then scaled by `gamma` and shifted by `beta` per channel. Returns `(y, save_mean, save_variance)`, the per-instance mean and inverse standard deviation `1/sqrt(variance + epsilon)` as f32 (f64 for an f64 input) `[N·C]` (as MindSpore's GPU kernel, which keeps cuDNN's saved statistics); the running `mean`/`variance` are not updated. MindSpore's CPU backend has no InstanceNorm kernel.",
        schema: Schema::ms(
            &[],
            &[
                ("input_x", "The input, `[N, C, *]`, float."),
                ("gamma", "The per-channel scale `[C]`, f32."),
                ("beta", "The per-channel shift `[C]`, f32."),
                ("mean", "The running mean `[C]`, f32 (not used)."),
                ("variance", "The running variance `[C]`, f32 (not used)."),
                ("epsilon", "Added to the variance, in (0, 1]. Default 1e-5."),
                ("momentum", "The running statistics' momentum, in [0, 1]; checked only. Default 0.1."),
            ],
        ),
        variadic: false,
        output: OutputDef::Tuple(&["y", "save_mean", "save_variance"]),
        infer: infer_instance_norm,
        grad: Some(|b, c| {
            let mut g = grad_norm(b, c, "_InstanceNormGrad", (0, 1, 2), vec![]);
            g[3] = None;
            g[4] = None;
            g
        }),
        kernel: Some(kernel_instance_norm),
        traits: Traits::NONE,
    },
    OpDef {
        name: "LayerNormExt",
        category: Category::NeuralNetwork,
        doc: "Layer normalisation over the trailing `normalized_shape` dimensions of `input` (what `mint.nn.LayerNorm` exports), with the biased variance, scaled by `weight` and shifted by `bias` (none: ones and zeros). Returns `(output, mean, rstd)`, the statistics keeping the normalised dimensions as size 1 (`rstd` = 1/sqrt(variance + eps)).",
        schema: Schema::ms(
            &[Override::attr("normalized_shape", AttrType::IntTuple, None, why::TYPE)],
            &[
                ("input", "The input, float."),
                ("normalized_shape", "The trailing shape to normalise over."),
                ("weight", "The scale, of shape `normalized_shape`, or none."),
                ("bias", "The shift, of shape `normalized_shape`, or none."),
                ("eps", "Added to the variance before the square root. Default 1e-5."),
            ],
        ),
        variadic: false,
        output: OutputDef::Tuple(&["output", "mean", "rstd"]),
        infer: infer_layer_norm_ext,
        grad: Some(|b, c| {
            let attrs = vec![(
                "normalized_shape",
                c.attrs.get("normalized_shape").cloned().unwrap_or(AttrValue::None),
            )];
            grad_norm(b, c, "_LayerNormExtGrad", (0, 1, 2), attrs)
        }),
        kernel: Some(kernel_layer_norm_ext),
        traits: Traits::of(Family::RowNorm(RowNorm::LayerExt)),
    },
    OpDef {
        name: "_GroupNormGrad",
        category: Category::Internal,
        doc: "The gradients of GroupNorm with respect to `x`, `weight` and `bias`, including the statistics' sensitivities.",
        schema: Schema::own(&[
            NORM_GRAD_INPUTS[0], NORM_GRAD_INPUTS[1], NORM_GRAD_INPUTS[2], NORM_GRAD_INPUTS[3],
            NORM_GRAD_INPUTS[4], NORM_GRAD_INPUTS[5], NORM_GRAD_INPUTS[6],
            ParamDef::attr("num_groups", AttrType::Int, None, "As GroupNorm."),
        ]),
        variadic: false,
        output: OutputDef::Tuple(&["dx", "dweight", "dbias"]),
        infer: infer_norm_grad,
        grad: None,
        kernel: Some(|c| kernel_norm_grad(c, NormKind::Group)),
        traits: Traits::NONE,
    },
    OpDef {
        name: "_InstanceNormGrad",
        category: Category::Internal,
        doc: "The gradients of InstanceNorm with respect to `x`, `gamma` and `beta`, including the statistics' sensitivities.",
        schema: Schema::own(&NORM_GRAD_INPUTS),
        variadic: false,
        output: OutputDef::Tuple(&["dx", "dgamma", "dbeta"]),
        infer: infer_norm_grad,
        grad: None,
        kernel: Some(|c| kernel_norm_grad(c, NormKind::Instance)),
        traits: Traits::NONE,
    },
    OpDef {
        name: "_LayerNormExtGrad",
        category: Category::Internal,
        doc: "The gradients of LayerNormExt with respect to `input`, `weight` and `bias`, including the statistics' sensitivities.",
        schema: Schema::own(&[
            NORM_GRAD_INPUTS[0], NORM_GRAD_INPUTS[1], NORM_GRAD_INPUTS[2], NORM_GRAD_INPUTS[3],
            NORM_GRAD_INPUTS[4], NORM_GRAD_INPUTS[5], NORM_GRAD_INPUTS[6],
            ParamDef::attr("normalized_shape", AttrType::IntTuple, None, "As LayerNormExt."),
        ]),
        variadic: false,
        output: OutputDef::Tuple(&["dx", "dweight", "dbias"]),
        infer: infer_norm_grad,
        grad: None,
        kernel: Some(|c| kernel_norm_grad(c, NormKind::Layer)),
        traits: Traits::NONE,
    },
];

pub(crate) fn samples() -> Vec<crate::eager::Sample> {
    use crate::eager::{random_f64, Sample};
    let i = AttrValue::Int;
    let f = AttrValue::float;
    let t = |v: &[i64]| AttrValue::Tuple(v.iter().map(|&x| AttrValue::Int(x)).collect());
    let x = |shape: &[usize], seed: u64| random_f64(shape, seed, -1.0, 1.0);
    let pos = |shape: &[usize], seed: u64| random_f64(shape, seed, 0.5, 1.5);
    let none = KValue::Tuple(vec![]);
    vec![
        Sample::new(
            "GroupNorm",
            vec![x(&[2, 4, 3, 2], 600), pos(&[4], 601), x(&[4], 602)],
        )
        .attr("num_groups", i(2)),
        Sample::new(
            "GroupNorm",
            vec![x(&[2, 6, 5], 603), none.clone(), none.clone()],
        )
        .attr("num_groups", i(3))
        .attr("eps", f(1e-3)),
        Sample::new(
            "InstanceNorm",
            vec![
                x(&[2, 3, 2, 3], 604),
                pos(&[3], 605),
                x(&[3], 606),
                x(&[3], 607),
                pos(&[3], 608),
            ],
        ),
        Sample::new(
            "LayerNormExt",
            vec![x(&[2, 3, 4], 609), pos(&[3, 4], 610), x(&[3, 4], 611)],
        )
        .attr("normalized_shape", t(&[3, 4])),
        Sample::new(
            "LayerNormExt",
            vec![x(&[2, 3, 4], 612), none.clone(), x(&[4], 613)],
        )
        .attr("normalized_shape", t(&[4])),
    ]
}
