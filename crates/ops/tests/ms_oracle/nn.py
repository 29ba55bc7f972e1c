"""MindSpore oracle for the extended neural-network family (`nn_ext`):
convolutions (`nn_conv_ext`), pooling (`pool_ext`) and resizing (`resize`).

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
# Conv2DBackpropInput / Conv2DTranspose / Conv2DBackpropFilter


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


bpi_case("Conv2DBackpropInput", (2, 3, 4, 4), (3, 2, 3, 3), (2, 2, 6, 6))
bpi_case("Conv2DBackpropInput", (1, 4, 3, 3), (4, 2, 3, 3), (1, 4, 6, 5), pad_mode="same", stride=2, group=2)
bpi_case("Conv2DBackpropInput", (1, 2, 3, 4), (2, 3, 2, 2), (1, 3, 5, 5), pad_mode="pad",
         pad=(1, 0, 0, 1), stride=(2, 1), dilation=(1, 2))
bpi_case("Conv2DBackpropInput", (2, 3, 4, 4), (3, 2, 3, 3), (2, 2, 6, 6), dtype=np.float64)
bpi_case("Conv2DTranspose", (2, 3, 4, 4), (3, 2, 3, 3), (2, 2, 6, 6))
bpi_case("Conv2DTranspose", (1, 3, 5, 5), (3, 4, 3, 3), (1, 4, 10, 9), pad_mode="same", stride=2)
bpi_case("Conv2DTranspose", (1, 2, 5, 4), (2, 2, 3, 3), (1, 2, 9, 8), pad_mode="pad", pad=(1, 2, 1, 1), stride=2)
bpi_case("Conv2DTranspose", (1, 2, 4, 4), (2, 2, 3, 3), (1, 2, 8, 8), pad_mode="pad", pad=1, stride=2)
bpi_case("Conv2DTranspose", (3, 2, 5, 4), (2, 1, 1, 1), (3, 1, 5, 4))
# `pad_list` is recorded but the padding used is pad_mode's.
bpi_case("Conv2DTranspose", (1, 2, 4, 4), (2, 2, 3, 3), (1, 2, 6, 6), pad_list=(1, 1, 1, 1))


def bpf_case(dout_shape, x_shape, w_shape, dtype=np.float32, **kw):
    dout = o.rand(*dout_shape, dtype=dtype)
    x = o.rand(*x_shape, dtype=dtype)
    attrs = dict(out_channel=w_shape[0], kernel_size=tuple(w_shape[2:]), **kw)
    try:
        y = G.Conv2DBackpropFilter(**attrs)(t(dout), t(x), tuple(w_shape))
    except Exception as e:  # noqa: BLE001
        print("Conv2DBackpropFilter", kw, dtype.__name__, "not on CPU:", str(e).splitlines()[0])
        return
    rtol = 1e-4 if dtype == np.float32 else 1e-10
    o.case("Conv2DBackpropFilter", [dout, x], dict(filter_sizes=tuple(w_shape), **attrs), y,
           rtol=rtol, atol=1e-5)


bpf_case((2, 3, 4, 4), (2, 2, 6, 6), (3, 2, 3, 3))
bpf_case((1, 4, 3, 3), (1, 4, 6, 5), (4, 2, 3, 3), pad_mode="same", stride=2, group=2)
bpf_case((1, 2, 3, 3), (1, 3, 5, 5), (2, 3, 2, 2), pad_mode="pad", pad=1, stride=2, pad_list=(1, 1, 1, 1))
bpf_case((2, 2, 3, 3), (2, 4, 6, 6), (2, 2, 3, 3), pad_mode="same", stride=2, group=2)

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

o.save()
