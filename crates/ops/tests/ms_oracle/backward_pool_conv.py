"""MindSpore's pooling and convolution backward primitives (`MaxPoolGrad`,
`MaxPoolGradGrad`, `AvgPoolGrad`, `AdaptiveAvgPool2DGrad`,
`Conv2DBackpropInput`, `Conv2DBackpropFilter`) against the registry's
`defs/backward/pool.rs` and `defs/backward/conv.rs`. See common.py.

Every one of them has a CPU kernel in MindSpore 2.10, so each case calls the
primitive itself, with the arguments MindSpore's bprops give it (the shapes
`input_sizes`, `filter_sizes` as tuples, `orig_input_shape` as an int64
tensor). The registry takes the shapes as tuples too; one case of each passes
the other form."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import *  # noqa: F401,F403,E402
from mindspore.ops import operations as P  # noqa: E402
from mindspore.ops.operations import _grad_ops as G  # noqa: E402

o = Oracle("backward_pool_conv")
o.rng = np.random.default_rng(20250)  # deterministic whatever PYTHONHASHSEED is


def T(a):
    return Tensor(a)


# ---------------------------------------------------------------------------
# Pooling.


def pool_x(shape, ties, dtype):
    # With ties, few distinct values: windows hold several equal maxima, and
    # the gradient goes to the first (row-major) one.
    if ties:
        return o.ints(*shape, lo=0, hi=3).astype(dtype)
    return o.rand(*shape, dtype=dtype)


def max_pool_cases(shape, kernel, strides, pad_mode, ties=False, dtype=np.float32):
    x = pool_x(shape, ties, dtype)
    attrs = dict(kernel_size=kernel, strides=strides, pad_mode=pad_mode)
    out = P.MaxPool(**attrs)(T(x))
    dout = o.rand(*out.shape, dtype=dtype)
    got = G.MaxPoolGrad(**attrs)(T(x), out, T(dout))
    note = f"{'ties ' if ties else ''}{pad_mode}"
    o.case("MaxPoolGrad", [x, out, dout], dict(data_format="NCHW", **attrs), got, note=note)
    g = o.rand(*shape, dtype=dtype)
    got = G.MaxPoolGradGrad(**attrs)(T(x), out, T(g))
    o.case("MaxPoolGradGrad", [x, out, g], attrs, got, note=note)


max_pool_cases((2, 3, 6, 6), 2, 2, "VALID")
max_pool_cases((1, 2, 7, 7), 3, 2, "VALID")
max_pool_cases((1, 2, 5, 7), 3, 2, "SAME")
max_pool_cases((1, 2, 5, 6), (2, 3), (2, 1), "SAME")
max_pool_cases((2, 2, 6, 6), 2, 2, "VALID", ties=True)
max_pool_cases((1, 3, 7, 6), 3, 2, "SAME", ties=True)
max_pool_cases((1, 2, 5, 5), 3, 1, "VALID", ties=True)


def avg_pool_case(shape, kernel, strides, pad_mode, dtype=np.float32):
    x = o.rand(*shape, dtype=dtype)
    attrs = dict(kernel_size=kernel, strides=strides, pad_mode=pad_mode)
    out = P.AvgPool(**attrs)(T(x))
    dout = o.rand(*out.shape, dtype=dtype)
    got = G.AvgPoolGrad(**attrs)(T(x), out, T(dout))
    o.case("AvgPoolGrad", [x, out, dout], attrs, got, note=pad_mode)


avg_pool_case((2, 3, 6, 6), 2, 2, "VALID")
avg_pool_case((1, 2, 7, 5), 3, (2, 1), "VALID")
avg_pool_case((1, 2, 5, 7), 3, 2, "SAME")
avg_pool_case((1, 2, 6, 5), (2, 3), (2, 2), "SAME")


def adaptive_case(shape, out_hw, as_tuple=False):
    dout = o.rand(*shape[:-2], *out_hw)
    orig = np.array(shape, dtype=np.int64)
    got = G.AdaptiveAvgPool2DGrad()(T(dout), T(orig))
    o.case("AdaptiveAvgPool2DGrad", [dout, tuple(int(d) for d in shape) if as_tuple else orig],
           {}, got)


adaptive_case((2, 3, 7, 5), (3, 2))
adaptive_case((1, 2, 8, 8), (4, 4), as_tuple=True)
adaptive_case((3, 7, 9), (4, 4))
# An output larger than the input: overlapping windows.
adaptive_case((1, 2, 3, 4), (5, 6), as_tuple=True)


# ---------------------------------------------------------------------------
# Convolution: the shapes of a Conv2D of `x` by `w`, its output gradient.


def conv_cases(x_shape, w_shape, dtype=np.float32, stride=1, dilation=1, sizes_as_tensor=False,
               **kw):
    x = o.rand(*x_shape, dtype=dtype)
    w = o.rand(*w_shape, dtype=dtype)
    pair = lambda v: (v, v) if isinstance(v, int) else tuple(v)  # noqa: E731
    attrs = dict(out_channel=w_shape[0], kernel_size=tuple(w_shape[2:]), **kw)
    conv = P.Conv2D(stride=stride, dilation=dilation, **attrs)
    y = conv(T(x), T(w))
    dout = o.rand(*y.shape, dtype=dtype)
    rtol = 1e-4 if dtype == np.float32 else 1e-10
    note = ", ".join(f"{k}={v}" for k, v in dict(stride=stride, dilation=dilation, **kw).items())
    if kw.get("pad_mode") == "pad":
        # MindSpore's bprop passes the padding Conv2D's shape inference
        # recorded (its CPU filter gradient pads by `pad_list`).
        pad = kw["pad"]
        attrs["pad_list"] = (pad,) * 4 if isinstance(pad, int) else tuple(pad)
    dx = P.Conv2DBackpropInput(stride=stride, dilation=dilation, **attrs)(T(dout), T(w), x_shape)
    dw = G.Conv2DBackpropFilter(stride=pair(stride), dilation=(1, 1) + pair(dilation), **attrs)(
        T(dout), T(x), w_shape)
    # What the primitives compute is Conv2D's gradient (MindSpore's own bprop).
    gx, gw = ms.grad(lambda a, b: (conv(a, b) * T(dout)).sum(), grad_position=(0, 1))(T(x), T(w))
    assert np.allclose(gx.asnumpy(), dx.asnumpy(), rtol=1e-4, atol=1e-5), note
    assert np.allclose(gw.asnumpy(), dw.asnumpy(), rtol=1e-4, atol=1e-5), note
    ours = dict(stride=stride, dilation=dilation, **attrs)
    shape = (lambda v: np.array(v, dtype=np.int64)) if sizes_as_tensor else tuple
    o.case("Conv2DBackpropInput", [dout, w, shape(x_shape)], ours, dx, rtol=rtol, atol=1e-5,
           note=note)
    o.case("Conv2DBackpropFilter", [dout, x, shape(w_shape)], ours, dw, rtol=rtol, atol=1e-5,
           note=note)


conv_cases((2, 3, 6, 6), (4, 3, 3, 3))
conv_cases((2, 3, 7, 6), (4, 3, 3, 3), stride=2)
conv_cases((1, 2, 7, 8), (3, 2, 3, 2), stride=2, pad_mode="same")
conv_cases((1, 2, 6, 5), (3, 2, 3, 3), stride=(2, 1), pad_mode="pad", pad=(1, 1, 2, 2))
conv_cases((1, 2, 7, 7), (2, 2, 3, 3), dilation=2, pad_mode="pad", pad=1)
conv_cases((1, 3, 9, 8), (2, 3, 3, 2), dilation=(2, 1), stride=2, pad_mode="same")
conv_cases((2, 4, 6, 6), (6, 2, 3, 3), group=2, pad_mode="same")
conv_cases((1, 4, 7, 6), (4, 1, 3, 3), group=4, stride=2, pad_mode="pad", pad=1)
conv_cases((1, 6, 5, 5), (4, 3, 2, 2), group=2, stride=2, dilation=2, pad_mode="valid")
# MindSpore 2.10's CPU Conv2D takes no float64: the registry's f64 kernels
# are checked against f32 (tests/gradients.rs) and direct loops
# (tests/kernels_nn.rs).
conv_cases((2, 2, 5, 5), (3, 2, 3, 3), pad_mode="same", sizes_as_tensor=True)

o.save()
