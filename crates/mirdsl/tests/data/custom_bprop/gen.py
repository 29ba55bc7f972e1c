"""A MindSpore network with a custom bprop (Cell.bprop), exported as MindSpore
exports it: the forward network (ste_loss.mindir) and its gradient network
(ste_grad.mindir, a GradOperation-wrapped cell), the input (x.npy), and the
gradients MindSpore computes (expected.json): "custom" from the live cell,
which uses the bprop, and "reloaded_forward" from the reloaded forward
MindIR, which has lost it (MindIR has no field for a FuncGraph's "bprop"
transform, so MindSpore differentiates Round itself there).

Usage: python3 gen.py OUT_DIR   (MindSpore 2.10; the checked-in files are its output)
"""
import sys, os, json
import numpy as np, mindspore as ms
from mindspore import nn, ops, Tensor
ms.set_context(mode=ms.GRAPH_MODE)
out_dir = sys.argv[1]
class ClippedSte(nn.Cell):
    """Rounds; its gradient passes dout through where |x| <= 1 (a clipped
    straight-through estimator), where Round's own derivative is zero."""
    def construct(self, x): return ops.round(x)
    def bprop(self, x, out, dout):
        return (dout * ops.cast(ops.abs(x) <= 1.0, ms.float32),)
class Loss(nn.Cell):
    def __init__(self):
        super().__init__()
        self.w = ms.Parameter(Tensor(np.array([0.5, -1.5, 2.0, 0.25], np.float32)), name="w")
        self.ste = ClippedSte()
    def construct(self, x): return (self.ste(x * self.w) * x).sum()
class Grad(nn.Cell):
    def __init__(self, net):
        super().__init__()
        self.net = net
        self.grad = ops.GradOperation(get_all=True)
    def construct(self, x): return self.grad(self.net)(x)
x = Tensor(np.array([0.8, 0.5, -0.7, 3.0], np.float32))
loss = Loss()
np.save(os.path.join(out_dir, "x.npy"), x.asnumpy())
ms.export(loss, x, file_name=os.path.join(out_dir, "ste_loss"), file_format="MINDIR")
ms.export(Grad(loss), x, file_name=os.path.join(out_dir, "ste_grad"), file_format="MINDIR")
live = Grad(loss)(x)[0].asnumpy()
reloaded = ops.GradOperation()(nn.GraphCell(ms.load(os.path.join(out_dir, "ste_loss.mindir"))))(x).asnumpy()
with open(os.path.join(out_dir, "expected.json"), "w") as f:
    f.write(json.dumps({"custom": live.tolist(), "reloaded_forward": reloaded.tolist(),
                  "loss": float(loss(x).asnumpy())}) + "\n")
