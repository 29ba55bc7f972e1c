"""Trains the exported data-parallel step (step.mir) with MindSpore on several
workers. Each worker takes its share of every batch; the step's `AllReduce`
sums gradients across workers. Launch with MindSpore's `msrun`:

    mirdsl export testdata/data_parallel/step.mir --entry train_step -o step.mindir
    msrun --worker_num=2 --local_worker_num=2 --master_port=8118 --join=True \\
        testdata/data_parallel/train.py step.mindir x.npy y.npy 3

(`--device CPU` by default; on GPUs set MINDSPORE_DEVICE=GPU and export with
`AllReduce(..., group="nccl_world_group")`.) Rank 0 prints the global loss of
every step, one JSON list.
"""
import json
import os
import sys

import numpy as np
import mindspore as ms
from mindspore import Tensor, nn
from mindspore.communication import get_group_size, get_rank, init

model, x_path, y_path = sys.argv[1:4]
steps = int(sys.argv[4]) if len(sys.argv) > 4 else 1
ms.set_context(mode=ms.GRAPH_MODE)
ms.set_device(os.environ.get("MINDSPORE_DEVICE", "CPU"))
init()
rank, workers = get_rank(), get_group_size()
x, y = np.load(x_path), np.load(y_path)
if len(x) % workers:
    sys.exit(f"the batch of {len(x)} does not split into {workers} equal shards")
shard = len(x) // workers
xs = Tensor(x[rank * shard:(rank + 1) * shard])
ys = Tensor(y[rank * shard:(rank + 1) * shard])
step = nn.GraphCell(ms.load(model))
losses = [float(step(xs, ys, Tensor(np.float32(workers))).asnumpy()) for _ in range(steps)]
if rank == 0:
    print("losses " + json.dumps(losses), flush=True)
