"""MindSpore 2.10 oracle for the linear algebra families (defs/linalg/*.rs).

Run: /work/venvs/ms/bin/python crates/ops/tests/ms_oracle/linalg.py

MindSpore's CPU backend has no kernel for Einsum ("Unsupported op [Einsum] on
CPU"; tests/kernels_misc.rs checks it against direct summation) nor for the
pyboost primitives Outer, Dot, Mv, Mm, Addmm, Addmv, Baddbmm, Addbmm ("The
kernel ... unregistered"). For those, the cases are computed by MindSpore's
CPU implementation of the same public API (ops.outer, ops.matmul, ops.mv,
ops.addmm, ...). Left out: MatrixInverse of a singular matrix (MindSpore 2.10
returns arbitrary finite values) and Cholesky of matrices it rejects.
"""
import numpy as np
import mindspore as ms
from mindspore import Tensor, ops

from common import Oracle

P = ops.auto_generate
o = Oracle("linalg")


def T(a):
    return Tensor(a)


def spd(n, batch=(), seed=0):
    rng = np.random.default_rng(seed)
    a = rng.uniform(-1, 1, size=batch + (n, n))
    return (a @ np.swapaxes(a, -1, -2) + n * np.eye(n)).astype(np.float32)


v3, v4 = o.rand(3), o.rand(4)
m34, m42 = o.rand(3, 4), o.rand(4, 2)
i3 = o.ints(3, lo=-5, hi=5, dtype=np.int32)
i23 = o.ints(2, 3, lo=-5, hi=5, dtype=np.int32)

# Outer, Dot, Mv, Mm (functional stand-ins) ----------------------------------------
o.case("Outer", [v3, v4], {}, ops.outer(T(v3), T(v4)), note="ops.outer")
o.case("Outer", [i3, i3[:2].copy()], {}, ops.outer(T(i3), T(i3[:2].copy())), note="ops.outer")
w4 = o.rand(4)
o.case("Dot", [v4, w4], {}, ops.matmul(T(v4), T(w4)), note="ops.matmul")
o.case("Dot", [v3.astype(np.float64), v3.astype(np.float64)], {},
       ops.matmul(T(v3.astype(np.float64)), T(v3.astype(np.float64))), note="ops.matmul")
o.case("Mv", [m34, v4], {}, ops.mv(T(m34), T(v4)), note="ops.mv")
o.case("Mv", [i23, i3], {}, ops.mv(T(i23), T(i3)), note="ops.mv")
o.case("Mm", [m34, m42], {}, ops.matmul(T(m34), T(m42)), note="ops.matmul")
o.case("Mm", [m34.astype(np.float64), m42.astype(np.float64)], {},
       ops.matmul(T(m34.astype(np.float64)), T(m42.astype(np.float64))), note="ops.matmul")

# Addmm, Addmv, Baddbmm, Addbmm (functional stand-ins) -------------------------------
inp = o.rand(2)
o.case("Addmm", [inp, m34, m42], {"beta": 0.5, "alpha": 2.0},
       ops.addmm(T(inp), T(m34), T(m42), beta=0.5, alpha=2.0), note="ops.addmm")
full = o.rand(3, 2)
o.case("Addmm", [full, m34, m42], {}, ops.addmm(T(full), T(m34), T(m42)), note="ops.addmm")
o.case("Addmv", [v3, m34, v4], {"beta": 2, "alpha": -1.5},
       ops.addmv(T(v3), T(m34), T(v4), beta=2, alpha=-1.5), note="ops.addmv")
b1, b2 = o.rand(2, 3, 4), o.rand(2, 4, 2)
bi = o.rand(1, 3, 2)
o.case("Baddbmm", [bi, b1, b2], {"beta": 2.0}, ops.baddbmm(T(bi), T(b1), T(b2), beta=2.0), note="ops.baddbmm")
bfull = o.rand(2, 3, 2)
o.case("Baddbmm", [bfull, b1, b2], {"alpha": 0.5}, ops.baddbmm(T(bfull), T(b1), T(b2), alpha=0.5),
       note="ops.baddbmm")
o.case("Addbmm", [full, b1, b2], {"beta": 0.5, "alpha": 0.25},
       ops.addbmm(T(full), T(b1), T(b2), beta=0.5, alpha=0.25), note="ops.addbmm")

# BatchMatMulExt, MatMulExt ---------------------------------------------------------------------
o.case("BatchMatMulExt", [b1, b2], {}, P.BatchMatMulExt()(T(b1), T(b2)))
o.case("BatchMatMulExt", [b1.astype(np.float64), b2.astype(np.float64)], {},
       P.BatchMatMulExt()(T(b1.astype(np.float64)), T(b2.astype(np.float64))))
bi1, bi2 = o.ints(2, 2, 3, lo=-3, hi=3, dtype=np.int32), o.ints(2, 3, 2, lo=-3, hi=3, dtype=np.int32)
o.case("BatchMatMulExt", [bi1, bi2], {}, P.BatchMatMulExt()(T(bi1), T(bi2)))
for a, b in [(v4, v4), (v4, o.rand(4, 3)), (m34, v4), (o.rand(2, 1, 3, 4), o.rand(5, 4, 2)),
             (v4, o.rand(2, 4, 3)), (o.rand(2, 3, 4), v4), (m34, m42)]:
    o.case("MatMulExt", [a, b], {}, P.MatMulExt()(T(a), T(b)))
o.case("MatMulExt", [i23, i3], {}, P.MatMulExt()(T(i23), T(i3)))

# MatrixInverse, MatrixDeterminant, Cholesky -------------------------------------------------------
g3 = o.rand(3, 3) + 2 * np.eye(3, dtype=np.float32)
o.case("MatrixInverse", [g3], {}, ops.MatrixInverse()(T(g3)), rtol=1e-4, atol=1e-5)
o.case("MatrixInverse", [g3], {"adjoint": True}, ops.MatrixInverse(True)(T(g3)), rtol=1e-4, atol=1e-5)
gb = o.rand(2, 4, 4) + 2 * np.eye(4, dtype=np.float32)
o.case("MatrixInverse", [gb.astype(np.float64)], {}, ops.MatrixInverse()(T(gb.astype(np.float64))))
o.case("MatrixInverse", [np.array([[0.0, 2.0], [3.0, 1.0]], np.float32)], {},
       ops.MatrixInverse()(T(np.array([[0.0, 2.0], [3.0, 1.0]], np.float32))), note="needs a pivot")
o.case("MatrixDeterminant", [g3], {}, P.MatrixDeterminant()(T(g3)), rtol=1e-5, atol=1e-5)
o.case("MatrixDeterminant", [gb], {}, P.MatrixDeterminant()(T(gb)), rtol=1e-5, atol=1e-5)
o.case("MatrixDeterminant", [gb.astype(np.float64)], {}, P.MatrixDeterminant()(T(gb.astype(np.float64))))
sing = np.array([[1.0, 2.0], [2.0, 4.0]], np.float32)
o.case("MatrixDeterminant", [sing], {}, P.MatrixDeterminant()(T(sing)), note="singular")
# MatrixDeterminant refuses 1x1 matrices ("the row size must be greater than
# or equal to 2"); the registry does too.
one = np.array([[[-2.5]]], np.float32)
try:
    o.case("MatrixInverse", [one], {}, ops.MatrixInverse()(T(one)))
except (RuntimeError, ValueError) as e:
    print("left out: MatrixInverse 1x1:", str(e).splitlines()[0])
o.case("MatrixDeterminant", [np.array([[0.0, 2.0], [3.0, 1.0]], np.float32)], {},
       P.MatrixDeterminant()(T(np.array([[0.0, 2.0], [3.0, 1.0]], np.float32))), note="needs a pivot")
s3, sb = spd(3, seed=1), spd(2, (2,), seed=2)
o.case("Cholesky", [s3], {}, P.Cholesky()(T(s3)))
o.case("Cholesky", [s3], {"upper": True}, P.Cholesky(True)(T(s3)))
o.case("Cholesky", [sb.astype(np.float64)], {}, P.Cholesky()(T(sb.astype(np.float64))))

# Trace, Cross, Diag, DiagPart ----------------------------------------------------------------------
o.case("Trace", [m34], {}, P.Trace()(T(m34)))
o.case("Trace", [i23], {}, P.Trace()(T(i23)))
o.case("Trace", [g3.astype(np.float64)], {}, P.Trace()(T(g3.astype(np.float64))))
c23, c3 = o.rand(2, 3), o.rand(3)
o.case("Cross", [c23, c3], {}, P.Cross()(T(c23), T(c3)))
c32a, c32b = o.rand(3, 2), o.rand(3, 2)
o.case("Cross", [c32a, c32b], {"dim": 0}, P.Cross(0)(T(c32a), T(c32b)))
c33a, c33b = o.rand(3, 3), o.rand(3, 3)
o.case("Cross", [c33a, c33b], {}, P.Cross()(T(c33a), T(c33b)), note="the first dimension of size 3")
o.case("Cross", [c33a, c33b], {"dim": -1}, P.Cross(-1)(T(c33a), T(c33b)))
ci = o.ints(2, 3, lo=-4, hi=4, dtype=np.int32)
o.case("Cross", [ci, i3], {}, P.Cross()(T(ci), T(i3)))
o.case("Diag", [v3], {}, P.Diag()(T(v3)))
o.case("Diag", [i23], {}, P.Diag()(T(i23)))
o.case("Diag", [c23.astype(np.float64)], {}, P.Diag()(T(c23.astype(np.float64))))
d = o.rand(2, 3, 2, 3)
o.case("DiagPart", [d], {}, ops.DiagPart()(T(d)))
o.case("DiagPart", [g3], {}, ops.DiagPart()(T(g3)))
di = o.ints(3, 3, lo=-5, hi=5, dtype=np.int32)
o.case("DiagPart", [di], {}, ops.DiagPart()(T(di)))

o.save()
