"""Writes small.ckpt with MindSpore 2.10's save_checkpoint (float32, float16,
bfloat16, int32 and a scalar int64 parameter): python3 make_small.py OUT.ckpt.
tests/ckpt.rs reads the checked-in copy and, with MindSpore, a fresh one."""
import sys

import numpy as np
import mindspore as ms
from mindspore import Tensor

params = [
    {"name": "fc.weight", "data": Tensor(np.arange(6, dtype=np.float32).reshape(2, 3) / 7, ms.float32)},
    {"name": "fc.bias", "data": Tensor(np.array([1.5, -2.25, 3.0], np.float16))},
    {"name": "norm.gamma", "data": Tensor(np.array([0.1, 0.2, 0.3, 0.4], np.float32), ms.bfloat16)},
    {"name": "ids", "data": Tensor(np.array([4, 5], np.int32))},
    {"name": "step", "data": Tensor(3, ms.int64)},
]
ms.save_checkpoint(params, sys.argv[1])
