//! Batching rules: how a primitive runs on a batch of examples at once
//! (`vmap`, spec §7), given as the batch dimension at axis 0 of each
//! batched input.
//!
//! A rule is derived from the op's record where its category says enough
//! (an elementwise op broadcasts; a reduction's `axis` shifts by one), and
//! [`OVERRIDES`] gives the rest by name (MatMul becomes BatchMatMul, the
//! pointwise activations filed under neural networks, Softmax's axis). A
//! primitive with no rule runs once per example (correct, and slower).

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

/// Rules by name, for what the category does not tell.
pub const OVERRIDES: &[(&str, BatchRule)] = &[
    ("MatMul", BatchRule::MatMul),
    ("BatchMatMul", BatchRule::Broadcast),
    (
        "Softmax",
        BatchRule::Axes {
            attr: "axis",
            empty_is_all: false,
        },
    ),
    (
        "LogSoftmax",
        BatchRule::Axes {
            attr: "axis",
            empty_is_all: false,
        },
    ),
    (
        "L2Normalize",
        BatchRule::Axes {
            attr: "axis",
            empty_is_all: false,
        },
    ),
    (
        "ExpandDims",
        BatchRule::Axes {
            attr: "axis",
            empty_is_all: false,
        },
    ),
    // `axis=()` (every axis of size 1) runs per example.
    (
        "Squeeze",
        BatchRule::Axes {
            attr: "axis",
            empty_is_all: false,
        },
    ),
    (
        "Reshape",
        BatchRule::Shape {
            attr: "shape",
            broadcast: false,
        },
    ),
    (
        "BroadcastTo",
        BatchRule::Shape {
            attr: "shape",
            broadcast: true,
        },
    ),
    ("Transpose", BatchRule::Permutation { attr: "perm" }),
    // The gradient of a reduction, as `grad` writes it.
    (
        "_BroadcastToShapeOf",
        BatchRule::Like { axes: Some("axis") },
    ),
    ("_ReshapeLike", BatchRule::Like { axes: None }),
    // MindSpore's elementwise backward primitives.
    ("TanhGrad", BatchRule::Broadcast),
    ("SigmoidGrad", BatchRule::Broadcast),
    ("ReluGrad", BatchRule::Broadcast),
    ("ReLU6Grad", BatchRule::Broadcast),
    ("SiLUGrad", BatchRule::Broadcast),
    ("GeLUGrad", BatchRule::Broadcast),
    // Pointwise activations filed under neural networks.
    ("CeLU", BatchRule::Broadcast),
    ("Elu", BatchRule::Broadcast),
    ("FastGeLU", BatchRule::Broadcast),
    ("HShrink", BatchRule::Broadcast),
    ("HSigmoid", BatchRule::Broadcast),
    ("HSwish", BatchRule::Broadcast),
    ("Hardtanh", BatchRule::Broadcast),
    ("LeakyReLUExt", BatchRule::Broadcast),
    ("LogSigmoid", BatchRule::Broadcast),
    ("Mish", BatchRule::Broadcast),
    ("ReLU6", BatchRule::Broadcast),
    ("SeLU", BatchRule::Broadcast),
    ("SiLU", BatchRule::Broadcast),
    ("SoftShrink", BatchRule::Broadcast),
    ("Softplus", BatchRule::Broadcast),
    ("Softsign", BatchRule::Broadcast),
];

/// The reductions whose `axis` attribute (int or tuple, `()` for all)
/// is the only thing tying them to dimensions.
const AXIS_REDUCTIONS: &[&str] = &[
    "ReduceSum",
    "ReduceMean",
    "ReduceMax",
    "ReduceMin",
    "ReduceProd",
    "ReduceAll",
    "ReduceAny",
    "ReduceStd",
    "ArgMax",
    "Argmin",
    "ArgMaxWithValue",
    "ArgMinWithValue",
    "CumSum",
    "CumProd",
    "Cummax",
    "Cummin",
];

/// The batching rule of `op`, if it has one.
pub fn rule(op: &OpDef) -> Option<BatchRule> {
    if let Some((_, r)) = OVERRIDES.iter().find(|(n, _)| *n == op.name) {
        return Some(*r);
    }
    match op.category {
        // Scalar arithmetic (`ScalarAdd`, `TensorToScalar`...) works on
        // Python numbers, not on tensors a batch could live in.
        Category::Elementwise
            if !op.variadic
                && !op.name.contains("Scalar")
                && op.name.starts_with(|c: char| c.is_ascii_uppercase()) =>
        {
            Some(BatchRule::Broadcast)
        }
        Category::Reduction if AXIS_REDUCTIONS.contains(&op.name) && op.input_count() == 1 => {
            Some(BatchRule::Axes {
                attr: "axis",
                empty_is_all: op.name.starts_with("Reduce"),
            })
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_override_names_an_op_of_the_registry() {
        for (name, _) in OVERRIDES {
            assert!(crate::lookup(name).is_some(), "{name} is not an op");
        }
        for name in AXIS_REDUCTIONS {
            let op = crate::lookup(name).unwrap_or_else(|| panic!("{name} is not an op"));
            assert!(op.param("axis").is_some(), "{name} has no axis");
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
