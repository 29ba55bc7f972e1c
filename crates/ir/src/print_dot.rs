//! Printing IR as Graphviz DOT, in the style of MindSpore's `.dot` dumps.
//!
//! Each FuncGraph is a cluster (a nested graph is a cluster inside its parent's);
//! parameters are octagons, each CNode is a table whose top row has one port
//! per input (`i0` the callee, `i1`... the arguments; constant arguments are
//! written in their cell) and whose body names the primitive or callee, the
//! node and its inferred type. Each cluster ends in its `Return` node. Data
//! edges run from a value to the input port that uses it; a graph used as a
//! value is a ValueNode with a dashed edge to its graph's cluster. Top-level
//! weights are grey octagons outside every cluster.
//!
//! Identifiers are stable and map back to the IR (the language server maps
//! clicks on an SVG rendering back to source): a node is `ITEM:nID` (`ID` its
//! [`NodeId`] in the body of the top-level graph `ITEM`), a graph's cluster is
//! `cluster_ITEM:gID` with `id` `ITEM:gID`, a graph's return node is
//! `ITEM:gID:return`, a weight is `weight:NAME`. [`parse_id`] reads them back.
//! Graphviz copies each `id` into the SVG it renders.

use std::collections::{HashMap, HashSet};
use std::fmt::Write;

use crate::abs::AbsVal;
use crate::graph::{Body, GraphId, GraphOrigin, NodeId, NodeKind, Program};
use crate::print_ms::{attr_text, const_abstract};
use crate::value::{MetaFn, ScalarConst, Value};

/// What a DOT identifier printed by this module refers to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DotRef {
    /// A node of the body of top-level graph `item`.
    Node { item: String, node: NodeId },
    /// A graph (its cluster) of the body of `item`.
    Graph { item: String, graph: GraphId },
    /// The `Return` of a graph.
    Return { item: String, graph: GraphId },
    /// A top-level weight.
    Weight(String),
}

/// The DOT id of a node.
pub fn node_id(item: &str, node: NodeId) -> String {
    format!("{item}:n{}", node.0)
}

/// The DOT id of a graph's cluster (`id` attribute; the cluster's name is
/// `cluster_` followed by it).
pub fn graph_id(item: &str, graph: GraphId) -> String {
    format!("{item}:g{}", graph.0)
}

/// Reads back an id printed by this module (an SVG element's `id`).
pub fn parse_id(id: &str) -> Option<DotRef> {
    let id = id.strip_prefix("cluster_").unwrap_or(id);
    if let Some(name) = id.strip_prefix("weight:") {
        return Some(DotRef::Weight(name.to_string()));
    }
    if let Some(rest) = id.strip_suffix(":return") {
        let (item, g) = rest.rsplit_once(":g")?;
        return Some(DotRef::Return {
            item: item.to_string(),
            graph: GraphId(g.parse().ok()?),
        });
    }
    let (item, tail) = id.rsplit_once(':')?;
    if let Some(n) = tail.strip_prefix('n') {
        return Some(DotRef::Node {
            item: item.to_string(),
            node: NodeId(n.parse().ok()?),
        });
    }
    let g = tail.strip_prefix('g')?;
    Some(DotRef::Graph {
        item: item.to_string(),
        graph: GraphId(g.parse().ok()?),
    })
}

/// The whole program as one DOT digraph. `types(item, node)` gives the
/// inferred abstract value of `node` in the top-level graph `item`'s body.
pub fn print_program(program: &Program, types: &dyn Fn(&str, NodeId) -> Option<AbsVal>) -> String {
    let mut out = String::new();
    out.push_str("digraph mindspore {\n");
    out.push_str("  compound=true\n");
    out.push_str("  fontname=\"Courier New\"\n");
    out.push_str("  node [fontname=\"Courier New\" fontsize=10]\n");
    out.push_str("  edge [fontname=\"Courier New\" fontsize=9]\n");
    let weights_used: HashSet<&str> = program
        .graphs
        .iter()
        .flat_map(|(_, b)| b.nodes.iter())
        .filter_map(|n| match &n.kind {
            NodeKind::Weight(name) => Some(name.as_str()),
            _ => None,
        })
        .collect();
    for w in &program.weights {
        let id = format!("weight:{}", w.name);
        let _ = writeln!(
            out,
            "  {} [id={} shape=octagon style=filled fillcolor=\"#e8e8e8\" label={}]",
            quote(&id),
            quote(&id),
            quote(&format!("{}\n{}", w.name, w.ty))
        );
    }
    for name in weights_used {
        if program.weight(name).is_none() {
            let id = format!("weight:{name}");
            let _ = writeln!(
                out,
                "  {} [id={} shape=octagon label={}]",
                quote(&id),
                quote(&id),
                quote(name)
            );
        }
    }
    let printed: HashSet<&str> = program.graphs.iter().map(|(n, _)| n.as_str()).collect();
    for (item, body) in &program.graphs {
        let mut p = DotPrinter {
            item,
            body,
            types,
            printed: &printed,
            edges: Vec::new(),
            out: String::new(),
            const_owner: HashMap::new(),
        };
        p.assign_consts();
        p.cluster(body.root(), 1);
        out.push_str(&p.out);
        for e in &p.edges {
            let _ = writeln!(out, "  {e}");
        }
    }
    out.push_str("}\n");
    out
}

struct DotPrinter<'a> {
    item: &'a str,
    body: &'a Body,
    types: &'a dyn Fn(&str, NodeId) -> Option<AbsVal>,
    printed: &'a HashSet<&'a str>,
    edges: Vec<String>,
    out: String,
    /// The graph in whose cluster each graph-valued ValueNode is drawn.
    const_owner: HashMap<NodeId, GraphId>,
}

impl DotPrinter<'_> {
    fn id(&self, n: NodeId) -> String {
        node_id(self.item, n)
    }

    fn ret_id(&self, g: GraphId) -> String {
        format!("{}:return", graph_id(self.item, g))
    }

    fn ty(&self, n: NodeId) -> Option<AbsVal> {
        (self.types)(self.item, n).or_else(|| match &self.body.node(n).kind {
            NodeKind::Const(v) => Some(const_abstract(v)),
            _ => self
                .body
                .node(n)
                .annotation
                .as_ref()
                .map(|(t, _)| AbsVal::from_ty(t)),
        })
    }

    /// Graph-valued ValueNodes are drawn as nodes, in the cluster of the first
    /// graph that uses them.
    fn assign_consts(&mut self) {
        for g in self.body.graph_ids() {
            let graph = self.body.graph(g);
            let uses = graph
                .nodes
                .iter()
                .flat_map(|&n| self.body.inputs(n).iter().copied())
                .chain(graph.output);
            for u in uses {
                if let NodeKind::Const(Value::Graph(_) | Value::Global(_)) = &self.body.node(u).kind
                {
                    self.const_owner.entry(u).or_insert(g);
                }
            }
        }
    }

    /// Where an edge from node `n` starts (weights are shared across bodies).
    fn source(&self, n: NodeId) -> Option<String> {
        match &self.body.node(n).kind {
            NodeKind::Weight(name) => Some(quote(&format!("weight:{name}"))),
            NodeKind::Const(Value::Graph(_) | Value::Global(_)) => Some(quote(&self.id(n))),
            NodeKind::Const(_) => None,
            _ => Some(quote(&self.id(n))),
        }
    }

    fn graph_label(&self, g: GraphId) -> String {
        let graph = self.body.graph(g);
        match graph.origin {
            GraphOrigin::Then => format!("{} (then)", graph.name),
            GraphOrigin::Else => format!("{} (else)", graph.name),
            GraphOrigin::Lambda => format!("{} (lambda)", graph.name),
            _ => graph.name.clone(),
        }
    }

    fn cluster(&mut self, g: GraphId, depth: usize) {
        let indent = "  ".repeat(depth);
        let graph = self.body.graph(g);
        let gid = graph_id(self.item, g);
        let _ = writeln!(
            self.out,
            "{indent}subgraph {} {{",
            quote(&format!("cluster_{gid}"))
        );
        let _ = writeln!(self.out, "{indent}  id={}", quote(&gid));
        let _ = writeln!(self.out, "{indent}  label={}", quote(&self.graph_label(g)));
        let _ = writeln!(self.out, "{indent}  style=rounded");
        for &p in &graph.params {
            let name = self.body.node(p).name.clone().unwrap_or_default();
            let label = match self.ty(p) {
                Some(t) if t != AbsVal::Any => format!("{name}\n{t}"),
                _ => name,
            };
            let _ = writeln!(
                self.out,
                "{indent}  {} [id={} shape=octagon label={}]",
                quote(&self.id(p)),
                quote(&self.id(p)),
                quote(&label)
            );
        }
        let consts: Vec<NodeId> = {
            let mut v: Vec<NodeId> = self
                .const_owner
                .iter()
                .filter(|(_, &o)| o == g)
                .map(|(&n, _)| n)
                .collect();
            v.sort();
            v
        };
        for c in consts {
            let (label, target) = match &self.body.node(c).kind {
                NodeKind::Const(Value::Graph(h)) => (
                    format!("@{}", self.body.graph(*h).name),
                    Some((
                        self.ret_id(*h),
                        format!("cluster_{}", graph_id(self.item, *h)),
                        *h,
                    )),
                ),
                NodeKind::Const(Value::Global(name)) => (
                    format!("@{name}"),
                    self.printed.contains(name.as_str()).then(|| {
                        (
                            format!("{}:return", graph_id(name, GraphId(0))),
                            format!("cluster_{}", graph_id(name, GraphId(0))),
                            // Recursion through the top-level name: the
                            // ValueNode is inside the target cluster.
                            if name == self.item {
                                GraphId(0)
                            } else {
                                GraphId(u32::MAX)
                            },
                        )
                    }),
                ),
                _ => continue,
            };
            let _ = writeln!(
                self.out,
                "{indent}  {} [id={} shape=ellipse style=dashed label={}]",
                quote(&self.id(c)),
                quote(&self.id(c)),
                quote(&label)
            );
            if let Some((ret, cluster, h)) = target {
                // `lhead` clips the edge at the cluster; Graphviz refuses it
                // when the ValueNode sits inside that cluster (recursion).
                let inside = h != GraphId(u32::MAX) && self.body.is_within(g, h);
                let lhead = if inside {
                    String::new()
                } else {
                    format!(" lhead={}", quote(&cluster))
                };
                self.edges.push(format!(
                    "{} -> {} [style=dashed arrowhead=empty{lhead}]",
                    quote(&self.id(c)),
                    quote(&ret)
                ));
            }
        }
        let nodes = graph.nodes.clone();
        self.scoped_cnodes(&gid, &nodes, &indent);
        // The Return node.
        let ret = self.ret_id(g);
        let ret_label = match graph.output {
            Some(o) => match &self.body.node(o).kind {
                NodeKind::Const(v) if self.source(o).is_none() => {
                    format!("Return({})", const_text(v))
                }
                _ => "Return".to_string(),
            },
            None => "Return(None)".to_string(),
        };
        let _ = writeln!(
            self.out,
            "{indent}  {} [id={} shape=box style=\"rounded,filled\" fillcolor=\"#f4e3c1\" label={}]",
            quote(&ret),
            quote(&ret),
            quote(&ret_label)
        );
        if let Some(o) = graph.output {
            if let Some(src) = self.source(o) {
                self.edges.push(format!("{src} -> {}", quote(&ret)));
            }
        }
        for child in self.body.children(g) {
            self.cluster(child, depth + 1);
        }
        let _ = writeln!(self.out, "{indent}}}");
    }

    /// A graph's CNodes, those whose dotted names share a prefix (a block of
    /// a model: `layers._1.conv1.*`) in nested `class="scope"` clusters.
    fn scoped_cnodes(&mut self, gid: &str, nodes: &[NodeId], indent: &str) {
        let mut counts: std::collections::HashMap<String, usize> = Default::default();
        for &n in nodes {
            for p in name_prefixes(self.body.node(n).name.as_deref()) {
                *counts.entry(p).or_default() += 1;
            }
        }
        // Each node's scope: its longest prefix that groups several nodes.
        let scope_of = |n: NodeId| -> String {
            name_prefixes(self.body.node(n).name.as_deref())
                .into_iter()
                .take_while(|p| counts.get(p).copied().unwrap_or(0) >= 2)
                .last()
                .unwrap_or_default()
        };
        let scopes: Vec<(NodeId, String)> = nodes.iter().map(|&n| (n, scope_of(n))).collect();
        self.emit_scope(gid, "", &scopes, &counts, indent);
    }

    fn emit_scope(
        &mut self,
        gid: &str,
        scope: &str,
        scopes: &[(NodeId, String)],
        counts: &std::collections::HashMap<String, usize>,
        indent: &str,
    ) {
        let mut children: Vec<String> = Vec::new();
        for (n, s) in scopes {
            if s == scope {
                self.cnode(*n, indent);
                continue;
            }
            // The child scope of `scope` on the way to `s`.
            let inside = scope.is_empty() || s.starts_with(&format!("{scope}."));
            if !inside {
                continue;
            }
            let child = name_prefixes(Some(s.as_str()))
                .into_iter()
                .chain(std::iter::once(s.clone()))
                .find(|p| {
                    p.len() > scope.len()
                        && counts.get(p).copied().unwrap_or(0) >= 2
                        && (scope.is_empty() || p.starts_with(&format!("{scope}.")))
                })
                .unwrap_or_else(|| s.clone());
            if !children.contains(&child) {
                children.push(child);
            }
        }
        for child in children {
            let id = format!("{gid}/{child}");
            let _ = writeln!(
                self.out,
                "{indent}  subgraph {} {{",
                quote(&format!("cluster_{id}"))
            );
            let _ = writeln!(self.out, "{indent}    id={}", quote(&id));
            let _ = writeln!(self.out, "{indent}    class=\"scope\"");
            let _ = writeln!(self.out, "{indent}    label={}", quote(&child));
            let _ = writeln!(self.out, "{indent}    style=dashed");
            let inner = format!("{indent}  ");
            self.emit_scope(gid, &child, scopes, counts, &inner);
            let _ = writeln!(self.out, "{indent}  }}");
        }
    }

    fn cnode(&mut self, n: NodeId, indent: &str) {
        let inputs = self.body.inputs(n).to_vec();
        let Some((&callee, args)) = inputs.split_first() else {
            return;
        };
        let mut head = String::new();
        let mut attrs = Vec::new();
        let callee_port = match &self.body.node(callee).kind {
            NodeKind::Const(Value::Prim(p)) => {
                head = p.name.clone();
                attrs = p
                    .attrs
                    .iter()
                    .map(|(k, v)| format!("{k}={}", attr_text(v)))
                    .collect();
                false
            }
            NodeKind::Const(Value::Meta(m)) => {
                head = meta_name(m);
                false
            }
            NodeKind::Const(Value::Graph(h)) => {
                head = format!("call @{}", self.body.graph(*h).name);
                true
            }
            NodeKind::Const(Value::Global(name)) => {
                head = format!("call @{name}");
                true
            }
            _ => {
                head.push_str("call");
                true
            }
        };
        // The ports row: the callee (when it is a value) and every argument.
        let mut cells = Vec::new();
        if callee_port {
            cells.push(("i0".to_string(), "0".to_string()));
        }
        for (i, &a) in args.iter().enumerate() {
            let text = match &self.body.node(a).kind {
                NodeKind::Const(v) if self.source(a).is_none() => {
                    format!("{}: {}", i + 1, const_text(v))
                }
                _ => (i + 1).to_string(),
            };
            cells.push((format!("i{}", i + 1), text));
        }
        let span = cells.len().max(1);
        let mut label = String::from(
            "<<table border=\"0\" cellborder=\"1\" cellspacing=\"0\" cellpadding=\"3\">",
        );
        if !cells.is_empty() {
            label.push_str("<tr>");
            for (port, text) in &cells {
                let _ = write!(label, "<td port=\"{port}\">{}</td>", html(text));
            }
            label.push_str("</tr>");
        }
        let _ = write!(
            label,
            "<tr><td colspan=\"{span}\" bgcolor=\"#dbe7f7\"><b>{}</b></td></tr>",
            html(&head)
        );
        if !attrs.is_empty() {
            let _ = write!(
                label,
                "<tr><td colspan=\"{span}\">{}</td></tr>",
                html(&attrs.join(", "))
            );
        }
        let name = match self.body.node(n).name.as_deref() {
            Some(s) if !s.is_empty() => s.to_string(),
            _ => format!("CNode_{}", n.0),
        };
        let footer = match self.ty(n) {
            Some(t) if t != AbsVal::Any => format!("{name} : {t}"),
            _ => name,
        };
        let _ = write!(
            label,
            "<tr><td colspan=\"{span}\">{}</td></tr></table>>",
            html(&footer)
        );
        let _ = writeln!(
            self.out,
            "{indent}  {} [id={} shape=plaintext label={label}]",
            quote(&self.id(n)),
            quote(&self.id(n))
        );
        let target = quote(&self.id(n));
        if callee_port {
            if let Some(src) = self.source(callee) {
                self.edges.push(format!("{src} -> {target}:i0"));
            }
        }
        for (i, &a) in args.iter().enumerate() {
            if let Some(src) = self.source(a) {
                self.edges.push(format!("{src} -> {target}:i{}", i + 1));
            }
        }
    }
}

fn meta_name(m: &MetaFn) -> String {
    m.name().to_string()
}

/// A constant as written in an input cell.
fn const_text(v: &Value) -> String {
    match v {
        Value::Scalar { value, dtype, weak } => match value {
            ScalarConst::Bool(b) => b.to_string(),
            _ if *weak => value.to_string(),
            _ => format!("{value}:{dtype}"),
        },
        Value::Str(s) => format!("{s:?}"),
        Value::None => "none".into(),
        Value::Monad => "U".into(),
        Value::Tuple(items) => {
            let items: Vec<String> = items.iter().map(const_text).collect();
            format!("({})", items.join(", "))
        }
        Value::Tensor(t) => {
            let shape: Vec<String> = t.shape().iter().map(|d| d.to_string()).collect();
            format!("Tensor {}[{}]", t.dtype(), shape.join(", "))
        }
        Value::Prim(p) => p.name.clone(),
        Value::Graph(g) => format!("@g{}", g.0),
        Value::Global(n) => format!("@{n}"),
        Value::Meta(m) => meta_name(m),
        Value::Type(t) => t.to_string(),
    }
}

/// A DOT double-quoted string.
fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            _ => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Text inside an HTML-like label.
fn html(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            _ => out.push(c),
        }
    }
    out
}

/// The dotted prefixes of a binding's name, shortest first (`a.b.c`: `a`, `a.b`).
fn name_prefixes(name: Option<&str>) -> Vec<String> {
    let Some(name) = name else {
        return Vec::new();
    };
    let parts: Vec<&str> = name.split('.').collect();
    (1..parts.len()).map(|k| parts[..k].join(".")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_round_trip() {
        assert_eq!(
            parse_id(&node_id("main", NodeId(12))),
            Some(DotRef::Node {
                item: "main".into(),
                node: NodeId(12)
            })
        );
        assert_eq!(
            parse_id(&format!("cluster_{}", graph_id("a.b", GraphId(3)))),
            Some(DotRef::Graph {
                item: "a.b".into(),
                graph: GraphId(3)
            })
        );
        assert_eq!(
            parse_id("f:g2:return"),
            Some(DotRef::Return {
                item: "f".into(),
                graph: GraphId(2)
            })
        );
        assert_eq!(
            parse_id("weight:fc1.weight"),
            Some(DotRef::Weight("fc1.weight".into()))
        );
        assert_eq!(parse_id("nonsense"), None);
    }

    #[test]
    fn escapes() {
        assert_eq!(quote("a\"b\nc"), "\"a\\\"b\\nc\"");
        assert_eq!(html("<a & b>"), "&lt;a &amp; b&gt;");
    }
}
