//! The kernel families of the records: backends with family kernels (the
//! compiled plans, the GPU) and the exporter match on these, so a record in
//! the wrong family, or a family member without the inputs and attributes its
//! kernels read, shows here.

use ops::{ConvRole, Family, OpDef, RowNorm};

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
        AvgPool: Pool2D { reduce: Avg, grad: false }
        AvgPoolGrad: Pool2D { reduce: Avg, grad: true }
        BatchNorm: BatchNorm { grad: false }
        BatchNormGrad: BatchNorm { grad: true }
        Conv2D: Conv2D(Forward)
        Conv2DBackpropFilter: Conv2D(FilterGrad)
        Conv2DBackpropInput: Conv2D(InputGrad)
        Conv2DTranspose: Conv2D(InputGrad)
        LayerNorm: RowNorm(Layer)
        LayerNormExt: RowNorm(LayerExt)
        LayerNormGrad: RowNorm(LayerGrad)
        LogSoftmax: Softmax { log: true, grad: false }
        LogSoftmaxGrad: Softmax { log: true, grad: true }
        MaxPool: Pool2D { reduce: Max, grad: false }
        MaxPoolGrad: Pool2D { reduce: Max, grad: true }
        RmsNorm: RowNorm(Rms)
        Softmax: Softmax { log: false, grad: false }
        SoftmaxBackward: Softmax { log: false, grad: true }
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
