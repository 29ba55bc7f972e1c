"""MindSpore oracle for the extended neural-network family (`nn::common`):
the LSTM primitive (`rnn`), as MindSpore 2.10's CPU kernel computes it, and
Dense, EmbeddingLookup, Embedding, Dropout2D and Dropout3D (`nn::layers`).

Run: /work/venvs/ms/bin/python crates/ops/tests/ms_oracle/nn_rnn.py

Only `output`, `h_n` and `c_n` are compared: `reserve` and `state` are
oneDNN's workspace and random state in MindSpore, placeholders here.
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import Oracle  # noqa: E402

import mindspore as ms  # noqa: E402
from mindspore import Tensor, nn, ops  # noqa: E402
from mindspore.ops import operations as P  # noqa: E402

o = Oracle("nn_rnn")


def weight_size(i, h, layers, bias, dirs):
    g = 4 * h
    wih = sum(g * (i if k == 0 else h * dirs) * dirs for k in range(layers))
    return wih + layers * dirs * g * h + (layers * dirs * g if bias else 0)


def lstm(t, n, i, h, layers=1, bias=True, bidi=False, dtype=np.float32):
    dirs = 2 if bidi else 1
    x = o.rand(t, n, i, dtype=dtype)
    h0 = o.rand(layers * dirs, n, h, dtype=dtype)
    c0 = o.rand(layers * dirs, n, h, dtype=dtype)
    w = o.rand(weight_size(i, h, layers, bias, dirs), 1, 1, lo=-0.5, hi=0.5, dtype=dtype)
    attrs = dict(input_size=i, hidden_size=h, num_layers=layers, has_bias=bias, bidirectional=bidi,
                 dropout=0.0)
    try:
        y = P.LSTM(**attrs)(Tensor(x), Tensor(h0), Tensor(c0), Tensor(w))
        [v.asnumpy() for v in y]
    except Exception as e:  # noqa: BLE001
        print("LSTM", attrs, dtype.__name__, "not on CPU:", str(e).splitlines()[0][:200])
        return
    o.case("LSTM", [x, h0, c0, w], attrs, y, rtol=1e-5, atol=1e-6, outputs=[0, 1, 2])


lstm(3, 2, 4, 5)
lstm(3, 2, 4, 5, bias=False)
lstm(1, 3, 2, 3)
lstm(5, 1, 3, 2, bidi=True)
lstm(4, 2, 3, 3, layers=2)
lstm(4, 2, 4, 2, layers=2, bidi=True)
lstm(3, 2, 4, 3, layers=2)
lstm(3, 2, 4, 5, dtype=np.float64)
lstm(3, 2, 4, 5, dtype=np.float16)

# nn.LSTM's own layout: w_ih, w_hh and b_ih + b_hh flattened, as
# `_DynamicLSTMCPUGPU` passes them to the primitive.
ms.set_seed(3)
net = nn.LSTM(4, 3, batch_first=False)
x = o.rand(5, 2, 4)
h0 = o.rand(1, 2, 3)
c0 = o.rand(1, 2, 3)
y, (hn, cn) = net(Tensor(x), (Tensor(h0), Tensor(c0)))
params = {p.name.split(".")[-1]: p.asnumpy() for p in net.get_parameters()}
w = np.concatenate([params["weight_ih_l0"].reshape(-1), params["weight_hh_l0"].reshape(-1),
                    (params["bias_ih_l0"] + params["bias_hh_l0"]).reshape(-1)]).reshape(-1, 1, 1)
o.case("LSTM", [x, h0, c0, w],
       dict(input_size=4, hidden_size=3, num_layers=1, has_bias=True, bidirectional=False, dropout=0.0),
       (y, hn, cn, ops.zeros((1, 1)), ops.zeros((1, 1))), rtol=1e-5, atol=1e-6, outputs=[0, 1, 2],
       note="nn.LSTM(4, 3) in PyNative mode")


# ---------------------------------------------------------------------------
# Dense / EmbeddingLookup / Embedding / Dropout2D / Dropout3D

from mindspore.ops.auto_generate import gen_ops_prim as GP  # noqa: E402


def dense(xs, ws, bs, dtype=np.float32):
    x = o.rand(*xs, dtype=dtype)
    w = o.rand(*ws, dtype=dtype)
    b = o.rand(*bs, dtype=dtype) if bs is not None else None
    try:
        y = GP.Dense()(Tensor(x), Tensor(w), None if b is None else Tensor(b))
        y.asnumpy()
    except Exception as e:  # noqa: BLE001
        print("Dense", xs, ws, bs, dtype.__name__, "not on CPU:", str(e).splitlines()[0][:200])
        return
    rtol = 1e-5 if dtype == np.float32 else 1e-10
    o.case("Dense", [x, w, () if b is None else b], {}, y, rtol=rtol, atol=1e-6)


dense((3, 4), (5, 4), (5,))
dense((2, 3, 4), (5, 4), (5,))
dense((3, 4), (5, 4), None)
dense((3, 4), (4,), None)
dense((3, 4), (2, 4), ())
dense((3, 4), (5, 4), (5,), dtype=np.float64)


def lookup(ps, idx, offset, dtype=np.float32):
    p = o.rand(*ps, dtype=dtype)
    i = np.array(idx, np.int32)
    y = P.EmbeddingLookup()(Tensor(p), Tensor(i), offset)
    o.case("EmbeddingLookup", [p, i], dict(offset=offset), y)


lookup((5, 3), [[0, 1], [4, 2]], 0)
lookup((5, 3), [2, 3, 7, 4, 6, 1], 2)
lookup((4,), [0, 3, 5, -1], 0)



def embedding(idx, ws, note, **kw):
    """Expected from Gather (and Norm/Mul for max_norm): no Embedding CPU kernel."""
    w = o.rand(*ws)
    i = np.array(idx, np.int64)
    rows = Tensor(w)
    if kw.get("max_norm") is not None:
        norms = ops.norm(rows, kw.get("norm_type", 2.0), dim=1, keepdim=True)
        scale = ops.where(norms > kw["max_norm"], kw["max_norm"] / (norms + 1e-7), ops.ones_like(norms))
        rows = rows * scale
    y = ops.gather(rows, Tensor(i), 0)
    o.case("Embedding", [i, w], kw, y, note=note)


embedding([0, 3, 3, 1], (5, 3), "expected from Gather")
embedding([[0, 4], [2, 2]], (5, 3), "expected from Gather", padding_idx=2)
embedding([0, 3, 1], (5, 4), "expected from Norm/Gather", max_norm=0.6)
embedding([0, 3, 1], (5, 4), "expected from Norm/Gather", max_norm=0.8, norm_type=1.0)

# Dropout2D/3D: only keep_prob=1 (the identity, every channel kept) is
# deterministic in MindSpore.
for prim, op, shape in [(P.Dropout2D, "Dropout2D", (2, 3, 2, 2)), (P.Dropout3D, "Dropout3D", (2, 2, 2, 1, 2))]:
    x = o.rand(*shape)
    y = prim(1.0)(Tensor(x))
    o.case(op, [x], dict(keep_prob=1.0), y)

o.save()
