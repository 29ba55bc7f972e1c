"""The composite primitives (crates/ops/composite/mindspore-2.10.mir) against
real MindSpore 2.10.

Each case calls one composite on inputs with attributes, and records what
MindSpore 2.10 (CPU, PyNative) computes for the same call of the same
primitive. `cargo test -p exec --test composites` writes each case as a small
DSL program calling the composite, checks it, runs it with the executor and
compares (dtype and shape exactly, values within the case's tolerance); for
cases marked `grad` it also differentiates the program (`grad`) and compares
with central finite differences in f64.

Inputs are tensors, tuples of tensors, or Python numbers (`L(2.5)`: written
into the program as a literal, a weak scalar as in MindSpore).

A primitive for which MindSpore 2.10's CPU backend has no kernel (many `...Ext`
primitives are Ascend-only) is recorded against MindSpore's own computation of
the same function by the primitives it has on the CPU (the case's `reference`
says which): the check is then of the decomposition's semantics, not of that
kernel's.

Regenerate (MindSpore 2.10 installed, e.g. /work/venvs/ms/bin/python):
    python crates/exec/tests/composite_oracle/composite.py
It writes `composite.json` beside the script; commit both.
"""
import json
import math
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "ops", "tests", "ms_oracle"))

from common import enc, attr  # noqa: E402  (sets PyNative mode on the CPU)

import mindspore as _ms  # noqa: E402
# Each kernel's failure at its own call (PyNative launches asynchronously).
_ms.set_context(pynative_synchronize=True)

import mindspore as ms  # noqa: E402
from mindspore import Tensor, ops  # noqa: E402
import mindspore.ops.auto_generate as ag  # noqa: E402
from mindspore.ops import operations as P  # noqa: E402
from mindspore.ops.operations import math_ops as MP, nn_ops as NP, _inner_ops as IP  # noqa: E402

rng = np.random.default_rng(20250210)


def rand(*shape, lo=-1.0, hi=1.0, dtype=np.float32):
    return rng.uniform(lo, hi, size=shape).astype(dtype)


def ints(*shape, lo=-5, hi=6, dtype=np.int32):
    return rng.integers(lo, hi, size=shape).astype(dtype)


def bools(*shape):
    return rng.integers(0, 2, size=shape).astype(np.bool_)


class L:
    """A Python number passed as such (a literal in the program)."""

    def __init__(self, v):
        self.v = v


class Tup:
    """A tuple of tensors."""

    def __init__(self, *items):
        self.items = items


def to_ms(v):
    if isinstance(v, L):
        return v.v
    if isinstance(v, Tup):
        return tuple(Tensor(i) for i in v.items)
    if isinstance(v, np.ndarray) and v.dtype == np.float32 and getattr(v, "_bf16", False):
        return Tensor(v).astype(ms.bfloat16)
    return Tensor(v)


def enc_input(v):
    if isinstance(v, L):
        return {"literal": v.v}
    if isinstance(v, Tup):
        return {"tuple": [enc(i) for i in v.items]}
    return {"tensor": enc(v)}


cases = []


def case(name, inputs, attrs, call, grad=False, rtol=1e-5, atol=1e-6, note="",
         reference=None, compare="values"):
    """`call(*ms_inputs)`: MindSpore's output for the call. `grad`: also check
    the gradient with respect to the float tensor inputs."""
    try:
        out = enc(call(*[to_ms(i) for i in inputs]))
    except Exception as e:  # a case MindSpore refuses: fix the script
        msg = [line for line in str(e).splitlines() if line.strip() and "----" not in line]
        print(f"MindSpore refuses {name} {attrs}: {msg[:2]}", file=sys.stderr)
        raise SystemExit(1)
    c = {
        "composite": name,
        "inputs": [enc_input(i) for i in inputs],
        "attrs": {k: attr(v) for k, v in attrs.items()},
        "expected": out,
        "rtol": rtol,
        "atol": atol,
        "grad": grad,
        "note": note,
        "compare": compare,
    }
    if reference:
        c["reference"] = reference
    cases.append(c)


# ---------------------------------------------------------------------------
# Views (MindSpore's view primitives; all have CPU kernels).

x23 = rand(2, 3)
case("BroadcastToView", [rand(3)], {"shape": (2, 3)},
     lambda x: ag.BroadcastToView()(x, (2, 3)), grad=True)
case("BroadcastToView", [ints(2, 1)], {"shape": (2, 2, 3)},
     lambda x: ag.BroadcastToView()(x, (2, 2, 3)))
case("BroadcastToView", [rand(2, 1, dtype=np.float64)], {"shape": (-1, 4)},
     lambda x: ag.BroadcastToView()(x, (-1, 4)), grad=True)

case("ExpandDimsView", [x23], {"dim": 0}, lambda x: ag.ExpandDimsView()(x, 0), grad=True)
case("ExpandDimsView", [ints(2, 3, dtype=np.int64)], {"dim": -1},
     lambda x: ag.ExpandDimsView()(x, -1))
case("ExpandDimsView", [rand(4)], {"dim": 1}, lambda x: ag.ExpandDimsView()(x, 1))

case("TransposeView", [x23], {"input_perm": (1, 0)},
     lambda x: ag.TransposeView()(x, (1, 0)), grad=True)
case("TransposeView", [rand(2, 3, 4)], {"input_perm": (2, 0, 1)},
     lambda x: ag.TransposeView()(x, (2, 0, 1)), grad=True)
case("TransposeView", [ints(2, 3, 1)], {"input_perm": (1, 2, 0)},
     lambda x: ag.TransposeView()(x, (1, 2, 0)))

case("View", [x23], {"shape": (3, 2)}, lambda x: ag.View()(x, (3, 2)), grad=True)
case("View", [ints(2, 3, 2)], {"shape": (-1,)}, lambda x: ag.View()(x, (-1,)))
case("View", [rand(6, dtype=np.float64)], {"shape": (2, -1, 1)},
     lambda x: ag.View()(x, (2, -1, 1)))

case("ViewAs", [x23, rand(3, 2)], {}, lambda x, o: ag.ViewAs()(x, o), grad=True)
case("ViewAs", [ints(6), ints(1, 2, 3)], {}, lambda x, o: ag.ViewAs()(x, o))

case("ExpandAs", [rand(3), x23], {}, lambda x, o: ag.ExpandAs()(x, o), grad=True)
case("ExpandAs", [rand(2, 1), rand(4, 2, 3)], {}, lambda x, o: ag.ExpandAs()(x, o), grad=True)
case("ExpandAs", [ints(1, 3), ints(2, 3)], {}, lambda x, o: ag.ExpandAs()(x, o))

x234 = rand(2, 3, 4)
case("SelectExtView", [x23], {"dim": 0, "index": 1},
     lambda x: ag.SelectExtView()(x, 0, 1), grad=True)
case("SelectExtView", [x234], {"dim": 1, "index": -1},
     lambda x: ag.SelectExtView()(x, 1, -1), grad=True)
case("SelectExtView", [ints(2, 3)], {"dim": -1, "index": 2},
     lambda x: ag.SelectExtView()(x, -1, 2))

case("SliceExtView", [x234], {"dim": 2, "start": 0, "end": 3, "step": 2},
     lambda x: ag.SliceExtView()(x, 2, 0, 3, 2), grad=True)
case("SliceExtView", [x23], {"dim": 0, "start": -1, "end": 2, "step": 1},
     lambda x: ag.SliceExtView()(x, 0, -1, 2, 1))
case("SliceExtView", [ints(5, 2)], {"dim": 0, "start": 1, "end": 100, "step": 3},
     lambda x: ag.SliceExtView()(x, 0, 1, 100, 3))

case("NarrowView", [x234], {"dim": 1, "start": 1, "length": 2},
     lambda x: ag.NarrowView()(x, 1, 1, 2), grad=True)
case("NarrowView", [ints(5)], {"dim": 0, "start": -3, "length": 2},
     lambda x: ag.NarrowView()(x, 0, -3, 2))

case("ChunkView", [x23], {"chunks": 3, "dim": 1}, lambda x: ag.ChunkView()(x, 3, 1), grad=True)
case("ChunkView", [rand(5, 2)], {"chunks": 2}, lambda x: ag.ChunkView()(x, 2, 0), grad=True)
case("ChunkView", [ints(4, 3)], {"chunks": 3, "dim": -2}, lambda x: ag.ChunkView()(x, 3, -2))

case("SplitTensorView", [rand(5, 2)], {"split_size": 2},
     lambda x: ag.SplitTensorView()(x, 2, 0), grad=True)
case("SplitTensorView", [ints(2, 3)], {"split_size": 1, "dim": -1},
     lambda x: ag.SplitTensorView()(x, 1, -1))

case("SplitWithSizeView", [x234], {"split_size": (1, 3), "dim": 2},
     lambda x: ag.SplitWithSizeView()(x, (1, 3), 2), grad=True)
case("SplitWithSizeView", [ints(5)], {"split_size": (2, 0, 3)},
     lambda x: ag.SplitWithSizeView()(x, (2, 0, 3), 0))

case("UnstackExtView", [x23], {}, lambda x: ag.UnstackExtView()(x, 0), grad=True)
case("UnstackExtView", [x234], {"dim": -1}, lambda x: ag.UnstackExtView()(x, -1), grad=True)
case("UnstackExtView", [ints(3, 2)], {"dim": 1}, lambda x: ag.UnstackExtView()(x, 1))

case("TExt", [x23], {}, lambda x: ag.TExt()(x), grad=True)
case("TExt", [rand(4)], {}, lambda x: ag.TExt()(x), grad=True)
case("TExt", [ints(3, 1)], {}, lambda x: ag.TExt()(x))

case("Copy", [x23], {}, lambda x: ag.Copy()(x), grad=True)
case("Copy", [ints(3)], {}, lambda x: ag.Copy()(x))
case("Copy", [bools(2, 2)], {}, lambda x: ag.Copy()(x))

case("Real", [x23], {}, lambda x: ag.Real()(x), grad=True)
case("Real", [ints(3, dtype=np.int64)], {}, lambda x: ag.Real()(x))

case("IdentityN", [Tup(rand(2), ints(3))], {}, lambda t: P.IdentityN()(t))
case("IdentityN", [Tup(x23, rand(1, dtype=np.float64))], {}, lambda t: P.IdentityN()(t), grad=True)

# ---------------------------------------------------------------------------
# Tensor makers.

case("NewOnes", [x23], {"size": (2, 2)}, lambda x: ag.NewOnes()(x, (2, 2), None), grad=True)
case("NewOnes", [ints(3)], {"size": 4}, lambda x: ag.NewOnes()(x, 4, None))
case("NewOnes", [x23], {"size": (1, 3), "dtype": ms.int64},
     lambda x: ag.NewOnes()(x, (1, 3), ms.int64))
case("NewOnes", [bools(2)], {"size": (2,)}, lambda x: ag.NewOnes()(x, (2,), None))
case("NewOnes", [np.zeros((0, 2), np.float64)], {"size": (3,)},
     lambda x: ag.NewOnes()(x, (3,), None))
case("NewZeros", [x23], {"size": (3,)}, lambda x: ag.NewZeros()(x, (3,), None), grad=True)
case("NewZeros", [ints(2, 2, dtype=np.int8)], {"size": (2, 1)},
     lambda x: ag.NewZeros()(x, (2, 1), None))
case("NewZeros", [ints(2)], {"size": 2, "dtype": ms.float16},
     lambda x: ag.NewZeros()(x, 2, ms.float16))

# ---------------------------------------------------------------------------
# Elementwise and reductions.

case("AddV2", [x23, rand(2, 3)], {}, lambda x, y: MP.AddV2()(x, y), grad=True)
case("AddV2", [ints(4), ints(4)], {}, lambda x, y: MP.AddV2()(x, y))

case("AddN", [Tup(x23, rand(2, 3), rand(2, 3))], {}, lambda t: ag.AddN()(t), grad=True)
case("AddN", [Tup(ints(3), ints(3))], {}, lambda t: ag.AddN()(t))
# (MindSpore's CPU kernel refuses a tuple of one tensor.)
case("AddN", [Tup(rand(2, dtype=np.float64), rand(2, dtype=np.float64))], {},
     lambda t: ag.AddN()(t))

sp = np.array([[-3.0, -0.5, 0.0, 0.4], [2.0, 9.5, 10.5, 30.0]], np.float32)
case("SoftplusExt", [sp], {}, lambda x: ag.SoftplusExt()(x, 1, 20))
case("SoftplusExt", [sp], {"beta": 2, "threshold": 20},
     lambda x: ag.SoftplusExt()(x, 2, 20))
case("SoftplusExt", [sp], {"beta": 0.5, "threshold": 3.0},
     lambda x: ag.SoftplusExt()(x, 0.5, 3.0))
case("SoftplusExt", [rand(2, 3, lo=-4, hi=4)], {"beta": 1.5, "threshold": 2},
     lambda x: ag.SoftplusExt()(x, 1.5, 2), grad=True)
case("SoftplusExt", [rand(3, lo=-2, hi=2, dtype=np.float64)], {},
     lambda x: ag.SoftplusExt()(x, 1, 20), grad=True)

case("ReLUV3", [np.array([-1.5, 0.25, 3.0, -0.1], np.float32)], {},
     lambda x: NP.ReLUV3()(x), grad=True)
case("ReLUV3", [ints(2, 3)], {}, lambda x: NP.ReLUV3()(x))

case("BitwiseAndTensor", [ints(2, 3), ints(2, 3)], {},
     lambda x, y: ag.BitwiseAndTensor()(x, y))
case("BitwiseAndTensor", [ints(2, 3, dtype=np.int64), ints(3, dtype=np.int64)], {},
     lambda x, y: ag.BitwiseAndTensor()(x, y))
case("BitwiseAndTensor", [bools(4), bools(4)], {}, lambda x, y: ag.BitwiseAndTensor()(x, y))
case("BitwiseAndTensor", [ints(3, lo=0, hi=200, dtype=np.uint8),
                          ints(3, lo=0, hi=200, dtype=np.uint8)], {},
     lambda x, y: ag.BitwiseAndTensor()(x, y))

case("Invert", [ints(2, 3)], {}, lambda x: P.Invert()(x))
case("Invert", [ints(4, dtype=np.int64)], {}, lambda x: P.Invert()(x))
case("Invert", [ints(4, dtype=np.int16)], {}, lambda x: P.Invert()(x))
case("Invert", [ints(4, lo=0, hi=255, dtype=np.uint8)], {}, lambda x: P.Invert()(x))

num = np.array([[7.0, -7.0, 7.5, -7.5], [0.5, -2.0, 9.0, 1.0]], np.float32)
den = np.array([2.0, 2.0, -2.0, 4.0], np.float32)
inum = np.array([[7, -7, 8, -9], [0, -2, 9, 1]], np.int32)
iden = np.array([2, 3, -2, -4], np.int32)
for mode in [None, "floor", "trunc"]:
    a = {} if mode is None else {"rounding_mode": mode}
    case("DivMod", [num, den], a, lambda x, y, m=mode: ag.DivMod()(x, y, m), grad=mode is None)
    case("DivMod", [inum, iden], a, lambda x, y, m=mode: ag.DivMod()(x, y, m))
    if mode is None:
        case("DivMods", [num, L(2.5)], a, lambda x, y, m=mode: ag.DivMods()(x, y, m), grad=True)
        case("DivMods", [inum, L(3)], a, lambda x, y, m=mode: ag.DivMods()(x, y, m))
# MindSpore 2.10's CPU DivMods fails with "trunc" and "floor" ("Trunc should
# have 1 outputs, but got 2", "KernelMod Init Failed: FloorDiv"): the
# references are its TruncateDiv and FloorDiv kernels.
DM_REF = "{} (MindSpore's CPU DivMods fails with a rounding mode)"
for mode, prim in [("trunc", P.TruncateDiv), ("floor", P.FloorDiv)]:
    case("DivMods", [num, L(2.5)], {"rounding_mode": mode},
         lambda x, y, p=prim: p()(x, Tensor(y, ms.float32)), reference=DM_REF.format(prim.__name__))
    case("DivMods", [inum, L(3)], {"rounding_mode": mode},
         lambda x, y, p=prim: p()(x, Tensor(y, ms.int32)), reference=DM_REF.format(prim.__name__))
case("DivMod", [rand(2, 2, dtype=np.float64), rand(2, 1, lo=1, hi=2, dtype=np.float64)],
     {"rounding_mode": "floor"}, lambda x, y: ag.DivMod()(x, y, "floor"))

nan = float("nan")
fa = np.array([1.0, nan, 3.0, nan, -2.0], np.float32)
fb = np.array([4.0, 2.0, nan, nan, -5.0], np.float32)
case("Fmax", [fa, fb], {}, lambda x, y: MP.Fmax()(x, y))
case("Fmax", [rand(2, 3), rand(2, 3)], {}, lambda x, y: MP.Fmax()(x, y), grad=True)
case("Fmax", [rand(3, dtype=np.float64), rand(3, dtype=np.float64)], {},
     lambda x, y: MP.Fmax()(x, y))
case("Fmax", [ints(4), ints(4)], {}, lambda x, y: MP.Fmax()(x, y))

case("ApproximateEqual", [np.array([1.0, 2.0, 3.0], np.float32),
                          np.array([1.0 + 2e-6, 2.1, 2.0], np.float32)], {},
     lambda x, y: P.ApproximateEqual()(x, y))
case("ApproximateEqual", [x23, x23 + np.float32(0.3)], {"tolerance": 0.5},
     lambda x, y: P.ApproximateEqual(0.5)(x, y))
case("ApproximateEqual", [rand(4, dtype=np.float16), rand(4, dtype=np.float16)],
     {"tolerance": 0.6}, lambda x, y: P.ApproximateEqual(0.6)(x, y))

eq_a = np.array([1.0, 2.0, 3.0, 4.0], np.float32)
case("EqualCount", [eq_a, np.array([1.0, 0.0, 3.0, 5.0], np.float32)], {},
     lambda x, y: P.EqualCount()(x, y))
case("EqualCount", [ints(2, 3, lo=0, hi=2), ints(2, 3, lo=0, hi=2)], {},
     lambda x, y: P.EqualCount()(x, y))

case("Ger", [rand(3), rand(4)], {}, lambda x, y: P.Ger()(x, y), grad=True)
case("Ger", [rand(2, dtype=np.float64), rand(2, dtype=np.float64)], {},
     lambda x, y: P.Ger()(x, y))

case("Any", [x23], {}, lambda x: ag.Any()(x))
case("Any", [np.zeros((2, 2), np.float32)], {}, lambda x: ag.Any()(x))
case("Any", [bools(3)], {}, lambda x: ag.Any()(x))
case("Any", [np.zeros(3, np.int32)], {}, lambda x: ag.Any()(x))

case("AnyExt", [bools(2, 3)], {"dim": -1}, lambda x: ag.AnyExt()(x, -1, False))
case("AnyExt", [bools(3, 2)], {"dim": 0, "keepdim": True}, lambda x: ag.AnyExt()(x, 0, True))
# MindSpore 2.10's CPU AnyExt reads a non-bool input's bytes as bools (it gives
# [False, False] for the rows [0, 0, 1.5] and [0, 0, 0]); the documented
# semantics (non-zero is true) are its kernel's on the input compared with 0.
ANY_REF = "AnyExt on `input != 0` (MindSpore's CPU kernel misreads non-bool inputs)"
anyx = np.array([[0.0, 0.0, 1.5], [0.0, 0.0, 0.0]], np.float32)
case("AnyExt", [anyx], {"dim": 1}, lambda x: ag.AnyExt()(x != 0, 1, False), reference=ANY_REF)
case("AnyExt", [anyx], {"dim": 0, "keepdim": True}, lambda x: ag.AnyExt()(x != 0, 0, True),
     reference=ANY_REF)
case("AnyExt", [ints(3, 2, lo=0, hi=2)], {"dim": 0}, lambda x: ag.AnyExt()(x != 0, 0, False),
     reference=ANY_REF)

bx = np.array([[-1.0, 0.0, 0.5], [1.0, 2.5, 7.0]], np.float32)
case("Bucketize", [bx], {"boundaries": (0.0, 1.0, 2.5)},
     lambda x: P.Bucketize([0.0, 1.0, 2.5])(x))
case("Bucketize", [ints(5)], {"boundaries": (-2.0, 0.5, 3.0)},
     lambda x: P.Bucketize([-2.0, 0.5, 3.0])(x))
case("Bucketize", [rand(4, dtype=np.float64)], {"boundaries": (0.0,)},
     lambda x: P.Bucketize([0.0])(x))

cx = np.array([[3.0, 4.0, 0.0], [1.0, -2.0, 2.0]], np.float32)
case("ClipByNorm", [cx, np.array(2.0, np.float32)], {},
     lambda x, c: IP.ClipByNorm()(x, c), grad=True)
case("ClipByNorm", [cx, np.array(20.0, np.float32)], {},
     lambda x, c: IP.ClipByNorm()(x, c), grad=True)
case("ClipByNorm", [np.zeros((2, 2), np.float32), np.array(1.0, np.float32)], {},
     lambda x, c: IP.ClipByNorm()(x, c))
# MindSpore 2.10's CPU ClipByNorm mis-indexes the norms when `axis` is given
# (the row [6, 8, 0] clipped to norm 1 comes back unchanged): the reference is
# its documented formula, x * clip_norm / max(l2norm(x, axis), clip_norm).
CBN_REF = "x * clip_norm / max(sqrt(sum(x^2, axis, keepdims)), clip_norm) (MindSpore's CPU kernel is wrong with `axis`)"


def clip_ref(axis):
    def f(x, c):
        n = ops.sqrt(ops.sum(x * x, axis, keepdim=True))
        return x * c / ops.maximum(n, c)
    return f


cx3 = np.array([[3.0, 4.0, 0.0], [0.0, 0.0, 0.5], [6.0, 8.0, 0.0]], np.float32)
case("ClipByNorm", [cx3, np.array([1.0], np.float32)], {"axis": 1}, clip_ref(1), grad=True,
     reference=CBN_REF)
case("ClipByNorm", [cx, np.array([[4.0], [1.0]], np.float32)], {"axis": (0, 1)},
     clip_ref((0, 1)), reference=CBN_REF)
case("ClipByNorm", [cx, np.array(3.0, np.float32)], {"axis": 0}, clip_ref(0), grad=True,
     reference=CBN_REF)

c1 = rand(3, 2)
c2 = rand(4, 2)
case("Cdist", [c1, c2], {}, lambda a, b: ag.Cdist(2.0)(a, b), grad=True)
case("Cdist", [rand(2, 3, 4), rand(2, 2, 4)], {"p": 1.0},
     lambda a, b: ag.Cdist(1.0)(a, b), grad=True)
case("Cdist", [c1, c2], {"p": 3.0}, lambda a, b: ag.Cdist(3.0)(a, b), grad=True)
case("Cdist", [c1, np.concatenate([c1[:1], c2])], {"p": 0.0},
     lambda a, b: ag.Cdist(0.0)(a, b))

gx = rand(3, 4)
case("GatherNdExt", [gx, np.array([[0, 1], [2, 3]], np.int64)], {},
     lambda x, i: ag.GatherNdExt()(x, i), grad=True)
case("GatherNdExt", [gx, np.array([[2], [0]], np.int32)], {},
     lambda x, i: ag.GatherNdExt()(x, i))
case("GatherNdExt", [ints(2, 2, 2), np.array([[[1, 0]], [[0, 1]]], np.int64)], {},
     lambda x, i: ag.GatherNdExt()(x, i))


# Values unspecified: compared by dtype and shape.
case("EmptyLike", [x23], {}, lambda x: ag.EmptyLike()(x), compare="shape", grad=True)
case("EmptyLike", [ints(3)], {"dtype": ms.float64}, lambda x: ag.EmptyLike()(x, ms.float64),
     compare="shape")

# ---------------------------------------------------------------------------
# The composites defined before this oracle.

case("AddExt", [x23, rand(3)], {}, lambda x, y: ag.AddExt()(x, y, 1), grad=True)
case("AddExt", [x23, rand(2, 3)], {"alpha": 2.5}, lambda x, y: ag.AddExt()(x, y, 2.5), grad=True)
case("AddExt", [ints(2, 3), ints(3)], {"alpha": 3}, lambda x, y: ag.AddExt()(x, y, 3))
case("SubExt", [x23, rand(3)], {}, lambda x, y: ag.SubExt()(x, y, 1), grad=True)
case("SubExt", [rand(4, dtype=np.float64), rand(4, dtype=np.float64)], {"alpha": -0.5},
     lambda x, y: ag.SubExt()(x, y, -0.5), grad=True)
case("SubExt", [ints(4), ints(4)], {"alpha": 2}, lambda x, y: ag.SubExt()(x, y, 2))

v1 = np.array([0.5], np.float32)
case("Addcmul", [x23, rand(3), rand(2, 3), v1], {},
     lambda a, b, c, v: P.Addcmul()(a, b, c, v), grad=True)
case("Addcmul", [rand(3, dtype=np.float64), rand(3, dtype=np.float64),
                 rand(3, dtype=np.float64), np.array([2.0], np.float64)], {},
     lambda a, b, c, v: P.Addcmul()(a, b, c, v))
case("Addcdiv", [x23, rand(3), rand(2, 3, lo=0.5, hi=2), v1], {},
     lambda a, b, c, v: P.Addcdiv()(a, b, c, v), grad=True)

case("PowTensorScalar", [rand(2, 3, lo=0.1, hi=2), L(2.5)], {},
     lambda x, e: ag.PowTensorScalar()(x, e), grad=True)
case("PowTensorScalar", [ints(4, lo=-3, hi=4), L(2)], {},
     lambda x, e: ag.PowTensorScalar()(x, e))
case("PowTensorScalar", [x23, L(3)], {}, lambda x, e: ag.PowTensorScalar()(x, e), grad=True)
case("PowScalarTensor", [L(2.0), rand(2, 3)], {},
     lambda b, x: ag.PowScalarTensor()(b, x), grad=True)
case("PowScalarTensor", [L(3), ints(4, lo=0, hi=4)], {},
     lambda b, x: ag.PowScalarTensor()(b, x))

ic_a = np.array([1.0, 2.0, nan, 4.0, 1e-9], np.float32)
ic_b = np.array([1.0 + 1e-6, 2.1, nan, nan, 0.0], np.float32)
case("IsClose", [ic_a, ic_b], {}, lambda a, b: ag.IsClose(1e-5, 1e-8, False)(a, b))
case("IsClose", [ic_a, ic_b], {"equal_nan": True},
     lambda a, b: ag.IsClose(1e-5, 1e-8, True)(a, b))
case("IsClose", [ic_a, ic_b], {"rtol": 0.1, "atol": 0.01},
     lambda a, b: ag.IsClose(0.1, 0.01, False)(a, b))

case("Contiguous", [x23], {}, lambda x: ag.Contiguous()(x), grad=True)
case("Contiguous", [ints(2, 2)], {}, lambda x: ag.Contiguous()(x))

# ---------------------------------------------------------------------------
# Composites whose primitive has no CPU kernel in MindSpore 2.10: the
# reference is MindSpore's own computation of the function on the CPU.

ref = lambda what: f"{what} (MindSpore 2.10 has no CPU kernel for the primitive)"  # noqa: E731

case("Clone", [x23], {}, lambda x: x.copy(), grad=True, reference=ref("the input"))
case("Clone", [ints(3)], {}, lambda x: x.copy(), reference=ref("the input"))

la = rand(2, 3, lo=-3, hi=3)
lb = rand(3, lo=-3, hi=3)
f64 = lambda f: lambda *a: f(*[t.astype(ms.float64) for t in a]).astype(ms.float32)  # noqa: E731
case("LogAddExp", [la, lb], {}, f64(lambda a, b: ops.log(ops.exp(a) + ops.exp(b))), grad=True,
     reference=ref("log(exp(a) + exp(b)) in f64"))
case("LogAddExp", [np.array([100.0, -100.0], np.float64), np.array([99.0, -101.0], np.float64)],
     {}, lambda a, b: ops.maximum(a, b) + ops.log1p(ops.exp(-ops.abs(a - b))),
     reference=ref("max + log1p(exp(-|a - b|))"))
case("LogAddExp2", [la, lb], {},
     f64(lambda a, b: ops.log(ops.exp2(a) + ops.exp2(b)) / math.log(2.0)), grad=True,
     reference=ref("log2(2^a + 2^b) in f64"))

sw = rand(2, 6)
case("Swiglu", [sw], {}, lambda x: ops.silu(x[:, :3]) * x[:, 3:], grad=True,
     reference=ref("silu(a) * b, (a, b) the halves"))
case("Swiglu", [rand(4, 3)], {"dim": 0}, lambda x: ops.silu(x[:2]) * x[2:], grad=True,
     reference=ref("silu(a) * b, (a, b) the halves"))

l1a, l1b = rand(2, 3), rand(2, 3)
for red in ["mean", "sum", "none"]:
    def l1(a, b, r=red):
        d = ops.abs(a - b)
        return d.mean() if r == "mean" else d.sum() if r == "sum" else d
    case("L1LossExt", [l1a, l1b], {} if red == "mean" else {"reduction": red}, l1, grad=True,
         reference=ref("|input - target|, reduced"))

rem_a = np.array([[5.5, -5.5, 3.0], [-3.0, 0.25, 7.0]], np.float32)
rem_b = np.array([2.0, 2.0, -2.5], np.float32)
irem_a = np.array([[7, -7, 8], [-9, 0, 5]], np.int32)
irem_b = np.array([3, -3, 4], np.int32)
# (Gradients away from the jumps at multiples of the divisor.)
rem_g = np.array([[5.3, -5.7, 3.4], [-3.1, 0.35, 6.6]], np.float32)
case("RemainderTensorTensor", [rem_a, rem_b], {}, lambda a, b: P.FloorMod()(a, b),
     reference=ref("FloorMod"))
case("RemainderTensorTensor", [rem_g, rem_b], {}, lambda a, b: P.FloorMod()(a, b), grad=True,
     reference=ref("FloorMod"))
case("RemainderTensorTensor", [irem_a, irem_b], {}, lambda a, b: P.FloorMod()(a, b),
     reference=ref("FloorMod"))
case("RemainderTensorScalar", [rem_a, L(1.5)], {},
     lambda a, b: P.FloorMod()(a, Tensor(b, ms.float32)), reference=ref("FloorMod"))
case("RemainderTensorScalar", [rem_g, L(1.5)], {},
     lambda a, b: P.FloorMod()(a, Tensor(b, ms.float32)), grad=True, reference=ref("FloorMod"))
case("RemainderTensorScalar", [irem_a, L(-4)], {},
     lambda a, b: P.FloorMod()(a, Tensor(b, ms.int32)), reference=ref("FloorMod"))
case("RemainderScalarTensor", [L(5.5), rem_b], {},
     lambda a, b: P.FloorMod()(Tensor(a, ms.float32), b), grad=True, reference=ref("FloorMod"))
case("FmodTensor", [rem_a, rem_b], {}, lambda a, b: P.Mod()(a, b),
     reference=ref("Mod (the remainder of truncated division)"))
case("FmodTensor", [rem_g, rem_b], {}, lambda a, b: P.Mod()(a, b), grad=True,
     reference=ref("Mod (the remainder of truncated division)"))
case("FmodTensor", [irem_a, irem_b], {}, lambda a, b: P.Mod()(a, b),
     reference=ref("Mod (the remainder of truncated division)"))
case("FmodScalar", [rem_a, L(-1.5)], {}, lambda a, b: P.Mod()(a, Tensor(b, ms.float32)),
     reference=ref("Mod (the remainder of truncated division)"))
case("FmodScalar", [rem_g, L(-1.5)], {}, lambda a, b: P.Mod()(a, Tensor(b, ms.float32)),
     grad=True, reference=ref("Mod (the remainder of truncated division)"))
case("Frac", [rem_a], {}, lambda x: x - ops.trunc(x), reference=ref("x - trunc(x)"))
case("Frac", [rem_g], {}, lambda x: x - ops.trunc(x), grad=True, reference=ref("x - trunc(x)"))
case("Frac", [np.array([-2.75, 0.5, 3.0, -0.0], np.float64)], {},
     lambda x: x - ops.trunc(x), reference=ref("x - trunc(x)"))

for name, prim, lo, hi in [("AcosExt", P.ACos, -0.9, 0.9), ("AcoshExt", P.Acosh, 1.1, 3.0),
                           ("AsinExt", P.Asin, -0.9, 0.9), ("AsinhExt", P.Asinh, -2, 2),
                           ("AtanExt", P.Atan, -2, 2)]:
    case(name, [rand(2, 3, lo=lo, hi=hi)], {}, lambda x, p=prim: p()(x), grad=True,
         reference=ref(prim.__name__))
    case(name, [rand(3, lo=lo, hi=hi, dtype=np.float64)], {}, lambda x, p=prim: p()(x),
         reference=ref(prim.__name__))
    # Integers and bools give f32.
    case(name, [ints(4, lo=int(math.ceil(lo)), hi=int(math.floor(hi)) + 1)], {},
         lambda x, p=prim: p()(x.astype(ms.float32)), reference=ref(prim.__name__ + " on f32"))
case("AsinExt", [bools(3)], {}, lambda x: P.Asin()(x.astype(ms.float32)),
     reference=ref("Asin on f32"))
case("Atan2Ext", [rand(2, 3), rand(3)], {}, lambda a, b: P.Atan2()(a, ops.broadcast_to(b, (2, 3))),
     grad=True, reference=ref("Atan2"))
case("Atan2Ext", [ints(4), ints(4)], {},
     lambda a, b: P.Atan2()(a.astype(ms.float32), b.astype(ms.float32)),
     reference=ref("Atan2 on f32"))

ex = rand(2, 3, lo=-3, hi=3)
case("EluExt", [ex], {}, lambda x: ops.elu(x), grad=True, reference=ref("Elu"))
case("EluExt", [ex], {"alpha": 0.5}, lambda x: ops.select(x > 0, x, 0.5 * ops.expm1(x)),
     grad=True, reference=ref("x > 0 ? x : alpha * expm1(x)"))
case("EluExt", [rand(4, lo=-3, hi=3, dtype=np.float64)], {"alpha": 2.0},
     lambda x: ops.select(x > 0, x, 2.0 * ops.expm1(x)),
     reference=ref("x > 0 ? x : alpha * expm1(x)"))
case("SeLUExt", [ex], {}, lambda x: P.SeLU()(x), grad=True, reference=ref("SeLU"))
case("MishExt", [ex], {}, lambda x: P.Mish()(x), grad=True, reference=ref("Mish"))
case("GeluExt", [ex], {}, lambda x: 0.5 * x * (1 + ops.erf(x / math.sqrt(2.0))), grad=True,
     reference=ref("0.5 * x * (1 + erf(x / sqrt(2)))"))
case("GeluExt", [ex], {"approximate": "tanh"}, lambda x: ag.GeLU()(x), grad=True,
     reference=ref("GeLU (the tanh approximation)"))
case("GeluExt", [rand(3, lo=-3, hi=3, dtype=np.float64)], {"approximate": "none"},
     lambda x: 0.5 * x * (1 + ops.erf(x / math.sqrt(2.0))),
     reference=ref("0.5 * x * (1 + erf(x / sqrt(2)))"))

case("EqualExt", [np.array([1.0, 2.0, nan], np.float32), np.array([1.0, 3.0, nan], np.float32)],
     {}, lambda a, b: P.Equal()(a, b), reference=ref("Equal"))
case("EqualExt", [ints(2, 3, lo=0, hi=3), L(1)], {},
     lambda a, b: P.Equal()(a, Tensor(b, ms.int32)), reference=ref("Equal"))
sel_c = bools(2, 3)
case("SelectV2", [sel_c, x23, rand(2, 3)], {}, lambda c, a, b: P.Select()(c, a, b), grad=True,
     reference=ref("Select"))
case("SelectV2", [sel_c, ints(2, 3), ints(2, 3)], {}, lambda c, a, b: P.Select()(c, a, b),
     reference=ref("Select"))
case("FloorDivScalar", [num, L(2.5)], {}, lambda a, b: P.FloorDiv()(a, Tensor(b, ms.float32)),
     reference=ref("FloorDiv"))
case("FloorDivScalar", [x23, L(0.3)], {}, lambda a, b: P.FloorDiv()(a, Tensor(b, ms.float32)),
     grad=True, reference=ref("FloorDiv"))
case("FloorDivScalar", [inum, L(-3)], {}, lambda a, b: P.FloorDiv()(a, Tensor(b, ms.int32)),
     reference=ref("FloorDiv"))

bi = ints(2, 3, lo=-20, hi=20)
for name, prim in [("BitwiseAndScalar", P.BitwiseAnd), ("BitwiseOrScalar", P.BitwiseOr),
                   ("BitwiseXorScalar", P.BitwiseXor)]:
    case(name, [bi, L(6)], {}, lambda a, b, p=prim: p()(a, Tensor(b, ms.int32)),
         reference=ref(prim.__name__))
    case(name, [ints(3, lo=0, hi=100, dtype=np.int64), L(-3)], {},
         lambda a, b, p=prim: p()(a, Tensor(b, ms.int64)), reference=ref(prim.__name__))
for name, prim in [("BitwiseOrTensor", P.BitwiseOr), ("BitwiseXorTensor", P.BitwiseXor)]:
    case(name, [bi, ints(2, 3, lo=-20, hi=20)], {}, lambda a, b, p=prim: p()(a, b),
         reference=ref(prim.__name__))
    case(name, [bools(4), bools(4)], {}, lambda a, b, p=prim: p()(a, b),
         reference=ref(prim.__name__))

case("LerpScalar", [x23, rand(2, 3)], {"weight": 0.3}, lambda a, b: P.Lerp()(a, b, 0.3),
     grad=True, reference=ref("Lerp"))
case("LerpScalar", [rand(3, dtype=np.float64), rand(3, dtype=np.float64)], {"weight": 1.5},
     lambda a, b: a + 1.5 * (b - a), reference=ref("input + weight * (end - input)"))

tm = rand(3, 4)
case("TrilExt", [tm], {}, lambda x: P.Tril()(x), grad=True, reference=ref("Tril"))
case("TrilExt", [rand(2, 3, 3)], {"diagonal": -1}, lambda x: P.Tril(-1)(x), grad=True,
     reference=ref("Tril"))
case("TrilExt", [ints(3, 3)], {"diagonal": 1}, lambda x: P.Tril(1)(x), reference=ref("Tril"))
case("TraceExt", [tm], {}, lambda x: P.Trace()(x), grad=True, reference=ref("Trace"))
case("TraceExt", [ints(3, 2)], {}, lambda x: P.Trace()(x).astype(ms.int64),
     reference=ref("Trace, in i64"))

inf = float("inf")
case("IsNegInf", [np.array([-inf, inf, nan, -1.0, 0.0], np.float32)], {},
     lambda x: ops.logical_and(ops.isinf(x), x < 0), reference=ref("isinf(x) and x < 0"))
case("IsNegInf", [ints(3)], {}, lambda x: ops.zeros((3,), ms.bool_),
     reference=ref("never, for integers"))

case("StackExt", [Tup(x23, rand(2, 3))], {}, lambda t: P.Stack(0)(t), grad=True,
     reference=ref("Stack"))
case("StackExt", [Tup(ints(3), ints(3), ints(3))], {"dim": -1}, lambda t: P.Stack(-1)(t),
     reference=ref("Stack"))
case("Repeat", [x23], {"repeats": (2, 1)}, lambda x: P.Tile()(x, (2, 1)), grad=True,
     reference=ref("Tile"))
case("Repeat", [ints(3)], {"repeats": (2, 2)}, lambda x: P.Tile()(x, (2, 2)),
     reference=ref("Tile"))
case("MaskedFillScalar", [x23, sel_c, L(-1.5)], {},
     lambda x, m, v: P.MaskedFill()(x, m, Tensor(v, ms.float32)), grad=True,
     reference=ref("MaskedFill"))
case("MaskedFillScalar", [ints(2, 3), bools(3), L(7)], {},
     lambda x, m, v: P.MaskedFill()(x, m, Tensor(v, ms.int32)), reference=ref("MaskedFill"))

case("AddcmulExt", [x23, rand(3), rand(2, 3)], {},
     lambda a, b, c: P.Addcmul()(a, b, c, Tensor([1.0], ms.float32)), grad=True,
     reference=ref("Addcmul"))
case("AddcmulExt", [x23, rand(3), rand(2, 3)], {"value": 0.5},
     lambda a, b, c: P.Addcmul()(a, b, c, Tensor([0.5], ms.float32)), grad=True,
     reference=ref("Addcmul"))
case("AddcdivExt", [x23, rand(3), rand(2, 3, lo=0.5, hi=2)], {"value": -2},
     lambda a, b, c: P.Addcdiv()(a, b, c, Tensor([-2.0], ms.float32)), grad=True,
     reference=ref("Addcdiv"))

case("FullLike", [x23], {"fill_value": 2.5}, lambda x: ops.fill(ms.float32, (2, 3), 2.5),
     grad=True, reference=ref("Fill"))
case("FullLike", [ints(4)], {"fill_value": 7}, lambda x: ops.fill(ms.int32, (4,), 7),
     reference=ref("Fill"))
case("FullLike", [ints(2)], {"fill_value": 2.5, "dtype": ms.float64},
     lambda x: ops.fill(ms.float64, (2,), 2.5), reference=ref("Fill"))
case("NewFull", [x23], {"size": (3, 1), "fill_value": -1.5},
     lambda x: ops.fill(ms.float32, (3, 1), -1.5), grad=True, reference=ref("Fill"))
case("NewFull", [ints(2, dtype=np.int64)], {"size": 2, "fill_value": 4},
     lambda x: ops.fill(ms.int64, (2,), 4), reference=ref("Fill"))
case("NewFull", [x23], {"size": (2,), "fill_value": 3, "dtype": ms.int32},
     lambda x: ops.fill(ms.int32, (2,), 3), reference=ref("Fill"))
case("FillScalar", [], {"size": (2, 2), "fill_value": 1.5},
     lambda: ops.fill(ms.float32, (2, 2), 1.5), reference=ref("Fill (a float fills f32)"))
case("FillScalar", [], {"size": 3, "fill_value": 2},
     lambda: ops.fill(ms.int64, (3,), 2), reference=ref("Fill (an int fills i64)"))
case("FillScalar", [], {"size": (1, 2), "fill_value": 2, "dtype": ms.float16},
     lambda: ops.fill(ms.float16, (1, 2), 2), reference=ref("Fill"))


nx = np.array([[1.0, nan, 2.0], [nan, nan, -3.5]], np.float32)
case("Nansum", [nx], {}, lambda x: ops.sum(ops.select(ops.isnan(x), ops.zeros_like(x), x)),
     grad=False, reference=ref("sum with NaNs as zeros"))
case("Nansum", [nx], {"dim": 1, "keepdim": True},
     lambda x: ops.sum(ops.select(ops.isnan(x), ops.zeros_like(x), x), 1, True),
     reference=ref("sum with NaNs as zeros"))
case("Nansum", [x23], {"dim": (0, 1)},
     lambda x: ops.sum(x, (0, 1)), grad=True, reference=ref("sum with NaNs as zeros"))
case("Nansum", [ints(2, 3)], {"dim": 0},
     lambda x: ops.sum(x.astype(ms.int64), 0), reference=ref("sum, integers in i64"))
case("Nansum", [nx], {"dim": 0, "dtype": ms.float64},
     lambda x: ops.sum(ops.select(ops.isnan(x), ops.zeros_like(x), x).astype(ms.float64), 0),
     reference=ref("sum with NaNs as zeros, in dtype"))

va, vb = rand(5), rand(5)
case("Vdot", [va, vb], {}, lambda a, b: ops.tensor_dot(a, b, 1), grad=True,
     reference=ref("the dot product"))
case("Vdot", [ints(4), ints(4)], {}, lambda a, b: (a * b).sum().astype(ms.int32),
     reference=ref("the dot product, in the inputs' dtype"))

kl_in = rand(2, 3)
kl_t = np.array([[0.0, 0.3, 0.7], [0.5, 0.0, 0.5]], np.float32)
kl_tg = rand(2, 3, lo=0.1, hi=1.0)  # (target * log(target) has no derivative at 0)
for red in ["mean", "sum", "none"]:
    case("KLDiv", [kl_in, kl_t], {} if red == "mean" else {"reduction": red},
         lambda a, b, r=red: P.KLDivLoss(r)(a, b), reference=ref("KLDivLoss"))
    case("KLDiv", [kl_in, kl_tg], {} if red == "mean" else {"reduction": red},
         lambda a, b, r=red: P.KLDivLoss(r)(a, b), grad=True, reference=ref("KLDivLoss"))
case("KLDiv", [kl_in, rand(3, lo=-2, hi=0)], {"reduction": "sum", "log_target": True},
     lambda a, b: (ops.exp(b) * (b - a)).sum(), grad=True,
     reference=ref("sum(exp(target) * (target - input))"))
# MindSpore's own example.
case("KLDiv", [np.array([[0.5, 0.5], [0.4, 0.6]], np.float32),
               np.array([[0.0, 1.0], [1.0, 0.0]], np.float32)], {},
     lambda a, b: Tensor(np.array(-0.225, np.float32)), reference="the docstring's example")


def add_rms_ref(eps, nd):
    def f(a, b, g):
        x = a + b
        axes = tuple(range(x.ndim - nd, x.ndim))
        ms2 = ops.mean(x * x, axes, keep_dims=True)
        rstd = 1.0 / ops.sqrt(ms2 + eps)
        return (x * rstd * g, rstd, x)
    return f


case("AddRmsNorm", [x23, rand(2, 3), rand(3)], {}, add_rms_ref(1e-6, 1), grad=True,
     reference=ref("x = x1 + x2, (x / sqrt(mean(x^2) + eps) * gamma, 1 / sqrt(...), x)"))
case("AddRmsNorm", [rand(2, 2, 3), rand(2, 2, 3), rand(2, 3)], {"epsilon": 0.1},
     add_rms_ref(0.1, 2), grad=True,
     reference=ref("x = x1 + x2, (x / sqrt(mean(x^2) + eps) * gamma, 1 / sqrt(...), x)"))


def kth_ref(k, dim, keepdim):
    def f(x):
        v, i = P.Sort(axis=dim)(x)
        v = ops.gather(v, Tensor([k - 1]), dim if dim >= 0 else x.ndim + dim)
        i = ops.gather(i, Tensor([k - 1]), dim if dim >= 0 else x.ndim + dim).astype(ms.int64)
        if not keepdim:
            v, i = v.squeeze(dim), i.squeeze(dim)
        return (v, i)
    return f


kx = np.array([[3.0, -1.0, 2.5, 0.5], [1.5, 4.0, -2.0, 0.0], [9.0, 8.0, 7.0, 6.0]], np.float32)
case("Kthvalue", [kx], {"k": 2}, kth_ref(2, -1, False), grad=True,
     reference=ref("Sort, the k-th"))
case("Kthvalue", [kx], {"k": 3, "dim": 0, "keepdim": True}, kth_ref(3, 0, True), grad=True,
     reference=ref("Sort, the k-th"))
case("Kthvalue", [np.array([[5, 1, 4], [2, 9, 3]], np.int32)], {"k": 1, "dim": 1},
     kth_ref(1, 1, False), reference=ref("Sort, the k-th"))

def save():
    path = os.path.join(HERE, "composite.json")
    with open(path, "w") as f:
        json.dump({"mindspore": ms.__version__, "cases": cases}, f, indent=None,
                  separators=(",", ":"))
        f.write("\n")
    print(f"{path}: {len(cases)} cases")


save()
