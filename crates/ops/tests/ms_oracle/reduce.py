"""MindSpore 2.10 oracle for the reduction families (defs/reduce/*.rs).

Run: /work/venvs/ms/bin/python crates/ops/tests/ms_oracle/reduce.py

MindSpore's CPU backend has no kernel for several "Ext" primitives (ArgMaxExt,
ArgMinExt, LogSumExp, Var, Std, VarMean, StdMean, Norm, LinalgVectorNorm,
CountNonZero, TopkExt, SortExt, ArgSort: "The kernel ... unregistered"). For
those, the cases are computed by MindSpore's own CPU implementation of the
same public API (ops.argmax, ops.logsumexp, ops.var, ops.vector_norm, ...),
with the index dtype converted to the primitive's documented int64 where the
functional returns int32. Cases MindSpore's kernels leave unspecified are left
out: TopK/Sort of NaN (std::sort with NaN), TopK(sorted=False) order.
"""
import numpy as np
import mindspore as ms
from mindspore import Tensor, ops

from common import Oracle

P = ops.auto_generate
o = Oracle("reduce")
nan, inf = float("nan"), float("inf")


def T(a, dt=np.float32):
    return Tensor(np.asarray(a, dtype=dt))


def arr(a, dt=np.float32):
    return np.asarray(a, dtype=dt)


def i64(t):
    return t.astype(ms.int64)


def run(op, x, attrs, fn, **kw):
    """Records `op(x, **attrs)` against MindSpore's `fn(Tensor(x))`."""
    o.case(op, [x], attrs, fn(Tensor(x)), **kw)


def try_run(op, x, attrs, fn, **kw):
    """`run`, leaving the case out (with a message) where MindSpore's
    functional stand-in fails."""
    try:
        expected = fn(Tensor(x))
        if isinstance(expected, Tensor):
            expected.asnumpy()
    except (RuntimeError, ValueError, TypeError) as e:
        print(f"left out: {op} {attrs}: {str(e).splitlines()[0]}")
        return
    o.case(op, [x], attrs, expected, **kw)


x23 = o.rand(2, 3, 4, lo=-2, hi=2)
x34 = o.rand(3, 4, lo=-2, hi=2)
pos = o.rand(2, 3, 4, lo=0.5, hi=1.5)

# ReduceProd ---------------------------------------------------------------
run("ReduceProd", pos, {"axis": 1}, lambda x: ops.ReduceProd()(x, 1))
run("ReduceProd", pos.astype(np.float64), {"axis": (0, -1), "keep_dims": True},
    lambda x: ops.ReduceProd(True)(x, (0, -1)))
run("ReduceProd", x34, {}, lambda x: ops.ReduceProd()(x))
run("ReduceProd", arr([100000, 100000, 3], np.int32), {}, lambda x: ops.ReduceProd()(x),
    note="int32 overflow wraps")
run("ReduceProd", arr([[100, 3], [2, 5]], np.int8), {"axis": 0}, lambda x: ops.ReduceProd()(x, 0))
run("ReduceProd", arr([[True, False], [True, True]], np.bool_), {"axis": 1},
    lambda x: ops.ReduceProd()(x, 1))
# Left out: products over an empty axis (MindSpore 2.10 returns [1, 0] for
# shape (2, 0) over axis 1: only the first result is initialised).
run("ReduceProd", arr(3.5), {}, lambda x: ops.ReduceProd()(x))

# ReduceAll, ReduceAny -----------------------------------------------------
b = arr([[True, False, True], [True, True, True]], np.bool_)
run("ReduceAll", b, {"axis": 1}, lambda x: ops.ReduceAll()(x, 1))
run("ReduceAll", b, {}, lambda x: ops.ReduceAll()(x))
run("ReduceAll", b, {"axis": (0, 1), "keep_dims": True}, lambda x: ops.ReduceAll(True)(x, (0, 1)))
run("ReduceAll", arr([[1, 0], [2, 3]], np.int32), {"axis": -1}, lambda x: ops.ReduceAll()(x, -1))
run("ReduceAll", np.zeros((2, 0), np.bool_), {"axis": 1}, lambda x: ops.ReduceAll()(x, 1))
run("ReduceAny", b, {"axis": 0}, lambda x: ops.ReduceAny()(x, 0))
run("ReduceAny", arr([[False, False], [False, True]], np.bool_), {"axis": 1, "keep_dims": True},
    lambda x: ops.ReduceAny(True)(x, 1))
run("ReduceAny", arr([0.0, 0.5], np.float64), {}, lambda x: ops.ReduceAny()(x))
# Left out: ReduceAny over an axis of a non-bool input (MindSpore 2.10 gives
# [False, False] for [[0, 0], [0, 3]] over axis 1, and for int32 too, though
# the same data as bool gives [False, True]), and over an empty axis (garbage
# after the first result, as ReduceProd).

# Max, Min -----------------------------------------------------------------
for a in [[1, 5, 3], [nan, 1, 2], [1, nan], [2, nan, 1], [nan, nan]]:
    run("Max", arr(a), {}, lambda x: P.Max()(x))
    run("Min", arr(a), {}, lambda x: P.Min()(x))
run("Max", x23, {}, lambda x: P.Max()(x))
run("Min", x34.astype(np.float64), {}, lambda x: P.Min()(x))
run("Max", arr([[3, -1], [7, 2]], np.int32), {}, lambda x: P.Max()(x))
run("Min", arr(-4, np.int64), {}, lambda x: P.Min()(x))

# SumExt, MeanExt, ProdExt -------------------------------------------------
xi = arr([[1, 2, 3], [4, 5, 6]], np.int32)
run("SumExt", xi, {"dim": 1}, lambda x: P.SumExt()(x, 1))
run("SumExt", b, {"dim": 0}, lambda x: P.SumExt()(x, 0))
run("SumExt", arr([1.5, 2.5], np.float16), {}, lambda x: P.SumExt()(x))
run("SumExt", arr([1.5, 2.5, -0.7]), {"dtype": ms.int32}, lambda x: P.SumExt()(x, None, False, ms.int32),
    note="the input is cast first")
run("SumExt", x23, {"dim": (0, 2), "keepdim": True}, lambda x: P.SumExt()(x, (0, 2), True))
run("SumExt", arr([1, 2, 250], np.uint8), {}, lambda x: P.SumExt()(x))
run("SumExt", xi.astype(np.int8), {"dim": -1, "dtype": ms.float32},
    lambda x: P.SumExt()(x, -1, False, ms.float32))
run("MeanExt", x23, {"dim": 1}, lambda x: P.MeanExt()(x, 1))
run("MeanExt", xi, {"dim": 1}, lambda x: P.MeanExt()(x, 1), note="integer mean truncates")
run("MeanExt", xi, {"dtype": ms.float32}, lambda x: P.MeanExt()(x, None, False, ms.float32))
run("MeanExt", x34.astype(np.float64), {"dim": (0, 1), "keepdim": True},
    lambda x: P.MeanExt()(x, (0, 1), True))
run("ProdExt", xi, {"dim": 1}, lambda x: P.ProdExt()(x, 1))
run("ProdExt", b, {}, lambda x: P.ProdExt()(x))
run("ProdExt", pos, {"dim": -1, "keepdim": True}, lambda x: P.ProdExt()(x, -1, True))
run("ProdExt", pos.astype(np.float64), {"dim": 0, "dtype": ms.float32},
    lambda x: P.ProdExt()(x, 0, False, ms.float32))

# CountNonZero (ops.count_nonzero: int32 there, int64 for the primitive) ----
cz = arr([[0, 1, 2], [0, 0, -3]], np.float32)
run("CountNonZero", cz, {}, lambda x: i64(ops.count_nonzero(x)), note="ops.count_nonzero")
run("CountNonZero", cz, {"dim": 1}, lambda x: i64(ops.count_nonzero(x, 1)), note="ops.count_nonzero")
run("CountNonZero", cz.astype(np.int32), {"dim": (0, 1)},
    lambda x: i64(ops.count_nonzero(x, (0, 1))), note="ops.count_nonzero")

# SquareSumAll ---------------------------------------------------------------
y = o.rand(3, 4, lo=-2, hi=2)
o.case("SquareSumAll", [x34, y], {}, ops.SquareSumAll()(Tensor(x34), Tensor(y)))
o.case("SquareSumAll", [x34.astype(np.float16), y.astype(np.float16)], {},
       ops.SquareSumAll()(T(x34, np.float16), T(y, np.float16)), rtol=2e-3, atol=1e-3)

# LogSumExp (ops.logsumexp) ------------------------------------------------
run("LogSumExp", x23, {"dim": 1}, lambda x: ops.logsumexp(x, 1), note="ops.logsumexp")
run("LogSumExp", x23.astype(np.float64) * 30, {"dim": (0, 2), "keepdim": True},
    lambda x: ops.logsumexp(x, (0, 2), True), note="ops.logsumexp")
run("LogSumExp", arr([[-inf, 0.5], [1.0, -inf]]), {"dim": -1},
    lambda x: ops.logsumexp(x, -1), note="ops.logsumexp")
# Left out: a row of only -inf (ops.logsumexp computes -inf - -inf = NaN; the
# primitive, like torch.logsumexp, gives -inf).

# ReduceStd ------------------------------------------------------------------
run("ReduceStd", x34, {"axis": 1}, lambda x: ops.ReduceStd(1)(x))
run("ReduceStd", x23, {"axis": (0, 2), "unbiased": False, "keep_dims": True},
    lambda x: ops.ReduceStd((0, 2), False, True)(x))
run("ReduceStd", x34, {}, lambda x: ops.ReduceStd()(x))
run("ReduceStd", arr([[1, 2]]), {"axis": 0}, lambda x: ops.ReduceStd(0)(x), note="n = 1: NaN")

# Var, Std, VarMean, StdMean (ops.var, ops.std, ops.var_mean, ops.std_mean) --
run("Var", x34, {"dim": 1}, lambda x: ops.var(x, 1, 1), note="ops.var")
run("Var", x23.astype(np.float64), {"dim": (0, 2), "correction": 0, "keepdim": True},
    lambda x: ops.var(x, (0, 2), 0, True), note="ops.var")
run("Std", x34, {}, lambda x: ops.std(x, None, 1), note="ops.std")
run("Std", x23, {"dim": -1, "correction": 2}, lambda x: ops.std(x, -1, 2), note="ops.std")
run("VarMean", x34, {"dim": 0, "keepdim": True}, lambda x: ops.var_mean(x, 0, 1, True), note="ops.var_mean")
run("StdMean", x23, {"dim": 1, "correction": 0}, lambda x: ops.std_mean(x, 1, 0), note="ops.std_mean")

# Norm, LinalgVectorNorm (ops.vector_norm) -----------------------------------
for p in [2.0, 1.0, 3.0, 0.5, inf, -inf, 0.0]:
    try_run("Norm", x34, {"p": p, "dim": 1}, lambda x: ops.vector_norm(x, p, 1), note="ops.vector_norm")
    try_run("LinalgVectorNorm", x23, {"ord": p, "dim": (0, 2), "keepdim": True},
        lambda x: ops.vector_norm(x, p, (0, 2), True), note="ops.vector_norm")
run("Norm", x23, {}, lambda x: ops.vector_norm(x), note="ops.vector_norm")
run("LinalgVectorNorm", x34.astype(np.float64), {"ord": 2}, lambda x: ops.vector_norm(x, 2.0),
    note="ops.vector_norm")

# LpNorm -----------------------------------------------------------------------
for p in [0, 1, 2, 3]:
    run("LpNorm", x34, {"axis": 1, "p": p}, lambda x: ops.LpNorm(1, p)(x))
run("LpNorm", x23, {"axis": (0, 2), "keep_dims": True}, lambda x: ops.LpNorm((0, 2), 2, True)(x))
run("LpNorm", arr([[1e-13, 0.0], [0.0, 0.0]]), {"axis": 1}, lambda x: ops.LpNorm(1)(x),
    note="clamped at epsilon")
run("LpNorm", arr([0.1, 0.0]), {"axis": 0, "epsilon": 0.5}, lambda x: ops.LpNorm(0, 2, False, 0.5)(x))
run("LpNorm", x34.astype(np.float16), {"axis": -1}, lambda x: ops.LpNorm(-1)(x), rtol=2e-3, atol=1e-3)

# ArgMaxWithValue, ArgMinWithValue, Argmin, ArgMaxExt, ArgMinExt, MaxDim, MinDim
for a in [[1, 5, 3, 5], [nan, 1, 2], [1, nan], [2, nan, 1], [nan, nan], [3, 1, 3]]:
    for op, fn in [("ArgMaxWithValue", lambda x: ops.ArgMaxWithValue(0)(x)),
                   ("ArgMinWithValue", lambda x: ops.ArgMinWithValue(0)(x)),
                   ("Argmin", lambda x: ops.Argmin(0)(x)),
                   ("MaxDim", lambda x: P.MaxDim()(x, 0)),
                   ("MinDim", lambda x: P.MinDim()(x, 0))]:
        attrs = {"dim": 0} if op in ("MaxDim", "MinDim") else {"axis": 0}
        run(op, arr(a), attrs, fn)
run("ArgMaxWithValue", x23, {"axis": -1, "keep_dims": True}, lambda x: ops.ArgMaxWithValue(-1, True)(x))
run("ArgMaxWithValue", xi, {"axis": 1}, lambda x: ops.ArgMaxWithValue(1)(x))
run("ArgMaxWithValue", arr(3.0), {}, lambda x: ops.ArgMaxWithValue(0)(x))
run("ArgMinWithValue", x34.astype(np.float64), {"axis": 0}, lambda x: ops.ArgMinWithValue(0)(x))
run("ArgMinWithValue", xi.astype(np.int8), {"axis": 1, "keep_dims": True},
    lambda x: ops.ArgMinWithValue(1, True)(x))
run("Argmin", x34, {}, lambda x: ops.Argmin()(x))
run("Argmin", xi, {"axis": 0, "output_type": ms.int64}, lambda x: ops.Argmin(0, ms.int64)(x))
run("MaxDim", x23, {"dim": 1, "keepdim": True}, lambda x: P.MaxDim()(x, 1, True))
run("MaxDim", xi, {"dim": -1}, lambda x: P.MaxDim()(x, -1))
run("MinDim", x34.astype(np.float64), {"dim": 1}, lambda x: P.MinDim()(x, 1))
run("ArgMaxExt", x34, {}, lambda x: ops.argmax(x), note="ops.argmax")
run("ArgMaxExt", x23, {"dim": 1, "keepdim": True}, lambda x: ops.argmax(x, 1, True), note="ops.argmax")
run("ArgMaxExt", arr([2, nan, 1]), {"dim": 0}, lambda x: ops.argmax(x, 0), note="ops.argmax")
run("ArgMinExt", x34, {"dim": 0}, lambda x: i64(ops.argmin(x, 0)), note="ops.argmin")
run("ArgMinExt", xi, {}, lambda x: i64(ops.argmin(x)), note="ops.argmin")

# CumSum, CumProd -----------------------------------------------------------------
for ex in (False, True):
    for rev in (False, True):
        run("CumSum", x34, {"axis": 1, "exclusive": ex, "reverse": rev},
            lambda x: ops.CumSum(ex, rev)(x, 1))
        run("CumProd", pos, {"axis": -1, "exclusive": ex, "reverse": rev},
            lambda x: ops.CumProd(ex, rev)(x, -1))
run("CumSum", x23.astype(np.float64), {"axis": 0}, lambda x: ops.CumSum()(x, 0))
run("CumSum", xi, {"axis": 0}, lambda x: ops.CumSum()(x, 0))
run("CumSum", arr([100, 100, 100], np.int8), {"axis": 0}, lambda x: ops.CumSum()(x, 0), note="int8 wraps")
run("CumProd", arr([[2, 3, 4], [-1, 5, 0]], np.int32), {"axis": 1}, lambda x: ops.CumProd()(x, 1))
run("CumProd", x34.astype(np.float64), {"axis": 0, "reverse": True}, lambda x: ops.CumProd(False, True)(x, 0))

# Cummax, Cummin ---------------------------------------------------------------------
for a in [[1, 3, 3, 2, 3], [3, 1, 1, 2, 1], [1, nan, 3, 2], [1, nan, 0, 2]]:
    run("Cummax", arr(a), {"axis": 0}, lambda x: P.Cummax(0)(x))
    run("Cummin", arr(a), {"axis": 0}, lambda x: P.Cummin(0)(x))
run("Cummax", x34, {"axis": 0}, lambda x: P.Cummax(0)(x))
run("Cummin", x23, {"axis": -1}, lambda x: P.Cummin(-1)(x))
run("Cummax", arr([[1, 3, 3, 2]], np.int32), {"axis": 1}, lambda x: P.Cummax(1)(x))
run("Cummin", x34.astype(np.float64), {"axis": 1}, lambda x: P.Cummin(1)(x))

# TopK, TopkExt ----------------------------------------------------------------------
run("TopK", arr([1, 3, 3, 2, 3]), {"k": 3}, lambda x: ops.TopK()(x, 3), note="ties: lower index first")
run("TopK", x23, {"k": 2}, lambda x: ops.TopK()(x, 2))
run("TopK", arr([[1, 5, 3], [7, 7, 0]], np.int32), {"k": 3}, lambda x: ops.TopK()(x, 3))
run("TopK", x34.astype(np.float64), {"k": 1}, lambda x: ops.TopK()(x, 1))
run("TopkExt", x34, {"k": 2, "dim": 0, "largest": False},
    lambda x: [a if i == 0 else i64(a) for i, a in enumerate(ops.topk(x, 2, 0, False))], note="ops.topk")
# Left out: TopkExt with ties (ops.topk's order of equal values depends on k).

# Sort, SortExt, ArgSort ------------------------------------------------------------------
ties = arr([3, 1, 3, 1, 2])
run("Sort", ties, {}, lambda x: ops.Sort()(x), note="stable")
run("Sort", ties, {"descending": True}, lambda x: ops.Sort(descending=True)(x), note="stable")
run("Sort", x23, {"axis": 1}, lambda x: ops.Sort(1)(x))
run("Sort", xi[:, ::-1].copy(), {"axis": 0, "descending": True}, lambda x: ops.Sort(0, True)(x))
run("Sort", x34.astype(np.float64), {}, lambda x: ops.Sort()(x))
run("SortExt", x34, {"dim": 0, "descending": True},
    lambda x: [a if i == 0 else i64(a) for i, a in enumerate(ops.sort(x, 0, True))], note="ops.sort")
run("ArgSort", ties, {}, lambda x: i64(ops.argsort(x)), note="ops.argsort")
run("ArgSort", x23, {"dim": 1, "descending": True}, lambda x: i64(ops.argsort(x, 1, True)), note="ops.argsort")

# Median ---------------------------------------------------------------------------------
for a in [[1, 2, 3, 4], [2, 1, 2, 2], [nan, 1, 2], [1, nan], [2, nan, 1], [nan, nan], [1, nan, 3, nan]]:
    run("Median", arr(a), {}, lambda x: ops.Median(False, 0)(x))
    run("Median", arr(a), {"ignore_nan": True}, lambda x: ops.Median(False, 0, False, True)(x))
    run("Median", arr(a), {"global_median": True}, lambda x: ops.Median(True)(x))
    run("Median", arr(a), {"global_median": True, "ignore_nan": True},
        lambda x: ops.Median(True, 0, False, True)(x))
run("Median", x34, {"axis": 1}, lambda x: ops.Median(False, 1)(x))
run("Median", x23, {"axis": -1, "keep_dims": True}, lambda x: ops.Median(False, -1, True)(x))
run("Median", arr([[1, nan, 3], [nan, nan, nan]]), {"axis": 1, "ignore_nan": True},
    lambda x: ops.Median(False, 1, False, True)(x))
run("Median", arr([[4, 1, 5], [3, 2, 0]], np.int32), {"axis": 0}, lambda x: ops.Median(False, 0)(x))
run("Median", arr(3.0), {}, lambda x: ops.Median(False, 0)(x))
run("Median", x34.astype(np.float64), {"global_median": True}, lambda x: ops.Median(True)(x))

o.save()
