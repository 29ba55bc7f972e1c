//! The CPU kernel interface, and shared helpers kernels are written with.

use tensor::{Buffer, DType, Tensor};

use crate::{Attrs, OpError};

/// Whether the run has been asked to stop (see [`crate::guard`]): kernels with
/// long loops check it in their outer loop and return early.
pub use crate::guard::should_stop;

/// How many elements a loop handles between checks of [`should_stop`].
pub const STOP_CHECK_EVERY: usize = 1 << 16;

/// A kernel's argument: a tensor (scalars are rank-0 tensors) or a tuple.
#[derive(Debug, Clone, Copy)]
pub enum KArg<'a> {
    Tensor(&'a Tensor),
    Tuple(&'a [KValue]),
}

/// A kernel's result.
#[derive(Debug, Clone, PartialEq)]
pub enum KValue {
    Tensor(Tensor),
    Tuple(Vec<KValue>),
}

impl KValue {
    pub fn as_arg(&self) -> KArg<'_> {
        match self {
            KValue::Tensor(t) => KArg::Tensor(t),
            KValue::Tuple(items) => KArg::Tuple(items),
        }
    }

    pub fn into_tensor(self) -> Option<Tensor> {
        match self {
            KValue::Tensor(t) => Some(t),
            KValue::Tuple(_) => None,
        }
    }
}

pub struct KernelCall<'a> {
    pub inputs: &'a [KArg<'a>],
    /// Per input: a weak scalar (a literal, see `ir::AbsVal::Scalar`)?
    pub weak: &'a [bool],
    pub attrs: &'a Attrs,
}

impl<'a> KernelCall<'a> {
    /// Input `i` as an abstract value (dtype, shape, weakness), for the same
    /// dtype decisions the shape rule made.
    pub fn abs(&self, i: usize) -> ir::AbsVal {
        match self.inputs.get(i) {
            Some(KArg::Tensor(t))
                if self.weak.get(i).copied().unwrap_or(false) && t.rank() == 0 =>
            {
                ir::AbsVal::Scalar {
                    dtype: t.dtype(),
                    value: None,
                    weak: true,
                }
            }
            Some(KArg::Tensor(t)) => ir::AbsVal::tensor(
                t.dtype(),
                &t.shape().iter().map(|&d| d as i64).collect::<Vec<_>>(),
            ),
            _ => ir::AbsVal::Any,
        }
    }

    /// The dtype a binary arithmetic kernel computes in (as `infer::promote`).
    pub fn promoted(&self) -> DType {
        crate::infer::promote(&self.abs(0), &self.abs(1)).unwrap_or(DType::F32)
    }

    /// Input `i` as a tensor (a shape rule has checked it is one).
    pub fn tensor(&self, i: usize) -> Result<&'a Tensor, OpError> {
        match self.inputs.get(i) {
            Some(KArg::Tensor(t)) => Ok(t),
            _ => Err(OpError::input(i, format!("input {i} must be a tensor"))),
        }
    }
}

pub type KernelFn = fn(&KernelCall) -> Result<KValue, OpError>;

/// Broadcasts two shapes (NumPy rules).
pub fn broadcast_shape(a: &[usize], b: &[usize]) -> Option<Vec<usize>> {
    let rank = a.len().max(b.len());
    let mut out = vec![0; rank];
    for i in 0..rank {
        let da = if i + a.len() >= rank {
            a[i + a.len() - rank]
        } else {
            1
        };
        let db = if i + b.len() >= rank {
            b[i + b.len() - rank]
        } else {
            1
        };
        out[i] = match (da, db) {
            (x, y) if x == y => x,
            (1, y) => y,
            (x, 1) => x,
            _ => return None,
        };
    }
    Some(out)
}

/// Row-major strides of `shape` as seen from `out` (0 on broadcast dimensions).
pub fn broadcast_strides(shape: &[usize], out: &[usize]) -> Vec<usize> {
    let mut strides = vec![0; out.len()];
    let offset = out.len() - shape.len();
    let mut stride = 1;
    for i in (0..shape.len()).rev() {
        strides[i + offset] = if shape[i] == 1 { 0 } else { stride };
        stride *= shape[i];
    }
    strides
}

/// Calls `f(out_index, a_index, b_index)` for every element of the broadcast result.
pub fn for_each_broadcast(
    a: &[usize],
    b: &[usize],
    out: &[usize],
    mut f: impl FnMut(usize, usize, usize),
) {
    let n: usize = out.iter().product();
    if a == out && b == out {
        for start in (0..n).step_by(STOP_CHECK_EVERY) {
            if should_stop() {
                return;
            }
            (start..n.min(start + STOP_CHECK_EVERY)).for_each(|i| f(i, i, i));
        }
        return;
    }
    let sa = broadcast_strides(a, out);
    let sb = broadcast_strides(b, out);
    let rank = out.len();
    let mut index = vec![0usize; rank];
    let (mut ia, mut ib) = (0usize, 0usize);
    for o in 0..n {
        if o % STOP_CHECK_EVERY == 0 && should_stop() {
            return;
        }
        f(o, ia, ib);
        // Odometer increment, keeping both input offsets in step.
        for d in (0..rank).rev() {
            index[d] += 1;
            ia += sa[d];
            ib += sb[d];
            if index[d] < out[d] {
                break;
            }
            ia -= sa[d] * out[d];
            ib -= sb[d] * out[d];
            index[d] = 0;
        }
    }
}

/// Applies a binary function elementwise with broadcasting. Both tensors must
/// already have the result's storage kind (cast them first).
pub fn binary_f64(
    a: &Tensor,
    b: &Tensor,
    dtype: DType,
    f: impl Fn(f64, f64) -> f64,
) -> Result<Tensor, OpError> {
    let out = broadcast_shape(a.shape(), b.shape()).ok_or_else(|| {
        OpError::call(format!(
            "shapes {:?} and {:?} cannot be broadcast",
            a.shape(),
            b.shape()
        ))
    })?;
    let n: usize = out.iter().product();
    let buffer = match (a.cast(dtype).into_buffer(), b.cast(dtype).into_buffer()) {
        (Buffer::F32(x), Buffer::F32(y)) => {
            let mut r = vec![0f32; n];
            for_each_broadcast(a.shape(), b.shape(), &out, |o, i, j| {
                r[o] = f(x[i] as f64, y[j] as f64) as f32
            });
            Buffer::F32(r)
        }
        (Buffer::F64(x), Buffer::F64(y)) => {
            let mut r = vec![0f64; n];
            for_each_broadcast(a.shape(), b.shape(), &out, |o, i, j| r[o] = f(x[i], y[j]));
            Buffer::F64(r)
        }
        (Buffer::I64(x), Buffer::I64(y)) => {
            let mut r = vec![0i64; n];
            for_each_broadcast(a.shape(), b.shape(), &out, |o, i, j| {
                r[o] = f(x[i] as f64, y[j] as f64) as i64
            });
            Buffer::I64(r)
        }
        (Buffer::Bool(x), Buffer::Bool(y)) => {
            let mut r = vec![false; n];
            for_each_broadcast(a.shape(), b.shape(), &out, |o, i, j| {
                r[o] = f(x[i] as u8 as f64, y[j] as u8 as f64) != 0.0
            });
            Buffer::Bool(r)
        }
        _ => unreachable!("both inputs were cast to {dtype}"),
    };
    Tensor::new(dtype, out, buffer).map_err(|e| OpError::call(e.0))
}

/// Applies `f` to every element (in the tensor's own storage kind).
pub fn unary_f64(x: &Tensor, dtype: DType, f: impl Fn(f64) -> f64) -> Tensor {
    let buffer = match x.cast(dtype).into_buffer() {
        Buffer::F32(v) => Buffer::F32(v.into_iter().map(|e| f(e as f64) as f32).collect()),
        Buffer::F64(v) => Buffer::F64(v.into_iter().map(&f).collect()),
        Buffer::I64(v) => Buffer::I64(v.into_iter().map(|e| f(e as f64) as i64).collect()),
        Buffer::Bool(v) => Buffer::Bool(v.into_iter().map(|e| f(e as u8 as f64) != 0.0).collect()),
    };
    Tensor::new(dtype, x.shape().to_vec(), buffer).expect("same element count")
}

/// The element types `gemm` multiplies (f32 and f64).
pub trait GemmScalar: Copy + 'static {
    const ZERO: Self;
    const ONE: Self;
}

impl GemmScalar for f32 {
    const ZERO: f32 = 0.0;
    const ONE: f32 = 1.0;
}

impl GemmScalar for f64 {
    const ZERO: f64 = 0.0;
    const ONE: f64 = 1.0;
}

/// Row-major matrix product `c[m×n] = a[m×k] · b[k×n]` with the `gemm` crate
/// (multi-threaded above a size threshold; AVX-512 kernels where the CPU has
/// them). `a`/`b` are given with their row and column strides, so transposes
/// cost nothing.
#[allow(clippy::too_many_arguments)]
pub fn gemm_into<T: GemmScalar>(
    m: usize,
    n: usize,
    k: usize,
    a: &[T],
    a_row: isize,
    a_col: isize,
    b: &[T],
    b_row: isize,
    b_col: isize,
    c: &mut [T],
) {
    let work = m.saturating_mul(n).saturating_mul(k);
    // A large product runs in blocks of rows, checking between them whether
    // the run has been stopped (each row of `c` is computed alike either way).
    // Blocks of at least 256 rows (each block packs `b` again) and about 2^31
    // multiply-adds: a fraction of a second apart, a few percent of the time.
    const BLOCK_WORK: usize = 1 << 31;
    if work > 2 * BLOCK_WORK && m > 512 {
        let rows = (BLOCK_WORK / n.saturating_mul(k).max(1)).clamp(256, m);
        let mut r = 0;
        while r < m {
            if should_stop() {
                return;
            }
            let take = rows.min(m - r);
            let a_off = (r as isize * a_row) as usize;
            gemm_block(
                take,
                n,
                k,
                &a[a_off..],
                a_row,
                a_col,
                b,
                b_row,
                b_col,
                &mut c[r * n..],
            );
            r += take;
        }
        return;
    }
    gemm_block(m, n, k, a, a_row, a_col, b, b_row, b_col, c)
}

#[allow(clippy::too_many_arguments)]
fn gemm_block<T: GemmScalar>(
    m: usize,
    n: usize,
    k: usize,
    a: &[T],
    a_row: isize,
    a_col: isize,
    b: &[T],
    b_row: isize,
    b_col: isize,
    c: &mut [T],
) {
    let threads = if m * n * k >= 64 * 64 * 64 {
        gemm::Parallelism::Rayon(0)
    } else {
        gemm::Parallelism::None
    };
    // SAFETY: the strides describe matrices inside `a`, `b` and `c` (checked by
    // the callers' shape rules); `c` is written with its own row-major strides.
    unsafe {
        gemm::gemm(
            m,
            n,
            k,
            c.as_mut_ptr(),
            1,
            n as isize,
            false,
            a.as_ptr(),
            a_col,
            a_row,
            b.as_ptr(),
            b_col,
            b_row,
            T::ZERO,
            T::ONE,
            false,
            false,
            false,
            threads,
        );
    }
}

/// [`gemm_into`] for f32.
#[allow(clippy::too_many_arguments)]
pub fn gemm_f32(
    m: usize,
    n: usize,
    k: usize,
    a: &[f32],
    a_row: isize,
    a_col: isize,
    b: &[f32],
    b_row: isize,
    b_col: isize,
    c: &mut [f32],
) {
    gemm_into(m, n, k, a, a_row, a_col, b, b_row, b_col, c)
}

/// [`gemm_into`] for f64.
#[allow(clippy::too_many_arguments)]
pub fn gemm_f64(
    m: usize,
    n: usize,
    k: usize,
    a: &[f64],
    a_row: isize,
    a_col: isize,
    b: &[f64],
    b_row: isize,
    b_col: isize,
    c: &mut [f64],
) {
    gemm_into(m, n, k, a, a_row, a_col, b, b_row, b_col, c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn broadcasting() {
        assert_eq!(broadcast_shape(&[2, 1, 3], &[4, 1]), Some(vec![2, 4, 3]));
        assert_eq!(broadcast_shape(&[], &[3]), Some(vec![3]));
        assert_eq!(broadcast_shape(&[2], &[3]), None);
        let a = Tensor::from_f32(vec![2, 1], vec![1.0, 2.0]).unwrap();
        let b = Tensor::from_f32(vec![3], vec![10.0, 20.0, 30.0]).unwrap();
        let c = binary_f64(&a, &b, DType::F32, |x, y| x + y).unwrap();
        assert_eq!(c.shape(), &[2, 3]);
        assert_eq!(c.to_f64_vec(), vec![11.0, 21.0, 31.0, 12.0, 22.0, 32.0]);
    }

    #[test]
    fn gemm_with_transposed_b() {
        // a = [[1, 2], [3, 4]], b^T where b = [[5, 6], [7, 8]]: a @ b^T
        let a = [1.0f32, 2.0, 3.0, 4.0];
        let b = [5.0f32, 6.0, 7.0, 8.0];
        let mut c = [0.0f32; 4];
        gemm_f32(2, 2, 2, &a, 2, 1, &b, 1, 2, &mut c);
        assert_eq!(c, [17.0, 23.0, 39.0, 53.0]);
    }
}
