//! Second order through the primitives whose first-order rules emit gradient
//! helpers or backward primitives without a rule of their own
//! (`LayerNormGrad`, `BatchNormGrad`, `_DenseGrad`, ...): `hvp(f)`
//! and `grad(grad(f))` run by the executor (the helpers' expansions inlined
//! where the gradient is differentiated again) against central finite
//! differences of `grad(f)`, in f64.

use exec::{ExecOptions, Executor, Value};
use tensor::{DType, Tensor};

/// A deterministic tensor with values in [-1, 1).
fn rand(shape: &[usize], seed: u64) -> Tensor {
    let n: usize = shape.iter().product();
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let data = (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
        })
        .collect();
    Tensor::from_f64(shape.to_vec(), data).unwrap()
}

/// A deterministic tensor with values in [0.5, 1.5) (variances, weights).
fn pos(shape: &[usize], seed: u64) -> Tensor {
    let r = rand(shape, seed).to_f64_vec();
    Tensor::from_f64(shape.to_vec(), r.iter().map(|v| v * 0.5 + 1.0).collect()).unwrap()
}

fn t(shape: &[usize], data: &[f64]) -> Tensor {
    Tensor::from_f64(shape.to_vec(), data.to_vec()).unwrap()
}

struct Case {
    name: &'static str,
    /// The parameters of `f` with their types, the first differentiated.
    params: &'static str,
    /// `f`'s body.
    body: &'static str,
    args: Vec<Tensor>,
}

impl Case {
    fn new(
        name: &'static str,
        params: &'static str,
        body: &'static str,
        args: Vec<Tensor>,
    ) -> Case {
        Case {
            name,
            params,
            body,
            args,
        }
    }

    /// `f`'s parameters as `(name, type)`.
    fn params(&self) -> Vec<(&str, &str)> {
        let mut out = Vec::new();
        let (mut depth, mut start) = (0, 0);
        let text = self.params;
        for (i, ch) in text.char_indices() {
            match ch {
                '[' => depth += 1,
                ']' => depth -= 1,
                ',' if depth == 0 => {
                    out.push(&text[start..i]);
                    start = i + 1;
                }
                _ => {}
            }
        }
        out.push(&text[start..]);
        out.iter()
            .map(|p| {
                let (n, ty) = p.split_once(':').unwrap();
                (n.trim(), ty.trim())
            })
            .collect()
    }

    fn source(&self) -> String {
        let params = self.params();
        let args = params
            .iter()
            .map(|(n, _)| *n)
            .collect::<Vec<_>>()
            .join(", ");
        let (n0, ty0) = params[0];
        format!(
            "graph f({p}) {{\n{b}\n}}\ngraph g({p}) {{\n  return grad(f)({args})\n}}\n\
             graph h({p}, dir: {ty0}) {{\n  return hvp(f)({args}, dir)\n}}\n\
             graph gg({p}) {{\n  return grad(fn({n0}) => ReduceSum(grad(f)({args}) * grad(f)({args})))({n0})\n}}\n",
            p = self.params,
            b = self.body,
        )
    }
}

fn tensor_of(v: &Value) -> Tensor {
    v.as_tensor().expect("a tensor").tensor().clone()
}

fn check(case: &Case) -> Result<(), String> {
    let src = case.source();
    let analysed = analysis::analyze(&src);
    if let Some(d) = analysed
        .diagnostics
        .iter()
        .find(|d| d.severity == analysis::Severity::Error)
    {
        return Err(format!("{}: {}\n{src}", case.name, d.message));
    }
    let program = analysed.source.program();
    let mut ex = Executor::new(&program, ExecOptions::default());
    let args: Vec<Value> = case.args.iter().cloned().map(Value::tensor).collect();
    let x = &case.args[0];
    let v = rand(x.shape(), 99);
    let mut with_v = args.clone();
    with_v.push(Value::tensor(v.clone()));
    let hv = ex
        .call("h", with_v)
        .map_err(|e| format!("{}: hvp fails: {}", case.name, e.message))?;
    let grad_at = |ex: &mut Executor, s: f64| -> Result<Vec<f64>, String> {
        let moved: Vec<f64> = x
            .to_f64_vec()
            .iter()
            .zip(v.to_f64_vec())
            .map(|(a, d)| a + s * d)
            .collect();
        let mut a = args.clone();
        a[0] = Value::tensor(Tensor::from_f64(x.shape().to_vec(), moved).unwrap());
        ex.call("g", a)
            .map(|g| tensor_of(&g).to_f64_vec())
            .map_err(|e| format!("{}: grad fails: {}", case.name, e.message))
    };
    let h = 1e-5;
    let (p, m) = (grad_at(&mut ex, h)?, grad_at(&mut ex, -h)?);
    let got = tensor_of(&hv).to_f64_vec();
    let scale = got.iter().fold(1.0f64, |a, b| a.max(b.abs()));
    for (k, (g, (a, b))) in got.iter().zip(p.iter().zip(&m)).enumerate() {
        let fd = (a - b) / (2.0 * h);
        if (g - fd).abs() > 1e-6 * scale {
            return Err(format!(
                "{}: hvp[{k}] = {g}, finite differences {fd}",
                case.name
            ));
        }
    }
    // grad of a function of the gradient (a second derivative the other way
    // round): 2 H g, against finite differences of `Σ g²` along `v`.
    let gg = ex
        .call("gg", args.clone())
        .map_err(|e| format!("{}: grad of grad fails: {}", case.name, e.message))?;
    let norm2 = |g: &[f64]| g.iter().map(|x| x * x).sum::<f64>();
    let fd = (norm2(&p) - norm2(&m)) / (2.0 * h);
    let dot: f64 = tensor_of(&gg)
        .to_f64_vec()
        .iter()
        .zip(v.to_f64_vec())
        .map(|(a, b)| a * b)
        .sum();
    if (dot - fd).abs() > 1e-6 * fd.abs().max(1.0) {
        return Err(format!(
            "{}: grad(Σ grad(f)²)·v = {dot}, finite differences {fd}",
            case.name
        ));
    }
    Ok(())
}

fn cases() -> Vec<Case> {
    let labels = t(&[4], &[2.0, 0.0, 1.0, 2.0]).cast(DType::I64);
    vec![
        Case::new(
            "LayerNorm wrt x",
            "x: f64[3, 4], g: f64[4], b: f64[4]",
            "  (y, m, s) = LayerNorm(x, g, b, begin_norm_axis=1, begin_params_axis=1)\n  return ReduceSum(Sin(y) * y)",
            vec![rand(&[3, 4], 1), rand(&[4], 2), rand(&[4], 3)],
        ),
        Case::new(
            "LayerNorm wrt gamma, rank 3",
            "g: f64[2, 3], x: f64[2, 2, 3], b: f64[2, 3]",
            "  (y, m, s) = LayerNorm(x, g, b, begin_norm_axis=1, begin_params_axis=1)\n  return ReduceSum(Sin(y) * y)",
            vec![rand(&[2, 3], 4), rand(&[2, 2, 3], 5), rand(&[2, 3], 6)],
        ),
        Case::new(
            "BatchNorm training, rank 4",
            "x: f64[3, 2, 2, 2], s: f64[2], b: f64[2], m: f64[2], v: f64[2]",
            "  (y, a, c, d, e) = BatchNorm(x, s, b, m, v, is_training=true)\n  return ReduceSum(Sin(y) * y)",
            vec![rand(&[3, 2, 2, 2], 7), rand(&[2], 8), rand(&[2], 9), rand(&[2], 10), pos(&[2], 11)],
        ),
        Case::new(
            "BatchNorm training, rank 2, wrt scale",
            "s: f64[3], x: f64[4, 3], b: f64[3], m: f64[3], v: f64[3]",
            "  (y, a, c, d, e) = BatchNorm(x, s, b, m, v, is_training=true)\n  return ReduceSum(Sin(y) * y)",
            vec![rand(&[3], 12), rand(&[4, 3], 13), rand(&[3], 14), rand(&[3], 15), pos(&[3], 16)],
        ),
        Case::new(
            "BatchNorm inference",
            "x: f64[4, 3], s: f64[3], b: f64[3], m: f64[3], v: f64[3]",
            "  (y, a, c, d, e) = BatchNorm(x, s, b, m, v)\n  return ReduceSum(Sin(y) * y)",
            vec![rand(&[4, 3], 17), rand(&[3], 18), rand(&[3], 19), rand(&[3], 20), pos(&[3], 21)],
        ),
        Case::new(
            "Dense wrt x",
            "x: f64[2, 3], w: f64[4, 3], b: f64[4]",
            "  return ReduceSum(Sin(Dense(x, w, b)))",
            vec![rand(&[2, 3], 22), rand(&[4, 3], 23), rand(&[4], 24)],
        ),
        Case::new(
            "Dense wrt weight, rank-3 input",
            "w: f64[4, 3], x: f64[2, 2, 3], b: f64[4]",
            "  return ReduceSum(Sin(Dense(x, w, b)))",
            vec![rand(&[4, 3], 25), rand(&[2, 2, 3], 26), rand(&[4], 27)],
        ),
        Case::new(
            "PReLU wrt x",
            "x: f64[2, 3, 2], w: f64[3]",
            "  return ReduceSum(Sin(PReLU(x, w)))",
            vec![rand(&[2, 3, 2], 28), rand(&[3], 29)],
        ),
        Case::new(
            "PReLU wrt weight",
            "w: f64[3], x: f64[2, 3, 2]",
            "  return ReduceSum(Sin(PReLU(x, w)))",
            vec![rand(&[3], 30), rand(&[2, 3, 2], 31)],
        ),
        Case::new(
            "NLLLoss wrt logits",
            "z: f64[4, 3], w: f64[3], y: i64[4]",
            "  (l, t) = NLLLoss(LogSoftmax(z), y, w)\n  return l",
            vec![rand(&[4, 3], 32), pos(&[3], 33), labels.clone()],
        ),
        Case::new(
            "NLLLoss wrt weight",
            "w: f64[3], z: f64[4, 3], y: i64[4]",
            "  (l, t) = NLLLoss(z, y, w)\n  return Sin(l) + t * l",
            vec![pos(&[3], 34), rand(&[4, 3], 35), labels],
        ),
        Case::new(
            "ReduceProd",
            "x: f64[2, 3]",
            "  return ReduceSum(Sin(ReduceProd(x, 1)))",
            vec![rand(&[2, 3], 36)],
        ),
        Case::new(
            "ReduceProd with zeros",
            "x: f64[2, 3]",
            "  return ReduceSum(Sin(ReduceProd(x, 1, true) * 3))",
            vec![t(&[2, 3], &[0.0, 0.5, -0.7, 0.0, 0.0, 0.9])],
        ),
        Case::new(
            "GLU",
            "x: f64[2, 4]",
            "  return ReduceSum(Sin(GLU(x, -1)))",
            vec![rand(&[2, 4], 37)],
        ),
        Case::new(
            "RmsNorm",
            "x: f64[3, 4], g: f64[4]",
            "  (y, r) = RmsNorm(x, g)\n  return ReduceSum(Sin(y)) + ReduceSum(r)",
            vec![rand(&[3, 4], 38), rand(&[4], 39)],
        ),
        Case::new(
            "GroupNorm",
            "x: f64[2, 4, 3], w: f64[4], b: f64[4]",
            "  (y, m, r) = GroupNorm(x, 2, w, b)\n  return ReduceSum(Sin(y) * y) + ReduceSum(m * r)",
            vec![rand(&[2, 4, 3], 40), rand(&[4], 41), rand(&[4], 42)],
        ),
        Case::new(
            "InstanceNorm",
            "x: f64[2, 3, 4], g: f64[3], b: f64[3], m: f64[3], v: f64[3]",
            "  (y, a, c) = InstanceNorm(x, g, b, m, v)\n  return ReduceSum(Sin(y) * y) + ReduceSum(a * c)",
            vec![rand(&[2, 3, 4], 43), rand(&[3], 44), rand(&[3], 45), rand(&[3], 46), pos(&[3], 47)],
        ),
        Case::new(
            "LayerNormExt",
            "x: f64[2, 3, 4], w: f64[3, 4], b: f64[3, 4]",
            "  (y, m, r) = LayerNormExt(x, (3, 4), w, b)\n  return ReduceSum(Sin(y) * y) + ReduceSum(m * r)",
            vec![rand(&[2, 3, 4], 48), rand(&[3, 4], 49), rand(&[3, 4], 50)],
        ),
        Case::new(
            "BatchNormExt training",
            "x: f64[4, 3], w: f64[3], b: f64[3], m: f64[3], v: f64[3]",
            "  (y, a, c) = BatchNormExt(x, w, b, m, v, training=true)\n  return ReduceSum(Sin(y) * y) + ReduceSum(a * c)",
            vec![rand(&[4, 3], 51), rand(&[3], 52), rand(&[3], 53), rand(&[3], 54), pos(&[3], 55)],
        ),
        Case::new(
            "BCEWithLogitsLoss wrt logits, with weights",
            "x: f64[2, 3], t: f64[2, 3], w: f64[3], p: f64[2, 1]",
            "  return Sin(BCEWithLogitsLoss(x, t, w, p)) * 3",
            vec![rand(&[2, 3], 56), pos(&[2, 3], 57), pos(&[3], 58), pos(&[2, 1], 59)],
        ),
        Case::new(
            "BCEWithLogitsLoss wrt weight",
            "w: f64[3], x: f64[2, 3], t: f64[2, 3], p: f64[2, 1]",
            "  return Sin(BCEWithLogitsLoss(x, t, w, p, reduction=\"sum\"))",
            vec![pos(&[3], 60), rand(&[2, 3], 61), pos(&[2, 3], 62), pos(&[2, 1], 63)],
        ),
        Case::new(
            "BinaryCrossEntropy wrt input",
            "x: f64[2, 3], t: f64[2, 3], w: f64[2, 3]",
            "  return Sin(BinaryCrossEntropy(x, t, w))",
            vec![t(&[2, 3], &[0.2, 0.7, 0.4, 0.9, 0.35, 0.6]), pos(&[2, 3], 64).cast(DType::F64), pos(&[2, 3], 65)],
        ),
        Case::new(
            "MSELossExt, broadcast target",
            "x: f64[2, 3], t: f64[3]",
            "  return Sin(MSELossExt(x, t)) * 2",
            vec![rand(&[2, 3], 66), rand(&[3], 67)],
        ),
        Case::new(
            "SmoothL1Loss",
            "x: f64[3, 4], t: f64[3, 4]",
            "  return ReduceSum(Sin(SmoothL1Loss(x, t, beta=0.5, reduction=\"none\")))",
            vec![rand(&[3, 4], 68), rand(&[3, 4], 69)],
        ),
        Case::new(
            "KLDivLoss wrt target",
            "t: f64[2, 3], x: f64[2, 3]",
            "  return Sin(KLDivLoss(x, t, reduction=\"batchmean\"))",
            vec![pos(&[2, 3], 70), rand(&[2, 3], 71)],
        ),
        Case::new(
            "SoftMarginLoss",
            "x: f64[2, 3], t: f64[2, 3]",
            "  return Sin(SoftMarginLoss(x, t)) * 2",
            vec![rand(&[2, 3], 72), rand(&[2, 3], 73)],
        ),
        Case::new(
            "SigmoidCrossEntropyWithLogits",
            "x: f64[2, 3], t: f64[2, 3]",
            "  return ReduceSum(Sin(SigmoidCrossEntropyWithLogits(x, t)))",
            vec![rand(&[2, 3], 74), pos(&[2, 3], 75)],
        ),
        Case::new(
            "LRN",
            "x: f64[2, 5, 2, 2]",
            "  return ReduceSum(Sin(LRN(x, depth_radius=1, bias=1.5, alpha=0.7, beta=0.75)))",
            vec![rand(&[2, 5, 2, 2], 78)],
        ),
        Case::new(
            "Cholesky",
            "x: f64[3, 3], b: f64[3, 3]",
            "  return ReduceSum(Sin(Cholesky(MatMul(x, x, transpose_b=true) + b)))",
            vec![rand(&[3, 3], 79), t(&[3, 3], &[2.0, 0.3, 0.1, 0.3, 2.5, 0.2, 0.1, 0.2, 3.0])],
        ),
        Case::new(
            "Cholesky, upper",
            "x: f64[3, 3], b: f64[3, 3]",
            "  return ReduceSum(Sin(Cholesky(MatMul(x, x, transpose_b=true) + b, upper=true)))",
            vec![rand(&[3, 3], 80), t(&[3, 3], &[2.0, 0.3, 0.1, 0.3, 2.5, 0.2, 0.1, 0.2, 3.0])],
        ),
        Case::new(
            "MaxPool",
            "x: f64[1, 2, 4, 4]",
            "  return ReduceSum(Sin(MaxPool(x * x, kernel_size=2, strides=2, pad_mode=\"VALID\")))",
            vec![rand(&[1, 2, 4, 4], 76)],
        ),
        Case::new(
            "MaxPool, overlapping windows",
            "x: f64[1, 1, 5, 5]",
            "  return ReduceSum(Sin(MaxPool(Sin(x), kernel_size=3, strides=1)))",
            vec![rand(&[1, 1, 5, 5], 77)],
        ),
        // MaxPoolGrad's rule is MindSpore's (MaxPoolGradGrad), for every
        // padding: "same" windows clipped at the border too.
        Case::new(
            "MaxPool, same padding",
            "x: f64[1, 2, 3, 3]",
            "  return ReduceSum(Sin(MaxPool(x * x, kernel_size=2, strides=2, pad_mode=\"same\")))",
            vec![rand(&[1, 2, 3, 3], 78)],
        ),
        Case::new(
            "AvgPool, same padding",
            "x: f64[1, 2, 5, 4]",
            "  return ReduceSum(Sin(AvgPool(x * x, kernel_size=3, strides=2, pad_mode=\"same\")))",
            vec![rand(&[1, 2, 5, 4], 81)],
        ),
        Case::new(
            "AdaptiveAvgPool2D",
            "x: f64[1, 2, 5, 4]",
            "  return ReduceSum(Sin(AdaptiveAvgPool2D(x * x, output_size=(3, 2))))",
            vec![rand(&[1, 2, 5, 4], 82)],
        ),
    ]
}

/// Where a helper has no expansion, second order is refused with the
/// helper's name, never a wrong number.
#[test]
fn second_order_through_helpers_without_an_expansion_is_refused() {
    let (shape, body, helper) = (
        "[2, 1, 2]",
        "ReduceSum(Sin(LSTM(x, ReduceSum(x, 0, true), ReduceSum(x, 0, true), Ones((40, 1, 1), f64), 2, 2, 1, true, false, 0.0)[0]))",
        "LSTMGrad",
    );
    let src = format!(
        "graph f(x: f64{shape}) {{\n  return {body}\n}}\n\
         graph h(x: f64{shape}, v: f64{shape}) {{\n  return hvp(f)(x, v)\n}}\n"
    );
    let a = analysis::analyze(&src);
    let errors: Vec<&str> = a
        .diagnostics
        .iter()
        .filter(|d| d.severity == analysis::Severity::Error)
        .map(|d| d.message.as_str())
        .collect();
    assert!(errors.is_empty(), "{errors:?}\n{src}");
    let mut ex = Executor::new(&a.source.program(), ExecOptions::default());
    let dims: Vec<usize> = shape
        .trim_matches(['[', ']'])
        .split(", ")
        .map(|d| d.parse().unwrap())
        .collect();
    let x = Value::tensor(rand(&dims, 5));
    let e = ex
        .call("h", vec![x.clone(), x])
        .expect_err("second order is refused");
    assert!(
        e.message
            .contains(&format!("`{helper}` has no gradient rule")),
        "{}",
        e.message
    );
}

#[test]
fn second_order_through_gradient_helpers_matches_finite_differences() {
    let failures: Vec<String> = cases().iter().filter_map(|c| check(c).err()).collect();
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
