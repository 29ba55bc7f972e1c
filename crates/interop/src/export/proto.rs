//! Writing the protobuf: a graph's nodes ([`GraphBuilder`]), attributes
//! (MindSpore's old-style primitive attributes included), tensors and types.

use super::*;
use ops::{ConvRole, Family, PoolReduce};

/// Nodes of one graph being written.
pub(super) struct GraphBuilder {
    pub(super) key: GKey,
    pub(super) name: String,
    pub(super) nodes: Vec<NodeProto>,
    pub(super) names: HashMap<Val, String>,
    pub(super) params: std::collections::HashSet<String>,
    /// Parameters of an inlined graph given a constant number: written as
    /// that constant where used, a tensor beside tensors, as a literal is.
    pub(super) consts: HashMap<Val, Value>,
}

impl GraphBuilder {
    /// `graph:label`, unique among the graph's parameters.
    pub(super) fn param_name(&mut self, label: &str) -> String {
        let mut name = format!("{}:{label}", self.name);
        let mut k = 1;
        while !self.params.insert(name.clone()) {
            name = format!("{}:{label}_{k}", self.name);
            k += 1;
        }
        name
    }

    pub(super) fn node(
        &mut self,
        ex: &mut Exporter,
        label: &str,
        op_type: &str,
        inputs: Vec<String>,
        ty: Option<&AbsVal>,
    ) -> String {
        let uid = ex.next_uid();
        let label: String = label
            .chars()
            .map(|c| if c == ':' { '_' } else { c })
            .collect();
        let name = format!("{}:{label}:{uid}", self.name);
        let mut attribute = Vec::new();
        if let Some(t) = ty.and_then(|t| shape_attr(t, "shape")) {
            attribute.push(t);
        }
        self.nodes.push(NodeProto {
            input: inputs,
            output: vec![name.clone()],
            name: Some(name.clone()),
            op_type: Some(op_type.to_string()),
            attribute,
            domain: Some(String::new()),
            ..Default::default()
        });
        name
    }

    pub(super) fn constant(
        &mut self,
        ex: &mut Exporter,
        v: &Value,
        like: Option<DType>,
    ) -> Result<String, ExportError> {
        let value = value_attr(v, like)?;
        let name = format!("ValueNode_{}", ex.next_uid());
        self.nodes.push(NodeProto {
            output: vec![name.clone()],
            name: Some(name.clone()),
            op_type: Some("Constant".into()),
            attribute: vec![AttributeProto {
                name: Some("value".into()),
                ..value
            }],
            domain: Some(String::new()),
            ..Default::default()
        });
        Ok(name)
    }
}

pub(super) fn int_attr(name: &str, v: i64) -> AttributeProto {
    AttributeProto {
        name: Some(name.into()),
        i: Some(v),
        r#type: Some(AttributeType::Int64 as i32),
        ..Default::default()
    }
}

pub(super) fn str_attr(name: &str, s: &str) -> AttributeProto {
    AttributeProto {
        name: Some(name.into()),
        s: Some(s.as_bytes().to_vec()),
        r#type: Some(AttributeType::String as i32),
        ..Default::default()
    }
}

pub(super) fn bool_attr(name: &str, b: bool) -> AttributeProto {
    AttributeProto {
        name: Some(name.into()),
        i: Some(b as i64),
        r#type: Some(AttributeType::Bool as i32),
        ..Default::default()
    }
}

pub(super) fn float_attr(name: &str, x: f32) -> AttributeProto {
    AttributeProto {
        name: Some(name.into()),
        f: Some(x),
        r#type: Some(AttributeType::Float as i32),
        ..Default::default()
    }
}

/// A tuple of ints as MindSpore writes attribute tuples: each element an
/// `Int64` attribute with its value in `ints`.
pub(super) fn ints_attr(name: &str, v: &[i64]) -> AttributeProto {
    AttributeProto {
        name: Some(name.into()),
        r#type: Some(AttributeType::Tuple as i32),
        values: v
            .iter()
            .map(|&x| AttributeProto {
                ints: vec![x],
                r#type: Some(AttributeType::Int64 as i32),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    }
}

pub(super) fn strings_attr(name: &str, v: &[&str]) -> AttributeProto {
    AttributeProto {
        name: Some(name.into()),
        r#type: Some(AttributeType::List as i32),
        values: v
            .iter()
            .map(|s| AttributeProto {
                strings: vec![s.as_bytes().to_vec()],
                r#type: Some(AttributeType::String as i32),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    }
}

/// `n` or `(h, w)` as MindSpore's 4-element NCHW form `(1, 1, h, w)`.
pub(super) fn nchw4(v: &AttrValue) -> Option<Vec<i64>> {
    let ints = v.as_ints()?;
    Some(match ints.as_slice() {
        [a] => vec![1, 1, *a, *a],
        [a, b] => vec![1, 1, *a, *b],
        [_, _, _, _] => ints,
        _ => return None,
    })
}

pub(super) fn pair(v: &AttrValue) -> Option<Vec<i64>> {
    let ints = v.as_ints()?;
    Some(match ints.as_slice() {
        [a] => vec![*a, *a],
        [a, b] => vec![*a, *b],
        [1, 1, a, b] => vec![*a, *b],
        _ => return None,
    })
}

/// The attributes of an old-style primitive, as MindSpore 2.10 sets them
/// (`dims0`: the sizes of its first input, each where known).
pub(super) fn old_style_attrs(
    def: &ops::OpDef,
    mapping: &ops::mindspore::Mapping,
    attr: &dyn Fn(&str) -> Option<AttrValue>,
    dims0: Option<&[Option<i64>]>,
) -> Result<Vec<AttributeProto>, ExportError> {
    let name = def.name;
    let bad = |what: &str| ExportError::Unsupported(format!("`{name}`'s `{what}` is not valid"));
    let get = |what: &'static str| attr(what).ok_or_else(|| bad(what));
    let string = |what: &'static str| -> Result<String, ExportError> {
        get(what)?
            .as_str()
            .map(str::to_string)
            .ok_or_else(|| bad(what))
    };
    if let Some(all) = super::windows::all_attrs(name, attr) {
        return all;
    }
    if let Some(stored) = super::windows::stored_attrs(name, attr, dims0) {
        // The `__init__` arguments, then what MindSpore stores beside or
        // instead of them.
        let stored = stored?;
        let mut attrs = generic_old_style_attrs(def, mapping, attr)?;
        attrs.retain(|a| !stored.iter().any(|s| s.name == a.name));
        attrs.extend(stored);
        return Ok(attrs);
    }
    Ok(match (def.traits.family, name) {
        (Family::Conv2D(role), _) => {
            // MindSpore's C++ reads these as it stores them: NCHW 4-tuples for
            // stride and dilation, 4 paddings, `format`, and (the backward
            // forms) `pad_list` and an upper-case `pad_mode`.
            let backward = role != ConvRole::Forward;
            let pad_mode = if backward {
                string("pad_mode")?.to_ascii_uppercase()
            } else {
                string("pad_mode")?.to_ascii_lowercase()
            };
            let pad = get("pad")?.as_ints().ok_or_else(|| bad("pad"))?;
            let pad4 = match pad.as_slice() {
                [p] => vec![*p; 4],
                [a, b, c, d] => vec![*a, *b, *c, *d],
                _ => return Err(bad("pad")),
            };
            let group = get("group")?.as_int().ok_or_else(|| bad("group"))?;
            vec![
                ints_attr(
                    "kernel_size",
                    &pair(&get("kernel_size")?).ok_or_else(|| bad("kernel_size"))?,
                ),
                int_attr("mode", get("mode")?.as_int().ok_or_else(|| bad("mode"))?),
                int_attr(
                    "out_channel",
                    get("out_channel")?
                        .as_int()
                        .ok_or_else(|| bad("out_channel"))?,
                ),
                strings_attr(
                    "input_names",
                    match name {
                        "Conv2D" => &["x", "w"][..],
                        "Conv2DBackpropFilter" => &["out_backprop", "input", "filter_sizes"][..],
                        _ => &["out_backprop", "filter", "input_sizes"][..],
                    },
                ),
                ints_attr("pad", &pad4),
                str_attr("pad_mode", &pad_mode),
                str_attr("format", &string("data_format")?),
                int_attr("groups", group),
                ints_attr(
                    "stride",
                    &nchw4(&get("stride")?).ok_or_else(|| bad("stride"))?,
                ),
                int_attr("group", group),
                ints_attr(
                    "dilation",
                    &nchw4(&get("dilation")?).ok_or_else(|| bad("dilation"))?,
                ),
                strings_attr("output_names", &["output"]),
            ]
            .into_iter()
            .chain(backward.then(|| {
                let list = attr("pad_list")
                    .and_then(|v| v.as_ints())
                    .filter(|v| v.len() == 4)
                    .unwrap_or_else(|| pad4.clone());
                ints_attr("pad_list", &list)
            }))
            .collect()
        }
        (
            Family::Pool2D {
                reduce: PoolReduce::Max,
                grad: false,
            },
            _,
        ) => vec![
            str_attr("pad_mode", &string("pad_mode")?.to_ascii_uppercase()),
            strings_attr("output_names", &["output"]),
            ints_attr(
                "kernel_size",
                &nchw4(&get("kernel_size")?).ok_or_else(|| bad("kernel_size"))?,
            ),
            str_attr("format", &string("data_format")?),
            ints_attr(
                "strides",
                &nchw4(&get("strides")?).ok_or_else(|| bad("strides"))?,
            ),
            strings_attr("input_names", &["x"]),
        ],
        (_, "SparseSoftmaxCrossEntropyWithLogits") => vec![
            bool_attr(
                "is_grad",
                get("is_grad")?.as_bool().ok_or_else(|| bad("is_grad"))?,
            ),
            strings_attr("input_names", &["features", "labels"]),
            strings_attr("output_names", &["output"]),
            float_attr("sens", 1.0),
        ],
        (_, "SoftmaxCrossEntropyWithLogits") => Vec::new(),
        // As MindSpore's constructor adds them: a fusion group and a mark
        // that keeps the collective from being optimised away.
        (_, "AllReduce") => {
            let mut attrs = generic_old_style_attrs(def, mapping, attr)?;
            attrs.push(int_attr("fusion", 0));
            attrs.push(bool_attr("no_eliminate", true));
            attrs
        }
        _ => generic_old_style_attrs(def, mapping, attr)?,
    })
}

/// The attributes of an old-style primitive without a convention of its own:
/// each `__init__` argument under MindSpore's name, with the registry's value
/// (or MindSpore's default where the registry does not have it).
pub(super) fn generic_old_style_attrs(
    def: &ops::OpDef,
    mapping: &ops::mindspore::Mapping,
    attr: &dyn Fn(&str) -> Option<AttrValue>,
) -> Result<Vec<AttributeProto>, ExportError> {
    let Some(schema) = mapping.schema.filter(|s| s.args.is_some()) else {
        return Err(ExportError::Unsupported(format!(
            "`{}`: MindSpore's `{}` has no signature to write it with",
            def.name, mapping.ms
        )));
    };
    let mut out = Vec::new();
    let inputs: Vec<&str> = schema.node_inputs().map(|a| a.name).collect();
    if !inputs.is_empty() {
        out.push(strings_attr("input_names", &inputs));
    }
    for a in schema.args() {
        if a.role != ops::mindspore::MsRole::Attr {
            continue;
        }
        let value = match mapping.attr(a.name) {
            Some(ours) => attr(ours),
            None => match a.default {
                Some(d) => fixed_value(&d).ok().map(|v| value_to_attr_value(&v)),
                None => None,
            },
        };
        let Some(mut value) = value else {
            return Err(ExportError::Unsupported(format!(
                "`{}`: MindSpore's `{}` needs `{}`, which the registry does not have",
                def.name, mapping.ms, a.name
            )));
        };
        // As MindSpore stores it (`ALIASES`: NCHW windows, upper-case modes).
        let conv = mapping.attr_conv(a.name);
        if conv != Conv::Plain {
            let converted = attr_to_value(&value, conv).map_err(|e| {
                ExportError::Unsupported(format!("`{}`'s `{}`: {e}", def.name, a.name))
            })?;
            value = value_to_attr_value(&converted);
        }
        if let Some(also) = mapping.also_stored(a.name) {
            out.extend(attribute_proto(also, &value));
        }
        if let Some(proto) = attribute_proto(a.name, &value) {
            out.push(proto);
        }
    }
    out.push(strings_attr("output_names", &["output"]));
    Ok(out)
}

/// An attribute value as an attribute of an old-style primitive.
pub(super) fn attribute_proto(name: &str, v: &AttrValue) -> Option<AttributeProto> {
    Some(match v {
        AttrValue::Int(i) => int_attr(name, *i),
        AttrValue::Float(x) => float_attr(name, x.0 as f32),
        AttrValue::Bool(b) => bool_attr(name, *b),
        AttrValue::Str(s) => str_attr(name, s),
        AttrValue::DType(d) => int_attr(name, ms_ops::type_id(*d)),
        AttrValue::Tuple(items) => match v.as_ints() {
            Some(ints) => ints_attr(name, &ints),
            // A tuple of tuples (`Pad`'s `paddings`): a tuple of each's.
            None => AttributeProto {
                name: Some(name.into()),
                r#type: Some(AttributeType::Tuple as i32),
                values: items
                    .iter()
                    .map(|item| {
                        let mut a = attribute_proto(name, item)?;
                        a.name = None;
                        Some(a)
                    })
                    .collect::<Option<_>>()?,
                ..Default::default()
            },
        },
        AttrValue::None => return None,
    })
}

/// The attribute value of a constant (for MindSpore defaults).
pub(super) fn value_to_attr_value(v: &Value) -> AttrValue {
    match v {
        Value::Scalar { value, .. } => match value {
            ir::ScalarConst::Bool(b) => AttrValue::Bool(*b),
            ir::ScalarConst::Int(i) => AttrValue::Int(*i),
            ir::ScalarConst::Float(x) => AttrValue::float(*x),
        },
        Value::Str(s) => AttrValue::Str(s.clone()),
        Value::Tuple(items) => AttrValue::Tuple(items.iter().map(value_to_attr_value).collect()),
        _ => AttrValue::None,
    }
}

/// The value MindSpore's argument is fixed to, as a constant.
pub(super) fn fixed_value(v: &ops::mindspore::MsValue) -> Result<Value, String> {
    use ops::mindspore::MsValue as V;
    Ok(match v {
        V::None => Value::None,
        V::Bool(b) => Value::bool(*b),
        V::Int(i) => Value::int(*i),
        V::Float(x) => Value::float(*x),
        V::Str(s) => Value::Str(s.to_string()),
        V::Ints(v) => Value::Tuple(v.iter().map(|&i| Value::int(i)).collect()),
        V::Floats(v) => Value::Tuple(v.iter().map(|&x| Value::float(x)).collect()),
        V::Bools(v) => Value::Tuple(v.iter().map(|&b| Value::bool(b)).collect()),
        V::DType(name) => Value::int(ms_ops::type_id(
            ms_ops::dtype_of_ms_name(name).ok_or_else(|| format!("unsupported dtype {name}"))?,
        )),
        V::Other(text) => return Err(format!("MindSpore's default `{text}` is not a constant")),
    })
}

/// A registry attribute's default, if it has one.
pub(super) fn attr_default(p: &ops::ParamDef) -> Option<AttrValue> {
    match p.kind {
        ops::ParamKind::Attr {
            default: Some(d), ..
        } => Some(d.value()),
        _ => None,
    }
}

/// An attribute value as the constant MindSpore's primitive function takes.
pub(super) fn attr_to_value(v: &AttrValue, conv: Conv) -> Result<Value, String> {
    Ok(match (conv, v) {
        (Conv::Enum(e), AttrValue::Str(s)) => Value::int(
            e.value(s)
                .ok_or_else(|| format!("{s:?} is no value of MindSpore's `{}`", e.name))?,
        ),
        (Conv::TypeId, AttrValue::DType(d)) => Value::int(ms_ops::type_id(*d)),
        (Conv::IntTuple, AttrValue::Int(i)) => Value::Tuple(vec![Value::int(*i)]),
        (Conv::Pair, v) if v.as_ints().is_some() => {
            let pair = pair(v).ok_or_else(|| format!("{v} is not a window (`k` or `(h, w)`)"))?;
            Value::Tuple(pair.into_iter().map(Value::int).collect())
        }
        (Conv::NoneIsEmpty, AttrValue::Tuple(items)) if items.is_empty() => Value::None,
        (Conv::Nchw4, v) if v.as_ints().is_some() => {
            let quad = nchw4(v)
                .ok_or_else(|| format!("{v} is not a window (`k`, `(h, w)` or `(1, 1, h, w)`)"))?;
            Value::Tuple(quad.into_iter().map(Value::int).collect())
        }
        (Conv::Upper, AttrValue::Str(s)) => Value::Str(s.to_ascii_uppercase()),
        (Conv::IntTensor, v) => {
            // Flat ints, or pairs: an `(N, 2)` tensor.
            let bad = || format!("{v} is not ints or pairs of ints");
            let (shape, flat) = match v.as_ints() {
                Some(flat) => (vec![flat.len()], flat),
                None => {
                    let AttrValue::Tuple(rows) = v else {
                        return Err(bad());
                    };
                    let rows: Vec<Vec<i64>> = rows
                        .iter()
                        .map(|r| r.as_ints().filter(|r| r.len() == 2))
                        .collect::<Option<_>>()
                        .ok_or_else(bad)?;
                    (vec![rows.len(), 2], rows.concat())
                }
            };
            let t = Tensor::from_i64(DType::I64, shape, flat).map_err(|e| e.to_string())?;
            Value::Tensor(std::sync::Arc::new(t))
        }
        (_, v) => plain_value(v),
    })
}

pub(super) fn plain_value(v: &AttrValue) -> Value {
    match v {
        AttrValue::Int(i) => Value::int(*i),
        AttrValue::Float(x) => Value::float(x.0),
        AttrValue::Bool(b) => Value::bool(*b),
        AttrValue::Str(s) => Value::Str(s.clone()),
        AttrValue::DType(d) => Value::int(ms_ops::type_id(*d)),
        AttrValue::Tuple(items) => Value::Tuple(items.iter().map(plain_value).collect()),
        AttrValue::None => Value::None,
    }
}

/// A constant as the `value` attribute of a `Constant` node. A scalar beside
/// a tensor (`like`) becomes a rank-0 tensor of that dtype.
pub(super) fn value_attr(v: &Value, like: Option<DType>) -> Result<AttributeProto, ExportError> {
    Ok(match v {
        Value::Scalar { value, dtype, .. } => {
            if let Some(d) = like {
                return Ok(tensor_value(&Tensor::full(d, Vec::new(), value.as_f64())));
            }
            match value {
                ir::ScalarConst::Bool(b) => AttributeProto {
                    i: Some(*b as i64),
                    r#type: Some(AttributeType::Bool as i32),
                    ..Default::default()
                },
                ir::ScalarConst::Int(i) => AttributeProto {
                    i: Some(*i),
                    r#type: Some(int_type(*dtype) as i32),
                    ..Default::default()
                },
                ir::ScalarConst::Float(x) => match dtype {
                    DType::F64 => AttributeProto {
                        d: Some(*x),
                        r#type: Some(AttributeType::Double as i32),
                        ..Default::default()
                    },
                    _ => AttributeProto {
                        f: Some(*x as f32),
                        r#type: Some(AttributeType::Float as i32),
                        ..Default::default()
                    },
                },
            }
        }
        Value::Str(s) => AttributeProto {
            s: Some(s.as_bytes().to_vec()),
            r#type: Some(AttributeType::String as i32),
            ..Default::default()
        },
        Value::None => AttributeProto {
            r#type: Some(AttributeType::None as i32),
            ..Default::default()
        },
        Value::Tuple(items) => AttributeProto {
            r#type: Some(AttributeType::Tuple as i32),
            values: items.iter().map(tuple_element).collect::<Result<_, _>>()?,
            ..Default::default()
        },
        Value::Tensor(t) => tensor_value(t),
        // MindSpore's `U`: the state token of graphs that update weights.
        Value::Monad => AttributeProto {
            r#type: Some(AttributeType::Umonad as i32),
            ..Default::default()
        },
        Value::Type(ir::Ty::Scalar(d)) | Value::Type(ir::Ty::Tensor(d, _)) => AttributeProto {
            i: Some(ms_ops::type_id(*d)),
            r#type: Some(AttributeType::Int64 as i32),
            ..Default::default()
        },
        other => {
            return Err(ExportError::Unsupported(format!(
                "the constant {other:?} has no MindIR form here"
            )))
        }
    })
}

/// A tensor constant, as MindSpore writes one: `TENSORS` with one tensor.
pub(super) fn tensor_value(t: &Tensor) -> AttributeProto {
    let mut proto = tensor_proto(t);
    proto.name = Some("value0".into());
    AttributeProto {
        tensors: vec![proto],
        r#type: Some(AttributeType::Tensors as i32),
        ..Default::default()
    }
}

/// A tuple element: scalars keep their value in the repeated fields, as
/// MindSpore's exporter writes them.
pub(super) fn tuple_element(v: &Value) -> Result<AttributeProto, ExportError> {
    Ok(match v {
        Value::Scalar {
            value: ir::ScalarConst::Int(i),
            dtype,
            ..
        } => AttributeProto {
            ints: vec![*i],
            r#type: Some(int_type(*dtype) as i32),
            ..Default::default()
        },
        Value::Scalar {
            value: ir::ScalarConst::Float(x),
            ..
        } => AttributeProto {
            floats: vec![*x as f32],
            r#type: Some(AttributeType::Float as i32),
            ..Default::default()
        },
        Value::Scalar {
            value: ir::ScalarConst::Bool(b),
            ..
        } => AttributeProto {
            ints: vec![*b as i64],
            r#type: Some(AttributeType::Bool as i32),
            ..Default::default()
        },
        other => value_attr(other, None)?,
    })
}

pub(super) fn int_type(d: DType) -> AttributeType {
    match d {
        DType::I8 => AttributeType::Int8,
        DType::I16 => AttributeType::Int16,
        DType::I32 => AttributeType::Int32,
        DType::U8 => AttributeType::Uint8,
        _ => AttributeType::Int64,
    }
}

/// A tensor with its data (little-endian `raw_data`).
pub fn tensor_proto(t: &Tensor) -> TensorProto {
    let mut raw = Vec::with_capacity(t.numel() * t.dtype().size_of());
    if let Some(f) = t.file_bytes() {
        // A weight still in its model file: its bytes as they are.
        raw.extend_from_slice(f.bytes());
        return TensorProto {
            dims: t.shape().iter().map(|&d| d as i64).collect(),
            data_type: Some(ms_ops::data_type(t.dtype())),
            raw_data: Some(raw.into()),
            ..Default::default()
        };
    }
    match (t.buffer(), t.dtype()) {
        (Buffer::F32(v), DType::F16) => v
            .iter()
            .for_each(|&x| raw.extend_from_slice(&f32_to_f16(x).to_le_bytes())),
        (Buffer::F32(v), DType::BF16) => v
            .iter()
            .for_each(|&x| raw.extend_from_slice(&((x.to_bits() >> 16) as u16).to_le_bytes())),
        (Buffer::F32(v), _) => v
            .iter()
            .for_each(|x| raw.extend_from_slice(&x.to_le_bytes())),
        (Buffer::F64(v), _) => v
            .iter()
            .for_each(|x| raw.extend_from_slice(&x.to_le_bytes())),
        (Buffer::I64(v), DType::I32) => v
            .iter()
            .for_each(|&x| raw.extend_from_slice(&(x as i32).to_le_bytes())),
        (Buffer::I64(v), DType::I16) => v
            .iter()
            .for_each(|&x| raw.extend_from_slice(&(x as i16).to_le_bytes())),
        (Buffer::I64(v), DType::I8 | DType::U8) => v.iter().for_each(|&x| raw.push(x as u8)),
        (Buffer::I64(v), _) => v
            .iter()
            .for_each(|x| raw.extend_from_slice(&x.to_le_bytes())),
        (Buffer::Bool(v), _) => v.iter().for_each(|&x| raw.push(x as u8)),
    }
    TensorProto {
        dims: t.shape().iter().map(|&d| d as i64).collect(),
        data_type: Some(ms_ops::data_type(t.dtype())),
        raw_data: Some(raw.into()),
        ..Default::default()
    }
}

pub(super) fn f32_to_f16(x: f32) -> u16 {
    let bits = x.to_bits();
    let sign = ((bits >> 16) & 0x8000) as u16;
    let exp = ((bits >> 23) & 0xff) as i32;
    let frac = bits & 0x7f_ffff;
    if exp == 0xff {
        return sign | 0x7c00 | if frac != 0 { 0x200 } else { 0 };
    }
    let e = exp - 127 + 15;
    if e >= 31 {
        return sign | 0x7c00;
    }
    if e <= 0 {
        if e < -10 {
            return sign;
        }
        let m = (frac | 0x80_0000) >> (1 - e + 13);
        return sign | m as u16;
    }
    let m = frac >> 13;
    let round = (frac >> 12) & 1;
    (sign | ((e as u16) << 10) | m as u16) + round as u16
}

/// A tensor type (no data): the `shape` attribute's and the inputs' form.
pub(super) fn type_tensor(dtype: DType, shape: &Shape) -> TensorProto {
    let dims = match shape {
        Shape::Ranked(d) => d
            .iter()
            .map(|d| match d {
                Dim::Known(n) => *n,
                _ => -1,
            })
            .collect(),
        Shape::Unranked => vec![-2],
    };
    TensorProto {
        dims,
        data_type: Some(ms_ops::data_type(dtype)),
        ..Default::default()
    }
}

/// The inferred type of a node as MindSpore's `shape` attribute.
pub(super) fn shape_attr(v: &AbsVal, name: &str) -> Option<AttributeProto> {
    let named = |mut a: AttributeProto| {
        if !name.is_empty() {
            a.name = Some(name.to_string());
        }
        a
    };
    Some(match v {
        AbsVal::Tensor { dtype, shape } => named(AttributeProto {
            tensors: vec![type_tensor(*dtype, shape)],
            r#type: Some(AttributeType::Tensors as i32),
            ..Default::default()
        }),
        // A number: MindSpore's SCALAR with the dtype in a shapeless tensor.
        AbsVal::Scalar { dtype, .. } => named(AttributeProto {
            tensors: vec![TensorProto {
                dims: vec![0],
                data_type: Some(ms_ops::data_type(*dtype)),
                ..Default::default()
            }],
            r#type: Some(AttributeType::Scalar as i32),
            ..Default::default()
        }),
        AbsVal::Tuple(items) => named(AttributeProto {
            values: items
                .iter()
                .map(|i| shape_attr(i, ""))
                .collect::<Option<_>>()?,
            r#type: Some(AttributeType::Tuple as i32),
            seq_info: Some(Box::new(SeqInfoProto {
                is_dyn_len: Some(false),
                tuple_elem_item: None,
            })),
            ..Default::default()
        }),
        _ => return None,
    })
}

pub(super) fn value_info(name: &str, ty: Option<&AbsVal>) -> ValueInfoProto {
    let (tensor, attr_info) = match ty {
        Some(AbsVal::Tensor { dtype, shape }) => (vec![type_tensor(*dtype, shape)], None),
        Some(other) => (Vec::new(), shape_attr(other, "")),
        None => (Vec::new(), None),
    };
    ValueInfoProto {
        name: Some(name.to_string()),
        tensor,
        attr_info,
        denotation: ty.and_then(symbolic_dims),
        ..Default::default()
    }
}

use crate::ms_ops::DIMS_DENOTATION;

/// `mirdsl.dims=B,784` for a tensor with a symbolic dimension (`None` without).
fn symbolic_dims(v: &AbsVal) -> Option<String> {
    let AbsVal::Tensor { shape, .. } = v else {
        return None;
    };
    let dims = shape.dims()?;
    if !dims.iter().any(|d| matches!(d, Dim::Sym(_))) {
        return None;
    }
    let parts: Vec<String> = dims
        .iter()
        .map(|d| match d {
            Dim::Known(n) => n.to_string(),
            Dim::Sym(s) => s.to_string(),
            _ => "?".to_string(),
        })
        .collect();
    Some(format!("{DIMS_DENOTATION}{}", parts.join(",")))
}
