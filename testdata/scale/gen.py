"""Makes the models of issue 23 with MindSpore 2.10 at real sizes, under
target/scale (nothing here is checked in: the files are 100 MB to GB):

    python3 testdata/scale/gen.py NAME [--arch decoder|resnet50|bert] [sizes...]
                                  [--split-above BYTES] [--dtype float32|float16]

  decoder   LLaMA-style decoder (RMSNorm, rotary position embedding, causal
            attention, SwiGLU): --layers L --dim D [--ffn F] [--heads H] [--seq S]
            (the issue's: --layers 4 --dim 1024, 203 MB; --layers 8 --dim 2048,
            1.62 GB in the external-data layout)
  resnet50  ResNet-50 (bottleneck blocks 3,4,6,3, BatchNorm in inference mode,
            1000 classes) on 1x3xIMAGExIMAGE: --dim 64 (base width) --image 224
            (98 MB); smaller: --dim 8 --image 32
  bert      BERT-base (word/position/type embeddings, 12 post-LN layers with a
            padding mask, exact GELU, tanh pooler): --layers 12 --dim 768
            --vocab 30522 --seq 128 (418 MB); inputs ids, types (i32) and mask

writes target/scale/NAME.mindir (or, over MindSpore's 1 GB limit, its
external-data layout NAME_graph.mindir + NAME_variables/data_0), the inputs
(NAME.x.npy for a one-input model, NAME.<arg>.npy otherwise), MindSpore's
outputs NAME.out.npy (the first) and NAME.out_<i>.npy (each), and
NAME.ms.json: the arguments as `mirdsl run --arg` takes them ("args"), the
outputs ("outs"), and MindSpore's timings (load + compile + first run, warm
forward, peak RSS).

--split-above lowers MindSpore's limit (serialization.TOTAL_SAVE, in KiB) so
the external-data layout can be made small; the default keeps MindSpore's.
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
    ap.add_argument("--arch", default="decoder", choices=["decoder", "resnet50", "bert"])
    ap.add_argument("--layers", type=int, default=0)
    ap.add_argument("--dim", type=int, default=0)
    ap.add_argument("--ffn", type=int, default=0)
    ap.add_argument("--heads", type=int, default=0)
    ap.add_argument("--seq", type=int, default=0)
    ap.add_argument("--vocab", type=int, default=30522)
    ap.add_argument("--image", type=int, default=224)
    ap.add_argument("--split-above", type=int, default=0, help="bytes")
    ap.add_argument("--dtype", default="float32")
    ap.add_argument("--out", default="target/scale")
    a = ap.parse_args()

    import mindspore as ms
    from mindspore import nn, Tensor
    import mindspore.train.serialization as ser

    ms.set_context(mode=ms.GRAPH_MODE, device_target="CPU")
    ms.set_seed(0)
    dt = ms.float16 if a.dtype == "float16" else ms.float32
    rng = np.random.default_rng(0)
    build = {"decoder": decoder, "resnet50": resnet50, "bert": bert}[a.arch]
    net, inputs, sizes = build(a, rng, dt)
    net.set_train(False)
    tensors = [Tensor(v, dt) if v.dtype == np.float32 else Tensor(v) for _, v in inputs]
    os.makedirs(a.out, exist_ok=True)
    base = os.path.join(a.out, a.name)
    if a.split_above:
        ser.TOTAL_SAVE = max(1, a.split_above // 1024)
    for old in (base + ".mindir", base + "_graph.mindir"):
        if os.path.exists(old):
            os.chmod(old, 0o600)
            os.remove(old)
    ms.export(net, *tensors, file_name=base, file_format="MINDIR")
    args = []
    for (arg, v), t in zip(inputs, tensors):
        f = base + (".x.npy" if len(inputs) == 1 else f".{arg}.npy")
        np.save(f, t.asnumpy())
        args.append([arg, os.path.basename(f)])
    nbytes = sum(p.data.nbytes for p in net.get_parameters())

    # MindSpore's own timings: load the exported model, compile and run once,
    # then the warm forward.
    path = base + ".mindir" if os.path.exists(base + ".mindir") else base + "_graph.mindir"
    t0 = time.time()
    graph = ms.load(path)
    cell = nn.GraphCell(graph)
    out = cell(*tensors)
    outs = [o.asnumpy() for o in (out if isinstance(out, (tuple, list)) else [out])]
    first = time.time() - t0
    warm = []
    for _ in range(3):
        t1 = time.time()
        o = cell(*tensors)
        [x.asnumpy() for x in (o if isinstance(o, (tuple, list)) else [o])]
        warm.append(time.time() - t1)
    names = []
    for i, o in enumerate(outs):
        np.save(base + f".out_{i}.npy", o)
        names.append(os.path.basename(base + f".out_{i}.npy"))
    np.save(base + ".out.npy", outs[0].astype(np.float32))
    info = {
        "model": path,
        "arch": a.arch,
        "weights_bytes": int(nbytes),
        **sizes,
        "dtype": a.dtype,
        "args": args,
        "outs": names,
        "mindspore_first_s": first,
        "mindspore_warm_s": min(warm),
        "mindspore_peak_rss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
    }
    with open(base + ".ms.json", "w") as f:
        json.dump(info, f, indent=1)
    print(json.dumps(info))


def decoder(a, rng, dt):
    """The LLaMA-style decoder: parameters layers.N.{wq,wk,wv,wo,w1,w3,w2},
    layers.N.{attn,mlp}_norm.weight and norm.weight, x: [1, seq, dim]."""
    from mindspore import nn, ops, Tensor, Parameter

    layers = a.layers or 2
    d = a.dim or 256
    seq = a.seq or 16
    heads = a.heads or max(1, d // 128)
    hd = d // heads
    ffn = a.ffn or int(2 * 4 * d / 3 / 64 + 1) * 64

    def w(shape, scale):
        return Parameter(Tensor((rng.standard_normal(shape) * scale).astype(np.float32), dt))

    # Rotary tables for the sequence length.
    pos = np.arange(seq)[:, None]
    inv = 1.0 / (10000 ** (np.arange(0, hd, 2) / hd))
    ang = pos * inv[None, :]
    cos = np.concatenate([np.cos(ang), np.cos(ang)], -1).astype(np.float32)
    sin = np.concatenate([np.sin(ang), np.sin(ang)], -1).astype(np.float32)
    mask = np.triu(np.full((seq, seq), -1e9, np.float32), 1)

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
            self.layers = nn.CellList([Layer() for _ in range(layers)])
            self.norm = RMSNorm()

        def construct(self, x):
            for layer in self.layers:
                x = layer(x)
            return self.norm(x)

    x = (rng.standard_normal((1, seq, d)) * 0.5).astype(np.float32)
    sizes = {"layers": layers, "dim": d, "ffn": ffn, "heads": heads, "seq": seq}
    return Decoder(), [("x", x)], sizes


def randomise_norms(net, rng):
    """Non-trivial BatchNorm statistics and norm affine parameters."""
    from mindspore import Tensor

    for p in net.get_parameters():
        n, shape = p.name, p.shape
        if n.endswith("moving_mean"):
            v = rng.uniform(-0.2, 0.2, shape)
        elif n.endswith("moving_variance"):
            v = rng.uniform(0.5, 1.5, shape)
        elif n.endswith("gamma"):
            v = rng.uniform(0.8, 1.2, shape)
        elif n.endswith("beta"):
            v = rng.uniform(-0.1, 0.1, shape)
        else:
            continue
        p.set_data(Tensor(v.astype(np.float32), p.dtype))


def resnet50(a, rng, dt):
    """ResNet-50 (torchvision's layout: bottlenecks with the stride on the
    3x3 conv), BatchNorm in inference mode; x: [1, 3, image, image]."""
    from mindspore import nn, ops

    width = a.dim or 64
    image = a.image
    blocks = [3, 4, 6, 3]

    def conv_bn(cin, cout, k, stride=1, relu=True):
        layers = [nn.Conv2d(cin, cout, k, stride=stride, pad_mode="pad", padding=k // 2,
                            has_bias=False, weight_init="he_normal"),
                  nn.BatchNorm2d(cout)]
        if relu:
            layers.append(nn.ReLU())
        return nn.SequentialCell(layers)

    class Bottleneck(nn.Cell):
        def __init__(self, cin, mid, stride):
            super().__init__()
            cout = mid * 4
            self.conv1 = conv_bn(cin, mid, 1)
            self.conv2 = conv_bn(mid, mid, 3, stride)
            self.conv3 = conv_bn(mid, cout, 1, relu=False)
            self.down = None
            if stride != 1 or cin != cout:
                self.down = conv_bn(cin, cout, 1, stride, relu=False)
            self.relu = nn.ReLU()

        def construct(self, x):
            identity = x
            out = self.conv3(self.conv2(self.conv1(x)))
            if self.down is not None:
                identity = self.down(x)
            return self.relu(out + identity)

    class ResNet50(nn.Cell):
        def __init__(self):
            super().__init__()
            self.stem = conv_bn(3, width, 7, 2)
            self.pool = nn.MaxPool2d(kernel_size=3, stride=2, pad_mode="pad", padding=1)
            layers, cin = [], width
            for i, n in enumerate(blocks):
                mid = width * 2 ** i
                for j in range(n):
                    layers.append(Bottleneck(cin, mid, 2 if (j == 0 and i > 0) else 1))
                    cin = mid * 4
            self.layers = nn.SequentialCell(layers)
            self.fc = nn.Dense(cin, 1000)

        def construct(self, x):
            x = self.layers(self.pool(self.stem(x)))
            return self.fc(ops.mean(x, (2, 3)))

    net = ResNet50()
    randomise_norms(net, rng)
    x = rng.standard_normal((1, 3, image, image)).astype(np.float32)
    return net, [("x", x)], {"width": width, "image": image}


def bert(a, rng, dt):
    """BERT-base: embeddings + LayerNorm, post-LN layers (fused qkv attention
    with an additive padding mask, exact GELU FFN), tanh pooler; returns the
    last hidden state and the pooled output. ids, types: i32[1, seq]; mask:
    f32[1, seq] (the last quarter padding)."""
    import mindspore as ms
    from mindspore import nn, ops

    layers = a.layers or 12
    d = a.dim or 768
    heads = a.heads or max(1, d // 64)
    ffn = a.ffn or 4 * d
    seq = a.seq or 128
    vocab = a.vocab
    dh = d // heads

    class Attention(nn.Cell):
        def __init__(self):
            super().__init__()
            self.qkv = nn.Dense(d, 3 * d)
            self.o = nn.Dense(d, d)
            self.bmm = ops.BatchMatMul()
            self.bmm_t = ops.BatchMatMul(transpose_b=True)
            self.softmax = nn.Softmax(-1)

        def construct(self, x, add_mask):
            b, t, _ = x.shape
            qkv = ops.reshape(self.qkv(x), (b, t, 3, heads, dh))
            qkv = ops.transpose(qkv, (2, 0, 3, 1, 4))
            q, k, v = qkv[0], qkv[1], qkv[2]
            s = self.bmm_t(q, k) * (1.0 / np.sqrt(dh))
            p = self.softmax(s + add_mask)
            y = ops.transpose(self.bmm(p, v), (0, 2, 1, 3))
            return self.o(ops.reshape(y, (b, t, d)))

    class Layer(nn.Cell):
        def __init__(self):
            super().__init__()
            self.attn = Attention()
            self.ln1 = nn.LayerNorm((d,))
            self.ff1, self.ff2 = nn.Dense(d, ffn), nn.Dense(ffn, d)
            self.gelu = nn.GELU(approximate=False)
            self.ln2 = nn.LayerNorm((d,))

        def construct(self, x, add_mask):
            x = self.ln1(x + self.attn(x, add_mask))
            return self.ln2(x + self.ff2(self.gelu(self.ff1(x))))

    class Bert(nn.Cell):
        def __init__(self):
            super().__init__()
            self.word = nn.Embedding(vocab, d)
            self.pos = nn.Embedding(512, d)
            self.type = nn.Embedding(2, d)
            self.ln = nn.LayerNorm((d,))
            self.layers = nn.CellList([Layer() for _ in range(layers)])
            self.pooler = nn.Dense(d, d, activation="tanh")

        def construct(self, ids, types, mask):
            b, t = ids.shape
            pos = ops.arange(t, dtype=ms.int32)
            x = self.word(ids) + ops.expand_dims(self.pos(pos), 0) + self.type(types)
            x = self.ln(x)
            add_mask = ops.reshape((1.0 - mask) * -10000.0, (b, 1, 1, t))
            for layer in self.layers:
                x = layer(x, add_mask)
            return x, self.pooler(x[:, 0])

    net = Bert()
    randomise_norms(net, rng)
    ids = rng.integers(0, vocab, (1, seq)).astype(np.int32)
    types = (np.arange(seq)[None, :] >= seq // 2).astype(np.int32)
    mask = (np.arange(seq)[None, :] < seq - seq // 4).astype(np.float32)
    sizes = {"layers": layers, "dim": d, "heads": heads, "ffn": ffn, "seq": seq, "vocab": vocab}
    return net, [("ids", ids), ("types", types), ("mask", mask)], sizes


if __name__ == "__main__":
    sys.exit(main())
