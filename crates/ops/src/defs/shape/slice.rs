//! Slicing primitives of the `shape` family: Slice, Narrow, SliceExt,
//! ReverseV2 and Roll, and the internal primitives their gradients scatter
//! with (MindSpore's `SliceGrad`, and `_NarrowGrad`, `_SliceExtGrad`, whose own gradients
//! slice again).

use crate::schema::{why, Override, Schema};
use crate::Family;
use crate::Strided;
use ir::{AbsVal, AttrValue, Dim};

use crate::defs::elementwise::{infer_same, is_float_input};
use crate::defs::shape::split_stack::{
    attrs_of, int_tuple, like, op, out, scatter_along, take_along, Grads, GRAD_LIKE,
};
use crate::defs::shape::{
    cartesian_offsets, dims_of, fmt_dims, fmt_ints, op_axis, row_strides, scatter_add, take,
    tensor_abs, unranked,
};
use crate::infer::InferCall;
use crate::kernel::{KValue, KernelCall};
use crate::{AttrDefault, AttrType, Category, GradBuilder, GradCall, OpDef, OpError, ParamDef};

// ---------------------------------------------------------------------------
// Slice, Narrow, SliceExt

/// The start and size of each dimension of a `Slice` of `dims`; an error
/// names `begin` or `size`. Unknown dimensions give unknown sizes for -1.
fn slice_box(begin: &[i64], size: &[i64], dims: &[Dim]) -> Result<Vec<Dim>, OpError> {
    let rank = dims.len();
    if begin.len() != rank {
        return Err(OpError::attr(
            "begin",
            format!(
                "`Slice`: `begin` {} has {} entries but the input has rank {rank}",
                fmt_ints(begin),
                begin.len()
            ),
        ));
    }
    if size.len() != rank {
        return Err(OpError::attr(
            "size",
            format!(
                "`Slice`: `size` {} has {} entries but the input has rank {rank}",
                fmt_ints(size),
                size.len()
            ),
        ));
    }
    let mut out = Vec::with_capacity(rank);
    for d in 0..rank {
        let (b, s) = (begin[d], size[d]);
        if b < 0 {
            return Err(OpError::attr(
                "begin",
                format!(
                    "`Slice`: `begin` {} has the negative entry {b}",
                    fmt_ints(begin)
                ),
            ));
        }
        if s < -1 {
            return Err(OpError::attr(
                "size",
                format!(
                    "`Slice`: `size` {} has the invalid entry {s} (sizes are >= 0, or -1 for the rest)",
                    fmt_ints(size)
                ),
            ));
        }
        out.push(match &dims[d] {
            Dim::Known(n) => {
                let s = if s == -1 { n - b } else { s };
                if b + s > *n || s < 0 {
                    return Err(OpError::attr(
                        "size",
                        format!(
                            "`Slice`: `begin` {} plus `size` {} passes the end of dimension {d} (size {n}) of the input {}",
                            fmt_ints(begin),
                            fmt_ints(size),
                            fmt_dims(dims)
                        ),
                    ));
                }
                Dim::Known(s)
            }
            other if s == -1 && b == 0 => other.clone(),
            _ if s == -1 => Dim::Unknown,
            _ => Dim::Known(s),
        });
    }
    Ok(out)
}

/// The source offsets of a `Slice` of `shape` and the result shape.
fn slice_offsets(
    attrs: &crate::Attrs,
    shape: &[usize],
) -> Result<(Vec<usize>, Vec<usize>), OpError> {
    let begin = attrs.ints("begin").unwrap_or_default();
    let size = attrs.ints("size").unwrap_or_default();
    let dims: Vec<Dim> = shape.iter().map(|&n| Dim::Known(n as i64)).collect();
    let sizes = slice_box(&begin, &size, &dims)?;
    let strides = row_strides(shape);
    let mut out_shape = Vec::with_capacity(shape.len());
    let per_dim: Vec<Vec<usize>> = (0..shape.len())
        .map(|d| {
            let s = sizes[d].known().unwrap_or(0) as usize;
            out_shape.push(s);
            let b = begin[d] as usize;
            (b..b + s).map(|k| k * strides[d]).collect()
        })
        .collect();
    Ok((out_shape, cartesian_offsets(&per_dim)))
}

fn infer_slice(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let (dtype, dims) = dims_of(call, 0)?;
    let begin = call.attrs.ints("begin").unwrap_or_default();
    let size = call.attrs.ints("size").unwrap_or_default();
    let Some(dims) = dims else {
        let dims = size
            .iter()
            .map(|&s| if s < 0 { Dim::Unknown } else { Dim::Known(s) })
            .collect();
        return Ok(tensor_abs(dtype, dims));
    };
    Ok(tensor_abs(dtype, slice_box(&begin, &size, &dims)?))
}

/// `Narrow`'s dimension, normalised start and length, checked against `shape`.
fn narrow_range(attrs: &crate::Attrs, shape: &[usize]) -> Result<(usize, usize, usize), OpError> {
    if shape.is_empty() {
        return Err(OpError::input(0, "`Narrow` cannot narrow a scalar"));
    }
    let axis = op_axis("Narrow", attrs.int("dim"), shape.len(), "dim")?;
    let n = shape[axis] as i64;
    let (start, length) = (attrs.int("start"), attrs.int("length"));
    let s = if start < 0 { start + n } else { start };
    if s < 0 || s > n {
        return Err(OpError::attr(
            "start",
            format!("`Narrow`: `start` {start} is out of range for dimension {axis} of size {n}"),
        ));
    }
    if length < 0 || s + length > n {
        return Err(OpError::attr(
            "length",
            format!("`Narrow`: `start` {start} plus `length` {length} exceeds the size {n} of dimension {axis}"),
        ));
    }
    Ok((axis, s as usize, length as usize))
}

fn infer_narrow(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let (dtype, dims) = dims_of(call, 0)?;
    let Some(mut dims) = dims else {
        return Ok(unranked(dtype));
    };
    if dims.is_empty() {
        return Err(OpError::input(
            0,
            "`Narrow` cannot narrow a scalar (rank 0 tensor)",
        ));
    }
    let axis = op_axis("Narrow", call.attrs.int("dim"), dims.len(), "dim")?;
    if let Dim::Known(n) = dims[axis] {
        // Only the narrowed dimension matters to the check.
        let mut shape = vec![1usize; dims.len()];
        shape[axis] = n as usize;
        narrow_range(call.attrs, &shape)?;
    } else if call.attrs.int("length") < 0 {
        return Err(OpError::attr(
            "length",
            format!(
                "`Narrow`: `length` must be >= 0, got {}",
                call.attrs.int("length")
            ),
        ));
    }
    dims[axis] = Dim::Known(call.attrs.int("length"));
    Ok(tensor_abs(dtype, dims))
}

/// `SliceExt`'s dimension and the positions it takes, for `shape`.
fn slice_ext_range(attrs: &crate::Attrs, shape: &[usize]) -> Result<(usize, Vec<usize>), OpError> {
    if shape.is_empty() {
        return Err(OpError::input(0, "`SliceExt` cannot slice a scalar"));
    }
    let axis = op_axis("SliceExt", attrs.int("dim"), shape.len(), "dim")?;
    let step = attrs.int("step");
    if step <= 0 {
        return Err(OpError::attr(
            "step",
            format!("`SliceExt`: `step` must be positive, got {step}"),
        ));
    }
    let n = shape[axis] as i64;
    let clamp = |v: i64| (if v < 0 { v + n } else { v }).clamp(0, n);
    let (start, end) = (clamp(attrs.int("start")), clamp(attrs.int("end")));
    let idx = (start..end.max(start))
        .step_by(step as usize)
        .map(|i| i as usize)
        .collect();
    Ok((axis, idx))
}

fn infer_slice_ext(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let (dtype, dims) = dims_of(call, 0)?;
    let Some(mut dims) = dims else {
        return Ok(unranked(dtype));
    };
    if dims.is_empty() {
        return Err(OpError::input(
            0,
            "`SliceExt` cannot slice a scalar (rank 0 tensor)",
        ));
    }
    let axis = op_axis("SliceExt", call.attrs.int("dim"), dims.len(), "dim")?;
    let step = call.attrs.int("step");
    if step <= 0 {
        return Err(OpError::attr(
            "step",
            format!("`SliceExt`: `step` must be positive, got {step}"),
        ));
    }
    dims[axis] = match dims[axis] {
        Dim::Known(n) => {
            let mut shape = vec![1usize; dims.len()];
            shape[axis] = n as usize;
            Dim::Known(slice_ext_range(call.attrs, &shape)?.1.len() as i64)
        }
        _ => Dim::Unknown,
    };
    Ok(tensor_abs(dtype, dims))
}

fn like_0_1(call: &InferCall) -> Result<AbsVal, OpError> {
    like(call, 0, 1)
}

// ---------------------------------------------------------------------------
// ReverseV2, Roll

/// `ReverseV2`'s axes, normalised and checked for duplicates.
fn reverse_axes(axes: &[i64], rank: usize) -> Result<Vec<usize>, OpError> {
    let mut out = Vec::with_capacity(axes.len());
    for &a in axes {
        let i = op_axis("ReverseV2", a, rank, "axis")?;
        if out.contains(&i) {
            return Err(OpError::attr(
                "axis",
                format!(
                    "`ReverseV2`: `axis` {} names dimension {i} twice",
                    fmt_ints(axes)
                ),
            ));
        }
        out.push(i);
    }
    Ok(out)
}

fn infer_reverse(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let (_, dims) = dims_of(call, 0)?;
    if let Some(dims) = dims {
        reverse_axes(&call.attrs.ints("axis").unwrap_or_default(), dims.len())?;
    }
    infer_same(call)
}

fn kernel_reverse(c: &KernelCall) -> Result<KValue, OpError> {
    let x = c.tensor(0)?;
    let axes = reverse_axes(&c.attrs.ints("axis").unwrap_or_default(), x.rank())?;
    let shape = x.shape();
    let strides = row_strides(shape);
    let per_dim: Vec<Vec<usize>> = (0..shape.len())
        .map(|d| {
            let n = shape[d];
            if axes.contains(&d) {
                (0..n).map(|k| (n - 1 - k) * strides[d]).collect()
            } else {
                (0..n).map(|k| k * strides[d]).collect()
            }
        })
        .collect();
    out(take(x, shape.to_vec(), &cartesian_offsets(&per_dim)))
}

/// `Roll`'s shift per dimension (`None` for `dims=None`: the flattened tensor).
fn roll_plan(attrs: &crate::Attrs, rank: usize) -> Result<Option<Vec<(usize, i64)>>, OpError> {
    let shifts = attrs.ints("shifts").unwrap_or_default();
    match attrs.ints("dims") {
        None => {
            if shifts.len() != 1 {
                return Err(OpError::attr(
                    "shifts",
                    format!(
                        "`Roll` without `dims` rolls the flattened tensor and needs one shift, got `shifts` {}",
                        fmt_ints(&shifts)
                    ),
                ));
            }
            Ok(None)
        }
        Some(dims) => {
            if dims.len() != shifts.len() || dims.is_empty() {
                return Err(OpError::attr(
                    "dims",
                    format!(
                        "`Roll` needs one entry of `dims` {} per entry of `shifts` {}",
                        fmt_ints(&dims),
                        fmt_ints(&shifts)
                    ),
                ));
            }
            dims.iter()
                .zip(&shifts)
                .map(|(&d, &s)| Ok((op_axis("Roll", d, rank, "dims")?, s)))
                .collect::<Result<Vec<_>, _>>()
                .map(Some)
        }
    }
}

fn infer_roll(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let (_, dims) = dims_of(call, 0)?;
    match dims {
        Some(dims) => {
            roll_plan(call.attrs, dims.len())?;
        }
        None => {
            roll_plan(call.attrs, usize::MAX >> 1)?;
        }
    }
    infer_same(call)
}

fn kernel_roll(c: &KernelCall) -> Result<KValue, OpError> {
    let x = c.tensor(0)?;
    let shape = x.shape();
    let rolled = |n: usize, shift: i64| -> Vec<usize> {
        // Result position k reads position (k - shift) mod n.
        let n_i = n as i64;
        (0..n)
            .map(|k| {
                if n == 0 {
                    0
                } else {
                    (k as i64 - shift).rem_euclid(n_i) as usize
                }
            })
            .collect()
    };
    match roll_plan(c.attrs, x.rank())? {
        None => {
            let shift = c.attrs.ints("shifts").unwrap_or_default()[0];
            let offsets = rolled(x.numel(), shift);
            out(take(x, shape.to_vec(), &offsets))
        }
        Some(plan) => {
            let mut total = vec![0i64; shape.len()];
            for (d, s) in plan {
                total[d] += s;
            }
            let strides = row_strides(shape);
            let per_dim: Vec<Vec<usize>> = (0..shape.len())
                .map(|d| {
                    rolled(shape[d], total[d])
                        .into_iter()
                        .map(|k| k * strides[d])
                        .collect()
                })
                .collect();
            out(take(x, shape.to_vec(), &cartesian_offsets(&per_dim)))
        }
    }
}

// ---------------------------------------------------------------------------
// Internal gradient primitives of the slices.

fn kernel_slice_grad(c: &KernelCall) -> Result<KValue, OpError> {
    let (g, like) = (c.tensor(0)?, c.tensor(1)?);
    let (shape, offsets) = slice_offsets(c.attrs, like.shape())?;
    if g.shape() != shape.as_slice() {
        return Err(OpError::input(
            0,
            format!(
                "`SliceGrad`: the gradient has shape {:?}, the slice had {shape:?}",
                g.shape()
            ),
        ));
    }
    out(scatter_add(g, like.shape().to_vec(), &offsets))
}

fn kernel_narrow_grad(c: &KernelCall) -> Result<KValue, OpError> {
    let (g, like) = (c.tensor(0)?, c.tensor(1)?);
    let (axis, start, len) = narrow_range(c.attrs, like.shape())?;
    let idx: Vec<usize> = (start..start + len).collect();
    out(scatter_along(g, like.shape(), axis, &idx, "_NarrowGrad")?)
}

fn kernel_slice_ext_grad(c: &KernelCall) -> Result<KValue, OpError> {
    let (g, like) = (c.tensor(0)?, c.tensor(1)?);
    let (axis, idx) = slice_ext_range(c.attrs, like.shape())?;
    out(scatter_along(g, like.shape(), axis, &idx, "_SliceExtGrad")?)
}

/// A gradient rule that scatters `dout` into zeros like `x` with internal
/// primitive `name` (the same attributes).
fn scatter_back(b: &mut dyn GradBuilder, c: &GradCall, name: &str) -> Grads {
    if !is_float_input(c, 0) {
        return vec![None];
    }
    vec![Some(b.prim(name, &[c.dout, c.inputs[0]], attrs_of(c)))]
}

/// The gradient of an internal scatter primitive: the forward slice `name`
/// of its sensitivity; `like` gets none.
fn slice_again(b: &mut dyn GradBuilder, c: &GradCall, name: &str) -> Grads {
    vec![Some(b.prim(name, &[c.dout], attrs_of(c))), None]
}

// ---------------------------------------------------------------------------
// The table.

pub const OPS: &[OpDef] = &[
    op(
        "Slice",
        Category::Shape,
        "The box of `input` starting at `begin` with `size` elements per dimension (a size of -1 takes the rest of that dimension); the box must lie inside `input`.",
        Schema::ms(
            &[
                Override::attr("begin", AttrType::IntTuple, None, why::TYPE),
                Override::attr("size", AttrType::IntTuple, None, why::TYPE),
            ],
            &[
                ("input", "The input tensor (any dtype)."),
                ("begin", "The start of the box, one non-negative index per dimension."),
                ("size", "The size of the box per dimension; -1 takes everything from `begin` on."),
            ],
        ),
        infer_slice,
        Some(|b, c| scatter_back(b, c, "SliceGrad")),
        |c| {
            let x = c.tensor(0)?;
            let (shape, offsets) = slice_offsets(c.attrs, x.shape())?;
            out(take(x, shape, &offsets))
        },
    )
    .in_family(Family::Strided(Strided::Slice)),
    op(
        "Narrow",
        Category::Shape,
        "The `length` elements of `input` along `dim` from `start` on (a negative `start` counts from the end); `start + length` must not pass the end.",
        Schema::ms(
            &[Override::attr("start", AttrType::Int, None, why::TO_ATTR)],
            &[
                ("input", "The input tensor (any dtype)."),
                ("dim", "The dimension to narrow; negative values count from the end."),
                ("start", "The first position taken; negative values count from the end."),
                ("length", "How many positions to take, >= 0."),
            ],
        ),
        infer_narrow,
        Some(|b, c| scatter_back(b, c, "_NarrowGrad")),
        |c| {
            let x = c.tensor(0)?;
            let (axis, start, len) = narrow_range(c.attrs, x.shape())?;
            let idx: Vec<usize> = (start..start + len).collect();
            out(take_along(x, axis, &idx))
        },
    )
    .in_family(Family::Strided(Strided::Narrow)),
    op(
        "SliceExt",
        Category::Shape,
        "`input[..., start:end:step, ...]` along `dim`, with Python's rules: negative `start`/`end` count from the end and both are clamped to the dimension; `step` must be positive.",
        Schema::ms(
            &[],
            &[
                ("input", "The input tensor (any dtype)."),
                ("dim", "The dimension to slice; negative values count from the end."),
                ("start", "The first position (negative values count from the end)."),
                ("end", "The end position, exclusive (negative values count from the end)."),
                ("step", "The step, positive."),
            ],
        ),
        infer_slice_ext,
        Some(|b, c| scatter_back(b, c, "_SliceExtGrad")),
        |c| {
            let x = c.tensor(0)?;
            let (axis, idx) = slice_ext_range(c.attrs, x.shape())?;
            out(take_along(x, axis, &idx))
        },
    )
    .in_family(Family::Strided(Strided::SliceExt)),
    op(
        "ReverseV2",
        Category::Shape,
        "Reverses the order of the elements of `input` along each dimension in `axis` (`ops.flip`).",
        Schema::ms(
            &[],
            &[
                ("input", "The input tensor (any dtype)."),
                ("axis", "The dimensions to reverse, distinct; negative values count from the end."),
            ],
        ),
        infer_reverse,
        Some(|b, c| {
            if !is_float_input(c, 0) {
                return vec![None];
            }
            vec![Some(b.prim("ReverseV2", &[c.dout], attrs_of(c)))]
        }),
        kernel_reverse,
    ),
    op(
        "Roll",
        Category::Shape,
        "Rolls `input` by `shifts[i]` positions along `dims[i]` (elements pushed off one end come back at the other); without `dims`, rolls the flattened tensor by the one shift and restores the shape. MindSpore's CPU backend has no kernel for it.",
        Schema::ms(
            &[
                Override::attr("shifts", AttrType::Ints, None, why::TYPE),
                Override::attr("dims", AttrType::Ints, Some(AttrDefault::None), why::TYPE),
            ],
            &[
                ("input", "The input tensor (any dtype)."),
                ("shifts", "The shift per rolled dimension (positive rolls towards higher indices): an int or a tuple."),
                ("dims", "The dimensions to roll, one per shift; the default none rolls the flattened tensor."),
            ],
        ),
        infer_roll,
        Some(|b, c| {
            if !is_float_input(c, 0) {
                return vec![None];
            }
            let shifts: Vec<i64> = c.attrs.ints("shifts").unwrap_or_default().iter().map(|s| -s).collect();
            let mut attrs = vec![("shifts", int_tuple(&shifts))];
            if let Some(dims) = c.attrs.ints("dims") {
                attrs.push(("dims", int_tuple(&dims)));
            }
            vec![Some(b.prim("Roll", &[c.dout], attrs))]
        }),
        kernel_roll,
    ),
    op(
        "SliceGrad",
        Category::Backward,
        "The gradient of `Slice` (MindSpore's own, which its bprop emits): `dy` placed in zeros shaped like `x` at the sliced box.",
        Schema::ms(
            &[
                Override::attr("begin", AttrType::IntTuple, None, why::TYPE),
                Override::attr("size", AttrType::IntTuple, None, why::TYPE),
            ],
            &[
                ("dy", "The gradient of the slice."),
                ("x", "Slice's input, for its shape."),
                ("begin", "Slice's begin."),
                ("size", "Slice's size."),
            ],
        ),
        like_0_1,
        Some(|b, c| slice_again(b, c, "Slice")),
        kernel_slice_grad,
    ),
    op(
        "_NarrowGrad",
        Category::Internal,
        "The gradient of `Narrow`: `grad` placed in zeros shaped like `like` at the narrowed positions.",
        Schema::own(&[
            GRAD_LIKE[0],
            GRAD_LIKE[1],
            ParamDef::attr("dim", AttrType::Int, None, "Narrow's dim."),
            ParamDef::attr("start", AttrType::Int, None, "Narrow's start."),
            ParamDef::attr("length", AttrType::Int, None, "Narrow's length."),
        ]),
        like_0_1,
        Some(|b, c| slice_again(b, c, "Narrow")),
        kernel_narrow_grad,
    ),
    op(
        "_SliceExtGrad",
        Category::Internal,
        "The gradient of `SliceExt`: `grad` placed in zeros shaped like `like` at the sliced positions.",
        Schema::own(&[
            GRAD_LIKE[0],
            GRAD_LIKE[1],
            ParamDef::attr("dim", AttrType::Int, None, "SliceExt's dim."),
            ParamDef::attr("start", AttrType::Int, None, "SliceExt's start."),
            ParamDef::attr("end", AttrType::Int, None, "SliceExt's end."),
            ParamDef::attr("step", AttrType::Int, None, "SliceExt's step."),
        ]),
        like_0_1,
        Some(|b, c| slice_again(b, c, "SliceExt")),
        kernel_slice_ext_grad,
    ),
];

pub(crate) fn samples() -> Vec<crate::eager::Sample> {
    use crate::eager::{random_f64, Sample};
    let t = int_tuple;
    let i = AttrValue::Int;
    let r = random_f64;
    vec![
        Sample::new("Slice", vec![r(&[3, 4, 2], 212, -1.0, 1.0)])
            .attr("begin", t(&[1, 0, 1]))
            .attr("size", t(&[2, -1, 1])),
        Sample::new("Narrow", vec![r(&[3, 5], 213, -1.0, 1.0)])
            .attr("dim", i(1))
            .attr("start", i(-4))
            .attr("length", i(2)),
        Sample::new("SliceExt", vec![r(&[7, 2], 214, -1.0, 1.0)])
            .attr("dim", i(0))
            .attr("start", i(1))
            .attr("end", i(-1))
            .attr("step", i(2)),
        Sample::new("ReverseV2", vec![r(&[2, 3, 4], 215, -1.0, 1.0)]).attr("axis", t(&[0, -1])),
        Sample::new("Roll", vec![r(&[3, 4], 216, -1.0, 1.0)])
            .attr("shifts", t(&[1, -3]))
            .attr("dims", t(&[0, 1])),
        Sample::new("Roll", vec![r(&[3, 4], 217, -1.0, 1.0)]).attr("shifts", i(5)),
        Sample::new(
            "SliceGrad",
            vec![r(&[2, 1], 222, -1.0, 1.0), r(&[3, 4], 223, -1.0, 1.0)],
        )
        .attr("begin", t(&[1, 2]))
        .attr("size", t(&[2, 1])),
        Sample::new(
            "_NarrowGrad",
            vec![r(&[2, 2], 224, -1.0, 1.0), r(&[2, 5], 225, -1.0, 1.0)],
        )
        .attr("dim", i(1))
        .attr("start", i(1))
        .attr("length", i(2)),
        Sample::new(
            "_SliceExtGrad",
            vec![r(&[2, 2], 226, -1.0, 1.0), r(&[5, 2], 227, -1.0, 1.0)],
        )
        .attr("dim", i(0))
        .attr("start", i(0))
        .attr("end", i(5))
        .attr("step", i(3)),
    ]
}
