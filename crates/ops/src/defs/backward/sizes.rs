//! Shape inputs of the backward primitives: MindSpore passes the shape of the
//! forward input as a node input (`Conv2DBackpropInput`'s `input_sizes`,
//! `Conv2DBackpropFilter`'s `filter_sizes`, `AdaptiveAvgPool2DGrad`'s
//! `orig_input_shape`): a tuple of ints (a literal, or `Shape(x)`, whose sizes
//! unknown before run time are unknown ints), or a 1-D integer tensor
//! (`TensorShape(x)`).

use ir::{AbsVal, Dim, ScalarConst};
use tensor::Buffer;

use crate::infer::InferCall;
use crate::kernel::{KArg, KValue, KernelCall};
use crate::OpError;

/// Input `i` of a shape rule as sizes: `None` when not even its length is
/// known, else one entry per dimension (`None` where the size is not known
/// before run time).
pub(crate) fn sizes_abs(call: &InferCall, i: usize) -> Result<Option<Vec<Option<i64>>>, OpError> {
    let op = call.op.name;
    let name = call.input_name(i);
    let not_ints = |what: String| {
        OpError::input(
            i,
            format!(
                "`{op}`'s `{name}` must be a tuple of ints or a 1-D integer tensor, not {what}"
            ),
        )
    };
    match &call.inputs[i] {
        AbsVal::Any => Ok(None),
        AbsVal::Tuple(items) => items
            .iter()
            .map(|item| match item {
                AbsVal::Scalar { dtype, value, .. } if dtype.is_int() => Ok(match value {
                    Some(ScalarConst::Int(v)) => Some(*v),
                    _ => None,
                }),
                AbsVal::Tensor { dtype, shape } if dtype.is_int() && shape.rank() == Some(0) => {
                    Ok(None)
                }
                AbsVal::Any => Ok(None),
                other => Err(not_ints(format!("a tuple holding {other}"))),
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Some),
        AbsVal::Tensor { dtype, shape } if dtype.is_int() => match shape.dims() {
            None => Ok(None),
            Some([n]) => Ok(n.known().map(|n| vec![None; n.max(0) as usize])),
            Some(_) => Err(not_ints(format!("{}", call.inputs[i]))),
        },
        other => Err(not_ints(format!("{other}"))),
    }
}

/// The dimensions sizes give: the known ones, and `fallback`'s (the same
/// dimension of another input, which may be symbolic: a batch `B`) where a
/// size is unknown. (Whether known sizes fit the other inputs is for the
/// caller's checks, which say how.)
pub(crate) fn sizes_dims(
    call: &InferCall,
    i: usize,
    sizes: &[Option<i64>],
    fallback: &[Option<Dim>],
) -> Result<Vec<Dim>, OpError> {
    sizes
        .iter()
        .enumerate()
        .map(|(k, s)| {
            let other = fallback.get(k).cloned().flatten();
            match (s, other) {
                (Some(v), _) if *v < 0 => Err(OpError::input(
                    i,
                    format!(
                        "`{}`'s `{}` must hold non-negative sizes, got {v} at {k}",
                        call.op.name,
                        call.input_name(i)
                    ),
                )),
                (Some(v), _) => Ok(Dim::Known(*v)),
                (None, Some(d)) => Ok(d),
                (None, None) => Ok(Dim::Unknown),
            }
        })
        .collect()
}

/// Sizes input `i`, of one size per name of `layout` (`"N, C, H, W"`), as
/// dimensions; a size unknown before run time is `fallback`'s.
pub(crate) fn layout_sizes(
    call: &InferCall,
    i: usize,
    layout: &str,
    fallback: &[Option<Dim>],
) -> Result<Vec<Dim>, OpError> {
    let Some(sizes) = sizes_abs(call, i)? else {
        return Ok(fallback
            .iter()
            .map(|d| d.clone().unwrap_or(Dim::Unknown))
            .collect());
    };
    if sizes.len() != fallback.len() {
        return Err(OpError::input(
            i,
            format!(
                "`{}`: `{}` must be {} sizes ({layout}), got {}",
                call.op.name,
                call.input_name(i),
                fallback.len(),
                sizes.len()
            ),
        ));
    }
    sizes_dims(call, i, &sizes, fallback)
}

/// Input `i` of a kernel as sizes (a tuple of integer scalars, or a 1-D
/// integer tensor), each non-negative.
pub fn sizes_arg(c: &KernelCall, i: usize, op: &str) -> Result<Vec<usize>, OpError> {
    let bad = || {
        OpError::input(
            i,
            format!("`{op}`: input {i} must be a tuple of ints or a 1-D integer tensor"),
        )
    };
    let ints = |t: &tensor::Tensor| -> Result<Vec<i64>, OpError> {
        if !t.dtype().is_int() {
            return Err(bad());
        }
        Ok(match t.buffer() {
            Buffer::I64(v) => v.clone(),
            _ => t.to_f64_vec().iter().map(|&x| x as i64).collect(),
        })
    };
    let values: Vec<i64> = match c.inputs.get(i) {
        Some(KArg::Tuple(items)) => {
            let mut out = Vec::with_capacity(items.len());
            for item in items.iter() {
                match item {
                    KValue::Tensor(t) if t.rank() == 0 => out.extend(ints(t)?),
                    _ => return Err(bad()),
                }
            }
            out
        }
        Some(KArg::Tensor(t)) if t.rank() == 1 => ints(t)?,
        _ => return Err(bad()),
    };
    values
        .iter()
        .map(|&v| {
            usize::try_from(v).map_err(|_| {
                OpError::input(
                    i,
                    format!("`{op}`: sizes must be non-negative, got {values:?}"),
                )
            })
        })
        .collect()
}
