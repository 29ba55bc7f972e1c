//! Graph pictures for the editors: lays out a MindIR graph and renders SVG in pure
//! Rust (no Graphviz at run time).
//!
//! - [`from_body`] turns one lowered top-level graph (`ir::Body`, with its nested
//!   graphs as clusters) into a [`GraphModel`]; models can also be built by hand.
//! - [`from_dump`] turns one subgraph of a MindSpore compile dump (`irdump`) into
//!   one, grouped in collapsible clusters by MindSpore's scopes.
//! - [`from_dot`] reads the DOT that mirdsl writes (the language server's
//!   `mirdsl/graph`, `mirdsl ir --format dot`) into one; [`dot_to_svg`] draws it.
//! - [`layout()`] places it: a layered (Sugiyama-style) layout per cluster.
//! - [`render_svg`] writes SVG whose node elements carry `data-node` (ids from the
//!   model, see [`GraphModel::node_spans`] for their source ranges) and a `<title>`,
//!   edges carry the inferred type as a label, and nested graphs / `if` branches are
//!   `<g class="cluster" data-graph="NAME">` groups that a viewer can collapse by
//!   toggling the `collapsed` class. Output is deterministic.

pub mod dot;
pub mod from_dump;
pub mod from_ir;
pub mod layout;
pub mod model;
pub mod svg;

pub use dot::{dot_to_svg, from_dot};
pub use from_dump::from_dump;
pub use from_ir::{from_body, node_key};
pub use layout::{layout, Layout, Rect};
pub use model::{Cluster, ClusterKind, Edge, EdgeStyle, End, GraphModel, Node, NodeKind};

/// Lays out and renders a model.
pub fn render_svg(model: &GraphModel) -> String {
    svg::render(model, &layout(model))
}

/// The SVG of one lowered top-level graph; `type_of` labels edges with types.
pub fn body_svg(body: &ir::Body, type_of: &dyn Fn(ir::NodeId) -> Option<String>) -> String {
    render_svg(&from_body(body, type_of))
}

/// A generated model of about `n` nodes shaped like a deep network (a chain of
/// blocks, each mixing the last few values, a nested graph every 50 nodes): for
/// benchmarks and the timing sanity check (`examples/render.rs --synthetic=N`).
pub fn svg_bench_model(n: usize) -> GraphModel {
    let mut m = GraphModel::new("synthetic");
    let mut last: Vec<usize> = Vec::new();
    let mut cluster = None;
    let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut rand = move |k: usize| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % k as u64) as usize
    };
    for i in 0..n {
        if i % 50 == 25 {
            cluster = Some(m.add_cluster(
                format!("block{i}"),
                format!("graph block{i}(x)"),
                ClusterKind::Graph,
                None,
            ));
        } else if i % 50 == 45 {
            cluster = None;
        }
        let kind = if i < 4 {
            NodeKind::Param
        } else {
            NodeKind::CNode
        };
        let v = m.add_node(
            format!("n{i}"),
            format!("v{i} = Op{}", i % 7),
            kind,
            cluster,
        );
        if i >= 4 {
            let fanin = 1 + rand(3);
            for _ in 0..fanin {
                let back = 1 + rand(last.len().min(6));
                let u = last[last.len() - back];
                m.add_edge(u, v, Some(format!("f32[{}, 64]", i % 5 + 1)));
            }
        }
        last.push(v);
    }
    m
}
