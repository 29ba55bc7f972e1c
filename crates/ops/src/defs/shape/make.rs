//! Tensor makers and index builders: OneHot, OneHotExt, Range, Arange,
//! LinSpace, Eye, Tril, Triu, Meshgrid, SequenceMask, FillV2, Fills,
//! ZerosLikeExt, OnesLikeExt.
//!
//! Dtypes as MindSpore 2.10 gives them: `Range` takes its bounds as Python
//! numbers, so integer bounds give `i64` and float bounds `f32` (computed in
//! `f32`, as MindSpore does); `Arange` is `Range` followed by a `Cast` to its
//! `dtype`. `LinSpace` computes `start + i·step` in the dtype of its bounds.
//! The makers have no gradient except `FillV2` (its value gets the sum of the
//! sensitivity), `Tril`/`Triu` (which mask it the same way) and `Meshgrid`
//! (each input gets its output's sensitivity summed over the other axes).

use crate::schema::{why, Override, Schema};
use crate::Traits;
use ir::{AbsVal, AttrValue, DType, Dim, ScalarConst};
use tensor::{Buffer, Tensor};

use crate::defs::elementwise::is_float_input;
use crate::defs::nn::from_f64;
use crate::defs::shape::split_stack::{
    attrs_of, int_tuple, int_values, out, require_dtype, tuple_out, INDEX_DTYPES,
};
use crate::defs::shape::{
    cartesian_offsets, dims_of, fmt_dims, fmt_ints, reshape_to, take, tensor_abs, tuple_tensors,
    unranked,
};
use crate::infer::InferCall;
use crate::kernel::{KValue, KernelCall};
use crate::{AttrDefault, AttrType, Category, GNode, OpDef, OpError, OutputDef};

/// Checks that input `i` holds one value (a scalar or a one-element tensor).
fn one_value(call: &InferCall, i: usize) -> Result<DType, OpError> {
    let (dtype, shape) = call.tensor(i)?;
    if shape.numel().is_some_and(|n| n != 1) {
        return Err(OpError::input(
            i,
            format!(
                "`{}` needs a single value for `{}`, got {}",
                call.op.name,
                call.input_name(i),
                call.inputs[i]
            ),
        ));
    }
    Ok(dtype)
}

/// The value of a one-element tensor input of a kernel.
fn scalar_of(c: &KernelCall, i: usize, op: &str) -> Result<f64, OpError> {
    let t = c.tensor(i)?;
    if t.numel() != 1 {
        return Err(OpError::input(
            i,
            format!("`{op}` needs a single value, got shape {:?}", t.shape()),
        ));
    }
    Ok(t.to_f64_vec()[0])
}

fn checked_numel(op: &str, shape: &[usize]) -> Result<usize, OpError> {
    shape
        .iter()
        .try_fold(1usize, |acc, &d| acc.checked_mul(d))
        .ok_or_else(|| OpError::call(format!("`{op}`: the result shape {shape:?} is too large")))
}

// ---------------------------------------------------------------------------
// OneHot, OneHotExt

fn infer_one_hot(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let op = call.op.name;
    require_dtype(call, 0, INDEX_DTYPES, "i32 or i64")?;
    let on = one_value(call, 1)?;
    let off = one_value(call, 2)?;
    let (on_v, off_v) = (&call.inputs[1], &call.inputs[2]);
    let dtype = if on == off || off_v.is_weak() {
        on
    } else if on_v.is_weak() {
        off
    } else {
        return Err(OpError::input(
            2,
            format!("`{op}` needs `on_value` and `off_value` of one dtype, got {on_v} and {off_v}"),
        ));
    };
    if dtype.is_bool() {
        return Err(OpError::input(
            1,
            format!("`{op}` needs numeric `on_value` and `off_value`"),
        ));
    }
    let depth_name = if op == "OneHot" {
        "depth"
    } else {
        "num_classes"
    };
    let depth = call.attrs.int(depth_name);
    let min = if op == "OneHot" { 0 } else { -1 };
    if depth < min {
        return Err(OpError::attr(
            depth_name,
            format!("`{op}`: `{depth_name}` must be at least {min}, got {depth}"),
        ));
    }
    let (_, dims) = dims_of(call, 0)?;
    let Some(mut dims) = dims else {
        return Ok(unranked(dtype));
    };
    let axis = one_hot_axis(op, call.attrs.int("axis"), dims.len())?;
    dims.insert(
        axis,
        if depth < 0 {
            Dim::Unknown
        } else {
            Dim::Known(depth)
        },
    );
    Ok(tensor_abs(dtype, dims))
}

/// The position of the new dimension: `axis` in `[-1, rank]`, -1 the last.
fn one_hot_axis(op: &str, axis: i64, rank: usize) -> Result<usize, OpError> {
    if axis < -1 || axis > rank as i64 {
        return Err(OpError::attr(
            "axis",
            format!("`{op}`: `axis` is {axis}, out of range for indices of rank {rank} (allowed -1..={rank})"),
        ));
    }
    Ok(if axis == -1 { rank } else { axis as usize })
}

fn kernel_one_hot(c: &KernelCall, op: &str) -> Result<KValue, OpError> {
    let indices = c.tensor(0)?;
    let idx = int_values(indices, op, 0, "indices")?;
    let (on, off) = (c.tensor(1)?, c.tensor(2)?);
    let dtype = if on.dtype() == off.dtype() || c.weak.get(2).copied().unwrap_or(false) {
        on.dtype()
    } else {
        off.dtype()
    };
    let (on, off) = (scalar_of(c, 1, op)?, scalar_of(c, 2, op)?);
    let depth_name = if op == "OneHot" {
        "depth"
    } else {
        "num_classes"
    };
    let mut depth = c.attrs.int(depth_name);
    if depth < 0 {
        depth = idx.iter().copied().max().map_or(0, |m| m + 1).max(0);
    }
    let depth = depth as usize;
    let is = indices.shape();
    let axis = one_hot_axis(op, c.attrs.int("axis"), is.len())?;
    let prefix: usize = is[..axis].iter().product();
    let suffix: usize = is[axis..].iter().product();
    let mut shape = is.to_vec();
    shape.insert(axis, depth);
    checked_numel(op, &shape)?;
    let mut data = Vec::with_capacity(prefix * depth * suffix);
    for p in 0..prefix {
        for j in 0..depth {
            for s in 0..suffix {
                data.push(if idx[p * suffix + s] == j as i64 {
                    on
                } else {
                    off
                });
            }
        }
    }
    out(from_f64(dtype, shape, data))
}

// ---------------------------------------------------------------------------
// Range, Arange

/// The kind of a Range's bounds: `Some(true)` for floats.
fn range_kind(call: &InferCall) -> Result<bool, OpError> {
    let op = call.op.name;
    let mut kinds = Vec::new();
    for i in 0..3 {
        let d = one_value(call, i)?;
        if call.tensor(i)?.1.rank().is_some_and(|r| r > 0) {
            return Err(OpError::input(
                i,
                format!(
                    "`{op}` needs a scalar `{}`, got {}",
                    call.input_name(i),
                    call.inputs[i]
                ),
            ));
        }
        if !(d.is_int() || d.is_float()) {
            return Err(OpError::input(
                i,
                format!(
                    "`{op}` needs a number for `{}`, got {}",
                    call.input_name(i),
                    call.inputs[i]
                ),
            ));
        }
        kinds.push(d.is_float());
    }
    if op == "Range" && kinds.iter().any(|&k| k != kinds[0]) {
        return Err(OpError::call(format!(
            "`Range` needs `start`, `end` and `step` of one kind (all ints or all floats), got {}, {} and {}",
            call.inputs[0], call.inputs[1], call.inputs[2]
        )));
    }
    Ok(kinds.iter().any(|&k| k))
}

/// The number of elements of a range, by MindSpore's rule (integer division
/// for ints, `ceil(|(end - start) / step|)` in f32 for floats).
fn range_len(op: &str, start: f64, end: f64, step: f64, float: bool) -> Result<usize, OpError> {
    if step == 0.0 {
        return Err(OpError::input(
            2,
            format!("`{op}`: `step` must not be zero"),
        ));
    }
    if (step > 0.0 && start > end) || (step < 0.0 && start < end) {
        return Err(OpError::input(
            2,
            format!("`{op}`: `step` {step} points away from `end` {end} (from `start` {start})"),
        ));
    }
    let n = if float {
        let (s, l, d) = (start as f32, end as f32, step as f32);
        ((l - s) / d).abs().ceil() as f64
    } else {
        let (s, l, d) = (start as i64, end as i64, step as i64);
        ((l - s).abs() + d.abs() - 1)
            .checked_div(d.abs())
            .unwrap_or(0) as f64
    };
    if !(0.0..=(1u64 << 40) as f64).contains(&n) {
        return Err(OpError::call(format!(
            "`{op}`: a range of {n} elements is too long"
        )));
    }
    Ok(n as usize)
}

fn range_dtype(call: &InferCall, float: bool) -> DType {
    match call.attrs.get("dtype") {
        Some(AttrValue::DType(d)) => *d,
        _ if float => DType::F32,
        _ => DType::I64,
    }
}

fn infer_range(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let op = call.op.name;
    if op == "Range" && call.attrs.int("maxlen") <= 0 {
        return Err(OpError::attr(
            "maxlen",
            format!(
                "`Range`: `maxlen` must be positive, got {}",
                call.attrs.int("maxlen")
            ),
        ));
    }
    let float = range_kind(call)?;
    let consts: Option<Vec<f64>> = call.inputs[..3]
        .iter()
        .map(|v| v.const_value().map(ScalarConst::as_f64))
        .collect();
    let len = match consts {
        Some(v) => Dim::Known(range_len(op, v[0], v[1], v[2], float)? as i64),
        None => Dim::Unknown,
    };
    Ok(tensor_abs(range_dtype(call, float), vec![len]))
}

fn kernel_range(c: &KernelCall, op: &str) -> Result<KValue, OpError> {
    let float = (0..3).any(|i| c.tensor(i).is_ok_and(|t| t.dtype().is_float()));
    let (start, limit, delta) = (
        scalar_of(c, 0, op)?,
        scalar_of(c, 1, op)?,
        scalar_of(c, 2, op)?,
    );
    let n = range_len(op, start, limit, delta, float)?;
    let t = if float {
        let (s, d) = (start as f32, delta as f32);
        Tensor::from_f32(vec![n], (0..n).map(|i| s + i as f32 * d).collect())
    } else {
        let (s, d) = (start as i64, delta as i64);
        Tensor::from_i64(
            DType::I64,
            vec![n],
            (0..n as i64).map(|i| s + i * d).collect(),
        )
    }
    .map_err(|e| OpError::call(e.0))?;
    let dtype = match c.attrs.get("dtype") {
        Some(AttrValue::DType(d)) => *d,
        _ => t.dtype(),
    };
    out(t.cast(dtype))
}

// ---------------------------------------------------------------------------
// LinSpace, Eye

fn infer_linspace(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let a = require_dtype(call, 0, &[DType::F32, DType::F64], "f32 or f64")?;
    let b = require_dtype(call, 1, &[DType::F32, DType::F64], "f32 or f64")?;
    one_value(call, 0)?;
    one_value(call, 1)?;
    if a != b {
        return Err(OpError::input(
            1,
            format!(
                "`LinSpace` needs `start` and `stop` of one dtype, got {} and {}",
                call.inputs[0], call.inputs[1]
            ),
        ));
    }
    let num = call.attrs.int("num");
    if num < 1 {
        return Err(OpError::attr(
            "num",
            format!("`LinSpace`: `num` must be positive, got {num}"),
        ));
    }
    Ok(tensor_abs(a, vec![Dim::Known(num)]))
}

fn kernel_linspace(c: &KernelCall) -> Result<KValue, OpError> {
    let (start, stop) = (scalar_of(c, 0, "LinSpace")?, scalar_of(c, 1, "LinSpace")?);
    let num = c.attrs.int("num");
    if num < 1 {
        return Err(OpError::attr("num", "`LinSpace`: `num` must be positive"));
    }
    let n = num as usize;
    let dtype = c.tensor(0)?.dtype();
    let t = if dtype == DType::F64 {
        let step = if n > 1 {
            (stop - start) / (n - 1) as f64
        } else {
            0.0
        };
        Tensor::from_f64(vec![n], (0..n).map(|i| start + step * i as f64).collect())
    } else {
        let (s, e) = (start as f32, stop as f32);
        let step = if n > 1 { (e - s) / (n - 1) as f32 } else { 0.0 };
        Tensor::from_f32(vec![n], (0..n).map(|i| s + step * i as f32).collect())
    }
    .map_err(|e| OpError::call(e.0))?;
    out(t.cast(dtype))
}

fn infer_eye(call: &InferCall) -> Result<AbsVal, OpError> {
    let (n, m) = (call.attrs.int("n"), call.attrs.int("m"));
    for (name, v) in [("n", n), ("m", m)] {
        if v < 0 {
            return Err(OpError::attr(
                name,
                format!("`Eye`: `{name}` must be >= 0, got {v}"),
            ));
        }
    }
    Ok(tensor_abs(
        call.attrs.dtype("dtype"),
        vec![Dim::Known(n), Dim::Known(m)],
    ))
}

fn kernel_eye(c: &KernelCall) -> Result<KValue, OpError> {
    let (n, m) = (
        c.attrs.int("n").max(0) as usize,
        c.attrs.int("m").max(0) as usize,
    );
    let size = checked_numel("Eye", &[n, m])?;
    let data = (0..size)
        .map(|k| {
            if k / m.max(1) == k % m.max(1) {
                1.0
            } else {
                0.0
            }
        })
        .collect();
    out(from_f64(c.attrs.dtype("dtype"), vec![n, m], data))
}

// ---------------------------------------------------------------------------
// Tril, Triu

fn infer_tri(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let (_, dims) = dims_of(call, 0)?;
    if let Some(dims) = dims {
        if dims.len() < 2 {
            return Err(OpError::input(
                0,
                format!(
                    "`{}` needs a tensor of rank at least 2, got {}",
                    call.op.name,
                    fmt_dims(&dims)
                ),
            ));
        }
    }
    Ok(call.inputs[0].widen())
}

fn kernel_tri(c: &KernelCall, lower: bool) -> Result<KValue, OpError> {
    let x = c.tensor(0)?;
    let op = if lower { "Tril" } else { "Triu" };
    let s = x.shape();
    if s.len() < 2 {
        return Err(OpError::input(
            0,
            format!("`{op}` needs a tensor of rank at least 2"),
        ));
    }
    let (rows, cols) = (s[s.len() - 2], s[s.len() - 1]);
    let k = c.attrs.int("diagonal");
    let keep = |e: usize| {
        let (i, j) = (
            ((e / cols.max(1)) % rows.max(1)) as i64,
            (e % cols.max(1)) as i64,
        );
        if lower {
            j - i <= k
        } else {
            j - i >= k
        }
    };
    fn mask<T: Copy>(v: &[T], zero: T, keep: impl Fn(usize) -> bool) -> Vec<T> {
        v.iter()
            .enumerate()
            .map(|(e, &x)| if keep(e) { x } else { zero })
            .collect()
    }
    let buffer = match x.buffer() {
        Buffer::F32(v) => Buffer::F32(mask(v, 0.0, keep)),
        Buffer::F64(v) => Buffer::F64(mask(v, 0.0, keep)),
        Buffer::I64(v) => Buffer::I64(mask(v, 0, keep)),
        Buffer::Bool(v) => Buffer::Bool(mask(v, false, keep)),
    };
    out(Tensor::new(x.dtype(), s.to_vec(), buffer).map_err(|e| OpError::call(e.0))?)
}

// ---------------------------------------------------------------------------
// Meshgrid

/// The result dimension each input of a Meshgrid spans.
fn mesh_dim(k: usize, n: usize, xy: bool) -> usize {
    match k {
        0 if xy && n >= 2 => 1,
        1 if xy => 0,
        _ => k,
    }
}

fn infer_meshgrid(call: &InferCall) -> Result<AbsVal, OpError> {
    let items = match &call.inputs[0] {
        AbsVal::Any => return Ok(AbsVal::Any),
        AbsVal::Tuple(items) => items,
        other => {
            return Err(OpError::input(
                0,
                format!("`Meshgrid` takes a tuple of tensors, not {other}"),
            ))
        }
    };
    if items.iter().any(|v| matches!(v, AbsVal::Any)) {
        return Ok(AbsVal::Any);
    }
    if items.is_empty() {
        return Err(OpError::input(
            0,
            "`Meshgrid` needs at least one tensor, got an empty tuple",
        ));
    }
    let mut dtype = None;
    let mut sizes = Vec::with_capacity(items.len());
    for (k, item) in items.iter().enumerate() {
        let (d, shape) = match item {
            AbsVal::Tensor { dtype, shape } => (*dtype, shape.clone()),
            AbsVal::Scalar { dtype, .. } => (*dtype, ir::Shape::scalar()),
            other => {
                return Err(OpError::input(
                    0,
                    format!("`Meshgrid`: element {k} must be a tensor, not {other}"),
                ))
            }
        };
        if dtype.is_some_and(|first| first != d) {
            return Err(OpError::input(
                0,
                format!(
                    "`Meshgrid` needs tensors of one dtype: element 0 is {}, element {k} is {d}",
                    dtype.unwrap()
                ),
            ));
        }
        dtype = Some(d);
        sizes.push(match shape.dims() {
            Some([]) => Dim::Known(1),
            Some([n]) => n.clone(),
            Some(other) => {
                return Err(OpError::input(
                    0,
                    format!(
                        "`Meshgrid` takes 0-D or 1-D tensors; element {k} is {}",
                        fmt_dims(other)
                    ),
                ))
            }
            None => Dim::Unknown,
        });
    }
    let dtype = dtype.expect("a non-empty tuple");
    let n = items.len();
    if n == 1 {
        return Ok(AbsVal::Tuple(vec![items[0].widen()]));
    }
    let xy = call.attrs.str("indexing") == "xy";
    let mut dims = vec![Dim::Unknown; n];
    for (k, s) in sizes.into_iter().enumerate() {
        dims[mesh_dim(k, n, xy)] = s;
    }
    Ok(AbsVal::Tuple(vec![tensor_abs(dtype, dims); n]))
}

fn kernel_meshgrid(c: &KernelCall) -> Result<KValue, OpError> {
    let parts = tuple_tensors(&c.inputs[0], 0)?;
    let n = parts.len();
    if n == 0 {
        return Err(OpError::input(0, "`Meshgrid` needs at least one tensor"));
    }
    if n == 1 {
        return tuple_out(vec![parts[0].clone()]);
    }
    let xy = c.attrs.str("indexing") == "xy";
    let mut shape = vec![0usize; n];
    for (k, t) in parts.iter().enumerate() {
        if t.rank() > 1 {
            return Err(OpError::input(
                0,
                format!(
                    "`Meshgrid` takes 0-D or 1-D tensors; element {k} has shape {:?}",
                    t.shape()
                ),
            ));
        }
        shape[mesh_dim(k, n, xy)] = t.numel();
    }
    checked_numel("Meshgrid", &shape)?;
    let outs = parts
        .iter()
        .enumerate()
        .map(|(k, t)| {
            let own = mesh_dim(k, n, xy);
            let per_dim: Vec<Vec<usize>> = (0..n)
                .map(|d| {
                    if d == own {
                        (0..shape[d]).collect()
                    } else {
                        vec![0; shape[d]]
                    }
                })
                .collect();
            let flat = reshape_to(t, vec![t.numel()])?;
            Ok(take(&flat, shape.clone(), &cartesian_offsets(&per_dim)))
        })
        .collect::<Result<Vec<_>, OpError>>()?;
    tuple_out(outs)
}

// ---------------------------------------------------------------------------
// SequenceMask, FillV2, Fills, ZerosLikeExt, OnesLikeExt

fn infer_sequence_mask(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    require_dtype(call, 0, INDEX_DTYPES, "i32 or i64")?;
    let maxlen = call.attrs.int("maxlen");
    if maxlen <= 0 {
        return Err(OpError::attr(
            "maxlen",
            format!("`SequenceMask`: `maxlen` must be positive, got {maxlen}"),
        ));
    }
    let (_, dims) = dims_of(call, 0)?;
    let Some(mut dims) = dims else {
        return Ok(unranked(DType::Bool));
    };
    dims.push(Dim::Known(maxlen));
    Ok(tensor_abs(DType::Bool, dims))
}

fn kernel_sequence_mask(c: &KernelCall) -> Result<KValue, OpError> {
    let lengths = c.tensor(0)?;
    let v = int_values(lengths, "SequenceMask", 0, "lengths")?;
    let maxlen = c.attrs.int("maxlen");
    if maxlen <= 0 {
        return Err(OpError::attr(
            "maxlen",
            "`SequenceMask`: `maxlen` must be positive",
        ));
    }
    let mut shape = lengths.shape().to_vec();
    shape.push(maxlen as usize);
    let data = v
        .iter()
        .flat_map(|&l| (0..maxlen).map(move |j| j < l))
        .collect();
    out(Tensor::from_bool(shape, data).map_err(|e| OpError::call(e.0))?)
}

fn fill_shape(op: &str, attrs: &crate::Attrs) -> Result<Vec<i64>, OpError> {
    let shape = attrs.ints("shape").unwrap_or_default();
    if let Some(&d) = shape.iter().find(|&&d| d < 0) {
        return Err(OpError::attr(
            "shape",
            format!(
                "`{op}`: `shape` {} has the negative size {d}",
                fmt_ints(&shape)
            ),
        ));
    }
    Ok(shape)
}

fn infer_fill_v2(call: &InferCall) -> Result<AbsVal, OpError> {
    let shape = fill_shape("FillV2", call.attrs)?;
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let dtype = one_value(call, 0)?;
    Ok(tensor_abs(
        dtype,
        shape.into_iter().map(Dim::Known).collect(),
    ))
}

fn kernel_fill_v2(c: &KernelCall) -> Result<KValue, OpError> {
    let shape: Vec<usize> = fill_shape("FillV2", c.attrs)?
        .into_iter()
        .map(|d| d as usize)
        .collect();
    checked_numel("FillV2", &shape)?;
    let v = c.tensor(0)?;
    if v.numel() != 1 {
        return Err(OpError::input(0, "`FillV2` needs a single `value`"));
    }
    let n: usize = shape.iter().product();
    let flat = reshape_to(v, vec![1])?;
    out(take(&flat, shape, &vec![0; n]))
}

fn infer_fills(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let (dtype, shape) = call.tensor(0)?;
    one_value(call, 1)?;
    Ok(AbsVal::Tensor { dtype, shape })
}

fn infer_like_ext(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let (dtype, shape) = call.tensor(0)?;
    let dtype = match call.attrs.get("dtype") {
        Some(AttrValue::DType(d)) => *d,
        _ => dtype,
    };
    Ok(AbsVal::Tensor { dtype, shape })
}

fn kernel_like_ext(c: &KernelCall, value: f64) -> Result<KValue, OpError> {
    let x = c.tensor(0)?;
    let dtype = match c.attrs.get("dtype") {
        Some(AttrValue::DType(d)) => *d,
        _ => x.dtype(),
    };
    out(Tensor::full(dtype, x.shape().to_vec(), value))
}

// ---------------------------------------------------------------------------
// The table.

const fn op(
    name: &'static str,
    category: Category,
    doc: &'static str,
    params: Schema,
    infer: crate::InferFn,
    grad: Option<crate::GradFn>,
    kernel: crate::KernelFn,
) -> OpDef {
    OpDef {
        name,
        category,
        doc,
        schema: params,
        variadic: false,
        output: OutputDef::Single,
        infer,
        grad,
        kernel: Some(kernel),
        traits: Traits::NONE,
    }
}

pub const OPS: &[OpDef] = &[
    op(
        "OneHot",
        Category::TensorMaker,
        "A one-hot tensor: `on_value` where the position along the new dimension `axis` (of size `depth`) equals the index, `off_value` elsewhere; indices outside `[0, depth)` give a row of `off_value`.",
        Schema::ms(
            &[Override::attr("depth", AttrType::Int, None, why::TO_ATTR)],
            &[
                ("indices", "The indices, an i32 or i64 tensor of any shape."),
                ("depth", "The size of the new dimension, >= 0 (MindSpore takes it as an input)."),
                ("on_value", "The value at the index: a scalar (f16, f32, f64, i32 or i64); the result has its dtype."),
                ("off_value", "The value elsewhere: a scalar of the dtype of `on_value`."),
                ("axis", "Where the new dimension goes, in `[-1, rank(indices)]`; the default -1 appends it."),
            ],
        ),
        infer_one_hot,
        None,
        |c| kernel_one_hot(c, "OneHot"),
    ),
    op(
        "OneHotExt",
        Category::TensorMaker,
        "OneHot with `num_classes`, which may be -1: the largest index plus one. MindSpore's CPU backend has no kernel for it.",
        Schema::ms(
            &[],
            &[
                ("tensor", "The indices, an i32 or i64 tensor of any shape."),
                ("num_classes", "The size of the new dimension, >= 0, or -1 for the largest index plus one."),
                ("on_value", "The value at the index: a scalar (f16, f32, f64, i32 or i64); the result has its dtype."),
                ("off_value", "The value elsewhere: a scalar of the dtype of `on_value`."),
                ("axis", "Where the new dimension goes, in `[-1, rank(indices)]`; the default -1 appends it."),
            ],
        ),
        infer_one_hot,
        None,
        |c| kernel_one_hot(c, "OneHotExt"),
    ),
    op(
        "Range",
        Category::TensorMaker,
        "The 1-D sequence `start, start + step, ...` up to `end` (exclusive). The bounds are all ints (giving i64) or all floats (giving f32, computed in f32), as MindSpore takes them as Python numbers; the length is known before run time only for constant bounds.",
        Schema::ms(
            &[],
            &[
                ("start", "The first value, a scalar."),
                ("end", "The end, exclusive, a scalar."),
                ("step", "The step, a non-zero scalar pointing from `start` to `end`."),
                ("maxlen", "The largest result MindSpore allocates for, positive. Default 1000000 (not enforced, as in PyNative mode)."),
            ],
        ),
        infer_range,
        None,
        |c| kernel_range(c, "Range"),
    ),
    op(
        "Arange",
        Category::TensorMaker,
        "`ops.arange`: the 1-D sequence `start, start + step, ...` up to `end` (exclusive): i64 for int bounds, f32 (computed in f32) when any bound is a float, then converted to `dtype` if given. MindSpore's CPU backend has no kernel for the primitive; this is `ops.arange`, Range plus Cast.",
        Schema::ms(
            &[
                Override::input("start", why::TO_INPUT),
                Override::input("end", why::TO_INPUT),
                Override::input("step", why::TO_INPUT),
            ],
            &[
                ("start", "The first value, a scalar."),
                ("end", "The end, exclusive, a scalar."),
                ("step", "The step, a non-zero scalar pointing from `start` to `end`."),
                ("dtype", "The dtype of the result; the default none gives i64 for ints and f32 otherwise."),
            ],
        ),
        infer_range,
        None,
        |c| kernel_range(c, "Arange"),
    ),
    op(
        "LinSpace",
        Category::TensorMaker,
        "`num` evenly spaced values from `start` to `stop`: `start + i·(stop - start)/(num - 1)`, in the dtype of the bounds (f32 or f64); `num = 1` gives `[start]`.",
        Schema::ms(
            &[Override::attr("num", AttrType::Int, None, why::TO_ATTR)],
            &[
                ("start", "The first value, an f32 or f64 scalar."),
                ("stop", "The last value, of the dtype of `start`."),
                ("num", "The number of values, positive (MindSpore takes it as an input)."),
            ],
        ),
        infer_linspace,
        None,
        kernel_linspace,
    ),
    op(
        "Eye",
        Category::TensorMaker,
        "An `n × m` tensor of `dtype` with ones on the main diagonal and zeros elsewhere.",
        Schema::ms(
            &[],
            &[
                ("n", "The number of rows, >= 0."),
                ("m", "The number of columns, >= 0."),
                ("dtype", "The dtype of the result."),
            ],
        ),
        infer_eye,
        None,
        kernel_eye,
    ),
    op(
        "Tril",
        Category::Shape,
        "The lower triangle of the matrices in the last two dimensions of `x`: elements with `col - row > diagonal` become zero.",
        Schema::ms(
            &[],
            &[
                ("x", "A tensor of rank at least 2, `(*, M, N)`."),
                ("diagonal", "Which diagonal bounds the triangle: 0 the main one, positive above it, negative below. Default 0."),
            ],
        ),
        infer_tri,
        Some(|b, c| {
            if !is_float_input(c, 0) {
                return vec![None];
            }
            vec![Some(b.prim("Tril", &[c.dout], attrs_of(c)))]
        }),
        |c| kernel_tri(c, true),
    ),
    op(
        "Triu",
        Category::Shape,
        "The upper triangle of the matrices in the last two dimensions of `input`: elements with `col - row < diagonal` become zero.",
        Schema::ms(
            &[],
            &[
                ("input", "A tensor of rank at least 2, `(*, M, N)`."),
                ("diagonal", "Which diagonal bounds the triangle: 0 the main one, positive above it, negative below. Default 0."),
            ],
        ),
        infer_tri,
        Some(|b, c| {
            if !is_float_input(c, 0) {
                return vec![None];
            }
            vec![Some(b.prim("Triu", &[c.dout], attrs_of(c)))]
        }),
        |c| kernel_tri(c, false),
    ),
    op(
        "Meshgrid",
        Category::TensorMaker,
        "Coordinate grids from a tuple of N 0-D or 1-D tensors of one dtype: a tuple of N tensors of shape `(len0, len1, ...)` (`ij` indexing) or with the first two lengths swapped (`xy`, the default), tensor `k` repeating input `k` along its own dimension.",
        Schema::ms(
            &[
                Override::attr("indexing", AttrType::Str(&["xy", "ij"]), Some(AttrDefault::Str("xy")), why::STRINGS),
            ],
            &[
                ("inputs", "A tuple of 0-D or 1-D tensors of one dtype."),
                ("indexing", "`xy` (Cartesian, the default) or `ij` (matrix) indexing."),
            ],
        ),
        infer_meshgrid,
        Some(|b, c| {
            let items = match c.input_values.first() {
                Some(AbsVal::Tuple(items)) => items.clone(),
                _ => return vec![None],
            };
            if !items.iter().any(|v| v.dtype().is_none_or(DType::is_float)) {
                return vec![None];
            }
            let n = items.len();
            let xy = c.attrs.str("indexing") == "xy";
            let grads: Vec<GNode> = (0..n)
                .map(|k| {
                    let g = b.tuple_get(c.dout, k);
                    if n == 1 {
                        return g;
                    }
                    let own = mesh_dim(k, n, xy) as i64;
                    let axes: Vec<i64> = (0..n as i64).filter(|&d| d != own).collect();
                    let summed = b.prim("ReduceSum", &[g], vec![("axis", int_tuple(&axes))]);
                    let x = b.tuple_get(c.inputs[0], k);
                    b.prim("_ReshapeLike", &[summed, x], vec![])
                })
                .collect();
            vec![Some(b.make_tuple(&grads))]
        }),
        kernel_meshgrid,
    ),
    op(
        "SequenceMask",
        Category::TensorMaker,
        "A bool mask of shape `lengths.shape + (maxlen,)`: position `j` of row `i` is true when `j < lengths[i]`.",
        Schema::ms(
            &[Override::attr("maxlen", AttrType::Int, None, why::TO_ATTR)],
            &[
                ("lengths", "The lengths, an i32 or i64 tensor."),
                ("maxlen", "The size of the last dimension, positive (MindSpore takes it as an input)."),
            ],
        ),
        infer_sequence_mask,
        None,
        kernel_sequence_mask,
    ),
    op(
        "FillV2",
        Category::TensorMaker,
        "A tensor of `shape` with every element equal to `value` (its dtype is `value`'s).",
        Schema::ms(
            &[Override::attr("shape", AttrType::Ints, None, why::TO_ATTR)],
            &[
                ("shape", "The shape of the result: an int or a tuple of non-negative ints (MindSpore takes it as an input)."),
                ("value", "The fill value, a single-element tensor or scalar."),
            ],
        ),
        infer_fill_v2,
        Some(|b, c| {
            if !is_float_input(c, 0) {
                return vec![None];
            }
            vec![Some(b.prim("_SumToShapeOf", &[c.dout, c.inputs[0]], vec![]))]
        }),
        kernel_fill_v2,
    ),
    op(
        "Fills",
        Category::TensorMaker,
        "A tensor of the shape and dtype of `x` with every element equal to `value` (deprecated in MindSpore, which has no CPU kernel for it; use FillV2).",
        Schema::ms(
            &[],
            &[
                ("x", "The tensor whose shape and dtype the result takes."),
                ("value", "The fill value, a scalar converted to the dtype of `x`."),
            ],
        ),
        infer_fills,
        None,
        |c| {
            let x = c.tensor(0)?;
            let v = scalar_of(c, 1, "Fills")?;
            out(Tensor::full(DType::F64, x.shape().to_vec(), v).cast(x.dtype()))
        },
    ),
    op(
        "ZerosLikeExt",
        Category::TensorMaker,
        "Zeros of the shape of `input`, in `dtype` (or `input`'s dtype). MindSpore's CPU backend has no kernel for it.",
        Schema::ms(
            &[],
            &[
                ("input", "The tensor whose shape the result takes."),
                ("dtype", "The dtype of the result; the default none keeps `input`'s."),
            ],
        ),
        infer_like_ext,
        None,
        |c| kernel_like_ext(c, 0.0),
    ),
    op(
        "OnesLikeExt",
        Category::TensorMaker,
        "Ones of the shape of `input`, in `dtype` (or `input`'s dtype). MindSpore's CPU backend has no kernel for it.",
        Schema::ms(
            &[],
            &[
                ("input", "The tensor whose shape the result takes."),
                ("dtype", "The dtype of the result; the default none keeps `input`'s."),
            ],
        ),
        infer_like_ext,
        None,
        |c| kernel_like_ext(c, 1.0),
    ),
];

pub(crate) fn samples() -> Vec<crate::eager::Sample> {
    use crate::eager::{ints, random_f64, Sample};
    let i = AttrValue::Int;
    let r = random_f64;
    let f = |v: f64| KValue::Tensor(Tensor::scalar(DType::F64, v));
    vec![
        Sample::new(
            "OneHot",
            vec![ints(DType::I32, &[2, 2], &[0, 3, -1, 2]), f(1.0), f(-0.5)],
        )
        .attr("depth", i(3))
        .attr("axis", i(1)),
        Sample::new(
            "OneHotExt",
            vec![ints(DType::I64, &[3], &[2, 0, 1]), f(1.0), f(0.0)],
        )
        .attr("num_classes", i(-1)),
        Sample::new("Range", vec![f(1.0), f(2.0), f(0.3)]),
        Sample::new(
            "Range",
            vec![
                ints(DType::I64, &[], &[5]),
                ints(DType::I64, &[], &[-2]),
                ints(DType::I64, &[], &[-3]),
            ],
        ),
        Sample::new("Arange", vec![ints(DType::I64, &[], &[0]), f(2.0), f(0.5)])
            .attr("dtype", AttrValue::DType(DType::F64)),
        Sample::new("LinSpace", vec![f(-1.0), f(2.0)]).attr("num", i(5)),
        Sample::new("Eye", vec![])
            .attr("n", i(2))
            .attr("m", i(3))
            .attr("dtype", AttrValue::DType(DType::F64)),
        Sample::new("Tril", vec![r(&[2, 3, 4], 500, -1.0, 1.0)]).attr("diagonal", i(1)),
        Sample::new("Triu", vec![r(&[4, 3], 501, -1.0, 1.0)]).attr("diagonal", i(-1)),
        Sample::new(
            "Meshgrid",
            vec![KValue::Tuple(vec![
                r(&[2], 502, -1.0, 1.0),
                r(&[3], 503, -1.0, 1.0),
                r(&[], 504, -1.0, 1.0),
            ])],
        ),
        Sample::new(
            "Meshgrid",
            vec![KValue::Tuple(vec![
                r(&[3], 505, -1.0, 1.0),
                r(&[2], 506, -1.0, 1.0),
            ])],
        )
        .attr("indexing", AttrValue::Str("ij".into())),
        Sample::new(
            "Meshgrid",
            vec![KValue::Tuple(vec![r(&[3], 507, -1.0, 1.0)])],
        ),
        Sample::new("SequenceMask", vec![ints(DType::I32, &[3], &[0, 2, 5])]).attr("maxlen", i(4)),
        Sample::new("FillV2", vec![f(0.25)])
            .attr("shape", crate::defs::shape::split_stack::int_tuple(&[2, 3])),
        Sample::new("Fills", vec![r(&[2, 2], 508, -1.0, 1.0), f(3.0)]),
        Sample::new("ZerosLikeExt", vec![r(&[2, 2], 509, -1.0, 1.0)])
            .attr("dtype", AttrValue::DType(DType::I32)),
        Sample::new("OnesLikeExt", vec![r(&[3], 510, -1.0, 1.0)]),
    ]
}
