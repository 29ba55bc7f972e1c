"""Writes jax.json: JAX's values for the programs in this directory.

Run with a Python that has JAX (`/work/venvs/jax/bin/python jax_oracle.py`).
The inputs are drawn here and stored with the results; the Rust test
`crates/mirdsl/tests/higher_order_cli.rs` replays them through `mirdsl grad`
and `mirdsl run` and compares. JAX computes in float64; mirdsl in float32.
"""

import json
import os

import jax
import jax.numpy as jnp
import numpy as np

jax.config.update("jax_enable_x64", True)


def draw(seed, shapes):
    rng = np.random.RandomState(seed)
    return {k: rng.uniform(-1.0, 1.0, s) for k, s in shapes.items()}


def enc(v):
    v = np.asarray(v, dtype=np.float64)
    return {"shape": list(v.shape), "data": [float(t) for t in v.reshape(-1)]}


def leaves(v):
    return [enc(t) for t in jax.tree_util.tree_leaves(v)]


cases = {}

# reproducer.mir
def rep_f(x, y):
    return x / (1 + jnp.square(y))


a = draw(1, {"x": (2, 3), "y": (3,)})
cases["reproducer"] = {
    "inputs": a,
    "results": {
        "grad f wrt 0,1": leaves(
            jax.grad(lambda x, y: jnp.sum(rep_f(x, y)), argnums=(0, 1))(a["x"], a["y"])
        ),
    },
}

# grad_grad.mir
def gg_f(x):
    return jnp.sum(jnp.sin(x) * x + jnp.square(x) * jnp.exp(-x)) + jnp.sum(jnp.tanh(x @ x.T))


def g1(x):
    return jnp.sum(jax.grad(gg_f)(x))


def g2(x):
    return jnp.sum(jax.grad(g1)(x))


a = draw(2, {"x": (2, 3)})
cases["grad_grad"] = {
    "inputs": a,
    "results": {
        "run gg": leaves(jax.grad(g1)(a["x"])),
        "grad g1": leaves(jax.grad(g1)(a["x"])),
        "grad g2": leaves(jax.grad(g2)(a["x"])),
    },
}

# hvp.mir
def hv_f(x, w):
    return jnp.sum(jnp.sin(x * w) * x + jnp.square(x) * jnp.exp(-x)) + jnp.sum(
        jnp.sqrt(1 + jnp.square(w))
    )


def gv(x, w, v):
    return jnp.sum(jax.grad(hv_f)(x, w) * v)


a = draw(3, {"x": (2, 3), "w": (3,), "v": (2, 3)})
hv = jax.jvp(lambda x: jax.grad(hv_f)(x, a["w"]), (a["x"],), (a["v"],))[1]
cases["hvp"] = {
    "inputs": a,
    "results": {
        "grad gv wrt x,w,v": leaves(jax.grad(gv, argnums=(0, 1, 2))(a["x"], a["w"], a["v"])),
        "run h": leaves(hv),
    },
}

# maml.mir
def loss(w, x, y):
    d = x @ w - y
    return jnp.mean(jnp.square(jnp.tanh(d))) + 0.125 * jnp.sum(jnp.square(w))


def adapted(w, x, y):
    return w - 0.5 * jax.grad(loss)(w, x, y)


def maml(w, x, y, x2, y2):
    return loss(adapted(w, x, y), x2, y2)


a = draw(4, {"w": (3, 2), "x": (4, 3), "y": (4, 2), "x2": (4, 3), "y2": (4, 2)})
args = (a["w"], a["x"], a["y"], a["x2"], a["y2"])
cases["maml"] = {
    "inputs": a,
    "results": {
        "grad maml wrt w,x": leaves(jax.grad(maml, argnums=(0, 1))(*args)),
        "run meta_grad": leaves(jax.grad(maml)(*args)),
    },
}

# jvp.mir
def jf(x, y):
    return (jnp.sin(x) * y, jnp.sum(jnp.exp(y) * x))


a = draw(5, {"x": (3,), "y": (2, 3), "dx": (3,), "dy": (2, 3)})
out, tangent = jax.jvp(jf, (a["x"], a["y"]), (a["dx"], a["dy"]))
cases["jvp"] = {"inputs": a, "results": {"run j": leaves((out, tangent))}}

for c in cases.values():
    c["inputs"] = {k: enc(v) for k, v in c["inputs"].items()}

here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, "jax.json"), "w") as f:
    json.dump({"jax": jax.__version__, "cases": cases}, f, indent=1)
    f.write("\n")
