//! Instances of composite primitives (`ops::composite`): a composite's DSL
//! definition lowered with its attributes bound to a call's constant values.
//! An instance is a top-level graph named by [`ops::composite::instance_key`],
//! so inference, execution and differentiation treat a composite call as a
//! call of that graph; they are made once per process and shared.
//!
//! The expansions of primitives without a gradient rule
//! (`ops::composite::expansion`, the `_...Grad` helpers) lower the same way:
//! [`instance`] gives theirs where differentiating needs it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use ir::{Body, NodeKind, PrimRef, Value};
use syntax::ast;

use crate::lower::{lower_instance, LoweredGraph};

fn cache() -> &'static Mutex<HashMap<String, Arc<LoweredGraph>>> {
    static CACHE: OnceLock<Mutex<HashMap<String, Arc<LoweredGraph>>>> = OnceLock::new();
    CACHE.get_or_init(Default::default)
}

/// The parsed definitions of `source` (one of `ops::composite`'s files).
fn definitions(source: &'static str) -> &'static syntax::Parse {
    static PARSES: OnceLock<Mutex<HashMap<usize, &'static syntax::Parse>>> = OnceLock::new();
    let mut parses = PARSES
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    parses
        .entry(source.as_ptr() as usize)
        .or_insert_with(|| Box::leak(Box::new(syntax::parse(source))))
}

/// The instance a call of composite primitive `prim` runs, or, for a
/// primitive without a gradient rule, the instance of its expansion that
/// differentiating it inlines (`None` when `prim` is neither).
pub fn instance(prim: &PrimRef) -> Option<Arc<LoweredGraph>> {
    let (c, source) = ops::composite::inlined_definition(&prim.name)?;
    let key = ops::composite::instance_key(prim)?;
    if let Some(found) = cache().lock().ok()?.get(&key) {
        return Some(found.clone());
    }
    let file: ast::SourceFile = definitions(source).tree();
    let graph = file
        .graphs()
        .find(|g| g.name().is_some_and(|n| n.text() == prim.name))?;
    let attrs = ops::composite::instance_attrs(c.op, &prim.attrs);
    let lowered = Arc::new(lower_instance(&graph, &key, &attrs));
    let mut map = cache().lock().ok()?;
    Some(map.entry(key).or_insert(lowered).clone())
}

/// An instance made before, by its key.
pub fn instance_by_key(key: &str) -> Option<Arc<LoweredGraph>> {
    cache().lock().ok()?.get(key).cloned()
}

/// The body of `prim`'s instance (for passes that only need the IR).
pub fn instance_body(prim: &PrimRef) -> Option<Arc<Body>> {
    instance(prim).map(|l| l.body.clone())
}

/// The composite primitives `body` calls directly.
pub fn composite_calls(body: &Body) -> Vec<PrimRef> {
    let mut out: Vec<PrimRef> = Vec::new();
    for node in &body.nodes {
        if let NodeKind::Const(Value::Prim(p)) = &node.kind {
            if ops::composite::composite(&p.name).is_some() && !out.contains(p) {
                out.push(p.clone());
            }
        }
    }
    out
}

/// The instances the bodies use, directly or through other instances, by key.
pub fn instances_used<'a>(
    bodies: impl IntoIterator<Item = &'a Body>,
) -> Vec<(String, Arc<LoweredGraph>)> {
    let mut work: Vec<PrimRef> = bodies.into_iter().flat_map(composite_calls).collect();
    let mut out: Vec<(String, Arc<LoweredGraph>)> = Vec::new();
    while let Some(p) = work.pop() {
        let Some(key) = ops::composite::instance_key(&p) else {
            continue;
        };
        if out.iter().any(|(k, _)| *k == key) {
            continue;
        }
        if let Some(l) = instance(&p) {
            work.extend(composite_calls(&l.body));
            out.push((key, l));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every composite's default instance lowers without a diagnostic (those
    /// with required attributes lower with the values of their cases in
    /// crates/exec/tests/composites.rs).
    #[test]
    fn every_composite_lowers_cleanly() {
        for (name, c) in ops::composite::composites() {
            let required =
                c.op.attrs()
                    .any(|p| matches!(p.kind, ops::ParamKind::Attr { default: None, .. }));
            if required {
                continue;
            }
            let prim = PrimRef::new(*name);
            let l = instance(&prim).unwrap_or_else(|| panic!("{name}: no instance"));
            assert!(
                l.diagnostics.is_empty(),
                "{name}: {:?}",
                l.diagnostics.iter().map(|d| &d.message).collect::<Vec<_>>()
            );
            assert_eq!(l.body.graph(l.body.root()).params.len(), c.op.input_count());
        }
    }

    #[test]
    fn composites_do_not_shadow_primitives() {
        for name in ops::composite::composites().keys() {
            let op = ops::lookup(name).expect("registered");
            assert_eq!(
                op.category,
                ops::Category::Composite,
                "composite `{name}` has the name of a primitive"
            );
        }
    }
}
