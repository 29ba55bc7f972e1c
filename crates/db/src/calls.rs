//! Firewalls between a graph and its callers, as rust-analyzer puts one
//! between a function's body and its signature.
//!
//! Inferring an entry evaluates the graphs it calls with its arguments. Done
//! naively, an edit inside a graph re-infers every graph that calls it,
//! transitively, each time re-evaluating the whole chain below. Two queries
//! stop that: a call reads the callee's [`signature`] (unchanged by an edit of
//! the body), and, where nothing would be reported at the call (the
//! evaluation found no problem, or the call has the callee's own declared
//! parameter types, whose problems the callee's own entry reports), only the
//! call's summary, [`call_output`], memoised per graph and arguments. When an
//! edit leaves that summary unchanged, salsa keeps the callers' inference as
//! it was.

use std::cell::Cell;
use std::sync::Arc;

use analysis::infer::{infer_call, CallSummary, Signature};
use ir::{AbsVal, NodeKind, Value};

use crate::{catch_panic, lowered, DbSource, ItemKey};

/// A graph called with these (widened) arguments.
#[salsa::interned(debug, unsafe(no_lifetime), revisions = usize::MAX)]
pub struct CallKey {
    #[returns(copy)]
    pub callee: ItemKey,
    #[returns(ref)]
    pub args: Vec<AbsVal>,
}

/// A top-level graph's signature: what a call checks.
#[salsa::tracked(returns(ref))]
pub fn signature(db: &dyn salsa::Database, key: ItemKey) -> Option<Arc<Signature>> {
    let g = lowered(db, key)?;
    Some(Arc::new(Signature::of(&g, g.body.root())))
}

/// The top-level names a graph refers to, sorted.
#[salsa::tracked(returns(ref))]
pub fn callees(db: &dyn salsa::Database, key: ItemKey) -> Vec<String> {
    let Some(g) = lowered(db, key) else {
        return Vec::new();
    };
    let mut out: Vec<String> = g
        .body
        .nodes
        .iter()
        .filter_map(|n| match &n.kind {
            NodeKind::Const(Value::Global(name)) => Some(name.clone()),
            _ => None,
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

/// The item `name` names in `from`'s file (its imports resolved), as
/// [`DbSource`] resolves it.
fn resolve(db: &dyn salsa::Database, from: ItemKey, name: &str) -> ItemKey {
    let file = from.file(db);
    if !file.imports(db).is_empty() {
        if let Some(key) = crate::namespace(db, file).resolve.get(name) {
            return *key;
        }
    }
    ItemKey::new(db, file, name.to_string())
}

/// Whether a graph can reach itself through calls (across imported files
/// too): recursion, which inference solves by iterating within one engine,
/// so such calls are not memoised apart.
#[salsa::tracked]
pub fn recursive(db: &dyn salsa::Database, key: ItemKey) -> bool {
    let mut seen = std::collections::HashSet::new();
    let mut stack: Vec<ItemKey> = vec![key];
    while let Some(k) = stack.pop() {
        for name in callees(db, k) {
            let next = resolve(db, k, name);
            if next == key {
                return true;
            }
            if seen.insert(next) {
                stack.push(next);
            }
        }
    }
    false
}

thread_local! {
    /// How many [`call_output`]s this thread is inside: a long chain of
    /// graphs, none memoised yet, is evaluated within one engine past this,
    /// instead of one query inside another (each a stack of frames).
    static NESTED: Cell<u32> = const { Cell::new(0) };
}

const MAX_NESTED: u32 = 32;

/// Whether a call may be answered by [`call_output`] on this thread now.
pub(crate) fn may_nest() -> bool {
    NESTED.with(|n| n.get() < MAX_NESTED)
}

/// A call of `call.callee` with `call.args`, evaluated on its own: its
/// result, and whether it found no problem; `None` where it cannot be
/// memoised apart (recursion, a function in the result, a failure), and the
/// caller evaluates the call itself.
#[salsa::tracked(returns(ref))]
pub fn call_output(db: &dyn salsa::Database, call: CallKey) -> Option<CallSummary> {
    let key = call.callee(db);
    if *recursive(db, key) {
        return None;
    }
    let name = key.name(db).clone();
    let source = DbSource::new(db, key.file(db), name.clone());
    let _nested = Nested::enter();
    catch_panic(|| infer_call(&source, &name, call.args(db).clone()))
        .ok()
        .flatten()
}

/// One level of [`NESTED`], left also when a cancellation unwinds.
struct Nested;

impl Nested {
    fn enter() -> Nested {
        NESTED.with(|n| n.set(n.get() + 1));
        Nested
    }
}

impl Drop for Nested {
    fn drop(&mut self) {
        NESTED.with(|n| n.set(n.get() - 1));
    }
}
