//! Names and literal text of the DSL a MindSpore graph becomes.

use super::*;

// ---------------------------------------------------------------------------
// Names.

/// Keywords, and names that read as types or metafunctions.
pub(super) const KEYWORDS: &[&str] = &[
    "graph",
    "param",
    "return",
    "if",
    "else",
    "true",
    "false",
    "none",
    "fn",
    "and",
    "or",
    "not",
    "bool",
    "i8",
    "i16",
    "i32",
    "i64",
    "u8",
    "f16",
    "bf16",
    "f32",
    "f64",
    "str",
    "grad",
    "value_and_grad",
    "vjp",
    "jvp",
    "hvp",
    "zeros",
    "ones",
    "load",
];

/// A MindSpore graph name as a DSL identifier: `141_115_✓__main___CF_construct_78`
/// is `then_main_CF_construct`.
pub fn clean_graph_name(raw: &str) -> String {
    let mut s = raw.trim_start_matches('@');
    // Leading unique ids (`141_115_`).
    loop {
        let digits = s.chars().take_while(|c| c.is_ascii_digit()).count();
        if digits > 0 && s[digits..].starts_with('_') {
            s = &s[digits + 1..];
        } else {
            break;
        }
    }
    let mut out = String::new();
    for c in s.chars() {
        match c {
            '✓' => out.push_str("then_"),
            '✗' => out.push_str("else_"),
            '↓' => out.push_str("after_"),
            '↻' => out.push_str("loop_"),
            '◂' => out.push_str("bprop_"),
            '▸' => out.push_str("fprop_"),
            'ф' => out.push_str("phi_"),
            c if c.is_ascii_alphanumeric() || c == '_' => out.push(c),
            _ => out.push('_'),
        }
    }
    // A trailing unique id.
    if let Some(pos) = out.rfind('_') {
        if pos > 0 && out[pos + 1..].chars().all(|c| c.is_ascii_digit()) && pos + 1 < out.len() {
            out.truncate(pos);
        }
    }
    let mut collapsed = String::new();
    for c in out.chars() {
        if c == '_' && collapsed.ends_with('_') {
            continue;
        }
        collapsed.push(c);
    }
    let s = collapsed.trim_matches('_').to_string();
    identifier_or(&s, "graph")
}

/// A variable name from a MindSpore node or parameter name (`None` when it is
/// one MindSpore made up, like `CNode_75`).
pub fn clean_var_name(raw: &str) -> Option<String> {
    let mut out = String::new();
    for c in raw.chars() {
        match c {
            'ф' => out.push_str("phi_"),
            c if c.is_ascii_alphanumeric() || c == '_' => out.push(c),
            '.' => out.push('.'),
            _ => out.push('_'),
        }
    }
    let generated = ["CNode", "ValueNode", "Parameter_", "equiv_", "_CNode_"];
    if out.is_empty()
        || generated.iter().any(|g| out.starts_with(g))
        || out.chars().all(|c| c.is_ascii_digit() || c == '_')
    {
        return None;
    }
    let s = out.trim_matches('_');
    if s.is_empty() {
        return None;
    }
    Some(identifier_or(s, "v"))
}

/// `s` if it is a DSL identifier (dotted segments allowed), else a repaired one.
pub(super) fn identifier_or(s: &str, prefix: &str) -> String {
    let segments: Vec<String> = s
        .split('.')
        .filter(|seg| !seg.is_empty())
        .map(|seg| {
            if seg.starts_with(|c: char| c.is_ascii_digit()) {
                format!("_{seg}")
            } else {
                seg.to_string()
            }
        })
        .collect();
    let joined = segments.join(".");
    if joined.is_empty() {
        return prefix.to_string();
    }
    if KEYWORDS.contains(&joined.as_str()) {
        return format!("{joined}_");
    }
    joined
}

/// Hands out names unique in a scope.
#[derive(Default)]
pub(super) struct Names {
    pub(super) taken: HashSet<String>,
    temp: usize,
}

impl Names {
    pub(super) fn named(&mut self, wanted: &str) -> String {
        let mut name = wanted.to_string();
        let mut k = 1;
        while self.taken.contains(&name) || KEYWORDS.contains(&name.as_str()) {
            name = format!("{wanted}_{k}");
            k += 1;
        }
        self.taken.insert(name.clone());
        name
    }

    pub(super) fn temp(&mut self) -> String {
        loop {
            let name = format!("%{}", self.temp);
            self.temp += 1;
            if self.taken.insert(name.clone()) {
                return name;
            }
        }
    }
}

// ---------------------------------------------------------------------------
// Constants as DSL text.

pub(super) fn float_text(x: f64) -> String {
    if x.is_nan() {
        return "(0.0 / 0.0)".into();
    }
    if x.is_infinite() {
        return if x > 0.0 {
            "(1.0 / 0.0)"
        } else {
            "(-1.0 / 0.0)"
        }
        .into();
    }
    let s = if x == x.trunc() && x.abs() < 1e15 {
        format!("{x:.1}")
    } else {
        format!("{x:?}")
    };
    s
}

/// An `f32` in the fewest digits that read back as the same `f32`.
pub(super) fn f32_text(x: f32) -> String {
    if x.is_finite() && x == x.trunc() && x.abs() < 1e7 {
        format!("{x:.1}")
    } else if x.is_finite() {
        format!("{x:?}")
    } else {
        float_text(x as f64)
    }
}

/// A float of dtype `d`: in the fewest digits that read back as the same
/// value of that dtype. A value that came from an `f32` (attributes such as
/// `epsilon=1e-7` are stored so) prints as the `f32` it is (`1e-7`, not
/// `1.0000000116860974e-7`); an `f64` keeps every digit it needs.
pub(super) fn dtype_float_text(x: f64, d: DType) -> String {
    if d != DType::F64 && f64::from(x as f32) == x {
        f32_text(x as f32)
    } else {
        float_text(x)
    }
}

pub(super) fn tensor_literal(t: &Tensor) -> String {
    fn nest(out: &mut String, shape: &[usize], items: &mut dyn Iterator<Item = String>) {
        match shape.split_first() {
            None => out.push_str(&items.next().unwrap_or_default()),
            Some((&n, rest)) => {
                out.push('[');
                for i in 0..n {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    nest(out, rest, items);
                }
                out.push(']');
            }
        }
    }
    let floats = match t.buffer() {
        Buffer::F32(_) | Buffer::F64(_) => t.to_f64_vec(),
        _ => Vec::new(),
    };
    if t.rank() > 0 && floats.iter().any(|x| !x.is_finite()) {
        // A literal holds numbers only: ±inf and NaN are written as the
        // quotients they are (`-1.0 / 0.0`), elementwise and exact (x / 1 = x).
        let num: Vec<f64> = floats
            .iter()
            .map(|&x| match x {
                x if x.is_nan() => 0.0,
                x if x.is_infinite() => x.signum(),
                x => x,
            })
            .collect();
        let den: Vec<f64> = floats
            .iter()
            .map(|x| if x.is_finite() { 1.0 } else { 0.0 })
            .collect();
        // In f32 (the literals' own dtype) unless the tensor is f64: every
        // narrower float converts to f32 exactly.
        let wide = if t.dtype() == DType::F64 {
            DType::F64
        } else {
            DType::F32
        };
        let literal = |v: Vec<f64>| {
            let t = Tensor::from_f64(t.shape().to_vec(), v).expect("sizes match");
            tensor_literal(&t.cast(wide))
        };
        let quotient = format!("RealDiv({}, {})", literal(num), literal(den));
        return if t.dtype() == wide {
            quotient
        } else {
            format!("Cast({quotient}, {})", t.dtype())
        };
    }
    let (mut items, natural): (Box<dyn Iterator<Item = String>>, DType) = match t.buffer() {
        Buffer::F32(v) => (Box::new(v.iter().map(|&x| f32_text(x))), DType::F32),
        Buffer::F64(v) => (Box::new(v.iter().map(|&x| float_text(x))), DType::F32),
        Buffer::I64(v) => (Box::new(v.iter().map(|x| x.to_string())), DType::I64),
        Buffer::Bool(v) => (Box::new(v.iter().map(|x| x.to_string())), DType::Bool),
    };
    if t.rank() == 0 {
        let v = items.next().unwrap_or_default();
        return format!("Fill({}, (), {v})", t.dtype());
    }
    if t.numel() == 0 {
        let shape: Vec<String> = t.shape().iter().map(|d| d.to_string()).collect();
        return format!("Zeros(({},), {})", shape.join(", "), t.dtype());
    }
    let mut literal = String::new();
    nest(&mut literal, t.shape(), &mut items);
    if t.dtype() == natural {
        literal
    } else {
        format!("Cast({literal}, {})", t.dtype())
    }
}

pub(super) fn tuple_text(items: &[String]) -> String {
    match items {
        [one] => format!("({one},)"),
        _ => format!("({})", items.join(", ")),
    }
}

/// A constant as a DSL expression.
pub(super) fn const_text(c: &Const) -> Result<String, String> {
    Ok(match c {
        Const::Int(i, d) => {
            if *d == DType::I64 {
                i.to_string()
            } else {
                format!("Cast({i}, {d})")
            }
        }
        Const::Float(x, d) => {
            if *d == DType::F32 {
                dtype_float_text(*x, *d)
            } else {
                format!("Cast({}, {d})", dtype_float_text(*x, *d))
            }
        }
        Const::Bool(b) => b.to_string(),
        Const::Str(s) => format!("{s:?}"),
        Const::None => "none".into(),
        Const::Tuple(items) => {
            let items: Vec<String> = items.iter().map(const_text).collect::<Result<_, _>>()?;
            tuple_text(&items)
        }
        Const::Tensor(t) => tensor_literal(t),
        Const::Type(d) => d.to_string(),
        Const::Monad => return Err("a monad (MindSpore's side-effect token)".into()),
        Const::Opaque(what) => return Err(what.clone()),
    })
}

/// A constant as the registry attribute `name` of `def` (`data_format=0`
/// becomes `"NCHW"`, ...).
/// The inputs of a call of `def` as arguments: positional while the signature
/// has only inputs before them, by keyword after its first attribute (so
/// `OneHot(indices, depth=5, on_value=a, off_value=b)` binds as meant).
pub(super) fn keyword_late_inputs(def: &ops::OpDef, inputs: Vec<String>) -> Vec<String> {
    let first_attr = def.params().iter().position(|p| !p.is_input());
    let mut out = Vec::with_capacity(inputs.len());
    let mut values = inputs.into_iter();
    for (i, p) in def.params().iter().enumerate() {
        if !p.is_input() {
            continue;
        }
        let Some(v) = values.next() else { break };
        if first_attr.is_some_and(|a| a < i) {
            out.push(format!("{}={v}", p.name));
        } else {
            out.push(v);
        }
    }
    out.extend(values);
    out
}

/// A MindSpore dtype name (`"int64"`, `"Float32"`) as a dtype.
pub(super) fn dtype_of_name(s: &str) -> Option<DType> {
    let lower = s.to_ascii_lowercase();
    DType::ALL
        .into_iter()
        .find(|d| d.mindspore_name().eq_ignore_ascii_case(&lower) || d.name() == lower)
}

pub(super) fn attr_text(
    c: &Const,
    conv: Conv,
    def: &ops::OpDef,
    name: &str,
) -> Result<String, String> {
    // The registry's attribute type decides between MindSpore's spellings.
    match (def.param(name).map(|p| p.kind), c) {
        (
            Some(ops::ParamKind::Attr {
                ty: ops::AttrType::IntTuple,
                ..
            }),
            Const::Int(v, _),
        ) => {
            return Ok(format!("({v},)"));
        }
        (
            Some(ops::ParamKind::Attr {
                ty: ops::AttrType::IntTuple,
                ..
            }),
            Const::Tuple(_),
        ) => {
            return const_text(c);
        }
        (
            Some(ops::ParamKind::Attr {
                ty: ops::AttrType::IntTuple,
                ..
            }),
            Const::Tensor(t),
        ) if t.rank() == 0 && !t.dtype().is_float() => {
            return Ok(format!("({},)", t.to_f64_vec()[0] as i64));
        }
        (
            Some(ops::ParamKind::Attr {
                ty: ops::AttrType::DType,
                ..
            }),
            Const::Str(s),
        ) => {
            return dtype_of_name(s)
                .map(|d| d.to_string())
                .ok_or_else(|| format!("`{name}` names no dtype: {s:?}"));
        }
        (
            Some(ops::ParamKind::Attr {
                ty: ops::AttrType::DType,
                ..
            }),
            Const::Int(v, _),
        ) if conv == Conv::Plain => {
            // MaxPoolWithArgmaxV2's constructor stores its `argmax_type` as 3
            // (int32) or 4 (int64), not as a TypeId.
            match (name, v) {
                ("argmax_type", 3) => return Ok(DType::I32.to_string()),
                ("argmax_type", 4) => return Ok(DType::I64.to_string()),
                _ => {}
            }
            return ms_ops::dtype_of_type_id(*v)
                .map(|d| d.to_string())
                .ok_or_else(|| format!("unsupported dtype (TypeId {v})"));
        }
        // A flag MindSpore stores as 0 or 1 (MaxPool3D's `ceil_mode`).
        (
            Some(ops::ParamKind::Attr {
                ty: ops::AttrType::Bool,
                ..
            }),
            Const::Int(v @ (0 | 1), _),
        ) => {
            return Ok((*v == 1).to_string());
        }
        _ => {}
    }
    // A string attribute that MindSpore holds as an enum number.
    let allowed = match def.param(name).map(|p| p.kind) {
        Some(ops::ParamKind::Attr {
            ty: ops::AttrType::Str(allowed),
            ..
        }) => Some(allowed),
        _ => None,
    };
    let conv = match (conv, c) {
        (Conv::Plain, Const::Int(..)) if allowed.is_some() => {
            ops::mindspore::enum_of_arg(name).map_or(Conv::Plain, Conv::Enum)
        }
        _ => conv,
    };
    match (conv, c) {
        (Conv::Enum(e), Const::Int(v, _)) => {
            let s = e
                .name_of(*v)
                .ok_or_else(|| format!("`{name}` {v} is no value of MindSpore's `{}`", e.name))?;
            // The registry's spelling of it.
            let s = allowed
                .and_then(|a| a.iter().find(|x| x.eq_ignore_ascii_case(s)))
                .copied()
                .unwrap_or(s);
            Ok(format!("{s:?}"))
        }
        (Conv::TypeId, Const::Int(v, _)) => ms_ops::dtype_of_type_id(*v)
            .map(|d| d.to_string())
            .ok_or_else(|| format!("unsupported dtype (TypeId {v})")),
        (Conv::NoneIsEmpty, Const::None) => Ok("()".into()),
        // A flag as a kernel graph's bool tensor (`use_locking`).
        (_, Const::Tensor(t)) if t.rank() == 0 && t.dtype() == DType::Bool => {
            Ok((t.to_f64_vec()[0] != 0.0).to_string())
        }
        // Pairs of ints as an `(N, 2)` int tensor (MirrorPad's paddings).
        (_, Const::Tensor(t)) if t.rank() == 2 && t.shape()[1] == 2 && !t.dtype().is_float() => {
            let v: Vec<String> = t
                .to_f64_vec()
                .chunks(2)
                .map(|p| tuple_text(&[(p[0] as i64).to_string(), (p[1] as i64).to_string()]))
                .collect();
            Ok(tuple_text(&v))
        }
        (_, Const::Tensor(t)) if t.rank() <= 1 && !t.dtype().is_float() => {
            // Shapes and axes sometimes arrive as int tensors.
            let v: Vec<String> = t
                .to_f64_vec()
                .iter()
                .map(|x| (*x as i64).to_string())
                .collect();
            Ok(if t.rank() == 0 {
                v[0].clone()
            } else {
                tuple_text(&v)
            })
        }
        _ => const_text(c),
    }
}
