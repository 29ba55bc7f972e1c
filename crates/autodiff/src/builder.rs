//! Building and rewriting IR: the [`GradBuilder`] the registry's gradient rules
//! emit through, small node constructors, graph copying and use replacement.

use std::collections::HashMap;

use ir::{AttrValue, Body, GraphId, Node, NodeId, NodeKind, PrimRef, Value};
use ops::{GNode, GradBuilder};

use crate::AdError;

/// A primitive reference with attributes in schema order, defaults dropped.
pub fn prim_ref(name: &str, attrs: &[(&str, AttrValue)]) -> PrimRef {
    let mut p = PrimRef::new(name);
    match ops::lookup(name) {
        Some(op) => {
            for param in op.attrs() {
                let Some((_, v)) = attrs.iter().find(|(k, _)| *k == param.name) else {
                    continue;
                };
                let v = ops::check_attr(op, param.name, v).unwrap_or_else(|_| v.clone());
                let default = match param.kind {
                    ops::ParamKind::Attr {
                        default: Some(d), ..
                    } => Some(d.value()),
                    _ => None,
                };
                if default.as_ref() != Some(&v) {
                    p.attrs.push((param.name.to_string(), v));
                }
            }
        }
        None => {
            p.attrs = attrs
                .iter()
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect();
        }
    }
    p
}

pub fn prim(body: &mut Body, g: GraphId, name: &str, args: &[NodeId]) -> NodeId {
    body.add_prim_call(g, PrimRef::new(name), args, None)
}

pub fn tuple_get(body: &mut Body, g: GraphId, t: NodeId, i: usize) -> NodeId {
    let index = body.add_const(Value::int(i as i64), None);
    prim(body, g, "TupleGetItem", &[t, index])
}

pub fn make_tuple(body: &mut Body, g: GraphId, items: &[NodeId]) -> NodeId {
    prim(body, g, "MakeTuple", items)
}

pub fn call(body: &mut Body, g: GraphId, f: NodeId, args: &[NodeId]) -> NodeId {
    let mut inputs = vec![f];
    inputs.extend_from_slice(args);
    body.add_apply(g, inputs, None)
}

/// Emits a gradient rule's primitives as CNodes of one graph.
pub struct IrGrad<'b> {
    pub body: &'b mut Body,
    pub graph: GraphId,
    /// The source span of the node differentiated: the rule's nodes carry
    /// it, so an error about one (an export, a run-time fault) points at
    /// the operation whose gradient it is.
    pub span: Option<ir::TextRange>,
}

impl GradBuilder for IrGrad<'_> {
    fn prim(
        &mut self,
        name: &str,
        inputs: &[GNode],
        attrs: Vec<(&'static str, AttrValue)>,
    ) -> GNode {
        let p = prim_ref(name, &attrs);
        let args: Vec<NodeId> = inputs.iter().map(|g| NodeId(g.0)).collect();
        GNode(self.body.add_prim_call(self.graph, p, &args, self.span).0)
    }

    fn scalar(&mut self, value: f64) -> GNode {
        GNode(self.body.add_const(Value::float(value), None).0)
    }

    fn int(&mut self, value: i64) -> GNode {
        GNode(self.body.add_const(Value::int(value), None).0)
    }

    fn tuple_get(&mut self, tuple: GNode, index: usize) -> GNode {
        GNode(tuple_get(self.body, self.graph, NodeId(tuple.0), index).0)
    }

    fn make_tuple(&mut self, items: &[GNode]) -> GNode {
        let items: Vec<NodeId> = items.iter().map(|g| NodeId(g.0)).collect();
        GNode(make_tuple(self.body, self.graph, &items).0)
    }
}

/// Replaces every use of `from` (inputs and graph outputs) by `to`.
pub fn replace_all_uses(body: &mut Body, from: NodeId, to: NodeId) {
    for node in &mut body.nodes {
        if let NodeKind::Apply(inputs) = &mut node.kind {
            for i in inputs.iter_mut() {
                if *i == from {
                    *i = to;
                }
            }
        }
    }
    for g in &mut body.graphs {
        if g.output == Some(from) {
            g.output = Some(to);
        }
    }
}

/// Replaces uses by a map (chains followed), in one sweep.
pub fn replace_uses(body: &mut Body, map: &HashMap<NodeId, NodeId>) {
    if map.is_empty() {
        return;
    }
    let resolve = |mut n: NodeId| {
        let mut steps = 0;
        while let Some(&m) = map.get(&n) {
            n = m;
            steps += 1;
            if steps > map.len() {
                break;
            }
        }
        n
    };
    for node in &mut body.nodes {
        if let NodeKind::Apply(inputs) = &mut node.kind {
            for i in inputs.iter_mut() {
                *i = resolve(*i);
            }
        }
    }
    for g in &mut body.graphs {
        if let Some(o) = g.output {
            g.output = Some(resolve(o));
        }
    }
}

/// What [`copy_graph_into`] needs of a graph and the graphs nested in it:
/// taken from a body first, so that it can be written into the same body.
pub struct Snapshot {
    root: GraphId,
    /// The nested graphs (parents first), with their definitions.
    inner: Vec<(GraphId, ir::FuncGraph)>,
    /// Parameters of the nested graphs.
    params: HashMap<NodeId, Node>,
    /// CNodes of `root` and of the nested graphs, by graph, in order.
    cnodes: Vec<(GraphId, Vec<(NodeId, Node)>)>,
    /// Nodes outside the subtree that it uses.
    outside: HashMap<NodeId, Node>,
    root_output: Option<NodeId>,
    root_params: Vec<NodeId>,
}

impl Snapshot {
    /// The parameters of the copied graph.
    pub fn root_params(&self) -> &[NodeId] {
        &self.root_params
    }

    pub fn take(src: &Body, root: GraphId) -> Snapshot {
        let inner: Vec<(GraphId, ir::FuncGraph)> = src
            .graph_ids()
            .filter(|&d| d != root && src.is_within(d, root))
            .map(|d| (d, src.graph(d).clone()))
            .collect();
        let mut params = HashMap::new();
        for (_, g) in &inner {
            for &p in &g.params {
                params.insert(p, src.node(p).clone());
            }
        }
        let mut cnodes = Vec::new();
        let mut outside = HashMap::new();
        let mut own: std::collections::HashSet<NodeId> = params.keys().copied().collect();
        for g in std::iter::once(root).chain(inner.iter().map(|(d, _)| *d)) {
            own.extend(src.graph(g).params.iter().copied());
            own.extend(src.graph(g).nodes.iter().copied());
        }
        for g in std::iter::once(root).chain(inner.iter().map(|(d, _)| *d)) {
            let fg = src.graph(g);
            let nodes: Vec<(NodeId, Node)> =
                fg.nodes.iter().map(|&n| (n, src.node(n).clone())).collect();
            for (_, node) in &nodes {
                for &i in src.inputs_of(node) {
                    if !own.contains(&i) {
                        outside.entry(i).or_insert_with(|| src.node(i).clone());
                    }
                }
            }
            if let Some(o) = fg.output {
                if !own.contains(&o) {
                    outside.entry(o).or_insert_with(|| src.node(o).clone());
                }
            }
            cnodes.push((g, nodes));
        }
        Snapshot {
            root,
            inner,
            params,
            cnodes,
            outside,
            root_output: src.graph(root).output,
            root_params: src.graph(root).params.clone(),
        }
    }
}

/// Inputs of a node.
trait InputsOf {
    fn inputs_of<'n>(&self, node: &'n Node) -> &'n [NodeId];
}

impl InputsOf for Body {
    fn inputs_of<'n>(&self, node: &'n Node) -> &'n [NodeId] {
        match &node.kind {
            NodeKind::Apply(inputs) => inputs,
            _ => &[],
        }
    }
}

/// What [`copy_snapshot`] made.
pub struct Copied {
    /// The copies of the root's CNodes, in order (appended to its target graph).
    pub root_nodes: Vec<NodeId>,
    /// What the root's output became.
    pub output: Option<NodeId>,
    /// Each nested graph and its copy.
    pub graphs: Vec<(GraphId, GraphId)>,
}

/// Copies `root`'s CNodes (appended to `root_to`), and the graphs nested in
/// `root` with all their nodes, from `src` into `dst`. `map` must already say
/// what `root`'s parameters become. Nodes of `src` outside `root` are used as
/// they are when `same_body` (free variables); otherwise only constants and
/// weights may be (copied).
pub fn copy_graph_into(
    src: &Body,
    root: GraphId,
    dst: &mut Body,
    root_to: GraphId,
    map: &mut HashMap<NodeId, NodeId>,
    same_body: bool,
) -> Result<Copied, AdError> {
    copy_snapshot(&Snapshot::take(src, root), dst, root_to, map, same_body)
}

/// [`copy_graph_into`] from a snapshot (which may be of `dst` itself).
pub fn copy_snapshot(
    snap: &Snapshot,
    dst: &mut Body,
    root_to: GraphId,
    map: &mut HashMap<NodeId, NodeId>,
    same_body: bool,
) -> Result<Copied, AdError> {
    let mut gmap: HashMap<GraphId, GraphId> = HashMap::new();
    gmap.insert(snap.root, root_to);
    for (d, sg) in &snap.inner {
        let parent = sg.parent.and_then(|p| gmap.get(&p).copied());
        let new = dst.add_graph(sg.name.clone(), parent, sg.origin);
        dst.graph_mut(new).ret_annotation = sg.ret_annotation.clone();
        for &p in &sg.params {
            let old = &snap.params[&p];
            let name = old.name.clone().unwrap_or_else(|| "x".into());
            let np = dst.add_param(new, name, None);
            dst.node_mut(np).annotation = old.annotation.clone();
            map.insert(p, np);
        }
        gmap.insert(*d, new);
    }
    // Allocate every CNode first, so inputs can refer to any of them.
    let mut root_nodes = Vec::new();
    for (g, nodes) in &snap.cnodes {
        let to = gmap[g];
        for (n, old) in nodes {
            let id = NodeId(dst.nodes.len() as u32);
            dst.nodes.push(Node {
                kind: NodeKind::Apply(Vec::new()),
                graph: Some(to),
                // The copy stands for the same source (a caller that copies
                // from another text, a composite's, places it anew).
                span: old.span,
                name: old.name.clone(),
                annotation: old.annotation.clone(),
            });
            dst.graph_mut(to).nodes.push(id);
            map.insert(*n, id);
            if *g == snap.root {
                root_nodes.push(id);
            }
        }
    }
    let remap =
        |m: NodeId, dst: &mut Body, map: &mut HashMap<NodeId, NodeId>| -> Result<NodeId, AdError> {
            if let Some(&x) = map.get(&m) {
                return Ok(x);
            }
            let Some(node) = snap.outside.get(&m) else {
                return Err(AdError("internal: a copied node is missing".into()));
            };
            let new = match &node.kind {
                // The copied graph itself (a recursive graph unrolled): its
                // root's nodes are written into `root_to`, the graph stays.
                NodeKind::Const(Value::Graph(k)) if *k == snap.root && same_body => m,
                NodeKind::Const(Value::Graph(k)) if *k != snap.root && gmap.contains_key(k) => {
                    dst.add_const(Value::Graph(gmap[k]), None)
                }
                NodeKind::Const(Value::Graph(_)) if !same_body => {
                    return Err(AdError(
                        "a graph refers to a graph outside the one being copied".into(),
                    ))
                }
                NodeKind::Const(_) | NodeKind::Weight(_) if same_body => m,
                NodeKind::Const(v) => dst.add_const(v.clone(), None),
                NodeKind::Weight(w) => dst.add_weight(w.clone(), None),
                _ if same_body => m,
                _ => {
                    return Err(AdError(
                        "a graph uses a value of a graph outside the one being copied".into(),
                    ))
                }
            };
            map.insert(m, new);
            Ok(new)
        };
    for (_, nodes) in &snap.cnodes {
        for (old, node) in nodes {
            let inputs: Vec<NodeId> = match &node.kind {
                NodeKind::Apply(inputs) => inputs.clone(),
                _ => Vec::new(),
            };
            let mut mapped = Vec::with_capacity(inputs.len());
            for i in inputs {
                mapped.push(remap(i, dst, map)?);
            }
            let new = map[old];
            dst.node_mut(new).kind = NodeKind::Apply(mapped);
        }
    }
    for (d, sg) in &snap.inner {
        if let Some(o) = sg.output {
            let o = remap(o, dst, map)?;
            dst.graph_mut(gmap[d]).output = Some(o);
        }
    }
    let output = match snap.root_output {
        Some(o) => Some(remap(o, dst, map)?),
        None => None,
    };
    Ok(Copied {
        root_nodes,
        output,
        graphs: snap.inner.iter().map(|(d, _)| (*d, gmap[d])).collect(),
    })
}
