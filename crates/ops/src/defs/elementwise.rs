//! Elementwise primitives: arithmetic, comparisons, logic, activations.

use ir::AbsVal;

use crate::infer::{infer_broadcast_binary, InferCall};
use crate::kernel::{binary_f64, unary_f64, KValue, KernelCall};
use crate::{Category, GNode, GradBuilder, GradCall, OpDef, OpError, OutputDef, ParamDef};

const XY: &[ParamDef] = &[
    ParamDef::input("x", "The first operand: a tensor or a scalar."),
    ParamDef::input(
        "y",
        "The second operand, broadcast against `x` (NumPy rules).",
    ),
];

const X: &[ParamDef] = &[ParamDef::input("x", "The input tensor.")];

fn infer_binary(call: &InferCall) -> Result<AbsVal, OpError> {
    infer_broadcast_binary(call, None)
}

/// The input unchanged in dtype and shape.
pub(crate) fn infer_same(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    call.tensor(0)?;
    Ok(call.inputs[0].widen())
}

fn binary_kernel(call: &KernelCall, f: impl Fn(f64, f64) -> f64) -> Result<KValue, OpError> {
    let dtype = call.promoted();
    Ok(KValue::Tensor(binary_f64(
        call.tensor(0)?,
        call.tensor(1)?,
        dtype,
        f,
    )?))
}

/// Sums a broadcast gradient back to the shape of the input it flows to.
fn to_input(b: &mut dyn GradBuilder, g: GNode, input: GNode) -> GNode {
    b.prim("_SumToShapeOf", &[g, input], vec![])
}

pub const OPS: &[OpDef] = &[
    OpDef {
        name: "Add",
        category: Category::Elementwise,
        doc: "Adds two tensors elementwise, `x + y`, with broadcasting and MindSpore's type promotion.",
        params: XY,
        variadic: false,
        output: OutputDef::Single,
        infer: infer_binary,
        grad: Some(|b, c| {
            let dx = to_input(b, c.dout, c.inputs[0]);
            let dy = to_input(b, c.dout, c.inputs[1]);
            vec![Some(dx), Some(dy)]
        }),
        kernel: Some(|c| binary_kernel(c, |x, y| x + y)),
    },
    OpDef {
        name: "Mul",
        category: Category::Elementwise,
        doc: "Multiplies two tensors elementwise, `x * y`, with broadcasting.",
        params: XY,
        variadic: false,
        output: OutputDef::Single,
        infer: infer_binary,
        grad: Some(|b: &mut dyn GradBuilder, c: &GradCall| {
            let gx = b.prim("Mul", &[c.dout, c.inputs[1]], vec![]);
            let gy = b.prim("Mul", &[c.dout, c.inputs[0]], vec![]);
            vec![Some(to_input(b, gx, c.inputs[0])), Some(to_input(b, gy, c.inputs[1]))]
        }),
        kernel: Some(|c| binary_kernel(c, |x, y| x * y)),
    },
    OpDef {
        name: "ReLU",
        category: Category::Elementwise,
        doc: "Rectified linear unit: `max(x, 0)` elementwise.",
        params: X,
        variadic: false,
        output: OutputDef::Single,
        infer: infer_same,
        grad: Some(|b, c| {
            // dout where the output is positive (MindSpore's ReluGrad).
            let zero = b.scalar(0.0);
            let mask = b.prim("Greater", &[c.out, zero], vec![]);
            let zeros = b.prim("ZerosLike", &[c.dout], vec![]);
            vec![Some(b.prim("Select", &[mask, c.dout, zeros], vec![]))]
        }),
        kernel: Some(|c| {
            let x = c.tensor(0)?;
            Ok(KValue::Tensor(unary_f64(x, x.dtype(), |v| if v > 0.0 { v } else { 0.0 })))
        }),
    },
];

pub(crate) fn samples() -> Vec<crate::eager::Sample> {
    use crate::eager::{random_f64, Sample};
    vec![
        Sample::new(
            "Add",
            vec![
                random_f64(&[2, 3], 1, -2.0, 2.0),
                random_f64(&[3], 2, -2.0, 2.0),
            ],
        ),
        Sample::new(
            "Mul",
            vec![
                random_f64(&[2, 1], 3, -2.0, 2.0),
                random_f64(&[2, 4], 4, -2.0, 2.0),
            ],
        ),
    ]
}
