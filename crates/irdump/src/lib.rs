//! MindSpore's compile dumps (`save_graphs`, `.ir`) as located documents.
//!
//! A dump lists the entry's parameters (`# Params:`), then one block per
//! FuncGraph:
//!
//! ```text
//! subgraph @8_f_13(%para9_x, %para10_y) {
//!   %0(CNode_1) = PrimFunc_Sub(%para9_x, %para10_y) primitive_attrs: {...}
//!       : (<Tensor[Float32], (3)>, <Tensor[Float32], (3)>) -> (<Tensor[Float32], (3)>)
//!       # Fullname with scope: (Default/network-Net/Sub-op0)
//!       # In file model.py:38, 15~27/        return x - y/
//!   Return(%0)
//! }
//! ```
//!
//! [`parse`] reads the structure with byte ranges: each graph (its header and
//! its extent), each node (`%N`, its primitive, the type line, the scope and
//! the Python frames MindSpore printed under it) and every occurrence of a
//! name (`%N` local to its graph, `%paraN_name` and `@graph` global). It never
//! fails: a line it does not know is skipped, so an editor can open any dump.
//! One pass over the text, no copies of it: a 100,000-line dump reads in
//! milliseconds.
//!
//! The importer (`interop::ir_text`) reads the same statements' meaning.

use std::ops::Range;

/// A parsed dump.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Dump {
    /// `# IR entry: @NAME` (without `@`).
    pub entry: Option<String>,
    /// The `# Params:` declarations of the entry's inputs and weights.
    pub params: Vec<ParamDecl>,
    pub graphs: Vec<Graph>,
    /// Every use of a name, in text order (definitions excluded).
    pub uses: Vec<Use>,
    /// The runtime's actor set, when the file is one (`*actor_set*.ir`):
    /// then there are no graphs.
    pub actors: Option<actors::ActorSet>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ParamDecl {
    /// `%para3_stem.weight`.
    pub name: String,
    pub range: Range<usize>,
    /// The whole declaration line.
    pub line: Range<usize>,
    /// The dumped type: `<Ref[Tensor[Float32]], (8, 3, 3, 3), ref_key=...>`.
    pub ty: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Graph {
    /// `@518_232_1_..._construct_1358`.
    pub name: String,
    pub name_range: Range<usize>,
    /// From `subgraph` to the closing `}` (inclusive).
    pub range: Range<usize>,
    /// The parameters of its header (`%para9_x`), with their ranges.
    pub params: Vec<(String, Range<usize>)>,
    pub nodes: Vec<Node>,
    /// `parent: [subgraph @P]`: the graph whose values it uses.
    pub parent: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    /// `%3`.
    pub id: String,
    pub id_range: Range<usize>,
    /// `(CNode_12)`: MindSpore's debug name.
    pub label: String,
    /// The callee: a primitive's name (`PrimFunc_Sub`, `Conv2D`), or `None`
    /// for a call of a graph or a value.
    pub prim: Option<(String, Range<usize>)>,
    /// The statement, its type line and its comments.
    pub range: Range<usize>,
    /// The dumped output type (what follows `->` on the type line).
    pub ty: Option<String>,
    /// The node's input types (what precedes `->`).
    pub inputs_ty: Option<String>,
    /// `Default/network-WithLossCell/_backbone-ResNet/...`.
    pub scope: Option<String>,
    /// The Python frames (`# In file PATH:LINE...`), outermost first.
    pub frames: Vec<Frame>,
    /// The names its statement uses (`%N`, `%paraN_x`, `@g`), in order.
    pub inputs: Vec<String>,
    /// The call as printed, up to its attributes (`Conv2D(%1, %2)`).
    pub call: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Frame {
    pub file: String,
    /// 1-based.
    pub line: u32,
    /// The source text MindSpore printed with it.
    pub code: String,
}

impl Frame {
    /// Code of the user's own, not of MindSpore or another installed package.
    pub fn is_user(&self) -> bool {
        !(self.file.contains("site-packages/") || self.file.contains("dist-packages/"))
    }
}

impl Node {
    /// The innermost frame of the user's own code.
    pub fn user_frame(&self) -> Option<&Frame> {
        self.frames.iter().rev().find(|f| f.is_user())
    }

    /// The primitive's name as MindSpore registers it (`PrimFunc_` removed).
    pub fn prim_name(&self) -> Option<&str> {
        self.prim
            .as_ref()
            .map(|(p, _)| p.strip_prefix("PrimFunc_").unwrap_or(p))
    }
}

/// One occurrence of a name.
#[derive(Debug, Clone, PartialEq)]
pub struct Use {
    pub name: String,
    pub range: Range<usize>,
    /// The graph it is in (`%N` names a node of this graph).
    pub graph: Option<usize>,
}

/// What a name refers to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    Graph(usize),
    Node(usize, usize),
    /// A header declaration (`# Params:`).
    Param(usize),
    /// A parameter of a graph's header.
    GraphParam(usize, usize),
}

fn is_name_char(c: char) -> bool {
    !(c.is_whitespace()
        || matches!(
            c,
            '(' | ')' | ',' | '[' | ']' | ':' | '{' | '}' | '<' | '>' | '"'
        ))
}

/// The names used in `text` (which starts at `base`): `%N`, `%paraN_x`, `@g`.
fn scan_names(text: &str, base: usize, graph: Option<usize>, out: &mut Vec<Use>) {
    let bytes = text.as_bytes();
    let mut i = 0;
    let mut in_str = false;
    while i < bytes.len() {
        let b = bytes[i];
        if b == b'"' {
            in_str = !in_str;
        } else if !in_str && (b == b'%' || b == b'@') {
            let rest = &text[i + 1..];
            let len = rest
                .char_indices()
                .find(|(_, c)| !is_name_char(*c))
                .map_or(rest.len(), |(k, _)| k);
            let valid = if b == b'%' {
                rest.starts_with(|c: char| c.is_ascii_digit()) || rest.starts_with("para")
            } else {
                len > 0
            };
            if valid {
                let name = &text[i..i + 1 + len];
                out.push(Use {
                    name: normalize(name).to_string(),
                    range: base + i..base + i + 1 + len,
                    graph,
                });
                i += 1 + len;
                continue;
            }
        }
        i += 1;
    }
}

/// A parameter printed as used in a nested graph (`%para1_▸x`) is `%para1_x`.
fn normalize(name: &str) -> std::borrow::Cow<'_, str> {
    if name.contains('▸') {
        name.replace('▸', "").into()
    } else {
        name.into()
    }
}

/// The dump's lines with their byte offsets (without the line break).
fn lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    let mut start = 0;
    text.split_inclusive('\n').map(move |l| {
        let at = start;
        start += l.len();
        (at, l.trim_end_matches(['\n', '\r']))
    })
}

/// `%N(label) = ...` at the start of `body`: the id's length and the label.
fn node_head(body: &str) -> Option<(usize, &str)> {
    let rest = body.strip_prefix('%')?;
    let digits = rest.chars().take_while(|c| c.is_ascii_digit()).count();
    if digits == 0 {
        return None;
    }
    let after = &rest[digits..];
    let label = after
        .strip_prefix('(')
        .and_then(|a| a.find(')').map(|e| &a[..e]))
        .unwrap_or("");
    Some((1 + digits, label))
}

/// The callee of `%N(label) = CALLEE(...)`: a primitive's name and its offset in `body`.
fn callee(body: &str) -> Option<(&str, usize)> {
    let eq = body.find(" = ")? + 3;
    let rest = &body[eq..];
    if rest.starts_with('%') || rest.starts_with('$') || rest.starts_with("call ") {
        return None;
    }
    let len = rest.find(['(', ' ', '[', '{']).unwrap_or(rest.len());
    (len > 0).then(|| (&rest[..len], eq))
}

/// A statement's call without its attributes (`primitive_attrs: {...}` ...).
fn call_text(s: &str) -> &str {
    let end = [
        " primitive_attrs:",
        " cnode_attrs:",
        " cnode_primal_attrs:",
        " {instance name",
    ]
    .iter()
    .filter_map(|m| s.find(m))
    .min()
    .unwrap_or(s.len());
    s[..end].trim_end()
}

/// `# In file PATH:LINE(~LINE2)?(, COLS)?/CODE/`.
fn frame(comment: &str) -> Option<Frame> {
    let rest = comment.strip_prefix("In file ")?;
    // The line number follows the first `:` that digits follow (a path may
    // hold `:` itself, as a Windows drive does, but not `:` then a digit and
    // then `~`, `,` or `/`).
    let bytes = rest.as_bytes();
    let mut colon = None;
    for (i, &b) in bytes.iter().enumerate() {
        if b == b':' {
            let digits = bytes[i + 1..]
                .iter()
                .take_while(|c| c.is_ascii_digit())
                .count();
            let after = bytes.get(i + 1 + digits).copied();
            if digits > 0 && matches!(after, None | Some(b'~' | b',' | b'/')) {
                colon = Some((i, digits));
                break;
            }
        }
    }
    let (at, digits) = colon?;
    let line: u32 = rest[at + 1..at + 1 + digits].parse().ok()?;
    let code = rest[at + 1 + digits..]
        .split_once('/')
        .map(|(_, c)| c.trim_end_matches('/').trim())
        .unwrap_or("")
        .to_string();
    Some(Frame {
        file: rest[..at].to_string(),
        line,
        code,
    })
}

/// Reads a dump. Never fails: what it does not know it skips.
pub fn parse(text: &str) -> Dump {
    if actors::is_actor_set(text) {
        return Dump {
            actors: Some(actors::parse(text)),
            ..Dump::default()
        };
    }
    let mut dump = Dump::default();
    let mut in_params = false;
    let mut current: Option<usize> = None;
    for (at, line) in lines(text) {
        if let Some(g) = current {
            let trimmed = line.trim_start();
            let indent = line.len() - trimmed.len();
            if line.starts_with('}') {
                dump.graphs[g].range.end = at + 1;
                current = None;
                continue;
            }
            let graph = &mut dump.graphs[g];
            if indent >= 4 {
                // Under a node: its type line and comments.
                let Some(node) = graph.nodes.last_mut() else {
                    continue;
                };
                node.range.end = at + line.len();
                if let Some(sig) = trimmed.strip_prefix(": ").filter(|_| node.ty.is_none()) {
                    // The first type line; kernel graphs print device formats after it.
                    match sig.rsplit_once(" -> ") {
                        Some((ins, out)) => {
                            node.inputs_ty = Some(ins.to_string());
                            node.ty = Some(out.to_string());
                        }
                        None => node.ty = Some(sig.to_string()),
                    }
                } else if let Some(c) = trimmed.strip_prefix('#') {
                    let c = c.trim();
                    if let Some(s) = c
                        .strip_prefix("Fullname with scope:")
                        .or_else(|| c.strip_prefix("Scope:"))
                    {
                        let s = s.trim();
                        node.scope = Some(
                            s.strip_prefix('(')
                                .and_then(|s| s.strip_suffix(')'))
                                .unwrap_or(s)
                                .to_string(),
                        );
                    } else if let Some(f) = frame(c) {
                        node.frames.push(f);
                    }
                } else {
                    // A continuation of a statement printed over several lines.
                    scan_names(line, at, Some(g), &mut dump.uses);
                }
                continue;
            }
            if let Some((id_len, label)) = node_head(trimmed) {
                let start = at + indent;
                let prim =
                    callee(trimmed).map(|(p, o)| (p.to_string(), start + o..start + o + p.len()));
                let eq = trimmed.find(" = ").map_or(trimmed.len(), |e| e + 3);
                graph.nodes.push(Node {
                    id: trimmed[..id_len].to_string(),
                    id_range: start..start + id_len,
                    label: label.to_string(),
                    prim,
                    range: start..at + line.len(),
                    ty: None,
                    inputs_ty: None,
                    scope: None,
                    frames: Vec::new(),
                    inputs: Vec::new(),
                    call: call_text(&trimmed[eq..]).to_string(),
                });
                let first = dump.uses.len();
                scan_names(&trimmed[eq..], start + eq, Some(g), &mut dump.uses);
                let inputs = dump.uses[first..].iter().map(|u| u.name.clone()).collect();
                if let Some(n) = dump.graphs[g].nodes.last_mut() {
                    n.inputs = inputs;
                }
            } else if trimmed.starts_with("Return(") {
                let start = at + indent;
                graph.nodes.push(Node {
                    id: "Return".into(),
                    id_range: start..start + 6,
                    label: String::new(),
                    prim: Some(("Return".into(), start..start + 6)),
                    range: start..at + line.len(),
                    ty: None,
                    inputs_ty: None,
                    scope: None,
                    frames: Vec::new(),
                    inputs: Vec::new(),
                    call: call_text(trimmed).to_string(),
                });
                let first = dump.uses.len();
                scan_names(trimmed, start, Some(g), &mut dump.uses);
                let inputs = dump.uses[first..].iter().map(|u| u.name.clone()).collect();
                if let Some(n) = dump.graphs[g].nodes.last_mut() {
                    n.inputs = inputs;
                }
            } else if !trimmed.is_empty() && !trimmed.starts_with('#') {
                scan_names(line, at, Some(g), &mut dump.uses);
            }
            continue;
        }
        if let Some(rest) = line.strip_prefix("# IR entry: @") {
            dump.entry = Some(rest.trim().to_string());
        } else if line.starts_with("# Params:") {
            in_params = true;
        } else if in_params && line.starts_with("%para") {
            let end = line.find(':').unwrap_or(line.len());
            let ty = line[end..].find('<').and_then(|s| {
                let from = end + s;
                matching_angle(&line[from..]).map(|e| line[from..from + e + 1].to_string())
            });
            dump.params.push(ParamDecl {
                name: normalize(&line[..end]).to_string(),
                range: at..at + end,
                line: at..at + line.len(),
                ty,
            });
        } else if let Some(rest) = line.strip_prefix("subgraph @") {
            in_params = false;
            let name_len = rest.find(['(', ' ']).unwrap_or(rest.len());
            let name = format!("@{}", &rest[..name_len]);
            let name_range = at + 9..at + 10 + name_len;
            let parent = rest
                .split_once("parent: [subgraph @")
                .map(|(_, p)| format!("@{}", p.split(']').next().unwrap_or(p)));
            let mut params = Vec::new();
            let mut uses = Vec::new();
            if let Some(open) = rest.rfind("(%para").or_else(|| rest.rfind("()")) {
                let base = at + 10 + open;
                scan_names(&rest[open..], base, None, &mut uses);
                params = uses.into_iter().map(|u| (u.name, u.range)).collect();
            }
            dump.graphs.push(Graph {
                name,
                name_range,
                range: at..at + line.len(),
                params,
                nodes: Vec::new(),
                parent,
            });
            current = Some(dump.graphs.len() - 1);
        } else if line.starts_with("subgraph") {
            // `subgraph attr:` / `subgraph instance:` blocks: not graphs.
            in_params = false;
        } else if !line.starts_with('%') && !line.starts_with('#') && !line.trim().is_empty() {
            in_params = false;
        }
    }
    // A graph cut short (a truncated file) ends with the text.
    if let Some(g) = current {
        dump.graphs[g].range.end = text.len();
    }
    dump
}

fn matching_angle(s: &str) -> Option<usize> {
    let mut depth = 0;
    for (i, c) in s.char_indices() {
        match c {
            '<' => depth += 1,
            '>' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

impl Dump {
    /// The graph whose extent holds `offset`.
    pub fn graph_at(&self, offset: usize) -> Option<usize> {
        let i = self.graphs.partition_point(|g| g.range.start <= offset);
        i.checked_sub(1)
            .filter(|&g| self.graphs[g].range.end > offset)
    }

    /// The name under `offset` (a use or a definition) and what it refers to.
    pub fn name_at(&self, offset: usize) -> Option<(String, Range<usize>, Option<Target>)> {
        let g = self.graph_at(offset);
        if let Some(g) = g {
            let graph = &self.graphs[g];
            if graph.name_range.contains(&offset) {
                return Some((
                    graph.name.clone(),
                    graph.name_range.clone(),
                    Some(Target::Graph(g)),
                ));
            }
            for (p, r) in &graph.params {
                if r.contains(&offset) {
                    return Some((p.clone(), r.clone(), self.resolve(p, Some(g))));
                }
            }
            let k = graph.nodes.partition_point(|n| n.id_range.start <= offset);
            if let Some(n) = k.checked_sub(1).map(|k| &graph.nodes[k]) {
                if n.id_range.contains(&offset) && n.id != "Return" {
                    return Some((
                        n.id.clone(),
                        n.id_range.clone(),
                        Some(Target::Node(g, k - 1)),
                    ));
                }
            }
        }
        for p in &self.params {
            if p.range.contains(&offset) {
                return Some((p.name.clone(), p.range.clone(), self.resolve(&p.name, None)));
            }
        }
        let i = self.uses.partition_point(|u| u.range.start <= offset);
        let u = i.checked_sub(1).map(|i| &self.uses[i])?;
        u.range.contains(&offset).then(|| {
            (
                u.name.clone(),
                u.range.clone(),
                self.resolve(&u.name, u.graph),
            )
        })
    }

    /// What `name` refers to, used in graph `graph`.
    pub fn resolve(&self, name: &str, graph: Option<usize>) -> Option<Target> {
        if name.starts_with('@') {
            return self
                .graphs
                .iter()
                .position(|g| g.name == name)
                .map(Target::Graph);
        }
        if name.starts_with("%para") {
            if let Some(i) = self.params.iter().position(|p| p.name == name) {
                return Some(Target::Param(i));
            }
            for (gi, g) in self.graphs.iter().enumerate() {
                if let Some(pi) = g.params.iter().position(|(p, _)| p == name) {
                    return Some(Target::GraphParam(gi, pi));
                }
            }
            return None;
        }
        let g = graph?;
        self.graphs[g]
            .nodes
            .iter()
            .position(|n| n.id == name)
            .map(|k| Target::Node(g, k))
    }

    /// Where a target is defined (the name's range).
    pub fn definition(&self, t: Target) -> Range<usize> {
        match t {
            Target::Graph(g) => self.graphs[g].name_range.clone(),
            Target::Node(g, k) => self.graphs[g].nodes[k].id_range.clone(),
            Target::Param(i) => self.params[i].range.clone(),
            Target::GraphParam(g, p) => self.graphs[g].params[p].1.clone(),
        }
    }

    /// Every use of a target (definitions not included).
    pub fn references(&self, t: Target) -> Vec<Range<usize>> {
        let name = match t {
            Target::Graph(g) => self.graphs[g].name.as_str(),
            Target::Node(g, k) => self.graphs[g].nodes[k].id.as_str(),
            Target::Param(i) => self.params[i].name.as_str(),
            Target::GraphParam(g, p) => self.graphs[g].params[p].0.as_str(),
        };
        self.uses
            .iter()
            .filter(|u| {
                u.name == name
                    && match t {
                        Target::Node(g, _) => u.graph == Some(g),
                        _ => true,
                    }
            })
            .map(|u| u.range.clone())
            .collect()
    }
}

pub mod actors;
pub mod diff;
pub mod stages;

#[cfg(test)]
mod tests;
