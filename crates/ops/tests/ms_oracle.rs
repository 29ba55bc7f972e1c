//! Every kernel against real MindSpore 2.10: the cases each family records in
//! `tests/ms_oracle/<family>.json` (made by `<family>.py` beside it, with
//! MindSpore installed; see `common.py`) are replayed through the registry and
//! compared: dtype and shape exactly, values within the case's tolerance.

use std::path::{Path, PathBuf};

use ops::eager;
use ops::{AttrValue, KValue};
use serde_json::Value;
use tensor::{DType, Tensor};

fn number(v: &Value) -> f64 {
    match v {
        Value::Number(n) => n.as_f64().expect("a number"),
        Value::Bool(b) => *b as u8 as f64,
        Value::String(s) => match s.as_str() {
            "nan" => f64::NAN,
            "inf" => f64::INFINITY,
            "-inf" => f64::NEG_INFINITY,
            other => panic!("not a number: {other}"),
        },
        other => panic!("not a number: {other}"),
    }
}

fn decode(v: &Value) -> KValue {
    match v {
        Value::Array(items) => KValue::Tuple(items.iter().map(decode).collect()),
        Value::Object(o) => {
            let dtype: DType = o["dtype"].as_str().unwrap().parse().expect("a dtype");
            let shape: Vec<usize> = o["shape"]
                .as_array()
                .unwrap()
                .iter()
                .map(|d| d.as_u64().unwrap() as usize)
                .collect();
            let data: Vec<f64> = o["data"].as_array().unwrap().iter().map(number).collect();
            let t = Tensor::from_f64(shape, data).expect("sizes match");
            KValue::Tensor(t.cast(dtype))
        }
        other => panic!("not a value: {other}"),
    }
}

fn attr(v: &Value) -> AttrValue {
    match v {
        Value::Null => AttrValue::None,
        Value::Bool(b) => AttrValue::Bool(*b),
        Value::Number(n) if n.is_i64() => AttrValue::Int(n.as_i64().unwrap()),
        Value::Number(n) => AttrValue::float(n.as_f64().unwrap()),
        Value::String(s) => match s.as_str() {
            "nan" | "inf" | "-inf" => AttrValue::float(number(v)),
            _ => AttrValue::Str(s.clone()),
        },
        Value::Array(items) => AttrValue::Tuple(items.iter().map(attr).collect()),
        Value::Object(o) => AttrValue::DType(o["dtype"].as_str().unwrap().parse().expect("dtype")),
    }
}

fn close(a: f64, b: f64, rtol: f64, atol: f64) -> bool {
    (a.is_nan() && b.is_nan()) || a == b || (a - b).abs() <= atol + rtol * b.abs()
}

/// Compares `got` with `want`; an error says where they differ.
fn compare(got: &KValue, want: &KValue, rtol: f64, atol: f64, at: &str) -> Result<(), String> {
    match (got, want) {
        (KValue::Tensor(g), KValue::Tensor(w)) => {
            if g.dtype() != w.dtype() {
                return Err(format!(
                    "{at}: dtype {} vs MindSpore's {}",
                    g.dtype(),
                    w.dtype()
                ));
            }
            if g.shape() != w.shape() {
                return Err(format!(
                    "{at}: shape {:?} vs MindSpore's {:?}",
                    g.shape(),
                    w.shape()
                ));
            }
            let (gv, wv) = (g.to_f64_vec(), w.to_f64_vec());
            for (i, (a, b)) in gv.iter().zip(&wv).enumerate() {
                if !close(*a, *b, rtol, atol) {
                    return Err(format!("{at}[{i}]: {a} vs MindSpore's {b}"));
                }
            }
            Ok(())
        }
        (KValue::Tuple(g), KValue::Tuple(w)) if g.len() == w.len() => g
            .iter()
            .zip(w)
            .enumerate()
            .try_for_each(|(i, (a, b))| compare(a, b, rtol, atol, &format!("{at}.{i}"))),
        _ => Err(format!("{at}: structure differs: {got:?} vs {want:?}")),
    }
}

fn oracle_files() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/ms_oracle");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("tests/ms_oracle exists")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    files
}

#[test]
fn kernels_match_mindspore() {
    let mut failures = Vec::new();
    let mut count = 0;
    for file in oracle_files() {
        let family = file.file_stem().unwrap().to_string_lossy().to_string();
        let json: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap())
            .unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        for (k, case) in json["cases"].as_array().unwrap().iter().enumerate() {
            count += 1;
            let op = case["op"].as_str().unwrap();
            let at = format!("{family}#{k} {op}");
            let inputs: Vec<KValue> = case["inputs"]
                .as_array()
                .unwrap()
                .iter()
                .map(decode)
                .collect();
            let op_def = ops::lookup(op).unwrap_or_else(|| panic!("{at}: not in the registry"));
            let attrs: Vec<(&'static str, AttrValue)> = case["attrs"]
                .as_object()
                .unwrap()
                .iter()
                .map(|(name, v)| {
                    let p = op_def
                        .param(name)
                        .unwrap_or_else(|| panic!("{at}: no attribute {name}"));
                    (p.name, attr(v))
                })
                .collect();
            let want = decode(&case["expected"]);
            let (rtol, atol) = (number(&case["rtol"]), number(&case["atol"]));
            // `"outputs": [0, 1]`: compare only these elements of a tuple
            // result (the others are implementation state, such as LSTM's
            // oneDNN workspace).
            let outputs: Option<Vec<usize>> = case.get("outputs").map(|o| {
                o.as_array()
                    .unwrap()
                    .iter()
                    .map(|i| i.as_u64().unwrap() as usize)
                    .collect()
            });
            let select = |v: KValue| match (&outputs, v) {
                (Some(keep), KValue::Tuple(items)) => {
                    KValue::Tuple(keep.iter().filter_map(|&i| items.get(i).cloned()).collect())
                }
                (_, v) => v,
            };
            let want = select(want);
            match eager::call(op, &inputs, attrs).map(select) {
                Ok(got) => {
                    if let Err(e) = compare(&got, &want, rtol, atol, &at) {
                        failures.push(e);
                    }
                }
                Err(e) => failures.push(format!("{at}: {}", e.message)),
            }
        }
    }
    eprintln!("{count} MindSpore cases checked");
    assert!(
        failures.is_empty(),
        "{} of {count} cases differ from MindSpore:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
