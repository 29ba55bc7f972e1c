//! Segment reductions and masking of the `shape` family:
//! UnsortedSegmentSum/Max/Min and MaskedFill.
//!
//! Negative segment ids are dropped and ids at or above `num_segments` are an
//! error, as on MindSpore's CPU; an empty segment of a maximum (minimum) holds
//! the dtype's lowest (highest) value. `UnsortedSegmentSum`'s gradient gathers
//! the sensitivity by segment (`_SegmentGather`, zero for dropped ids), the
//! maximum's and minimum's share it among the elements that attained the
//! extreme, and MaskedFill's splits it between `input_x` and `value`.

use crate::schema::{why, Override, Schema};
use ir::{AbsVal, AttrValue, DType, Dim};
use tensor::{Buffer, Tensor};

use crate::defs::elementwise::{is_float_input, make_tensor};
use crate::defs::internal::broadcast_to;
use crate::defs::shape::gather_scatter::{Combine, Elem, INDEX_WHAT};
use crate::defs::shape::split_stack::{
    attrs_of, int_values, op, out, require_dtype, Grads, INDEX_DTYPES,
};
use crate::defs::shape::{dims_may_equal, dims_of, fmt_dims, take, tensor_abs, unranked};
use crate::infer::{broadcast_shapes, InferCall};
use crate::kernel::{broadcast_shape, KValue, KernelCall};
use crate::{AttrType, Category, GradBuilder, GradCall, OpDef, OpError, ParamDef};

// ---------------------------------------------------------------------------
// UnsortedSegmentSum, UnsortedSegmentMax, UnsortedSegmentMin

fn infer_segment(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let op = call.op.name;
    let (dtype, xdims) = dims_of(call, 0)?;
    if dtype.is_bool() {
        return Err(OpError::input(
            0,
            format!("`{op}` needs a numeric `input_x`, got bool"),
        ));
    }
    require_dtype(call, 1, INDEX_DTYPES, INDEX_WHAT)?;
    let (_, sdims) = dims_of(call, 1)?;
    let num = call.attrs.int("num_segments");
    if num <= 0 {
        return Err(OpError::attr(
            "num_segments",
            format!("`{op}`: `num_segments` must be positive, got {num}"),
        ));
    }
    let (Some(xdims), Some(sdims)) = (xdims, sdims) else {
        return Ok(unranked(dtype));
    };
    if sdims.is_empty()
        || sdims.len() > xdims.len()
        || sdims.iter().zip(&xdims).any(|(a, b)| !dims_may_equal(a, b))
    {
        return Err(OpError::input(
            1,
            format!(
                "`{op}` needs `segment_ids` of rank >= 1 whose shape starts `input_x`'s {}, got {}",
                fmt_dims(&xdims),
                fmt_dims(&sdims)
            ),
        ));
    }
    let mut out = vec![Dim::Known(num)];
    out.extend_from_slice(&xdims[sdims.len()..]);
    Ok(tensor_abs(dtype, out))
}

/// The segment of each leading position of `x` (negative: dropped) and the
/// size of each segment element, checked.
fn segment_plan(
    op: &str,
    x: &Tensor,
    ids: &Tensor,
    num: i64,
) -> Result<(Vec<i64>, usize), OpError> {
    let (xs, is) = (x.shape(), ids.shape());
    if is.is_empty() || is.len() > xs.len() || xs[..is.len()] != *is {
        return Err(OpError::input(
            1,
            format!("`{op}` needs `segment_ids` whose shape starts `input_x`'s {xs:?}, got {is:?}"),
        ));
    }
    if num <= 0 {
        return Err(OpError::attr(
            "num_segments",
            format!("`{op}`: `num_segments` must be positive"),
        ));
    }
    let v = int_values(ids, op, 1, "segment_ids")?;
    if let Some(&bad) = v.iter().find(|&&s| s >= num) {
        return Err(OpError::input(
            1,
            format!("`{op}`: `segment_ids` holds {bad}, not below `num_segments` {num}"),
        ));
    }
    Ok((v, xs[is.len()..].iter().product()))
}

/// The lowest (`max`) or highest value of a dtype: MindSpore's value of an
/// empty segment of UnsortedSegmentMax/Min.
fn extreme(dtype: DType, max: bool) -> f64 {
    let (lo, hi) = match dtype {
        DType::F16 => (-65504.0, 65504.0),
        DType::BF16 => (-3.389_531_4e38, 3.389_531_4e38),
        DType::F32 => (f32::MIN as f64, f32::MAX as f64),
        DType::F64 => (f64::MIN, f64::MAX),
        DType::I8 => (i8::MIN as f64, i8::MAX as f64),
        DType::I16 => (i16::MIN as f64, i16::MAX as f64),
        DType::I32 => (i32::MIN as f64, i32::MAX as f64),
        DType::U8 => (0.0, u8::MAX as f64),
        _ => (i64::MIN as f64, i64::MAX as f64),
    };
    if max {
        lo
    } else {
        hi
    }
}

fn segment_reduce<T: Elem>(
    x: &[T],
    ids: &[i64],
    inner: usize,
    num: usize,
    init: T,
    how: Combine,
) -> Vec<T> {
    let mut r = vec![init; num * inner];
    for (k, &s) in ids.iter().enumerate() {
        if s < 0 {
            continue;
        }
        let (dst, src) = (s as usize * inner, k * inner);
        for j in 0..inner {
            let (a, v) = (r[dst + j], x[src + j]);
            r[dst + j] = match how {
                Combine::Max => {
                    if v > a {
                        v
                    } else {
                        a
                    }
                }
                Combine::Min => {
                    if v < a {
                        v
                    } else {
                        a
                    }
                }
                _ => a.add(v),
            };
        }
    }
    r
}

fn kernel_segment(c: &KernelCall, op: &str) -> Result<KValue, OpError> {
    let (x, ids) = (c.tensor(0)?, c.tensor(1)?);
    let num = c.attrs.int("num_segments");
    let (v, inner) = segment_plan(op, x, ids, num)?;
    let how = match op {
        "UnsortedSegmentMax" => Combine::Max,
        "UnsortedSegmentMin" => Combine::Min,
        _ => Combine::Add,
    };
    let init = if how == Combine::Add {
        0.0
    } else {
        extreme(x.dtype(), how == Combine::Max)
    };
    let n = num as usize;
    let buffer = match x.buffer() {
        Buffer::F32(p) => Buffer::F32(segment_reduce(p, &v, inner, n, init as f32, how)),
        Buffer::F64(p) => Buffer::F64(segment_reduce(p, &v, inner, n, init, how)),
        Buffer::I64(p) => {
            let init = match (how, x.dtype()) {
                (Combine::Max, DType::I64) => i64::MIN,
                (Combine::Min, DType::I64) => i64::MAX,
                _ => init as i64,
            };
            Buffer::I64(segment_reduce(p, &v, inner, n, init, how))
        }
        Buffer::Bool(_) => {
            return Err(OpError::input(
                0,
                format!("`{op}` needs a numeric `input_x`"),
            ))
        }
    };
    let mut shape = vec![n];
    shape.extend_from_slice(&x.shape()[ids.rank()..]);
    out(make_tensor(x.dtype(), shape, buffer)?)
}

fn grad_segment_min_max(b: &mut dyn GradBuilder, c: &GradCall) -> Grads {
    if !is_float_input(c, 0) {
        return vec![None, None];
    }
    // MindSpore's UnsortedSegmentMinOrMaxGrad: the sensitivity of a segment
    // is shared evenly among the elements equal to its extreme.
    let (x, ids) = (c.inputs[0], c.inputs[1]);
    let dtype = c.input_values[0].dtype().unwrap_or(DType::F32);
    let num = ("num_segments", AttrValue::Int(c.attrs.int("num_segments")));
    let gathered = b.prim("_SegmentGather", &[c.out, ids], vec![num.clone()]);
    let ones = b.prim("OnesLike", &[c.out], vec![]);
    let valid = b.prim("_SegmentGather", &[ones, ids], vec![num.clone()]);
    let valid = b.prim(
        "Cast",
        &[valid],
        vec![("dtype", AttrValue::DType(DType::Bool))],
    );
    let equal = b.prim("Equal", &[x, gathered], vec![]);
    let selected = b.prim("LogicalAnd", &[equal, valid], vec![]);
    let selected_f = b.prim(
        "Cast",
        &[selected],
        vec![("dtype", AttrValue::DType(dtype))],
    );
    let count = b.prim("UnsortedSegmentSum", &[selected_f, ids], vec![num.clone()]);
    let shared = b.prim("RealDiv", &[c.dout, count], vec![]);
    let spread = b.prim("_SegmentGather", &[shared, ids], vec![num]);
    let zeros = b.prim("ZerosLike", &[spread], vec![]);
    vec![
        Some(b.prim("Select", &[selected, spread, zeros], vec![])),
        None,
    ]
}

// ---------------------------------------------------------------------------
// MaskedFill

fn infer_masked_fill(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let (dtype, xs) = call.tensor(0)?;
    let (mdtype, ms) = call.tensor(1)?;
    if !mdtype.is_bool() {
        return Err(OpError::input(
            1,
            format!("`MaskedFill` needs a bool `mask`, got {}", call.inputs[1]),
        ));
    }
    let (vdtype, vs) = call.tensor(2)?;
    if vs.numel().is_some_and(|n| n != 1) || vs.rank().is_some_and(|r| r > 0) {
        return Err(OpError::input(
            2,
            format!(
                "`MaskedFill` needs a scalar `value` (rank 0), got {}",
                call.inputs[2]
            ),
        ));
    }
    if vdtype.is_float() && !dtype.is_float() {
        return Err(OpError::input(
            2,
            format!(
                "`MaskedFill` cannot fill the {dtype} `input_x` with the float `value` {}",
                call.inputs[2]
            ),
        ));
    }
    let shape = broadcast_shapes(&xs, &ms).map_err(|m| {
        OpError::call(format!("`MaskedFill`: {m}"))
            .with_note(format!("`input_x` is {}", call.inputs[0]))
            .with_note(format!("`mask` is {}", call.inputs[1]))
    })?;
    Ok(AbsVal::Tensor { dtype, shape })
}

fn kernel_masked_fill(c: &KernelCall) -> Result<KValue, OpError> {
    let (x, mask, value) = (c.tensor(0)?, c.tensor(1)?, c.tensor(2)?);
    if value.numel() != 1 {
        return Err(OpError::input(2, "`MaskedFill` needs a scalar `value`"));
    }
    let shape = broadcast_shape(x.shape(), mask.shape()).ok_or_else(|| {
        OpError::call(format!(
            "`MaskedFill`: shapes {:?} and {:?} cannot be broadcast",
            x.shape(),
            mask.shape()
        ))
    })?;
    let m = mask.cast(DType::Bool);
    let Buffer::Bool(m) = m.buffer() else {
        unreachable!("cast to bool")
    };
    let m = broadcast_to(m, mask.shape(), &shape);
    let v = value.cast(x.dtype());
    fn fill<T: Copy>(x: &[T], from: &[usize], to: &[usize], m: &[bool], v: T) -> Vec<T> {
        broadcast_to(x, from, to)
            .into_iter()
            .zip(m)
            .map(|(e, &k)| if k { v } else { e })
            .collect()
    }
    let xs = x.shape();
    let buffer = match (x.buffer(), v.buffer()) {
        (Buffer::F32(p), Buffer::F32(q)) => Buffer::F32(fill(p, xs, &shape, &m, q[0])),
        (Buffer::F64(p), Buffer::F64(q)) => Buffer::F64(fill(p, xs, &shape, &m, q[0])),
        (Buffer::I64(p), Buffer::I64(q)) => Buffer::I64(fill(p, xs, &shape, &m, q[0])),
        (Buffer::Bool(p), Buffer::Bool(q)) => Buffer::Bool(fill(p, xs, &shape, &m, q[0])),
        _ => unreachable!("cast to one dtype"),
    };
    out(make_tensor(x.dtype(), shape, buffer)?)
}

// ---------------------------------------------------------------------------
// The gradient of UnsortedSegmentSum.

fn infer_segment_gather(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let (dtype, gdims) = dims_of(call, 0)?;
    let (_, sdims) = dims_of(call, 1)?;
    let (Some(gdims), Some(mut sdims)) = (gdims, sdims) else {
        return Ok(unranked(dtype));
    };
    if gdims.is_empty() {
        return Err(OpError::input(
            0,
            "`_SegmentGather` needs a gradient of rank at least 1",
        ));
    }
    sdims.extend_from_slice(&gdims[1..]);
    Ok(tensor_abs(dtype, sdims))
}

/// Row `ids[k]` of `g` for every segment id (zeros for negative ids): the
/// gradient of UnsortedSegmentSum (MindSpore's GatherDropNegatives).
fn kernel_segment_gather(c: &KernelCall) -> Result<KValue, OpError> {
    let (g, ids) = (c.tensor(0)?, c.tensor(1)?);
    if g.rank() == 0 {
        return Err(OpError::input(
            0,
            "`_SegmentGather` needs a gradient of rank at least 1",
        ));
    }
    let v = int_values(ids, "_SegmentGather", 1, "segment_ids")?;
    let n = g.shape()[0];
    let inner: usize = g.shape()[1..].iter().product();
    let mut shape = ids.shape().to_vec();
    shape.extend_from_slice(&g.shape()[1..]);
    // Negative ids read a zero appended after the data.
    let zero_at = g.numel();
    let mut offsets = Vec::with_capacity(v.len() * inner);
    for &s in &v {
        if s >= n as i64 {
            return Err(OpError::input(
                1,
                format!("`_SegmentGather`: segment id {s} is not below {n}"),
            ));
        }
        if s < 0 {
            offsets.extend(std::iter::repeat_n(zero_at, inner));
        } else {
            let base = s as usize * inner;
            offsets.extend(base..base + inner);
        }
    }
    let padded = {
        let flat = crate::defs::shape::reshape_to(g, vec![zero_at])?;
        crate::defs::shape::pad::take_fill(
            &flat,
            vec![zero_at + 1],
            &(0..zero_at)
                .chain([crate::defs::shape::pad::FILL])
                .collect::<Vec<_>>(),
            0.0,
        )
    };
    out(take(&padded, shape, &offsets))
}

// ---------------------------------------------------------------------------
// The table.

pub const OPS: &[OpDef] = &[
    op(
        "UnsortedSegmentSum",
        Category::Reduction,
        "Sums the slices of `input_x` by segment: `out[s] = Σ input_x[k]` over the leading positions `k` with `segment_ids[k] == s`; the result has shape `(num_segments,) + input_x.shape[rank(segment_ids):]`, zeros for empty segments.",
        Schema::ms(
            &[Override::attr("num_segments", AttrType::Int, None, why::TO_ATTR)],
            &[
                ("input_x", "The values, numeric."),
                ("segment_ids", "The segment of each leading position, i32 or i64, of a shape that starts `input_x`'s; negative ids are dropped, ids must be below `num_segments`."),
                ("num_segments", "The number of segments, positive (MindSpore takes it as an input)."),
            ],
        ),
        infer_segment,
        Some(|b, c| {
            if !is_float_input(c, 0) {
                return vec![None, None];
            }
            vec![Some(b.prim("_SegmentGather", &[c.dout, c.inputs[1]], attrs_of(c))), None]
        }),
        |c| kernel_segment(c, "UnsortedSegmentSum"),
    ),
    op(
        "UnsortedSegmentMax",
        Category::Reduction,
        "The maximum of the slices of `input_x` by segment (like UnsortedSegmentSum); an empty segment holds the lowest value of the dtype, as in MindSpore.",
        Schema::ms(
            &[
                Override::attr("num_segments", AttrType::Int, None, why::TO_ATTR),
                Override::inputs(&["input_x", "segment_ids"], why::INPUT_NAMES),
            ],
            &[
                ("input_x", "The values, numeric."),
                ("segment_ids", "The segment of each leading position, i32 or i64, of a shape that starts `input_x`'s; negative ids are dropped, ids must be below `num_segments`."),
                ("num_segments", "The number of segments, positive (MindSpore takes it as an input)."),
            ],
        ),
        infer_segment,
        Some(grad_segment_min_max),
        |c| kernel_segment(c, "UnsortedSegmentMax"),
    ),
    op(
        "UnsortedSegmentMin",
        Category::Reduction,
        "The minimum of the slices of `input_x` by segment (like UnsortedSegmentSum); an empty segment holds the highest value of the dtype, as in MindSpore.",
        Schema::ms(
            &[
                Override::attr("num_segments", AttrType::Int, None, why::TO_ATTR),
                Override::inputs(&["input_x", "segment_ids"], why::INPUT_NAMES),
            ],
            &[
                ("input_x", "The values, numeric."),
                ("segment_ids", "The segment of each leading position, i32 or i64, of a shape that starts `input_x`'s; negative ids are dropped, ids must be below `num_segments`."),
                ("num_segments", "The number of segments, positive (MindSpore takes it as an input)."),
            ],
        ),
        infer_segment,
        Some(grad_segment_min_max),
        |c| kernel_segment(c, "UnsortedSegmentMin"),
    ),
    op(
        "MaskedFill",
        Category::Elementwise,
        "`input_x` with `value` where `mask` is true (`mask` broadcasts with `input_x`; the result has the broadcast shape and `input_x`'s dtype). A float `value` cannot fill an integer tensor.",
        Schema::ms(
            &[],
            &[
                ("input_x", "The tensor to fill."),
                ("mask", "A bool tensor, broadcastable with `input_x`."),
                ("value", "The fill value: a scalar (or rank-0 tensor), converted to `input_x`'s dtype."),
            ],
        ),
        infer_masked_fill,
        Some(|b, c| {
            let zeros = b.prim("ZerosLike", &[c.dout], vec![]);
            let mask = c.inputs[1];
            let dx = is_float_input(c, 0).then(|| {
                let kept = b.prim("Select", &[mask, zeros, c.dout], vec![]);
                b.prim("_SumToShapeOf", &[kept, c.inputs[0]], vec![])
            });
            let dv = is_float_input(c, 2).then(|| {
                let filled = b.prim("Select", &[mask, c.dout, zeros], vec![]);
                b.prim("_SumToShapeOf", &[filled, c.inputs[2]], vec![])
            });
            vec![dx, None, dv]
        }),
        kernel_masked_fill,
    ),
    op(
        "_SegmentGather",
        Category::Internal,
        "The gradient of UnsortedSegmentSum (MindSpore's GatherDropNegatives): row `segment_ids[k]` of `grad` at every position `k`, zeros where the id is negative.",
        Schema::own(&[
            ParamDef::input("grad", "Per-segment values, `(num_segments, ...)`."),
            ParamDef::input("segment_ids", "The segment ids."),
            ParamDef::attr("num_segments", AttrType::Int, None, "The number of segments (for this primitive's own gradient)."),
        ]),
        infer_segment_gather,
        Some(|b, c| {
            vec![Some(b.prim("UnsortedSegmentSum", &[c.dout, c.inputs[1]], attrs_of(c))), None]
        }),
        kernel_segment_gather,
    ),
];

pub(crate) fn samples() -> Vec<crate::eager::Sample> {
    use crate::eager::{ints, random_f64, Sample};
    let i = AttrValue::Int;
    let r = random_f64;
    let bools = |shape: &[usize], data: &[bool]| {
        KValue::Tensor(Tensor::from_bool(shape.to_vec(), data.to_vec()).expect("sizes match"))
    };
    let distinct = |shape: &[usize], seed: u64| {
        // Values with no ties (for the max/min gradients).
        let n: usize = shape.iter().product();
        let KValue::Tensor(noise) = r(&[n], seed, 0.0, 0.1) else {
            unreachable!()
        };
        let v: Vec<f64> = noise
            .to_f64_vec()
            .iter()
            .enumerate()
            .map(|(k, e)| ((k * 7) % n) as f64 * 0.3 + e)
            .collect();
        KValue::Tensor(Tensor::from_f64(shape.to_vec(), v).unwrap())
    };
    vec![
        Sample::new(
            "UnsortedSegmentSum",
            vec![
                r(&[4, 3], 417, -1.0, 1.0),
                ints(DType::I32, &[4], &[0, 2, -1, 0]),
            ],
        )
        .attr("num_segments", i(3)),
        // No empty segments: their lowest-value fill depends on the dtype.
        Sample::new(
            "UnsortedSegmentMax",
            vec![
                distinct(&[4, 2], 418),
                ints(DType::I64, &[4], &[1, 1, 0, -1]),
            ],
        )
        .attr("num_segments", i(2)),
        Sample::new(
            "UnsortedSegmentMin",
            vec![
                distinct(&[2, 3], 419),
                ints(DType::I32, &[2, 3], &[0, 1, 0, 1, 1, 2]),
            ],
        )
        .attr("num_segments", i(3)),
        Sample::new(
            "MaskedFill",
            vec![
                r(&[2, 3], 420, -1.0, 1.0),
                bools(&[3], &[true, false, true]),
                r(&[], 421, -1.0, 1.0),
            ],
        ),
        Sample::new(
            "MaskedFill",
            vec![
                r(&[3], 422, -1.0, 1.0),
                bools(&[2, 3], &[true, false, false, false, true, false]),
                r(&[], 423, -1.0, 1.0),
            ],
        ),
        Sample::new(
            "_SegmentGather",
            vec![
                r(&[3, 2], 430, -1.0, 1.0),
                ints(DType::I64, &[4], &[2, -1, 0, 2]),
            ],
        )
        .attr("num_segments", i(3)),
    ]
}
