"""MindSpore's backward primitives of the resizes and of the mirrored and edge
paddings (`ResizeNearestNeighborGrad ResizeNearestNeighborV2Grad
ResizeBilinearGrad ResizeBicubicGrad ResizeLinear1DGrad UpsampleNearest1D/2D/3DGrad
UpsampleTrilinear3DGrad MirrorPadGrad PadV3Grad`) against the registry's
`defs/backward/resize.rs` and `defs/backward/pad.rs`. See common.py.

Each is called as MindSpore's own bprops call it, with MindSpore's argument
order: the resized input's sizes as a tuple (`Shape(x)`, or its spatial part),
the paddings as an int64 tensor (the registry keeps them as attributes).
MindSpore 2.10's CPU has no UpsampleLinear1DGrad, UpsampleBilinear2DGrad,
ReflectionPad*Grad or ReplicationPad*Grad kernels. Its CPU
ResizeNearestNeighborGrad ignores `half_pixel_centers` (as its forward does),
and so does the registry's.
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import Oracle, Tensor  # noqa: E402
from mindspore.ops import auto_generate as A  # noqa: E402
from mindspore.ops.operations import _grad_ops as G  # noqa: E402

# MindSpore's first pyboost call in a process can fail importing a NumPy 1.x
# module under NumPy 2; later calls work.
try:
    A.ResizeNearestNeighborGrad(False, False)(Tensor(np.ones((1, 1, 2, 2), np.float32)), (1, 1))
except Exception:  # noqa: BLE001
    pass

o = Oracle("backward_resize_pad")


def t(a):
    return Tensor(a)


def tol(dtype):
    return (1e-5, 1e-6) if dtype == np.float32 else (1e-10, 1e-12)


# ---------------------------------------------------------------------------
# ResizeNearestNeighbor(V2)Grad(grads, size; align_corners, half_pixel_centers)

for name, prim in [("ResizeNearestNeighborGrad", A.ResizeNearestNeighborGrad),
                   ("ResizeNearestNeighborV2Grad", A.ResizeNearestNeighborV2Grad)]:
    for out_hw, in_hw, align, half in [
        ((5, 7), (3, 4), False, False),
        ((5, 3), (3, 4), True, False),
        ((5, 7), (3, 4), False, True),
        ((2, 3), (5, 7), False, False),
        ((1, 1), (3, 4), True, False),
    ]:
        dy = o.rand(1, 2, *out_hw)
        expected = prim(align, half)(t(dy), in_hw)
        o.case(name, [dy, in_hw], dict(align_corners=align, half_pixel_centers=half), expected)

# ---------------------------------------------------------------------------
# ResizeBilinearGrad / ResizeBicubicGrad(grads, image; align_corners,
# half_pixel_centers)

for name, prim in [("ResizeBilinearGrad", A.ResizeBilinearGrad),
                   ("ResizeBicubicGrad", A.ResizeBicubicGrad)]:
    for dtype in [np.float32, np.float64]:
        for out_hw, in_hw, align, half in [
            ((5, 7), (3, 4), False, False),
            ((5, 3), (3, 4), True, False),
            ((6, 5), (3, 4), False, True),
            ((2, 3), (5, 7), False, False),
        ]:
            if name == "ResizeBilinearGrad" and dtype == np.float64:
                continue  # MindSpore's CPU kernel is f32/f16 only
            dy = o.rand(1, 2, *out_hw, dtype=dtype)
            x = o.rand(1, 2, *in_hw, dtype=dtype)
            expected = prim(align, half)(t(dy), t(x))
            # MindSpore's f64 bicubic weights are computed in f32.
            rtol, atol = tol(np.float32 if name == "ResizeBicubicGrad" else dtype)
            note = "MindSpore's f64 kernel weighs in f32" if dtype == np.float64 else ""
            o.case(name, [dy, x], dict(align_corners=align, half_pixel_centers=half), expected,
                   rtol=rtol * 10, atol=atol * 10, note=note)

# ---------------------------------------------------------------------------
# ResizeLinear1DGrad(grads, x; coordinate_transformation_mode)

for mode in ["align_corners", "half_pixel"]:
    for out_w, in_w in [(8, 5), (3, 5), (1, 4)]:
        dy = o.rand(2, 2, out_w)
        x = o.rand(2, 2, in_w)
        expected = A.ResizeLinear1DGrad(mode)(t(dy), t(x))
        o.case("ResizeLinear1DGrad", [dy, x], dict(coordinate_transformation_mode=mode), expected)

# ---------------------------------------------------------------------------
# UpsampleNearest1D/2D/3DGrad(dy, input_size, output_size, scales),
# UpsampleTrilinear3DGrad(dy, input_size, output_size, scales; align_corners)

for name, prim, shape, out, scales in [
    ("UpsampleNearest1DGrad", A.UpsampleNearest1DGrad, (2, 2, 5), (8,), None),
    ("UpsampleNearest1DGrad", A.UpsampleNearest1DGrad, (2, 2, 5), (3,), None),
    ("UpsampleNearest2DGrad", A.UpsampleNearest2DGrad, (1, 2, 3, 4), (5, 7), None),
    ("UpsampleNearest2DGrad", A.UpsampleNearest2DGrad, (1, 2, 3, 4), None, (2.0, 1.5)),
    ("UpsampleNearest3DGrad", A.UpsampleNearest3DGrad, (1, 1, 2, 3, 2), (3, 5, 4), None),
]:
    dims = out if out is not None else tuple(int(n * s) for n, s in zip(shape[2:], scales))
    dy = o.rand(*shape[:2], *dims)
    expected = prim()(t(dy), shape, out, scales)
    attrs = dict(output_size=out) if out is not None else dict(scales=scales)
    o.case(name, [dy, shape], attrs, expected)

for out, scales, align in [((3, 5, 4), None, False), ((3, 5, 4), None, True),
                           (None, (1.5, 2.0, 1.5), False)]:
    shape = (1, 1, 2, 3, 2)
    dims = out if out is not None else tuple(int(n * s) for n, s in zip(shape[2:], scales))
    dy = o.rand(*shape[:2], *dims)
    expected = A.UpsampleTrilinear3DGrad(align)(t(dy), shape, out, scales)
    attrs = dict(output_size=out) if out is not None else dict(scales=scales)
    attrs["align_corners"] = align
    o.case("UpsampleTrilinear3DGrad", [dy, shape], attrs, expected)

# ---------------------------------------------------------------------------
# MirrorPadGrad(dy, paddings; mode), PadV3Grad(x, paddings; mode,
# paddings_contiguous)

for shape, pairs, mode in [((6, 10), ((2, 1), (3, 3)), "REFLECT"),
                           ((7, 6), ((3, 1), (2, 2)), "SYMMETRIC"),
                           ((2, 5, 6), ((0, 0), (1, 1), (2, 1)), "REFLECT")]:
    dy = o.rand(*shape)
    expected = G.MirrorPadGrad(mode)(t(dy), t(np.array(pairs, np.int64)))
    o.case("MirrorPadGrad", [dy], dict(paddings=pairs, mode=mode), expected)

for shape, pads, mode, contiguous in [((1, 2, 9), (3, 2), "reflect", True),
                                      ((1, 2, 5, 5), (1, 2, 2, 0), "edge", True),
                                      ((1, 2, 5, 7), (1, 2, 2, 0), "reflect", False),
                                      ((1, 1, 8), (2, 3), "circular", True),
                                      ((1, 1, 5, 6, 7), (1, 2, 0, 1, 2, 1), "edge", True)]:
    dy = o.rand(*shape)
    expected = G.PadV3Grad(mode, contiguous)(t(dy), t(np.array(pads, np.int64)))
    o.case("PadV3Grad", [dy], dict(paddings=pads, mode=mode, paddings_contiguous=contiguous),
           expected)

o.save()
