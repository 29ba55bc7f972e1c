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

use ir::{AbsVal, Body, GraphId, MetaFn, Program, WrtItem};

pub mod absint;
pub mod builder;
pub mod composites;
pub mod envs;
mod jt;
pub mod passes;
pub mod prepare;
pub mod world;

use absint::AV;
use world::{Item, World};

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
    /// What is known of the target's arguments (from the caller's inference or
    /// the run-time values); `None`: the target's parameter annotations. Known
    /// shapes let the clean-up remove broadcasting reductions that turn out to
    /// be identities.
    pub param_values: Option<Vec<AbsVal>>,
    /// Run the clean-up passes (default `true`).
    pub optimize: bool,
    /// The bodies of composite primitives' instances (the analysis makes
    /// them); needed when the program calls composites.
    pub composites: Option<composites::InstanceFn>,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            param_values: None,
            optimize: true,
            composites: None,
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
    let item = prepare::target_item(&mut world, target, &mut taken)?;

    // The differentiated weights.
    let mut weights: Vec<String> = Vec::new();
    if let MetaFn::Grad { wrt: Some(items) } | MetaFn::ValueAndGrad { wrt: Some(items) } = meta {
        for w in items {
            if let WrtItem::Weight(name) = w {
                if program.weight(name).is_none() {
                    return Err(AdError(format!("`{name}` is not a weight")));
                }
                if !weights.contains(name) {
                    weights.push(name.clone());
                }
            }
        }
    }

    let params = entry_params(&world, &item, options);
    let mut an = absint::analyze(&world, &item, GraphId(0), &params);
    if prepare::convert_partials(&mut world, &an)? {
        an = absint::analyze(&world, &item, GraphId(0), &params);
    }
    let envs = envs::Envs::build(&world, &an, &weights);

    let mut gen = jt::Gen::new(&world, &an, &envs, weights, taken, originals);
    let entry = gen.fresh(&format!("{}_{}", meta.name(), item));
    let entry_body = gen.entry(meta, &item, &entry)?;
    gen.run()?;
    let mut graphs = gen.out;
    graphs.insert(0, (entry.clone(), entry_body));

    if options.optimize {
        passes::optimize(&mut graphs, &world, &entry, &params, *meta == MetaFn::Vjp);
    }
    passes::finish(&mut graphs, &world, &entry);
    Ok(GradResult {
        graphs: graphs.into_iter().map(|(n, b)| (n, Arc::new(b))).collect(),
        entry,
    })
}

/// What the analysis assumes of the target's parameters.
fn entry_params(world: &World, item: &Item, options: &Options) -> Vec<AV> {
    let body = &world.bodies[item];
    let root = body.graph(body.root());
    root.params
        .iter()
        .enumerate()
        .map(|(i, &p)| {
            if let Some(v) = options.param_values.as_ref().and_then(|vs| vs.get(i)) {
                return AV::from_absval(v);
            }
            body.node(p)
                .annotation
                .as_ref()
                .map_or(AV::Any, |(t, _)| AV::from_absval(&AbsVal::from_ty(t)))
        })
        .collect()
}

/// The number of inputs of each primitive, for printing primitives with
/// attributes used as values.
pub fn prim_arity(name: &str) -> Option<usize> {
    ops::lookup(name).map(|op| op.input_count())
}

/// Prints a [`GradResult`]'s graphs as DSL text (the entry first).
pub fn print_result(result: &GradResult) -> String {
    let mut out = String::new();
    for (_, body) in &result.graphs {
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(&ir::print::print_body_with(body, &prim_arity));
    }
    out
}

/// The generated graphs of [`differentiate`] as DSL text (for `mirdsl grad`
/// and the language server's "Show gradient"), the entry first. It is meant to
/// be read after the program's own text: it may call the program's graphs and
/// use its weights. (Checking it needs the checker to resolve the registry's
/// internal `_`-prefixed primitives some gradient rules use, and to join the
/// different backpropagators the branches of a differentiated `if` return.)
pub fn gradient_program_text(
    program: &Program,
    target: &GradTarget,
    meta: &MetaFn,
    options: &Options,
) -> Result<String, AdError> {
    Ok(print_result(&differentiate_with(
        program, target, meta, options,
    )?))
}
