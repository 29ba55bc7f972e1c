//! Semantic facts in file coordinates: what a name at an offset refers to, the
//! inferred values of nodes, the graphs of a file.

use std::sync::Arc;

use analysis::infer::{EntryResult, FuncVal};
use analysis::{Def, LoweredGraph};
use db::{FileMapper, Inferred, ItemInfo, ItemKey, ItemKind, Items};
use ir::{AbsVal, GraphId, NodeId, NodeKind};
use rowan::TokenAtOffset;
use syntax::{SyntaxNode, SyntaxToken, TextRange, TextSize};

use crate::Analysis;

/// What a name refers to, with identity across the file: local definitions
/// are qualified by their top-level graph.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Target {
    /// A parameter or binding of a top-level graph's body (nested graphs included).
    /// `name` tells apart aliases (`y = x` binds `y` to `x`'s node).
    Local {
        item: String,
        node: NodeId,
        name: String,
    },
    /// A nested graph of a top-level graph's body.
    Nested {
        item: String,
        graph: GraphId,
    },
    Graph(String),
    Weight(String),
    Prim(String),
    Meta(&'static str),
    DType(ir::DType),
}

impl Target {
    fn from_def(item: &str, def: &Def, text: &str) -> Target {
        match def {
            Def::Node(n) => Target::Local {
                item: item.to_string(),
                node: *n,
                name: text.to_string(),
            },
            Def::Graph(g) => Target::Nested {
                item: item.to_string(),
                graph: *g,
            },
            Def::Global(n) => Target::Graph(n.clone()),
            Def::Weight(n) => Target::Weight(n.clone()),
            Def::Prim(n) => Target::Prim(n.clone()),
            Def::Meta(m) => Target::Meta(m),
            Def::DType(d) => Target::DType(*d),
        }
    }
}

/// A name in the file: where, what, and whether it is the definition.
#[derive(Debug, Clone)]
pub struct NameAt {
    pub range: TextRange,
    pub target: Target,
    pub is_def: bool,
}

/// One top-level graph's semantics in file coordinates.
pub struct GraphSema<'a> {
    pub info: &'a ItemInfo,
    pub lowered: Arc<LoweredGraph>,
    pub inferred: Option<Arc<Inferred>>,
    pub mapper: FileMapper<'a>,
    pub text: &'a str,
}

impl<'a> GraphSema<'a> {
    pub fn name(&self) -> &str {
        &self.info.name
    }

    pub fn result(&self) -> Option<&EntryResult> {
        self.inferred.as_ref().map(|i| &i.result)
    }

    /// Definitions and uses of names, in file coordinates.
    pub fn names(&self) -> Vec<NameAt> {
        let map = &self.lowered.source_map;
        let text = self.text;
        let at = |r: &TextRange, d: &Def, is_def: bool| {
            let range = self.mapper.range(*r);
            let t = text
                .get(usize::from(range.start())..usize::from(range.end()))
                .unwrap_or_default();
            NameAt {
                range,
                target: Target::from_def(self.name(), d, t),
                is_def,
            }
        };
        let mut out: Vec<NameAt> = map.defs.iter().map(|(r, d)| at(r, d, true)).collect();
        out.extend(map.refs.iter().map(|(r, d)| at(r, d, false)));
        out
    }

    /// Uses of names in file coordinates, with what they resolve to (no
    /// copies: for passes over every name of a file).
    pub fn uses(&self) -> impl Iterator<Item = (TextRange, &Def)> + use<'_, 'a> {
        self.lowered
            .source_map
            .refs
            .iter()
            .map(|(r, d)| (self.mapper.range(*r), d))
    }

    /// The values a node took (one per specialisation), known ones only.
    pub fn values(&self, node: NodeId) -> Vec<AbsVal> {
        self.result()
            .and_then(|r| r.node_values.get(&node))
            .cloned()
            .unwrap_or_default()
    }

    /// A node's source range in the file.
    pub fn node_range(&self, node: NodeId) -> Option<TextRange> {
        self.lowered
            .body
            .node(node)
            .span
            .map(|s| self.mapper.range(s))
    }

    /// The smallest CNode (call, operator, tuple, `if`) whose range holds `range`.
    pub fn apply_node_at(&self, range: TextRange) -> Option<NodeId> {
        let body = &self.lowered.body;
        (0..body.nodes.len() as u32)
            .map(NodeId)
            .filter(|&n| matches!(body.node(n).kind, NodeKind::Apply(_)))
            .filter_map(|n| Some((n, self.node_range(n)?)))
            .filter(|(_, r)| r.contains_range(range))
            .min_by_key(|(n, r)| (r.len(), std::cmp::Reverse(n.0)))
            .map(|(n, _)| n)
    }

    /// The definition range of a local target.
    pub fn def_range(&self, target: &Target) -> Option<TextRange> {
        self.names()
            .into_iter()
            .find(|n| n.is_def && &n.target == target)
            .map(|n| n.range)
    }

    /// The name of a nested graph.
    pub fn nested_name(&self, graph: GraphId) -> String {
        self.lowered.body.graph(graph).name.clone()
    }

    /// Whether a node is a parameter.
    pub fn is_param(&self, node: NodeId) -> bool {
        matches!(self.lowered.body.node(node).kind, NodeKind::Param { .. })
    }

    /// A value as a user reads it; functions are described by what they are.
    pub fn describe(&self, v: &AbsVal) -> String {
        describe(self.result(), v)
    }
}

pub fn describe(result: Option<&EntryResult>, v: &AbsVal) -> String {
    match v {
        AbsVal::Func(id) => match result.and_then(|r| r.funcs.get(*id as usize)) {
            Some(f) => describe_func(result.unwrap(), f),
            None => "function".into(),
        },
        AbsVal::Tuple(items) if items.iter().any(|i| matches!(i, AbsVal::Func(_))) => {
            let parts: Vec<String> = items.iter().map(|i| describe(result, i)).collect();
            if parts.len() == 1 {
                format!("({},)", parts[0])
            } else {
                format!("({})", parts.join(", "))
            }
        }
        other => other.to_string(),
    }
}

/// A function value in words, without markup (it is shown in code blocks
/// and code spans).
fn describe_func(result: &EntryResult, f: &FuncVal) -> String {
    match f {
        FuncVal::Prim(p) => format!("primitive {}", p.name),
        FuncVal::Graph { item, graph, env } => {
            let what = if graph.0 == 0 {
                format!("graph {item}")
            } else {
                format!("a graph nested in {item}")
            };
            if env.is_empty() {
                what
            } else {
                format!("closure over {what}")
            }
        }
        FuncVal::Partial { .. } => "partial application".into(),
        FuncVal::MetaOp(m) => format!("metafunction {}", m.name()),
        FuncVal::Meta { meta, f } => {
            let inner = result
                .funcs
                .get(*f as usize)
                .map(|g| describe_func(result, g))
                .unwrap_or_default();
            format!("{} of {inner}", meta.name())
        }
        FuncVal::Backprop { .. } => "backpropagator".into(),
        FuncVal::Union(_) => "one of several functions".into(),
    }
}

/// The semantic view of a file.
pub struct Sema<'a> {
    pub analysis: Analysis<'a>,
    pub items: &'a Items,
    pub root: SyntaxNode,
}

impl<'a> Sema<'a> {
    pub fn new(analysis: &Analysis<'a>) -> Sema<'a> {
        let parse = db::parse(analysis.db, analysis.file);
        Sema {
            analysis: *analysis,
            items: db::items(analysis.db, analysis.file),
            root: parse.syntax_node(),
        }
    }

    pub fn key(&self, name: &str) -> ItemKey {
        ItemKey::new(self.analysis.db, self.analysis.file, name)
    }

    /// The top-level graph named `name` (the first of that name).
    pub fn graph(&self, name: &str) -> Option<GraphSema<'a>> {
        let info = self.items.get(name)?;
        if info.kind != ItemKind::Graph {
            return None;
        }
        let key = self.key(name);
        // A graph whose analysis panics is left out; the others still work.
        let lowered = db::lowered(self.analysis.db, key)?;
        let inferred = db::inferred(self.analysis.db, key);
        let mut mapper = FileMapper::new(self.analysis.db, self.analysis.file, name);
        if let Some(inf) = &inferred {
            mapper = mapper.with_segments(&inf.segments);
        }
        Some(GraphSema {
            info,
            lowered,
            inferred,
            mapper,
            text: self.analysis.text(),
        })
    }

    /// The top-level graph whose text holds `offset` (first of its name only).
    pub fn graph_at(&self, offset: TextSize) -> Option<GraphSema<'a>> {
        let info = self.items.at(offset)?;
        if !info.first || info.kind != ItemKind::Graph {
            return None;
        }
        self.graph(&info.name)
    }

    /// All first-of-their-name top-level graphs.
    pub fn graphs(&self) -> Vec<GraphSema<'a>> {
        self.graphs_in(None)
    }

    /// The first-of-their-name top-level graphs whose text refers to the
    /// top-level `name` (by the file's index of references, not a scan).
    pub fn graphs_referring_to(&self, name: &str) -> Vec<GraphSema<'a>> {
        let mut names: Vec<&str> = self.items.referrers_of(name).collect();
        names.sort_unstable();
        names.dedup();
        names.into_iter().filter_map(|n| self.graph(n)).collect()
    }

    /// The first-of-their-name top-level graphs whose text meets `range`
    /// (all of them for `None`): a view of a few lines of a large file costs
    /// the graphs in it, not the file.
    pub fn graphs_in(&self, range: Option<TextRange>) -> Vec<GraphSema<'a>> {
        let items = &self.items.items;
        // Items are in source order, their ranges disjoint: those that meet
        // `range` are a slice.
        let (lo, hi) = match range {
            None => (0, items.len()),
            Some(r) => (
                items.partition_point(|i| i.range.end() < r.start()),
                items.partition_point(|i| i.range.start() <= r.end()),
            ),
        };
        items[lo..hi.max(lo)]
            .iter()
            .filter(|i| i.first && i.kind == ItemKind::Graph)
            .filter_map(|i| self.graph(&i.name))
            .collect()
    }

    /// The name (definition or use) at `offset`.
    pub fn name_at(&self, offset: TextSize) -> Option<NameAt> {
        // Top-level names.
        if let Some(info) = self.items.at(offset) {
            if info.first && info.name_range.contains_inclusive(offset) {
                return Some(NameAt {
                    range: info.name_range,
                    target: match info.kind {
                        ItemKind::Graph => Target::Graph(info.name.clone()),
                        ItemKind::Weight => Target::Weight(info.name.clone()),
                    },
                    is_def: true,
                });
            }
        }
        let graph = self.graph_at(offset)?;
        let mut best: Option<NameAt> = None;
        for n in graph.names() {
            if n.range.contains_inclusive(offset)
                && best.as_ref().is_none_or(|b| n.range.len() < b.range.len())
            {
                best = Some(n);
            }
        }
        // Prefer a name that starts or ends exactly here over a neighbour that only touches.
        best
    }

    /// Every occurrence of `target` in the file (definitions first).
    pub fn occurrences(&self, target: &Target) -> Vec<NameAt> {
        let mut out = Vec::new();
        match target {
            Target::Local { item, .. } | Target::Nested { item, .. } => {
                if let Some(g) = self.graph(item) {
                    out.extend(g.names().into_iter().filter(|n| &n.target == target));
                }
            }
            Target::Graph(name) | Target::Weight(name) => {
                if let Some(info) = self.items.get(name) {
                    out.push(NameAt {
                        range: info.name_range,
                        target: target.clone(),
                        is_def: true,
                    });
                }
                for g in self.graphs_referring_to(name) {
                    out.extend(
                        g.names()
                            .into_iter()
                            .filter(|n| &n.target == target && !n.is_def),
                    );
                }
            }
            _ => {
                for g in self.graphs() {
                    out.extend(g.names().into_iter().filter(|n| &n.target == target));
                }
            }
        }
        out.sort_by_key(|n| (!n.is_def, n.range.start()));
        out.dedup_by_key(|n| n.range);
        out
    }

    /// The token at `offset`, preferring identifiers when between two tokens.
    pub fn token_at(&self, offset: TextSize) -> Option<SyntaxToken> {
        pick_token(syntax::token_at_offset(&self.root, offset))
    }
}

pub fn pick_token(tokens: TokenAtOffset<SyntaxToken>) -> Option<SyntaxToken> {
    use syntax::SyntaxKind::*;
    let rank = |t: &SyntaxToken| match t.kind() {
        IDENT | TEMP => 3,
        k if k.is_keyword() || matches!(k, INT | FLOAT | STRING) => 2,
        k if k.is_trivia() => 0,
        _ => 1,
    };
    match tokens {
        TokenAtOffset::None => None,
        TokenAtOffset::Single(t) => Some(t),
        TokenAtOffset::Between(a, b) => Some(if rank(&b) > rank(&a) { b } else { a }),
    }
}
