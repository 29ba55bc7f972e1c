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

use crate::diagnostic::{Code, Diagnostic, Related};

/// The names visible at the top level of a file: graphs and weights.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ItemIndex {
    pub graphs: Vec<(String, TextRange)>,
    pub weights: Vec<(String, TextRange)>,
    /// Graph names (top-level and nested) whose bodies have side effects,
    /// sorted ([`crate::effects::effectful_graphs`]).
    pub effectful: Vec<String>,
    /// Every name of `graphs` and `weights`, with whether it names a graph
    /// (bit 0) and a weight (bit 1): lookups by name are a hash, not a scan
    /// or a search (a file of thousands of graphs looks names up for every
    /// reference).
    lookup: rustc_hash::FxHashMap<String, u8>,
    /// How many names `lookup` was built from: where the fields were filled
    /// in or grown without [`ItemIndex::new`], lookups scan.
    indexed: usize,
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
            ..ItemIndex::default()
        }
        .finish()
    }

    /// Builds the lookup table from `graphs` and `weights`.
    fn finish(mut self) -> ItemIndex {
        self.indexed = self.graphs.len() + self.weights.len();
        self.lookup.reserve(self.indexed);
        for (names, bit) in [(&self.graphs, 1), (&self.weights, 2)] {
            for (name, _) in names {
                *self.lookup.entry(name.clone()).or_insert(0) |= bit;
            }
        }
        self
    }

    /// Whether graph `name` has side effects (spec §11).
    pub fn is_effectful(&self, name: &str) -> bool {
        self.effectful
            .binary_search_by(|n| n.as_str().cmp(name))
            .is_ok()
    }

    /// Whether `name` is a weight (`weight`) or a graph (`!weight`): a
    /// lookup in the table, or a scan where the fields were filled in
    /// without [`ItemIndex::new`].
    fn has(&self, name: &str, weight: bool) -> bool {
        if self.indexed != self.graphs.len() + self.weights.len() {
            let list = if weight { &self.weights } else { &self.graphs };
            return list.iter().any(|(n, _)| n == name);
        }
        let bit = if weight { 2 } else { 1 };
        self.lookup.get(name).is_some_and(|b| b & bit != 0)
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

impl SourceMap {
    /// As [`ir::Body::shrink_to_fit`]: the map lives as long as its body.
    pub fn shrink_to_fit(&mut self) {
        self.input_spans.shrink_to_fit();
        self.attr_spans.shrink_to_fit();
        self.defs.shrink_to_fit();
        self.refs.shrink_to_fit();
        self.ifs.shrink_to_fit();
        self.annotations.shrink_to_fit();
    }
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

const METAFUNCTIONS: &[&str] = &[
    "grad",
    "value_and_grad",
    "vjp",
    "jvp",
    "hvp",
    "vmap",
    "jacfwd",
    "jacrev",
    "hessian",
    "checkpoint",
];

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
    l.body.shrink_to_fit();
    l.map.shrink_to_fit();
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
                // A top-level graph's backward rule (spec §7): used by
                // the differentiation, not by the graph.
                Binding::Graph(g)
                    if name == "bprop" && self.body.graph(*g).parent == Some(self.body.root()) => {}
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
        // `_` discards: `(_, (h, _)) = lstm(...)` binds only `h`.
        if name == "_" {
            return;
        }
        let scope = self.scopes.last_mut().unwrap();
        if let Some((_, first)) = scope.bound.get(name) {
            let first = *first;
            self.error(
                Code::DuplicateName,
                range,
                format!("`{name}` is already bound in this graph"),
            )
            .related
            .push(Related::new(first, "first bound here"));
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
                .push(Related::new(first, "the graph returns here"));
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
        if name == "_" {
            self.error(
                Code::UndefinedName,
                range,
                "`_` discards the value bound to it: it cannot be read",
            );
            return None;
        }
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
                .push(Related::new(later, "bound here, later"));
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
        if let Some(d) = std_definition(name, range) {
            self.diagnostics.push(d);
            return None;
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
}

/// E0100 for a name the standard library defines: which file, and the
/// import that makes it visible (`nn.dense` asks for `as nn`).
fn std_definition(name: &str, range: TextRange) -> Option<Diagnostic> {
    let std = crate::modules::std_definitions();
    let (path, import) = match std.get(name) {
        Some(path) => (path, format!("import \"{path}\"")),
        None => {
            let (alias, item) = name.split_once('.')?;
            let path = std.get(item)?;
            (path, format!("import \"{path}\" as {alias}"))
        }
    };
    let mut d = Diagnostic::error(
        Code::UndefinedName,
        range,
        format!("`{name}` is not defined here; the standard library defines it in `{path}`"),
    )
    .with_help(Diagnostic::import_help(&import));
    d.missing_import = Some(import);
    Some(d)
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
        "vmap" => MetaFn::Vmap {
            in_axes: ir::BatchAxes::All(Some(0)),
            out_axes: ir::BatchAxes::All(Some(0)),
        },
        "jacfwd" => MetaFn::Jacfwd { wrt },
        "jacrev" => MetaFn::Jacrev { wrt },
        "hessian" => MetaFn::Hessian { wrt },
        "checkpoint" => MetaFn::Checkpoint,
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

mod calls;
mod weights;
pub use weights::*;
mod exprs;

#[cfg(test)]
mod tests {
    use super::*;

    /// Names are found by kind through the table; an index grown after it
    /// was built (as one with imported names is) is looked up by a scan.
    #[test]
    fn item_index_lookups() {
        let at = TextRange::default();
        let mut index = ItemIndex::new(
            vec![("f".into(), at), ("both".into(), at)],
            vec![("w".into(), at), ("both".into(), at)],
            Vec::new(),
        );
        assert!(index.is_graph("f") && !index.is_weight("f"));
        assert!(index.is_weight("w") && !index.is_graph("w"));
        assert!(index.is_graph("both") && index.is_weight("both"));
        assert!(!index.is_graph("g") && !index.is_weight("g"));
        index.graphs.push(("imported".into(), at));
        assert!(index.is_graph("imported") && !index.is_weight("imported"));
    }
}
