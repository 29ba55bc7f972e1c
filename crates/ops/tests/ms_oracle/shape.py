"""MindSpore 2.10 oracle for the `shape` family (defs/shape/*.rs):
splitting and stacking, slicing, padding, gathers and scatters, makers,
layout and size queries.

Run: PYTHONHASHSEED=0 /work/venvs/ms/bin/python crates/ops/tests/ms_oracle/shape.py
(the seed fixes `Oracle`'s random inputs, so a regenerated JSON differs only
where cases do).

Registry attributes that MindSpore takes as constant inputs (axes, sizes,
paddings, `depth`, `num_segments`, ...) are passed to MindSpore as it wants
them. Where MindSpore 2.10's CPU backend has no kernel for a primitive, the
case's expected value comes from the MindSpore primitive (or `ops` function)
with the same documented semantics that does run on CPU, named in the case's
note; primitives with no such stand-in are left out:
- SplitV: no CPU kernel; expected from SplitWithSize (sizes with -1 resolved).
- Roll, Take (negative indices), Unsqueeze: no CPU kernel / no infer; not
  recorded here (Roll and Take are checked in kernels_shape_ext.rs).
- ConstantPadND: from PadV3 (constant mode); ReflectionPad1D/2D: from PadV3
  (reflect); ReplicationPad1D/2D/3D: from PadV3 (edge).
- IndexSelect: from Gather along `dim`; Take: from Gather of the flattened
  input (non-negative indices).
- OneHotExt: from OneHot; Arange: from `ops.arange` (Range plus Cast);
  SequenceMask: from `ops.sequence_mask` (the primitive fails in PyNative);
  ZerosLikeExt/OnesLikeExt: from `ops.zeros_like`/`ops.ones_like`;
  Fills: from FillV2; SpaceToBatch/BatchToSpace: from SpaceToBatchND/
  BatchToSpaceND (the deprecated BatchToSpaceND class runs on CPU).
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import Oracle  # noqa: E402

import mindspore as ms  # noqa: E402
from mindspore import Tensor, ops  # noqa: E402
from mindspore.ops import auto_generate as ag  # noqa: E402
from mindspore.ops.operations import _inner_ops  # noqa: E402

o = Oracle("shape")
T = Tensor


def keep_dtype(v):
    """NumPy scalars as 0-d arrays: `common.enc` reads a bare NumPy scalar as
    a Python number (int64 or float32) and would lose its dtype."""
    if isinstance(v, (tuple, list)):
        return type(v)(keep_dtype(e) for e in v)
    if isinstance(v, np.generic):
        return np.asarray(v)
    return v


def case(op, inputs, attrs, expected, **kw):
    o.case(op, [keep_dtype(i) for i in inputs], attrs, expected, **kw)


def tup(r):
    return tuple(r) if isinstance(r, (tuple, list)) else r


def arange(*shape, dtype=np.float32):
    return np.arange(int(np.prod(shape))).reshape(shape).astype(dtype)


def i32(a):
    return np.array(a, np.int32)


def i64(a):
    return np.array(a, np.int64)


# ---------------------------------------------------------------------------
# Split, SplitV, SplitWithSize, SplitTensor, Chunk

for x, axis, n in [
    (o.rand(2, 6), -1, 3),
    (arange(4, 3, dtype=np.int32), 0, 2),
    (o.rand(3, dtype=np.float64), 0, 1),
    (o.rand(0, 3), 0, 1),
    (o.rand(2, 4, 2).astype(np.float16), 1, 4),
    (np.array([[True, False], [False, True]]), 1, 2),
]:
    case("Split", [x], {"axis": axis, "output_num": n}, tup(ops.Split(axis, n)(T(x))))

for x, sizes, dim, resolved in [
    (o.rand(5, 2), (2, -1, 1), 0, (2, 2, 1)),
    (arange(2, 4, dtype=np.int64), (3, 1), -1, (3, 1)),
]:
    case("SplitV", [x], {"size_splits": sizes, "split_dim": dim, "num_split": len(sizes)},
           tup(ag.SplitWithSize()(T(x), resolved, dim)),
           note="SplitV has no CPU kernel: expected from SplitWithSize")

for x, sizes, dim in [
    (o.rand(3, 4), (1, 2), 0),
    (o.rand(2, 5, dtype=np.float64), (1, 0, 4), 1),
    (arange(6, dtype=np.int32), (6,), -1),
]:
    case("SplitWithSize", [x], {"split_size": sizes, "dim": dim},
           tup(ag.SplitWithSize()(T(x), sizes, dim)))

for x, size, dim in [
    (o.rand(5), 2, 0),
    (o.rand(3, 7, dtype=np.float64), 3, -1),
    (arange(4, 2, dtype=np.int64), 4, 0),
    (o.rand(2, 3), 5, 1),
]:
    case("SplitTensor", [x], {"split_size": size, "dim": dim}, tup(ag.SplitTensor()(T(x), size, dim)))

for x, chunks, dim in [
    (o.rand(5), 3, 0),
    (o.rand(6, 2), 4, 0),
    (arange(2, 7, dtype=np.int32), 3, -1),
    (o.rand(0, 2), 2, 0),
    (o.rand(3, 2, dtype=np.float64), 1, 1),
]:
    case("Chunk", [x], {"chunks": chunks, "dim": dim}, tup(ag.Chunk()(T(x), chunks, dim)))

# ---------------------------------------------------------------------------
# Stack, Unstack

for xs, axis in [
    ((o.rand(2, 3), o.rand(2, 3), o.rand(2, 3)), 0),
    ((o.rand(2, 3), o.rand(2, 3)), -1),
    ((arange(2, 2, dtype=np.int32), arange(2, 2, dtype=np.int32) + 4), 1),
    ((np.float32(1.5), np.float32(-2.0)), 0),
    ((o.rand(3, dtype=np.float64),), -2),
]:
    ms_xs = tuple(T(x) for x in xs)
    case("Stack", [tuple(np.asarray(x) for x in xs)], {"axis": axis}, ops.Stack(axis)(ms_xs))

for x, axis in [
    (o.rand(3, 4), 0),
    (o.rand(2, 3, 2, dtype=np.float64), -2),
    (arange(2, 3, dtype=np.int64), 1),
    (o.rand(1, 2), 0),
]:
    case("Unstack", [x], {"axis": axis}, tup(ops.Unstack(axis)(T(x))))

# ---------------------------------------------------------------------------
# Slice, Narrow, SliceExt, ReverseV2

for x, begin, size in [
    (arange(3, 4), (1, 1), (2, -1)),
    (o.rand(3, 4, 2, dtype=np.float64), (0, 2, 1), (-1, 2, 1)),
    (arange(4, dtype=np.int64), (4,), (0,)),
    (np.array([[True, False, True]]), (0, 1), (1, 2)),
]:
    case("Slice", [x], {"begin": begin, "size": size}, ops.Slice()(T(x), begin, size))

for x, dim, start, length in [
    (arange(3, 4), 1, 1, 2),
    (arange(3, 4), -1, -3, 2),
    (o.rand(5, 2, dtype=np.float64), 0, 4, 1),
    (arange(3, 4, dtype=np.int32), 1, 4, 0),
]:
    case("Narrow", [x], {"dim": dim, "start": start, "length": length},
           ag.Narrow()(T(x), dim, start, length))

for x, dim, start, end, step in [
    (arange(3, 4), 1, 0, 4, 2),
    (arange(3, 4), 1, -3, 10, 1),
    (arange(3, 4), 0, -10, -1, 2),
    (arange(3, 4), 0, 2, 1, 1),
    (o.rand(7, 2, dtype=np.float64), 0, 1, 6, 3),
]:
    case("SliceExt", [x], {"dim": dim, "start": start, "end": end, "step": step},
           ag.SliceExt()(T(x), dim, start, end, step))

for x, axis in [
    (arange(3, 4), (0, -1)),
    (o.rand(2, 3, 2, dtype=np.float64), (1,)),
    (i32([1, 2, 3]), (0,)),
    (np.array([True, False]), (0,)),
    (i32([1, 2]), ()),
]:
    case("ReverseV2", [x], {"axis": axis}, ops.ReverseV2(axis)(T(x)))

# ---------------------------------------------------------------------------
# Identity and the size queries

for x in [o.rand(2, 3), i32([1, 2]), np.float64(2.5)]:
    case("Identity", [x], {}, ops.Identity()(T(x)))
for x in [o.rand(2, 3), np.zeros((0, 3), np.float32), np.float32(1.0)]:
    case("Size", [x], {}, ops.Size()(T(x)))
    case("Rank", [x], {}, ops.Rank()(T(x)))
    case("TensorShape", [x], {}, ag.TensorShape()(T(x)))
for p in [(3, 4, 0, 2, 1), (0,), (1, 0)]:
    case("InvertPermutation", [p], {}, ops.InvertPermutation()(p))

# ---------------------------------------------------------------------------
# Padding

for x, paddings in [
    (arange(3, 4), ((1, 0), (0, 2))),
    (o.rand(2, 1, 2, dtype=np.float64), ((0, 1), (2, 2), (1, 0))),
    (i32([1, 2]), ((1, 1),)),
    (np.array([True]), ((1, 1),)),
    (o.rand(2, 2).astype(np.float16), ((0, 0), (0, 0))),
]:
    case("Pad", [x], {"paddings": paddings}, ops.Pad(paddings)(T(x)))


def padv3(x, paddings, value, mode="constant", contiguous=True):
    v = None if value is None else T(value)
    got = ops.PadV3(mode=mode, paddings_contiguous=contiguous)(T(x), T(i64(paddings)), v)
    attrs = {"paddings": tuple(paddings), "mode": mode, "paddings_contiguous": contiguous}
    cv = value if value is not None else np.array(0, x.dtype)
    case("PadV3", [x, cv], attrs, got)


padv3(arange(3, 4), (1, 2), np.float32(5.0))
padv3(arange(3, 4), (1, 2, 0, 1), np.float32(5.0))
padv3(arange(3, 4), (1, 2, 0, 1), np.float32(-1.5), contiguous=False)
padv3(arange(3, 4), (-1, 2), np.float32(0.0))
padv3(arange(1, 2, 3, dtype=np.float64), (1, 0, 1, 1, 1, 0), np.float64(1.5))
padv3(i32([[1, 2]]), (1, 1), np.int32(7))
padv3(np.array([[True]]), (1, 1), np.bool_(False))
padv3(arange(1, 3, 4), (1, 2), None, mode="reflect")
padv3(arange(2, 3, 4, dtype=np.float64), (3, 2), None, mode="reflect")
padv3(arange(1, 2, 3, 4), (1, 2, 2, 1), None, mode="reflect")
padv3(arange(1, 3, 4), (1, 2), None, mode="edge")
padv3(arange(1, 1, 2, 3), (1, 0, 2, 1), None, mode="edge")
padv3(arange(1, 1, 2, 3, 4), (1, 2, 1, 1, 1, 0), None, mode="edge")
padv3(arange(1, 3, 4), (1, 2), None, mode="circular")
padv3(arange(1, 1, 3, 3), (3, 1, 2, 3), None, mode="circular")
padv3(arange(1, 2, 3, 4), (1, 2, 0, 1), None, mode="reflect", contiguous=False)

for x, padding, value in [
    (arange(3, 4), (1, 2), 3.0),
    (arange(3, 4), (1, -2, 1, 0), 0.5),
    (arange(2, 3, dtype=np.int32), (0, 1), 4),
    (o.rand(2, 2, 2, dtype=np.float64), (1, 1, 0, 0, 2, 0), -1.0),
]:
    expected = ops.PadV3()(T(x), T(i64(padding)), T(np.array(value, x.dtype)))
    case("ConstantPadND", [x], {"padding": padding, "value": value}, expected,
           note="ConstantPadND has no CPU kernel: expected from PadV3 (constant)")

for x, paddings, mode in [
    (arange(3, 3), ((1, 1), (2, 2)), "REFLECT"),
    (arange(3, 3), ((1, 1), (2, 2)), "SYMMETRIC"),
    (np.arange(3).astype(np.float32), ((3, 3),), "SYMMETRIC"),
    (np.arange(3).astype(np.float64), ((2, 2),), "REFLECT"),
    (i32([[1, 2], [3, 4]]), ((1, 0), (1, 1)), "REFLECT"),
    (o.rand(2, 3, 2), ((0, 1), (2, 1), (1, 1)), "SYMMETRIC"),
]:
    case("MirrorPad", [x], {"paddings": paddings, "mode": mode},
           ops.MirrorPad(mode)(T(x), T(i64(paddings))))

for op, mode, x, padding in [
    ("ReflectionPad1D", "reflect", arange(1, 3, 4), (1, 2)),
    ("ReflectionPad1D", "reflect", arange(2, 5, dtype=np.float64), (3, 4)),
    ("ReflectionPad2D", "reflect", arange(1, 3, 4), (1, 2, 2, 0)),
    ("ReflectionPad2D", "reflect", arange(2, 1, 3, 3), (2, 2, 1, 2)),
    ("ReplicationPad1D", "edge", arange(1, 3, 4), (1, 3)),
    ("ReplicationPad1D", "edge", arange(2, 3, dtype=np.float64), (0, 2)),
    ("ReplicationPad2D", "edge", arange(1, 2, 3), (2, 0, 1, 3)),
    ("ReplicationPad2D", "edge", arange(1, 1, 2, 3), (1, 1, 1, 1)),
    ("ReplicationPad3D", "edge", arange(1, 1, 2, 3, 4), (1, 2, 1, 1, 1, 0)),
]:
    # PadV3 in these modes wants the batch dimension; pad with it and drop it.
    k = len(padding) // 2
    xx = x if x.ndim == k + 2 else x[None]
    got = ops.PadV3(mode=mode)(T(xx), T(i64(padding)), None)
    got = got if x.ndim == k + 2 else got[0]
    case(op, [x], {"padding": padding}, got,
           note=f"{op} has no CPU kernel: expected from PadV3 ({mode})")

# ---------------------------------------------------------------------------
# SpaceToDepth, DepthToSpace, PixelShuffle

for x, b in [
    (arange(1, 2, 4, 4), 2),
    (arange(2, 1, 6, 3, dtype=np.int32), 3),
    (o.rand(1, 3, 2, 4, dtype=np.float64), 2),
]:
    case("SpaceToDepth", [x], {"block_size": b}, ops.SpaceToDepth(b)(T(x)))
for x, b in [
    (arange(1, 8, 1, 2), 2),
    (arange(2, 9, 2, 1, dtype=np.int64), 3),
    (o.rand(1, 8, 2, 2, dtype=np.float64), 2),
]:
    case("DepthToSpace", [x], {"block_size": b}, ops.DepthToSpace(b)(T(x)))
for x, r in [
    (arange(1, 8, 1, 2), 2),
    (arange(4, 2, 2), 2),
    (arange(2, 1, 9, 2, 1, dtype=np.int32), 3),
    (o.rand(1, 2, 2, 3, dtype=np.float64), 1),
]:
    case("PixelShuffle", [x], {"upscale_factor": r}, ag.PixelShuffle()(T(x), r))

for x, block, paddings in [
    (arange(2, 1, 3, 2), (2, 2), ((1, 0), (0, 2))),
    (arange(2, 3, 2), (2,), ((0, 2),)),
    (arange(1, 2, 4, 4, dtype=np.int32), (2, 1), ((0, 0), (1, 1))),
    (o.rand(1, 1, 2, 6, dtype=np.float64), (1, 3), ((0, 0), (0, 0))),
]:
    y = ops.SpaceToBatchND(block, paddings)(T(x))
    case("SpaceToBatchND", [x], {"block_shape": block, "paddings": paddings}, y)
    case("BatchToSpaceND", [y.asnumpy()], {"block_shape": block, "crops": paddings},
         ops.deprecated.BatchToSpaceND(block, paddings)(y))
x = arange(1, 2, 2, 4)
y = ops.SpaceToBatchND((2, 2), ((1, 1), (0, 0)))(T(x))
case("SpaceToBatch", [x], {"block_size": 2, "paddings": ((1, 1), (0, 0))}, y,
     note="SpaceToBatch has no CPU kernel: expected from SpaceToBatchND")
case("BatchToSpace", [y.asnumpy()], {"block_size": 2, "crops": ((1, 1), (0, 0))},
     ops.deprecated.BatchToSpaceND((2, 2), ((1, 1), (0, 0)))(y),
     note="BatchToSpace has no CPU kernel: expected from BatchToSpaceND")

# ---------------------------------------------------------------------------
# GatherNd, ScatterNd, TensorScatter*

for x, idx in [
    (arange(3, 4), i32([[0, 1], [2, 3]])),
    (arange(3, 4), i64([[2], [0]])),
    (arange(3, 4), i64([1, 2])),
    (o.rand(2, 3, 2, dtype=np.float64), i32([[[1, 0], [0, 2]]])),
    (np.array([[True, False]]), i64([[0, 1]])),
    (arange(3, 4), np.zeros((2, 0), np.int64)),
]:
    case("GatherNd", [x, idx], {}, ops.GatherNd()(T(x), T(idx)))

for idx, upd, shape in [
    (i32([[0], [2], [0]]), o.rand(3, 4), (3, 4)),
    (i64([[0, 1], [0, 1], [1, 0]]), i32([3, 4, 5]), (2, 2)),
    (i64([[1, 1, 0]]), o.rand(1, dtype=np.float64), (2, 2, 2)),
    (i64([[1]]), np.array([[True, True]]), (2, 2)),
]:
    case("ScatterNd", [idx, upd], {"shape": shape}, ops.ScatterNd()(T(idx), T(upd), shape))

for op, prim in [
    ("TensorScatterUpdate", ops.TensorScatterUpdate()),
    ("TensorScatterAdd", ops.TensorScatterAdd()),
    ("TensorScatterSub", ops.TensorScatterSub()),
    ("TensorScatterMax", ops.TensorScatterMax()),
    ("TensorScatterMin", ops.TensorScatterMin()),
]:
    dup = op != "TensorScatterUpdate"
    cases = [
        (arange(3, 4), i32([[0, 1], [2, 3]]), np.array([-1.0, 20.0], np.float32)),
        (o.rand(3, 2, dtype=np.float64), i64([[2], [0]] + ([[2]] if dup else [])),
         o.rand(3 if dup else 2, 2, dtype=np.float64)),
        (i32([1, 5, 3]), i32([[0], [1]] + ([[0]] if dup else [])), i32([4, 2, 0] if dup else [4, 2])),
    ]
    if op == "TensorScatterUpdate":
        cases.append((np.array([True, False]), i32([[0]]), np.array([False])))
    for x, idx, upd in cases:
        case(op, [x, idx, upd], {}, prim(T(x), T(idx), T(upd)))

# ---------------------------------------------------------------------------
# GatherD, IndexSelect, Take

for x, dim, idx in [
    (arange(3, 4), 1, i64([[0, 1], [2, 3], [1, 1]])),
    (arange(3, 4), 0, i64([[2, 0], [1, 1]])),
    (arange(3, 4), -1, i32([[3], [0], [-1]])),
    (o.rand(2, 3, 2, dtype=np.float64), 1, i64([[[2, 0]], [[1, -3]]])),
    (arange(2, 2, dtype=np.int32), 0, i64([[1, 0]])),
]:
    case("GatherD", [x, idx], {"dim": dim}, ops.GatherD()(T(x), dim, T(idx)))

for x, dim, idx in [
    (arange(3, 4), 1, i64([0, 3, 3])),
    (o.rand(3, 2, dtype=np.float64), 0, i32([2, 0])),
    (arange(2, 3, dtype=np.int32), -1, i64([1])),
]:
    case("IndexSelect", [x, idx], {"dim": dim}, ops.Gather()(T(x), T(idx), dim),
           note="IndexSelect has no CPU kernel: expected from Gather")

for x, idx in [
    (arange(3, 4), i64([[0, 11], [3, 4]])),
    (o.rand(2, 2, dtype=np.float64), i32([3, 0, 3])),
]:
    case("Take", [x, idx], {}, ops.Gather()(T(x.reshape(-1)), T(idx), 0),
           note="Take has no CPU kernel: expected from Gather of the flattened input")

# ---------------------------------------------------------------------------
# UnsortedSegmentSum/Max/Min

for op, prim in [
    ("UnsortedSegmentSum", ops.UnsortedSegmentSum()),
    ("UnsortedSegmentMax", ops.UnsortedSegmentMax()),
    ("UnsortedSegmentMin", ops.UnsortedSegmentMin()),
]:
    for x, ids, num in [
        (arange(3, 4), i32([0, 2, 0]), 4),
        (arange(3, 4), i32([0, -1, 0]), 2),
        (arange(3, 2, dtype=np.int32), i64([1, 1, 0]), 2),
        (arange(3, 2, dtype=np.int32), i64([1, 1, 1]), 2),
        (o.rand(3, 2, dtype=np.float64), i64([1, 1, 1]), 3),
        (arange(3, 4), i64([[0, 1, 0, 1], [1, 1, 1, 1], [0, 0, 0, 0]]), 2),
        (o.rand(4, 2, 2), i32([2, 0, 2, 1]), 3),
    ]:
        case(op, [x, ids], {"num_segments": num}, prim(T(x), T(ids), num))

# ---------------------------------------------------------------------------
# MaskedFill

for x, mask, value in [
    (arange(3, 4), np.array([True, False, True, False]), np.float32(9.0)),
    (np.arange(4).astype(np.float32), np.array([[True, False, True, False], [False] * 4]), np.float32(-1.0)),
    (i32([0, 1, 2, 3]), np.array([True, False, True, False]), np.int32(9)),
    (o.rand(2, 3, dtype=np.float64), np.array([[False], [True]]), np.float64(0.5)),
    (o.rand(2, 2, dtype=np.float64), np.array([True, False]), np.float32(2.5)),
    (np.array([True, False]), np.array([True, False]), np.bool_(False)),
]:
    case("MaskedFill", [x, mask, value], {}, ops.MaskedFill()(T(x), T(mask), T(value)))

# ---------------------------------------------------------------------------
# OneHot, OneHotExt

for idx, depth, on, off, axis in [
    (i32([0, 2, -1, 5]), 4, np.float32(1.0), np.float32(0.0), -1),
    (i64([[0, 2], [-1, 4]]), 4, np.float32(2.0), np.float32(-1.0), 0),
    (i64([[0, 2], [1, 3]]), 3, np.int32(5), np.int32(1), 1),
    (i64([0, 2]), 0, np.float32(1.0), np.float32(0.0), -1),
    (i64(1), 3, np.int64(1), np.int64(0), -1),
]:
    case("OneHot", [idx, on, off], {"depth": depth, "axis": axis},
           ops.OneHot(axis)(T(idx), depth, T(on), T(off)))
for idx, n, axis in [(i64([0, 2, 1]), 4, -1), (i64([[1, 0]]), 2, 1)]:
    case("OneHotExt", [idx, np.float32(1.0), np.float32(0.0)], {"num_classes": n, "axis": axis},
           ops.OneHot(axis)(T(idx), n, T(np.float32(1.0)), T(np.float32(0.0))),
           note="OneHotExt has no CPU kernel: expected from OneHot")

# ---------------------------------------------------------------------------
# Range, Arange, LinSpace, Eye

for s, l, d in [
    (np.int32(1), np.int32(10), np.int32(3)),
    (np.int64(5), np.int64(1), np.int64(-2)),
    (np.int64(2), np.int64(2), np.int64(1)),
    (np.float32(1.0), np.float32(2.0), np.float32(0.3)),
    (np.float32(2.0), np.float32(-1.0), np.float32(-0.7)),
    (np.float32(0.0), np.float32(1.0), np.float32(0.1)),
    (np.float64(1.0), np.float64(2.0), np.float64(0.3)),
]:
    case("Range", [s, l, d], {}, ops.Range()(T(s), T(l), T(d)))

for s, e, st, dt in [
    (1, 10, 3, None),
    (1, 2.0, 0.3, None),
    (0, 5, 2, ms.float64),
    (3.0, 0.0, -0.5, ms.int32),
]:
    attrs = {} if dt is None else {"dtype": dt}
    case("Arange", [s, e, st], attrs, ops.arange(s, e, st, dtype=dt),
           note="Arange has no CPU kernel: expected from ops.arange (Range plus Cast)")

for s, e, n in [
    (np.float32(1.0), np.float32(10.0), 5),
    (np.float64(1.0), np.float64(0.1), 7),
    (np.float32(-1.3), np.float32(2.7), 7),
    (np.float32(1.0), np.float32(10.0), 1),
]:
    case("LinSpace", [s, e], {"num": n}, ops.LinSpace()(T(s), T(e), n))

for n, m, dt in [(2, 3, ms.int32), (3, 2, ms.float64), (2, 2, ms.bool_), (0, 2, ms.float32), (3, 3, ms.float32)]:
    case("Eye", [], {"n": n, "m": m, "dtype": dt}, ops.Eye()(n, m, dt))

# ---------------------------------------------------------------------------
# Tril, Triu, Meshgrid, SequenceMask, FillV2, Fills, ZerosLikeExt, OnesLikeExt

for x, k in [
    (arange(3, 4), 0),
    (arange(3, 4), 1),
    (np.ones((2, 3, 3), np.int32), -1),
    (np.ones((2, 1, 2, 3)), -1),
    (arange(3, 4), 5),
    (np.ones((3, 3), np.bool_), 1),
]:
    case("Tril", [x], {"diagonal": k}, ops.Tril(k)(T(x)))
    case("Triu", [x], {"diagonal": k}, ops.Triu(k)(T(x)))

for xs, indexing in [
    ((np.arange(2).astype(np.float32), np.arange(3).astype(np.float32)), "xy"),
    ((np.arange(2).astype(np.float32), np.arange(3).astype(np.float32)), "ij"),
    ((i32([1, 2]), i32([3, 4, 5]), i32([6, 7, 8, 9])), "xy"),
    ((o.rand(3, dtype=np.float64), o.rand(2, dtype=np.float64), o.rand(2, dtype=np.float64)), "ij"),
    ((np.arange(2).astype(np.float32),), "xy"),
    ((np.float32(2.0), np.arange(3).astype(np.float32)), "xy"),
]:
    case("Meshgrid", [tuple(xs)], {"indexing": indexing},
           tup(ops.Meshgrid(indexing)(tuple(T(x) for x in xs))))

for lengths, maxlen in [(i32([1, 3, 0]), 4), (i64([[1, 3], [5, -1]]), 4), (i64([2]), 1)]:
    case("SequenceMask", [lengths], {"maxlen": maxlen}, ops.sequence_mask(T(lengths), maxlen),
           note="the SequenceMask primitive fails in PyNative: expected from ops.sequence_mask")

for shape, value in [
    ((2, 3), np.float32(3.5)),
    ((2, 2), np.int64(1)),
    ((2,), np.array([1.0], np.float32)),
    ((0, 3), np.float64(1.0)),
    ((), np.float64(1.0)),
    ((2,), np.bool_(True)),
]:
    case("FillV2", [value], {"shape": shape}, ops.FillV2()(shape, T(value)))

for x, value in [(o.rand(2, 3), np.float32(2.5)), (i32([[1, 2]]), np.float32(3.0)), (o.rand(3, dtype=np.float64), np.float32(-1.0))]:
    case("Fills", [x, value], {}, ops.FillV2()(x.shape, T(np.array(value, x.dtype))),
           note="Fills has no CPU kernel: expected from FillV2")

for x, dt in [(o.rand(2, 3), None), (i32([1, 2]), ms.float64), (o.rand(2, dtype=np.float64), ms.bool_)]:
    attrs = {} if dt is None else {"dtype": dt}
    case("ZerosLikeExt", [x], attrs, ops.zeros_like(T(x), dtype=dt),
           note="ZerosLikeExt has no CPU kernel: expected from ops.zeros_like")
    case("OnesLikeExt", [x], attrs, ops.ones_like(T(x), dtype=dt),
           note="OnesLikeExt has no CPU kernel: expected from ops.ones_like")

o.save()
