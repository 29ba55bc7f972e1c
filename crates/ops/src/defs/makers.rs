//! Tensor makers: Zeros, Ones, Fill. They take attributes only (no tensor
//! inputs) and build their result from them; they have no gradient.
//!
//! As in MindSpore, `shape` is an int or a tuple of ints (`()` gives a rank-0
//! tensor) and `Zeros`/`Ones` default to `f32`. `Fill` converts its value with
//! `Cast`'s rules (a float value in an integer dtype truncates toward zero).

use crate::schema::{why, Override, Schema};
use crate::Traits;
use ir::{AbsVal, AttrValue, DType, Shape};
use tensor::Tensor;

use crate::infer::InferCall;
use crate::kernel::{KValue, KernelCall};
use crate::{AttrDefault, AttrType, Category, OpDef, OpError, OutputDef};

fn shape_attr(call_op: &str, shape: Option<Vec<i64>>, dtype: DType) -> Result<Vec<i64>, OpError> {
    let shape = shape.unwrap_or_default();
    if let Some(&d) = shape.iter().find(|&&d| d < 0) {
        return Err(OpError::attr(
            "shape",
            format!("`{call_op}`: `shape` has the negative dimension {d}: {shape:?}"),
        ));
    }
    if Shape::known(&shape).overflows(dtype) {
        return Err(OpError::attr(
            "shape",
            format!(
                "`{call_op}`: a {dtype} tensor of shape {shape:?} cannot exist: its element count or byte size overflows a 64-bit integer"
            ),
        ));
    }
    Ok(shape)
}

fn infer_maker(call: &InferCall) -> Result<AbsVal, OpError> {
    let dtype = call.attrs.dtype("dtype");
    let shape = shape_attr(call.op.name, call.attrs.ints("shape"), dtype)?;
    Ok(AbsVal::Tensor {
        dtype,
        shape: Shape::known(&shape),
    })
}

fn fill_value(value: &AttrValue) -> f64 {
    match value {
        AttrValue::Bool(b) => f64::from(u8::from(*b)),
        other => other.as_f64().unwrap_or(0.0),
    }
}

fn make(c: &KernelCall, value: f64) -> Result<KValue, OpError> {
    let dtype = c.attrs.dtype("dtype");
    let shape = shape_attr("Fill", c.attrs.ints("shape"), dtype)?;
    let shape: Vec<usize> = shape.into_iter().map(|d| d as usize).collect();
    // The value converts as `Cast` would (through f64); the buffer is made in
    // the result's dtype directly, and failing to allocate it is an error.
    let v = Tensor::scalar(DType::F64, value).cast(dtype).to_f64_vec()[0];
    let t = Tensor::try_full(dtype, shape, v).map_err(|e| OpError::call(e.0))?;
    Ok(KValue::Tensor(t))
}

fn k_fill(c: &KernelCall) -> Result<KValue, OpError> {
    let value = c
        .attrs
        .get("value")
        .map(fill_value)
        .ok_or_else(|| OpError::attr("value", "`Fill` needs `value`"))?;
    make(c, value)
}

const fn maker(
    name: &'static str,
    doc: &'static str,
    params: Schema,
    kernel: crate::KernelFn,
) -> OpDef {
    OpDef {
        name,
        category: Category::TensorMaker,
        doc,
        schema: params,
        variadic: false,
        output: OutputDef::Single,
        infer: infer_maker,
        grad: None,
        kernel: Some(kernel),
        traits: Traits::NONE,
    }
}

pub const OPS: &[OpDef] = &[
    maker(
        "Zeros",
        "A tensor of the given shape and dtype filled with zeros.",
        Schema::ms(
            &[
                Override::attr("dtype", AttrType::DType, Some(AttrDefault::DType(DType::F32)), "MindSpore's `dtype=None` means float32, the registry's default"),
            ],
            &[
                ("shape", "The shape of the result: an int or a tuple of non-negative ints (`()` for rank 0)."),
                ("dtype", "The dtype of the result; `f32` by default."),
            ],
        ),
        |c| make(c, 0.0),
    ),
    maker(
        "Ones",
        "A tensor of the given shape and dtype filled with ones.",
        Schema::ms(
            &[
                Override::attr("dtype", AttrType::DType, Some(AttrDefault::DType(DType::F32)), "MindSpore's `dtype=None` means float32, the registry's default"),
            ],
            &[
                ("shape", "The shape of the result: an int or a tuple of non-negative ints (`()` for rank 0)."),
                ("dtype", "The dtype of the result; `f32` by default."),
            ],
        ),
        |c| make(c, 1.0),
    ),
    maker(
        "Fill",
        "A tensor of the given dtype and shape with every element equal to `value`.",
        Schema::ms(
            &[
                Override::attr("dtype", AttrType::DType, None, why::TO_ATTR),
                Override::attr("shape", AttrType::Ints, None, why::TO_ATTR),
                Override::attr("value", AttrType::Number, None, why::TO_ATTR),
            ],
            &[
                ("dtype", "The dtype of the result."),
                ("shape", "The shape of the result: an int or a tuple of non-negative ints (`()` for rank 0)."),
                ("value", "The value of every element: an int, a float or a bool, converted to `dtype`."),
            ],
        ),
        k_fill,
    ),
];

pub(crate) fn samples() -> Vec<crate::eager::Sample> {
    use crate::eager::Sample;
    let shape = |v: &[i64]| AttrValue::Tuple(v.iter().map(|&i| AttrValue::Int(i)).collect());
    vec![
        Sample::new("Zeros", vec![])
            .attr("shape", shape(&[2, 3]))
            .attr("dtype", AttrValue::DType(DType::F64)),
        Sample::new("Ones", vec![]).attr("shape", AttrValue::Int(4)),
        Sample::new("Fill", vec![])
            .attr("dtype", AttrValue::DType(DType::I32))
            .attr("shape", shape(&[2, 2]))
            .attr("value", AttrValue::Int(7)),
        Sample::new("Fill", vec![])
            .attr("dtype", AttrValue::DType(DType::F32))
            .attr("shape", shape(&[]))
            .attr("value", AttrValue::float(2.5)),
    ]
}
