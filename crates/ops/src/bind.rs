//! Binding a call's arguments to a primitive's signature, and checking attributes.

use ir::{AttrValue, DType};

use crate::{similar_names, AttrType, OpDef, ParamKind};

/// A call's arguments matched to the signature. `A` is whatever the caller uses
/// for an argument (a syntax node, an IR node, a span...).
#[derive(Debug, Clone, PartialEq)]
pub struct Bound<A> {
    /// The inputs, in signature order (all of them, for a variadic primitive).
    pub inputs: Vec<A>,
    /// The attributes given, by name, in signature order.
    pub attrs: Vec<(&'static str, A)>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum BindError<A> {
    TooManyArguments {
        max: usize,
        extra: A,
    },
    UnknownKeyword {
        name: String,
        arg: A,
        suggestions: Vec<&'static str>,
    },
    Duplicate {
        name: &'static str,
        arg: A,
    },
    MissingInput {
        name: &'static str,
    },
    MissingAttr {
        name: &'static str,
    },
}

impl<A> BindError<A> {
    pub fn message(&self, op: &OpDef) -> String {
        match self {
            BindError::TooManyArguments { max, .. } => {
                format!(
                    "`{}` takes at most {max} arguments: {}",
                    op.name,
                    op.signature()
                )
            }
            BindError::UnknownKeyword {
                name, suggestions, ..
            } => {
                let mut m = format!("`{}` has no attribute or input `{name}`", op.name);
                if let Some(s) = suggestions.first() {
                    m.push_str(&format!("; did you mean `{s}`?"));
                }
                m
            }
            BindError::Duplicate { name, .. } => format!("`{name}` is given twice"),
            BindError::MissingInput { name } => {
                format!("`{}` needs its input `{name}`: {}", op.name, op.signature())
            }
            BindError::MissingAttr { name } => {
                format!(
                    "`{}` needs the attribute `{name}`: {}",
                    op.name,
                    op.signature()
                )
            }
        }
    }
}

/// Matches positional and keyword arguments to `op`'s signature (spec §6: any
/// parameter may be given positionally in signature order, or by keyword).
pub fn bind_call<A: Clone>(
    op: &'static OpDef,
    positional: Vec<A>,
    keywords: Vec<(String, A)>,
) -> Result<Bound<A>, BindError<A>> {
    if op.variadic {
        // Every positional argument is an input; keywords are the attributes
        // the signature names (`Opaque(a, b, name="EnvironGet")`).
        let mut attrs = Vec::new();
        for (name, arg) in keywords {
            let Some(param) = op.attrs().find(|p| p.name == name) else {
                let suggestions = similar_names(&name, op.attrs().map(|p| p.name));
                return Err(BindError::UnknownKeyword {
                    name,
                    arg,
                    suggestions,
                });
            };
            if attrs.iter().any(|(n, _)| *n == param.name) {
                return Err(BindError::Duplicate {
                    name: param.name,
                    arg,
                });
            }
            attrs.push((param.name, arg));
        }
        for param in op.attrs() {
            if matches!(param.kind, ParamKind::Attr { default: None, .. })
                && !attrs.iter().any(|(n, _)| *n == param.name)
            {
                return Err(BindError::MissingAttr { name: param.name });
            }
        }
        return Ok(Bound {
            inputs: positional,
            attrs,
        });
    }
    let mut slots: Vec<Option<A>> = vec![None; op.params().len()];
    let count = positional.len();
    for (i, arg) in positional.into_iter().enumerate() {
        if i >= op.params().len() {
            return Err(BindError::TooManyArguments {
                max: op.params().len(),
                extra: arg,
            });
        }
        slots[i] = Some(arg);
    }
    let _ = count;
    for (name, arg) in keywords {
        let Some(index) = op.params().iter().position(|p| p.name == name) else {
            let suggestions = similar_names(&name, op.params().iter().map(|p| p.name));
            return Err(BindError::UnknownKeyword {
                name,
                arg,
                suggestions,
            });
        };
        if slots[index].is_some() {
            return Err(BindError::Duplicate {
                name: op.params()[index].name,
                arg,
            });
        }
        slots[index] = Some(arg);
    }
    let mut bound = Bound {
        inputs: Vec::new(),
        attrs: Vec::new(),
    };
    for (param, slot) in op.params().iter().zip(slots) {
        match (param.kind, slot) {
            (ParamKind::Input, Some(a)) => bound.inputs.push(a),
            (ParamKind::Input, None) => return Err(BindError::MissingInput { name: param.name }),
            (ParamKind::Attr { .. }, Some(a)) => bound.attrs.push((param.name, a)),
            (ParamKind::Attr { default: None, .. }, None) => {
                return Err(BindError::MissingAttr { name: param.name })
            }
            (ParamKind::Attr { .. }, None) => {}
        }
    }
    Ok(bound)
}

/// Checks an attribute value's type and allowed values; returns it normalised
/// (strings as the schema spells them, a single int for `Ints` kept as given).
pub fn check_attr(op: &OpDef, name: &str, value: &AttrValue) -> Result<AttrValue, String> {
    let Some(param) = op.param(name) else {
        return Err(format!("`{}` has no attribute `{name}`", op.name));
    };
    let ParamKind::Attr { ty, default } = param.kind else {
        return Err(format!(
            "`{name}` is an input of `{}`, not an attribute",
            op.name
        ));
    };
    let bad = || {
        format!(
            "attribute `{name}` of `{}` must be {}, not {}",
            op.name,
            ty.describe(),
            describe_value(value)
        )
    };
    if *value == AttrValue::None && default == Some(crate::AttrDefault::None) {
        return Ok(AttrValue::None);
    }
    match (ty, value) {
        (AttrType::Int, AttrValue::Int(_)) => Ok(value.clone()),
        (AttrType::Float, AttrValue::Float(_)) => Ok(value.clone()),
        (AttrType::Float, AttrValue::Int(i)) => Ok(AttrValue::float(*i as f64)),
        (AttrType::Bool, AttrValue::Bool(_)) => Ok(value.clone()),
        (AttrType::Number, AttrValue::Int(_) | AttrValue::Float(_) | AttrValue::Bool(_)) => {
            Ok(value.clone())
        }
        (AttrType::Str(allowed), AttrValue::Str(s)) => {
            match allowed.iter().find(|a| a.eq_ignore_ascii_case(s)) {
                Some(a) => Ok(AttrValue::Str(a.to_string())),
                None if allowed.is_empty() => Ok(value.clone()),
                None => Err(format!(
                    "attribute `{name}` of `{}` must be one of {} (any case), not \"{s}\"",
                    op.name,
                    allowed
                        .iter()
                        .map(|a| format!("\"{a}\""))
                        .collect::<Vec<_>>()
                        .join(", ")
                )),
            }
        }
        (AttrType::Ints, AttrValue::Int(_)) => Ok(value.clone()),
        (AttrType::Ints | AttrType::IntTuple, AttrValue::Tuple(items))
            if items.iter().all(|i| matches!(i, AttrValue::Int(_))) =>
        {
            Ok(value.clone())
        }
        (AttrType::Floats, AttrValue::Int(_) | AttrValue::Float(_)) => {
            Ok(AttrValue::float(value.as_f64().expect("a number")))
        }
        (AttrType::Floats, AttrValue::Tuple(items))
            if items
                .iter()
                .all(|i| matches!(i, AttrValue::Int(_) | AttrValue::Float(_))) =>
        {
            Ok(AttrValue::Tuple(
                items
                    .iter()
                    .map(|i| AttrValue::float(i.as_f64().expect("a number")))
                    .collect(),
            ))
        }
        (AttrType::IntTuples, AttrValue::Tuple(items))
            if items.iter().all(|i| {
                matches!(i, AttrValue::Tuple(v) if v.iter().all(|e| matches!(e, AttrValue::Int(_))))
            }) =>
        {
            Ok(value.clone())
        }
        (AttrType::DType, AttrValue::DType(_)) => Ok(value.clone()),
        _ => Err(bad()),
    }
}

fn describe_value(value: &AttrValue) -> String {
    match value {
        AttrValue::Int(i) => format!("the int {i}"),
        AttrValue::Float(x) => format!("the float {}", x.0),
        AttrValue::Bool(b) => format!("the bool {b}"),
        AttrValue::Str(s) => format!("the string \"{s}\""),
        AttrValue::DType(d) => format!("the dtype {d}"),
        AttrValue::Tuple(_) => format!("the tuple {value}"),
        AttrValue::None => "none".into(),
    }
}

/// All attributes of a call: the given ones, then defaults for the rest.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Attrs {
    values: Vec<(&'static str, AttrValue)>,
}

/// Fills in defaults. `given` must already be checked with [`check_attr`].
pub fn resolve_attrs(op: &OpDef, given: &[(String, AttrValue)]) -> Attrs {
    let mut values = Vec::new();
    for param in op.attrs() {
        let ParamKind::Attr { default, .. } = param.kind else {
            continue;
        };
        let value = given
            .iter()
            .find(|(n, _)| n == param.name)
            .map(|(_, v)| v.clone())
            .or_else(|| default.map(|d| d.value()));
        if let Some(v) = value {
            values.push((param.name, v));
        }
    }
    Attrs { values }
}

impl Attrs {
    pub fn new(values: Vec<(&'static str, AttrValue)>) -> Attrs {
        Attrs { values }
    }

    pub fn get(&self, name: &str) -> Option<&AttrValue> {
        self.values.iter().find(|(n, _)| *n == name).map(|(_, v)| v)
    }

    pub fn iter(&self) -> impl Iterator<Item = &(&'static str, AttrValue)> {
        self.values.iter()
    }

    /// The accessors below panic on a missing or mistyped attribute: attributes
    /// are checked against the schema before any rule runs.
    pub fn int(&self, name: &str) -> i64 {
        self.get(name)
            .and_then(AttrValue::as_int)
            .unwrap_or_else(|| panic!("attribute {name} is not an int"))
    }

    pub fn f64(&self, name: &str) -> f64 {
        self.get(name)
            .and_then(AttrValue::as_f64)
            .unwrap_or_else(|| panic!("attribute {name} is not a number"))
    }

    pub fn bool(&self, name: &str) -> bool {
        self.get(name)
            .and_then(AttrValue::as_bool)
            .unwrap_or_else(|| panic!("attribute {name} is not a bool"))
    }

    /// A string attribute, as the schema spells it.
    pub fn str(&self, name: &str) -> &str {
        self.get(name)
            .and_then(AttrValue::as_str)
            .unwrap_or_else(|| panic!("attribute {name} is not a string"))
    }

    /// An int or tuple of ints as a list; `none` gives `None`.
    pub fn ints(&self, name: &str) -> Option<Vec<i64>> {
        match self.get(name) {
            None | Some(AttrValue::None) => None,
            Some(v) => Some(
                v.as_ints()
                    .unwrap_or_else(|| panic!("attribute {name} is not ints")),
            ),
        }
    }

    pub fn dtype(&self, name: &str) -> DType {
        match self.get(name) {
            Some(AttrValue::DType(d)) => *d,
            _ => panic!("attribute {name} is not a dtype"),
        }
    }
}
