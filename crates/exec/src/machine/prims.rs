//! Calling a primitive in the interpreter (arguments checked, the memory
//! budget reserved, effects stored, NaN checks), and the helpers the
//! machine shares.

use super::*;

impl Executor {
    pub(super) fn call_prim(
        &mut self,
        p: &PrimFn,
        mut args: Vec<Value>,
    ) -> Result<Value, RunError> {
        let name = p.prim.name.as_str();
        match name {
            "MakeTuple" => return Ok(Value::tuple(args)),
            "TupleGetItem" => {
                expect_args(name, &args, 2)?;
                let index = args[1]
                    .as_tensor()
                    .filter(|t| t.dtype().is_int() && t.tensor().numel() == 1)
                    .and_then(|t| t.item_f64())
                    .ok_or_else(|| {
                        RunError::new(
                            ErrorKind::Type,
                            format!(
                                "a tuple index must be an integer, not {}",
                                args[1].describe()
                            ),
                        )
                    })? as i64;
                let Value::Tuple(items) = &args[0] else {
                    return Err(RunError::new(
                        ErrorKind::Type,
                        format!(
                            "{} is not a tuple; it cannot be indexed",
                            args[0].describe()
                        ),
                    ));
                };
                let len = items.len() as i64;
                let k = if index < 0 { index + len } else { index };
                if k < 0 || k >= len {
                    return Err(RunError::new(
                        ErrorKind::Type,
                        format!("index {index} is out of range for a tuple of {len} elements"),
                    ));
                }
                return Ok(items[k as usize].clone());
            }
            "Switch" => {
                expect_args(name, &args, 3)?;
                let cond = condition(&args[0])?;
                let b = args.pop().expect("3");
                let a = args.pop().expect("3");
                return Ok(if cond { a } else { b });
            }
            "Partial" => {
                if args.is_empty() {
                    return Err(RunError::new(ErrorKind::Type, "`Partial` needs a function"));
                }
                let f = args.remove(0);
                return Ok(Value::func(Func::Partial { f, args }));
            }
            "Depend" => {
                expect_args(name, &args, 2)?;
                return Ok(args.swap_remove(0));
            }
            "UpdateState" => return Ok(Value::None),
            "StopGradient" | "Return" => {
                expect_args(name, &args, 1)?;
                return Ok(args.swap_remove(0));
            }
            "Equal" | "NotEqual" => {
                if let [a, b] = args.as_slice() {
                    if let Some(eq) = constant_equality(a, b) {
                        let v = ScalarConst::Bool(eq == (name == "Equal"));
                        return Ok(Value::scalar(v, DType::Bool));
                    }
                }
            }
            _ => {}
        }
        let Some(op) = p.op else {
            return Err(RunError::new(
                ErrorKind::Type,
                format!("unknown primitive `{name}`"),
            ));
        };
        // An ordered call's last input is the state token (spec §11).
        if ops::is_ordered(name) && args.len() == op.input_count() + 1 {
            args.pop();
        }
        if !op.variadic && args.len() != op.input_count() {
            return Err(RunError::new(
                ErrorKind::Type,
                format!(
                    "`{name}` takes {} inputs but is given {}: {}",
                    op.input_count(),
                    args.len(),
                    op.signature()
                ),
            ));
        }
        for (i, a) in args.iter().enumerate() {
            if matches!(a, Value::Func(_) | Value::Type(_)) {
                return Err(RunError::new(
                    ErrorKind::Type,
                    format!(
                        "input {} of `{name}` must be a tensor, not {}",
                        i + 1,
                        a.describe()
                    ),
                ));
            }
        }
        let abs: Vec<AbsVal> = args.iter().map(Value::abs).collect();
        let inferred = catch(name, "shape rule", || {
            (op.infer)(&ops::InferCall {
                op,
                inputs: &abs,
                attrs: &p.attrs,
            })
        })?
        .map_err(|e| {
            let mut err = RunError::new(ErrorKind::Shape, op_message(name, &e.message));
            err.notes = e.notes.clone();
            for (i, a) in args.iter().enumerate() {
                err.notes
                    .push(format!("input {} is {}", i + 1, a.describe()));
            }
            err
        })?;
        // The guard after every shape rule: the result must be a shape that
        // can exist, and fit in the memory budget, before a kernel allocates it.
        let bytes = result_bytes(&inferred).map_err(|shape| {
            RunError::new(
                ErrorKind::Overflow,
                format!(
                    "`{name}`'s result {shape} cannot exist: its element count or byte size overflows a 64-bit integer"
                ),
            )
        })?;
        if let Some((bytes, shape)) = &bytes {
            self.reserve(&format!("`{name}`'s result {shape}"), *bytes)?;
        }
        if !self.backend.supports(op) {
            // An imported node mirdsl cannot compute: MindSpore's primitive by name.
            let message = if name == "Opaque" {
                format!(
                    "no kernel for MindSpore primitive `{}` (imported as Opaque)",
                    p.attrs.str("name")
                )
            } else {
                format!(
                    "`{name}` has no kernel on the {} backend yet",
                    self.backend.device().name()
                )
            };
            return Err(RunError::new(ErrorKind::Unsupported, message));
        }
        // Kernel arguments: tensors by reference, tuples copied.
        let mut tuples: Vec<Option<Vec<KValue>>> = Vec::new();
        if args.iter().any(|a| matches!(a, Value::Tuple(_))) {
            tuples = args
                .iter()
                .map(|a| match a.to_kvalue() {
                    Some(KValue::Tuple(items)) => Some(items),
                    _ => None,
                })
                .collect();
        }
        let mut kargs: Vec<KArg> = Vec::with_capacity(args.len());
        for (i, a) in args.iter().enumerate() {
            match (a, tuples.get(i)) {
                (Value::Tensor(t), _) => kargs.push(KArg::Tensor(t.tensor())),
                (_, Some(Some(items))) => kargs.push(KArg::Tuple(items)),
                // An absent optional input (`Dense`'s bias, a loss's weight):
                // kernels read `none` as the empty tuple.
                (Value::None, _) => kargs.push(KArg::Tuple(&[])),
                _ => {
                    return Err(RunError::new(
                        ErrorKind::Type,
                        format!(
                            "input {} of `{name}` must be a tensor, not {}",
                            i + 1,
                            a.describe()
                        ),
                    ))
                }
            }
        }
        let weak: Vec<bool> = args
            .iter()
            .map(|a| matches!(a, Value::Tensor(t) if t.weak))
            .collect();
        let call = KernelCall {
            inputs: &kargs,
            weak: &weak,
            attrs: &p.attrs,
        };
        let backend = &self.backend;
        let stop = &self.stop;
        // What the budget leaves beside the result, for the kernel's own buffers.
        let scratch = self
            .available_memory()
            .saturating_sub(bytes.as_ref().map_or(0, |(b, _)| *b));
        let (out, refused) = ops::guard::with_stop(stop, || {
            ops::guard::with_scratch(scratch, || catch(name, "kernel", || backend.run(op, &call)))
        });
        // A stopped kernel may return early with anything: discard it.
        self.check_stop()?;
        let out = out?.map_err(|e| {
            let kind = if refused {
                ErrorKind::Memory
            } else {
                ErrorKind::Shape
            };
            let mut err = RunError::new(kind, op_message(name, &e.message));
            err.notes = e.notes;
            err
        })?;
        let scalar_inputs = args
            .iter()
            .all(|a| matches!(a, Value::Tensor(t) if t.scalar));
        let v = from_kvalue(out, &inferred, Some(scalar_inputs), Some(&self.memory));
        drop(kargs);
        drop(args);
        // A result whose size the shape rule could not tell is counted now.
        let used = self.memory.stats().current_bytes;
        if bytes.is_none() && used > self.options.max_memory {
            drop(v);
            return Err(RunError::new(
                ErrorKind::Memory,
                format!(
                    "`{name}` made a result that takes the memory in use to {}, more than the memory budget of {}",
                    tensor::limits::format_bytes(used),
                    tensor::limits::format_bytes(self.options.max_memory)
                ),
            )
            .with_note("`mirdsl run --max-memory SIZE` sets the budget"));
        }
        if self.options.check_nan {
            if let Some(index) = first_nan(&v) {
                return Err(
                    RunError::new(ErrorKind::NaN, format!("`{name}` produced NaN{index}"))
                        .with_note("reported because of `--check-nan`"),
                );
            }
        }
        Ok(v)
    }
}

/// A function value's name for messages.
pub(super) fn describe_fn(f: &Value) -> String {
    match f {
        Value::Func(func) => func.describe(),
        other => other.describe(),
    }
}

/// A run-time value as an IR constant (for graphs made at run time).
pub(super) fn ir_constant(v: &Value) -> Option<IrValue> {
    Some(match v {
        Value::Tensor(t) if t.scalar => IrValue::Scalar {
            value: crate::value::scalar_const(t.tensor())?,
            dtype: t.dtype(),
            weak: t.weak,
        },
        Value::Tensor(t) => IrValue::Tensor(Arc::new(t.tensor().clone())),
        Value::Tuple(items) => {
            IrValue::Tuple(items.iter().map(ir_constant).collect::<Option<_>>()?)
        }
        Value::None => IrValue::None,
        Value::Str(s) => IrValue::Str(s.to_string()),
        Value::Type(t) => IrValue::Type((**t).clone()),
        Value::Func(f) => match &**f {
            Func::Prim(p) => IrValue::Prim(p.prim.clone()),
            Func::MetaOp(m) => IrValue::Meta(m.clone()),
            _ => return None,
        },
    })
}

/// A primitive's error, naming the primitive once.
pub(super) fn op_message(name: &str, message: &str) -> String {
    if message.contains(&format!("`{name}`")) {
        message.to_string()
    } else {
        format!("`{name}`: {message}")
    }
}

pub(super) fn expect_args(name: &str, args: &[Value], n: usize) -> Result<(), RunError> {
    if args.len() != n {
        return Err(RunError::new(
            ErrorKind::Type,
            format!("`{name}` takes {n} inputs but is given {}", args.len()),
        ));
    }
    Ok(())
}

/// The truth of a `Switch` condition: a `bool` scalar or one-element tensor.
pub(super) fn condition(v: &Value) -> Result<bool, RunError> {
    match v {
        Value::Tensor(t) if t.tensor().numel() == 1 && t.dtype() == DType::Bool => {
            Ok(t.item_f64() == Some(1.0))
        }
        Value::Tensor(t) if t.tensor().numel() == 1 => Ok(t.item_f64() != Some(0.0)),
        other => Err(RunError::new(
            ErrorKind::Type,
            format!(
                "a condition must be a `bool` scalar or a `bool[]` tensor, not {}",
                other.describe()
            ),
        )),
    }
}

/// Runs `f` (the shape rule or kernel of `name`, as `what` says), turning a
/// panic into an error: integer overflow is reported as such, anything else
/// as an internal error.
pub(super) fn catch<T>(name: &str, what: &str, f: impl FnOnce() -> T) -> Result<T, RunError> {
    ops::guard::catch(f).map_err(|p| {
        if p.message.contains("capacity overflow") {
            return RunError::new(
                ErrorKind::Memory,
                format!("`{name}` needs more memory than can be addressed"),
            );
        }
        if p.is_overflow() {
            let note = if what == "kernel" {
                "an integer result out of the range the kernel computes in"
            } else {
                "sizes are 64-bit integers; this input is out of their range"
            };
            return RunError::new(
                ErrorKind::Overflow,
                format!("integer overflow in the {what} of `{name}` ({})", p.message),
            )
            .with_note(note);
        }
        let at = p.location.map(|l| format!(" at {l}")).unwrap_or_default();
        RunError::internal(format!(
            "internal error: the {what} of `{name}` panicked{at}: {}",
            p.message
        ))
        .with_note("this is a bug in mirdsl; please report it")
    })
}

/// The bytes a shape rule's result takes on the host and the shape of its
/// largest tensor, when every shape in it is known; `Err(shape)` when one
/// overflows.
pub(super) fn result_bytes(v: &AbsVal) -> Result<Option<(usize, String)>, String> {
    fn walk(
        v: &AbsVal,
        total: &mut Option<usize>,
        largest: &mut (usize, String),
    ) -> Result<(), String> {
        match v {
            AbsVal::Tensor { dtype, shape } => {
                let Some(dims) = shape.as_known() else {
                    *total = None;
                    return Ok(());
                };
                let dims: Option<Vec<usize>> =
                    dims.iter().map(|&d| usize::try_from(d).ok()).collect();
                let bytes = dims
                    .as_deref()
                    .filter(|_| !shape.overflows(*dtype))
                    .and_then(|d| tensor::storage_bytes(*dtype, d))
                    .ok_or_else(|| format!("{dtype}{shape}"))?;
                if bytes >= largest.0 {
                    *largest = (bytes, format!("{dtype}{shape}"));
                }
                *total = total.map(|t| t.saturating_add(bytes));
                Ok(())
            }
            AbsVal::Tuple(items) => items.iter().try_for_each(|i| walk(i, total, largest)),
            _ => Ok(()),
        }
    }
    let mut total = Some(0usize);
    let mut largest = (0usize, String::new());
    walk(v, &mut total, &mut largest)?;
    Ok(total.map(|t| (t, largest.1)))
}

pub(crate) fn panic_message(p: &Box<dyn std::any::Any + Send>) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "(no message)".into()
    }
}

/// `" at [i, j]"` for the first NaN of a value, if any.
pub(super) fn first_nan(v: &Value) -> Option<String> {
    match v {
        Value::Tensor(t) => {
            let tensor = t.tensor();
            let flat = match tensor.buffer() {
                Buffer::F32(d) => d.iter().position(|x| x.is_nan()),
                Buffer::F64(d) => d.iter().position(|x| x.is_nan()),
                _ => None,
            }?;
            if tensor.rank() == 0 {
                return Some(String::new());
            }
            let mut index = vec![0; tensor.rank()];
            let mut rest = flat;
            for (d, &size) in tensor.shape().iter().enumerate().rev() {
                index[d] = rest % size;
                rest /= size;
            }
            Some(format!(" at index {index:?}"))
        }
        Value::Tuple(items) => items.iter().enumerate().find_map(|(i, item)| {
            first_nan(item).map(|s| format!(" in element {i} of its result{s}"))
        }),
        _ => None,
    }
}

/// What is known of run-time arguments, for autodiff: dtypes and shapes;
/// `None` when one is a function (autodiff then uses the annotations).
pub(super) fn abstract_args(args: &[Value]) -> Option<Vec<AbsVal>> {
    fn one(v: &Value) -> Option<AbsVal> {
        Some(match v {
            Value::Tensor(t) => t.abs().widen(),
            Value::Tuple(items) => AbsVal::Tuple(items.iter().map(one).collect::<Option<_>>()?),
            Value::None => AbsVal::None,
            Value::Str(_) => AbsVal::Str(None),
            Value::Func(_) | Value::Type(_) => return None,
        })
    }
    args.iter().map(one).collect()
}

/// For a call of a primitive that writes weights: the weights it writes, in
/// the order its kernel returns their new values. Each written input must be a
/// weight itself (lowering checks this for source programs).
pub(super) fn effect_writes(callee: &Value, inputs: &[Operand]) -> Result<Vec<u32>, RunError> {
    let Value::Func(f) = callee else {
        return Ok(Vec::new());
    };
    let Func::Prim(p) = &**f else {
        return Ok(Vec::new());
    };
    let Some(effect) = ops::effect_of(&p.prim.name) else {
        return Ok(Vec::new());
    };
    effect
        .writes
        .iter()
        .map(|&i| match inputs.get(i + 1) {
            Some(Operand::Weight(w)) => Ok(*w),
            _ => Err(RunError::new(
                ErrorKind::Type,
                format!(
                    "`{}` updates its input {} in place: it must be a weight",
                    p.prim.name,
                    i + 1
                ),
            )),
        })
        .collect()
}

/// Whether two operands of `Equal` are equal, when one of them is a string,
/// `none` or a dtype (as inference decides it): strings compare by their text,
/// `none` equals only `none`, dtypes compare as dtypes, and a tensor is never
/// one of those. `None` for two tensors (the primitive compares them).
pub(super) fn constant_equality(a: &Value, b: &Value) -> Option<bool> {
    match (a, b) {
        (Value::Str(x), Value::Str(y)) => Some(x == y),
        (Value::None, Value::None) => Some(true),
        (Value::Type(x), Value::Type(y)) => Some(x == y),
        (Value::Str(_) | Value::None | Value::Type(_), Value::Tensor(_))
        | (Value::Tensor(_), Value::Str(_) | Value::None | Value::Type(_))
        | (Value::Str(_), Value::None | Value::Type(_))
        | (Value::None, Value::Str(_) | Value::Type(_))
        | (Value::Type(_), Value::Str(_) | Value::None) => Some(false),
        _ => None,
    }
}
