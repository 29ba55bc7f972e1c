"""Makes LLaMA-style decoders (RMSNorm, rotary position embedding, causal
attention, SwiGLU) with MindSpore 2.10 at real sizes, under target/scale:

    python3 testdata/scale/gen.py NAME --layers L --dim D [--ffn F] [--seq S]
                                  [--split-above BYTES] [--dtype float32|float16]

writes target/scale/NAME.mindir (or, over MindSpore's 1 GB limit, its
external-data layout NAME_graph.mindir + NAME_variables/data_0), an input
NAME.x.npy, MindSpore's output NAME.out.npy and its timings NAME.ms.json
(load + compile + first run, warm forward, peak RSS).

--split-above lowers MindSpore's limit (serialization.TOTAL_SAVE, in KiB) so
the external-data layout can be made small; the default keeps MindSpore's.
Nothing here is checked in: the files are hundreds of MB to GB.
"""
import argparse
import json
import os
import resource
import sys
import time

import numpy as np


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("name")
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--dim", type=int, default=256)
    ap.add_argument("--ffn", type=int, default=0)
    ap.add_argument("--heads", type=int, default=0)
    ap.add_argument("--seq", type=int, default=16)
    ap.add_argument("--split-above", type=int, default=0, help="bytes")
    ap.add_argument("--dtype", default="float32")
    ap.add_argument("--out", default="target/scale")
    a = ap.parse_args()

    import mindspore as ms
    from mindspore import nn, ops, Tensor, Parameter
    import mindspore.train.serialization as ser

    ms.set_context(mode=ms.GRAPH_MODE, device_target="CPU")
    ms.set_seed(0)
    d = a.dim
    heads = a.heads or max(1, d // 128)
    hd = d // heads
    ffn = a.ffn or int(2 * 4 * d / 3 / 64 + 1) * 64
    dt = ms.float16 if a.dtype == "float16" else ms.float32
    rng = np.random.default_rng(0)

    def w(shape, scale):
        return Parameter(Tensor((rng.standard_normal(shape) * scale).astype(np.float32), dt))

    # Rotary tables for the sequence length.
    pos = np.arange(a.seq)[:, None]
    inv = 1.0 / (10000 ** (np.arange(0, hd, 2) / hd))
    ang = pos * inv[None, :]
    cos = np.concatenate([np.cos(ang), np.cos(ang)], -1).astype(np.float32)
    sin = np.concatenate([np.sin(ang), np.sin(ang)], -1).astype(np.float32)
    mask = np.triu(np.full((a.seq, a.seq), -1e9, np.float32), 1)

    class RMSNorm(nn.Cell):
        def __init__(self):
            super().__init__()
            self.weight = Parameter(Tensor(np.ones(d, np.float32), dt))

        def construct(self, x):
            v = ops.mean(x * x, -1, keep_dims=True)
            return x * ops.rsqrt(v + 1e-6) * self.weight

    class Layer(nn.Cell):
        def __init__(self):
            super().__init__()
            s = 1 / np.sqrt(d)
            self.attn_norm = RMSNorm()
            self.wq = w((d, d), s)
            self.wk = w((d, d), s)
            self.wv = w((d, d), s)
            self.wo = w((d, d), s)
            self.mlp_norm = RMSNorm()
            self.w1 = w((d, ffn), s)
            self.w3 = w((d, ffn), s)
            self.w2 = w((ffn, d), 1 / np.sqrt(ffn))
            self.cos = Tensor(cos, dt)
            self.sin = Tensor(sin, dt)
            self.mask = Tensor(mask, dt)

        def rope(self, x):
            x1 = x[..., : hd // 2]
            x2 = x[..., hd // 2 :]
            rot = ops.cat((-x2, x1), -1)
            return x * self.cos + rot * self.sin

        def construct(self, x):
            b, s, _ = x.shape
            h = self.attn_norm(x)
            q = ops.matmul(h, self.wq).reshape(b, s, heads, hd).transpose(0, 2, 1, 3)
            k = ops.matmul(h, self.wk).reshape(b, s, heads, hd).transpose(0, 2, 1, 3)
            v = ops.matmul(h, self.wv).reshape(b, s, heads, hd).transpose(0, 2, 1, 3)
            q = self.rope(q)
            k = self.rope(k)
            att = ops.matmul(q, k.transpose(0, 1, 3, 2)) * (1.0 / np.sqrt(hd)) + self.mask
            att = ops.softmax(att, -1)
            o = ops.matmul(att, v).transpose(0, 2, 1, 3).reshape(b, s, d)
            x = x + ops.matmul(o, self.wo)
            h = self.mlp_norm(x)
            g = ops.matmul(h, self.w1)
            u = ops.matmul(h, self.w3)
            return x + ops.matmul(ops.silu(g) * u, self.w2)

    class Decoder(nn.Cell):
        def __init__(self):
            super().__init__()
            self.layers = nn.CellList([Layer() for _ in range(a.layers)])
            self.norm = RMSNorm()

        def construct(self, x):
            for layer in self.layers:
                x = layer(x)
            return self.norm(x)

    net = Decoder()
    net.set_train(False)
    x = (rng.standard_normal((1, a.seq, d)) * 0.5).astype(np.float32)
    xt = Tensor(x, dt)
    os.makedirs(a.out, exist_ok=True)
    base = os.path.join(a.out, a.name)
    if a.split_above:
        ser.TOTAL_SAVE = max(1, a.split_above // 1024)
    for old in (base + ".mindir", base + "_graph.mindir"):
        if os.path.exists(old):
            os.chmod(old, 0o600)
            os.remove(old)
    ms.export(net, xt, file_name=base, file_format="MINDIR")
    np.save(base + ".x.npy", x.astype(np.float16) if dt == ms.float16 else x)
    nbytes = sum(p.data.nbytes for p in net.get_parameters())

    # MindSpore's own timings: load the exported model, compile and run once,
    # then the warm forward.
    path = base + ".mindir" if os.path.exists(base + ".mindir") else base + "_graph.mindir"
    t0 = time.time()
    graph = ms.load(path)
    cell = nn.GraphCell(graph)
    out = cell(xt).asnumpy()
    first = time.time() - t0
    warm = []
    for _ in range(3):
        t1 = time.time()
        cell(xt).asnumpy()
        warm.append(time.time() - t1)
    np.save(base + ".out.npy", out.astype(np.float32))
    info = {
        "model": path,
        "weights_bytes": int(nbytes),
        "layers": a.layers,
        "dim": d,
        "ffn": ffn,
        "seq": a.seq,
        "dtype": a.dtype,
        "mindspore_first_s": first,
        "mindspore_warm_s": min(warm),
        "mindspore_peak_rss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
    }
    with open(base + ".ms.json", "w") as f:
        json.dump(info, f, indent=1)
    print(json.dumps(info))


if __name__ == "__main__":
    sys.exit(main())
