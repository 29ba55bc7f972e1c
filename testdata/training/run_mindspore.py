"""Runs an exported training step in MindSpore 2.10 (CPU, graph mode) for a
number of steps and prints the loss of each, one JSON list:

    mirdsl export STEP.mir --entry train_step -o step.mindir
    python3 run_mindspore.py step.mindir 3 x.npy labels.npy ...

Each `.npy` is one input of the step, in order; the step's weights live in
the model and each step sees the last one's updates (as `mirdsl run --steps`).
"""
import json
import sys

import numpy as np
import mindspore as ms
from mindspore import Tensor, nn

model, steps, *inputs = sys.argv[1:]
ms.set_context(mode=ms.GRAPH_MODE)
ms.set_device("CPU")
step = nn.GraphCell(ms.load(model))
args = [Tensor(np.load(p)) for p in inputs]


def flat(v):
    """A step's result: its loss, or every number of a tuple of results."""
    if isinstance(v, (tuple, list)):
        return [x for item in v for x in (flat(item) if isinstance(item, (tuple, list)) else np.asarray(item.asnumpy(), dtype=np.float64).reshape(-1).tolist())]
    return float(v.asnumpy())


print(json.dumps([flat(step(*args)) for _ in range(int(steps))]), flush=True)
