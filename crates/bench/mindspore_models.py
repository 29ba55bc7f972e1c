"""The `bench run` models in MindSpore 2.10 (CPU, graph mode).

    python mindspore_models.py MODEL STEPS

prints `ms = X`, the median time of a value_and_grad step (`ms.jit` of
`ms.value_and_grad` over every trainable parameter, the loss fetched), for
MODEL in mlp, lenet, transformer, resnet: the same shapes and loss as
crates/bench/models/*.mir. With no arguments it prints `mlp_ms` and
`lenet_ms` (the old interface)."""
import statistics
import sys
import time

import numpy as np
import mindspore as ms
from mindspore import nn, ops

ms.set_context(mode=ms.GRAPH_MODE, device_target="CPU")


class MLP(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2, self.fc3 = nn.Dense(784, 256), nn.Dense(256, 256), nn.Dense(256, 10)
        self.relu = nn.ReLU()

    def construct(self, x):
        return self.fc3(self.relu(self.fc2(self.relu(self.fc1(x)))))


class LeNet5(nn.Cell):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, 5, pad_mode="valid", has_bias=False)
        self.conv2 = nn.Conv2d(6, 16, 5, pad_mode="valid", has_bias=False)
        self.pool, self.relu, self.flatten = nn.MaxPool2d(2, 2), nn.ReLU(), nn.Flatten()
        self.fc1, self.fc2, self.fc3 = nn.Dense(400, 120), nn.Dense(120, 84), nn.Dense(84, 10)

    def construct(self, x):
        x = self.pool(self.relu(self.conv1(x)))
        x = self.pool(self.relu(self.conv2(x)))
        x = self.flatten(x)
        return self.fc3(self.relu(self.fc2(self.relu(self.fc1(x)))))


class Encoder(nn.Cell):
    """d=256, 4 heads of 64, sequence 128, GeLU feed-forward 1024, post-LN,
    a linear head on the mean over the sequence."""

    def __init__(self):
        super().__init__()
        self.q, self.k, self.v, self.o = (nn.Dense(256, 256) for _ in range(4))
        self.ln1 = nn.LayerNorm((256,), epsilon=1e-5)
        self.ln2 = nn.LayerNorm((256,), epsilon=1e-5)
        self.ffn1, self.ffn2 = nn.Dense(256, 1024), nn.Dense(1024, 256)
        self.gelu = nn.GELU(approximate=True)
        self.head = nn.Dense(256, 10)
        self.bmm = ops.BatchMatMul()
        self.bmm_t = ops.BatchMatMul(transpose_b=True)
        self.softmax = ops.Softmax(-1)

    def heads(self, t):
        return ops.transpose(ops.reshape(t, (-1, 128, 4, 64)), (0, 2, 1, 3))

    def construct(self, x):
        h = ops.reshape(x, (-1, 256))
        q, k, v = self.heads(self.q(h)), self.heads(self.k(h)), self.heads(self.v(h))
        a = self.bmm(self.softmax(self.bmm_t(q, k) * 0.125), v)
        a = ops.reshape(ops.transpose(a, (0, 2, 1, 3)), (-1, 256))
        h1 = self.ln1(h + self.o(a))
        h2 = self.ln2(h1 + self.ffn2(self.gelu(self.ffn1(h1))))
        pooled = ops.mean(ops.reshape(h2, (-1, 128, 256)), 1)
        return self.head(pooled)


class Block(nn.Cell):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(64, 64, 3, pad_mode="pad", padding=1, has_bias=False)
        self.conv2 = nn.Conv2d(64, 64, 3, pad_mode="pad", padding=1, has_bias=False)
        self.bn1, self.bn2 = nn.BatchNorm2d(64), nn.BatchNorm2d(64)
        self.relu = nn.ReLU()

    def construct(self, x):
        h = self.relu(self.bn1(self.conv1(x)))
        return self.relu(self.bn2(self.conv2(h)) + x)


class ResNetStack(nn.Cell):
    def __init__(self):
        super().__init__()
        self.b1, self.b2 = Block(), Block()
        self.head = nn.Dense(64, 10)

    def construct(self, x):
        return self.head(ops.mean(self.b2(self.b1(x)), (2, 3)))


MODELS = {
    "mlp": (MLP, (128, 784)),
    "lenet": (LeNet5, (32, 1, 32, 32)),
    "transformer": (Encoder, (8, 128, 256)),
    "resnet": (ResNetStack, (16, 64, 32, 32)),
}


def bench(name, steps):
    cls, x_shape = MODELS[name]
    net = cls()
    net.set_train()
    loss_fn = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")

    def forward(x, y):
        return loss_fn(net(x), y)

    grad_fn = ms.value_and_grad(forward, None, net.trainable_params())
    step = ms.jit(grad_fn)
    x = ms.Tensor(np.random.rand(*x_shape).astype(np.float32) - 0.5)
    y = ms.Tensor((np.arange(x_shape[0]) % 10).astype(np.int32))
    step(x, y)
    times = []
    for _ in range(steps):
        t = time.perf_counter()
        loss, _grads = step(x, y)
        loss.asnumpy()
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1e3


if len(sys.argv) >= 3:
    print(f"ms = {bench(sys.argv[1], int(sys.argv[2]))}")
else:
    print(f"mlp_ms = {bench('mlp', 20)}")
    print(f"lenet_ms = {bench('lenet', 20)}")
