//! The shape-rule interface and helpers shared by shape rules.

use ir::{AbsVal, DType, Dim, Shape};

use crate::{Attrs, OpDef, OpError};

/// What a shape rule sees: the abstract inputs and the resolved attributes.
pub struct InferCall<'a> {
    pub op: &'static OpDef,
    pub inputs: &'a [AbsVal],
    pub attrs: &'a Attrs,
}

pub type InferFn = fn(&InferCall) -> Result<AbsVal, OpError>;

impl InferCall<'_> {
    /// Input `i` as a tensor or scalar: its dtype and shape (scalars are rank 0).
    pub fn tensor(&self, i: usize) -> Result<(DType, Shape), OpError> {
        match &self.inputs[i] {
            AbsVal::Tensor { dtype, shape } => Ok((*dtype, shape.clone())),
            AbsVal::Scalar { dtype, .. } => Ok((*dtype, Shape::scalar())),
            other => Err(OpError::input(
                i,
                format!(
                    "input `{}` of `{}` must be a tensor, not {other}",
                    self.input_name(i),
                    self.op.name
                ),
            )),
        }
    }

    pub fn input_name(&self, i: usize) -> &'static str {
        self.op.inputs().nth(i).map_or("?", |p| p.name)
    }

    /// Whether any input is unknown (`Any`): rules then answer `Any` rather than
    /// report errors that follow from an earlier one.
    pub fn any_unknown(&self) -> bool {
        self.inputs.iter().any(|i| matches!(i, AbsVal::Any))
    }
}

/// Broadcasts two abstract shapes (NumPy rules; symbolic and unknown sizes
/// are assumed compatible where they could be).
pub fn broadcast_shapes(a: &Shape, b: &Shape) -> Result<Shape, String> {
    let (Some(x), Some(y)) = (a.dims(), b.dims()) else {
        return Ok(Shape::Unranked);
    };
    let rank = x.len().max(y.len());
    let one = Dim::Known(1);
    let mut out = Vec::with_capacity(rank);
    for i in 0..rank {
        let p = if i + x.len() >= rank {
            &x[i + x.len() - rank]
        } else {
            &one
        };
        let q = if i + y.len() >= rank {
            &y[i + y.len() - rank]
        } else {
            &one
        };
        out.push(match (p, q) {
            (p, q) if p == q => p.clone(),
            (Dim::Known(1), q) => q.clone(),
            (p, Dim::Known(1)) => p.clone(),
            (Dim::Known(m), Dim::Known(n)) => {
                return Err(format!(
                    "shapes {a} and {b} cannot be broadcast: dimension {m} against {n}"
                ))
            }
            (Dim::Known(n), _) | (_, Dim::Known(n)) => Dim::Known(*n),
            _ => Dim::Unknown,
        });
    }
    Ok(Shape::Ranked(out))
}

fn category(d: DType) -> u8 {
    if d.is_bool() {
        0
    } else if d.is_int() {
        1
    } else {
        2
    }
}

/// The dtype two operands of an arithmetic primitive compute in, following
/// MindSpore 2.x: a weak scalar yields to the other side unless it is of a
/// higher kind (an int tensor with a float literal gives `f32`); otherwise the
/// higher kind wins, and within a kind the wider type.
pub fn promote(a: &AbsVal, b: &AbsVal) -> Option<DType> {
    let (da, db) = (a.dtype()?, b.dtype()?);
    if da == db {
        return Some(da);
    }
    let (wa, wb) = (a.is_weak(), b.is_weak());
    Some(match (wa, wb) {
        (true, false) if category(da) <= category(db) => db,
        (false, true) if category(db) <= category(da) => da,
        (true, false) | (false, true) => {
            let (weak, _) = if wa { (da, db) } else { (db, da) };
            // A float literal meeting an int/bool tensor: the default float.
            if weak.is_float() {
                DType::F32
            } else {
                DType::I64
            }
        }
        _ => {
            if category(da) != category(db) {
                if category(da) > category(db) {
                    da
                } else {
                    db
                }
            } else if da.size_of() >= db.size_of() {
                // Same kind: the wider one (f16 with bf16 gives f32).
                if da.size_of() == db.size_of() {
                    if da.is_float() {
                        DType::F32
                    } else {
                        DType::I32
                    }
                } else {
                    da
                }
            } else {
                db
            }
        }
    })
}

/// The result of an elementwise binary arithmetic primitive.
pub fn infer_broadcast_binary(
    call: &InferCall,
    out_dtype: Option<DType>,
) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let (_, sa) = call.tensor(0)?;
    let (_, sb) = call.tensor(1)?;
    let dtype = promote(&call.inputs[0], &call.inputs[1])
        .ok_or_else(|| OpError::call("operands have no dtype"))?;
    let shape = broadcast_shapes(&sa, &sb).map_err(|m| {
        OpError::call(format!("`{}`: {m}", call.op.name))
            .with_note(format!("`{}` is {}", call.input_name(0), call.inputs[0]))
            .with_note(format!("`{}` is {}", call.input_name(1), call.inputs[1]))
    })?;
    let dtype = out_dtype.unwrap_or(dtype);
    Ok(result(&call.inputs[..2], dtype, shape))
}

/// A scalar result when every input is a scalar, else a tensor.
pub fn result(inputs: &[AbsVal], dtype: DType, shape: Shape) -> AbsVal {
    if inputs.iter().all(|i| matches!(i, AbsVal::Scalar { .. })) {
        let weak = inputs.iter().all(AbsVal::is_weak);
        AbsVal::Scalar {
            dtype,
            value: None,
            weak,
        }
    } else {
        AbsVal::Tensor { dtype, shape }
    }
}

/// Normalises a possibly negative axis against `rank`; an error names the attribute.
pub fn normalize_axis(axis: i64, rank: usize, attr: &'static str) -> Result<usize, OpError> {
    let r = rank as i64;
    let lo = if rank == 0 { -1 } else { -r };
    let hi = if rank == 0 { 0 } else { r - 1 };
    if axis < lo || axis > hi {
        return Err(OpError::attr(
            attr,
            format!("`{attr}` is {axis}, out of range for rank {rank} (allowed {lo}..={hi})"),
        ));
    }
    Ok(if axis < 0 {
        (axis + r.max(1)) as usize
    } else {
        axis as usize
    })
}
