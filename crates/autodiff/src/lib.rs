//! Automatic differentiation as a transformation of MindIR (Pearlmutter and
//! Siskind's scheme, as in Myia and MindSpore's `J`).
//!
//! The interface the executor, the CLI (`mirdsl grad`) and the language server
//! use: [`differentiate`] takes a program and the graph to differentiate and
//! returns new top-level graphs, among them an entry with the target's
//! parameters that computes what the metafunction asks for.

use std::sync::Arc;

use ir::{Body, GraphId, MetaFn, Program};

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

/// Differentiates `target` in `program` as `meta` says.
pub fn differentiate(program: &Program, target: &GradTarget, meta: &MetaFn) -> Result<GradResult, AdError> {
    let _ = (program, target, meta);
    Err(AdError("automatic differentiation is not implemented yet".into()))
}
