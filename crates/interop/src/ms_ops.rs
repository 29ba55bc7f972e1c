//! How MindSpore 2.10 writes values in model files: dtypes as `TypeId`
//! numbers and tensor element types as `TensorProto.DataType`s.
//!
//! Which MindSpore primitive is which registry primitive, and how their
//! arguments map, is `ops::mindspore` (derived from MindSpore's own
//! definitions, with one declarative table of exceptions). MindSpore 2.x has
//! two kinds of primitives. A *primitive function* (prim type
//! `PRIMITIVE_FUNCTION`, `PrimFunc_X` in `.ir` dumps) takes every argument as a
//! node input, attributes included, in the order of its op definition
//! (`MatMul(input, mat2, transpose_a, transpose_b)`); enums are integers
//! (`data_format` 0 is `NCHW`) and dtypes are `TypeId` numbers. An *old-style*
//! primitive (prim type `PRIMITIVE`) takes only tensor inputs and carries its
//! attributes on the primitive (`Conv2D` with `kernel_size`, `pad_mode`, ...).

use tensor::DType;

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

/// The dtype of MindSpore's name for it (`mstype.float32` is `float32`).
pub fn dtype_of_ms_name(name: &str) -> Option<DType> {
    Some(match name {
        "bool_" | "bool" => DType::Bool,
        "int8" => DType::I8,
        "int16" => DType::I16,
        "int32" => DType::I32,
        "int64" => DType::I64,
        "uint8" => DType::U8,
        "float16" => DType::F16,
        "float32" => DType::F32,
        "float64" => DType::F64,
        "bfloat16" => DType::BF16,
        _ => return None,
    })
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

/// The prefix of a graph input's `denotation` that names its symbolic
/// dimensions (`mirdsl.dims=B,784`): MindIR writes them as -1 and MindSpore
/// ignores the field, so an export keeps `B` for its import.
pub const DIMS_DENOTATION: &str = "mirdsl.dims=";

#[cfg(test)]
mod tests {
    use super::*;

    /// Every registry primitive named as a MindSpore one maps onto it (the
    /// full check, with the allowed deviations, is `ops`'s
    /// `tests/mindspore_schema.rs`).
    #[test]
    fn registry_primitives_map() {
        for def in ops::mindspore::registry_ops_named_as_mindspore() {
            match ops::mindspore::mapping(def.name) {
                Some(Ok(m)) => assert_eq!(m.def.name, def.name),
                Some(Err(e)) => panic!("{}: {e}", def.name),
                None => panic!("{}: no mapping", def.name),
            }
        }
    }

    #[test]
    fn ms_dtype_names() {
        let names = [
            "bool_", "int8", "int16", "int32", "int64", "uint8", "float16", "float32", "float64",
            "bfloat16",
        ];
        let got: Vec<DType> = names.iter().filter_map(|n| dtype_of_ms_name(n)).collect();
        for d in DType::ALL {
            assert!(got.contains(&d), "{d:?} has no MindSpore name");
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
