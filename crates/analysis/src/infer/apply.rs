//! Applying a function value: a primitive (its shape rule), a graph or a
//! closure (evaluated, or its memoised call), a partial application, or a
//! metafunction (`grad`, `vjp`, `jvp`...: the type of what it makes).

use super::*;

impl Engine<'_> {
    pub(super) fn apply_value(
        &mut self,
        frame: &mut Frame,
        n: NodeId,
        callee: AbsVal,
        args: Vec<Val>,
    ) -> Val {
        let item = frame.item.clone();
        let AbsVal::Func(id) = callee else {
            if matches!(callee, AbsVal::Any) {
                return Some(AbsVal::Any);
            }
            let span = self.span(frame, n, Some(0));
            self.report(
                &item,
                Diagnostic::error(
                    Code::NotCallable,
                    span,
                    format!("this is {callee}, not a function; it cannot be called"),
                ),
            );
            return Some(AbsVal::Any);
        };
        match self.funcs[id as usize].clone() {
            FuncVal::Prim(p) => self.apply_prim(frame, n, &p, args),
            FuncVal::Graph {
                item: g_item,
                graph,
                env,
            } => {
                // A top-level graph's signature comes from the source (a query
                // an edit inside its body leaves unchanged); a nested graph's
                // from its lowering.
                let sig = if graph == GraphId(0) {
                    self.source.signature(&g_item)
                } else {
                    self.lowered(&g_item)
                        .map(|l| Arc::new(Signature::of(&l, graph)))
                };
                let Some(sig) = sig else {
                    return Some(AbsVal::Any);
                };
                let params = sig.params.len();
                let name = sig.name.clone();
                if params != args.len() {
                    let span = self.span(frame, n, None);
                    let d = self.arity_error(frame, n, span, &sig, args.len());
                    let names: Vec<String> = sig
                        .params
                        .iter()
                        .enumerate()
                        .map(|(i, (p, _))| p.clone().unwrap_or_else(|| format!("#{i}")))
                        .collect();
                    let d = match self.annotation_ranges(&g_item, graph).0 {
                        Some(r) => d.with_related(
                            r,
                            format!("`{name}({})` is defined here", names.join(", ")),
                        ),
                        None => d,
                    };
                    self.report(&item, d);
                    return Some(AbsVal::Any);
                }
                // Check arguments against annotations at the call site.
                let mut symbols = HashMap::default();
                let mut call_args = Vec::new();
                for (i, ((pname, ann), a)) in sig.params.iter().zip(&args).enumerate() {
                    let mut value = a.clone();
                    if let (Some(ty), Some(v)) = (ann, a) {
                        if let Err(why) = conforms(v, ty, &mut symbols) {
                            let span = self.span(frame, n, Some(i + 1));
                            let pname = pname.clone().unwrap_or_default();
                            let range = self
                                .annotation_ranges(&g_item, graph)
                                .1
                                .get(i)
                                .copied()
                                .flatten()
                                .unwrap_or_default();
                            let mut d = Diagnostic::error(Code::ArgumentMismatch, span, format!("argument `{pname}` of `{name}` must be {ty}, but this is {v}: {why}"))
                                .with_label(format!("this is {v}"))
                                .with_related(range, format!("`{pname}` is declared {ty} here"));
                            // Only the dtype is off: cast the argument.
                            let declared = match ty {
                                Ty::Scalar(d) | Ty::Tensor(d, _) => Some(*d),
                                _ => None,
                            };
                            if let (Some(to), Some(from)) = (declared, v.dtype()) {
                                let as_declared = |d| match v {
                                    AbsVal::Tensor { shape, .. } => AbsVal::Tensor {
                                        dtype: d,
                                        shape: shape.clone(),
                                    },
                                    other => other.clone(),
                                };
                                let numeric = |t: DType| t.is_float() || t.is_int();
                                if to != from
                                    && numeric(to)
                                    && numeric(from)
                                    && conforms(&as_declared(to), ty, &mut HashMap::default())
                                        .is_ok()
                                {
                                    d = d.with_wrapping_fix(
                                        format!("cast to {to}"),
                                        span,
                                        format!("Cast($0, {to})"),
                                    );
                                }
                            }
                            self.report(&item, d);
                            value = Some(AbsVal::from_ty(ty));
                        }
                    }
                    call_args.push(value);
                }
                let own = env.is_empty() && graph == GraphId(0) && sig.is_own_check(&call_args);
                if env.is_empty() && graph == GraphId(0) && g_item != self.entry {
                    if let Some(out) = self.memoised_call(&g_item, &call_args, own) {
                        return out;
                    }
                }
                let env_map: HashMap<NodeId, Val> =
                    env.into_iter().map(|(k, v)| (k, Some(v))).collect();
                let span = self.span(frame, n, None);
                self.call_stack.push((item.clone(), span, name, own));
                let result =
                    self.call_graph(&g_item, graph, call_args, Arc::new(env_map), Some(span));
                self.call_stack.pop();
                result
            }
            FuncVal::Partial { f, args: bound } => {
                let mut all: Vec<Val> = bound.into_iter().map(Some).collect();
                all.extend(args);
                self.apply_value(frame, n, AbsVal::Func(f), all)
            }
            FuncVal::MetaOp(meta) => {
                let [Some(f)] = args.as_slice() else {
                    let span = self.span(frame, n, None);
                    self.report(
                        &item,
                        Diagnostic::error(
                            Code::WrongArity,
                            span,
                            format!("`{}` takes one function", meta.name()),
                        ),
                    );
                    return Some(AbsVal::Any);
                };
                match f {
                    AbsVal::Func(f) => Some(self.intern(FuncVal::Meta { meta, f: *f })),
                    AbsVal::Any => Some(AbsVal::Any),
                    other => {
                        let span = self.span(frame, n, Some(1));
                        self.report(
                            &item,
                            Diagnostic::error(
                                Code::BadGradient,
                                span,
                                format!("`{}` differentiates a function, not {other}", meta.name()),
                            ),
                        );
                        Some(AbsVal::Any)
                    }
                }
            }
            FuncVal::Meta {
                meta: MetaFn::Vmap { in_axes, out_axes },
                f,
            } => self.apply_vmap(frame, n, f, &in_axes, &out_axes, args),
            FuncVal::Meta { meta, f } => {
                let k = match meta.primal_arity(args.len()) {
                    Some(k) if k > 0 || !matches!(meta, MetaFn::Hvp) => k,
                    _ => {
                        let span = self.span(frame, n, None);
                        let what = match meta {
                            MetaFn::Jvp => "`jvp(f)` takes `f`'s arguments, then one tangent for each",
                            _ => "`hvp(f)` takes `f`'s arguments, then the vector (like the first argument)",
                        };
                        self.report(&item, Diagnostic::error(Code::WrongArity, span, what));
                        return Some(AbsVal::Any);
                    }
                };
                let out = self.apply_value(frame, n, AbsVal::Func(f), args[..k].to_vec())?;
                if meta == MetaFn::Checkpoint {
                    return Some(out);
                }
                if args.iter().any(Option::is_none) {
                    return None;
                }
                let args: Vec<AbsVal> = args.into_iter().map(Option::unwrap).collect();
                let span = self.span(frame, n, None);
                if let Err(why) = check_differentiable(&out) {
                    self.report(
                        &item,
                        Diagnostic::error(
                            Code::BadGradient,
                            span,
                            format!("cannot differentiate: the output {why}"),
                        ),
                    );
                    return Some(AbsVal::Any);
                }
                let grads = match &meta {
                    MetaFn::Grad { wrt } | MetaFn::ValueAndGrad { wrt } => match self
                        .wrt_values(wrt.as_ref(), &args)
                    {
                        Ok(g) => {
                            // An integer or boolean parameter has no gradient: its
                            // zeros are almost always a mistake (labels for inputs).
                            let positions: Vec<usize> = match wrt {
                                None => vec![0],
                                Some(items) => items
                                    .iter()
                                    .filter_map(|w| match w {
                                        WrtItem::Param(i) => Some(*i),
                                        WrtItem::Weight(_) => None,
                                    })
                                    .collect(),
                            };
                            for i in positions {
                                let Some(d) = args.get(i).and_then(AbsVal::dtype) else {
                                    continue;
                                };
                                if d.is_int() || d == DType::Bool {
                                    self.report(
                                        &item,
                                        Diagnostic::error(
                                            Code::IntegerGradient,
                                            span,
                                            format!("the gradient with respect to parameter {i} is always zero: it is {}, and an integer or boolean has no gradient", args[i]),
                                        )
                                        .with_help("differentiate with respect to a float parameter or weight (`wrt=`)"),
                                    );
                                }
                            }
                            g
                        }
                        Err(message) => {
                            self.report(&item, Diagnostic::error(Code::BadGradient, span, message));
                            return Some(AbsVal::Any);
                        }
                    },
                    MetaFn::Vjp => {
                        let back = self.intern(FuncVal::Backprop {
                            f,
                            args: args.clone(),
                        });
                        return Some(AbsVal::Tuple(vec![out, back]));
                    }
                    MetaFn::Jvp => {
                        // One tangent per argument, of the argument's type.
                        for (i, (x, v)) in args[..k].iter().zip(&args[k..]).enumerate() {
                            if let Err(why) = tangent_fits(x, v) {
                                let span = self.span(frame, n, Some(k + i + 1));
                                self.report(
                                    &item,
                                    Diagnostic::error(
                                        Code::BadGradient,
                                        span,
                                        format!("the tangent of argument {i} must be like it ({x}), but this is {v}: {why}"),
                                    ),
                                );
                            }
                        }
                        let tangent = grad_like(&out);
                        return Some(AbsVal::Tuple(vec![out, tangent]));
                    }
                    MetaFn::Jacfwd { wrt } | MetaFn::Jacrev { wrt } | MetaFn::Hessian { wrt } => {
                        return Some(match self.jacobian_type(&meta, wrt.as_ref(), &out, &args) {
                            Ok(t) => t,
                            Err(message) => {
                                self.report(
                                    &item,
                                    Diagnostic::error(Code::BadGradient, span, message),
                                );
                                AbsVal::Any
                            }
                        });
                    }
                    MetaFn::Vmap { .. } | MetaFn::Checkpoint => return Some(AbsVal::Any),
                    MetaFn::Hvp => {
                        if let Err(why) = tangent_fits(&args[0], &args[k]) {
                            let span = self.span(frame, n, Some(k + 1));
                            self.report(
                                &item,
                                Diagnostic::error(
                                    Code::BadGradient,
                                    span,
                                    format!("the vector of `hvp` must be like the first argument ({}), but this is {}: {why}", args[0], args[k]),
                                ),
                            );
                        }
                        return Some(grad_like(&args[0]));
                    }
                };
                Some(match meta {
                    MetaFn::ValueAndGrad { .. } => AbsVal::Tuple(vec![out, grads]),
                    _ => grads,
                })
            }
            FuncVal::Backprop { f, args: fargs } => {
                if args.len() != 1 {
                    let span = self.span(frame, n, None);
                    self.report(
                        &item,
                        Diagnostic::error(
                            Code::WrongArity,
                            span,
                            "a backpropagator takes one argument: the output's sensitivity",
                        ),
                    );
                    return Some(AbsVal::Any);
                }
                let _ = f;
                Some(AbsVal::Tuple(fargs.iter().map(grad_like).collect()))
            }
            FuncVal::Union(fs) => {
                // The call of a Switch between graphs: each branch may run.
                let mut result: Val = None;
                let mut seen: Vec<AbsVal> = Vec::new();
                for f in fs {
                    let Some(r) = self.apply_value(frame, n, AbsVal::Func(f), args.clone()) else {
                        continue;
                    };
                    seen.push(r.clone());
                    result = match result {
                        None => Some(r),
                        Some(acc) => match self.join_values(&acc, &r) {
                            Some(j) => Some(j),
                            None => {
                                self.branch_mismatch(frame, n, &seen);
                                return Some(AbsVal::Any);
                            }
                        },
                    };
                }
                result
            }
        }
    }

    /// E0143 for a call of a graph with `given` arguments: which parameters
    /// are missing, or which arguments are extra (with a fix removing them).
    fn arity_error(
        &self,
        frame: &Frame,
        n: NodeId,
        span: TextRange,
        sig: &Signature,
        given: usize,
    ) -> Diagnostic {
        let params = sig.params.len();
        let name = &sig.name;
        let head = format!(
            "`{name}` takes {params} argument{} but is given {given}",
            if params == 1 { "" } else { "s" },
        );
        if given < params {
            let missing: Vec<String> = sig.params[given..]
                .iter()
                .enumerate()
                .map(|(i, (p, _))| match p {
                    Some(p) => format!("`{p}`"),
                    None => format!("parameter {}", given + i),
                })
                .collect();
            let (list, verb) = match missing.as_slice() {
                [one] => (one.clone(), "is"),
                [rest @ .., last] => (format!("{} and {last}", rest.join(", ")), "are"),
                [] => unreachable!("fewer arguments than parameters"),
            };
            return Diagnostic::error(
                Code::WrongArity,
                span,
                format!("{head}: {list} {verb} missing"),
            )
            .with_help(format!(
                "pass {list} after the {given} argument{} given",
                if given == 1 { "" } else { "s" }
            ));
        }
        let extra = given - params;
        let mut d = Diagnostic::error(
            Code::WrongArity,
            span,
            format!(
                "{head}: {}",
                if extra == 1 {
                    "the last argument is extra".to_string()
                } else {
                    format!("the last {extra} arguments are extra")
                }
            ),
        );
        let arg = |i: usize| self.span(frame, n, Some(i + 1));
        for i in params..given {
            d = d.with_related(arg(i), "extra argument");
        }
        // From the end of the last argument kept (or the first extra one) to
        // the end of the last: `f(a, b, c)` -> `f(a)`.
        let (first, last) = (arg(params), arg(given - 1));
        let from = if params == 0 {
            first.start()
        } else {
            arg(params - 1).end()
        };
        if first != span && last != span && from <= last.end() {
            d = d.with_fix(
                if extra == 1 {
                    "remove the extra argument".to_string()
                } else {
                    format!("remove the {extra} extra arguments")
                },
                TextRange::new(from, last.end()),
                "",
            );
        }
        d
    }

    /// The type of `vmap(f, in_axes, out_axes)(args...)`: `f` applied to
    /// one example of each argument, its output stacked along `out_axes`.
    fn apply_vmap(
        &mut self,
        frame: &mut Frame,
        n: NodeId,
        f: u32,
        in_axes: &ir::BatchAxes,
        out_axes: &ir::BatchAxes,
        args: Vec<Val>,
    ) -> Val {
        let item = frame.item.clone();
        if let ir::BatchAxes::Each(axes) = in_axes {
            if axes.len() != args.len() {
                let span = self.span(frame, n, None);
                self.report(
                    &item,
                    Diagnostic::error(
                        Code::WrongArity,
                        span,
                        format!(
                            "`in_axes` gives {} axes, but the mapped function is called with {} arguments",
                            axes.len(),
                            args.len()
                        ),
                    ),
                );
                return Some(AbsVal::Any);
            }
        }
        let mut size = ir::Dim::Unknown;
        let mut examples = Vec::new();
        for (i, a) in args.into_iter().enumerate() {
            let a = a?;
            let Some(axis) = in_axes.get(i) else {
                examples.push(Some(a));
                continue;
            };
            match ir::batching::unbatch(&a, axis) {
                Ok((x, d)) => {
                    if let (ir::Dim::Known(s), ir::Dim::Known(e)) = (&size, &d) {
                        if s != e {
                            let span = self.span(frame, n, Some(i + 1));
                            self.report(
                                &item,
                                Diagnostic::error(
                                    Code::ShapeMismatch,
                                    span,
                                    format!("`vmap` maps over batches of {s} examples, but argument {i} has {e} along axis {axis}"),
                                ),
                            );
                            return Some(AbsVal::Any);
                        }
                    }
                    if matches!(size, ir::Dim::Unknown) {
                        size = d;
                    }
                    examples.push(Some(x));
                }
                Err(why) => {
                    let span = self.span(frame, n, Some(i + 1));
                    self.report(
                        &item,
                        Diagnostic::error(
                            Code::ShapeMismatch,
                            span,
                            format!("`vmap` cannot map argument {i}: {why}"),
                        ),
                    );
                    return Some(AbsVal::Any);
                }
            }
        }
        if (0..examples.len()).all(|i| in_axes.get(i).is_none()) {
            let span = self.span(frame, n, None);
            self.report(
                &item,
                Diagnostic::error(
                    Code::BadGradient,
                    span,
                    "`vmap` with `in_axes=none` maps over nothing: give at least one argument an axis",
                ),
            );
            return Some(AbsVal::Any);
        }
        let out = self.apply_value(frame, n, AbsVal::Func(f), examples)?;
        let batched = match &out {
            AbsVal::Tuple(items) if matches!(out_axes, ir::BatchAxes::Each(_)) => items
                .iter()
                .enumerate()
                .map(|(i, x)| ir::batching::batch(x, out_axes.get(i), &size))
                .collect::<Result<Vec<_>, _>>()
                .map(AbsVal::Tuple),
            _ => ir::batching::batch(&out, out_axes.get(0), &size),
        };
        match batched {
            Ok(v) => Some(v),
            Err(why) => {
                let span = self.span(frame, n, None);
                self.report(
                    &item,
                    Diagnostic::error(Code::ShapeMismatch, span, format!("`vmap`: {why}")),
                );
                Some(AbsVal::Any)
            }
        }
    }

    /// The type of `jacfwd(f)`/`jacrev(f)`/`hessian(f)` applied to `args`
    /// (whose call of `f` gives `out`): JAX's `out.shape + x.shape`, a tuple
    /// per `wrt` item when `wrt` is given.
    fn jacobian_type(
        &mut self,
        meta: &MetaFn,
        wrt: Option<&Vec<WrtItem>>,
        out: &AbsVal,
        args: &[AbsVal],
    ) -> Result<AbsVal, String> {
        let xs: Vec<&AbsVal> = match wrt {
            None => vec![args.first().ok_or_else(|| {
                format!(
                    "`{}` needs a function with at least one parameter",
                    meta.name()
                )
            })?],
            Some(items) => items
                .iter()
                .map(|w| match w {
                    WrtItem::Param(i) => args.get(*i).ok_or_else(|| {
                        format!(
                            "`wrt` names parameter {i}, but the function takes {} parameters",
                            args.len()
                        )
                    }),
                    WrtItem::Weight(w) => Err(format!(
                        "`{}` takes `wrt=` parameters by position, not the weight `{w}`",
                        meta.name()
                    )),
                })
                .collect::<Result<_, _>>()?,
        };
        for x in &xs {
            if !x.dtype().is_some_and(|d| d.is_float()) {
                return Err(format!(
                    "`{}` differentiates with respect to a float tensor or scalar, not {x}",
                    meta.name()
                ));
            }
        }
        use ir::batching::jacobian_tree;
        let tuple = wrt.is_some();
        Ok(match meta {
            // jacfwd(jacrev(f, wrt), wrt)
            MetaFn::Hessian { .. } => jacobian_tree(&jacobian_tree(out, &xs, tuple), &xs, tuple),
            _ => jacobian_tree(out, &xs, tuple),
        })
    }

    fn wrt_values(
        &mut self,
        wrt: Option<&Vec<WrtItem>>,
        args: &[AbsVal],
    ) -> Result<AbsVal, String> {
        let Some(items) = wrt else {
            return match args.first() {
                Some(a) => Ok(grad_like(a)),
                None => Err(
                    "`grad` needs a function with at least one parameter (or `wrt=` weights)"
                        .into(),
                ),
            };
        };
        let mut out = Vec::new();
        for item in items {
            match item {
                WrtItem::Param(i) => match args.get(*i) {
                    Some(a) => out.push(grad_like(a)),
                    None => {
                        return Err(format!(
                            "`wrt` names parameter {i}, but the function takes {} parameters",
                            args.len()
                        ));
                    }
                },
                WrtItem::Weight(w) => match self.source.weight(w) {
                    Some(t) => out.push(AbsVal::from_ty(&t)),
                    None => return Err(format!("`{w}` is not a weight")),
                },
            }
        }
        Ok(AbsVal::Tuple(out))
    }
}
