//! The program being transformed: top-level bodies by name, and weight types.

use std::collections::HashMap;
use std::sync::Arc;

use ir::{Body, GraphId, NodeId, NodeKind, Program, Ty, Value};

/// A top-level item's name.
pub type Item = Arc<str>;

/// Top-level bodies by name (the program's, plus lifted or generated ones).
#[derive(Debug, Clone, Default)]
pub struct World {
    pub bodies: HashMap<Item, Arc<Body>>,
    /// Names in a stable order (the program's order, then additions).
    pub order: Vec<Item>,
    pub weights: HashMap<String, Ty>,
}

impl World {
    pub fn from_program(program: &Program) -> World {
        let mut world = World::default();
        for (name, body) in &program.graphs {
            world.insert(Arc::from(name.as_str()), body.clone());
        }
        for w in &program.weights {
            world.weights.insert(w.name.clone(), w.ty.clone());
        }
        world
    }

    pub fn insert(&mut self, name: Item, body: Arc<Body>) {
        if self.bodies.insert(name.clone(), body).is_none() {
            self.order.push(name);
        }
    }

    pub fn body(&self, name: &str) -> Option<&Arc<Body>> {
        self.bodies.get(name)
    }

    pub fn item(&self, name: &str) -> Option<Item> {
        self.bodies.get_key_value(name).map(|(k, _)| k.clone())
    }
}

/// Whether `node` can be referred to from graph `from`: a constant or weight,
/// or a node of `from` or of a graph enclosing it.
pub fn visible(body: &Body, node: NodeId, from: GraphId) -> bool {
    match body.node(node).graph {
        None => true,
        Some(owner) => body.is_within(from, owner),
    }
}

/// The values a closure of `graph` captures: nodes of enclosing graphs used by
/// it or by the graphs nested in it, and (transitively) those captured by the
/// graphs it refers to as values that are not nested in it (a sibling closure it
/// calls captures its own values, which `graph` must then carry as well).
/// In first-use order.
pub fn closure_fvs(body: &Body, graph: GraphId) -> Vec<NodeId> {
    let mut children: Vec<Vec<GraphId>> = vec![Vec::new(); body.graphs.len()];
    for g in body.graph_ids() {
        if let Some(p) = body.graph(g).parent {
            children[p.0 as usize].push(g);
        }
    }
    let subtree = |g: GraphId| {
        let mut out = vec![g];
        let mut i = 0;
        while i < out.len() {
            out.extend(children[out[i].0 as usize].iter().copied());
            i += 1;
        }
        out
    };
    let mut out: Vec<NodeId> = Vec::new();
    let mut seen_nodes = std::collections::HashSet::new();
    let mut visited = vec![false; body.graphs.len()];
    let mut stack = vec![graph];
    while let Some(g) = stack.pop() {
        if visited[g.0 as usize] {
            continue;
        }
        visited[g.0 as usize] = true;
        for inner in subtree(g) {
            let fg = body.graph(inner);
            let uses = fg
                .nodes
                .iter()
                .flat_map(|&n| body.inputs(n).iter().copied())
                .chain(fg.output);
            for used in uses {
                match &body.node(used).kind {
                    NodeKind::Const(Value::Graph(h)) => {
                        // A closure made inside `g`'s subtree of a graph that
                        // is not nested in `g` (a sibling, or one enclosing
                        // it): making it needs what it captures. One nested
                        // in `g` is made while `g` runs, from `g`'s values.
                        if !body.is_within(*h, graph)
                            && !body.is_within(*h, g)
                            && !visited[h.0 as usize]
                        {
                            stack.push(*h);
                        }
                    }
                    _ => {
                        if let Some(owner) = body.node(used).graph {
                            if !body.is_within(owner, g)
                                && !body.is_within(owner, graph)
                                && seen_nodes.insert(used)
                            {
                                out.push(used);
                            }
                        }
                    }
                }
            }
        }
    }
    out
}
