//! Arguments of an entry graph from the command line (`--arg NAME=VALUE`,
//! `--dim SYM=N`, spec §9).
//!
//! VALUE is one of:
//! - `zeros`, `ones`, `random` or `random(low, high)`: shaped from the
//!   parameter's annotation, its symbolic dimensions from `--dim` or from other
//!   arguments. `random` is deterministic (SplitMix64 seeded with the
//!   parameter's position), by dtype: floats uniform in `[-1, 1)`, integers in
//!   `[0, 10)`, booleans fair coins. `random(low, high)` is as deterministic:
//!   floats uniform in `[low, high)`, integers uniform among the integers in
//!   `[low, high)` (`--arg labels=random(0, 4)`: labels of 4 classes); the
//!   bounds are numbers with `low < high`, integers for an integer dtype and
//!   within its range, and booleans have none;
//! - a path ending in `.npy` (relative to the working directory): its dtype
//!   and shape must match the annotation;
//! - a literal: a scalar, a tensor literal, a tuple, `true`, `none`, ...
//!   (any constant expression of the DSL), converted to the parameter's
//!   declared dtype (`--arg labels=[1, 2]` for `labels: i32[B]`).

use std::collections::HashMap;

use ir::{Body, Dim, GraphId, Shape, Ty};
use tensor::Tensor;

use crate::machine::{ExecOptions, Executor};
use crate::value::{TensorVal, Value};
use crate::weights::Filler;

/// A parameter of an entry graph.
#[derive(Debug, Clone, PartialEq)]
pub struct EntryParam {
    pub name: String,
    pub ty: Option<Ty>,
}

/// The parameters of a top-level graph.
pub fn entry_params(body: &Body) -> Vec<EntryParam> {
    body.graph(GraphId(0))
        .params
        .iter()
        .map(|&p| {
            let node = body.node(p);
            EntryParam {
                name: node.name.clone().unwrap_or_default(),
                ty: node.annotation.as_ref().map(|(t, _)| t.clone()),
            }
        })
        .collect()
}

/// The symbolic dimensions the parameters' annotations name (`B` in
/// `x: f32[B, 784]`), in order of first appearance.
pub fn dim_symbols(params: &[EntryParam]) -> Vec<String> {
    fn walk(t: &Ty, out: &mut Vec<String>) {
        match t {
            Ty::Tensor(_, Shape::Ranked(dims)) => {
                for d in dims {
                    if let Dim::Sym(s) = d {
                        if !out.contains(s) {
                            out.push(s.clone());
                        }
                    }
                }
            }
            Ty::Tuple(items) => items.iter().for_each(|i| walk(i, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    for p in params {
        if let Some(t) = &p.ty {
            walk(t, &mut out);
        }
    }
    out
}

/// Why arguments could not be made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArgError {
    pub message: String,
    /// A mistake in the command line (exit 2) rather than in a value (exit 1).
    pub usage: bool,
}

impl ArgError {
    fn usage(message: impl Into<String>) -> ArgError {
        ArgError {
            message: message.into(),
            usage: true,
        }
    }

    fn input(message: impl Into<String>) -> ArgError {
        ArgError {
            message: message.into(),
            usage: false,
        }
    }
}

impl std::fmt::Display for ArgError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// Splits `NAME=VALUE`.
pub fn split_assignment(s: &str, flag: &str) -> Result<(String, String), ArgError> {
    match s.split_once('=') {
        Some((k, v)) if !k.trim().is_empty() => Ok((k.trim().to_string(), v.trim().to_string())),
        _ => Err(ArgError::usage(format!(
            "`{flag} {s}`: expected {}",
            if flag == "--dim" {
                "SYM=N"
            } else {
                "NAME=VALUE"
            }
        ))),
    }
}

/// `--dim SYM=N` values.
pub fn parse_dims(dims: &[String]) -> Result<HashMap<String, usize>, ArgError> {
    let mut out = HashMap::new();
    for d in dims {
        let (k, v) = split_assignment(d, "--dim")?;
        let n: usize = v.parse().map_err(|_| {
            ArgError::usage(format!(
                "`--dim {d}`: `{v}` is not a size (a non-negative integer)"
            ))
        })?;
        if out.insert(k.clone(), n).is_some_and(|old| old != n) {
            return Err(ArgError::usage(format!("`--dim {k}` is given twice")));
        }
    }
    Ok(out)
}

/// Evaluates a literal (any constant expression of the DSL).
pub fn literal_value(text: &str) -> Result<Value, String> {
    if text.contains('\n') || text.contains('}') || text.contains('#') {
        return Err(format!("`{text}` is not a literal"));
    }
    let src = format!("graph __arg() {{\n  return {text}\n}}\n");
    let a = analysis::analyze(&src);
    if let Some(d) = a
        .diagnostics
        .iter()
        .find(|d| d.severity == analysis::Severity::Error)
    {
        // The wrapper's closing brace is the end of the value.
        let message = d.message.replace("found `}`", "found the end of the value");
        return Err(format!("`{text}` is not a valid value: {message}"));
    }
    let program = a.source.program();
    let mut ex = Executor::new(&program, ExecOptions::default());
    ex.call("__arg", Vec::new())
        .map_err(|e| format!("`{text}` is not a valid value: {}", e.message))
}

/// A plain numeric literal (a number, or nested lists of numbers) for an
/// `f64` parameter, read in f64; `None` for anything else.
fn wide_float_literal(text: &str, ty: Option<&Ty>) -> Option<Tensor> {
    match ty? {
        Ty::Tensor(tensor::DType::F64, _) | Ty::Scalar(tensor::DType::F64) => {}
        _ => return None,
    }
    let mut data = Vec::new();
    let mut shape: Option<Vec<usize>> = None;
    // Each number's enclosing list lengths: the shape, checked rectangular.
    let mut counts: Vec<usize> = Vec::new();
    let mut number = String::new();
    // Every number at the same depth (`[1, [2]]` is no tensor).
    let mut depth: Option<usize> = None;
    let mut flush = |number: &mut String, data: &mut Vec<f64>, counts: &mut Vec<usize>| {
        if number.is_empty() {
            return Some(());
        }
        if *depth.get_or_insert(counts.len()) != counts.len() {
            return None;
        }
        data.push(number.parse::<f64>().ok()?);
        number.clear();
        if let Some(c) = counts.last_mut() {
            *c += 1;
        }
        Some(())
    };
    let mut lens: Vec<Vec<usize>> = Vec::new();
    let mut last = ' ';
    for ch in text.trim().chars() {
        // An empty element (`[,`, `,,`, `,]`): the DSL says what is wrong.
        if (ch == ',' || ch == ']') && (last == ',' || last == '[') && !(ch == ']' && last == '[') {
            return None;
        }
        if !ch.is_whitespace() {
            last = ch;
        }
        match ch {
            '[' => {
                if !number.is_empty() {
                    return None;
                }
                if let Some(c) = counts.last_mut() {
                    *c += 1;
                }
                counts.push(0);
                if lens.len() < counts.len() {
                    lens.push(Vec::new());
                }
            }
            ']' => {
                flush(&mut number, &mut data, &mut counts)?;
                let n = counts.pop()?;
                lens[counts.len()].push(n);
            }
            ',' => flush(&mut number, &mut data, &mut counts)?,
            c if c.is_whitespace() => {}
            c if c.is_ascii_digit() || "+-.eE".contains(c) => number.push(c),
            _ => return None,
        }
    }
    flush(&mut number, &mut data, &mut counts)?;
    if !counts.is_empty() {
        return None;
    }
    for level in &lens {
        let first = *level.first()?;
        if level.iter().any(|&n| n != first) || first == 0 {
            return None;
        }
        shape.get_or_insert_with(Vec::new).push(first);
    }
    let shape = shape.unwrap_or_default();
    if shape.iter().product::<usize>() != data.len() {
        return None;
    }
    Tensor::from_f64(shape, data).ok()
}

/// The entry's arguments from `--arg` assignments, in parameter order.
pub fn build_args(
    ex: &Executor,
    params: &[EntryParam],
    given: &[(String, String)],
    dims: &HashMap<String, usize>,
) -> Result<Vec<Value>, ArgError> {
    // Match each assignment to a parameter.
    let mut values: Vec<Option<&str>> = vec![None; params.len()];
    for (name, value) in given {
        let index = match params.iter().position(|p| p.name == *name) {
            Some(i) => i,
            None => match name.parse::<usize>() {
                Ok(i) if i < params.len() => i,
                Ok(i) => {
                    return Err(ArgError::usage(format!(
                    "`--arg {name}=...`: the entry has {} parameter{}, so there is no position {i}",
                    params.len(),
                    if params.len() == 1 { "" } else { "s" }
                )))
                }
                Err(_) => {
                    let names: Vec<String> =
                        params.iter().map(|p| format!("`{}`", p.name)).collect();
                    let close = ops::similar_names(name, params.iter().map(|p| p.name.as_str()));
                    let hint = match close.as_slice() {
                        [] => String::new(),
                        [one, ..] => format!("; did you mean `{one}`?"),
                    };
                    return Err(ArgError::usage(format!(
                        "`--arg {name}=...`: the entry has no parameter `{name}`{hint} (its parameters: {})",
                        if names.is_empty() { "none".to_string() } else { names.join(", ") }
                    )));
                }
            },
        };
        if values[index].is_some() {
            return Err(ArgError::usage(format!(
                "parameter `{}` is given twice",
                params[index].name
            )));
        }
        values[index] = Some(value);
    }
    let missing: Vec<String> = params
        .iter()
        .zip(&values)
        .filter(|(_, v)| v.is_none())
        .map(|(p, _)| format!("`{}`", p.name))
        .collect();
    if !missing.is_empty() {
        return Err(ArgError::usage(format!(
            "missing argument{} {} (give {} with `--arg NAME=VALUE`)",
            if missing.len() == 1 { "" } else { "s" },
            missing.join(", "),
            if missing.len() == 1 { "it" } else { "them" }
        )));
    }
    let mut symbols: HashMap<String, usize> = dims.clone();
    let mut out: Vec<Option<Value>> = vec![None; params.len()];
    // Files and literals first: they may fix symbolic sizes for the fillers.
    for (i, (p, v)) in params.iter().zip(&values).enumerate() {
        let v = v.expect("checked above");
        if is_filler(v) {
            continue;
        }
        let value = if v.ends_with(".npy") {
            // Regular files only; the header's size is checked against the
            // memory budget before the data is read.
            let budget = ex.available_memory();
            let mut refused = false;
            let t = tensor::file::load_npy(std::path::Path::new(v), &mut |h| {
                let bytes = tensor::storage_bytes(h.dtype, &h.shape).unwrap_or(usize::MAX);
                if bytes > budget {
                    refused = true;
                    return Err(format!(
                        "{v} holds a {}{:?} array of {}, more than the memory budget allows ({} free; `--max-memory`)",
                        h.dtype,
                        h.shape,
                        tensor::limits::format_bytes(bytes),
                        tensor::limits::format_bytes(budget)
                    ));
                }
                Ok(())
            })
            .map_err(|e| {
                ArgError::input(if refused || e.0.starts_with(v) {
                    format!("argument `{}`: {e}", p.name)
                } else {
                    format!("argument `{}`: {v} is not a valid .npy file: {e}", p.name)
                })
            })?;
            fit(ex, Value::tensor(t), p.ty.as_ref(), false, &mut symbols)
                .map_err(|m| ArgError::input(format!("argument `{}` ({v}): {m}", p.name)))?
        } else if let Some(t) = wide_float_literal(v, p.ty.as_ref()) {
            // An f64 parameter keeps every digit given (a DSL literal is f32).
            fit(ex, Value::tensor(t), p.ty.as_ref(), true, &mut symbols)
                .map_err(|m| ArgError::input(format!("argument `{}` ({v}): {m}", p.name)))?
        } else {
            let lit = literal_value(v)
                .map_err(|m| ArgError::usage(format!("argument `{}`: {m}", p.name)))?;
            fit(ex, lit, p.ty.as_ref(), true, &mut symbols)
                .map_err(|m| ArgError::input(format!("argument `{}` ({v}): {m}", p.name)))?
        };
        out[i] = Some(value);
    }
    for (i, (p, v)) in params.iter().zip(&values).enumerate() {
        let v = v.expect("checked above");
        if !is_filler(v) {
            continue;
        }
        let Some(ty) = &p.ty else {
            return Err(ArgError::usage(format!(
                "argument `{}`: `{v}` needs the parameter's type, but it has no annotation; give a value",
                p.name
            )));
        };
        let kind = filler(v)
            .expect("a filler")
            .map_err(|m| ArgError::usage(format!("argument `{}` ({v}): {m}", p.name)))?;
        let value = filled(ex, kind, ty, &symbols, i as u64).map_err(|m| {
            let m = format!("argument `{}` ({v}): {m}", p.name);
            // A value too large to make is a failed run (exit code 1), as a
            // result beyond the budget is; a missing `--dim` is a usage error.
            if m.contains("memory budget") || m.contains("cannot exist") {
                ArgError::input(m)
            } else {
                ArgError::usage(m)
            }
        })?;
        out[i] = Some(value);
    }
    Ok(out
        .into_iter()
        .map(|v| v.expect("every parameter"))
        .collect())
}

fn is_filler(v: &str) -> bool {
    filler(v).is_some()
}

/// `zeros`, `ones`, `random` or `random(low, high)` (with why its bounds
/// cannot be used); `None` for other values.
pub fn filler(v: &str) -> Option<Result<Filler, String>> {
    let v = v.trim();
    match v {
        "zeros" => return Some(Ok(Filler::Zeros)),
        "ones" => return Some(Ok(Filler::Ones)),
        "random" => return Some(Ok(Filler::Random)),
        _ => {}
    }
    let inner = v.strip_prefix("random")?.trim_start().strip_prefix('(')?;
    let Some(inner) = inner.strip_suffix(')') else {
        return Some(Err("expected `random(low, high)`".into()));
    };
    let bounds: Vec<&str> = inner.split(',').map(str::trim).collect();
    let [low, high] = bounds.as_slice() else {
        return Some(Err(format!(
            "expected two bounds, `random(low, high)`, got {}",
            bounds.iter().filter(|b| !b.is_empty()).count()
        )));
    };
    let number = |b: &str| -> Result<f64, String> {
        b.parse::<f64>()
            .ok()
            .filter(|x| x.is_finite())
            .ok_or_else(|| format!("`{b}` is not a number (expected `random(low, high)`)"))
    };
    Some((|| {
        let (low, high) = (number(low)?, number(high)?);
        if low >= high {
            return Err(format!(
                "the low bound must be below the high bound (values are in [low, high)), but {low} >= {high}"
            ));
        }
        Ok(Filler::Uniform(low, high))
    })())
}

fn filled(
    ex: &Executor,
    kind: Filler,
    ty: &Ty,
    symbols: &HashMap<String, usize>,
    seed: u64,
) -> Result<Value, String> {
    let dims = |s: &str| symbols.get(s).copied();
    let budget = ex.available_memory();
    match ty {
        Ty::Scalar(d) => {
            let t = crate::weights::make_filled(kind, *d, &Shape::scalar(), &dims, seed, budget)?;
            Ok(ex.scalar(t))
        }
        Ty::Tensor(d, shape) => Ok(ex.tensor(crate::weights::make_filled(
            kind, *d, shape, &dims, seed, budget,
        )?)),
        Ty::Tuple(items) => Ok(Value::tuple(
            items
                .iter()
                .enumerate()
                .map(|(k, t)| {
                    filled(
                        ex,
                        kind,
                        t,
                        symbols,
                        seed.wrapping_mul(31).wrapping_add(k as u64 + 1),
                    )
                })
                .collect::<Result<Vec<_>, _>>()?,
        )),
        Ty::None => Ok(Value::None),
        other => Err(format!("a {other} cannot be made this way; give a value")),
    }
}

/// Checks a value against a declared type (binding symbolic sizes) and
/// converts it: literals take the declared dtype; file data must have it.
fn fit(
    ex: &Executor,
    v: Value,
    ty: Option<&Ty>,
    literal: bool,
    symbols: &mut HashMap<String, usize>,
) -> Result<Value, String> {
    let Some(ty) = ty else {
        return Ok(rewrap(ex, v));
    };
    match (ty, &v) {
        (Ty::Unknown | Ty::Func(_), _) => Ok(rewrap(ex, v)),
        (Ty::Scalar(d), Value::Tensor(t)) => {
            let tensor = t.tensor();
            if tensor.rank() != 0 {
                return Err(format!(
                    "expected a {d} scalar, got a tensor of shape {:?}",
                    tensor.shape()
                ));
            }
            if !literal && tensor.dtype() != *d {
                return Err(format!(
                    "the data is {} but the parameter is declared {d}",
                    tensor.dtype()
                ));
            }
            check_kind(tensor, *d, literal)?;
            Ok(ex.scalar(tensor.cast(*d)))
        }
        (Ty::Tensor(d, shape), Value::Tensor(t)) => {
            let tensor = t.tensor();
            if !literal && tensor.dtype() != *d {
                return Err(format!(
                    "the data is {} but the parameter is declared {ty}",
                    tensor.dtype()
                ));
            }
            check_kind(tensor, *d, literal)?;
            check_shape(tensor.shape(), shape, symbols)
                .map_err(|m| format!("{m} (the parameter is declared {ty})"))?;
            Ok(ex.tensor(tensor.cast(*d)))
        }
        (Ty::Tuple(tys), Value::Tuple(items)) => {
            if tys.len() != items.len() {
                return Err(format!(
                    "expected a tuple of {} elements, got {}",
                    tys.len(),
                    items.len()
                ));
            }
            Ok(Value::tuple(
                tys.iter()
                    .zip(items.iter())
                    .enumerate()
                    .map(|(k, (t, x))| {
                        fit(ex, x.clone(), Some(t), literal, symbols)
                            .map_err(|m| format!("element {k}: {m}"))
                    })
                    .collect::<Result<Vec<_>, _>>()?,
            ))
        }
        (Ty::None, Value::None) | (Ty::Str, Value::Str(_)) => Ok(v),
        (ty, v) => Err(format!("expected {ty}, got {}", v.describe())),
    }
}

/// A float literal for an integer or boolean parameter loses information: refuse it.
fn check_kind(t: &Tensor, d: tensor::DType, literal: bool) -> Result<(), String> {
    if literal && t.dtype().is_float() && !d.is_float() {
        return Err(format!("a float literal cannot be converted to {d}"));
    }
    Ok(())
}

fn check_shape(
    actual: &[usize],
    declared: &Shape,
    symbols: &mut HashMap<String, usize>,
) -> Result<(), String> {
    let Shape::Ranked(dims) = declared else {
        return Ok(());
    };
    if dims.len() != actual.len() {
        return Err(format!(
            "the shape is {actual:?}, of rank {} instead of {}",
            actual.len(),
            dims.len()
        ));
    }
    for (i, (d, &n)) in dims.iter().zip(actual).enumerate() {
        match d {
            Dim::Known(k) if *k as usize != n => {
                return Err(format!(
                    "the shape is {actual:?}: dimension {i} is {n}, not {k}"
                ))
            }
            Dim::Sym(s) => match symbols.get(s) {
                Some(&m) if m != n => {
                    return Err(format!(
                        "the shape is {actual:?}: dimension {i} is {n}, but `{s}` is {m}"
                    ))
                }
                Some(_) => {}
                None => {
                    symbols.insert(s.clone(), n);
                }
            },
            _ => {}
        }
    }
    Ok(())
}

/// The same value with its tensors counted by `ex` and not weak.
fn rewrap(ex: &Executor, v: Value) -> Value {
    match v {
        Value::Tensor(t) => {
            let scalar = t.scalar;
            let mut n = TensorVal::new(t.tensor().clone(), Some(ex.memory_counter()));
            n.scalar = scalar;
            Value::Tensor(n)
        }
        Value::Tuple(items) => Value::tuple(items.iter().map(|i| rewrap(ex, i.clone())).collect()),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f64_ty(dims: &[i64]) -> Ty {
        Ty::Tensor(tensor::DType::F64, Shape::known(dims))
    }

    #[test]
    fn f64_literals_keep_their_digits() {
        let t = wide_float_literal(
            "[[0.1, -2e-3], [3, 0.7174987660822651]]",
            Some(&f64_ty(&[2, 2])),
        )
        .unwrap();
        assert_eq!(t.shape(), &[2, 2]);
        assert_eq!(t.to_f64_vec(), vec![0.1, -2e-3, 3.0, 0.7174987660822651]);
        let s = wide_float_literal(" 0.1 ", Some(&Ty::Scalar(tensor::DType::F64))).unwrap();
        assert_eq!(s.to_f64_vec(), vec![0.1]);
        // Not plain numbers, ragged, or not f64: the DSL reads it.
        for text in [
            "[1, [2]]",
            "[[1, 2], [3]]",
            "[]",
            "1, 2",
            "Exp(1.0)",
            "[1.0,, 2.0]",
        ] {
            assert!(
                wide_float_literal(text, Some(&f64_ty(&[2]))).is_none(),
                "{text}"
            );
        }
        let f32 = Ty::Tensor(tensor::DType::F32, Shape::known(&[1]));
        assert!(wide_float_literal("[0.1]", Some(&f32)).is_none());
    }
}
