"""MindSpore's backward primitives (`ops.operations._grad_ops`) against the
registry's `defs/backward.rs`. See common.py."""
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import *  # noqa: F401,F403
from mindspore.ops.operations import _grad_ops as G

o = Oracle("backward")
for shape, fmt in [((2, 3, 4, 5), "NCHW"), ((2, 4, 5, 3), "NHWC"), ((4, 6), "NCHW")]:
    d = o.rand(*shape)
    o.case("BiasAddGrad", [d], {"data_format": fmt}, G.BiasAddGrad(data_format=fmt)(Tensor(d)))
d64 = o.rand(3, 5).astype(np.float64)
o.case("BiasAddGrad", [d64], {}, G.BiasAddGrad()(Tensor(d64)))
for shape in [(2, 3), (4, 1, 5)]:
    dy, y = o.rand(*shape), o.rand(*shape)
    y[..., 0] = 0.0  # ReLU's output is 0 where its input was not positive
    o.case("ReluGrad", [dy, y], {}, G.ReluGrad()(Tensor(dy), Tensor(y)))
o.save()
