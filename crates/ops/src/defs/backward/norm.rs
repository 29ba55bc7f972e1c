//! MindSpore's backward primitives of the normalisations, softmax and dropout:
//! `LayerNormGrad`, `BatchNormGrad`, `SoftmaxBackward`, `LogSoftmaxGrad` and
//! `DropoutGrad`, with MindSpore's names, argument order, outputs and
//! attributes, as its bprops emit them (`LayerNorm`'s, `BatchNorm`'s, ...
//! rules in `nn.rs` emit these).
//!
//! `LayerNormGrad` and `BatchNormGrad` have no gradient rule of their own:
//! differentiating them inlines their expansions in
//! `crates/ops/composite/gradient-helpers.mir`, which recompute the
//! statistics from `x` so that second derivatives see their dependence on it.
//! The others have rules. Checked against MindSpore 2.10 in
//! `tests/ms_oracle/backward_norm_act.py`.

use crate::schema::{why, Override, Schema};
use crate::{Family, RowNorm, Traits};
use ir::{AbsVal, AttrValue, Shape};
use tensor::Tensor;

use crate::defs::nn::{
    bn_dims, check_bn_format, check_keep_prob, from_f64, groups, layer_norm_axes, softmax_axes,
};
use crate::infer::InferCall;
use crate::kernel::{KValue, KernelCall};
use crate::{
    AttrDefault, AttrType, Category, GNode, GradBuilder, GradCall, OpDef, OpError, OutputDef,
    ParamDef,
};

// ---------------------------------------------------------------------------
// Shape rules.

/// A tensor with the dtype of input `d` and the shape of input `s`.
fn like(call: &InferCall, d: usize, s: usize) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let dtype = call.inputs[d]
        .dtype()
        .ok_or_else(|| OpError::input(d, format!("`{}` needs a tensor", call.op.name)))?;
    let shape = call.inputs[s].shape().unwrap_or(Shape::Unranked);
    Ok(AbsVal::Tensor { dtype, shape })
}

/// `(dx, dgamma, dbeta)` / `(dx, dscale, dbias)`: shapes of inputs `x` and `p`,
/// dtypes of the gradient `g` and of `p`.
fn norm_grad(call: &InferCall, g: usize, x: usize, p: usize) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let dx = like(call, g, x)?;
    let dp = like(call, p, p)?;
    Ok(AbsVal::Tuple(vec![dx, dp.clone(), dp]))
}

fn infer_batch_norm_grad(call: &InferCall) -> Result<AbsVal, OpError> {
    check_bn_format(call.op.name, call.attrs)?;
    norm_grad(call, 0, 1, 2)
}

// ---------------------------------------------------------------------------
// Kernels.

fn ktensor(dtype: ir::DType, shape: Vec<usize>, data: Vec<f64>) -> KValue {
    KValue::Tensor(from_f64(dtype, shape, data))
}

/// `LayerNormGrad(x, dy, variance, mean, gamma)`: `(dx, dgamma, dbeta)`, with
/// `rstd = 1/sqrt(variance + epsilon)` (MindSpore's bprop sets the forward's
/// `epsilon` on the primitive; its kernel defaults it to 1e-7).
pub(crate) fn kernel_layer_norm_grad(c: &KernelCall) -> Result<KValue, OpError> {
    let (x, dy, var, mean, gamma) = (
        c.tensor(0)?,
        c.tensor(1)?,
        c.tensor(2)?,
        c.tensor(3)?,
        c.tensor(4)?,
    );
    let s = x.shape();
    let (bna, _) = layer_norm_axes("LayerNormGrad", c.attrs, s.len())?;
    let eps = c.attrs.f64("epsilon");
    let rows: usize = s[..bna].iter().product();
    let m: usize = s[bna..].iter().product();
    let p = gamma.numel().max(1);
    if dy.shape() != s || var.numel() != rows || mean.numel() != rows {
        return Err(OpError::call("`LayerNormGrad`: inconsistent shapes"));
    }
    let (xv, dyv, vv, mv, gv) = (
        x.to_f64_vec(),
        dy.to_f64_vec(),
        var.to_f64_vec(),
        mean.to_f64_vec(),
        gamma.to_f64_vec(),
    );
    let mut dx = vec![0.0; xv.len()];
    let (mut dgamma, mut dbeta) = (vec![0.0; gamma.numel()], vec![0.0; gamma.numel()]);
    for r in 0..rows {
        let rstd = 1.0 / (vv[r] + eps).sqrt();
        let (mut sum_g, mut sum_gx) = (0.0, 0.0);
        for k in 0..m {
            let e = r * m + k;
            let xhat = (xv[e] - mv[r]) * rstd;
            let g = dyv[e] * gv[e % p];
            sum_g += g;
            sum_gx += g * xhat;
            dgamma[e % p] += dyv[e] * xhat;
            dbeta[e % p] += dyv[e];
        }
        let (mean_g, mean_gx) = (sum_g / m as f64, sum_gx / m as f64);
        for k in 0..m {
            let e = r * m + k;
            let xhat = (xv[e] - mv[r]) * rstd;
            dx[e] = rstd * (dyv[e] * gv[e % p] - mean_g - xhat * mean_gx);
        }
    }
    let dtype = dy.dtype();
    Ok(KValue::Tuple(vec![
        ktensor(dtype, s.to_vec(), dx),
        ktensor(dtype, gamma.shape().to_vec(), dgamma),
        ktensor(dtype, gamma.shape().to_vec(), dbeta),
    ]))
}

/// `BatchNormGrad(dout, x, scale, saved_mean, saved_variance, reserve)`:
/// `(dx, dscale, dbias)`, with the batch statistics' dependence on `x` in
/// training mode. `reserve` is not read (MindSpore's CPU kernel does not
/// either).
pub(crate) fn kernel_batch_norm_grad(c: &KernelCall) -> Result<KValue, OpError> {
    let (dy, x, scale, mean, var) = (
        c.tensor(0)?,
        c.tensor(1)?,
        c.tensor(2)?,
        c.tensor(3)?,
        c.tensor(4)?,
    );
    check_bn_format("BatchNormGrad", c.attrs)?;
    let (n, ch, hw) = bn_dims(x.shape())?;
    if dy.shape() != x.shape() || [scale, mean, var].iter().any(|t| t.shape() != [ch]) {
        return Err(OpError::call("`BatchNormGrad`: inconsistent shapes"));
    }
    let eps = c.attrs.f64("epsilon");
    let training = c.attrs.bool("is_training");
    let (xv, dyv, sv, mv, vv) = (
        x.to_f64_vec(),
        dy.to_f64_vec(),
        scale.to_f64_vec(),
        mean.to_f64_vec(),
        var.to_f64_vec(),
    );
    let mut dx = vec![0.0; xv.len()];
    let (mut dscale, mut dbias) = (vec![0.0; ch], vec![0.0; ch]);
    let count = (n * hw) as f64;
    for k in 0..ch {
        let rstd = 1.0 / (vv[k] + eps).sqrt();
        let cells = || (0..n).flat_map(move |b| (b * ch + k) * hw..(b * ch + k + 1) * hw);
        let (mut sum_dy, mut sum_dy_xhat) = (0.0, 0.0);
        for e in cells() {
            let xhat = (xv[e] - mv[k]) * rstd;
            sum_dy += dyv[e];
            sum_dy_xhat += dyv[e] * xhat;
        }
        dscale[k] = sum_dy_xhat;
        dbias[k] = sum_dy;
        for e in cells() {
            dx[e] = if training {
                let xhat = (xv[e] - mv[k]) * rstd;
                sv[k] * rstd * (dyv[e] - sum_dy / count - xhat * sum_dy_xhat / count)
            } else {
                sv[k] * rstd * dyv[e]
            };
        }
    }
    Ok(KValue::Tuple(vec![
        ktensor(dy.dtype(), x.shape().to_vec(), dx),
        ktensor(scale.dtype(), vec![ch], dscale),
        ktensor(scale.dtype(), vec![ch], dbias),
    ]))
}

/// The softmax gradient over `axis` from the forward output `y` and the
/// sensitivity `dy`: `y · (dy − Σ dy·y)`, or for log-softmax
/// `dy − exp(y) · Σ dy`.
pub(crate) fn softmax_grad(
    op: &str,
    y: &Tensor,
    dy: &Tensor,
    axis: i64,
    log: bool,
) -> Result<KValue, OpError> {
    if y.shape() != dy.shape() {
        return Err(OpError::call(format!(
            "`{op}`: the output {:?} and its gradient {:?} differ in shape",
            y.shape(),
            dy.shape()
        )));
    }
    let axes = softmax_axes(op, &[axis], y.rank())?;
    let (yv, dv) = (y.to_f64_vec(), dy.to_f64_vec());
    let mut dx = vec![0.0; yv.len()];
    let (outer, inner) = groups(y.shape(), &axes);
    for &o in &outer {
        if log {
            let s: f64 = inner.iter().map(|&i| dv[o + i]).sum();
            for &i in &inner {
                dx[o + i] = dv[o + i] - yv[o + i].exp() * s;
            }
        } else {
            let s: f64 = inner.iter().map(|&i| dv[o + i] * yv[o + i]).sum();
            for &i in &inner {
                dx[o + i] = yv[o + i] * (dv[o + i] - s);
            }
        }
    }
    Ok(ktensor(dy.dtype(), dy.shape().to_vec(), dx))
}

/// `SoftmaxBackward(dout, out)`.
fn kernel_softmax_backward(c: &KernelCall) -> Result<KValue, OpError> {
    softmax_grad(
        "SoftmaxBackward",
        c.tensor(1)?,
        c.tensor(0)?,
        c.attrs.int("dim"),
        false,
    )
}

/// `LogSoftmaxGrad(logits, grad)`, `logits` being LogSoftmax's output.
fn kernel_log_softmax_grad(c: &KernelCall) -> Result<KValue, OpError> {
    softmax_grad(
        "LogSoftmaxGrad",
        c.tensor(0)?,
        c.tensor(1)?,
        c.attrs.int("axis"),
        true,
    )
}

/// `DropoutGrad(dy, mask)`: `dy · mask · (1 / keep_prob)`, the scale computed
/// in the C++ `float` MindSpore's kernel holds it in (`1.f / keep_prob`), so
/// an f64 `dy` is scaled by exactly MindSpore's factor.
fn kernel_dropout_grad(c: &KernelCall) -> Result<KValue, OpError> {
    let (dy, mask) = (c.tensor(0)?, c.tensor(1)?);
    let scale = (1.0 / check_keep_prob("DropoutGrad", c.attrs)? as f32) as f64;
    if dy.shape() != mask.shape() {
        return Err(OpError::call(format!(
            "`DropoutGrad`: `dy` {:?} and `mask` {:?} differ in shape",
            dy.shape(),
            mask.shape()
        )));
    }
    let v: Vec<f64> = dy
        .to_f64_vec()
        .iter()
        .zip(mask.to_f64_vec())
        .map(|(d, m)| d * m * scale)
        .collect();
    Ok(ktensor(dy.dtype(), dy.shape().to_vec(), v))
}

// ---------------------------------------------------------------------------
// Gradient rules.

/// A sum over `axis`, kept.
fn axis_sum(b: &mut dyn GradBuilder, axis: i64, x: GNode) -> GNode {
    b.prim(
        "ReduceSum",
        &[x],
        vec![
            ("axis", AttrValue::Int(axis)),
            ("keep_dims", AttrValue::Bool(true)),
        ],
    )
}

/// `SoftmaxBackward(dout, out) = out·dout − out·s`, `s = Σ dout·out`. For a
/// sensitivity `u`: `d/d dout = SoftmaxBackward(u, out)` (it is self-adjoint
/// in `dout`), and `d/d out = u·(dout − s) − dout·Σ u·out`.
fn grad_softmax_backward(b: &mut dyn GradBuilder, c: &GradCall) -> Vec<Option<GNode>> {
    let (dout, out, u) = (c.inputs[0], c.inputs[1], c.dout);
    let dim = c.attrs.int("dim");
    let d_dout = b.prim(
        "SoftmaxBackward",
        &[u, out],
        vec![("dim", AttrValue::Int(dim))],
    );
    let dy_y = b.prim("Mul", &[dout, out], vec![]);
    let s = axis_sum(b, dim, dy_y);
    let uy = b.prim("Mul", &[u, out], vec![]);
    let a = axis_sum(b, dim, uy);
    let centred = b.prim("Sub", &[dout, s], vec![]);
    let first = b.prim("Mul", &[u, centred], vec![]);
    let second = b.prim("Mul", &[dout, a], vec![]);
    let d_out = b.prim("Sub", &[first, second], vec![]);
    vec![Some(d_dout), Some(d_out)]
}

/// `LogSoftmaxGrad(y, dy) = dy − exp(y)·Σ dy`. For a sensitivity `u`:
/// `d/d dy = u − Σ u·exp(y)`, `d/dy = −u·exp(y)·Σ dy`.
fn grad_log_softmax_grad(b: &mut dyn GradBuilder, c: &GradCall) -> Vec<Option<GNode>> {
    let (y, dy, u) = (c.inputs[0], c.inputs[1], c.dout);
    let axis = c.attrs.int("axis");
    let e = b.prim("Exp", &[y], vec![]);
    let ue = b.prim("Mul", &[u, e], vec![]);
    let a = axis_sum(b, axis, ue);
    let d_dy = b.prim("Sub", &[u, a], vec![]);
    let s = axis_sum(b, axis, dy);
    let ues = b.prim("Mul", &[ue, s], vec![]);
    let d_y = b.prim("Neg", &[ues], vec![]);
    vec![Some(d_y), Some(d_dy)]
}

/// `DropoutGrad` is linear in each of `dy` and `mask`.
fn grad_dropout_grad(b: &mut dyn GradBuilder, c: &GradCall) -> Vec<Option<GNode>> {
    let keep = vec![("keep_prob", AttrValue::float(c.attrs.f64("keep_prob")))];
    let g = b.prim("DropoutGrad", &[c.dout, c.inputs[1]], keep.clone());
    let m = b.prim("DropoutGrad", &[c.dout, c.inputs[0]], keep);
    vec![Some(g), Some(m)]
}

// ---------------------------------------------------------------------------
// The table.

pub const OPS: &[OpDef] = &[
    OpDef {
        name: "LayerNormGrad",
        category: Category::Backward,
        doc: "The gradients of `LayerNorm` with respect to `x`, `gamma` and `beta`, `(dx, dgamma, dbeta)`, from `dy` (the gradient of its `y`) and the `mean` and `variance` it returned (MindSpore's bprop of LayerNorm). The statistics' own sensitivities are not propagated, as MindSpore's. Differentiating it again inlines its expansion (crates/ops/composite/gradient-helpers.mir).",
        schema: Schema::ms(
            &[
                Override::insert("begin_params_axis", ParamDef::attr("epsilon", AttrType::Float, Some(AttrDefault::Float(1e-7)), "LayerNorm's epsilon. MindSpore's bprop sets it on the primitive (not an input); its kernel defaults it to 1e-7."), "MindSpore's bprop of LayerNorm sets the forward's `epsilon` on the LayerNormGrad primitive (`primitive_attrs: {epsilon: ...}` in its dumps), not as an input; its kernel defaults it to 1e-7, as the registry (checked by the oracle)"),
            ],
            &[
                ("x", "LayerNorm's input."),
                ("dy", "The gradient of LayerNorm's `y`."),
                ("variance", "LayerNorm's `variance` output."),
                ("mean", "LayerNorm's `mean` output."),
                ("gamma", "LayerNorm's `gamma`."),
                ("begin_norm_axis", "As LayerNorm's: the first normalised dimension."),
                ("begin_params_axis", "As LayerNorm's: the first dimension `gamma` covers."),
            ],
        ),
        variadic: false,
        output: OutputDef::Tuple(&["dx", "dgamma", "dbeta"]),
        infer: |c| norm_grad(c, 1, 0, 4),
        grad: None,
        kernel: Some(kernel_layer_norm_grad),
        traits: Traits::of(Family::RowNorm(RowNorm::LayerGrad)),
    },
    OpDef {
        name: "BatchNormGrad",
        category: Category::Backward,
        doc: "The gradients of `BatchNorm` with respect to `x`, `scale` and `bias`, `(dx, dscale, dbias)`, from `dout` (the gradient of its `y`) and the statistics it normalised with: the batch's (its outputs 3 and 4) in training, the running ones in inference (MindSpore's bprop of BatchNorm). In training `dx` includes the batch statistics' dependence on `x`. Differentiating it again inlines its expansion (crates/ops/composite/gradient-helpers.mir).",
        schema: Schema::ms(
            &[
                Override::attr("data_format", AttrType::Str(&["NCHW", "NHWC"]), Some(AttrDefault::Str("NCHW")), why::STRINGS),
            ],
            &[
                ("dout", "The gradient of BatchNorm's `y`."),
                ("x", "BatchNorm's input, `[N, C]` or `[N, C, H, W]`."),
                ("scale", "BatchNorm's `scale`, `[C]`."),
                ("saved_mean", "The mean the forward pass normalised with, `[C]`."),
                ("saved_variance", "The variance the forward pass normalised with, `[C]`."),
                ("reserve", "BatchNorm's output 2, as MindSpore's bprop passes it; not read."),
                ("is_training", "Whether the forward pass used the batch's statistics. Default false."),
                ("epsilon", "BatchNorm's epsilon. Default 1e-5."),
                ("data_format", "The layout. Default \"NCHW\", the only one supported on CPU."),
            ],
        ),
        variadic: false,
        output: OutputDef::Tuple(&["dx", "dscale", "dbias"]),
        infer: infer_batch_norm_grad,
        grad: None,
        kernel: Some(kernel_batch_norm_grad),
        traits: Traits::of(Family::BatchNorm { grad: true }),
    },
    OpDef {
        name: "SoftmaxBackward",
        category: Category::Backward,
        doc: "The gradient of `Softmax` over `dim` from its output: `out · (dout − Σ_dim dout·out)` (what MindSpore's bprop of Softmax emits).",
        schema: Schema::ms(
            &[],
            &[
                ("dout", "The gradient of Softmax's output."),
                ("out", "Softmax's output."),
                ("dim", "Softmax's axis; negative values count from the end. Default -1."),
            ],
        ),
        variadic: false,
        output: OutputDef::Single,
        infer: |c| like(c, 0, 0),
        grad: Some(grad_softmax_backward),
        kernel: Some(kernel_softmax_backward),
        traits: Traits::of(Family::Softmax { log: false, grad: true }),
    },
    OpDef {
        name: "LogSoftmaxGrad",
        category: Category::Backward,
        doc: "The gradient of `LogSoftmax` over `axis` from its output `logits`: `grad − exp(logits) · Σ_axis grad`.",
        schema: Schema::ms(
            &[],
            &[
                ("logits", "LogSoftmax's output."),
                ("grad", "The gradient of LogSoftmax's output."),
                ("axis", "LogSoftmax's axis; negative values count from the end. Default -1."),
            ],
        ),
        variadic: false,
        output: OutputDef::Single,
        infer: |c| like(c, 1, 1),
        grad: Some(grad_log_softmax_grad),
        kernel: Some(kernel_log_softmax_grad),
        traits: Traits::of(Family::Softmax { log: true, grad: true }),
    },
    OpDef {
        name: "DropoutGrad",
        category: Category::Backward,
        doc: "The gradient of `Dropout`: `dy · mask / keep_prob`.",
        schema: Schema::ms(
            &[],
            &[
                ("dy", "The gradient of Dropout's output."),
                ("mask", "Dropout's mask (1 where kept)."),
                ("keep_prob", "Dropout's keep_prob, in (0, 1]. Default 0.5."),
            ],
        ),
        variadic: false,
        output: OutputDef::Single,
        infer: |c| like(c, 0, 0),
        grad: Some(grad_dropout_grad),
        kernel: Some(kernel_dropout_grad),
        traits: Traits::NONE,
    },
];

pub(crate) fn samples() -> Vec<crate::eager::Sample> {
    use crate::eager::{random_f64, Sample};
    let i = AttrValue::Int;
    let b = AttrValue::Bool;
    // A valid softmax output along `axis` of `shape`.
    let softmax = |shape: &[usize], axis: usize, seed: u64| {
        let KValue::Tensor(x) = random_f64(shape, seed, -2.0, 2.0) else {
            unreachable!()
        };
        let y = crate::defs::nn::softmax(&x.to_f64_vec(), shape, &[axis], false);
        KValue::Tensor(Tensor::from_f64(shape.to_vec(), y).unwrap())
    };
    let log_softmax = |shape: &[usize], axis: usize, seed: u64| {
        let KValue::Tensor(x) = random_f64(shape, seed, -2.0, 2.0) else {
            unreachable!()
        };
        let y = crate::defs::nn::softmax(&x.to_f64_vec(), shape, &[axis], true);
        KValue::Tensor(Tensor::from_f64(shape.to_vec(), y).unwrap())
    };
    // A LayerNorm's statistics over the dimensions from `k` on.
    let stats = |x: &KValue, k: usize| {
        let KValue::Tensor(x) = x else { unreachable!() };
        let s = x.shape();
        let m: usize = s[k..].iter().product();
        let v = x.to_f64_vec();
        let (mut mean, mut var) = (Vec::new(), Vec::new());
        for row in v.chunks(m) {
            let mu = row.iter().sum::<f64>() / m as f64;
            mean.push(mu);
            var.push(row.iter().map(|e| (e - mu) * (e - mu)).sum::<f64>() / m as f64);
        }
        let mut stat = s[..k].to_vec();
        stat.resize(s.len(), 1);
        (
            KValue::Tensor(Tensor::from_f64(stat.clone(), mean).unwrap()),
            KValue::Tensor(Tensor::from_f64(stat, var).unwrap()),
        )
    };
    let ln_x = random_f64(&[2, 3, 4], 600, -1.0, 1.0);
    let (ln_mean, ln_var) = stats(&ln_x, 1);
    let ln_x2 = random_f64(&[3, 5], 601, -1.0, 1.0);
    let (ln_mean2, ln_var2) = stats(&ln_x2, 1);
    let bn = |seed: u64, shape: &[usize]| {
        let c = shape[1];
        vec![
            random_f64(shape, seed, -1.0, 1.0),
            random_f64(shape, seed + 1, -1.0, 1.0),
            random_f64(&[c], seed + 2, 0.5, 1.5),
            random_f64(&[c], seed + 3, -0.2, 0.2),
            random_f64(&[c], seed + 4, 0.5, 1.5),
            random_f64(&[c], seed + 5, 0.5, 1.5),
        ]
    };
    vec![
        Sample::new(
            "LayerNormGrad",
            vec![
                ln_x,
                random_f64(&[2, 3, 4], 602, -1.0, 1.0),
                ln_var,
                ln_mean,
                random_f64(&[3, 4], 603, 0.5, 1.5),
            ],
        ),
        Sample::new(
            "LayerNormGrad",
            vec![
                ln_x2,
                random_f64(&[3, 5], 604, -1.0, 1.0),
                ln_var2,
                ln_mean2,
                random_f64(&[5], 605, 0.5, 1.5),
            ],
        )
        .attr("begin_norm_axis", i(-1))
        .attr("begin_params_axis", i(-1))
        .attr("epsilon", AttrValue::float(1e-5)),
        Sample::new("BatchNormGrad", bn(610, &[3, 2, 2, 3])).attr("is_training", b(true)),
        Sample::new("BatchNormGrad", bn(620, &[4, 3])),
        Sample::new(
            "SoftmaxBackward",
            vec![
                random_f64(&[2, 4], 132, -1.0, 1.0),
                softmax(&[2, 4], 1, 131),
            ],
        ),
        Sample::new(
            "SoftmaxBackward",
            vec![
                random_f64(&[3, 2, 3], 134, -1.0, 1.0),
                softmax(&[3, 2, 3], 0, 133),
            ],
        )
        .attr("dim", i(0)),
        Sample::new(
            "LogSoftmaxGrad",
            vec![
                log_softmax(&[2, 4], 1, 135),
                random_f64(&[2, 4], 136, -1.0, 1.0),
            ],
        ),
        Sample::new(
            "LogSoftmaxGrad",
            vec![
                log_softmax(&[3, 2], 0, 137),
                random_f64(&[3, 2], 138, -1.0, 1.0),
            ],
        )
        .attr("axis", i(0)),
        Sample::new(
            "DropoutGrad",
            vec![
                random_f64(&[2, 3], 139, -1.0, 1.0),
                KValue::Tensor(
                    Tensor::from_f64(vec![2, 3], vec![1.0, 0.0, 1.0, 1.0, 0.0, 0.0]).unwrap(),
                ),
            ],
        )
        .attr("keep_prob", AttrValue::float(0.75)),
    ]
}
