//! Gradient programs of the language reference's examples, after clean-up, as
//! `mirdsl grad` prints them; each must check again when appended to its
//! program.

mod common;

use autodiff::{differentiate_with, print_result, GradResult, Options};
use common::*;
use expect_test::{expect, Expect};
use ir::{MetaFn, WrtItem};

fn source() -> String {
    std::fs::read_to_string(testdata_dir().join("spec_examples.mir")).unwrap()
}

fn check(name: &str, meta: MetaFn, expect: Expect) {
    let text = source();
    let prog = program(&text);
    let gradient = gradient_text(&prog, name, &meta);
    expect.assert_eq(&gradient);
    check_standalone(&gradient);
}

#[test]
fn test_f() {
    check(
        "test_f",
        MetaFn::Grad {
            wrt: Some(vec![WrtItem::Param(0), WrtItem::Param(1)]),
        },
        expect![[r#"
            graph grad_test_f(x: f32[3], y: f32[3]) {
              a = Sub(x, 1)
              b = Add(a, y)
              ret = RealDiv(a, b)
              %0 = RealDiv(b, b)
              %1 = Mul(%0, ret)
              %2 = Neg(%1)
              %3 = Add(ret, %2)
              %4 = Add(%0, %3)
              %5 = (%4, %3)
              return %5
            }
        "#]],
    );
}

#[test]
fn test_f_before_clean_up() {
    // The J transformation itself: `J_test_f` returns `(c, bprop)`, and
    // `bprop(dout)` returns `(env, d_x, d_y)` (the environment is empty: a
    // top-level graph captures nothing and no weight is differentiated).
    let text = source();
    let prog = program(&text);
    let r = grad_without_clean_up(&prog, "test_f");
    expect![[r#"
        graph grad_test_f(x: f32[3], y: f32[3]) {
          %0 = J_test_f(x, y)
          out = %0[0]
          bprop = %0[1]
          %1 = OnesLike(out)
          %2 = bprop(%1)
          %3 = %2[1]
          return %3
        }

        graph J_test_f(x: f32[3], y: f32[3]) {
          a = Sub(x, 1)
          b = Add(a, y)
          %0 = J_func(a, b)
          %1 = %0[0]
          %2 = %0[1]
          c = Mul(b, %1)
          %3 = (c, bprop_test_f)
          graph bprop_test_f(dout) {
            %4 = Mul(dout, %1)
            %5 = _SumToShapeOf(%4, b)
            %6 = Mul(dout, b)
            %7 = _SumToShapeOf(%6, %1)
            %8 = %2(%7)
            %9 = %8[1]
            %10 = %8[2]
            %11 = Add(%5, %10)
            %12 = _SumToShapeOf(%11, a)
            %13 = _SumToShapeOf(%11, y)
            %14 = Add(%9, %12)
            %15 = _SumToShapeOf(%14, x)
            %16 = ()
            %17 = (%16, %15, %13)
            return %17
          }
          return %3
        }

        graph J_func(x, y) {
          ret = RealDiv(x, y)
          %0 = (ret, bprop_func)
          graph bprop_func(dout) {
            %1 = RealDiv(dout, y)
            %2 = _SumToShapeOf(%1, x)
            %3 = Mul(%1, ret)
            %4 = Neg(%3)
            %5 = _SumToShapeOf(%4, y)
            %6 = ()
            %7 = (%6, %2, %5)
            return %7
          }
          return %0
        }
    "#]]
    .assert_eq(&print_result(&r));
}

#[test]
fn hof() {
    check(
        "hof",
        MetaFn::Grad { wrt: None },
        expect![[r#"
        graph grad_hof(x: f32[2]) {
          %0 = Add(x, 3)
          %1 = Add(%0, %0)
          return %1
        }
    "#]],
    );
}

#[test]
fn hof_vjp() {
    check(
        "hof",
        MetaFn::Vjp,
        expect![[r#"
        graph vjp_hof(x: f32[2]) {
          %0 = Add(x, 3)
          %1 = Mul(%0, %0)
          %2 = (%1, backprop)
          graph backprop(dout) {
            %3 = Mul(dout, %0)
            %4 = Add(%3, %3)
            %5 = (%4,)
            return %5
          }
          return %2
        }
    "#]],
    );
}

#[test]
fn fibonacci() {
    // An integer function: zero gradient, and nothing of the forward pass is needed.
    check(
        "fibonacci",
        MetaFn::Grad { wrt: None },
        expect![[r#"
        graph grad_fibonacci(n: i64) {
          %0 = ZerosLike(n)
          return %0
        }
    "#]],
    );
}

#[test]
fn recursion() {
    // `J_power` calls itself; the `if` picks between the `J`'d branches, and
    // only the taken branch's backpropagator runs.
    check(
        "power",
        MetaFn::Grad { wrt: None },
        expect![[r#"
        graph grad_power(x: f32[3], n: i64) {
          %0 = J_power(x, n)
          bprop = %0[1]
          %1 = OnesLike(x)
          %2 = bprop(%1)
          %3 = %2[1]
          return %3
        }

        graph J_power(x: f32[3], n: i64) {
          %0 = Less(n, 1)
          %1 = Switch(%0, J_power_then, J_power_else)
          %2 = %1()
          r = %2[0]
          bprop_r = %2[1]
          %3 = (r, bprop_power)
          graph J_power_then() {
            %4 = OnesLike(x)
            %5 = (%4, bprop_power_then)
            graph bprop_power_then(dout) {
              %6 = ZerosLike(x)
              %7 = (%6,)
              %8 = (%7,)
              return %8
            }
            return %5
          }
          graph J_power_else() {
            %9 = Sub(n, 1)
            %10 = J_power(x, %9)
            %11 = %10[0]
            %12 = %10[1]
            %13 = Mul(x, %11)
            %14 = (%13, bprop_power_else)
            graph bprop_power_else(dout_1) {
              %15 = Mul(dout_1, %11)
              %16 = Mul(dout_1, x)
              %17 = %12(%16)
              %18 = %17[1]
              %19 = Add(%15, %18)
              %20 = (%19,)
              %21 = (%20,)
              return %21
            }
            return %14
          }
          graph bprop_power(dout_2) {
            %22 = bprop_r(dout_2)
            %23 = %22[0]
            %24 = %23[0]
            %25 = ()
            %26 = ZerosLike(n)
            %27 = (%25, %24, %26)
            return %27
          }
          return %3
        }
    "#]],
    );
}

#[test]
fn closure() {
    check(
        "closure_user",
        MetaFn::Grad {
            wrt: Some(vec![WrtItem::Param(0), WrtItem::Param(1)]),
        },
        expect![[r#"
        graph grad_closure_user(a: f32[3], b: f32[3]) {
          %0 = Add(a, b)
          %1 = Add(%0, a)
          %2 = Exp(b)
          %3 = Add(%0, %2)
          %4 = Mul(%1, %2)
          %5 = Add(%1, %3)
          %6 = Add(%3, %5)
          %7 = Add(%4, %5)
          %8 = (%6, %7)
          return %8
        }
    "#]],
    );
}

#[test]
fn closure_before_clean_up() {
    // `J_func_outer` returns the closure `J_func_inner`; calling it returns a
    // backpropagator whose environment `(d_a, d_b)` flows back to where the
    // closure was made.
    let text = source();
    let prog = program(&text);
    let r = grad_without_clean_up(&prog, "closure_user");
    expect![[r#"
        graph grad_closure_user(a: f32[3], b: f32[3]) {
          %0 = J_closure_user(a, b)
          out = %0[0]
          bprop = %0[1]
          %1 = OnesLike(out)
          %2 = bprop(%1)
          %3 = %2[1]
          return %3
        }

        graph J_closure_user(a: f32[3], b: f32[3]) {
          %0 = J_func_outer(a, b)
          closure = %0[0]
          bprop_closure = %0[1]
          %1 = closure(a)
          out1 = %1[0]
          bprop_out1 = %1[1]
          %2 = Exp(b)
          %3 = closure(%2)
          out2 = %3[0]
          bprop_out2 = %3[1]
          %4 = Mul(out1, out2)
          %5 = (%4, bprop_closure_user)
          graph bprop_closure_user(dout) {
            %6 = Mul(dout, out2)
            %7 = _SumToShapeOf(%6, out1)
            %8 = Mul(dout, out1)
            %9 = _SumToShapeOf(%8, out2)
            %10 = bprop_out2(%9)
            %11 = %10[0]
            %12 = %10[1]
            %13 = Mul(%12, %2)
            %14 = bprop_out1(%7)
            %15 = %14[0]
            %16 = %11[0]
            %17 = %11[1]
            %18 = %15[0]
            %19 = %15[1]
            %20 = Add(%16, %18)
            %21 = Add(%17, %19)
            %22 = %14[1]
            %23 = (%20, %21)
            %24 = bprop_closure(%23)
            %25 = %24[1]
            %26 = Add(%22, %25)
            %27 = %24[2]
            %28 = Add(%13, %27)
            %29 = ()
            %30 = (%29, %26, %28)
            return %30
          }
          return %5
        }

        graph J_func_outer(a, b) {
          %0 = (J_func_inner, bprop_func_outer)
          graph J_func_inner(c) {
            %1 = Add(a, b)
            %2 = Add(%1, c)
            %3 = (%2, bprop_func_inner)
            graph bprop_func_inner(dout) {
              %4 = _SumToShapeOf(dout, %1)
              %5 = _SumToShapeOf(dout, c)
              %6 = _SumToShapeOf(%4, a)
              %7 = _SumToShapeOf(%4, b)
              %8 = (%6, %7)
              %9 = (%8, %5)
              return %9
            }
            return %3
          }
          graph bprop_func_outer(dout_1) {
            %10 = dout_1[0]
            %11 = dout_1[1]
            %12 = ()
            %13 = (%12, %10, %11)
            return %13
          }
          return %0
        }
    "#]]
    .assert_eq(&print_result(&r));
}

#[test]
fn ms_closure_value_and_grad() {
    // No parameters and integer values: the value, and an empty tuple of gradients.
    check(
        "ms_closure",
        MetaFn::ValueAndGrad { wrt: Some(vec![]) },
        expect![[r#"
            graph value_and_grad_ms_closure() {
              %0 = ()
              %1 = (4, 5)
              %2 = (%1, %0)
              return %2
            }
        "#]],
    );
}

#[test]
fn mlp() {
    let w = |n: &str| WrtItem::Weight(n.to_string());
    check(
        "loss",
        MetaFn::Grad {
            wrt: Some(vec![
                w("fc1.weight"),
                w("fc1.bias"),
                w("fc2.weight"),
                w("fc2.bias"),
            ]),
        },
        expect![[r#"
            param fc1.weight: f32[128, 784] = normal(mean=0.0, std=0.01, seed=1)
            param fc1.bias: f32[128] = zeros
            param fc2.weight: f32[10, 128] = normal(mean=0.0, std=0.01, seed=2)
            param fc2.bias: f32[10] = zeros

            graph grad_loss(x: f32[B, 784], labels: i32[B]) {
              %0 = MatMul(x, fc1.weight, transpose_b=true)
              %1 = BiasAdd(%0, fc1.bias)
              h = ReLU(%1)
              %2 = MatMul(h, fc2.weight, transpose_b=true)
              %3 = BiasAdd(%2, fc2.bias)
              %4 = SparseSoftmaxCrossEntropyWithLogits(%3, labels, is_grad=true)
              %5 = ReduceSum(%4, axis=(0,))
              %6 = MatMul(%4, fc2.weight)
              %7 = MatMul(%4, h, transpose_a=true)
              %8 = Greater(h, 0.0)
              %9 = ZerosLike(%6)
              %10 = Select(%8, %6, %9)
              %11 = ReduceSum(%10, axis=(0,))
              %12 = MatMul(%10, x, transpose_a=true)
              %13 = (%12, %11, %7, %5)
              return %13
            }
        "#]],
    );
}

/// `grad(name)` straight out of the J transformation, before the clean-up passes.
fn grad_without_clean_up(prog: &ir::Program, name: &str) -> GradResult {
    let options = Options {
        optimize: false,
        ..Options::default()
    };
    differentiate_with(prog, &target(name), &MetaFn::Grad { wrt: None }, &options).unwrap()
}
