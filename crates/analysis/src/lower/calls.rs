//! Lowering calls (of graphs, primitives with their attributes, and
//! metafunctions with `wrt`), tensor literals and types.

use super::*;

impl Lowerer<'_> {
    pub(super) fn call(&mut self, call: &ast::CallExpr) -> NodeId {
        let range = call.range();
        let graph = self.current_graph();
        let Some(callee) = call.callee() else {
            return self.error_node(range);
        };
        let args: Vec<ast::Arg> = call.args().collect();
        // A name that is a primitive or metafunction binds its arguments statically.
        if let ast::Expr::NameRef(name) = &callee {
            let text = name.text();
            let shadowed = self.scopes.iter().any(|s| s.bound.contains_key(&text));
            if !shadowed && !self.index.is_graph(&text) && !self.index.is_weight(&text) {
                if let Some(op) = ops::lookup(&text) {
                    self.map
                        .refs
                        .push((callee.range(), Def::Prim(text.clone())));
                    return self.prim_call(op, call, &args);
                }
                if let Some(m) = METAFUNCTIONS.iter().find(|m| **m == text) {
                    self.map.refs.push((callee.range(), Def::Meta(m)));
                    return self.meta_call(m, call, &args);
                }
                if text.starts_with(|c: char| c.is_ascii_uppercase())
                    && self.resolve_quiet(&text).is_none()
                {
                    let d = unknown_primitive(&text, callee.range());
                    self.diagnostics.push(d);
                    for arg in &args {
                        if let Some(v) = arg.value() {
                            self.expr(&v);
                        }
                    }
                    return self.error_node(range);
                }
            }
        }
        let callee_node = self.expr(&callee);
        let mut inputs = vec![callee_node];
        let mut spans = vec![callee.range()];
        for arg in &args {
            match arg {
                ast::Arg::Keyword(k) => {
                    self.error(
                        Code::KeywordNotAllowed,
                        k.range(),
                        "keyword arguments are only for primitives and metafunctions",
                    )
                    .notes
                    .push("pass the argument by position".into());
                    // Still pass it (by position), so no arity error follows.
                    if let Some(v) = k.value() {
                        inputs.push(self.expr(&v));
                        spans.push(v.range());
                    }
                }
                _ => {
                    if let Some(v) = arg.value() {
                        inputs.push(self.expr(&v));
                        spans.push(v.range());
                    }
                }
            }
        }
        let node = self.body.add_apply(graph, inputs, Some(range));
        self.map.input_spans.insert(node, spans);
        self.order_effect(node);
        node
    }

    /// Resolution without reporting (to decide between "unknown primitive" and "undefined").
    pub(super) fn resolve_quiet(&self, name: &str) -> Option<()> {
        self.scopes
            .iter()
            .any(|s| s.bound.contains_key(name))
            .then_some(())
    }

    pub(super) fn prim_call(
        &mut self,
        op: &'static ops::OpDef,
        call: &ast::CallExpr,
        args: &[ast::Arg],
    ) -> NodeId {
        let range = call.range();
        let graph = self.current_graph();
        let mut positional = Vec::new();
        let mut keywords = Vec::new();
        for arg in args {
            match arg {
                ast::Arg::Keyword(k) => {
                    if let (Some(name), Some(value)) = (k.name(), k.value()) {
                        keywords.push((name.text(), (value, name.range())));
                    }
                }
                other => {
                    if let Some(v) = other.value() {
                        let r = v.range();
                        positional.push((v, r));
                    }
                }
            }
        }
        let bound = match ops::bind_call(op, positional, keywords) {
            Ok(b) => b,
            Err(e) => {
                let (code, r) = match &e {
                    ops::BindError::TooManyArguments { extra, .. } => (Code::WrongArity, extra.1),
                    ops::BindError::UnknownKeyword { arg, .. } => (Code::UnknownAttribute, arg.1),
                    ops::BindError::Duplicate { arg, .. } => (Code::DuplicateName, arg.1),
                    ops::BindError::MissingInput { .. } | ops::BindError::MissingAttr { .. } => (
                        Code::WrongArity,
                        call.arg_list().map_or(range, |a| a.range()),
                    ),
                };
                let mut d = Diagnostic::error(code, r, e.message(op));
                if let ops::BindError::UnknownKeyword { suggestions, .. } = &e {
                    if let Some(s) = suggestions.first() {
                        d = d.with_fix(format!("change to `{s}`"), r, *s);
                    }
                }
                self.diagnostics.push(d);
                for arg in args {
                    if let Some(v) = arg.value() {
                        self.expr(&v);
                    }
                }
                return self.error_node(range);
            }
        };
        let mut prim = PrimRef::new(op.name);
        let mut attr_spans = Vec::new();
        let mut attrs_ok = true;
        for (name, (value, name_range)) in &bound.attrs {
            let r = value.range();
            let resolve_dtype = |n: &str| n.parse::<DType>().ok();
            let constant = match const_value(value, &resolve_dtype) {
                Some(v) => Some(v),
                // In a composite's instance: its attributes, and constant
                // expressions of them.
                None if self.constants.is_some() => self.static_value(value),
                None => None,
            };
            match constant {
                Some(v) => match ops::check_attr(op, name, &v) {
                    Ok(v) => prim.attrs.push((name.to_string(), v)),
                    Err(message) => {
                        self.error(Code::BadAttributeValue, r, message);
                        attrs_ok = false;
                    }
                },
                None => {
                    self.expr(value);
                    attrs_ok = false;
                    let whole = if r == *name_range {
                        r
                    } else {
                        name_range.cover(r)
                    };
                    self.error(
                        Code::NotConstant,
                        whole,
                        format!("attribute `{name}` of `{}` must be a constant", op.name),
                    );
                }
            }
            attr_spans.push((
                name.to_string(),
                if r == *name_range {
                    r
                } else {
                    name_range.cover(r)
                },
            ));
        }
        let mut inputs = Vec::new();
        let mut spans = vec![call.callee().map_or(range, |c| c.range())];
        // TupleGetItem's index must be a constant.
        if op.name == "TupleGetItem" {
            if let Some((index, r)) = bound.inputs.get(1) {
                if !matches!(const_value(index, &|_| None), Some(AttrValue::Int(_))) {
                    self.error(
                        Code::TupleIndex,
                        *r,
                        "a tuple index must be a constant integer",
                    );
                }
            }
        }
        // The inputs a primitive writes (or `Load` reads) are weights themselves.
        let refs: &[usize] = match ops::effect_of(op.name) {
            Some(effect) => effect.writes,
            None if op.name == "Load" => &[0],
            None => &[],
        };
        for (i, (value, r)) in bound.inputs.iter().enumerate() {
            if refs.contains(&i) {
                inputs.push(self.weight_ref(op, i, value, *r));
            } else {
                inputs.push(self.expr(value));
            }
            spans.push(*r);
        }
        if !attrs_ok {
            // Reported already; the call's value is unknown.
            return self.error_node(range);
        }
        if ops::is_ordered(op.name) {
            // MindIR's state token is the last input of an ordered call.
            let u = match self.flush_loads() {
                Some(u) => u,
                None => self.body.add_const(Value::Monad, None),
            };
            inputs.push(u);
            spans.push(range);
        }
        let node = self.body.add_prim_call(graph, prim, &inputs, Some(range));
        if op.name == "Load" {
            if let Some(chain) = self.graph_scope_mut().effects.as_mut() {
                chain.pending_loads.push(node);
            }
        } else if ops::effect_of(op.name).is_some() {
            self.order_effect(node);
        }
        self.map.input_spans.insert(node, spans);
        if !attr_spans.is_empty() {
            self.map.attr_spans.insert(node, attr_spans);
        }
        node
    }

    /// Input `i` of `op`, which must name a weight (the primitive writes it, or
    /// `Load` reads it): the weight node itself, not a read of its value.
    pub(super) fn weight_ref(
        &mut self,
        op: &'static ops::OpDef,
        i: usize,
        value: &ast::Expr,
        range: TextRange,
    ) -> NodeId {
        if let ast::Expr::NameRef(name) = value {
            let text = name.text();
            if let Some(Def::Weight(w)) = self.resolve(&text, range) {
                self.map.refs.push((range, Def::Weight(w.clone())));
                return self.body.add_weight(w, Some(range));
            }
        }
        let input = op.inputs().nth(i).map_or("?", |p| p.name);
        let verb = if op.name == "Load" {
            "reads"
        } else {
            "updates"
        };
        self.error(
            Code::NotAWeight,
            range,
            format!(
                "`{}` {verb} its input `{input}` in place: it must name a weight (a `param`)",
                op.name
            ),
        )
        .notes
        .push("weights are the only state; bind a new name to compute a new value".into());
        self.expr(value)
    }

    pub(super) fn meta_call(
        &mut self,
        name: &'static str,
        call: &ast::CallExpr,
        args: &[ast::Arg],
    ) -> NodeId {
        let range = call.range();
        let graph = self.current_graph();
        let mut f = None;
        let mut wrt = None;
        let takes_wrt = matches!(
            name,
            "grad" | "value_and_grad" | "jacfwd" | "jacrev" | "hessian"
        );
        let mut axes = [ir::BatchAxes::All(Some(0)), ir::BatchAxes::All(Some(0))];
        for arg in args {
            match arg {
                ast::Arg::Keyword(k)
                    if k.name().is_some_and(|n| n.text() == "wrt") && takes_wrt =>
                {
                    let Some(v) = k.value() else { continue };
                    wrt = self.wrt(&v);
                }
                ast::Arg::Keyword(k)
                    if name == "vmap"
                        && k.name()
                            .is_some_and(|n| n.text() == "in_axes" || n.text() == "out_axes") =>
                {
                    let Some(v) = k.value() else { continue };
                    let i = usize::from(k.name().is_some_and(|n| n.text() == "out_axes"));
                    if let Some(a) = self.batch_axes(&v) {
                        axes[i] = a;
                    }
                }
                ast::Arg::Keyword(k) => {
                    let r = k.range();
                    let allowed = if takes_wrt {
                        "the only option is `wrt`".to_string()
                    } else if name == "vmap" {
                        "the options are `in_axes` and `out_axes`".to_string()
                    } else {
                        format!("`{name}` takes only the function")
                    };
                    self.error(
                        Code::UnknownAttribute,
                        r,
                        format!(
                            "`{name}` has no option `{}`; {allowed}",
                            k.name().map(|n| n.text()).unwrap_or_default()
                        ),
                    );
                }
                _ if f.is_none() => f = arg.value().map(|v| (self.expr(&v), v.range())),
                _ => {
                    let r = arg.syntax().text_range();
                    self.error(
                        Code::WrongArity,
                        r,
                        if name == "vmap" {
                            "`vmap` takes one function (and `in_axes=`, `out_axes=`)".to_string()
                        } else {
                            format!("`{name}` takes one function (and `wrt=`)")
                        },
                    );
                }
            }
        }
        let Some((f, f_range)) = f else {
            self.error(
                Code::WrongArity,
                range,
                format!("`{name}` needs the function to differentiate"),
            );
            return self.error_node(range);
        };
        let mut m = meta(name, wrt);
        if let MetaFn::Vmap { in_axes, out_axes } = &mut m {
            let [i, o] = axes;
            *in_axes = i;
            *out_axes = o;
        }
        let callee = self
            .body
            .add_const(Value::Meta(m), call.callee().map(|c| c.range()));
        let node = self.body.add_apply(graph, vec![callee, f], Some(range));
        self.map.input_spans.insert(
            node,
            vec![call.callee().map_or(range, |c| c.range()), f_range],
        );
        node
    }

    /// `in_axes=0`, `in_axes=none`, `in_axes=(1, none)`: an int or `none`
    /// for every argument, or a tuple of them, one per argument.
    pub(super) fn batch_axes(&mut self, value: &ast::Expr) -> Option<ir::BatchAxes> {
        let one = |v: &AttrValue| match v {
            AttrValue::Int(i) => Some(Some(*i)),
            AttrValue::None => Some(None),
            _ => None,
        };
        let parsed = const_value(value, &|_| None).and_then(|v| match &v {
            AttrValue::Tuple(items) => items
                .iter()
                .map(one)
                .collect::<Option<Vec<_>>>()
                .map(ir::BatchAxes::Each),
            other => one(other).map(ir::BatchAxes::All),
        });
        if parsed.is_none() {
            self.error(
                Code::BadAttributeValue,
                value.syntax().text_range(),
                "`in_axes` and `out_axes` are an int, `none`, or a tuple of them (one per argument or output)",
            );
        }
        parsed
    }

    /// `wrt=0`, `wrt=(0, 2)`, `wrt=(fc1.weight, 1)`.
    pub(super) fn wrt(&mut self, value: &ast::Expr) -> Option<Vec<WrtItem>> {
        let items: Vec<ast::Expr> = match value {
            ast::Expr::Tuple(t) => t.fields().collect(),
            other => vec![other.clone()],
        };
        let mut out = Vec::new();
        for item in items {
            match &item {
                ast::Expr::Literal(l) => match l.kind() {
                    Some(ast::LiteralKind::Int(i)) if i >= 0 => {
                        out.push(WrtItem::Param(i as usize))
                    }
                    _ => {
                        self.error(
                            Code::BadGradient,
                            item.range(),
                            "`wrt` takes parameter positions (0, 1, ...) and weight names",
                        );
                    }
                },
                ast::Expr::NameRef(n) if self.index.is_weight(&n.text()) => {
                    self.map.refs.push((item.range(), Def::Weight(n.text())));
                    out.push(WrtItem::Weight(n.text()));
                }
                _ => {
                    self.error(
                        Code::BadGradient,
                        item.range(),
                        "`wrt` takes parameter positions (0, 1, ...) and weight names",
                    );
                }
            }
        }
        Some(out)
    }

    pub(super) fn tensor_literal(&mut self, t: &ast::TensorExpr) -> Option<Tensor> {
        #[derive(PartialEq, Clone, Copy)]
        enum Kind {
            Int,
            Float,
            Bool,
        }
        fn walk(
            e: &ast::Expr,
            depth: usize,
            shape: &mut Vec<Option<usize>>,
            out: &mut Vec<(f64, Kind)>,
        ) -> Result<(), TextRange> {
            match e {
                ast::Expr::Tensor(t) => {
                    let elems: Vec<ast::Expr> = t.elements().collect();
                    if shape.len() <= depth {
                        shape.push(Some(elems.len()));
                    } else if shape[depth] != Some(elems.len()) {
                        return Err(t.range());
                    }
                    for el in &elems {
                        walk(el, depth + 1, shape, out)?;
                    }
                    Ok(())
                }
                other => {
                    if shape.len() > depth {
                        return Err(other.range());
                    }
                    match const_value(other, &|_| None) {
                        Some(AttrValue::Int(i)) => out.push((i as f64, Kind::Int)),
                        Some(AttrValue::Float(x)) => out.push((x.0, Kind::Float)),
                        Some(AttrValue::Bool(b)) => out.push((b as u8 as f64, Kind::Bool)),
                        _ => return Err(other.range()),
                    }
                    Ok(())
                }
            }
        }
        let mut shape = Vec::new();
        let mut values = Vec::new();
        let expr = ast::Expr::Tensor(t.clone());
        if let Err(r) = walk(&expr, 0, &mut shape, &mut values) {
            self.error(Code::BadTensorLiteral, r, "tensor literal elements must be constant numbers or booleans, in rows of equal length");
            return None;
        }
        let shape: Vec<usize> = shape.into_iter().map(|d| d.unwrap_or(0)).collect();
        let kinds: Vec<Kind> = values.iter().map(|(_, k)| *k).collect();
        let kind = if kinds.contains(&Kind::Float) {
            if kinds.contains(&Kind::Bool) {
                self.error(
                    Code::BadTensorLiteral,
                    t.range(),
                    "a tensor literal cannot mix booleans and numbers",
                );
                return None;
            }
            Kind::Float
        } else if kinds.contains(&Kind::Bool) {
            if kinds.contains(&Kind::Int) {
                self.error(
                    Code::BadTensorLiteral,
                    t.range(),
                    "a tensor literal cannot mix booleans and numbers",
                );
                return None;
            }
            Kind::Bool
        } else {
            Kind::Int
        };
        let data: Vec<f64> = values.iter().map(|(v, _)| *v).collect();
        let t = match kind {
            Kind::Float => Tensor::from_f32(shape, data.iter().map(|&x| x as f32).collect()),
            Kind::Int => {
                Tensor::from_i64(DType::I64, shape, data.iter().map(|&x| x as i64).collect())
            }
            Kind::Bool => Tensor::from_bool(shape, data.iter().map(|&x| x != 0.0).collect()),
        };
        t.ok()
    }

    /// Converts a type written in the source.
    pub(super) fn ty(&mut self, t: &ast::Type) -> Ty {
        match t {
            ast::Type::Named(n) => {
                let Some(token) = n.name_token() else {
                    return Ty::Unknown;
                };
                let name = token.text().to_string();
                let scalar = match name.as_str() {
                    "str" => Some(Ty::Str),
                    "none" => Some(Ty::None),
                    _ => None,
                };
                if let Some(s) = scalar {
                    if n.shape().is_some() {
                        self.error(
                            Code::UnknownType,
                            t.range(),
                            format!("`{name}` has no shape"),
                        );
                    }
                    return s;
                }
                let Ok(dtype) = name.parse::<DType>() else {
                    let names: Vec<&str> = DType::ALL
                        .iter()
                        .map(|d| d.name())
                        .chain(["str", "none"])
                        .collect();
                    let mut message = format!("unknown type `{name}`");
                    if let Some(s) = ops::similar_names(&name, names).first() {
                        message.push_str(&format!("; did you mean `{s}`?"));
                    }
                    self.error(Code::UnknownType, token.text_range(), message);
                    return Ty::Unknown;
                };
                let Some(shape) = n.shape() else {
                    return Ty::Scalar(dtype);
                };
                let dims: Vec<ast::Dim> = shape.dims().collect();
                if dims.len() == 1
                    && dims[0]
                        .token()
                        .is_some_and(|t| t.kind() == syntax::SyntaxKind::STAR)
                {
                    return Ty::Tensor(dtype, Shape::Unranked);
                }
                let mut out = Vec::new();
                for d in dims {
                    let Some(tok) = d.token() else { continue };
                    out.push(match tok.kind() {
                        syntax::SyntaxKind::INT => match tok.text().parse::<i64>() {
                            Ok(n) => Dim::Known(n),
                            Err(_) => {
                                self.error(
                                    Code::SizeOverflow,
                                    tok.text_range(),
                                    format!(
                                        "the dimension {} is too large: sizes are 64-bit integers (at most {})",
                                        tok.text(),
                                        i64::MAX
                                    ),
                                );
                                Dim::Unknown
                            }
                        },
                        syntax::SyntaxKind::QUESTION => Dim::Unknown,
                        syntax::SyntaxKind::STAR => {
                            self.error(
                                Code::UnknownType,
                                tok.text_range(),
                                "`*` (unknown rank) must be the only dimension: `f32[*]`",
                            );
                            Dim::Unknown
                        }
                        _ => Dim::Sym(tok.text().to_string()),
                    });
                }
                let shape = Shape::Ranked(out);
                if shape.overflows(dtype) {
                    self.error(
                        Code::SizeOverflow,
                        t.range(),
                        format!("a {dtype}{shape} tensor cannot exist: its element count or byte size overflows a 64-bit integer"),
                    );
                }
                Ty::Tensor(dtype, shape)
            }
            ast::Type::Tuple(t) => Ty::Tuple(t.fields().map(|f| self.ty(&f)).collect()),
            ast::Type::Fn(f) => {
                let params = f.params().map(|p| self.ty(&p)).collect();
                let ret = f.ret().map_or(Ty::Unknown, |r| self.ty(&r));
                Ty::Func(Some(Box::new(FnTy { params, ret })))
            }
        }
    }
}
