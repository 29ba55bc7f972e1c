"""MindSpore's forward pass of a model gen.py made, in a process of its own
(so `bench scale` measures its peak RSS alone):

    python3 testdata/scale/ms_run.py MODEL.mindir ARG.npy...

loads the model (mindspore.load, external data included), builds the
GraphCell and runs it once (first_s: load + compile + run), then three more
times (warm_s: the fastest); prints {"first_s", "warm_s"} as JSON.
"""
import json
import sys
import time

import numpy as np


def main():
    import mindspore as ms
    from mindspore import nn, Tensor

    ms.set_context(mode=ms.GRAPH_MODE, device_target="CPU")
    model, args = sys.argv[1], [Tensor(np.load(a)) for a in sys.argv[2:]]

    def run(cell):
        out = cell(*args)
        return [o.asnumpy() for o in (out if isinstance(out, (tuple, list)) else [out])]

    t0 = time.time()
    cell = nn.GraphCell(ms.load(model))
    run(cell)
    first = time.time() - t0
    warm = []
    for _ in range(3):
        t1 = time.time()
        run(cell)
        warm.append(time.time() - t1)
    print(json.dumps({"first_s": first, "warm_s": min(warm)}))


if __name__ == "__main__":
    sys.exit(main())
