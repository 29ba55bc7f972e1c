//! Batching rules: how a primitive runs on a batch of examples at once
//! (`vmap`, spec §7), given as the batch dimension at axis 0 of each
//! batched input.
//!
//! A rule is the op record's (`Traits::batch`: MatMul becomes BatchMatMul,
//! Softmax's axis shifts), or follows from it: an op with an elementwise
//! formula or of the elementwise category broadcasts; a reduction's `axis`
//! shifts by one. A primitive with no rule runs once per example (correct,
//! and slower).

use crate::{Category, OpDef};

/// How a primitive maps over a batch at axis 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BatchRule {
    /// Broadcasting over all inputs: each batched input gets singleton
    /// dimensions after the batch axis up to the examples' common rank,
    /// and the op is called as it is. Also right for ops whose leading
    /// dimensions broadcast (`BatchMatMul`).
    Broadcast,
    /// `MatMul` of rank-2 examples: `BatchMatMul` with the same transposes.
    MatMul,
    /// One input; attribute `attr` names axes of it (an int or a tuple):
    /// non-negative axes shift by one. `empty_is_all`: `()` means every
    /// axis (the reductions), which become `(1, ..., rank)`.
    Axes {
        attr: &'static str,
        empty_is_all: bool,
    },
    /// One input; attribute `attr` is the examples' shape (`Reshape`,
    /// `BroadcastTo`): the batch size goes in front. `broadcast`: the
    /// input is aligned with the shape from the end (singleton dimensions
    /// go after the batch axis first).
    Shape { attr: &'static str, broadcast: bool },
    /// One input; attribute `attr` is a permutation (`Transpose`): the
    /// batch axis stays first, the others shift by one.
    Permutation { attr: &'static str },
    /// Two inputs shaped after the second, `like` (the gradients' helpers
    /// `_ReshapeLike(x, like)` and `_BroadcastToShapeOf(grad, like)`, the
    /// adjoint of a reduction): both carry the batch (an unbatched one is
    /// copied per example); `axes`, an attribute naming axes of `like`, shifts
    /// as for [`BatchRule::Axes`] with `empty_is_all`.
    Like { axes: Option<&'static str> },
}

/// The batching rule of `op`, if it has one.
pub fn rule(op: &OpDef) -> Option<BatchRule> {
    if let Some(r) = op.traits.batch {
        return Some(r);
    }
    // An op with an elementwise formula (the activations and their backward
    // primitives among them) or of the elementwise category broadcasts.
    let pointwise = op.traits.formula.is_some() || op.category == Category::Elementwise;
    // Scalar arithmetic (`ScalarAdd`, `TensorToScalar`, `bool_not`...) works
    // on Python numbers, not on tensors a batch could live in.
    let on_tensors = !op.variadic
        && !op.name.contains("Scalar")
        && op.name.starts_with(|c: char| c.is_ascii_uppercase());
    (pointwise && on_tensors).then_some(BatchRule::Broadcast)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_axes_rule_names_an_attribute_of_its_op() {
        for op in crate::registry().values() {
            if let Some(BatchRule::Axes { attr, .. }) = op.traits.batch {
                assert!(op.param(attr).is_some(), "{}: no {attr}", op.name);
            }
        }
    }

    #[test]
    fn rules_follow_the_record() {
        let r = |n: &str| rule(crate::lookup(n).unwrap());
        assert_eq!(r("Add"), Some(BatchRule::Broadcast));
        assert_eq!(r("MatMul"), Some(BatchRule::MatMul));
        assert!(matches!(
            r("ReduceSum"),
            Some(BatchRule::Axes {
                empty_is_all: true,
                ..
            })
        ));
        assert!(matches!(
            r("Softmax"),
            Some(BatchRule::Axes {
                empty_is_all: false,
                ..
            })
        ));
        assert_eq!(r("ScalarAdd"), None);
        assert_eq!(r("Conv2D"), None);
    }
}
