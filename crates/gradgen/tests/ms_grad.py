"""MindSpore 2.10's `ms.grad` on exported generated programs.

Usage: python ms_grad.py MANIFEST.json OUT.json

MANIFEST is a list of {"name", "mindir", "inputs": [.npy paths]}; for each,
the model is loaded (`mindspore.load` + `nn.GraphCell`) and differentiated
with respect to every input (`ms.grad(net, grad_position=(0, ..., n-1))`,
sensitivity ones, as mirdsl's `grad`). OUT maps each name to
{"grads": [[flat float64 values], ...]} or {"error": "..."} (MindSpore
could not compile or run it). Written by crates/gradgen/tests/mindspore.rs.
"""

import json
import sys

import numpy as np
import mindspore as ms

ms.set_context(mode=ms.GRAPH_MODE, device_target="CPU")


def flat(v):
    if isinstance(v, (tuple, list)):
        out = []
        for item in v:
            out.extend(flat(item))
        return out
    return [np.asarray(v.asnumpy(), dtype=np.float64).reshape(-1).tolist()]


def main():
    manifest = json.load(open(sys.argv[1]))
    out = {}
    for case in manifest:
        try:
            net = ms.nn.GraphCell(ms.load(case["mindir"]))
            args = [ms.Tensor(np.load(p)) for p in case["inputs"]]
            pos = tuple(range(len(args)))
            g = ms.grad(net, grad_position=pos)(*args)
            if len(args) == 1 and not isinstance(g, (tuple, list)):
                g = (g,)
            grads = flat(g)
            if not all(np.all(np.isfinite(x)) for x in grads):
                out[case["name"]] = {"error": "non-finite gradient"}
            else:
                out[case["name"]] = {"grads": grads}
        except Exception as e:  # MindSpore could not compile or run it
            msg = str(e).strip().splitlines()
            out[case["name"]] = {"error": (type(e).__name__ + ": " + (msg[0] if msg else ""))[:300]}
    json.dump(out, open(sys.argv[2], "w"))


if __name__ == "__main__":
    main()
