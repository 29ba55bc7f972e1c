#!/usr/bin/env python3
"""MindSpore's compile dumps (save_graphs=2) of real training steps.

Optional, like testdata/zoo/gen_zoo.py: nothing in the repository's default tests
needs MindSpore. This script compiles each network below in GRAPH_MODE on CPU with

    mindspore.set_context(mode=GRAPH_MODE, save_graphs=2, save_graphs_path=<dir>)

and runs it once, so MindSpore writes one `.ir` file per compile stage and pass
(`*_bootstrap`, `*_type_inference`, ..., `*_optimize`, `opt_pass_*`, `hwopt_*`,
`*_execute`). The dumps go under target/irdumps/<name>/ (they are large and are
regenerated, not committed).

Run:    python3 testdata/irdumps/gen_dumps.py              # every network
        python3 testdata/irdumps/gen_dumps.py resnet_momentum
        python3 testdata/irdumps/gen_dumps.py --list
        python3 testdata/irdumps/gen_dumps.py --out DIR     # another root

Each <name>/ also gets
  in0.npy, in1.npy ...      the step's inputs
  weights_before.ckpt       every parameter before the step (mindspore.save_checkpoint)
  weights_after.ckpt        every parameter after the one step
  loss.json                 {"loss": float} the step's output
"""
import json
import os
import shutil
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
NETS = {}


def net(name, description):
    def register(builder):
        NETS[name] = (description, builder)
        return builder
    return register


@net("resnet_momentum", "ResNet-style CNN (stem conv-BN-ReLU-MaxPool, 3 residual blocks, "
     "AdaptiveAvgPool2d, Dense), SoftmaxCrossEntropyWithLogits, TrainOneStepCell + Momentum, "
     "f32[4, 3, 32, 32]")
def resnet_momentum():
    import mindspore as ms
    from mindspore import nn, ops

    class Block(nn.Cell):
        def __init__(self, cin, cout, stride):
            super().__init__()
            self.conv1 = nn.Conv2d(cin, cout, 3, stride=stride, pad_mode="pad", padding=1, has_bias=False)
            self.bn1 = nn.BatchNorm2d(cout)
            self.conv2 = nn.Conv2d(cout, cout, 3, pad_mode="pad", padding=1, has_bias=False)
            self.bn2 = nn.BatchNorm2d(cout)
            self.relu = nn.ReLU()
            self.down = None
            if stride != 1 or cin != cout:
                self.down = nn.SequentialCell([nn.Conv2d(cin, cout, 1, stride=stride, has_bias=False),
                                               nn.BatchNorm2d(cout)])

        def construct(self, x):
            y = self.relu(self.bn1(self.conv1(x)))
            y = self.bn2(self.conv2(y))
            s = x if self.down is None else self.down(x)
            return self.relu(y + s)

    class ResNet(nn.Cell):
        def __init__(self):
            super().__init__()
            self.stem = nn.Conv2d(3, 8, 3, pad_mode="pad", padding=1, has_bias=False)
            self.bn = nn.BatchNorm2d(8)
            self.relu = nn.ReLU()
            self.pool = nn.MaxPool2d(2, 2)
            self.layer1 = Block(8, 8, 1)
            self.layer2 = Block(8, 16, 2)
            self.layer3 = Block(16, 16, 1)
            self.avg = nn.AdaptiveAvgPool2d(1)
            self.flat = nn.Flatten()
            self.fc = nn.Dense(16, 10)

        def construct(self, x):
            x = self.pool(self.relu(self.bn(self.stem(x))))
            x = self.layer3(self.layer2(self.layer1(x)))
            return self.fc(self.flat(self.avg(x)))

    # Seed 5: no pre-activation lies within float32 rounding of a ReLU's kink.
    # (With seed 22 one did, at 1.5e-6: a float64 and a float32 forward pass
    # disagree on its side, and with 256 values per channel that one value
    # moves the convolutions' gradients by 1-3%, which hides whether a
    # reimplementation of the step is right.)
    rng = np.random.default_rng(5)
    x = rng.standard_normal((4, 3, 32, 32)).astype(np.float32)
    labels = np.eye(10, dtype=np.float32)[rng.integers(0, 10, 4)]
    network = ResNet()
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=False, reduction="mean")
    opt = nn.Momentum(network.trainable_params(), learning_rate=0.1, momentum=0.9)
    step = nn.TrainOneStepCell(nn.WithLossCell(network, loss), opt)
    step.set_train()
    return step, [x, labels]


@net("tiny_step", "the smallest training step: Conv2d(1, 2, 3) without bias, ReLU, Dense(8, 3), "
     "SoftmaxCrossEntropyWithLogits, TrainOneStepCell + Momentum, f32[2, 1, 4, 4]; its execute "
     "graph and checkpoints are checked in (testdata/irdumps/step/) for a default test")
def tiny_step():
    import mindspore as ms
    from mindspore import nn

    class Tiny(nn.Cell):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(1, 2, 3, pad_mode="valid", has_bias=False)
            self.relu = nn.ReLU()
            self.flat = nn.Flatten()
            self.fc = nn.Dense(8, 3)

        def construct(self, x):
            return self.fc(self.flat(self.relu(self.conv(x))))

    rng = np.random.default_rng(7)
    x = rng.standard_normal((2, 1, 4, 4)).astype(np.float32)
    labels = np.eye(3, dtype=np.float32)[rng.integers(0, 3, 2)]
    network = Tiny()
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=False, reduction="mean")
    opt = nn.Momentum(network.trainable_params(), learning_rate=0.1, momentum=0.9)
    step = nn.TrainOneStepCell(nn.WithLossCell(network, loss), opt)
    step.set_train()
    return step, [x, labels]


@net("gpt_adamw", "GPT-style tiny LM (token+position embedding, 2 pre-LN decoder blocks with "
     "causal softmax attention and GeLU MLP, LM head), cross entropy, AdamWeightDecay, "
     "i32[2, 8] tokens")
def gpt_adamw():
    import mindspore as ms
    from mindspore import nn, ops

    V, D, T, H = 32, 16, 8, 2

    class Block(nn.Cell):
        def __init__(self):
            super().__init__()
            self.ln1 = nn.LayerNorm((D,))
            self.qkv = nn.Dense(D, 3 * D)
            self.proj = nn.Dense(D, D)
            self.ln2 = nn.LayerNorm((D,))
            self.fc1 = nn.Dense(D, 4 * D)
            self.fc2 = nn.Dense(4 * D, D)
            self.gelu = nn.GELU(approximate=True)
            self.softmax = nn.Softmax(-1)
            mask = np.triu(np.full((T, T), -1e9, dtype=np.float32), 1)
            self.mask = ms.Tensor(mask)

        def construct(self, x):
            b, t, d = x.shape
            h = self.ln1(x)
            qkv = self.qkv(h).reshape(b, t, 3, H, d // H).transpose(2, 0, 3, 1, 4)
            q, k, v = qkv[0], qkv[1], qkv[2]
            att = ops.matmul(q, k.swapaxes(-1, -2)) * (1.0 / np.sqrt(d // H)) + self.mask
            att = self.softmax(att)
            y = ops.matmul(att, v).transpose(0, 2, 1, 3).reshape(b, t, d)
            x = x + self.proj(y)
            return x + self.fc2(self.gelu(self.fc1(self.ln2(x))))

    class GPT(nn.Cell):
        def __init__(self):
            super().__init__()
            self.tok = nn.Embedding(V, D)
            self.pos = ms.Parameter(ms.Tensor(np.random.default_rng(1).standard_normal((1, T, D)).astype(np.float32) * 0.02), name="pos")
            self.blocks = nn.SequentialCell([Block(), Block()])
            self.ln = nn.LayerNorm((D,))
            self.head = nn.Dense(D, V)

        def construct(self, ids):
            x = self.tok(ids) + self.pos
            return self.head(self.ln(self.blocks(x)))

    class LMLoss(nn.Cell):
        def __init__(self, network):
            super().__init__()
            self.network = network
            self.ce = nn.CrossEntropyLoss()

        def construct(self, ids, targets):
            logits = self.network(ids)
            return self.ce(logits.reshape(-1, V), targets.reshape(-1))

    rng = np.random.default_rng(23)
    ids = rng.integers(0, V, (2, T)).astype(np.int32)
    targets = np.roll(ids, -1, axis=1).astype(np.int32)
    network = GPT()
    opt = nn.AdamWeightDecay(network.trainable_params(), learning_rate=1e-3, weight_decay=0.01)
    step = nn.TrainOneStepCell(LMLoss(network), opt)
    step.set_train()
    return step, [ids, targets]


@net("cnn_dropout_adam", "a small CNN with Dropout (Conv2d-ReLU-MaxPool twice, Dropout, Dense), "
     "SoftmaxCrossEntropyWithLogits with sparse labels, TrainOneStepCell + Adam, f32[4, 1, 16, 16]; "
     "a held-out compile: not used to develop the importer")
def cnn_dropout_adam():
    import mindspore as ms
    from mindspore import nn

    class Net(nn.Cell):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 4, 3, pad_mode="same", has_bias=True)
            self.conv2 = nn.Conv2d(4, 8, 3, pad_mode="same", has_bias=True)
            self.relu = nn.ReLU()
            self.pool = nn.MaxPool2d(2, 2)
            self.drop = nn.Dropout(p=0.25)
            self.flat = nn.Flatten()
            self.fc = nn.Dense(8 * 4 * 4, 5)

        def construct(self, x):
            x = self.pool(self.relu(self.conv1(x)))
            x = self.pool(self.relu(self.conv2(x)))
            return self.fc(self.drop(self.flat(x)))

    rng = np.random.default_rng(31)
    x = rng.standard_normal((4, 1, 16, 16)).astype(np.float32)
    labels = rng.integers(0, 5, 4).astype(np.int32)
    network = Net()
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    opt = nn.Adam(network.trainable_params(), learning_rate=1e-3)
    step = nn.TrainOneStepCell(nn.WithLossCell(network, loss), opt)
    step.set_train()
    return step, [x, labels]


@net("control_flow", "a network with a tensor-conditioned while loop and if/else inside it, "
     "and its gradient (ops.grad)")
def control_flow():
    import mindspore as ms
    from mindspore import nn, ops

    class Loop(nn.Cell):
        def __init__(self):
            super().__init__()
            self.dense = nn.Dense(4, 4)
            self.relu = nn.ReLU()

        def construct(self, x, n):
            i = ms.Tensor(0, ms.int32)
            while i < n:
                if x.sum() > 0:
                    x = self.relu(self.dense(x))
                else:
                    x = self.dense(x) * 0.5
                i = i + 1
            return x.sum()

    class Step(nn.Cell):
        def __init__(self, inner):
            super().__init__()
            self.inner = inner
            self.grad = ops.GradOperation(get_by_list=True)
            self.params = ms.ParameterTuple(inner.trainable_params())

        def construct(self, x, n):
            loss = self.inner(x, n)
            grads = self.grad(self.inner, self.params)(x, n)
            return loss, grads

    rng = np.random.default_rng(24)
    x = rng.standard_normal((2, 4)).astype(np.float32)
    n = np.array(3, dtype=np.int32)
    return Step(Loop()), [x, n]


def generate(name, out_root):
    import mindspore as ms
    ms.set_seed(0)
    out = os.path.join(out_root, name)
    if os.path.isdir(out):
        shutil.rmtree(out)
    os.makedirs(out)
    ms.set_context(mode=ms.GRAPH_MODE, device_target="CPU", save_graphs=2,
                   save_graphs_path=os.path.join(out, "dump"))
    cell, inputs = NETS[name][1]()
    for i, a in enumerate(inputs):
        np.save(os.path.join(out, f"in{i}.npy"), a)
    ms.save_checkpoint(cell, os.path.join(out, "weights_before.ckpt"))
    result = cell(*[ms.Tensor(a) for a in inputs])
    ms.save_checkpoint(cell, os.path.join(out, "weights_after.ckpt"))
    first = result[0] if isinstance(result, (tuple, list)) else result
    with open(os.path.join(out, "loss.json"), "w") as f:
        json.dump({"loss": float(first.asnumpy())}, f)
    # MindSpore writes the stage files under dump/ (sometimes in a rank_0/ subfolder);
    # gather every .ir in one flat folder.
    flat = os.path.join(out, "ir")
    os.makedirs(flat)
    n = 0
    for d, _, files in os.walk(os.path.join(out, "dump")):
        for fn in files:
            if fn.endswith(".ir"):
                shutil.move(os.path.join(d, fn), os.path.join(flat, fn))
                n += 1
    shutil.rmtree(os.path.join(out, "dump"))
    print(f"{name}: {n} .ir files in {flat}, loss {float(first.asnumpy()):.6f}")


def main(argv):
    out_root = os.path.join(ROOT, "target", "irdumps")
    names = []
    it = iter(argv)
    for a in it:
        if a == "--list":
            for n, (d, _) in NETS.items():
                print(f"{n}: {d}")
            return 0
        if a == "--out":
            out_root = next(it)
        else:
            names.append(a)
    for n in names:
        if n not in NETS:
            print(f"unknown network {n!r}; --list shows them", file=sys.stderr)
            return 2
    # save_graphs is process-wide and MindSpore keeps compiled state: one process per network.
    if len(names) == 1:
        generate(names[0], out_root)
        return 0
    import subprocess
    rc = 0
    for n in names or list(NETS):
        r = subprocess.run([sys.executable, os.path.abspath(__file__), n, "--out", out_root])
        rc = rc or r.returncode
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
