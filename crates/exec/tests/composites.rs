//! The composite primitives (`crates/ops/composite/mindspore-2.10.mir`) end to
//! end, against real MindSpore 2.10.
//!
//! `composite_oracle/composite.py` records cases: a composite called on inputs
//! with attributes, and what MindSpore computes for the same call. Each case
//! becomes a small DSL program calling the composite, which must check without
//! errors; the executor runs it and the result must match MindSpore's (dtype
//! and shape exactly, values within the case's tolerance). Cases marked `grad`
//! are also differentiated (`grad(f, wrt=...)`, the autodiff path the
//! executor takes, composites inlined) and the gradient compared with central
//! finite differences in f64; every composite that takes and gives floats has
//! at least one such case, except the few listed in [`NOT_DIFFERENTIABLE`].

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use exec::{ExecOptions, Executor, Value};
use serde_json::Value as Json;
use tensor::{DType, Tensor};

/// Composites that take and give floats but whose gradient is zero almost
/// everywhere, where finite differences jump: `(name, why)`.
const NOT_DIFFERENTIABLE: &[(&str, &str)] = &[(
    "EqualCount",
    "a count of equal elements: constant in its inputs except where they tie",
)];

fn number(v: &Json) -> f64 {
    match v {
        Json::Number(n) => n.as_f64().expect("a number"),
        Json::Bool(b) => *b as u8 as f64,
        Json::String(s) => match s.as_str() {
            "nan" => f64::NAN,
            "inf" => f64::INFINITY,
            "-inf" => f64::NEG_INFINITY,
            other => panic!("not a number: {other}"),
        },
        other => panic!("not a number: {other}"),
    }
}

fn tensor(v: &Json) -> Tensor {
    let dtype: DType = v["dtype"].as_str().unwrap().parse().expect("a dtype");
    let shape: Vec<usize> = v["shape"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_u64().unwrap() as usize)
        .collect();
    let data: Vec<f64> = v["data"].as_array().unwrap().iter().map(number).collect();
    Tensor::from_f64(shape, data)
        .expect("sizes match")
        .cast(dtype)
}

/// An input of a case.
#[derive(Clone)]
enum Input {
    Tensor(Tensor),
    Tuple(Vec<Tensor>),
    /// A Python number, written into the program as a literal.
    Literal(String),
}

fn literal(v: &Json) -> String {
    match v {
        Json::Bool(b) => b.to_string(),
        Json::Number(n) if n.is_i64() => n.to_string(),
        Json::Number(n) => float_text(n.as_f64().unwrap()),
        other => panic!("not a literal: {other}"),
    }
}

/// A float as a DSL float literal (always with a `.` or an exponent).
fn float_text(x: f64) -> String {
    assert!(x.is_finite(), "{x} has no literal");
    let s = format!("{x:?}");
    if s.contains(['.', 'e', 'E']) {
        s
    } else {
        format!("{s}.0")
    }
}

fn input(v: &Json) -> Input {
    if let Some(t) = v.get("tensor") {
        Input::Tensor(tensor(t))
    } else if let Some(items) = v.get("tuple") {
        Input::Tuple(items.as_array().unwrap().iter().map(tensor).collect())
    } else {
        Input::Literal(literal(&v["literal"]))
    }
}

/// An attribute value as DSL text.
fn attr_text(v: &Json) -> String {
    match v {
        Json::Null => "none".into(),
        Json::Bool(b) => b.to_string(),
        Json::Number(n) if n.is_i64() => n.to_string(),
        Json::Number(n) => float_text(n.as_f64().unwrap()),
        Json::String(s) => format!("{s:?}"),
        Json::Array(items) => {
            let items: Vec<String> = items.iter().map(attr_text).collect();
            if items.len() == 1 {
                format!("({},)", items[0])
            } else {
                format!("({})", items.join(", "))
            }
        }
        Json::Object(o) => o["dtype"].as_str().unwrap().to_string(),
    }
}

fn tensor_type(t: &Tensor) -> String {
    let dims: Vec<String> = t.shape().iter().map(|d| d.to_string()).collect();
    format!("{}[{}]", t.dtype().name(), dims.join(", "))
}

fn input_type(i: &Input) -> Option<String> {
    match i {
        Input::Tensor(t) => Some(tensor_type(t)),
        Input::Tuple(items) => {
            let items: Vec<String> = items.iter().map(tensor_type).collect();
            Some(if items.len() == 1 {
                format!("({},)", items[0])
            } else {
                format!("({})", items.join(", "))
            })
        }
        Input::Literal(_) => None,
    }
}

fn input_value(i: &Input) -> Option<Value> {
    match i {
        Input::Tensor(t) => Some(Value::tensor(t.clone())),
        Input::Tuple(items) => Some(Value::tuple(
            items.iter().map(|t| Value::tensor(t.clone())).collect(),
        )),
        Input::Literal(_) => None,
    }
}

/// One recorded case.
struct Case {
    at: String,
    composite: String,
    inputs: Vec<Input>,
    attrs: Vec<(String, String)>,
    expected: Json,
    rtol: f64,
    atol: f64,
    grad: bool,
    values: bool,
}

impl Case {
    /// The parameters (`x0: f32[2, 3]`, ...) and the call of the composite:
    /// tensor and tuple inputs are annotated parameters `x{i}`, numbers
    /// literals, attributes keyword arguments.
    fn call(&self, inputs: &[Input]) -> (Vec<String>, String) {
        let mut params = Vec::new();
        let mut args = Vec::new();
        for (i, input) in inputs.iter().enumerate() {
            match (input, input_type(input)) {
                (Input::Literal(text), _) => args.push(text.clone()),
                (_, Some(ty)) => {
                    params.push(format!("x{i}: {ty}"));
                    args.push(format!("x{i}"));
                }
                _ => unreachable!(),
            }
        }
        for (k, v) in &self.attrs {
            args.push(format!("{k}={v}"));
        }
        (params, format!("{}({})", self.composite, args.join(", ")))
    }

    /// `graph NAME(params) { return COMPOSITE(...) }`.
    fn graph(&self, name: &str, inputs: &[Input]) -> String {
        let (params, call) = self.call(inputs);
        format!(
            "graph {name}({}) {{\n  return {call}\n}}\n",
            params.join(", ")
        )
    }

    fn args(inputs: &[Input]) -> Vec<Value> {
        inputs.iter().filter_map(input_value).collect()
    }
}

/// Checks a program: its error diagnostics, if any.
fn check(src: &str) -> Result<ir::Program, String> {
    let a = analysis::analyze(src);
    let errors: Vec<String> = a
        .diagnostics
        .iter()
        .filter(|d| d.severity == analysis::Severity::Error)
        .map(|d| format!("{:?}: {}", d.code, d.message))
        .collect();
    if errors.is_empty() {
        Ok(a.source.program())
    } else {
        Err(format!("does not check:\n{src}{}", errors.join("\n")))
    }
}

fn close(a: f64, b: f64, rtol: f64, atol: f64) -> bool {
    (a.is_nan() && b.is_nan()) || a == b || (a - b).abs() <= atol + rtol * b.abs()
}

fn compare(got: &Value, want: &Json, c: &Case, at: &str) -> Result<(), String> {
    match (got, want) {
        (Value::Tuple(items), Json::Array(wants)) if items.len() == wants.len() => items
            .iter()
            .zip(wants)
            .enumerate()
            .try_for_each(|(i, (g, w))| compare(g, w, c, &format!("{at}.{i}"))),
        (Value::Tensor(g), Json::Object(_)) => {
            let (g, w) = (g.tensor(), tensor(want));
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
            if c.values {
                for (i, (a, b)) in g.to_f64_vec().iter().zip(w.to_f64_vec()).enumerate() {
                    if !close(*a, b, c.rtol, c.atol) {
                        return Err(format!("{at}[{i}]: {a} vs MindSpore's {b}"));
                    }
                }
            }
            Ok(())
        }
        _ => Err(format!(
            "{at}: {} vs MindSpore's {want}",
            exec::output::to_json(got)
        )),
    }
}

/// The sum of every float element of a value (what `grad` differentiates).
fn float_sum(v: &Value) -> f64 {
    match v {
        Value::Tensor(t) if t.dtype().is_float() => t.tensor().to_f64_vec().iter().sum(),
        Value::Tuple(items) => items.iter().map(float_sum).sum(),
        _ => 0.0,
    }
}

fn is_float_input(i: &Input) -> bool {
    match i {
        Input::Tensor(t) => t.dtype().is_float(),
        Input::Tuple(items) => items.iter().any(|t| t.dtype().is_float()),
        Input::Literal(_) => false,
    }
}

fn has_float_output(v: &Json) -> bool {
    match v {
        Json::Array(items) => items.iter().any(has_float_output),
        Json::Object(o) => o["dtype"]
            .as_str()
            .unwrap()
            .parse::<DType>()
            .unwrap()
            .is_float(),
        _ => false,
    }
}

/// The input with its float tensors in f64.
fn to_f64(i: &Input) -> Input {
    let up = |t: &Tensor| {
        if t.dtype().is_float() {
            t.cast(DType::F64)
        } else {
            t.clone()
        }
    };
    match i {
        Input::Tensor(t) => Input::Tensor(up(t)),
        Input::Tuple(items) => Input::Tuple(items.iter().map(up).collect()),
        Input::Literal(s) => Input::Literal(s.clone()),
    }
}

/// The gradient of the case's call (summed over its float outputs) with
/// respect to its float inputs, by `grad`, against central differences.
fn check_gradient(c: &Case) -> Result<(), String> {
    let inputs: Vec<Input> = c.inputs.iter().map(to_f64).collect();
    // Parameter positions (literals are not parameters) of the float inputs.
    let mut wrt = Vec::new();
    let mut names = Vec::new();
    let mut k = 0;
    for (i, input) in inputs.iter().enumerate() {
        if matches!(input, Input::Literal(_)) {
            continue;
        }
        if is_float_input(input) {
            wrt.push(k);
        }
        names.push(format!("x{i}"));
        k += 1;
    }
    let f = c.graph("f", &inputs);
    let (params, _) = c.call(&inputs);
    let wrt_text: Vec<String> = wrt.iter().map(|w| w.to_string()).collect();
    let src = format!(
        "{f}\ngraph g({}) {{\n  return grad(f, wrt=({},))({})\n}}\n",
        params.join(", "),
        wrt_text.join(", "),
        names.join(", ")
    );
    let program = check(&src)?;
    let mut ex = Executor::new(&program, ExecOptions::default());
    let args = Case::args(&inputs);
    let grads = ex
        .call("g", args.clone())
        .map_err(|e| format!("grad fails: {}\n{src}", e.message))?;
    let Value::Tuple(grads) = grads else {
        return Err(format!("grad gives {}", exec::output::to_json(&grads)));
    };
    // The float leaves of the arguments: (argument, tuple element or None).
    let mut eval = |args: &[Value]| -> Result<f64, String> {
        ex.call("f", args.to_vec())
            .map(|v| float_sum(&v))
            .map_err(|e| e.message)
    };
    for (g, &w) in grads.iter().zip(&wrt) {
        let leaves: Vec<(Option<usize>, &Value)> = match (&args[w], g) {
            (Value::Tuple(_), Value::Tuple(gs)) => {
                gs.iter().enumerate().map(|(j, g)| (Some(j), g)).collect()
            }
            _ => vec![(None, g)],
        };
        for (j, g) in leaves {
            let x = match (j, &args[w]) {
                (Some(j), Value::Tuple(items)) => items[j].clone(),
                (_, x) => x.clone(),
            };
            let Some(xt) = x.as_tensor() else { continue };
            if !xt.dtype().is_float() {
                continue;
            }
            let xt = xt.tensor().clone();
            let gt = g
                .as_tensor()
                .ok_or_else(|| format!("the gradient of x{w} is {}", g.describe()))?
                .tensor()
                .clone();
            if gt.shape() != xt.shape() {
                return Err(format!(
                    "the gradient of x{w} has shape {:?}, the input {:?}",
                    gt.shape(),
                    xt.shape()
                ));
            }
            let base = xt.to_f64_vec();
            for (e, analytic) in gt.to_f64_vec().into_iter().enumerate() {
                let h = 1e-6 * base[e].abs().max(1.0);
                let mut at = |delta: f64| -> Result<f64, String> {
                    let mut data = base.clone();
                    data[e] += delta;
                    let t = Value::tensor(Tensor::from_f64(xt.shape().to_vec(), data).unwrap());
                    let mut a = args.clone();
                    a[w] = match (j, &args[w]) {
                        (Some(j), Value::Tuple(items)) => {
                            let mut items: Vec<Value> = items.to_vec();
                            items[j] = t;
                            Value::tuple(items)
                        }
                        _ => t,
                    };
                    eval(&a)
                };
                let numeric = (at(h)? - at(-h)?) / (2.0 * h);
                let tol = 1e-6 + 1e-5 * numeric.abs().max(analytic.abs());
                let agrees = (analytic - numeric).abs() <= tol;
                if !agrees {
                    let which = j.map_or(String::new(), |j| format!(".{j}"));
                    return Err(format!(
                        "d/dx{w}{which}[{e}]: grad gives {analytic}, finite differences {numeric}"
                    ));
                }
            }
        }
    }
    Ok(())
}

fn cases() -> Vec<Case> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/composite_oracle/composite.json");
    let json: Json = serde_json::from_str(&std::fs::read_to_string(&path).unwrap())
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    json["cases"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
        .map(|(k, c)| {
            let composite = c["composite"].as_str().unwrap().to_string();
            Case {
                at: format!("#{k} {composite}"),
                inputs: c["inputs"].as_array().unwrap().iter().map(input).collect(),
                attrs: c["attrs"]
                    .as_object()
                    .unwrap()
                    .iter()
                    .map(|(k, v)| (k.clone(), attr_text(v)))
                    .collect(),
                expected: c["expected"].clone(),
                rtol: number(&c["rtol"]),
                atol: number(&c["atol"]),
                grad: c["grad"].as_bool().unwrap_or(false),
                values: c["compare"].as_str() != Some("shape"),
                composite,
            }
        })
        .collect()
}

#[test]
fn composites_match_mindspore() {
    let cases = cases();
    let mut failures = Vec::new();
    for c in &cases {
        if ops::composite::composite(&c.composite).is_none() {
            failures.push(format!("{}: not a composite primitive", c.at));
            continue;
        }
        let src = c.graph("main", &c.inputs);
        let result = check(&src).and_then(|program| {
            Executor::new(&program, ExecOptions::default())
                .call("main", Case::args(&c.inputs))
                .map_err(|e| format!("fails to run: {}\n{src}", e.message))
        });
        match result {
            Ok(got) => {
                if let Err(e) = compare(&got, &c.expected, c, &c.at) {
                    failures.push(e);
                }
            }
            Err(e) => failures.push(format!("{}: {e}", c.at)),
        }
    }
    let composites: BTreeSet<&str> = cases.iter().map(|c| c.composite.as_str()).collect();
    eprintln!(
        "{} MindSpore cases of {} composites checked",
        cases.len(),
        composites.len()
    );
    assert!(
        failures.is_empty(),
        "{} of {} cases differ from MindSpore:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

#[test]
fn composite_gradients_match_finite_differences() {
    let cases = cases();
    let mut failures = Vec::new();
    let mut checked: BTreeMap<&str, usize> = BTreeMap::new();
    let mut differentiable: BTreeSet<&str> = BTreeSet::new();
    for c in &cases {
        if c.inputs.iter().any(is_float_input) && has_float_output(&c.expected) {
            differentiable.insert(&c.composite);
        }
        if !c.grad {
            continue;
        }
        *checked.entry(&c.composite).or_default() += 1;
        if let Err(e) = check_gradient(c) {
            failures.push(format!("{}: {e}", c.at));
        }
    }
    for name in &differentiable {
        let excused = NOT_DIFFERENTIABLE.iter().any(|(n, _)| n == name);
        if !checked.contains_key(name) && !excused {
            failures.push(format!(
                "{name} takes and gives floats, but no case checks its gradient"
            ));
        }
    }
    eprintln!(
        "gradients of {} composites checked in {} cases",
        checked.len(),
        checked.values().sum::<usize>()
    );
    assert!(
        failures.is_empty(),
        "{} gradient checks fail:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Every composite primitive has oracle cases.
#[test]
fn every_composite_has_cases() {
    let cases = cases();
    let covered: BTreeSet<&str> = cases.iter().map(|c| c.composite.as_str()).collect();
    let mut missing: Vec<&str> = ops::composite::composites()
        .keys()
        .copied()
        .filter(|n| !covered.contains(n))
        .collect();
    missing.sort();
    assert!(
        missing.is_empty(),
        "composites without MindSpore cases: {}",
        missing.join(", ")
    );
}

fn diagnostics(src: &str) -> Vec<(analysis::Code, String)> {
    analysis::analyze(src)
        .diagnostics
        .iter()
        .filter(|d| d.severity == analysis::Severity::Error)
        .map(|d| (d.code, d.message.clone()))
        .collect()
}

fn run(src: &str, args: Vec<Value>) -> Value {
    Executor::new(&check(src).unwrap(), ExecOptions::default())
        .call("main", args)
        .unwrap()
}

fn f32s(shape: &[usize], data: &[f32]) -> Value {
    Value::tensor(Tensor::from_f32(shape.to_vec(), data.to_vec()).unwrap())
}

/// Attribute values a composite's body cannot take are errors at the call:
/// a string outside those its body tells apart, and a value an inner
/// primitive refuses.
#[test]
fn bad_attributes_are_reported_at_the_call() {
    let d =
        diagnostics("graph main(x: f32[3]) {\n  return DivMod(x, x, rounding_mode=\"round\")\n}\n");
    assert_eq!(d.len(), 1, "{d:?}");
    assert_eq!(d[0].0, analysis::Code::BadAttributeValue);
    assert!(d[0].1.contains("\"floor\", \"trunc\""), "{}", d[0].1);
    let d = diagnostics("graph main(x: f32[3]) {\n  return BroadcastToView(x, shape=3)\n}\n");
    assert_eq!(d.len(), 1, "{d:?}");
    assert_eq!(d[0].0, analysis::Code::BadAttributeValue);
    assert!(
        d[0].1
            .contains("`BroadcastToView` cannot take these attributes")
            && d[0].1.contains("tuple of ints"),
        "{}",
        d[0].1
    );
}

/// String attributes of composites match in any case, as every string
/// attribute does.
#[test]
fn string_attributes_match_in_any_case() {
    let x = f32s(&[3], &[1.0, -2.0, 3.5]);
    let y = f32s(&[3], &[0.0, 0.0, 0.0]);
    let sum = |r: &str| {
        let src = format!(
            "graph main(x: f32[3], y: f32[3]) {{\n  return L1LossExt(x, y, reduction=\"{r}\")\n}}\n"
        );
        run(&src, vec![x.clone(), y.clone()])
            .as_tensor()
            .unwrap()
            .item_f64()
    };
    assert_eq!(sum("sum"), Some(6.5));
    assert_eq!(sum("SUM"), Some(6.5));
    assert_eq!(sum("Mean"), Some((6.5f32 / 3.0) as f64));
}

/// `==` on two strings, on `none` and on known numbers is a constant to
/// inference and the executor: only the branch taken is checked and run. A
/// string parameter of a generic graph is a string of unknown value there.
#[test]
fn equality_of_constants_decides_an_if() {
    let src = r#"
graph pick(x, mode) {
  return if mode == "double" { x * 2 } else { x }
}

graph main(x: f32[2, 3]) {
  mode = "flat"
  a = if mode == "flat" { Reshape(x, (6,)) } else { Reshape(x, (7,)) }
  b = if mode == none { Reshape(x, (7,)) } else { x }
  c = if Rank(x) == 2 { Transpose(x, (1, 0)) } else { Transpose(x, (0,)) }
  return (a, b, c, pick(x, "double"), pick(x, "same"))
}
"#;
    let x = f32s(&[2, 3], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    let v = run(src, vec![x]);
    let data = |k: usize| match &v {
        Value::Tuple(items) => {
            let t = items[k].as_tensor().unwrap().tensor();
            (t.shape().to_vec(), t.to_f64_vec())
        }
        _ => panic!("a tuple"),
    };
    assert_eq!(data(0), (vec![6], vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]));
    assert_eq!(data(1), (vec![2, 3], vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]));
    assert_eq!(data(2), (vec![3, 2], vec![1.0, 4.0, 2.0, 5.0, 3.0, 6.0]));
    assert_eq!(data(3).1, vec![2.0, 4.0, 6.0, 8.0, 10.0, 12.0]);
    assert_eq!(data(4).1, vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
}
