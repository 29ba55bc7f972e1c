//! Neural-network primitives: Softmax, LogSoftmax, the softmax cross
//! entropies, LayerNorm, BatchNorm, Dropout. Convolution and pooling are in
//! `conv`.
//!
//! These kernels compute in f64 and round to the input's dtype: they are
//! memory-bound, and it keeps f32 results within an ulp of MindSpore's.

pub mod common;
pub mod layers;

use crate::batch::BatchRule;
use crate::schema::{why, Override, Schema};
use crate::Gradgen;
use crate::{Family, RowNorm, Traits};
use ir::{AbsVal, AttrValue, DType, Dim};
use tensor::{Buffer, Tensor};

use crate::defs::conv::attrs_of;
use crate::defs::shape::{
    cartesian_offsets, dims_may_equal, dims_of, fmt_dims, fmt_ints, op_axis, row_strides,
    tensor_abs, unranked,
};
use crate::infer::InferCall;
use crate::kernel::{KValue, KernelCall};
use crate::{
    AttrDefault, AttrType, Attrs, Category, GNode, GradBuilder, GradCall, OpDef, OpError, OutputDef,
};

// ---------------------------------------------------------------------------
// Helpers.

fn float_tensor(call: &InferCall, i: usize) -> Result<(DType, Option<Vec<Dim>>), OpError> {
    let (dtype, dims) = dims_of(call, i)?;
    if !dtype.is_float() {
        return Err(OpError::input(
            i,
            format!(
                "`{}` needs a float `{}`, got {dtype}",
                call.op.name,
                call.input_name(i)
            ),
        ));
    }
    Ok((dtype, dims))
}

/// A tensor of `dtype` from f64 data.
pub(crate) fn from_f64(dtype: DType, shape: Vec<usize>, data: Vec<f64>) -> Tensor {
    Tensor::from_f64(shape, data)
        .expect("data matches the shape")
        .cast(dtype)
}

fn ktensor(dtype: DType, shape: Vec<usize>, data: Vec<f64>) -> KValue {
    KValue::Tensor(from_f64(dtype, shape, data))
}

/// The normalised, distinct axes of a Softmax-like `axis` attribute.
pub(crate) fn softmax_axes(op: &str, axes: &[i64], rank: usize) -> Result<Vec<usize>, OpError> {
    if axes.is_empty() {
        return Err(OpError::attr(
            "axis",
            format!("`{op}`: `axis` must name at least one dimension"),
        ));
    }
    let mut out = Vec::new();
    for &a in axes {
        let i = op_axis(op, a, rank, "axis")?;
        if out.contains(&i) {
            return Err(OpError::attr(
                "axis",
                format!(
                    "`{op}`: `axis` {} names dimension {i} twice",
                    fmt_ints(axes)
                ),
            ));
        }
        out.push(i);
    }
    out.sort_unstable();
    Ok(out)
}

/// Splits the offsets of a row-major tensor of `shape` into groups along
/// `axes`: each group is `outer[i] + inner[j]` for all `j`.
pub(crate) fn groups(shape: &[usize], axes: &[usize]) -> (Vec<usize>, Vec<usize>) {
    let strides = row_strides(shape);
    let offsets = |keep: bool| -> Vec<Vec<usize>> {
        (0..shape.len())
            .filter(|d| axes.contains(d) == keep)
            .map(|d| (0..shape[d]).map(|k| k * strides[d]).collect())
            .collect()
    };
    (
        cartesian_offsets(&offsets(false)),
        cartesian_offsets(&offsets(true)),
    )
}

/// Softmax (or log-softmax) over `axes`, with the maximum subtracted first.
pub(crate) fn softmax(x: &[f64], shape: &[usize], axes: &[usize], log: bool) -> Vec<f64> {
    let mut y = vec![0.0; x.len()];
    let (outer, inner) = groups(shape, axes);
    if inner.is_empty() {
        return y;
    }
    for &o in &outer {
        let m = inner
            .iter()
            .map(|&i| x[o + i])
            .fold(f64::NEG_INFINITY, f64::max);
        let m = if m.is_finite() { m } else { 0.0 };
        let sum: f64 = inner.iter().map(|&i| (x[o + i] - m).exp()).sum();
        let log_sum = sum.ln();
        for &i in &inner {
            y[o + i] = if log {
                x[o + i] - m - log_sum
            } else {
                (x[o + i] - m).exp() / sum
            };
        }
    }
    y
}

fn infer_softmax(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let (dtype, dims) = float_tensor(call, 0)?;
    if let Some(dims) = &dims {
        softmax_axes(
            call.op.name,
            &call.attrs.ints("axis").unwrap_or_default(),
            dims.len(),
        )?;
    }
    Ok(match dims {
        Some(d) => tensor_abs(dtype, d),
        None => unranked(dtype),
    })
}

/// `e^(x - max x)` of an `f32` row into `out` (the max taken as 0 when it is
/// not finite, as the `f64` softmax does); returns the shift.
fn exp_shifted_row(x: &[f32], out: &mut [f32]) -> f32 {
    let m = x.iter().fold(f32::NEG_INFINITY, |a, &b| a.max(b));
    let m = if m.is_finite() { m } else { 0.0 };
    for (o, &v) in out.iter_mut().zip(x) {
        *o = crate::defs::elementwise::exp_f32(v - m);
    }
    m
}

/// Softmax of one `f32` row into `out`, in `f32` with a vectorised `exp`
/// (as MindSpore's CPU kernel computes in `f32`), the sum taken in eight
/// lanes and added up in `f64`: what the registry and the compiled plans
/// both run for `f32` over the last axis, so they agree to the bit.
pub fn softmax_row_f32(x: &[f32], out: &mut [f32]) {
    exp_shifted_row(x, out);
    let mut lanes = [0f32; 8];
    let mut chunks = out.chunks_exact(8);
    for c in &mut chunks {
        for (l, &v) in lanes.iter_mut().zip(c) {
            *l += v;
        }
    }
    let tail: f64 = chunks.remainder().iter().map(|&v| v as f64).sum();
    let sum = lanes.iter().map(|&l| l as f64).sum::<f64>() + tail;
    let inv = (1.0 / sum) as f32;
    for o in out.iter_mut() {
        *o *= inv;
    }
}

fn kernel_softmax(c: &KernelCall, log: bool, op: &str) -> Result<KValue, OpError> {
    let x = c.tensor(0)?;
    let axes = softmax_axes(op, &c.attrs.ints("axis").unwrap_or_default(), x.rank())?;
    if let (false, DType::F32, [axis]) = (log, x.dtype(), axes.as_slice()) {
        let cols = x.shape().last().copied().unwrap_or(1);
        if let (true, Buffer::F32(xs)) = (*axis + 1 == x.rank() && cols > 0, x.buffer()) {
            let mut y = vec![0f32; xs.len()];
            for (xr, yr) in xs.chunks(cols).zip(y.chunks_mut(cols)) {
                softmax_row_f32(xr, yr);
            }
            return Ok(KValue::Tensor(
                Tensor::from_f32(x.shape().to_vec(), y).map_err(|e| OpError::call(e.0))?,
            ));
        }
    }
    let y = softmax(&x.to_f64_vec(), x.shape(), &axes, log);
    Ok(ktensor(x.dtype(), x.shape().to_vec(), y))
}

// ---------------------------------------------------------------------------
// Cross entropies.

fn check_logits(call: &InferCall) -> Result<(DType, Option<(Dim, Dim)>), OpError> {
    let (dtype, dims) = float_tensor(call, 0)?;
    let Some(dims) = dims else {
        return Ok((dtype, None));
    };
    if dims.len() != 2 {
        return Err(OpError::input(
            0,
            format!(
                "`{}` needs 2-D `logits` [N, C], got {}",
                call.op.name,
                fmt_dims(&dims)
            ),
        ));
    }
    Ok((dtype, Some((dims[0].clone(), dims[1].clone()))))
}

fn infer_softmax_ce(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let op = call.op.name;
    let (dtype, nc) = check_logits(call)?;
    let (ldtype, ldims) = dims_of(call, 1)?;
    if ldtype != dtype {
        return Err(OpError::input(
            1,
            format!("`{op}` needs `labels` of the dtype of `logits`, {dtype}, got {ldtype}"),
        ));
    }
    let (n, c) = match (nc, ldims) {
        (Some((n, c)), Some(l)) => {
            if l.len() != 2 || !dims_may_equal(&l[0], &n) || !dims_may_equal(&l[1], &c) {
                return Err(OpError::input(
                    1,
                    format!(
                        "`{op}` needs `labels` of the shape of `logits`, [{n}, {c}], got {}",
                        fmt_dims(&l)
                    ),
                ));
            }
            (n, c)
        }
        (Some((n, c)), None) => (n, c),
        (None, Some(l)) if l.len() == 2 => (l[0].clone(), l[1].clone()),
        _ => (Dim::Unknown, Dim::Unknown),
    };
    Ok(AbsVal::Tuple(vec![
        tensor_abs(dtype, vec![n.clone()]),
        tensor_abs(dtype, vec![n, c]),
    ]))
}

fn kernel_softmax_ce(c: &KernelCall) -> Result<KValue, OpError> {
    let (logits, labels) = (c.tensor(0)?, c.tensor(1)?);
    let s = logits.shape();
    if s.len() != 2 || labels.shape() != s {
        return Err(OpError::call(format!(
            "`SoftmaxCrossEntropyWithLogits`: logits {s:?} and labels {:?} must both be [N, C]",
            labels.shape()
        )));
    }
    let (n, classes) = (s[0], s[1]);
    let lp = softmax(&logits.to_f64_vec(), s, &[1], true);
    let y = labels.to_f64_vec();
    let mut loss = vec![0.0; n];
    let mut grad = vec![0.0; n * classes];
    for (r, l) in loss.iter_mut().enumerate() {
        for k in r * classes..(r + 1) * classes {
            *l -= y[k] * lp[k];
            grad[k] = lp[k].exp() - y[k];
        }
    }
    let dtype = logits.dtype();
    Ok(KValue::Tuple(vec![
        ktensor(dtype, vec![n], loss),
        ktensor(dtype, s.to_vec(), grad),
    ]))
}

fn infer_sparse_softmax_ce(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let op = call.op.name;
    let (dtype, nc) = check_logits(call)?;
    let (ldtype, ldims) = dims_of(call, 1)?;
    if !matches!(ldtype, DType::I32 | DType::I64) {
        return Err(OpError::input(
            1,
            format!("`{op}` needs `labels` of dtype i32 or i64 (class indices), got {ldtype}"),
        ));
    }
    if let Some(l) = &ldims {
        if l.len() != 1 {
            return Err(OpError::input(
                1,
                format!("`{op}` needs 1-D `labels` [N], got {}", fmt_dims(l)),
            ));
        }
        if let Some((n, _)) = &nc {
            if !dims_may_equal(n, &l[0]) {
                return Err(OpError::input(
                    1,
                    format!(
                        "`{op}`: `labels` {} has a label per row but `logits` has {n} rows",
                        fmt_dims(l)
                    ),
                ));
            }
        }
    }
    if call.attrs.bool("is_grad") {
        let (n, c) = nc.unwrap_or((Dim::Unknown, Dim::Unknown));
        Ok(tensor_abs(dtype, vec![n, c]))
    } else {
        Ok(tensor_abs(dtype, vec![]))
    }
}

/// One `f32` row of sparse softmax cross entropy over `n` rows: returns the
/// row's loss `-log softmax(row)[label]` and, given `grad`, writes the row
/// of the mean loss's gradient (`softmax(row) / n`, less `1 / n` at the
/// label). In `f32` with a vectorised `exp` (as MindSpore's CPU kernel
/// computes), sums in `f64`: what the registry and the compiled plans both
/// run for `f32` logits, so they agree to the bit.
pub fn sparse_ce_row_f32(row: &[f32], label: usize, n: usize, grad: Option<&mut [f32]>) -> f64 {
    let mut local = [0f32; 64];
    let mut heap = Vec::new();
    let e: &mut [f32] = if row.len() <= local.len() {
        &mut local[..row.len()]
    } else {
        heap.resize(row.len(), 0.0);
        &mut heap
    };
    let m = exp_shifted_row(row, e);
    let sum: f64 = e.iter().map(|&v| v as f64).sum();
    let loss = -((row[label] - m) as f64 - sum.ln());
    if let Some(g) = grad {
        let scale = 1.0 / (sum * n as f64);
        for (j, (o, &v)) in g.iter_mut().zip(e.iter()).enumerate() {
            let mut x = v as f64 * scale;
            if j == label {
                x -= 1.0 / n as f64;
            }
            *o = x as f32;
        }
    }
    loss
}

fn kernel_sparse_softmax_ce(c: &KernelCall) -> Result<KValue, OpError> {
    let (logits, labels) = (c.tensor(0)?, c.tensor(1)?);
    let s = logits.shape();
    if s.len() != 2 || labels.shape() != [s[0]] {
        return Err(OpError::call(format!(
            "`SparseSoftmaxCrossEntropyWithLogits`: logits {s:?} must be [N, C] and labels {:?} [N]",
            labels.shape()
        )));
    }
    let (n, classes) = (s[0], s[1]);
    let Buffer::I64(idx) = labels.buffer() else {
        return Err(OpError::input(1, "labels must be integers"));
    };
    for &l in idx {
        if l < 0 || l as usize >= classes {
            return Err(OpError::input(
                1,
                format!(
                    "`SparseSoftmaxCrossEntropyWithLogits`: label {l} is out of range for {classes} classes"
                ),
            ));
        }
    }
    if let Buffer::F32(x) = logits.buffer() {
        let grad = c.attrs.bool("is_grad");
        let mut g = vec![0f32; if grad { x.len() } else { 0 }];
        let mut total = 0f64;
        for (r, &l) in idx.iter().enumerate() {
            let row = &x[r * classes..(r + 1) * classes];
            let gr = grad.then(|| &mut g[r * classes..(r + 1) * classes]);
            total += sparse_ce_row_f32(row, l as usize, n, gr);
        }
        let t = if grad {
            Tensor::from_f32(s.to_vec(), g)
        } else {
            Tensor::from_f32(vec![], vec![(total / n as f64) as f32])
        };
        return Ok(KValue::Tensor(t.map_err(|e| OpError::call(e.0))?));
    }
    let lp = softmax(&logits.to_f64_vec(), s, &[1], true);
    let dtype = logits.dtype();
    if c.attrs.bool("is_grad") {
        let mut grad: Vec<f64> = lp.iter().map(|v| v.exp() / n as f64).collect();
        for (r, &l) in idx.iter().enumerate() {
            grad[r * classes + l as usize] -= 1.0 / n as f64;
        }
        return Ok(ktensor(dtype, s.to_vec(), grad));
    }
    let total: f64 = idx
        .iter()
        .enumerate()
        .map(|(r, &l)| -lp[r * classes + l as usize])
        .sum();
    Ok(ktensor(dtype, vec![], vec![total / n as f64]))
}

mod norm;
pub(crate) use norm::*;

// ---------------------------------------------------------------------------
// Dropout

pub(crate) fn check_keep_prob(op: &str, attrs: &Attrs) -> Result<f64, OpError> {
    let p = attrs.f64("keep_prob");
    if !(p > 0.0 && p <= 1.0) {
        return Err(OpError::attr(
            "keep_prob",
            format!("`{op}`: `keep_prob` must lie in (0, 1], got {p}"),
        ));
    }
    Ok(p)
}

fn infer_dropout(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let (dtype, dims) = float_tensor(call, 0)?;
    check_keep_prob(call.op.name, call.attrs)?;
    let y = match dims {
        Some(d) => tensor_abs(dtype, d),
        None => unranked(dtype),
    };
    Ok(AbsVal::Tuple(vec![y.clone(), y]))
}

/// The deterministic keep/drop decision for element `i`: a SplitMix64 hash of
/// the seeds and the index, compared with `keep_prob`.
pub(crate) fn dropout_keep(seed0: i64, seed1: i64, i: u64, keep_prob: f64) -> bool {
    if keep_prob >= 1.0 {
        return true;
    }
    let mut z = (seed0 as u64)
        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
        .wrapping_add((seed1 as u64).wrapping_mul(0xC2B2_AE3D_27D4_EB4F))
        .wrapping_add(i.wrapping_mul(0x1656_67B1_9E37_79F9))
        .wrapping_add(0x2545_F491_4F6C_DD1D);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    ((z >> 11) as f64 / (1u64 << 53) as f64) < keep_prob
}

fn kernel_dropout(c: &KernelCall) -> Result<KValue, OpError> {
    let x = c.tensor(0)?;
    let p = check_keep_prob("Dropout", c.attrs)?;
    let (s0, s1) = (c.attrs.int("Seed0"), c.attrs.int("Seed1"));
    let mask: Vec<f64> = (0..x.numel() as u64)
        .map(|i| f64::from(u8::from(dropout_keep(s0, s1, i, p))))
        .collect();
    let y: Vec<f64> = x
        .to_f64_vec()
        .iter()
        .zip(&mask)
        .map(|(v, m)| v * m / p)
        .collect();
    let (dtype, shape) = (x.dtype(), x.shape().to_vec());
    Ok(KValue::Tuple(vec![
        ktensor(dtype, shape.clone(), y),
        ktensor(dtype, shape, mask),
    ]))
}

// ---------------------------------------------------------------------------
// The table.

fn grad_layer_norm(b: &mut dyn GradBuilder, c: &GradCall) -> Vec<Option<GNode>> {
    // MindSpore's bprop: LayerNormGrad(x, dy, variance, mean, gamma); the
    // sensitivities of `mean` and `variance` are not propagated.
    let dy = b.tuple_get(c.dout, 0);
    let mean = b.tuple_get(c.out, 1);
    let var = b.tuple_get(c.out, 2);
    let r = b.prim(
        "LayerNormGrad",
        &[c.inputs[0], dy, var, mean, c.inputs[1]],
        attrs_of(c),
    );
    (0..3).map(|i| Some(b.tuple_get(r, i))).collect()
}

fn grad_softmax(b: &mut dyn GradBuilder, c: &GradCall) -> Vec<Option<GNode>> {
    // MindSpore's bprop: SoftmaxBackward(dout, out, dim). Over several axes
    // (which SoftmaxBackward's one `dim` cannot name), the same
    // `out · (dout − Σ dout·out)` from primitives.
    match c.attrs.ints("axis").as_deref() {
        Some(&[dim]) => vec![Some(b.prim(
            "SoftmaxBackward",
            &[c.dout, c.out],
            vec![("dim", AttrValue::Int(dim))],
        ))],
        _ => {
            let axis = c.attrs.get("axis").cloned().unwrap_or(AttrValue::Int(-1));
            let dy_y = b.prim("Mul", &[c.dout, c.out], vec![]);
            let s = b.prim(
                "ReduceSum",
                &[dy_y],
                vec![("axis", axis), ("keep_dims", AttrValue::Bool(true))],
            );
            let centred = b.prim("Sub", &[c.dout, s], vec![]);
            vec![Some(b.prim("Mul", &[c.out, centred], vec![]))]
        }
    }
}

fn grad_batch_norm(b: &mut dyn GradBuilder, c: &GradCall) -> Vec<Option<GNode>> {
    // MindSpore's bprop: BatchNormGrad with the saved batch statistics
    // (outputs 3 and 4) in training, the given ones in inference, and output 2
    // as the reserve; no gradient for mean/variance.
    let dy = b.tuple_get(c.dout, 0);
    let (mean, var) = if c.attrs.bool("is_training") {
        (b.tuple_get(c.out, 3), b.tuple_get(c.out, 4))
    } else {
        (c.inputs[3], c.inputs[4])
    };
    let reserve = b.tuple_get(c.out, 2);
    let attrs = vec![
        ("is_training", AttrValue::Bool(c.attrs.bool("is_training"))),
        ("epsilon", AttrValue::float(c.attrs.f64("epsilon"))),
        (
            "data_format",
            AttrValue::Str(c.attrs.str("data_format").to_string()),
        ),
    ];
    let r = b.prim(
        "BatchNormGrad",
        &[dy, c.inputs[0], c.inputs[1], mean, var, reserve],
        attrs,
    );
    let mut out: Vec<Option<GNode>> = (0..3).map(|i| Some(b.tuple_get(r, i))).collect();
    out.extend([None, None]);
    out
}

pub const OPS: &[OpDef] = &[
    OpDef {
        name: "Softmax",
        category: Category::NeuralNetwork,
        doc: "Softmax over `axis`: `exp(x - max) / sum(exp(x - max))`, so the values along the axis are positive and sum to 1.",
        schema: Schema::ms(
            &[
                Override::inputs(&["x"], why::INPUT_NAMES),
                Override::attr("axis", AttrType::Ints, Some(AttrDefault::Int(-1)), why::TYPE),
            ],
            &[
                ("x", "The logits, a float tensor."),
                ("axis", "The dimension(s) to normalise over: an int or a tuple of ints, negative values counting from the end. Default -1, the last."),
            ],
        ),
        variadic: false,
        output: OutputDef::Single,
        infer: infer_softmax,
        grad: Some(grad_softmax),
        kernel: Some(|c| kernel_softmax(c, false, "Softmax")),
        traits: Traits::of(Family::Softmax { log: false, grad: false }).batched(BatchRule::Axes { attr: "axis", empty_is_all: false }),
    },
    OpDef {
        name: "LogSoftmax",
        category: Category::NeuralNetwork,
        doc: "Log-softmax over `axis`: `x - max - log(sum(exp(x - max)))`, computed stably.",
        schema: Schema::ms(
            &[],
            &[
                ("logits", "The logits, a float tensor."),
                ("axis", "The dimension to normalise over; negative values count from the end. Default -1, the last."),
            ],
        ),
        variadic: false,
        output: OutputDef::Single,
        infer: infer_softmax,
        grad: Some(|b, c| {
            // MindSpore's bprop: LogSoftmaxGrad(out, dout, axis).
            vec![Some(b.prim(
                "LogSoftmaxGrad",
                &[c.out, c.dout],
                attrs_of(c),
            ))]
        }),
        kernel: Some(|c| kernel_softmax(c, true, "LogSoftmax")),
        traits: Traits::of(Family::Softmax { log: true, grad: false }).batched(BatchRule::Axes { attr: "axis", empty_is_all: false }),
    },
    OpDef {
        name: "SoftmaxCrossEntropyWithLogits",
        category: Category::NeuralNetwork,
        doc: "Cross entropy between `softmax(logits)` and the probability distributions `labels`, per row. Returns `(loss [N], dlogits [N, C])`, the second being `softmax(logits) - labels`, as MindSpore.",
        schema: Schema::ms(
            &[],
            &[
                ("logits", "The logits, `[N, C]`, float."),
                ("labels", "Target distributions, `[N, C]`, of the dtype of `logits` (usually one-hot)."),
            ],
        ),
        variadic: false,
        output: OutputDef::Tuple(&["loss", "dlogits"]),
        infer: infer_softmax_ce,
        grad: Some(|b, c| {
            // MindSpore's bprop: the saved gradient scaled by each row's
            // sensitivity; `labels` get none, and dlogits' sensitivity is unused.
            let saved = b.tuple_get(c.out, 1);
            let dloss = b.tuple_get(c.dout, 0);
            let dloss = b.prim("ExpandDims", &[dloss], vec![("axis", AttrValue::Int(-1))]);
            vec![Some(b.prim("Mul", &[saved, dloss], vec![])), None]
        }),
        kernel: Some(kernel_softmax_ce),
        traits: Traits::NONE.gradgen(Gradgen::Avoid),
    },
    OpDef {
        name: "SparseSoftmaxCrossEntropyWithLogits",
        category: Category::NeuralNetwork,
        doc: "Cross entropy between `softmax(logits)` and class indices `labels`, averaged over the batch: a scalar tensor. With `is_grad=true` it returns the loss's gradient with respect to `logits` instead, `(softmax(logits) - onehot(labels)) / N`.",
        schema: Schema::ms(
            &[
                Override::inputs(&["logits", "labels"], why::INPUT_NAMES),
                Override::drop("sens", why::DROPPED),
            ],
            &[
                ("logits", "The logits, `[N, C]`, float."),
                ("labels", "The class of each row, `[N]`, i32 or i64 in `[0, C)`."),
                ("is_grad", "Return the gradient with respect to `logits` instead of the loss. Default false: the mean loss."),
            ],
        ),
        variadic: false,
        output: OutputDef::Single,
        infer: infer_sparse_softmax_ce,
        grad: Some(|b, c| {
            if c.attrs.bool("is_grad") {
                // MindSpore defines no usable second derivative here.
                return vec![None, None];
            }
            let g = b.prim(
                "SparseSoftmaxCrossEntropyWithLogits",
                &[c.inputs[0], c.inputs[1]],
                vec![("is_grad", AttrValue::Bool(true))],
            );
            vec![Some(b.prim("Mul", &[g, c.dout], vec![])), None]
        }),
        kernel: Some(kernel_sparse_softmax_ce),
        traits: Traits::of(Family::SparseCrossEntropy).gradgen(Gradgen::Avoid),
    },
    OpDef {
        name: "LayerNorm",
        category: Category::NeuralNetwork,
        doc: "Layer normalisation: normalises `input_x` over the dimensions from `begin_norm_axis` on, then scales by `gamma` and shifts by `beta`. Returns `(y, mean, variance)`; `mean` and `variance` keep the normalised dimensions as size 1.",
        schema: Schema::ms(
            &[],
            &[
                ("input_x", "The input, float, of rank at least 1."),
                ("gamma", "The scale, of shape `input_x.shape[begin_params_axis:]`."),
                ("beta", "The shift, of shape `input_x.shape[begin_params_axis:]`."),
                ("begin_norm_axis", "The first dimension normalised over (negative values count from the end). Default 1: every dimension but the first."),
                ("begin_params_axis", "The first dimension `gamma` and `beta` cover. Default 1."),
                ("epsilon", "Added to the variance before the square root, for stability. Default 1e-7."),
            ],
        ),
        variadic: false,
        output: OutputDef::Tuple(&["y", "mean", "variance"]),
        infer: infer_layer_norm,
        grad: Some(grad_layer_norm),
        kernel: Some(kernel_layer_norm),
        traits: Traits::of(Family::RowNorm(RowNorm::Layer)).gradgen(Gradgen::Avoid),
    },
    OpDef {
        name: "BatchNorm",
        category: Category::NeuralNetwork,
        doc: "Batch normalisation per channel (NCHW or [N, C]), `scale · (x - mean) / sqrt(variance + epsilon) + bias`, returning `(y, batch_mean, batch_variance, reserve_space_1, reserve_space_2)`. Inference (`is_training=false`) normalises with `mean`/`variance` and returns them; training uses and returns the batch's statistics (the moving averages are not updated in place).",

        schema: Schema::ms(
            &[
                Override::attr("data_format", AttrType::Str(&["NCHW", "NHWC"]), Some(AttrDefault::Str("NCHW")), why::STRINGS),
            ],
            &[
                ("input_x", "The input, `[N, C]` or `[N, C, H, W]`, float."),
                ("scale", "Per-channel scale (gamma), `[C]`."),
                ("bias", "Per-channel shift (beta), `[C]`."),
                ("mean", "Per-channel running mean, `[C]`; used in inference."),
                ("variance", "Per-channel running variance, `[C]`; used in inference."),
                ("is_training", "Normalise with the batch's statistics (true) or with `mean`/`variance` (false, the default)."),
                ("epsilon", "Added to the variance for stability, in (0, 1]. Default 1e-5."),
                ("momentum", "The moving-average momentum MindSpore uses to update `mean`/`variance` in place, in [0, 1]. Default 0.1. Checked, but nothing is updated in place here."),
                ("data_format", "The layout. Default \"NCHW\", the only one supported on CPU."),
            ],
        ),
        variadic: false,
        output: OutputDef::Tuple(&[
            "y",
            "batch_mean",
            "batch_variance",
            "reserve_space_1",
            "reserve_space_2",
        ]),
        infer: infer_batch_norm,
        grad: Some(grad_batch_norm),
        kernel: Some(kernel_batch_norm),
        traits: Traits::of(Family::BatchNorm { grad: false }).gradgen(Gradgen::Avoid),
    },
    OpDef {
        name: "Dropout",
        category: Category::NeuralNetwork,
        doc: "Zeroes each element of `x` with probability `1 - keep_prob` and scales the rest by `1/keep_prob`, returning `(output, mask)` (mask 1 where kept). The mask is a deterministic function of `Seed0`, `Seed1` and the element's position, so every run gives the same mask; `keep_prob=1` is the identity.",

        schema: Schema::ms(
            &[],
            &[
                ("x", "The input, a float tensor."),
                ("keep_prob", "The probability of keeping an element, in (0, 1]. Default 0.5."),
                ("Seed0", "The operator's random seed. Default 0. With `Seed1` it selects the (reproducible) mask."),
                ("Seed1", "The global random seed. Default 0."),
            ],
        ),
        variadic: false,
        output: OutputDef::Tuple(&["output", "mask"]),
        infer: infer_dropout,
        grad: Some(|b, c| {
            let dy = b.tuple_get(c.dout, 0);
            let mask = b.tuple_get(c.out, 1);
            let keep = ("keep_prob", AttrValue::float(c.attrs.f64("keep_prob")));
            vec![Some(b.prim("DropoutGrad", &[dy, mask], vec![keep]))]
        }),
        kernel: Some(kernel_dropout),
        traits: Traits::NONE.gradgen(Gradgen::Avoid),
    },
];

pub(crate) fn samples() -> Vec<crate::eager::Sample> {
    use crate::eager::{ints, random_f64, Sample};
    let i = AttrValue::Int;
    let t = |v: &[i64]| AttrValue::Tuple(v.iter().map(|&x| AttrValue::Int(x)).collect());
    let f = AttrValue::float;
    let b = AttrValue::Bool;
    let labels = {
        let KValue::Tensor(p) = random_f64(&[3, 4], 74, 0.1, 1.0) else {
            unreachable!()
        };
        // Rows summing to 1, as probability distributions.
        let v = p.to_f64_vec();
        let norm: Vec<f64> = v
            .chunks(4)
            .flat_map(|r| {
                let s: f64 = r.iter().sum();
                r.iter().map(move |x| x / s)
            })
            .collect();
        KValue::Tensor(Tensor::from_f64(vec![3, 4], norm).unwrap())
    };
    let bn_inputs = |seed: u64| {
        vec![
            random_f64(&[3, 2, 2, 3], seed, -1.0, 1.0),
            random_f64(&[2], seed + 1, 0.5, 1.5),
            random_f64(&[2], seed + 2, -0.5, 0.5),
            random_f64(&[2], seed + 3, -0.2, 0.2),
            random_f64(&[2], seed + 4, 0.5, 1.5),
        ]
    };
    vec![
        Sample::new("Softmax", vec![random_f64(&[2, 3, 4], 70, -2.0, 2.0)]),
        Sample::new("Softmax", vec![random_f64(&[2, 3, 4], 71, -2.0, 2.0)])
            .attr("axis", t(&[0, -1])),
        Sample::new("LogSoftmax", vec![random_f64(&[3, 4], 72, -2.0, 2.0)]),
        Sample::new("LogSoftmax", vec![random_f64(&[3, 4, 2], 73, -2.0, 2.0)]).attr("axis", i(-2)),
        Sample::new(
            "SoftmaxCrossEntropyWithLogits",
            vec![random_f64(&[3, 4], 75, -2.0, 2.0), labels],
        ),
        Sample::new(
            "SparseSoftmaxCrossEntropyWithLogits",
            vec![
                random_f64(&[4, 5], 76, -2.0, 2.0),
                ints(DType::I32, &[4], &[0, 4, 2, 4]),
            ],
        ),
        Sample::new(
            "LayerNorm",
            vec![
                random_f64(&[2, 3, 4], 77, -1.0, 1.0),
                random_f64(&[3, 4], 78, 0.5, 1.5),
                random_f64(&[3, 4], 79, -0.5, 0.5),
            ],
        ),
        Sample::new(
            "LayerNorm",
            vec![
                random_f64(&[2, 3, 4], 80, -1.0, 1.0),
                random_f64(&[4], 81, 0.5, 1.5),
                random_f64(&[4], 82, -0.5, 0.5),
            ],
        )
        .attr("begin_norm_axis", i(-1))
        .attr("begin_params_axis", i(-1))
        .attr("epsilon", f(1e-5)),
        Sample::new("BatchNorm", bn_inputs(83)),
        Sample::new("BatchNorm", bn_inputs(88)).attr("is_training", b(true)),
        Sample::new(
            "BatchNorm",
            vec![
                random_f64(&[4, 3], 93, -1.0, 1.0),
                random_f64(&[3], 94, 0.5, 1.5),
                random_f64(&[3], 95, -0.5, 0.5),
                random_f64(&[3], 96, -0.2, 0.2),
                random_f64(&[3], 97, 0.5, 1.5),
            ],
        )
        .attr("is_training", b(true)),
        Sample::new("Dropout", vec![random_f64(&[3, 4], 98, -1.0, 1.0)]).attr("keep_prob", f(1.0)),
        Sample::new("Dropout", vec![random_f64(&[3, 4], 99, -1.0, 1.0)])
            .attr("keep_prob", f(0.5))
            .attr("Seed0", i(7)),
    ]
}
