//! Lowering the typed AST to MindIR, with the scoping rules of spec §4.
//!
//! Each top-level graph lowers on its own into an [`ir::Body`] (its nested
//! graphs, `if` branches and lambdas included), seeing other top-level items only
//! through the [`ItemIndex`]: names of graphs and weights. An edit inside one
//! graph therefore re-lowers that graph alone.

use std::collections::HashMap;
use std::sync::Arc;

use ir::{
    AttrValue, Body, DType, Dim, FnTy, GraphId, GraphOrigin, MetaFn, NodeId, NodeKind, PrimRef,
    ScalarConst, Shape, TextRange, Ty, Value, WeightDef, WeightInit, WrtItem,
};
use syntax::ast::{self, AstNode};
use tensor::Tensor;

use crate::diagnostic::{Code, Diagnostic};

/// The names visible at the top level of a file: graphs and weights.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ItemIndex {
    pub graphs: Vec<(String, TextRange)>,
    pub weights: Vec<(String, TextRange)>,
    /// Graph names (top-level and nested) whose bodies have side effects,
    /// sorted ([`crate::effects::effectful_graphs`]).
    pub effectful: Vec<String>,
    /// Every name of `graphs` and `weights`, sorted, with whether it is a
    /// weight: lookups by name are a binary search, not a scan (a file of
    /// thousands of graphs looks names up for every reference).
    sorted: Vec<(String, bool)>,
}

impl ItemIndex {
    pub fn build(file: &ast::SourceFile) -> (ItemIndex, Vec<Diagnostic>) {
        let mut index = ItemIndex::default();
        let mut diagnostics = Vec::new();
        let mut seen: HashMap<String, TextRange> = HashMap::new();
        for item in file.items() {
            let Some(name) = item.name() else { continue };
            let text = name.text();
            let range = name.range();
            if let Some(first) = seen.get(&text) {
                diagnostics.push(
                    Diagnostic::error(
                        Code::DuplicateItem,
                        range,
                        format!("`{text}` is defined twice at the top level"),
                    )
                    .with_related(*first, "first defined here"),
                );
                continue;
            }
            seen.insert(text.clone(), range);
            match item {
                ast::Item::Graph(_) => index.graphs.push((text, range)),
                ast::Item::Weight(_) => index.weights.push((text, range)),
            }
        }
        let mut effectful: Vec<String> =
            crate::effects::effectful_graphs(file).into_iter().collect();
        effectful.sort();
        index.effectful = effectful;
        (index.finish(), diagnostics)
    }

    /// An index of these graphs and weights, and the graphs with effects
    /// (sorted).
    pub fn new(
        graphs: Vec<(String, TextRange)>,
        weights: Vec<(String, TextRange)>,
        effectful: Vec<String>,
    ) -> ItemIndex {
        ItemIndex {
            graphs,
            weights,
            effectful,
            sorted: Vec::new(),
        }
        .finish()
    }

    /// Builds the sorted lookup table from `graphs` and `weights`.
    fn finish(mut self) -> ItemIndex {
        self.sorted = (self.graphs.iter().map(|(n, _)| (n.clone(), false)))
            .chain(self.weights.iter().map(|(n, _)| (n.clone(), true)))
            .collect();
        self.sorted.sort();
        self
    }

    /// Whether graph `name` has side effects (spec §11).
    pub fn is_effectful(&self, name: &str) -> bool {
        self.effectful
            .binary_search_by(|n| n.as_str().cmp(name))
            .is_ok()
    }

    /// Whether `name` is a weight (`weight`) or a graph (`!weight`): a binary
    /// search of the sorted table, or a scan where the fields were filled in
    /// without [`ItemIndex::new`].
    fn has(&self, name: &str, weight: bool) -> bool {
        if self.sorted.len() != self.graphs.len() + self.weights.len() {
            let list = if weight { &self.weights } else { &self.graphs };
            return list.iter().any(|(n, _)| n == name);
        }
        let i = self.sorted.partition_point(|(n, _)| n.as_str() < name);
        self.sorted[i..]
            .iter()
            .take_while(|(n, _)| n == name)
            .any(|&(_, w)| w == weight)
    }

    pub fn is_graph(&self, name: &str) -> bool {
        self.has(name, false)
    }

    pub fn is_weight(&self, name: &str) -> bool {
        self.has(name, true)
    }
}

/// What a name in the source refers to.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Def {
    /// A parameter or binding (a node of this body).
    Node(NodeId),
    /// A nested graph of this body.
    Graph(GraphId),
    /// A top-level graph.
    Global(String),
    Weight(String),
    Prim(String),
    Meta(&'static str),
    DType(DType),
}

/// Where things are in the source, for diagnostics and the IDE.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SourceMap {
    /// For each CNode, the source range of each input (callee first).
    pub input_spans: HashMap<NodeId, Vec<TextRange>>,
    /// For each primitive call, the range of each attribute argument given.
    pub attr_spans: HashMap<NodeId, Vec<(String, TextRange)>>,
    /// Name definitions: the name's range and what it defines.
    pub defs: Vec<(TextRange, Def)>,
    /// Name uses: the name's range and what it resolves to.
    pub refs: Vec<(TextRange, Def)>,
    /// For each `if`: the Switch call node, the condition's range and each branch's value range.
    pub ifs: Vec<IfInfo>,
    /// Type annotations on bindings to check: node, type, annotation range.
    pub annotations: Vec<(NodeId, Ty, TextRange)>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct IfInfo {
    pub call: NodeId,
    pub cond: TextRange,
    pub then_value: TextRange,
    pub else_value: TextRange,
}

/// One lowered top-level graph.
#[derive(Debug, Clone, PartialEq)]
pub struct LoweredGraph {
    pub name: String,
    pub body: Arc<Body>,
    pub source_map: SourceMap,
    pub diagnostics: Vec<Diagnostic>,
}

const METAFUNCTIONS: &[&str] = &["grad", "value_and_grad", "vjp", "jvp", "hvp"];

/// A binding visible in a scope.
#[derive(Debug, Clone, Copy)]
enum Binding {
    Node(NodeId),
    Graph(GraphId),
}

/// The state token of a graph with side effects (MindIR's auto-monad): the
/// current `U`, the one the graph started with, and the `Load`s made since the
/// last effect (they are ordered before the next one, as MindSpore does).
struct EffectChain {
    u: NodeId,
    start: NodeId,
    pending_loads: Vec<NodeId>,
}

/// One graph's names: bound so far, and (for used-before-bound) bound later.
#[derive(Default)]
struct Scope {
    graph: Option<GraphId>,
    /// Set when the graph has side effects: its calls are then ordered.
    effects: Option<EffectChain>,
    bound: HashMap<String, (Binding, TextRange)>,
    /// Names bound later in this body (statement order), with their ranges.
    later: HashMap<String, TextRange>,
    /// Uses of each binding, for the unused-binding warning.
    used: HashMap<String, bool>,
    warn_unused: bool,
}

struct Lowerer<'a> {
    index: &'a ItemIndex,
    /// Lowering a composite primitive's instance: the values of its attribute
    /// parameters (those with a default), which become constants.
    constants: Option<&'a [(String, AttrValue)]>,
    body: Body,
    map: SourceMap,
    diagnostics: Vec<Diagnostic>,
    scopes: Vec<Scope>,
}

/// Lowers a composite primitive's definition specialised on the values of its
/// attributes (see `ops::composite`): its attribute parameters are constants
/// and the graph is named `name`.
pub fn lower_instance(
    graph: &ast::Graph,
    name: &str,
    attrs: &[(String, AttrValue)],
) -> LoweredGraph {
    let index = ItemIndex::default();
    let mut l = Lowerer {
        index: &index,
        constants: Some(attrs),
        body: Body::default(),
        map: SourceMap::default(),
        diagnostics: Vec::new(),
        scopes: Vec::new(),
    };
    let root = l.body.add_graph(name.to_string(), None, GraphOrigin::Named);
    l.graph_into(root, graph);
    l.body.graph_mut(root).name = name.to_string();
    LoweredGraph {
        name: name.to_string(),
        body: Arc::new(l.body),
        source_map: l.map,
        diagnostics: l.diagnostics,
    }
}

/// Lowers one top-level graph.
pub fn lower_graph(graph: &ast::Graph, index: &ItemIndex) -> LoweredGraph {
    let name = graph.name().map(|n| n.text()).unwrap_or_default();
    let mut l = Lowerer {
        index,
        constants: None,
        body: Body::default(),
        map: SourceMap::default(),
        diagnostics: Vec::new(),
        scopes: Vec::new(),
    };
    let root = l.body.add_graph(name.clone(), None, GraphOrigin::Named);
    l.graph_into(root, graph);
    LoweredGraph {
        name,
        body: Arc::new(l.body),
        source_map: l.map,
        diagnostics: l.diagnostics,
    }
}

impl Lowerer<'_> {
    /// `W0003` where a declared tensor (a parameter, a weight) already
    /// exceeds the memory budget.
    fn warn_over_budget(&mut self, ty: &Ty, range: TextRange) {
        if let Some(message) = crate::limits::over_budget(&ir::AbsVal::from_ty(ty)) {
            self.error(Code::OverMemoryBudget, range, message);
        }
    }

    fn error(
        &mut self,
        code: Code,
        range: TextRange,
        message: impl Into<String>,
    ) -> &mut Diagnostic {
        self.diagnostics
            .push(Diagnostic::error(code, range, message));
        self.diagnostics.last_mut().unwrap()
    }

    /// Starts graph `graph`'s effect chain when its own code (`region`) calls
    /// something with side effects.
    fn begin_effects(&mut self, region: &syntax::SyntaxNode) {
        let index = self.index;
        if !crate::effects::calls_effects(region, &|n| index.is_effectful(n)) {
            return;
        }
        let u = self.body.add_const(Value::Monad, None);
        let scope = self.graph_scope_mut();
        scope.effects = Some(EffectChain {
            u,
            start: u,
            pending_loads: Vec::new(),
        });
    }

    /// The scope of the innermost graph being lowered.
    fn graph_scope_mut(&mut self) -> &mut Scope {
        self.scopes
            .iter_mut()
            .rev()
            .find(|s| s.graph.is_some())
            .expect("inside a graph")
    }

    /// The current state token, after ordering the pending `Load`s before what
    /// comes next (`UpdateState(u, loads)`). `None` outside effect chains.
    fn flush_loads(&mut self) -> Option<NodeId> {
        let graph = self.current_graph();
        let chain = self.graph_scope_mut().effects.as_mut()?;
        let (u, loads) = (chain.u, std::mem::take(&mut chain.pending_loads));
        let u = match loads.as_slice() {
            [] => u,
            [one] => {
                let one = *one;
                self.body
                    .add_prim_call(graph, PrimRef::new("UpdateState"), &[u, one], None)
            }
            _ => {
                let t = self
                    .body
                    .add_prim_call(graph, PrimRef::new("MakeTuple"), &loads, None);
                self.body
                    .add_prim_call(graph, PrimRef::new("UpdateState"), &[u, t], None)
            }
        };
        self.graph_scope_mut().effects.as_mut().expect("checked").u = u;
        Some(u)
    }

    /// Orders `node` (a call with effects, or one that may have them) after
    /// everything before it and before everything after it.
    fn order_effect(&mut self, node: NodeId) {
        let graph = self.current_graph();
        let Some(u) = self.flush_loads() else { return };
        let next = self
            .body
            .add_prim_call(graph, PrimRef::new("UpdateState"), &[u, node], None);
        self.graph_scope_mut().effects.as_mut().expect("checked").u = next;
    }

    /// A read of weight `name` at this point: `Load(w, u)` in a graph with
    /// effects, the weight itself elsewhere.
    fn weight_read(&mut self, name: &str, range: TextRange) -> NodeId {
        let w = self.body.add_weight(name.to_string(), Some(range));
        let graph = self.current_graph();
        let Some(chain) = self.graph_scope_mut().effects.as_mut() else {
            return w;
        };
        let u = chain.u;
        let load = self
            .body
            .add_prim_call(graph, PrimRef::new("Load"), &[w, u], Some(range));
        self.map.input_spans.insert(load, vec![range, range, range]);
        self.graph_scope_mut()
            .effects
            .as_mut()
            .expect("checked")
            .pending_loads
            .push(load);
        load
    }

    /// A graph's value, after its effects: `Depend(value, u)` when it had any.
    fn after_effects(&mut self, value: NodeId) -> NodeId {
        let graph = self.current_graph();
        let Some(chain) = self.graph_scope_mut().effects.as_ref() else {
            return value;
        };
        if chain.u == chain.start && chain.pending_loads.is_empty() {
            return value;
        }
        let u = self.flush_loads().expect("an effect chain");
        self.body
            .add_prim_call(graph, PrimRef::new("Depend"), &[value, u], None)
    }

    /// Whether expression statement `e` is a call with side effects (so its
    /// value may go unused).
    fn is_effect_statement(&self, e: &ast::Expr) -> bool {
        let ast::Expr::Call(call) = e else {
            return false;
        };
        let Some(ast::Expr::NameRef(name)) = call.callee() else {
            return false;
        };
        let text = name.text();
        crate::effects::is_effect_primitive(&text) || self.index.is_effectful(&text)
    }

    fn graph_into(&mut self, id: GraphId, graph: &ast::Graph) {
        {
            let g = self.body.graph_mut(id);
            g.span = Some(graph.range());
            g.name_span = graph.name().map(|n| n.range());
        }
        if let Some(name) = graph.name() {
            if id != self.body.root() || self.scopes.is_empty() {
                self.map.defs.push((
                    name.range(),
                    if id == self.body.root() {
                        Def::Global(name.text())
                    } else {
                        Def::Graph(id)
                    },
                ));
            }
        }
        if let Some(ret) = graph.ret_type() {
            let ty = self.ty(&ret);
            self.body.graph_mut(id).ret_annotation = Some((ty, ret.range()));
        }
        self.scopes.push(Scope {
            graph: Some(id),
            warn_unused: true,
            ..Scope::default()
        });
        for param in graph.params() {
            // In a composite's instance, a parameter with an attribute type
            // (`size: ints`) is a required attribute.
            let required_attr =
                self.constants.is_some() && ops::composite::is_attribute_param(&param);
            if param.default_value().is_some() || required_attr {
                self.attr_param(id, &param);
            } else {
                self.param(id, &param);
            }
        }
        if let Some(block) = graph.body() {
            self.begin_effects(block.syntax());
            self.graph_body(id, &block, graph);
        }
        self.pop_scope();
    }

    /// The value of a name bound to a constant (a composite's attribute).
    fn bound_constant(&mut self, e: &ast::Expr) -> Option<AttrValue> {
        let ast::Expr::NameRef(name) = e else {
            return None;
        };
        let text = name.text();
        let scope = self
            .scopes
            .iter_mut()
            .rev()
            .find(|s| s.bound.contains_key(&text))?;
        let Binding::Node(n) = scope.bound[&text].0 else {
            return None;
        };
        let value = match &self.body.node(n).kind {
            NodeKind::Const(v) => value_attr(v)?,
            _ => return None,
        };
        scope.used.insert(text, true);
        Some(value)
    }

    /// A parameter with a default: in a composite primitive's instance, the
    /// attribute's constant value; elsewhere an error (graphs take values).
    fn attr_param(&mut self, graph: GraphId, param: &ast::Param) {
        let name = param.name().map(|n| n.text()).unwrap_or_default();
        let range = param.name().map_or_else(|| param.range(), |n| n.range());
        let is_root = graph == self.body.root() && self.scopes.len() == 1;
        let value = match self.constants {
            Some(attrs) if is_root => attrs
                .iter()
                .find(|(k, _)| *k == name)
                .and_then(|(_, v)| attr_constant(v)),
            _ => None,
        };
        let Some(value) = value else {
            if self.constants.is_none() {
                let r = param
                    .default_value()
                    .map_or(range, |d| range.cover(d.range()));
                self.error(
                    Code::DefaultParameter,
                    r,
                    format!("`{name}` has a default value: only composite primitive definitions have attribute parameters"),
                )
                .notes
                .push("a graph's parameters are values its callers pass".into());
            }
            self.param(graph, param);
            return;
        };
        let node = self.body.add_const(value, Some(range));
        self.map.defs.push((range, Def::Node(node)));
        self.bind(&name, Binding::Node(node), range, false);
    }

    fn param(&mut self, graph: GraphId, param: &ast::Param) -> NodeId {
        let name = param.name().map(|n| n.text()).unwrap_or_default();
        let range = param
            .name()
            .map(|n| n.range())
            .unwrap_or_else(|| param.range());
        let node = self.body.add_param(graph, name.clone(), Some(range));
        if let Some(ty) = param.ty() {
            let t = self.ty(&ty);
            self.warn_over_budget(&t, ty.range());
            self.body.node_mut(node).annotation = Some((t, ty.range()));
        }
        self.map.defs.push((range, Def::Node(node)));
        self.bind(&name, Binding::Node(node), range, false);
        node
    }

    fn pop_scope(&mut self) {
        let scope = self.scopes.pop().unwrap();
        // An instance of a composite holds only the branches its attributes
        // take: what the others use may go unused there.
        if !scope.warn_unused || self.constants.is_some() {
            return;
        }
        let mut unused: Vec<(&String, &(Binding, TextRange))> = scope
            .bound
            .iter()
            .filter(|(name, _)| {
                !scope.used.get(*name).copied().unwrap_or(false) && !name.starts_with('_')
            })
            .collect();
        unused.sort_by_key(|(_, (_, r))| r.start());
        for (name, (binding, range)) in unused {
            match binding {
                Binding::Node(n) if matches!(self.body.node(*n).kind, NodeKind::Param { .. }) => {}
                Binding::Node(_) => {
                    let d = Diagnostic::error(
                        Code::UnusedBinding,
                        *range,
                        format!("`{name}` is never used"),
                    )
                    .with_fix(
                        format!("rename to `_{name}`"),
                        *range,
                        format!("_{name}"),
                    );
                    self.diagnostics.push(d);
                }
                Binding::Graph(_) => {
                    self.diagnostics.push(Diagnostic::error(
                        Code::UnreachableGraph,
                        *range,
                        format!("nested graph `{name}` is never used"),
                    ));
                }
            }
        }
    }

    fn bind(&mut self, name: &str, binding: Binding, range: TextRange, _check_duplicate: bool) {
        let scope = self.scopes.last_mut().unwrap();
        if let Some((_, first)) = scope.bound.get(name) {
            let first = *first;
            self.error(
                Code::DuplicateName,
                range,
                format!("`{name}` is already bound in this graph"),
            )
            .related
            .push((first, "first bound here".into()));
            return;
        }
        scope.later.remove(name);
        scope.bound.insert(name.to_string(), (binding, range));
    }

    fn graph_body(&mut self, id: GraphId, block: &ast::Block, graph: &ast::Graph) {
        let stmts: Vec<ast::Stmt> = block.stmts().collect();
        let nested = self.declare_block(id, &stmts);
        let mut returned: Option<TextRange> = None;
        for stmt in &stmts {
            if let Some(first) = returned {
                self.error(
                    Code::MisplacedReturn,
                    stmt.range(),
                    "statement after `return` is never reached",
                )
                .related
                .push((first, "the graph returns here".into()));
                break;
            }
            match stmt {
                ast::Stmt::Return(ret) => {
                    if let Some(value) = ret.value() {
                        let out = self.expr(&value);
                        let out = self.after_effects(out);
                        self.body.graph_mut(id).output = Some(out);
                    }
                    returned = Some(ret.range());
                }
                ast::Stmt::Expr(e) if e.expr().is_some_and(|x| self.is_effect_statement(&x)) => {
                    if let Some(expr) = e.expr() {
                        self.expr(&expr);
                    }
                }
                ast::Stmt::Expr(e) => {
                    let range = e.range();
                    if let Some(expr) = e.expr() {
                        self.expr(&expr);
                    }
                    self.error(
                        Code::UselessExpression,
                        range,
                        "this expression's value is never used",
                    )
                    .notes
                    .push("bind it to a name, or `return` it".into());
                }
                _ => self.stmt(id, stmt),
            }
        }
        self.lower_nested(nested);
        if returned.is_none() {
            let range = graph
                .name()
                .map(|n| n.range())
                .unwrap_or_else(|| graph.range());
            let name = graph.name().map(|n| n.text()).unwrap_or_default();
            let d = Diagnostic::error(
                Code::MissingReturn,
                range,
                format!("graph `{name}` has no `return`"),
            );
            let d = match block.r_brace() {
                Some(brace) => d.with_fix(
                    "add `return none`",
                    TextRange::empty(brace.text_range().start()),
                    "  return none\n",
                ),
                None => d,
            };
            self.diagnostics.push(d);
        }
    }

    /// Declares a block's nested graphs (usable anywhere in it) and notes the
    /// names it binds later (for the used-before-bound error). Returns the nested
    /// graphs, to lower once the whole block is (so they may use all its names).
    fn declare_block(&mut self, id: GraphId, stmts: &[ast::Stmt]) -> Vec<(GraphId, ast::Graph)> {
        let mut nested = Vec::new();
        for stmt in stmts {
            match stmt {
                ast::Stmt::Graph(g) => {
                    let Some(name) = g.name() else { continue };
                    let text = name.text();
                    let graph = self
                        .body
                        .add_graph(text.clone(), Some(id), GraphOrigin::Named);
                    self.bind(&text, Binding::Graph(graph), name.range(), true);
                    nested.push((graph, g.clone()));
                }
                ast::Stmt::Let(l) => {
                    for (name, range) in pattern_names(l.pat()) {
                        self.scopes
                            .last_mut()
                            .unwrap()
                            .later
                            .entry(name)
                            .or_insert(range);
                    }
                }
                _ => {}
            }
        }
        nested
    }

    /// Lowers nested graphs with the enclosing scopes complete: every name of the
    /// enclosing bodies is bound, and uses count for the unused-binding warning.
    fn lower_nested(&mut self, nested: Vec<(GraphId, ast::Graph)>) {
        for (id, syntax) in nested {
            self.graph_into(id, &syntax);
        }
    }

    /// A binding statement (the only kind that reaches here).
    fn stmt(&mut self, graph: GraphId, stmt: &ast::Stmt) {
        if let ast::Stmt::Let(l) = stmt {
            {
                // A binding whose value did not parse still binds its names (to an
                // unknown value), so uses of them report nothing more.
                let node = match l.value() {
                    Some(value) => self.expr(&value),
                    None => self.error_node(l.range()),
                };
                let annotation = l.ty().map(|t| (self.ty(&t), t.range()));
                match l.pat() {
                    Some(ast::Pat::Name(name)) => {
                        let text = name.text();
                        if let Some((ty, range)) = annotation {
                            self.map.annotations.push((node, ty.clone(), range));
                            if self.body.node(node).annotation.is_none()
                                && self.body.node(node).graph == Some(graph)
                            {
                                self.body.node_mut(node).annotation = Some((ty, range));
                            }
                        }
                        let n = self.body.node_mut(node);
                        if n.name.is_none() && matches!(n.kind, NodeKind::Apply(_)) {
                            n.name = Some(text.clone());
                        }
                        self.map.defs.push((name.range(), Def::Node(node)));
                        self.bind(&text, Binding::Node(node), name.range(), true);
                        if l.value().is_none() {
                            // Its value did not parse: a warning about it would be noise.
                            self.scopes
                                .last_mut()
                                .unwrap()
                                .used
                                .insert(text.clone(), true);
                        }
                    }
                    Some(ast::Pat::Tuple(t)) => {
                        if let Some((_, range)) = annotation {
                            self.error(Code::AnnotationMismatch, range, "a tuple pattern cannot be annotated; annotate its parts by binding them separately");
                        }
                        let value_range = l.value().map_or(t.range(), |v| v.range());
                        self.destructure(graph, node, &t, value_range);
                    }
                    None => {}
                }
            }
        }
    }

    fn destructure(
        &mut self,
        graph: GraphId,
        tuple: NodeId,
        pat: &ast::TuplePat,
        value_range: TextRange,
    ) {
        for (i, field) in pat.fields().enumerate() {
            let index = self
                .body
                .add_const(Value::int(i as i64), Some(field.range()));
            let item = self.body.add_prim_call(
                graph,
                PrimRef::new("TupleGetItem"),
                &[tuple, index],
                Some(field.range()),
            );
            self.map
                .input_spans
                .insert(item, vec![field.range(), value_range, field.range()]);
            match field {
                ast::Pat::Name(name) => {
                    let text = name.text();
                    self.body.node_mut(item).name = Some(text.clone());
                    self.map.defs.push((name.range(), Def::Node(item)));
                    self.bind(&text, Binding::Node(item), name.range(), true);
                }
                ast::Pat::Tuple(inner) => {
                    let r = inner.range();
                    self.destructure(graph, item, &inner, r)
                }
            }
        }
    }

    fn current_graph(&self) -> GraphId {
        self.scopes
            .iter()
            .rev()
            .find_map(|s| s.graph)
            .expect("inside a graph")
    }

    /// Resolves a name used in an expression.
    fn resolve(&mut self, name: &str, range: TextRange) -> Option<Def> {
        for i in (0..self.scopes.len()).rev() {
            if let Some((binding, _)) = self.scopes[i].bound.get(name).copied() {
                self.scopes[i].used.insert(name.to_string(), true);
                return Some(match binding {
                    Binding::Node(n) => Def::Node(n),
                    Binding::Graph(g) => Def::Graph(g),
                });
            }
            if let Some(later) = self.scopes[i].later.get(name).copied() {
                self.error(
                    Code::UsedBeforeBound,
                    range,
                    format!("`{name}` is used before it is bound"),
                )
                .related
                .push((later, "bound here, later".into()));
                return None;
            }
        }
        if self.index.is_graph(name) {
            return Some(Def::Global(name.to_string()));
        }
        if self.index.is_weight(name) {
            return Some(Def::Weight(name.to_string()));
        }
        // Internal primitives (`_SumToShapeOf`, ...) resolve too: gradient
        // programs printed by `mirdsl grad` use them and must check again.
        if ops::lookup(name).is_some() {
            return Some(Def::Prim(name.to_string()));
        }
        if let Some(m) = METAFUNCTIONS.iter().find(|m| **m == name) {
            return Some(Def::Meta(m));
        }
        if let Ok(d) = name.parse::<DType>() {
            return Some(Def::DType(d));
        }
        if let Some(prim) = ops::mindspore::schema(name) {
            // A MindSpore primitive used as a value.
            if ops::mindspore::registry_op(name).is_none() {
                self.diagnostics.push(unsupported_primitive(prim, range));
                return None;
            }
        }
        let mut candidates: Vec<&str> = Vec::new();
        for s in &self.scopes {
            candidates.extend(s.bound.keys().map(String::as_str));
        }
        candidates.extend(self.index.graphs.iter().map(|(n, _)| n.as_str()));
        candidates.extend(self.index.weights.iter().map(|(n, _)| n.as_str()));
        let prims: Vec<&'static str> = ops::public_ops().iter().map(|o| o.name).collect();
        candidates.extend(prims);
        candidates.extend(METAFUNCTIONS);
        let suggestions = ops::similar_names(name, candidates);
        let mut d = Diagnostic::error(
            Code::UndefinedName,
            range,
            format!("`{name}` is not defined"),
        );
        if let Some(s) = suggestions.first() {
            d.message.push_str(&format!("; did you mean `{s}`?"));
            d = d.with_fix(format!("change to `{s}`"), range, *s);
        }
        self.diagnostics.push(d);
        None
    }

    fn def_node(&mut self, def: &Def, range: TextRange) -> NodeId {
        match def {
            Def::Node(n) => *n,
            Def::Graph(g) => self.body.add_const(Value::Graph(*g), Some(range)),
            Def::Global(name) => self
                .body
                .add_const(Value::Global(name.clone()), Some(range)),
            Def::Weight(name) => self.body.add_weight(name.clone(), Some(range)),
            Def::Prim(name) => self
                .body
                .add_const(Value::Prim(PrimRef::new(name.clone())), Some(range)),
            Def::Meta(name) => self
                .body
                .add_const(Value::Meta(meta(name, None)), Some(range)),
            Def::DType(d) => self
                .body
                .add_const(Value::Type(Ty::Scalar(*d)), Some(range)),
        }
    }

    /// A node standing for an expression that could not be lowered (already
    /// reported): an unknown value, so no error follows from it.
    fn error_node(&mut self, range: TextRange) -> NodeId {
        self.body.add_const(Value::Type(Ty::Unknown), Some(range))
    }

    fn expr(&mut self, expr: &ast::Expr) -> NodeId {
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

    fn if_expr(&mut self, e: &ast::IfExpr) -> NodeId {
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
    fn static_condition(&mut self, e: &ast::Expr) -> Option<bool> {
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
    fn static_value(&mut self, e: &ast::Expr) -> Option<AttrValue> {
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
    fn static_if(&mut self, e: &ast::IfExpr, taken: bool) -> NodeId {
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
    fn branch(&mut self, id: GraphId, block: &ast::Block) -> TextRange {
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

    fn call(&mut self, call: &ast::CallExpr) -> NodeId {
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
    fn resolve_quiet(&self, name: &str) -> Option<()> {
        self.scopes
            .iter()
            .any(|s| s.bound.contains_key(name))
            .then_some(())
    }

    fn prim_call(
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
    fn weight_ref(
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

    fn meta_call(&mut self, name: &'static str, call: &ast::CallExpr, args: &[ast::Arg]) -> NodeId {
        let range = call.range();
        let graph = self.current_graph();
        let mut f = None;
        let mut wrt = None;
        for arg in args {
            match arg {
                ast::Arg::Keyword(k)
                    if k.name().is_some_and(|n| n.text() == "wrt")
                        && matches!(name, "grad" | "value_and_grad") =>
                {
                    let Some(v) = k.value() else { continue };
                    wrt = self.wrt(&v);
                }
                ast::Arg::Keyword(k) => {
                    let r = k.range();
                    let allowed = if matches!(name, "grad" | "value_and_grad") {
                        "the only option is `wrt`".to_string()
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
                        format!("`{name}` takes one function (and `wrt=`)"),
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
        let callee = self.body.add_const(
            Value::Meta(meta(name, wrt)),
            call.callee().map(|c| c.range()),
        );
        let node = self.body.add_apply(graph, vec![callee, f], Some(range));
        self.map.input_spans.insert(
            node,
            vec![call.callee().map_or(range, |c| c.range()), f_range],
        );
        node
    }

    /// `wrt=0`, `wrt=(0, 2)`, `wrt=(fc1.weight, 1)`.
    fn wrt(&mut self, value: &ast::Expr) -> Option<Vec<WrtItem>> {
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

    fn tensor_literal(&mut self, t: &ast::TensorExpr) -> Option<Tensor> {
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
    fn ty(&mut self, t: &ast::Type) -> Ty {
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

fn pattern_names(pat: Option<ast::Pat>) -> Vec<(String, TextRange)> {
    match pat {
        Some(ast::Pat::Name(n)) => vec![(n.text(), n.range())],
        Some(ast::Pat::Tuple(t)) => t.fields().flat_map(|f| pattern_names(Some(f))).collect(),
        None => Vec::new(),
    }
}

fn meta(name: &str, wrt: Option<Vec<WrtItem>>) -> MetaFn {
    match name {
        "grad" => MetaFn::Grad { wrt },
        "value_and_grad" => MetaFn::ValueAndGrad { wrt },
        "jvp" => MetaFn::Jvp,
        "hvp" => MetaFn::Hvp,
        _ => MetaFn::Vjp,
    }
}

fn binary_prim(op: syntax::SyntaxKind) -> &'static str {
    use syntax::SyntaxKind::*;
    match op {
        OR_KW => "LogicalOr",
        AND_KW => "LogicalAnd",
        EQ2 => "Equal",
        NEQ => "NotEqual",
        LT => "Less",
        LTEQ => "LessEqual",
        GT => "Greater",
        GTEQ => "GreaterEqual",
        PLUS => "Add",
        MINUS => "Sub",
        STAR => "Mul",
        SLASH => "RealDiv",
        AT => "MatMul",
        _ => "Add",
    }
}

/// Whether two constants are equal: numbers by value (`1 == 1.0`), others as
/// they are (strings exactly).
fn constants_equal(x: &AttrValue, y: &AttrValue) -> bool {
    match (x, y) {
        (AttrValue::Int(_) | AttrValue::Float(_), AttrValue::Int(_) | AttrValue::Float(_)) => {
            x.as_f64() == y.as_f64()
        }
        _ => x == y,
    }
}

/// The value of a constant expression (literals, tuples of them, negation,
/// dtype names), as an attribute value.
pub fn const_value(e: &ast::Expr, dtype: &dyn Fn(&str) -> Option<DType>) -> Option<AttrValue> {
    match e {
        ast::Expr::Literal(l) => match l.kind()? {
            ast::LiteralKind::Int(i) => Some(AttrValue::Int(i)),
            ast::LiteralKind::Float(x) => Some(AttrValue::float(x)),
            ast::LiteralKind::Bool(b) => Some(AttrValue::Bool(b)),
            ast::LiteralKind::Str(s) => Some(AttrValue::Str(s)),
            ast::LiteralKind::None => Some(AttrValue::None),
            ast::LiteralKind::IntOverflow => None,
        },
        ast::Expr::Prefix(p) if p.op_kind() == Some(syntax::SyntaxKind::MINUS) => {
            match const_value(&p.operand()?, dtype)? {
                AttrValue::Int(i) => Some(AttrValue::Int(-i)),
                AttrValue::Float(x) => Some(AttrValue::float(-x.0)),
                _ => None,
            }
        }
        ast::Expr::Paren(p) => const_value(&p.expr()?, dtype),
        ast::Expr::Tuple(t) => t
            .fields()
            .map(|f| const_value(&f, dtype))
            .collect::<Option<Vec<_>>>()
            .map(AttrValue::Tuple),
        ast::Expr::NameRef(n) => dtype(&n.text()).map(AttrValue::DType),
        _ => None,
    }
}

/// Lowers a weight declaration.
pub fn lower_weight(
    weight: &ast::Weight,
    base_dir: Option<&std::path::Path>,
) -> (Option<WeightDef>, Vec<Diagnostic>) {
    let _ = base_dir;
    let mut l = Lowerer {
        index: &ItemIndex::default(),
        constants: None,
        body: Body::default(),
        map: SourceMap::default(),
        diagnostics: Vec::new(),
        scopes: Vec::new(),
    };
    let Some(name) = weight.name() else {
        return (None, Vec::new());
    };
    let ty = match weight.ty() {
        Some(t) => {
            let ty = l.ty(&t);
            l.warn_over_budget(&ty, t.range());
            match &ty {
                Ty::Tensor(_, shape) if shape.as_known().is_some() => {}
                Ty::Unknown => {}
                _ => {
                    l.error(Code::BadWeight, t.range(), format!("a weight needs a tensor type with a concrete shape, like `f32[128, 784]`, not `{ty}`"));
                }
            }
            ty
        }
        None => Ty::Unknown,
    };
    let init = match weight.init() {
        Some(e) => l.weight_init(&e, &ty),
        None => WeightInit::Zeros,
    };
    let def = WeightDef {
        name: name.text(),
        ty,
        init,
        span: Some(weight.range()),
        name_span: Some(name.range()),
    };
    (Some(def), l.diagnostics)
}

impl Lowerer<'_> {
    fn weight_init(&mut self, e: &ast::Expr, ty: &Ty) -> WeightInit {
        let bad = |l: &mut Self, r: TextRange| {
            l.error(
                Code::BadWeight,
                r,
                "a weight's initialiser is `zeros`, `ones`, `constant(V)`, `normal(mean, std, seed)`, `uniform(low, high, seed)`, a tensor literal, or `load(\"PATH\")`",
            );
            WeightInit::Zeros
        };
        match e {
            ast::Expr::NameRef(n) => match n.text().as_str() {
                "zeros" => WeightInit::Zeros,
                "ones" => WeightInit::Ones,
                _ => bad(self, e.range()),
            },
            ast::Expr::Tensor(t) => {
                match self.tensor_literal(t) {
                    Some(tensor) => {
                        if let Ty::Tensor(dtype, shape) = ty {
                            let dims: Vec<i64> = tensor.shape().iter().map(|&d| d as i64).collect();
                            if shape.as_known().is_some_and(|s| s != dims) {
                                self.error(Code::BadWeight, t.range(), format!("the literal has shape {:?} but the weight is declared {ty}", dims));
                            }
                            return WeightInit::Tensor(Arc::new(tensor.cast(*dtype)));
                        }
                        WeightInit::Tensor(Arc::new(tensor))
                    }
                    None => WeightInit::Zeros,
                }
            }
            ast::Expr::Call(c) => {
                let Some(ast::Expr::NameRef(callee)) = c.callee() else {
                    return bad(self, e.range());
                };
                let mut positional = Vec::new();
                let mut keywords = Vec::new();
                for arg in c.args() {
                    let value = arg.value().and_then(|v| const_value(&v, &|_| None));
                    let r = arg.syntax().text_range();
                    match (&arg, value) {
                        (ast::Arg::Keyword(k), Some(v)) => {
                            keywords.push((k.name().map(|n| n.text()).unwrap_or_default(), v, r))
                        }
                        (_, Some(v)) => positional.push((v, r)),
                        (_, None) => {
                            self.error(
                                Code::NotConstant,
                                r,
                                "initialiser arguments must be constants",
                            );
                            return WeightInit::Zeros;
                        }
                    }
                }
                let callee_name = callee.text();
                let spec: &[(&str, f64)] = match callee_name.as_str() {
                    "constant" => &[("value", f64::NAN)],
                    "normal" => &[("mean", 0.0), ("std", 1.0), ("seed", 0.0)],
                    "uniform" => &[("low", -1.0), ("high", 1.0), ("seed", 0.0)],
                    "load" => {
                        let strings: Vec<String> = positional
                            .iter()
                            .filter_map(|(v, _)| v.as_str().map(str::to_string))
                            .collect();
                        return match (strings.as_slice(), keywords.is_empty(), positional.len()) {
                            ([path], true, 1) => WeightInit::Load {
                                path: path.clone(),
                                key: None,
                            },
                            ([path, key], true, 2) => WeightInit::Load {
                                path: path.clone(),
                                key: Some(key.clone()),
                            },
                            _ => {
                                self.error(Code::BadWeight, e.range(), "`load` takes a path, and for a .safetensors file the tensor's name: `load(\"w.npy\")`, `load(\"m.safetensors\", \"fc1.weight\")`");
                                WeightInit::Zeros
                            }
                        };
                    }
                    _ => return bad(self, callee.range()),
                };
                let mut values: Vec<f64> = spec.iter().map(|(_, d)| *d).collect();
                for (i, (v, r)) in positional.iter().enumerate() {
                    match (values.get_mut(i), v.as_f64()) {
                        (Some(slot), Some(x)) => *slot = x,
                        _ => {
                            self.error(
                                Code::BadWeight,
                                *r,
                                format!("`{callee_name}` takes {} numbers", spec.len()),
                            );
                        }
                    }
                }
                for (k, v, r) in &keywords {
                    match (spec.iter().position(|(n, _)| n == k), v.as_f64()) {
                        (Some(i), Some(x)) => values[i] = x,
                        _ => {
                            let names: Vec<&str> = spec.iter().map(|(n, _)| *n).collect();
                            self.error(
                                Code::BadWeight,
                                *r,
                                format!("`{callee_name}` takes {}", names.join(", ")),
                            );
                        }
                    }
                }
                match callee_name.as_str() {
                    "constant" if values[0].is_nan() => {
                        self.error(
                            Code::BadWeight,
                            e.range(),
                            "`constant` needs its value: `constant(0.5)`",
                        );
                        WeightInit::Zeros
                    }
                    "constant" => WeightInit::Constant(values[0]),
                    "normal" => {
                        if values[1] < 0.0 {
                            self.error(Code::BadWeight, e.range(), "`std` must not be negative");
                        }
                        WeightInit::Normal {
                            mean: values[0],
                            std: values[1],
                            seed: values[2] as u64,
                        }
                    }
                    _ => {
                        if values[0] > values[1] {
                            self.error(Code::BadWeight, e.range(), "`low` must not exceed `high`");
                        }
                        WeightInit::Uniform {
                            low: values[0],
                            high: values[1],
                            seed: values[2] as u64,
                        }
                    }
                }
            }
            _ => bad(self, e.range()),
        }
    }
}

/// A scalar constant value's abstract form (literals in graphs).
/// A constant as an attribute value.
fn value_attr(v: &Value) -> Option<AttrValue> {
    Some(match v {
        Value::Scalar { value, .. } => match value {
            ScalarConst::Int(i) => AttrValue::Int(*i),
            ScalarConst::Float(x) => AttrValue::float(*x),
            ScalarConst::Bool(b) => AttrValue::Bool(*b),
        },
        Value::Str(s) => AttrValue::Str(s.clone()),
        Value::None => AttrValue::None,
        Value::Type(Ty::Scalar(d)) => AttrValue::DType(*d),
        Value::Tuple(items) => {
            AttrValue::Tuple(items.iter().map(value_attr).collect::<Option<_>>()?)
        }
        _ => return None,
    })
}

/// An attribute's value as a constant of the graph: numbers are weak, like
/// literals, so they take the dtype of the tensors they meet.
fn attr_constant(v: &AttrValue) -> Option<Value> {
    Some(match v {
        AttrValue::Int(i) => Value::int(*i),
        AttrValue::Float(x) => Value::float(x.0),
        AttrValue::Bool(b) => Value::bool(*b),
        AttrValue::Str(s) => Value::Str(s.clone()),
        AttrValue::None => Value::None,
        AttrValue::DType(d) => Value::Type(Ty::Scalar(*d)),
        AttrValue::Tuple(items) => {
            Value::Tuple(items.iter().map(attr_constant).collect::<Option<_>>()?)
        }
    })
}

pub fn scalar_const(v: &AttrValue) -> Option<ScalarConst> {
    match v {
        AttrValue::Int(i) => Some(ScalarConst::Int(*i)),
        AttrValue::Float(x) => Some(ScalarConst::Float(x.0)),
        AttrValue::Bool(b) => Some(ScalarConst::Bool(*b)),
        _ => None,
    }
}

/// A call of a name that is no registry primitive: MindSpore's name for a
/// registry primitive, a MindSpore primitive the registry does not support
/// yet (E0145), or a misspelling (did-you-mean: supported names first).
fn unknown_primitive(text: &str, range: TextRange) -> Diagnostic {
    let ours = ops::mindspore::registry_name(text);
    if ours != text && ops::lookup(ours).is_some() {
        let mut d = Diagnostic::error(
            Code::UnknownPrimitive,
            range,
            format!("unknown primitive `{text}`; did you mean `{ours}`?"),
        )
        .with_fix(format!("change to `{ours}`"), range, ours);
        if ops::mindspore::schema(text).is_some() {
            d.notes.push(format!(
                "MindSpore {}'s `{text}` is mirdsl's `{ours}`",
                ops::mindspore::SERIES
            ));
        }
        return d;
    }
    if let Some(prim) = ops::mindspore::schema(text) {
        return unsupported_primitive(prim, range);
    }
    let supported = ops::similar_names(text, ops::public_ops().iter().map(|o| o.name));
    let mut message = format!("unknown primitive `{text}`");
    let suggestion = match supported.first() {
        Some(s) => Some((*s, String::new())),
        None => ops::similar_names(text, ops::mindspore::PRIMS.iter().map(|p| p.name))
            .first()
            .map(|s| {
                (
                    *s,
                    format!(
                        " (a MindSpore {} primitive mirdsl does not support yet)",
                        ops::mindspore::SERIES
                    ),
                )
            }),
    };
    if let Some((s, what)) = &suggestion {
        message.push_str(&format!("; did you mean `{s}`{what}?"));
    }
    let mut d = Diagnostic::error(Code::UnknownPrimitive, range, message);
    if let Some((s, _)) = suggestion {
        d = d.with_fix(format!("change to `{s}`"), range, s);
    }
    d
}

/// E0145: a MindSpore primitive the registry does not support yet, with
/// MindSpore's signature.
fn unsupported_primitive(prim: &ops::mindspore::MsPrim, range: TextRange) -> Diagnostic {
    let series = ops::mindspore::SERIES;
    let mut d = Diagnostic::error(
        Code::UnsupportedPrimitive,
        range,
        format!(
            "`{}` is a MindSpore {series} primitive that mirdsl does not support yet",
            prim.name
        ),
    );
    d.notes
        .push(format!("MindSpore {series}: `{}`", prim.signature()));
    d.notes
        .push(format!("`{}` is {}", prim.name, prim.kind_note()));
    d
}
