"""MindSpore oracle for the extended neural-network family (`nn::common`):
normalisations (`norm::group`) and losses (`loss`).

Run: /work/venvs/ms/bin/python crates/ops/tests/ms_oracle/nn_norm_loss.py

MindSpore 2.10's CPU backend has no InstanceNorm, LayerNormExt, BatchNormExt,
RmsNorm, MSELossExt or SoftMarginLoss kernel; their expected values come from
MindSpore primitives that compute the same thing (noted per case). Cases that
MindSpore's CPU kernels get wrong are left out, with the reason beside them.
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


def run(op, fn, inputs, attrs, dtype=np.float32, note="", outputs=None, rtol=None):
    try:
        y = fn()
        # Synchronise: errors of an asynchronous launch surface here.
        for v in (y if isinstance(y, (tuple, list)) else [y]):
            v.asnumpy()
    except Exception as e:  # noqa: BLE001
        print(op, attrs, dtype.__name__, "not on CPU:", str(e).splitlines()[0][:150])
        return
    rtol0, atol = tol(dtype)
    rtol = rtol0 if rtol is None else rtol
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

def batch_norm_ext(shape, training, dtype=np.float32, eps=1e-5):
    """Expected from BatchNorm (BatchNormExt has an Ascend kernel only); the
    saved statistics from ReduceMean and Rsqrt."""
    x = o.rand(*shape, dtype=dtype) * 2 + 0.5
    c = shape[1]
    w, b = o.rand(c, lo=0.5, hi=1.5, dtype=dtype), o.rand(c, dtype=dtype)
    rm, rv = o.rand(c, dtype=dtype), o.rand(c, lo=0.5, hi=1.5, dtype=dtype)
    y = P.BatchNorm(is_training=training, epsilon=eps)(t(x), t(w), t(b), t(rm), t(rv))[0]
    axes = (0,) + tuple(range(2, len(shape)))
    if training:
        mean = ops.ReduceMean()(t(x), axes)
        bshape = (1, c) + (1,) * (len(shape) - 2)
        var = ops.ReduceMean()(ops.square(t(x) - mean.reshape(bshape)), axes)
    else:
        mean, var = t(rm), t(rv)
    rstd = ops.rsqrt(var + eps)
    rtol, atol = tol(dtype)
    o.case("BatchNormExt", [x, w, b, rm, rv], dict(training=training, epsilon=eps), (y, mean, rstd),
           rtol=max(rtol, 1e-5), atol=atol, note="expected from BatchNorm: no BatchNormExt CPU kernel")


batch_norm_ext((3, 2, 4, 4), True)
batch_norm_ext((3, 2, 4, 4), False)
batch_norm_ext((5, 3), True, eps=1e-3)
batch_norm_ext((5, 3), False)

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

# ---------------------------------------------------------------------------
# Losses


def bce(shape, reduction="mean", weight=True, edge=False, dtype=np.float32):
    x = o.rand(*shape, lo=0.02, hi=0.98, dtype=dtype)
    y = o.rand(*shape, lo=0.0, hi=1.0, dtype=dtype)
    if edge:
        x.reshape(-1)[:4] = [0.0, 1.0, 0.0, 1.0]
        y.reshape(-1)[:4] = [0.0, 1.0, 0.3, 0.7]
    # weight of the input's shape: MindSpore's CPU kernel misreads a
    # broadcast weight.
    w = o.rand(*shape, lo=0.5, hi=2.0, dtype=dtype) if weight else None
    run("BinaryCrossEntropy", lambda: GP.BinaryCrossEntropy(reduction)(t(x), t(y), t(w)), [x, y, w],
        dict(reduction=reduction), dtype)


for red in ["none", "mean", "sum"]:
    bce((2, 3), red)
    bce((5,), red, weight=False)
bce((2, 4), "none", edge=True)
bce((3, 4), "mean", dtype=np.float16)


def bce_logits(shape, reduction="mean", wshape=None, pshape=None, dtype=np.float32):
    x = o.rand(*shape, lo=-3, hi=3, dtype=dtype)
    y = o.rand(*shape, lo=0.0, hi=1.0, dtype=dtype)
    w = o.rand(*wshape, lo=0.5, hi=2.0, dtype=dtype) if wshape is not None else None
    pw = o.rand(*pshape, lo=0.5, hi=2.0, dtype=dtype) if pshape is not None else None
    run("BCEWithLogitsLoss", lambda: GP.BCEWithLogitsLoss(reduction)(t(x), t(y), t(w), t(pw)),
        [x, y, w, pw], dict(reduction=reduction), dtype)


for red in ["none", "mean", "sum"]:
    bce_logits((2, 3), red, (2, 3), (2, 3))
    bce_logits((2, 3), red)
bce_logits((2, 3), "none", (3,), (2, 1))
bce_logits((4,), "mean", None, (4,))
bce_logits((2, 3), "mean", (2, 3), None, dtype=np.float64)
x_big = np.array([60.0, -60.0, 0.0, 15.0], np.float32)
y_big = np.array([0.0, 1.0, 0.5, 0.25], np.float32)
run("BCEWithLogitsLoss", lambda: GP.BCEWithLogitsLoss("none")(t(x_big), t(y_big), None, None),
    [x_big, y_big, None, None], dict(reduction="none"))


def sce(shape, dtype=np.float32, scale=3.0, rtol=None):
    x = o.rand(*shape, dtype=dtype) * scale
    y = o.rand(*shape, lo=0, hi=1, dtype=dtype)
    run("SigmoidCrossEntropyWithLogits", lambda: P.SigmoidCrossEntropyWithLogits()(t(x), t(y)), [x, y],
        {}, dtype, rtol=rtol)


sce((2, 3))
sce((4,), scale=80.0)
# MindSpore's f64 kernel rounds through f32 (its results are f32 values).
sce((2, 3), dtype=np.float64, rtol=1e-6)
sce((2, 3), dtype=np.float16)


def smooth_l1(shape, beta=1.0, reduction="none", dtype=np.float32):
    x = o.rand(*shape, lo=-2, hi=2, dtype=dtype)
    y = o.rand(*shape, lo=-2, hi=2, dtype=dtype)
    run("SmoothL1Loss", lambda: GP.SmoothL1Loss(beta, reduction)(t(x), t(y)), [x, y],
        dict(beta=beta, reduction=reduction), dtype)


smooth_l1((3, 4))
smooth_l1((3, 4), beta=0.5, reduction="mean")
smooth_l1((3, 4), beta=2.0, reduction="sum")
smooth_l1((5,), dtype=np.float64)
smooth_l1((3, 4), dtype=np.float16)


def kldiv(shape, reduction="mean", dtype=np.float32):
    x = o.rand(*shape, lo=-2, hi=0, dtype=dtype)
    y = o.rand(*shape, lo=-0.2, hi=1, dtype=dtype)  # some non-positive labels
    run("KLDivLoss", lambda: P.KLDivLoss(reduction)(t(x), t(y)), [x, y], dict(reduction=reduction), dtype)


for red in ["none", "mean", "sum", "batchmean"]:
    kldiv((3, 4), red)
kldiv((3, 4), "sum", dtype=np.float64)
kldiv((3, 4), "none", dtype=np.float16)


def composed(op, fn, shapes, reduction, note, dtype=np.float32):
    """Expected from MindSpore primitives (no CPU kernel for `op`)."""
    xs = [o.rand(*s, lo=-2, hi=2, dtype=dtype) for s in shapes]
    if op == "SoftMarginLoss":
        xs[1] = np.sign(xs[1]).astype(dtype)
    loss = fn(*[t(v) for v in xs])
    if reduction == "mean":
        loss = loss.mean()
    elif reduction == "sum":
        loss = loss.sum()
    rtol, atol = tol(dtype)
    o.case(op, xs, dict(reduction=reduction), loss, rtol=rtol, atol=atol, note=note)


for red in ["none", "mean", "sum"]:
    composed("MSELossExt", lambda a, b: ops.square(a - b), [(2, 3), (2, 3)], red,
             "expected from Square(Sub): no MSELossExt CPU kernel")
    composed("SoftMarginLoss", lambda a, b: ops.log(1 + ops.exp(-b * a)), [(2, 3), (2, 3)], red,
             "expected from Log/Exp: no SoftMarginLoss CPU kernel")
composed("MSELossExt", lambda a, b: ops.square(a - b), [(2, 1), (3,)], "none",
         "expected from Square(Sub), broadcasting: no MSELossExt CPU kernel")
composed("MSELossExt", lambda a, b: ops.square(a - b), [(2, 3), (3,)], "mean",
         "expected from Square(Sub), broadcasting: no MSELossExt CPU kernel", dtype=np.float64)


def nll(n, c, labels, reduction="mean", ignore_index=-100, ldtype=np.int32, dtype=np.float32, rtol=None):
    x = o.rand(n, c, lo=-3, hi=0, dtype=dtype)
    y = np.array(labels, ldtype)
    w = o.rand(c, lo=0.5, hi=2.0, dtype=dtype)
    run("NLLLoss", lambda: GP.NLLLoss(reduction, ignore_index)(t(x), t(y), t(w)), [x, y, w],
        dict(reduction=reduction, ignore_index=ignore_index), dtype, rtol=rtol)


for red in ["none", "mean", "sum"]:
    nll(4, 3, [0, 2, 1, 2], red)
# With reduction="none", MindSpore's CPU kernel leaves an ignored sample's
# loss unwritten (stale memory, not 0), so only the reduced forms are checked.
for red in ["mean", "sum"]:
    nll(4, 3, [0, -100, 1, 2], red)
nll(3, 3, [0, 2, 2], "mean", ignore_index=2, ldtype=np.int64)
nll(2, 3, [1, 1], "mean", ignore_index=1)
# MindSpore's f64 NLLLoss rounds through f32 (its results are f32 values).
nll(4, 5, [4, 0, 3, 3], "mean", dtype=np.float64, rtol=1e-6)


def l2loss(shape, dtype=np.float32):
    x = o.rand(*shape, dtype=dtype)
    run("L2Loss", lambda: P.L2Loss()(t(x)), [x], {}, dtype)


l2loss((3, 4))
l2loss(())
l2loss((0, 3))
l2loss((3, 4), dtype=np.float64)
l2loss((3, 4), dtype=np.float16)

o.save()
