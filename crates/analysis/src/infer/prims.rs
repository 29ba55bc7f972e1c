//! Inference of primitive calls (their shape rules, metafunctions' argument
//! checks), constant equalities, and joining the values of `if` branches.

use super::*;

impl Engine<'_> {
    pub(super) fn apply_prim(
        &mut self,
        frame: &mut Frame,
        n: NodeId,
        p: &PrimRef,
        args: Vec<Val>,
    ) -> Val {
        let item = frame.item.clone();
        match p.name.as_str() {
            "MakeTuple" => {
                let items: Option<Vec<AbsVal>> = args.into_iter().collect();
                return items.map(AbsVal::Tuple);
            }
            "TupleGetItem" => {
                let [t, i] = args.as_slice() else {
                    return Some(AbsVal::Any);
                };
                let (t, i) = (t.clone()?, i.clone()?);
                let index = i.const_value().and_then(ScalarConst::as_i64);
                return Some(match (&t, index) {
                    (AbsVal::Any, _) => AbsVal::Any,
                    (AbsVal::Tuple(items), Some(k)) => {
                        let len = items.len() as i64;
                        let k2 = if k < 0 { k + len } else { k };
                        if k2 < 0 || k2 >= len {
                            let span = self.span(frame, n, Some(2));
                            self.report(&item, Diagnostic::error(Code::TupleIndex, span, format!("index {k} is out of range for a tuple of {len} elements ({t})")));
                            AbsVal::Any
                        } else {
                            items[k2 as usize].clone()
                        }
                    }
                    (AbsVal::Tuple(_), None) => {
                        let span = self.span(frame, n, Some(2));
                        self.report(
                            &item,
                            Diagnostic::error(
                                Code::TupleIndex,
                                span,
                                "a tuple index must be a constant integer",
                            ),
                        );
                        AbsVal::Any
                    }
                    (other, _) => {
                        let span = self.span(frame, n, Some(1));
                        self.report(&item, Diagnostic::error(Code::NotATuple, span, format!("this is {other}, not a tuple; it cannot be indexed or destructured")));
                        AbsVal::Any
                    }
                });
            }
            "Switch" => {
                let [c, a, b] = args.as_slice() else {
                    return Some(AbsVal::Any);
                };
                let c = c.clone()?;
                let cond_ok = match &c {
                    AbsVal::Scalar {
                        dtype: DType::Bool, ..
                    }
                    | AbsVal::Any => true,
                    AbsVal::Tensor {
                        dtype: DType::Bool,
                        shape,
                    } => shape.rank().is_none_or(|r| r == 0),
                    _ => false,
                };
                if !cond_ok {
                    let span = self.span(frame, n, Some(1));
                    self.report(
                        &item,
                        Diagnostic::error(
                            Code::NonBoolCondition,
                            span,
                            format!(
                                "a condition must be a `bool` scalar or a `bool[]` tensor, not {c}"
                            ),
                        ),
                    );
                }
                let taken = c.const_value().map(|v| v.as_f64() != 0.0);
                return match taken {
                    Some(true) => a.clone(),
                    Some(false) => b.clone(),
                    None => self.join_branches(frame, n, a.clone(), b.clone()),
                };
            }
            "Partial" => {
                let Some((f, bound)) = args.split_first() else {
                    return Some(AbsVal::Any);
                };
                let f = f.clone()?;
                let bound: Option<Vec<AbsVal>> = bound.iter().cloned().collect();
                return match f {
                    AbsVal::Func(id) => Some(self.intern(FuncVal::Partial {
                        f: id,
                        args: bound?,
                    })),
                    _ => Some(AbsVal::Any),
                };
            }
            "Depend" => return args.first().cloned().unwrap_or(Some(AbsVal::Any)),
            "UpdateState" => return Some(AbsVal::Monad),
            "StopGradient" | "Return" => return args.first().cloned().unwrap_or(Some(AbsVal::Any)),
            "Equal" | "NotEqual" => {
                // `==` on strings, `none` and dtypes (a composite's attributes:
                // `if reduction == "sum"`) is decided here, as a constant.
                if let Some(eq) = self.constant_equality(frame, n, &args) {
                    let equal = p.name == "Equal";
                    return Some(AbsVal::Scalar {
                        dtype: DType::Bool,
                        value: eq.map(|eq| ScalarConst::Bool(eq == equal)),
                        weak: false,
                    });
                }
            }
            _ => {}
        }
        // A composite primitive is a call of its instance graph (a primitive
        // with an expansion has a shape rule of its own, which knows more
        // than inferring the expansion's `if`s over ranks).
        let composite = ops::composite::composite(&p.name).is_some();
        if let (true, Some(key), Some(instance)) = (
            composite,
            ops::composite::instance_key(p),
            crate::composite::instance(p),
        ) {
            // Attribute values its definition cannot take (`shape=3` where
            // the body needs a tuple).
            let error = instance
                .diagnostics
                .iter()
                .find(|d| d.severity == crate::Severity::Error);
            if let Some(e) = error {
                let span = self.span(frame, n, None);
                let message = format!("`{}` cannot take these attributes: {}", p.name, e.message);
                self.report(
                    &item,
                    Diagnostic::error(Code::BadAttributeValue, span, message),
                );
                return Some(AbsVal::Any);
            }
            let f = self.intern(FuncVal::Graph {
                item: Arc::from(key.as_str()),
                graph: GraphId(0),
                env: Vec::new(),
            });
            return self.apply_value(frame, n, f, args);
        }
        // An unknown primitive was reported by lowering.
        let Some(op) = ops::lookup(&p.name) else {
            return Some(AbsVal::Any);
        };
        let inputs: Option<Vec<AbsVal>> = args.into_iter().collect();
        let mut inputs = inputs?;
        // An ordered call's last input is the state token (spec §11).
        if ops::is_ordered(op.name)
            && inputs.len() == op.input_count() + 1
            && matches!(inputs.last(), Some(AbsVal::Monad))
        {
            inputs.pop();
        }
        if !op.variadic && inputs.len() != op.input_count() {
            // Called through a function value: arity not checked at lowering.
            let span = self.span(frame, n, None);
            self.report(
                &item,
                Diagnostic::error(
                    Code::WrongArity,
                    span,
                    format!(
                        "`{}` takes {} inputs but is given {}: {}",
                        op.name,
                        op.input_count(),
                        inputs.len(),
                        op.signature()
                    ),
                ),
            );
            return Some(AbsVal::Any);
        }
        if inputs.iter().any(|i| matches!(i, AbsVal::Func(_))) {
            let i = inputs
                .iter()
                .position(|i| matches!(i, AbsVal::Func(_)))
                .unwrap();
            let span = self.span(frame, n, Some(i + 1));
            self.report(
                &item,
                Diagnostic::error(
                    Code::DTypeMismatch,
                    span,
                    format!("`{}` needs a tensor here, not a function", op.name),
                ),
            );
            return Some(AbsVal::Any);
        }
        let given: Vec<(String, AttrValue)> = p.attrs.clone();
        let attrs = ops::resolve_attrs(op, &given);
        // A shape rule is trusted code, but a panic in one must not take the
        // checker (or the language server) down with it.
        let inferred = ops::guard::catch(|| {
            (op.infer)(&ops::InferCall {
                op,
                inputs: &inputs,
                attrs: &attrs,
            })
        });
        // An input whose shape already overflows was reported where it came from.
        let inputs_overflow = inputs
            .iter()
            .any(|i| crate::limits::overflow_in(i).is_some());
        let inferred = match inferred {
            Ok(inferred) => inferred,
            Err(_) if inputs_overflow => return Some(AbsVal::Any),
            Err(p) if p.is_overflow() => {
                let span = self.span(frame, n, None);
                self.report(
                    &item,
                    Diagnostic::error(
                        Code::SizeOverflow,
                        span,
                        format!(
                            "the shape of `{}`'s result overflows a 64-bit integer on these inputs",
                            op.name
                        ),
                    ),
                );
                return Some(AbsVal::Any);
            }
            Err(p) => {
                let span = self.span(frame, n, None);
                self.report(
                    &item,
                    Diagnostic::error(
                        Code::ShapeMismatch,
                        span,
                        format!("internal error: the shape rule of `{}` failed on these inputs (please report this): {}", op.name, p.message),
                    ),
                );
                return Some(AbsVal::Any);
            }
        };
        match inferred {
            // The guard after every shape rule: a result no tensor can have is
            // an error at the call, one larger than the memory budget a warning.
            Ok(v) => {
                if let Some(message) = crate::limits::overflow_in(&v) {
                    if !inputs_overflow {
                        let span = self.span(frame, n, None);
                        self.report(
                            &item,
                            Diagnostic::error(
                                Code::SizeOverflow,
                                span,
                                format!("`{}`: {message}", op.name),
                            ),
                        );
                    }
                    return Some(AbsVal::Any);
                }
                // Warned once, where a size first exceeds the budget.
                let inputs_over = inputs
                    .iter()
                    .any(|i| crate::limits::over_budget(i).is_some());
                if let Some(message) = crate::limits::over_budget(&v).filter(|_| !inputs_over) {
                    let span = self.span(frame, n, None);
                    self.report(
                        &item,
                        Diagnostic::error(Code::OverMemoryBudget, span, message),
                    );
                }
                Some(v)
            }
            Err(e) => {
                let span = match &e.target {
                    ops::ErrorTarget::Input(i) => self.span(frame, n, Some(i + 1)),
                    ops::ErrorTarget::Attr(name) => frame
                        .lowered
                        .source_map
                        .attr_spans
                        .get(&n)
                        .and_then(|s| s.iter().find(|(k, _)| k == name).map(|(_, r)| *r))
                        .unwrap_or_else(|| self.span(frame, n, None)),
                    ops::ErrorTarget::Call => self.span(frame, n, None),
                };
                let code = match &e.target {
                    _ if e.message.contains("overflows a 64-bit integer") => Code::SizeOverflow,
                    ops::ErrorTarget::Attr(_) => Code::BadAttributeValue,
                    _ if e.message.contains("dtype") => Code::DTypeMismatch,
                    _ => Code::ShapeMismatch,
                };
                let mut d = Diagnostic::error(code, span, e.message.clone());
                d.notes = e.notes.clone();
                // What each operand is, where it is written: the one at
                // fault under the primary span, the others beside it.
                if let Some(spans) = frame.lowered.source_map.input_spans.get(&n).cloned() {
                    for (i, v) in inputs.iter().enumerate() {
                        let Some(r) = spans.get(i + 1).copied() else {
                            continue;
                        };
                        if v.dtype().is_none() || (r == span && d.label.is_some()) {
                            continue;
                        }
                        if r == span {
                            d.label = Some(format!("this is {v}"));
                        } else if !d.related.iter().any(|x| x.range == r) {
                            d.related.push(Related::new(r, format!("this is {v}")));
                        }
                    }
                }
                if code == Code::DTypeMismatch {
                    if let ops::ErrorTarget::Input(i) = e.target {
                        d = cast_fix(d, span, i, &inputs);
                    }
                }
                self.report(&item, d);
                Some(AbsVal::Any)
            }
        }
    }

    /// Whether the two operands of an `Equal` are equal, when one of them is
    /// a string, `none` or a dtype, or both are known numbers: strings compare
    /// by their text (exactly; `Some(None)` when a string is not known),
    /// `none` equals only `none`, dtypes compare as dtypes, numbers by value,
    /// and a number or a tensor is never a string, `none` or a dtype. `None`
    /// when that is not decided here (tensors and unknown numbers compare
    /// elementwise through the primitive).
    pub(super) fn constant_equality(
        &self,
        frame: &Frame,
        n: NodeId,
        args: &[Val],
    ) -> Option<Option<bool>> {
        #[derive(PartialEq)]
        enum Operand<'a> {
            /// A string, `None` when not known.
            Str(Option<&'a str>),
            None,
            Type(&'a Ty),
            /// A known number.
            Number(f64),
            /// An unknown number or a tensor.
            Numeric,
        }
        use Operand as O;
        let body = &frame.lowered.body;
        // The argument nodes, when `n` calls the primitive directly.
        let nodes = body
            .called_prim(n)
            .map(|_| &body.inputs(n)[1..])
            .filter(|nodes| nodes.len() == args.len());
        let operand = |i: usize| -> Option<Operand> {
            match args.get(i)?.as_ref()? {
                AbsVal::Str(s) => Some(O::Str(s.as_deref())),
                AbsVal::None => Some(O::None),
                AbsVal::Scalar { value: Some(v), .. } => Some(O::Number(v.as_f64())),
                AbsVal::Scalar { .. } | AbsVal::Tensor { .. } => Some(O::Numeric),
                _ => match &body.node(*nodes?.get(i)?).kind {
                    NodeKind::Const(Value::Type(t)) => Some(O::Type(t)),
                    _ => None,
                },
            }
        };
        if args.len() != 2 {
            return None;
        }
        Some(match (operand(0)?, operand(1)?) {
            (O::Number(x), O::Number(y)) => Some(x == y),
            (O::Number(_) | O::Numeric, O::Number(_) | O::Numeric) => return None,
            (O::Str(Some(x)), O::Str(Some(y))) => Some(x == y),
            (O::Str(_), O::Str(_)) => None,
            (a, b) => Some(a == b),
        })
    }

    pub(super) fn branch_mismatch(&mut self, frame: &Frame, n: NodeId, values: &[AbsVal]) {
        let item = frame.item.clone();
        let span = self.span(frame, n, None);
        let described: Vec<String> = values.iter().map(|v| v.to_string()).collect();
        let mut d = Diagnostic::error(
            Code::BranchMismatch,
            span,
            format!(
                "the branches of this `if` differ: {}",
                described.join(" and ")
            ),
        );
        if let Some(info) = frame.lowered.source_map.ifs.iter().find(|i| i.call == n) {
            if let [a, b, ..] = values {
                d = d
                    .with_related(info.then_value, format!("this is {a}"))
                    .with_related(info.else_value, format!("this is {b}"));
            }
        }
        self.report(&item, d);
    }

    /// Joins two values like `AbsVal::join`, but two different function values
    /// (also inside tuples) join into a union of both, as a `Switch` between
    /// closures needs: calling the union calls each.
    pub(super) fn join_values(&mut self, a: &AbsVal, b: &AbsVal) -> Option<AbsVal> {
        self.join_values_at(a, b, 0)
    }

    /// [`Self::join_values`] at tuple depth `depth`: values nested deeper than
    /// [`MAX_JOIN_DEPTH`] that differ join to `Any` (the sensitivities of a
    /// recursive graph's backpropagators, differentiated again, nest as deep
    /// as the recursion runs; no finite type describes them).
    pub(super) fn join_values_at(
        &mut self,
        a: &AbsVal,
        b: &AbsVal,
        depth: usize,
    ) -> Option<AbsVal> {
        if depth > MAX_JOIN_DEPTH {
            return Some(a.join(b).unwrap_or(AbsVal::Any));
        }
        match (a, b) {
            (AbsVal::Func(x), AbsVal::Func(y)) if x == y => Some(AbsVal::Func(*x)),
            (AbsVal::Func(x), AbsVal::Func(y)) => {
                let mut members = Vec::new();
                for f in [*x, *y] {
                    match &self.funcs[f as usize] {
                        FuncVal::Union(inner) => members.extend(inner.iter().copied()),
                        _ => members.push(f),
                    }
                }
                members.sort_unstable();
                members.dedup();
                Some(self.intern(FuncVal::Union(members)))
            }
            (AbsVal::Tuple(xs), AbsVal::Tuple(ys)) if xs.len() == ys.len() => {
                let mut out = Vec::with_capacity(xs.len());
                for (x, y) in xs.iter().zip(ys) {
                    out.push(self.join_values_at(x, y, depth + 1)?);
                }
                Some(AbsVal::Tuple(out))
            }
            _ if depth >= MAX_JOIN_DEPTH => Some(a.join(b).unwrap_or(AbsVal::Any)),
            _ => a.join(b),
        }
    }

    pub(super) fn join_branches(&mut self, frame: &mut Frame, n: NodeId, a: Val, b: Val) -> Val {
        match (a, b) {
            (None, x) | (x, None) => x,
            (Some(AbsVal::Func(x)), Some(AbsVal::Func(y))) if x == y => Some(AbsVal::Func(x)),
            (Some(AbsVal::Func(x)), Some(AbsVal::Func(y))) => {
                // The branches are graphs: the call of the Switch runs one of them.
                // Evaluate both and check they agree.
                let _ = n;
                Some(self.intern(FuncVal::Union(vec![x, y])))
            }
            (Some(x), Some(y)) => match self.join_values(&x, &y) {
                Some(v) => Some(v),
                None => {
                    let span = self.span(frame, n, None);
                    let item = frame.item.clone();
                    self.report(
                        &item,
                        Diagnostic::error(
                            Code::BranchMismatch,
                            span,
                            format!("the branches differ: {x} and {y}"),
                        ),
                    );
                    Some(AbsVal::Any)
                }
            },
        }
    }
}

/// The type of a gradient with respect to a value of this type.
pub(super) fn grad_like(v: &AbsVal) -> AbsVal {
    match v {
        AbsVal::Scalar { dtype, weak, .. } => AbsVal::Scalar {
            dtype: *dtype,
            value: None,
            weak: *weak,
        },
        AbsVal::Tuple(items) => AbsVal::Tuple(items.iter().map(grad_like).collect()),
        AbsVal::Str(_) | AbsVal::None | AbsVal::Func(_) => AbsVal::None,
        other => other.clone(),
    }
}

/// Whether `v` can be a tangent of (a vector like) `x`: the same structure,
/// shapes that agree where both are known, float where `x` is.
pub(super) fn tangent_fits(x: &AbsVal, v: &AbsVal) -> Result<(), String> {
    match (x, v) {
        (AbsVal::Any, _) | (_, AbsVal::Any) => Ok(()),
        (AbsVal::Tuple(xs), AbsVal::Tuple(vs)) => {
            if xs.len() != vs.len() {
                return Err(format!("{} elements, not {}", vs.len(), xs.len()));
            }
            xs.iter().zip(vs).try_for_each(|(a, b)| tangent_fits(a, b))
        }
        (AbsVal::Tuple(_), _) | (_, AbsVal::Tuple(_)) => Err("not the same structure".into()),
        (AbsVal::Tensor { shape: a, .. }, AbsVal::Tensor { shape: b, .. }) => {
            match (a.dims(), b.dims()) {
                (Some(p), Some(q)) if p.len() != q.len() => {
                    Err(format!("rank {} is not {}", q.len(), p.len()))
                }
                (Some(p), Some(q)) => {
                    for (i, (d, e)) in p.iter().zip(q).enumerate() {
                        if let (Dim::Known(d), Dim::Known(e)) = (d, e) {
                            if d != e {
                                return Err(format!("dimension {i} is {e}, not {d}"));
                            }
                        }
                    }
                    Ok(())
                }
                _ => Ok(()),
            }
        }
        _ => Ok(()),
    }
}

pub(super) fn check_differentiable(out: &AbsVal) -> Result<(), String> {
    match out {
        AbsVal::Func(_) => Err("is a function".into()),
        AbsVal::Str(_) => Err("is a string".into()),
        AbsVal::Tuple(items) => items.iter().try_for_each(check_differentiable),
        _ => Ok(()),
    }
}

/// Whether a value fits a declared type; symbols in the declaration are bound
/// on first sight and must then agree. The error says why not.
pub fn conforms(v: &AbsVal, ty: &Ty, symbols: &mut HashMap<String, Dim>) -> Result<(), String> {
    match (v, ty) {
        (AbsVal::Any, _) | (_, Ty::Unknown) => Ok(()),
        (AbsVal::Scalar { dtype, weak, .. }, Ty::Scalar(d)) => {
            if dtype == d
                || (*weak && (dtype.is_float() == d.is_float()) && !d.is_bool() && !dtype.is_bool())
            {
                Ok(())
            } else {
                Err(format!("dtype {dtype} is not {d}"))
            }
        }
        (AbsVal::Scalar { dtype, weak, .. }, Ty::Tensor(d, shape)) => {
            if shape.rank().is_some_and(|r| r != 0) {
                return Err(format!("a scalar is not a tensor of shape {shape}"));
            }
            if dtype == d || *weak {
                Ok(())
            } else {
                Err(format!("dtype {dtype} is not {d}"))
            }
        }
        (AbsVal::Tensor { dtype, shape }, Ty::Tensor(d, declared)) => {
            if dtype != d {
                return Err(format!("dtype {dtype} is not {d}"));
            }
            shape_conforms(shape, declared, symbols)
        }
        (AbsVal::Tensor { .. }, Ty::Scalar(_)) => Err("a tensor is not a scalar".into()),
        (AbsVal::Tuple(items), Ty::Tuple(tys)) => {
            if items.len() != tys.len() {
                return Err(format!(
                    "a tuple of {} elements is not one of {}",
                    items.len(),
                    tys.len()
                ));
            }
            for (i, (item, t)) in items.iter().zip(tys).enumerate() {
                conforms(item, t, symbols).map_err(|e| format!("element {i}: {e}"))?;
            }
            Ok(())
        }
        (AbsVal::Func(_), Ty::Func(_)) => Ok(()),
        (AbsVal::Str(_), Ty::Str) | (AbsVal::None, Ty::None) => Ok(()),
        (v, ty) => Err(format!("{v} is not {ty}")),
    }
}

/// The value a declared type stands for, its symbolic dims bound as
/// [`conforms`] bound them (those it did not bind stay symbolic).
pub fn declared_value(ty: &Ty, symbols: &HashMap<String, Dim>) -> AbsVal {
    match ty {
        Ty::Tensor(dtype, Shape::Ranked(dims)) => AbsVal::Tensor {
            dtype: *dtype,
            shape: Shape::Ranked(
                dims.iter()
                    .map(|d| match d {
                        Dim::Sym(s) => symbols.get(s).unwrap_or(d).clone(),
                        _ => d.clone(),
                    })
                    .collect(),
            ),
        },
        Ty::Tuple(items) => {
            AbsVal::Tuple(items.iter().map(|t| declared_value(t, symbols)).collect())
        }
        _ => AbsVal::from_ty(ty),
    }
}

pub(super) fn shape_conforms(
    actual: &Shape,
    declared: &Shape,
    symbols: &mut HashMap<String, Dim>,
) -> Result<(), String> {
    let (Some(a), Some(d)) = (actual.dims(), declared.dims()) else {
        return Ok(());
    };
    if a.len() != d.len() {
        return Err(format!("rank {} is not {}", a.len(), d.len()));
    }
    for (i, (x, y)) in a.iter().zip(d).enumerate() {
        match y {
            Dim::Unknown => {}
            Dim::Known(n) => {
                if let Dim::Known(m) = x {
                    if m != n {
                        return Err(format!("dimension {i} is {m}, not {n}"));
                    }
                }
            }
            Dim::Sym(s) => {
                match symbols.get(s) {
                    None => {
                        symbols.insert(s.clone(), x.clone());
                    }
                    Some(bound) => {
                        if let (Dim::Known(p), Dim::Known(q)) = (bound, x) {
                            if p != q {
                                return Err(format!("dimension {i} is {q}, but `{s}` is {p} elsewhere in the signature"));
                            }
                        }
                    }
                }
            }
        }
    }
    Ok(())
}

/// A dtype mismatch at input `at` (written at `span`) whose other operands
/// agree on a numeric dtype: offer `Cast(operand, that dtype)`.
fn cast_fix(d: Diagnostic, span: TextRange, at: usize, inputs: &[AbsVal]) -> Diagnostic {
    let Some(from) = inputs.get(at).and_then(AbsVal::dtype) else {
        return d;
    };
    let numeric = |t: DType| t.is_float() || t.is_int();
    let mut others = inputs
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != at)
        .filter_map(|(_, v)| v.dtype())
        .filter(|t| *t != from && numeric(*t));
    let Some(to) = others.next() else {
        return d;
    };
    if !numeric(from) || others.any(|t| t != to) {
        return d;
    }
    d.with_wrapping_fix(format!("cast to {to}"), span, format!("Cast($0, {to})"))
}
