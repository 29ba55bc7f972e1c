//! Helpers that read elements: `_SegmentGather` (UnsortedSegmentSum's
//! gradient: MindSpore's `_gather_drop_negatives`) and `_IndexGather` (the
//! adjoint of the pickers' scatter: GatherD).

use ir::{AttrValue, DType, Dim, NodeId};

use super::{ints, Call, Emit};

pub(super) fn lower(e: &mut Emit, c: &Call) -> Option<NodeId> {
    match c.name() {
        "_SegmentGather" => gather_drop_negatives(e, c),
        "_IndexGather" => {
            let [x, indices] = *c.args else {
                return None;
            };
            if c.shape(0)?.is_empty() {
                // Into a scalar: its one element, in `indices`' shape.
                let sizes = static_sizes(&c.shape(1)?)?;
                return Some(e.prim("Reshape", vec![("shape", ints(&sizes))], &[x]));
            }
            let axis = c.attr("axis")?.clone();
            Some(e.prim("GatherD", vec![("dim", axis)], &[x, indices]))
        }
        _ => None,
    }
}

/// Sizes for a `Reshape`: one that is not known (a batch `B`) is -1.
fn static_sizes(dims: &[Dim]) -> Option<Vec<i64>> {
    if dims.iter().filter(|d| d.known().is_none()).count() > 1 {
        return None;
    }
    Some(dims.iter().map(|d| d.known().unwrap_or(-1)).collect())
}

/// `_SegmentGather(g, ids)`: row `ids[k]` of `g` for each id, zeros where the
/// id is negative (a dropped element), as MindSpore's bprop of
/// UnsortedSegmentSum writes it: `Gather` at the ids clipped to 0, and a
/// `Select` of the rows whose id is not negative.
fn gather_drop_negatives(e: &mut Emit, c: &Call) -> Option<NodeId> {
    let [g, ids] = *c.args else {
        return None;
    };
    let (gs, is) = (c.shape(0)?, c.shape(1)?);
    if gs.is_empty() {
        return None;
    }
    let zeros = e.prim("ZerosLike", Vec::new(), &[ids]);
    let clipped = e.prim("Maximum", Vec::new(), &[ids, zeros]);
    let gathered = e.prim(
        "Gather",
        vec![
            ("axis", AttrValue::Int(0)),
            ("batch_dims", AttrValue::Int(0)),
        ],
        &[g, clipped],
    );
    // `ids >= 0` with a size-1 axis for each of a row's axes, then spread
    // over the rows (Select wants equal shapes).
    let kept = e.prim("GreaterEqual", Vec::new(), &[ids, zeros]);
    let mut sizes = static_sizes(&is)?;
    sizes.extend(std::iter::repeat_n(1, gs.len() - 1));
    let kept = e.prim("Reshape", vec![("shape", ints(&sizes))], &[kept]);
    let ones = e.prim("OnesLike", Vec::new(), &[gathered]);
    let everywhere = e.prim(
        "Cast",
        vec![("dtype", AttrValue::DType(DType::Bool))],
        &[ones],
    );
    let kept = e.prim("LogicalAnd", Vec::new(), &[kept, everywhere]);
    let none = e.prim("ZerosLike", Vec::new(), &[gathered]);
    Some(e.prim("Select", Vec::new(), &[kept, gathered, none]))
}
