//! Per-graph execution plans: closure conversion, dead-node elimination and
//! liveness.
//!
//! Closure conversion: the environment of a nested graph `g` is every node of
//! an enclosing graph that `g` uses directly, plus, for each graph `h` that `g`
//! makes a closure of (a graph constant among `g`'s inputs), whatever `h`
//! captures that `g` does not own. Computed to a fixpoint, so a closure always
//! finds the values it must capture in its maker's slots or environment
//! (siblings and recursive nested graphs included).
//!
//! A plan lists the CNodes the output depends on, in source order (others are
//! dead, as in MindSpore, and never run), each with where its inputs come from
//! and which slots hold their last use there, so the executor frees a tensor as
//! soon as nothing later needs it.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use ir::{Body, GraphId, NodeId, NodeKind, Value as IrValue};

use crate::value::{Func, Value};

/// The environment layout of every graph of a body.
#[derive(Debug, Clone, Default)]
pub struct BodyInfo {
    pub env: Vec<Vec<NodeId>>,
    pub env_index: Vec<HashMap<NodeId, u32>>,
}

/// The graph constants among `g`'s own inputs and output.
fn graph_refs(body: &Body, g: GraphId) -> Vec<GraphId> {
    let graph = body.graph(g);
    let mut out = Vec::new();
    let uses = graph
        .nodes
        .iter()
        .flat_map(|&n| body.inputs(n).iter().copied())
        .chain(graph.output);
    for u in uses {
        if let NodeKind::Const(IrValue::Graph(h)) = &body.node(u).kind {
            if !out.contains(h) {
                out.push(*h);
            }
        }
    }
    out
}

pub fn body_info(body: &Body) -> BodyInfo {
    let n = body.graphs.len();
    let mut env: Vec<Vec<NodeId>> = vec![Vec::new(); n];
    let mut seen: Vec<HashSet<NodeId>> = vec![HashSet::new(); n];
    let owner = |u: NodeId| body.node(u).graph;
    for g in body.graph_ids() {
        let graph = body.graph(g);
        let uses = graph
            .nodes
            .iter()
            .flat_map(|&n| body.inputs(n).iter().copied())
            .chain(graph.output);
        for u in uses {
            if let Some(o) = owner(u) {
                if o != g && seen[g.0 as usize].insert(u) {
                    env[g.0 as usize].push(u);
                }
            }
        }
    }
    let refs: Vec<Vec<GraphId>> = body.graph_ids().map(|g| graph_refs(body, g)).collect();
    loop {
        let mut changed = false;
        for g in 0..n {
            for &h in &refs[g] {
                if h.0 as usize == g {
                    continue;
                }
                let captured = env[h.0 as usize].clone();
                for u in captured {
                    if owner(u) != Some(GraphId(g as u32)) && seen[g].insert(u) {
                        env[g].push(u);
                        changed = true;
                    }
                }
            }
        }
        if !changed {
            break;
        }
    }
    let env_index = env
        .iter()
        .map(|vs| vs.iter().enumerate().map(|(i, &v)| (v, i as u32)).collect())
        .collect();
    BodyInfo { env, env_index }
}

/// Where a step's input comes from.
#[derive(Clone)]
pub enum Operand {
    /// A parameter or CNode of this graph.
    Slot(u32),
    /// A captured value.
    Env(u32),
    Const(Value),
    /// A top-level weight, by index.
    Weight(u32),
    /// A closure of a nested graph, made with these captures (slots and env).
    Closure {
        graph: GraphId,
        name: Arc<str>,
        captures: Box<[Operand]>,
    },
}

/// One CNode to run.
pub struct Step {
    pub node: NodeId,
    /// The slot of its result.
    pub slot: u32,
    /// Callee first.
    pub inputs: Box<[Operand]>,
    /// Slots whose last use is this step (freed before the call runs).
    pub free: Box<[u32]>,
    /// A call of `Switch` itself: the executor evaluates the condition first
    /// and makes only the chosen branch's value.
    pub switch: bool,
}

pub struct Plan {
    pub graph: GraphId,
    pub name: Arc<str>,
    pub n_params: usize,
    pub n_slots: usize,
    /// Parameters nothing uses (dropped on entry).
    pub unused_params: Box<[u32]>,
    pub steps: Vec<Step>,
    pub output: Operand,
}

impl Plan {
    /// The slots an operand reads.
    pub fn slots_of(op: &Operand, out: &mut Vec<u32>) {
        match op {
            Operand::Slot(s) => out.push(*s),
            Operand::Closure { captures, .. } => {
                for c in captures.iter() {
                    Plan::slots_of(c, out);
                }
            }
            _ => {}
        }
    }
}

/// Turns a node into an operand, given the slots of the graph's own nodes.
pub type OperandFn<'a> =
    dyn FnMut(NodeId, &HashMap<NodeId, u32>) -> Result<Operand, crate::RunError> + 'a;

/// Builds a plan given how to turn each node into an operand.
pub fn build_plan(
    body: &Body,
    graph: GraphId,
    operand: &mut OperandFn,
) -> Result<Plan, crate::RunError> {
    let g = body.graph(graph);
    let mut slot_of: HashMap<NodeId, u32> = HashMap::new();
    for (i, &p) in g.params.iter().enumerate() {
        slot_of.insert(p, i as u32);
    }
    for (i, &n) in g.nodes.iter().enumerate() {
        slot_of.insert(n, (g.params.len() + i) as u32);
    }
    // Operands of every CNode and of the output.
    let mut inputs: HashMap<NodeId, Vec<Operand>> = HashMap::new();
    for &n in &g.nodes {
        if body.inputs(n).is_empty() {
            return Err(crate::RunError::internal("a call without a callee").at(body.node(n).span));
        }
        let ops = body
            .inputs(n)
            .iter()
            .map(|&i| operand(i, &slot_of))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| e.at(body.node(n).span))?;
        inputs.insert(n, ops);
    }
    let output = match g.output {
        Some(o) => operand(o, &slot_of)?,
        None => Operand::Const(Value::None),
    };
    // Live CNodes: those the output depends on.
    let node_of_slot: HashMap<u32, NodeId> = slot_of.iter().map(|(n, s)| (*s, *n)).collect();
    let mut live: HashSet<NodeId> = HashSet::new();
    let mut work: Vec<u32> = Vec::new();
    Plan::slots_of(&output, &mut work);
    while let Some(s) = work.pop() {
        let n = node_of_slot[&s];
        if !live.insert(n) {
            continue;
        }
        if let Some(ops) = inputs.get(&n) {
            for op in ops {
                Plan::slots_of(op, &mut work);
            }
        }
    }
    let order: Vec<NodeId> = g
        .nodes
        .iter()
        .copied()
        .filter(|n| live.contains(n))
        .collect();
    // Last use of each slot, by step index; the output's slots are never freed early.
    let n_slots = g.params.len() + g.nodes.len();
    let mut last_use: Vec<Option<usize>> = vec![None; n_slots];
    let mut out_slots = Vec::new();
    Plan::slots_of(&output, &mut out_slots);
    let mut reads = Vec::new();
    for (i, n) in order.iter().enumerate() {
        reads.clear();
        for op in &inputs[n] {
            Plan::slots_of(op, &mut reads);
        }
        for &s in &reads {
            last_use[s as usize] = Some(i);
        }
    }
    for &s in &out_slots {
        last_use[s as usize] = None;
    }
    let mut free: Vec<Vec<u32>> = vec![Vec::new(); order.len()];
    for (s, u) in last_use.iter().enumerate() {
        if let Some(i) = u {
            free[*i].push(s as u32);
        }
    }
    let unused_params = (0..g.params.len() as u32)
        .filter(|&s| last_use[s as usize].is_none() && !out_slots.contains(&s))
        .collect();
    let steps = order
        .iter()
        .zip(free)
        .map(|(n, free)| {
            let inputs = inputs.remove(n).unwrap_or_default().into_boxed_slice();
            let switch = inputs.len() == 4
                && matches!(&inputs[0], Operand::Const(Value::Func(f))
                    if matches!(&**f, Func::Prim(p) if p.prim.name == "Switch"));
            Step {
                node: *n,
                slot: slot_of[n],
                inputs,
                free: free.into_boxed_slice(),
                switch,
            }
        })
        .collect();
    Ok(Plan {
        graph,
        name: Arc::from(g.name.as_str()),
        n_params: g.params.len(),
        n_slots,
        unused_params,
        steps,
        output,
    })
}
