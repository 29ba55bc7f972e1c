//! Lowering weight declarations and their initialisers, constant attribute
//! values, and the diagnostics for primitives the registry lacks.

use super::*;

/// Lowers a weight declaration.
pub fn lower_weight(
    weight: &ast::Weight,
    base_dir: Option<&std::path::Path>,
) -> (Option<WeightDef>, Vec<Diagnostic>) {
    let _ = base_dir;
    let mut l = Lowerer {
        index: &ItemIndex::default(),
        constants: None,
        body: Body::default(),
        map: SourceMap::default(),
        diagnostics: Vec::new(),
        scopes: Vec::new(),
    };
    let Some(name) = weight.name() else {
        return (None, Vec::new());
    };
    let ty = match weight.ty() {
        Some(t) => {
            let ty = l.ty(&t);
            l.warn_over_budget(&ty, t.range());
            match &ty {
                Ty::Tensor(_, shape) if shape.as_known().is_some() => {}
                Ty::Unknown => {}
                _ => {
                    l.error(Code::BadWeight, t.range(), format!("a weight needs a tensor type with a concrete shape, like `f32[128, 784]`, not `{ty}`"));
                }
            }
            ty
        }
        None => Ty::Unknown,
    };
    let init = match weight.init() {
        Some(e) => l.weight_init(&e, &ty),
        None => WeightInit::Zeros,
    };
    let def = WeightDef {
        name: name.text(),
        ty,
        init,
        span: Some(weight.range()),
        name_span: Some(name.range()),
    };
    (Some(def), l.diagnostics)
}

impl Lowerer<'_> {
    pub(super) fn weight_init(&mut self, e: &ast::Expr, ty: &Ty) -> WeightInit {
        let bad = |l: &mut Self, r: TextRange| {
            l.error(
                Code::BadWeight,
                r,
                "a weight's initialiser is `zeros`, `ones`, `constant(V)`, `normal(mean, std, seed)`, `uniform(low, high, seed)`, a tensor literal, or `load(\"PATH\")`",
            );
            WeightInit::Zeros
        };
        match e {
            ast::Expr::NameRef(n) => match n.text().as_str() {
                "zeros" => WeightInit::Zeros,
                "ones" => WeightInit::Ones,
                _ => bad(self, e.range()),
            },
            ast::Expr::Tensor(t) => {
                match self.tensor_literal(t) {
                    Some(tensor) => {
                        if let Ty::Tensor(dtype, shape) = ty {
                            let dims: Vec<i64> = tensor.shape().iter().map(|&d| d as i64).collect();
                            if shape.as_known().is_some_and(|s| s != dims) {
                                self.error(Code::BadWeight, t.range(), format!("the literal has shape {:?} but the weight is declared {ty}", dims));
                            }
                            return WeightInit::Tensor(Arc::new(tensor.cast(*dtype)));
                        }
                        WeightInit::Tensor(Arc::new(tensor))
                    }
                    None => WeightInit::Zeros,
                }
            }
            ast::Expr::Call(c) => {
                let Some(ast::Expr::NameRef(callee)) = c.callee() else {
                    return bad(self, e.range());
                };
                let mut positional = Vec::new();
                let mut keywords = Vec::new();
                for arg in c.args() {
                    let value = arg.value().and_then(|v| const_value(&v, &|_| None));
                    let r = arg.syntax().text_range();
                    match (&arg, value) {
                        (ast::Arg::Keyword(k), Some(v)) => {
                            keywords.push((k.name().map(|n| n.text()).unwrap_or_default(), v, r))
                        }
                        (_, Some(v)) => positional.push((v, r)),
                        (_, None) => {
                            self.error(
                                Code::NotConstant,
                                r,
                                "initialiser arguments must be constants",
                            );
                            return WeightInit::Zeros;
                        }
                    }
                }
                let callee_name = callee.text();
                let spec: &[(&str, f64)] = match callee_name.as_str() {
                    "constant" => &[("value", f64::NAN)],
                    "normal" => &[("mean", 0.0), ("std", 1.0), ("seed", 0.0)],
                    "uniform" => &[("low", -1.0), ("high", 1.0), ("seed", 0.0)],
                    "load" => {
                        let strings: Vec<String> = positional
                            .iter()
                            .filter_map(|(v, _)| v.as_str().map(str::to_string))
                            .collect();
                        return match (strings.as_slice(), keywords.is_empty(), positional.len()) {
                            ([path], true, 1) => WeightInit::Load {
                                path: path.clone(),
                                key: None,
                            },
                            ([path, key], true, 2) => WeightInit::Load {
                                path: path.clone(),
                                key: Some(key.clone()),
                            },
                            _ => {
                                self.error(Code::BadWeight, e.range(), "`load` takes a path, and for a .safetensors file the tensor's name: `load(\"w.npy\")`, `load(\"m.safetensors\", \"fc1.weight\")`");
                                WeightInit::Zeros
                            }
                        };
                    }
                    _ => return bad(self, callee.range()),
                };
                let mut values: Vec<f64> = spec.iter().map(|(_, d)| *d).collect();
                for (i, (v, r)) in positional.iter().enumerate() {
                    match (values.get_mut(i), v.as_f64()) {
                        (Some(slot), Some(x)) => *slot = x,
                        _ => {
                            self.error(
                                Code::BadWeight,
                                *r,
                                format!("`{callee_name}` takes {} numbers", spec.len()),
                            );
                        }
                    }
                }
                for (k, v, r) in &keywords {
                    match (spec.iter().position(|(n, _)| n == k), v.as_f64()) {
                        (Some(i), Some(x)) => values[i] = x,
                        _ => {
                            let names: Vec<&str> = spec.iter().map(|(n, _)| *n).collect();
                            self.error(
                                Code::BadWeight,
                                *r,
                                format!("`{callee_name}` takes {}", names.join(", ")),
                            );
                        }
                    }
                }
                match callee_name.as_str() {
                    "constant" if values[0].is_nan() => {
                        self.error(
                            Code::BadWeight,
                            e.range(),
                            "`constant` needs its value: `constant(0.5)`",
                        );
                        WeightInit::Zeros
                    }
                    "constant" => WeightInit::Constant(values[0]),
                    "normal" => {
                        if values[1] < 0.0 {
                            self.error(Code::BadWeight, e.range(), "`std` must not be negative");
                        }
                        WeightInit::Normal {
                            mean: values[0],
                            std: values[1],
                            seed: values[2] as u64,
                        }
                    }
                    _ => {
                        if values[0] > values[1] {
                            self.error(Code::BadWeight, e.range(), "`low` must not exceed `high`");
                        }
                        WeightInit::Uniform {
                            low: values[0],
                            high: values[1],
                            seed: values[2] as u64,
                        }
                    }
                }
            }
            _ => bad(self, e.range()),
        }
    }
}

/// A scalar constant value's abstract form (literals in graphs).
/// A constant as an attribute value.
pub(super) fn value_attr(v: &Value) -> Option<AttrValue> {
    Some(match v {
        Value::Scalar { value, .. } => match value {
            ScalarConst::Int(i) => AttrValue::Int(*i),
            ScalarConst::Float(x) => AttrValue::float(*x),
            ScalarConst::Bool(b) => AttrValue::Bool(*b),
        },
        Value::Str(s) => AttrValue::Str(s.clone()),
        Value::None => AttrValue::None,
        Value::Type(Ty::Scalar(d)) => AttrValue::DType(*d),
        Value::Tuple(items) => {
            AttrValue::Tuple(items.iter().map(value_attr).collect::<Option<_>>()?)
        }
        _ => return None,
    })
}

/// An attribute's value as a constant of the graph: numbers are weak, like
/// literals, so they take the dtype of the tensors they meet.
pub(super) fn attr_constant(v: &AttrValue) -> Option<Value> {
    Some(match v {
        AttrValue::Int(i) => Value::int(*i),
        AttrValue::Float(x) => Value::float(x.0),
        AttrValue::Bool(b) => Value::bool(*b),
        AttrValue::Str(s) => Value::Str(s.clone()),
        AttrValue::None => Value::None,
        AttrValue::DType(d) => Value::Type(Ty::Scalar(*d)),
        AttrValue::Tuple(items) => {
            Value::Tuple(items.iter().map(attr_constant).collect::<Option<_>>()?)
        }
    })
}

pub fn scalar_const(v: &AttrValue) -> Option<ScalarConst> {
    match v {
        AttrValue::Int(i) => Some(ScalarConst::Int(*i)),
        AttrValue::Float(x) => Some(ScalarConst::Float(x.0)),
        AttrValue::Bool(b) => Some(ScalarConst::Bool(*b)),
        _ => None,
    }
}

/// A call of a name that is no registry primitive: MindSpore's name for a
/// registry primitive, a MindSpore primitive the registry does not support
/// yet (E0145), or a misspelling (did-you-mean: supported names first).
pub(super) fn unknown_primitive(text: &str, range: TextRange) -> Diagnostic {
    let ours = ops::mindspore::registry_name(text);
    if ours != text && ops::lookup(ours).is_some() {
        let mut d = Diagnostic::error(
            Code::UnknownPrimitive,
            range,
            format!("unknown primitive `{text}`; did you mean `{ours}`?"),
        )
        .with_fix(format!("change to `{ours}`"), range, ours);
        if ops::mindspore::schema(text).is_some() {
            d.notes.push(format!(
                "MindSpore {}'s `{text}` is mirdsl's `{ours}`",
                ops::mindspore::SERIES
            ));
        }
        return d;
    }
    if let Some(prim) = ops::mindspore::schema(text) {
        return unsupported_primitive(prim, range);
    }
    let supported = ops::similar_names(text, ops::public_ops().iter().map(|o| o.name));
    let mut message = format!("unknown primitive `{text}`");
    let suggestion = match supported.first() {
        Some(s) => Some((*s, String::new())),
        None => ops::similar_names(text, ops::mindspore::PRIMS.iter().map(|p| p.name))
            .first()
            .map(|s| {
                (
                    *s,
                    format!(
                        " (a MindSpore {} primitive mirdsl does not support yet)",
                        ops::mindspore::SERIES
                    ),
                )
            }),
    };
    if let Some((s, what)) = &suggestion {
        message.push_str(&format!("; did you mean `{s}`{what}?"));
    }
    let mut d = Diagnostic::error(Code::UnknownPrimitive, range, message);
    if let Some((s, _)) = suggestion {
        d = d.with_fix(format!("change to `{s}`"), range, s);
    }
    d
}

/// E0145: a MindSpore primitive the registry does not support yet, with
/// MindSpore's signature.
pub(super) fn unsupported_primitive(prim: &ops::mindspore::MsPrim, range: TextRange) -> Diagnostic {
    let series = ops::mindspore::SERIES;
    let mut d = Diagnostic::error(
        Code::UnsupportedPrimitive,
        range,
        format!(
            "`{}` is a MindSpore {series} primitive that mirdsl does not support yet",
            prim.name
        ),
    );
    d.notes
        .push(format!("MindSpore {series}: `{}`", prim.signature()));
    d.notes
        .push(format!("`{}` is {}", prim.name, prim.kind_note()));
    d
}
