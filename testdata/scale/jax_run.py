"""gen.py's LLaMA-style decoder in JAX (jax.jit on the CPU), from the same
weights: the .safetensors file `mirdsl import` wrote for the model (keyed by
MindSpore's parameter names; a weight the importer wrote as `ones`, the
RMSNorm scales, is not in it and is ones here too):

    python3 testdata/scale/jax_run.py WEIGHTS.safetensors NAME.ms.json NAME.x.npy [NAME.out.npy]

first_s: reading the weights, compiling and running once; warm_s: the
fastest of three more runs; rel_err: against MindSpore's output when given.
Prints them as JSON.
"""
import json
import struct
import sys
import time

import numpy as np


def safetensors(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
    data = np.memmap(path, dtype=np.uint8, mode="r", offset=8 + n)
    types = {"F32": np.float32, "F16": np.float16}
    out = {}
    for name, e in header.items():
        if name == "__metadata__":
            continue
        a, b = e["data_offsets"]
        out[name] = np.frombuffer(data[a:b], dtype=types[e["dtype"]]).reshape(e["shape"])
    return out


def main():
    t0 = time.time()
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_platform_name", "cpu")
    weights_path, info_path, x_path = sys.argv[1:4]
    want = np.load(sys.argv[4]) if len(sys.argv) > 4 else None
    info = json.load(open(info_path))
    layers, d, ffn, seq = info["layers"], info["dim"], info["ffn"], info["seq"]
    heads = info.get("heads") or max(1, d // 128)
    hd = d // heads
    raw = safetensors(weights_path)
    dt = jnp.float16 if info.get("dtype") == "float16" else jnp.float32

    def get(name, shape):
        v = raw.get(name)
        return jnp.asarray(v) if v is not None else jnp.ones(shape, dt)

    params = {
        "layers": [
            {k: get(f"layers.{i}.{k}", None) for k in ["wq", "wk", "wv", "wo", "w1", "w3", "w2"]}
            | {"attn_norm": get(f"layers.{i}.attn_norm.weight", (d,)),
               "mlp_norm": get(f"layers.{i}.mlp_norm.weight", (d,))}
            for i in range(layers)
        ],
        "norm": get("norm.weight", (d,)),
    }
    pos = np.arange(seq)[:, None]
    inv = 1.0 / (10000 ** (np.arange(0, hd, 2) / hd))
    ang = pos * inv[None, :]
    cos = jnp.asarray(np.concatenate([np.cos(ang)] * 2, -1), dt)
    sin = jnp.asarray(np.concatenate([np.sin(ang)] * 2, -1), dt)
    mask = jnp.asarray(np.triu(np.full((seq, seq), -1e9, np.float32), 1), dt)

    def rms(x, w):
        return x * jax.lax.rsqrt(jnp.mean(x * x, -1, keepdims=True) + 1e-6) * w

    def rope(x):
        x1, x2 = x[..., : hd // 2], x[..., hd // 2 :]
        return x * cos + jnp.concatenate([-x2, x1], -1) * sin

    def forward(p, x):
        b, s, _ = x.shape
        for l in p["layers"]:
            h = rms(x, l["attn_norm"])
            q, k, v = (
                (h @ l[w]).reshape(b, s, heads, hd).transpose(0, 2, 1, 3) for w in ("wq", "wk", "wv")
            )
            q, k = rope(q), rope(k)
            att = jax.nn.softmax(q @ k.transpose(0, 1, 3, 2) * (1.0 / np.sqrt(hd)) + mask, -1)
            o = (att @ v).transpose(0, 2, 1, 3).reshape(b, s, d)
            x = x + o @ l["wo"]
            h = rms(x, l["mlp_norm"])
            x = x + (jax.nn.silu(h @ l["w1"]) * (h @ l["w3"])) @ l["w2"]
        return rms(x, p["norm"])

    f = jax.jit(forward)
    x = jnp.asarray(np.load(x_path))
    out = np.asarray(f(params, x))
    first = time.time() - t0
    warm = []
    for _ in range(3):
        t1 = time.time()
        np.asarray(f(params, x))
        warm.append(time.time() - t1)
    r = {"first_s": first, "warm_s": min(warm)}
    if want is not None:
        w = want.astype(np.float64)
        r["rel_err"] = float(np.abs(out.astype(np.float64) - w).max() / np.abs(w).max())
    print(json.dumps(r))


if __name__ == "__main__":
    sys.exit(main())
