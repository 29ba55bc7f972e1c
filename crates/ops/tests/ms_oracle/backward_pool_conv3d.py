"""MindSpore's backward primitives of the 3-D convolutions and pools and of
the poolings with argmax (`Conv3DBackpropInput`, `Conv3DBackpropFilter`,
`AvgPool3DGrad`, `MaxPool3DGrad`, `MaxPool3DGradWithArgmax`,
`MaxPoolGradWithArgmax`, `MaxPoolGradWithArgmaxV2`) and `MaxPoolWithArgmax`,
against the registry's `defs/conv/conv3d.rs`,
`defs/pool.rs` and `defs/pool/grads.rs`. See common.py.

Each has a CPU kernel in MindSpore 2.10; each case calls the primitive with
the arguments MindSpore's bprop gives it (the shapes as tuples, the argmax
of the forward). (`AdaptiveMaxPool2DGrad`: its forward fails in PyNative
mode here; tests/training_export's conv_pool checks it in graph mode.)"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import *  # noqa: F401,F403,E402
from mindspore import ops  # noqa: E402
from mindspore.ops import operations as P  # noqa: E402
from mindspore.ops.operations import _grad_ops as G  # noqa: E402
from mindspore.ops.operations import nn_ops as N  # noqa: E402

o = Oracle("backward_pool_conv3d")
o.rng = np.random.default_rng(20270)  # deterministic whatever PYTHONHASHSEED is


def T(a):
    return Tensor(a)


# ---------------------------------------------------------------------------
# Conv3DBackpropInput(filter, out_backprop, input_size) and
# Conv3DBackpropFilter(x, out_backprop, filter_size) of the Conv3D of x by w.


def conv3d_cases(x_shape, w_shape, **kw):
    x, w = o.rand(*x_shape), o.rand(*w_shape)
    attrs = dict(out_channel=w_shape[0], kernel_size=tuple(w_shape[2:]), **kw)
    y = P.Conv3D(**attrs)(T(x), T(w))
    dout = o.rand(*y.shape)
    note = ", ".join(f"{k}={v}" for k, v in kw.items())
    dx = N.Conv3DBackpropInput(**attrs)(T(w), T(dout), x_shape)
    o.case("Conv3DBackpropInput", [w, dout, tuple(x_shape)], attrs, dx, rtol=1e-4, atol=1e-5,
           note=note)
    dw = G.Conv3DBackpropFilter(**attrs)(T(x), T(dout), w_shape)
    o.case("Conv3DBackpropFilter", [x, dout, tuple(w_shape)], attrs, dw, rtol=1e-4, atol=1e-5,
           note=note)


conv3d_cases((1, 2, 5, 5, 5), (3, 2, 2, 2, 2))
conv3d_cases((2, 2, 5, 6, 4), (3, 2, 2, 3, 2), stride=2, pad_mode="pad", pad=1)
conv3d_cases((1, 2, 5, 5, 6), (3, 2, 3, 2, 2), stride=(1, 2, 2), pad_mode="same")
conv3d_cases((1, 2, 5, 4, 4), (4, 1, 2, 1, 2), dilation=(2, 1, 1), group=2)
conv3d_cases((1, 2, 4, 5, 5), (2, 2, 2, 2, 2), pad_mode="pad", pad=(1, 0, 0, 1, 1, 1))


# ---------------------------------------------------------------------------
# AvgPool3DGrad(origin_input_shape, grads) and MaxPool3DGrad(x, out, dout).


def avg3d_grad(shape, kernel, strides, pads=0, **kw):
    x = o.rand(*shape)
    fwd = dict(kernel_size=kernel, strides=strides, **kw)
    pad_mode = "pad" if pads else "valid"
    out = P.AvgPool3D(pad_mode=pad_mode, pad=pads, **fwd)(T(x))
    dout = o.rand(*out.shape)
    attrs = dict(pads=pads, pad_mode=pad_mode, **fwd)
    got = G.AvgPool3DGrad(**attrs)(tuple(shape), T(dout))
    o.case("AvgPool3DGrad", [tuple(shape), dout], attrs, got, note=str(attrs))


avg3d_grad((1, 2, 4, 5, 4), 2, 2)
avg3d_grad((2, 2, 5, 5, 5), 2, 2, pads=1, count_include_pad=False)
avg3d_grad((1, 2, 4, 5, 5), (2, 3, 2), (1, 2, 2), pads=(1, 0, 1, 1, 0, 1), ceil_mode=True,
           divisor_override=3)


def max3d_grad(shape, kernel, strides, pad_list=0, ties=False):
    x = o.ints(*shape, lo=0, hi=3).astype(np.float32) if ties else o.rand(*shape)
    pad_mode = "PAD" if pad_list else "VALID"
    attrs = dict(kernel_size=kernel, strides=strides, pad_mode=pad_mode, pad_list=pad_list)
    out = P.MaxPool3D(**attrs)(T(x))
    dout = o.rand(*out.shape)
    got = G.MaxPool3DGrad(**attrs)(T(x), out, T(dout))
    o.case("MaxPool3DGrad", [x, out, dout], attrs, got, note=f"{'ties ' if ties else ''}{attrs}")


max3d_grad((1, 2, 4, 5, 4), 2, 2)
max3d_grad((2, 2, 5, 5, 5), 2, 2, pad_list=1)
max3d_grad((1, 2, 4, 6, 5), (2, 3, 2), (1, 2, 2), ties=True)


# ---------------------------------------------------------------------------
# The gradients from an argmax: (x, grad, argmax) of the forward's argmax.


def argmax_grad(op, fwd, bwd, shape, attrs, ties=False):
    x = o.ints(*shape, lo=0, hi=3).astype(np.float32) if ties else o.rand(*shape)
    y, argmax = fwd(T(x))
    dout = o.rand(*y.shape)
    got = bwd(T(x), T(dout), argmax)
    o.case(op, [x, dout, argmax.asnumpy()], attrs, got, note=f"{'ties ' if ties else ''}{attrs}")


for ties in (False, True):
    a = dict(ksize=2, strides=2, pads=1)
    argmax_grad("MaxPool3DGradWithArgmax", N.MaxPool3DWithArgmax(**a), G.MaxPool3DGradWithArgmax(**a),
                (1, 2, 5, 5, 5), a, ties)
    a = dict(kernel_size=3, strides=2, pads=1, dilation=(1, 2))
    argmax_grad("MaxPoolGradWithArgmaxV2", N.MaxPoolWithArgmaxV2(**a), G.MaxPoolGradWithArgmaxV2(**a),
                (2, 2, 7, 8), a, ties)
    for a in (dict(kernel_size=2, strides=2, pad_mode="VALID"),
              dict(kernel_size=(3, 2), strides=(2, 1), pad_mode="SAME")):
        argmax_grad("MaxPoolGradWithArgmax", ops.MaxPoolWithArgmax(**a), G.MaxPoolGradWithArgmax(**a),
                    (2, 3, 5, 6), a, ties)

# MaxPoolWithArgmax itself: its argmax is flat within C·H·W.
for a in (dict(kernel_size=2, strides=2, pad_mode="VALID"),
          dict(kernel_size=(3, 2), strides=(2, 1), pad_mode="SAME"),
          dict(kernel_size=4, strides=1, pad_mode="SAME")):
    x = o.rand(2, 3, 6, 7)
    o.case("MaxPoolWithArgmax", [x], a, ops.MaxPoolWithArgmax(**a)(T(x)), note=str(a))

o.save()
