"""MindSpore 2.10's own gradients of the 3-D convolutions and pools and of
the poolings with argmax: each case's `value_and_grad` of
`sum(sin(op) * cos(op))` is exported by MindSpore (its bprops emit
Conv3DBackpropInput, MaxPool3DGrad, AvgPool3DGrad, ...) to OUT/NAME.mindir
with its inputs as OUT/NAME-K.npy, and run; the last line printed is a JSON
object of each case's numbers (the value, then each gradient, flattened):

    python3 ms_conv_pool_grads.py OUT
"""
import json
import sys

import numpy as np
import mindspore as ms
from mindspore import Tensor, nn, ops
from mindspore.ops.operations import nn_ops as N

out = sys.argv[1]
ms.set_context(mode=ms.GRAPH_MODE)
ms.set_device("CPU")


def floats(shape, seed):
    return np.random.RandomState(seed).uniform(-1, 1, shape).astype(np.float32)


class Loss(nn.Cell):
    def __init__(self, op, first):
        super().__init__()
        self.op, self.first = op, first

    def construct(self, *args):
        y = self.op(*args)
        if self.first:
            y = y[0]
        return (ops.sin(y) * ops.cos(y)).sum()


class Step(nn.Cell):
    def __init__(self, loss, wrt):
        super().__init__()
        self.vg = ops.value_and_grad(loss, grad_position=wrt)

    def construct(self, *args):
        return self.vg(*args)


x5 = floats((1, 2, 5, 5, 5), 1)
x4 = floats((1, 2, 6, 6), 2)
cases = {
    "conv3d": (ops.Conv3D(3, 2, stride=2, pad_mode="pad", pad=1), [x5, floats((3, 2, 2, 2, 2), 3)], (0, 1), False),
    "conv3d_same": (ops.Conv3D(3, (2, 3, 2), stride=(1, 2, 2), pad_mode="same"), [x5, floats((3, 2, 2, 3, 2), 4)], (0, 1), False),
    "conv3d_transpose": (ops.Conv3DTranspose(2, 3, 2, stride=2, pad_mode="pad", pad=1), [floats((1, 2, 3, 3, 3), 5), floats((2, 3, 2, 2, 2), 6)], (0, 1), False),
    "max_pool3d": (ops.MaxPool3D(2, 2, pad_mode="pad", pad_list=1, ceil_mode=True), [x5], (0,), False),
    "avg_pool3d": (ops.AvgPool3D(2, 2, pad_mode="pad", pad=1, count_include_pad=False), [x5], (0,), False),
    "avg_pool3d_same": (ops.AvgPool3D((2, 3, 2), 2, pad_mode="same"), [x5], (0,), False),
    "max_pool3d_argmax": (N.MaxPool3DWithArgmax(2, 2, 1), [x5], (0,), True),
    "max_pool_argmax": (ops.MaxPoolWithArgmax(2, 2), [floats((2, 3, 6, 5), 7)], (0,), True),
    "max_pool_argmax_same": (ops.MaxPoolWithArgmax((3, 2), (2, 1), "same"), [floats((2, 3, 5, 6), 8)], (0,), True),
    "max_pool_argmax_v2": (N.MaxPoolWithArgmaxV2(3, 2, 1), [x4], (0,), True),
    "adaptive_max_pool2d": (ops.AdaptiveMaxPool2D((3, 2)), [x4], (0,), True),
}
results = {}
for name, (op, inputs, wrt, first) in cases.items():
    step = Step(Loss(op, first), wrt)
    args = [Tensor(a) for a in inputs]
    value, grads = step(*args)
    numbers = [float(value.asnumpy())]
    for g in grads if isinstance(grads, tuple) else (grads,):
        numbers.extend(np.asarray(g.asnumpy(), dtype=np.float64).reshape(-1).tolist())
    results[name] = numbers
    ms.export(step, *args, file_name=f"{out}/{name}", file_format="MINDIR")
    for k, a in enumerate(inputs):
        np.save(f"{out}/{name}-{k}.npy", a)
print(json.dumps(results), flush=True)
