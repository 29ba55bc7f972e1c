"""The `bench run` models in JAX (`jax.jit(jax.value_and_grad(...))`, CPU).

    python jax_models.py MODEL STEPS

prints `ms = X` (the median time of a value_and_grad step, the result
fetched) and `peak_mib = Y` (XLA's memory analysis of the compiled step:
arguments, outputs and temporaries), for MODEL in mlp, lenet, transformer,
resnet: the same shapes, initialisation scale and loss as
crates/bench/models/*.mir."""
import statistics
import sys
import time

import numpy as np
import jax
import jax.numpy as jnp
from jax import lax

rng = np.random.default_rng(0)


def normal(shape, std):
    return jnp.asarray(rng.normal(0.0, std, shape).astype(np.float32))


def zeros(*shape):
    return jnp.zeros(shape, jnp.float32)


def ones(*shape):
    return jnp.ones(shape, jnp.float32)


def dense(x, w, b):
    return x @ w.T + b


def ce(logits, labels):
    lse = jax.nn.logsumexp(logits, axis=-1)
    picked = jnp.take_along_axis(logits, labels[:, None], axis=-1)[:, 0]
    return jnp.mean(lse - picked)


def conv(x, w, pad):
    return lax.conv_general_dilated(
        x, w, (1, 1), [(pad, pad), (pad, pad)], dimension_numbers=("NCHW", "OIHW", "NCHW")
    )


def maxpool(x):
    return lax.reduce_window(x, -jnp.inf, lax.max, (1, 1, 2, 2), (1, 1, 2, 2), "VALID")


def mlp():
    p = {
        "fc1": (normal((256, 784), 0.05), zeros(256)),
        "fc2": (normal((256, 256), 0.05), zeros(256)),
        "fc3": (normal((10, 256), 0.05), zeros(10)),
    }

    def loss(p, x, y):
        h = jax.nn.relu(dense(x, *p["fc1"]))
        h = jax.nn.relu(dense(h, *p["fc2"]))
        return ce(dense(h, *p["fc3"]), y)

    return p, loss, (128, 784)


def lenet():
    p = {
        "conv1": normal((6, 1, 5, 5), 0.1),
        "conv2": normal((16, 6, 5, 5), 0.1),
        "fc1": (normal((120, 400), 0.05), zeros(120)),
        "fc2": (normal((84, 120), 0.05), zeros(84)),
        "fc3": (normal((10, 84), 0.05), zeros(10)),
    }

    def loss(p, x, y):
        h = maxpool(jax.nn.relu(conv(x, p["conv1"], 0)))
        h = maxpool(jax.nn.relu(conv(h, p["conv2"], 0)))
        h = h.reshape(h.shape[0], -1)
        h = jax.nn.relu(dense(h, *p["fc1"]))
        h = jax.nn.relu(dense(h, *p["fc2"]))
        return ce(dense(h, *p["fc3"]), y)

    return p, loss, (32, 1, 32, 32)


def layer_norm(x, g, b):
    m = jnp.mean(x, axis=-1, keepdims=True)
    v = jnp.mean(jnp.square(x - m), axis=-1, keepdims=True)
    return (x - m) * lax.rsqrt(v + 1e-5) * g + b


def transformer():
    p = {
        "q": (normal((256, 256), 0.06), zeros(256)),
        "k": (normal((256, 256), 0.06), zeros(256)),
        "v": (normal((256, 256), 0.06), zeros(256)),
        "o": (normal((256, 256), 0.06), zeros(256)),
        "ln1": (ones(256), zeros(256)),
        "ffn1": (normal((1024, 256), 0.06), zeros(1024)),
        "ffn2": (normal((256, 1024), 0.03), zeros(256)),
        "ln2": (ones(256), zeros(256)),
        "head": (normal((10, 256), 0.06), zeros(10)),
    }

    def heads(t):
        return t.reshape(-1, 128, 4, 64).transpose(0, 2, 1, 3)

    def loss(p, x, y):
        h = x.reshape(-1, 256)
        q, k, v = (heads(dense(h, *p[n])) for n in "qkv")
        a = jax.nn.softmax((q @ k.transpose(0, 1, 3, 2)) * 0.125, axis=-1) @ v
        a = a.transpose(0, 2, 1, 3).reshape(-1, 256)
        h1 = layer_norm(h + dense(a, *p["o"]), *p["ln1"])
        f = jax.nn.gelu(dense(h1, *p["ffn1"]), approximate=True)
        h2 = layer_norm(h1 + dense(f, *p["ffn2"]), *p["ln2"])
        pooled = jnp.mean(h2.reshape(-1, 128, 256), axis=1)
        return ce(dense(pooled, *p["head"]), y)

    return p, loss, (8, 128, 256)


def batch_norm(x, g, b):
    m = jnp.mean(x, axis=(0, 2, 3), keepdims=True)
    v = jnp.mean(jnp.square(x - m), axis=(0, 2, 3), keepdims=True)
    return (x - m) * lax.rsqrt(v + 1e-5) * g[None, :, None, None] + b[None, :, None, None]


def resnet():
    p = {
        f"b{b}.{c}": (normal((64, 64, 3, 3), 0.06), ones(64), zeros(64))
        for b in (1, 2)
        for c in (1, 2)
    }
    p["head"] = (normal((10, 64), 0.1), zeros(10))

    def block(p, x, b):
        w1, g1, be1 = p[f"b{b}.1"]
        w2, g2, be2 = p[f"b{b}.2"]
        h = jax.nn.relu(batch_norm(conv(x, w1, 1), g1, be1))
        return jax.nn.relu(batch_norm(conv(h, w2, 1), g2, be2) + x)

    def loss(p, x, y):
        h = block(p, block(p, x, 1), 2)
        return ce(dense(jnp.mean(h, axis=(2, 3)), *p["head"]), y)

    return p, loss, (16, 64, 32, 32)


def main():
    name, steps = sys.argv[1], int(sys.argv[2])
    params, loss, shape = {"mlp": mlp, "lenet": lenet, "transformer": transformer, "resnet": resnet}[name]()
    x = jnp.asarray(rng.random(shape, dtype=np.float32) - 0.5)
    y = jnp.asarray(np.arange(shape[0]) % 10, dtype=jnp.int32)
    step = jax.jit(jax.value_and_grad(loss))
    compiled = step.lower(params, x, y).compile()
    peak = None
    try:
        m = compiled.memory_analysis()
        peak = m.argument_size_in_bytes + m.output_size_in_bytes + m.temp_size_in_bytes - m.alias_size_in_bytes
    except Exception:
        pass
    for _ in range(3):
        jax.block_until_ready(step(params, x, y))
    times = []
    for _ in range(steps):
        t = time.perf_counter()
        jax.block_until_ready(step(params, x, y))
        times.append(time.perf_counter() - t)
    print(f"ms = {statistics.median(times) * 1e3}")
    if peak is not None:
        print(f"peak_mib = {peak / 2**20}")


main()
