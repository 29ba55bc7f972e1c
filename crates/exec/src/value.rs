//! Run-time values and the accounting of tensor memory.
//!
//! A value is a tensor (MindSpore scalars are rank-0 tensors flagged `scalar`,
//! literals also `weak`), a tuple, `none`, a string, or a function: a primitive
//! with its attributes, a graph closure (a graph and the values of its free
//! variables), a partial application, or a metafunction (`grad`, ...) and its
//! application to a function. Everything is reference-counted, so copying a
//! value is cheap and a tensor's memory is released when its last user drops it.

use std::fmt;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use ir::{GraphId, MetaFn, PrimRef, ScalarConst, Ty};
use ops::{AbsVal, Attrs, KValue, OpDef};
use tensor::{Buffer, DType, Tensor};

/// Current and peak bytes of live tensors, shared by the tensors one executor makes.
#[derive(Debug, Default)]
pub struct MemCounter {
    current: AtomicUsize,
    peak: AtomicUsize,
    allocations: AtomicUsize,
}

/// A snapshot of a [`MemCounter`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MemStats {
    /// Bytes of tensors alive now.
    pub current_bytes: usize,
    /// The most bytes alive at once since the counter was made (or its peak reset).
    pub peak_bytes: usize,
    /// Tensors made so far.
    pub allocations: usize,
}

impl MemCounter {
    pub(crate) fn alloc(&self, bytes: usize) {
        let now = self.current.fetch_add(bytes, Ordering::Relaxed) + bytes;
        self.peak.fetch_max(now, Ordering::Relaxed);
        self.allocations.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn free(&self, bytes: usize) {
        self.current.fetch_sub(bytes, Ordering::Relaxed);
    }

    pub fn stats(&self) -> MemStats {
        MemStats {
            current_bytes: self.current.load(Ordering::Relaxed),
            peak_bytes: self.peak.load(Ordering::Relaxed),
            allocations: self.allocations.load(Ordering::Relaxed),
        }
    }

    /// Starts a new peak measurement from what is alive now.
    pub fn reset_peak(&self) {
        self.peak
            .store(self.current.load(Ordering::Relaxed), Ordering::Relaxed);
    }
}

/// Bytes a tensor's host buffer takes (its storage kind's element size).
pub fn storage_bytes(t: &Tensor) -> usize {
    // From the dtype, so a tensor on a device is not copied back to count it.
    let elem = match t.dtype().storage() {
        DType::F32 => 4,
        DType::F64 | DType::I64 => 8,
        _ => 1,
    };
    t.numel() * elem
}

/// A tensor whose bytes are counted while it lives.
pub struct Buf {
    tensor: Tensor,
    bytes: usize,
    counter: Option<Arc<MemCounter>>,
}

impl Drop for Buf {
    fn drop(&mut self) {
        if let Some(c) = &self.counter {
            c.free(self.bytes);
        }
    }
}

/// A tensor value. MindSpore scalars (`i64`, `f32`, ...) are rank-0 tensors with
/// `scalar` set; `weak` marks a literal whose dtype yields to a tensor's.
#[derive(Clone)]
pub struct TensorVal {
    buf: Arc<Buf>,
    pub scalar: bool,
    pub weak: bool,
}

impl TensorVal {
    /// A tensor counted by `counter` (not counted when `None`).
    pub fn new(tensor: Tensor, counter: Option<&Arc<MemCounter>>) -> TensorVal {
        let bytes = storage_bytes(&tensor);
        if let Some(c) = counter {
            c.alloc(bytes);
        }
        TensorVal {
            buf: Arc::new(Buf {
                tensor,
                bytes,
                counter: counter.cloned(),
            }),
            scalar: false,
            weak: false,
        }
    }

    /// A scalar (rank 0, `scalar` set).
    pub fn new_scalar(tensor: Tensor, weak: bool, counter: Option<&Arc<MemCounter>>) -> TensorVal {
        let mut t = TensorVal::new(tensor, counter);
        t.scalar = true;
        t.weak = weak;
        t
    }

    pub fn tensor(&self) -> &Tensor {
        &self.buf.tensor
    }

    pub fn dtype(&self) -> DType {
        self.buf.tensor.dtype()
    }

    /// The abstract value a shape rule sees (scalars with their value).
    pub fn abs(&self) -> AbsVal {
        let t = self.tensor();
        if self.scalar && t.rank() == 0 {
            AbsVal::Scalar {
                dtype: t.dtype(),
                value: scalar_const(t),
                weak: self.weak,
            }
        } else {
            AbsVal::tensor(
                t.dtype(),
                &t.shape().iter().map(|&d| d as i64).collect::<Vec<_>>(),
            )
        }
    }

    /// The single element as `f64`, when there is exactly one.
    pub fn item_f64(&self) -> Option<f64> {
        let t = self.tensor();
        (t.numel() == 1).then(|| first_f64(t))
    }
}

fn first_f64(t: &Tensor) -> f64 {
    match t.buffer() {
        Buffer::F32(v) => v[0] as f64,
        Buffer::F64(v) => v[0],
        Buffer::I64(v) => v[0] as f64,
        Buffer::Bool(v) => v[0] as u8 as f64,
    }
}

/// The value of a one-element tensor as a scalar constant.
pub fn scalar_const(t: &Tensor) -> Option<ScalarConst> {
    if t.numel() != 1 {
        return None;
    }
    Some(match t.buffer() {
        Buffer::F32(v) => ScalarConst::Float(v[0] as f64),
        Buffer::F64(v) => ScalarConst::Float(v[0]),
        Buffer::I64(v) => ScalarConst::Int(v[0]),
        Buffer::Bool(v) => ScalarConst::Bool(v[0]),
    })
}

/// A rank-0 tensor of `dtype` holding `c` (integers exactly).
pub fn scalar_tensor(c: ScalarConst, dtype: DType) -> Tensor {
    match (c, dtype.storage()) {
        (ScalarConst::Int(i), DType::I64) => {
            Tensor::from_i64(dtype, Vec::new(), vec![i]).expect("one element")
        }
        (c, _) => Tensor::scalar(dtype, c.as_f64()),
    }
}

/// A run-time value.
#[derive(Clone)]
pub enum Value {
    Tensor(TensorVal),
    Tuple(Arc<[Value]>),
    None,
    Str(Arc<str>),
    Func(Arc<Func>),
    /// A type used as a value (a dtype name passed around).
    Type(Arc<Ty>),
}

/// A primitive with its attributes resolved (defaults filled in).
pub struct PrimFn {
    pub prim: PrimRef,
    /// `None` for a name the registry does not know (reported when called).
    pub op: Option<&'static OpDef>,
    pub attrs: Attrs,
}

impl PrimFn {
    /// Checks and resolves the attributes of `prim`.
    pub fn new(prim: PrimRef) -> Result<PrimFn, String> {
        let Some(op) = ops::lookup(&prim.name) else {
            return Ok(PrimFn {
                prim,
                op: None,
                attrs: Attrs::default(),
            });
        };
        let mut given = Vec::with_capacity(prim.attrs.len());
        for (k, v) in &prim.attrs {
            given.push((k.clone(), ops::check_attr(op, k, v)?));
        }
        let attrs = ops::resolve_attrs(op, &given);
        Ok(PrimFn {
            prim,
            op: Some(op),
            attrs,
        })
    }
}

/// A graph with the values of its free variables.
#[derive(Clone)]
pub struct Closure {
    /// The top-level item (an index into the executor's items).
    pub item: u32,
    pub graph: GraphId,
    /// Captured values, in the executor's layout for this graph.
    pub env: Arc<[Value]>,
    pub name: Arc<str>,
}

/// A function value.
pub enum Func {
    Prim(PrimFn),
    Graph(Closure),
    Partial {
        f: Value,
        args: Vec<Value>,
    },
    /// `grad`, `value_and_grad` or `vjp`, not yet applied to a function.
    MetaOp(MetaFn),
    /// `grad(f)` and the like.
    Meta {
        meta: MetaFn,
        f: Value,
    },
}

/// Closures and partial applications can nest as deep as the recursion that
/// built them (`f = fn(x) => g(x) + 1` in a loop): they are taken apart with a
/// worklist, so dropping a long chain does not recurse on the native stack.
impl Drop for Func {
    fn drop(&mut self) {
        let mut work: Vec<Value> = Vec::new();
        take_children(self, &mut work);
        while let Some(v) = work.pop() {
            match v {
                Value::Func(mut f) => {
                    if let Some(f) = Arc::get_mut(&mut f) {
                        take_children(f, &mut work);
                    }
                }
                Value::Tuple(mut items) => {
                    if let Some(items) = Arc::get_mut(&mut items) {
                        for x in items.iter_mut() {
                            work.push(std::mem::replace(x, Value::None));
                        }
                    }
                }
                _ => {}
            }
        }
    }
}

fn take_children(f: &mut Func, work: &mut Vec<Value>) {
    match f {
        Func::Graph(c) => {
            if let Some(env) = Arc::get_mut(&mut c.env) {
                for x in env.iter_mut() {
                    work.push(std::mem::replace(x, Value::None));
                }
            }
        }
        Func::Partial { f, args } => {
            work.push(std::mem::replace(f, Value::None));
            work.append(args);
        }
        Func::Meta { f, .. } => work.push(std::mem::replace(f, Value::None)),
        Func::Prim(_) | Func::MetaOp(_) => {}
    }
}

impl Func {
    pub fn describe(&self) -> String {
        match self {
            Func::Prim(p) => p.prim.name.clone(),
            Func::Graph(c) => c.name.to_string(),
            Func::Partial { f, .. } => format!("Partial({})", describe_callee(f)),
            Func::MetaOp(m) => m.name().to_string(),
            Func::Meta { meta, f } => format!("{}({})", meta.name(), describe_callee(f)),
        }
    }
}

fn describe_callee(f: &Value) -> String {
    match f {
        Value::Func(func) => func.describe(),
        other => other.describe(),
    }
}

impl Value {
    pub fn tuple(items: Vec<Value>) -> Value {
        Value::Tuple(items.into())
    }

    pub fn func(f: Func) -> Value {
        Value::Func(Arc::new(f))
    }

    /// An uncounted tensor value (for tests and tools).
    pub fn tensor(t: Tensor) -> Value {
        Value::Tensor(TensorVal::new(t, None))
    }

    /// An uncounted non-weak scalar.
    pub fn scalar(c: ScalarConst, dtype: DType) -> Value {
        Value::Tensor(TensorVal::new_scalar(scalar_tensor(c, dtype), false, None))
    }

    pub fn as_tensor(&self) -> Option<&TensorVal> {
        match self {
            Value::Tensor(t) => Some(t),
            _ => None,
        }
    }

    /// What kind of value this is, for messages.
    pub fn describe(&self) -> String {
        match self {
            Value::Tensor(t) if t.scalar => format!("the {} scalar", t.dtype()),
            Value::Tensor(t) => format!("a {}{:?} tensor", t.dtype(), t.tensor().shape()),
            Value::Tuple(items) => format!("a tuple of {} elements", items.len()),
            Value::None => "none".into(),
            Value::Str(_) => "a string".into(),
            Value::Func(f) => format!("the function `{}`", f.describe()),
            Value::Type(t) => format!("the type {t}"),
        }
    }

    /// The abstract value a shape rule sees.
    pub fn abs(&self) -> AbsVal {
        match self {
            Value::Tensor(t) => t.abs(),
            Value::Tuple(items) => AbsVal::Tuple(items.iter().map(Value::abs).collect()),
            Value::None => AbsVal::None,
            Value::Str(s) => AbsVal::Str(Some(s.to_string())),
            Value::Func(_) | Value::Type(_) => AbsVal::Any,
        }
    }

    /// As a kernel value (tensors and tuples of them), copying tensor data.
    pub fn to_kvalue(&self) -> Option<KValue> {
        match self {
            Value::Tensor(t) => Some(KValue::Tensor(t.tensor().clone())),
            Value::Tuple(items) => items
                .iter()
                .map(Value::to_kvalue)
                .collect::<Option<Vec<_>>>()
                .map(KValue::Tuple),
            _ => None,
        }
    }

    /// Bytes of the tensors in this value (shared ones counted once per use).
    pub fn tensor_bytes(&self) -> usize {
        match self {
            Value::Tensor(t) => storage_bytes(t.tensor()),
            Value::Tuple(items) => items.iter().map(Value::tensor_bytes).sum(),
            _ => 0,
        }
    }
}

impl fmt::Debug for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Tensor(t) if t.scalar => {
                write!(f, "{}", t.dtype())?;
                if t.weak {
                    f.write_str("(weak)")?;
                }
                write!(f, " {}", crate::output::format_element(t.tensor(), 0))
            }
            Value::Tensor(t) => write!(f, "{:?}", t.tensor()),
            Value::Tuple(items) => f.debug_list().entries(items.iter()).finish(),
            Value::None => f.write_str("none"),
            Value::Str(s) => write!(f, "{s:?}"),
            Value::Func(func) => write!(f, "<function {}>", func.describe()),
            Value::Type(t) => write!(f, "{t}"),
        }
    }
}

/// A kernel result as a value, shaped by what the shape rule said it would be
/// (`AbsVal::Scalar` marks scalars; without a rule, a rank-0 result of scalar
/// inputs is a scalar).
pub fn from_kvalue(
    kv: KValue,
    abs: &AbsVal,
    scalar_inputs: Option<bool>,
    counter: Option<&Arc<MemCounter>>,
) -> Value {
    match kv {
        KValue::Tensor(t) => {
            let (scalar, weak) = match abs {
                AbsVal::Scalar { weak, .. } => (t.rank() == 0, *weak),
                AbsVal::Tensor { .. } => (false, false),
                _ => (t.rank() == 0 && scalar_inputs == Some(true), false),
            };
            let mut v = TensorVal::new(t, counter);
            v.scalar = scalar;
            v.weak = weak && scalar;
            Value::Tensor(v)
        }
        KValue::Tuple(items) => {
            let n = items.len();
            let parts: Vec<Value> = items
                .into_iter()
                .enumerate()
                .map(|(i, item)| {
                    let a = match abs {
                        AbsVal::Tuple(xs) if xs.len() == n => &xs[i],
                        _ => &AbsVal::Any,
                    };
                    from_kvalue(item, a, scalar_inputs, counter)
                })
                .collect();
            Value::tuple(parts)
        }
    }
}
