"""MindSpore oracle for the extended neural-network family (`nn_ext`):
normalisations (`norm_ext`) and losses (`loss`).

Run: /work/venvs/ms/bin/python crates/ops/tests/ms_oracle/nn_norm_loss.py

MindSpore 2.10's CPU backend has no InstanceNorm, RmsNorm, MSELossExt,
CrossEntropyLoss or SoftMarginLoss kernel; their expected values come from
MindSpore primitives that compute the same thing (noted per case).
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import Oracle  # noqa: E402

import mindspore as ms  # noqa: E402
from mindspore import Tensor, ops  # noqa: E402
from mindspore.ops import operations as P  # noqa: E402
from mindspore.ops.auto_generate import gen_ops_prim as GP  # noqa: E402

o = Oracle("nn_norm_loss")


def t(a):
    return None if a is None else Tensor(a)


def tol(dtype):
    return {np.float16: (2e-3, 2e-3), np.float32: (1e-5, 1e-5), np.float64: (1e-10, 1e-12)}[dtype]


def run(op, fn, inputs, attrs, dtype=np.float32, note="", outputs=None):
    try:
        y = fn()
        # Synchronise: errors of an asynchronous launch surface here.
        for v in (y if isinstance(y, (tuple, list)) else [y]):
            v.asnumpy()
    except Exception as e:  # noqa: BLE001
        print(op, attrs, dtype.__name__, "not on CPU:", str(e).splitlines()[0][:150])
        return
    rtol, atol = tol(dtype)
    enc_inputs = [() if i is None else i for i in inputs]
    o.case(op, enc_inputs, attrs, y, rtol=rtol, atol=atol, note=note, outputs=outputs)


# ---------------------------------------------------------------------------
# GroupNorm / InstanceNorm / LayerNormExt / RmsNorm


def group_norm(shape, g, dtype=np.float32, weight=True, bias=True, eps=1e-5):
    x = o.rand(*shape, dtype=dtype) * 3 + 0.5
    w = o.rand(shape[1], lo=0.5, hi=1.5, dtype=dtype) if weight else None
    b = o.rand(shape[1], dtype=dtype) if bias else None
    run("GroupNorm", lambda: GP.GroupNorm()(t(x), g, t(w), t(b), eps), [x, w, b],
        dict(num_groups=g, eps=eps), dtype)


group_norm((2, 4, 3, 3), 2)
group_norm((2, 4, 3, 3), 4)
group_norm((2, 4, 3, 3), 1, eps=1e-3)
group_norm((3, 6, 5), 3)
group_norm((2, 4, 2, 2, 3), 2)
group_norm((2, 4, 3, 3), 2, dtype=np.float64)
group_norm((2, 4, 3, 3), 2, dtype=np.float16)
# GroupNorm without weight/bias: the CPU kernel fails ("The pointer[weight_tensor] is null").


def instance_norm(shape, dtype=np.float32, eps=1e-5):
    """Expected from GroupNorm with one group per channel."""
    x = o.rand(*shape, dtype=dtype) * 2 + 0.3
    c = shape[1]
    gamma = o.rand(c, lo=0.5, hi=1.5)
    beta = o.rand(c)
    mean = o.rand(c)
    var = o.rand(c, lo=0.5, hi=1.5)
    try:
        y, m, r = GP.GroupNorm()(t(x), c, t(gamma.astype(dtype)), t(beta.astype(dtype)), eps)
    except Exception as e:  # noqa: BLE001
        print("InstanceNorm via GroupNorm", dtype.__name__, "not on CPU:", str(e).splitlines()[0])
        return
    sd = np.float64 if dtype == np.float64 else np.float32
    m = m.asnumpy().reshape(-1).astype(sd)
    r = r.asnumpy().reshape(-1).astype(sd)
    rtol, atol = tol(dtype)
    o.case("InstanceNorm", [x, gamma, beta, mean, var], dict(epsilon=eps), (y, m, r), rtol=rtol,
           atol=atol, note="expected from GroupNorm(num_groups=C): no InstanceNorm CPU kernel")


instance_norm((2, 3, 4, 4))
instance_norm((2, 3, 5), eps=1e-3)
instance_norm((1, 2, 2, 3, 2))


def layer_norm_ext(shape, ns, dtype=np.float32, weight=True, bias=True, eps=1e-5, outputs=None):
    """Expected from LayerNorm (LayerNormExt has no CPU kernel): `rstd` is
    Rsqrt(variance + eps)."""
    x = o.rand(*shape, dtype=dtype) * 2
    w = o.rand(*ns, lo=0.5, hi=1.5, dtype=dtype) if weight else None
    b = o.rand(*ns, dtype=dtype) if bias else None
    k = len(shape) - len(ns)
    wv = w if w is not None else np.ones(ns, dtype)
    bv = b if b is not None else np.zeros(ns, dtype)
    try:
        y, mean, var = P.LayerNorm(k, k, eps)(t(x), t(wv), t(bv))
        rstd = ops.rsqrt(var + eps)
        rstd.asnumpy()
    except Exception as e:  # noqa: BLE001
        print("LayerNormExt via LayerNorm", dtype.__name__, "not on CPU:", str(e).splitlines()[0][:150])
        return
    rtol, atol = tol(dtype)
    o.case("LayerNormExt", [x, () if w is None else w, () if b is None else b],
           dict(normalized_shape=ns, eps=eps), (y, mean, rstd), rtol=rtol, atol=atol,
           note="expected from LayerNorm + Rsqrt: no LayerNormExt CPU kernel", outputs=outputs)


layer_norm_ext((2, 3, 4), (4,))
layer_norm_ext((2, 3, 4), (3, 4))
layer_norm_ext((2, 3, 4), (2, 3, 4), eps=1e-3)
layer_norm_ext((2, 3, 4), (4,), weight=False)
layer_norm_ext((2, 3, 4), (4,), weight=False, bias=False)
# No f64 case: MindSpore's f64 LayerNorm is only accurate to ~1e-8 here.
# f16: LayerNorm's statistics are f32, LayerNormExt's are the input's dtype;
# only `output` is compared.
layer_norm_ext((2, 3, 4), (4,), dtype=np.float16, outputs=[0])


def rms_norm(shape, gshape, dtype=np.float32, eps=1e-6):
    """Expected from MindSpore primitives: RmsNorm has an Ascend kernel only."""
    x = o.rand(*shape, dtype=dtype)
    g = o.rand(*gshape, lo=0.5, hi=1.5, dtype=dtype)
    axes = tuple(range(len(shape) - len(gshape), len(shape)))
    ms_ = ops.ReduceMean(keep_dims=True)(t(x) * t(x), axes)
    rstd = ops.rsqrt(ms_ + eps)
    y = t(x) * rstd * t(g)
    sd = ms.float64 if dtype == np.float64 else ms.float32
    rtol, atol = tol(dtype)
    o.case("RmsNorm", [x, g], dict(epsilon=eps), (y, rstd.astype(sd)), rtol=rtol, atol=atol,
           note="expected from ReduceMean/Rsqrt/Mul: no RmsNorm CPU kernel")


rms_norm((2, 3, 4), (4,))
rms_norm((2, 3, 4), (3, 4), eps=1e-3)
rms_norm((5,), (5,))
rms_norm((2, 3, 4), (4,), dtype=np.float64)

# ---------------------------------------------------------------------------
# L2Normalize / LRN


def l2n(shape, dtype=np.float32, scale=1.0, **kw):
    x = o.rand(*shape, dtype=dtype) * scale
    x = x.astype(dtype)
    run("L2Normalize", lambda: P.L2Normalize(**kw)(t(x)), [x], kw, dtype)


l2n((3, 4))
l2n((2, 3, 4), axis=-1)
l2n((2, 3, 4), axis=1, epsilon=1e-6)
l2n((2, 3), axis=1, scale=0.01, epsilon=0.01)
l2n((4,))
l2n((3, 4), dtype=np.float64)
l2n((3, 4), dtype=np.float16)


def lrn(shape, dtype=np.float32, **kw):
    x = o.rand(*shape, dtype=dtype)
    run("LRN", lambda: P.LRN(**kw)(t(x)), [x], kw, dtype)


lrn((2, 5, 3, 3))
lrn((2, 7, 2, 3), depth_radius=2, bias=2.0, alpha=0.5, beta=0.75)
lrn((1, 3, 2, 2), depth_radius=0, bias=1.5, alpha=0.1, beta=1.0)
lrn((2, 5, 3, 3), dtype=np.float16)
o.save()
