//! The types of `vmap` and of the Jacobians (spec §7): what one example of
//! a batched value is, what a batch of examples is, and the shape of a
//! Jacobian (`out.shape + x.shape`). Inference and the transforms share them.

use crate::abs::AbsVal;
use crate::ty::{Dim, Shape};

/// A negative axis counted from the end of `rank` dimensions.
pub fn normalize_axis(axis: i64, rank: usize) -> Option<usize> {
    let r = rank as i64;
    let a = if axis < 0 { axis + r } else { axis };
    (0..r).contains(&a).then_some(a as usize)
}

/// One example of `v` mapped over `axis` (every tensor of a tuple over the
/// same axis), and the batch size it has there.
pub fn unbatch(v: &AbsVal, axis: i64) -> Result<(AbsVal, Dim), String> {
    match v {
        AbsVal::Tensor { dtype, shape } => {
            let Shape::Ranked(dims) = shape else {
                return Ok((AbsVal::Any, Dim::Unknown));
            };
            let a = normalize_axis(axis, dims.len()).ok_or_else(|| {
                format!(
                    "axis {axis} is out of range for {v}, of rank {}",
                    dims.len()
                )
            })?;
            let mut dims = dims.clone();
            let d = dims.remove(a);
            Ok((
                AbsVal::Tensor {
                    dtype: *dtype,
                    shape: Shape::Ranked(dims),
                },
                d,
            ))
        }
        AbsVal::Scalar { .. } => Err(format!("a scalar ({v}) has no axis {axis} to map over")),
        AbsVal::Tuple(items) => {
            let mut out = Vec::new();
            let mut size = Dim::Unknown;
            for item in items {
                let (x, d) = unbatch(item, axis)?;
                if size == Dim::Unknown {
                    size = d;
                }
                out.push(x);
            }
            Ok((AbsVal::Tuple(out), size))
        }
        AbsVal::Any => Ok((AbsVal::Any, Dim::Unknown)),
        other => Err(format!("{other} cannot be mapped over")),
    }
}

/// `size` examples like `v` stacked along `axis` (`none`: `v` itself,
/// the same for every example).
pub fn batch(v: &AbsVal, axis: Option<i64>, size: &Dim) -> Result<AbsVal, String> {
    let Some(axis) = axis else {
        return Ok(v.clone());
    };
    match v {
        AbsVal::Tensor { dtype, shape } => {
            let Shape::Ranked(dims) = shape else {
                return Ok(v.clone());
            };
            let a = normalize_axis(axis, dims.len() + 1).ok_or_else(|| {
                format!(
                    "out_axes {axis} is out of range for an output of rank {}",
                    dims.len()
                )
            })?;
            let mut dims = dims.clone();
            dims.insert(a, size.clone());
            Ok(AbsVal::Tensor {
                dtype: *dtype,
                shape: Shape::Ranked(dims),
            })
        }
        AbsVal::Scalar { dtype, .. } => {
            if normalize_axis(axis, 1).is_none() {
                return Err(format!(
                    "out_axes {axis} is out of range for a scalar output"
                ));
            }
            Ok(AbsVal::Tensor {
                dtype: *dtype,
                shape: Shape::Ranked(vec![size.clone()]),
            })
        }
        AbsVal::Tuple(items) => Ok(AbsVal::Tuple(
            items
                .iter()
                .map(|x| batch(x, Some(axis), size))
                .collect::<Result<_, _>>()?,
        )),
        AbsVal::Any => Ok(AbsVal::Any),
        other => Err(format!("{other} cannot be stacked into a batch")),
    }
}

/// The dimensions of a tensor or scalar (`[]`).
fn dims_of(v: &AbsVal) -> Option<Vec<Dim>> {
    v.shape()?.dims().map(<[Dim]>::to_vec)
}

/// The Jacobian of an output like `out` with respect to an input like `x`:
/// `out.shape + x.shape` in the output's dtype; a tuple output gives a tuple.
pub fn jacobian(out: &AbsVal, x: &AbsVal) -> AbsVal {
    match out {
        AbsVal::Tuple(items) => AbsVal::Tuple(items.iter().map(|o| jacobian(o, x)).collect()),
        _ => match (out.dtype(), dims_of(out), dims_of(x)) {
            (Some(dtype), Some(mut o), Some(i)) => {
                o.extend(i);
                AbsVal::Tensor {
                    dtype,
                    shape: Shape::Ranked(o),
                }
            }
            _ => AbsVal::Any,
        },
    }
}

/// JAX's Jacobian structure: per output element (a tuple output), per
/// `wrt` item when `wrt` is a tuple (`by_item`), the [`jacobian`] of one
/// output with respect to one input.
pub fn jacobian_tree(out: &AbsVal, xs: &[&AbsVal], by_item: bool) -> AbsVal {
    match out {
        AbsVal::Tuple(items) => AbsVal::Tuple(
            items
                .iter()
                .map(|o| jacobian_tree(o, xs, by_item))
                .collect(),
        ),
        _ if by_item => AbsVal::Tuple(xs.iter().map(|x| jacobian(out, x)).collect()),
        _ => xs.first().map_or(AbsVal::Any, |x| jacobian(out, x)),
    }
}

/// What one example of each argument is, for arguments `values` mapped
/// by `in_axes` (`None` where an axis does not fit).
pub fn example_values(values: &[AbsVal], in_axes: &crate::value::BatchAxes) -> Option<Vec<AbsVal>> {
    values
        .iter()
        .enumerate()
        .map(|(i, v)| match in_axes.get(i) {
            None => Some(v.clone()),
            Some(axis) => unbatch(v, axis).ok().map(|(x, _)| x),
        })
        .collect()
}
