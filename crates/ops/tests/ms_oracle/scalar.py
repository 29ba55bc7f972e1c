"""MindSpore 2.10 oracle for the scalar family (scalar.rs, scalar_seq.rs).

Run: /work/venvs/ms/bin/python crates/ops/tests/ms_oracle/scalar.py

MindSpore's scalar and sequence primitives only run their kernels in graph
mode: in PyNative mode `ScalarFloorDiv()(7, -2)` is Python's `7 // -2`
evaluated by the primitive's `__call__`, not MindSpore's kernel. So these cases
are computed with `ms.jit` on `mutable` inputs (so nothing is constant-folded)
on the CPU backend. A numeric result is returned through `ScalarToTensor`
(which keeps the scalar's own dtype in graph mode), so the case records the
result's dtype as MindSpore infers it. Float inputs are f32 unless cast to f64
in the graph with `ScalarCast`. The tensor-with-number comparisons
(LessScalar, ...) and ListToTensor/TupleToArray run in PyNative mode.
Cases MindSpore rejects are printed and left out.
"""
import numpy as np
import mindspore as ms
from mindspore import Tensor, jit, mutable, ops
from mindspore.ops.operations import _scalar_ops as S
from mindspore.ops.operations import _sequence_ops as Q

from common import Oracle

P = ops.auto_generate
o = Oracle("scalar")
to_tensor = ops.ScalarToTensor()
cast = P.ScalarCast()


def f64(x):
    """A float input that the graph casts to float64 (the case sees an f64)."""
    return ("f64", x)


def graph_inputs(args):
    """(MindSpore arguments, registry inputs) for Python-level arguments."""
    ms_args, inputs = [], []
    for a in args:
        if isinstance(a, tuple) and len(a) == 2 and a[0] == "f64":
            ms_args.append(mutable(a[1]))
            inputs.append(np.array(a[1], np.float64))
        elif isinstance(a, tuple):
            ms_args.append(mutable(a))
            inputs.append(a)
        elif isinstance(a, Tensor):
            ms_args.append(a)
            inputs.append(a)
        else:
            ms_args.append(mutable(a))
            inputs.append(a)
    return ms_args, inputs


def case(op, prim, args, attrs=None, scalar_out=True, note=""):
    """Records `op(*args, **attrs)` against `prim` run in a graph."""
    f64_at = [i for i, a in enumerate(args) if isinstance(a, tuple) and len(a) == 2 and a[0] == "f64"]
    ms_args, inputs = graph_inputs(args)

    @jit
    def f(*a):
        a = list(a)
        for i in f64_at:
            a[i] = cast(a[i], ms.float64)
        r = prim(*a)
        if scalar_out:
            return to_tensor(r)
        return r

    try:
        expected = f(*ms_args)
    except (RuntimeError, ValueError, TypeError) as e:
        print(f"left out: {op}{tuple(args)}: {str(e).splitlines()[0][:150]}")
        return
    o.case(op, inputs, attrs or {}, expected, note=note)


# Binary arithmetic and comparisons -------------------------------------------
pairs = [(7, -2), (-7, 2), (7.5, 2), (2, 0.5), (True, True), (True, 2.5), (True, 3), (-7.5, 2.0),
         (f64(2.5), 2), (f64(-7.25), f64(0.5)), (3, 3), (0, 5)]
binary = {
    "ScalarAdd": S.ScalarAdd(), "ScalarSub": S.ScalarSub(), "ScalarMul": S.ScalarMul(),
    "ScalarDiv": S.ScalarDiv(), "ScalarFloorDiv": S.ScalarFloorDiv(), "ScalarMod": S.ScalarMod(),
    "ScalarPow": S.ScalarPow(), "ScalarMax": S.ScalarMax(), "ScalarMin": S.ScalarMin(),
    "ScalarEq": S.ScalarEq(), "ScalarLt": S.ScalarLt(), "ScalarGt": S.ScalarGt(),
    "ScalarLe": S.ScalarLe(), "ScalarGe": S.ScalarGe(),
}
for name, prim in binary.items():
    for x, y in pairs:
        case(name, prim, [x, y])
for x, y in [(2, 10), (-2, 3), (2.0, -1), (-1, -3), (1, -5), (0, 0)]:
    case("ScalarPow", S.ScalarPow(), [x, y])
for x, y in [(1, 1.0), (0.1, 0.10000001), (2, 2.5)]:
    case("ScalarEq", S.ScalarEq(), [x, y])
for name, prim in [("bit_and", S.bit_and()), ("bit_or", S.bit_or())]:
    for x, y in [(6, 3), (-6, 3), (0, 7)]:
        case(name, prim, [x, y])

# Unary ------------------------------------------------------------------------
for x in [3, 2.5, -4]:
    case("ScalarUadd", S.ScalarUadd(), [x])
    case("ScalarUsub", S.ScalarUsub(), [x])
for x in [3, 2.5, f64(2.5), 1]:
    case("ScalarLog", S.ScalarLog(), [x])
for x in [0, 2.5, 0.0, -1, True]:
    case("ScalarBool", S.ScalarBool(), [x])
for x in [True, False]:
    case("BoolNot", P.BoolNot(), [x])
    case("bool_not", S.bool_not(), [x])


# Conversions --------------------------------------------------------------------
def cast_to(dtype):
    def f(x):
        return cast(x, dtype)
    return f


for x, d in [(3.7, ms.int64), (-3.7, ms.int64), (3, ms.float32), (3, ms.bool_), (0, ms.bool_),
             (2.5, ms.float64), (True, ms.float32), (f64(-2.5), ms.float32)]:
    case("ScalarCast", cast_to(d), [x], {"input_y": d})


def scalar_to_tensor(dtype):
    def f(x):
        return ops.ScalarToTensor()(x, dtype)
    return f


for x in [3, 3.5, True, f64(-0.5)]:
    case("ScalarToTensor", ops.ScalarToTensor(), [x], scalar_out=False)
for x, d in [(3.5, ms.int32), (3, ms.float64), (2, ms.bool_), (-2.7, ms.int8)]:
    case("ScalarToTensor", scalar_to_tensor(d), [x], {"dtype": d}, scalar_out=False)
for t in [Tensor(np.array(3.5, np.float32)), Tensor(np.array([2], np.int32)),
          Tensor(np.array(True)), Tensor(np.array(-1.25, np.float64))]:
    case("TensorToScalar", Q.TensorToScalar(), [t])

# Sequences ------------------------------------------------------------------------
# sequence_len and shape_mul fold to constants (a tuple's length is fixed), and
# ScalarToTensor of a constant int defaults to float32: record the Python int.
case("sequence_len", Q.sequence_len(), [(1, 2, 3)], scalar_out=False)
case("sequence_len", Q.sequence_len(), [()], scalar_out=False)
for args in [(5,), (1, 10, 3), (10, 1, -3), (2, 2), (-3, 3, 2), (5, 0)]:
    case("make_range", Q.make_range(), list(args), scalar_out=False)
case("SequenceAdd", Q.SequenceAdd(), [(1, 2), (3,)], scalar_out=False)
case("SequenceAdd", Q.SequenceAdd(), [(1.5,), (2, 3)], scalar_out=False)
for s, e, st in [(1, 5, 2), (-1, -6, -2), (0, 100, 1), (-100, 2, 1), (4, 0, -1), (3, 1, 1)]:
    case("SequenceSlice", Q.SequenceSlice(), [(1, 2, 3, 4, 5), s, e, st], scalar_out=False)
for k in [3, 0, -1, 1]:
    case("SequenceMul", Q.SequenceMul(), [(1, 2), k], scalar_out=False)
case("SequenceCount", Q.SequenceCount(), [(1, 2, 1), 1])
case("SequenceCount", Q.SequenceCount(), [(1.5, 2.0), 2])
case("InSequence", Q.InSequence(), [2, (1, 2, 1)])
case("InSequence", Q.InSequence(), [7, (1, 2, 1)])
for seq in [(1, 5, 2), (1.5, 5.0, 2.0), (3, 2.5), (-4,)]:
    case("SequenceMax", Q.SequenceMax(), [seq])
    case("SequenceMin", Q.SequenceMin(), [seq])
for seq in [(1, 2, 3), (1.5, 2.25), (1, 2.5)]:
    case("SequenceAddN", Q.SequenceAddN(), [seq])
for seq in [(2, 3, 4), (), (5, 0)]:
    case("shape_mul", Q.shape_mul(), [seq], scalar_out=False)
case("SequenceZerosLike", Q.SequenceZerosLike(), [(1, 2, 3)], scalar_out=False)
cmps = {"tuple_equal": Q.tuple_equal(), "tuple_lt": Q.tuple_lt(), "tuple_le": Q.tuple_le(),
        "tuple_greater_than": Q.tuple_greater_than(), "tuple_greater_equal": Q.tuple_greater_equal()}
for name, prim in cmps.items():
    for x, y in [((1, 2), (1, 2)), ((1, 2), (1, 3)), ((1, 2), (1, 2, 0)), ((2,), (1, 9)), ((1.5, 2), (1.5, 2.0))]:
        case(name, prim, [x, y])
case("SequenceConcat", P.SequenceConcat(0),
     [(Tensor(np.arange(6, dtype=np.float32).reshape(2, 3)), Tensor(np.ones((1, 3), np.float32)))],
     scalar_out=False)


# Left out: SequenceConcat along axis -1 of int32 tensors (MindSpore 2.10's
# graph kernel returns garbage: [0, 1, 2, 0, 0, 1065353216, 3, 4]).


def tuple_to_tensor(dtype):
    def f(x):
        return P.TupleToTensor()(x, dtype)
    return f


for seq in [(1, 2, 3), (1.5, 2.0), (1, 2.5)]:
    case("TupleToTensor", P.TupleToTensor(), [seq], scalar_out=False)
case("TupleToTensor", tuple_to_tensor(ms.float32), [(1, 2, 3)], {"dtype": ms.float32}, scalar_out=False)
case("TupleToTensor", tuple_to_tensor(ms.int32), [(1.7, -2.2)], {"dtype": ms.int32}, scalar_out=False)
case("TensorToTuple", Q.TensorToTuple(), [Tensor(np.array([1.5, -2.0], np.float32))], scalar_out=False)
case("TensorToTuple", Q.TensorToTuple(), [Tensor(np.array([4, 5, 6], np.int64))], scalar_out=False)

# PyNative: ListToTensor, TupleToArray, tensor-with-number comparisons ----------------------
o.case("ListToTensor", [(1, 2)], {"dtype": ms.int32}, Q.ListToTensor()([1, 2], ms.int32))
o.case("ListToTensor", [(1.5, 2.5)], {"dtype": ms.float64}, Q.ListToTensor()([1.5, 2.5], ms.float64))
o.case("TupleToArray", [(1, 2, 3)], {}, ops.TupleToArray()((1, 2, 3)))
o.case("TupleToArray", [(1.5, 2.5)], {}, ops.TupleToArray()((1.5, 2.5)))
xs = np.array([[0.5, 1.0, 1.5], [2.0, -1.0, 1.0]], np.float32)
xi = np.array([1, 2, 3], np.int32)
# LessScalar and GreaterEqualScalar have no CPU kernel: ops.less and
# ops.greater_equal with a number stand in for them.
for name, prim in [("LessScalar", ops.less), ("EqScalar", P.EqScalar()),
                   ("GreaterEqualScalar", ops.greater_equal)]:
    for x, other in [(xs, 1.0), (xi, 2), (xi, 1.5), (xs.astype(np.float64), -1)]:
        try:
            expected = prim(Tensor(x), other)
            expected.asnumpy()
        except (RuntimeError, ValueError, TypeError) as e:
            print(f"left out: {name}: {str(e).splitlines()[0][:150]}")
            continue
        o.case(name, [x, other], {}, expected)

o.save()
