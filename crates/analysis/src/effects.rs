//! Which graphs have side effects (spec §11, `docs/language.md` §12).
//!
//! A graph has effects when its body calls, by name, a primitive that writes
//! weights (`Assign`, the optimizers: [`ops::effect_of`]) or a graph with
//! effects. This is decided on the syntax, before lowering, so that lowering a
//! graph can thread MindIR's state token through it (auto-monad) and keep its
//! calls in order. It is conservative: names are matched without scoping, so a
//! nested graph that shares a name with one that has effects is treated as
//! having them too, which only costs it some ordering.

use std::collections::HashSet;

use syntax::ast::{self, AstNode};
use syntax::{SyntaxKind, SyntaxNode};

/// Whether calling primitive `name` writes weights.
pub fn is_effect_primitive(name: &str) -> bool {
    ops::effect_of(name).is_some()
}

/// The names of the callees `node` calls directly by name, without entering
/// nested `graph` definitions (other than `node` itself).
fn called_names(node: &SyntaxNode) -> Vec<String> {
    let mut out = Vec::new();
    let mut events = node.preorder();
    while let Some(event) = events.next() {
        let syntax::WalkEvent::Enter(n) = event else {
            continue;
        };
        if n != *node && n.kind() == SyntaxKind::GRAPH {
            events.skip_subtree();
            continue;
        }
        if let Some(call) = ast::CallExpr::cast(n) {
            if let Some(ast::Expr::NameRef(name)) = call.callee() {
                out.push(name.text());
            }
        }
    }
    out
}

/// Every graph name of the file (top-level and nested) whose body has effects,
/// solved to a fixpoint over calls.
pub fn effectful_graphs(file: &ast::SourceFile) -> HashSet<String> {
    effectful_graphs_with(file, &HashSet::new())
}

/// [`effectful_graphs`] where the graphs named `seeds` (imported ones) have
/// effects too; the result holds the file's own graphs only.
pub fn effectful_graphs_with(file: &ast::SourceFile, seeds: &HashSet<String>) -> HashSet<String> {
    let graphs = graph_calls(file.syntax());
    let mut effectful: HashSet<String> = HashSet::new();
    loop {
        let before = effectful.len();
        for (name, calls) in &graphs {
            if !effectful.contains(name)
                && calls
                    .iter()
                    .any(|c| is_effect_primitive(c) || effectful.contains(c) || seeds.contains(c))
            {
                effectful.insert(name.clone());
            }
        }
        if effectful.len() == before {
            return effectful;
        }
    }
}

/// Each graph in `node` (the node itself, if a graph, and every nested one)
/// with the names its body calls: what [`effectful_graphs`] solves over. The
/// incremental database keeps this per top-level item.
pub fn graph_calls(node: &SyntaxNode) -> Vec<(String, Vec<String>)> {
    node.descendants()
        .filter_map(ast::Graph::cast)
        .filter_map(|g| Some((g.name()?.text(), called_names(g.syntax()))))
        .collect()
}

/// Whether code `node` (a block, or a branch) itself calls something with
/// effects; nested `graph` definitions in it do not count (they run when called).
pub fn calls_effects(node: &SyntaxNode, is_effectful_graph: &dyn Fn(&str) -> bool) -> bool {
    called_names(node)
        .iter()
        .any(|c| is_effect_primitive(c) || is_effectful_graph(c))
}
