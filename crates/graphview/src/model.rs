//! The input of the layout: a plain node/edge list with clusters.
//!
//! [`crate::from_body`] builds one from a lowered `ir::Body`; anything else
//! (tests, other front ends) can build one by hand with the `add_*` methods.

use ir::TextRange;

/// What a node stands for; chooses its shape and CSS class.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NodeKind {
    /// A formal parameter, a weight, or a captured free variable.
    Param,
    /// A CNode (a call).
    CNode,
    /// A ValueNode shown on its own (a literal argument).
    Const,
    /// A graph used as a value (`@f`).
    GraphRef,
    /// A graph's output (`return`).
    Output,
}

impl NodeKind {
    pub fn as_str(self) -> &'static str {
        match self {
            NodeKind::Param => "param",
            NodeKind::CNode => "cnode",
            NodeKind::Const => "const",
            NodeKind::GraphRef => "graph-ref",
            NodeKind::Output => "output",
        }
    }
}

/// What kind of graph a cluster is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ClusterKind {
    /// A nested `graph NAME(...) { ... }` (or a generated one).
    Graph,
    /// The `true` branch of an `if`.
    Then,
    /// The `false` branch of an `if`.
    Else,
    /// `fn(x) => e`
    Lambda,
    /// The bindings that share a dotted name prefix (`layers._1.conv1.*`): a
    /// block of a model (a MindSpore cell, for imported models).
    Scope,
}

impl ClusterKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ClusterKind::Graph => "graph",
            ClusterKind::Then => "then",
            ClusterKind::Else => "else",
            ClusterKind::Lambda => "lambda",
            ClusterKind::Scope => "scope",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    /// Unique within the model; written as `data-node`.
    pub id: String,
    /// The text in the box (one line).
    pub label: String,
    /// The tooltip (`<title>`); the label when empty.
    pub title: String,
    pub kind: NodeKind,
    /// The innermost cluster holding the node; `None` is the top-level graph.
    pub cluster: Option<usize>,
    /// Where the node comes from in the source (byte offsets).
    pub span: Option<TextRange>,
}

/// One end of an edge: a node, or a whole cluster (a nested graph used as a value).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum End {
    Node(usize),
    Cluster(usize),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EdgeStyle {
    /// A value flowing from a definition to a use.
    Data,
    /// A graph used as a value, or a captured variable entering a closure.
    Ref,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Edge {
    pub from: End,
    pub to: End,
    /// Shown next to the edge (the inferred type of the value).
    pub label: Option<String>,
    pub style: EdgeStyle,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Cluster {
    /// Written as `data-graph` (the graph's name).
    pub id: String,
    pub label: String,
    pub kind: ClusterKind,
    pub parent: Option<usize>,
    pub span: Option<TextRange>,
}

/// A graph to lay out: nodes, edges, and nested clusters.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct GraphModel {
    /// The top-level graph's name (`data-graph` of the `<svg>`).
    pub name: String,
    pub nodes: Vec<Node>,
    pub edges: Vec<Edge>,
    pub clusters: Vec<Cluster>,
}

impl GraphModel {
    pub fn new(name: impl Into<String>) -> GraphModel {
        GraphModel {
            name: name.into(),
            ..GraphModel::default()
        }
    }

    pub fn add_node(
        &mut self,
        id: impl Into<String>,
        label: impl Into<String>,
        kind: NodeKind,
        cluster: Option<usize>,
    ) -> usize {
        self.nodes.push(Node {
            id: id.into(),
            label: label.into(),
            title: String::new(),
            kind,
            cluster,
            span: None,
        });
        self.nodes.len() - 1
    }

    pub fn add_cluster(
        &mut self,
        id: impl Into<String>,
        label: impl Into<String>,
        kind: ClusterKind,
        parent: Option<usize>,
    ) -> usize {
        self.clusters.push(Cluster {
            id: id.into(),
            label: label.into(),
            kind,
            parent,
            span: None,
        });
        self.clusters.len() - 1
    }

    pub fn add_edge(&mut self, from: usize, to: usize, label: Option<String>) {
        self.edges.push(Edge {
            from: End::Node(from),
            to: End::Node(to),
            label,
            style: EdgeStyle::Data,
        });
    }

    /// The clusters from `c` out to the top level: `[c, parent(c), ...]`.
    pub fn cluster_chain(&self, c: Option<usize>) -> Vec<usize> {
        let mut out = Vec::new();
        let mut cur = c;
        while let Some(i) = cur {
            out.push(i);
            cur = self.clusters[i].parent;
        }
        out
    }

    /// The cluster an edge end lives in (a cluster end lives in its parent).
    pub fn end_cluster(&self, e: End) -> Option<usize> {
        match e {
            End::Node(n) => self.nodes[n].cluster,
            End::Cluster(c) => self.clusters[c].parent,
        }
    }

    /// Every node's id with its source range, for click-to-source.
    pub fn node_spans(&self) -> Vec<(String, TextRange)> {
        self.nodes
            .iter()
            .filter_map(|n| n.span.map(|s| (n.id.clone(), s)))
            .collect()
    }
}
