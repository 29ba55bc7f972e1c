//! MindSpore's sequence primitives (tuples; MindSpore's lists are tuples
//! here): sequence_len, make_range, SequenceAdd, SequenceSlice, SequenceMul,
//! SequenceCount, InSequence, SequenceMax, SequenceMin, SequenceAddN,
//! SequenceZerosLike, shape_mul, tuple_equal, tuple_lt, tuple_le,
//! tuple_greater_than, tuple_greater_equal (and the `list_` versions),
//! ListAppend, ListInsert. Conversions between tuples and tensors are in
//! `scalar_convert`.
//!
//! A tuple's length is part of its abstract value, so primitives whose result
//! length depends on a number (`make_range`, `SequenceSlice`, `SequenceMul`)
//! give a known tuple only when that number is a known constant (shapes and
//! literals usually are), and `?` otherwise. Scalar results carry their value
//! when the inputs' values are known. Semantics are Python's on tuples of
//! numbers, as MindSpore's graph-mode kernels implement them.

use crate::schema::{why, Override, Schema};
use crate::Traits;
use ir::{AbsVal, DType};
use tensor::Tensor;

use crate::defs::scalar::{num_out, scalar_out, scalar_promote, Num};
use crate::infer::InferCall;
use crate::kernel::{KArg, KValue, KernelCall};
use crate::{Category, GNode, GradBuilder, GradCall, OpDef, OpError, OutputDef};

// ---------------------------------------------------------------------------
// Helpers.

/// Input `i` as a tuple's elements (`None` when unknown).
fn tuple_in<'a>(call: &'a InferCall, i: usize) -> Result<Option<&'a [AbsVal]>, OpError> {
    match &call.inputs[i] {
        AbsVal::Any => Ok(None),
        AbsVal::Tuple(items) => Ok(Some(items)),
        other => Err(OpError::input(
            i,
            format!(
                "`{}` needs a tuple as `{}`, not {other}",
                call.op.name,
                call.input_name(i)
            ),
        )),
    }
}

pub(crate) fn tuple_arg<'a>(c: &KernelCall<'a>, i: usize) -> Result<&'a [KValue], OpError> {
    match c.inputs.get(i) {
        Some(KArg::Tuple(items)) => Ok(items),
        _ => Err(OpError::input(i, format!("input {i} must be a tuple"))),
    }
}

/// A number in an abstract value: its dtype and value when known.
pub(crate) fn abs_num(v: &AbsVal) -> Option<(DType, Option<Num>)> {
    match v {
        AbsVal::Scalar { dtype, value, .. } => Some((*dtype, value.map(Num::from_const))),
        AbsVal::Tensor { dtype, shape } if shape.rank() == Some(0) => Some((*dtype, None)),
        _ => None,
    }
}

/// Input `i` as a number (`Ok(None)` when unknown), or an error naming it.
fn num_in(call: &InferCall, i: usize) -> Result<Option<(DType, Option<Num>)>, OpError> {
    if matches!(call.inputs[i], AbsVal::Any) {
        return Ok(None);
    }
    abs_num(&call.inputs[i]).map(Some).ok_or_else(|| {
        OpError::input(
            i,
            format!(
                "`{}` needs a number as `{}`, not {}",
                call.op.name,
                call.input_name(i),
                call.inputs[i]
            ),
        )
    })
}

/// The known integer value of input `i`.
fn const_int(call: &InferCall, i: usize) -> Result<Option<i64>, OpError> {
    Ok(match num_in(call, i)? {
        Some((d, Some(v))) if !d.is_float() => Some(v.i()),
        Some((d, _)) if d.is_float() => {
            return Err(OpError::input(
                i,
                format!(
                    "`{}` needs an integer `{}`, not {d}",
                    call.op.name,
                    call.input_name(i)
                ),
            ))
        }
        _ => None,
    })
}

/// A kernel value as a number.
pub(crate) fn knum(v: &KValue, i: usize) -> Result<(DType, Num), OpError> {
    match v {
        KValue::Tensor(t) if t.numel() == 1 => {
            Ok((t.dtype(), Num::of_tensor(t).expect("one element")))
        }
        _ => Err(OpError::input(i, "expected a number")),
    }
}

fn knum_arg(c: &KernelCall, i: usize) -> Result<(DType, Num), OpError> {
    knum(&KValue::Tensor(c.tensor(i)?.clone()), i)
}

fn i64_scalar(v: i64) -> AbsVal {
    scalar_out(DType::I64, Some(Num::Int(v)), false)
}

fn bool_scalar(v: Option<bool>) -> AbsVal {
    scalar_out(DType::Bool, v.map(Num::Bool), false)
}

fn kint(v: i64) -> KValue {
    num_out(DType::I64, Num::Int(v))
}

fn kbool(v: bool) -> KValue {
    num_out(DType::Bool, Num::Bool(v))
}

fn knums(items: &[KValue]) -> Result<Vec<Num>, OpError> {
    items.iter().map(|v| knum(v, 0).map(|(_, n)| n)).collect()
}

/// Python's `a == b` of two numbers.
fn num_eq(a: Num, b: Num) -> bool {
    a.f() == b.f()
}

/// The longest tuple these primitives build.
const MAX_LEN: usize = 1 << 20;

fn too_long(op: &str, n: usize) -> OpError {
    OpError::call(format!("`{op}` would build a tuple of {n} elements"))
}

// ---------------------------------------------------------------------------
// Lengths, ranges, concatenation, slicing, repetition.

fn infer_len(call: &InferCall) -> Result<AbsVal, OpError> {
    Ok(match tuple_in(call, 0)? {
        Some(items) => i64_scalar(items.len() as i64),
        None => AbsVal::scalar(DType::I64),
    })
}

/// The numbers of `range(start, limit, delta)`.
fn range(op: &str, args: &[i64]) -> Result<Vec<i64>, OpError> {
    let (start, limit, delta) = match *args {
        [l] => (0, l, 1),
        [s, l] => (s, l, 1),
        [s, l, d] => (s, l, d),
        _ => {
            return Err(OpError::call(format!(
                "`{op}` takes 1 to 3 numbers (start, limit, delta), got {}",
                args.len()
            )))
        }
    };
    if delta == 0 {
        return Err(OpError::input(2, format!("`{op}`: `delta` must not be 0")));
    }
    let span = if delta > 0 {
        limit - start
    } else {
        start - limit
    };
    let n = if span <= 0 {
        0
    } else {
        ((span - 1) / delta.abs() + 1) as usize
    };
    if n > MAX_LEN {
        return Err(too_long(op, n));
    }
    Ok((0..n as i64).map(|k| start + k * delta).collect())
}

fn infer_make_range(call: &InferCall) -> Result<AbsVal, OpError> {
    if !(1..=3).contains(&call.inputs.len()) {
        return Err(OpError::call(format!(
            "`make_range` takes 1 to 3 numbers (start, limit, delta), got {}",
            call.inputs.len()
        )));
    }
    let mut args = Vec::new();
    for i in 0..call.inputs.len() {
        match const_int(call, i)? {
            Some(v) => args.push(v),
            None => return Ok(AbsVal::Any),
        }
    }
    Ok(AbsVal::Tuple(
        range("make_range", &args)?
            .into_iter()
            .map(i64_scalar)
            .collect(),
    ))
}

fn k_make_range(c: &KernelCall) -> Result<KValue, OpError> {
    let args: Vec<i64> = (0..c.inputs.len())
        .map(|i| knum_arg(c, i).map(|(_, v)| v.i()))
        .collect::<Result<_, _>>()?;
    Ok(KValue::Tuple(
        range("make_range", &args)?.into_iter().map(kint).collect(),
    ))
}

fn infer_seq_add(call: &InferCall) -> Result<AbsVal, OpError> {
    match (tuple_in(call, 0)?, tuple_in(call, 1)?) {
        (Some(a), Some(b)) => Ok(AbsVal::Tuple(a.iter().chain(b).cloned().collect())),
        _ => Ok(AbsVal::Any),
    }
}

fn k_seq_add(c: &KernelCall) -> Result<KValue, OpError> {
    let (a, b) = (tuple_arg(c, 0)?, tuple_arg(c, 1)?);
    Ok(KValue::Tuple(a.iter().chain(b).cloned().collect()))
}

pub(crate) fn has_float(v: &AbsVal) -> bool {
    match v {
        AbsVal::Tuple(items) => items.iter().any(has_float),
        AbsVal::Any => true,
        other => other.dtype().is_some_and(DType::is_float),
    }
}

fn grad_seq_add(b: &mut dyn GradBuilder, c: &GradCall) -> Vec<Option<GNode>> {
    let (Some(AbsVal::Tuple(x)), Some(AbsVal::Tuple(y))) =
        (c.input_values.first(), c.input_values.get(1))
    else {
        return vec![None, None];
    };
    let split = |b: &mut dyn GradBuilder, range: std::ops::Range<usize>, items: &[AbsVal]| {
        items.iter().any(has_float).then(|| {
            let parts: Vec<GNode> = range.map(|k| b.tuple_get(c.dout, k)).collect();
            b.make_tuple(&parts)
        })
    };
    let n = x.len();
    vec![split(b, 0..n, x), split(b, n..n + y.len(), y)]
}

/// Python's `slice(start, stop, step).indices(n)` applied: the positions taken.
fn slice_positions(n: usize, start: i64, stop: i64, step: i64) -> Result<Vec<usize>, OpError> {
    if step == 0 {
        return Err(OpError::input(3, "`SequenceSlice`: `step` must not be 0"));
    }
    let n = n as i64;
    let clamp = |v: i64, lo: i64, hi: i64| {
        let v = if v < 0 { v + n } else { v };
        v.clamp(lo, hi)
    };
    let mut out = Vec::new();
    if step > 0 {
        let (mut i, end) = (clamp(start, 0, n), clamp(stop, 0, n));
        while i < end {
            out.push(i as usize);
            i += step;
        }
    } else {
        let (mut i, end) = (clamp(start, -1, n - 1), clamp(stop, -1, n - 1));
        while i > end {
            out.push(i as usize);
            i += step;
        }
    }
    Ok(out)
}

fn infer_seq_slice(call: &InferCall) -> Result<AbsVal, OpError> {
    let items = tuple_in(call, 0)?;
    let mut args = Vec::new();
    for i in 1..4 {
        args.push(const_int(call, i)?);
    }
    let (Some(items), [Some(s), Some(e), Some(st)]) = (items, args.as_slice()) else {
        return Ok(AbsVal::Any);
    };
    let pos = slice_positions(items.len(), *s, *e, *st)?;
    Ok(AbsVal::Tuple(
        pos.into_iter().map(|p| items[p].clone()).collect(),
    ))
}

fn k_seq_slice(c: &KernelCall) -> Result<KValue, OpError> {
    let items = tuple_arg(c, 0)?;
    let a: Vec<i64> = (1..4)
        .map(|i| knum_arg(c, i).map(|(_, v)| v.i()))
        .collect::<Result<_, _>>()?;
    let pos = slice_positions(items.len(), a[0], a[1], a[2])?;
    Ok(KValue::Tuple(
        pos.into_iter().map(|p| items[p].clone()).collect(),
    ))
}

fn repeat<T: Clone>(op: &str, items: &[T], times: i64) -> Result<Vec<T>, OpError> {
    let n = items.len().saturating_mul(times.max(0) as usize);
    if n > MAX_LEN {
        return Err(too_long(op, n));
    }
    Ok(items.iter().cloned().cycle().take(n).collect())
}

fn infer_seq_mul(call: &InferCall) -> Result<AbsVal, OpError> {
    let items = tuple_in(call, 0)?;
    match (items, const_int(call, 1)?) {
        (Some(items), Some(k)) => Ok(AbsVal::Tuple(repeat("SequenceMul", items, k)?)),
        _ => Ok(AbsVal::Any),
    }
}

fn k_seq_mul(c: &KernelCall) -> Result<KValue, OpError> {
    let items = tuple_arg(c, 0)?;
    let (_, k) = knum_arg(c, 1)?;
    Ok(KValue::Tuple(repeat("SequenceMul", items, k.i())?))
}

fn infer_list_append(call: &InferCall) -> Result<AbsVal, OpError> {
    Ok(match tuple_in(call, 0)? {
        Some(items) => {
            let mut v = items.to_vec();
            v.push(call.inputs[1].clone());
            AbsVal::Tuple(v)
        }
        None => AbsVal::Any,
    })
}

fn k_list_append(c: &KernelCall) -> Result<KValue, OpError> {
    let mut v = tuple_arg(c, 0)?.to_vec();
    v.push(KValue::Tensor(c.tensor(1)?.clone()));
    Ok(KValue::Tuple(v))
}

/// Python's `list.insert` position for `index` in a list of `n`.
fn insert_at(n: usize, index: i64) -> usize {
    let n = n as i64;
    (if index < 0 { index + n } else { index }).clamp(0, n) as usize
}

fn infer_list_insert(call: &InferCall) -> Result<AbsVal, OpError> {
    match (tuple_in(call, 0)?, const_int(call, 1)?) {
        (Some(items), Some(k)) => {
            let mut v = items.to_vec();
            v.insert(insert_at(v.len(), k), call.inputs[2].clone());
            Ok(AbsVal::Tuple(v))
        }
        _ => Ok(AbsVal::Any),
    }
}

fn k_list_insert(c: &KernelCall) -> Result<KValue, OpError> {
    let mut v = tuple_arg(c, 0)?.to_vec();
    let (_, k) = knum_arg(c, 1)?;
    v.insert(
        insert_at(v.len(), k.i()),
        KValue::Tensor(c.tensor(2)?.clone()),
    );
    Ok(KValue::Tuple(v))
}

// ---------------------------------------------------------------------------
// Reductions of tuples of numbers.

/// A number's dtype and, when known, value.
pub(crate) type AbsNum = (DType, Option<Num>);

/// The numbers of a tuple input (their dtypes and known values).
pub(crate) fn tuple_nums(call: &InferCall, i: usize) -> Result<Option<Vec<AbsNum>>, OpError> {
    let Some(items) = tuple_in(call, i)? else {
        return Ok(None);
    };
    items
        .iter()
        .map(|v| {
            abs_num(v).ok_or_else(|| {
                OpError::input(
                    i,
                    format!(
                        "`{}` needs a tuple of numbers as `{}`, but it holds {v}",
                        call.op.name,
                        call.input_name(i)
                    ),
                )
            })
        })
        .collect::<Result<Vec<_>, _>>()
        .map(Some)
}

fn infer_count(call: &InferCall) -> Result<AbsVal, OpError> {
    let (seq_at, target_at, is_count) = match call.op.name {
        "SequenceCount" => (0, 1, true),
        _ => (1, 0, false),
    };
    let nums = tuple_nums(call, seq_at)?;
    let target = num_in(call, target_at)?;
    let values = nums
        .as_ref()
        .and_then(|n| n.iter().map(|e| e.1).collect::<Option<Vec<_>>>());
    let t = target.and_then(|t| t.1);
    Ok(match (values, t) {
        (Some(v), Some(t)) => {
            let count = v.iter().filter(|&&e| num_eq(e, t)).count();
            if is_count {
                i64_scalar(count as i64)
            } else {
                bool_scalar(Some(count > 0))
            }
        }
        _ if is_count => AbsVal::scalar(DType::I64),
        _ => bool_scalar(None),
    })
}

fn k_count(c: &KernelCall, is_count: bool) -> Result<KValue, OpError> {
    let (seq_at, target_at) = if is_count { (0, 1) } else { (1, 0) };
    let v = knums(tuple_arg(c, seq_at)?)?;
    let (_, t) = knum_arg(c, target_at)?;
    let count = v.iter().filter(|&&e| num_eq(e, t)).count();
    Ok(if is_count {
        kint(count as i64)
    } else {
        kbool(count > 0)
    })
}

/// The dtype of a reduction of numbers of these dtypes.
fn promote_all(dtypes: impl Iterator<Item = DType>) -> Option<DType> {
    dtypes.reduce(scalar_promote)
}

/// Max, min, sum or product of numbers in dtype `d`.
fn fold_nums(op: &str, d: DType, v: &[Num]) -> Result<Num, OpError> {
    let empty = || OpError::input(0, format!("`{op}` of an empty tuple has no value"));
    Ok(match op {
        "SequenceMax" => *v
            .iter()
            .reduce(|a, b| if b.f() > a.f() { b } else { a })
            .ok_or_else(empty)?,
        "SequenceMin" => *v
            .iter()
            .reduce(|a, b| if b.f() < a.f() { b } else { a })
            .ok_or_else(empty)?,
        "shape_mul" => {
            let mut p: i64 = 1;
            for e in v {
                p = p
                    .checked_mul(e.i())
                    .ok_or_else(|| OpError::input(0, "`shape_mul`: the product overflows i64"))?;
            }
            Num::Int(p)
        }
        _ => {
            if d.is_float() {
                Num::Float(v.iter().map(|e| e.f()).sum())
            } else {
                let mut s: i64 = 0;
                for e in v {
                    s = s.checked_add(e.i()).ok_or_else(|| {
                        OpError::input(0, format!("`{op}`: the sum overflows i64"))
                    })?;
                }
                Num::Int(s)
            }
        }
    })
}

fn infer_fold(call: &InferCall) -> Result<AbsVal, OpError> {
    let op = call.op.name;
    if op == "SequenceAddN" {
        if let Some(items) = tuple_in(call, 0)? {
            if items
                .iter()
                .any(|v| matches!(v, AbsVal::Tensor { shape, .. } if shape.rank() != Some(0)))
            {
                return infer_add_n_tensors(call, items);
            }
        }
    }
    let Some(nums) = tuple_nums(call, 0)? else {
        return Ok(AbsVal::Any);
    };
    let d = if op == "shape_mul" {
        DType::I64
    } else {
        promote_all(nums.iter().map(|e| e.0))
            .ok_or_else(|| OpError::input(0, format!("`{op}` of an empty tuple has no value")))?
    };
    let values: Option<Vec<Num>> = nums.iter().map(|e| e.1).collect();
    let value = match values {
        Some(v) => Some(fold_nums(op, d, &v)?),
        None => None,
    };
    Ok(scalar_out(d, value, false))
}

/// `SequenceAddN` of tensors: `Add` across the tuple.
fn infer_add_n_tensors(call: &InferCall, items: &[AbsVal]) -> Result<AbsVal, OpError> {
    let add = crate::lookup("Add").expect("Add is registered");
    let mut acc = items[0].clone();
    for item in &items[1..] {
        let inputs = [acc, item.clone()];
        acc = (add.infer)(&InferCall {
            op: add,
            inputs: &inputs,
            attrs: call.attrs,
        })
        .map_err(|e| OpError::input(0, format!("`SequenceAddN`: {}", e.message)))?;
    }
    Ok(acc)
}

fn k_fold(c: &KernelCall, op: &str) -> Result<KValue, OpError> {
    let items = tuple_arg(c, 0)?;
    if op == "SequenceAddN"
        && items
            .iter()
            .any(|v| matches!(v, KValue::Tensor(t) if t.rank() != 0))
    {
        let add = crate::lookup("Add").expect("Add is registered");
        let kernel = add.kernel.expect("Add has a kernel");
        let mut acc = items
            .first()
            .cloned()
            .ok_or_else(|| OpError::input(0, "an empty tuple"))?;
        for item in &items[1..] {
            let args = [acc.as_arg(), item.as_arg()];
            acc = kernel(&KernelCall {
                inputs: &args,
                weak: &[false, false],
                attrs: c.attrs,
            })?;
        }
        return Ok(acc);
    }
    let nums: Vec<(DType, Num)> = items
        .iter()
        .enumerate()
        .map(|(i, v)| knum(v, i))
        .collect::<Result<_, _>>()?;
    let d = if op == "shape_mul" {
        DType::I64
    } else {
        promote_all(nums.iter().map(|e| e.0))
            .ok_or_else(|| OpError::input(0, format!("`{op}` of an empty tuple has no value")))?
    };
    let v: Vec<Num> = nums.into_iter().map(|e| e.1).collect();
    Ok(num_out(d, fold_nums(op, d, &v)?))
}

fn grad_add_n(b: &mut dyn GradBuilder, c: &GradCall) -> Vec<Option<GNode>> {
    // AddnGradFunc: every element gets `dout` (summed back where broadcast).
    let Some(AbsVal::Tuple(items)) = c.input_values.first() else {
        return vec![None];
    };
    if !items.iter().any(has_float) {
        return vec![None];
    }
    let parts: Vec<GNode> = (0..items.len())
        .map(|k| {
            let e = b.tuple_get(c.inputs[0], k);
            b.prim("_SumToShapeOf", &[c.dout, e], vec![])
        })
        .collect();
    vec![Some(b.make_tuple(&parts))]
}

fn infer_zeros_like(call: &InferCall) -> Result<AbsVal, OpError> {
    let Some(nums) = tuple_nums(call, 0)? else {
        return Ok(AbsVal::Any);
    };
    Ok(AbsVal::Tuple(
        nums.iter()
            .map(|(d, _)| scalar_out(*d, Some(Num::Int(0)), false))
            .collect(),
    ))
}

fn k_zeros_like(c: &KernelCall) -> Result<KValue, OpError> {
    let items = tuple_arg(c, 0)?;
    let out: Result<Vec<KValue>, OpError> = items
        .iter()
        .enumerate()
        .map(|(i, v)| knum(v, i).map(|(d, _)| num_out(d, Num::Int(0))))
        .collect();
    Ok(KValue::Tuple(out?))
}

// ---------------------------------------------------------------------------
// Comparisons of tuples.

/// Python's comparison of two tuples of numbers.
fn compare_tuples(op: &str, a: &[Num], b: &[Num]) -> bool {
    use std::cmp::Ordering;
    let ord = a
        .iter()
        .zip(b)
        .map(|(x, y)| x.f().partial_cmp(&y.f()).unwrap_or(Ordering::Equal))
        .find(|o| *o != Ordering::Equal)
        .unwrap_or(a.len().cmp(&b.len()));
    match op.trim_start_matches("tuple_").trim_start_matches("list_") {
        "equal" => a.len() == b.len() && a.iter().zip(b).all(|(x, y)| num_eq(*x, *y)),
        "lt" => ord == Ordering::Less,
        "le" => ord != Ordering::Greater,
        "greater_than" => ord == Ordering::Greater,
        _ => ord != Ordering::Less,
    }
}

fn infer_tuple_cmp(call: &InferCall) -> Result<AbsVal, OpError> {
    let a = tuple_nums(call, 0)?;
    let b = tuple_nums(call, 1)?;
    let known =
        |v: Option<Vec<AbsNum>>| -> Option<Vec<Num>> { v?.into_iter().map(|e| e.1).collect() };
    Ok(match (known(a), known(b)) {
        (Some(x), Some(y)) => bool_scalar(Some(compare_tuples(call.op.name, &x, &y))),
        _ => bool_scalar(None),
    })
}

fn k_tuple_cmp(c: &KernelCall, op: &str) -> Result<KValue, OpError> {
    let (a, b) = (knums(tuple_arg(c, 0)?)?, knums(tuple_arg(c, 1)?)?);
    Ok(kbool(compare_tuples(op, &a, &b)))
}

// ---------------------------------------------------------------------------
// The table.

const SEQ: Schema = Schema::ms(&[], &[("sequence", "A tuple.")]);
const NUMS: Schema = Schema::ms(&[], &[("sequence", "A non-empty tuple of numbers.")]);
/// (MindSpore calls the operands of `tuple_lt` and the like `input_0`,
/// `input_1`; of `tuple_equal` and `list_equal` `x`, `y`.)
const TWO_TUPLES: Schema = Schema::ms(
    &[Override::inputs(&["x", "y"], why::INPUT_NAMES)],
    &[("x", "A tuple of numbers."), ("y", "A tuple of numbers.")],
);

pub(crate) const fn seq_op(
    name: &'static str,
    doc: &'static str,
    params: Schema,
    infer: crate::InferFn,
    grad: Option<crate::GradFn>,
    kernel: crate::KernelFn,
) -> OpDef {
    OpDef {
        name,
        category: Category::Structure,
        doc,
        schema: params,
        variadic: false,
        output: OutputDef::Single,
        infer,
        grad,
        kernel: Some(kernel),
        traits: Traits::NONE,
    }
}

macro_rules! tuple_cmp {
    ($name:literal, $doc:literal) => {
        seq_op($name, $doc, TWO_TUPLES, infer_tuple_cmp, None, |c| {
            k_tuple_cmp(c, $name)
        })
    };
}

pub const OPS: &[OpDef] = &[
    seq_op("sequence_len", "The number of elements of a tuple, `len(sequence)`: an `i64`.", SEQ, infer_len, None, |c| {
        Ok(kint(tuple_arg(c, 0)?.len() as i64))
    }),
    OpDef {
        name: "make_range",
        category: Category::Structure,
        doc: "`tuple(range(start, limit, delta))` from 1 to 3 integers (`make_range(limit)`, `make_range(start, limit)`, `make_range(start, limit, delta)`). Its length is known only when the numbers are constants.",
        schema: Schema::ms(
            &[],
            &[
                ("start", "The first number (or, alone, the limit)."),
                ("limit", "The end, excluded."),
                ("delta", "The step, not 0 (default 1)."),
            ],
        ),
        variadic: true,
        output: OutputDef::Single,
        infer: infer_make_range,
        grad: None,
        kernel: Some(k_make_range),
        traits: Traits::NONE,
    },
    seq_op(
        "SequenceAdd",
        "The concatenation `input_1 + input_2` of two tuples.",
        Schema::ms(&[], &[("input_1", "A tuple."), ("input_2", "A tuple.")]),
        infer_seq_add,
        Some(grad_seq_add),
        k_seq_add,
    ),
    seq_op(
        "SequenceSlice",
        "`seq[start:stop:step]` with Python's rules (negative positions count from the end, out-of-range ones are clamped). Its length is known only when the numbers are constants.",
        Schema::ms(
            &[],
            &[
                ("seq", "A tuple."),
                ("start", "An integer position."),
                ("stop", "An integer position, excluded."),
                ("step", "A non-zero integer."),
            ],
        ),
        infer_seq_slice,
        None,
        k_seq_slice,
    ),
    seq_op(
        "SequenceMul",
        "The tuple repeated `scalar` times, `sequence * scalar` (empty for 0 or less).",
        Schema::ms(&[], &[("sequence", "A tuple."), ("scalar", "An integer.")]),
        infer_seq_mul,
        None,
        k_seq_mul,
    ),
    seq_op(
        "SequenceCount",
        "How many elements of a tuple of numbers equal `target`, `sequence.count(target)`: an `i64`.",
        Schema::ms(&[], &[("sequence", "A tuple of numbers."), ("target", "A number.")]),
        infer_count,
        None,
        |c| k_count(c, true),
    ),
    seq_op(
        "InSequence",
        "Whether `element` equals an element of the tuple, `element in input_data`: a bool.",
        Schema::ms(&[], &[("element", "A number."), ("input_data", "A tuple of numbers.")]),
        infer_count,
        None,
        |c| k_count(c, false),
    ),
    seq_op("SequenceMax", "The largest number of a non-empty tuple, in the tuple's highest dtype.", NUMS, infer_fold, None, |c| {
        k_fold(c, "SequenceMax")
    }),
    seq_op("SequenceMin", "The smallest number of a non-empty tuple, in the tuple's highest dtype.", NUMS, infer_fold, None, |c| {
        k_fold(c, "SequenceMin")
    }),
    seq_op(
        "SequenceAddN",
        "The sum of the elements of a non-empty tuple: numbers (in their highest dtype) or tensors (added with broadcasting).",
        Schema::ms(&[], &[("inputs", "A non-empty tuple of numbers or tensors.")]),
        infer_fold,
        Some(grad_add_n),
        |c| k_fold(c, "SequenceAddN"),
    ),
    seq_op("shape_mul", "The product of a tuple of integers (a shape's element count): an `i64`; 1 for `()`.", Schema::ms(
        &[],
        &[("input_data", "A tuple of integers.")],
    ), infer_fold, None, |c| {
        k_fold(c, "shape_mul")
    }),
    seq_op("SequenceZerosLike", "A tuple of zeros with the length and element dtypes of `sequence` (a tuple of numbers).", SEQ, infer_zeros_like, None, k_zeros_like),
    tuple_cmp!("tuple_equal", "Whether two tuples of numbers are equal, `x == y`."),
    tuple_cmp!("tuple_lt", "Whether `x < y` for two tuples of numbers, compared as Python does (lexicographically)."),
    tuple_cmp!("tuple_le", "Whether `x <= y` for two tuples of numbers, compared lexicographically."),
    tuple_cmp!("tuple_greater_than", "Whether `x > y` for two tuples of numbers, compared lexicographically."),
    tuple_cmp!("tuple_greater_equal", "Whether `x >= y` for two tuples of numbers, compared lexicographically."),
    tuple_cmp!("list_equal", "Whether two lists of numbers are equal, `x == y` (lists are tuples here)."),
    tuple_cmp!("list_lt", "Whether `x < y` for two lists of numbers, compared lexicographically."),
    tuple_cmp!("list_le", "Whether `x <= y` for two lists of numbers, compared lexicographically."),
    tuple_cmp!("list_greater_than", "Whether `x > y` for two lists of numbers, compared lexicographically."),
    tuple_cmp!("list_greater_equal", "Whether `x >= y` for two lists of numbers, compared lexicographically."),
    seq_op(
        "ListAppend",
        "The list with `target` appended, `input_data + [target]` (lists are tuples here).",
        Schema::ms(&[], &[("input_data", "A list."), ("target", "The element to append.")]),
        infer_list_append,
        None,
        k_list_append,
    ),
    seq_op(
        "ListInsert",
        "The list with `target` inserted before position `index`, as `list.insert` (lists are tuples here).",
        Schema::ms(
            &[],
            &[
                ("input_data", "A list."),
                ("index", "An integer position (negative counts from the end; clamped)."),
                ("target", "The element to insert."),
            ],
        ),
        infer_list_insert,
        None,
        k_list_insert,
    ),
];

pub(crate) fn samples() -> Vec<crate::eager::Sample> {
    use crate::eager::{ints, random_f64, Sample};
    let i = |v: i64| ints(DType::I64, &[], &[v]);
    let f = |v: f64| KValue::Tensor(Tensor::scalar(DType::F64, v));
    let tup = |v: &[i64]| KValue::Tuple(v.iter().map(|&x| i(x)).collect());
    // make_range, SequenceSlice, SequenceMul and ListInsert know their
    // result's length only from constant operands, which samples lack: they
    // are checked in tests/kernels/sequences.rs.
    vec![
        Sample::new("sequence_len", vec![tup(&[4, 5, 6])]),
        Sample::new("SequenceAdd", vec![tup(&[1, 2]), tup(&[3])]),
        Sample::new(
            "SequenceAdd",
            vec![
                KValue::Tuple(vec![random_f64(&[2], 450, -1.0, 1.0), f(0.5)]),
                KValue::Tuple(vec![random_f64(&[3], 451, -1.0, 1.0)]),
            ],
        ),
        Sample::new("SequenceCount", vec![tup(&[1, 2, 1]), i(1)]),
        Sample::new("InSequence", vec![i(2), tup(&[1, 2, 1])]),
        Sample::new("SequenceMax", vec![tup(&[1, 5, 2])]),
        Sample::new("SequenceMin", vec![KValue::Tuple(vec![f(1.5), i(1)])]),
        Sample::new("SequenceAddN", vec![KValue::Tuple(vec![f(1.5), f(-0.25)])]),
        Sample::new(
            "SequenceAddN",
            vec![KValue::Tuple(vec![
                random_f64(&[2, 3], 452, -1.0, 1.0),
                random_f64(&[3], 453, -1.0, 1.0),
            ])],
        ),
        Sample::new("shape_mul", vec![tup(&[2, 3, 4])]),
        Sample::new("SequenceZerosLike", vec![tup(&[2, 3])]),
        Sample::new("tuple_equal", vec![tup(&[1, 2]), tup(&[1, 2])]),
        Sample::new("tuple_lt", vec![tup(&[1, 2]), tup(&[1, 2, 0])]),
        Sample::new("list_greater_equal", vec![tup(&[2]), tup(&[1, 9])]),
        Sample::new("ListAppend", vec![tup(&[1, 2]), i(3)]),
    ]
}
