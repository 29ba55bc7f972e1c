//! MindSpore's own primitive names (in `.ir` dumps and `.mindir` files) mapped
//! onto this registry's. A declarative table: one row per name that differs or
//! that MindSpore splits into variants.

/// `(MindSpore name, registry name)`.
pub const MINDSPORE_TO_REGISTRY: &[(&str, &str)] = &[
    ("ScalarAdd", "Add"),
    ("ScalarSub", "Sub"),
    ("ScalarMul", "Mul"),
    ("ScalarDiv", "Div"),
    ("scalar_add", "Add"),
    ("scalar_sub", "Sub"),
    ("scalar_mul", "Mul"),
    ("scalar_div", "Div"),
    ("scalar_lt", "Less"),
    ("scalar_gt", "Greater"),
    ("scalar_le", "LessEqual"),
    ("scalar_ge", "GreaterEqual"),
    ("scalar_eq", "Equal"),
    ("ScalarLt", "Less"),
    ("ScalarEq", "Equal"),
    ("Relu", "ReLU"),
    ("ReLUV2", "ReLU"),
    ("GeLU", "GeLU"),
    ("Gelu", "GeLU"),
    ("make_tuple", "MakeTuple"),
    ("tuple_getitem", "TupleGetItem"),
    ("TupleGetItem", "TupleGetItem"),
    ("switch", "Switch"),
    ("Switch", "Switch"),
    ("Partial", "Partial"),
    ("depend", "Depend"),
    ("Depend", "Depend"),
    ("return", "Return"),
    ("Return", "Return"),
    ("stop_gradient", "StopGradient"),
    ("ReduceSum", "ReduceSum"),
    ("SumExt", "ReduceSum"),
    ("MeanExt", "ReduceMean"),
    ("Conv2D", "Conv2D"),
    ("MaxPool", "MaxPool"),
    ("AvgPool", "AvgPool"),
    ("BiasAdd", "BiasAdd"),
    ("MatMul", "MatMul"),
    ("MatMulExt", "MatMul"),
    ("BatchMatMul", "BatchMatMul"),
    (
        "SoftmaxCrossEntropyWithLogits",
        "SoftmaxCrossEntropyWithLogits",
    ),
    (
        "SparseSoftmaxCrossEntropyWithLogits",
        "SparseSoftmaxCrossEntropyWithLogits",
    ),
    ("ExpandDims", "ExpandDims"),
    ("Flatten", "Flatten"),
    ("Cast", "Cast"),
    ("ZerosLike", "ZerosLike"),
    ("OnesLike", "OnesLike"),
    ("Argmax", "ArgMax"),
];

/// The registry name for a MindSpore primitive name (itself when not in the table).
pub fn registry_name(mindspore: &str) -> &str {
    MINDSPORE_TO_REGISTRY
        .iter()
        .find(|(ms, _)| *ms == mindspore)
        .map_or(mindspore, |(_, ours)| ours)
}
