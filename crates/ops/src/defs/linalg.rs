//! Linear algebra: MatMul, BatchMatMul, BiasAdd.

use ir::{AbsVal, AttrValue, Dim, Shape};
use tensor::{Buffer, DType, Tensor};

use crate::infer::InferCall;
use crate::kernel::{gemm_f32, gemm_f64, KValue};
use crate::{AttrDefault, AttrType, Category, OpDef, OpError, OutputDef, ParamDef};

const MATMUL_PARAMS: &[ParamDef] = &[
    ParamDef::input(
        "x",
        "The left matrix, `[M, K]` (or `[K, M]` with `transpose_a`).",
    ),
    ParamDef::input(
        "y",
        "The right matrix, `[K, N]` (or `[N, K]` with `transpose_b`).",
    ),
    ParamDef::attr(
        "transpose_a",
        AttrType::Bool,
        Some(AttrDefault::Bool(false)),
        "Transpose `x` first.",
    ),
    ParamDef::attr(
        "transpose_b",
        AttrType::Bool,
        Some(AttrDefault::Bool(false)),
        "Transpose `y` first.",
    ),
];

/// Whether two dimensions can be equal (unknown and symbolic ones can).
pub(crate) fn dims_compatible(a: &Dim, b: &Dim) -> bool {
    match (a, b) {
        (Dim::Known(x), Dim::Known(y)) => x == y,
        (Dim::Sym(x), Dim::Sym(y)) => x == y,
        _ => true,
    }
}

fn infer_matmul(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let (dx, sx) = call.tensor(0)?;
    let (dy, sy) = call.tensor(1)?;
    if dx != dy {
        return Err(OpError::input(
            1,
            format!("`MatMul` needs operands of one dtype, got {dx} and {dy}"),
        ));
    }
    let (Some(x), Some(y)) = (sx.dims(), sy.dims()) else {
        return Ok(AbsVal::Tensor {
            dtype: dx,
            shape: Shape::Ranked(vec![Dim::Unknown, Dim::Unknown]),
        });
    };
    if x.len() != 2 {
        return Err(OpError::input(
            0,
            format!("`MatMul` needs a 2-D `x`, got {sx}"),
        ));
    }
    if y.len() != 2 {
        return Err(OpError::input(
            1,
            format!("`MatMul` needs a 2-D `y`, got {sy}"),
        ));
    }
    let ta = call.attrs.bool("transpose_a");
    let tb = call.attrs.bool("transpose_b");
    let (m, kx) = if ta { (&x[1], &x[0]) } else { (&x[0], &x[1]) };
    let (ky, n) = if tb { (&y[1], &y[0]) } else { (&y[0], &y[1]) };
    if !dims_compatible(kx, ky) {
        return Err(OpError::call(format!(
            "`MatMul` inner dimensions differ: `x` {sx}{} has {kx} columns, `y` {sy}{} has {ky} rows",
            if ta { " (transposed)" } else { "" },
            if tb { " (transposed)" } else { "" },
        ))
        .with_note(format!("transpose_a={ta}, transpose_b={tb}")));
    }
    Ok(AbsVal::Tensor {
        dtype: dx,
        shape: Shape::Ranked(vec![m.clone(), n.clone()]),
    })
}

/// `x @ y` for 2-D tensors with optional transposes.
pub(crate) fn matmul(x: &Tensor, y: &Tensor, ta: bool, tb: bool) -> Result<Tensor, OpError> {
    let (xs, ys) = (x.shape(), y.shape());
    if xs.len() != 2 || ys.len() != 2 {
        return Err(OpError::call(format!(
            "MatMul needs 2-D tensors, got {xs:?} and {ys:?}"
        )));
    }
    let (m, k) = if ta { (xs[1], xs[0]) } else { (xs[0], xs[1]) };
    let (k2, n) = if tb { (ys[1], ys[0]) } else { (ys[0], ys[1]) };
    if k != k2 {
        return Err(OpError::call(format!(
            "MatMul inner dimensions differ: {k} and {k2}"
        )));
    }
    // Row-major strides of the (possibly transposed) operands.
    let (a_row, a_col) = if ta {
        (1, xs[1] as isize)
    } else {
        (xs[1] as isize, 1)
    };
    let (b_row, b_col) = if tb {
        (1, ys[1] as isize)
    } else {
        (ys[1] as isize, 1)
    };
    let dtype = x.dtype();
    let buffer = match (x.buffer(), y.buffer()) {
        (Buffer::F32(a), Buffer::F32(b)) => {
            let mut c = vec![0f32; m * n];
            if k > 0 {
                gemm_f32(m, n, k, a, a_row, a_col, b, b_row, b_col, &mut c);
            }
            Buffer::F32(c)
        }
        (Buffer::F64(a), Buffer::F64(b)) => {
            let mut c = vec![0f64; m * n];
            if k > 0 {
                gemm_f64(m, n, k, a, a_row, a_col, b, b_row, b_col, &mut c);
            }
            Buffer::F64(c)
        }
        _ => {
            // Integer matmul: exact in f64 for the sizes MindSpore allows.
            let r = matmul(&x.cast(DType::F64), &y.cast(DType::F64), ta, tb)?;
            return Ok(r.cast(dtype));
        }
    };
    Tensor::new(dtype, vec![m, n], buffer).map_err(|e| OpError::call(e.0))
}

pub const OPS: &[OpDef] = &[OpDef {
    name: "MatMul",
    category: Category::LinearAlgebra,
    doc: "Matrix product of two 2-D tensors, `x @ y`, optionally transposing either first.",
    params: MATMUL_PARAMS,
    variadic: false,
    output: OutputDef::Single,
    infer: infer_matmul,
    grad: Some(|b, c| {
        let ta = c.attrs.bool("transpose_a");
        let tb = c.attrs.bool("transpose_b");
        let (x, y, d) = (c.inputs[0], c.inputs[1], c.dout);
        let t = |v: bool| AttrValue::Bool(v);
        // MindSpore's MatMul bprop, for all four transpose combinations.
        let dx = if ta {
            b.prim(
                "MatMul",
                &[y, d],
                vec![("transpose_a", t(tb)), ("transpose_b", t(true))],
            )
        } else {
            b.prim(
                "MatMul",
                &[d, y],
                vec![("transpose_a", t(false)), ("transpose_b", t(!tb))],
            )
        };
        let dy = if tb {
            b.prim(
                "MatMul",
                &[d, x],
                vec![("transpose_a", t(true)), ("transpose_b", t(ta))],
            )
        } else {
            b.prim(
                "MatMul",
                &[x, d],
                vec![("transpose_a", t(!ta)), ("transpose_b", t(false))],
            )
        };
        vec![Some(dx), Some(dy)]
    }),
    kernel: Some(|c| {
        let r = matmul(
            c.tensor(0)?,
            c.tensor(1)?,
            c.attrs.bool("transpose_a"),
            c.attrs.bool("transpose_b"),
        )?;
        Ok(KValue::Tensor(r))
    }),
}];

pub(crate) fn samples() -> Vec<crate::eager::Sample> {
    use crate::eager::{random_f64, Sample};
    let b = |v: bool| AttrValue::Bool(v);
    let mut out = Vec::new();
    for (ta, tb) in [(false, false), (true, false), (false, true), (true, true)] {
        let x = if ta { [4, 3] } else { [3, 4] };
        let y = if tb { [2, 4] } else { [4, 2] };
        out.push(
            Sample::new(
                "MatMul",
                vec![random_f64(&x, 10, -1.0, 1.0), random_f64(&y, 11, -1.0, 1.0)],
            )
            .attr("transpose_a", b(ta))
            .attr("transpose_b", b(tb)),
        );
    }
    out
}
