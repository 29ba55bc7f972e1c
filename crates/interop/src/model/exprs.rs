//! The expressions of a translated graph: operands, primitive calls with
//! MindSpore's arguments mapped onto the registry's, `Switch` calls.

use super::*;

impl Translator<'_> {
    /// How graph `g` refers to `r`.
    pub(super) fn operand(&self, g: usize, r: &Ref) -> Result<Expr, String> {
        self.resolved_operand(g, &self.resolve(r))
    }

    pub(super) fn resolved_operand(&self, _g: usize, r: &Resolved) -> Result<Expr, String> {
        match r {
            Resolved::Node(o, k) | Resolved::Param(o, k) => self
                .var
                .get(&match r {
                    Resolved::Node(..) => VarKey::Node(*o, *k),
                    _ => VarKey::Param(*o, *k),
                })
                .cloned()
                .map(Expr::Name)
                .ok_or_else(|| "uses a value that is not computed".to_string()),
            Resolved::Weight(w) => Ok(Expr::Name(self.weight_names[*w].clone())),
            Resolved::Graph(h) => Ok(Expr::Name(self.graph_names[*h].clone())),
            Resolved::Const(c) => const_text(c)
                .map(Expr::Text)
                .map_err(|e| format!("uses {e}, which the DSL cannot write")),
        }
    }

    /// A call of `Switch(cond, a, b)` whose branches are graphs or partial
    /// applications of graphs: an `if`.
    pub(super) fn switch_call(&self, g: usize, n: usize) -> Option<SwitchCall> {
        let Callee::Value(c) = &self.m.graphs[g].nodes[n].callee else {
            return None;
        };
        let Resolved::Node(h, k) = self.resolve(c) else {
            return None;
        };
        let sw = &self.m.graphs[h].nodes[k];
        let Callee::Prim { name, .. } = &sw.callee else {
            return None;
        };
        if !matches!(name.trim_start_matches("PrimFunc_"), "Switch" | "switch") {
            return None;
        }
        let [cond, a, b] = sw.args.as_slice() else {
            return None;
        };
        let branch = |r: &Ref| -> Option<(usize, Vec<Ref>)> {
            match self.resolve(r) {
                Resolved::Graph(x) => Some((x, Vec::new())),
                Resolved::Node(h2, k2) => {
                    let p = &self.m.graphs[h2].nodes[k2];
                    match &p.callee {
                        Callee::Prim { name, .. }
                            if name.trim_start_matches("PrimFunc_") == "Partial" =>
                        {
                            let (f, bound) = p.args.split_first()?;
                            match self.resolve(f) {
                                Resolved::Graph(x) => Some((x, bound.to_vec())),
                                _ => None,
                            }
                        }
                        _ => None,
                    }
                }
                _ => None,
            }
        };
        Some(SwitchCall {
            cond: cond.clone(),
            then: branch(a)?,
            els: branch(b)?,
        })
    }

    /// The summands of `AddN(MakeTuple(a, b, ...))`.
    pub(super) fn addn_items(&self, g: usize, n: usize) -> Option<Vec<Ref>> {
        let node = &self.m.graphs[g].nodes[n];
        let Callee::Prim { name, .. } = &node.callee else {
            return None;
        };
        if name.trim_start_matches("PrimFunc_") != "AddN" {
            return None;
        }
        self.addn_items_of(g, &node.args)
    }

    pub(super) fn addn_items_of(&self, _g: usize, args: &[Ref]) -> Option<Vec<Ref>> {
        let [one] = args else {
            return Some(args.to_vec());
        };
        let Resolved::Node(h, k) = self.resolve(one) else {
            return None;
        };
        let t = &self.m.graphs[h].nodes[k];
        match &t.callee {
            Callee::Prim { name, .. } if name.trim_start_matches("PrimFunc_") == "MakeTuple" => {
                Some(t.args.clone())
            }
            _ => None,
        }
    }

    /// Whether graph `h` ignores its parameter `i`.
    pub(super) fn unused_param(&self, h: usize, i: usize) -> bool {
        !self.used_params.contains(&(h, i))
    }

    pub(super) fn node_expr(&mut self, g: usize, n: usize) -> Result<Expr, String> {
        let node = &self.m.graphs[g].nodes[n];
        if let Some(sc) = self.switch_call(g, n) {
            let cond = self.operand(g, &sc.cond)?;
            let mut calls = Vec::new();
            for (h, bound) in [&sc.then, &sc.els] {
                let mut args = Vec::new();
                for (i, a) in bound.iter().chain(&node.args).enumerate() {
                    if self.dropped(Some(*h), i) {
                        continue;
                    }
                    args.push(self.operand(g, a)?.text().to_string());
                }
                calls.push(format!("{}({})", self.graph_names[*h], args.join(", ")));
            }
            return Ok(Expr::Text(format!(
                "if {} {{ {} }} else {{ {} }}",
                cond.text(),
                calls[0],
                calls[1]
            )));
        }
        // The callee.
        match &node.callee {
            Callee::Value(c) => {
                let callee = self.resolve(c);
                // The graph called, and where the call's arguments start
                // among its parameters (after a partial application's).
                let (target, offset) = match &callee {
                    Resolved::Graph(h) => (Some(*h), 0),
                    _ => match self.called_partial(c) {
                        Some((h, bound)) => (Some(h), bound.len()),
                        None => (None, 0),
                    },
                };
                let mut args = Vec::new();
                for (i, a) in node.args.iter().enumerate() {
                    let i = i + offset;
                    if self.dropped(target, i) {
                        continue;
                    }
                    let e = match self.operand(g, a) {
                        Ok(e) => e,
                        Err(_) if target.is_some_and(|h| self.unused_param(h, i)) => {
                            Expr::Text("none".into())
                        }
                        Err(e) => return Err(e),
                    };
                    args.push(e.text().to_string());
                }
                let callee_text = self.resolved_operand(g, &callee)?;
                let call = format!("{}({})", callee_text.text(), args.join(", "));
                // A backpropagator of `J`: MindSpore's returns the free
                // variables' environment first, the DSL's `vjp` does not.
                if let Some(n) = self.j_backprop_arity(c) {
                    let items: Vec<String> = (0..n).map(|i| format!("r[{i}]")).collect();
                    return Ok(Expr::Text(format!(
                        "(fn(r) => (none, {}))({call})",
                        items.join(", ")
                    )));
                }
                Ok(Expr::Text(call))
            }
            Callee::Prim { name, attrs } => self.prim_expr(g, name, &node.name, attrs, &node.args),
        }
    }

    /// `Opaque(inputs..., name="Prim")`: a node mirdsl cannot compute, kept
    /// (its type is the binding's annotation; its attributes go beside it).
    fn opaque_expr(
        &mut self,
        g: usize,
        bare: &str,
        attrs: &[(String, Const)],
        args: &[Ref],
    ) -> Result<Expr, String> {
        let mut parts = Vec::new();
        for a in args {
            parts.push(match self.operand(g, a) {
                Ok(e) => e.text().to_string(),
                // A value the DSL cannot write (a Python object): its description.
                Err(why) => format!(
                    "{:?}",
                    why.strip_prefix("uses ")
                        .and_then(|w| w.strip_suffix(", which the DSL cannot write"))
                        .unwrap_or(&why)
                ),
            });
        }
        parts.push(format!("name={bare:?}"));
        self.opaque = Some(
            attrs
                .iter()
                .map(|(k, v)| {
                    format!(
                        "{k}: {}",
                        const_text(v).unwrap_or_else(|_| format!("{v:?}"))
                    )
                })
                .collect::<Vec<_>>()
                .join(", "),
        );
        Ok(Expr::Text(format!("Opaque({})", parts.join(", "))))
    }

    pub(super) fn prim_expr(
        &mut self,
        g: usize,
        name: &str,
        node_name: &str,
        attrs: &[(String, Const)],
        args: &[Ref],
    ) -> Result<Expr, String> {
        let bare = name.strip_prefix("PrimFunc_").unwrap_or(name);
        // The state token is implicit in the DSL.
        let args = self.without_monad(args);
        let operands = |t: &Self| -> Result<Vec<String>, String> {
            args.iter()
                .map(|a| t.operand(g, a).map(|e| e.text().to_string()))
                .collect()
        };
        match bare {
            "MakeTuple" | "make_tuple" => {
                return Ok(Expr::Text(tuple_text(&operands(self)?)));
            }
            "Load" => {
                let w = args.first().ok_or("`Load` without its weight")?;
                return Ok(Expr::Text(format!("Load({})", self.operand(g, w)?.text())));
            }
            "TupleGetItem" | "tuple_getitem" => {
                let [t, i] = args else {
                    return Err("TupleGetItem needs two inputs".into());
                };
                let i = match self.resolve(i) {
                    Resolved::Const(Const::Int(i, _)) => i,
                    _ => return Err("TupleGetItem with a computed index".into()),
                };
                let t = self.operand(g, t)?;
                return Ok(Expr::Text(format!("{}[{i}]", t.text())));
            }
            "Partial" => {
                if let Some((f, bound)) = args.split_first() {
                    if let Resolved::Graph(h) = self.resolve(f) {
                        let mut parts = vec![self.graph_names[h].clone()];
                        for (i, a) in bound.iter().enumerate() {
                            if !self.dropped(Some(h), i) {
                                // A value the DSL cannot write (a primitive passed as
                                // a value, `ApplyMomentum[...]`) bound to a parameter
                                // the graph never uses: `none`, as in a call.
                                let e = match self.operand(g, a) {
                                    Ok(e) => e,
                                    Err(_) if self.unused_param(h, i) => Expr::Text("none".into()),
                                    Err(e) => return Err(e),
                                };
                                parts.push(e.text().to_string());
                            }
                        }
                        return Ok(Expr::Text(if parts.len() == 1 {
                            parts.remove(0)
                        } else {
                            format!("Partial({})", parts.join(", "))
                        }));
                    }
                }
            }
            "AddN" => {
                // AddN((a, b, c)) is ((a + b) + c).
                let Some(items) = self.addn_items_of(g, args) else {
                    return Err("`AddN` of a tuple computed elsewhere".into());
                };
                let items: Vec<String> = items
                    .iter()
                    .map(|a| self.operand(g, a).map(|e| e.text().to_string()))
                    .collect::<Result<_, _>>()?;
                let mut it = items.into_iter();
                let first = it.next().ok_or("AddN of nothing")?;
                return Ok(Expr::Text(
                    it.fold(first, |acc, x| format!("Add({acc}, {x})")),
                ));
            }
            "J" => {
                // MindSpore's `J` is the DSL's `vjp` (its backpropagator's
                // extra environment output is added where it is called).
                let [f] = args else {
                    return Err("`J` takes one function".into());
                };
                if !matches!(self.resolve(f), Resolved::Graph(_)) {
                    return Err("`J` of a computed function value".into());
                }
                return Ok(Expr::Text(format!("vjp({})", self.operand(g, f)?.text())));
            }
            // In a dump (its type known, if only as unknown): a Python name
            // MindSpore resolves later, kept as an opaque node.
            "resolve"
                if self
                    .current
                    .is_some_and(|gn| self.node_types.contains_key(&gn)) =>
            {
                return self.opaque_expr(g, bare, attrs, args);
            }
            "resolve" => {
                return Err(
                    "`resolve` (a Python name MindSpore has not resolved yet): this dump is from \
                     before type inference; import a `type_inference` or later dump"
                        .into(),
                )
            }
            _ => {}
        }
        let mapping = match ops::mindspore::mapping(bare) {
            Some(Ok(m)) => m,
            Some(Err(why)) => {
                return Err(format!(
                    "`{bare}` does not line up with the registry's `{}`: {why}",
                    ops::mindspore::registry_name(bare)
                ))
            }
            None => {
                // Not a MindSpore primitive the registry supports: a registry
                // primitive of this name (an internal one) still imports, with
                // positional inputs and the attributes by name.
                if let Some(def) = ops::lookup(bare) {
                    return self.generic_call(g, def, None, attrs, args);
                }
                if self
                    .current
                    .is_some_and(|gn| self.node_types.contains_key(&gn))
                {
                    return self.opaque_expr(g, bare, attrs, args);
                }
                if ops::mindspore::schema(bare).is_some() {
                    let nodes = self.unsupported_ops.entry(bare.to_string()).or_default();
                    nodes.push(node_name.to_string());
                    return Err(format!(
                        "`{bare}` is a MindSpore {} primitive mirdsl does not support yet",
                        ops::mindspore::SERIES
                    ));
                }
                self.unknown_ops.insert(bare.to_string());
                return Err(format!("unknown primitive `{bare}`"));
            }
        };
        let def = mapping.def;
        let Some(spec) = &mapping.args else {
            return self.generic_call(g, def, Some(mapping), attrs, args);
        };
        // An old-style primitive with more node inputs than MindSpore's
        // definition names: attributes given as inputs, in the registry's order.
        let old_style = mapping
            .schema
            .is_some_and(|p| p.kind == ops::mindspore::MsKind::Primitive);
        if old_style && args.len() > spec.len() {
            return self.generic_call(g, def, Some(mapping), attrs, args);
        }
        let mut inputs = Vec::new();
        let mut kwargs = Vec::new();
        for (i, a) in spec.iter().enumerate() {
            let given = args.get(i);
            match a {
                ArgMap::Input => {
                    // MindSpore's PadV3 outside its constant mode takes no
                    // `constant_value`, which that mode ignores.
                    if given.is_none() && mapping.ms == "PadV3" && i == 2 {
                        inputs.push("0".to_string());
                        continue;
                    }
                    let r = given.ok_or_else(|| format!("`{bare}` lacks input {i}"))?;
                    let e = self.operand(g, r)?;
                    inputs.push(self.literal_input(def, e, r));
                }
                ArgMap::Attr(name, conv) => {
                    let Some(r) = given else { continue };
                    let value = match self.resolve(r) {
                        Resolved::Const(c) => c,
                        // In a dump (its type known), an opaque node: MindSpore's
                        // expanded ops take attributes as graph inputs.
                        _ if self
                            .current
                            .is_some_and(|gn| self.node_types.contains_key(&gn)) =>
                        {
                            let mut attrs = attrs.to_vec();
                            attrs.insert(
                                0,
                                (
                                    "opaque_because".into(),
                                    Const::Str(format!("`{name}` is computed at run time")),
                                ),
                            );
                            return self.opaque_expr(g, bare, &attrs, args);
                        }
                        _ => {
                            return Err(format!(
                            "`{bare}`'s `{name}` is computed at run time; the DSL needs a constant"
                        ))
                        }
                    };
                    // MindSpore's `None` where its default is `None` is the
                    // registry's default.
                    let ms_default_none = mapping
                        .schema
                        .and_then(|p| p.node_inputs().nth(i))
                        .is_some_and(|a| a.default == Some(ops::mindspore::MsValue::None));
                    if value == Const::None && ms_default_none && *conv != Conv::NoneIsEmpty {
                        continue;
                    }
                    kwargs.push(format!("{name}={}", attr_text(&value, *conv, def, name)?));
                }
                ArgMap::Fixed(f) => {
                    let Some(r) = given else { continue };
                    if !fixed_matches(&self.resolve(r), f) {
                        let arg = mapping
                            .schema
                            .and_then(|p| p.node_inputs().nth(i))
                            .map_or_else(|| format!("argument {i}"), |a| format!("`{}`", a.name));
                        return Err(format!(
                            "`{bare}`'s {arg} is not {f}, which the registry's `{}` cannot express",
                            def.name
                        ));
                    }
                }
            }
        }
        if args.len() > spec.len() {
            return Err(format!(
                "`{bare}` has {} inputs, MindSpore {}'s has {}",
                args.len(),
                ops::mindspore::SERIES,
                spec.len()
            ));
        }
        // Attributes on the primitive itself (`primitive_attrs`) that the
        // registry knows.
        for (k, v) in attrs {
            if let Some(k) = mapping.attr(k) {
                if !kwargs.iter().any(|a| a.starts_with(&format!("{k}="))) {
                    kwargs.push(format!("{k}={}", attr_text(v, Conv::Plain, def, k)?));
                }
            }
        }
        let mut inputs = keyword_late_inputs(def, inputs);
        inputs.extend(drop_defaults(def, kwargs));
        Ok(Expr::Text(format!("{}({})", def.name, inputs.join(", "))))
    }

    /// A rank-0 tensor constant next to a computed operand of an elementwise
    /// primitive reads better as a plain literal (`x - 1.0`), which it equals
    /// there.
    pub(super) fn literal_input(&self, def: &ops::OpDef, e: Expr, r: &Ref) -> String {
        if def.category == ops::Category::Elementwise && def.input_count() >= 2 {
            if let Resolved::Const(Const::Tensor(t)) = self.resolve(r) {
                if t.rank() == 0 && t.dtype() == DType::F32 {
                    return dtype_float_text(t.to_f64_vec()[0], DType::F32);
                }
            }
        }
        e.text().to_string()
    }

    /// A call whose node inputs are the registry's inputs in order, then (for
    /// old-style primitives that take attributes as inputs) its attributes;
    /// the primitive's own attributes by name.
    pub(super) fn generic_call(
        &mut self,
        g: usize,
        def: &ops::OpDef,
        mapping: Option<&ops::mindspore::Mapping>,
        attrs: &[(String, Const)],
        args: &[Ref],
    ) -> Result<Expr, String> {
        let n_inputs = if def.variadic {
            args.len()
        } else {
            def.input_count()
        };
        if args.len() < n_inputs {
            return Err(format!(
                "`{}` needs {n_inputs} inputs, the file gives {}",
                def.name,
                args.len()
            ));
        }
        let mut parts: Vec<String> = Vec::new();
        for a in &args[..n_inputs] {
            let e = self.operand(g, a)?;
            parts.push(self.literal_input(def, e, a));
        }
        // The registry attribute a MindSpore attribute name is.
        let attr_name = |k: &str| -> Option<&'static str> {
            match mapping {
                Some(m) => m.attr(k),
                None => {
                    let k = ops::mindspore::STORED_ATTR_NAMES
                        .iter()
                        .find(|(ms, _)| *ms == k)
                        .map_or(k, |(_, ours)| ours);
                    def.param(k).filter(|p| !p.is_input()).map(|p| p.name)
                }
            }
        };
        // Extra inputs are attributes: the one of MindSpore's name for that
        // input, else the registry's next.
        let ms_inputs: Vec<&str> = mapping
            .and_then(|m| m.schema)
            .map(|p| p.node_inputs().map(|a| a.name).collect())
            .unwrap_or_default();
        let mut attr_defs = def.attrs().map(|p| p.name);
        for (i, a) in args[n_inputs..].iter().enumerate() {
            let name = ms_inputs
                .get(n_inputs + i)
                .and_then(|n| attr_name(n))
                .or_else(|| attr_defs.next())
                .ok_or_else(|| {
                    format!(
                        "`{}` has {} inputs, more than the registry's",
                        def.name,
                        args.len()
                    )
                })?;
            match self.resolve(a) {
                Resolved::Const(c) => {
                    parts.push(format!("{name}={}", attr_text(&c, Conv::Plain, def, name)?))
                }
                _ => return Err(format!("`{}`'s `{name}` is computed at run time", def.name)),
            }
        }
        for (k, v) in attrs {
            let Some(k) = attr_name(k) else { continue };
            if parts.iter().any(|a| a.starts_with(&format!("{k}="))) {
                continue;
            }
            parts.push(format!("{k}={}", attr_text(v, Conv::Plain, def, k)?));
        }
        let inputs: Vec<String> = parts.drain(..n_inputs).collect();
        let mut all = if def.variadic {
            inputs
        } else {
            keyword_late_inputs(def, inputs)
        };
        all.extend(drop_defaults(def, parts));
        Ok(Expr::Text(format!("{}({})", def.name, all.join(", "))))
    }
}

/// Whether a node input holds the value MindSpore's argument is fixed to.
pub(super) fn fixed_matches(r: &Resolved, f: &ops::mindspore::MsValue) -> bool {
    use ops::mindspore::MsValue as V;
    let Resolved::Const(c) = r else {
        return false;
    };
    match (c, f) {
        (Const::None, V::None) => true,
        (Const::Bool(b), V::Bool(x)) => b == x,
        (Const::Int(v, _), V::Int(x)) => v == x,
        (Const::Int(v, _), V::Bool(x)) => *v == i64::from(*x),
        (Const::Float(v, _), V::Float(x)) => v == x,
        (Const::Float(v, _), V::Int(x)) => *v == *x as f64,
        (Const::Str(s), V::Str(x)) => s.eq_ignore_ascii_case(x),
        (Const::Tuple(items), V::Ints(x)) => {
            items.len() == x.len()
                && items
                    .iter()
                    .zip(x.iter())
                    .all(|(c, x)| matches!(c, Const::Int(v, _) if v == x))
        }
        (Const::Int(v, _), V::DType(name)) => {
            ms_ops::dtype_of_ms_name(name).is_some_and(|d| ms_ops::type_id(d) == *v)
        }
        (Const::Type(d), V::DType(name)) => ms_ops::dtype_of_ms_name(name) == Some(*d),
        _ => false,
    }
}

/// Keyword arguments (`name=value`) minus those that give the registry's
/// default, in the registry's order.
pub(super) fn drop_defaults(def: &ops::OpDef, kwargs: Vec<String>) -> Vec<String> {
    let mut kept: Vec<(usize, String)> = kwargs
        .into_iter()
        .filter_map(|kw| {
            let (name, value) = kw.split_once('=')?;
            let pos = def.params().iter().position(|p| p.name == name)?;
            let default = match def.params()[pos].kind {
                ops::ParamKind::Attr {
                    default: Some(d), ..
                } => Some(d.value().to_string()),
                _ => None,
            };
            let is_default = default.as_deref().is_some_and(|d| {
                d == value || d.eq_ignore_ascii_case(value) || same_ints(d, value)
            });
            (!is_default).then_some((pos, kw))
        })
        .collect();
    kept.sort_by_key(|(p, _)| *p);
    kept.into_iter()
        .map(|(p, k)| match def.params()[p].kind {
            // Only where the registry takes an int for a window, too.
            ops::ParamKind::Attr {
                ty: ops::AttrType::Ints,
                ..
            } => simplify_window(&k),
            _ => k,
        })
        .collect()
}

/// MindSpore's NCHW windows `(1, 1, h, w)` as `(h, w)`, and `(k, k)` as `k`.
pub(super) fn simplify_window(kw: &str) -> String {
    let Some((name, value)) = kw.split_once('=') else {
        return kw.to_string();
    };
    if !matches!(
        name,
        "kernel_size" | "strides" | "stride" | "dilation" | "pad"
    ) {
        return kw.to_string();
    }
    let inner = value.strip_prefix('(').and_then(|v| v.strip_suffix(')'));
    let Some(ints) = inner.and_then(|v| {
        v.split(',')
            .map(str::trim)
            .filter(|x| !x.is_empty())
            .map(|x| x.parse::<i64>().ok())
            .collect::<Option<Vec<i64>>>()
    }) else {
        return kw.to_string();
    };
    let hw = match (name, ints.as_slice()) {
        ("pad", [a, b, c, d]) if a == b && b == c && c == d => vec![*a],
        ("pad", _) => ints.clone(),
        (_, [1, 1, h, w]) => vec![*h, *w],
        _ => ints.clone(),
    };
    match hw.as_slice() {
        [a, b] if a == b => format!("{name}={a}"),
        [a] => format!("{name}={a}"),
        _ => format!(
            "{name}=({})",
            hw.iter()
                .map(|x| x.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// `1` and `(1, 1, 1, 1)`, or `(0,)` and `0`: an int and a tuple of copies of it.
pub(super) fn same_ints(a: &str, b: &str) -> bool {
    let ints = |s: &str| -> Option<Vec<i64>> {
        let s = s.trim();
        let inner = s
            .strip_prefix('(')
            .and_then(|s| s.strip_suffix(')'))
            .unwrap_or(s);
        inner
            .split(',')
            .map(str::trim)
            .filter(|x| !x.is_empty())
            .map(|x| x.parse().ok())
            .collect()
    };
    match (ints(a), ints(b)) {
        (Some(x), Some(y)) if !x.is_empty() && !y.is_empty() => {
            let first = x[0];
            x.iter().chain(&y).all(|&v| v == first)
        }
        _ => false,
    }
}

/// The value every element of a (non-empty) tensor has, if they agree.
pub(super) fn uniform(t: &Tensor) -> Option<f64> {
    // A weight still in its model file is looked at there, not decoded.
    t.uniform_value()
}

pub(super) fn depth(parent: &[Option<usize>], mut g: usize) -> usize {
    let mut d = 0;
    while let Some(p) = parent[g] {
        d += 1;
        g = p;
    }
    d
}

pub(super) fn natural_dtype(t: &Tensor) -> DType {
    match t.buffer() {
        Buffer::F32(_) | Buffer::F64(_) => DType::F32,
        Buffer::I64(_) => DType::I64,
        Buffer::Bool(_) => DType::Bool,
    }
}

/// Weight names keep their dots; other characters become `_`.
pub(super) fn sanitize_weight(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// A type as a DSL annotation; `None` when it has parts the DSL cannot write.
pub fn ty_text(t: &Ty) -> Option<String> {
    pub(super) fn ok(t: &Ty) -> bool {
        match t {
            Ty::Unknown | Ty::Func(_) => false,
            Ty::Tuple(items) => items.iter().all(ok),
            _ => true,
        }
    }
    ok(t).then(|| t.to_string())
}
