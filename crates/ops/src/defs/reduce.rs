//! Reductions: ReduceSum, ReduceMean, ReduceMax, ReduceMin, ArgMax.
//!
//! `axis` is an int or a tuple of ints, negative counting from the end; `()`
//! (the default) reduces every dimension. The result keeps the input's dtype
//! (`ReduceMean` of integers truncates toward zero); bool inputs are refused.
//! Float sums accumulate in f64. `ReduceMax`/`ReduceMin` propagate NaN, and
//! their gradient goes to every element equal to the result, divided by the
//! number of such ties (MindSpore's `MinOrMaxGrad`). `ArgMax` gives the first
//! index of the maximum, as `i32` unless `output_type` says `i64`.

pub mod aggregate;
pub mod index;
pub mod sort;
pub mod stats;

use crate::batch::BatchRule;
use crate::schema::{why, Override, Schema};
use crate::Family;
use crate::ReduceAxes;
use crate::ReduceKind;
use crate::Traits;
use ir::{AbsVal, AttrValue, DType, Dim, Shape};
use tensor::Buffer;

use crate::defs::elementwise::{is_float_input, make_tensor};
use crate::infer::{normalize_axis, result, InferCall};
use crate::kernel::{KValue, KernelCall};
use crate::{Category, GNode, GradBuilder, GradCall, OpDef, OpError, OutputDef};

/// Which dimensions of a rank-`rank` tensor `axes` reduces (`()`: all of them).
/// Errors name `op` and the attribute `axis`.
pub(crate) fn axis_mask(op: &str, axes: &[i64], rank: usize) -> Result<Vec<bool>, OpError> {
    let mut mask = vec![axes.is_empty(); rank];
    for &a in axes {
        let i = normalize_axis(a, rank, "axis").map_err(|e| OpError {
            message: format!("`{op}`: {}", e.message),
            ..e
        })?;
        if rank == 0 {
            continue;
        }
        if mask[i] {
            return Err(OpError::attr(
                "axis",
                format!("`{op}`: `axis` names dimension {i} more than once"),
            ));
        }
        mask[i] = true;
    }
    Ok(mask)
}

/// Folds `data` (shape `shape`) over the dimensions where `mask` is true, with
/// `f(accumulator, element)` from `init`; the result is row-major over the
/// kept dimensions. Dimensions are coalesced so the innermost loop runs over
/// contiguous memory, either folding a run into one accumulator or combining
/// a run elementwise into a row of accumulators.
pub(crate) fn reduce_generic<T: Copy, A: Copy>(
    data: &[T],
    shape: &[usize],
    mask: &[bool],
    init: A,
    f: impl Fn(A, T) -> A,
) -> Vec<A> {
    let out_n: usize = shape
        .iter()
        .zip(mask)
        .map(|(&d, &m)| if m { 1 } else { d })
        .product();
    let mut acc = vec![init; out_n];
    if data.is_empty() {
        return acc;
    }
    let rank = shape.len();
    let mut out_stride = vec![0usize; rank];
    let mut s = 1;
    for i in (0..rank).rev() {
        if !mask[i] {
            out_stride[i] = s;
            s *= shape[i];
        }
    }
    // (size, stride in the result): reduced dimensions have stride 0.
    let mut dims: Vec<(usize, usize)> = Vec::with_capacity(rank);
    for i in 0..rank {
        if shape[i] == 1 {
            continue;
        }
        if let Some(last) = dims.last_mut() {
            if last.1 == out_stride[i] * shape[i] {
                *last = (last.0 * shape[i], out_stride[i]);
                continue;
            }
        }
        dims.push((shape[i], out_stride[i]));
    }
    let Some((inner, inner_stride)) = dims.pop() else {
        acc[0] = f(acc[0], data[0]);
        return acc;
    };
    let mut index = vec![0usize; dims.len()];
    let mut offset = 0usize;
    for chunk in data.chunks_exact(inner) {
        if inner_stride == 0 {
            let mut a = acc[offset];
            for &v in chunk {
                a = f(a, v);
            }
            acc[offset] = a;
        } else {
            for (a, &v) in acc[offset..offset + inner].iter_mut().zip(chunk) {
                *a = f(*a, v);
            }
        }
        for d in (0..dims.len()).rev() {
            index[d] += 1;
            offset += dims[d].1;
            if index[d] < dims[d].0 {
                break;
            }
            offset -= dims[d].1 * dims[d].0;
            index[d] = 0;
        }
    }
    acc
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    Sum,
    Mean,
    Max,
    Min,
}

const REDUCE_DOCS: &[(&str, &str)] = &[
    ("x", "The tensor to reduce."),
    (
        "axis",
        "The dimensions to reduce: an int or a tuple of ints, negative ones counting from the end. The default `()` reduces all of them.",
    ),
    (
        "keep_dims",
        "Keep each reduced dimension with size 1; the default `false` removes them.",
    ),
];

const REDUCE_PARAMS: Schema = Schema::ms(&[], REDUCE_DOCS);

/// `ReduceSum` has MindSpore's `skip_mode` too.
const REDUCE_SUM_PARAMS: Schema =
    Schema::ms(&[Override::drop("skip_mode", why::DROPPED)], REDUCE_DOCS);

fn refuse_bool(call: &InferCall, dtype: DType) -> Result<(), OpError> {
    if dtype.is_bool() {
        return Err(OpError::input(
            0,
            format!(
                "`{}` needs a numeric tensor, but `x` is {}",
                call.op.name, call.inputs[0]
            ),
        )
        .with_note("`Cast` it to a number type first"));
    }
    Ok(())
}

fn infer_reduce(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let (dtype, shape) = call.tensor(0)?;
    refuse_bool(call, dtype)?;
    let axes = call.attrs.ints("axis").unwrap_or_default();
    let keep = call.attrs.bool("keep_dims");
    let Some(dims) = shape.dims() else {
        let shape = if axes.is_empty() && !keep {
            Shape::scalar()
        } else {
            Shape::Unranked
        };
        return Ok(AbsVal::Tensor { dtype, shape });
    };
    let mask = axis_mask(call.op.name, &axes, dims.len())?;
    if matches!(call.op.name, "ReduceMax" | "ReduceMin") {
        if let Some(i) = (0..dims.len()).find(|&i| mask[i] && dims[i] == Dim::Known(0)) {
            return Err(OpError::input(
                0,
                format!(
                    "`{}` of an empty dimension has no value: dimension {i} of `x` {} has size 0",
                    call.op.name, call.inputs[0]
                ),
            ));
        }
    }
    let out: Vec<Dim> = dims
        .iter()
        .zip(&mask)
        .filter_map(|(d, &m)| match (m, keep) {
            (false, _) => Some(d.clone()),
            (true, true) => Some(Dim::Known(1)),
            (true, false) => None,
        })
        .collect();
    Ok(result(&call.inputs[..1], dtype, Shape::Ranked(out)))
}

fn reduce_kernel(c: &KernelCall, kind: Kind, name: &str) -> Result<KValue, OpError> {
    let x = c.tensor(0)?;
    let shape = x.shape();
    let axes = c.attrs.ints("axis").unwrap_or_default();
    let mask = axis_mask(name, &axes, shape.len())?;
    let keep = c.attrs.bool("keep_dims");
    let out_shape: Vec<usize> = shape
        .iter()
        .zip(&mask)
        .filter_map(|(&d, &m)| match (m, keep) {
            (false, _) => Some(d),
            (true, true) => Some(1),
            (true, false) => None,
        })
        .collect();
    let count: usize = shape
        .iter()
        .zip(&mask)
        .filter(|(_, &m)| m)
        .map(|(&d, _)| d)
        .product();
    let out_n: usize = out_shape.iter().product();
    if matches!(kind, Kind::Max | Kind::Min) && count == 0 && out_n > 0 {
        return Err(OpError::input(
            0,
            format!("`{name}` of an empty dimension has no value (`x` has shape {shape:?})"),
        ));
    }
    let buffer = match x.buffer() {
        Buffer::F32(p) => Buffer::F32(match kind {
            Kind::Sum | Kind::Mean => {
                let k = if kind == Kind::Mean {
                    count as f64
                } else {
                    1.0
                };
                reduce_generic(p, shape, &mask, 0f64, |a, v| a + v as f64)
                    .into_iter()
                    .map(|s| (s / k) as f32)
                    .collect()
            }
            Kind::Max => reduce_generic(p, shape, &mask, f32::NEG_INFINITY, |a, v| {
                if v > a || v.is_nan() {
                    v
                } else {
                    a
                }
            }),
            Kind::Min => reduce_generic(p, shape, &mask, f32::INFINITY, |a, v| {
                if v < a || v.is_nan() {
                    v
                } else {
                    a
                }
            }),
        }),
        Buffer::F64(p) => Buffer::F64(match kind {
            Kind::Sum | Kind::Mean => {
                let k = if kind == Kind::Mean {
                    count as f64
                } else {
                    1.0
                };
                reduce_generic(p, shape, &mask, 0f64, |a, v| a + v)
                    .into_iter()
                    .map(|s| s / k)
                    .collect()
            }
            Kind::Max => reduce_generic(p, shape, &mask, f64::NEG_INFINITY, |a, v| {
                if v > a || v.is_nan() {
                    v
                } else {
                    a
                }
            }),
            Kind::Min => reduce_generic(p, shape, &mask, f64::INFINITY, |a, v| {
                if v < a || v.is_nan() {
                    v
                } else {
                    a
                }
            }),
        }),
        Buffer::I64(p) => Buffer::I64(match kind {
            Kind::Sum | Kind::Mean => {
                let k = if kind == Kind::Mean {
                    count.max(1) as i64
                } else {
                    1
                };
                reduce_generic(p, shape, &mask, 0i64, |a, v| a.wrapping_add(v))
                    .into_iter()
                    .map(|s| s / k)
                    .collect()
            }
            Kind::Max => reduce_generic(p, shape, &mask, i64::MIN, |a, v| a.max(v)),
            Kind::Min => reduce_generic(p, shape, &mask, i64::MAX, |a, v| a.min(v)),
        }),
        Buffer::Bool(_) => {
            return Err(OpError::input(
                0,
                format!("`{name}` needs a numeric tensor, not bool"),
            ))
        }
    };
    Ok(KValue::Tensor(make_tensor(x.dtype(), out_shape, buffer)?))
}

/// Puts a reduction's result (or its gradient) back into the input's shape.
fn unreduce(b: &mut dyn GradBuilder, c: &GradCall, g: GNode, mean: bool) -> GNode {
    let mut attrs = vec![
        (
            "axis",
            c.attrs
                .get("axis")
                .cloned()
                .unwrap_or(AttrValue::Tuple(Vec::new())),
        ),
        ("keep_dims", AttrValue::Bool(c.attrs.bool("keep_dims"))),
    ];
    if mean {
        attrs.push(("mean", AttrValue::Bool(true)));
    }
    b.prim("_BroadcastToShapeOf", &[g, c.inputs[0]], attrs)
}

fn grad_sum(b: &mut dyn GradBuilder, c: &GradCall) -> Vec<Option<GNode>> {
    vec![is_float_input(c, 0).then(|| unreduce(b, c, c.dout, false))]
}

fn grad_mean(b: &mut dyn GradBuilder, c: &GradCall) -> Vec<Option<GNode>> {
    vec![is_float_input(c, 0).then(|| unreduce(b, c, c.dout, true))]
}

/// MindSpore's `MinOrMaxGrad`: `dout` shared among the elements equal to the result.
fn grad_min_max(b: &mut dyn GradBuilder, c: &GradCall) -> Vec<Option<GNode>> {
    if !is_float_input(c, 0) {
        return vec![None];
    }
    let x = c.inputs[0];
    let y = unreduce(b, c, c.out, false);
    let g = unreduce(b, c, c.dout, false);
    let hit = b.prim("Equal", &[y, x], vec![]);
    let ones = b.prim("OnesLike", &[x], vec![]);
    let zeros = b.prim("ZerosLike", &[x], vec![]);
    let indicators = b.prim("Select", &[hit, ones, zeros], vec![]);
    let axis = c
        .attrs
        .get("axis")
        .cloned()
        .unwrap_or(AttrValue::Tuple(Vec::new()));
    let count = b.prim(
        "ReduceSum",
        &[indicators],
        vec![("axis", axis), ("keep_dims", AttrValue::Bool(true))],
    );
    let share = b.prim("RealDiv", &[indicators, count], vec![]);
    vec![Some(b.prim("Mul", &[share, g], vec![]))]
}

fn infer_argmax(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let (dtype, shape) = call.tensor(0)?;
    refuse_bool(call, dtype)?;
    let out_type = call.attrs.dtype("output_type");
    if !matches!(out_type, DType::I32 | DType::I64) {
        return Err(OpError::attr(
            "output_type",
            format!("`ArgMax`: `output_type` must be i32 or i64, not {out_type}"),
        ));
    }
    let Some(dims) = shape.dims() else {
        return Ok(AbsVal::Tensor {
            dtype: out_type,
            shape: Shape::Unranked,
        });
    };
    let axis = call.attrs.int("axis");
    let i = normalize_axis(axis, dims.len(), "axis").map_err(|e| OpError {
        message: format!("`ArgMax`: {}", e.message),
        ..e
    })?;
    if dims.get(i) == Some(&Dim::Known(0)) {
        return Err(OpError::input(
            0,
            format!(
                "`ArgMax` of an empty dimension has no value: dimension {i} of `x` {} has size 0",
                call.inputs[0]
            ),
        ));
    }
    let out: Vec<Dim> = dims
        .iter()
        .enumerate()
        .filter(|&(j, _)| j != i)
        .map(|(_, d)| d.clone())
        .collect();
    Ok(result(&call.inputs[..1], out_type, Shape::Ranked(out)))
}

/// Index of the first maximum along the middle dimension of `[outer, k, inner]`
/// (a NaN counts as the maximum, as in NumPy).
fn argmax_data<T: Copy + PartialOrd>(data: &[T], outer: usize, k: usize, inner: usize) -> Vec<i64> {
    #[allow(clippy::eq_op)]
    let is_nan = |v: T| v != v;
    let mut out = vec![0i64; outer * inner];
    for o in 0..outer {
        let block = &data[o * k * inner..(o + 1) * k * inner];
        let idx = &mut out[o * inner..(o + 1) * inner];
        let mut best: Vec<T> = block[..inner].to_vec();
        for j in 1..k {
            let row = &block[j * inner..(j + 1) * inner];
            for ((b, i), &v) in best.iter_mut().zip(idx.iter_mut()).zip(row) {
                if !is_nan(*b) && (v > *b || is_nan(v)) {
                    *b = v;
                    *i = j as i64;
                }
            }
        }
    }
    out
}

fn k_argmax(c: &KernelCall) -> Result<KValue, OpError> {
    let x = c.tensor(0)?;
    let shape = x.shape();
    let axis = normalize_axis(c.attrs.int("axis"), shape.len(), "axis")?;
    let (outer, k, inner) = if shape.is_empty() {
        (1, 1, 1)
    } else {
        (
            shape[..axis].iter().product::<usize>(),
            shape[axis],
            shape[axis + 1..].iter().product::<usize>(),
        )
    };
    let out_shape: Vec<usize> = shape
        .iter()
        .enumerate()
        .filter(|&(j, _)| j != axis)
        .map(|(_, &d)| d)
        .collect();
    let r = if outer * inner == 0 {
        Vec::new()
    } else if k == 0 {
        return Err(OpError::input(
            0,
            format!("`ArgMax` of an empty dimension has no value (`x` has shape {shape:?})"),
        ));
    } else {
        match x.buffer() {
            Buffer::F32(p) => argmax_data(p, outer, k, inner),
            Buffer::F64(p) => argmax_data(p, outer, k, inner),
            Buffer::I64(p) => argmax_data(p, outer, k, inner),
            Buffer::Bool(p) => argmax_data(p, outer, k, inner),
        }
    };
    let dtype = c.attrs.dtype("output_type");
    Ok(KValue::Tensor(make_tensor(
        dtype,
        out_shape,
        Buffer::I64(r),
    )?))
}

const fn reduction(
    name: &'static str,
    doc: &'static str,
    schema: Schema,
    grad: crate::GradFn,
    kernel: crate::KernelFn,
) -> OpDef {
    OpDef {
        name,
        category: Category::Reduction,
        doc,
        schema,
        variadic: false,
        output: OutputDef::Single,
        infer: infer_reduce,
        grad: Some(grad),
        kernel: Some(kernel),
        traits: Traits::NONE,
    }
}

pub const OPS: &[OpDef] = &[
    reduction(
        "ReduceSum",
        "Sums `x` over the dimensions in `axis` (all of them by default), removing them unless `keep_dims`.",
        REDUCE_SUM_PARAMS,
        grad_sum,
        |c| reduce_kernel(c, Kind::Sum, "ReduceSum"),
    )
    .in_family(Family::Reduce { kind: ReduceKind::Sum, axes: ReduceAxes::Axis })
    .batched(BatchRule::Axes { attr: "axis", empty_is_all: true }),
    reduction(
        "ReduceMean",
        "The mean of `x` over the dimensions in `axis` (all of them by default), removing them unless `keep_dims`.",
        REDUCE_PARAMS,
        grad_mean,
        |c| reduce_kernel(c, Kind::Mean, "ReduceMean"),
    )
    .in_family(Family::Reduce { kind: ReduceKind::Mean, axes: ReduceAxes::Axis })
    .batched(BatchRule::Axes { attr: "axis", empty_is_all: true }),
    reduction(
        "ReduceMax",
        "The maximum of `x` over the dimensions in `axis` (all of them by default), removing them unless `keep_dims`. Its gradient is shared among tied maxima.",
        REDUCE_PARAMS,
        grad_min_max,
        |c| reduce_kernel(c, Kind::Max, "ReduceMax"),
    )
    .in_family(Family::Reduce { kind: ReduceKind::Max, axes: ReduceAxes::Axis })
    .batched(BatchRule::Axes { attr: "axis", empty_is_all: true }),
    reduction(
        "ReduceMin",
        "The minimum of `x` over the dimensions in `axis` (all of them by default), removing them unless `keep_dims`. Its gradient is shared among tied minima.",
        REDUCE_PARAMS,
        grad_min_max,
        |c| reduce_kernel(c, Kind::Min, "ReduceMin"),
    )
    .in_family(Family::Reduce { kind: ReduceKind::Min, axes: ReduceAxes::Axis })
    .batched(BatchRule::Axes { attr: "axis", empty_is_all: true }),
    OpDef {
        name: "ArgMax",
        category: Category::Reduction,
        doc: "The index of the maximum of `x` along `axis` (the first one if tied), removing that dimension; MindSpore's `Argmax`.",
        schema: Schema::ms(
            &[Override::inputs(&["x"], why::INPUT_NAMES)],
            &[
                ("x", "The tensor to search."),
                ("axis", "The dimension to search; the default -1 is the last one."),
                ("output_type", "The dtype of the indices: `i32` (the default) or `i64`."),
            ],
        ),
        variadic: false,
        output: OutputDef::Single,
        infer: infer_argmax,
        grad: None,
        kernel: Some(k_argmax),
        traits: Traits::NONE.batched(BatchRule::Axes { attr: "axis", empty_is_all: false }),
    },
];

pub(crate) fn samples() -> Vec<crate::eager::Sample> {
    use crate::eager::{ints, random_f64, Sample};
    let axis = |v: &[i64]| AttrValue::Tuple(v.iter().map(|&i| AttrValue::Int(i)).collect());
    let keep = |k: bool| AttrValue::Bool(k);
    let mut out = Vec::new();
    for (i, op) in ["ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin"]
        .into_iter()
        .enumerate()
    {
        let s = 60 + 10 * i as u64;
        out.push(
            Sample::new(op, vec![random_f64(&[2, 3, 4], s, -2.0, 2.0)]).attr("axis", axis(&[1])),
        );
        out.push(
            Sample::new(op, vec![random_f64(&[2, 3, 4], s + 1, -2.0, 2.0)])
                .attr("axis", AttrValue::Int(-1))
                .attr("keep_dims", keep(true)),
        );
        out.push(Sample::new(op, vec![random_f64(&[3, 4], s + 2, -2.0, 2.0)]));
        out.push(
            Sample::new(op, vec![random_f64(&[2, 3, 4], s + 3, -2.0, 2.0)])
                .attr("axis", axis(&[0, -1]))
                .attr("keep_dims", keep(true)),
        );
        out.push(
            Sample::new(op, vec![random_f64(&[2, 1, 3], s + 4, -2.0, 2.0)])
                .attr("axis", axis(&[2, 0])),
        );
    }
    out.push(Sample::new(
        "ArgMax",
        vec![random_f64(&[3, 4], 100, -2.0, 2.0)],
    ));
    out.push(
        Sample::new("ArgMax", vec![random_f64(&[2, 3, 4], 101, -2.0, 2.0)])
            .attr("axis", AttrValue::Int(1))
            .attr("output_type", AttrValue::DType(DType::I64)),
    );
    out.push(
        Sample::new(
            "ArgMax",
            vec![ints(DType::I32, &[2, 3], &[1, 5, 5, -1, -3, -2])],
        )
        .attr("axis", AttrValue::Int(0)),
    );
    out.push(
        Sample::new(
            "ReduceSum",
            vec![ints(DType::I32, &[2, 3], &[1, 5, 5, -1, -3, -2])],
        )
        .attr("axis", AttrValue::Int(0)),
    );
    out
}
