//! More reductions: ReduceProd, ReduceAll, ReduceAny, Max, Min, SumExt,
//! MeanExt, ProdExt, CountNonZero, SquareSumAll (statistics and norms are in
//! `reduce::stats`, index-producing reductions in `reduce::index`).
//!
//! `axis` is an int or a tuple of ints, negative counting from the end; `()`
//! (and `None`, where MindSpore allows it) reduces every dimension.
//! Semantics measured on MindSpore 2.10's CPU kernels:
//! - `ReduceProd` keeps the dtype (integers wrap; a bool product is an AND);
//!   `ProdExt` and `SumExt` give `i64` for integer and bool inputs unless
//!   `dtype` says otherwise, and with `dtype` cast the input first.
//! - `ReduceAll`/`ReduceAny` take any dtype (non-zero is true) and give bool.
//! - `Max`/`Min` reduce everything to a rank-0 tensor; a NaN is skipped unless
//!   it is the first element (MindSpore's kernel compares `v > best`), and an
//!   empty input is an error.
//!
//! Gradients: `ReduceProd`/`ProdExt` use the product of the other elements of
//! each group (MindSpore's exclusive-cumprod construction, computed by
//! `_ReduceProdGrad`, so zeros are handled); `Max`/`Min` share the gradient
//! among tied extrema (MindSpore's `MinOrMaxGrad`).

use crate::batch::BatchRule;
use crate::schema::Schema;
use crate::Family;
use crate::ReduceAxes;
use crate::ReduceKind;
use crate::Traits;
use ir::{AbsVal, AttrValue, DType, Dim, Shape};
use tensor::{Buffer, Tensor};

use crate::defs::elementwise::{is_float_input, make_tensor};
use crate::defs::nn::groups;
use crate::defs::reduce::{axis_mask, reduce_generic};
use crate::infer::{result, InferCall};
use crate::kernel::{KValue, KernelCall};
use crate::{
    AttrDefault, AttrType, Attrs, Category, GNode, GradBuilder, GradCall, OpDef, OpError,
    OutputDef, ParamDef,
};

// ---------------------------------------------------------------------------
// Helpers shared by the reduction files.

/// The axes of an `Ints` attribute that may be `None` (both mean "all").
pub(crate) fn axes_of(attrs: &Attrs, name: &str) -> Vec<i64> {
    attrs.ints(name).unwrap_or_default()
}

/// A `Number` attribute as a float (a bool counts as 0 or 1).
pub(crate) fn number(attrs: &Attrs, name: &str) -> f64 {
    match attrs.get(name) {
        Some(AttrValue::Bool(b)) => f64::from(u8::from(*b)),
        _ => attrs.f64(name),
    }
}

/// An optional dtype attribute (`None` when not given).
pub(crate) fn opt_dtype(attrs: &Attrs, name: &str) -> Option<DType> {
    match attrs.get(name) {
        Some(AttrValue::DType(d)) => Some(*d),
        _ => None,
    }
}

/// The dims left by reducing `mask`'s dimensions (kept as 1 with `keep`).
pub(crate) fn reduced_dims(dims: &[Dim], mask: &[bool], keep: bool) -> Vec<Dim> {
    dims.iter()
        .zip(mask)
        .filter_map(|(d, &m)| match (m, keep) {
            (false, _) => Some(d.clone()),
            (true, true) => Some(Dim::Known(1)),
            (true, false) => None,
        })
        .collect()
}

/// [`reduced_dims`] for a concrete shape.
pub(crate) fn reduced_shape(shape: &[usize], mask: &[bool], keep: bool) -> Vec<usize> {
    shape
        .iter()
        .zip(mask)
        .filter_map(|(&d, &m)| match (m, keep) {
            (false, _) => Some(d),
            (true, true) => Some(1),
            (true, false) => None,
        })
        .collect()
}

/// The normalised reduced dimensions of `mask`.
pub(crate) fn mask_axes(mask: &[bool]) -> Vec<usize> {
    (0..mask.len()).filter(|&i| mask[i]).collect()
}

/// Input `i` as a tensor: dtype and dims (`None` when unranked). With
/// `numeric`, a bool input is refused; with `float`, anything but a float.
pub(crate) fn input_tensor(
    call: &InferCall,
    i: usize,
    numeric: bool,
    float: bool,
) -> Result<(DType, Option<Vec<Dim>>), OpError> {
    let (dtype, shape) = call.tensor(i)?;
    let name = call.input_name(i);
    if float && !dtype.is_float() {
        return Err(OpError::input(
            i,
            format!(
                "`{}` needs a float `{name}` (f16, bf16, f32 or f64), but it is {}",
                call.op.name, call.inputs[i]
            ),
        )
        .with_note("`Cast` it to a float dtype first"));
    }
    if numeric && dtype.is_bool() {
        return Err(OpError::input(
            i,
            format!(
                "`{}` needs a numeric `{name}`, but it is {}",
                call.op.name, call.inputs[i]
            ),
        )
        .with_note("`Cast` it to a number type first"));
    }
    Ok((dtype, shape.dims().map(<[Dim]>::to_vec)))
}

/// The abstract result of reducing input 0 over `axes` to `dtype` (a tensor;
/// unranked when the input's rank is unknown, unless everything is reduced
/// without `keep`).
pub(crate) fn reduce_abs(
    call: &InferCall,
    dims: Option<Vec<Dim>>,
    axes: &[i64],
    keep: bool,
    dtype: DType,
) -> Result<AbsVal, OpError> {
    let Some(dims) = dims else {
        let shape = if axes.is_empty() && !keep {
            Shape::scalar()
        } else {
            Shape::Unranked
        };
        return Ok(AbsVal::Tensor { dtype, shape });
    };
    let mask = axis_mask(call.op.name, axes, dims.len())?;
    Ok(AbsVal::Tensor {
        dtype,
        shape: Shape::Ranked(reduced_dims(&dims, &mask, keep)),
    })
}

/// The reduction mask and result shape of a kernel's input `x`.
pub(crate) fn reduce_plan(
    op: &str,
    x: &Tensor,
    axes: &[i64],
    keep: bool,
) -> Result<(Vec<bool>, Vec<usize>), OpError> {
    let mask = axis_mask(op, axes, x.rank())?;
    let out = reduced_shape(x.shape(), &mask, keep);
    Ok((mask, out))
}

/// The attributes that undo a reduction with `_BroadcastToShapeOf`.
pub(crate) fn unreduce_attrs(axes: &[i64], keep: bool) -> Vec<(&'static str, AttrValue)> {
    vec![
        (
            "axis",
            AttrValue::Tuple(axes.iter().map(|&a| AttrValue::Int(a)).collect()),
        ),
        ("keep_dims", AttrValue::Bool(keep)),
    ]
}

/// `g` (a reduction's result or sensitivity) broadcast back to `x`'s shape.
pub(crate) fn unreduce(
    b: &mut dyn GradBuilder,
    g: GNode,
    x: GNode,
    axes: &[i64],
    keep: bool,
) -> GNode {
    b.prim("_BroadcastToShapeOf", &[g, x], unreduce_attrs(axes, keep))
}

/// `x` as a tensor of `dtype` (computing dtype of a reduction), borrowing when it is one.
fn in_dtype(x: &Tensor, dtype: DType) -> std::borrow::Cow<'_, Tensor> {
    crate::defs::elementwise::as_dtype(x, dtype)
}

// ---------------------------------------------------------------------------
// Sums and products.

#[derive(Clone, Copy, PartialEq)]
enum Fold {
    Sum,
    Mean,
    Prod,
}

/// Folds `x` (already of the result's dtype) over `mask`.
fn fold_kernel(
    x: &Tensor,
    mask: &[bool],
    out_shape: Vec<usize>,
    fold: Fold,
) -> Result<Tensor, OpError> {
    let shape = x.shape();
    let count: usize = shape
        .iter()
        .zip(mask)
        .filter(|(_, &m)| m)
        .map(|(&d, _)| d)
        .product();
    let buffer = match x.buffer() {
        Buffer::F32(p) => Buffer::F32(match fold {
            Fold::Prod => reduce_generic(p, shape, mask, 1f64, |a, v| a * v as f64),
            _ => reduce_generic(p, shape, mask, 0f64, |a, v| a + v as f64),
        }
        .into_iter()
        .map(|s| if fold == Fold::Mean { s / count as f64 } else { s } as f32)
        .collect()),
        Buffer::F64(p) => Buffer::F64(
            match fold {
                Fold::Prod => reduce_generic(p, shape, mask, 1f64, |a, v| a * v),
                _ => reduce_generic(p, shape, mask, 0f64, |a, v| a + v),
            }
            .into_iter()
            .map(|s| if fold == Fold::Mean { s / count as f64 } else { s })
            .collect(),
        ),
        Buffer::I64(p) => Buffer::I64(match fold {
            Fold::Prod => reduce_generic(p, shape, mask, 1i64, i64::wrapping_mul),
            Fold::Sum => reduce_generic(p, shape, mask, 0i64, i64::wrapping_add),
            Fold::Mean => reduce_generic(p, shape, mask, 0i64, i64::wrapping_add)
                .into_iter()
                .map(|s| s / count.max(1) as i64)
                .collect(),
        }),
        Buffer::Bool(p) => Buffer::Bool(match fold {
            Fold::Prod => reduce_generic(p, shape, mask, true, |a, v| a & v),
            _ => reduce_generic(p, shape, mask, false, |a, v| a | v),
        }),
    };
    make_tensor(x.dtype(), out_shape, buffer)
}

fn infer_reduce_prod(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let (dtype, dims) = input_tensor(call, 0, false, false)?;
    let axes = axes_of(call.attrs, "axis");
    reduce_abs(call, dims, &axes, call.attrs.bool("keep_dims"), dtype)
}

fn k_reduce_prod(c: &KernelCall) -> Result<KValue, OpError> {
    let x = c.tensor(0)?;
    let keep = c.attrs.bool("keep_dims");
    let (mask, out) = reduce_plan("ReduceProd", x, &axes_of(c.attrs, "axis"), keep)?;
    Ok(KValue::Tensor(fold_kernel(x, &mask, out, Fold::Prod)?))
}

/// `dx = broadcast(dout) · (product of the other elements of each group)`.
fn prod_grad(b: &mut dyn GradBuilder, c: &GradCall, axes: Vec<i64>, keep: bool) -> Option<GNode> {
    if !is_float_input(c, 0) {
        return None;
    }
    let x = c.inputs[0];
    let g = unreduce(b, c.dout, x, &axes, keep);
    let g = match c.input_values[0].dtype() {
        Some(d) => b.prim("Cast", &[g], vec![("dtype", AttrValue::DType(d))]),
        None => g,
    };
    let axis = AttrValue::Tuple(axes.into_iter().map(AttrValue::Int).collect());
    let others = b.prim("_ReduceProdGrad", &[x], vec![("axis", axis)]);
    Some(b.prim("Mul", &[g, others], vec![]))
}

fn grad_reduce_prod(b: &mut dyn GradBuilder, c: &GradCall) -> Vec<Option<GNode>> {
    vec![prod_grad(
        b,
        c,
        axes_of(c.attrs, "axis"),
        c.attrs.bool("keep_dims"),
    )]
}

/// For every element, the product of the other elements of its group.
fn others_product(x: &[f64], shape: &[usize], axes: &[usize]) -> Vec<f64> {
    let mut out = vec![0.0; x.len()];
    let (outer, inner) = groups(shape, axes);
    let mut prefix = vec![1.0; inner.len()];
    for &o in &outer {
        let mut p = 1.0;
        for (k, &i) in inner.iter().enumerate() {
            prefix[k] = p;
            p *= x[o + i];
        }
        let mut s = 1.0;
        for (k, &i) in inner.iter().enumerate().rev() {
            out[o + i] = prefix[k] * s;
            s *= x[o + i];
        }
    }
    out
}

fn k_reduce_prod_grad(c: &KernelCall) -> Result<KValue, OpError> {
    let x = c.tensor(0)?;
    let mask = axis_mask("_ReduceProdGrad", &axes_of(c.attrs, "axis"), x.rank())?;
    let v = others_product(&x.to_f64_vec(), x.shape(), &mask_axes(&mask));
    let t = Tensor::from_f64(x.shape().to_vec(), v).map_err(|e| OpError::call(e.0))?;
    Ok(KValue::Tensor(t.cast(x.dtype())))
}

// ---------------------------------------------------------------------------
// ReduceAll, ReduceAny, CountNonZero.

fn infer_reduce_bool(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let (_, dims) = input_tensor(call, 0, false, false)?;
    let axes = axes_of(call.attrs, "axis");
    reduce_abs(call, dims, &axes, call.attrs.bool("keep_dims"), DType::Bool)
}

fn k_reduce_bool(c: &KernelCall, all: bool, op: &str) -> Result<KValue, OpError> {
    let x = c.tensor(0)?;
    let keep = c.attrs.bool("keep_dims");
    let (mask, out) = reduce_plan(op, x, &axes_of(c.attrs, "axis"), keep)?;
    let b = in_dtype(x, DType::Bool);
    let Buffer::Bool(p) = b.buffer() else {
        unreachable!("cast to bool")
    };
    let r = if all {
        reduce_generic(p, x.shape(), &mask, true, |a, v| a & v)
    } else {
        reduce_generic(p, x.shape(), &mask, false, |a, v| a | v)
    };
    Ok(KValue::Tensor(make_tensor(
        DType::Bool,
        out,
        Buffer::Bool(r),
    )?))
}

fn infer_count_nonzero(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let (_, dims) = input_tensor(call, 0, false, false)?;
    reduce_abs(call, dims, &axes_of(call.attrs, "dim"), false, DType::I64)
}

fn k_count_nonzero(c: &KernelCall) -> Result<KValue, OpError> {
    let x = c.tensor(0)?;
    let (mask, out) = reduce_plan("CountNonZero", x, &axes_of(c.attrs, "dim"), false)?;
    let b = in_dtype(x, DType::Bool);
    let Buffer::Bool(p) = b.buffer() else {
        unreachable!("cast to bool")
    };
    let r = reduce_generic(p, x.shape(), &mask, 0i64, |a, v| a + i64::from(v));
    Ok(KValue::Tensor(make_tensor(
        DType::I64,
        out,
        Buffer::I64(r),
    )?))
}

// ---------------------------------------------------------------------------
// Max, Min.

fn infer_max_min(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let (dtype, dims) = input_tensor(call, 0, true, false)?;
    if let Some(dims) = &dims {
        if dims.contains(&Dim::Known(0)) {
            return Err(OpError::input(
                0,
                format!(
                    "`{}` of an empty tensor has no value: `input` is {}",
                    call.op.name, call.inputs[0]
                ),
            ));
        }
    }
    Ok(AbsVal::Tensor {
        dtype,
        shape: Shape::scalar(),
    })
}

/// The first element, replaced by every later one that beats it (`better`):
/// MindSpore's scan, which skips a NaN unless it comes first.
pub(crate) fn scan_best<T: Copy>(v: &[T], better: impl Fn(T, T) -> bool) -> (T, usize) {
    let mut best = (v[0], 0);
    for (i, &e) in v.iter().enumerate().skip(1) {
        if better(e, best.0) {
            best = (e, i);
        }
    }
    best
}

fn k_max_min(c: &KernelCall, max: bool) -> Result<KValue, OpError> {
    let x = c.tensor(0)?;
    let op = if max { "Max" } else { "Min" };
    if x.numel() == 0 {
        return Err(OpError::input(
            0,
            format!(
                "`{op}` of an empty tensor has no value (`input` has shape {:?})",
                x.shape()
            ),
        ));
    }
    fn pick<T: Copy + PartialOrd>(v: &[T], max: bool) -> Vec<T> {
        vec![if max {
            scan_best(v, |a, b| a > b).0
        } else {
            scan_best(v, |a, b| a < b).0
        }]
    }
    let buffer = match x.buffer() {
        Buffer::F32(p) => Buffer::F32(pick(p, max)),
        Buffer::F64(p) => Buffer::F64(pick(p, max)),
        Buffer::I64(p) => Buffer::I64(pick(p, max)),
        Buffer::Bool(_) => {
            return Err(OpError::input(
                0,
                format!("`{op}` needs a numeric tensor, not bool"),
            ))
        }
    };
    Ok(KValue::Tensor(make_tensor(x.dtype(), vec![], buffer)?))
}

/// `MinOrMaxGrad` over every dimension: `dout` shared among the elements equal
/// to the result.
fn grad_max_min(b: &mut dyn GradBuilder, c: &GradCall) -> Vec<Option<GNode>> {
    if !is_float_input(c, 0) {
        return vec![None];
    }
    let x = c.inputs[0];
    let y = unreduce(b, c.out, x, &[], false);
    let g = unreduce(b, c.dout, x, &[], false);
    let hit = b.prim("Equal", &[y, x], vec![]);
    let ones = b.prim("OnesLike", &[x], vec![]);
    let zeros = b.prim("ZerosLike", &[x], vec![]);
    let indicators = b.prim("Select", &[hit, ones, zeros], vec![]);
    let count = b.prim("ReduceSum", &[indicators], vec![]);
    let share = b.prim("RealDiv", &[indicators, count], vec![]);
    vec![Some(b.prim("Mul", &[share, g], vec![]))]
}

// ---------------------------------------------------------------------------
// SumExt, MeanExt, ProdExt.

/// The dtype `SumExt`/`ProdExt` compute in: `dtype` when given, else `i64`
/// for integers and bool, else the input's.
fn ext_dtype(input: DType, dtype: Option<DType>) -> DType {
    match dtype {
        Some(d) => d,
        None if !input.is_float() => DType::I64,
        None => input,
    }
}

/// `dim` of `ProdExt` (one int or `None`) as a list of axes.
fn prod_ext_axes(attrs: &Attrs) -> Vec<i64> {
    attrs
        .get("dim")
        .and_then(AttrValue::as_int)
        .map(|d| vec![d])
        .unwrap_or_default()
}

fn infer_ext(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let op = call.op.name;
    let (input, dims) = input_tensor(call, 0, false, false)?;
    let given = opt_dtype(call.attrs, "dtype");
    let (dtype, axes) = match op {
        "MeanExt" => {
            let d = given.unwrap_or(input);
            if d.is_bool() {
                return Err(OpError::input(
                    0,
                    format!(
                        "`MeanExt` of a bool tensor is undefined: `input` is {}",
                        call.inputs[0]
                    ),
                )
                .with_note("give `dtype`, or `Cast` it to a number type first"));
            }
            (d, axes_of(call.attrs, "dim"))
        }
        "ProdExt" => (ext_dtype(input, given), prod_ext_axes(call.attrs)),
        _ => (ext_dtype(input, given), axes_of(call.attrs, "dim")),
    };
    reduce_abs(call, dims, &axes, call.attrs.bool("keepdim"), dtype)
}

fn k_ext(c: &KernelCall, op: &str) -> Result<KValue, OpError> {
    let x = c.tensor(0)?;
    let given = opt_dtype(c.attrs, "dtype");
    let (dtype, axes, fold) = match op {
        "MeanExt" => (
            given.unwrap_or(x.dtype()),
            axes_of(c.attrs, "dim"),
            Fold::Mean,
        ),
        "ProdExt" => (
            ext_dtype(x.dtype(), given),
            prod_ext_axes(c.attrs),
            Fold::Prod,
        ),
        _ => (
            ext_dtype(x.dtype(), given),
            axes_of(c.attrs, "dim"),
            Fold::Sum,
        ),
    };
    if fold == Fold::Mean && dtype.is_bool() {
        return Err(OpError::input(0, "`MeanExt` of a bool tensor is undefined"));
    }
    let keep = c.attrs.bool("keepdim");
    let (mask, out) = reduce_plan(op, x, &axes, keep)?;
    let xc = in_dtype(x, dtype);
    Ok(KValue::Tensor(fold_kernel(&xc, &mask, out, fold)?))
}

fn grad_ext(b: &mut dyn GradBuilder, c: &GradCall, mean: bool) -> Vec<Option<GNode>> {
    if !is_float_input(c, 0) {
        return vec![None];
    }
    let x = c.inputs[0];
    let mut attrs = unreduce_attrs(&axes_of(c.attrs, "dim"), c.attrs.bool("keepdim"));
    attrs.push(("mean", AttrValue::Bool(mean)));
    let g = b.prim("_BroadcastToShapeOf", &[c.dout, x], attrs);
    vec![Some(match c.input_values[0].dtype() {
        Some(d) => b.prim("Cast", &[g], vec![("dtype", AttrValue::DType(d))]),
        None => g,
    })]
}

// ---------------------------------------------------------------------------
// SquareSumAll.

fn infer_square_sum_all(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let (dx, sx) = input_tensor(call, 0, false, true)?;
    let (dy, sy) = input_tensor(call, 1, false, true)?;
    if let (Some(a), Some(b)) = (&sx, &sy) {
        let same = a.len() == b.len()
            && a.iter()
                .zip(b)
                .all(|(p, q)| crate::defs::linalg::dims_compatible(p, q));
        if !same {
            return Err(OpError::input(
                1,
                format!(
                    "`SquareSumAll` needs `x` and `y` of one shape, but `x` is {} and `y` is {}",
                    call.inputs[0], call.inputs[1]
                ),
            ));
        }
    }
    if dx != dy {
        return Err(OpError::input(
            1,
            format!(
                "`SquareSumAll` needs `x` and `y` of one dtype, but `x` is {} and `y` is {}",
                call.inputs[0], call.inputs[1]
            ),
        ));
    }
    let s = AbsVal::Tensor {
        dtype: dx,
        shape: Shape::scalar(),
    };
    Ok(AbsVal::Tuple(vec![s.clone(), s]))
}

fn k_square_sum_all(c: &KernelCall) -> Result<KValue, OpError> {
    if c.tensor(0)?.shape() != c.tensor(1)?.shape() {
        return Err(OpError::input(
            1,
            "`SquareSumAll` needs `x` and `y` of one shape",
        ));
    }
    let sum = |t: &Tensor| {
        let s: f64 = t.to_f64_vec().iter().map(|v| v * v).sum();
        KValue::Tensor(Tensor::scalar(t.dtype(), s))
    };
    Ok(KValue::Tuple(vec![sum(c.tensor(0)?), sum(c.tensor(1)?)]))
}

fn grad_square_sum_all(b: &mut dyn GradBuilder, c: &GradCall) -> Vec<Option<GNode>> {
    (0..2)
        .map(|i| {
            is_float_input(c, i).then(|| {
                let d = b.tuple_get(c.dout, i);
                let two = b.scalar(2.0);
                let t = b.prim("Mul", &[c.inputs[i], two], vec![]);
                b.prim("Mul", &[t, d], vec![])
            })
        })
        .collect()
}

// ---------------------------------------------------------------------------
// The table.

const EXT_PARAMS: Schema = Schema::ms(
    &[],
    &[
        ("input", "The tensor to reduce."),
        (
            "dim",
            "The dimensions to reduce: an int, a tuple of ints, or `None` (the default), which reduces all of them.",
        ),
        ("keepdim", "Keep each reduced dimension with size 1 (default `false`)."),
        (
            "dtype",
            "The dtype to compute and return in (the input is cast to it first); `None` (the default) keeps a float input's dtype.",
        ),
    ],
);

pub const OPS: &[OpDef] = &[
    OpDef {
        name: "ReduceProd",
        category: Category::Reduction,
        doc: "The product of `x` over the dimensions in `axis` (all of them by default), removing them unless `keep_dims`. Keeps the dtype: integers wrap on overflow, a bool product is a logical AND, an empty product is 1.",
        schema: Schema::ms(
            &[],
            &[
                ("x", "The tensor to reduce."),
                ("axis", "The dimensions to reduce: an int or a tuple of ints, negative ones counting from the end. The default `()` reduces all of them."),
                ("keep_dims", "Keep each reduced dimension with size 1; the default `false` removes them."),
            ],
        ),
        variadic: false,
        output: OutputDef::Single,
        infer: infer_reduce_prod,
        grad: Some(grad_reduce_prod),
        kernel: Some(k_reduce_prod),
        traits: Traits::of(Family::Reduce { kind: ReduceKind::Prod, axes: ReduceAxes::Axis }).batched(BatchRule::Axes { attr: "axis", empty_is_all: true }),
    },
    OpDef {
        name: "ReduceAll",
        category: Category::Reduction,
        doc: "Whether every element of `input` over the dimensions in `axis` is true (non-zero): a bool tensor. `axis=None` (the default) reduces all dimensions; an empty reduction is true.",
        schema: Schema::ms(
            &[],
            &[
                ("input", "The tensor to test, of any dtype (non-zero is true)."),
                ("axis", "The dimensions to reduce: an int, a tuple of ints, or `None` (the default), which reduces all of them."),
                ("keep_dims", "Keep each reduced dimension with size 1; the default `false` removes them."),
            ],
        ),
        variadic: false,
        output: OutputDef::Single,
        infer: infer_reduce_bool,
        grad: None,
        kernel: Some(|c| k_reduce_bool(c, true, "ReduceAll")),
        traits: Traits::of(Family::Reduce { kind: ReduceKind::All, axes: ReduceAxes::Axis }).batched(BatchRule::Axes { attr: "axis", empty_is_all: true }),
    },
    OpDef {
        name: "ReduceAny",
        category: Category::Reduction,
        doc: "Whether any element of `x` over the dimensions in `axis` is true (non-zero): a bool tensor. The default `()` reduces all dimensions; an empty reduction is false.",
        schema: Schema::ms(
            &[],
            &[
                ("x", "The tensor to test, of any dtype (non-zero is true)."),
                ("axis", "The dimensions to reduce: an int or a tuple of ints, negative ones counting from the end. The default `()` reduces all of them."),
                ("keep_dims", "Keep each reduced dimension with size 1; the default `false` removes them."),
            ],
        ),
        variadic: false,
        output: OutputDef::Single,
        infer: infer_reduce_bool,
        grad: None,
        kernel: Some(|c| k_reduce_bool(c, false, "ReduceAny")),
        traits: Traits::of(Family::Reduce { kind: ReduceKind::Any, axes: ReduceAxes::Axis }).batched(BatchRule::Axes { attr: "axis", empty_is_all: true }),
    },
    OpDef {
        name: "Max",
        category: Category::Reduction,
        doc: "The largest element of `input`, as a rank-0 tensor of its dtype. As MindSpore's kernel, a NaN counts only when it is the first element; an empty input is an error. The gradient is shared among tied maxima.",
        schema: Schema::ms(&[], &[("input", "A non-empty numeric tensor.")]),
        variadic: false,
        output: OutputDef::Single,
        infer: infer_max_min,
        grad: Some(grad_max_min),
        kernel: Some(|c| k_max_min(c, true)),
        traits: Traits::of(Family::Reduce { kind: ReduceKind::Max, axes: ReduceAxes::All }),
    },
    OpDef {
        name: "Min",
        category: Category::Reduction,
        doc: "The smallest element of `input`, as a rank-0 tensor of its dtype. As MindSpore's kernel, a NaN counts only when it is the first element; an empty input is an error. The gradient is shared among tied minima.",
        schema: Schema::ms(&[], &[("input", "A non-empty numeric tensor.")]),
        variadic: false,
        output: OutputDef::Single,
        infer: infer_max_min,
        grad: Some(grad_max_min),
        kernel: Some(|c| k_max_min(c, false)),
        traits: Traits::of(Family::Reduce { kind: ReduceKind::Min, axes: ReduceAxes::All }),
    },
    OpDef {
        name: "SumExt",
        category: Category::Reduction,
        doc: "The sum of `input` over `dim` (all dimensions when `None`), as `mint.sum`: integer and bool inputs sum to `i64`, and with `dtype` the input is cast to it first.",
        schema: EXT_PARAMS,
        variadic: false,
        output: OutputDef::Single,
        infer: infer_ext,
        grad: Some(|b, c| grad_ext(b, c, false)),
        kernel: Some(|c| k_ext(c, "SumExt")),
        traits: Traits::of(Family::Reduce { kind: ReduceKind::Sum, axes: ReduceAxes::Dim }),
    },
    OpDef {
        name: "MeanExt",
        category: Category::Reduction,
        doc: "The mean of `input` over `dim` (all dimensions when `None`), as `mint.mean`: keeps the dtype (an integer mean truncates toward zero); with `dtype` the input is cast to it first. Bool inputs are refused.",
        schema: EXT_PARAMS,
        variadic: false,
        output: OutputDef::Single,
        infer: infer_ext,
        grad: Some(|b, c| grad_ext(b, c, true)),
        kernel: Some(|c| k_ext(c, "MeanExt")),
        traits: Traits::of(Family::Reduce { kind: ReduceKind::Mean, axes: ReduceAxes::Dim }),
    },
    OpDef {
        name: "ProdExt",
        category: Category::Reduction,
        doc: "The product of `input` along one dimension `dim` (all of them when `None`), as `mint.prod`: integer and bool inputs give `i64`, and with `dtype` the input is cast to it first.",
        schema: Schema::ms(
            &[],
            &[
                ("input", "The tensor to reduce."),
                ("dim", "The dimension to reduce (negative counts from the end), or `None` (the default) for all of them."),
                ("keepdim", "Keep each reduced dimension with size 1 (default `false`)."),
                ("dtype", "The dtype to compute and return in (the input is cast to it first); `None` (the default) keeps a float input's dtype."),
            ],
        ),
        variadic: false,
        output: OutputDef::Single,
        infer: infer_ext,
        grad: Some(|b, c| vec![prod_grad(b, c, prod_ext_axes(c.attrs), c.attrs.bool("keepdim"))]),
        kernel: Some(|c| k_ext(c, "ProdExt")),
        traits: Traits::of(Family::Reduce { kind: ReduceKind::Prod, axes: ReduceAxes::Dim }),
    },
    OpDef {
        name: "CountNonZero",
        category: Category::Reduction,
        doc: "The number of non-zero elements of `input` over `dim` (all dimensions when `None`), removing those dimensions: an `i64` tensor.",
        schema: Schema::ms(
            &[],
            &[
                ("input", "The tensor to count in, of any dtype."),
                ("dim", "The dimensions to reduce: an int, a tuple of ints, or `None` (the default), which reduces all of them."),
            ],
        ),
        variadic: false,
        output: OutputDef::Single,
        infer: infer_count_nonzero,
        grad: None,
        kernel: Some(k_count_nonzero),
        traits: Traits::NONE,
    },
    OpDef {
        name: "SquareSumAll",
        category: Category::Reduction,
        doc: "The sums of squares of all elements of `x` and of `y`: `(sum(x²), sum(y²))`, two rank-0 tensors. Both must be floats of one dtype.",
        schema: Schema::ms(
            &[],
            &[("x", "A float tensor."), ("y", "A float tensor of `x`'s dtype and shape.")],
        ),
        variadic: false,
        output: OutputDef::Tuple(&["output_x", "output_y"]),
        infer: infer_square_sum_all,
        grad: Some(grad_square_sum_all),
        kernel: Some(k_square_sum_all),
        traits: Traits::NONE,
    },
    OpDef {
        name: "_ReduceProdGrad",
        category: Category::Internal,
        doc: "For every element of `x`, the product of the other elements of its group under a reduction over `axis` (`ReduceProd`'s partial derivative; exact when some elements are zero).",
        schema: Schema::own(&[
            ParamDef::input("x", "The reduction's input."),
            ParamDef::attr("axis", AttrType::Ints, Some(AttrDefault::Ints(&[])), "The reduction's `axis`; `()` means all dimensions."),
        ]),
        variadic: false,
        output: OutputDef::Single,
        infer: |call| {
            if call.any_unknown() {
                return Ok(AbsVal::Any);
            }
            let (dtype, dims) = input_tensor(call, 0, false, false)?;
            if let Some(d) = &dims {
                axis_mask("_ReduceProdGrad", &axes_of(call.attrs, "axis"), d.len())?;
            }
            Ok(result(&call.inputs[..1], dtype, call.inputs[0].shape().unwrap_or(Shape::Unranked)))
        },
        grad: None,
        kernel: Some(k_reduce_prod_grad),
        traits: Traits::NONE,
    },
];

pub(crate) fn samples() -> Vec<crate::eager::Sample> {
    use crate::eager::{ints, random_f64, Sample};
    let axis = |v: &[i64]| AttrValue::Tuple(v.iter().map(|&i| AttrValue::Int(i)).collect());
    let t = AttrValue::Bool(true);
    let r = random_f64;
    vec![
        Sample::new("ReduceProd", vec![r(&[2, 3, 4], 300, 0.5, 1.5)]).attr("axis", axis(&[1])),
        Sample::new("ReduceProd", vec![r(&[2, 3], 301, -1.5, 1.5)])
            .attr("axis", AttrValue::Int(-1))
            .attr("keep_dims", t.clone()),
        Sample::new("ReduceProd", vec![r(&[2, 3], 302, -1.5, 1.5)]),
        Sample::new("ReduceProd", vec![ints(DType::I32, &[2, 2], &[1, 2, 3, 4])]),
        Sample::new("ReduceAll", vec![ints(DType::I32, &[2, 2], &[1, 0, 3, 4])])
            .attr("axis", axis(&[1])),
        Sample::new("ReduceAny", vec![r(&[2, 3], 303, -1.0, 1.0)]).attr("keep_dims", t.clone()),
        Sample::new("Max", vec![r(&[3, 4], 304, -2.0, 2.0)]),
        Sample::new("Min", vec![r(&[3, 4], 305, -2.0, 2.0)]),
        Sample::new("SumExt", vec![r(&[2, 3, 4], 306, -1.0, 1.0)]).attr("dim", axis(&[0, 2])),
        Sample::new("SumExt", vec![ints(DType::I32, &[3], &[1, 2, 3])]),
        Sample::new("MeanExt", vec![r(&[2, 3, 4], 307, -1.0, 1.0)])
            .attr("dim", AttrValue::Int(1))
            .attr("keepdim", t.clone()),
        Sample::new("MeanExt", vec![r(&[2, 3], 308, -1.0, 1.0)])
            .attr("dtype", AttrValue::DType(DType::F64)),
        Sample::new("ProdExt", vec![r(&[2, 3], 309, 0.5, 1.5)]).attr("dim", AttrValue::Int(-1)),
        Sample::new("ProdExt", vec![r(&[3, 2], 310, -1.5, 1.5)]),
        Sample::new(
            "CountNonZero",
            vec![ints(DType::I32, &[2, 3], &[0, 1, 2, 0, 0, 3])],
        )
        .attr("dim", AttrValue::Int(1)),
        Sample::new(
            "SquareSumAll",
            vec![r(&[2, 3], 311, -1.0, 1.0), r(&[2, 3], 312, -1.0, 1.0)],
        ),
        Sample::new("_ReduceProdGrad", vec![r(&[2, 3], 313, -1.0, 1.0)]).attr("axis", axis(&[0])),
    ]
}
