//! Linear algebra: MatMul, BatchMatMul, BiasAdd.
//!
//! `MatMul` and `BatchMatMul` need operands of one dtype (MindSpore's
//! `CheckTensorTypeSame`); `BatchMatMul` broadcasts the batch dimensions (all
//! but the last two) with NumPy's rules, and an `i8` product is `i32`.
//! Gradients are MindSpore's bprops; a broadcast batch is summed back.

pub mod einsum;
pub mod matrix;
pub mod products;

use crate::batch::BatchRule;
use crate::schema::{why, Override, Schema};
use crate::Family;
use crate::MatMulForm;
use crate::Traits;
use ir::{AbsVal, AttrValue, Dim, Shape};
use tensor::{Buffer, DType, Tensor};

use crate::defs::elementwise::{is_float_input, make_tensor};
use crate::defs::internal::channel_axis;
use crate::infer::{broadcast_shapes, InferCall};
use crate::kernel::{
    broadcast_shape, for_each_broadcast, gemm_f32, gemm_f64, gemm_into, GemmScalar, KValue,
    KernelCall,
};
use crate::{
    AttrDefault, AttrType, Category, GNode, GradBuilder, GradCall, OpDef, OpError, OutputDef,
};

const MATMUL_PARAMS: Schema = Schema::ms(
    &[Override::inputs(&["x", "y"], why::INPUT_NAMES)],
    &[
        (
            "x",
            "The left matrix, `[M, K]` (or `[K, M]` with `transpose_a`).",
        ),
        (
            "y",
            "The right matrix, `[K, N]` (or `[N, K]` with `transpose_b`).",
        ),
        ("transpose_a", "Transpose `x` first."),
        ("transpose_b", "Transpose `y` first."),
    ],
);

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

/// MindSpore's MatMul bprop for all four transpose combinations, with the
/// product primitive `name` (`MatMul` or `BatchMatMul`): `(dx, dy)` before any
/// broadcast batch is summed back.
fn matmul_grads(b: &mut dyn GradBuilder, c: &GradCall, name: &str) -> (GNode, GNode) {
    let ta = c.attrs.bool("transpose_a");
    let tb = c.attrs.bool("transpose_b");
    let (x, y, d) = (c.inputs[0], c.inputs[1], c.dout);
    let t = |v: bool| AttrValue::Bool(v);
    let dx = if ta {
        b.prim(
            name,
            &[y, d],
            vec![("transpose_a", t(tb)), ("transpose_b", t(true))],
        )
    } else {
        b.prim(
            name,
            &[d, y],
            vec![("transpose_a", t(false)), ("transpose_b", t(!tb))],
        )
    };
    let dy = if tb {
        b.prim(
            name,
            &[d, x],
            vec![("transpose_a", t(true)), ("transpose_b", t(ta))],
        )
    } else {
        b.prim(
            name,
            &[x, d],
            vec![("transpose_a", t(!ta)), ("transpose_b", t(false))],
        )
    };
    (dx, dy)
}

fn grad_matmul(b: &mut dyn GradBuilder, c: &GradCall) -> Vec<Option<GNode>> {
    if !is_float_input(c, 0) || !is_float_input(c, 1) {
        return vec![None, None];
    }
    let (dx, dy) = matmul_grads(b, c, "MatMul");
    vec![Some(dx), Some(dy)]
}

fn grad_batch_matmul(b: &mut dyn GradBuilder, c: &GradCall) -> Vec<Option<GNode>> {
    if !is_float_input(c, 0) || !is_float_input(c, 1) {
        return vec![None, None];
    }
    let (dx, dy) = matmul_grads(b, c, "BatchMatMul");
    let dx = b.prim("_SumToShapeOf", &[dx, c.inputs[0]], vec![]);
    let dy = b.prim("_SumToShapeOf", &[dy, c.inputs[1]], vec![]);
    vec![Some(dx), Some(dy)]
}

fn infer_batch_matmul(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let (dx, sx) = call.tensor(0)?;
    let (dy, sy) = call.tensor(1)?;
    if dx.is_bool() {
        return Err(OpError::input(
            0,
            format!(
                "`BatchMatMul` needs numeric operands, but `x` is {}",
                call.inputs[0]
            ),
        ));
    }
    if dx != dy {
        return Err(OpError::input(
            1,
            format!("`BatchMatMul` needs operands of one dtype, got {dx} and {dy}"),
        ));
    }
    let dtype = if dx == DType::I8 { DType::I32 } else { dx };
    let (Some(x), Some(y)) = (sx.dims(), sy.dims()) else {
        return Ok(AbsVal::Tensor {
            dtype,
            shape: Shape::Unranked,
        });
    };
    for (i, (dims, shape)) in [(x, &sx), (y, &sy)].into_iter().enumerate() {
        if dims.len() < 2 {
            return Err(OpError::input(
                i,
                format!(
                    "`BatchMatMul` needs `{}` of rank 2 or more, got {shape}",
                    ["x", "y"][i]
                ),
            ));
        }
    }
    let (xb, xm) = x.split_at(x.len() - 2);
    let (yb, ym) = y.split_at(y.len() - 2);
    let ta = call.attrs.bool("transpose_a");
    let tb = call.attrs.bool("transpose_b");
    let (m, kx) = if ta {
        (&xm[1], &xm[0])
    } else {
        (&xm[0], &xm[1])
    };
    let (ky, n) = if tb {
        (&ym[1], &ym[0])
    } else {
        (&ym[0], &ym[1])
    };
    if !dims_compatible(kx, ky) {
        return Err(OpError::call(format!(
            "`BatchMatMul` inner dimensions differ: `x` {sx}{} has {kx} columns, `y` {sy}{} has {ky} rows",
            if ta { " (transposed)" } else { "" },
            if tb { " (transposed)" } else { "" },
        ))
        .with_note(format!("transpose_a={ta}, transpose_b={tb}")));
    }
    let batch = broadcast_shapes(&Shape::Ranked(xb.to_vec()), &Shape::Ranked(yb.to_vec()))
        .map_err(|msg| {
            OpError::call(format!("`BatchMatMul`: batch dimensions: {msg}"))
                .with_note(format!("`x` is {}", call.inputs[0]))
                .with_note(format!("`y` is {}", call.inputs[1]))
        })?;
    let mut out = batch.dims().map(<[Dim]>::to_vec).unwrap_or_default();
    out.push(m.clone());
    out.push(n.clone());
    Ok(AbsVal::Tensor {
        dtype,
        shape: Shape::Ranked(out),
    })
}

/// `x @ y` over broadcast batch dimensions, transposing the last two
/// dimensions of either first.
pub(crate) fn batch_matmul(x: &Tensor, y: &Tensor, ta: bool, tb: bool) -> Result<Tensor, OpError> {
    let (xs, ys) = (x.shape(), y.shape());
    if xs.len() < 2 || ys.len() < 2 {
        return Err(OpError::call(format!(
            "BatchMatMul needs tensors of rank 2 or more, got {xs:?} and {ys:?}"
        )));
    }
    let (xb, xm) = xs.split_at(xs.len() - 2);
    let (yb, ym) = ys.split_at(ys.len() - 2);
    let batch = broadcast_shape(xb, yb).ok_or_else(|| {
        OpError::call(format!(
            "BatchMatMul batch dimensions {xb:?} and {yb:?} cannot be broadcast"
        ))
    })?;
    let (m, k) = if ta { (xm[1], xm[0]) } else { (xm[0], xm[1]) };
    let (k2, n) = if tb { (ym[1], ym[0]) } else { (ym[0], ym[1]) };
    if k != k2 {
        return Err(OpError::call(format!(
            "BatchMatMul inner dimensions differ: {k} and {k2}"
        )));
    }
    let out_dtype = if x.dtype() == DType::I8 {
        DType::I32
    } else {
        x.dtype()
    };
    if !x.dtype().is_float() {
        // Integer products: exact in f64 for the sizes MindSpore allows.
        let r = batch_matmul(&x.cast(DType::F64), &y.cast(DType::F64), ta, tb)?;
        return Ok(r.cast(out_dtype));
    }
    let mut out_shape = batch.clone();
    out_shape.extend([m, n]);
    let total: usize = out_shape.iter().product();
    let (a_row, a_col) = if ta {
        (1, xm[1] as isize)
    } else {
        (xm[1] as isize, 1)
    };
    let (b_row, b_col) = if tb {
        (1, ym[1] as isize)
    } else {
        (ym[1] as isize, 1)
    };
    let (xsz, ysz, osz) = (xm[0] * xm[1], ym[0] * ym[1], m * n);
    let plan = BatchedGemm {
        m,
        n,
        k,
        xsz,
        ysz,
        osz,
        total,
        strides: [a_row, a_col, b_row, b_col],
        xb,
        yb,
        batch: &batch,
    };
    let buffer = match (x.buffer(), y.buffer()) {
        (Buffer::F32(a), Buffer::F32(b)) => Buffer::F32(plan.run(a, b)),
        (Buffer::F64(a), Buffer::F64(b)) => Buffer::F64(plan.run(a, b)),
        _ => {
            return Err(OpError::call(format!(
                "BatchMatMul needs operands of one dtype, got {} and {}",
                x.dtype(),
                y.dtype()
            )))
        }
    };
    make_tensor(out_dtype, out_shape, buffer)
}

const BIAS_ADD_PARAMS: Schema = Schema::ms(
    &[
        Override::inputs(&["x", "bias"], why::INPUT_NAMES),
        Override::attr("data_format", AttrType::Str(&["NCHW", "NHWC", "NCDHW"]), Some(AttrDefault::Str("NCHW")), why::STRINGS),
    ],
    &[
        ("x", "The input, of rank 2 to 5, with its channels on axis 1 (`NCHW`, `NCDHW`) or last (`NHWC`)."),
        ("bias", "A 1-D tensor with one value per channel, of `x`'s dtype."),
        ("data_format", "Where the channels are: the default `\"NCHW\"` (and `\"NCDHW\"`) means axis 1, `\"NHWC\"` the last axis."),
    ],
);

fn infer_bias_add(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let (dx, sx) = call.tensor(0)?;
    let (db, sb) = call.tensor(1)?;
    if dx.is_bool() {
        return Err(OpError::input(
            0,
            format!(
                "`BiasAdd` needs a numeric `x`, but it is {}",
                call.inputs[0]
            ),
        ));
    }
    if dx != db {
        return Err(OpError::input(
            1,
            format!(
                "`BiasAdd` needs `bias` of `x`'s dtype, but `x` is {} and `bias` is {}",
                call.inputs[0], call.inputs[1]
            ),
        ));
    }
    let format = call.attrs.str("data_format");
    let out = AbsVal::Tensor {
        dtype: dx,
        shape: sx.clone(),
    };
    let Some(xd) = sx.dims() else {
        return Ok(out);
    };
    if !(2..=5).contains(&xd.len()) {
        return Err(OpError::input(
            0,
            format!("`BiasAdd` needs `x` of rank 2 to 5, got {}", call.inputs[0]),
        ));
    }
    if format == "NCDHW" && xd.len() != 5 {
        return Err(OpError::attr(
            "data_format",
            format!(
                "`BiasAdd`: data_format \"NCDHW\" needs a 5-D `x`, got {}",
                call.inputs[0]
            ),
        ));
    }
    let Some(bd) = sb.dims() else {
        return Ok(out);
    };
    if bd.len() != 1 {
        return Err(OpError::input(
            1,
            format!("`BiasAdd` needs a 1-D `bias`, got {}", call.inputs[1]),
        ));
    }
    let axis = channel_axis(format, xd.len());
    if !dims_compatible(&xd[axis], &bd[0]) {
        return Err(OpError::call(format!(
            "`BiasAdd`: `bias` {} has {} elements but `x` {} has {} channels (axis {axis}, data_format \"{format}\")",
            call.inputs[1], bd[0], call.inputs[0], xd[axis]
        )));
    }
    Ok(out)
}

fn bias_add_data<T: Copy>(x: &[T], bias: &[T], inner: usize, f: impl Fn(T, T) -> T) -> Vec<T> {
    let mut out = Vec::with_capacity(x.len());
    if x.is_empty() {
        return out;
    }
    for (i, chunk) in x.chunks_exact(inner).enumerate() {
        let b = bias[i % bias.len()];
        out.extend(chunk.iter().map(|&v| f(v, b)));
    }
    out
}

fn k_bias_add(c: &KernelCall) -> Result<KValue, OpError> {
    let (x, bias) = (c.tensor(0)?, c.tensor(1)?);
    let shape = x.shape();
    if shape.len() < 2 {
        return Err(OpError::input(0, "`BiasAdd` needs `x` of rank 2 or more"));
    }
    let axis = channel_axis(c.attrs.str("data_format"), shape.len());
    if bias.numel() != shape[axis] {
        return Err(OpError::call(format!(
            "`BiasAdd`: `bias` has {} elements but `x` {shape:?} has {} channels",
            bias.numel(),
            shape[axis]
        )));
    }
    let inner: usize = shape[axis + 1..].iter().product();
    let bias = crate::defs::elementwise::as_dtype(bias, x.dtype());
    let buffer = match (x.buffer(), bias.buffer()) {
        (Buffer::F32(p), Buffer::F32(q)) => Buffer::F32(bias_add_data(p, q, inner, |a, b| a + b)),
        (Buffer::F64(p), Buffer::F64(q)) => Buffer::F64(bias_add_data(p, q, inner, |a, b| a + b)),
        (Buffer::I64(p), Buffer::I64(q)) => {
            Buffer::I64(bias_add_data(p, q, inner, i64::wrapping_add))
        }
        _ => return Err(OpError::input(0, "`BiasAdd` needs a numeric `x`")),
    };
    Ok(KValue::Tensor(make_tensor(
        x.dtype(),
        shape.to_vec(),
        buffer,
    )?))
}

fn grad_bias_add(b: &mut dyn GradBuilder, c: &GradCall) -> Vec<Option<GNode>> {
    let dx = is_float_input(c, 0).then_some(c.dout);
    let dbias = if is_float_input(c, 1) {
        let format = c.attrs.str("data_format");
        let rank = c.input_values[0].shape().and_then(|s| s.rank());
        Some(match rank {
            // MindSpore's BiasAddGrad: the sum over every non-channel axis.
            Some(r) if r >= 2 => {
                let axis = channel_axis(format, r);
                let axes = (0..r)
                    .filter(|&i| i != axis)
                    .map(|i| AttrValue::Int(i as i64))
                    .collect();
                b.prim(
                    "ReduceSum",
                    &[c.dout],
                    vec![("axis", AttrValue::Tuple(axes))],
                )
            }
            _ => b.prim(
                "BiasAddGrad",
                &[c.dout],
                vec![("data_format", AttrValue::Str(format.to_string()))],
            ),
        })
    } else {
        None
    };
    vec![dx, dbias]
}

pub const OPS: &[OpDef] = &[
    OpDef {
        name: "MatMul",
        category: Category::LinearAlgebra,
        doc: "Matrix product of two 2-D tensors, `x @ y`, optionally transposing either first.",
        schema: MATMUL_PARAMS,
        variadic: false,
        output: OutputDef::Single,
        infer: infer_matmul,
        grad: Some(grad_matmul),
        kernel: Some(|c| {
            let r = matmul(
                c.tensor(0)?,
                c.tensor(1)?,
                c.attrs.bool("transpose_a"),
                c.attrs.bool("transpose_b"),
            )?;
            Ok(KValue::Tensor(r))
        }),
        traits: Traits::of(Family::MatMul { form: MatMulForm::Transposes, batched: false }).batched(BatchRule::MatMul),
    },
    OpDef {
        name: "BatchMatMul",
        category: Category::LinearAlgebra,
        doc: "Batched matrix product `x @ y` over the last two dimensions, optionally transposing either's matrices first; the batch dimensions broadcast.",
        schema: Schema::ms(
            &[],
            &[
                ("x", "The left operand, `[*B, M, K]` (or `[*B, K, M]` with `transpose_a`); rank 2 or more."),
                ("y", "The right operand, `[*B, K, N]` (or `[*B, N, K]` with `transpose_b`); its batch dimensions broadcast against `x`'s."),
                ("transpose_a", "Transpose the last two dimensions of `x` first (default `false`)."),
                ("transpose_b", "Transpose the last two dimensions of `y` first (default `false`)."),
            ],
        ),
        variadic: false,
        output: OutputDef::Single,
        infer: infer_batch_matmul,
        grad: Some(grad_batch_matmul),
        kernel: Some(|c| {
            let r = batch_matmul(
                c.tensor(0)?,
                c.tensor(1)?,
                c.attrs.bool("transpose_a"),
                c.attrs.bool("transpose_b"),
            )?;
            Ok(KValue::Tensor(r))
        }),
        traits: Traits::of(Family::MatMul { form: MatMulForm::Transposes, batched: true }).batched(BatchRule::Broadcast),
    },
    OpDef {
        name: "BiasAdd",
        category: Category::LinearAlgebra,
        doc: "Adds a 1-D `bias` along the channel axis of `x`: axis 1 for `NCHW`/`NCDHW` (for a 2-D `x`, its last axis), the last axis for `NHWC`.",
        schema: BIAS_ADD_PARAMS,
        variadic: false,
        output: OutputDef::Single,
        infer: infer_bias_add,
        grad: Some(grad_bias_add),
        kernel: Some(k_bias_add),
        traits: Traits::of(Family::BiasAdd),
    },
];

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
        let x = if ta { [2, 4, 3] } else { [2, 3, 4] };
        let y = if tb { [2, 5, 4] } else { [2, 4, 5] };
        out.push(
            Sample::new(
                "BatchMatMul",
                vec![random_f64(&x, 12, -1.0, 1.0), random_f64(&y, 13, -1.0, 1.0)],
            )
            .attr("transpose_a", b(ta))
            .attr("transpose_b", b(tb)),
        );
    }
    out.push(Sample::new(
        "BatchMatMul",
        vec![
            random_f64(&[2, 1, 3, 4], 14, -1.0, 1.0),
            random_f64(&[5, 4, 2], 15, -1.0, 1.0),
        ],
    ));
    out.push(
        Sample::new(
            "BatchMatMul",
            vec![
                random_f64(&[3, 4], 16, -1.0, 1.0),
                random_f64(&[2, 5, 4], 17, -1.0, 1.0),
            ],
        )
        .attr("transpose_b", b(true)),
    );
    out.push(Sample::new(
        "BiasAdd",
        vec![
            random_f64(&[2, 3, 4, 5], 18, -1.0, 1.0),
            random_f64(&[3], 19, -1.0, 1.0),
        ],
    ));
    out.push(Sample::new(
        "BiasAdd",
        vec![
            random_f64(&[4, 3], 20, -1.0, 1.0),
            random_f64(&[3], 21, -1.0, 1.0),
        ],
    ));
    out.push(
        Sample::new(
            "BiasAdd",
            vec![
                random_f64(&[2, 4, 5, 3], 22, -1.0, 1.0),
                random_f64(&[3], 23, -1.0, 1.0),
            ],
        )
        .attr("data_format", AttrValue::Str("NHWC".into())),
    );
    out.push(
        Sample::new(
            "BiasAdd",
            vec![
                random_f64(&[2, 3, 2, 1, 2], 24, -1.0, 1.0),
                random_f64(&[3], 25, -1.0, 1.0),
            ],
        )
        .attr("data_format", AttrValue::Str("NCDHW".into())),
    );
    out
}

/// One GEMM per pair of broadcast batch elements (BatchMatMul's kernel), for
/// either float type.
struct BatchedGemm<'a> {
    m: usize,
    n: usize,
    k: usize,
    /// Elements of one matrix of `x`, of `y` and of the result.
    xsz: usize,
    ysz: usize,
    osz: usize,
    total: usize,
    /// Row and column strides of `x`'s and `y`'s matrices.
    strides: [isize; 4],
    xb: &'a [usize],
    yb: &'a [usize],
    batch: &'a [usize],
}

impl BatchedGemm<'_> {
    fn run<T: GemmScalar>(&self, a: &[T], b: &[T]) -> Vec<T> {
        let mut c = vec![T::ZERO; self.total];
        if self.k == 0 || self.osz == 0 {
            return c;
        }
        let [a_row, a_col, b_row, b_col] = self.strides;
        let (xsz, ysz, osz) = (self.xsz, self.ysz, self.osz);
        for_each_broadcast(self.xb, self.yb, self.batch, |o, i, j| {
            gemm_into(
                self.m,
                self.n,
                self.k,
                &a[i * xsz..(i + 1) * xsz],
                a_row,
                a_col,
                &b[j * ysz..(j + 1) * ysz],
                b_row,
                b_col,
                &mut c[o * osz..(o + 1) * osz],
            )
        });
        c
    }
}
