"""MindSpore oracle for the extended neural-network family (`nn::common`):
convolutions (`conv::transpose`), pooling (`pool`) and resizing (`resize`).

Run: /work/venvs/ms/bin/python crates/ops/tests/ms_oracle/nn.py

MindSpore 2.10's CPU backend has no kernel for DepthwiseConv2dNative,
AdaptiveAvgPool1D, AdaptiveMaxPool1D, UpsampleBilinear2D, UpsampleLinear1D or
UpsampleBicubic2D; cases that need them are left out (see the notes below).
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import Oracle  # noqa: E402

import mindspore as ms  # noqa: E402
from mindspore import Tensor  # noqa: E402
from mindspore.ops import operations as P  # noqa: E402
from mindspore.ops.operations import _grad_ops as G  # noqa: E402
from mindspore.ops.auto_generate import gen_ops_prim as GP  # noqa: E402

o = Oracle("nn")


def t(a):
    return Tensor(a)


# ---------------------------------------------------------------------------
# Conv2DTranspose (Conv2DBackpropInput and Conv2DBackpropFilter, which take the
# shape as an input, are in backward_pool_conv.py)


def bpi_case(op, dout_shape, w_shape, sizes, dtype=np.float32, **kw):
    cls = {"Conv2DBackpropInput": P.Conv2DBackpropInput, "Conv2DTranspose": P.Conv2DTranspose}[op]
    dout = o.rand(*dout_shape, dtype=dtype)
    w = o.rand(*w_shape, dtype=dtype)
    attrs = dict(out_channel=w_shape[0], kernel_size=tuple(w_shape[2:]), **kw)
    try:
        y = cls(**attrs)(t(dout), t(w), tuple(sizes))
    except Exception as e:  # noqa: BLE001
        print(op, kw, dtype.__name__, "not on CPU:", str(e).splitlines()[0])
        return
    rtol = 1e-4 if dtype == np.float32 else 1e-10
    o.case(op, [dout, w], dict(input_sizes=tuple(sizes), **attrs), y, rtol=rtol, atol=1e-5)


bpi_case("Conv2DTranspose", (2, 3, 4, 4), (3, 2, 3, 3), (2, 2, 6, 6))
bpi_case("Conv2DTranspose", (1, 3, 5, 5), (3, 4, 3, 3), (1, 4, 10, 9), pad_mode="same", stride=2)
bpi_case("Conv2DTranspose", (1, 2, 5, 4), (2, 2, 3, 3), (1, 2, 9, 8), pad_mode="pad", pad=(1, 2, 1, 1), stride=2)
bpi_case("Conv2DTranspose", (1, 2, 4, 4), (2, 2, 3, 3), (1, 2, 8, 8), pad_mode="pad", pad=1, stride=2)
bpi_case("Conv2DTranspose", (3, 2, 5, 4), (2, 1, 1, 1), (3, 1, 5, 4))
# `pad_list` is recorded but the padding used is pad_mode's.
bpi_case("Conv2DTranspose", (1, 2, 4, 4), (2, 2, 3, 3), (1, 2, 6, 6), pad_list=(1, 1, 1, 1))


# ---------------------------------------------------------------------------
# Conv3D / Conv3DTranspose


def conv3d_case(x_shape, w_shape, dtype=np.float32, **kw):
    x = o.rand(*x_shape, dtype=dtype)
    w = o.rand(*w_shape, dtype=dtype)
    attrs = dict(out_channel=w_shape[0], kernel_size=tuple(w_shape[2:]), **kw)
    try:
        y = P.Conv3D(**attrs)(t(x), t(w))
    except Exception as e:  # noqa: BLE001
        print("Conv3D", kw, "not on CPU:", str(e).splitlines()[0])
        return
    rtol = 1e-4 if dtype == np.float32 else 1e-10
    o.case("Conv3D", [x, w], attrs, y, rtol=rtol, atol=1e-5)


conv3d_case((2, 2, 4, 5, 4), (3, 2, 2, 3, 2))
conv3d_case((1, 4, 5, 4, 6), (2, 2, 3, 2, 3), group=2, pad_mode="same", stride=(2, 1, 2))
conv3d_case((1, 2, 6, 5, 5), (2, 2, 2, 2, 2), pad_mode="pad", pad=(1, 0, 0, 1, 1, 1), dilation=(2, 1, 1))
conv3d_case((1, 2, 6, 5, 5), (2, 2, 3, 3, 3), pad_mode="pad", pad=1, stride=2)
conv3d_case((2, 2, 4, 5, 4), (3, 2, 2, 3, 2), dtype=np.float64)


def conv3dt_case(x_shape, w_shape, oc, dtype=np.float32, **kw):
    x = o.rand(*x_shape, dtype=dtype)
    w = o.rand(*w_shape, dtype=dtype)
    attrs = dict(in_channel=w_shape[0], out_channel=oc, kernel_size=tuple(w_shape[2:]), **kw)
    try:
        y = P.Conv3DTranspose(**attrs)(t(x), t(w))
    except Exception as e:  # noqa: BLE001
        print("Conv3DTranspose", kw, "not on CPU:", str(e).splitlines()[0])
        return
    rtol = 1e-4 if dtype == np.float32 else 1e-10
    o.case("Conv3DTranspose", [x, w], attrs, y, rtol=rtol, atol=1e-5)


conv3dt_case((1, 2, 3, 4, 5), (2, 3, 3, 2, 3), 3)
conv3dt_case((1, 2, 3, 4, 5), (2, 3, 3, 2, 3), 3, stride=2)
conv3dt_case((1, 2, 3, 4, 5), (2, 3, 3, 2, 3), 3, pad_mode="same")
conv3dt_case((1, 2, 3, 4, 5), (2, 3, 3, 2, 3), 3, pad_mode="same", stride=(2, 3, 1))
conv3dt_case((1, 2, 3, 4, 5), (2, 3, 3, 2, 3), 3, pad_mode="pad", pad=(1, 0, 0, 1, 1, 0), stride=2,
             output_padding=1)
conv3dt_case((2, 4, 2, 3, 3), (4, 1, 2, 2, 2), 2, group=2, pad_mode="pad", pad=1, stride=2)
conv3dt_case((1, 2, 3, 3, 3), (2, 2, 2, 2, 2), 2, dilation=(1, 2, 2))
conv3dt_case((1, 2, 3, 4, 5), (2, 3, 3, 2, 3), 3, dtype=np.float64)


# ---------------------------------------------------------------------------
# Pooling


def pool_case(op, prim, x, attrs, rtol=1e-5, atol=1e-6, outputs=None):
    try:
        y = prim(t(x))
    except Exception as e:  # noqa: BLE001
        print(op, attrs, x.dtype, "not on CPU:", str(e).splitlines()[0])
        return
    o.case(op, [x], attrs, y, rtol=rtol, atol=atol, outputs=outputs)


def avg3d(shape, dtype=np.float32, **kw):
    x = o.rand(*shape, dtype=dtype)
    pool_case("AvgPool3D", P.AvgPool3D(**kw), x, kw)


avg3d((1, 2, 4, 5, 4), kernel_size=2, strides=2)
avg3d((2, 2, 5, 6, 7), kernel_size=(2, 3, 2), strides=(1, 2, 3))
avg3d((1, 2, 3, 5, 4), kernel_size=(2, 3, 2), strides=(1, 2, 2), pad_mode="pad", pad=(1, 0, 1, 1, 0, 1))
avg3d((1, 2, 3, 5, 4), kernel_size=(2, 3, 2), strides=(1, 2, 2), pad_mode="pad", pad=(1, 0, 1, 1, 0, 1),
      count_include_pad=False)
avg3d((1, 2, 3, 5, 4), kernel_size=(2, 3, 2), strides=2, pad_mode="pad", pad=1, ceil_mode=True)
avg3d((1, 2, 3, 5, 4), kernel_size=(2, 3, 2), strides=2, pad_mode="pad", pad=1, ceil_mode=True,
      count_include_pad=False)
avg3d((1, 2, 4, 5, 6), kernel_size=3, strides=2, ceil_mode=True)
avg3d((1, 1, 3, 4, 5), kernel_size=2, strides=2, pad_mode="same")
avg3d((1, 1, 3, 4, 5), kernel_size=3, strides=1, pad_mode="same")
avg3d((1, 2, 4, 4, 4), kernel_size=2, strides=2, divisor_override=3)
avg3d((1, 2, 4, 5, 4), dtype=np.float64, kernel_size=2, strides=2)
avg3d((1, 2, 4, 5, 4), dtype=np.float16, kernel_size=2, strides=2)


def max3d(shape, dtype=np.float32, **kw):
    x = o.rand(*shape, dtype=dtype)
    pool_case("MaxPool3D", P.MaxPool3D(**kw), x, kw)


max3d((1, 2, 4, 5, 4), kernel_size=2, strides=2)
max3d((2, 2, 5, 6, 7), kernel_size=(2, 3, 2), strides=(1, 2, 3))
max3d((1, 2, 3, 5, 4), kernel_size=(2, 3, 2), strides=2, pad_mode="pad", pad_list=(1, 1, 0))
max3d((1, 2, 3, 5, 4), kernel_size=(2, 3, 2), strides=2, pad_mode="pad", pad_list=1, ceil_mode=True)
max3d((1, 2, 3, 5, 4), kernel_size=(2, 3, 2), strides=2, pad_mode="pad", pad_list=(1, 0, 0, 1, 1, 0))
max3d((1, 1, 3, 4, 5), kernel_size=2, strides=2, pad_mode="same")
max3d((1, 2, 4, 5, 4), dtype=np.float64, kernel_size=2, strides=2)
max3d((1, 2, 4, 5, 4), dtype=np.float16, kernel_size=2, strides=2)


def max3d_arg(shape, dtype=np.float32, ints=False, **kw):
    # Integer inputs are non-negative: MindSpore's CPU kernel gives 0 as the
    # maximum of an all-negative integer window (while its argmax names a
    # negative cell), which we take for a MindSpore bug.
    x = o.ints(*shape, lo=0, hi=5, dtype=dtype) if ints else o.rand(*shape, dtype=dtype)
    pool_case("MaxPool3DWithArgmax", P.MaxPool3DWithArgmax(**kw), x, kw)


max3d_arg((1, 2, 4, 5, 4), ksize=2, strides=2, pads=0)
max3d_arg((1, 2, 3, 6, 5), ksize=(1, 3, 2), strides=(1, 2, 1), pads=(0, 1, 1))
max3d_arg((1, 2, 3, 7, 6), ksize=(1, 3, 3), strides=2, pads=(0, 1, 1), dilation=(1, 2, 1))
max3d_arg((1, 2, 3, 7, 6), ksize=(1, 3, 2), strides=2, pads=(0, 1, 1), ceil_mode=True)
max3d_arg((1, 2, 4, 5, 4), ksize=2, strides=2, pads=0, argmax_type=ms.int32)
max3d_arg((1, 2, 4, 5, 4), dtype=np.int32, ints=True, ksize=2, strides=1, pads=1)
max3d_arg((1, 2, 4, 5, 4), dtype=np.float64, ksize=2, strides=2, pads=0)


def max_argv2(shape, dtype=np.float32, ints=False, **kw):
    x = o.ints(*shape, lo=-5, hi=5, dtype=dtype) if ints else o.rand(*shape, dtype=dtype)
    pool_case("MaxPoolWithArgmaxV2", P.MaxPoolWithArgmaxV2(**kw), x, kw)


max_argv2((2, 2, 6, 7), kernel_size=2)
max_argv2((2, 2, 6, 7), kernel_size=3, strides=2, pads=1)
max_argv2((2, 2, 6, 7), kernel_size=3, strides=2, pads=1, dilation=(1, 2))
max_argv2((2, 2, 7, 7), kernel_size=(3, 2), strides=2, pads=(1, 1), ceil_mode=True)
max_argv2((1, 2, 6, 6), kernel_size=2, argmax_type=ms.int32)
max_argv2((1, 2, 6, 6), dtype=np.int64, ints=True, kernel_size=3, strides=1, pads=1)
max_argv2((1, 2, 6, 6), dtype=np.float64, kernel_size=2)


def adaptive(op, shape, size, dtype=np.float32):
    x = o.rand(*shape, dtype=dtype)
    ms_size = tuple(None if s == -1 else s for s in size) if isinstance(size, tuple) else size
    try:
        prim = P.AdaptiveAvgPool2D(ms_size) if op == "AdaptiveAvgPool2D" else GP.AdaptiveMaxPool2D(ms_size)
    except Exception as e:  # noqa: BLE001
        print(op, size, "rejected:", str(e).splitlines()[0])
        return
    pool_case(op, prim, x, dict(output_size=size))


for op in ["AdaptiveAvgPool2D", "AdaptiveMaxPool2D"]:
    adaptive(op, (2, 3, 7, 9), (4, 4))
    adaptive(op, (2, 3, 7, 9), (3, 5))
    adaptive(op, (3, 7, 9), (2, 3))
    adaptive(op, (2, 3, 7, 9), 1)
    adaptive(op, (1, 2, 4, 5), (6, 7))
    adaptive(op, (2, 3, 7, 9), (-1, 4))
    adaptive(op, (2, 3, 7, 9), (4, 4), dtype=np.float64)
# ties: the first maximum of a window wins
x_ties = np.array([[[[1.0, 1.0, 2.0], [2.0, 0.0, 2.0], [1.0, 2.0, 2.0]]]], np.float32)
pool_case("AdaptiveMaxPool2D", GP.AdaptiveMaxPool2D((2, 2)), x_ties, dict(output_size=(2, 2)))
pool_case("MaxPoolWithArgmaxV2", P.MaxPoolWithArgmaxV2(2, 1), x_ties, dict(kernel_size=2, strides=1))

# ---------------------------------------------------------------------------
# Resizing


def resize_case(op, prim_call, x, attrs, rtol=1e-5, atol=1e-6, note=""):
    try:
        y = prim_call(t(x))
    except Exception as e:  # noqa: BLE001
        print(op, attrs, x.dtype, "not on CPU:", str(e).splitlines()[0])
        return
    o.case(op, [x], attrs, y, rtol=rtol, atol=atol, note=note)


def tf_resize(op, shape, size, dtype=np.float32, ints=False, **kw):
    x = o.ints(*shape, lo=-9, hi=9, dtype=dtype) if ints else o.rand(*shape, dtype=dtype)
    if op == "ResizeNearestNeighbor":
        call = lambda v: GP.ResizeNearestNeighbor(size, **kw)(v)  # noqa: E731
    else:
        call = lambda v: getattr(GP, op)(**kw)(v, size)  # noqa: E731
    resize_case(op, call, x, dict(size=size, **kw))


for op in ["ResizeNearestNeighbor", "ResizeNearestNeighborV2", "ResizeBilinearV2", "ResizeBicubic"]:
    tf_resize(op, (1, 2, 3, 4), (5, 7))
    tf_resize(op, (2, 2, 6, 9), (4, 5))
    tf_resize(op, (1, 2, 3, 4), (9, 8))
    tf_resize(op, (1, 2, 3, 4), (5, 7), align_corners=True)
    tf_resize(op, (2, 2, 6, 9), (4, 5), align_corners=True)
    tf_resize(op, (1, 2, 3, 4), (5, 7), half_pixel_centers=True)
    tf_resize(op, (2, 2, 6, 9), (4, 5), half_pixel_centers=True)
    tf_resize(op, (1, 2, 1, 4), (1, 7), align_corners=True)
    tf_resize(op, (1, 2, 3, 4), (5, 7), dtype=np.float64)
for op in ["ResizeNearestNeighbor", "ResizeNearestNeighborV2"]:
    tf_resize(op, (1, 2, 3, 4), (5, 7), dtype=np.int32, ints=True)
    tf_resize(op, (1, 2, 3, 4), (6, 8), dtype=np.float16)


def linear1d(shape, size, mode):
    x = o.rand(*shape)
    resize_case("ResizeLinear1D", lambda v: GP.ResizeLinear1D(mode)(v, size), x,
                dict(size=size, coordinate_transformation_mode=mode))


# "asymmetric" is accepted by the primitive but rejected by every kernel.
for mode in ["align_corners", "half_pixel"]:
    linear1d((2, 3, 5), (8,), mode)
    linear1d((2, 3, 9), (4,), mode)
    linear1d((2, 3, 5), (1,), mode)


def upsample(op, shape, output_size=None, scales=None, dtype=np.float32, **kw):
    x = o.rand(*shape, dtype=dtype)
    attrs = dict(**kw)
    if output_size is not None:
        attrs["output_size"] = output_size
    if scales is not None:
        attrs["scales"] = scales
    prim = GP.UpsampleTrilinear3D(**kw) if op == "UpsampleTrilinear3D" else getattr(GP, op)()
    resize_case(op, lambda v: prim(v, output_size, scales), x, attrs)


for op, shape in [("UpsampleNearest1D", (2, 2, 5)), ("UpsampleNearest2D", (1, 2, 3, 4)),
                  ("UpsampleNearest3D", (1, 2, 2, 3, 4)), ("UpsampleTrilinear3D", (1, 2, 2, 3, 4))]:
    n = len(shape) - 2
    upsample(op, shape, output_size=tuple([7, 5, 9][:n]))
    upsample(op, shape, output_size=tuple([2, 3, 3][:n]))
    upsample(op, shape, scales=tuple([2.0, 1.5, 3.0][:n]))
    upsample(op, shape, scales=tuple([1.7, 2.5, 0.6][3 - n:]) if n < 3 else (1.7, 2.5, 1.6))
upsample("UpsampleTrilinear3D", (1, 2, 2, 3, 4), output_size=(3, 5, 7), align_corners=True)
upsample("UpsampleTrilinear3D", (1, 2, 2, 3, 4), scales=(2.0, 1.5, 2.5), align_corners=True)
upsample("UpsampleTrilinear3D", (1, 2, 2, 3, 4), output_size=(3, 5, 7), dtype=np.float64)
upsample("UpsampleNearest2D", (1, 2, 3, 4), output_size=(5, 7), dtype=np.float64)


# UpsampleBilinear2D and UpsampleLinear1D have no CPU kernel in MindSpore 2.10:
# their expected values are UpsampleTrilinear3D's on the input with unit
# leading spatial dimensions (the same PyTorch rules).
def via_trilinear(op, shape, output_size=None, scales=None, align_corners=False):
    x = o.rand(*shape)
    n = len(shape) - 2
    x5 = x.reshape(shape[:2] + (1,) * (3 - n) + shape[2:])
    size5 = None if output_size is None else (1,) * (3 - n) + tuple(output_size)
    scales5 = None if scales is None else (1.0,) * (3 - n) + tuple(scales)
    y = GP.UpsampleTrilinear3D(align_corners=align_corners)(t(x5), size5, scales5)
    y = y.reshape(y.shape[:2] + y.shape[2 + 3 - n:])
    attrs = dict(align_corners=align_corners)
    if output_size is not None:
        attrs["output_size"] = tuple(output_size)
    if scales is not None:
        attrs["scales"] = tuple(scales)
    o.case(op, [x], attrs, y, note="expected from UpsampleTrilinear3D (no CPU kernel for " + op + ")")


via_trilinear("UpsampleBilinear2D", (1, 2, 3, 4), output_size=(5, 7))
via_trilinear("UpsampleBilinear2D", (1, 2, 3, 4), output_size=(5, 7), align_corners=True)
via_trilinear("UpsampleBilinear2D", (2, 2, 5, 6), scales=(1.5, 0.5))
via_trilinear("UpsampleLinear1D", (2, 2, 5), output_size=(8,))
via_trilinear("UpsampleLinear1D", (2, 2, 5), scales=(2.5,), align_corners=True)

for shape, r in [((2, 8, 2, 3), 2), ((9, 2, 2), 3), ((1, 2, 4, 3, 2), 2)]:
    x = o.rand(*shape)
    resize_case("PixelShuffle", lambda v: GP.PixelShuffle()(v, r), x, dict(upscale_factor=r))

o.save()
