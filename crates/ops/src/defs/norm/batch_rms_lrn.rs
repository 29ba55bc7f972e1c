//! More normalisations: `BatchNormExt` (what `mint.nn.BatchNorm2d` exports),
//! `RmsNorm`, `L2Normalize` and `LRN` (what `nn.LRN` exports), with their
//! gradients (`_RmsNormGrad` takes `rstd`'s sensitivity
//! too; L2Normalize's is built from primitives, so it has second derivatives).
//! Kernels compute in f64 and round to the dtype.

use crate::batch::BatchRule;
use crate::schema::{why, Override, Schema};
use crate::Gradgen;
use crate::{Family, RowNorm, Traits};
use ir::{AbsVal, AttrValue, DType, Dim};

use crate::defs::nn::common::{float_input, ktensor, maybe_ranked, opt_tensor};
use crate::defs::shape::{dims_may_equal, dims_of, fmt_dims, fmt_ints, op_axis, tensor_abs};
use crate::infer::InferCall;
use crate::kernel::{KValue, KernelCall};
use crate::{
    AttrDefault, AttrType, Attrs, Category, GNode, GradBuilder, GradCall, OpDef, OpError,
    OutputDef, ParamDef,
};

/// The dtype of f32 statistics (MindSpore's kernels): f64 for an f64 input.
fn stat_dtype(x: DType) -> DType {
    if x == DType::F64 {
        DType::F64
    } else {
        DType::F32
    }
}

// ---------------------------------------------------------------------------
// RmsNorm

fn rms_dims(shape: &[usize], g: &[usize]) -> Result<(usize, usize, Vec<usize>), OpError> {
    if g.len() > shape.len() || shape[shape.len() - g.len()..] != *g {
        return Err(OpError::input(
            1,
            format!("`RmsNorm`: `gamma` {g:?} is not the trailing shape of `x` {shape:?}"),
        ));
    }
    let k = shape.len() - g.len();
    let mut stat = shape[..k].to_vec();
    stat.resize(shape.len(), 1);
    Ok((
        shape[..k].iter().product(),
        shape[k..].iter().product(),
        stat,
    ))
}

fn infer_rms_norm(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let op = call.op.name;
    let (dtype, xd) = float_input(call, 0)?;
    let (gdtype, gd) = float_input(call, 1)?;
    if gdtype != dtype {
        return Err(OpError::input(
            1,
            format!("`{op}` needs `gamma` of the dtype of `x`, {dtype}, got {gdtype}"),
        ));
    }
    let eps = call.attrs.f64("epsilon");
    if !(eps > 0.0 && eps <= 1.0) {
        return Err(OpError::attr(
            "epsilon",
            format!("`{op}`: `epsilon` must lie in (0, 1], got {eps}"),
        ));
    }
    let (Some(xd), Some(gd)) = (xd, gd) else {
        return Ok(AbsVal::Tuple(vec![
            maybe_ranked(dtype, None),
            maybe_ranked(stat_dtype(dtype), None),
        ]));
    };
    let k = xd.len().checked_sub(gd.len()).ok_or_else(|| {
        OpError::input(
            1,
            format!(
                "`{op}`: `gamma` {} has a higher rank than `x` {}",
                fmt_dims(&gd),
                fmt_dims(&xd)
            ),
        )
    })?;
    if xd[k..].iter().zip(&gd).any(|(a, b)| !dims_may_equal(a, b)) {
        return Err(OpError::input(
            1,
            format!(
                "`{op}`: `gamma` {} is not the trailing shape of `x` {}",
                fmt_dims(&gd),
                fmt_dims(&xd)
            ),
        ));
    }
    let mut stat = xd[..k].to_vec();
    stat.resize(xd.len(), Dim::Known(1));
    Ok(AbsVal::Tuple(vec![
        tensor_abs(dtype, xd),
        tensor_abs(stat_dtype(dtype), stat),
    ]))
}

#[allow(clippy::needless_range_loop)]
fn kernel_rms_norm(c: &KernelCall) -> Result<KValue, OpError> {
    let (x, g) = (c.tensor(0)?, c.tensor(1)?);
    let (rows, m, stat) = rms_dims(x.shape(), g.shape())?;
    let eps = c.attrs.f64("epsilon");
    let (xv, gv) = (x.to_f64_vec(), g.to_f64_vec());
    let mut y = vec![0.0; xv.len()];
    let mut rstd = vec![0.0; rows];
    for r in 0..rows {
        let xs = &xv[r * m..(r + 1) * m];
        let ms = xs.iter().map(|v| v * v).sum::<f64>() / m as f64;
        let rho = 1.0 / (ms + eps).sqrt();
        for k in 0..m {
            y[r * m + k] = xs[k] * rho * gv[k];
        }
        rstd[r] = rho;
    }
    Ok(KValue::Tuple(vec![
        ktensor(x.dtype(), x.shape().to_vec(), y),
        ktensor(stat_dtype(x.dtype()), stat, rstd),
    ]))
}

/// `_RmsNormGrad(dy, x, rstd, gamma, drstd)`: `(dx, dgamma)`.
#[allow(clippy::needless_range_loop)]
fn kernel_rms_norm_grad(c: &KernelCall) -> Result<KValue, OpError> {
    let (dy, x, rstd, g, drstd) = (
        c.tensor(0)?,
        c.tensor(1)?,
        c.tensor(2)?,
        c.tensor(3)?,
        c.tensor(4)?,
    );
    let (rows, m, _) = rms_dims(x.shape(), g.shape())?;
    if dy.shape() != x.shape() || rstd.numel() != rows {
        return Err(OpError::call("`_RmsNormGrad`: inconsistent shapes"));
    }
    let (xv, dyv, rv, gv, drv) = (
        x.to_f64_vec(),
        dy.to_f64_vec(),
        rstd.to_f64_vec(),
        g.to_f64_vec(),
        drstd.to_f64_vec(),
    );
    let mut dx = vec![0.0; xv.len()];
    let mut dg = vec![0.0; m];
    for r in 0..rows {
        let rho = rv[r];
        let mut s = 0.0;
        for k in 0..m {
            let e = r * m + k;
            s += dyv[e] * gv[k] * xv[e];
            dg[k] += dyv[e] * xv[e] * rho;
        }
        // d rho / d x_k = -rho³ x_k / m
        let coef = (s + drv.get(r).copied().unwrap_or(0.0)) * rho * rho * rho / m as f64;
        for k in 0..m {
            let e = r * m + k;
            dx[e] = dyv[e] * gv[k] * rho - coef * xv[e];
        }
    }
    Ok(KValue::Tuple(vec![
        ktensor(dy.dtype(), x.shape().to_vec(), dx),
        ktensor(g.dtype(), g.shape().to_vec(), dg),
    ]))
}

// ---------------------------------------------------------------------------
// L2Normalize

fn l2_axis(op: &str, attrs: &Attrs, rank: usize) -> Result<usize, OpError> {
    let axes = attrs.ints("axis").unwrap_or_default();
    if axes.len() != 1 {
        return Err(OpError::attr(
            "axis",
            format!(
                "`{op}`: `axis` must name exactly one dimension (as MindSpore), got {}",
                fmt_ints(&axes)
            ),
        ));
    }
    op_axis(op, axes[0], rank, "axis")
}

fn infer_l2_normalize(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let op = call.op.name;
    let (dtype, xd) = float_input(call, 0)?;
    if let Some(d) = &xd {
        if d.is_empty() {
            return Err(OpError::input(
                0,
                format!("`{op}` needs `x` of rank at least 1"),
            ));
        }
        l2_axis(op, call.attrs, d.len())?;
    }
    Ok(maybe_ranked(dtype, xd))
}

fn kernel_l2_normalize(c: &KernelCall) -> Result<KValue, OpError> {
    let x = c.tensor(0)?;
    let s = x.shape();
    let axis = l2_axis("L2Normalize", c.attrs, s.len())?;
    let eps = c.attrs.f64("epsilon");
    let (outer, inner) = crate::defs::nn::groups(s, &[axis]);
    let xv = x.to_f64_vec();
    let mut y = vec![0.0; xv.len()];
    for &o in &outer {
        let ss: f64 = inner.iter().map(|&i| xv[o + i] * xv[o + i]).sum();
        let d = ss.max(eps).sqrt();
        for &i in &inner {
            y[o + i] = xv[o + i] / d;
        }
    }
    Ok(ktensor(x.dtype(), s.to_vec(), y))
}

/// `dx = dy·r - x·r³·Σ(dy·x)` where the sum of squares exceeds `epsilon`
/// (`r = 1/sqrt(max(Σx², epsilon))`), built from primitives.
fn grad_l2_normalize(b: &mut dyn GradBuilder, c: &GradCall) -> Vec<Option<GNode>> {
    let x = c.inputs[0];
    let axis = c.attrs.get("axis").cloned().unwrap_or(AttrValue::Int(0));
    let red = |b: &mut dyn GradBuilder, v: GNode| {
        b.prim(
            "ReduceSum",
            &[v],
            vec![("axis", axis.clone()), ("keep_dims", AttrValue::Bool(true))],
        )
    };
    let eps = b.scalar(c.attrs.f64("epsilon"));
    let sq = b.prim("Square", &[x], vec![]);
    let ss = red(b, sq);
    let m = b.prim("Maximum", &[ss, eps], vec![]);
    let r = b.prim("Rsqrt", &[m], vec![]);
    let first = b.prim("Mul", &[c.dout, r], vec![]);
    let dyx = b.prim("Mul", &[c.dout, x], vec![]);
    let t = red(b, dyx);
    let r2 = b.prim("Square", &[r], vec![]);
    let r3 = b.prim("Mul", &[r2, r], vec![]);
    let k = b.prim("Mul", &[r3, t], vec![]);
    let above = b.prim("Greater", &[ss, eps], vec![]);
    let zeros = b.prim("ZerosLike", &[k], vec![]);
    let k = b.prim("Select", &[above, k, zeros], vec![]);
    let second = b.prim("Mul", &[x, k], vec![]);
    vec![Some(b.prim("Sub", &[first, second], vec![]))]
}

// ---------------------------------------------------------------------------
// LRN

fn lrn_params(op: &str, attrs: &Attrs) -> Result<(usize, f64, f64, f64), OpError> {
    let r = attrs.int("depth_radius");
    if r < 0 {
        return Err(OpError::attr(
            "depth_radius",
            format!("`{op}`: `depth_radius` must be non-negative, got {r}"),
        ));
    }
    Ok((
        r as usize,
        attrs.f64("bias"),
        attrs.f64("alpha"),
        attrs.f64("beta"),
    ))
}

fn infer_lrn(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let op = call.op.name;
    let (dtype, xd) = float_input(call, 0)?;
    lrn_params(op, call.attrs)?;
    if let Some(d) = &xd {
        if d.len() != 4 {
            return Err(OpError::input(
                0,
                format!("`{op}` needs a 4-D `x` (N, C, H, W), got {}", fmt_dims(d)),
            ));
        }
    }
    Ok(maybe_ranked(dtype, xd))
}

/// `(n, c, hw)` and each cell's window sum of squares, `bias + alpha·Σ x²`.
fn lrn_scale(x: &[f64], s: &[usize], r: usize, bias: f64, alpha: f64) -> Vec<f64> {
    let (n, c, hw) = (s[0], s[1], s[2] * s[3]);
    let mut scale = vec![0.0; x.len()];
    for b in 0..n {
        for ch in 0..c {
            let lo = ch.saturating_sub(r);
            let hi = (ch + r).min(c.saturating_sub(1));
            for p in 0..hw {
                let sum: f64 = (lo..=hi).map(|k| x[(b * c + k) * hw + p].powi(2)).sum();
                scale[(b * c + ch) * hw + p] = bias + alpha * sum;
            }
        }
    }
    scale
}

fn kernel_lrn(c: &KernelCall) -> Result<KValue, OpError> {
    let x = c.tensor(0)?;
    if x.rank() != 4 {
        return Err(OpError::input(0, "`LRN` needs a 4-D input"));
    }
    let (r, bias, alpha, beta) = lrn_params("LRN", c.attrs)?;
    let xv = x.to_f64_vec();
    let scale = lrn_scale(&xv, x.shape(), r, bias, alpha);
    let y: Vec<f64> = xv
        .iter()
        .zip(&scale)
        .map(|(v, s)| v * s.powf(-beta))
        .collect();
    Ok(ktensor(x.dtype(), x.shape().to_vec(), y))
}

/// `_LRNGrad(dy, x, y)`: `dx_c = dy_c·s_c^-β - 2αβ·x_c·Σ_{c' near c} dy_c'·y_c'/s_c'`.
fn kernel_lrn_grad(c: &KernelCall) -> Result<KValue, OpError> {
    let (dy, x, y) = (c.tensor(0)?, c.tensor(1)?, c.tensor(2)?);
    let s = x.shape();
    if s.len() != 4 || dy.shape() != s || y.shape() != s {
        return Err(OpError::call(
            "`_LRNGrad`: dy, x and y must share a 4-D shape",
        ));
    }
    let (r, bias, alpha, beta) = lrn_params("LRN", c.attrs)?;
    let (xv, dyv, yv) = (x.to_f64_vec(), dy.to_f64_vec(), y.to_f64_vec());
    let scale = lrn_scale(&xv, s, r, bias, alpha);
    let (n, ch, hw) = (s[0], s[1], s[2] * s[3]);
    let q: Vec<f64> = (0..xv.len()).map(|e| dyv[e] * yv[e] / scale[e]).collect();
    let mut dx = vec![0.0; xv.len()];
    for b in 0..n {
        for k in 0..ch {
            let lo = k.saturating_sub(r);
            let hi = (k + r).min(ch - 1);
            for p in 0..hw {
                let e = (b * ch + k) * hw + p;
                let sum: f64 = (lo..=hi).map(|j| q[(b * ch + j) * hw + p]).sum();
                dx[e] = dyv[e] * scale[e].powf(-beta) - 2.0 * alpha * beta * xv[e] * sum;
            }
        }
    }
    Ok(ktensor(dy.dtype(), s.to_vec(), dx))
}

// ---------------------------------------------------------------------------
// BatchNormExt

fn infer_batch_norm_ext(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let op = call.op.name;
    let (dtype, xd) = float_input(call, 0)?;
    let eps = call.attrs.f64("epsilon");
    if eps.is_nan() || eps < 0.0 {
        return Err(OpError::attr(
            "epsilon",
            format!("`{op}`: `epsilon` must be non-negative, got {eps}"),
        ));
    }
    let c = match &xd {
        Some(d) if d.len() < 2 => {
            return Err(OpError::input(
                0,
                format!(
                    "`{op}` needs `input` of rank at least 2 (N, C, ...), got {}",
                    fmt_dims(d)
                ),
            ))
        }
        Some(d) => d[1].clone(),
        None => Dim::Unknown,
    };
    for i in 1..5 {
        crate::defs::norm::group::check_param(call, i, dtype, std::slice::from_ref(&c))?;
    }
    let stat = tensor_abs(dtype, vec![c]);
    Ok(AbsVal::Tuple(vec![
        maybe_ranked(dtype, xd),
        stat.clone(),
        stat,
    ]))
}

/// `(n, c, spatial)` of a BatchNormExt input.
fn bn_dims(shape: &[usize]) -> Result<(usize, usize, usize), OpError> {
    if shape.len() < 2 {
        return Err(OpError::input(
            0,
            format!("`BatchNormExt` needs rank at least 2, got {shape:?}"),
        ));
    }
    Ok((shape[0], shape[1], shape[2..].iter().product()))
}

/// The per-channel mean and `1/sqrt(variance + eps)` a call normalises with:
/// the batch's in training or without running statistics, else the running ones.
fn bn_stats(
    c: &KernelCall,
    x: &[f64],
    (n, ch, sp): (usize, usize, usize),
) -> Result<(Vec<f64>, Vec<f64>), OpError> {
    let eps = c.attrs.f64("epsilon");
    let running = (opt_tensor(c, 3)?, opt_tensor(c, 4)?);
    if let (false, (Some(m), Some(v))) = (c.attrs.bool("training"), running) {
        let (m, v) = (m.to_f64_vec(), v.to_f64_vec());
        if m.len() != ch || v.len() != ch {
            return Err(OpError::call(format!(
                "`BatchNormExt`: running statistics need {ch} elements"
            )));
        }
        return Ok((m, v.iter().map(|v| 1.0 / (v + eps).sqrt()).collect()));
    }
    let count = (n * sp) as f64;
    let (mut mean, mut rstd) = (vec![0.0; ch], vec![0.0; ch]);
    for k in 0..ch {
        let cells = || (0..n).flat_map(move |b| (b * ch + k) * sp..(b * ch + k + 1) * sp);
        let mu = cells().map(|e| x[e]).sum::<f64>() / count;
        let var = cells().map(|e| (x[e] - mu) * (x[e] - mu)).sum::<f64>() / count;
        mean[k] = mu;
        rstd[k] = 1.0 / (var + eps).sqrt();
    }
    Ok((mean, rstd))
}

fn kernel_batch_norm_ext(c: &KernelCall) -> Result<KValue, OpError> {
    let x = c.tensor(0)?;
    let dims = bn_dims(x.shape())?;
    let (n, ch, sp) = dims;
    let xv = x.to_f64_vec();
    let (mean, rstd) = bn_stats(c, &xv, dims)?;
    let w = opt_tensor(c, 1)?.map(tensor::Tensor::to_f64_vec);
    let bias = opt_tensor(c, 2)?.map(tensor::Tensor::to_f64_vec);
    let mut y = vec![0.0; xv.len()];
    for b in 0..n {
        for k in 0..ch {
            let g = w.as_ref().map_or(1.0, |w| w[k]);
            let sh = bias.as_ref().map_or(0.0, |v| v[k]);
            for e in (b * ch + k) * sp..(b * ch + k + 1) * sp {
                y[e] = (xv[e] - mean[k]) * rstd[k] * g + sh;
            }
        }
    }
    let d = x.dtype();
    Ok(KValue::Tuple(vec![
        ktensor(d, x.shape().to_vec(), y),
        ktensor(d, vec![ch], mean),
        ktensor(d, vec![ch], rstd),
    ]))
}

/// `_BatchNormExtGrad(dy, input, weight, mean, rstd, dmean, drstd)`:
/// `(dinput, dweight, dbias, drunning_mean, drunning_var)`, exact: with
/// `batch_stats` the statistics are the batch's (functions of `input`), else
/// the running ones (`mean` = running_mean, `rstd` = 1/sqrt(runnning_var + eps)).
fn kernel_batch_norm_ext_grad(c: &KernelCall) -> Result<KValue, OpError> {
    let (dy, x) = (c.tensor(0)?, c.tensor(1)?);
    let w = opt_tensor(c, 2)?.map(tensor::Tensor::to_f64_vec);
    let (mean, rstd) = (c.tensor(3)?.to_f64_vec(), c.tensor(4)?.to_f64_vec());
    let (dmean, drstd) = (c.tensor(5)?.to_f64_vec(), c.tensor(6)?.to_f64_vec());
    let (n, ch, sp) = bn_dims(x.shape())?;
    if dy.shape() != x.shape() || [&mean, &rstd, &dmean, &drstd].iter().any(|v| v.len() != ch) {
        return Err(OpError::call("`_BatchNormExtGrad`: inconsistent shapes"));
    }
    let batch = c.attrs.bool("batch_stats");
    let (xv, dv) = (x.to_f64_vec(), dy.to_f64_vec());
    let count = (n * sp) as f64;
    let mut dx = vec![0.0; xv.len()];
    let (mut dw, mut db) = (vec![0.0; ch], vec![0.0; ch]);
    let (mut drm, mut drv) = (vec![0.0; ch], vec![0.0; ch]);
    for k in 0..ch {
        let cells = || (0..n).flat_map(move |b| (b * ch + k) * sp..(b * ch + k + 1) * sp);
        let g = w.as_ref().map_or(1.0, |w| w[k]);
        let r = rstd[k];
        let (mut s, mut sx) = (0.0, 0.0);
        for e in cells() {
            let xhat = (xv[e] - mean[k]) * r;
            s += dv[e];
            sx += dv[e] * xhat;
        }
        dw[k] = sx;
        db[k] = s;
        for e in cells() {
            let xhat = (xv[e] - mean[k]) * r;
            dx[e] = if batch {
                g * r * (dv[e] - s / count - xhat * sx / count) + dmean[k] / count
                    - drstd[k] * r * r * xhat / count
            } else {
                g * r * dv[e]
            };
        }
        if !batch {
            // d rstd / d var = -rstd³/2.
            drm[k] = -g * r * s + dmean[k];
            drv[k] = -0.5 * r * r * (g * sx + drstd[k] * r);
        }
    }
    let pd = opt_tensor(c, 2)?.map_or(dy.dtype(), tensor::Tensor::dtype);
    let sd = c.tensor(3)?.dtype();
    Ok(KValue::Tuple(vec![
        ktensor(dy.dtype(), x.shape().to_vec(), dx),
        ktensor(pd, vec![ch], dw),
        ktensor(pd, vec![ch], db),
        ktensor(sd, vec![ch], drm),
        ktensor(sd, vec![ch], drv),
    ]))
}

fn grad_batch_norm_ext(b: &mut dyn GradBuilder, c: &GradCall) -> Vec<Option<GNode>> {
    use crate::defs::nn::common::grad_given;
    let running = grad_given(c, 3) && grad_given(c, 4);
    let batch = c.attrs.bool("training") || !running;
    let dy = b.tuple_get(c.dout, 0);
    let dmean = b.tuple_get(c.dout, 1);
    let drstd = b.tuple_get(c.dout, 2);
    let mean = b.tuple_get(c.out, 1);
    let rstd = b.tuple_get(c.out, 2);
    let r = b.prim(
        "_BatchNormExtGrad",
        &[dy, c.inputs[0], c.inputs[1], mean, rstd, dmean, drstd],
        vec![("batch_stats", AttrValue::Bool(batch))],
    );
    vec![
        Some(b.tuple_get(r, 0)),
        grad_given(c, 1).then(|| b.tuple_get(r, 1)),
        grad_given(c, 2).then(|| b.tuple_get(r, 2)),
        (!batch).then(|| b.tuple_get(r, 3)),
        (!batch).then(|| b.tuple_get(r, 4)),
    ]
}

pub const OPS: &[OpDef] = &[
    OpDef {
        name: "BatchNormExt",
        category: Category::NeuralNetwork,
        doc: "Batch normalisation per channel of `input` `[N, C, *]` (what `mint.nn.BatchNorm1d/2d/3d` export): with the batch's mean and biased variance when `training` (or without running statistics), else with `running_mean`/`runnning_var`; then scaled by `weight` and shifted by `bias` (none: ones and zeros). Returns `(output, saved_mean, saved_rstd)`, the statistics used (`rstd` = 1/sqrt(variance + epsilon)); the running statistics are not updated in place. MindSpore implements it on Ascend only.",
        schema: Schema::ms(
            &[Override::input("runnning_var", why::TO_INPUT)],
            &[
                ("input", "The input, `[N, C, *]`, float."),
                ("weight", "The per-channel scale `[C]`, or none."),
                ("bias", "The per-channel shift `[C]`, or none."),
                ("running_mean", "The running mean `[C]`, or none."),
                ("runnning_var", "The running variance `[C]`, or none (MindSpore's spelling)."),
                ("training", "Normalise with the batch's statistics. Default false."),
                ("momentum", "The running statistics' momentum; not used here. Default 0.1."),
                ("epsilon", "Added to the variance. Default 1e-5."),
            ],
        ),
        variadic: false,
        output: OutputDef::Tuple(&["output", "saved_mean", "saved_rstd"]),
        infer: infer_batch_norm_ext,
        grad: Some(grad_batch_norm_ext),
        kernel: Some(kernel_batch_norm_ext),
        traits: Traits::NONE.gradgen(Gradgen::Avoid),
    },
    OpDef {
        name: "_BatchNormExtGrad",
        category: Category::Internal,
        doc: "The gradients of BatchNormExt with respect to `input`, `weight`, `bias` and (when it normalised with them) the running statistics, including the sensitivities of `saved_mean` and `saved_rstd` (`batch_stats`: the statistics were the batch's, functions of `input`).",
        schema: Schema::own(&[
            ParamDef::input("dy", "The gradient of `output`."),
            ParamDef::input("input", "BatchNormExt's input."),
            ParamDef::input("weight", "BatchNormExt's weight, or none."),
            ParamDef::input("mean", "The mean used."),
            ParamDef::input("rstd", "The 1/sqrt(variance + epsilon) used."),
            ParamDef::input("dmean", "The gradient of `saved_mean`."),
            ParamDef::input("drstd", "The gradient of `saved_rstd`."),
            ParamDef::attr("batch_stats", AttrType::Bool, Some(AttrDefault::Bool(true)), "Whether the statistics were the batch's."),
        ]),
        variadic: false,
        output: OutputDef::Tuple(&["dinput", "dweight", "dbias", "drunning_mean", "drunning_var"]),
        infer: |call| {
            if call.any_unknown() {
                return Ok(AbsVal::Any);
            }
            let x = call.inputs[1].widen();
            let m = call.inputs[3].widen();
            Ok(AbsVal::Tuple(vec![x, m.clone(), m.clone(), m.clone(), m]))
        },
        grad: None,
        kernel: Some(kernel_batch_norm_ext_grad),
        traits: Traits::NONE,
    },
    OpDef {
        name: "RmsNorm",
        category: Category::NeuralNetwork,
        doc: "Root-mean-square normalisation over the trailing dimensions `gamma` covers: `y = x / sqrt(mean(x²) + epsilon) · gamma`. Returns `(y, rstd)`, `rstd` (f32; f64 for an f64 input) keeping the normalised dimensions as size 1. MindSpore implements it on Ascend only.",
        schema: Schema::ms(
            &[],
            &[
                ("x", "The input, float."),
                ("gamma", "The scale, of the trailing shape of `x` and its dtype."),
                ("epsilon", "Added to the mean square, in (0, 1]. Default 1e-6."),
            ],
        ),
        variadic: false,
        output: OutputDef::Tuple(&["y", "rstd"]),
        infer: infer_rms_norm,
        grad: Some(|b, c| {
            let dy = b.tuple_get(c.dout, 0);
            let drstd = b.tuple_get(c.dout, 1);
            let rstd = b.tuple_get(c.out, 1);
            let r = b.prim("_RmsNormGrad", &[dy, c.inputs[0], rstd, c.inputs[1], drstd], vec![]);
            vec![Some(b.tuple_get(r, 0)), Some(b.tuple_get(r, 1))]
        }),
        kernel: Some(kernel_rms_norm),
        traits: Traits::of(Family::RowNorm(RowNorm::Rms)),
    },
    OpDef {
        name: "L2Normalize",
        category: Category::NeuralNetwork,
        doc: "Divides `x` by its L2 norm along `axis`: `x / sqrt(max(Σ x², epsilon))`.",
        schema: Schema::ms(
            &[],
            &[
                ("x", "The input, float."),
                ("axis", "The one dimension to normalise along (an int or a 1-tuple). Default 0."),
                ("epsilon", "The lower bound of the sum of squares. Default 1e-4."),
            ],
        ),
        variadic: false,
        output: OutputDef::Single,
        infer: infer_l2_normalize,
        grad: Some(grad_l2_normalize),
        kernel: Some(kernel_l2_normalize),
        traits: Traits::NONE.batched(BatchRule::Axes { attr: "axis", empty_is_all: false }),
    },
    OpDef {
        name: "LRN",
        category: Category::NeuralNetwork,
        doc: "Local response normalisation across channels of an NCHW input (what `nn.LRN` exports): `y = x / (bias + alpha · Σ x²)^beta`, the sum over channels within `depth_radius` of each channel.",
        schema: Schema::ms(
            &[
                Override::attr("norm_region", AttrType::Str(&["ACROSS_CHANNELS"]), Some(AttrDefault::Str("ACROSS_CHANNELS")), why::STRINGS),
            ],
            &[
                ("x", "The input, `[N, C, H, W]`, float."),
                ("depth_radius", "Half the channel window, non-negative. Default 5."),
                ("bias", "The offset. Default 1.0."),
                ("alpha", "The scale of the sum of squares. Default 1.0."),
                ("beta", "The exponent. Default 0.5."),
                ("norm_region", "Only \"ACROSS_CHANNELS\"."),
            ],
        ),
        variadic: false,
        output: OutputDef::Single,
        infer: infer_lrn,
        grad: Some(|b, c| {
            let attrs: Vec<(&'static str, AttrValue)> = c
                .attrs
                .iter()
                .filter(|(k, _)| *k != "norm_region")
                .map(|(k, v)| (*k, v.clone()))
                .collect();
            vec![Some(b.prim("_LRNGrad", &[c.dout, c.inputs[0], c.out], attrs))]
        }),
        kernel: Some(kernel_lrn),
        traits: Traits::NONE,
    },
    OpDef {
        name: "_RmsNormGrad",
        category: Category::Internal,
        doc: "The gradients of RmsNorm with respect to `x` and `gamma`, including `rstd`'s sensitivity.",
        schema: Schema::own(&[
            ParamDef::input("dy", "The gradient of `y`."),
            ParamDef::input("x", "RmsNorm's input."),
            ParamDef::input("rstd", "RmsNorm's `rstd` output."),
            ParamDef::input("gamma", "RmsNorm's `gamma`."),
            ParamDef::input("drstd", "The gradient of `rstd`."),
        ]),
        variadic: false,
        output: OutputDef::Tuple(&["dx", "dgamma"]),
        infer: |call| {
            if call.any_unknown() {
                return Ok(AbsVal::Any);
            }
            let (dtype, _) = dims_of(call, 0)?;
            let xs = call.inputs[1].shape().unwrap_or(ir::Shape::Unranked);
            let (gdtype, gshape) = call.tensor(3)?;
            Ok(AbsVal::Tuple(vec![
                AbsVal::Tensor { dtype, shape: xs },
                AbsVal::Tensor { dtype: gdtype, shape: gshape },
            ]))
        },
        grad: None,
        kernel: Some(kernel_rms_norm_grad),
        traits: Traits::NONE,
    },
    OpDef {
        name: "_LRNGrad",
        category: Category::Internal,
        doc: "The gradient of LRN (MindSpore's LRNGrad) from its input and output.",
        schema: Schema::own(&[
            ParamDef::input("dy", "The gradient of LRN's output."),
            ParamDef::input("x", "LRN's input."),
            ParamDef::input("y", "LRN's output."),
            ParamDef::attr("depth_radius", AttrType::Int, Some(AttrDefault::Int(5)), "As LRN."),
            ParamDef::attr("bias", AttrType::Float, Some(AttrDefault::Float(1.0)), "As LRN."),
            ParamDef::attr("alpha", AttrType::Float, Some(AttrDefault::Float(1.0)), "As LRN."),
            ParamDef::attr("beta", AttrType::Float, Some(AttrDefault::Float(0.5)), "As LRN."),
        ]),
        variadic: false,
        output: OutputDef::Single,
        infer: |call| {
            if call.any_unknown() {
                return Ok(AbsVal::Any);
            }
            let (dtype, _) = dims_of(call, 0)?;
            let xs = call.inputs[1].shape().unwrap_or(ir::Shape::Unranked);
            Ok(AbsVal::Tensor { dtype, shape: xs })
        },
        grad: None,
        kernel: Some(kernel_lrn_grad),
        traits: Traits::NONE,
    },
];

pub(crate) fn samples() -> Vec<crate::eager::Sample> {
    use crate::eager::{random_f64, Sample};
    let i = AttrValue::Int;
    let f = AttrValue::float;
    let x = |shape: &[usize], seed: u64| random_f64(shape, seed, -1.0, 1.0);
    let pos = |shape: &[usize], seed: u64| random_f64(shape, seed, 0.5, 1.5);
    let none = || KValue::Tuple(vec![]);
    vec![
        Sample::new(
            "BatchNormExt",
            vec![
                x(&[3, 2, 2, 2], 630),
                pos(&[2], 631),
                x(&[2], 632),
                x(&[2], 633),
                pos(&[2], 634),
            ],
        ),
        Sample::new(
            "BatchNormExt",
            vec![
                x(&[3, 2, 2, 2], 635),
                pos(&[2], 636),
                x(&[2], 637),
                x(&[2], 638),
                pos(&[2], 639),
            ],
        )
        .attr("training", AttrValue::Bool(true)),
        Sample::new(
            "BatchNormExt",
            vec![x(&[4, 3], 640), none(), none(), none(), none()],
        ),
        Sample::new("RmsNorm", vec![x(&[2, 3, 4], 614), pos(&[4], 615)]),
        Sample::new("RmsNorm", vec![x(&[2, 3, 4], 616), pos(&[3, 4], 617)])
            .attr("epsilon", f(1e-3)),
        Sample::new("L2Normalize", vec![x(&[3, 4], 618)]),
        Sample::new("L2Normalize", vec![x(&[2, 3, 4], 619)]).attr("axis", i(-1)),
        Sample::new("L2Normalize", vec![random_f64(&[2, 3], 620, -0.01, 0.01)])
            .attr("axis", i(1))
            .attr("epsilon", f(0.01)),
        Sample::new("LRN", vec![x(&[2, 5, 2, 3], 621)])
            .attr("depth_radius", i(2))
            .attr("bias", f(2.0))
            .attr("alpha", f(0.5))
            .attr("beta", f(0.75)),
    ]
}
