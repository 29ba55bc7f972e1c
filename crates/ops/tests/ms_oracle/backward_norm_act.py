"""MindSpore's backward primitives of the normalisations, softmax, dropout and
activations (`LayerNormGrad BatchNormGrad SoftmaxBackward LogSoftmaxGrad
DropoutGrad GeLUGrad SigmoidGrad TanhGrad ReLU6Grad SiLUGrad`) against the
registry's `defs/backward/norm.rs` and `defs/backward/activation.rs`. See
common.py.

Each is called as MindSpore's own bprops call it (the forward outputs they
pass are MindSpore's forward results), with MindSpore's argument order.
MindSpore 2.10's CPU backend has no `SoftmaxBackward` kernel ("The kernel
SoftmaxBackward unregistered"): its expected values are MindSpore's gradient
of `Softmax` (`ms.vjp`), which is what the bprop that emits it computes.
`BatchNorm` has no f64 CPU kernel, so the f64 training case takes its
statistics from NumPy (the grad kernel itself runs in f64).

MindSpore's f64 kernels of `LayerNormGrad`, `BatchNormGrad`, `LogSoftmaxGrad`,
`GeLUGrad` and `ReLU6Grad` give results rounded through f32 (`ReLU6Grad`
returns `dy` itself rounded to f32), so their f64 cases compare at f32's
precision (`F32_INSIDE`); the registry computes them in f64. `keep_prob` is
a C++ float in MindSpore: `DropoutGrad` scales by `1.f / keep_prob` in f32,
and so does the registry's kernel, so the f64 case matches to f64's precision.
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import Oracle, Tensor, ms  # noqa: E402
from mindspore.ops import auto_generate as A  # noqa: E402
from mindspore.ops import operations as P  # noqa: E402
from mindspore.ops.operations import _grad_ops as G  # noqa: E402

# MindSpore's first pyboost call in a process can fail importing a NumPy 1.x
# module under NumPy 2; later calls work.
try:
    P.Softmax(-1)(Tensor(np.ones((1, 2), np.float32)))
except Exception:  # noqa: BLE001
    pass

o = Oracle("backward_norm_act")


def t(a):
    return Tensor(a)


def tol(dtype, f32_inside=False):
    if dtype == np.float32:
        return (1e-5, 1e-6)
    return F32_INSIDE if f32_inside else (1e-10, 1e-12)


# The f64 tolerance where MindSpore's f64 kernel rounds through f32.
F32_INSIDE = (1e-5, 1e-6)
NOTE_F32 = "MindSpore's f64 kernel rounds through f32"


def note(dtype, f32_inside):
    return NOTE_F32 if f32_inside and dtype == np.float64 else ""


# ---------------------------------------------------------------------------
# LayerNormGrad(x, dy, variance, mean, gamma; begin_norm_axis, begin_params_axis)

def layer_norm_grad(shape, axis, dtype, eps=1e-7):
    x = o.rand(*shape, dtype=dtype)
    k = axis % len(shape)
    gamma = o.rand(*shape[k:], lo=0.5, hi=1.5, dtype=dtype)
    beta = o.rand(*shape[k:], dtype=dtype)
    dy = o.rand(*shape, dtype=dtype)
    _, mean, var = P.LayerNorm(axis, axis, eps)(t(x), t(gamma), t(beta))
    op = G.LayerNormGrad(axis, axis)
    attrs = dict(begin_norm_axis=axis, begin_params_axis=axis)
    if eps != 1e-7:
        # MindSpore's bprop sets the forward's epsilon on the primitive.
        op.add_prim_attr("epsilon", eps)
        attrs["epsilon"] = eps
    expected = op(t(x), t(dy), var, mean, t(gamma))
    rtol, atol = tol(dtype, True)
    o.case("LayerNormGrad", [x, dy, var.asnumpy(), mean.asnumpy(), gamma], attrs, expected,
           rtol=rtol * 10, atol=atol * 10, note=note(dtype, True))


for dtype in [np.float32, np.float64]:
    layer_norm_grad((2, 3, 4), 1, dtype)
    layer_norm_grad((2, 3, 4), -1, dtype)
    layer_norm_grad((5, 6), 1, dtype)
layer_norm_grad((3, 8), -1, np.float32, eps=1e-5)

# ---------------------------------------------------------------------------
# BatchNormGrad(dout, x, scale, saved_mean, saved_variance, reserve;
#               is_training, epsilon, data_format)


def batch_norm_grad(shape, training, dtype, eps=1e-5):
    c = shape[1]
    x = o.rand(*shape, dtype=dtype) * 2 + 0.5
    dy = o.rand(*shape, dtype=dtype)
    scale = o.rand(c, lo=0.5, hi=1.5, dtype=dtype)
    bias = o.rand(c, dtype=dtype)
    rm, rv = o.rand(c, dtype=dtype), o.rand(c, lo=0.5, hi=1.5, dtype=dtype)
    axes = (0,) + tuple(range(2, len(shape)))
    if training and dtype == np.float32:
        # The bprop passes BatchNorm's outputs 3 and 4 (the batch statistics)
        # and output 2 as the reserve.
        out = P.BatchNorm(True, eps)(t(x), t(scale), t(bias), t(rm), t(rv))
        mean, var, reserve = out[3].asnumpy(), out[4].asnumpy(), out[2].asnumpy()
    elif training:
        mean, var = x.mean(axis=axes), x.var(axis=axes)
        reserve = np.zeros_like(mean)
    else:
        # Inference: the running statistics, as given to BatchNorm.
        mean, var, reserve = rm, rv, rv
    expected = G.BatchNormGrad(training, eps)(t(dy), t(x), t(scale), t(mean), t(var), t(reserve))
    rtol, atol = tol(dtype, True)
    o.case("BatchNormGrad", [dy, x, scale, mean, var, reserve],
           dict(is_training=training, epsilon=eps), expected, rtol=rtol * 10, atol=atol * 10,
           note=note(dtype, True))


for training in [True, False]:
    batch_norm_grad((3, 2, 4, 5), training, np.float32)
    batch_norm_grad((6, 3), training, np.float32, eps=1e-3)
    batch_norm_grad((2, 3, 3, 2), training, np.float64)

# ---------------------------------------------------------------------------
# SoftmaxBackward(dout, out; dim): no CPU kernel; MindSpore's gradient of
# Softmax instead.


def softmax_backward(shape, dim, dtype):
    x = o.rand(*shape, lo=-2, hi=2, dtype=dtype)
    dout = o.rand(*shape, dtype=dtype)
    out, vjp = ms.vjp(lambda v: P.Softmax(dim)(v), t(x))
    grads = vjp(t(dout))
    expected = grads[0] if isinstance(grads, tuple) else grads
    rtol, atol = tol(dtype)
    o.case("SoftmaxBackward", [dout, out.asnumpy()], dict(dim=dim), expected, rtol=rtol, atol=atol,
           note="expected from ms.vjp of Softmax: no SoftmaxBackward CPU kernel")


for dtype in [np.float32, np.float64]:
    softmax_backward((2, 5), -1, dtype)
    softmax_backward((2, 3, 4), 1, dtype)
    softmax_backward((3, 4, 2), 0, dtype)

# ---------------------------------------------------------------------------
# LogSoftmaxGrad(logits, grad; axis): `logits` is LogSoftmax's output.


def log_softmax_grad(shape, axis, dtype):
    x = o.rand(*shape, lo=-2, hi=2, dtype=dtype)
    grad = o.rand(*shape, dtype=dtype)
    y = P.LogSoftmax(axis)(t(x)).asnumpy()
    rtol, atol = tol(dtype, True)
    o.case("LogSoftmaxGrad", [y, grad], dict(axis=axis), G.LogSoftmaxGrad(axis)(t(y), t(grad)),
           rtol=rtol, atol=atol, note=note(dtype, True))


for dtype in [np.float32, np.float64]:
    log_softmax_grad((3, 5), -1, dtype)
    log_softmax_grad((2, 3, 4), 1, dtype)
    log_softmax_grad((4, 3), 0, dtype)

# ---------------------------------------------------------------------------
# DropoutGrad(dy, mask; keep_prob)

for shape, keep, dtype in [((3, 4), 0.7, np.float32), ((2, 3, 5), 0.5, np.float32),
                           ((4, 4), 0.9, np.float64), ((5,), 1.0, np.float32)]:
    dy = o.rand(*shape, dtype=dtype)
    mask = (o.rand(*shape, lo=0, hi=1) < keep).astype(dtype)
    rtol, atol = tol(dtype)
    o.case("DropoutGrad", [dy, mask], dict(keep_prob=keep), G.DropoutGrad(keep)(t(dy), t(mask)),
           rtol=rtol, atol=atol)

# ---------------------------------------------------------------------------
# The activations' backward primitives.

for dtype in [np.float32, np.float64]:
    rtol, atol = tol(dtype)
    for shape in [(2, 3), (3, 4, 5)]:
        x = o.rand(*shape, lo=-4, hi=4, dtype=dtype)
        dy = o.rand(*shape, dtype=dtype)
        # GeLUGrad(dy, x, y), y = GeLU(x)
        y = P.GeLU()(t(x)).asnumpy()
        lr, la = tol(dtype, True)
        o.case("GeLUGrad", [dy, x, y], {}, A.GeLUGrad()(t(dy), t(x), t(y)), rtol=lr, atol=la,
               note=note(dtype, True))
        # SigmoidGrad(y, dy), y = Sigmoid(x)
        y = P.Sigmoid()(t(x)).asnumpy()
        o.case("SigmoidGrad", [y, dy], {}, A.SigmoidGrad()(t(y), t(dy)), rtol=rtol, atol=atol)
        # TanhGrad(y, dy), y = Tanh(x)
        y = P.Tanh()(t(x)).asnumpy()
        o.case("TanhGrad", [y, dy], {}, A.TanhGrad()(t(y), t(dy)), rtol=rtol, atol=atol)
        # SiLUGrad(dout, x)
        o.case("SiLUGrad", [dy, x], {}, A.SiLUGrad()(t(dy), t(x)), rtol=rtol, atol=atol)
    # ReLU6Grad(y_backprop, x): x across both kinks, with 0 and 6 exactly.
    x = np.array([-2.0, -0.0, 0.0, 0.5, 3.0, 5.999, 6.0, 6.001, 9.0, np.nan], dtype=dtype)
    dy = o.rand(*x.shape, dtype=dtype)
    lr, la = tol(dtype, True)
    o.case("ReLU6Grad", [dy, x], {}, A.ReLU6Grad()(t(dy), t(x)), rtol=lr, atol=la,
           note=note(dtype, True))
    x = o.rand(3, 4, lo=-2, hi=8, dtype=dtype)
    dy = o.rand(3, 4, dtype=dtype)
    lr, la = tol(dtype, True)
    o.case("ReLU6Grad", [dy, x], {}, A.ReLU6Grad()(t(dy), t(x)), rtol=lr, atol=la,
           note=note(dtype, True))

o.save()
