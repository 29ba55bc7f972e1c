"""Trains an exported data-parallel step (step.mir, transformer_step.mir,
cnn_sync_bn_step.mir) with MindSpore on several workers. Each worker takes its
share of every batch: every input is split into equal shards along its first
axis, and the step gets its shard's inputs followed by the number of workers
(`world_size`); the step's `AllReduce` sums across the workers. Launch with
MindSpore's `msrun`:

    mirdsl export testdata/data_parallel/step.mir --entry train_step -o step.mindir
    msrun --worker_num=2 --local_worker_num=2 --master_port=8118 --join=True \\
        testdata/data_parallel/train.py step.mindir 3 x.npy y.npy

(`--device CPU` by default; on GPUs set MINDSPORE_DEVICE=GPU and export with
`AllReduce(..., group="nccl_world_group")`.) Rank 0 prints the global loss of
every step, one JSON list (`losses [...]`), then every weight after the last
step (`weights {"name": [values, row-major], ...}`).
"""
import json
import os
import sys

import numpy as np
import mindspore as ms
from mindspore import Tensor, nn
from mindspore.communication import get_group_size, get_rank, init

if len(sys.argv) < 4:
    sys.exit("usage: train.py MODEL.mindir STEPS INPUT.npy...")
model, steps, *paths = sys.argv[1:]
ms.set_context(mode=ms.GRAPH_MODE)
ms.set_device(os.environ.get("MINDSPORE_DEVICE", "CPU"))
init()
rank, workers = get_rank(), get_group_size()
inputs = [np.load(p) for p in paths]
batch = len(inputs[0])
if batch % workers or any(len(a) != batch for a in inputs):
    sys.exit(f"the inputs ({[a.shape for a in inputs]}) do not split into {workers} equal shards")
shard = batch // workers
args = [Tensor(a[rank * shard:(rank + 1) * shard]) for a in inputs]
args.append(Tensor(np.float32(workers)))
step = nn.GraphCell(ms.load(model))
losses = [float(step(*args).asnumpy()) for _ in range(int(steps))]
if rank == 0:
    print("losses " + json.dumps(losses), flush=True)
    weights = {p.name: p.asnumpy().astype(np.float64).reshape(-1).tolist() for p in step.get_parameters()}
    print("weights " + json.dumps(weights), flush=True)
