//! Printing results: JSON (spec §9), readable text, and `.npy` files.

use std::path::{Path, PathBuf};

use serde_json::{json, Map, Number, Value as Json};
use tensor::{Buffer, DType, Tensor};

use crate::value::Value;

/// One element as JSON: integers and booleans as themselves, floats with full
/// precision (the `f32` value widened to `f64` exactly), and the non-finite
/// floats as the strings `"nan"`, `"inf"` and `"-inf"` (JSON has no numbers for them).
fn json_element(t: &Tensor, i: usize) -> Json {
    let float = |x: f64| match Number::from_f64(x) {
        Some(n) => Json::Number(n),
        None if x.is_nan() => Json::String("nan".into()),
        None if x > 0.0 => Json::String("inf".into()),
        None => Json::String("-inf".into()),
    };
    match t.buffer() {
        Buffer::F32(v) => float(v[i] as f64),
        Buffer::F64(v) => float(v[i]),
        Buffer::I64(v) => Json::from(v[i]),
        Buffer::Bool(v) => Json::Bool(v[i]),
    }
}

/// A value as JSON: a tensor is `{"dtype", "shape", "data"}` (row-major, flat),
/// a scalar `{"dtype", "value"}`, a tuple an array, none `null`, a string a
/// string, a function `{"function": NAME}`.
pub fn to_json(v: &Value) -> Json {
    match v {
        Value::Tensor(t) => {
            let tensor = t.tensor();
            if t.scalar && tensor.rank() == 0 {
                json!({"dtype": t.dtype().name(), "value": json_element(tensor, 0)})
            } else {
                let data: Vec<Json> = (0..tensor.numel())
                    .map(|i| json_element(tensor, i))
                    .collect();
                let mut m = Map::new();
                m.insert("dtype".into(), Json::from(t.dtype().name()));
                m.insert("shape".into(), Json::from(tensor.shape().to_vec()));
                m.insert("data".into(), Json::Array(data));
                Json::Object(m)
            }
        }
        Value::Tuple(items) => Json::Array(items.iter().map(to_json).collect()),
        Value::None => Json::Null,
        Value::Str(s) => Json::String(s.to_string()),
        Value::Func(f) => json!({"function": f.describe()}),
        Value::Type(t) => json!({"type": t.to_string()}),
    }
}

/// One element as text: floats in their shortest exact form (`1.0`, `0.1`,
/// `1e-8`), `nan`/`inf`/`-inf`, integers, `true`/`false`.
pub fn format_element(t: &Tensor, i: usize) -> String {
    fn float(x: f64, s: String) -> String {
        if x.is_nan() {
            "nan".into()
        } else if x.is_infinite() {
            if x > 0.0 {
                "inf".into()
            } else {
                "-inf".into()
            }
        } else {
            s
        }
    }
    match t.buffer() {
        Buffer::F32(v) => float(v[i] as f64, format!("{:?}", v[i])),
        Buffer::F64(v) => float(v[i], format!("{:?}", v[i])),
        Buffer::I64(v) => v[i].to_string(),
        Buffer::Bool(v) => v[i].to_string(),
    }
}

/// Above this many elements, tensors are summarised (first and last 3 per dimension).
const SUMMARY_THRESHOLD: usize = 1000;
const EDGE: usize = 3;

/// A value as readable text: tensors in the DSL's literal syntax with their
/// type in a comment, tuples in parentheses, one element per line.
pub fn to_text(v: &Value) -> String {
    let mut out = String::new();
    write_text(v, 0, &mut out);
    out.push('\n');
    out
}

fn write_text(v: &Value, indent: usize, out: &mut String) {
    match v {
        Value::Tensor(t) => {
            let tensor = t.tensor();
            if t.scalar && tensor.rank() == 0 {
                out.push_str(&format_element(tensor, 0));
                out.push_str(&format!("  # {}", t.dtype()));
            } else {
                out.push_str(&tensor_text(tensor, indent));
                let dims: Vec<String> = tensor.shape().iter().map(|d| d.to_string()).collect();
                out.push_str(&format!("  # {}[{}]", t.dtype(), dims.join(", ")));
            }
        }
        Value::Tuple(items) => {
            if items.is_empty() {
                out.push_str("()");
                return;
            }
            out.push_str("(\n");
            for item in items.iter() {
                out.push_str(&" ".repeat(indent + 2));
                let mut inner = String::new();
                write_text(item, indent + 2, &mut inner);
                // The comma goes before an element's trailing type comment.
                match inner.rfind("  # ") {
                    Some(p) if !inner[p..].contains('\n') => {
                        out.push_str(&inner[..p]);
                        out.push(',');
                        out.push_str(&inner[p..]);
                    }
                    _ => {
                        out.push_str(&inner);
                        out.push(',');
                    }
                }
                out.push('\n');
            }
            out.push_str(&" ".repeat(indent));
            out.push(')');
        }
        Value::None => out.push_str("none"),
        Value::Str(s) => out.push_str(&format!("{s:?}")),
        Value::Func(f) => out.push_str(&format!("<function {}>", f.describe())),
        Value::Type(t) => out.push_str(&t.to_string()),
    }
}

/// A tensor as a (possibly summarised) nested literal, columns aligned.
pub fn tensor_text(t: &Tensor, indent: usize) -> String {
    let shape = t.shape();
    if shape.is_empty() {
        return format_element(t, 0);
    }
    let summarise = t.numel() > SUMMARY_THRESHOLD;
    // Which indices of each dimension are shown (None: an ellipsis).
    let shown: Vec<Vec<Option<usize>>> = shape
        .iter()
        .map(|&n| {
            if summarise && n > 2 * EDGE {
                (0..EDGE)
                    .map(Some)
                    .chain([None])
                    .chain((n - EDGE..n).map(Some))
                    .collect()
            } else {
                (0..n).map(Some).collect()
            }
        })
        .collect();
    // Width of the widest element shown.
    let mut width = 0;
    let mut strides = vec![1usize; shape.len()];
    for d in (0..shape.len().saturating_sub(1)).rev() {
        strides[d] = strides[d + 1] * shape[d + 1];
    }
    let mut texts = std::collections::HashMap::new();
    collect_shown(&shown, &strides, 0, 0, &mut |flat| {
        let s = format_element(t, flat);
        width = width.max(s.chars().count());
        texts.insert(flat, s);
    });
    let mut out = String::new();
    write_dim(&shown, &strides, 0, 0, indent, width, &texts, &mut out);
    out
}

fn collect_shown(
    shown: &[Vec<Option<usize>>],
    strides: &[usize],
    d: usize,
    base: usize,
    f: &mut dyn FnMut(usize),
) {
    for i in shown[d].iter().flatten() {
        let flat = base + i * strides[d];
        if d + 1 == shown.len() {
            f(flat);
        } else {
            collect_shown(shown, strides, d + 1, flat, f);
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn write_dim(
    shown: &[Vec<Option<usize>>],
    strides: &[usize],
    d: usize,
    base: usize,
    indent: usize,
    width: usize,
    texts: &std::collections::HashMap<usize, String>,
    out: &mut String,
) {
    out.push('[');
    let last = d + 1 == shown.len();
    let n = shown[d].len();
    for (k, i) in shown[d].iter().enumerate() {
        match i {
            None => out.push_str("..."),
            Some(i) => {
                let flat = base + i * strides[d];
                if last {
                    let s = &texts[&flat];
                    out.push_str(&" ".repeat(width - s.chars().count()));
                    out.push_str(s);
                } else {
                    write_dim(shown, strides, d + 1, flat, indent, width, texts, out);
                }
            }
        }
        if k + 1 < n {
            out.push(',');
            if last {
                out.push(' ');
            } else {
                // Blank lines between blocks of rank 3 and more, as NumPy.
                let blank = shown.len() - d - 1;
                for _ in 1..blank {
                    out.push('\n');
                }
                out.push('\n');
                out.push_str(&" ".repeat(indent + d + 1));
            }
        }
    }
    out.push(']');
}

/// Writes every tensor of `v` (tuples flattened in order) as `out_0.npy`,
/// `out_1.npy`, ... in `dir`, creating it if needed. Returns the paths.
pub fn write_npy(v: &Value, dir: &Path) -> Result<Vec<PathBuf>, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let mut tensors = Vec::new();
    fn leaves<'a>(v: &'a Value, out: &mut Vec<&'a Tensor>) {
        match v {
            Value::Tensor(t) => out.push(t.tensor()),
            Value::Tuple(items) => items.iter().for_each(|i| leaves(i, out)),
            _ => {}
        }
    }
    leaves(v, &mut tensors);
    let mut paths = Vec::new();
    for (i, t) in tensors.into_iter().enumerate() {
        let path = dir.join(format!("out_{i}.npy"));
        std::fs::write(&path, tensor::npy::write(t))
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        paths.push(path);
    }
    Ok(paths)
}

/// The dtype's name as the JSON output spells it.
pub fn dtype_name(d: DType) -> &'static str {
    d.name()
}
