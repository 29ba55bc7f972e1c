//! Conversions between tuples and tensors (TupleToTensor, ListToTensor,
//! TupleToArray, TensorToTuple, TensorToList), SequenceConcat (`Concat` of a
//! tuple) and the tensor-with-number comparisons (LessScalar, EqScalar,
//! GreaterEqualScalar). See `scalar_seq` for how tuples are represented.

use crate::schema::{why, Override, Schema};
use crate::Traits;
use ir::{AbsVal, AttrValue, DType, Shape};
use tensor::Tensor;

use crate::defs::scalar::Num;
use crate::defs::scalar_seq::{abs_num, has_float, knum, seq_op, tuple_arg, tuple_nums};
use crate::infer::InferCall;
use crate::kernel::{KValue, KernelCall};
use crate::{AttrType, Category, GNode, GradBuilder, GradCall, OpDef, OpError, OutputDef};

// ---------------------------------------------------------------------------
// Tuples and tensors.

/// The dtype `TupleToTensor` gives numbers of these dtypes by default: float
/// if any is a float (`f32`), else `i64`, or bool when all are bool.
fn tuple_tensor_dtype(op: &str, dtypes: &[DType]) -> DType {
    if op == "TupleToArray" {
        return if dtypes.iter().any(|d| d.is_float()) {
            DType::F32
        } else {
            DType::I32
        };
    }
    if dtypes.iter().any(|d| d.is_float()) {
        DType::F32
    } else if !dtypes.is_empty() && dtypes.iter().all(|d| d.is_bool()) {
        DType::Bool
    } else {
        DType::I64
    }
}

fn given_dtype(call_attrs: &crate::Attrs) -> Option<DType> {
    crate::defs::reduce::aggregate::opt_dtype(call_attrs, "dtype")
}

fn infer_to_tensor(call: &InferCall) -> Result<AbsVal, OpError> {
    let op = call.op.name;
    let Some(nums) = tuple_nums(call, 0)? else {
        return Ok(AbsVal::Any);
    };
    if op == "TupleToArray" && nums.is_empty() {
        return Err(OpError::input(0, "`TupleToArray` needs a non-empty tuple"));
    }
    let dtypes: Vec<DType> = nums.iter().map(|e| e.0).collect();
    let dtype = given_dtype(call.attrs).unwrap_or_else(|| tuple_tensor_dtype(op, &dtypes));
    Ok(AbsVal::tensor(dtype, &[nums.len() as i64]))
}

fn k_to_tensor(c: &KernelCall, op: &str) -> Result<KValue, OpError> {
    let items = tuple_arg(c, 0)?;
    let nums: Vec<(DType, Num)> = items
        .iter()
        .enumerate()
        .map(|(i, v)| knum(v, i))
        .collect::<Result<_, _>>()?;
    let dtypes: Vec<DType> = nums.iter().map(|e| e.0).collect();
    let dtype = given_dtype(c.attrs).unwrap_or_else(|| tuple_tensor_dtype(op, &dtypes));
    let data: Vec<f64> = nums.iter().map(|e| e.1.cast(dtype).f()).collect();
    let t = Tensor::from_f64(vec![data.len()], data).map_err(|e| OpError::call(e.0))?;
    Ok(KValue::Tensor(t.cast(dtype)))
}

fn grad_to_tensor(b: &mut dyn GradBuilder, c: &GradCall) -> Vec<Option<GNode>> {
    let floats =
        matches!(c.input_values.first(), Some(AbsVal::Tuple(items)) if items.iter().any(has_float));
    vec![floats.then(|| b.prim("TensorToTuple", &[c.dout], vec![]))]
}

fn infer_to_tuple(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let (dtype, shape) = call.tensor(0)?;
    match shape {
        Shape::Ranked(d) if d.len() == 1 => match d[0].known() {
            Some(n) => Ok(AbsVal::Tuple(vec![AbsVal::scalar(dtype); n as usize])),
            None => Ok(AbsVal::Any),
        },
        Shape::Unranked => Ok(AbsVal::Any),
        _ => Err(OpError::input(
            0,
            format!(
                "`{}` needs a 1-D tensor, got {}",
                call.op.name, call.inputs[0]
            ),
        )),
    }
}

fn k_to_tuple(c: &KernelCall, op: &str) -> Result<KValue, OpError> {
    let t = c.tensor(0)?;
    if t.rank() != 1 {
        return Err(OpError::input(
            0,
            format!("`{op}` needs a 1-D tensor, got shape {:?}", t.shape()),
        ));
    }
    Ok(KValue::Tuple(
        t.to_f64_vec()
            .into_iter()
            .map(|v| KValue::Tensor(Tensor::scalar(t.dtype(), v)))
            .collect(),
    ))
}

fn grad_to_tuple(b: &mut dyn GradBuilder, c: &GradCall) -> Vec<Option<GNode>> {
    let Some(d) = c.input_values[0].dtype().filter(|d| d.is_float()) else {
        return vec![None];
    };
    vec![Some(b.prim(
        "TupleToTensor",
        &[c.dout],
        vec![("dtype", AttrValue::DType(d))],
    ))]
}

// ---------------------------------------------------------------------------
// SequenceConcat (Concat of a tuple) and the tensor-with-scalar comparisons.

fn concat() -> &'static OpDef {
    crate::lookup("Concat").expect("Concat is registered")
}

fn infer_seq_concat(call: &InferCall) -> Result<AbsVal, OpError> {
    (concat().infer)(&InferCall {
        op: concat(),
        inputs: call.inputs,
        attrs: call.attrs,
    })
    .map_err(|mut e| {
        e.message = e.message.replace("`Concat`", "`SequenceConcat`");
        e
    })
}

fn infer_scalar_compare(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let (_, shape) = call.tensor(0)?;
    if abs_num(&call.inputs[1]).is_none() {
        return Err(OpError::input(
            1,
            format!(
                "`{}` compares with a number, not {}",
                call.op.name, call.inputs[1]
            ),
        ));
    }
    Ok(AbsVal::Tensor {
        dtype: DType::Bool,
        shape,
    })
}

fn k_scalar_compare(c: &KernelCall, prim: &str) -> Result<KValue, OpError> {
    let kernel = crate::lookup(prim)
        .and_then(|o| o.kernel)
        .expect("registered with a kernel");
    let weak = [false, true];
    kernel(&KernelCall {
        inputs: c.inputs,
        weak: &weak,
        attrs: c.attrs,
    })
}

// ---------------------------------------------------------------------------
// The table.

pub const OPS: &[OpDef] = &[
    OpDef {
        name: "SequenceConcat",
        category: Category::Shape,
        doc: "Joins a tuple of tensors along `axis`, as `Concat`.",
        schema: Schema::ms(
            &[],
            &[
                ("x", "A tuple of tensors of one dtype and rank."),
                ("axis", "The dimension to join along; negative values count from the end. Default 0."),
            ],
        ),
        variadic: false,
        output: OutputDef::Single,
        infer: infer_seq_concat,
        grad: Some(|b, c| (concat().grad.expect("Concat has a gradient"))(b, c)),
        kernel: Some(|c| (concat().kernel.expect("Concat has a kernel"))(c)),
        traits: Traits::NONE,
    },
    seq_op(
        "TupleToTensor",
        "A 1-D tensor of the numbers of a tuple, of `dtype`.",
        Schema::ms(
            &[],
            &[
                ("input_tuple", "A tuple of numbers."),
                ("dtype", "The tensor's dtype; `None` (the default) gives `f32` if any element is a float, else `i64` (bool for all bools)."),
            ],
        ),
        infer_to_tensor,
        Some(grad_to_tensor),
        |c| k_to_tensor(c, "TupleToTensor"),
    ),
    seq_op(
        "ListToTensor",
        "A 1-D tensor of the numbers of a list (a tuple here), of `dtype`.",
        Schema::ms(
            &[Override::attr("dtype", AttrType::DType, None, why::TO_ATTR)],
            &[("input_list", "A list of numbers."), ("dtype", "The tensor's dtype.")],
        ),
        infer_to_tensor,
        Some(grad_to_tensor),
        |c| k_to_tensor(c, "ListToTensor"),
    ),
    seq_op(
        "TupleToArray",
        "A 1-D tensor of the numbers of a non-empty tuple: `i32` for integers, `f32` if any is a float.",
        Schema::ms(&[], &[("input_x", "A non-empty tuple of numbers.")]),
        infer_to_tensor,
        Some(grad_to_tensor),
        |c| k_to_tensor(c, "TupleToArray"),
    ),
    seq_op(
        "TensorToTuple",
        "The elements of a 1-D tensor as a tuple of numbers of its dtype (its length must be known for the result to be).",
        Schema::ms(&[], &[("input_tensor", "A 1-D tensor.")]),
        infer_to_tuple,
        Some(grad_to_tuple),
        |c| k_to_tuple(c, "TensorToTuple"),
    ),
    seq_op(
        "TensorToList",
        "The elements of a 1-D tensor as a list (a tuple here) of numbers of its dtype.",
        Schema::ms(&[], &[("input_tensor", "A 1-D tensor.")]),
        infer_to_tuple,
        Some(grad_to_tuple),
        |c| k_to_tuple(c, "TensorToList"),
    ),
    OpDef {
        name: "LessScalar",
        category: Category::Elementwise,
        doc: "Whether `input < other` elementwise, for a tensor and a number: a bool tensor of `input`'s shape (`mint.lt` with a number).",
        schema: Schema::ms(&[], &[("input", "A tensor."), ("other", "A number.")]),
        variadic: false,
        output: OutputDef::Single,
        infer: infer_scalar_compare,
        grad: None,
        kernel: Some(|c| k_scalar_compare(c, "Less")),
        traits: Traits::NONE,
    },
    OpDef {
        name: "EqScalar",
        category: Category::Elementwise,
        doc: "Whether `input == other` elementwise, for a tensor and a number: a bool tensor of `input`'s shape (`mint.eq` with a number).",
        schema: Schema::ms(&[], &[("input", "A tensor."), ("other", "A number.")]),
        variadic: false,
        output: OutputDef::Single,
        infer: infer_scalar_compare,
        grad: None,
        kernel: Some(|c| k_scalar_compare(c, "Equal")),
        traits: Traits::NONE,
    },
    OpDef {
        name: "GreaterEqualScalar",
        category: Category::Elementwise,
        doc: "Whether `input >= other` elementwise, for a tensor and a number: a bool tensor of `input`'s shape (`mint.ge` with a number).",
        schema: Schema::ms(&[], &[("input", "A tensor."), ("other", "A number.")]),
        variadic: false,
        output: OutputDef::Single,
        infer: infer_scalar_compare,
        grad: None,
        kernel: Some(|c| k_scalar_compare(c, "GreaterEqual")),
        traits: Traits::NONE,
    },
];

pub(crate) fn samples() -> Vec<crate::eager::Sample> {
    use crate::eager::{ints, random_f64, Sample};
    let i = |v: i64| ints(DType::I64, &[], &[v]);
    let f = |v: f64| KValue::Tensor(Tensor::scalar(DType::F64, v));
    let tup = |v: &[i64]| KValue::Tuple(v.iter().map(|&x| i(x)).collect());
    vec![
        Sample::new(
            "SequenceConcat",
            vec![KValue::Tuple(vec![
                random_f64(&[2, 3], 454, -1.0, 1.0),
                random_f64(&[1, 3], 455, -1.0, 1.0),
            ])],
        ),
        Sample::new("TupleToTensor", vec![KValue::Tuple(vec![f(1.5), f(-2.0)])])
            .attr("dtype", AttrValue::DType(DType::F64)),
        Sample::new("TupleToTensor", vec![tup(&[1, 2, 3])]),
        Sample::new("ListToTensor", vec![tup(&[1, 2])]).attr("dtype", AttrValue::DType(DType::F32)),
        Sample::new("TupleToArray", vec![tup(&[1, 2])]),
        Sample::new("TensorToTuple", vec![random_f64(&[3], 456, -1.0, 1.0)]),
        Sample::new("TensorToList", vec![ints(DType::I32, &[2], &[4, 5])]),
        Sample::new(
            "LessScalar",
            vec![random_f64(&[2, 3], 457, -1.0, 1.0), f(0.25)],
        ),
        Sample::new("EqScalar", vec![ints(DType::I32, &[3], &[1, 2, 1]), i(1)]),
        Sample::new(
            "GreaterEqualScalar",
            vec![ints(DType::I32, &[3], &[1, 2, 3]), f(1.5)],
        ),
    ]
}
