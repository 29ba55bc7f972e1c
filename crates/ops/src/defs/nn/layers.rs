//! Layers of their own primitive: `Dense` (what `mint.nn.Linear` exports;
//! `nn.Dense` exports MatMul + BiasAdd), `Embedding` (`mint.nn.Embedding`;
//! `nn.Embedding` exports Gather), `EmbeddingLookup`, and the channel
//! dropouts `Dropout2D` / `Dropout3D` (`nn.Dropout2d`/`nn.Dropout3d` export
//! nothing in inference: identity).

use crate::schema::{why, Override, Schema};
use crate::Family;
use crate::Gradgen;
use crate::MatMulForm;
use crate::Traits;
use ir::{AbsVal, AttrValue, DType, Dim};

use crate::defs::nn::common::{float_input, given, grad_given, ktensor, maybe_ranked, opt_tensor};
use crate::defs::nn::dropout_keep;
use crate::defs::shape::{dims_may_equal, dims_of, fmt_dims};
use crate::infer::InferCall;
use crate::kernel::{gemm_f64, KValue, KernelCall};
use crate::{
    AttrDefault, AttrType, Attrs, Category, GNode, GradBuilder, GradCall, OpDef, OpError,
    OutputDef, ParamDef,
};

// ---------------------------------------------------------------------------
// Dense

fn infer_dense(call: &InferCall) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let op = call.op.name;
    let (dtype, xd) = float_input(call, 0)?;
    let (wdtype, wd) = dims_of(call, 1)?;
    if wdtype != dtype {
        return Err(OpError::input(
            1,
            format!("`{op}` needs `weight` of the dtype of `input`, {dtype}, got {wdtype}"),
        ));
    }
    let out: Option<Dim> = match &wd {
        Some(w) if w.len() == 2 => Some(w[0].clone()),
        Some(w) if w.len() == 1 => None,
        Some(w) => {
            return Err(OpError::input(
                1,
                format!(
                    "`{op}` needs `weight` [out_channels, in_channels] or [in_channels], got {}",
                    fmt_dims(w)
                ),
            ))
        }
        None => Some(Dim::Unknown),
    };
    if let (Some(x), Some(w)) = (&xd, &wd) {
        if x.is_empty() {
            return Err(OpError::input(
                0,
                format!("`{op}` needs `input` of rank at least 1"),
            ));
        }
        let inw = w.last().expect("rank 1 or 2");
        if !dims_may_equal(x.last().expect("rank >= 1"), inw) {
            return Err(OpError::input(
                1,
                format!(
                    "`{op}`: `input` {} has {} features but `weight` {} expects {}",
                    fmt_dims(x),
                    x.last().expect("rank >= 1"),
                    fmt_dims(w),
                    inw
                ),
            ));
        }
    }
    if given(call, 2) {
        let (bd, bdims) = dims_of(call, 2)?;
        if bd != dtype {
            return Err(OpError::input(
                2,
                format!("`{op}` needs `bias` of the dtype of `input`, {dtype}, got {bd}"),
            ));
        }
        if let Some(b) = bdims {
            let ok = match (&out, b.as_slice()) {
                (_, []) => true,
                (Some(o), [d]) => dims_may_equal(o, d),
                _ => false,
            };
            if !ok {
                return Err(OpError::input(
                    2,
                    format!(
                        "`{op}` needs `bias` of shape (out_channels,) or (), got {}",
                        fmt_dims(&b)
                    ),
                ));
            }
        }
    }
    Ok(maybe_ranked(
        dtype,
        xd.map(|x| {
            let mut d = x[..x.len() - 1].to_vec();
            d.extend(out);
            d
        }),
    ))
}

/// `(rows, in, out, weight is 1-D)`, checked.
fn dense_dims(x: &[usize], w: &[usize]) -> Result<(usize, usize, usize, bool), OpError> {
    let (out, inn, vec) = match w {
        [o, i] => (*o, *i, false),
        [i] => (1, *i, true),
        _ => {
            return Err(OpError::input(
                1,
                format!("`Dense`: weight {w:?} must be 1-D or 2-D"),
            ))
        }
    };
    if x.last() != Some(&inn) {
        return Err(OpError::input(
            0,
            format!("`Dense`: input {x:?} does not end with {inn} features"),
        ));
    }
    Ok((x[..x.len() - 1].iter().product(), inn, out, vec))
}

fn kernel_dense(c: &KernelCall) -> Result<KValue, OpError> {
    let (x, w) = (c.tensor(0)?, c.tensor(1)?);
    let (rows, inn, out, vec) = dense_dims(x.shape(), w.shape())?;
    let mut y = vec![0.0; rows * out];
    gemm_f64(
        rows,
        out,
        inn,
        &x.to_f64_vec(),
        inn as isize,
        1,
        &w.to_f64_vec(),
        1,
        inn as isize,
        &mut y,
    );
    if let Some(b) = opt_tensor(c, 2)? {
        let bv = b.to_f64_vec();
        if bv.len() != 1 && bv.len() != out {
            return Err(OpError::input(
                2,
                format!("`Dense`: bias {:?} does not fit {out} outputs", b.shape()),
            ));
        }
        for (k, v) in y.iter_mut().enumerate() {
            *v += bv[if bv.len() == 1 { 0 } else { k % out }];
        }
    }
    let mut shape = x.shape()[..x.rank() - 1].to_vec();
    if !vec {
        shape.push(out);
    }
    Ok(ktensor(x.dtype(), shape, y))
}

/// `_DenseGrad(dout, input, weight, bias)`: `(dinput, dweight, dbias)` (an
/// empty tuple for an absent bias).
fn kernel_dense_grad(c: &KernelCall) -> Result<KValue, OpError> {
    let (dout, x, w) = (c.tensor(0)?, c.tensor(1)?, c.tensor(2)?);
    let (rows, inn, out, _) = dense_dims(x.shape(), w.shape())?;
    if dout.numel() != rows * out {
        return Err(OpError::input(0, "`_DenseGrad`: the gradient does not fit"));
    }
    let (dv, xv, wv) = (dout.to_f64_vec(), x.to_f64_vec(), w.to_f64_vec());
    let mut dx = vec![0.0; rows * inn];
    gemm_f64(
        rows,
        inn,
        out,
        &dv,
        out as isize,
        1,
        &wv,
        inn as isize,
        1,
        &mut dx,
    );
    let mut dw = vec![0.0; out * inn];
    gemm_f64(
        out,
        inn,
        rows,
        &dv,
        1,
        out as isize,
        &xv,
        inn as isize,
        1,
        &mut dw,
    );
    let db = match opt_tensor(c, 3)? {
        Some(b) => {
            let mut s = vec![0.0; out];
            for (k, v) in dv.iter().enumerate() {
                s[k % out] += v;
            }
            if b.numel() == 1 {
                s = vec![s.iter().sum()];
            }
            ktensor(b.dtype(), b.shape().to_vec(), s)
        }
        None => KValue::Tuple(vec![]),
    };
    Ok(KValue::Tuple(vec![
        ktensor(x.dtype(), x.shape().to_vec(), dx),
        ktensor(w.dtype(), w.shape().to_vec(), dw),
        db,
    ]))
}

// ---------------------------------------------------------------------------
// EmbeddingLookup / Embedding

fn index_input(call: &InferCall, i: usize) -> Result<Option<Vec<Dim>>, OpError> {
    let (d, dims) = dims_of(call, i)?;
    if !matches!(d, DType::I32 | DType::I64) {
        return Err(OpError::input(
            i,
            format!(
                "`{}` needs `{}` of int32 or int64, got {d}",
                call.op.name,
                call.input_name(i)
            ),
        ));
    }
    Ok(dims)
}

fn infer_lookup(
    call: &InferCall,
    params: usize,
    indices: usize,
    rank2: bool,
) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let op = call.op.name;
    let (dtype, pd) = dims_of(call, params)?;
    let idx = index_input(call, indices)?;
    if let Some(p) = &pd {
        if p.is_empty() || p.len() > 2 || (rank2 && p.len() != 2) {
            return Err(OpError::input(
                params,
                format!(
                    "`{op}` needs `{}` of rank {}, got {}",
                    call.input_name(params),
                    if rank2 { "2" } else { "1 or 2" },
                    fmt_dims(p)
                ),
            ));
        }
    }
    Ok(match (idx, pd) {
        (Some(i), Some(p)) => {
            let mut d = i;
            d.extend_from_slice(&p[1..]);
            maybe_ranked(dtype, Some(d))
        }
        _ => maybe_ranked(dtype, None),
    })
}

/// The rows `indices` pick from a table of `rows` rows (`None`: a zero row).
fn lookup_rows(
    indices: &tensor::Tensor,
    rows: usize,
    offset: i64,
    strict: bool,
    op: &str,
) -> Result<Vec<Option<usize>>, OpError> {
    indices
        .to_f64_vec()
        .iter()
        .map(|&v| {
            let i = v as i64 - offset;
            if i >= 0 && (i as usize) < rows {
                Ok(Some(i as usize))
            } else if strict {
                Err(OpError::input(
                    0,
                    format!("`{op}`: index {} is out of range for {rows} rows", v as i64),
                ))
            } else {
                Ok(None)
            }
        })
        .collect()
}

fn gather_rows(
    table: &tensor::Tensor,
    picks: &[Option<usize>],
    idx_shape: &[usize],
    scale: Option<&[f64]>,
) -> KValue {
    let s = table.shape();
    let width: usize = s[1..].iter().product();
    let tv = table.to_f64_vec();
    let mut out = vec![0.0; picks.len() * width];
    for (k, p) in picks.iter().enumerate() {
        if let Some(r) = p {
            let f = scale.map_or(1.0, |sc| sc[*r]);
            for j in 0..width {
                out[k * width + j] = tv[r * width + j] * f;
            }
        }
    }
    let mut shape = idx_shape.to_vec();
    shape.extend_from_slice(&s[1..]);
    ktensor(table.dtype(), shape, out)
}

fn kernel_embedding_lookup(c: &KernelCall) -> Result<KValue, OpError> {
    let (p, i) = (c.tensor(0)?, c.tensor(1)?);
    if p.rank() == 0 || p.rank() > 2 {
        return Err(OpError::input(
            0,
            "`EmbeddingLookup` needs `input_params` of rank 1 or 2",
        ));
    }
    let picks = lookup_rows(
        i,
        p.shape()[0],
        c.attrs.int("offset"),
        false,
        "EmbeddingLookup",
    )?;
    Ok(gather_rows(p, &picks, i.shape(), None))
}

/// Embedding's `max_norm` scale per row (1 where the norm is within it).
fn renorm(table: &tensor::Tensor, attrs: &Attrs, picks: &[Option<usize>]) -> Option<Vec<f64>> {
    let max = match attrs.get("max_norm") {
        Some(AttrValue::Float(x)) => x.0,
        Some(AttrValue::Int(i)) => *i as f64,
        _ => return None,
    };
    let p = attrs.f64("norm_type");
    let s = table.shape();
    let width: usize = s[1..].iter().product();
    let tv = table.to_f64_vec();
    let mut scale = vec![1.0; s[0]];
    for r in picks.iter().flatten() {
        let row = &tv[r * width..(r + 1) * width];
        let norm = if p == f64::INFINITY {
            row.iter().fold(0.0f64, |m, v| m.max(v.abs()))
        } else {
            row.iter()
                .map(|v| v.abs().powf(p))
                .sum::<f64>()
                .powf(1.0 / p)
        };
        if norm > max {
            scale[*r] = max / (norm + 1e-7);
        }
    }
    Some(scale)
}

fn check_padding_idx(attrs: &Attrs, rows: usize) -> Result<Option<usize>, OpError> {
    match attrs.get("padding_idx") {
        Some(AttrValue::Int(i)) => {
            let r = rows as i64;
            if *i < -r || *i >= r {
                return Err(OpError::attr(
                    "padding_idx",
                    format!("`Embedding`: `padding_idx` {i} is out of range for {rows} rows"),
                ));
            }
            Ok(Some(if *i < 0 {
                (i + r) as usize
            } else {
                *i as usize
            }))
        }
        _ => Ok(None),
    }
}

fn kernel_embedding(c: &KernelCall) -> Result<KValue, OpError> {
    let (i, w) = (c.tensor(0)?, c.tensor(1)?);
    if w.rank() != 2 {
        return Err(OpError::input(1, "`Embedding` needs a 2-D `weight`"));
    }
    check_padding_idx(c.attrs, w.shape()[0])?;
    let picks = lookup_rows(i, w.shape()[0], 0, true, "Embedding")?;
    let scale = renorm(w, c.attrs, &picks);
    Ok(gather_rows(w, &picks, i.shape(), scale.as_deref()))
}

/// `_EmbeddingGrad(dout, indices, weight_like)`: `dout`'s rows added into
/// zeros shaped like the table at the looked-up rows (`offset`,
/// `padding_idx` and `scale_grad_by_freq` as the forward call).
fn kernel_embedding_grad(c: &KernelCall) -> Result<KValue, OpError> {
    let (dout, i, like) = (c.tensor(0)?, c.tensor(1)?, c.tensor(2)?);
    let s = like.shape();
    if s.is_empty() {
        return Err(OpError::input(
            2,
            "`_EmbeddingGrad` needs a table of rank at least 1",
        ));
    }
    let width: usize = s[1..].iter().product();
    let offset = match c.attrs.get("offset") {
        Some(AttrValue::Int(o)) => *o,
        _ => 0,
    };
    let picks = lookup_rows(i, s[0], offset, false, "_EmbeddingGrad")?;
    if dout.numel() != picks.len() * width {
        return Err(OpError::input(
            0,
            "`_EmbeddingGrad`: the gradient does not fit",
        ));
    }
    let pad = match c.attrs.get("padding_idx") {
        Some(AttrValue::Int(p)) => Some(if *p < 0 {
            (*p + s[0] as i64) as usize
        } else {
            *p as usize
        }),
        _ => None,
    };
    let freq = matches!(
        c.attrs.get("scale_grad_by_freq"),
        Some(AttrValue::Bool(true))
    );
    let mut counts = vec![0usize; s[0]];
    for r in picks.iter().flatten() {
        counts[*r] += 1;
    }
    let dv = dout.to_f64_vec();
    let mut g = vec![0.0; s[0] * width];
    for (k, p) in picks.iter().enumerate() {
        let Some(r) = *p else { continue };
        if Some(r) == pad {
            continue;
        }
        let f = if freq { 1.0 / counts[r] as f64 } else { 1.0 };
        for j in 0..width {
            g[r * width + j] += dv[k * width + j] * f;
        }
    }
    Ok(ktensor(dout.dtype(), s.to_vec(), g))
}

// ---------------------------------------------------------------------------
// Dropout2D / Dropout3D

fn infer_channel_dropout(call: &InferCall, rank: usize) -> Result<AbsVal, OpError> {
    if call.any_unknown() {
        return Ok(AbsVal::Any);
    }
    let op = call.op.name;
    let (dtype, xd) = dims_of(call, 0)?;
    let p = call.attrs.f64("keep_prob");
    if !(0.0..=1.0).contains(&p) {
        return Err(OpError::attr(
            "keep_prob",
            format!("`{op}`: `keep_prob` must lie in [0, 1], got {p}"),
        ));
    }
    if let Some(d) = &xd {
        if d.len() != rank {
            return Err(OpError::input(
                0,
                format!("`{op}` needs a {rank}-D `x`, got {}", fmt_dims(d)),
            ));
        }
    }
    Ok(AbsVal::Tuple(vec![
        maybe_ranked(dtype, xd.clone()),
        maybe_ranked(DType::Bool, xd),
    ]))
}

fn kernel_channel_dropout(c: &KernelCall, rank: usize) -> Result<KValue, OpError> {
    let x = c.tensor(0)?;
    let s = x.shape();
    if s.len() != rank {
        return Err(OpError::input(
            0,
            format!("needs a {rank}-D input, got {s:?}"),
        ));
    }
    let p = c.attrs.f64("keep_prob");
    let per: usize = s[2..].iter().product();
    let xv = x.to_f64_vec();
    let mut y = vec![0.0; xv.len()];
    let mut mask = vec![false; xv.len()];
    for ch in 0..s[0] * s[1] {
        let keep = p > 0.0 && dropout_keep(0, 0, ch as u64, p);
        for e in ch * per..(ch + 1) * per {
            mask[e] = keep;
            y[e] = if keep { xv[e] / p } else { 0.0 };
        }
    }
    Ok(KValue::Tuple(vec![
        ktensor(x.dtype(), s.to_vec(), y),
        KValue::Tensor(tensor::Tensor::from_bool(s.to_vec(), mask).expect("sizes match")),
    ]))
}

/// MindSpore's Dropout2D/3D bprop: `dy · mask / keep_prob` (just `dy · mask`
/// when `keep_prob` is 0).
fn grad_channel_dropout(b: &mut dyn GradBuilder, c: &GradCall) -> Vec<Option<GNode>> {
    let dtype = c
        .input_values
        .first()
        .and_then(AbsVal::dtype)
        .unwrap_or(DType::F32);
    if !dtype.is_float() {
        return vec![None];
    }
    let dy = b.tuple_get(c.dout, 0);
    let mask = b.tuple_get(c.out, 1);
    let m = b.prim("Cast", &[mask], vec![("dtype", AttrValue::DType(dtype))]);
    let mut g = b.prim("Mul", &[m, dy], vec![]);
    let p = c.attrs.f64("keep_prob");
    if p != 0.0 {
        let s = b.scalar(1.0 / p);
        g = b.prim("Mul", &[g, s], vec![]);
    }
    vec![Some(g)]
}

// ---------------------------------------------------------------------------
// The table.

fn embedding_grad_attrs(c: &GradCall, offset: Option<i64>) -> Vec<(&'static str, AttrValue)> {
    let mut v: Vec<(&'static str, AttrValue)> = c
        .attrs
        .iter()
        .filter(|(k, _)| matches!(*k, "padding_idx" | "scale_grad_by_freq"))
        .map(|(k, v)| (*k, v.clone()))
        .collect();
    if let Some(o) = offset {
        v.push(("offset", AttrValue::Int(o)));
    }
    v
}

pub const OPS: &[OpDef] = &[
    OpDef {
        name: "Dense",
        category: Category::NeuralNetwork,
        doc: "A fully connected layer (what `mint.nn.Linear` exports): `input · weightᵀ + bias` over the last dimension of `input` `(*, in_channels)`; `weight` is `(out_channels, in_channels)` (or `(in_channels,)`, dropping the output dimension), `bias` `(out_channels,)`, `()` or none.",
        schema: Schema::ms(
            &[],
            &[
                ("input", "The input, `(*, in_channels)`, float."),
                ("weight", "The weight, `(out_channels, in_channels)` or `(in_channels,)`."),
                ("bias", "The bias, `(out_channels,)` or `()`, or none."),
            ],
        ),
        variadic: false,
        output: OutputDef::Single,
        infer: infer_dense,
        grad: Some(|b, c| {
            let r = b.prim("_DenseGrad", &[c.dout, c.inputs[0], c.inputs[1], c.inputs[2]], vec![]);
            vec![
                Some(b.tuple_get(r, 0)),
                Some(b.tuple_get(r, 1)),
                grad_given(c, 2).then(|| b.tuple_get(r, 2)),
            ]
        }),
        kernel: Some(kernel_dense),
        traits: Traits::of(Family::MatMul { form: MatMulForm::Dense, batched: false }),
    },
    OpDef {
        name: "EmbeddingLookup",
        category: Category::NeuralNetwork,
        doc: "The rows `input_indices - offset` of `input_params` (a slice of a larger table starting at row `offset`); indices outside the slice give zero rows. Output `input_indices.shape + input_params.shape[1:]`.",
        schema: Schema::ms(
            &[
                Override::attr("offset", AttrType::Int, None, why::TO_ATTR),
                Override::inputs(&["input_params", "input_indices"], why::INPUT_NAMES),
            ],
            &[
                ("input_params", "The table (slice), of rank 1 or 2."),
                ("input_indices", "Row indices, int32 or int64."),
                ("offset", "The first row of the slice in the full table."),
            ],
        ),
        variadic: false,
        output: OutputDef::Single,
        infer: |c| infer_lookup(c, 0, 1, false),
        grad: Some(|b, c| {
            let attrs = embedding_grad_attrs(c, Some(c.attrs.int("offset")));
            vec![Some(b.prim("_EmbeddingGrad", &[c.dout, c.inputs[1], c.inputs[0]], attrs)), None]
        }),
        kernel: Some(kernel_embedding_lookup),
        traits: Traits::NONE.gradgen(Gradgen::Avoid),
    },
    OpDef {
        name: "Embedding",
        category: Category::NeuralNetwork,
        doc: "The rows of `weight` at `input` (what `mint.nn.Embedding` exports). With `max_norm`, each looked-up row whose `norm_type`-norm exceeds it is scaled by `max_norm / (norm + 1e-7)` (MindSpore also renormalises `weight` in place; not here). `padding_idx` rows get no gradient; `scale_grad_by_freq` divides each row's gradient by its count in `input`.",
        schema: Schema::ms(
            &[],
            &[
                ("input", "Row indices in `[0, weight.shape[0])`, int32 or int64."),
                ("weight", "The table, 2-D."),
                ("padding_idx", "A row that gets no gradient, or none. Default none."),
                ("max_norm", "The largest norm of a looked-up row, or none. Default none."),
                ("norm_type", "The p of the p-norm for `max_norm`. Default 2.0."),
                ("scale_grad_by_freq", "Scale the gradient by the inverse frequency of each index. Default false."),
            ],
        ),
        variadic: false,
        output: OutputDef::Single,
        infer: |c| infer_lookup(c, 1, 0, true),
        grad: Some(|b, c| {
            // As MindSpore's bprop, the max_norm scaling is not differentiated.
            let attrs = embedding_grad_attrs(c, None);
            vec![None, Some(b.prim("_EmbeddingGrad", &[c.dout, c.inputs[0], c.inputs[1]], attrs))]
        }),
        kernel: Some(kernel_embedding),
        traits: Traits::NONE.gradgen(Gradgen::Avoid),
    },
    OpDef {
        name: "Dropout2D",
        category: Category::NeuralNetwork,
        doc: "Channel dropout of an NCHW input: each `(n, c)` plane is kept with probability `keep_prob` (and scaled by `1/keep_prob`) or zeroed. Returns `(output, mask)`, `mask` bool. The choice is a deterministic function of the plane's index (no seeds), so runs repeat; `keep_prob=1` is the identity.",
        schema: Schema::ms(
            &[],
            &[
                ("x", "The input, `[N, C, H, W]`."),
                ("keep_prob", "The probability of keeping a channel, in [0, 1]. Default 0.5."),
            ],
        ),
        variadic: false,
        output: OutputDef::Tuple(&["output", "mask"]),
        infer: |c| infer_channel_dropout(c, 4),
        grad: Some(grad_channel_dropout),
        kernel: Some(|c| kernel_channel_dropout(c, 4)),
        traits: Traits::NONE.gradgen(Gradgen::Avoid),
    },
    OpDef {
        name: "Dropout3D",
        category: Category::NeuralNetwork,
        doc: "Channel dropout of an NCDHW input: each `(n, c)` volume is kept with probability `keep_prob` (and scaled by `1/keep_prob`) or zeroed. Returns `(output, mask)`, `mask` bool; deterministic as Dropout2D's; `keep_prob=1` is the identity.",
        schema: Schema::ms(
            &[],
            &[
                ("x", "The input, `[N, C, D, H, W]`."),
                ("keep_prob", "The probability of keeping a channel, in [0, 1]. Default 0.5."),
            ],
        ),
        variadic: false,
        output: OutputDef::Tuple(&["output", "mask"]),
        infer: |c| infer_channel_dropout(c, 5),
        grad: Some(grad_channel_dropout),
        kernel: Some(|c| kernel_channel_dropout(c, 5)),
        traits: Traits::NONE.gradgen(Gradgen::Avoid),
    },
    OpDef {
        name: "_DenseGrad",
        category: Category::Internal,
        doc: "The gradients of Dense with respect to its input, weight and bias (an empty tuple for an absent bias).",
        schema: Schema::own(&[
            ParamDef::input("dout", "The gradient of Dense's output."),
            ParamDef::input("input", "Dense's input."),
            ParamDef::input("weight", "Dense's weight."),
            ParamDef::input("bias", "Dense's bias, or none."),
        ]),
        variadic: false,
        output: OutputDef::Tuple(&["dinput", "dweight", "dbias"]),
        infer: |call| {
            if call.any_unknown() {
                return Ok(AbsVal::Any);
            }
            let b = if given(call, 3) { call.inputs[3].widen() } else { AbsVal::Tuple(vec![]) };
            Ok(AbsVal::Tuple(vec![call.inputs[1].widen(), call.inputs[2].widen(), b]))
        },
        grad: None,
        kernel: Some(kernel_dense_grad),
        traits: Traits::NONE,
    },
    OpDef {
        name: "_EmbeddingGrad",
        category: Category::Internal,
        doc: "The gradient of an embedding table: `dout`'s rows added at the looked-up rows of zeros shaped like the table (dense, where MindSpore may return a sparse RowTensor).",
        schema: Schema::own(&[
            ParamDef::input("dout", "The gradient of the lookup's output."),
            ParamDef::input("indices", "The looked-up indices."),
            ParamDef::input("weight_like", "The table, for its shape."),
            ParamDef::attr("offset", AttrType::Int, Some(AttrDefault::Int(0)), "EmbeddingLookup's offset. Default 0."),
            ParamDef::attr("padding_idx", AttrType::Int, Some(AttrDefault::None), "As Embedding."),
            ParamDef::attr("scale_grad_by_freq", AttrType::Bool, Some(AttrDefault::Bool(false)), "As Embedding."),
        ]),
        variadic: false,
        output: OutputDef::Single,
        infer: |call| {
            if call.any_unknown() {
                return Ok(AbsVal::Any);
            }
            let (dtype, _) = dims_of(call, 0)?;
            let shape = call.inputs[2].shape().unwrap_or(ir::Shape::Unranked);
            Ok(AbsVal::Tensor { dtype, shape })
        },
        grad: Some(|b, c| {
            let attrs = c.attrs.iter().map(|(k, v)| (*k, v.clone())).collect();
            vec![
                Some(b.prim("EmbeddingLookup", &[c.dout, c.inputs[1]], attrs_offset(attrs))),
                None,
                None,
            ]
        }),
        kernel: Some(kernel_embedding_grad),
        traits: Traits::NONE,
    },
];

/// `_EmbeddingGrad`'s own gradient is a lookup; only its `offset` carries
/// over (padding rows and frequency scaling make it inexact; they are rare in
/// second-order use).
fn attrs_offset(attrs: Vec<(&'static str, AttrValue)>) -> Vec<(&'static str, AttrValue)> {
    attrs.into_iter().filter(|(k, _)| *k == "offset").collect()
}

pub(crate) fn samples() -> Vec<crate::eager::Sample> {
    use crate::eager::{ints, random_f64, Sample};
    let x = |shape: &[usize], seed: u64| random_f64(shape, seed, -1.0, 1.0);
    let none = KValue::Tuple(vec![]);
    vec![
        Sample::new(
            "Dense",
            vec![x(&[2, 3, 4], 900), x(&[5, 4], 901), x(&[5], 902)],
        ),
        Sample::new("Dense", vec![x(&[3, 4], 903), x(&[4], 904), none.clone()]),
        Sample::new("Dense", vec![x(&[3, 4], 905), x(&[2, 4], 906), x(&[], 907)]),
        Sample::new(
            "EmbeddingLookup",
            vec![
                x(&[5, 3], 908),
                ints(DType::I32, &[2, 3], &[2, 3, 7, 4, 6, 2]),
            ],
        )
        .attr("offset", AttrValue::Int(2)),
        Sample::new(
            "Embedding",
            vec![ints(DType::I64, &[4], &[0, 3, 3, 1]), x(&[5, 3], 909)],
        ),
        // (padding_idx and scale_grad_by_freq change the gradient on purpose:
        // tested in tests/kernels/nn/edges.rs.)
        Sample::new(
            "Embedding",
            vec![ints(DType::I32, &[2, 2], &[0, 3, 3, 1]), x(&[5, 3], 910)],
        )
        .attr("max_norm", AttrValue::float(10.0)),
        Sample::new("Dropout2D", vec![x(&[2, 3, 2, 2], 911)])
            .attr("keep_prob", AttrValue::float(1.0)),
        Sample::new("Dropout2D", vec![x(&[2, 3, 2, 2], 912)])
            .attr("keep_prob", AttrValue::float(0.5)),
        Sample::new("Dropout3D", vec![x(&[2, 2, 2, 1, 2], 913)])
            .attr("keep_prob", AttrValue::float(0.7)),
        Sample::new(
            "_EmbeddingGrad",
            vec![
                x(&[4, 3], 914),
                ints(DType::I32, &[4], &[0, 3, 3, 1]),
                x(&[5, 3], 915),
            ],
        ),
    ]
}
