"""Writes ms.json: MindSpore 2.10's values for the programs in this directory,
at the inputs of jax.json (`/work/venvs/ms/bin/python ms_oracle.py`).

Each result is computed in float64 in graph mode with `ms.grad`; one that
MindSpore cannot compute is recorded with its error instead (the issue
measured the MAML step failing: "Unexpected meta function graph node").
The Rust test `crates/mirdsl/tests/higher_order_cli.rs` compares mirdsl with
every result present.
"""

import json
import os

import mindspore as ms
import numpy as np
from mindspore import ops

ms.set_context(mode=ms.GRAPH_MODE, device_target="CPU")

here = os.path.dirname(os.path.abspath(__file__))
jax = json.load(open(os.path.join(here, "jax.json")))["cases"]


def inputs(case):
    return {
        k: ms.Tensor(np.array(v["data"], dtype=np.float64).reshape(v["shape"]))
        for k, v in jax[case]["inputs"].items()
    }


def enc(v):
    if isinstance(v, (tuple, list)):
        out = []
        for item in v:
            out.extend(enc(item))
        return out
    a = np.asarray(v.asnumpy(), dtype=np.float64)
    return [{"shape": list(a.shape), "data": a.reshape(-1).tolist()}]


results = {}


def record(case, label, thunk):
    try:
        results.setdefault(case, {})[label] = enc(thunk())
    except Exception as e:  # MindSpore cannot compute it
        msg = str(e).strip().splitlines()
        results.setdefault(case, {})[label] = {
            "error": (type(e).__name__ + ": " + (msg[0] if msg else ""))[:300]
        }


# reproducer.mir
def rep_f(x, y):
    return x / (1 + ops.square(y))


a = inputs("reproducer")
record("reproducer", "grad f wrt 0,1", lambda: ms.grad(rep_f, grad_position=(0, 1))(a["x"], a["y"]))


# grad_grad.mir
def gg_f(x):
    return ops.sum(ops.sin(x) * x + ops.square(x) * ops.exp(-x)) + ops.sum(
        ops.tanh(ops.matmul(x, x.T))
    )


def g1(x):
    return ops.sum(ms.grad(gg_f)(x))


def g2(x):
    return ops.sum(ms.grad(g1)(x))


a = inputs("grad_grad")
record("grad_grad", "run gg", lambda: ms.grad(ms.grad(gg_f))(a["x"]))
record("grad_grad", "grad g1", lambda: ms.grad(g1)(a["x"]))
record("grad_grad", "grad g2", lambda: ms.grad(g2)(a["x"]))


# hvp.mir
def hv_f(x, w):
    return ops.sum(ops.sin(x * w) * x + ops.square(x) * ops.exp(-x)) + ops.sum(
        ops.sqrt(1 + ops.square(w))
    )


def gv(x, w, v):
    return ops.sum(ms.grad(hv_f)(x, w) * v)


a = inputs("hvp")
record("hvp", "grad gv wrt x,w,v", lambda: ms.grad(gv, grad_position=(0, 1, 2))(a["x"], a["w"], a["v"]))


# maml.mir
def loss(w, x, y):
    d = ops.matmul(x, w) - y
    return ops.mean(ops.square(ops.tanh(d))) + 0.125 * ops.sum(ops.square(w))


def adapted(w, x, y):
    return w - 0.5 * ms.grad(loss)(w, x, y)


def maml(w, x, y, x2, y2):
    return loss(adapted(w, x, y), x2, y2)


a = inputs("maml")
args = (a["w"], a["x"], a["y"], a["x2"], a["y2"])
record("maml", "grad maml wrt w,x", lambda: ms.grad(maml, grad_position=(0, 1))(*args))

with open(os.path.join(here, "ms.json"), "w") as f:
    json.dump({"mindspore": ms.__version__, "cases": results}, f, indent=1)
    f.write("\n")
