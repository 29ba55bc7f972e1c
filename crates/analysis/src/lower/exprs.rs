//! Lowering expressions: operators, names, tuples, `if` (static and
//! dynamic) and its branches.

use super::*;

impl Lowerer<'_> {
    pub(super) fn expr(&mut self, expr: &ast::Expr) -> NodeId {
        let range = expr.range();
        let graph = self.current_graph();
        match expr {
            ast::Expr::Literal(lit) => match lit.kind() {
                Some(ast::LiteralKind::Int(i)) => self.body.add_const(Value::int(i), Some(range)),
                Some(ast::LiteralKind::Float(x)) => {
                    self.body.add_const(Value::float(x), Some(range))
                }
                Some(ast::LiteralKind::Bool(b)) => self.body.add_const(Value::bool(b), Some(range)),
                Some(ast::LiteralKind::Str(s)) => self.body.add_const(Value::Str(s), Some(range)),
                Some(ast::LiteralKind::None) | None => {
                    self.body.add_const(Value::None, Some(range))
                }
                Some(ast::LiteralKind::IntOverflow) => {
                    self.error(
                        Code::BadAttributeValue,
                        range,
                        "integer literal too large for i64",
                    );
                    self.error_node(range)
                }
            },
            ast::Expr::NameRef(name) => {
                let text = name.text();
                match self.resolve(&text, range) {
                    Some(Def::Weight(w)) => {
                        self.map.refs.push((range, Def::Weight(w.clone())));
                        self.weight_read(&w, range)
                    }
                    Some(def) => {
                        self.map.refs.push((range, def.clone()));
                        self.def_node(&def, range)
                    }
                    None => self.error_node(range),
                }
            }
            ast::Expr::Paren(p) => match p.expr() {
                Some(e) => self.expr(&e),
                None => self.error_node(range),
            },
            ast::Expr::Tuple(t) => {
                let items: Vec<(NodeId, TextRange)> =
                    t.fields().map(|f| (self.expr(&f), f.range())).collect();
                let nodes: Vec<NodeId> = items.iter().map(|(n, _)| *n).collect();
                let call =
                    self.body
                        .add_prim_call(graph, PrimRef::new("MakeTuple"), &nodes, Some(range));
                let mut spans = vec![range];
                spans.extend(items.iter().map(|(_, r)| *r));
                self.map.input_spans.insert(call, spans);
                call
            }
            ast::Expr::Tensor(t) => match self.tensor_literal(t) {
                Some(tensor) => self
                    .body
                    .add_const(Value::Tensor(Arc::new(tensor)), Some(range)),
                None => self.error_node(range),
            },
            ast::Expr::Call(call) => self.call(call),
            ast::Expr::Index(ix) => {
                let Some(base) = ix.base() else {
                    return self.error_node(range);
                };
                let base_node = self.expr(&base);
                let index = ix.index();
                let constant = index.as_ref().and_then(|i| const_value(i, &|_| None));
                let Some(AttrValue::Int(i)) = constant else {
                    let r = index.map_or(range, |i| i.range());
                    self.error(
                        Code::TupleIndex,
                        r,
                        "a tuple index must be a constant integer",
                    );
                    return self.error_node(range);
                };
                let index_range = ix.index().map_or(range, |i| i.range());
                let i_node = self.body.add_const(Value::int(i), Some(index_range));
                let node = self.body.add_prim_call(
                    graph,
                    PrimRef::new("TupleGetItem"),
                    &[base_node, i_node],
                    Some(range),
                );
                self.map
                    .input_spans
                    .insert(node, vec![range, base.range(), index_range]);
                node
            }
            ast::Expr::Bin(b) => {
                let (Some(lhs), Some(rhs), Some(op)) = (b.lhs(), b.rhs(), b.op_kind()) else {
                    return self.error_node(range);
                };
                let prim = binary_prim(op);
                let l = self.expr(&lhs);
                let r = self.expr(&rhs);
                let node = self
                    .body
                    .add_prim_call(graph, PrimRef::new(prim), &[l, r], Some(range));
                let op_range = b.op_token().map_or(range, |t| t.text_range());
                self.map
                    .input_spans
                    .insert(node, vec![op_range, lhs.range(), rhs.range()]);
                node
            }
            ast::Expr::Prefix(p) => {
                let Some(operand) = p.operand() else {
                    return self.error_node(range);
                };
                let negating = p.op_kind() == Some(syntax::SyntaxKind::MINUS);
                // `-3` and `-1.5` are literals, not calls of Neg.
                if negating {
                    if let ast::Expr::Literal(lit) = &operand {
                        match lit.kind() {
                            Some(ast::LiteralKind::Int(i)) => {
                                return self.body.add_const(Value::int(-i), Some(range))
                            }
                            Some(ast::LiteralKind::Float(x)) => {
                                return self.body.add_const(Value::float(-x), Some(range))
                            }
                            _ => {}
                        }
                    }
                }
                let prim = if negating { "Neg" } else { "LogicalNot" };
                let x = self.expr(&operand);
                let node = self
                    .body
                    .add_prim_call(graph, PrimRef::new(prim), &[x], Some(range));
                self.map
                    .input_spans
                    .insert(node, vec![range, operand.range()]);
                node
            }
            ast::Expr::If(e) => self.if_expr(e),
            ast::Expr::Lambda(lambda) => {
                let id = self.body.add_graph(
                    format!("{}_lambda", self.body.graph(graph).name),
                    Some(graph),
                    GraphOrigin::Lambda,
                );
                self.body.graph_mut(id).span = Some(range);
                self.scopes.push(Scope {
                    graph: Some(id),
                    warn_unused: false,
                    ..Scope::default()
                });
                for param in lambda.params() {
                    self.param(id, &param);
                }
                if let Some(body) = lambda.body() {
                    let out = self.expr(&body);
                    self.body.graph_mut(id).output = Some(out);
                }
                self.scopes.pop();
                self.body.add_const(Value::Graph(id), Some(range))
            }
        }
    }

    pub(super) fn if_expr(&mut self, e: &ast::IfExpr) -> NodeId {
        if let Some(taken) = e.condition().and_then(|c| self.static_condition(&c)) {
            return self.static_if(e, taken);
        }
        let range = e.range();
        let graph = self.current_graph();
        let cond_range = e.condition().map_or(range, |c| c.range());
        let cond = match e.condition() {
            Some(c) => self.expr(&c),
            None => self.error_node(range),
        };
        let parent_name = self.body.graph(graph).name.clone();
        let then_id = self.body.add_graph(
            format!("{parent_name}_then"),
            Some(graph),
            GraphOrigin::Then,
        );
        let then_value = match e.then_block() {
            Some(block) => self.branch(then_id, &block),
            None => range,
        };
        let else_id = self.body.add_graph(
            format!("{parent_name}_else"),
            Some(graph),
            GraphOrigin::Else,
        );
        let else_value = match e.else_branch() {
            Some(ast::ElseBranch::Block(block)) => self.branch(else_id, &block),
            Some(ast::ElseBranch::If(inner)) => {
                self.body.graph_mut(else_id).span = Some(inner.range());
                self.scopes.push(Scope {
                    graph: Some(else_id),
                    warn_unused: false,
                    ..Scope::default()
                });
                let out = self.if_expr(&inner);
                self.scopes.pop();
                self.body.graph_mut(else_id).output = Some(out);
                inner.range()
            }
            None => {
                self.error(
                    Code::MissingElse,
                    range,
                    "an `if` is an expression and needs an `else` branch",
                );
                range
            }
        };
        let t = self.body.add_const(Value::Graph(then_id), Some(then_value));
        let f = self.body.add_const(Value::Graph(else_id), Some(else_value));
        let switch =
            self.body
                .add_prim_call(graph, PrimRef::new("Switch"), &[cond, t, f], Some(range));
        self.map
            .input_spans
            .insert(switch, vec![range, cond_range, then_value, else_value]);
        let call = self.body.add_apply(graph, vec![switch], Some(range));
        self.map.input_spans.insert(call, vec![range]);
        self.order_effect(call);
        self.map.ifs.push(IfInfo {
            call,
            cond: cond_range,
            then_value,
            else_value,
        });
        call
    }

    /// In a composite's instance, the value of an `if` condition made of its
    /// attributes and literals only (`reduction == "sum"`, `not equal_nan`,
    /// `dtype == none`). The instance then holds only the branch taken (as
    /// MindSpore's expanders choose a decomposition by the attributes), so the
    /// other branch may use an attribute in a way that is valid only where it
    /// is taken (`Cast(x, dtype)` when `dtype` is not `none`).
    pub(super) fn static_condition(&mut self, e: &ast::Expr) -> Option<bool> {
        self.constants?;
        match self.static_value(e)? {
            AttrValue::Bool(b) => Some(b),
            _ => None,
        }
    }

    /// The constant value of an expression of attributes and literals, with
    /// `==`, `!=`, `and`, `or`, `not`, tuples, and `+`, `-`, `*` and
    /// negation of integers (`(depth_radius, depth_radius, 0)`,
    /// `2 * depth_radius + 1` as an attribute of an inner call).
    pub(super) fn static_value(&mut self, e: &ast::Expr) -> Option<AttrValue> {
        use syntax::SyntaxKind::*;
        match e {
            ast::Expr::Paren(p) => self.static_value(&p.expr()?),
            ast::Expr::Tuple(t) => {
                let fields: Vec<ast::Expr> = t.fields().collect();
                fields
                    .iter()
                    .map(|f| self.static_value(f))
                    .collect::<Option<Vec<_>>>()
                    .map(AttrValue::Tuple)
            }
            ast::Expr::Bin(b) => {
                let op = b.op_kind()?;
                if !matches!(op, EQ2 | NEQ | AND_KW | OR_KW | PLUS | MINUS | STAR) {
                    return None;
                }
                let x = self.static_value(&b.lhs()?)?;
                let y = self.static_value(&b.rhs()?)?;
                Some(match (op, x, y) {
                    (EQ2, x, y) => AttrValue::Bool(constants_equal(&x, &y)),
                    (NEQ, x, y) => AttrValue::Bool(!constants_equal(&x, &y)),
                    (AND_KW, AttrValue::Bool(x), AttrValue::Bool(y)) => AttrValue::Bool(x && y),
                    (OR_KW, AttrValue::Bool(x), AttrValue::Bool(y)) => AttrValue::Bool(x || y),
                    (PLUS, AttrValue::Int(x), AttrValue::Int(y)) => {
                        AttrValue::Int(x.checked_add(y)?)
                    }
                    (MINUS, AttrValue::Int(x), AttrValue::Int(y)) => {
                        AttrValue::Int(x.checked_sub(y)?)
                    }
                    (STAR, AttrValue::Int(x), AttrValue::Int(y)) => {
                        AttrValue::Int(x.checked_mul(y)?)
                    }
                    _ => return None,
                })
            }
            ast::Expr::Prefix(p) if p.op_kind() == Some(MINUS) => {
                match self.static_value(&p.operand()?)? {
                    AttrValue::Int(i) => Some(AttrValue::Int(i.checked_neg()?)),
                    AttrValue::Float(x) => Some(AttrValue::float(-x.0)),
                    _ => None,
                }
            }
            ast::Expr::Prefix(p) if p.op_kind() == Some(NOT_KW) => {
                match self.static_value(&p.operand()?)? {
                    AttrValue::Bool(b) => Some(AttrValue::Bool(!b)),
                    _ => None,
                }
            }
            ast::Expr::NameRef(_) => self
                .bound_constant(e)
                .or_else(|| const_value(e, &|n| n.parse::<DType>().ok())),
            _ => const_value(e, &|n| n.parse::<DType>().ok()),
        }
    }

    /// An `if` whose condition is the constant `taken`: a call of the branch
    /// taken, the other not lowered (see [`Lowerer::static_condition`]).
    pub(super) fn static_if(&mut self, e: &ast::IfExpr, taken: bool) -> NodeId {
        let range = e.range();
        let graph = self.current_graph();
        let parent_name = self.body.graph(graph).name.clone();
        let block = if taken {
            e.then_block()
        } else {
            match e.else_branch() {
                Some(ast::ElseBranch::Block(block)) => Some(block),
                Some(ast::ElseBranch::If(inner)) => return self.if_expr(&inner),
                None => {
                    self.error(
                        Code::MissingElse,
                        range,
                        "an `if` is an expression and needs an `else` branch",
                    );
                    return self.error_node(range);
                }
            }
        };
        let Some(block) = block else {
            return self.error_node(range);
        };
        let (suffix, origin) = if taken {
            ("then", GraphOrigin::Then)
        } else {
            ("else", GraphOrigin::Else)
        };
        let id = self
            .body
            .add_graph(format!("{parent_name}_{suffix}"), Some(graph), origin);
        let value = self.branch(id, &block);
        let g = self.body.add_const(Value::Graph(id), Some(value));
        let call = self.body.add_apply(graph, vec![g], Some(range));
        self.map.input_spans.insert(call, vec![range]);
        self.order_effect(call);
        call
    }

    /// Lowers an `if` branch block into graph `id`; returns the range of its value.
    pub(super) fn branch(&mut self, id: GraphId, block: &ast::Block) -> TextRange {
        self.body.graph_mut(id).span = Some(block.range());
        self.scopes.push(Scope {
            graph: Some(id),
            warn_unused: true,
            ..Scope::default()
        });
        self.begin_effects(block.syntax());
        let stmts: Vec<ast::Stmt> = block.stmts().collect();
        let nested = self.declare_block(id, &stmts);
        let mut value_range = block.range();
        for (i, stmt) in stmts.iter().enumerate() {
            let last = i + 1 == stmts.len();
            match stmt {
                ast::Stmt::Expr(e) if last => {
                    if let Some(expr) = e.expr() {
                        value_range = expr.range();
                        let out = self.expr(&expr);
                        let out = self.after_effects(out);
                        self.body.graph_mut(id).output = Some(out);
                    }
                }
                ast::Stmt::Expr(e) if e.expr().is_some_and(|x| self.is_effect_statement(&x)) => {
                    if let Some(expr) = e.expr() {
                        self.expr(&expr);
                    }
                }
                ast::Stmt::Expr(e) => {
                    if let Some(expr) = e.expr() {
                        self.expr(&expr);
                    }
                    self.error(
                        Code::UselessExpression,
                        e.range(),
                        "this expression's value is never used",
                    )
                    .notes
                    .push("only the last expression of a branch is its value".into());
                }
                ast::Stmt::Return(r) => {
                    self.error(
                        Code::MisplacedReturn,
                        r.range(),
                        "`return` is not allowed in an `if` branch",
                    )
                    .notes
                    .push("a branch's value is its last expression".into());
                }
                _ => self.stmt(id, stmt),
            }
        }
        self.lower_nested(nested);
        if self.body.graph(id).output.is_none() {
            self.error(
                Code::MissingReturn,
                block.range(),
                "this branch has no value: end it with an expression",
            );
        }
        self.pop_scope();
        value_range
    }
}
