//! Type and shape inference: abstract interpretation over MindIR graphs, as
//! MindSpore's static analysis does.
//!
//! A graph is evaluated on abstract values (dtypes, shapes with symbolic
//! dimensions, constants, tuples, function values). Every top-level graph is an
//! entry, checked with its declared parameter types; each call of a graph is
//! specialised on its (widened) argument values and cached, recursion is solved
//! by fixpoint iteration from "not yet known" (⊥), and `if` branches are joined.
//! An entry reports problems in its own graph; a problem inside a graph it calls
//! (for those particular arguments) is reported at its call.

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use std::sync::Arc;

use ir::{
    AbsVal, AttrValue, Body, DType, Dim, FnTy, GraphId, MetaFn, NodeId, NodeKind, PrimRef,
    ScalarConst, Shape, TextRange, Ty, Value, WrtItem,
};

use crate::diagnostic::{Code, Diagnostic, Related};
use crate::lower::LoweredGraph;

/// Where inference gets the program from (a plain map, or the incremental database).
pub trait ProgramSource {
    fn graph(&self, name: &str) -> Option<Arc<LoweredGraph>>;
    /// A weight's declared type.
    fn weight(&self, name: &str) -> Option<Ty>;

    /// What a call of top-level graph `name` checks at the call site: the
    /// incremental database answers from a query that an edit inside the
    /// body does not change.
    fn signature(&self, name: &str) -> Option<Arc<Signature>> {
        self.graph(name)
            .map(|g| Arc::new(Signature::of(&g, g.body.root())))
    }

    /// Top-level graph `name` called with `args` (widened), evaluated on its
    /// own where the source can tell it without this engine evaluating the
    /// body (`None`: evaluate it here). The database memoises it per graph
    /// and arguments, so an edit inside a graph re-infers its callers only
    /// when the summary changes.
    fn call_result(&self, _name: &str, _args: &[AbsVal]) -> Option<CallSummary> {
        None
    }
}

/// What a call of a top-level graph comes to, evaluated on its own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallSummary {
    pub output: Val,
    /// No problem was found anywhere in the evaluation (the graph's body,
    /// and the graphs it called, transitively): a caller that would report
    /// such problems at its call has nothing to report, and needs only
    /// `output`.
    pub clean: bool,
}

/// A graph's interface as a call sees it. It holds no ranges (those of a
/// callee mean something only in the coordinates `graph()` gives it, so the
/// engine takes them from there when it reports).
#[derive(Debug, Clone, PartialEq)]
pub struct Signature {
    pub name: String,
    /// Each parameter's name and declared type.
    pub params: Vec<(Option<String>, Option<Ty>)>,
}

impl Signature {
    pub fn of(lowered: &LoweredGraph, graph: GraphId) -> Signature {
        let body = &lowered.body;
        let g = body.graph(graph);
        Signature {
            name: g.name.clone(),
            params: g
                .params
                .iter()
                .map(|&p| {
                    let node = body.node(p);
                    (
                        node.name.clone(),
                        node.annotation.as_ref().map(|(t, _)| t.clone()),
                    )
                })
                .collect(),
        }
    }

    /// Whether `args` are the declared parameter types (what checking the
    /// graph as an entry passes).
    fn is_own_check(&self, args: &[Val]) -> bool {
        self.params.iter().zip(args).all(|((_, ann), a)| {
            let declared = ann.as_ref().map_or(AbsVal::Any, AbsVal::from_ty);
            a.as_ref().map(AbsVal::widen) == Some(declared.widen())
        })
    }
}

/// Whether `v` holds a function handle (meaningful only in one engine's table).
fn has_func(v: &AbsVal) -> bool {
    match v {
        AbsVal::Func(_) => true,
        AbsVal::Tuple(items) => items.iter().any(has_func),
        _ => false,
    }
}

/// A function value.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum FuncVal {
    Prim(PrimRef),
    /// A graph with the values of its free variables (a closure when non-empty).
    Graph {
        item: Arc<str>,
        graph: GraphId,
        env: Vec<(NodeId, AbsVal)>,
    },
    Partial {
        f: u32,
        args: Vec<AbsVal>,
    },
    /// `grad`, `value_and_grad` or `vjp` not yet applied to a function.
    MetaOp(MetaFn),
    /// `grad(f)` etc.
    Meta {
        meta: MetaFn,
        f: u32,
    },
    /// The backpropagator `vjp(f)(args)` returns.
    Backprop {
        f: u32,
        args: Vec<AbsVal>,
    },
    /// One of several functions (a `Switch` on an unknown condition).
    Union(Vec<u32>),
}

/// What inference found for one entry graph.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct EntryResult {
    /// Every value each node of the entry's own body took (one per specialisation).
    pub node_values: HashMap<NodeId, Vec<AbsVal>>,
    /// Values the nodes of other top-level graphs took in the calls this entry
    /// made (by graph name): how generic graphs were specialised.
    pub other_values: HashMap<String, HashMap<NodeId, Vec<AbsVal>>>,
    /// The entry's parameter values and result, when known.
    pub params: Vec<AbsVal>,
    pub output: Option<AbsVal>,
    pub diagnostics: Vec<Diagnostic>,
    /// Function types, for describing `AbsVal::Func` handles (a table the
    /// entries checked together share: it only grows, so one copy at the end
    /// serves them all).
    pub funcs: Arc<Vec<FuncVal>>,
}

impl EntryResult {
    /// A value as a type the user reads.
    pub fn ty_of(&self, v: &AbsVal) -> Ty {
        v.to_ty(&|_| None::<FnTy>)
    }
}

type Val = Option<AbsVal>;

#[derive(Clone)]
enum CacheEntry {
    InProgress(Val),
    Done(Val),
}

#[derive(Clone, PartialEq, Eq, Hash)]
struct SpecKey {
    item: Arc<str>,
    graph: GraphId,
    args: Vec<AbsVal>,
    env: Vec<(NodeId, AbsVal)>,
}

struct Active {
    key: SpecKey,
    /// A recursive call reached this specialisation during the current iteration.
    hit: bool,
    /// A recursive call reached an enclosing specialisation while this one ran.
    tainted: bool,
}

struct Frame {
    item: Arc<str>,
    lowered: Arc<LoweredGraph>,
    graph: GraphId,
    values: HashMap<NodeId, Val>,
    env: Arc<HashMap<NodeId, Val>>,
    evaluating: HashSet<NodeId>,
}

/// Infers the entry graph `name` (a top-level graph), checked with its declared
/// parameter types (unannotated parameters are unknown).
pub fn infer_entry(source: &dyn ProgramSource, name: &str) -> EntryResult {
    let mut engine = Engine::new(source, name);
    let mut result = engine.run_entry(name);
    result.funcs = Arc::new(std::mem::take(&mut engine.funcs));
    result
}

/// Top-level graph `name` called with `args` (already widened), evaluated on
/// its own: what [`ProgramSource::call_result`] memoises. `None` when the
/// result holds a function (its handle would mean nothing to the caller's
/// engine) or the graph never returns.
pub fn infer_call(
    source: &dyn ProgramSource,
    name: &str,
    args: Vec<AbsVal>,
) -> Option<CallSummary> {
    let mut engine = Engine::new(source, name);
    engine.record_values = false;
    let item: Arc<str> = Arc::from(name);
    let root = source.graph(name)?.body.root();
    let out = engine.call_graph(
        &item,
        root,
        args.into_iter().map(Some).collect(),
        Arc::new(HashMap::default()),
        None,
    );
    match &out {
        Some(v) if !has_func(v) => Some(CallSummary {
            output: out,
            clean: !engine.problems,
        }),
        _ => None,
    }
}

/// [`infer_entry`] without `other_values` (the values nodes of other graphs
/// took in this entry's calls), so calls the source memoises
/// ([`ProgramSource::call_result`]) are not evaluated again: what the
/// language server asks, which shows each graph's values from its own entry.
pub fn infer_entry_own(source: &dyn ProgramSource, name: &str) -> EntryResult {
    let mut engine = Engine::new(source, name);
    engine.skip_other_values = true;
    let mut result = engine.run_entry(name);
    result.funcs = Arc::new(std::mem::take(&mut engine.funcs));
    result
}

/// Infers several entries with one shared cache of graph specialisations, so a
/// graph called from many entries is inferred once per specialisation. Give the
/// entries callees first (see `callees_first`): a graph's own entry then
/// reports the problems in its body, and its callers find them cached. A
/// specialisation is evaluated once, so an entry's `other_values` holds only
/// those it reached first; `FileAnalysis::values_of` merges all of them, and
/// `infer_entry` gives one entry's complete view.
pub fn infer_all(
    source: &dyn ProgramSource,
    names: &[String],
) -> std::collections::HashMap<String, EntryResult> {
    let Some(first) = names.first() else {
        return Default::default();
    };
    let mut engine = Engine::new(source, first);
    let mut results: std::collections::HashMap<String, EntryResult> = names
        .iter()
        .map(|n| (n.clone(), engine.run_entry(n)))
        .collect();
    // One table for all: a copy per entry would make the check quadratic.
    let funcs = Arc::new(std::mem::take(&mut engine.funcs));
    for r in results.values_mut() {
        r.funcs = funcs.clone();
    }
    results
}

/// Orders top-level graphs so that each comes after the graphs it refers to
/// (cycles, i.e. recursion, in source order).
pub fn callees_first(source: &dyn ProgramSource, order: &[String]) -> Vec<String> {
    fn visit(
        name: &str,
        source: &dyn ProgramSource,
        state: &mut HashMap<String, bool>,
        out: &mut Vec<String>,
    ) {
        // Iterative DFS would avoid deep recursion; call chains this deep
        // (thousands of graphs) are rare, so bound it instead.
        if state.contains_key(name) || out.len() > 1_000_000 {
            return;
        }
        state.insert(name.to_string(), false);
        if let Some(g) = source.graph(name) {
            for node in &g.body.nodes {
                if let NodeKind::Const(Value::Global(callee)) = &node.kind {
                    visit(callee, source, state, out);
                }
            }
        }
        state.insert(name.to_string(), true);
        out.push(name.to_string());
    }
    let mut state = HashMap::default();
    let mut out = Vec::with_capacity(order.len());
    for name in order {
        visit(name, source, &mut state, &mut out);
    }
    out.retain(|n| order.contains(n));
    out
}

impl<'a> Engine<'a> {
    fn new(source: &'a dyn ProgramSource, entry: &str) -> Engine<'a> {
        Engine {
            source,
            entry: Arc::from(entry),
            funcs: Vec::new(),
            func_ids: HashMap::default(),
            cache: HashMap::default(),
            active: Vec::new(),
            diagnostics: Vec::new(),
            seen: HashSet::default(),
            node_values: HashMap::default(),
            other_values: HashMap::default(),
            call_stack: Vec::new(),
            fv_cache: HashMap::default(),
            depth: 0,
            record_values: true,
            skip_other_values: false,
            problems: false,
        }
    }

    /// Checks entry `name` with its declared parameter types.
    fn run_entry(&mut self, name: &str) -> EntryResult {
        let Some(lowered) = self.lowered(name) else {
            return EntryResult::default();
        };
        self.entry = Arc::from(name);
        let body = lowered.body.clone();
        let root = body.graph(body.root());
        let args: Vec<Val> = root
            .params
            .iter()
            .map(|&p| {
                Some(
                    body.node(p)
                        .annotation
                        .as_ref()
                        .map_or(AbsVal::Any, |(t, _)| AbsVal::from_ty(t)),
                )
            })
            .collect();
        let item: Arc<str> = Arc::from(name);
        let output = self.call_graph(
            &item,
            body.root(),
            args.clone(),
            Arc::new(HashMap::default()),
            None,
        );
        if output.is_none() {
            let range = root.name_span.unwrap_or_default();
            self.report(
                &item,
                Diagnostic::error(
                    Code::Recursion,
                    range,
                    format!("`{name}` never returns a value: every path recurses"),
                ),
            );
        }
        let mut diagnostics = std::mem::take(&mut self.diagnostics);
        diagnostics.sort_by_key(|d| (d.range.start(), d.code));
        EntryResult {
            node_values: std::mem::take(&mut self.node_values),
            other_values: std::mem::take(&mut self.other_values),
            params: args.into_iter().map(|a| a.unwrap_or(AbsVal::Any)).collect(),
            output,
            diagnostics,
            // Filled in by the caller, once every entry has run.
            funcs: Arc::default(),
        }
    }
}

struct Engine<'a> {
    source: &'a dyn ProgramSource,
    entry: Arc<str>,
    funcs: Vec<FuncVal>,
    func_ids: HashMap<FuncVal, u32>,
    cache: HashMap<SpecKey, CacheEntry>,
    /// Graph specialisations being evaluated, innermost last.
    active: Vec<Active>,
    diagnostics: Vec<Diagnostic>,
    seen: HashSet<(TextRange, Code, String)>,
    node_values: HashMap<NodeId, Vec<AbsVal>>,
    other_values: HashMap<String, HashMap<NodeId, Vec<AbsVal>>>,
    /// Calls in progress: the calling item, the call's range, the callee, and
    /// whether the call is the callee's own check (its declared parameter
    /// types, no closure): what goes wrong in such a call is reported when the
    /// callee is checked as an entry, not again at the call.
    call_stack: Vec<(Arc<str>, TextRange, String, bool)>,
    fv_cache: HashMap<(Arc<str>, GraphId), Arc<Vec<NodeId>>>,
    depth: usize,
    /// Keep the values nodes take (off where only a call's result is wanted).
    record_values: bool,
    /// Keep only the entry's own node values, not its callees'
    /// (`other_values`): what the language server shows.
    skip_other_values: bool,
    /// Some problem was raised (reported or not) during the evaluation.
    problems: bool,
}

/// Deeper than this, a chain of graph calls is reported instead of followed.
const MAX_DEPTH: usize = 200;

/// Tuples nested deeper than this that differ join to `Any` (see
/// `Engine::join_values_at`).
const MAX_JOIN_DEPTH: usize = 4;

impl Engine<'_> {
    /// A top-level graph of the program, or an instance of a composite primitive.
    fn lowered(&self, name: &str) -> Option<Arc<LoweredGraph>> {
        self.source
            .graph(name)
            .or_else(|| crate::composite::instance_by_key(name))
    }

    fn intern(&mut self, f: FuncVal) -> AbsVal {
        if let Some(&id) = self.func_ids.get(&f) {
            return AbsVal::Func(id);
        }
        let id = self.funcs.len() as u32;
        self.funcs.push(f.clone());
        self.func_ids.insert(f, id);
        AbsVal::Func(id)
    }

    /// Reports a diagnostic raised while evaluating `item`: as is when it is the
    /// entry's own, else at the entry's call that led there.
    fn report(&mut self, item: &Arc<str>, d: Diagnostic) {
        self.problems = true;
        let d = if *item == self.entry {
            d
        } else {
            let Some((_, call, callee, own)) = self
                .call_stack
                .iter()
                .find(|(caller, _, _, _)| *caller == self.entry)
            else {
                return;
            };
            if *own {
                return;
            }
            let message = format!(
                "calling `{callee}` with these arguments fails: {}",
                d.message
            );
            let mut outer =
                Diagnostic::error(d.code, *call, message).with_related(d.range, d.message.clone());
            outer.related.extend(d.related);
            outer.notes.extend(d.notes);
            outer
        };
        if self.seen.insert((d.range, d.code, d.message.clone())) {
            self.diagnostics.push(d);
        }
    }

    /// A graph's name range and its parameters' annotation ranges, in the
    /// coordinates of its lowering as the source gives it (read only to
    /// report: the lowering changes with every edit of the body).
    fn annotation_ranges(
        &self,
        item: &str,
        graph: GraphId,
    ) -> (Option<TextRange>, Vec<Option<TextRange>>) {
        let Some(lowered) = self.lowered(item) else {
            return (None, Vec::new());
        };
        let body = &lowered.body;
        let g = body.graph(graph);
        let params = g
            .params
            .iter()
            .map(|&p| body.node(p).annotation.as_ref().map(|(_, r)| *r))
            .collect();
        (g.name_span, params)
    }

    /// The source's memoised result of a call of top-level graph `item`
    /// (see [`ProgramSource::call_result`]), where using it loses nothing:
    /// the evaluation found no problem, or whatever it found would not be
    /// reported to this entry (an own-check call, `own`, made under the
    /// entry's outermost call being an own-check call too, or being this one).
    fn memoised_call(&mut self, item: &Arc<str>, args: &[Val], own: bool) -> Option<Val> {
        if !self.record_values_of_callees_unneeded() {
            return None;
        }
        let widened: Option<Vec<AbsVal>> = args
            .iter()
            .map(|a| a.as_ref().map(AbsVal::widen).filter(|v| !has_func(v)))
            .collect();
        let summary = self.source.call_result(item, &widened?)?;
        if !summary.clean {
            let outer_own = self
                .call_stack
                .iter()
                .find(|(caller, _, _, _)| *caller == self.entry)
                .is_none_or(|c| c.3);
            if !(own && outer_own) {
                // Evaluated here, the call reports what it finds.
                return None;
            }
            self.problems = true;
        }
        Some(summary.output)
    }

    /// A memoised call skips the callee's evaluation, so the values its nodes
    /// take are not recorded: only engines that keep no callee values
    /// (`other_values`) may use one.
    fn record_values_of_callees_unneeded(&self) -> bool {
        !self.record_values || self.skip_other_values
    }

    fn free_variables(&mut self, item: &Arc<str>, body: &Body, graph: GraphId) -> Arc<Vec<NodeId>> {
        self.fv_cache
            .entry((item.clone(), graph))
            .or_insert_with(|| Arc::new(body.free_variables(graph)))
            .clone()
    }

    fn call_graph(
        &mut self,
        item: &Arc<str>,
        graph: GraphId,
        args: Vec<Val>,
        env: Arc<HashMap<NodeId, Val>>,
        _site: Option<TextRange>,
    ) -> Val {
        let Some(lowered) = self.lowered(item) else {
            return Some(AbsVal::Any);
        };
        if args.iter().any(Option::is_none) {
            return None;
        }
        let widened: Vec<AbsVal> = args.iter().map(|a| a.as_ref().unwrap().widen()).collect();
        let mut env_key: Vec<(NodeId, AbsVal)> = env
            .iter()
            .map(|(k, v)| (*k, v.clone().unwrap_or(AbsVal::Any).widen()))
            .collect();
        env_key.sort_by_key(|(k, _)| *k);
        let key = SpecKey {
            item: item.clone(),
            graph,
            args: widened.clone(),
            env: env_key,
        };
        match self.cache.get(&key) {
            Some(CacheEntry::Done(v)) => return v.clone(),
            Some(CacheEntry::InProgress(v)) => {
                // A recursive call: answer with the current assumption. The graphs
                // called since then depend on it, so their results are not final.
                let v = v.clone();
                if let Some(pos) = self.active.iter().position(|a| a.key == key) {
                    self.active[pos].hit = true;
                    for a in &mut self.active[pos + 1..] {
                        a.tainted = true;
                    }
                }
                return v;
            }
            None => {}
        }
        if self.depth > MAX_DEPTH {
            return Some(AbsVal::Any);
        }
        self.depth += 1;
        let mut assumption: Val = None;
        self.cache.insert(key.clone(), CacheEntry::InProgress(None));
        self.active.push(Active {
            key: key.clone(),
            hit: false,
            tainted: false,
        });
        let mut result = None;
        for _ in 0..8 {
            self.active.last_mut().unwrap().hit = false;
            result = self.eval_graph(
                item,
                &lowered,
                graph,
                widened.iter().cloned().map(Some).collect(),
                env.clone(),
            );
            let hit = self.active.last().unwrap().hit;
            if !hit || result == assumption {
                break;
            }
            assumption = match (&assumption, &result) {
                (Some(a), Some(r)) => Some(self.join_values(a, r).unwrap_or(AbsVal::Any)),
                _ => result.clone(),
            };
            self.cache
                .insert(key.clone(), CacheEntry::InProgress(assumption.clone()));
        }
        self.depth -= 1;
        let done = self.active.pop().unwrap();
        if done.tainted {
            // Computed under an enclosing recursion's assumption: recompute next time.
            self.cache.remove(&key);
        } else {
            self.cache.insert(key, CacheEntry::Done(result.clone()));
        }
        result
    }

    fn eval_graph(
        &mut self,
        item: &Arc<str>,
        lowered: &Arc<LoweredGraph>,
        graph: GraphId,
        args: Vec<Val>,
        env: Arc<HashMap<NodeId, Val>>,
    ) -> Val {
        let body = lowered.body.clone();
        let g = body.graph(graph);
        let mut frame = Frame {
            item: item.clone(),
            lowered: lowered.clone(),
            graph,
            values: HashMap::default(),
            env,
            evaluating: HashSet::default(),
        };
        let mut symbols = HashMap::default();
        for (&p, a) in g.params.iter().zip(&args) {
            let mut value = a.clone();
            if let (Some((ty, range)), Some(v)) = (&body.node(p).annotation, a) {
                if let Err(why) = conforms(v, ty, &mut symbols) {
                    let name = body.node(p).name.clone().unwrap_or_default();
                    self.report(
                        item,
                        Diagnostic::error(
                            Code::ArgumentMismatch,
                            *range,
                            format!("parameter `{name}` is declared {ty} but gets {v}: {why}"),
                        ),
                    );
                }
                if matches!(v, AbsVal::Any) {
                    value = Some(AbsVal::from_ty(ty));
                }
            }
            self.record(item, p, &value);
            frame.values.insert(p, value);
        }
        // Statements in order (bindings may fail even if unused), then the output.
        for &n in &g.nodes {
            self.eval_node(&mut frame, n);
        }
        // Annotated bindings of values that are not calls (`z: f32[4] = x`):
        // a parameter of this graph, or a constant or weight (in the root graph).
        let plain: Vec<NodeId> = lowered
            .source_map
            .annotations
            .iter()
            .map(|(n, _, _)| *n)
            .filter(|&n| {
                let node = body.node(n);
                !matches!(node.kind, NodeKind::Apply(_))
                    && (node.graph == Some(graph) || (node.graph.is_none() && graph == body.root()))
            })
            .collect();
        for n in plain {
            let value = self.lookup(&mut frame, n);
            self.check_annotations(&frame, n, &value);
        }
        let out = match g.output {
            Some(o) => {
                let v = self.eval_node(&mut frame, o);
                self.record(item, o, &v);
                v
            }
            None => Some(AbsVal::Any),
        };
        if let (Some((ty, range)), Some(v)) = (&g.ret_annotation, &out) {
            if let Err(why) = conforms(v, ty, &mut symbols) {
                self.report(
                    item,
                    Diagnostic::error(
                        Code::AnnotationMismatch,
                        *range,
                        format!(
                            "`{}` is declared to return {ty} but returns {v}: {why}",
                            g.name
                        ),
                    )
                    .with_related(
                        g.output.and_then(|o| body.node(o).span).unwrap_or(*range),
                        format!("this is {v}"),
                    ),
                );
            }
        }
        match (&g.ret_annotation, out) {
            // A body that comes to nothing known (an error in it, reported
            // there) gives its callers what it declares, as a parameter
            // declared but given nothing known is what it declares: callers
            // see the signature, and an edit that breaks the body for a
            // moment leaves their inference as it was.
            (Some((ty, _)), Some(AbsVal::Any)) => Some(declared_value(ty, &symbols)),
            (_, out) => out,
        }
    }

    fn record(&mut self, item: &Arc<str>, node: NodeId, value: &Val) {
        if !self.record_values || (self.skip_other_values && *item != self.entry) {
            return;
        }
        if let Some(v) = value {
            let map = if *item == self.entry {
                &mut self.node_values
            } else {
                self.other_values.entry(item.to_string()).or_default()
            };
            let list = map.entry(node).or_default();
            if !list.contains(v) {
                // Most nodes have one value: a first push would make room
                // for four, kept as long as the inference is.
                if list.is_empty() {
                    list.reserve_exact(1);
                }
                list.push(v.clone());
            }
        }
    }

    fn lookup(&mut self, frame: &mut Frame, n: NodeId) -> Val {
        self.eval_node(frame, n)
    }

    fn eval_node(&mut self, frame: &mut Frame, n: NodeId) -> Val {
        if let Some(v) = frame.values.get(&n) {
            return v.clone();
        }
        let body = frame.lowered.body.clone();
        let node = body.node(n);
        match &node.kind {
            NodeKind::Const(v) => {
                let value = self.constant(frame, v);
                return Some(value);
            }
            NodeKind::Weight(name) => {
                return Some(
                    self.source
                        .weight(name)
                        .map_or(AbsVal::Any, |t| AbsVal::from_ty(&t)),
                );
            }
            _ => {}
        }
        if node.graph != Some(frame.graph) {
            // A free variable: its value was captured when the closure was made.
            return frame.env.get(&n).cloned().unwrap_or(Some(AbsVal::Any));
        }
        let NodeKind::Apply(inputs) = &node.kind else {
            return Some(AbsVal::Any);
        };
        if !frame.evaluating.insert(n) {
            let span = node.span.unwrap_or_default();
            self.report(
                &frame.item.clone(),
                Diagnostic::error(Code::Recursion, span, "this value depends on itself"),
            );
            return Some(AbsVal::Any);
        }
        let values: Vec<Val> = inputs.iter().map(|&i| self.lookup(frame, i)).collect();
        let result = self.apply(frame, n, &values);
        frame.evaluating.remove(&n);
        self.check_annotations(frame, n, &result);
        let item = frame.item.clone();
        self.record(&item, n, &result);
        frame.values.insert(n, result.clone());
        result
    }

    /// E0210 for each annotation of a binding of node `n` (with value
    /// `value`) that the value does not match.
    fn check_annotations(&mut self, frame: &Frame, n: NodeId, value: &Val) {
        let Some(v) = value else {
            return;
        };
        let annotations: Vec<(Ty, TextRange)> = frame
            .lowered
            .source_map
            .annotations
            .iter()
            .filter(|(node, _, _)| *node == n)
            .map(|(_, t, r)| (t.clone(), *r))
            .collect();
        for (ty, range) in annotations {
            if let Err(why) = conforms(v, &ty, &mut HashMap::default()) {
                let mut d = Diagnostic::error(
                    Code::AnnotationMismatch,
                    range,
                    format!("declared {ty} but the value is {v}: {why}"),
                )
                .with_fix(
                    format!("change the annotation to `{v}`"),
                    range,
                    v.to_string(),
                );
                d.label = Some(format!("declared {ty}"));
                if let Some(span) = frame.lowered.body.node(n).span.filter(|s| *s != range) {
                    d = d.with_related(span, format!("this is {v}"));
                }
                self.report(&frame.item.clone(), d);
            }
        }
    }

    fn constant(&mut self, frame: &mut Frame, v: &Value) -> AbsVal {
        match v {
            Value::Scalar { value, dtype, weak } => AbsVal::Scalar {
                dtype: *dtype,
                value: Some(*value),
                weak: *weak,
            },
            Value::Str(s) => AbsVal::Str(Some(s.clone())),
            Value::None => AbsVal::None,
            Value::Tuple(items) => {
                AbsVal::Tuple(items.iter().map(|i| self.constant(frame, i)).collect())
            }
            Value::Tensor(t) => AbsVal::tensor(
                t.dtype(),
                &t.shape().iter().map(|&d| d as i64).collect::<Vec<_>>(),
            ),
            Value::Prim(p) => self.intern(FuncVal::Prim(p.clone())),
            Value::Graph(h) => {
                let body = frame.lowered.body.clone();
                let fvs = self.free_variables(&frame.item, &body, *h);
                let mut env = Vec::new();
                for &fv in fvs.iter() {
                    let value = if body.node(fv).graph == Some(frame.graph) {
                        self.eval_node(frame, fv)
                    } else {
                        frame.env.get(&fv).cloned().unwrap_or(Some(AbsVal::Any))
                    };
                    env.push((fv, value.unwrap_or(AbsVal::Any)));
                }
                self.intern(FuncVal::Graph {
                    item: frame.item.clone(),
                    graph: *h,
                    env,
                })
            }
            Value::Global(name) => {
                if self.source.signature(name).is_some() {
                    self.intern(FuncVal::Graph {
                        item: Arc::from(name.as_str()),
                        graph: GraphId(0),
                        env: Vec::new(),
                    })
                } else {
                    AbsVal::Any
                }
            }
            Value::Meta(m) => self.intern(FuncVal::MetaOp(m.clone())),
            Value::Type(_) => AbsVal::Any,
            Value::Monad => AbsVal::Monad,
        }
    }

    fn span(&self, frame: &Frame, n: NodeId, input: Option<usize>) -> TextRange {
        let map = &frame.lowered.source_map;
        let node_span = frame.lowered.body.node(n).span.unwrap_or_default();
        match input {
            Some(i) => map
                .input_spans
                .get(&n)
                .and_then(|s| s.get(i).copied())
                .unwrap_or(node_span),
            None => node_span,
        }
    }

    fn apply(&mut self, frame: &mut Frame, n: NodeId, values: &[Val]) -> Val {
        let callee = values[0].clone()?;
        let args = &values[1..];
        self.apply_value(frame, n, callee, args.to_vec())
    }
}

mod apply;
mod prims;
pub use prims::*;
