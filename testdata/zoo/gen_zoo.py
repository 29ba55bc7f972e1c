#!/usr/bin/env python3
"""The model zoo: real networks exported by MindSpore 2.10 (CPU, GRAPH_MODE).

Optional, like the oracle: the repository's tests only read what this script
wrote (`testdata/zoo/<name>/`), they never need MindSpore.

Set up: python3 -m venv .venv && .venv/bin/pip install mindspore==2.10.0 'numpy<2'
Run:    .venv/bin/python testdata/zoo/gen_zoo.py            # every network
        .venv/bin/python testdata/zoo/gen_zoo.py lstm gru    # only these
        .venv/bin/python testdata/zoo/gen_zoo.py --list      # names and descriptions

Each network gets a directory `<name>/` with
  model.mindir        `mindspore.export(net, *inputs, file_format="MINDIR")`
  in0.npy, in1.npy..  the inputs, in the entry graph's parameter order
  expected.json       the output of the *exported file* loaded back
                      (`nn.GraphCell(mindspore.load(path))`) on those inputs, in the
                      `mirdsl run --format json` form: a tensor is
                      {"dtype": "f32", "shape": [...], "data": [...]}, a tuple a JSON array.
Training cells (`nn.TrainOneStepCell`) also get
  expected_steps.json {"steps": [out1, out2]}: the exported step run twice in a row
                      on the same inputs (the second run sees the weights the first
                      one updated); expected.json is steps[0]
  weights_after.safetensors
                      every parameter of the loaded graph (weights and optimizer
                      state) after the two steps, keyed by MindSpore's parameter names.

Weights are MindSpore's initialisers under `mindspore.set_seed(0)`, except that
BatchNorm statistics and LayerNorm/BatchNorm affine parameters are set from a
seeded NumPy generator (MindSpore's defaults, 0 and 1, would not test them).
Inputs come from `numpy.random.default_rng(<per-network seed>)`.
"""
import json
import os
import shutil
import struct
import subprocess
import sys
import zlib

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
NETS = {}  # name -> (description, builder); filled by @net below


def net(name, description):
    def register(builder):
        NETS[name] = (description, builder)
        return builder
    return register


# ---------------------------------------------------------------------------
# Encoding results and weights

DSL_DTYPE = {"float16": "f16", "float32": "f32", "float64": "f64", "int8": "i8",
             "int16": "i16", "int32": "i32", "int64": "i64", "uint8": "u8", "bool": "bool"}


def enc(v):
    """A MindSpore value in the `mirdsl run --format json` form."""
    if isinstance(v, (tuple, list)):
        return [enc(e) for e in v]
    if v is None:
        return None
    if hasattr(v, "asnumpy"):
        v = v.asnumpy()
    if isinstance(v, np.ndarray):
        def elem(x):
            if isinstance(x, float):
                if np.isnan(x):
                    return "nan"
                if np.isinf(x):
                    return "inf" if x > 0 else "-inf"
            return x
        data = [elem(x) for x in v.reshape(-1).tolist()]
        return {"dtype": DSL_DTYPE[str(v.dtype)], "shape": list(v.shape), "data": data}
    if isinstance(v, bool):
        return {"dtype": "bool", "value": v}
    if isinstance(v, (int, np.integer)):
        return {"dtype": "i64", "value": int(v)}
    if isinstance(v, (float, np.floating)):
        return {"dtype": "f32", "value": float(v)}
    raise TypeError(type(v))


SAFETENSORS_DTYPE = {"float16": "F16", "float32": "F32", "float64": "F64", "int8": "I8",
                     "int16": "I16", "int32": "I32", "int64": "I64", "uint8": "U8",
                     "bool": "BOOL"}


def write_safetensors(path, tensors):
    """A minimal safetensors writer: 8-byte little-endian header length, a JSON
    header {name: {dtype, shape, data_offsets}}, then the raw little-endian data."""
    header, blobs, offset = {}, [], 0
    for name in sorted(tensors):
        a = np.ascontiguousarray(tensors[name])
        a = a.astype(a.dtype.newbyteorder("<"), copy=False)
        raw = a.tobytes()
        header[name] = {"dtype": SAFETENSORS_DTYPE[str(a.dtype)], "shape": list(a.shape),
                        "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    head = json.dumps(header, separators=(",", ":")).encode()
    head += b" " * (-len(head) % 8)  # the format allows padding the header with spaces
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(head)))
        f.write(head)
        for raw in blobs:
            f.write(raw)


# ---------------------------------------------------------------------------
# Helpers for building networks (imported lazily: --list needs no MindSpore)

def ms_modules():
    import mindspore as ms
    from mindspore import nn, ops, Tensor
    return ms, nn, ops, Tensor


def randomise_norms(cell, seed):
    """Non-trivial BatchNorm statistics and norm affine parameters."""
    ms, _, _, Tensor = ms_modules()
    rng = np.random.default_rng(seed)
    for p in cell.get_parameters():
        n = p.name
        shape = p.shape
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
        p.set_data(Tensor(v.astype(np.float32)))


def rng_for(name):
    return np.random.default_rng(zlib.crc32(name.encode()))


def normal(rng, *shape, dtype=np.float32):
    return rng.standard_normal(shape).astype(dtype)


# ---------------------------------------------------------------------------
# Convolutional networks

def conv_bn(nn, cin, cout, k, stride=1, groups=1, act=None):
    """Conv2d (no bias) + BatchNorm2d (+ activation)."""
    layers = [nn.Conv2d(cin, cout, k, stride=stride, pad_mode="pad", padding=k // 2,
                        group=groups, has_bias=False),
              nn.BatchNorm2d(cout)]
    if act is not None:
        layers.append(act())
    return nn.SequentialCell(layers)


def basic_block_cls():
    ms, nn, ops, Tensor = ms_modules()

    class BasicBlock(nn.Cell):
        """ResNet's basic block: 3x3 conv-BN-ReLU, 3x3 conv-BN, + shortcut, ReLU."""
        def __init__(self, cin, cout, stride=1):
            super().__init__()
            self.conv1 = conv_bn(nn, cin, cout, 3, stride, act=nn.ReLU)
            self.conv2 = conv_bn(nn, cout, cout, 3)
            self.down = None
            if stride != 1 or cin != cout:
                self.down = nn.SequentialCell([
                    nn.Conv2d(cin, cout, 1, stride=stride, has_bias=False),
                    nn.BatchNorm2d(cout)])
            self.relu = nn.ReLU()

        def construct(self, x):
            identity = x
            out = self.conv2(self.conv1(x))
            if self.down is not None:
                identity = self.down(x)
            return self.relu(out + identity)
    return BasicBlock


@net("resnet_block", "ResNet basic block (identity shortcut), 8 channels, BatchNorm in inference mode")
def _resnet_block(rng):
    block = basic_block_cls()(8, 8)
    return block, [normal(rng, 2, 8, 8, 8)]


@net("resnet18", "ResNet-18 topology (7x7 stem, max-pool, 4 stages of 2 basic blocks, "
     "adaptive average pool, Dense) with base width 8, 10 classes, 1x3x32x32 input")
def _resnet18(rng):
    ms, nn, ops, Tensor = ms_modules()
    BasicBlock = basic_block_cls()

    class ResNet18(nn.Cell):
        def __init__(self, width=8, classes=10):
            super().__init__()
            self.stem = conv_bn(nn, 3, width, 7, stride=2, act=nn.ReLU)
            self.pool = nn.MaxPool2d(kernel_size=3, stride=2, pad_mode="pad", padding=1)
            blocks, cin = [], width
            for i, w in enumerate([width, width * 2, width * 4, width * 8]):
                stride = 1 if i == 0 else 2
                blocks += [BasicBlock(cin, w, stride), BasicBlock(w, w)]
                cin = w
            self.layers = nn.SequentialCell(blocks)
            self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
            self.flatten = nn.Flatten()
            self.fc = nn.Dense(cin, classes)

        def construct(self, x):
            x = self.layers(self.pool(self.stem(x)))
            return self.fc(self.flatten(self.avgpool(x)))
    return ResNet18(), [normal(rng, 1, 3, 32, 32)]


@net("mobilenet_block", "MobileNet depthwise-separable block: 3x3 depthwise conv (group=C)-BN-ReLU6, "
     "1x1 pointwise conv-BN-ReLU6")
def _mobilenet_block(rng):
    ms, nn, ops, Tensor = ms_modules()

    class DepthwiseSeparable(nn.Cell):
        def __init__(self, cin, cout):
            super().__init__()
            self.dw = conv_bn(nn, cin, cin, 3, groups=cin, act=nn.ReLU6)
            self.pw = conv_bn(nn, cin, cout, 1, act=nn.ReLU6)

        def construct(self, x):
            return self.pw(self.dw(x))
    return DepthwiseSeparable(8, 16), [normal(rng, 2, 8, 8, 8)]


@net("mobilenetv2", "MobileNetV2 (all 17 inverted-residual blocks, width multiplier 0.25, "
     "last channel 64), 10 classes, 1x3x32x32 input")
def _mobilenetv2(rng):
    ms, nn, ops, Tensor = ms_modules()

    def div8(v):
        return max(8, int(v + 4) // 8 * 8)

    class InvertedResidual(nn.Cell):
        def __init__(self, cin, cout, stride, expand):
            super().__init__()
            hidden = cin * expand
            layers = []
            if expand != 1:
                layers.append(conv_bn(nn, cin, hidden, 1, act=nn.ReLU6))
            layers += [conv_bn(nn, hidden, hidden, 3, stride, groups=hidden, act=nn.ReLU6),
                       conv_bn(nn, hidden, cout, 1)]
            self.conv = nn.SequentialCell(layers)
            self.residual = stride == 1 and cin == cout

        def construct(self, x):
            if self.residual:
                return x + self.conv(x)
            return self.conv(x)

    class MobileNetV2(nn.Cell):
        def __init__(self, width=0.25, classes=10, last=64):
            super().__init__()
            cfg = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2),
                   (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)]
            cin = div8(32 * width)
            layers = [conv_bn(nn, 3, cin, 3, 2, act=nn.ReLU6)]
            for t, c, n, s in cfg:
                cout = div8(c * width)
                for i in range(n):
                    layers.append(InvertedResidual(cin, cout, s if i == 0 else 1, t))
                    cin = cout
            layers.append(conv_bn(nn, cin, last, 1, act=nn.ReLU6))
            self.features = nn.SequentialCell(layers)
            self.mean = ops.ReduceMean(keep_dims=False)
            self.head = nn.Dense(last, classes)

        def construct(self, x):
            return self.head(self.mean(self.features(x), (2, 3)))
    return MobileNetV2(), [normal(rng, 1, 3, 32, 32)]


@net("conv_transpose_upsample", "Conv2dTranspose (stride 2) then nearest-neighbour upsampling "
     "(ops.interpolate, scale 2) and a 3x3 conv")
def _conv_transpose(rng):
    ms, nn, ops, Tensor = ms_modules()

    class Up(nn.Cell):
        def __init__(self):
            super().__init__()
            self.deconv = nn.Conv2dTranspose(4, 6, 2, stride=2, has_bias=True)
            self.conv = nn.Conv2d(6, 2, 3, pad_mode="same", has_bias=True)

        def construct(self, x):
            y = ops.relu(self.deconv(x))
            y = ops.interpolate(y, scale_factor=(2.0, 2.0), mode="nearest", recompute_scale_factor=True)
            return self.conv(y)
    return Up(), [normal(rng, 1, 4, 4, 4)]


@net("unet", "UNet-style encoder/decoder: two 2x down-samplings (max-pool), a bottleneck, "
     "Conv2dTranspose up-samplings with skip concatenations, 1x1 head; 1x3x16x16 input")
def _unet(rng):
    ms, nn, ops, Tensor = ms_modules()

    def double(cin, cout):
        return nn.SequentialCell([
            nn.Conv2d(cin, cout, 3, pad_mode="same", has_bias=True), nn.ReLU(),
            nn.Conv2d(cout, cout, 3, pad_mode="same", has_bias=True), nn.ReLU()])

    class UNet(nn.Cell):
        def __init__(self):
            super().__init__()
            self.enc1, self.enc2 = double(3, 4), double(4, 8)
            self.pool = nn.MaxPool2d(2, 2)
            self.mid = double(8, 16)
            self.up2 = nn.Conv2dTranspose(16, 8, 2, stride=2)
            self.dec2 = double(16, 8)
            self.up1 = nn.Conv2dTranspose(8, 4, 2, stride=2)
            self.dec1 = double(8, 4)
            self.head = nn.Conv2d(4, 2, 1, has_bias=True)
            self.cat = ops.Concat(axis=1)

        def construct(self, x):
            e1 = self.enc1(x)
            e2 = self.enc2(self.pool(e1))
            m = self.mid(self.pool(e2))
            d2 = self.dec2(self.cat((self.up2(m), e2)))
            d1 = self.dec1(self.cat((self.up1(d2), e1)))
            return self.head(d1)
    return UNet(), [normal(rng, 1, 3, 16, 16)]


# ---------------------------------------------------------------------------
# Attention and transformers

@net("transformer_encoder_layer", "nn.TransformerEncoderLayer(d_model=16, nhead=2, "
     "dim_feedforward=32, dropout=0, batch_first=True) on 2x5x16")
def _transformer_encoder_layer(rng):
    ms, nn, ops, Tensor = ms_modules()
    layer = nn.TransformerEncoderLayer(16, 2, dim_feedforward=32, dropout=0.0, batch_first=True)
    return layer, [normal(rng, 2, 5, 16)]


@net("causal_attention", "causal multi-head self-attention (2 heads of 8): Dense q/k/v, "
     "scaled BatchMatMul scores, a constant bool upper-triangular mask via masked_fill, softmax")
def _causal_attention(rng):
    ms, nn, ops, Tensor = ms_modules()

    class CausalSelfAttention(nn.Cell):
        def __init__(self, d=16, heads=2, t=6):
            super().__init__()
            self.h, self.dh = heads, d // heads
            self.q, self.k, self.v = nn.Dense(d, d), nn.Dense(d, d), nn.Dense(d, d)
            self.o = nn.Dense(d, d)
            self.mask = Tensor(np.triu(np.ones((t, t), np.bool_), 1))
            self.scale = 1.0 / np.sqrt(self.dh)

        def split(self, x):
            b, t, _ = x.shape
            return ops.transpose(ops.reshape(x, (b, t, self.h, self.dh)), (0, 2, 1, 3))

        def construct(self, x):
            b, t, d = x.shape
            q, k, v = self.split(self.q(x)), self.split(self.k(x)), self.split(self.v(x))
            s = ops.matmul(q, ops.transpose(k, (0, 1, 3, 2))) * self.scale
            s = ops.masked_fill(s, self.mask, float("-inf"))
            p = ops.softmax(s, -1)
            y = ops.transpose(ops.matmul(p, v), (0, 2, 1, 3))
            return self.o(ops.reshape(y, (b, t, d)))
    return CausalSelfAttention(), [normal(rng, 2, 6, 16)]


def attention_cls():
    ms, nn, ops, Tensor = ms_modules()

    class Attention(nn.Cell):
        """Multi-head attention with one fused qkv Dense and an additive mask."""
        def __init__(self, d, heads):
            super().__init__()
            self.h, self.dh = heads, d // heads
            self.qkv = nn.Dense(d, 3 * d)
            self.o = nn.Dense(d, d)
            self.bmm = ops.BatchMatMul()
            self.bmm_t = ops.BatchMatMul(transpose_b=True)
            self.softmax = nn.Softmax(-1)

        def construct(self, x, add_mask):
            b, t, d = x.shape
            qkv = ops.reshape(self.qkv(x), (b, t, 3, self.h, self.dh))
            qkv = ops.transpose(qkv, (2, 0, 3, 1, 4))
            q, k, v = qkv[0], qkv[1], qkv[2]
            s = self.bmm_t(q, k) / ops.sqrt(ops.scalar_to_tensor(self.dh, ms.float32))
            p = self.softmax(s + add_mask)
            y = ops.transpose(self.bmm(p, v), (0, 2, 1, 3))
            return self.o(ops.reshape(y, (b, t, d)))
    return Attention


@net("bert_encoder", "BERT-style encoder: word/position/token-type embeddings + LayerNorm, "
     "2 post-LN layers (attention with a padding mask, GELU FFN), tanh pooler; "
     "inputs ids, token types (i32[2,6]) and attention mask (f32[2,6])")
def _bert(rng):
    ms, nn, ops, Tensor = ms_modules()
    Attention = attention_cls()

    class Layer(nn.Cell):
        def __init__(self, d, heads, ffn):
            super().__init__()
            self.attn = Attention(d, heads)
            self.ln1 = nn.LayerNorm((d,))
            self.ff1, self.ff2 = nn.Dense(d, ffn), nn.Dense(ffn, d)
            self.gelu = nn.GELU(approximate=False)
            self.ln2 = nn.LayerNorm((d,))

        def construct(self, x, add_mask):
            x = self.ln1(x + self.attn(x, add_mask))
            return self.ln2(x + self.ff2(self.gelu(self.ff1(x))))

    class Bert(nn.Cell):
        def __init__(self, vocab=30, d=16, heads=2, ffn=32, max_pos=16, types=2, layers=2):
            super().__init__()
            self.word = nn.Embedding(vocab, d)
            self.pos = nn.Embedding(max_pos, d)
            self.type = nn.Embedding(types, d)
            self.ln = nn.LayerNorm((d,))
            self.layers = nn.CellList([Layer(d, heads, ffn) for _ in range(layers)])
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
    ids = rng.integers(0, 30, (2, 6)).astype(np.int32)
    types = np.array([[0, 0, 0, 1, 1, 1], [0, 0, 1, 1, 0, 0]], np.int32)
    mask = np.array([[1, 1, 1, 1, 1, 1], [1, 1, 1, 1, 0, 0]], np.float32)
    net = Bert()
    randomise_norms(net, 1)
    return net, [ids, types, mask]


@net("gpt_block", "GPT-style pre-LN decoder block: LayerNorm, fused-qkv causal attention "
     "(additive mask built in the graph from ops.triu), tanh-GELU MLP (4x), residuals")
def _gpt_block(rng):
    ms, nn, ops, Tensor = ms_modules()
    Attention = attention_cls()

    class Block(nn.Cell):
        def __init__(self, d=16, heads=2):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm((d,)), nn.LayerNorm((d,))
            self.attn = Attention(d, heads)
            self.fc = nn.Dense(d, 4 * d)
            self.proj = nn.Dense(4 * d, d)
            self.gelu = nn.GELU(approximate=True)

        def construct(self, x):
            t = x.shape[1]
            causal = ops.triu(ops.ones((t, t), ms.float32), 1) * -1e9
            x = x + self.attn(self.ln1(x), causal)
            return x + self.proj(self.gelu(self.fc(self.ln2(x))))
    net = Block()
    randomise_norms(net, 2)
    return net, [normal(rng, 2, 6, 16)]


# ---------------------------------------------------------------------------
# Recurrent networks and embeddings

@net("lstm", "nn.LSTM(4, 8, batch_first=True) on 2x5x4, no initial state; "
     "returns (output, (h_n, c_n))")
def _lstm(rng):
    ms, nn, ops, Tensor = ms_modules()
    return nn.LSTM(4, 8, batch_first=True), [normal(rng, 2, 5, 4)]


@net("lstm_stacked", "nn.LSTM(4, 8, num_layers=2, batch_first=True) with explicit (h0, c0) inputs")
def _lstm_stacked(rng):
    ms, nn, ops, Tensor = ms_modules()

    class Stacked(nn.Cell):
        def __init__(self):
            super().__init__()
            self.lstm = nn.LSTM(4, 8, num_layers=2, batch_first=True)

        def construct(self, x, h0, c0):
            return self.lstm(x, (h0, c0))
    return Stacked(), [normal(rng, 2, 5, 4), normal(rng, 2, 2, 8), normal(rng, 2, 2, 8)]


@net("gru", "nn.GRU(4, 8, batch_first=True) on 2x5x4; returns (output, h_n)")
def _gru(rng):
    ms, nn, ops, Tensor = ms_modules()
    return nn.GRU(4, 8, batch_first=True), [normal(rng, 2, 5, 4)]


@net("gru_stacked", "nn.GRU(4, 8, num_layers=2, batch_first=True) with an explicit h0 input")
def _gru_stacked(rng):
    ms, nn, ops, Tensor = ms_modules()

    class Stacked(nn.Cell):
        def __init__(self):
            super().__init__()
            self.gru = nn.GRU(4, 8, num_layers=2, batch_first=True)

        def construct(self, x, h0):
            return self.gru(x, h0)
    return Stacked(), [normal(rng, 2, 5, 4), normal(rng, 2, 2, 8)]


@net("embedding_classifier", "nn.Embedding(50, 8) over i32[3,7] token ids, mean over the "
     "sequence, Dense(8, 4), log-softmax")
def _embedding_classifier(rng):
    ms, nn, ops, Tensor = ms_modules()

    class Classifier(nn.Cell):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(50, 8)
            self.fc = nn.Dense(8, 4)
            self.log_softmax = nn.LogSoftmax(-1)

        def construct(self, ids):
            return self.log_softmax(self.fc(ops.mean(self.emb(ids), 1)))
    return Classifier(), [rng.integers(0, 50, (3, 7)).astype(np.int32)]


# ---------------------------------------------------------------------------
# Control flow

@net("while_tensor_cond", "`while x.sum() < 50: x = x * 1.5 + w` (a loop whose condition is a "
     "tensor computed in the loop)")
def _while_cond(rng):
    ms, nn, ops, Tensor = ms_modules()

    class WhileCond(nn.Cell):
        def __init__(self):
            super().__init__()
            self.w = ms.Parameter(Tensor(np.full((4,), 0.25, np.float32)), name="w")

        def construct(self, x):
            while x.sum() < 50.0:
                x = x * 1.5 + self.w
            return x
    return WhileCond(), [np.abs(normal(rng, 4)) + 0.1]


@net("while_tensor_state", "`while i < n` with an i32 scalar-tensor counter and bound (an input) "
     "and tensor state (an accumulator and a running value); returns (acc, x, i)")
def _while_state(rng):
    ms, nn, ops, Tensor = ms_modules()

    class WhileState(nn.Cell):
        def construct(self, x, n):
            i = Tensor(0, ms.int32)
            acc = ops.zeros_like(x)
            while i < n:
                acc = acc + x * ops.cast(i, ms.float32)
                x = ops.tanh(x) + 0.5
                i = i + 1
            return acc, x, i
    return WhileState(), [normal(rng, 3), np.array(5, np.int32)]


@net("for_loop", "`for layer in CellList` over 3 Dense+tanh layers, then `for i in range(4)` "
     "accumulating; MindSpore unrolls both")
def _for_loop(rng):
    ms, nn, ops, Tensor = ms_modules()

    class ForLoop(nn.Cell):
        def __init__(self):
            super().__init__()
            self.layers = nn.CellList([nn.Dense(6, 6, activation="tanh") for _ in range(3)])

        def construct(self, x):
            for layer in self.layers:
                x = layer(x)
            s = x
            for i in range(4):
                s = s * 0.5 + x * i
            return s
    return ForLoop(), [normal(rng, 2, 6)]


# MindSpore 2.10 on CPU: there is no `ops.fori_loop` function (only the primitive
# `ops.ForiLoop`); `ForiLoop` with a constant bound and `unroll=False` fails to compile
# ("Invalid input num ... for partial node"), and a body closing over a Parameter fails to
# infer ("The object is not callable", a DeadNode). The closest variant that works: a
# tensor bound and a body without weights (the weights come after the loop).
@net("fori_loop", "ops.ForiLoop()(0, n, body, x) with an i32 scalar-tensor bound n (an input), "
     "then a Dense: a counted loop MindSpore keeps as a loop")
def _fori_loop(rng):
    ms, nn, ops, Tensor = ms_modules()

    def body(i, v):
        return ops.tanh(v) * 0.9 + ops.cast(i, ms.float32) * 0.1

    class ForiLoop(nn.Cell):
        def __init__(self):
            super().__init__()
            self.fori = ops.ForiLoop()
            self.fc = nn.Dense(4, 3)

        def construct(self, x, n):
            return self.fc(self.fori(0, n, body, x))
    return ForiLoop(), [normal(rng, 2, 4), np.array(5, np.int32)]


@net("while_loop_op", "ops.WhileLoop()(cond, body, x) (the primitive form of a while loop): "
     "`while v.sum() < 50: v = v * 1.5 + 0.25`")
def _while_loop_op(rng):
    ms, nn, ops, Tensor = ms_modules()

    class WhileLoopOp(nn.Cell):
        def __init__(self):
            super().__init__()
            self.while_loop = ops.WhileLoop()

        def construct(self, x):
            def cond(v):
                return v.sum() < 50.0
            def body(v):
                return v * 1.5 + 0.25
            return self.while_loop(cond, body, x)
    return WhileLoopOp(), [np.abs(normal(rng, 2, 3)) + 0.1]


@net("nested_if", "nested `if`s on tensor conditions (sum, max, mean) with four different "
     "branch bodies")
def _nested_if(rng):
    ms, nn, ops, Tensor = ms_modules()

    class NestedIf(nn.Cell):
        def construct(self, x, y):
            if x.sum() > 0:
                if y.max() > 0.5:
                    z = x * y
                else:
                    z = x - y
            else:
                if x.mean() < -0.5:
                    z = ops.exp(x)
                else:
                    z = x + 1.0
            return z * 2.0
    x = np.array([0.5, -0.2, 0.9, 0.3], np.float32)
    y = np.array([0.1, 0.7, -0.3, 0.2], np.float32)
    return NestedIf(), [x, y]


# ---------------------------------------------------------------------------
# Elementwise, indexing, dtypes, outputs

# MindSpore 2.10: there is no nn.Softplus (ops.Softplus is used), and nn.ELU only accepts
# alpha=1.0 ("In Elu, alpha must be 1.0f").
@net("activations", "GELU (erf and tanh), SiLU, Softplus, clamp(-0.5, 0.8), HSwish, Mish, ELU, "
     "LeakyReLU; one output each")
def _activations(rng):
    ms, nn, ops, Tensor = ms_modules()

    class Acts(nn.Cell):
        def __init__(self):
            super().__init__()
            self.gelu = nn.GELU(approximate=False)
            self.gelu_tanh = nn.GELU(approximate=True)
            self.silu = nn.SiLU()
            self.softplus = ops.Softplus()
            self.hswish = nn.HSwish()
            self.mish = nn.Mish()
            self.elu = nn.ELU()
            self.leaky = nn.LeakyReLU(0.1)

        def construct(self, x):
            return (self.gelu(x), self.gelu_tanh(x), self.silu(x), self.softplus(x),
                    ops.clamp(x, -0.5, 0.8), self.hswish(x), self.mish(x), self.elu(x),
                    self.leaky(x))
    return Acts(), [normal(rng, 3, 5) * 2.0]


@net("gather_onehot_topk_cumsum", "ops.gather (axis 0 and 1), ops.one_hot, ops.topk, ops.cumsum, "
     "argmax, on f32[4,6] with i32 indices")
def _gather(rng):
    ms, nn, ops, Tensor = ms_modules()

    class Indexing(nn.Cell):
        def construct(self, x, idx, labels):
            g0 = ops.gather(x, idx, 0)
            g1 = ops.gather(x, idx, 1)
            oh = ops.one_hot(labels, 5, Tensor(1.0, ms.float32), Tensor(0.0, ms.float32))
            values, indices = ops.topk(x, 3)
            cs = ops.cumsum(x, 1)
            am = ops.argmax(x, 1)
            return g0, g1, oh, values, indices, cs, am
    x = normal(rng, 4, 6)
    return Indexing(), [x, np.array([3, 0, 2], np.int32), np.array([1, 4, 0, 2], np.int32)]


@net("mixed_precision", "mixed float16/float32: Dense layers run in f16 via `to_float`, a "
     "LayerNorm and softmax in f32, an f16 input; outputs one f16 and one f32 tensor")
def _mixed(rng):
    ms, nn, ops, Tensor = ms_modules()

    class Mixed(nn.Cell):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Dense(8, 16).to_float(ms.float16)
            self.fc2 = nn.Dense(16, 4).to_float(ms.float16)
            self.ln = nn.LayerNorm((16,))

        def construct(self, x, bias16):
            h = ops.relu(self.fc1(x))                       # f16
            h = self.ln(ops.cast(h, ms.float32))            # f32
            logits16 = self.fc2(h) + bias16                 # f16
            probs = ops.softmax(ops.cast(logits16, ms.float32), -1)
            return logits16, probs
    net = Mixed()
    randomise_norms(net, 3)
    return net, [normal(rng, 3, 8), normal(rng, 4, dtype=np.float16)]


@net("multi_output", "several outputs of several kinds: a nested tuple of f32 tensors, an i64 "
     "argmax, a bool comparison, and a 0-d reduction")
def _multi_output(rng):
    ms, nn, ops, Tensor = ms_modules()

    class Multi(nn.Cell):
        def __init__(self):
            super().__init__()
            self.fc = nn.Dense(5, 3)

        def construct(self, x):
            y = self.fc(x)
            return y, (ops.relu(y), ops.sigmoid(y)), ops.argmax(y, -1), y > 0, y.sum()
    return Multi(), [normal(rng, 4, 5)]


# ---------------------------------------------------------------------------
# Training steps

def train_cell(net, loss, opt_name):
    ms, nn, ops, Tensor = ms_modules()
    params = net.trainable_params()
    if opt_name == "sgd":
        opt = nn.SGD(params, learning_rate=0.1)
    elif opt_name == "momentum":
        opt = nn.Momentum(params, learning_rate=0.05, momentum=0.9)
    else:
        opt = nn.Adam(params, learning_rate=0.01)
    step = nn.TrainOneStepCell(nn.WithLossCell(net, loss), opt)
    step.set_train(True)
    return step


def mlp(nn, sizes):
    layers = []
    for i, (a, b) in enumerate(zip(sizes, sizes[1:])):
        layers.append(nn.Dense(a, b))
        if i + 2 < len(sizes):
            layers.append(nn.ReLU())
    return nn.SequentialCell(layers)


@net("train_sgd", "nn.TrainOneStepCell(WithLossCell(MLP 8-16-3, sparse softmax cross-entropy), "
     "nn.SGD(lr=0.1)); inputs x f32[4,8], labels i32[4]; output the loss")
def _train_sgd(rng):
    ms, nn, ops, Tensor = ms_modules()
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    step = train_cell(mlp(nn, [8, 16, 3]), loss, "sgd")
    return step, [normal(rng, 4, 8), np.array([0, 2, 1, 2], np.int32)]


@net("train_momentum", "nn.TrainOneStepCell(WithLossCell(conv 1->4 3x3, ReLU, flatten, Dense, "
     "sparse softmax cross-entropy), nn.Momentum(lr=0.05, momentum=0.9)); x f32[2,1,6,6]")
def _train_momentum(rng):
    ms, nn, ops, Tensor = ms_modules()
    net = nn.SequentialCell([nn.Conv2d(1, 4, 3, pad_mode="valid", has_bias=True), nn.ReLU(),
                             nn.Flatten(), nn.Dense(4 * 4 * 4, 3)])
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    step = train_cell(net, loss, "momentum")
    return step, [normal(rng, 2, 1, 6, 6), np.array([2, 0], np.int32)]


@net("train_adam", "nn.TrainOneStepCell(WithLossCell(MLP 6-12-2, MSELoss), nn.Adam(lr=0.01)); "
     "x f32[5,6], target f32[5,2]")
def _train_adam(rng):
    ms, nn, ops, Tensor = ms_modules()
    step = train_cell(mlp(nn, [6, 12, 2]), nn.MSELoss(), "adam")
    return step, [normal(rng, 5, 6), normal(rng, 5, 2)]


# ---------------------------------------------------------------------------

def is_training(name):
    return name.startswith("train_")


def generate(name):
    ms, nn, ops, Tensor = ms_modules()
    description, builder = NETS[name]
    ms.set_seed(0)
    network, inputs = builder(rng_for(name))
    if not is_training(name):
        network.set_train(False)
    out_dir = os.path.join(HERE, name)
    shutil.rmtree(out_dir, ignore_errors=True)
    os.makedirs(out_dir)
    base = os.path.join(out_dir, "model")
    ms.export(network, *[Tensor(a) for a in inputs], file_name=base, file_format="MINDIR")
    path = base + ".mindir"
    for i, a in enumerate(inputs):
        np.save(os.path.join(out_dir, f"in{i}.npy"), a)
    cell = nn.GraphCell(ms.load(path))
    args = [Tensor(a) for a in inputs]
    first = enc(cell(*args))
    with open(os.path.join(out_dir, "expected.json"), "w") as f:
        json.dump(first, f)
    if is_training(name):
        second = enc(cell(*args))
        with open(os.path.join(out_dir, "expected_steps.json"), "w") as f:
            json.dump({"steps": [first, second]}, f)
        weights = {p.name: p.asnumpy() for p in cell.get_parameters()}
        write_safetensors(os.path.join(out_dir, "weights_after.safetensors"), weights)
    size = os.path.getsize(path)
    print(f"ok   {name}: {size} bytes", flush=True)


def main(argv):
    if "--list" in argv:
        for name, (description, _) in NETS.items():
            print(f"{name}: {description}")
        return 0
    if argv[1:2] == ["--one"]:
        # One network in this process. MindSpore numbers primitives and nodes per
        # process, so a fresh process per network makes the files reproducible
        # whichever subset is regenerated.
        import mindspore as ms
        ms.set_context(mode=ms.GRAPH_MODE)
        ms.set_device("CPU")
        generate(argv[2])
        return 0
    names = [a for a in argv[1:] if not a.startswith("-")] or list(NETS)
    unknown = [n for n in names if n not in NETS]
    if unknown:
        print(f"unknown networks: {', '.join(unknown)}", file=sys.stderr)
        return 2
    failed = []
    for name in names:
        r = subprocess.run([sys.executable, os.path.abspath(__file__), "--one", name],
                           capture_output=True, text=True)
        lines = [l for l in (r.stdout + r.stderr).splitlines()
                 if l.strip() and not l.startswith("[WARNING]")]
        if r.returncode == 0:
            print(lines[-1] if lines else f"ok   {name}", flush=True)
        else:
            print(f"FAIL {name}: " + " | ".join(lines[-4:])[:600], flush=True)
            failed.append(name)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
