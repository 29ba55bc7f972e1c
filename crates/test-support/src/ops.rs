//! Calling the registry's primitives eagerly on tensors with attributes,
//! their shape rules on abstract values, and comparing what they give (the
//! helpers the kernel tests, `crates/ops/tests/kernels/`, share).
//!
//! A call's inputs are anything [`Args`] takes: `&[&x, &y]` (tensors),
//! `vec![kv(&x), tup(..)]` (values), or a single `&x`.

use ::ops::eager;
use ::ops::{AbsVal, AttrValue, DType, ErrorTarget, KValue, OpError};
use ir::{Dim, Shape};
use tensor::Tensor;

/// A call's attributes, by name.
pub type Attrs = Vec<(&'static str, AttrValue)>;

/// The inputs of a call.
pub trait Args {
    fn values(self) -> Vec<KValue>;
}

impl Args for Vec<KValue> {
    fn values(self) -> Vec<KValue> {
        self
    }
}

impl Args for &[KValue] {
    fn values(self) -> Vec<KValue> {
        self.to_vec()
    }
}

impl Args for &[&Tensor] {
    fn values(self) -> Vec<KValue> {
        self.iter().map(|x| kv(x)).collect()
    }
}

impl<const N: usize> Args for &[&Tensor; N] {
    fn values(self) -> Vec<KValue> {
        self.iter().map(|x| kv(x)).collect()
    }
}

impl Args for &Vec<&Tensor> {
    fn values(self) -> Vec<KValue> {
        self.iter().map(|x| kv(x)).collect()
    }
}

impl Args for &Tensor {
    fn values(self) -> Vec<KValue> {
        vec![kv(self)]
    }
}

// ---------------------------------------------------------------------------
// Values.

/// A tensor of `dtype` holding `data` (given as f64s).
pub fn t(dtype: DType, shape: &[usize], data: &[f64]) -> Tensor {
    Tensor::from_f64(shape.to_vec(), data.to_vec())
        .unwrap()
        .cast(dtype)
}

/// Deterministic f64 values uniform in `[lo, hi)`.
pub fn rand(shape: &[usize], seed: u64, lo: f64, hi: f64) -> Tensor {
    tensor(eager::random_f64(shape, seed, lo, hi))
}

/// Deterministic f64 values uniform in `[-1, 1)`.
pub fn rnd(shape: &[usize], seed: u64) -> Tensor {
    rand(shape, seed, -1.0, 1.0)
}

/// 0, 1, 2... in f64, row-major.
pub fn arange(shape: &[usize]) -> Tensor {
    let n = shape.iter().product::<usize>();
    Tensor::from_f64(shape.to_vec(), (0..n).map(|i| i as f64).collect()).unwrap()
}

/// A bool tensor.
pub fn bools(shape: &[usize], data: &[bool]) -> Tensor {
    Tensor::from_bool(shape.to_vec(), data.to_vec()).unwrap()
}

pub fn kv(x: &Tensor) -> KValue {
    KValue::Tensor(x.clone())
}

/// The tensor a value is (panics on a tuple).
pub fn tensor(v: KValue) -> Tensor {
    match v {
        KValue::Tensor(x) => x,
        KValue::Tuple(_) => panic!("a tuple"),
    }
}

/// The items of a tuple value (panics on a tensor).
pub fn items(v: KValue) -> Vec<KValue> {
    match v {
        KValue::Tuple(items) => items,
        KValue::Tensor(_) => panic!("a tensor"),
    }
}

/// The tensors of a tuple value (panics on a tensor or a nested tuple).
pub fn tensors(v: KValue) -> Vec<Tensor> {
    items(v).into_iter().map(tensor).collect()
}

// ---------------------------------------------------------------------------
// Attributes.

pub fn int(i: i64) -> AttrValue {
    AttrValue::Int(i)
}

pub fn ints(v: &[i64]) -> AttrValue {
    AttrValue::Tuple(v.iter().map(|&i| AttrValue::Int(i)).collect())
}

pub fn flt(x: f64) -> AttrValue {
    AttrValue::float(x)
}

pub fn floats(v: &[f64]) -> AttrValue {
    AttrValue::Tuple(v.iter().map(|&x| AttrValue::float(x)).collect())
}

pub fn s(v: &str) -> AttrValue {
    AttrValue::Str(v.to_string())
}

pub fn b(v: bool) -> AttrValue {
    AttrValue::Bool(v)
}

// ---------------------------------------------------------------------------
// Calls.

/// `op` run eagerly (kernel, attributes checked and defaulted).
pub fn try_call(op: &str, inputs: impl Args, attrs: Attrs) -> Result<KValue, OpError> {
    eager::call(op, &inputs.values(), attrs)
}

/// `op` run eagerly; panics with its error.
pub fn call(op: &str, inputs: impl Args, attrs: Attrs) -> KValue {
    try_call(op, inputs, attrs).unwrap_or_else(|e| panic!("{op}: {}", e.message))
}

/// The tensor `op` gives, or its error.
pub fn try_run(op: &str, inputs: impl Args, attrs: Attrs) -> Result<Tensor, OpError> {
    try_call(op, inputs, attrs).map(|v| match v {
        KValue::Tensor(x) => x,
        KValue::Tuple(_) => panic!("{op} returned a tuple"),
    })
}

/// The tensor `op` gives; panics with its error or on a tuple.
pub fn run(op: &str, inputs: impl Args, attrs: Attrs) -> Tensor {
    match call(op, inputs, attrs) {
        KValue::Tensor(x) => x,
        KValue::Tuple(_) => panic!("{op} returned a tuple"),
    }
}

/// The tensors of the tuple `op` gives.
pub fn run_tuple(op: &str, inputs: impl Args, attrs: Attrs) -> Vec<Tensor> {
    match call(op, inputs, attrs) {
        KValue::Tuple(items) => items
            .into_iter()
            .map(|i| match i {
                KValue::Tensor(x) => x,
                KValue::Tuple(_) => panic!("nested tuple"),
            })
            .collect(),
        KValue::Tensor(_) => panic!("{op} returned a tensor"),
    }
}

/// The error of a call that must fail.
pub fn run_err(op: &str, inputs: impl Args, attrs: Attrs) -> OpError {
    match try_call(op, inputs, attrs) {
        Ok(v) => panic!("{op} succeeded with {v:?}"),
        Err(e) => e,
    }
}

/// `op`'s shape rule on abstract inputs (attributes checked and defaulted).
pub fn infer(op: &str, inputs: impl AsRef<[AbsVal]>, attrs: Attrs) -> Result<AbsVal, OpError> {
    let def = ::ops::lookup(op).unwrap_or_else(|| panic!("no {op}"));
    let given: Vec<(String, AttrValue)> = attrs
        .into_iter()
        .map(|(k, v)| (k.to_string(), ::ops::check_attr(def, k, &v).unwrap()))
        .collect();
    let attrs = ::ops::resolve_attrs(def, &given);
    (def.infer)(&::ops::InferCall {
        op: def,
        inputs: inputs.as_ref(),
        attrs: &attrs,
    })
}

/// The error of a shape rule that must fail.
pub fn infer_err(op: &str, inputs: impl AsRef<[AbsVal]>, attrs: Attrs) -> OpError {
    match infer(op, inputs, attrs) {
        Ok(v) => panic!("{op}: expected an error, inferred {v}"),
        Err(e) => e,
    }
}

/// A tensor of `dtype` with known sizes.
pub fn ten(dtype: DType, dims: &[i64]) -> AbsVal {
    AbsVal::tensor(dtype, dims)
}

/// `f32[dims]` with symbolic (`"B"`) and unknown (`"?"`) sizes.
pub fn abs(dims: &[&str]) -> AbsVal {
    AbsVal::Tensor {
        dtype: DType::F32,
        shape: Shape::Ranked(
            dims.iter()
                .map(|d| match *d {
                    "?" => Dim::Unknown,
                    s => s
                        .parse::<i64>()
                        .map_or_else(|_| Dim::Sym(s.to_string()), Dim::Known),
                })
                .collect(),
        ),
    }
}

// ---------------------------------------------------------------------------
// Comparisons.

/// The error is about `target` and its message says every one of `parts`.
pub fn assert_err(e: &OpError, target: ErrorTarget, parts: &[&str]) {
    assert_eq!(e.target, target, "target of: {}", e.message);
    for p in parts {
        assert!(e.message.contains(p), "{:?} lacks {p:?}", e.message);
    }
}

/// `got` equals `want` within `tol * (1 + |want|)` per element (NaN matches
/// NaN, an infinity itself).
pub fn close(what: &str, got: &[f64], want: &[f64], tol: f64) {
    assert_eq!(got.len(), want.len(), "{what}: element count");
    for (i, (&a, &b)) in got.iter().zip(want).enumerate() {
        let ok = (a.is_nan() && b.is_nan()) || a == b || (a - b).abs() <= tol * (1.0 + b.abs());
        assert!(ok, "{what}[{i}]: got {a}, want {b}");
    }
}

/// [`close`] on a tensor's values.
pub fn assert_close(what: &str, got: &Tensor, want: &[f64], tol: f64) {
    close(what, &got.to_f64_vec(), want, tol);
}

/// [`assert_close`], and `got` has the shape `shape`.
pub fn assert_shaped_close(what: &str, got: &Tensor, shape: &[usize], want: &[f64], tol: f64) {
    assert_eq!(got.shape(), shape, "{what}: shape");
    assert_close(what, got, want, tol);
}

/// `got` has the shape `shape` and equals `want` within `atol + rtol *
/// |want|` per element (NaN matches NaN, an infinity itself).
pub fn assert_allclose(
    what: &str,
    got: &Tensor,
    shape: &[usize],
    want: &[f64],
    atol: f64,
    rtol: f64,
) {
    assert_eq!(got.shape(), shape, "{what}: shape");
    let g = got.to_f64_vec();
    assert_eq!(g.len(), want.len(), "{what}: element count");
    for (i, (&a, &b)) in g.iter().zip(want).enumerate() {
        let ok = (a.is_nan() && b.is_nan()) || a == b || (a - b).abs() <= atol + rtol * b.abs();
        assert!(ok, "{what}: element {i}: got {a}, want {b}");
    }
}

/// Every multi-index of `shape`, row-major.
pub fn indices(shape: &[usize]) -> Vec<Vec<usize>> {
    let n: usize = shape.iter().product();
    (0..n)
        .map(|mut i| {
            let mut idx = vec![0; shape.len()];
            for d in (0..shape.len()).rev() {
                idx[d] = i % shape[d];
                i /= shape[d];
            }
            idx
        })
        .collect()
}
