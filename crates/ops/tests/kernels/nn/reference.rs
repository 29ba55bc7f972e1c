//! Kernels and shape rules of the neural-network primitives against direct
//! reference implementations (naive loops), on odd shapes, and their errors.

use ops::eager;
use ops::{AttrValue, ErrorTarget, KValue, OpError};
use tensor::{DType, Tensor};
use test_support::ops::{assert_err, int, ints, kv, rnd, run, run_err, run_tuple, s};

/// `Conv2DBackpropInput(dout, w, shape of x)` or
/// `Conv2DBackpropFilter(dout, x, shape of w)`: the shape as `Shape` gives it
/// (a tuple of i64 scalars), as the gradient rule passes it.
fn backprop(
    op: &str,
    a: &Tensor,
    b: &Tensor,
    shape_of: &Tensor,
    attrs: Vec<(&'static str, AttrValue)>,
) -> Tensor {
    let sizes = KValue::Tuple(
        shape_of
            .shape()
            .iter()
            .map(|&d| eager::ints(DType::I64, &[], &[d as i64]))
            .collect(),
    );
    match eager::call(op, &[kv(a), kv(b), sizes], attrs) {
        Ok(KValue::Tensor(t)) => t,
        Ok(_) => panic!("{op} returned a tuple"),
        Err(e) => panic!("{op}: {}", e.message),
    }
}

fn assert_close(got: &Tensor, want: &[f64], tol: f64, what: &str) {
    test_support::ops::assert_close(what, got, want, tol);
}

// ---------------------------------------------------------------------------
// Convolution.

#[derive(Debug, Clone, Copy)]
struct Conv {
    x: [usize; 4],
    w: [usize; 4],
    stride: (usize, usize),
    dilation: (usize, usize),
    /// "valid", "same" or "pad".
    mode: &'static str,
    pad: [usize; 4],
    group: usize,
}

impl Conv {
    fn new(x: [usize; 4], w: [usize; 4]) -> Conv {
        Conv {
            x,
            w,
            stride: (1, 1),
            dilation: (1, 1),
            mode: "valid",
            pad: [0; 4],
            group: 1,
        }
    }

    fn attrs(&self) -> Vec<(&'static str, AttrValue)> {
        vec![
            ("out_channel", int(self.w[0] as i64)),
            ("kernel_size", ints(&[self.w[2] as i64, self.w[3] as i64])),
            (
                "stride",
                ints(&[self.stride.0 as i64, self.stride.1 as i64]),
            ),
            (
                "dilation",
                ints(&[self.dilation.0 as i64, self.dilation.1 as i64]),
            ),
            ("pad_mode", s(self.mode)),
            ("pad", ints(&self.pad.map(|p| p as i64))),
            ("group", int(self.group as i64)),
        ]
    }

    /// Output size and padding before, per MindSpore's formulas, written
    /// out independently of the kernel.
    fn out(
        &self,
        size: usize,
        k: usize,
        s: usize,
        d: usize,
        pads: (usize, usize),
    ) -> (usize, usize) {
        let eff = (k - 1) * d + 1;
        match self.mode {
            "valid" => ((size - eff) / s + 1, 0),
            "same" => {
                let o = size.div_ceil(s);
                let total = ((o - 1) * s + eff).saturating_sub(size);
                (o, total / 2)
            }
            _ => ((size + pads.0 + pads.1 - eff) / s + 1, pads.0),
        }
    }

    fn geometry(&self) -> (usize, usize, usize, usize) {
        let (oh, pt) = self.out(
            self.x[2],
            self.w[2],
            self.stride.0,
            self.dilation.0,
            (self.pad[0], self.pad[1]),
        );
        let (ow, pl) = self.out(
            self.x[3],
            self.w[3],
            self.stride.1,
            self.dilation.1,
            (self.pad[2], self.pad[3]),
        );
        (oh, ow, pt, pl)
    }

    /// Calls `f(n, o, oy, ox, c, iy, ix, ki, kj)` for every in-image product term.
    fn each(&self, mut f: impl FnMut([usize; 9])) {
        let [n, c, h, w] = self.x;
        let [oc, cg, kh, kw] = self.w;
        let (oh, ow, pt, pl) = self.geometry();
        let ocg = oc / self.group;
        for b in 0..n {
            for o in 0..oc {
                let g = o / ocg;
                for oy in 0..oh {
                    for ox in 0..ow {
                        for ci in 0..cg {
                            for ki in 0..kh {
                                for kj in 0..kw {
                                    let iy = (oy * self.stride.0 + ki * self.dilation.0) as isize
                                        - pt as isize;
                                    let ix = (ox * self.stride.1 + kj * self.dilation.1) as isize
                                        - pl as isize;
                                    if iy >= 0 && ix >= 0 && (iy as usize) < h && (ix as usize) < w
                                    {
                                        f([
                                            b,
                                            o,
                                            oy,
                                            ox,
                                            g * cg + ci,
                                            iy as usize,
                                            ix as usize,
                                            ki,
                                            kj,
                                        ]);
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        let _ = c;
    }

    fn reference(&self, x: &[f64], w: &[f64]) -> (Vec<usize>, Vec<f64>) {
        let [_, c, h, wd] = self.x;
        let [oc, cg, kh, kw] = self.w;
        let (oh, ow, _, _) = self.geometry();
        let mut out = vec![0.0; self.x[0] * oc * oh * ow];
        self.each(|[b, o, oy, ox, ch, iy, ix, ki, kj]| {
            out[((b * oc + o) * oh + oy) * ow + ox] +=
                x[((b * c + ch) * h + iy) * wd + ix] * w[((o * cg + ch % cg) * kh + ki) * kw + kj];
        });
        (vec![self.x[0], oc, oh, ow], out)
    }

    fn reference_grads(&self, x: &[f64], w: &[f64], dout: &[f64]) -> (Vec<f64>, Vec<f64>) {
        let [_, c, h, wd] = self.x;
        let [oc, cg, kh, kw] = self.w;
        let (oh, ow, _, _) = self.geometry();
        let mut dx = vec![0.0; x.len()];
        let mut dw = vec![0.0; w.len()];
        self.each(|[b, o, oy, ox, ch, iy, ix, ki, kj]| {
            let d = dout[((b * oc + o) * oh + oy) * ow + ox];
            let xi = ((b * c + ch) * h + iy) * wd + ix;
            let wi = ((o * cg + ch % cg) * kh + ki) * kw + kj;
            dx[xi] += d * w[wi];
            dw[wi] += d * x[xi];
        });
        (dx, dw)
    }
}

fn conv_cases() -> Vec<Conv> {
    let mut cases = vec![
        Conv::new([2, 3, 7, 6], [4, 3, 3, 2]),
        Conv::new([1, 1, 1, 1], [1, 1, 1, 1]),
        Conv::new([1, 2, 5, 5], [3, 2, 5, 5]),
        Conv::new([0, 2, 5, 5], [3, 2, 3, 3]),
        Conv::new([3, 1, 9, 1], [2, 1, 3, 1]),
    ];
    let base = Conv::new([2, 4, 9, 8], [6, 4, 3, 3]);
    cases.push(Conv {
        mode: "same",
        ..base
    });
    cases.push(Conv {
        mode: "same",
        stride: (2, 3),
        ..base
    });
    cases.push(Conv {
        mode: "same",
        w: [6, 4, 4, 2],
        ..base
    });
    cases.push(Conv {
        stride: (2, 2),
        ..base
    });
    cases.push(Conv {
        dilation: (2, 3),
        ..base
    });
    cases.push(Conv {
        mode: "same",
        dilation: (2, 2),
        stride: (2, 1),
        ..base
    });
    cases.push(Conv {
        mode: "pad",
        pad: [1, 2, 0, 3],
        ..base
    });
    cases.push(Conv {
        mode: "pad",
        pad: [2, 2, 2, 2],
        stride: (3, 2),
        dilation: (2, 1),
        ..base
    });
    cases.push(Conv {
        group: 2,
        w: [6, 2, 3, 3],
        ..base
    });
    cases.push(Conv {
        group: 4,
        w: [8, 1, 3, 3],
        mode: "same",
        stride: (2, 2),
        ..base
    });
    // Larger than one im2col chunk: several batch chunks.
    cases.push(Conv {
        x: [5, 32, 40, 40],
        w: [4, 32, 3, 3],
        ..Conv::new([0; 4], [0; 4])
    });
    cases
}

#[test]
fn conv2d_matches_direct_convolution() {
    for (k, case) in conv_cases().into_iter().enumerate() {
        let x = rnd(&case.x, 100 + k as u64);
        let w = rnd(&case.w, 200 + k as u64);
        let (shape, want) = case.reference(&x.to_f64_vec(), &w.to_f64_vec());
        let y = run("Conv2D", &[&x, &w], case.attrs());
        assert_eq!(y.shape(), shape.as_slice(), "{case:?}");
        assert_close(&y, &want, 1e-12, &format!("{case:?}"));
        // f32 within MindSpore's tolerance.
        let y32 = run(
            "Conv2D",
            &[&x.cast(DType::F32), &w.cast(DType::F32)],
            case.attrs(),
        );
        assert_eq!(y32.dtype(), DType::F32);
        assert_close(&y32, &want, 1e-4, &format!("f32 {case:?}"));
    }
}

#[test]
fn conv2d_backprops_match_direct_loops() {
    for (k, case) in conv_cases().into_iter().enumerate() {
        let x = rnd(&case.x, 300 + k as u64);
        let w = rnd(&case.w, 400 + k as u64);
        let y = run("Conv2D", &[&x, &w], case.attrs());
        let dout = rnd(y.shape(), 500 + k as u64);
        let (dx_want, dw_want) =
            case.reference_grads(&x.to_f64_vec(), &w.to_f64_vec(), &dout.to_f64_vec());
        let dx = backprop("Conv2DBackpropInput", &dout, &w, &x, case.attrs());
        let dw = backprop("Conv2DBackpropFilter", &dout, &x, &w, case.attrs());
        assert_eq!(dx.shape(), x.shape());
        assert_eq!(dw.shape(), w.shape());
        assert_close(&dx, &dx_want, 1e-12, &format!("dx {case:?}"));
        assert_close(&dw, &dw_want, 1e-10, &format!("dw {case:?}"));
        let f = |t: &Tensor| t.cast(DType::F32);
        let dw32 = backprop("Conv2DBackpropFilter", &f(&dout), &f(&x), &w, case.attrs());
        assert_close(&dw32, &dw_want, 1e-4, &format!("dw f32 {case:?}"));
    }
}

#[test]
fn conv2d_attribute_errors() {
    let x = rnd(&[1, 4, 6, 6], 1);
    let w = rnd(&[2, 4, 3, 3], 2);
    let base = Conv::new([1, 4, 6, 6], [2, 4, 3, 3]);
    let with = |name: &'static str, v: AttrValue| {
        let mut a = base.attrs();
        a.retain(|(k, _)| *k != name);
        a.push((name, v));
        a
    };
    let e = run_err("Conv2D", &[&x, &w], with("out_channel", int(3)));
    assert_err(
        &e,
        ErrorTarget::Attr("out_channel"),
        &[
            "Conv2D",
            "out_channel",
            "3",
            "[2, 4, 3, 3]",
            "2 output channels",
        ],
    );
    let e = run_err("Conv2D", &[&x, &w], with("kernel_size", int(2)));
    assert_err(
        &e,
        ErrorTarget::Attr("kernel_size"),
        &["(2, 2)", "height of 3"],
    );
    let e = run_err("Conv2D", &[&x, &w], with("stride", int(0)));
    assert_err(
        &e,
        ErrorTarget::Attr("stride"),
        &["Conv2D", "positive", "0"],
    );
    let e = run_err("Conv2D", &[&x, &w], with("dilation", ints(&[1, -1])));
    assert_err(&e, ErrorTarget::Attr("dilation"), &["positive", "(1, -1)"]);
    let e = run_err("Conv2D", &[&x, &w], with("group", int(3)));
    assert_err(&e, ErrorTarget::Attr("group"), &["group", "3"]);
    let e = run_err("Conv2D", &[&x, &w], with("group", int(2)));
    assert_err(
        &e,
        ErrorTarget::Input(1),
        &["4 input channels", "2 per group"],
    );
    let e = run_err("Conv2D", &[&x, &w], with("pad", ints(&[1, 1, 1])));
    assert_err(&e, ErrorTarget::Attr("pad"), &["4 ints", "3 entries"]);
    let e = run_err("Conv2D", &[&x, &w], with("pad", int(1)));
    assert_err(
        &e,
        ErrorTarget::Attr("pad"),
        &["only allowed with pad_mode=\"pad\""],
    );
    let e = run_err("Conv2D", &[&x, &w], with("mode", int(2)));
    assert_err(&e, ErrorTarget::Attr("mode"), &["must be 1"]);
    let e = run_err("Conv2D", &[&x, &w], with("data_format", s("NHWC")));
    assert_err(&e, ErrorTarget::Attr("data_format"), &["NCHW"]);
    // Invalid strings are rejected by the schema check before the shape rule.
    let op = ops::lookup("Conv2D").unwrap();
    let msg = ops::check_attr(op, "pad_mode", &s("full")).unwrap_err();
    assert!(msg.contains("\"valid\", \"same\", \"pad\""), "{msg}");
    assert_eq!(ops::check_attr(op, "pad_mode", &s("SAME")), Ok(s("same")));
    // A kernel larger than the input.
    let small = rnd(&[1, 4, 2, 6], 3);
    let e = run_err("Conv2D", &[&small, &w], base.attrs());
    assert_err(
        &e,
        ErrorTarget::Call,
        &["height", "smaller than the kernel"],
    );
    // Mismatched dtypes and ranks.
    let e = run_err("Conv2D", &[&x, &w.cast(DType::F32)], base.attrs());
    assert_err(&e, ErrorTarget::Input(1), &["one dtype"]);
    let e = run_err("Conv2D", &[&rnd(&[4, 6, 6], 1), &w], base.attrs());
    assert_err(&e, ErrorTarget::Input(0), &["4-D"]);
}

// ---------------------------------------------------------------------------
// Pooling.

/// Output size and padding before of a pooling dimension (independent of the kernel).
fn pool_out(mode: &str, size: usize, k: usize, s: usize) -> (usize, usize) {
    if mode == "same" {
        let o = size.div_ceil(s);
        (o, ((o - 1) * s + k).saturating_sub(size) / 2)
    } else {
        ((size - k) / s + 1, 0)
    }
}

/// Direct pooling: per output cell, the in-image cells of its window.
fn pool_ref(
    x: &Tensor,
    k: (usize, usize),
    st: (usize, usize),
    mode: &str,
    mut f: impl FnMut(usize, &[usize]),
) -> Vec<usize> {
    let [n, c, h, w] = [x.shape()[0], x.shape()[1], x.shape()[2], x.shape()[3]];
    let (oh, pt) = pool_out(mode, h, k.0, st.0);
    let (ow, pl) = pool_out(mode, w, k.1, st.1);
    for p in 0..n * c {
        for oy in 0..oh {
            for ox in 0..ow {
                let mut cells = Vec::new();
                for i in 0..k.0 {
                    for j in 0..k.1 {
                        let iy = (oy * st.0 + i) as isize - pt as isize;
                        let ix = (ox * st.1 + j) as isize - pl as isize;
                        if iy >= 0 && ix >= 0 && (iy as usize) < h && (ix as usize) < w {
                            cells.push(p * h * w + iy as usize * w + ix as usize);
                        }
                    }
                }
                f((p * oh + oy) * ow + ox, &cells);
            }
        }
    }
    vec![n, c, oh, ow]
}

/// `(input shape, kernel, strides, pad_mode)`.
type PoolCase = ([usize; 4], (usize, usize), (usize, usize), &'static str);

fn pool_cases() -> Vec<PoolCase> {
    vec![
        ([2, 3, 6, 7], (2, 2), (2, 2), "valid"),
        ([2, 3, 6, 7], (2, 2), (2, 2), "same"),
        ([1, 2, 5, 5], (3, 3), (1, 1), "same"),
        ([1, 2, 5, 8], (3, 2), (2, 3), "same"),
        ([1, 1, 1, 1], (1, 1), (1, 1), "valid"),
        ([1, 1, 4, 4], (4, 4), (1, 1), "valid"),
        ([0, 2, 4, 4], (2, 2), (2, 2), "valid"),
        ([1, 2, 7, 3], (3, 1), (2, 1), "valid"),
    ]
}

#[test]
fn pools_match_direct_pooling() {
    for (i, (shape, k, st, mode)) in pool_cases().into_iter().enumerate() {
        let x = rnd(&shape, 600 + i as u64);
        let xv = x.to_f64_vec();
        let attrs = vec![
            ("kernel_size", ints(&[k.0 as i64, k.1 as i64])),
            ("strides", ints(&[st.0 as i64, st.1 as i64])),
            ("pad_mode", s(&mode.to_uppercase())),
        ];
        let n: usize = {
            let (oh, _) = pool_out(mode, shape[2], k.0, st.0);
            let (ow, _) = pool_out(mode, shape[3], k.1, st.1);
            shape[0] * shape[1] * oh * ow
        };
        let (mut max, mut avg) = (vec![0.0; n], vec![0.0; n]);
        let dout = rnd(&[n], 700 + i as u64).to_f64_vec();
        let (mut dmax, mut davg) = (vec![0.0; xv.len()], vec![0.0; xv.len()]);
        // MaxPoolGradGrad reads a tensor shaped like x at each maximum.
        let gg = rnd(&shape, 750 + i as u64);
        let ggv = gg.to_f64_vec();
        let mut dgg = vec![0.0; n];
        let out_shape = pool_ref(&x, k, st, mode, |o, cells| {
            let arg = cells
                .iter()
                .copied()
                .fold(cells[0], |a, c| if xv[c] > xv[a] { c } else { a });
            max[o] = xv[arg];
            dmax[arg] += dout[o];
            dgg[o] = ggv[arg];
            avg[o] = cells.iter().map(|&c| xv[c]).sum::<f64>() / cells.len() as f64;
            for &c in cells {
                davg[c] += dout[o] / cells.len() as f64;
            }
        });
        let what = format!("{shape:?} k={k:?} s={st:?} {mode}");
        let y = run("MaxPool", &[&x], attrs.clone());
        assert_eq!(y.shape(), out_shape.as_slice(), "{what}");
        assert_close(&y, &max, 0.0, &format!("MaxPool {what}"));
        let a = run("AvgPool", &[&x], attrs.clone());
        assert_close(&a, &avg, 1e-12, &format!("AvgPool {what}"));
        let dout_t = Tensor::from_f64(out_shape.clone(), dout.clone()).unwrap();
        let g = run("MaxPoolGrad", &[&x, &y, &dout_t], attrs.clone());
        assert_close(&g, &dmax, 1e-12, &format!("MaxPoolGrad {what}"));
        let window: Vec<_> = attrs
            .iter()
            .filter(|(n, _)| *n != "data_format")
            .cloned()
            .collect();
        let g = run("MaxPoolGradGrad", &[&x, &y, &gg], window);
        assert_eq!(g.shape(), out_shape.as_slice(), "{what}");
        assert_close(&g, &dgg, 0.0, &format!("MaxPoolGradGrad {what}"));
        let g = run("AvgPoolGrad", &[&x, &a, &dout_t], attrs.clone());
        assert_close(&g, &davg, 1e-12, &format!("AvgPoolGrad {what}"));
        let a32 = run("AvgPool", &[&x.cast(DType::F32)], attrs);
        assert_close(&a32, &avg, 1e-6, &format!("AvgPool f32 {what}"));
    }
}

#[test]
fn same_avg_pool_excludes_padding() {
    // A 3x3 window centred on a corner of a 2x2 image of ones... and twos.
    let x = Tensor::from_f64(vec![1, 1, 2, 2], vec![1.0, 2.0, 3.0, 4.0]).unwrap();
    let y = run(
        "AvgPool",
        &[&x],
        vec![("kernel_size", int(3)), ("pad_mode", s("same"))],
    );
    assert_eq!(y.to_f64_vec(), vec![2.5; 4]);
    let m = run(
        "MaxPool",
        &[&(x.cast(DType::F32))],
        vec![
            ("kernel_size", int(3)),
            ("pad_mode", s("same")),
            ("strides", int(2)),
        ],
    );
    assert_eq!(
        (m.shape(), m.to_f64_vec()),
        (&[1usize, 1, 1, 1][..], vec![4.0])
    );
}

#[test]
fn pool_errors() {
    let x = rnd(&[1, 1, 4, 4], 1);
    let e = run_err("MaxPool", &[&x], vec![("kernel_size", int(0))]);
    assert_err(
        &e,
        ErrorTarget::Attr("kernel_size"),
        &["MaxPool", "positive", "0"],
    );
    let e = run_err("AvgPool", &[&x], vec![("strides", ints(&[1, 2, 3]))]);
    assert_err(&e, ErrorTarget::Attr("strides"), &["AvgPool", "(1, 2, 3)"]);
    let e = run_err("MaxPool", &[&x], vec![("kernel_size", int(5))]);
    assert_err(
        &e,
        ErrorTarget::Call,
        &["MaxPool", "smaller than the kernel"],
    );
    let e = run_err("MaxPool", &[&rnd(&[4, 4], 1)], vec![]);
    assert_err(&e, ErrorTarget::Input(0), &["4-D"]);
    let i = Tensor::from_i64(DType::I32, vec![1, 1, 2, 2], vec![1, 2, 3, 4]).unwrap();
    let e = run_err("MaxPool", &[&i], vec![]);
    assert_err(&e, ErrorTarget::Input(0), &["float", "i32"]);
    let op = ops::lookup("MaxPool").unwrap();
    assert!(ops::check_attr(op, "pad_mode", &s("pad")).is_err());
}

// ---------------------------------------------------------------------------
// Softmax family.

fn softmax_ref(x: &[f64]) -> Vec<f64> {
    let m = x.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    let e: Vec<f64> = x.iter().map(|v| (v - m).exp()).collect();
    let s: f64 = e.iter().sum();
    e.iter().map(|v| v / s).collect()
}

#[test]
fn softmax_and_log_softmax() {
    let x = rnd(&[3, 4, 5], 10);
    let xv = x.to_f64_vec();
    // Along the middle axis.
    let mut want = vec![0.0; xv.len()];
    for a in 0..3 {
        for c in 0..5 {
            let col: Vec<f64> = (0..4).map(|b| xv[(a * 4 + b) * 5 + c]).collect();
            for (b, v) in softmax_ref(&col).into_iter().enumerate() {
                want[(a * 4 + b) * 5 + c] = v;
            }
        }
    }
    assert_close(
        &run("Softmax", &[&x], vec![("axis", int(-2))]),
        &want,
        1e-12,
        "softmax",
    );
    let logw: Vec<f64> = want.iter().map(|v| v.ln()).collect();
    assert_close(
        &run("LogSoftmax", &[&x], vec![("axis", int(1))]),
        &logw,
        1e-12,
        "log",
    );
    // Over two axes at once: each [:, b, :] slab sums to 1.
    let y = run("Softmax", &[&x], vec![("axis", ints(&[0, 2]))]).to_f64_vec();
    for b in 0..4 {
        let sum: f64 = (0..3)
            .flat_map(|a| (0..5).map(move |c| (a * 4 + b) * 5 + c))
            .map(|i| y[i])
            .sum();
        assert!((sum - 1.0).abs() < 1e-12);
    }
    // Stability with huge logits, in f32.
    let big = Tensor::from_f32(vec![1, 3], vec![1000.0, 0.0, -1000.0]).unwrap();
    let l = run("LogSoftmax", &[&big], vec![]);
    assert_eq!(l.dtype(), DType::F32);
    assert_close(&l, &[0.0, -1000.0, -2000.0], 1e-6, "stable log-softmax");
    let p = run("Softmax", &[&big], vec![]);
    assert_close(&p, &[1.0, 0.0, 0.0], 1e-6, "stable softmax");
    // Errors.
    let e = run_err("Softmax", &[&x], vec![("axis", ints(&[1, -2]))]);
    assert_err(&e, ErrorTarget::Attr("axis"), &["Softmax", "twice"]);
    let e = run_err("LogSoftmax", &[&x], vec![("axis", int(3))]);
    assert_err(
        &e,
        ErrorTarget::Attr("axis"),
        &["LogSoftmax", "3", "out of range"],
    );
    let i = Tensor::from_i64(DType::I64, vec![2], vec![1, 2]).unwrap();
    let e = run_err("Softmax", &[&i], vec![]);
    assert_err(&e, ErrorTarget::Input(0), &["float"]);
}

#[test]
fn softmax_cross_entropies() {
    let logits = rnd(&[4, 3], 11);
    let lv = logits.to_f64_vec();
    let classes = [2i64, 0, 1, 2];
    let mut onehot = vec![0.0; 12];
    for (r, &c) in classes.iter().enumerate() {
        onehot[r * 3 + c as usize] = 1.0;
    }
    let labels = Tensor::from_f64(vec![4, 3], onehot.clone()).unwrap();
    let out = run_tuple("SoftmaxCrossEntropyWithLogits", &[&logits, &labels], vec![]);
    assert_eq!(out[0].shape(), &[4]);
    assert_eq!(out[1].shape(), &[4, 3]);
    let mut loss = vec![0.0; 4];
    let mut grad = vec![0.0; 12];
    for r in 0..4 {
        let p = softmax_ref(&lv[r * 3..r * 3 + 3]);
        for k in 0..3 {
            loss[r] -= onehot[r * 3 + k] * p[k].ln();
            grad[r * 3 + k] = p[k] - onehot[r * 3 + k];
        }
    }
    assert_close(&out[0], &loss, 1e-12, "loss");
    assert_close(&out[1], &grad, 1e-12, "dlogits");
    let idx = Tensor::from_i64(DType::I32, vec![4], classes.to_vec()).unwrap();
    let mean = run(
        "SparseSoftmaxCrossEntropyWithLogits",
        &[&logits, &idx],
        vec![],
    );
    assert_eq!(mean.shape(), &[] as &[usize]);
    assert_close(&mean, &[loss.iter().sum::<f64>() / 4.0], 1e-12, "mean loss");
    let g = run(
        "SparseSoftmaxCrossEntropyWithLogits",
        &[&logits, &idx],
        vec![("is_grad", AttrValue::Bool(true))],
    );
    let want: Vec<f64> = grad.iter().map(|v| v / 4.0).collect();
    assert_close(&g, &want, 1e-12, "is_grad");
    // f32 logits: an f32 scalar tensor.
    let m32 = run(
        "SparseSoftmaxCrossEntropyWithLogits",
        &[&logits.cast(DType::F32), &idx],
        vec![],
    );
    assert_eq!((m32.dtype(), m32.rank()), (DType::F32, 0));
    // Errors.
    let bad = Tensor::from_i64(DType::I64, vec![4], vec![0, 3, 1, 1]).unwrap();
    let e = run_err(
        "SparseSoftmaxCrossEntropyWithLogits",
        &[&logits, &bad],
        vec![],
    );
    assert_err(&e, ErrorTarget::Input(1), &["label 3", "3 classes"]);
    let e = run_err(
        "SparseSoftmaxCrossEntropyWithLogits",
        &[&logits, &labels],
        vec![],
    );
    assert_err(&e, ErrorTarget::Input(1), &["i32 or i64", "f64"]);
    let short = Tensor::from_i64(DType::I64, vec![3], vec![0, 1, 1]).unwrap();
    let e = run_err(
        "SparseSoftmaxCrossEntropyWithLogits",
        &[&logits, &short],
        vec![],
    );
    assert_err(&e, ErrorTarget::Input(1), &["[3]", "4 rows"]);
    let e = run_err(
        "SoftmaxCrossEntropyWithLogits",
        &[&logits, &rnd(&[4, 2], 1)],
        vec![],
    );
    assert_err(
        &e,
        ErrorTarget::Input(1),
        &["shape of `logits`", "[4, 3]", "[4, 2]"],
    );
}

// ---------------------------------------------------------------------------
// Normalisation and dropout.

#[test]
fn layer_norm_matches_reference() {
    let x = rnd(&[2, 3, 4], 12);
    let xv = x.to_f64_vec();
    for (bna, bpa, gshape) in [
        (1i64, 1i64, vec![3, 4]),
        (-1, -1, vec![4]),
        (2, 1, vec![3, 4]),
        (1, 2, vec![4]),
    ] {
        let gamma = rnd(&gshape, 13);
        let beta = rnd(&gshape, 14);
        let eps = 1e-5;
        let out = run_tuple(
            "LayerNorm",
            &[&x, &gamma, &beta],
            vec![
                ("begin_norm_axis", int(bna)),
                ("begin_params_axis", int(bpa)),
                ("epsilon", AttrValue::float(eps)),
            ],
        );
        let axis = bna.rem_euclid(3) as usize;
        let m: usize = x.shape()[axis..].iter().product();
        let rows = 24 / m;
        let mut stat_shape = x.shape()[..axis].to_vec();
        stat_shape.resize(3, 1);
        assert_eq!(out[1].shape(), stat_shape.as_slice());
        assert_eq!(out[2].shape(), stat_shape.as_slice());
        let (gv, bv) = (gamma.to_f64_vec(), beta.to_f64_vec());
        let mut y = vec![0.0; 24];
        let (mut means, mut vars) = (vec![], vec![]);
        for r in 0..rows {
            let row = &xv[r * m..(r + 1) * m];
            let mean = row.iter().sum::<f64>() / m as f64;
            let var = row.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / m as f64;
            for k in 0..m {
                let e = r * m + k;
                let p = e % gv.len();
                y[e] = (xv[e] - mean) / (var + eps).sqrt() * gv[p] + bv[p];
            }
            means.push(mean);
            vars.push(var);
        }
        assert_close(&out[0], &y, 1e-12, "y");
        assert_close(&out[1], &means, 1e-12, "mean");
        assert_close(&out[2], &vars, 1e-12, "variance");
    }
    let e = run_err("LayerNorm", &[&x, &rnd(&[4], 1), &rnd(&[4], 2)], vec![]);
    assert_err(
        &e,
        ErrorTarget::Input(1),
        &["LayerNorm", "[3, 4]", "begin_params_axis=1", "[4]"],
    );
    let e = run_err(
        "LayerNorm",
        &[&x, &rnd(&[4], 1), &rnd(&[4], 2)],
        vec![("begin_norm_axis", int(3))],
    );
    assert_err(
        &e,
        ErrorTarget::Attr("begin_norm_axis"),
        &["LayerNorm", "out of range"],
    );
}

#[test]
fn batch_norm_inference_and_training() {
    let x = rnd(&[3, 2, 2, 3], 15);
    let p: Vec<Tensor> = (0..4).map(|i| rnd(&[2], 16 + i)).collect();
    let var = Tensor::from_f64(vec![2], vec![0.5, 1.5]).unwrap();
    let (scale, bias, mean) = (&p[0], &p[1], &p[2]);
    let xv = x.to_f64_vec();
    let eps = 1e-5;
    let reference = |m: &[f64], v: &[f64]| -> Vec<f64> {
        (0..xv.len())
            .map(|e| {
                let c = (e / 6) % 2;
                scale.to_f64_vec()[c] * (xv[e] - m[c]) / (v[c] + eps).sqrt() + bias.to_f64_vec()[c]
            })
            .collect()
    };
    let out = run_tuple("BatchNorm", &[&x, scale, bias, mean, &var], vec![]);
    assert_eq!(out.len(), 5);
    assert_close(
        &out[0],
        &reference(&mean.to_f64_vec(), &var.to_f64_vec()),
        1e-12,
        "inference",
    );
    assert_eq!(out[3].to_f64_vec(), mean.to_f64_vec());
    assert_eq!(out[4].to_f64_vec(), var.to_f64_vec());
    let out = run_tuple(
        "BatchNorm",
        &[&x, scale, bias, mean, &var],
        vec![("is_training", AttrValue::Bool(true))],
    );
    let (mut bm, mut bv) = (vec![0.0; 2], vec![0.0; 2]);
    for c in 0..2 {
        let cells: Vec<f64> = (0..xv.len())
            .filter(|e| (e / 6) % 2 == c)
            .map(|e| xv[e])
            .collect();
        bm[c] = cells.iter().sum::<f64>() / cells.len() as f64;
        bv[c] = cells.iter().map(|v| (v - bm[c]).powi(2)).sum::<f64>() / cells.len() as f64;
    }
    assert_close(&out[0], &reference(&bm, &bv), 1e-12, "training");
    assert_close(&out[1], &bm, 1e-12, "batch mean");
    assert_close(&out[2], &bv, 1e-12, "batch variance");
    // f16 input with f32 parameters: statistics in the parameters' dtype.
    let out = run_tuple(
        "BatchNorm",
        &[
            &x.cast(DType::F16),
            &scale.cast(DType::F32),
            &bias.cast(DType::F32),
            &mean.cast(DType::F32),
            &var.cast(DType::F32),
        ],
        vec![],
    );
    assert_eq!((out[0].dtype(), out[1].dtype()), (DType::F16, DType::F32));
    let e = run_err("BatchNorm", &[&x, scale, bias, mean, &rnd(&[3], 1)], vec![]);
    assert_err(&e, ErrorTarget::Input(4), &["variance", "[3]", "[C] = [2]"]);
    let e = run_err(
        "BatchNorm",
        &[&x, scale, bias, mean, &var],
        vec![("epsilon", AttrValue::float(0.0))],
    );
    assert_err(&e, ErrorTarget::Attr("epsilon"), &["(0, 1]"]);
}

#[test]
fn dropout_is_deterministic() {
    let x = rnd(&[40, 50], 17);
    let id = run_tuple("Dropout", &[&x], vec![("keep_prob", AttrValue::float(1.0))]);
    assert_eq!(id[0], x);
    assert!(id[1].to_f64_vec().iter().all(|&m| m == 1.0));
    let attrs = vec![("keep_prob", AttrValue::float(0.8)), ("Seed0", int(3))];
    let a = run_tuple("Dropout", &[&x], attrs.clone());
    let b = run_tuple("Dropout", &[&x], attrs);
    assert_eq!(a, b, "same seeds, same mask");
    let mask = a[1].to_f64_vec();
    assert!(mask.iter().all(|&m| m == 0.0 || m == 1.0));
    let kept = mask.iter().sum::<f64>() / mask.len() as f64;
    assert!((kept - 0.8).abs() < 0.05, "kept {kept}");
    for ((y, m), v) in a[0].to_f64_vec().iter().zip(&mask).zip(x.to_f64_vec()) {
        assert!((y - v * m / 0.8).abs() < 1e-12);
    }
    let c = run_tuple(
        "Dropout",
        &[&x],
        vec![("keep_prob", AttrValue::float(0.8)), ("Seed1", int(1))],
    );
    assert_ne!(c[1], a[1], "other seeds, another mask");
    let e = run_err("Dropout", &[&x], vec![("keep_prob", AttrValue::float(0.0))]);
    assert_err(
        &e,
        ErrorTarget::Attr("keep_prob"),
        &["Dropout", "(0, 1]", "0"],
    );
}

/// The gradient rules of the normalisations agree with finite differences of
/// the loss `sum(y * dy)` in f32 too (the f64 check lives in `gradients.rs`).
#[test]
fn conv_gradients_in_f32_agree_with_f64() {
    let case = Conv {
        mode: "same",
        stride: (2, 1),
        ..Conv::new([2, 3, 6, 5], [4, 3, 3, 3])
    };
    let x = rnd(&case.x, 30);
    let w = rnd(&case.w, 31);
    let y = run("Conv2D", &[&x, &w], case.attrs());
    let dout = rnd(y.shape(), 32);
    let g64 = eager::gradient("Conv2D", &[kv(&x), kv(&w)], case.attrs(), &kv(&dout)).unwrap();
    let f = |t: &Tensor| kv(&t.cast(DType::F32));
    let g32 = eager::gradient("Conv2D", &[f(&x), f(&w)], case.attrs(), &f(&dout)).unwrap();
    for (a, b) in g64.iter().zip(&g32) {
        let (Some(KValue::Tensor(a)), Some(KValue::Tensor(b))) = (a, b) else {
            panic!("missing gradient")
        };
        assert_eq!(b.dtype(), DType::F32);
        assert_close(b, &a.to_f64_vec(), 1e-4, "f32 gradient");
    }
}

/// LeNet-5's convolution and pooling layers, forward and backward, batch 32
/// (`cargo test --release -p ops --test kernels nn:: -- --ignored --nocapture`).
#[test]
#[ignore]
fn lenet5_conv_layers_timing() {
    let x = rnd(&[32, 1, 32, 32], 40).cast(DType::F32);
    let w1 = rnd(&[6, 1, 5, 5], 41).cast(DType::F32);
    let w2 = rnd(&[16, 6, 5, 5], 42).cast(DType::F32);
    let c1 = |w: &Tensor| Conv::new([0; 4], [w.shape()[0], w.shape()[1], 5, 5]).attrs();
    let pool = vec![("kernel_size", int(2)), ("strides", int(2))];
    let start = std::time::Instant::now();
    let iters = 20;
    for _ in 0..iters {
        let y1 = run("Conv2D", &[&x, &w1], c1(&w1));
        let p1 = run("MaxPool", &[&y1], pool.clone());
        let y2 = run("Conv2D", &[&p1, &w2], c1(&w2));
        let p2 = run("MaxPool", &[&y2], pool.clone());
        let d2 = p2.clone();
        let dy2 = run("MaxPoolGrad", &[&y2, &p2, &d2], pool.clone());
        let _dw2 = backprop("Conv2DBackpropFilter", &dy2, &p1, &w2, c1(&w2));
        let dp1 = backprop("Conv2DBackpropInput", &dy2, &w2, &p1, c1(&w2));
        let dy1 = run("MaxPoolGrad", &[&y1, &p1, &dp1], pool.clone());
        let _dw1 = backprop("Conv2DBackpropFilter", &dy1, &x, &w1, c1(&w1));
    }
    eprintln!(
        "LeNet-5 conv+pool forward+backward, batch 32: {:.2} ms/iter",
        start.elapsed().as_secs_f64() * 1e3 / iters as f64
    );
}

#[test]
fn schemas_follow_mindspore() {
    let sig = |name: &str| ops::lookup(name).unwrap().signature();
    assert_eq!(
        sig("Conv2D"),
        "Conv2D(x, weight, out_channel: int, kernel_size: int or tuple of ints, mode=1, \
         pad_mode=\"valid\", pad=0, stride=1, dilation=1, group=1, data_format=\"NCHW\")"
    );
    assert_eq!(
        sig("MaxPool"),
        "MaxPool(x, kernel_size=1, strides=1, pad_mode=\"valid\", data_format=\"NCHW\")"
    );
    let (e7, e5) = (AttrValue::float(1e-7), AttrValue::float(1e-5));
    assert_eq!(
        sig("LayerNorm"),
        format!(
            "LayerNorm(input_x, gamma, beta, begin_norm_axis=1, begin_params_axis=1, epsilon={e7})"
        )
    );
    assert_eq!(
        sig("BatchNorm"),
        format!(
            "BatchNorm(input_x, scale, bias, mean, variance, is_training=false, epsilon={e5}, \
             momentum=0.1, data_format=\"NCHW\")"
        )
    );
    assert_eq!(
        sig("Dropout"),
        "Dropout(x, keep_prob=0.5, Seed0=0, Seed1=0)"
    );
    assert_eq!(sig("Softmax"), "Softmax(x, axis=-1)");
    assert_eq!(
        sig("SparseSoftmaxCrossEntropyWithLogits"),
        "SparseSoftmaxCrossEntropyWithLogits(logits, labels, is_grad=false)"
    );
    assert_eq!(
        ops::lookup("SoftmaxCrossEntropyWithLogits").unwrap().output,
        ops::OutputDef::Tuple(&["loss", "dlogits"])
    );
}

#[test]
fn every_op_here_is_documented() {
    let families = [
        ops::defs::shape::OPS,
        ops::defs::nn::OPS,
        ops::defs::conv::OPS,
        ops::defs::internal_nn::OPS,
    ];
    for op in families.into_iter().flatten() {
        assert!(op.doc.ends_with('.') && op.doc.len() > 20, "{}", op.name);
        assert_eq!(
            op.name.starts_with('_'),
            op.category == ops::Category::Internal
        );
        for p in op.params() {
            assert!(
                p.doc.ends_with('.') && p.doc.len() > 8,
                "{}.{}",
                op.name,
                p.name
            );
        }
    }
}

/// `dtype[dims]` with symbolic (`"B"`) and unknown (`"?"`) sizes.
fn abs(dtype: DType, dims: &[&str]) -> ops::AbsVal {
    ops::AbsVal::Tensor {
        dtype,
        shape: ir::Shape::Ranked(
            dims.iter()
                .map(|d| match *d {
                    "?" => ir::Dim::Unknown,
                    s => s
                        .parse::<i64>()
                        .map_or_else(|_| ir::Dim::Sym(s.to_string()), ir::Dim::Known),
                })
                .collect(),
        ),
    }
}

fn infer(
    op: &str,
    inputs: Vec<ops::AbsVal>,
    attrs: Vec<(&'static str, AttrValue)>,
) -> Result<ops::AbsVal, OpError> {
    let def = ops::lookup(op).unwrap();
    let given: Vec<(String, AttrValue)> = attrs
        .iter()
        .map(|(k, v)| (k.to_string(), ops::check_attr(def, k, v).unwrap()))
        .collect();
    let attrs = ops::resolve_attrs(def, &given);
    (def.infer)(&ops::InferCall {
        op: def,
        inputs: &inputs,
        attrs: &attrs,
    })
}

#[test]
fn shape_rules_with_symbolic_sizes() {
    let f = DType::F32;
    let conv = Conv::new([0; 4], [6, 3, 5, 5]).attrs();
    let w = abs(f, &["6", "3", "5", "5"]);
    assert_eq!(
        infer(
            "Conv2D",
            vec![abs(f, &["B", "3", "32", "32"]), w.clone()],
            conv.clone()
        )
        .unwrap(),
        abs(f, &["B", "6", "28", "28"])
    );
    assert_eq!(
        infer(
            "Conv2D",
            vec![abs(f, &["B", "C", "H", "32"]), w.clone()],
            conv.clone()
        )
        .unwrap(),
        abs(f, &["B", "6", "?", "28"])
    );
    let e = infer("Conv2D", vec![abs(f, &["B", "4", "32", "32"]), w], conv).unwrap_err();
    assert_err(
        &e,
        ErrorTarget::Input(1),
        &["3 input channels", "4 channels"],
    );
    let pool = vec![
        ("kernel_size", int(2)),
        ("strides", int(2)),
        ("pad_mode", s("same")),
    ];
    assert_eq!(
        infer("MaxPool", vec![abs(f, &["B", "6", "27", "W"])], pool).unwrap(),
        abs(f, &["B", "6", "14", "?"])
    );
    let labels = abs(DType::I32, &["B"]);
    assert_eq!(
        infer(
            "SparseSoftmaxCrossEntropyWithLogits",
            vec![abs(f, &["B", "10"]), labels],
            vec![]
        )
        .unwrap(),
        abs(f, &[])
    );
    let r = infer(
        "LayerNorm",
        vec![abs(f, &["B", "T", "8"]), abs(f, &["8"]), abs(f, &["8"])],
        vec![("begin_norm_axis", int(-1)), ("begin_params_axis", int(-1))],
    )
    .unwrap();
    assert_eq!(
        r,
        ops::AbsVal::Tuple(vec![
            abs(f, &["B", "T", "8"]),
            abs(f, &["B", "T", "1"]),
            abs(f, &["B", "T", "1"])
        ])
    );
    let r = infer("Dropout", vec![abs(f, &["B", "3"])], vec![]).unwrap();
    assert_eq!(
        r,
        ops::AbsVal::Tuple(vec![abs(f, &["B", "3"]), abs(f, &["B", "3"])])
    );
}
