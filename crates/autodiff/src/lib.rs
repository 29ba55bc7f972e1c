//! Automatic differentiation as a transformation of MindIR (Pearlmutter and
//! Siskind's scheme, as in Myia and MindSpore's `J`).
//!
//! The interface the executor, the CLI (`mirdsl grad`) and the language server
//! use: [`differentiate`] takes a program and the graph to differentiate and
//! returns new top-level graphs, among them an entry with the target's
//! parameters that computes what the metafunction asks for.
//!
//! How it works:
//! 1. [`absint`] interprets the program from the target (dtypes and shapes
//!    through the registry's shape rules, tuple structure, and which graphs or
//!    primitives each function value may be).
//! 2. [`prepare`] lifts a nested target into a body of its own and turns
//!    `Partial` applications into closures.
//! 3. [`envs`] groups function values that meet into classes and fixes the
//!    layout of their sensitivities (what closures capture, weights touched).
//! 4. `jt` builds `J(f)` for every reachable graph: `J(f)(params)` returns
//!    `(output, bprop)` and `bprop(dout)` returns `(env, d_param_0, ...)`, with
//!    `env` the sensitivities of `f`'s captured values and of the
//!    differentiated weights it touches (a tuple; `()` for a top-level graph
//!    without weights). Top-level graphs become `J_<name>`, nested graphs stay
//!    nested, primitives used as values become `J_<Prim>` graphs. It then
//!    builds the entry `grad_<target>` (or `value_and_grad_`/`vjp_`).
//! 5. [`passes`] clean up: inlining, constant folding, zero propagation,
//!    common-subexpression elimination, dead-code elimination.

use std::collections::HashSet;
use std::sync::Arc;

use ir::{AbsVal, Body, GraphId, MetaFn, NodeKind, Program, Value};

pub mod absint;
pub mod builder;
pub mod composites;
pub mod envs;
mod jt;
pub mod meta;
pub mod passes;
pub mod prepare;
pub mod world;

use world::World;

/// The graph to differentiate: a top-level graph (`graph == GraphId(0)`) or a
/// nested graph of one.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct GradTarget {
    pub item: String,
    pub graph: GraphId,
}

/// The result of differentiating.
#[derive(Debug, Clone, PartialEq)]
pub struct GradResult {
    /// New top-level graphs (the entry, the J-transformed graphs it calls, ...),
    /// with names that do not clash with the program's.
    pub graphs: Vec<(String, Arc<Body>)>,
    /// The graph to call: it takes the target's parameters and returns, for
    /// `grad`, the gradients (bare for the default `wrt`, else a tuple in `wrt`
    /// order); for `value_and_grad`, `(output, gradients)`; for `vjp`,
    /// `(output, backprop)` where `backprop(dout)` returns the tuple of the
    /// gradients of every parameter.
    pub entry: String,
    /// What the transforms chose, for `--verbose`: how each `vmap` was made
    /// (batched, with the primitives that ran per example; or per example
    /// and why).
    pub notes: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AdError(pub String);

impl std::fmt::Display for AdError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for AdError {}

/// Options of [`differentiate_with`].
#[derive(Debug, Clone)]
pub struct Options {
    /// What is known of the entry's arguments (from the caller's inference or
    /// the run-time values): the metafunction's arguments, then, for a
    /// nested target that captures values, those values; `None`: the
    /// target's parameter annotations. Known shapes let the clean-up remove
    /// broadcasting reductions that turn out to be identities.
    pub param_values: Option<Vec<AbsVal>>,
    /// Run the clean-up passes (default `true`).
    pub optimize: bool,
    /// The bodies of composite primitives' instances (the analysis makes
    /// them); needed when the program calls composites.
    pub composites: Option<composites::InstanceFn>,
    /// How many of the target's parameters are its own; the rest are
    /// passed through, not differentiated (the captured values of a
    /// closure whose derivative is differentiated again). `None`: all.
    pub visible_params: Option<usize>,
    /// Unroll each recursion whose depth the arguments decide (a loop over
    /// a sequence of known length), so that no backpropagator passes
    /// through a recursive call: what export needs, since MindSpore 2.10
    /// cannot run the gradient of a loop loaded from MindIR (see
    /// [`passes::unroll`]). Default `false`: the recursion stays.
    pub unroll: bool,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            param_values: None,
            optimize: true,
            composites: None,
            visible_params: None,
            unroll: false,
        }
    }
}

/// Differentiates `target` in `program` as `meta` says.
pub fn differentiate(
    program: &Program,
    target: &GradTarget,
    meta: &MetaFn,
) -> Result<GradResult, AdError> {
    differentiate_with(program, target, meta, &Options::default())
}

/// [`differentiate`] with options.
///
/// A nested target that captures values is lifted into a top-level graph
/// that takes them after its own parameters (in [`captured_values`] order),
/// and so does the entry: the caller passes them after the arguments.
pub fn differentiate_with(
    program: &Program,
    target: &GradTarget,
    meta: &MetaFn,
    options: &Options,
) -> Result<GradResult, AdError> {
    let mut world = World::from_program(program);
    composites::expand(&mut world, options.composites)?;
    let mut taken: HashSet<String> = program.graphs.iter().map(|(n, _)| n.clone()).collect();
    taken.extend(program.weights.iter().map(|w| w.name.clone()));
    let originals: HashSet<String> = program.graphs.iter().map(|(n, _)| n.clone()).collect();
    let (item, captured) = prepare::target_item(&mut world, target, &mut taken)?;

    let weights = meta::wrt_weights(meta);
    for w in &weights {
        if program.weight(w).is_none() {
            return Err(AdError(format!("`{w}` is not a weight")));
        }
    }
    let total = world.bodies[&item].graph(GraphId(0)).params.len();
    let mut visible = total - captured;
    if let Some(v) = options.visible_params {
        visible = visible.min(v);
    }
    let lifted =
        (target.graph != GraphId(0)).then(|| (item.to_string(), (*world.bodies[&item]).clone()));
    let mut cx = meta::Cx::new(world, taken, originals);
    cx.instances = options.composites;
    cx.unroll = options.unroll;
    // A lifted target: generated code may call it as it is (`jvp`'s value).
    cx.generated.extend(lifted);
    let d = cx.differentiate(
        &item,
        visible,
        meta,
        &weights,
        options.param_values.as_deref(),
        options.optimize,
    )?;
    let mut graphs = d.graphs;
    for (name, body) in std::mem::take(&mut cx.generated) {
        if !graphs.iter().any(|(n, _)| *n == name) {
            graphs.push((name, body));
        }
    }
    passes::finish(&mut graphs, &cx.world, &d.entry);
    Ok(GradResult {
        graphs: graphs.into_iter().map(|(n, b)| (n, Arc::new(b))).collect(),
        entry: d.entry,
        notes: std::mem::take(&mut cx.vmap_notes),
    })
}

/// Where a gradient still recurses after [`Options::unroll`]: the source
/// place of a call by which one of its graphs calls itself (`None` inside
/// when the call has none), or `None` when nothing recurses.
pub fn remaining_recursion(result: &GradResult) -> Option<Option<ir::TextRange>> {
    let graphs: Vec<(String, Body)> = result
        .graphs
        .iter()
        .map(|(n, b)| (n.clone(), (**b).clone()))
        .collect();
    let (name, n) = passes::unroll::remaining_recursion(&graphs)?;
    let body = &graphs.iter().find(|(g, _)| *g == name)?.1;
    Some(body.node(n).span)
}

/// The values a closure of nested graph `graph` captures, in the order a
/// derivative of it takes them after its arguments.
pub fn captured_values(body: &Body, graph: GraphId) -> Vec<ir::NodeId> {
    prepare::captured_values(body, graph)
}

/// The number of inputs of each primitive, for printing primitives with
/// attributes used as values.
pub fn prim_arity(name: &str) -> Option<usize> {
    ops::lookup(name).map(|op| op.input_count())
}

/// Each primitive's parameters in signature order (for printing calls).
pub fn prim_signature(name: &str) -> Option<ir::print::Signature> {
    ops::lookup(name).map(|op| op.params().iter().map(|p| (p.name, p.is_input())).collect())
}

/// Prints a [`GradResult`]'s graphs as DSL text (the entry first).
pub fn print_result(result: &GradResult) -> String {
    let mut out = String::new();
    for (_, body) in &result.graphs {
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(&ir::print::print_body_signed(
            body,
            &prim_arity,
            &prim_signature,
        ));
    }
    out
}

/// The generated graphs of [`differentiate`] as a DSL program that checks
/// and runs on its own (for `mirdsl grad` and the language server's "Show
/// gradient"): the weights they use, with their initialisers, then the
/// program's graphs they call, then the generated graphs, the entry first.
/// (Checking it needs the checker to resolve the registry's internal
/// `_`-prefixed primitives some gradient rules use.)
pub fn gradient_program_text(
    program: &Program,
    target: &GradTarget,
    meta: &MetaFn,
    options: &Options,
) -> Result<String, AdError> {
    let result = differentiate_with(program, target, meta, options)?;
    Ok(standalone_text(program, &result))
}

/// [`print_result`] preceded by what it needs of `program`: the graphs the
/// generated ones call, transitively, and the weights any of them uses.
pub fn standalone_text(program: &Program, result: &GradResult) -> String {
    let generated: HashSet<&str> = result.graphs.iter().map(|(n, _)| n.as_str()).collect();
    let mut called: Vec<&str> = Vec::new();
    let mut weights: HashSet<String> = HashSet::new();
    let mut work: Vec<&Body> = result.graphs.iter().map(|(_, b)| &**b).collect();
    while let Some(body) = work.pop() {
        for node in &body.nodes {
            match &node.kind {
                NodeKind::Weight(w) => {
                    weights.insert(w.clone());
                }
                NodeKind::Const(Value::Global(g)) if !generated.contains(g.as_str()) => {
                    if let Some((name, b)) = program.graphs.iter().find(|(n, _)| n == g) {
                        if !called.contains(&name.as_str()) {
                            called.push(name);
                            work.push(b);
                        }
                    }
                }
                _ => {}
            }
        }
    }
    let mut out = String::new();
    for w in program.weights.iter().filter(|w| weights.contains(&w.name)) {
        out.push_str(&format!(
            "param {}: {} = {}\n",
            w.name,
            w.ty,
            ir::print::print_init(&w.init)
        ));
    }
    // The program's graphs in its own order.
    for (_, body) in program
        .graphs
        .iter()
        .filter(|(n, _)| called.contains(&n.as_str()))
    {
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(&ir::print::print_body_signed(
            body,
            &prim_arity,
            &prim_signature,
        ));
    }
    if !out.is_empty() {
        out.push('\n');
    }
    out.push_str(&print_result(result));
    out
}
