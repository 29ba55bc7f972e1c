#!/usr/bin/env python3
"""Writes scoped_net.ir: MindSpore 2.10's execute-stage compile dump
(save_graphs=1) of a small network of nested cells (Net: block (fc: Dense,
act: GELU), head: Dense), whose nodes carry scopes such as
`Default/block-Block/act-GELU/Div-op0`. Also writes its weights as
scoped_net.safetensors (a dump holds no weight values) and MindSpore's output
for the input below as scoped_net.json. The debugger's tests import the dump.

Run (MindSpore needed; not part of the tests): python3 gen_scoped_net.py
"""
import json
import re
import os
import shutil
import struct
import sys
import tempfile

import numpy as np
import mindspore as ms
from mindspore import nn

HERE = os.path.dirname(os.path.abspath(__file__))


class Block(nn.Cell):
    def __init__(self):
        super().__init__()
        self.fc = nn.Dense(3, 3)
        self.act = nn.GELU(approximate=False)

    def construct(self, x):
        return self.act(self.fc(x))


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.block = Block()
        self.head = nn.Dense(3, 2)

    def construct(self, x):
        return self.head(self.block(x))


def write_safetensors(path, tensors):
    header, data = {}, b""
    for name, a in tensors:
        a = np.ascontiguousarray(a, dtype=np.float32)
        header[name] = {"dtype": "F32", "shape": list(a.shape),
                        "data_offsets": [len(data), len(data) + a.nbytes]}
        data += a.tobytes()
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + data)


def main():
    out = tempfile.mkdtemp(prefix="scoped_net_")
    ms.set_context(mode=ms.GRAPH_MODE, device_target="CPU", save_graphs=1, save_graphs_path=out)
    ms.set_seed(0)
    net = Net()
    x = ms.Tensor(np.array([[1.0, -2.0, 0.5]], np.float32))
    y = net(x).asnumpy()
    dump = [f for f in os.listdir(out) if re.fullmatch(r"\d+_execute_\d+\.ir", f)]
    assert len(dump) == 1, dump
    text = open(os.path.join(out, dump[0])).read()
    # Shorter, machine-independent paths (as /work/shared/fixtures' dumps).
    site = os.path.dirname(os.path.dirname(ms.__file__))
    text = text.replace(site + "/", "site-packages/").replace(os.path.abspath(__file__), "examples/scoped_net.py")
    open(os.path.join(HERE, "scoped_net.ir"), "w").write(text)
    write_safetensors(os.path.join(HERE, "scoped_net.safetensors"),
                      [(p.name, p.asnumpy()) for p in net.get_parameters()])
    json.dump({"x": x.asnumpy().tolist(), "y": y.tolist()}, open(os.path.join(HERE, "scoped_net.json"), "w"))
    shutil.rmtree(out)
    print(f"wrote scoped_net.ir ({len(text)} bytes) from {dump[0]}; y = {y.tolist()}", file=sys.stderr)


if __name__ == "__main__":
    main()
