//! LayerNorm and BatchNorm: shape rules and kernels (the table is in `nn.rs`;
//! their backward primitives are in `backward/norm.rs`).

use super::*;

// ---------------------------------------------------------------------------
// LayerNorm

/// `begin_norm_axis` and `begin_params_axis`, normalised.
pub(crate) fn layer_norm_axes(
    op: &str,
    attrs: &Attrs,
    rank: usize,
) -> Result<(usize, usize), OpError> {
    Ok((
        op_axis(op, attrs.int("begin_norm_axis"), rank, "begin_norm_axis")?,
        op_axis(
            op,
            attrs.int("begin_params_axis"),
            rank,
            "begin_params_axis",
        )?,
    ))
}

pub(super) fn infer_layer_norm(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let op = call.op.name;
    let (dtype, xd) = float_tensor(call, 0)?;
    let Some(xd) = xd else {
        let u = unranked(dtype);
        return Ok(AbsVal::Tuple(vec![u.clone(), u.clone(), u]));
    };
    if xd.is_empty() {
        return Err(OpError::input(
            0,
            format!("`{op}` needs `input_x` of rank at least 1"),
        ));
    }
    let (bna, bpa) = layer_norm_axes(op, call.attrs, xd.len())?;
    for i in [1, 2] {
        let (d, dims) = dims_of(call, i)?;
        if d != dtype {
            return Err(OpError::input(
                i,
                format!(
                    "`{op}` needs `{}` of the dtype of `input_x`, {dtype}, got {d}",
                    call.input_name(i)
                ),
            ));
        }
        if let Some(dims) = dims {
            let want = &xd[bpa..];
            if dims.len() != want.len() || dims.iter().zip(want).any(|(a, b)| !dims_may_equal(a, b))
            {
                return Err(OpError::input(
                    i,
                    format!(
                        "`{op}`: `{}` must have shape {} (the dimensions of `input_x` {} from begin_params_axis={bpa}), got {}",
                        call.input_name(i),
                        fmt_dims(want),
                        fmt_dims(&xd),
                        fmt_dims(&dims)
                    ),
                ));
            }
        }
    }
    let mut stat = xd[..bna].to_vec();
    stat.resize(xd.len(), Dim::Known(1));
    Ok(AbsVal::Tuple(vec![
        tensor_abs(dtype, xd),
        tensor_abs(dtype, stat.clone()),
        tensor_abs(dtype, stat),
    ]))
}

pub(super) fn kernel_layer_norm(c: &KernelCall) -> Result<KValue, OpError> {
    let (x, gamma, beta) = (c.tensor(0)?, c.tensor(1)?, c.tensor(2)?);
    let s = x.shape();
    let (bna, bpa) = layer_norm_axes("LayerNorm", c.attrs, s.len())?;
    if gamma.shape() != &s[bpa..] || beta.shape() != &s[bpa..] {
        return Err(OpError::call(format!(
            "`LayerNorm`: gamma {:?} and beta {:?} must have shape {:?}",
            gamma.shape(),
            beta.shape(),
            &s[bpa..]
        )));
    }
    let eps = c.attrs.f64("epsilon");
    let rows: usize = s[..bna].iter().product();
    let m: usize = s[bna..].iter().product();
    let p = gamma.numel().max(1);
    let (xv, gv, bv) = (x.to_f64_vec(), gamma.to_f64_vec(), beta.to_f64_vec());
    let mut y = vec![0.0; xv.len()];
    let (mut means, mut vars) = (vec![0.0; rows], vec![0.0; rows]);
    for r in 0..rows {
        let row = &xv[r * m..(r + 1) * m];
        let mean = row.iter().sum::<f64>() / m as f64;
        let var = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / m as f64;
        let rstd = 1.0 / (var + eps).sqrt();
        for (k, &v) in row.iter().enumerate() {
            let e = r * m + k;
            y[e] = (v - mean) * rstd * gv[e % p] + bv[e % p];
        }
        means[r] = mean;
        vars[r] = var;
    }
    let mut stat = s[..bna].to_vec();
    stat.resize(s.len(), 1);
    let dtype = x.dtype();
    Ok(KValue::Tuple(vec![
        ktensor(dtype, s.to_vec(), y),
        ktensor(dtype, stat.clone(), means),
        ktensor(dtype, stat, vars),
    ]))
}

// ---------------------------------------------------------------------------
// BatchNorm

pub(super) fn infer_batch_norm(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let op = call.op.name;
    let (dtype, xd) = float_tensor(call, 0)?;
    check_bn_format(op, call.attrs)?;
    check_epsilon(op, call.attrs.f64("epsilon"))?;
    let momentum = call.attrs.f64("momentum");
    if !(0.0..=1.0).contains(&momentum) {
        return Err(OpError::attr(
            "momentum",
            format!("`{op}`: `momentum` must lie in [0, 1], got {momentum}"),
        ));
    }
    let channels = match &xd {
        Some(xd) if xd.len() == 2 || xd.len() == 4 => xd[1].clone(),
        Some(xd) => {
            return Err(OpError::input(
                0,
                format!(
                    "`{op}` needs `input_x` of rank 2 [N, C] or 4 [N, C, H, W], got {}",
                    fmt_dims(xd)
                ),
            ))
        }
        None => Dim::Unknown,
    };
    let (pdtype, _) = float_tensor(call, 1)?;
    for i in 1..5 {
        let (d, dims) = float_tensor(call, i)?;
        if d != pdtype {
            return Err(OpError::input(
                i,
                format!(
                    "`{op}` needs `{}` of the dtype of `scale`, {pdtype}, got {d}",
                    call.input_name(i)
                ),
            ));
        }
        if let Some(dims) = dims {
            if dims.len() != 1 || !dims_may_equal(&dims[0], &channels) {
                return Err(OpError::input(
                    i,
                    format!(
                        "`{op}` needs `{}` of shape [C] = [{channels}] (the channels of `input_x`), got {}",
                        call.input_name(i),
                        fmt_dims(&dims)
                    ),
                ));
            }
        }
    }
    let y = match xd {
        Some(xd) => tensor_abs(dtype, xd),
        None => unranked(dtype),
    };
    let stat = tensor_abs(pdtype, vec![channels]);
    Ok(AbsVal::Tuple(vec![
        y,
        stat.clone(),
        stat.clone(),
        stat.clone(),
        stat,
    ]))
}

pub(crate) fn check_bn_format(op: &str, attrs: &Attrs) -> Result<(), OpError> {
    let f = attrs.str("data_format");
    if !f.eq_ignore_ascii_case("NCHW") {
        return Err(OpError::attr(
            "data_format",
            format!("`{op}` supports data_format=\"NCHW\" only (MindSpore supports \"NHWC\" on GPU only), got \"{f}\""),
        ));
    }
    Ok(())
}

pub(super) fn check_epsilon(op: &str, eps: f64) -> Result<(), OpError> {
    if !(eps > 0.0 && eps <= 1.0) {
        return Err(OpError::attr(
            "epsilon",
            format!("`{op}`: `epsilon` must lie in (0, 1], got {eps}"),
        ));
    }
    Ok(())
}

/// `(N, C, spatial)` of a BatchNorm input.
pub(crate) fn bn_dims(s: &[usize]) -> Result<(usize, usize, usize), OpError> {
    if s.len() < 2 {
        return Err(OpError::input(
            0,
            "`BatchNorm` needs [N, C] or [N, C, H, W]",
        ));
    }
    Ok((s[0], s[1], s[2..].iter().product()))
}

/// Per-channel mean and biased variance over N and the spatial dimensions.
pub(super) fn channel_stats(x: &[f64], n: usize, c: usize, hw: usize) -> (Vec<f64>, Vec<f64>) {
    let count = (n * hw) as f64;
    let mut mean = vec![0.0; c];
    let mut var = vec![0.0; c];
    for ch in 0..c {
        let cells = (0..n).flat_map(|b| x[(b * c + ch) * hw..][..hw].iter());
        mean[ch] = cells.clone().sum::<f64>() / count;
        var[ch] = cells.map(|v| (v - mean[ch]) * (v - mean[ch])).sum::<f64>() / count;
    }
    (mean, var)
}

pub(super) fn kernel_batch_norm(c: &KernelCall) -> Result<KValue, OpError> {
    let x = c.tensor(0)?;
    let (n, ch, hw) = bn_dims(x.shape())?;
    let params: Vec<&Tensor> = (1..5).map(|i| c.tensor(i)).collect::<Result<_, _>>()?;
    if params.iter().any(|t| t.shape() != [ch]) {
        return Err(OpError::call(format!(
            "`BatchNorm`: scale, bias, mean and variance must have shape [{ch}]"
        )));
    }
    let eps = c.attrs.f64("epsilon");
    let xv = x.to_f64_vec();
    let (scale, bias) = (params[0].to_f64_vec(), params[1].to_f64_vec());
    let (mean, var) = if c.attrs.bool("is_training") {
        channel_stats(&xv, n, ch, hw)
    } else {
        (params[2].to_f64_vec(), params[3].to_f64_vec())
    };
    let mut y = vec![0.0; xv.len()];
    for b in 0..n {
        for k in 0..ch {
            let a = scale[k] / (var[k] + eps).sqrt();
            let base = (b * ch + k) * hw;
            for e in base..base + hw {
                y[e] = (xv[e] - mean[k]) * a + bias[k];
            }
        }
    }
    let pdtype = params[0].dtype();
    Ok(KValue::Tuple(vec![
        ktensor(x.dtype(), x.shape().to_vec(), y),
        ktensor(pdtype, vec![ch], mean.clone()),
        ktensor(pdtype, vec![ch], var.clone()),
        ktensor(pdtype, vec![ch], mean),
        ktensor(pdtype, vec![ch], var),
    ]))
}
