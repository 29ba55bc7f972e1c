//! How MindSpore 2.10 spells each primitive of the registry in a model file.
//!
//! MindSpore 2.x has two kinds of primitives. A *primitive function* (prim type
//! `PRIMITIVE_FUNCTION`, `PrimFunc_X` in `.ir` dumps) takes every argument as a
//! node input, attributes included, in the order of its op definition
//! (`MatMul(input, mat2, transpose_a, transpose_b)`); enums are integers
//! (`data_format` 0 is `NCHW`) and dtypes are `TypeId` numbers. An *old-style*
//! primitive (prim type `PRIMITIVE`) takes only tensor inputs and carries its
//! attributes on the primitive (`Conv2D` with `kernel_size`, `pad_mode`, ...).
//! The tables here were read from the `mindspore==2.10.0` wheel
//! (`ops/auto_generate/gen_ops_prim.py`, `ops/operations/*.py`, `mindapi`'s enums).

use tensor::DType;

/// How an argument's value is written by MindSpore.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Conv {
    /// As is.
    Plain,
    /// `Format`: `"NCHW"` is 0, `"NHWC"` is 1.
    Format,
    /// `PadMode`: `"pad"` is 0, `"same"` 1, `"valid"` 2.
    PadMode,
    /// A dtype as a `TypeId` number (`Float32` is 43).
    TypeId,
    /// An int MindSpore keeps as a one-element tuple (`Softmax`'s axis).
    IntTuple,
    /// `None` for "all axes": the registry's `()`.
    NoneIsEmpty,
}

/// One argument of a primitive function, in MindSpore's order.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Arg {
    /// The next tensor input of the registry's primitive.
    Input,
    /// The registry's attribute of this name.
    Attr(&'static str, Conv),
    /// An argument the registry does not have: MindSpore's value for it (written
    /// on export; on import, any other value is refused).
    Fixed(Fixed),
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Fixed {
    Bool(bool),
    Int(i64),
    None,
}

/// A MindSpore primitive and the registry's primitive it is.
#[derive(Debug, Clone, Copy)]
pub struct MsOp {
    /// MindSpore's name (`op_type`; `PrimFunc_` + it in dumps).
    pub ms: &'static str,
    /// The registry's name.
    pub ours: &'static str,
    /// `Some`: a primitive function with these arguments. `None`: an old-style
    /// primitive; its attributes are the registry's (see [`old_style_attrs`]).
    pub args: Option<&'static [Arg]>,
    /// Whether export writes the registry's primitive as this MindSpore one
    /// (several MindSpore names import as one registry primitive).
    pub export: bool,
}

use Arg::{Attr, Input};

const IN1: &[Arg] = &[Input];
const IN2: &[Arg] = &[Input, Input];
const IN3: &[Arg] = &[Input, Input, Input];
const MATMUL: &[Arg] = &[
    Input,
    Input,
    Attr("transpose_a", Conv::Plain),
    Attr("transpose_b", Conv::Plain),
];
const REDUCE: &[Arg] = &[
    Input,
    Attr("axis", Conv::Plain),
    Attr("keep_dims", Conv::Plain),
];
const REDUCE_SUM: &[Arg] = &[
    Input,
    Attr("axis", Conv::Plain),
    Attr("keep_dims", Conv::Plain),
    Arg::Fixed(Fixed::Bool(false)),
];
const REDUCE_EXT: &[Arg] = &[
    Input,
    Attr("axis", Conv::NoneIsEmpty),
    Attr("keep_dims", Conv::Plain),
    Arg::Fixed(Fixed::None),
];

const fn op(ms: &'static str, ours: &'static str, args: &'static [Arg]) -> MsOp {
    MsOp {
        ms,
        ours,
        args: Some(args),
        export: true,
    }
}

/// A MindSpore name that imports as a registry primitive but is not what
/// export writes.
const fn alias(ms: &'static str, ours: &'static str, args: &'static [Arg]) -> MsOp {
    MsOp {
        ms,
        ours,
        args: Some(args),
        export: false,
    }
}

const fn old(ms: &'static str, ours: &'static str) -> MsOp {
    MsOp {
        ms,
        ours,
        args: None,
        export: true,
    }
}

/// Every MindSpore primitive the importer knows, and how export writes the
/// registry's primitives.
pub const MS_OPS: &[MsOp] = &[
    // Elementwise.
    op("Add", "Add", IN2),
    op("Sub", "Sub", IN2),
    op("Mul", "Mul", IN2),
    op("RealDiv", "RealDiv", IN2),
    alias("Div", "RealDiv", IN2),
    alias("Muls", "Mul", IN2),
    op("Neg", "Neg", IN1),
    op("Exp", "Exp", IN1),
    op("Log", "Log", IN1),
    op("Sqrt", "Sqrt", IN1),
    op("Rsqrt", "Rsqrt", IN1),
    op("Square", "Square", IN1),
    op("Pow", "Pow", IN2),
    op("Abs", "Abs", IN1),
    op("Maximum", "Maximum", IN2),
    op("Minimum", "Minimum", IN2),
    op("Sin", "Sin", IN1),
    op("Cos", "Cos", IN1),
    op("Tanh", "Tanh", IN1),
    op("Sigmoid", "Sigmoid", IN1),
    op("ReLU", "ReLU", IN1),
    op("GeLU", "GeLU", IN1),
    op("Erf", "Erf", IN1),
    op("Select", "Select", IN3),
    op("Cast", "Cast", &[Input, Attr("dtype", Conv::TypeId)]),
    op("Equal", "Equal", IN2),
    op("NotEqual", "NotEqual", IN2),
    op("Less", "Less", IN2),
    op("LessEqual", "LessEqual", IN2),
    op("Greater", "Greater", IN2),
    op("GreaterEqual", "GreaterEqual", IN2),
    op("LogicalAnd", "LogicalAnd", IN2),
    op("LogicalOr", "LogicalOr", IN2),
    op("LogicalNot", "LogicalNot", IN1),
    op("ZerosLike", "ZerosLike", IN1),
    op("OnesLike", "OnesLike", IN1),
    // Linear algebra.
    op("MatMul", "MatMul", MATMUL),
    alias("MatMulExt", "MatMul", IN2),
    op("BatchMatMul", "BatchMatMul", MATMUL),
    op(
        "BiasAdd",
        "BiasAdd",
        &[Input, Input, Attr("data_format", Conv::Format)],
    ),
    op(
        "BiasAddGrad",
        "BiasAddGrad",
        &[Input, Attr("data_format", Conv::Format)],
    ),
    // Reductions.
    op("ReduceSum", "ReduceSum", REDUCE_SUM),
    op("ReduceMean", "ReduceMean", REDUCE),
    op("ReduceMax", "ReduceMax", REDUCE),
    op("ReduceMin", "ReduceMin", REDUCE),
    alias("SumExt", "ReduceSum", REDUCE_EXT),
    alias("MeanExt", "ReduceMean", REDUCE_EXT),
    op(
        "Argmax",
        "ArgMax",
        &[
            Input,
            Attr("axis", Conv::Plain),
            Attr("output_type", Conv::TypeId),
        ],
    ),
    // Shapes.
    op("Reshape", "Reshape", &[Input, Attr("shape", Conv::Plain)]),
    op(
        "Transpose",
        "Transpose",
        &[Input, Attr("perm", Conv::Plain)],
    ),
    op(
        "ExpandDims",
        "ExpandDims",
        &[Input, Attr("axis", Conv::Plain)],
    ),
    op("Squeeze", "Squeeze", &[Input, Attr("axis", Conv::Plain)]),
    op("Concat", "Concat", &[Input, Attr("axis", Conv::Plain)]),
    op("Tile", "Tile", &[Input, Attr("multiples", Conv::Plain)]),
    op(
        "BroadcastTo",
        "BroadcastTo",
        &[Input, Attr("shape", Conv::Plain)],
    ),
    op(
        "Gather",
        "Gather",
        &[
            Input,
            Input,
            Attr("axis", Conv::Plain),
            Attr("batch_dims", Conv::Plain),
        ],
    ),
    op("Shape", "Shape", IN1),
    op("Flatten", "Flatten", IN1),
    op(
        "StridedSlice",
        "StridedSlice",
        &[
            Input,
            Attr("begin", Conv::Plain),
            Attr("end", Conv::Plain),
            Attr("strides", Conv::Plain),
            Attr("begin_mask", Conv::Plain),
            Attr("end_mask", Conv::Plain),
            Attr("ellipsis_mask", Conv::Plain),
            Attr("new_axis_mask", Conv::Plain),
            Attr("shrink_axis_mask", Conv::Plain),
        ],
    ),
    // Neural network.
    op("Softmax", "Softmax", &[Input, Attr("axis", Conv::IntTuple)]),
    op(
        "LogSoftmax",
        "LogSoftmax",
        &[Input, Attr("axis", Conv::Plain)],
    ),
    old(
        "SoftmaxCrossEntropyWithLogits",
        "SoftmaxCrossEntropyWithLogits",
    ),
    old(
        "SparseSoftmaxCrossEntropyWithLogits",
        "SparseSoftmaxCrossEntropyWithLogits",
    ),
    old("Conv2D", "Conv2D"),
    old("MaxPool", "MaxPool"),
    op(
        "AvgPool",
        "AvgPool",
        &[
            Input,
            Attr("kernel_size", Conv::Plain),
            Attr("strides", Conv::Plain),
            Attr("pad_mode", Conv::PadMode),
            Attr("data_format", Conv::Format),
        ],
    ),
    op(
        "LayerNorm",
        "LayerNorm",
        &[
            Input,
            Input,
            Input,
            Attr("begin_norm_axis", Conv::Plain),
            Attr("begin_params_axis", Conv::Plain),
            Attr("epsilon", Conv::Plain),
        ],
    ),
    op(
        "BatchNorm",
        "BatchNorm",
        &[
            Input,
            Input,
            Input,
            Input,
            Input,
            Attr("is_training", Conv::Plain),
            Attr("epsilon", Conv::Plain),
            Attr("momentum", Conv::Plain),
            Attr("data_format", Conv::Format),
        ],
    ),
    op(
        "Dropout",
        "Dropout",
        &[
            Input,
            Attr("keep_prob", Conv::Plain),
            Attr("Seed0", Conv::Plain),
            Attr("Seed1", Conv::Plain),
        ],
    ),
    // Tensor makers.
    op(
        "Zeros",
        "Zeros",
        &[Attr("shape", Conv::Plain), Attr("dtype", Conv::TypeId)],
    ),
    op(
        "Ones",
        "Ones",
        &[Attr("shape", Conv::Plain), Attr("dtype", Conv::TypeId)],
    ),
    old("Fill", "Fill"),
    // Structure (old-style, handled by the importer and exporter themselves).
    old("MakeTuple", "MakeTuple"),
    old("TupleGetItem", "TupleGetItem"),
    old("Switch", "Switch"),
    old("Partial", "Partial"),
    old("Depend", "Depend"),
    old("StopGradient", "StopGradient"),
];

/// The entry for a MindSpore name (`PrimFunc_` prefixes removed first).
pub fn by_ms_name(name: &str) -> Option<&'static MsOp> {
    let name = name.strip_prefix("PrimFunc_").unwrap_or(name);
    MS_OPS.iter().find(|o| o.ms == name)
}

/// How export writes the registry's primitive `ours`.
pub fn for_export(ours: &str) -> Option<&'static MsOp> {
    MS_OPS.iter().find(|o| o.ours == ours && o.export)
}

/// MindSpore's `TypeId` of a dtype (`mindapi/base/type_id.h`).
pub fn type_id(d: DType) -> i64 {
    match d {
        DType::Bool => 30,
        DType::I8 => 32,
        DType::I16 => 33,
        DType::I32 => 34,
        DType::I64 => 35,
        DType::U8 => 37,
        DType::F16 => 42,
        DType::F32 => 43,
        DType::F64 => 44,
        DType::BF16 => 45,
    }
}

/// The dtype of a `TypeId`.
pub fn dtype_of_type_id(id: i64) -> Option<DType> {
    DType::ALL.into_iter().find(|&d| type_id(d) == id)
}

/// `Format` values.
pub fn format_name(v: i64) -> Option<&'static str> {
    match v {
        0 => Some("NCHW"),
        1 => Some("NHWC"),
        _ => None,
    }
}

pub fn format_value(s: &str) -> Option<i64> {
    match s.to_ascii_uppercase().as_str() {
        "NCHW" => Some(0),
        "NHWC" => Some(1),
        _ => None,
    }
}

/// `PadMode` values.
pub fn pad_mode_name(v: i64) -> Option<&'static str> {
    match v {
        0 => Some("pad"),
        1 => Some("same"),
        2 => Some("valid"),
        _ => None,
    }
}

pub fn pad_mode_value(s: &str) -> Option<i64> {
    match s.to_ascii_lowercase().as_str() {
        "pad" => Some(0),
        "same" => Some(1),
        "valid" => Some(2),
        _ => None,
    }
}

/// MindSpore's attribute names that are the registry's under another name.
pub fn attr_alias(ms_attr: &str) -> &str {
    match ms_attr {
        "format" => "data_format",
        other => other,
    }
}

/// The `.mindir` data type of a dtype (`TensorProto.DataType`).
pub fn data_type(d: DType) -> i32 {
    match d {
        DType::F32 => 1,
        DType::U8 => 2,
        DType::I8 => 3,
        DType::I16 => 5,
        DType::I32 => 6,
        DType::I64 => 7,
        DType::Bool => 9,
        DType::F16 => 10,
        DType::F64 => 11,
        DType::BF16 => 16,
    }
}

/// The dtype of a `.mindir` data type.
pub fn dtype_of_data_type(t: i32) -> Option<DType> {
    Some(match t {
        1 => DType::F32,
        2 => DType::U8,
        3 => DType::I8,
        5 => DType::I16,
        6 => DType::I32,
        7 => DType::I64,
        9 => DType::Bool,
        10 => DType::F16,
        11 | 17 => DType::F64,
        16 => DType::BF16,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_entry_names_a_registry_primitive() {
        for op in MS_OPS {
            let def = ops::lookup(op.ours)
                .unwrap_or_else(|| panic!("{} maps to unknown {}", op.ms, op.ours));
            if let Some(args) = op.args {
                let inputs = args.iter().filter(|a| matches!(a, Arg::Input)).count();
                assert_eq!(inputs, def.input_count(), "{}: inputs", op.ms);
                for a in args {
                    if let Arg::Attr(name, _) = a {
                        assert!(def.param(name).is_some(), "{}: no attribute {name}", op.ms);
                    }
                }
            }
        }
    }

    #[test]
    fn each_registry_primitive_exports_one_way() {
        for op in MS_OPS.iter().filter(|o| o.export) {
            let n = MS_OPS
                .iter()
                .filter(|o| o.export && o.ours == op.ours)
                .count();
            assert_eq!(n, 1, "{} is exported {n} ways", op.ours);
        }
    }

    #[test]
    fn type_ids_round_trip() {
        for d in DType::ALL {
            assert_eq!(dtype_of_type_id(type_id(d)), Some(d));
            assert_eq!(dtype_of_data_type(data_type(d)), Some(d));
        }
        assert_eq!(type_id(DType::Bool), 30);
    }
}
