//! What a debugger shows of a value: dtype, shape, statistics, NaN and Inf
//! counts, first elements, and slices.

use exec::Value;
use tensor::{DType, Tensor};

/// How many elements a summary lists.
pub const FIRST: usize = 8;
/// How many children an expanded value lists.
pub const MAX_CHILDREN: usize = 1000;

/// Statistics of a tensor's elements (finite ones for min, max, mean, std).
#[derive(Debug, Clone, PartialEq)]
pub struct Stats {
    pub count: usize,
    pub nan: usize,
    pub inf: usize,
    pub min: f64,
    pub max: f64,
    pub mean: f64,
    pub std: f64,
}

pub fn stats(xs: &[f64]) -> Stats {
    stats_of(xs.iter().copied())
}

/// Statistics in one pass (Welford's mean and variance), so a tensor's
/// elements are read in place, never copied.
pub fn stats_of(xs: impl Iterator<Item = f64>) -> Stats {
    let (mut count, mut nan, mut inf, mut n) = (0, 0, 0usize, 0usize);
    let (mut min, mut max, mut mean, mut m2) = (f64::INFINITY, f64::NEG_INFINITY, 0.0, 0.0);
    for x in xs {
        count += 1;
        if x.is_nan() {
            nan += 1;
        } else if x.is_infinite() {
            inf += 1;
        } else {
            n += 1;
            min = min.min(x);
            max = max.max(x);
            let d = x - mean;
            mean += d / n as f64;
            m2 += d * (x - mean);
        }
    }
    Stats {
        count,
        nan,
        inf,
        min,
        max,
        mean: if n > 0 { mean } else { f64::NAN },
        std: if n > 0 {
            (m2 / n as f64).sqrt()
        } else {
            f64::NAN
        },
    }
}

/// Elements `start..start + len` of a tensor as `f64`, read in place.
pub fn elements(t: &Tensor, start: usize, len: usize) -> Box<dyn Iterator<Item = f64> + '_> {
    let r = start..start + len;
    match t.buffer() {
        tensor::Buffer::F32(v) => Box::new(v[r].iter().map(|&x| x as f64)),
        tensor::Buffer::F64(v) => Box::new(v[r].iter().copied()),
        tensor::Buffer::I64(v) => Box::new(v[r].iter().map(|&x| x as f64)),
        tensor::Buffer::Bool(v) => Box::new(v[r].iter().map(|&x| x as u8 as f64)),
    }
}

/// Every element of a tensor, read in place.
pub fn all(t: &Tensor) -> Box<dyn Iterator<Item = f64> + '_> {
    elements(t, 0, t.numel())
}

/// A number as the value column shows it: the shortest text that reads
/// back to the same value of its dtype (f32 elements as f32s).
pub fn num(x: f64, dtype: DType) -> String {
    if dtype == DType::Bool {
        return if x != 0.0 { "true" } else { "false" }.into();
    }
    if !dtype.is_float() && x.is_finite() {
        return format!("{}", x as i64);
    }
    if x.is_nan() {
        return "nan".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf" } else { "-inf" }.into();
    }
    if dtype == DType::F64 {
        format!("{x}")
    } else {
        format!("{}", x as f32)
    }
}

/// A statistic, to 6 significant digits.
pub fn compact(x: f64) -> String {
    if !x.is_finite() {
        return num(x, DType::F64);
    }
    let a = x.abs();
    if a != 0.0 && !(1e-4..1e7).contains(&a) {
        return format!("{x:.5e}");
    }
    let digits = if a == 0.0 {
        0
    } else {
        (5 - a.log10().floor() as i32).max(0) as usize
    };
    let s = format!("{x:.digits$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// `f32[2, 3]`.
pub fn type_name(t: &Tensor, scalar: bool) -> String {
    if scalar || t.rank() == 0 {
        return format!("{}", t.dtype());
    }
    let dims: Vec<String> = t.shape().iter().map(|d| d.to_string()).collect();
    format!("{}[{}]", t.dtype(), dims.join(", "))
}

/// The one-line summary of elements `start..start + len` of `t`, a block
/// of shape `shape`.
pub fn summary_range(t: &Tensor, start: usize, len: usize, shape: &[usize]) -> String {
    let dtype = t.dtype();
    let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
    let ty = if shape.is_empty() {
        format!("{dtype}")
    } else {
        format!("{dtype}[{}]", dims.join(", "))
    };
    if len == 0 {
        return format!("{ty} (empty)");
    }
    if shape.is_empty() && len == 1 {
        let x = elements(t, start, 1).next().unwrap_or(f64::NAN);
        return format!("{ty} {}", num(x, dtype));
    }
    let s = stats_of(elements(t, start, len));
    let first: Vec<String> = elements(t, start, len.min(FIRST))
        .map(|x| num(x, dtype))
        .collect();
    let more = if len > FIRST { ", ..." } else { "" };
    let mut out = if s.min.is_finite() {
        format!(
            "{ty} min={} max={} mean={} std={}",
            num(s.min, dtype),
            num(s.max, dtype),
            compact(s.mean),
            compact(s.std)
        )
    } else {
        ty
    };
    if dtype.is_float() {
        out.push_str(&format!(" nan={} inf={}", s.nan, s.inf));
    }
    out.push_str(&format!(" [{}{more}]", first.join(", ")));
    out
}

/// The one-line summary of a value.
pub fn summary(v: &Value) -> String {
    match v {
        Value::Tensor(t) => {
            let tensor = t.tensor();
            let shape: &[usize] = if t.scalar { &[] } else { tensor.shape() };
            summary_range(tensor, 0, tensor.numel(), shape)
        }
        Value::Tuple(items) => {
            let parts: Vec<String> = items.iter().take(4).map(short).collect();
            let more = if items.len() > 4 { ", ..." } else { "" };
            format!("tuple of {} ({}{more})", items.len(), parts.join(", "))
        }
        other => other.describe(),
    }
}

fn short(v: &Value) -> String {
    match v {
        Value::Tensor(t) if t.scalar || t.tensor().numel() == 1 => {
            let x = all(t.tensor()).next().unwrap_or(f64::NAN);
            num(x, t.dtype())
        }
        Value::Tensor(t) => type_name(t.tensor(), t.scalar),
        other => other.describe(),
    }
}

/// The type column of a value.
pub fn type_of(v: &Value) -> String {
    match v {
        Value::Tensor(t) => type_name(t.tensor(), t.scalar),
        Value::Tuple(items) => format!("tuple[{}]", items.len()),
        Value::None => "none".into(),
        Value::Str(_) => "str".into(),
        Value::Func(_) => "function".into(),
        Value::Type(_) => "type".into(),
    }
}

/// Whether a value has children to show.
pub fn expandable(v: &Value) -> bool {
    match v {
        Value::Tensor(t) => !t.scalar && t.tensor().rank() > 0 && t.tensor().numel() > 0,
        Value::Tuple(items) => !items.is_empty(),
        _ => false,
    }
}

/// A child of an expanded value: its name, summary, type and, when it has
/// children itself, the index path to it.
pub struct Child {
    pub name: String,
    pub value: String,
    pub ty: String,
    pub path: Option<Vec<usize>>,
}

/// The children of `v` at index path `path` (a tensor's leading indices, or
/// tuple positions while the value is a tuple).
pub fn children(v: &Value, path: &[usize]) -> Vec<Child> {
    match v {
        Value::Tuple(items) => {
            if let Some((&i, rest)) = path.split_first() {
                return items.get(i).map(|c| children(c, rest)).unwrap_or_default();
            }
            items
                .iter()
                .enumerate()
                .take(MAX_CHILDREN)
                .map(|(i, c)| Child {
                    name: format!("[{i}]"),
                    value: summary(c),
                    ty: type_of(c),
                    path: expandable(c).then(|| vec![i]),
                })
                .collect()
        }
        Value::Tensor(t) => {
            let tensor = t.tensor();
            let shape = tensor.shape();
            if path.len() >= shape.len() {
                return Vec::new();
            }
            let dtype = tensor.dtype();
            // The block the path selects.
            let mut start = 0;
            let mut stride = tensor.numel();
            for (k, &i) in path.iter().enumerate() {
                stride /= shape[k].max(1);
                start += i * stride;
            }
            let n = shape[path.len()];
            let inner = stride / n.max(1);
            let rest = &shape[path.len() + 1..];
            let prefix: String = path.iter().map(|i| format!("{i}, ")).collect();
            (0..n.min(MAX_CHILDREN))
                .map(|i| {
                    let at = start + i * inner;
                    let leaf = rest.is_empty();
                    let mut p = path.to_vec();
                    p.push(i);
                    Child {
                        name: if leaf {
                            format!("[{prefix}{i}]")
                        } else {
                            format!("[{prefix}{i}, :]")
                        },
                        value: if leaf {
                            num(elements(tensor, at, 1).next().unwrap_or(f64::NAN), dtype)
                        } else {
                            summary_range(tensor, at, inner, rest)
                        },
                        ty: if leaf {
                            format!("{dtype}")
                        } else {
                            let dims: Vec<String> = rest.iter().map(|d| d.to_string()).collect();
                            format!("{dtype}[{}]", dims.join(", "))
                        },
                        path: (!leaf).then_some(p),
                    }
                })
                .collect()
        }
        _ => Vec::new(),
    }
}

/// Elements that are NaN or Inf, counted (0 for non-float tensors).
pub fn bad_count(v: &Value) -> (usize, usize) {
    match v {
        Value::Tensor(t) if t.dtype().is_float() => {
            let (mut nan, mut inf) = (0, 0);
            for x in all(t.tensor()) {
                nan += usize::from(x.is_nan());
                inf += usize::from(x.is_infinite());
            }
            (nan, inf)
        }
        Value::Tuple(items) => items
            .iter()
            .map(bad_count)
            .fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1)),
        _ => (0, 0),
    }
}

/// The largest absolute finite value of a tensor (or of a tuple's tensors).
pub fn max_abs(v: &Value) -> Option<f64> {
    let join = |m: Option<f64>, x: f64| Some(m.map_or(x, |m: f64| m.max(x)));
    match v {
        Value::Tensor(t) if t.dtype().is_float() => all(t.tensor())
            .filter(|x| x.is_finite())
            .map(f64::abs)
            .fold(None, join),
        Value::Tuple(items) => items.iter().filter_map(max_abs).fold(None, join),
        _ => None,
    }
}

/// Whether two values hold the same bits (tensors: dtype, shape and data).
pub fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Tensor(x), Value::Tensor(y)) => {
            let (x, y) = (x.tensor(), y.tensor());
            x.dtype() == y.dtype()
                && x.shape() == y.shape()
                && all(x).zip(all(y)).all(|(p, q)| p.to_bits() == q.to_bits())
        }
        (Value::Tuple(x), Value::Tuple(y)) => {
            x.len() == y.len() && x.iter().zip(y.iter()).all(|(p, q)| same(p, q))
        }
        _ => false,
    }
}

/// Whether a value counts as true (a condition).
pub fn truthy(v: &Value) -> Option<bool> {
    match v {
        Value::Tensor(t) if t.tensor().numel() == 1 => all(t.tensor()).next().map(|x| x != 0.0),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers() {
        assert_eq!(num(0.1f32 as f64, DType::F32), "0.1");
        assert_eq!(num(6.0, DType::F32), "6");
        assert_eq!(num(-2.0, DType::I64), "-2");
        assert_eq!(compact(1.707825127659933), "1.70783");
        assert_eq!(compact(3.5), "3.5");
        assert_eq!(compact(1e-9), "1.00000e-9");
        assert_eq!(compact(0.0), "0");
    }

    #[test]
    fn statistics_skip_nan_and_inf() {
        let s = stats(&[1.0, f64::NAN, 3.0, f64::INFINITY]);
        assert_eq!(
            (s.nan, s.inf, s.min, s.max, s.mean, s.std),
            (1, 1, 1.0, 3.0, 2.0, 1.0)
        );
    }
}
