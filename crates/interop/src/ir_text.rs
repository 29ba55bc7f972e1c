//! MindSpore's `.ir` text dumps (`save_graphs=1`), read into DSL text.
//!
//! A dump lists the entry's parameters (`# Params:`), then one block per
//! FuncGraph:
//!
//! ```text
//! # Parameters: 2, (<Tensor[Float32], (3)>, <Int64, NoShape>)
//! subgraph @8__tensor_sub_scalar_13(%para9_x, %para10_y) {
//!   %0(a) = PrimFunc_Sub(%para9_x, Tensor(shape=[], dtype=Float32, value=1)) primitive_attrs: {...}
//!       : (<Tensor[Float32], (3)>, ...) -> (<Tensor[Float32], (3)>)
//!   Return(%0)
//! }
//! ```
//!
//! CNodes call a primitive (`PrimFunc_Add(...)`, `Switch(...)`), a graph
//! (`call @g(...)`), a node's value (`%3(...)`, `%3[@FuncUnion(...)](...)`) or a
//! captured value (`$(@g:CNode_1)(...)`); arguments are parameters
//! (`%para1_x`), nodes (`%2`), captured values (`$(@g:para26_x)`), graphs
//! (`@g`) and constants (`I64(1)`, `F32(0.5)`, `Bool(1)`, `None`,
//! `Tensor(shape=[2], dtype=Float32, value=[1 2])`, tuples). The entry graph
//! (`# IR entry`) uses the dump's parameters; it becomes `main`.
//!
//! Constructs with no DSL form are reported by name: `resolve` (dumps taken
//! before type inference), `J` (before automatic differentiation expanded
//! it), dictionaries and other Python objects that reach a graph that uses them.

use std::collections::HashMap;

use ir::{DType, Dim, Shape, Ty};
use tensor::{Buffer, Tensor};

use crate::model::{self, Callee, Const, Graph, Module, Node, Param, Ref, Weight};
use crate::{ImportError, Imported, WeightOptions};

mod actors;
mod parse;
mod rewrite;
use parse::*;
use rewrite::*;

/// An `.ir` dump as DSL text (entry graph `main`).
pub fn import(text: &str, opts: &WeightOptions) -> Result<Imported, ImportError> {
    if irdump::actors::is_actor_set(text) {
        return actors::import(text);
    }
    let (module, types, lines, notes) = parse(text)?;
    let mut header = String::from("# Imported from a MindSpore IR dump.\n");
    for n in &notes {
        header.push_str(&format!("# {n}\n"));
    }
    header.push('\n');
    model::to_dsl_typed(&module, &types, opts, &header).map_err(|e| match e {
        ImportError::Unsupported(m) => ImportError::Unsupported(locate(&m, &lines)),
        other => other,
    })
}

/// Whether a primitive is one the translation writes as `Opaque` (neither
/// a registry primitive, nor a MindSpore one it maps, nor the plumbing it
/// reads itself).
fn becomes_opaque(prim: &str) -> bool {
    let bare = prim.strip_prefix("PrimFunc_").unwrap_or(prim);
    const READ: &[&str] = &[
        "MakeTuple",
        "make_tuple",
        "TupleGetItem",
        "tuple_getitem",
        "Load",
        "Depend",
        "depend",
        "UpdateState",
        "Switch",
        "switch",
        "Partial",
        "J",
        "AddN",
        "Return",
        "StopGradient",
    ];
    !READ.contains(&bare) && ops::mindspore::mapping(bare).is_none() && ops::lookup(bare).is_none()
}

/// `line N: ` before a malformed dump's message.
fn at_line(e: ImportError, line: usize) -> ImportError {
    match e {
        ImportError::Malformed(m) if !m.starts_with("line ") => err(line, m),
        other => other,
    }
}

/// The translation's messages name nodes (`node `x` of graph `g`: ...`) and
/// graphs' outputs (`the output of graph `g`: ...`): each gets the dump's
/// line of what it names (`line 8055: node ...`).
fn locate(message: &str, lines: &Lines) -> String {
    let located = |line: &str| -> Option<String> {
        let (node, graph) = if let Some(rest) = line.strip_prefix("node `") {
            let (node, rest) = rest.split_once("` of graph `")?;
            (node, rest.split_once('`')?.0)
        } else {
            let rest = line.strip_prefix("the output of graph `")?;
            (RETURN, rest.split_once('`')?.0)
        };
        let at = lines.get(&(graph.to_string(), node.to_string()))?;
        let shown: Vec<String> = at.iter().take(3).map(|l| (l + 1).to_string()).collect();
        let more = if at.len() > 3 { ", ..." } else { "" };
        let word = if at.len() == 1 { "line" } else { "lines" };
        Some(format!("{word} {}{more}: {line}", shown.join(", ")))
    };
    message
        .lines()
        .map(|l| located(l).unwrap_or_else(|| l.to_string()))
        .collect::<Vec<_>>()
        .join("\n")
}

/// What one dump holds, for lining up a compile's stages (`mirdsl passes`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Summary {
    /// The entry graph's name (`# IR entry: @...`); `None` for a dump that is
    /// not a graph (MindSpore's runtime actor sets, `*actor_set*.ir`).
    pub entry: Option<String>,
    pub graphs: usize,
    /// CNodes, `Return` included.
    pub nodes: usize,
    /// Primitive nodes by MindSpore name (`PrimFunc_` removed), with their counts.
    pub prims: std::collections::BTreeMap<String, usize>,
}

/// Counts a dump's graphs, nodes and primitives, reading each statement with
/// the importer's own parser. A statement it cannot read is an error naming its line.
pub fn summarize(text: &str) -> Result<Summary, ImportError> {
    let mut out = Summary::default();
    let lines = logical_lines(text);
    let mut in_graph = false;
    for (i, line) in lines.iter().enumerate() {
        if let Some(rest) = line.strip_prefix("# IR entry: @") {
            out.entry = Some(rest.trim().to_string());
        } else if line.starts_with("subgraph @") {
            in_graph = true;
            out.graphs += 1;
        } else if line.starts_with('}') {
            in_graph = false;
        } else if in_graph && !line.starts_with("      ") {
            let body = line.trim();
            if body.starts_with("Return(") {
                out.nodes += 1;
            } else if body.starts_with('%') {
                let node = parse_cnode(body).map_err(|e| err(i, e))?;
                out.nodes += 1;
                if let PCallee::Prim(name, _) = node.callee {
                    let bare = name.strip_prefix("PrimFunc_").unwrap_or(&name).to_string();
                    *out.prims.entry(bare).or_default() += 1;
                }
            }
        }
    }
    Ok(out)
}

/// A reference not yet resolved (graphs and captured values may come later in
/// the file).
#[derive(Debug, Clone)]
enum PRef {
    Para(usize),
    Node(usize),
    Captured {
        graph: String,
        label: String,
    },
    Graph(String),
    Const(Const),
    /// A bare name (a parameter printed without `%para`, a symbol).
    Bare(String),
    /// A tensor constant the dump prints only in part (`value=[1 ... 1]`):
    /// its type is known, its value is not. It becomes an opaque node.
    PartialTensor(Ty),
}

#[derive(Debug, Clone)]
enum PCallee {
    Prim(String, Vec<(String, Const)>),
    Value(PRef),
}

#[derive(Debug, Clone)]
struct PNode {
    index: usize,
    label: String,
    callee: PCallee,
    args: Vec<PRef>,
    /// The type MindSpore dumped for it (`: (...) -> (<Tensor[Float32], (3)>)`).
    ty: Option<Ty>,
    /// Its scope (`# Fullname with scope: (Default/network-.../Conv2D-op12)`).
    scope: Option<String>,
    /// Its line in the dump (0-based).
    line: usize,
}

#[derive(Debug, Clone, Default)]
struct PGraph {
    name: String,
    parent: Option<String>,
    /// Global parameter numbers and names.
    params: Vec<(usize, String, Option<Ty>)>,
    nodes: Vec<PNode>,
    output: Option<PRef>,
    /// The lines (0-based) of its header and its `Return`.
    header_line: usize,
    return_line: usize,
    /// Which of its parameters are the state token (`<UMonad, NoShape>`).
    monads: Vec<bool>,
    /// Which of its parameters are weights (`<Ref[...], ref_key=..., is_parameter>`).
    weights: Vec<bool>,
}

fn err(line: usize, msg: impl Into<String>) -> ImportError {
    ImportError::Malformed(format!("line {}: {}", line + 1, msg.into()))
}

/// The types MindSpore dumped for nodes, by (graph, node) index.
type NodeTypes = HashMap<(usize, usize), Ty>;

/// The dump's lines (0-based) of each (graph, node name), and of each
/// graph's [`HEADER`] and [`RETURN`]: where an import error points.
type Lines = HashMap<(String, String), Vec<usize>>;
const HEADER: &str = "\u{0}header";
const RETURN: &str = "\u{0}return";

/// Resolves names into the graph model.
fn build(
    entry: String,
    mut header_params: Vec<(usize, String, Option<Ty>, bool)>,
    header_monads: &[usize],
    header_funcs: &[usize],
    mut graphs: Vec<PGraph>,
) -> Result<(Module, NodeTypes, Lines, Vec<String>), ImportError> {
    let notes = leave_out_graphs_being_built(&entry, &mut header_params, &mut graphs)?;
    let mut notes = notes;
    unprinted_constants_as_weights(&mut header_params, &mut graphs, &mut notes);
    let mut types = NodeTypes::new();
    for (gi, g) in graphs.iter().enumerate() {
        for (ni, n) in g.nodes.iter().enumerate() {
            if let Some(t) = &n.ty {
                types.insert((gi, ni), t.clone());
            }
        }
    }
    let index: HashMap<String, usize> = graphs
        .iter()
        .enumerate()
        .map(|(i, g)| (g.name.clone(), i))
        .collect();
    let entry_index = *index.get(&entry).ok_or_else(|| {
        ImportError::Malformed(format!("the entry graph `@{entry}` is not in the dump"))
    })?;
    // The dump's parameters: the entry's inputs, and weights.
    let mut weights = Vec::new();
    let mut para: HashMap<usize, Ref> = HashMap::new();
    let mut entry_inputs = Vec::new();
    for (num, name, ty, is_weight) in header_params {
        if is_weight {
            // One weight, declared twice (by the dump's header and as a parameter
            // of a graph printed while being built): one weight.
            if let Some(k) = weights.iter().position(|w: &Weight| w.name == name) {
                para.insert(num, Ref::Weight(k));
                continue;
            }
            let ty = ty.unwrap_or(Ty::Unknown);
            para.insert(num, Ref::Weight(weights.len()));
            weights.push(Weight {
                name,
                ty,
                value: None,
            });
        } else {
            entry_inputs.push((num, name, ty));
        }
    }
    {
        let g = &mut graphs[entry_index];
        let own = std::mem::take(&mut g.params);
        let own_monads = if g.monads.len() == own.len() {
            std::mem::take(&mut g.monads)
        } else {
            vec![false; own.len()]
        };
        g.monads = entry_inputs
            .iter()
            .map(|(num, _, _)| header_monads.contains(num))
            .chain(own_monads)
            .collect();
        g.params = entry_inputs;
        g.params.extend(own);
    }
    for (gi, g) in graphs.iter().enumerate() {
        for (pi, (num, _, _)) in g.params.iter().enumerate() {
            para.insert(*num, Ref::Param(gi, pi));
        }
    }
    // Node labels per graph, for captured values.
    let labels: Vec<HashMap<String, usize>> = graphs
        .iter()
        .map(|g| {
            let mut m = HashMap::new();
            for (k, n) in g.nodes.iter().enumerate() {
                m.entry(n.label.clone()).or_insert(k);
            }
            m
        })
        .collect();
    // The entry's callees printed by a name no parameter has, by MindSpore's
    // number (`Parameter_444`, `Parameter_445`).
    let mut entry_callees: Vec<String> = Vec::new();
    for n in &graphs[entry_index].nodes {
        if let PCallee::Value(PRef::Bare(name)) = &n.callee {
            if !graphs[entry_index].params.iter().any(|(_, p, _)| p == name)
                && !entry_callees.contains(name)
            {
                entry_callees.push(name.clone());
            }
        }
    }
    let number = |s: &String| -> u64 {
        let digits: String = s.chars().rev().take_while(char::is_ascii_digit).collect();
        digits
            .chars()
            .rev()
            .collect::<String>()
            .parse()
            .unwrap_or(u64::MAX)
    };
    entry_callees.sort_by_key(number);
    let resolve = |gi: usize, r: &PRef| -> Result<Ref, ImportError> {
        let g = &graphs[gi];
        Ok(match r {
            PRef::Para(n) => para.get(n).cloned().ok_or_else(|| {
                ImportError::Malformed(format!(
                    "`@{}` uses `%para{n}`, which no graph declares",
                    g.name
                ))
            })?,
            PRef::Node(n) => {
                let k = g.nodes.iter().position(|x| x.index == *n).ok_or_else(|| {
                    ImportError::Malformed(format!("`@{}` uses `%{n}` before defining it", g.name))
                })?;
                Ref::Node(gi, k)
            }
            PRef::Captured { graph, label } => {
                let owner = *index.get(graph).ok_or_else(|| {
                    ImportError::Malformed(format!(
                        "`@{}` captures from unknown graph `@{graph}`",
                        g.name
                    ))
                })?;
                if let Some((n, _)) = split_para(label) {
                    para.get(&n).cloned().ok_or_else(|| {
                        ImportError::Malformed(format!("`@{}` captures unknown `{label}`", g.name))
                    })?
                } else {
                    let k = labels[owner].get(label).ok_or_else(|| {
                        ImportError::Malformed(format!(
                            "`@{}` captures `{label}`, which `@{graph}` does not define",
                            g.name
                        ))
                    })?;
                    Ref::Node(owner, *k)
                }
            }
            PRef::Graph(name) => Ref::Graph(*index.get(name).ok_or_else(|| {
                ImportError::Malformed(format!("`@{}` refers to unknown graph `@{name}`", g.name))
            })?),
            PRef::Const(c) => Ref::Const(c.clone()),
            PRef::PartialTensor(_) => Ref::Const(Const::Opaque(
                "a tensor constant the dump prints only in part".into(),
            )),
            PRef::Bare(name) => match g.params.iter().position(|(_, n, _)| n == name) {
                Some(pi) => Ref::Param(gi, pi),
                None => {
                    // A kernel graph's function inputs, declared without their
                    // names (`%para1_: <Func, NoShape>`) and called by them
                    // (`Parameter_447[@FuncUnion(...)](...)`): as many inputs
                    // as names, in the order MindSpore numbered both.
                    let unnamed: Vec<usize> = g
                        .params
                        .iter()
                        .enumerate()
                        .filter(|(_, (num, n, _))| n.is_empty() && header_funcs.contains(num))
                        .map(|(pi, _)| pi)
                        .collect();
                    let k = entry_callees.iter().position(|c| c == name);
                    match k {
                        Some(k) if gi == entry_index && unnamed.len() == entry_callees.len() => {
                            Ref::Param(gi, unnamed[k])
                        }
                        _ => Ref::Const(Const::Opaque(format!("the Python symbol `{name}`"))),
                    }
                }
            },
        })
    };
    let mut module = Module {
        graphs: Vec::new(),
        weights,
        entry: entry_index,
    };
    for (gi, g) in graphs.iter().enumerate() {
        let mut nodes = Vec::new();
        for n in &g.nodes {
            let callee = match &n.callee {
                PCallee::Prim(name, attrs) => {
                    let mut attrs = attrs.clone();
                    if becomes_opaque(name) {
                        // Written beside the `Opaque` node: where the dump has it.
                        attrs.insert(
                            0,
                            (
                                "dump_line".into(),
                                Const::Int(n.line as i64 + 1, DType::I64),
                            ),
                        );
                    }
                    Callee::Prim {
                        name: name.clone(),
                        attrs,
                    }
                }
                PCallee::Value(r) => Callee::Value(resolve(gi, r).map_err(|e| at_line(e, n.line))?),
            };
            let args = n
                .args
                .iter()
                .map(|a| resolve(gi, a))
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| at_line(e, n.line))?;
            let name = match &n.scope {
                Some(scope) => scoped_label(scope, &n.label, &callee),
                None => n.label.clone(),
            };
            nodes.push(Node { name, callee, args });
        }
        let output = match &g.output {
            Some(o) => resolve(gi, o).map_err(|e| at_line(e, g.return_line))?,
            None => {
                return Err(at_line(
                    ImportError::Malformed(format!("graph `@{}` has no `Return`", g.name)),
                    g.header_line,
                ))
            }
        };
        module.graphs.push(Graph {
            name: g.name.clone(),
            parent: g.parent.as_ref().and_then(|p| index.get(p).copied()),
            params: g
                .params
                .iter()
                .map(|(_, name, ty)| Param {
                    name: name.clone(),
                    ty: ty.clone(),
                })
                .collect(),
            nodes,
            output,
        });
    }
    let monads: Vec<Vec<bool>> = graphs.iter().map(|g| g.monads.clone()).collect();
    without_state_token_params(&mut module, &monads);
    pass_nothing_to_unused_params(&mut module);
    specialise_on_weights(&mut module);
    update_moving_statistics(&mut module, &types);
    let mut lines = Lines::new();
    for (g, pg) in module.graphs.iter().zip(&graphs) {
        for (n, pn) in g.nodes.iter().zip(&pg.nodes) {
            lines
                .entry((g.name.clone(), n.name.clone()))
                .or_default()
                .push(pn.line);
        }
        lines.insert((g.name.clone(), RETURN.into()), vec![pg.return_line]);
        lines.insert((g.name.clone(), HEADER.into()), vec![pg.header_line]);
    }
    Ok((module, types, lines, notes))
}

/// What the import's note on a tensor constant the dump printed in part
/// starts with (`mirdsl run` reads it back, to refuse to run without it).
pub const UNPRINTED_CONSTANT: &str = "unprinted constant `";

/// The weights the import's notes name as constants the dump printed in
/// part, with the dump's line of each (from the imported text's header).
pub fn unprinted_constants(imported: &str) -> Vec<(String, usize)> {
    imported
        .lines()
        .take_while(|l| l.starts_with('#') || l.is_empty())
        .filter_map(|l| {
            let rest = l.strip_prefix("# ")?.strip_prefix(UNPRINTED_CONSTANT)?;
            let (name, rest) = rest.split_once('`')?;
            let line = rest
                .split_once("dump line ")?
                .1
                .split(|c: char| !c.is_ascii_digit())
                .next()?
                .parse()
                .ok()?;
            Some((name.to_string(), line))
        })
        .collect()
}

/// A tensor constant the dump prints only in part (MindSpore 2.10 prints a
/// larger one as `value=[...]`, or with NumPy's `...` between its first and
/// last rows, and in full nowhere in the folder): its
/// type is known, its value is not. It becomes a weight of that type, named
/// after the node that uses it (`network.network.add.constant1`, its input
/// 1), with a note naming it and its line: `--load-weights` gives its value,
/// and `mirdsl run` refuses to run without it.
fn unprinted_constants_as_weights(
    header_params: &mut Vec<(usize, String, Option<Ty>, bool)>,
    graphs: &mut [PGraph],
    notes: &mut Vec<String>,
) {
    let mut fresh = usize::MAX;
    let mut taken: std::collections::HashSet<String> =
        header_params.iter().map(|p| p.1.clone()).collect();
    for g in graphs.iter_mut() {
        for n in g.nodes.iter_mut() {
            for (k, a) in n.args.iter_mut().enumerate() {
                let PRef::PartialTensor(ty) = a else {
                    continue;
                };
                let user = match &n.callee {
                    PCallee::Prim(name, _) => Callee::Prim {
                        name: name.clone(),
                        attrs: Vec::new(),
                    },
                    PCallee::Value(_) => Callee::Prim {
                        name: "call".into(),
                        attrs: Vec::new(),
                    },
                };
                let base = match &n.scope {
                    Some(scope) => scoped_label(scope, &n.label, &user),
                    None => n.label.clone(),
                };
                let mut name = format!("{base}.constant{k}");
                let mut i = 2;
                while taken.contains(&name) {
                    name = format!("{base}.constant{k}_{i}");
                    i += 1;
                }
                taken.insert(name.clone());
                notes.push(format!(
                    "{UNPRINTED_CONSTANT}{name}`: {} (dump line {}, input {k}), printed in part \
                     (`value=[...]`); the dump does not hold its value: give it with --load-weights",
                    ty,
                    n.line + 1
                ));
                header_params.push((fresh, name, Some(ty.clone()), true));
                *a = PRef::Para(fresh);
                fresh -= 1;
            }
        }
    }
}

/// A graph MindSpore printed while it was building it: no nodes and no
/// `Return` (the loop-lift dumps, `before_lift_*`, `after_lift_*`,
/// `after_opt_*`, print the loop's graph nested in its caller, whose body is
/// not there yet). It computes nothing and is left out, with a note saying
/// so; the parameters of it the other graphs capture are the weights they
/// are (`<Ref[...], ref_key=inner.dense.weight, is_parameter>`), and a
/// captured parameter that is not a weight is an error naming its line.
fn leave_out_graphs_being_built(
    entry: &str,
    header_params: &mut Vec<(usize, String, Option<Ty>, bool)>,
    graphs: &mut Vec<PGraph>,
) -> Result<Vec<String>, ImportError> {
    let mut notes = Vec::new();
    let building: Vec<usize> = (0..graphs.len())
        .filter(|&i| {
            let g = &graphs[i];
            g.output.is_none() && g.nodes.is_empty() && g.name != entry
        })
        .collect();
    for &i in building.iter().rev() {
        let g = graphs.remove(i);
        let captured = |num: usize| {
            graphs.iter().any(|h| {
                h.nodes.iter().any(|n| {
                    let mut refs = n.args.iter().chain(match &n.callee {
                        PCallee::Value(r) => Some(r),
                        PCallee::Prim(..) => None,
                    });
                    refs.any(|r| {
                        matches!(r, PRef::Captured { graph, label }
                            if *graph == g.name && split_para(label).is_some_and(|(k, _)| k == num))
                    })
                }) || matches!(&h.output, Some(PRef::Captured { graph, label })
                    if *graph == g.name && split_para(label).is_some_and(|(k, _)| k == num))
            })
        };
        let mut kept = Vec::new();
        for (pi, (num, name, ty)) in g.params.iter().enumerate() {
            if !captured(*num) {
                continue;
            }
            if !g.weights.get(pi).copied().unwrap_or(false) {
                return Err(err(
                    g.header_line,
                    format!(
                        "graph `@{}` is printed empty (MindSpore was building it), and `%para{num}_{name}`, \
                         a parameter of it that is not a weight, is used by other graphs",
                        g.name
                    ),
                ));
            }
            if !header_params.iter().any(|(k, ..)| k == num) {
                header_params.push((*num, name.clone(), ty.clone(), true));
            }
            kept.push(name.clone());
        }
        let to_para = |r: &mut PRef| {
            if let PRef::Captured { graph, label } = r {
                if *graph == g.name {
                    if let Some((k, _)) = split_para(label) {
                        *r = PRef::Para(k);
                    }
                }
            }
        };
        for h in graphs.iter_mut() {
            if h.parent.as_deref() == Some(g.name.as_str()) {
                h.parent = None;
            }
            for n in h.nodes.iter_mut() {
                n.args.iter_mut().for_each(to_para);
                if let PCallee::Value(r) = &mut n.callee {
                    to_para(r);
                }
            }
            if let Some(o) = h.output.as_mut() {
                to_para(o);
            }
        }
        notes.push(format!(
            "`@{}` (line {}) is left out: MindSpore printed it empty, while building it{}.",
            g.name,
            g.header_line + 1,
            if kept.is_empty() {
                String::new()
            } else {
                format!(
                    "; its parameters the other graphs use are weights ({})",
                    kept.join(", ")
                )
            }
        ));
    }
    Ok(notes)
}

/// A node's name with its cells, as the `.mindir` importer writes it
/// (`Default/network-WithLossCell/_backbone-ResNet/stem-Conv2d/Conv2D-op0`
/// names `network._backbone.stem.conv2d`; what comes before the last `.` is
/// the node's scope to the debugger and the graph view). The backward pass's
/// nodes (`Gradients/Default/...`) sit under `grad`, MindSpore's expanded
/// composite ops (`Expand/_SumExt/...`) under `expand`.
fn scoped_label(scope: &str, label: &str, callee: &Callee) -> String {
    let (prefix, rest) = if let Some(rest) = scope.strip_prefix("Gradients/Default/") {
        (Some("grad"), rest)
    } else if let Some(rest) = scope.strip_prefix("Expand/") {
        (Some("expand"), rest)
    } else if let Some(rest) = scope.strip_prefix("Default/") {
        (None, rest)
    } else {
        return label.to_string();
    };
    // With a single cell the convention names nothing: the op alone.
    let domain = format!(
        "Default/{}{rest}",
        prefix.map_or(String::new(), |p| format!("{p}/"))
    );
    crate::mindir::scoped_name(&domain, label, callee)
}

#[cfg(test)]
mod tests;
