//! FuncGraphs and ANF nodes.
//!
//! A [`Body`] holds one top-level graph with every graph nested in it (closures,
//! `if` branches, lambdas): the unit that is lowered, inferred and differentiated
//! on its own. Other top-level graphs are referred to by name
//! ([`Value::Global`]), so an edit to one graph leaves the others' bodies alone.

use std::collections::{HashMap, HashSet};

use text_size::TextRange;

use crate::ty::Ty;
use crate::value::{PrimRef, Value};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodeId(pub u32);

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct GraphId(pub u32);

/// How a graph came to be; the printers use it to choose names and layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GraphOrigin {
    /// `graph NAME(...) { ... }`
    Named,
    /// The `true` branch of an `if`.
    Then,
    /// The `false` branch of an `if`.
    Else,
    /// `fn(x) => e`
    Lambda,
    /// Made by a transformation (autodiff, inlining).
    Generated,
}

/// A FuncGraph: parameters, the CNodes it owns in evaluation order, and its output.
#[derive(Debug, Clone, PartialEq)]
pub struct FuncGraph {
    pub name: String,
    pub parent: Option<GraphId>,
    pub params: Vec<NodeId>,
    /// CNodes owned by this graph, in the order the source binds them.
    pub nodes: Vec<NodeId>,
    /// The returned value (the input of MindIR's `Return`).
    pub output: Option<NodeId>,
    pub ret_annotation: Option<(Ty, TextRange)>,
    pub origin: GraphOrigin,
    /// The whole graph's source range, and its name's.
    pub span: Option<TextRange>,
    pub name_span: Option<TextRange>,
}

/// What a node is.
#[derive(Debug, Clone, PartialEq)]
pub enum NodeKind {
    /// A formal parameter of its graph, by position.
    Param { index: usize },
    /// A top-level weight (a MindIR Parameter with a default value), by name.
    Weight(String),
    /// A CNode: `inputs[0]` is the callee, the rest are the arguments.
    Apply(Vec<NodeId>),
    /// A ValueNode.
    Const(Value),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    pub kind: NodeKind,
    /// The graph that owns the node; `None` for ValueNodes and weights, which
    /// belong to no graph.
    pub graph: Option<GraphId>,
    pub span: Option<TextRange>,
    /// The source name bound to the node, if any.
    pub name: Option<String>,
    /// A type annotation on the binding or parameter, and where it was written.
    pub annotation: Option<(Ty, TextRange)>,
}

/// One top-level graph with its nested graphs.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Body {
    pub graphs: Vec<FuncGraph>,
    pub nodes: Vec<Node>,
}

impl Body {
    /// The top-level graph (always the first one made).
    pub fn root(&self) -> GraphId {
        GraphId(0)
    }

    pub fn graph(&self, id: GraphId) -> &FuncGraph {
        &self.graphs[id.0 as usize]
    }

    pub fn graph_mut(&mut self, id: GraphId) -> &mut FuncGraph {
        &mut self.graphs[id.0 as usize]
    }

    pub fn node(&self, id: NodeId) -> &Node {
        &self.nodes[id.0 as usize]
    }

    pub fn node_mut(&mut self, id: NodeId) -> &mut Node {
        &mut self.nodes[id.0 as usize]
    }

    /// Gives back the room its vectors grew into: a lowered body is kept
    /// (in the database, per graph) far longer than it took to build.
    pub fn shrink_to_fit(&mut self) {
        self.nodes.shrink_to_fit();
        for node in &mut self.nodes {
            if let NodeKind::Apply(inputs) = &mut node.kind {
                inputs.shrink_to_fit();
            }
        }
        self.graphs.shrink_to_fit();
        for graph in &mut self.graphs {
            graph.nodes.shrink_to_fit();
            graph.params.shrink_to_fit();
        }
    }

    pub fn graph_ids(&self) -> impl Iterator<Item = GraphId> {
        (0..self.graphs.len() as u32).map(GraphId)
    }

    pub fn add_graph(
        &mut self,
        name: impl Into<String>,
        parent: Option<GraphId>,
        origin: GraphOrigin,
    ) -> GraphId {
        let id = GraphId(self.graphs.len() as u32);
        self.graphs.push(FuncGraph {
            name: name.into(),
            parent,
            params: Vec::new(),
            nodes: Vec::new(),
            output: None,
            ret_annotation: None,
            origin,
            span: None,
            name_span: None,
        });
        id
    }

    fn push_node(
        &mut self,
        kind: NodeKind,
        graph: Option<GraphId>,
        span: Option<TextRange>,
    ) -> NodeId {
        let id = NodeId(self.nodes.len() as u32);
        self.nodes.push(Node {
            kind,
            graph,
            span,
            name: None,
            annotation: None,
        });
        id
    }

    pub fn add_param(
        &mut self,
        graph: GraphId,
        name: impl Into<String>,
        span: Option<TextRange>,
    ) -> NodeId {
        let index = self.graph(graph).params.len();
        let id = self.push_node(NodeKind::Param { index }, Some(graph), span);
        self.node_mut(id).name = Some(name.into());
        self.graph_mut(graph).params.push(id);
        id
    }

    /// Adds a CNode to `graph`, after the ones it already has.
    pub fn add_apply(
        &mut self,
        graph: GraphId,
        inputs: Vec<NodeId>,
        span: Option<TextRange>,
    ) -> NodeId {
        let id = self.push_node(NodeKind::Apply(inputs), Some(graph), span);
        self.graph_mut(graph).nodes.push(id);
        id
    }

    pub fn add_const(&mut self, value: Value, span: Option<TextRange>) -> NodeId {
        self.push_node(NodeKind::Const(value), None, span)
    }

    pub fn add_weight(&mut self, name: impl Into<String>, span: Option<TextRange>) -> NodeId {
        self.push_node(NodeKind::Weight(name.into()), None, span)
    }

    /// A call of primitive `prim` on `args`.
    pub fn add_prim_call(
        &mut self,
        graph: GraphId,
        prim: PrimRef,
        args: &[NodeId],
        span: Option<TextRange>,
    ) -> NodeId {
        let callee = self.add_const(Value::Prim(prim), span);
        let mut inputs = Vec::with_capacity(args.len() + 1);
        inputs.push(callee);
        inputs.extend_from_slice(args);
        self.add_apply(graph, inputs, span)
    }

    pub fn inputs(&self, id: NodeId) -> &[NodeId] {
        match &self.node(id).kind {
            NodeKind::Apply(inputs) => inputs,
            _ => &[],
        }
    }

    /// The primitive a CNode calls directly, if its callee is a primitive constant.
    pub fn called_prim(&self, id: NodeId) -> Option<&PrimRef> {
        let callee = *self.inputs(id).first()?;
        match &self.node(callee).kind {
            NodeKind::Const(Value::Prim(p)) => Some(p),
            _ => None,
        }
    }

    /// Whether `inner` is `outer` or nested (at any depth) in it.
    pub fn is_within(&self, inner: GraphId, outer: GraphId) -> bool {
        let mut g = Some(inner);
        while let Some(id) = g {
            if id == outer {
                return true;
            }
            g = self.graph(id).parent;
        }
        false
    }

    /// Graphs directly nested in `graph`.
    pub fn children(&self, graph: GraphId) -> Vec<GraphId> {
        self.graph_ids()
            .filter(|&g| self.graph(g).parent == Some(graph))
            .collect()
    }

    /// The nodes `graph` (or a graph nested in it) uses that belong to an
    /// enclosing graph: its free variables, captured by value when a closure of
    /// it is made. In first-use order.
    pub fn free_variables(&self, graph: GraphId) -> Vec<NodeId> {
        let mut seen = HashSet::new();
        let mut out = Vec::new();
        for g in self.graph_ids().filter(|&g| self.is_within(g, graph)) {
            let uses = self
                .graph(g)
                .nodes
                .iter()
                .flat_map(|&n| self.inputs(n).iter().copied());
            for used in uses.chain(self.graph(g).output) {
                if let Some(owner) = self.node(used).graph {
                    if !self.is_within(owner, graph) && seen.insert(used) {
                        out.push(used);
                    }
                }
            }
        }
        out
    }

    /// For every node, the CNodes that use it (graph outputs are not listed).
    pub fn users(&self) -> HashMap<NodeId, Vec<NodeId>> {
        let mut users: HashMap<NodeId, Vec<NodeId>> = HashMap::new();
        for g in &self.graphs {
            for &n in &g.nodes {
                for &input in self.inputs(n) {
                    users.entry(input).or_default().push(n);
                }
            }
        }
        users
    }

    /// The nested graphs referred to as values from `graph`'s nodes.
    pub fn graph_constants_used_by(&self, graph: GraphId) -> Vec<GraphId> {
        let mut out = Vec::new();
        let g = self.graph(graph);
        for &n in &g.nodes {
            for &i in self.inputs(n) {
                if let NodeKind::Const(Value::Graph(h)) = &self.node(i).kind {
                    if !out.contains(h) {
                        out.push(*h);
                    }
                }
            }
        }
        if let Some(o) = g.output {
            if let NodeKind::Const(Value::Graph(h)) = &self.node(o).kind {
                if !out.contains(h) {
                    out.push(*h);
                }
            }
        }
        out
    }
}

/// How a weight gets its value (spec §2).
#[derive(Debug, Clone, PartialEq)]
pub enum WeightInit {
    Zeros,
    Ones,
    Constant(f64),
    Normal {
        mean: f64,
        std: f64,
        seed: u64,
    },
    Uniform {
        low: f64,
        high: f64,
        seed: u64,
    },
    Tensor(std::sync::Arc<tensor::Tensor>),
    /// `load("PATH")` or `load("PATH", "KEY")`, the path relative to the `.mir` file.
    Load {
        path: String,
        key: Option<String>,
    },
}

/// `param NAME: TYPE = INIT`
#[derive(Debug, Clone, PartialEq)]
pub struct WeightDef {
    pub name: String,
    pub ty: Ty,
    pub init: WeightInit,
    pub span: Option<TextRange>,
    pub name_span: Option<TextRange>,
}

/// A whole file's graphs and weights, in source order.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Program {
    pub graphs: Vec<(String, std::sync::Arc<Body>)>,
    pub weights: Vec<WeightDef>,
}

impl Program {
    pub fn graph(&self, name: &str) -> Option<&std::sync::Arc<Body>> {
        self.graphs.iter().find(|(n, _)| n == name).map(|(_, b)| b)
    }

    pub fn weight(&self, name: &str) -> Option<&WeightDef> {
        self.weights.iter().find(|w| w.name == name)
    }
}
