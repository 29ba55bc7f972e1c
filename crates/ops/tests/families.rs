//! The kernel families of the records: backends with family kernels (the
//! compiled plans, the GPU) and the exporter match on these, so a record in
//! the wrong family, or a family member without the inputs and attributes its
//! kernels read, shows here.

use ops::{ConvRole, Family, MatMulForm, OpDef, ReduceAxes, RowNorm, Strided};

fn members() -> Vec<(&'static str, Family)> {
    let mut v: Vec<_> = ops::registry()
        .values()
        .filter(|op| op.traits.family != Family::Other)
        .map(|op| (op.name, op.traits.family))
        .collect();
    v.sort_by_key(|(name, _)| *name);
    v
}

#[test]
fn family_members() {
    let listing: String = members()
        .iter()
        .map(|(name, f)| format!("{name}: {f:?}\n"))
        .collect();
    expect_test::expect![[r#"
        Adam: Optimizer(Adam)
        ApplyMomentum: Optimizer(Momentum)
        AvgPool: Pool2D { reduce: Avg, grad: false }
        AvgPoolGrad: Pool2D { reduce: Avg, grad: true }
        BatchMatMul: MatMul { form: Transposes, batched: true }
        BatchMatMulExt: MatMul { form: Plain, batched: true }
        BatchNorm: BatchNorm { grad: false }
        BatchNormGrad: BatchNorm { grad: true }
        BiasAdd: BiasAdd
        BiasAddGrad: SumTo { bias_grad: true }
        BroadcastTo: Strided(BroadcastTo)
        Cast: Cast
        Concat: Concat { stack: false }
        Conv2D: Conv2D(Forward)
        Conv2DBackpropFilter: Conv2D(FilterGrad)
        Conv2DBackpropInput: Conv2D(InputGrad)
        Conv2DTranspose: Conv2D(InputGrad)
        Dense: MatMul { form: Dense, batched: false }
        ExpandDims: View
        Flatten: View
        Gather: Gather
        Identity: View
        LayerNorm: RowNorm(Layer)
        LayerNormExt: RowNorm(LayerExt)
        LayerNormGrad: RowNorm(LayerGrad)
        Load: View
        LogSoftmax: Softmax { log: true, grad: false }
        LogSoftmaxGrad: Softmax { log: true, grad: true }
        MatMul: MatMul { form: Transposes, batched: false }
        MatMulExt: MatMul { form: Plain, batched: true }
        Max: Reduce { kind: Max, axes: All }
        MaxPool: Pool2D { reduce: Max, grad: false }
        MaxPoolGrad: Pool2D { reduce: Max, grad: true }
        MeanExt: Reduce { kind: Mean, axes: Dim }
        Min: Reduce { kind: Min, axes: All }
        Mm: MatMul { form: Plain, batched: false }
        Narrow: Strided(Narrow)
        ProdExt: Reduce { kind: Prod, axes: Dim }
        ReduceAll: Reduce { kind: All, axes: Axis }
        ReduceAny: Reduce { kind: Any, axes: Axis }
        ReduceMax: Reduce { kind: Max, axes: Axis }
        ReduceMean: Reduce { kind: Mean, axes: Axis }
        ReduceMin: Reduce { kind: Min, axes: Axis }
        ReduceProd: Reduce { kind: Prod, axes: Axis }
        ReduceSum: Reduce { kind: Sum, axes: Axis }
        Reshape: View
        RmsNorm: RowNorm(Rms)
        SGD: Optimizer(Sgd)
        Select: Select
        Shape: ShapeOf
        Slice: Strided(Slice)
        SliceExt: Strided(SliceExt)
        Softmax: Softmax { log: false, grad: false }
        SoftmaxBackward: Softmax { log: false, grad: true }
        SparseSoftmaxCrossEntropyWithLogits: SparseCrossEntropy
        Split: Split
        Squeeze: View
        Stack: Concat { stack: true }
        StridedSlice: Strided(StridedSlice)
        SumExt: Reduce { kind: Sum, axes: Dim }
        Tile: Strided(Tile)
        Transpose: Strided(Transpose)
        _BroadcastToShapeOf: BroadcastLike
        _ReshapeLike: View
        _SumToShapeOf: SumTo { bias_grad: false }
    "#]]
    .assert_eq(&listing);
}

fn has_attr(op: &OpDef, name: &str) -> bool {
    op.param(name).is_some_and(|p| !p.is_input())
}

/// What the family kernels read, every member has.
#[test]
fn members_have_what_their_family_kernels_read() {
    for (name, family) in members() {
        let op = ops::lookup(name).unwrap();
        let inputs = op.input_count();
        match family {
            Family::Pool2D { grad, .. } => {
                assert_eq!(inputs, if grad { 3 } else { 1 }, "{name}");
                for a in ["kernel_size", "strides", "pad_mode"] {
                    assert!(has_attr(op, a), "{name}: {a}");
                }
            }
            Family::Conv2D(role) => {
                for a in [
                    "out_channel",
                    "kernel_size",
                    "pad_mode",
                    "pad",
                    "dilation",
                    "group",
                ] {
                    assert!(has_attr(op, a), "{name}: {a}");
                }
                assert!(inputs >= 2, "{name}");
                if role == ConvRole::FilterGrad {
                    assert_eq!(inputs, 3, "{name}: (dout, x, filter_sizes)");
                }
            }
            Family::Softmax { log, grad } => {
                let axis = if grad && !log { "dim" } else { "axis" };
                assert!(has_attr(op, axis), "{name}: {axis}");
                assert_eq!(inputs, if grad { 2 } else { 1 }, "{name}");
            }
            Family::RowNorm(norm) => {
                let eps = if norm == RowNorm::LayerExt {
                    "eps"
                } else {
                    "epsilon"
                };
                assert!(has_attr(op, eps), "{name}: {eps}");
            }
            Family::BatchNorm { grad } => assert_eq!(inputs, if grad { 6 } else { 5 }, "{name}"),
            Family::Reduce { axes, .. } => {
                assert_eq!(inputs, 1, "{name}");
                match axes {
                    ReduceAxes::Axis => assert!(has_attr(op, "axis"), "{name}: axis"),
                    ReduceAxes::Dim => assert!(has_attr(op, "dim"), "{name}: dim"),
                    ReduceAxes::All => {}
                }
            }
            Family::Strided(which) => {
                let attrs: &[&str] = match which {
                    Strided::Transpose => &["perm"],
                    Strided::BroadcastTo => &["shape"],
                    Strided::Tile => &["multiples"],
                    Strided::Slice => &["begin", "size"],
                    Strided::Narrow => &["dim", "start", "length"],
                    Strided::SliceExt => &["dim", "start", "end", "step"],
                    Strided::StridedSlice => &["begin", "end", "strides"],
                };
                for a in attrs {
                    assert!(has_attr(op, a), "{name}: {a}");
                }
            }
            Family::Concat { .. } | Family::Split => assert!(has_attr(op, "axis"), "{name}: axis"),
            Family::Gather => assert!(inputs >= 2, "{name}"),
            Family::Cast => assert!(has_attr(op, "dtype"), "{name}: dtype"),
            Family::MatMul { form, .. } => {
                assert!(inputs >= 2, "{name}");
                if form == MatMulForm::Transposes {
                    for a in ["transpose_a", "transpose_b"] {
                        assert!(has_attr(op, a), "{name}: {a}");
                    }
                }
                if form == MatMulForm::Dense {
                    assert_eq!(inputs, 3, "{name}: (x, w, b)");
                }
            }
            Family::SumTo { bias_grad } => assert_eq!(inputs, if bias_grad { 1 } else { 2 }),
            Family::BroadcastLike => assert_eq!(inputs, 2, "{name}: (grad, like)"),
            Family::Select => assert_eq!(inputs, 3, "{name}: (cond, x, y)"),
            Family::BiasAdd => assert_eq!(inputs, 2, "{name}: (x, bias)"),
            Family::SparseCrossEntropy => assert_eq!(inputs, 2, "{name}: (logits, labels)"),
            Family::View | Family::ShapeOf | Family::Optimizer(_) => assert!(inputs >= 1, "{name}"),
            Family::Other => unreachable!(),
        }
    }
}

/// The records `gradgen` draws specially: never, or as smooth unary ops.
#[test]
fn gradgen_traits() {
    let mut by: Vec<_> = ops::registry()
        .values()
        .filter(|op| op.traits.gradgen != ops::Gradgen::Any)
        .map(|op| (format!("{:?}", op.traits.gradgen), op.name))
        .collect();
    by.sort();
    let listing: String = by.iter().map(|(g, n)| format!("{g}: {n}\n")).collect();
    expect_test::expect![[r#"
        Avoid: BatchNorm
        Avoid: BatchNormExt
        Avoid: Cholesky
        Avoid: Dropout
        Avoid: Dropout2D
        Avoid: Dropout3D
        Avoid: Embedding
        Avoid: EmbeddingLookup
        Avoid: LSTM
        Avoid: LayerNorm
        Avoid: MatrixDeterminant
        Avoid: MatrixInverse
        Avoid: NLLLoss
        Avoid: PadV3
        Avoid: SoftmaxCrossEntropyWithLogits
        Avoid: SparseSoftmaxCrossEntropyWithLogits
        SmoothUnary: Asinh
        SmoothUnary: Atan
        SmoothUnary: Cos
        SmoothUnary: Cosh
        SmoothUnary: Erf
        SmoothUnary: Exp
        SmoothUnary: Expm1
        SmoothUnary: GeLU
        SmoothUnary: Mish
        SmoothUnary: Neg
        SmoothUnary: SiLU
        SmoothUnary: Sigmoid
        SmoothUnary: Sin
        SmoothUnary: Sinh
        SmoothUnary: Softplus
        SmoothUnary: Softsign
        SmoothUnary: Square
        SmoothUnary: Tanh
    "#]]
    .assert_eq(&listing);
    for op in ops::registry().values() {
        if op.traits.gradgen == ops::Gradgen::SmoothUnary {
            assert_eq!(op.input_count(), 1, "{}", op.name);
            assert!(op.grad.is_some(), "{}: differentiable", op.name);
            assert!(op.attrs().next().is_none(), "{}: no attributes", op.name);
        }
    }
}
