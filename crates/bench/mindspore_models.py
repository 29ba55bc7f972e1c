"""The `bench run` models in MindSpore 2.10 (CPU, graph mode): prints
`mlp_ms = X` and `lenet_ms = Y`, the median time of a value_and_grad step."""
import statistics, time
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

def bench(net, x_shape, steps=20):
    loss_fn = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    def forward(x, y):
        return loss_fn(net(x), y)
    grad_fn = ms.value_and_grad(forward, None, net.trainable_params())
    step = ms.jit(grad_fn)
    x = ms.Tensor(np.random.rand(*x_shape).astype(np.float32))
    y = ms.Tensor((np.arange(x_shape[0]) % 10).astype(np.int32))
    step(x, y)
    times = []
    for _ in range(steps):
        t = time.perf_counter()
        loss, grads = step(x, y)
        loss.asnumpy()
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1e3

print(f"mlp_ms = {bench(MLP(), (128, 784))}")
print(f"lenet_ms = {bench(LeNet5(), (32, 1, 32, 32))}")
