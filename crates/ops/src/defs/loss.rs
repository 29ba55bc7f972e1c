//! Losses: `BinaryCrossEntropy` (what `nn.BCELoss` exports),
//! `BCEWithLogitsLoss` (`nn.BCEWithLogitsLoss`), `SigmoidCrossEntropyWithLogits`,
//! `SmoothL1Loss` (`nn.SmoothL1Loss`), `KLDivLoss` (`nn.KLDivLoss`),
//! `SoftMarginLoss` (`nn.SoftMarginLoss`), `MSELossExt` (`mint.nn.MSELoss`),
//! `NLLLoss` (`mint.nn.NLLLoss`) and `L2Loss`.
//!
//! The elementwise losses share one engine: every operand is broadcast to the
//! result's shape, each element's loss and its partial derivatives are
//! computed in f64, and `reduction` sums or averages. The gradient helper
//! `_ElementwiseLossGrad` returns the exact gradient of every operand
//! (summed back to its shape); MindSpore's bprops give the same for the
//! prediction and target, and (unlike some of them) a true gradient to the
//! weights.

use crate::schema::{why, Override, Schema};
use crate::Gradgen;
use crate::Traits;
use ir::{AbsVal, AttrValue, DType, Dim};
use tensor::Tensor;

use crate::defs::nn::common::{
    float_input, given, grad_given, ktensor, maybe_ranked, opt_tensor, Reduction,
};
use crate::defs::shape::{dims_of, fmt_dims};
use crate::infer::{broadcast_shapes, InferCall};
use crate::kernel::{broadcast_shape, broadcast_strides, KValue, KernelCall};
use crate::{
    AttrDefault, AttrType, Attrs, Category, GNode, GradBuilder, GradCall, OpDef, OpError,
    OutputDef, ParamDef,
};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    BinaryCrossEntropy,
    BCEWithLogitsLoss,
    SigmoidCrossEntropyWithLogits,
    SmoothL1Loss,
    KLDivLoss,
    SoftMarginLoss,
    MSELossExt,
}

const KINDS: &[Kind] = &[
    Kind::BinaryCrossEntropy,
    Kind::BCEWithLogitsLoss,
    Kind::SigmoidCrossEntropyWithLogits,
    Kind::SmoothL1Loss,
    Kind::KLDivLoss,
    Kind::SoftMarginLoss,
    Kind::MSELossExt,
];

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::BinaryCrossEntropy => "BinaryCrossEntropy",
            Kind::BCEWithLogitsLoss => "BCEWithLogitsLoss",
            Kind::SigmoidCrossEntropyWithLogits => "SigmoidCrossEntropyWithLogits",
            Kind::SmoothL1Loss => "SmoothL1Loss",
            Kind::KLDivLoss => "KLDivLoss",
            Kind::SoftMarginLoss => "SoftMarginLoss",
            Kind::MSELossExt => "MSELossExt",
        }
    }

    fn of(name: &str) -> Option<Kind> {
        KINDS.iter().copied().find(|k| k.name() == name)
    }

    /// How many inputs (prediction, target, then optional weights).
    fn arity(self) -> usize {
        match self {
            Kind::BinaryCrossEntropy => 3,
            Kind::BCEWithLogitsLoss => 4,
            _ => 2,
        }
    }

    /// Whether the target may broadcast against the prediction (else it
    /// must have its shape; weights always broadcast).
    fn target_broadcasts(self) -> bool {
        self == Kind::MSELossExt
    }

    fn reduction(self, attrs: &Attrs) -> Red {
        if self == Kind::SigmoidCrossEntropyWithLogits {
            return Red::Plain(Reduction::None);
        }
        let r = attrs.str("reduction");
        if r.eq_ignore_ascii_case("batchmean") {
            Red::BatchMean
        } else {
            Red::Plain(Reduction::of(attrs))
        }
    }
}

/// A `reduction`, with KLDivLoss's "batchmean" (the sum over the first
/// dimension's size).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Red {
    Plain(Reduction),
    BatchMean,
}

/// `ln(max(v, 1e-12))`, MindSpore's clamped logarithm of BinaryCrossEntropy.
fn clog(v: f64) -> f64 {
    v.max(1e-12).ln()
}

/// `log(1 + eˣ)` without overflow (the formulas' helper).
fn softplus(x: f64) -> f64 {
    crate::formula::fns::softplus_(x)
}

/// The logistic function (the formulas' helper).
fn sigmoid(x: f64) -> f64 {
    crate::formula::fns::sigm(x)
}

/// One element's loss and its partial derivatives with respect to the
/// prediction `x`, target `t`, weight `w` and positive weight `p`.
fn element(kind: Kind, beta: f64, x: f64, t: f64, w: f64, p: f64) -> [f64; 5] {
    match kind {
        Kind::BinaryCrossEntropy => {
            let f = -(t * clog(x) + (1.0 - t) * clog(1.0 - x));
            let dx = (x - t) / (x * (1.0 - x)).max(1e-12);
            let dt = clog(1.0 - x) - clog(x);
            [w * f, w * dx, w * dt, f, 0.0]
        }
        Kind::BCEWithLogitsLoss => {
            let (spn, spp) = (softplus(-x), softplus(x));
            let f = p * t * spn + (1.0 - t) * spp;
            let dx = -p * t * sigmoid(-x) + (1.0 - t) * sigmoid(x);
            let dt = p * spn - spp;
            [w * f, w * dx, w * dt, f, w * t * spn]
        }
        Kind::SigmoidCrossEntropyWithLogits => [softplus(x) - x * t, sigmoid(x) - t, -x, 0.0, 0.0],
        Kind::SmoothL1Loss => {
            let d = x - t;
            let (f, g) = if d.abs() < beta {
                (0.5 * d * d / beta, d / beta)
            } else {
                (d.abs() - 0.5 * beta, d.signum())
            };
            [f, g, -g, 0.0, 0.0]
        }
        Kind::KLDivLoss => {
            if t > 0.0 {
                [t * (t.ln() - x), -t, t.ln() + 1.0 - x, 0.0, 0.0]
            } else {
                [0.0, -t, 0.0, 0.0, 0.0]
            }
        }
        Kind::SoftMarginLoss => {
            let z = -t * x;
            let s = sigmoid(z);
            [softplus(z), -t * s, -x * s, 0.0, 0.0]
        }
        Kind::MSELossExt => {
            let d = x - t;
            [d * d, 2.0 * d, -2.0 * d, 0.0, 0.0]
        }
    }
}

// ---------------------------------------------------------------------------
// Attributes and shapes.

fn check_attrs(kind: Kind, attrs: &Attrs) -> Result<f64, OpError> {
    let op = kind.name();
    if kind == Kind::SmoothL1Loss {
        let beta = attrs.f64("beta");
        if beta.is_nan() || beta <= 0.0 {
            return Err(OpError::attr(
                "beta",
                format!("`{op}`: `beta` must be positive (as MindSpore), got {beta}"),
            ));
        }
        return Ok(beta);
    }
    Ok(1.0)
}

fn infer_loss(call: &InferCall, kind: Kind) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let op = call.op.name;
    check_attrs(kind, call.attrs)?;
    let (dtype, xd) = float_input(call, 0)?;
    let mut shape = call.tensor(0)?.1;
    for i in 1..kind.arity() {
        if i >= 2 && !given(call, i) {
            continue;
        }
        let (d, dims) = dims_of(call, i)?;
        if d != dtype {
            return Err(OpError::input(
                i,
                format!(
                    "`{op}` needs `{}` of the dtype of `{}`, {dtype}, got {d}",
                    call.input_name(i),
                    call.input_name(0)
                ),
            ));
        }
        if i == 1 && !kind.target_broadcasts() {
            if let (Some(a), Some(b)) = (&xd, &dims) {
                if a.len() != b.len()
                    || a.iter()
                        .zip(b)
                        .any(|(p, q)| !crate::defs::shape::dims_may_equal(p, q))
                {
                    return Err(OpError::input(
                        1,
                        format!(
                            "`{op}` needs `{}` of the shape of `{}` {}, got {}",
                            call.input_name(1),
                            call.input_name(0),
                            fmt_dims(a),
                            fmt_dims(b)
                        ),
                    ));
                }
            }
            continue;
        }
        let (_, s) = call.tensor(i)?;
        let joined = broadcast_shapes(&shape, &s).map_err(|m| {
            OpError::input(
                i,
                format!("`{op}`: `{}` does not broadcast: {m}", call.input_name(i)),
            )
        })?;
        if i >= 2 && joined != shape && !kind.target_broadcasts() {
            return Err(OpError::input(
                i,
                format!(
                    "`{op}`: `{}` {} must broadcast to `{}` {}",
                    call.input_name(i),
                    s,
                    call.input_name(0),
                    shape
                ),
            ));
        }
        shape = joined;
    }
    let dims = shape.dims().map(<[Dim]>::to_vec);
    Ok(match kind.reduction(call.attrs) {
        Red::Plain(r) => r.result(dtype, dims),
        Red::BatchMean => {
            if let Some(d) = &dims {
                if d.is_empty() {
                    return Err(OpError::input(
                        0,
                        format!("`{op}`: reduction=\"batchmean\" needs inputs of rank at least 1"),
                    ));
                }
            }
            maybe_ranked(dtype, Some(vec![]))
        }
    })
}

/// Each operand's offset for every element of the broadcast result.
fn offsets(shape: &[usize], out: &[usize]) -> Vec<usize> {
    let strides = broadcast_strides(shape, out);
    let n: usize = out.iter().product();
    let mut idx = vec![0usize; out.len()];
    let mut res = Vec::with_capacity(n);
    for _ in 0..n {
        res.push(idx.iter().zip(&strides).map(|(i, s)| i * s).sum());
        for d in (0..out.len()).rev() {
            idx[d] += 1;
            if idx[d] < out[d] {
                break;
            }
            idx[d] = 0;
        }
    }
    res
}

/// The operands of a call (absent weights as `None`), their broadcast shape,
/// and every element's `[loss, d/dx, d/dt, d/dw, d/dp]`.
#[allow(clippy::type_complexity)]
fn evaluate(
    kind: Kind,
    attrs: &Attrs,
    ops: &[Option<&Tensor>],
) -> Result<(Vec<usize>, Vec<Vec<usize>>, Vec<[f64; 5]>), OpError> {
    let beta = check_attrs(kind, attrs)?;
    let mut shape = ops[0].expect("a prediction").shape().to_vec();
    for (i, t) in ops.iter().enumerate().skip(1) {
        if let Some(t) = t {
            shape = broadcast_shape(&shape, t.shape()).ok_or_else(|| {
                OpError::input(
                    i,
                    format!(
                        "`{}`: shapes {shape:?} and {:?} do not broadcast",
                        kind.name(),
                        t.shape()
                    ),
                )
            })?;
        }
    }
    let offs: Vec<Vec<usize>> = ops
        .iter()
        .map(|t| t.map_or_else(Vec::new, |t| offsets(t.shape(), &shape)))
        .collect();
    let vals: Vec<Option<Vec<f64>>> = ops.iter().map(|t| t.map(Tensor::to_f64_vec)).collect();
    let n: usize = shape.iter().product();
    let get = |i: usize, e: usize, default: f64| match &vals.get(i) {
        Some(Some(v)) => v[offs[i][e]],
        _ => default,
    };
    let parts = (0..n)
        .map(|e| {
            element(
                kind,
                beta,
                get(0, e, 0.0),
                get(1, e, 0.0),
                get(2, e, 1.0),
                get(3, e, 1.0),
            )
        })
        .collect();
    Ok((shape, offs, parts))
}

fn reduce(red: Red, loss: Vec<f64>, shape: &[usize]) -> (Vec<usize>, Vec<f64>) {
    match red {
        Red::Plain(r) => r.apply(loss, shape),
        Red::BatchMean => {
            let s: f64 = loss.iter().sum();
            (
                vec![],
                vec![s / shape.first().copied().unwrap_or(1).max(1) as f64],
            )
        }
    }
}

fn spread(red: Red, dout: &[f64], shape: &[usize]) -> Vec<f64> {
    let n: usize = shape.iter().product();
    match red {
        Red::Plain(r) => r.spread(dout, n),
        Red::BatchMean => {
            vec![
                dout.first().copied().unwrap_or(0.0)
                    / shape.first().copied().unwrap_or(1).max(1) as f64;
                n
            ]
        }
    }
}

fn operands<'a>(
    c: &KernelCall<'a>,
    first: usize,
    arity: usize,
) -> Result<Vec<Option<&'a Tensor>>, OpError> {
    (0..arity)
        .map(|i| {
            if i < 2 {
                c.tensor(first + i).map(Some)
            } else {
                opt_tensor(c, first + i)
            }
        })
        .collect()
}

fn kernel_loss(c: &KernelCall, kind: Kind) -> Result<KValue, OpError> {
    let ops = operands(c, 0, kind.arity())?;
    let dtype = ops[0].expect("a prediction").dtype();
    let (shape, _, parts) = evaluate(kind, c.attrs, &ops)?;
    let loss: Vec<f64> = parts.iter().map(|p| p[0]).collect();
    let (oshape, out) = reduce(kind.reduction(c.attrs), loss, &shape);
    Ok(ktensor(dtype, oshape, out))
}

/// `_ElementwiseLossGrad(dout, input, target, weight, pos_weight)`: the
/// gradient of every operand of the loss named by `op` (an empty tuple for
/// an absent one).
fn kernel_loss_grad(c: &KernelCall) -> Result<KValue, OpError> {
    let kind = loss_kind(c.attrs)?;
    let dout = c.tensor(0)?;
    let ops = operands(c, 1, 4)?;
    let (shape, offs, parts) = evaluate(kind, c.attrs, &ops[..kind.arity()])?;
    let s = spread(kind.reduction(c.attrs), &dout.to_f64_vec(), &shape);
    let mut grads = Vec::new();
    for (i, t) in ops.iter().enumerate() {
        match (t, i < kind.arity()) {
            (Some(t), true) => {
                let mut g = vec![0.0; t.numel()];
                for (e, p) in parts.iter().enumerate() {
                    g[offs[i][e]] += p[1 + i] * s[e];
                }
                grads.push(ktensor(t.dtype(), t.shape().to_vec(), g));
            }
            _ => grads.push(KValue::Tuple(vec![])),
        }
    }
    Ok(KValue::Tuple(grads))
}

fn loss_kind(attrs: &Attrs) -> Result<Kind, OpError> {
    let name = attrs.str("op");
    Kind::of(name).ok_or_else(|| {
        OpError::attr(
            "op",
            format!("`_ElementwiseLossGrad`: unknown loss `{name}`"),
        )
    })
}

fn infer_loss_grad(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    loss_kind(call.attrs)?;
    Ok(AbsVal::Tuple(
        (1..5)
            .map(|i| match &call.inputs[i] {
                v @ AbsVal::Tensor { .. } => v.clone(),
                AbsVal::Scalar { dtype, .. } => AbsVal::tensor(*dtype, &[]),
                _ => AbsVal::Tuple(vec![]),
            })
            .collect(),
    ))
}

fn grad_loss(b: &mut dyn GradBuilder, c: &GradCall, kind: Kind) -> Vec<Option<GNode>> {
    let mut inputs = vec![c.dout];
    let empty = b.make_tuple(&[]);
    for i in 0..4 {
        inputs.push(if i < c.inputs.len() {
            c.inputs[i]
        } else {
            empty
        });
    }
    let mut attrs: Vec<(&'static str, AttrValue)> =
        c.attrs.iter().map(|(k, v)| (*k, v.clone())).collect();
    attrs.push(("op", AttrValue::Str(kind.name().to_string())));
    let r = b.prim("_ElementwiseLossGrad", &inputs, attrs);
    (0..c.inputs.len())
        .map(|i| {
            let float = c
                .input_values
                .get(i)
                .and_then(AbsVal::dtype)
                .is_none_or(DType::is_float);
            (grad_given(c, i) && float).then(|| b.tuple_get(r, i))
        })
        .collect()
}

// ---------------------------------------------------------------------------
// NLLLoss

fn nll_check(
    op: &str,
    logits: &[usize],
    labels: &[usize],
    weight: &[usize],
) -> Result<(), OpError> {
    if logits.len() != 2 {
        return Err(OpError::input(
            0,
            format!("`{op}` needs 2-D `logits` [N, C], got {logits:?}"),
        ));
    }
    if labels != [logits[0]] {
        return Err(OpError::input(
            1,
            format!(
                "`{op}` needs `labels` of shape [{}], got {labels:?}",
                logits[0]
            ),
        ));
    }
    if weight != [logits[1]] {
        return Err(OpError::input(
            2,
            format!(
                "`{op}` needs `weight` of shape [{}], got {weight:?}",
                logits[1]
            ),
        ));
    }
    Ok(())
}

fn infer_nll(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let op = call.op.name;
    let (dtype, xd) = float_input(call, 0)?;
    let (ldtype, ld) = dims_of(call, 1)?;
    if !matches!(ldtype, DType::I32 | DType::I64 | DType::U8) {
        return Err(OpError::input(
            1,
            format!("`{op}` needs integer `labels` (int32 or int64), got {ldtype}"),
        ));
    }
    let (wdtype, wd) = dims_of(call, 2)?;
    if wdtype != dtype {
        return Err(OpError::input(
            2,
            format!("`{op}` needs `weight` of the dtype of `logits`, {dtype}, got {wdtype}"),
        ));
    }
    let n = match &xd {
        Some(d) if d.len() != 2 => {
            return Err(OpError::input(
                0,
                format!("`{op}` needs 2-D `logits` [N, C], got {}", fmt_dims(d)),
            ))
        }
        Some(d) => {
            let known = |v: &Option<Vec<Dim>>| {
                v.as_ref()
                    .map(|v| v.iter().all(|d| matches!(d, Dim::Known(_))))
            };
            if let (Some(l), Some(true)) = (&ld, known(&ld)) {
                if l.len() != 1 || !crate::defs::shape::dims_may_equal(&l[0], &d[0]) {
                    return Err(OpError::input(
                        1,
                        format!(
                            "`{op}` needs `labels` of shape [{}], got {}",
                            d[0],
                            fmt_dims(l)
                        ),
                    ));
                }
            }
            if let Some(w) = &wd {
                if w.len() != 1 || !crate::defs::shape::dims_may_equal(&w[0], &d[1]) {
                    return Err(OpError::input(
                        2,
                        format!(
                            "`{op}` needs `weight` of shape [{}], got {}",
                            d[1],
                            fmt_dims(w)
                        ),
                    ));
                }
            }
            d[0].clone()
        }
        None => Dim::Unknown,
    };
    let loss = match Reduction::of(call.attrs) {
        Reduction::None => maybe_ranked(dtype, Some(vec![n])),
        _ => maybe_ranked(dtype, Some(vec![])),
    };
    Ok(AbsVal::Tuple(vec![loss, maybe_ranked(dtype, Some(vec![]))]))
}

/// `(per-sample losses, total weight, per-sample weights)`.
/// Per-sample losses, the total weight, per-sample weights and classes.
type NllParts = (Vec<f64>, f64, Vec<f64>, Vec<Option<usize>>);

fn nll_parts(c: &KernelCall) -> Result<NllParts, OpError> {
    let op = "NLLLoss";
    let (x, y, w) = (c.tensor(0)?, c.tensor(1)?, c.tensor(2)?);
    nll_check(op, x.shape(), y.shape(), w.shape())?;
    let (n, classes) = (x.shape()[0], x.shape()[1]);
    let ignore = c.attrs.int("ignore_index");
    let (xv, wv) = (x.to_f64_vec(), w.to_f64_vec());
    let labels: Vec<i64> = y.to_f64_vec().iter().map(|&v| v as i64).collect();
    let mut loss = vec![0.0; n];
    let mut ws = vec![0.0; n];
    let mut cls = vec![None; n];
    let mut total = 0.0;
    for (r, &l) in labels.iter().enumerate() {
        if l == ignore {
            continue;
        }
        if l < 0 || l as usize >= classes {
            return Err(OpError::input(
                1,
                format!("`{op}`: label {l} is out of range for {classes} classes"),
            ));
        }
        let k = l as usize;
        loss[r] = -wv[k] * xv[r * classes + k];
        ws[r] = wv[k];
        cls[r] = Some(k);
        total += wv[k];
    }
    Ok((loss, total, ws, cls))
}

fn kernel_nll(c: &KernelCall) -> Result<KValue, OpError> {
    let dtype = c.tensor(0)?.dtype();
    let (loss, total, _, _) = nll_parts(c)?;
    let n = loss.len();
    let out = match Reduction::of(c.attrs) {
        Reduction::None => ktensor(dtype, vec![n], loss),
        Reduction::Sum => ktensor(dtype, vec![], vec![loss.iter().sum()]),
        Reduction::Mean => ktensor(dtype, vec![], vec![loss.iter().sum::<f64>() / total]),
    };
    Ok(KValue::Tuple(vec![
        out,
        ktensor(dtype, vec![], vec![total]),
    ]))
}

/// `_NLLLossGrad(logits, labels, weight, dloss, dtotal)`: `(dlogits, dweight)`.
fn kernel_nll_grad(c: &KernelCall) -> Result<KValue, OpError> {
    let (x, w) = (c.tensor(0)?, c.tensor(2)?);
    let (dloss, dtotal) = (c.tensor(3)?.to_f64_vec(), c.tensor(4)?.to_f64_vec());
    let (loss, total, _, cls) = nll_parts(c)?;
    let (n, classes) = (x.shape()[0], x.shape()[1]);
    let xv = x.to_f64_vec();
    let wv = w.to_f64_vec();
    let red = Reduction::of(c.attrs);
    let sum: f64 = loss.iter().sum();
    let mut dx = vec![0.0; n * classes];
    let mut dw = vec![0.0; classes];
    let dt = dtotal.first().copied().unwrap_or(0.0);
    for (r, k) in cls.iter().enumerate() {
        let Some(k) = *k else { continue };
        let s = match red {
            Reduction::None => dloss[r],
            Reduction::Sum => dloss[0],
            Reduction::Mean => dloss[0] / total,
        };
        dx[r * classes + k] = -wv[k] * s;
        // d loss_r / d w_k = -x[r, k]; the mean also divides by the total.
        dw[k] += -xv[r * classes + k] * s + dt;
        if red == Reduction::Mean {
            dw[k] -= dloss[0] * sum / (total * total);
        }
    }
    Ok(KValue::Tuple(vec![
        ktensor(x.dtype(), x.shape().to_vec(), dx),
        ktensor(w.dtype(), w.shape().to_vec(), dw),
    ]))
}

// ---------------------------------------------------------------------------
// The table.

const P_REDUCTION: ParamDef = ParamDef::attr(
    "reduction",
    AttrType::Str(&["none", "mean", "sum"]),
    Some(AttrDefault::Str("mean")),
    "\"none\": the elementwise losses; \"mean\" (default): their mean; \"sum\": their sum.",
);

macro_rules! loss_op {
    ($name:literal, $kind:expr, $doc:literal, $params:expr) => {
        OpDef {
            name: $name,
            category: Category::NeuralNetwork,
            doc: $doc,
            schema: $params,
            variadic: false,
            output: OutputDef::Single,
            infer: |c| infer_loss(c, $kind),
            grad: Some(|b, c| grad_loss(b, c, $kind)),
            kernel: Some(|c| kernel_loss(c, $kind)),
            traits: Traits::NONE,
        }
    };
}

pub const OPS: &[OpDef] = &[
    loss_op!(
        "BinaryCrossEntropy",
        Kind::BinaryCrossEntropy,
        "Binary cross entropy of probabilities `input` against `target`: `-weight·(target·ln(input) + (1-target)·ln(1-input))`, the logarithms clamped at `ln(1e-12)` as MindSpore's, then `reduction`.",
        Schema::ms(
            &[
                Override::attr("reduction", AttrType::Str(&["none", "mean", "sum"]), Some(AttrDefault::Str("mean")), why::STRINGS),
            ],
            &[
                ("input", "The predicted probabilities, float."),
                ("target", "The targets, of `input`'s shape and dtype."),
                ("weight", "Weights broadcast to `input`, or none (ones)."),
                ("reduction", "\"none\": the elementwise losses; \"mean\" (default): their mean; \"sum\": their sum."),
            ],
        )
    ),
    loss_op!(
        "BCEWithLogitsLoss",
        Kind::BCEWithLogitsLoss,
        "Binary cross entropy of logits `input` against `target`, computed stably: `weight·(posWeight·target·softplus(-input) + (1-target)·softplus(input))`, then `reduction`.",
        Schema::ms(
            &[
                Override::attr("reduction", AttrType::Str(&["none", "mean", "sum"]), Some(AttrDefault::Str("mean")), why::STRINGS),
            ],
            &[
                ("input", "The logits, float."),
                ("target", "The targets, of `input`'s shape and dtype."),
                ("weight", "Weights broadcast to `input`, or none (ones)."),
                ("posWeight", "Weights of the positive term broadcast to `input`, or none (ones)."),
                ("reduction", "\"none\": the elementwise losses; \"mean\" (default): their mean; \"sum\": their sum."),
            ],
        )
    ),
    loss_op!(
        "SigmoidCrossEntropyWithLogits",
        Kind::SigmoidCrossEntropyWithLogits,
        "Elementwise binary cross entropy of logits against `target`, computed stably: `max(x, 0) - x·target + ln(1 + exp(-|x|))`.",
        Schema::ms(
            &[],
            &[
                ("predict", "The logits, float."),
                ("target", "The targets, of `predict`'s shape and dtype."),
            ],
        )
    ),
    loss_op!(
        "SmoothL1Loss",
        Kind::SmoothL1Loss,
        "Smooth L1 (Huber-like) loss: `0.5·d²/beta` where `|d| < beta`, else `|d| - 0.5·beta`, `d = prediction - target`; then `reduction` (default \"none\").",
        Schema::ms(
            &[
                Override::attr("reduction", AttrType::Str(&["none", "mean", "sum"]), Some(AttrDefault::Str("none")), why::STRINGS),
            ],
            &[
                ("prediction", "The predictions, float."),
                ("target", "The targets, of `prediction`'s shape and dtype."),
                ("beta", "The threshold, positive. Default 1.0."),
                ("reduction", "\"none\" (default), \"mean\" or \"sum\"."),
            ],
        )
    ),
    loss_op!(
        "KLDivLoss",
        Kind::KLDivLoss,
        "Kullback-Leibler divergence of log-probabilities `logits` from `labels`: `labels·(ln(labels) - logits)` where `labels > 0`, else 0; then `reduction` (\"batchmean\": the sum divided by the first dimension).",
        Schema::ms(
            &[
                Override::attr("reduction", AttrType::Str(&["none", "mean", "sum", "batchmean"]), Some(AttrDefault::Str("mean")), why::STRINGS),
            ],
            &[
                ("logits", "Log-probabilities, float."),
                ("labels", "Probabilities, of `logits`' shape and dtype."),
                ("reduction", "\"none\", \"mean\" (default), \"sum\" or \"batchmean\"."),
            ],
        )
    ),
    loss_op!(
        "SoftMarginLoss",
        Kind::SoftMarginLoss,
        "Soft margin loss of `input` against ±1 targets: `ln(1 + exp(-target·input))`, then `reduction`.",
        Schema::ms(
            &[
                Override::attr("reduction", AttrType::Str(&["none", "mean", "sum"]), Some(AttrDefault::Str("mean")), why::STRINGS),
            ],
            &[
                ("input", "The predictions, float."),
                ("target", "The targets (usually ±1), of `input`'s shape and dtype."),
                ("reduction", "\"none\": the elementwise losses; \"mean\" (default): their mean; \"sum\": their sum."),
            ],
        )
    ),
    loss_op!(
        "MSELossExt",
        Kind::MSELossExt,
        "Squared error `(input - target)²` with `input` and `target` broadcast together (what `mint.nn.MSELoss` exports), then `reduction`.",
        Schema::ms(
            &[
                Override::attr("reduction", AttrType::Str(&["none", "mean", "sum"]), Some(AttrDefault::Str("mean")), why::STRINGS),
            ],
            &[
                ("input", "The predictions, float."),
                ("target", "The targets, broadcastable with `input`, of its dtype."),
                ("reduction", "\"none\": the elementwise losses; \"mean\" (default): their mean; \"sum\": their sum."),
            ],
        )
    ),
    OpDef {
        name: "NLLLoss",
        category: Category::NeuralNetwork,
        doc: "Negative log-likelihood of log-probabilities `logits` `[N, C]` at class indices `labels` `[N]`: `-weight[label]·logits[n, label]`, 0 for `ignore_index`. Returns `(loss, total_weight)`: the losses reduced by `reduction` (\"mean\" divides by `total_weight`, the sum of the used weights) and that total.",
        schema: Schema::ms(
            &[
                Override::attr("reduction", AttrType::Str(&["none", "mean", "sum"]), Some(AttrDefault::Str("mean")), why::STRINGS),
            ],
            &[
                ("logits", "Log-probabilities `[N, C]`, float."),
                ("labels", "Class indices `[N]`, int32 or int64."),
                ("weight", "Per-class weights `[C]`, of `logits`' dtype."),
                ("reduction", "\"none\": the elementwise losses; \"mean\" (default): their mean; \"sum\": their sum."),
                ("ignore_index", "A label that contributes nothing. Default -100."),
            ],
        ),
        variadic: false,
        output: OutputDef::Tuple(&["loss", "total_weight"]),
        infer: infer_nll,
        grad: Some(|b, c| {
            let dloss = b.tuple_get(c.dout, 0);
            let dtotal = b.tuple_get(c.dout, 1);
            let attrs = c.attrs.iter().map(|(k, v)| (*k, v.clone())).collect();
            let r = b.prim("_NLLLossGrad", &[c.inputs[0], c.inputs[1], c.inputs[2], dloss, dtotal], attrs);
            vec![Some(b.tuple_get(r, 0)), None, Some(b.tuple_get(r, 1))]
        }),
        kernel: Some(kernel_nll),
        traits: Traits::NONE.gradgen(Gradgen::Avoid),
    },
    OpDef {
        name: "L2Loss",
        category: Category::NeuralNetwork,
        doc: "Half the sum of squares of `input`, `Σ x² / 2`, as a scalar.",
        schema: Schema::ms(
            &[Override::inputs(&["input"], why::INPUT_NAMES)],
            &[("input", "A float tensor.")],
        ),
        variadic: false,
        output: OutputDef::Single,
        infer: |call| {
            if call.any_unknown() {
                return Ok(AbsVal::Any);
            }
            let (dtype, _) = float_input(call, 0)?;
            Ok(maybe_ranked(dtype, Some(vec![])))
        },
        grad: Some(|b, c| vec![Some(b.prim("Mul", &[c.inputs[0], c.dout], vec![]))]),
        kernel: Some(|c| {
            let x = c.tensor(0)?;
            let s: f64 = x.to_f64_vec().iter().map(|v| v * v).sum();
            Ok(ktensor(x.dtype(), vec![], vec![s / 2.0]))
        }),
        traits: Traits::NONE,
    },
    OpDef {
        name: "_ElementwiseLossGrad",
        category: Category::Internal,
        doc: "The gradients of the elementwise loss named by `op` with respect to each of its operands (empty tuples for absent ones), from the loss's sensitivity `dout`.",
        schema: Schema::own(&[
            ParamDef::input("dout", "The gradient of the loss."),
            ParamDef::input("input", "The loss's prediction."),
            ParamDef::input("target", "The loss's target."),
            ParamDef::input("weight", "The loss's weight, or an empty tuple."),
            ParamDef::input("pos_weight", "The loss's positive weight, or an empty tuple."),
            ParamDef::attr("op", AttrType::Str(&[]), None, "The loss primitive's name."),
            ParamDef::attr(
                "reduction",
                AttrType::Str(&["none", "mean", "sum", "batchmean"]),
                Some(AttrDefault::Str("mean")),
                "As the loss.",
            ),
            ParamDef::attr("beta", AttrType::Float, Some(AttrDefault::Float(1.0)), "As SmoothL1Loss."),
        ]),
        variadic: false,
        output: OutputDef::Tuple(&["dinput", "dtarget", "dweight", "dpos_weight"]),
        infer: infer_loss_grad,
        grad: None,
        kernel: Some(kernel_loss_grad),
        traits: Traits::NONE,
    },
    OpDef {
        name: "_NLLLossGrad",
        category: Category::Internal,
        doc: "The gradients of NLLLoss with respect to `logits` and `weight`, from the sensitivities of `loss` and `total_weight`.",
        schema: Schema::own(&[
            ParamDef::input("logits", "NLLLoss's logits."),
            ParamDef::input("labels", "NLLLoss's labels."),
            ParamDef::input("weight", "NLLLoss's weight."),
            ParamDef::input("dloss", "The gradient of `loss`."),
            ParamDef::input("dtotal", "The gradient of `total_weight`."),
            P_REDUCTION,
            ParamDef::attr("ignore_index", AttrType::Int, Some(AttrDefault::Int(-100)), "As NLLLoss."),
        ]),
        variadic: false,
        output: OutputDef::Tuple(&["dlogits", "dweight"]),
        infer: |call| {
            if call.any_unknown() {
                return Ok(AbsVal::Any);
            }
            call.tensor(0)?;
            call.tensor(2)?;
            Ok(AbsVal::Tuple(vec![call.inputs[0].widen(), call.inputs[2].widen()]))
        },
        grad: None,
        kernel: Some(kernel_nll_grad),
        traits: Traits::NONE,
    },
];

pub(crate) fn samples() -> Vec<crate::eager::Sample> {
    use crate::eager::{ints, random_f64, Sample};
    let s = |v: &str| AttrValue::Str(v.to_string());
    let f = AttrValue::float;
    let x = |shape: &[usize], seed: u64| random_f64(shape, seed, -1.0, 1.0);
    let p = |shape: &[usize], seed: u64| random_f64(shape, seed, 0.1, 0.9);
    let none = KValue::Tuple(vec![]);
    vec![
        Sample::new(
            "BinaryCrossEntropy",
            vec![p(&[2, 3], 700), p(&[2, 3], 701), p(&[2, 3], 702)],
        ),
        Sample::new(
            "BinaryCrossEntropy",
            vec![p(&[2, 3], 703), p(&[2, 3], 704), p(&[3], 705)],
        )
        .attr("reduction", s("none")),
        Sample::new(
            "BinaryCrossEntropy",
            vec![p(&[4], 706), p(&[4], 707), none.clone()],
        )
        .attr("reduction", s("sum")),
        Sample::new(
            "BCEWithLogitsLoss",
            vec![
                x(&[2, 3], 708),
                p(&[2, 3], 709),
                p(&[3], 710),
                p(&[2, 1], 711),
            ],
        ),
        Sample::new(
            "BCEWithLogitsLoss",
            vec![x(&[2, 3], 712), p(&[2, 3], 713), none.clone(), none.clone()],
        )
        .attr("reduction", s("none")),
        Sample::new(
            "SigmoidCrossEntropyWithLogits",
            vec![x(&[2, 3], 714), p(&[2, 3], 715)],
        ),
        Sample::new("SmoothL1Loss", vec![x(&[3, 4], 716), x(&[3, 4], 717)]).attr("beta", f(0.5)),
        Sample::new("SmoothL1Loss", vec![x(&[3, 4], 718), x(&[3, 4], 719)])
            .attr("reduction", s("mean")),
        Sample::new("KLDivLoss", vec![x(&[2, 3], 720), p(&[2, 3], 721)]),
        Sample::new("KLDivLoss", vec![x(&[2, 3], 722), p(&[2, 3], 723)])
            .attr("reduction", s("batchmean")),
        Sample::new("SoftMarginLoss", vec![x(&[2, 3], 724), x(&[2, 3], 725)])
            .attr("reduction", s("sum")),
        Sample::new("MSELossExt", vec![x(&[2, 3], 726), x(&[3], 727)]),
        Sample::new("MSELossExt", vec![x(&[2, 1], 728), x(&[3], 729)]).attr("reduction", s("none")),
        Sample::new(
            "NLLLoss",
            vec![
                x(&[4, 3], 730),
                ints(DType::I32, &[4], &[0, 2, 1, 2]),
                p(&[3], 731),
            ],
        ),
        Sample::new(
            "NLLLoss",
            vec![
                x(&[4, 3], 732),
                ints(DType::I64, &[4], &[0, -100, 1, 2]),
                p(&[3], 733),
            ],
        )
        .attr("reduction", s("none")),
        Sample::new(
            "NLLLoss",
            vec![
                x(&[3, 3], 734),
                ints(DType::I32, &[3], &[0, 2, 1]),
                p(&[3], 735),
            ],
        )
        .attr("reduction", s("sum"))
        .attr("ignore_index", AttrValue::Int(2)),
        Sample::new("L2Loss", vec![x(&[2, 3], 736)]),
    ]
}
