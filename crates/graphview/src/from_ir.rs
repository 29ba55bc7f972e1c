//! Building a [`GraphModel`] from a lowered top-level graph (`ir::Body`).
//!
//! - Every FuncGraph nested in the top-level one (closures, `if` branches, lambdas)
//!   is a cluster; the top-level graph is the picture itself.
//! - Parameters, CNodes and one `return` node per graph are nodes. A CNode's callee,
//!   when it is a primitive, a top-level graph or a metafunction, is folded into the
//!   CNode's label (`c = Mul`) as in MindIR dumps; a nested graph as callee is drawn
//!   as a dashed edge from its cluster.
//! - A ValueNode or weight argument is a node in the graph of its use (one per graph
//!   that uses it).
//! - A free variable is a node at the top of the capturing cluster (`a ↑`), fed by
//!   the captured value from outside, so edges cross cluster borders only there.
//!
//! - Bindings whose dotted names share a prefix (`layers._1.conv1.relu`,
//!   `layers._1.conv1.conv2d`) are grouped in nested, collapsible scope clusters
//!   (`layers._1` > `layers._1.conv1`), as are weights named under them: the
//!   blocks of a model. A prefix only one node has makes no cluster.
//!
//! Node ids: `n<NodeId>` for a node in its own graph, `n<NodeId>.g<GraphId>` for a
//! copy of it in graph `GraphId` (a capture, or a constant used in several graphs),
//! `g<GraphId>.return` for outputs.

use std::collections::HashMap;

use ir::{Body, GraphId, GraphOrigin, NodeId, NodeKind as IrKind, Value};

use crate::model::{ClusterKind, Edge, EdgeStyle, End, GraphModel, NodeKind};

/// The id [`from_body`] gives IR node `id` in its own graph.
pub fn node_key(id: NodeId) -> String {
    format!("n{}", id.0)
}

struct Builder<'a> {
    body: &'a Body,
    type_of: &'a dyn Fn(NodeId) -> Option<String>,
    m: GraphModel,
    clusters: HashMap<GraphId, usize>,
    /// (IR node, graph it is shown in) -> model node.
    shown: HashMap<(NodeId, GraphId), usize>,
    /// Constants and weights already shown somewhere (a later graph gets a copy).
    placed_once: HashMap<NodeId, ()>,
    /// Scope clusters by (graph, dotted prefix).
    scopes: HashMap<(GraphId, String), usize>,
    /// How many nodes of each graph have a name under each prefix.
    prefix_counts: HashMap<(GraphId, String), usize>,
}

/// The dotted prefixes of a name, shortest first: `a.b.c` gives `a`, `a.b`.
fn prefixes(name: &str) -> Vec<String> {
    let parts: Vec<&str> = name.split('.').collect();
    (1..parts.len()).map(|k| parts[..k].join(".")).collect()
}

/// The picture of one top-level graph with everything nested in it. `type_of`
/// gives the inferred type of a node's value, written on its outgoing edges.
pub fn from_body(body: &Body, type_of: &dyn Fn(NodeId) -> Option<String>) -> GraphModel {
    let root = body.root();
    let name = body
        .graphs
        .first()
        .map(|g| g.name.clone())
        .unwrap_or_default();
    let mut b = Builder {
        body,
        type_of,
        m: GraphModel::new(name),
        clusters: HashMap::new(),
        shown: HashMap::new(),
        placed_once: HashMap::new(),
        scopes: HashMap::new(),
        prefix_counts: HashMap::new(),
    };
    if body.graphs.is_empty() {
        return b.m;
    }
    for g in body.graph_ids() {
        for &n in &body.graph(g).nodes {
            if let Some(name) = &body.node(n).name {
                for p in prefixes(name) {
                    *b.prefix_counts.entry((g, p)).or_default() += 1;
                }
            }
        }
    }
    for g in body.graph_ids() {
        if g != root {
            b.cluster(g);
        }
    }
    for g in body.graph_ids() {
        b.graph(g);
    }
    b.m
}

fn value_text(body: &Body, v: &Value) -> String {
    match v {
        Value::Scalar { value, .. } => value.to_string(),
        Value::Str(s) => format!("{s:?}"),
        Value::None => "none".into(),
        Value::Tuple(items) => {
            let inner: Vec<String> = items.iter().map(|i| value_text(body, i)).collect();
            if items.len() == 1 {
                format!("({},)", inner[0])
            } else {
                format!("({})", inner.join(", "))
            }
        }
        Value::Tensor(t) => format!("{}{:?}", t.dtype(), t.shape()),
        Value::Prim(p) => p.name.clone(),
        Value::Graph(g) => format!("@{}", body.graph(*g).name),
        Value::Global(name) => format!("@{name}"),
        Value::Meta(m) => m.name().to_string(),
        Value::Type(t) => t.to_string(),
        Value::Monad => "U".into(),
    }
}

impl Builder<'_> {
    fn cluster_of(&self, g: GraphId) -> Option<usize> {
        self.clusters.get(&g).copied()
    }

    fn cluster(&mut self, g: GraphId) -> Option<usize> {
        if g == self.body.root() {
            return None;
        }
        if let Some(&c) = self.clusters.get(&g) {
            return Some(c);
        }
        let fg = self.body.graph(g);
        let parent = fg.parent.and_then(|p| self.cluster(p));
        let params: Vec<String> = fg
            .params
            .iter()
            .map(|&p| self.body.node(p).name.clone().unwrap_or_else(|| "_".into()))
            .collect();
        let (kind, label) = match fg.origin {
            GraphOrigin::Then => (ClusterKind::Then, format!("then  {}", fg.name)),
            GraphOrigin::Else => (ClusterKind::Else, format!("else  {}", fg.name)),
            GraphOrigin::Lambda => (
                ClusterKind::Lambda,
                format!("fn {}({})", fg.name, params.join(", ")),
            ),
            GraphOrigin::Named | GraphOrigin::Generated => (
                ClusterKind::Graph,
                format!("graph {}({})", fg.name, params.join(", ")),
            ),
        };
        let c = self.m.add_cluster(fg.name.clone(), label, kind, parent);
        self.m.clusters[c].span = fg.span;
        self.clusters.insert(g, c);
        Some(c)
    }

    /// The innermost scope cluster of graph `g` for a node named `name` (the
    /// graph's own cluster when no prefix of the name groups several nodes).
    fn scope_cluster(&mut self, g: GraphId, name: Option<&str>) -> Option<usize> {
        let mut cluster = self.cluster_of(g);
        let Some(name) = name else { return cluster };
        for p in prefixes(name) {
            if self
                .prefix_counts
                .get(&(g, p.clone()))
                .copied()
                .unwrap_or(0)
                < 2
            {
                break;
            }
            cluster = Some(match self.scopes.get(&(g, p.clone())) {
                Some(&c) => c,
                None => {
                    let id = format!("g{}.{p}", g.0);
                    let c = self
                        .m
                        .add_cluster(id, p.clone(), ClusterKind::Scope, cluster);
                    self.scopes.insert((g, p), c);
                    c
                }
            });
        }
        cluster
    }

    fn ty(&self, id: NodeId) -> Option<String> {
        (self.type_of)(id)
    }

    fn titled(&self, text: String, id: NodeId) -> String {
        match self.ty(id) {
            Some(t) => format!("{text} : {t}"),
            None => text,
        }
    }

    fn graph(&mut self, g: GraphId) {
        let body = self.body;
        let fg = body.graph(g);
        let cluster = self.cluster_of(g);
        for &p in &fg.params {
            let name = body.node(p).name.clone().unwrap_or_else(|| "_".into());
            let i = self
                .m
                .add_node(node_key(p), name.clone(), NodeKind::Param, cluster);
            self.m.nodes[i].title = self.titled(format!("parameter {name}"), p);
            self.m.nodes[i].span = body.node(p).span;
            self.shown.insert((p, g), i);
        }
        for &n in &fg.nodes {
            let inputs = body.inputs(n);
            let (callee_text, callee_edge, args) = match inputs.split_first() {
                None => ("?".to_string(), None, &[][..]),
                Some((&callee, args)) => match &body.node(callee).kind {
                    IrKind::Const(Value::Prim(p)) => {
                        let mut t = p.name.clone();
                        if !p.attrs.is_empty() {
                            let a: Vec<String> =
                                p.attrs.iter().map(|(k, v)| format!("{k}={v}")).collect();
                            t = format!("{t}[{}]", a.join(", "));
                        }
                        (t, None, args)
                    }
                    IrKind::Const(Value::Global(name)) => (name.clone(), None, args),
                    IrKind::Const(Value::Meta(m)) => (m.name().to_string(), None, args),
                    IrKind::Const(Value::Graph(h)) => {
                        let edge = if body.is_within(g, *h) {
                            None
                        } else {
                            self.cluster_of(*h).map(End::Cluster)
                        };
                        (body.graph(*h).name.clone(), edge, args)
                    }
                    _ => {
                        let name = body
                            .node(callee)
                            .name
                            .clone()
                            .unwrap_or_else(|| "fn".into());
                        let e = self.visual(callee, g);
                        (format!("call {name}"), Some(End::Node(e)), args)
                    }
                },
            };
            let arg_nodes: Vec<usize> = args.iter().map(|&a| self.visual(a, g)).collect();
            let label = match &body.node(n).name {
                Some(name) => format!("{name} = {callee_text}"),
                None => callee_text.clone(),
            };
            let i = match self.shown.get(&(n, g)) {
                // Used (out of order) before this point: complete that node.
                Some(&i) => {
                    self.m.nodes[i].label = label.clone();
                    i
                }
                None => {
                    let scope = self.scope_cluster(g, body.node(n).name.as_deref());
                    self.m
                        .add_node(node_key(n), label.clone(), NodeKind::CNode, scope)
                }
            };
            self.m.nodes[i].title = self.titled(label, n);
            self.m.nodes[i].span = body.node(n).span;
            self.shown.insert((n, g), i);
            if let Some(from) = callee_edge {
                let label = match (from, inputs.first()) {
                    (End::Node(_), Some(&c)) => self.ty(c),
                    _ => None,
                };
                self.m.edges.push(Edge {
                    from,
                    to: End::Node(i),
                    label,
                    style: EdgeStyle::Ref,
                });
            }
            for (&a, &v) in args.iter().zip(&arg_nodes) {
                let label = self.ty(a);
                self.m.add_edge(v, i, label);
            }
        }
        if let Some(o) = fg.output {
            let v = self.visual(o, g);
            let id = format!("g{}.return", g.0);
            let i = self.m.add_node(id, "return", NodeKind::Output, cluster);
            self.m.nodes[i].title = self.titled(format!("return of {}", fg.name), o);
            self.m.nodes[i].span = body.node(o).span;
            let label = self.ty(o);
            self.m.add_edge(v, i, label);
        }
    }

    /// The model node standing for IR node `id` when used in graph `g`.
    fn visual(&mut self, id: NodeId, g: GraphId) -> usize {
        if let Some(&i) = self.shown.get(&(id, g)) {
            return i;
        }
        let body = self.body;
        let node = body.node(id);
        let cluster = self.cluster_of(g);
        let i = match (&node.kind, node.graph) {
            (IrKind::Param { .. } | IrKind::Apply(_), Some(owner)) if owner != g => {
                // A free variable: captured at the top of `g`, fed from the parent.
                let parent = body.graph(g).parent;
                if !body.is_within(g, owner) || parent.is_none() {
                    // Not an enclosing graph's node: point at it wherever it is.
                    return self.visual(id, owner);
                }
                let name = node.name.clone().unwrap_or_else(|| format!("%{}", id.0));
                let i = self.m.add_node(
                    format!("n{}.g{}", id.0, g.0),
                    format!("{name} ↑"),
                    NodeKind::Param,
                    cluster,
                );
                self.m.nodes[i].title = self.titled(
                    format!("{name}, captured from {}", body.graph(owner).name),
                    id,
                );
                self.m.nodes[i].span = node.span;
                self.shown.insert((id, g), i);
                let outer = self.visual(id, parent.unwrap());
                let label = self.ty(id);
                self.m.edges.push(Edge {
                    from: End::Node(outer),
                    to: End::Node(i),
                    label,
                    style: EdgeStyle::Ref,
                });
                return i;
            }
            (IrKind::Param { .. } | IrKind::Apply(_), _) => {
                // Its own graph's node, used before it is shown (or an orphan).
                let label = node.name.clone().unwrap_or_else(|| format!("%{}", id.0));
                self.m
                    .add_node(node_key(id), label, NodeKind::CNode, cluster)
            }
            (IrKind::Weight(name), _) => {
                let key = self.copy_key(id, g);
                let scope = self.scope_cluster(g, Some(name));
                let i = self.m.add_node(key, name.clone(), NodeKind::Param, scope);
                self.m.nodes[i].title = self.titled(format!("weight {name}"), id);
                i
            }
            (IrKind::Const(v), _) => {
                let key = self.copy_key(id, g);
                let text = value_text(body, v);
                let kind = match v {
                    Value::Graph(_) | Value::Global(_) => NodeKind::GraphRef,
                    _ => NodeKind::Const,
                };
                let i = self.m.add_node(key, text.clone(), kind, cluster);
                self.m.nodes[i].title = self.titled(format!("constant {text}"), id);
                if let Value::Graph(h) = v {
                    if !body.is_within(g, *h) {
                        if let Some(c) = self.cluster_of(*h) {
                            self.m.edges.push(Edge {
                                from: End::Cluster(c),
                                to: End::Node(i),
                                label: None,
                                style: EdgeStyle::Ref,
                            });
                        }
                    }
                }
                i
            }
        };
        self.m.nodes[i].span = node.span;
        self.shown.insert((id, g), i);
        i
    }

    fn copy_key(&mut self, id: NodeId, g: GraphId) -> String {
        if self.placed_once.insert(id, ()).is_none() {
            node_key(id)
        } else {
            format!("n{}.g{}", id.0, g.0)
        }
    }
}
