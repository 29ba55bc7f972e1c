//! Statistics and norms: LogSumExp, ReduceStd, Var, Std, VarMean, StdMean,
//! Norm, LinalgVectorNorm, LpNorm.
//!
//! All compute in f64 and round to the result's dtype. `correction` (and
//! `ReduceStd`'s `unbiased`, which means `correction=1`) is subtracted from the
//! group size before dividing; a group no larger than it gives `inf` or NaN,
//! as in MindSpore. The vector norms follow `torch.linalg.vector_norm`:
//! `ord=inf` is the largest magnitude, `-inf` the smallest, `0` the number of
//! non-zeros, otherwise `(Σ|x|^ord)^(1/ord)`. `LpNorm` takes an integer `p` and
//! returns `max(norm, epsilon)` (except for `p=0`).
//!
//! Gradients are the analytic ones MindSpore's bprops compute, built from
//! registry primitives so that they differentiate again.

use crate::batch::BatchRule;
use crate::schema::{why, Override, Schema};
use crate::Traits;
use ir::{AbsVal, AttrValue, DType};
use tensor::Tensor;

use crate::defs::elementwise::{float_of, is_float_input};
use crate::defs::nn::groups;
use crate::defs::reduce::aggregate::{
    axes_of, input_tensor, mask_axes, number, opt_dtype, reduce_abs, reduce_plan, unreduce,
};
use crate::infer::InferCall;
use crate::kernel::{KValue, KernelCall};
use crate::{
    AttrDefault, AttrType, Category, GNode, GradBuilder, GradCall, OpDef, OpError, OutputDef,
};

/// Applies `f` to every reduction group of `x` (over `mask`), giving one value
/// per group in the result's row-major order.
fn per_group(x: &Tensor, mask: &[bool], f: impl Fn(&[f64]) -> f64) -> Vec<f64> {
    let data = x.to_f64_vec();
    let (outer, inner) = groups(x.shape(), &mask_axes(mask));
    let mut buf = Vec::with_capacity(inner.len());
    outer
        .iter()
        .map(|&o| {
            buf.clear();
            buf.extend(inner.iter().map(|&i| data[o + i]));
            f(&buf)
        })
        .collect()
}

fn tensor_of(dtype: DType, shape: Vec<usize>, data: Vec<f64>) -> KValue {
    KValue::Tensor(crate::defs::nn::from_f64(dtype, shape, data))
}

fn prim(b: &mut dyn GradBuilder, name: &str, inputs: &[GNode]) -> GNode {
    b.prim(name, inputs, vec![])
}

fn axis_value(axes: &[i64]) -> AttrValue {
    AttrValue::Tuple(axes.iter().map(|&a| AttrValue::Int(a)).collect())
}

/// `sign(x)` (0 at 0) from registry primitives.
fn sign(b: &mut dyn GradBuilder, x: GNode) -> GNode {
    let zero = b.scalar(0.0);
    let pos = prim(b, "Greater", &[x, zero]);
    let neg = prim(b, "Less", &[x, zero]);
    let ones = prim(b, "OnesLike", &[x]);
    let zeros = prim(b, "ZerosLike", &[x]);
    let minus = prim(b, "Neg", &[ones]);
    let t = prim(b, "Select", &[neg, minus, zeros]);
    prim(b, "Select", &[pos, ones, t])
}

// ---------------------------------------------------------------------------
// LogSumExp

fn logsumexp(v: &[f64]) -> f64 {
    let m = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let shift = if m.is_finite() { m } else { 0.0 };
    shift + v.iter().map(|e| (e - shift).exp()).sum::<f64>().ln()
}

fn infer_logsumexp(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let (dtype, dims) = input_tensor(call, 0, false, false)?;
    let axes = axes_of(call.attrs, "dim");
    reduce_abs(
        call,
        dims,
        &axes,
        call.attrs.bool("keepdim"),
        float_of(dtype),
    )
}

fn k_logsumexp(c: &KernelCall) -> Result<KValue, OpError> {
    let x = c.tensor(0)?;
    let (mask, out) = reduce_plan(
        "LogSumExp",
        x,
        &axes_of(c.attrs, "dim"),
        c.attrs.bool("keepdim"),
    )?;
    Ok(tensor_of(
        float_of(x.dtype()),
        out,
        per_group(x, &mask, logsumexp),
    ))
}

fn grad_logsumexp(b: &mut dyn GradBuilder, c: &GradCall) -> Vec<Option<GNode>> {
    if !is_float_input(c, 0) {
        return vec![None];
    }
    let (axes, keep) = (axes_of(c.attrs, "dim"), c.attrs.bool("keepdim"));
    let x = c.inputs[0];
    let out = unreduce(b, c.out, x, &axes, keep);
    let g = unreduce(b, c.dout, x, &axes, keep);
    let d = prim(b, "Sub", &[x, out]);
    let e = prim(b, "Exp", &[d]);
    vec![Some(prim(b, "Mul", &[g, e]))]
}

// ---------------------------------------------------------------------------
// ReduceStd, Var, Std, VarMean, StdMean

/// `(variance, mean)` of one group with `correction` subtracted from its size.
fn moments(v: &[f64], correction: f64) -> (f64, f64) {
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    let ss: f64 = v.iter().map(|e| (e - mean) * (e - mean)).sum();
    (ss / (n - correction).max(0.0), mean)
}

/// Which statistics an op returns.
#[derive(Clone, Copy, PartialEq)]
enum Stat {
    Var,
    Std,
    VarMean,
    StdMean,
}

impl Stat {
    fn of(op: &str) -> Stat {
        match op {
            "Var" => Stat::Var,
            "Std" => Stat::Std,
            "VarMean" => Stat::VarMean,
            _ => Stat::StdMean,
        }
    }

    fn is_std(self) -> bool {
        matches!(self, Stat::Std | Stat::StdMean)
    }

    fn with_mean(self) -> bool {
        matches!(self, Stat::VarMean | Stat::StdMean)
    }
}

/// `(axes, keep, correction)` of a statistics op.
fn stat_params(op: &str, attrs: &crate::Attrs) -> (Vec<i64>, bool, i64) {
    if op == "ReduceStd" {
        (
            axes_of(attrs, "axis"),
            attrs.bool("keep_dims"),
            i64::from(attrs.bool("unbiased")),
        )
    } else {
        (
            axes_of(attrs, "dim"),
            attrs.bool("keepdim"),
            attrs.int("correction"),
        )
    }
}

fn stat_kind(op: &str) -> Stat {
    if op == "ReduceStd" {
        Stat::StdMean
    } else {
        Stat::of(op)
    }
}

fn infer_stat(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let op = call.op.name;
    let (dtype, dims) = input_tensor(call, 0, false, true)?;
    let (axes, keep, _) = stat_params(op, call.attrs);
    let r = reduce_abs(call, dims, &axes, keep, dtype)?;
    Ok(if stat_kind(op).with_mean() {
        AbsVal::Tuple(vec![r.clone(), r])
    } else {
        r
    })
}

fn k_stat(c: &KernelCall, op: &str) -> Result<KValue, OpError> {
    let x = c.tensor(0)?;
    let (axes, keep, correction) = stat_params(op, c.attrs);
    let (mask, out) = reduce_plan(op, x, &axes, keep)?;
    let stat = stat_kind(op);
    let data = x.to_f64_vec();
    let (outer, inner) = groups(x.shape(), &mask_axes(&mask));
    let mut buf = Vec::with_capacity(inner.len());
    let (mut first, mut means) = (Vec::new(), Vec::new());
    for &o in &outer {
        buf.clear();
        buf.extend(inner.iter().map(|&i| data[o + i]));
        let (var, mean) = moments(&buf, correction as f64);
        first.push(if stat.is_std() { var.sqrt() } else { var });
        means.push(mean);
    }
    let dtype = x.dtype();
    let value = tensor_of(dtype, out.clone(), first);
    Ok(if stat.with_mean() {
        KValue::Tuple(vec![value, tensor_of(dtype, out, means)])
    } else {
        value
    })
}

/// The gradient of variance or standard deviation (`dvalue`, `value`) and of
/// the mean (`dmean`) with respect to `x`.
#[allow(clippy::too_many_arguments)]
fn stat_grad(
    b: &mut dyn GradBuilder,
    x: GNode,
    axes: &[i64],
    keep: bool,
    correction: i64,
    is_std: bool,
    value: GNode,
    dvalue: GNode,
    dmean: Option<GNode>,
) -> GNode {
    let axis = axis_value(axes);
    let kept = vec![("axis", axis.clone()), ("keep_dims", AttrValue::Bool(true))];
    let mean = b.prim("ReduceMean", &[x], kept.clone());
    let ones = prim(b, "OnesLike", &[x]);
    let n = b.prim("ReduceSum", &[ones], kept);
    let corr = b.scalar(correction as f64);
    let num = prim(b, "Sub", &[n, corr]);
    let centered = prim(b, "Sub", &[x, mean]);
    let g = unreduce(b, dvalue, x, axes, keep);
    let mut dx = if is_std {
        let s = unreduce(b, value, x, axes, keep);
        let denom = prim(b, "Mul", &[num, s]);
        let t = prim(b, "RealDiv", &[centered, denom]);
        prim(b, "Mul", &[g, t])
    } else {
        let two = b.scalar(2.0);
        let t = prim(b, "Mul", &[centered, two]);
        let t = prim(b, "RealDiv", &[t, num]);
        prim(b, "Mul", &[g, t])
    };
    if let Some(dm) = dmean {
        let mut attrs = vec![("axis", axis), ("keep_dims", AttrValue::Bool(keep))];
        attrs.push(("mean", AttrValue::Bool(true)));
        let gm = b.prim("_BroadcastToShapeOf", &[dm, x], attrs);
        dx = prim(b, "Add", &[dx, gm]);
    }
    dx
}

fn grad_stat(b: &mut dyn GradBuilder, c: &GradCall, op: &str) -> Vec<Option<GNode>> {
    if !is_float_input(c, 0) {
        return vec![None];
    }
    let (axes, keep, correction) = stat_params(op, c.attrs);
    let stat = stat_kind(op);
    let (value, dvalue, dmean) = if stat.with_mean() {
        (
            b.tuple_get(c.out, 0),
            b.tuple_get(c.dout, 0),
            Some(b.tuple_get(c.dout, 1)),
        )
    } else {
        (c.out, c.dout, None)
    };
    vec![Some(stat_grad(
        b,
        c.inputs[0],
        &axes,
        keep,
        correction,
        stat.is_std(),
        value,
        dvalue,
        dmean,
    ))]
}

// ---------------------------------------------------------------------------
// Norm, LinalgVectorNorm, LpNorm

/// The vector `ord`-norm of one group.
fn vector_norm(v: &[f64], ord: f64) -> f64 {
    let abs = v.iter().map(|e| e.abs());
    if ord == f64::INFINITY {
        abs.fold(0.0, f64::max)
    } else if ord == f64::NEG_INFINITY {
        abs.fold(f64::INFINITY, f64::min)
    } else if ord == 0.0 {
        v.iter().filter(|&&e| e != 0.0).count() as f64
    } else if ord == 1.0 {
        abs.sum()
    } else if ord == 2.0 {
        v.iter().map(|e| e * e).sum::<f64>().sqrt()
    } else {
        abs.map(|a| a.powf(ord)).sum::<f64>().powf(1.0 / ord)
    }
}

/// `(ord, axes, keep, dtype)` of a norm op.
fn norm_params(op: &str, attrs: &crate::Attrs) -> (f64, Vec<i64>, bool, Option<DType>) {
    match op {
        "LpNorm" => (
            attrs.int("p") as f64,
            axes_of(attrs, "axis"),
            attrs.bool("keep_dims"),
            None,
        ),
        "Norm" => (
            number(attrs, "p"),
            axes_of(attrs, "dim"),
            attrs.bool("keepdim"),
            opt_dtype(attrs, "dtype"),
        ),
        _ => (
            number(attrs, "ord"),
            axes_of(attrs, "dim"),
            attrs.bool("keepdim"),
            opt_dtype(attrs, "dtype"),
        ),
    }
}

fn infer_norm(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let op = call.op.name;
    let (ord, axes, keep, given) = norm_params(op, call.attrs);
    let (input, dims) = input_tensor(call, 0, false, given.is_none())?;
    let dtype = given.unwrap_or(input);
    if !dtype.is_float() {
        return Err(OpError::attr(
            "dtype",
            format!("`{op}`: `dtype` must be a float dtype, not {dtype}"),
        ));
    }
    if op == "LpNorm" {
        if ord < 0.0 {
            return Err(OpError::attr(
                "p",
                format!("`LpNorm`: `p` must be non-negative, got {ord}"),
            ));
        }
        if call.attrs.f64("epsilon") < 0.0 {
            return Err(OpError::attr(
                "epsilon",
                format!(
                    "`LpNorm`: `epsilon` must be non-negative, got {}",
                    call.attrs.f64("epsilon")
                ),
            ));
        }
    }
    reduce_abs(call, dims, &axes, keep, dtype)
}

fn k_norm(c: &KernelCall, op: &str) -> Result<KValue, OpError> {
    let x = c.tensor(0)?;
    let (ord, axes, keep, given) = norm_params(op, c.attrs);
    let dtype = given.unwrap_or(x.dtype());
    let xc = x.cast(dtype);
    let (mask, out) = reduce_plan(op, &xc, &axes, keep)?;
    let eps = if op == "LpNorm" && ord != 0.0 {
        c.attrs.f64("epsilon")
    } else {
        f64::NEG_INFINITY
    };
    let v = per_group(&xc, &mask, |g| vector_norm(g, ord).max(eps));
    Ok(tensor_of(dtype, out, v))
}

/// MindSpore's norm bprops: `dout · sign(x)·|x|^(p-1) / norm^(p-1)` (`x / norm`
/// for p=2, `sign(x)` for p=1, shared among the extreme elements for ±inf,
/// zero for p=0); `mask_zero` gives 0 where the norm is 0.
fn grad_norm(b: &mut dyn GradBuilder, c: &GradCall, op: &str) -> Vec<Option<GNode>> {
    if !is_float_input(c, 0) {
        return vec![None];
    }
    let (ord, axes, keep, _) = norm_params(op, c.attrs);
    if ord == 0.0 {
        return vec![None];
    }
    let x = c.inputs[0];
    let dtype = c.input_values[0].dtype();
    let g = unreduce(b, c.dout, x, &axes, keep);
    let n = unreduce(b, c.out, x, &axes, keep);
    let (g, n) = match dtype {
        Some(d) => (
            b.prim("Cast", &[g], vec![("dtype", AttrValue::DType(d))]),
            b.prim("Cast", &[n], vec![("dtype", AttrValue::DType(d))]),
        ),
        None => (g, n),
    };
    let s = sign(b, x);
    let local = if ord.is_infinite() {
        let a = prim(b, "Abs", &[x]);
        let hit = prim(b, "Equal", &[a, n]);
        let ones = prim(b, "OnesLike", &[x]);
        let zeros = prim(b, "ZerosLike", &[x]);
        let ind = prim(b, "Select", &[hit, ones, zeros]);
        let count = b.prim(
            "ReduceSum",
            &[ind],
            vec![
                ("axis", axis_value(&axes)),
                ("keep_dims", AttrValue::Bool(true)),
            ],
        );
        let share = prim(b, "RealDiv", &[ind, count]);
        prim(b, "Mul", &[share, s])
    } else if ord == 1.0 {
        s
    } else if ord == 2.0 {
        prim(b, "RealDiv", &[x, n])
    } else {
        let a = prim(b, "Abs", &[x]);
        let k = b.scalar(ord - 1.0);
        let num = prim(b, "Pow", &[a, k]);
        let k = b.scalar(ord - 1.0);
        let den = prim(b, "Pow", &[n, k]);
        let t = prim(b, "RealDiv", &[num, den]);
        prim(b, "Mul", &[s, t])
    };
    let local = if op != "LpNorm" && ord != 1.0 && ord.is_finite() {
        // The norm is 0 only where the group is all zeros: its gradient there is 0.
        let zero = b.scalar(0.0);
        let at_zero = prim(b, "Equal", &[n, zero]);
        let zeros = prim(b, "ZerosLike", &[x]);
        prim(b, "Select", &[at_zero, zeros, local])
    } else {
        local
    };
    vec![Some(prim(b, "Mul", &[g, local]))]
}

// ---------------------------------------------------------------------------
// The table.

const DIM_NONE: &str = "The dimensions to reduce: an int, a tuple of ints, or `None` (the default), which reduces all of them.";
const KEEPDIM: &str = "Keep each reduced dimension with size 1 (default `false`).";
const CORRECTION: &str = "Subtracted from the number of elements before dividing: 1 (the default) gives the unbiased estimate, 0 the population one.";

const STAT_PARAMS: Schema = Schema::ms(
    &[],
    &[
        ("input", "A float tensor."),
        ("dim", DIM_NONE),
        ("correction", CORRECTION),
        ("keepdim", KEEPDIM),
    ],
);

macro_rules! stat_op {
    ($name:literal, $doc:literal, $output:expr) => {
        OpDef {
            name: $name,
            category: Category::Reduction,
            doc: $doc,
            schema: STAT_PARAMS,
            variadic: false,
            output: $output,
            infer: infer_stat,
            grad: Some(|b, c| grad_stat(b, c, $name)),
            kernel: Some(|c| k_stat(c, $name)),
            traits: Traits::NONE,
        }
    };
}

const VECTOR_NORM_DOC: &str = "The vector norm of `x` over `dim` (all elements when `None`), as `torch.linalg.vector_norm`: `(sum |x|^ord)^(1/ord)`; `ord=inf` is the largest magnitude, `-inf` the smallest, `0` the number of non-zero elements.";

pub const OPS: &[OpDef] = &[
    OpDef {
        name: "LogSumExp",
        category: Category::Reduction,
        doc: "`log(sum(exp(input)))` over `dim`, computed stably (the maximum is subtracted first); integer inputs give `f32`.",
        schema: Schema::ms(
            &[],
            &[
                ("input", "The tensor to reduce."),
                ("dim", "The dimensions to reduce: an int or a tuple of ints (negative counting from the end; `()` reduces all)."),
                ("keepdim", "Keep each reduced dimension with size 1 (default `false`)."),
            ],
        ),
        variadic: false,
        output: OutputDef::Single,
        infer: infer_logsumexp,
        grad: Some(grad_logsumexp),
        kernel: Some(k_logsumexp),
        traits: Traits::NONE,
    },
    OpDef {
        name: "ReduceStd",
        category: Category::Reduction,
        doc: "The standard deviation and mean of `x` over `axis` (all dimensions when empty): `(std, mean)`. With `unbiased` (the default) the variance divides by `n - 1`.",
        schema: Schema::ms(
            &[Override::attr("axis", AttrType::Ints, Some(AttrDefault::Ints(&[])), why::TYPE)],
            &[
                ("x", "A float tensor."),
                ("axis", "The dimensions to reduce: an int or a tuple of ints; the default `()` reduces all of them."),
                ("unbiased", "Divide the sum of squares by `n - 1` (the default) rather than `n`."),
                ("keep_dims", "Keep each reduced dimension with size 1 (default `false`)."),
            ],
        ),
        variadic: false,
        output: OutputDef::Tuple(&["std", "mean"]),
        infer: infer_stat,
        grad: Some(|b, c| grad_stat(b, c, "ReduceStd")),
        kernel: Some(|c| k_stat(c, "ReduceStd")),
        traits: Traits::NONE.batched(BatchRule::Axes { attr: "axis", empty_is_all: true }),
    },
    stat_op!(
        "Var",
        "The variance of `input` over `dim` (all dimensions when `None`), dividing the sum of squared deviations by `n - correction`.",
        OutputDef::Single
    ),
    stat_op!(
        "Std",
        "The standard deviation of `input` over `dim` (all dimensions when `None`): the square root of the variance with `n - correction` as divisor.",
        OutputDef::Single
    ),
    stat_op!(
        "VarMean",
        "The variance (divisor `n - correction`) and mean of `input` over `dim` (all dimensions when `None`): `(var, mean)`.",
        OutputDef::Tuple(&["var", "mean"])
    ),
    stat_op!(
        "StdMean",
        "The standard deviation (variance divisor `n - correction`) and mean of `input` over `dim` (all dimensions when `None`): `(std, mean)`.",
        OutputDef::Tuple(&["std", "mean"])
    ),
    OpDef {
        name: "Norm",
        category: Category::Reduction,
        doc: "The vector `p`-norm of `input` over `dim` (all elements when `None`), as `mint.norm` with a number `p`: `(sum |x|^p)^(1/p)`; `p=inf` is the largest magnitude, `-inf` the smallest, `0` the number of non-zero elements. With `dtype` the input is cast to it first.",
        schema: Schema::ms(
            &[Override::attr("p", AttrType::Number, Some(AttrDefault::Float(2.0)), why::TYPE)],
            &[
                ("input", "A float tensor."),
                ("p", "The order of the norm (default 2); `inf` and `-inf` allowed."),
                ("dim", "The dimensions to reduce: an int, a tuple of ints, or `None` (the default), which reduces all of them."),
                ("keepdim", "Keep each reduced dimension with size 1 (default `false`)."),
                ("dtype", "The dtype to compute and return in (the input is cast to it first); `None` (the default) keeps the input's float dtype."),
            ],
        ),
        variadic: false,
        output: OutputDef::Single,
        infer: infer_norm,
        grad: Some(|b, c| grad_norm(b, c, "Norm")),
        kernel: Some(|c| k_norm(c, "Norm")),
        traits: Traits::NONE,
    },
    OpDef {
        name: "LinalgVectorNorm",
        category: Category::Reduction,
        doc: VECTOR_NORM_DOC,
        schema: Schema::ms(
            &[Override::attr("ord", AttrType::Number, Some(AttrDefault::Float(2.0)), why::TYPE)],
            &[
                ("x", "A float tensor."),
                ("ord", "The order of the norm (default 2); `inf` and `-inf` allowed."),
                ("dim", "The dimensions to reduce: an int, a tuple of ints, or `None` (the default), which reduces all of them."),
                ("keepdim", "Keep each reduced dimension with size 1 (default `false`)."),
                ("dtype", "The dtype to compute and return in (the input is cast to it first); `None` (the default) keeps the input's float dtype."),
            ],
        ),
        variadic: false,
        output: OutputDef::Single,
        infer: infer_norm,
        grad: Some(|b, c| grad_norm(b, c, "LinalgVectorNorm")),
        kernel: Some(|c| k_norm(c, "LinalgVectorNorm")),
        traits: Traits::NONE,
    },
    OpDef {
        name: "LpNorm",
        category: Category::Reduction,
        doc: "The `p`-norm of `input` over `axis`, `(sum |x|^p)^(1/p)` for an integer `p >= 0` (`p=0` counts the non-zero elements), clamped below at `epsilon` (except for `p=0`).",
        schema: Schema::ms(
            &[Override::attr("axis", AttrType::Ints, None, why::TYPE)],
            &[
                ("input", "A float tensor."),
                ("axis", "The dimensions to reduce: an int or a tuple of ints, negative counting from the end."),
                ("p", "The order of the norm, a non-negative integer (default 2)."),
                ("keep_dims", "Keep each reduced dimension with size 1 (default `false`)."),
                ("epsilon", "The smallest result (default 1e-12), which keeps a later division finite."),
            ],
        ),
        variadic: false,
        output: OutputDef::Single,
        infer: infer_norm,
        grad: Some(|b, c| grad_norm(b, c, "LpNorm")),
        kernel: Some(|c| k_norm(c, "LpNorm")),
        traits: Traits::NONE,
    },
];

pub(crate) fn samples() -> Vec<crate::eager::Sample> {
    use crate::eager::{random_f64, Sample};
    let axis = |v: &[i64]| AttrValue::Tuple(v.iter().map(|&i| AttrValue::Int(i)).collect());
    let t = AttrValue::Bool(true);
    let r = random_f64;
    let f = AttrValue::float;
    let mut out = vec![
        Sample::new("LogSumExp", vec![r(&[2, 3, 4], 320, -2.0, 2.0)]).attr("dim", axis(&[1])),
        Sample::new("LogSumExp", vec![r(&[2, 3], 321, -2.0, 2.0)])
            .attr("dim", axis(&[0, 1]))
            .attr("keepdim", t.clone()),
        Sample::new("ReduceStd", vec![r(&[3, 4], 322, -2.0, 2.0)]).attr("axis", axis(&[1])),
        Sample::new("ReduceStd", vec![r(&[2, 3, 2], 323, -2.0, 2.0)])
            .attr("unbiased", AttrValue::Bool(false))
            .attr("keep_dims", t.clone()),
    ];
    for (i, op) in ["Var", "Std", "VarMean", "StdMean"].into_iter().enumerate() {
        let s = 330 + 4 * i as u64;
        out.push(Sample::new(op, vec![r(&[3, 4], s, -2.0, 2.0)]).attr("dim", axis(&[-1])));
        out.push(
            Sample::new(op, vec![r(&[2, 3, 2], s + 1, -2.0, 2.0)])
                .attr("correction", AttrValue::Int(0))
                .attr("keepdim", t.clone()),
        );
    }
    for (k, p) in [2.0, 1.0, 3.0, 0.5, f64::INFINITY, f64::NEG_INFINITY, 0.0]
        .into_iter()
        .enumerate()
    {
        let s = 350 + k as u64;
        out.push(
            Sample::new("Norm", vec![r(&[3, 4], s, -2.0, 2.0)])
                .attr("p", f(p))
                .attr("dim", axis(&[1])),
        );
        out.push(
            Sample::new("LinalgVectorNorm", vec![r(&[2, 3], s + 10, -2.0, 2.0)])
                .attr("ord", f(p))
                .attr("keepdim", t.clone()),
        );
    }
    for p in [0, 1, 2, 3] {
        out.push(
            Sample::new("LpNorm", vec![r(&[3, 4], 370 + p as u64, -2.0, 2.0)])
                .attr("axis", axis(&[-1]))
                .attr("p", AttrValue::Int(p)),
        );
    }
    out.push(
        Sample::new("LpNorm", vec![r(&[2, 3, 2], 375, -2.0, 2.0)])
            .attr("axis", axis(&[0, 2]))
            .attr("keep_dims", t),
    );
    out.push(Sample::new("Norm", vec![r(&[4], 376, -2.0, 2.0)]));
    out
}
