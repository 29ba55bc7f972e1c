//! `.mindir` model files: `mind_ir.ModelProto` in protobuf.
//!
//! Import reads the entry graph (`ModelProto.graph`) and the other FuncGraphs
//! (`functions`), resolving each node's `op_type` (`REF::<prim>:<uid>` into
//! `primitives`, `REF::<graph>` to call a graph, `REF::<node>` to call a
//! node's value, `Constant` for ValueNodes) and inputs by name; weights are
//! the graphs' `parameter` tensors. Export is in [`crate::export`].

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use ir::{DType, Dim, Shape, Ty};
use prost::Message;
use tensor::mapped::{FileBytes, Mapped};
use tensor::{Buffer, Tensor};

use crate::model::{self, Callee, Const, Graph, Module, Node, Param, Ref, Weight};
use crate::ms_ops;
use crate::proto::{
    attribute_proto::AttributeType, AttributeProto, GraphProto, ModelProto, TensorProto,
};
use crate::{ImportError, Imported, WeightOptions};

pub use crate::export::{export, export_analysis, export_program, ExportError, ExportOptions};

/// Decodes a `.mindir` file.
pub fn decode(bytes: &[u8]) -> Result<ModelProto, ImportError> {
    let model = ModelProto::decode(bytes)
        .map_err(|e| ImportError::Malformed(format!("not a MindIR model (protobuf): {e}")))?;
    if model.graph.is_none() {
        return Err(ImportError::Malformed(
            "the model has no graph (`ModelProto.graph`)".into(),
        ));
    }
    Ok(model)
}

/// A `.mindir` file as DSL text (entry graph `main`) and the weights it loads.
pub fn import(bytes: &[u8], opts: &WeightOptions) -> Result<Imported, ImportError> {
    let model = decode(bytes)?;
    let module = to_module(&model)?;
    let header = format!(
        "# Imported from a MindIR model ({} {}, mind_ir_version {}).\n\n",
        model.producer_name(),
        model.model_version(),
        model.mind_ir_version()
    );
    model::to_dsl(&module, opts, &header)
}

/// The files a model's tensors are read from: the model file itself, memory-
/// mapped, and the external data files its tensors name (MindSpore writes the
/// weights of a model over 1 GB to `NAME_variables/data_0` beside
/// `NAME_graph.mindir`, each tensor's `external_data` giving the file, offset
/// and length). Tensors come out backed by the mapped bytes
/// ([`Tensor::from_file`]): nothing is copied or decoded until used.
#[derive(Default)]
pub struct Files {
    main: Option<Arc<Mapped>>,
    dir: Option<PathBuf>,
    external: RefCell<HashMap<String, Arc<Mapped>>>,
}

/// Bytes that keep a memory map alive (what `Bytes::from_owner` takes).
struct MapOwner(Arc<Mapped>);

impl AsRef<[u8]> for MapOwner {
    fn as_ref(&self) -> &[u8] {
        self.0.bytes()
    }
}

impl Files {
    /// The tensor `t` describes, its bytes left in the file when it can.
    fn tensor(&self, t: &TensorProto) -> Result<Tensor, ImportError> {
        if let Some(ext) = &t.external_data {
            return self.external(t, ext);
        }
        let compressed = t.compression_type.is_some_and(|c| c != 0);
        if let (Some(map), Some(raw), false) = (&self.main, &t.raw_data, compressed) {
            let base = map.bytes().as_ptr() as usize;
            let at = raw.as_ptr() as usize;
            if !raw.is_empty() && at >= base && at + raw.len() <= base + map.len() {
                let (dt, shape) = dtype_shape(t)?;
                let bytes = FileBytes::new(map.clone(), at - base, raw.len())
                    .map_err(|e| ImportError::Malformed(format!("tensor `{}`: {e}", t.name())))?;
                return Tensor::from_file(dt, shape, bytes)
                    .map_err(|e| ImportError::Malformed(format!("tensor `{}`: {e}", t.name())));
            }
        }
        decode_tensor(t)
    }

    fn external(
        &self,
        t: &TensorProto,
        ext: &crate::proto::tensor_proto::ExternalDataProto,
    ) -> Result<Tensor, ImportError> {
        let name = t.name();
        let location = ext.location();
        let Some(dir) = &self.dir else {
            return Err(ImportError::Unsupported(format!(
                "tensor `{name}` is stored in an external data file ({location}): import the model from its file"
            )));
        };
        let rel = Path::new(location);
        if location.is_empty()
            || rel.is_absolute()
            || rel
                .components()
                .any(|c| !matches!(c, std::path::Component::Normal(_)))
        {
            return Err(ImportError::Malformed(format!(
                "tensor `{name}` names the external data file `{location}`, which is not a path below the model's folder"
            )));
        }
        let map = {
            let mut files = self.external.borrow_mut();
            match files.get(location) {
                Some(m) => m.clone(),
                None => {
                    let path = dir.join(rel);
                    let m = Arc::new(Mapped::open(&path).map_err(|e| {
                        ImportError::Malformed(format!(
                            "tensor `{name}` is stored in {}, which cannot be read: {e}",
                            path.display()
                        ))
                    })?);
                    files.insert(location.to_string(), m.clone());
                    m
                }
            }
        };
        let (dt, shape) = dtype_shape(t)?;
        let (offset, length) = (ext.offset(), ext.length());
        let bad = || {
            ImportError::Malformed(format!(
                "tensor `{name}`: external data at offset {offset}, length {length} lies outside {location} ({} bytes)",
                map.len()
            ))
        };
        let offset = usize::try_from(offset).map_err(|_| bad())?;
        let length = usize::try_from(length).map_err(|_| bad())?;
        let bytes = FileBytes::new(map.clone(), offset, length).map_err(|_| bad())?;
        Tensor::from_file(dt, shape, bytes)
            .map_err(|e| ImportError::Malformed(format!("tensor `{name}` in {location}: {e}")))
    }
}

/// Decodes the `.mindir` file at `path`, memory-mapped: tensor bytes stay in
/// the map (see [`Files`]), and a model in MindSpore's external-data layout
/// (`NAME_graph.mindir` with `NAME_variables/data_*`) finds its data files
/// beside it.
pub fn decode_file(path: &Path) -> Result<(ModelProto, Files), ImportError> {
    let map = Arc::new(Mapped::open(path).map_err(|e| ImportError::Malformed(e.0))?);
    map.advise_sequential();
    let bytes = prost::bytes::Bytes::from_owner(MapOwner(map.clone()));
    let model = ModelProto::decode(bytes)
        .map_err(|e| ImportError::Malformed(format!("not a MindIR model (protobuf): {e}")))?;
    if model.graph.is_none() {
        return Err(ImportError::Malformed(
            "the model has no graph (`ModelProto.graph`)".into(),
        ));
    }
    let dir = path
        .parent()
        .map(|p| {
            if p.as_os_str().is_empty() {
                Path::new(".")
            } else {
                p
            }
        })
        .map(Path::to_path_buf);
    Ok((
        model,
        Files {
            main: Some(map),
            dir,
            external: RefCell::new(HashMap::new()),
        },
    ))
}

/// [`import`] of the model file at `path`: memory-mapped, its weights (and
/// external data) left in the files until written out.
pub fn import_file(path: &Path, opts: &WeightOptions) -> Result<Imported, ImportError> {
    let (model, files) = decode_file(path)?;
    let header = format!(
        "# Imported from a MindIR model ({} {}, mind_ir_version {}).\n\n",
        model.producer_name(),
        model.model_version(),
        model.mind_ir_version()
    );
    let module = to_module_in(&model, &files)?;
    drop(model);
    model::to_dsl(&module, opts, &header)
}

/// A tensor's dtype and shape.
fn dtype_shape(t: &TensorProto) -> Result<(DType, Vec<usize>), ImportError> {
    let dt = dtype(t.data_type())?;
    let shape: Vec<usize> = t
        .dims
        .iter()
        .map(|&d| {
            usize::try_from(d).map_err(|_| {
                ImportError::Malformed(format!("tensor `{}` has dimension {d}", t.name()))
            })
        })
        .collect::<Result<_, _>>()?;
    Ok((dt, shape))
}

/// The dtype of a tensor's `data_type`.
fn dtype(t: i32) -> Result<DType, ImportError> {
    ms_ops::dtype_of_data_type(t).ok_or_else(|| {
        ImportError::Unsupported(format!(
            "tensor data type {t} ({}) has no DSL dtype",
            crate::proto::tensor_proto::DataType::try_from(t)
                .map(|d| format!("{d:?}"))
                .unwrap_or_else(|_| "unknown".into())
        ))
    })
}

/// A tensor's value.
pub fn decode_tensor(t: &TensorProto) -> Result<Tensor, ImportError> {
    if t.external_data.is_some() {
        return Err(ImportError::Unsupported(format!(
            "tensor `{}` is stored in an external data file",
            t.name()
        )));
    }
    if t.compression_type.is_some_and(|c| c != 0) {
        return Err(ImportError::Unsupported(format!(
            "tensor `{}` is compressed",
            t.name()
        )));
    }
    let dt = dtype(t.data_type())?;
    let shape: Vec<usize> = t
        .dims
        .iter()
        .map(|&d| {
            usize::try_from(d).map_err(|_| {
                ImportError::Malformed(format!("tensor `{}` has dimension {d}", t.name()))
            })
        })
        .collect::<Result<_, _>>()?;
    let n: usize = shape.iter().product();
    let raw = t.raw_data.as_deref().unwrap_or(&[]);
    let buffer = if !raw.is_empty() || n == 0 {
        let size = dt.size_of();
        if raw.len() != n * size {
            return Err(ImportError::Malformed(format!(
                "tensor `{}` has {} bytes of data for {n} {dt} elements",
                t.name(),
                raw.len()
            )));
        }
        let c = raw.chunks_exact(size);
        match dt {
            DType::F32 => Buffer::F32(
                c.map(|b| f32::from_le_bytes(b.try_into().unwrap()))
                    .collect(),
            ),
            DType::F64 => Buffer::F64(
                c.map(|b| f64::from_le_bytes(b.try_into().unwrap()))
                    .collect(),
            ),
            DType::F16 => Buffer::F32(
                c.map(|b| f16_to_f32(u16::from_le_bytes([b[0], b[1]])))
                    .collect(),
            ),
            DType::BF16 => Buffer::F32(
                c.map(|b| f32::from_bits((u16::from_le_bytes([b[0], b[1]]) as u32) << 16))
                    .collect(),
            ),
            DType::I64 => Buffer::I64(
                c.map(|b| i64::from_le_bytes(b.try_into().unwrap()))
                    .collect(),
            ),
            DType::I32 => Buffer::I64(
                c.map(|b| i32::from_le_bytes(b.try_into().unwrap()) as i64)
                    .collect(),
            ),
            DType::I16 => Buffer::I64(c.map(|b| i16::from_le_bytes([b[0], b[1]]) as i64).collect()),
            DType::I8 => Buffer::I64(c.map(|b| b[0] as i8 as i64).collect()),
            DType::U8 => Buffer::I64(c.map(|b| b[0] as i64).collect()),
            DType::Bool => Buffer::Bool(c.map(|b| b[0] != 0).collect()),
        }
    } else if !t.float_data.is_empty() {
        Buffer::F32(t.float_data.clone())
    } else if !t.double_data.is_empty() {
        Buffer::F64(t.double_data.clone())
    } else if !t.int64_data.is_empty() {
        Buffer::I64(t.int64_data.clone())
    } else if !t.int32_data.is_empty() {
        match dt.storage() {
            DType::Bool => Buffer::Bool(t.int32_data.iter().map(|&x| x != 0).collect()),
            DType::F32 => Buffer::F32(t.int32_data.iter().map(|&x| f16_to_f32(x as u16)).collect()),
            _ => Buffer::I64(t.int32_data.iter().map(|&x| x as i64).collect()),
        }
    } else {
        return Err(ImportError::Malformed(format!(
            "tensor `{}` has no data",
            t.name()
        )));
    };
    let buffer = match (dt.storage(), buffer) {
        (DType::F32, Buffer::F64(v)) => Buffer::F32(v.into_iter().map(|x| x as f32).collect()),
        (DType::F64, Buffer::F32(v)) => Buffer::F64(v.into_iter().map(|x| x as f64).collect()),
        (_, b) => b,
    };
    Tensor::new(dt, shape, buffer)
        .map_err(|e| ImportError::Malformed(format!("tensor `{}`: {e}", t.name())))
}

fn f16_to_f32(h: u16) -> f32 {
    let sign = ((h >> 15) as u32) << 31;
    let exp = ((h >> 10) & 0x1f) as i32;
    let frac = (h & 0x3ff) as u32;
    let bits = if exp == 0 {
        if frac == 0 {
            sign
        } else {
            // Subnormal.
            let v = frac as f32 * 2f32.powi(-24);
            return if sign != 0 { -v } else { v };
        }
    } else if exp == 31 {
        sign | 0x7f80_0000 | (frac << 13)
    } else {
        sign | (((exp - 15 + 127) as u32) << 23) | (frac << 13)
    };
    f32::from_bits(bits)
}

/// A tensor type from a shape description (`dims`, `-1` unknown).
fn tensor_ty(t: &TensorProto) -> Option<Ty> {
    let d = ms_ops::dtype_of_data_type(t.data_type())?;
    let dims = t
        .dims
        .iter()
        .map(|&n| if n < 0 { Dim::Unknown } else { Dim::Known(n) })
        .collect();
    Some(Ty::Tensor(d, Shape::Ranked(dims)))
}

/// `ty` with the unknown sizes that mirdsl's export named (a graph input's
/// `denotation`, `mirdsl.dims=B,784`) named again.
fn with_symbolic_dims(ty: Ty, denotation: &str) -> Ty {
    let Some(names) = denotation.strip_prefix(ms_ops::DIMS_DENOTATION) else {
        return ty;
    };
    let Ty::Tensor(d, Shape::Ranked(dims)) = ty else {
        return ty;
    };
    let names: Vec<&str> = names.split(',').collect();
    if names.len() != dims.len() {
        return Ty::Tensor(d, Shape::Ranked(dims));
    }
    let dims = dims
        .into_iter()
        .zip(names)
        .map(|(dim, name)| {
            let symbol = name
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            match dim {
                Dim::Unknown if symbol => Dim::Sym(name.into()),
                other => other,
            }
        })
        .collect();
    Ty::Tensor(d, Shape::Ranked(dims))
}

/// An attribute's value as a constant.
pub fn attr_const(a: &AttributeProto) -> Const {
    let ty = a.r#type();
    let int = || a.i.or_else(|| a.ints.first().copied()).unwrap_or(0);
    let int_of = |d: DType| Const::Int(int(), d);
    match ty {
        AttributeType::Int64 | AttributeType::Undefined if a.i.is_some() || !a.ints.is_empty() => {
            int_of(DType::I64)
        }
        AttributeType::Int32 | AttributeType::Uint32 => int_of(DType::I32),
        AttributeType::Int16 | AttributeType::Uint16 => int_of(DType::I16),
        AttributeType::Int8 => int_of(DType::I8),
        AttributeType::Uint8 => int_of(DType::U8),
        AttributeType::Uint64 => int_of(DType::I64),
        AttributeType::Bool => Const::Bool(int() != 0),
        AttributeType::Float | AttributeType::Float16 | AttributeType::Bfloat16 => Const::Float(
            a.f.or_else(|| a.floats.first().copied()).unwrap_or(0.0) as f64,
            DType::F32,
        ),
        AttributeType::Double => Const::Float(
            a.d.or_else(|| a.doubles.first().copied()).unwrap_or(0.0),
            DType::F64,
        ),
        AttributeType::String => Const::Str(
            a.s.as_ref()
                .or_else(|| a.strings.first())
                .map(|s| String::from_utf8_lossy(s).into_owned())
                .unwrap_or_default(),
        ),
        AttributeType::Tensor | AttributeType::Tensors => match a
            .t
            .as_ref()
            .or_else(|| a.tensors.first())
            .map(decode_tensor)
        {
            Some(Ok(t)) => Const::Tensor(t),
            Some(Err(e)) => Const::Opaque(format!("a tensor constant that cannot be read ({e})")),
            None => Const::Opaque("a tensor constant without data".into()),
        },
        AttributeType::Tuple | AttributeType::List => {
            Const::Tuple(a.values.iter().map(attr_const).collect())
        }
        AttributeType::None => Const::None,
        AttributeType::Umonad | AttributeType::Iomonad => Const::Monad,
        other => Const::Opaque(format!("a constant of MindIR type {other:?}")),
    }
}

/// Where each name of the model lives.
struct Scope<'a> {
    /// Graph names (as written) to their index.
    graphs: HashMap<&'a str, usize>,
    /// Per graph: names of inputs, nodes and constants.
    local: Vec<HashMap<&'a str, Ref>>,
    /// Every name of every graph, and the weights.
    global: HashMap<&'a str, Ref>,
    prims: HashMap<&'a str, &'a crate::proto::PrimitiveProto>,
}

impl Scope<'_> {
    fn lookup(&self, g: usize, name: &str) -> Option<Ref> {
        self.local[g]
            .get(name)
            .or_else(|| self.global.get(name))
            .cloned()
            .or_else(|| self.graphs.get(name).map(|&h| Ref::Graph(h)))
    }
}

/// The model as the importers' graph model.
pub fn to_module(m: &ModelProto) -> Result<Module, ImportError> {
    to_module_in(m, &Files::default())
}

/// [`to_module`], its weights read through `files` (see [`decode_file`]).
pub fn to_module_in(m: &ModelProto, files: &Files) -> Result<Module, ImportError> {
    let graphs: Vec<&GraphProto> = m.graph.iter().chain(m.functions.iter()).collect();
    let mut scope = Scope {
        graphs: HashMap::new(),
        local: vec![HashMap::new(); graphs.len()],
        global: HashMap::new(),
        prims: m.primitives.iter().map(|p| (p.name(), p)).collect(),
    };
    for (i, g) in graphs.iter().enumerate() {
        scope.graphs.insert(g.name(), i);
    }
    let mut weights: Vec<Weight> = Vec::new();
    let mut weight_index: HashMap<String, usize> = HashMap::new();
    let mut module = Module {
        graphs: Vec::new(),
        weights: Vec::new(),
        entry: 0,
    };
    // Names first (nodes may refer to nodes of later graphs).
    for (gi, g) in graphs.iter().enumerate() {
        for (i, input) in g.input.iter().enumerate() {
            scope.local[gi].insert(input.name(), Ref::Param(gi, i));
            scope
                .global
                .entry(input.name())
                .or_insert(Ref::Param(gi, i));
        }
        for p in &g.parameter {
            let key = match p.ref_key() {
                "" => p
                    .name()
                    .rsplit_once(':')
                    .map_or(p.name(), |(_, n)| n)
                    .to_string(),
                k => k.to_string(),
            };
            let idx = match weight_index.get(&key) {
                Some(&i) => i,
                None => {
                    let value = files.tensor(p)?;
                    let ty = tensor_ty(p).ok_or_else(|| {
                        ImportError::Unsupported(format!(
                            "weight `{key}` has data type {}",
                            p.data_type()
                        ))
                    })?;
                    weights.push(Weight {
                        name: key.clone(),
                        ty,
                        value: Some(value),
                    });
                    weight_index.insert(key, weights.len() - 1);
                    weights.len() - 1
                }
            };
            scope.local[gi].insert(p.name(), Ref::Weight(idx));
            scope.global.insert(p.name(), Ref::Weight(idx));
        }
        let mut k = 0;
        for n in &g.node {
            let r = if n.op_type() == "Constant" {
                let value = n
                    .attribute
                    .iter()
                    .find(|a| a.name() == "value")
                    .map(attr_const)
                    .unwrap_or(Const::Opaque("a constant without a value".into()));
                Ref::Const(value)
            } else {
                k += 1;
                Ref::Node(gi, k - 1)
            };
            for name in std::iter::once(n.name()).chain(n.output.iter().map(|s| s.as_str())) {
                if name.is_empty() {
                    continue;
                }
                scope.local[gi].insert(name, r.clone());
                scope.global.entry(name).or_insert(r.clone());
            }
        }
    }
    for (gi, g) in graphs.iter().enumerate() {
        let params = g
            .input
            .iter()
            .map(|input| Param {
                name: input
                    .name()
                    .rsplit_once(':')
                    .map_or(input.name(), |(_, n)| n)
                    .to_string(),
                ty: match input.tensor.first() {
                    Some(t) if input.attr_info.is_none() => {
                        tensor_ty(t).map(|ty| with_symbolic_dims(ty, input.denotation()))
                    }
                    _ => None,
                },
            })
            .collect();
        let mut nodes = Vec::new();
        for n in g.node.iter().filter(|n| n.op_type() != "Constant") {
            let args = n
                .input
                .iter()
                .map(|name| {
                    scope.lookup(gi, name).ok_or_else(|| {
                        ImportError::Malformed(format!(
                            "node `{}` uses `{name}`, which is not defined",
                            n.name()
                        ))
                    })
                })
                .collect::<Result<Vec<_>, _>>()?;
            let op = n.op_type();
            let callee = match op.strip_prefix("REF::") {
                Some(target) => {
                    if let Some(p) = scope.prims.get(target) {
                        Callee::Prim {
                            name: p.op_type().to_string(),
                            attrs: p
                                .attribute
                                .iter()
                                .map(|a| (a.name().to_string(), attr_const(a)))
                                .collect(),
                        }
                    } else if let Some(r) = scope.lookup(gi, target) {
                        Callee::Value(r)
                    } else {
                        return Err(ImportError::Malformed(format!(
                            "node `{}` calls `{target}`, which is neither a primitive, a graph nor a node",
                            n.name()
                        )));
                    }
                }
                // Older files name the primitive directly.
                None => Callee::Prim {
                    name: op.to_string(),
                    attrs: n
                        .attribute
                        .iter()
                        .filter(|a| a.name() != "shape")
                        .map(|a| (a.name().to_string(), attr_const(a)))
                        .collect(),
                },
            };
            let local = n.name().split(':').nth(1).unwrap_or(n.name());
            let name = scoped_name(n.domain(), local, &callee);
            nodes.push(Node { name, callee, args });
        }
        let output = match g.output.first() {
            Some(o) => scope.lookup(gi, o.name()).ok_or_else(|| {
                ImportError::Malformed(format!(
                    "graph `{}` returns `{}`, which is not defined",
                    g.name(),
                    o.name()
                ))
            })?,
            None => Ref::Const(Const::None),
        };
        module.graphs.push(Graph {
            name: g.name().to_string(),
            parent: None,
            params,
            nodes,
            output,
        });
    }
    module.weights = weights;
    Ok(module)
}

/// A readable listing of a model (for tests and debugging): primitives, then
/// each graph's inputs, weights, nodes with their attributes, and outputs.
pub fn describe(m: &ModelProto) -> String {
    use std::fmt::Write;
    fn tensor(t: &TensorProto) -> String {
        let mut s = format!("{:?}", t.dims);
        if let Some(d) = ms_ops::dtype_of_data_type(t.data_type()) {
            s = format!("{d}{s}");
        } else {
            s = format!("dtype{}{s}", t.data_type());
        }
        if !t.name().is_empty() {
            s = format!("{} {s}", t.name());
        }
        if let Some(r) = &t.raw_data {
            s += &format!(" ({} bytes)", r.len());
        }
        if let Some(k) = &t.ref_key {
            s += &format!(" ref_key={k}");
        }
        s
    }
    fn attr(a: &AttributeProto) -> String {
        let mut s = format!("{:?}", a.r#type());
        if let Some(i) = a.i {
            s += &format!(" i={i}");
        }
        if let Some(f) = a.f {
            s += &format!(" f={f}");
        }
        if let Some(d) = a.d {
            s += &format!(" d={d}");
        }
        if let Some(x) = &a.s {
            s += &format!(" s={:?}", String::from_utf8_lossy(x));
        }
        if !a.ints.is_empty() {
            s += &format!(" ints={:?}", a.ints);
        }
        if !a.floats.is_empty() {
            s += &format!(" floats={:?}", a.floats);
        }
        if !a.strings.is_empty() {
            let v: Vec<String> = a
                .strings
                .iter()
                .map(|x| String::from_utf8_lossy(x).into_owned())
                .collect();
            s += &format!(" strings={v:?}");
        }
        if let Some(t) = &a.t {
            s += &format!(" t={}", tensor(t));
        }
        if !a.tensors.is_empty() {
            let v: Vec<String> = a.tensors.iter().map(tensor).collect();
            s += &format!(" tensors=[{}]", v.join(", "));
        }
        if !a.values.is_empty() {
            let v: Vec<String> = a.values.iter().map(attr).collect();
            s += &format!(" values=[{}]", v.join(", "));
        }
        s
    }
    let mut out = String::new();
    let _ = writeln!(
        out,
        "ir_version={} producer={} model_version={} mind_ir_version={}",
        m.ir_version(),
        m.producer_name(),
        m.model_version(),
        m.mind_ir_version()
    );
    for p in &m.primitives {
        let _ = writeln!(
            out,
            "primitive {} op_type={} prim_type={}",
            p.name(),
            p.op_type(),
            p.prim_type.unwrap_or(0)
        );
        for a in &p.attribute {
            let _ = writeln!(out, "    {}: {}", a.name(), attr(a));
        }
    }
    for g in m.graph.iter().chain(&m.functions) {
        let _ = writeln!(out, "graph {}", g.name());
        for i in &g.input {
            let t: Vec<String> = i.tensor.iter().map(tensor).collect();
            let _ = writeln!(
                out,
                "  input {} [{}]{}",
                i.name(),
                t.join(", "),
                i.attr_info
                    .as_ref()
                    .map_or(String::new(), |a| format!(" {}", attr(a)))
            );
        }
        for p in &g.parameter {
            let _ = writeln!(out, "  parameter {}", tensor(p));
        }
        for n in &g.node {
            let _ = writeln!(
                out,
                "  {} = {}({})",
                n.name(),
                n.op_type(),
                n.input.join(", ")
            );
            for a in &n.attribute {
                let _ = writeln!(out, "      {}: {}", a.name(), attr(a));
            }
        }
        for o in &g.output {
            let t: Vec<String> = o.tensor.iter().map(tensor).collect();
            let _ = writeln!(
                out,
                "  output {} [{}]{}",
                o.name(),
                t.join(", "),
                o.attr_info
                    .as_ref()
                    .map_or(String::new(), |a| format!(" {}", attr(a)))
            );
        }
    }
    out
}

/// A node's name hint with the cells it belongs to: MindSpore records each
/// node's scope (`Default/layers-SequentialCell/1-BasicBlock/conv1-Conv2d/
/// Conv2D-op0`) in `domain`, so the binding becomes `layers.1.conv1.conv2d`
/// (digits get an underscore when printed), which editors group by cell.
pub(crate) fn scoped_name(domain: &str, local: &str, callee: &Callee) -> String {
    let mut segments: Vec<&str> = domain.split('/').collect();
    if segments.first() != Some(&"Default") || segments.len() < 3 {
        return local.to_string();
    }
    segments.remove(0);
    let op = segments.pop().unwrap_or_default();
    let cells: Vec<&str> = segments
        .iter()
        .map(|s| s.split('-').next().unwrap_or(s))
        .filter(|s| !s.is_empty())
        .collect();
    if cells.is_empty() {
        return local.to_string();
    }
    let generated = local.is_empty()
        || ["CNode", "ValueNode", "Parameter", "equiv", "output"]
            .iter()
            .any(|g| local.starts_with(g));
    let leaf = if generated {
        match callee {
            Callee::Prim { name, .. } => name
                .trim_start_matches("PrimFunc_")
                .split('-')
                .next()
                .unwrap_or_default()
                .to_ascii_lowercase(),
            Callee::Value(_) => op.split('-').next().unwrap_or("call").to_ascii_lowercase(),
        }
    } else {
        local.to_string()
    };
    format!("{}.{leaf}", cells.join("."))
}

/// MindSpore's limit: `mindspore.export` writes a model whose weights take
/// more than this (its `TOTAL_SAVE`, 1 GiB, counted as `sys.getsizeof` of
/// each parameter's bytes) in the external-data layout.
pub const EXTERNAL_DATA_ABOVE: u64 = 1 << 30;

/// The limit export uses: [`EXTERNAL_DATA_ABOVE`], or the bytes that
/// `MIRDSL_EXTERNAL_DATA_ABOVE` names (to try the layout on small models).
pub fn external_data_above() -> u64 {
    std::env::var("MIRDSL_EXTERNAL_DATA_ABOVE")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(EXTERNAL_DATA_ABOVE)
}

/// Whether MindSpore would write `model` in the external-data layout: its
/// entry graph's weights take more than `above` bytes (each counted as
/// Python's `sys.getsizeof` of its bytes, 33 more than their length).
pub fn needs_external_data(model: &ModelProto, above: u64) -> bool {
    let total: u64 = model
        .graph
        .iter()
        .flat_map(|g| &g.parameter)
        .map(|p| p.raw_data.as_ref().map_or(0, |r| r.len() as u64) + 33)
        .sum();
    total > above
}

/// The files of MindSpore's external-data layout for an export to `output`
/// (`DIR/NAME.mindir`): `DIR/NAME_graph.mindir`, the data file
/// `DIR/NAME_variables/data_0`, and that file's location as the model names
/// it (relative to the graph file's folder).
pub fn external_layout(output: &Path) -> (PathBuf, PathBuf, String) {
    let dir = output.parent().unwrap_or(Path::new(""));
    let file = output
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let stem = file.strip_suffix(".mindir").unwrap_or(&file).to_string();
    let location = format!("{stem}_variables/data_0");
    (
        dir.join(format!("{stem}_graph.mindir")),
        dir.join(&location),
        location,
    )
}

/// Moves the entry graph's weights out of `model` into the data file at
/// `data_path`, as MindSpore's `_split_save` does: a 64-byte header (its
/// first byte 1: little-endian), then each weight, sorted by name, padded to
/// 64 bytes, its `external_data` giving `location`, offset and length.
pub fn write_external_data(
    model: &mut ModelProto,
    data_path: &Path,
    location: &str,
) -> std::io::Result<()> {
    use std::io::Write;
    if let Some(dir) = data_path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let file = std::fs::File::create(data_path)?;
    let mut w = std::io::BufWriter::with_capacity(1 << 20, file);
    let mut header = [0u8; 64];
    header[0] = 1;
    w.write_all(&header)?;
    let mut offset = 64u64;
    let Some(graph) = model.graph.as_mut() else {
        return w.flush();
    };
    let mut order: Vec<usize> = (0..graph.parameter.len()).collect();
    let key = |p: &TensorProto| {
        let n = p.name();
        n[n.find(':').map_or(0, |i| i + 1)..].to_string()
    };
    order.sort_by_key(|&i| key(&graph.parameter[i]));
    for i in order {
        let p = &mut graph.parameter[i];
        let raw = p.raw_data.take().unwrap_or_default();
        let len = raw.len() as u64;
        w.write_all(&raw)?;
        let pad = (64 - len % 64) % 64;
        w.write_all(&[0u8; 64][..pad as usize])?;
        p.external_data = Some(crate::proto::tensor_proto::ExternalDataProto {
            location: Some(location.to_string()),
            offset: Some(offset as i64),
            length: Some(len as i64),
        });
        offset += len + pad;
    }
    w.flush()
}

/// The bytes of a `.mindir` file holding `model`.
pub fn encode(model: &ModelProto) -> Vec<u8> {
    model.encode_to_vec()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn half_floats() {
        assert_eq!(f16_to_f32(0x3c00), 1.0);
        assert_eq!(f16_to_f32(0xc000), -2.0);
        assert_eq!(f16_to_f32(0x0000), 0.0);
        assert!(f16_to_f32(0x7c00).is_infinite());
    }
}
