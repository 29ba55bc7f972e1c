//! Helpers the scalar, sequence, reduction and linear-algebra modules share.

use ops::{DType, KValue};
use tensor::Tensor;

/// A 0-d tensor of `dtype` holding `v`.
pub fn num(dtype: DType, v: f64) -> KValue {
    KValue::Tensor(Tensor::scalar(dtype, v))
}

/// A tuple of i64 0-d tensors.
pub fn tup(v: &[i64]) -> KValue {
    KValue::Tuple(v.iter().map(|&x| num(DType::I64, x as f64)).collect())
}

/// `a` and `b` agree within `tol`.
pub fn close(a: &[f64], b: &[f64], tol: f64) {
    test_support::ops::close("values", a, b, tol);
}
