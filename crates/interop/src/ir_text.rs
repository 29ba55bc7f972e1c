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

/// An `.ir` dump as DSL text (entry graph `main`).
pub fn import(text: &str, opts: &WeightOptions) -> Result<Imported, ImportError> {
    let (module, types, lines) = parse(text)?;
    model::to_dsl_typed(
        &module,
        &types,
        opts,
        "# Imported from a MindSpore IR dump.\n\n",
    )
    .map_err(|e| match e {
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
}

fn err(line: usize, msg: impl Into<String>) -> ImportError {
    ImportError::Malformed(format!("line {}: {}", line + 1, msg.into()))
}

/// Parses a dump into the importers' graph model.
fn parse(text: &str) -> Result<(Module, NodeTypes, Lines), ImportError> {
    let lines = logical_lines(text);
    let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
    let mut entry: Option<String> = None;
    let mut header_params: Vec<(usize, String, Option<Ty>, bool)> = Vec::new();
    let mut graphs: Vec<PGraph> = Vec::new();
    let mut pending_types: Option<Vec<Option<Ty>>> = None;
    let mut pending_monads: Option<Vec<bool>> = None;
    let mut header_monads: Vec<usize> = Vec::new();
    let mut header_funcs: Vec<usize> = Vec::new();
    let mut i = 0;
    let mut in_params = false;
    while i < lines.len() {
        let line = lines[i];
        if let Some(rest) = line.strip_prefix("# IR entry: @") {
            entry = Some(rest.trim().to_string());
        } else if line.starts_with("# Params:") {
            in_params = true;
        } else if in_params && line.starts_with("%para") {
            let (num, name, ty) = parse_param_decl(line).ok_or_else(|| err(i, "bad parameter"))?;
            let weight = line.contains("has_default") || line.contains("IsWeight: true");
            if line.contains(": <UMonad,") || line.contains(": <IOMonad,") {
                header_monads.push(num);
            }
            if line.contains(": <Func,") {
                header_funcs.push(num);
            }
            header_params.push((num, name, ty, weight));
        } else if let Some(rest) = line.strip_prefix("# Parameters: ") {
            in_params = false;
            pending_types = Some(parse_param_types(rest));
            pending_monads = Some(parse_param_monads(rest));
        } else if let Some(rest) = line.strip_prefix("subgraph @") {
            in_params = false;
            let mut g = parse_graph_header(rest).ok_or_else(|| err(i, "bad subgraph header"))?;
            g.header_line = i;
            if let Some(types) = pending_types.take() {
                if types.len() == g.params.len() {
                    for (p, t) in g.params.iter_mut().zip(types) {
                        p.2 = t;
                    }
                }
            }
            if let Some(monads) = pending_monads.take() {
                if monads.len() == g.params.len() {
                    g.monads = monads;
                }
            }
            i += 1;
            // Whether the last statement read was a node (its comments follow it).
            let mut after_node = false;
            while i < lines.len() && !lines[i].starts_with('}') {
                let l = lines[i];
                // The front end's and the execute graph's `# Fullname with scope:
                // (Default/.../Conv2D-op12)`; the kernel graphs' `# Scope:
                // (Default/...)`, the cells alone.
                let comment = l.trim_start();
                let scope = match comment.strip_prefix("# Fullname with scope: (") {
                    Some(full) => Some(full.trim_end().strip_suffix(')').map(str::to_string)),
                    None => comment.strip_prefix("# Scope: (").map(|cells| {
                        cells
                            .trim_end()
                            .strip_suffix(')')
                            .map(|c| format!("{c}/call"))
                    }),
                };
                if let Some(scope) = scope {
                    if let (true, Some(node @ PNode { scope: None, .. })) =
                        (after_node, g.nodes.last_mut())
                    {
                        node.scope = scope;
                    }
                    i += 1;
                    continue;
                }
                if let Some(sig) = l.trim_start().strip_prefix(": ") {
                    // The previous node's input and output types.
                    // (Kernel graphs print more lines after it: device formats.)
                    if let (Some(node @ PNode { ty: None, .. }), Some((_, out))) =
                        (g.nodes.last_mut(), sig.rsplit_once(") -> ("))
                    {
                        let out = out.trim_end().strip_suffix(')').unwrap_or(out);
                        node.ty = out
                            .trim()
                            .strip_prefix('<')
                            .and_then(|o| o.strip_suffix('>'))
                            .and_then(parse_abstract)
                            // Dumped, but not a type the DSL writes (`Object:SymbolicKey`).
                            .or(Some(Ty::Unknown));
                    }
                    i += 1;
                    continue;
                }
                if l.starts_with("      ") || l.trim().is_empty() || l.trim_start().starts_with('#')
                {
                    i += 1;
                    continue;
                }
                let body = l.trim();
                after_node = false;
                if let Some(rest) = body.strip_prefix("Return(") {
                    let mut p = Parser::new(rest);
                    let r = p.arg().map_err(|e| err(i, e))?;
                    g.output = Some(r);
                    g.return_line = i;
                } else if body.starts_with('%') {
                    let mut node = parse_cnode(body).map_err(|e| err(i, e))?;
                    node.line = i;
                    g.nodes.push(node);
                    after_node = true;
                } else {
                    return Err(err(i, format!("unexpected line `{body}`")));
                }
                i += 1;
            }
            graphs.push(g);
        } else if !line.starts_with('%') && !line.trim().is_empty() {
            in_params = in_params && line.starts_with('#');
        }
        i += 1;
    }
    let entry = entry.ok_or_else(|| {
        // MindSpore's runtime writes its actor sets (`*actor_set*.ir`) beside
        // the graphs: a schedule of kernels, not a FuncGraph.
        if lines.iter().any(|l| {
            l.contains("Actor(")
                || l.contains("# AID :")
                || l.starts_with("[Device tensor stores]")
                || l.starts_with("[continuous memory nodes")
        }) {
            ImportError::Malformed(
                "a runtime actor set (the kernels' schedule MindSpore's runtime writes), not a \
                 graph: import a stage's graph dump instead"
                    .into(),
            )
        } else {
            ImportError::Malformed("no `# IR entry:` line".into())
        }
    })?;
    build(entry, header_params, &header_monads, &header_funcs, graphs)
}

/// The dump's lines, a statement that MindSpore printed over several lines
/// (a tensor constant's value is printed as NumPy prints it, one row a line)
/// joined into one: a line that leaves a bracket open continues on the next.
/// Comment lines are never joined. The count of lines stays the file's: a
/// joined line is followed by empty ones, so errors name the real line.
fn logical_lines(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut open: Option<(usize, i64)> = None;
    for line in text.lines() {
        if let Some((at, depth)) = open {
            out[at].push(' ');
            out[at].push_str(line.trim());
            out.push(String::new());
            let depth = depth + bracket_balance(line);
            open = (depth > 0).then_some((at, depth));
            continue;
        }
        let trimmed = line.trim_start();
        let depth = if trimmed.starts_with('#') || trimmed.is_empty() {
            0
        } else {
            bracket_balance(line)
        };
        out.push(line.to_string());
        if depth > 0 && (trimmed.starts_with('%') || trimmed.starts_with("Return(")) {
            open = Some((out.len() - 1, depth));
        }
    }
    out
}

/// Opened minus closed `(` and `[` outside strings.
fn bracket_balance(line: &str) -> i64 {
    let mut depth = 0;
    let mut in_str = false;
    for c in line.chars() {
        match c {
            '"' => in_str = !in_str,
            '(' | '[' if !in_str => depth += 1,
            ')' | ']' if !in_str => depth -= 1,
            _ => {}
        }
    }
    depth
}

/// `%para1_x: <Tensor[Float32], (3)> : [3] ...`
fn parse_param_decl(line: &str) -> Option<(usize, String, Option<Ty>)> {
    let (head, rest) = line.split_once(": ")?;
    let (num, name) = split_para(head.trim())?;
    let ty = rest
        .trim()
        .strip_prefix('<')
        .and_then(|r| {
            let end = matching(r, '<', '>')?;
            Some(&r[..end])
        })
        .and_then(parse_abstract);
    Some((num, name, ty))
}

/// `%para12_x` or `para12_x`: the number and the name.
fn split_para(s: &str) -> Option<(usize, String)> {
    let s = s.trim_start_matches('%').strip_prefix("para")?;
    let digits = s.chars().take_while(|c| c.is_ascii_digit()).count();
    let num = s[..digits].parse().ok()?;
    let name = s[digits..].strip_prefix('_').unwrap_or(&s[digits..]);
    Some((num, name.to_string()))
}

/// The index of the bracket closing the one before `s` (depth counted).
fn matching(s: &str, open: char, close: char) -> Option<usize> {
    let mut depth = 1;
    for (i, c) in s.char_indices() {
        if c == open {
            depth += 1;
        } else if c == close {
            depth -= 1;
            if depth == 0 {
                return Some(i);
            }
        }
    }
    None
}

/// `2, (<Tensor[Float32], (3)>, <Int64, NoShape>)`
fn parse_param_types(s: &str) -> Vec<Option<Ty>> {
    let mut out = Vec::new();
    let mut rest = s;
    while let Some(start) = rest.find('<') {
        let after = &rest[start + 1..];
        let Some(end) = matching(after, '<', '>') else {
            break;
        };
        out.push(parse_abstract(&after[..end]));
        rest = &after[end + 1..];
    }
    out
}

/// Which of `# Parameters:`'s types are the state token (`<UMonad, NoShape>`,
/// `<IOMonad, NoShape>`).
fn parse_param_monads(s: &str) -> Vec<bool> {
    let mut out = Vec::new();
    let mut rest = s;
    while let Some(start) = rest.find('<') {
        let after = &rest[start + 1..];
        let Some(end) = matching(after, '<', '>') else {
            break;
        };
        let t = after[..end].trim_start();
        out.push(t.starts_with("UMonad,") || t.starts_with("IOMonad,"));
        rest = &after[end + 1..];
    }
    out
}

/// The inside of `<Tensor[Float32], (3)>`, `<Int64, NoShape>`, `<Tuple[...], TupleShape(...)>`.
fn parse_abstract(s: &str) -> Option<Ty> {
    let (ty, shape) = split_top(s, ',')
        .into_iter()
        .fold((None, None), |acc, part| match acc {
            (None, _) => (Some(part), None),
            (t, None) => (t, Some(part)),
            done => done,
        });
    let ty = ty?.trim();
    let shape = shape.unwrap_or("").trim();
    let mut budget = MAX_TYPE_ELEMENTS;
    type_with_shape(ty, shape, &mut budget)
}

/// The most elements one type may expand to (`Tuple[Tensor[Float32]*N]`,
/// nested: the counts multiply): far above any real model's (a tuple of
/// optimizer states holds one per parameter), far below what would exhaust
/// memory on a hostile dump. Past it the type is not known.
const MAX_TYPE_ELEMENTS: usize = 1 << 16;

fn type_with_shape(ty: &str, shape: &str, budget: &mut usize) -> Option<Ty> {
    // A parameter (`Ref[Tensor[Float32]], (8), ref_key=...`) has its value's type.
    if let Some(inner) = ty.strip_prefix("Ref[").and_then(|t| t.strip_suffix(']')) {
        return type_with_shape(inner, shape, budget);
    }
    if let Some(inner) = ty.strip_prefix("Tensor[").and_then(|t| t.strip_suffix(']')) {
        let d = ms_dtype(inner)?;
        return Some(Ty::Tensor(d, parse_shape(shape)?));
    }
    if let Some(inner) = ty.strip_prefix("Tuple[").and_then(|t| t.strip_suffix(']')) {
        let elems = expand_repeats(&split_top(inner, ','), budget)?;
        let shapes: Vec<&str> = match shape
            .strip_prefix("TupleShape(")
            .and_then(|s| s.strip_suffix(')'))
        {
            Some(inner) => split_top(inner, ','),
            None => vec!["NoShape"; elems.len()],
        };
        // The shapes stand beside the elements already counted.
        let shapes = expand_repeats(&shapes, &mut elems.len())?;
        if shapes.len() != elems.len() {
            return None;
        }
        return elems
            .iter()
            .zip(&shapes)
            .map(|(t, s)| type_with_shape(t.trim(), s.trim(), budget))
            .collect::<Option<Vec<_>>>()
            .map(Ty::Tuple);
    }
    match ty {
        "None" => Some(Ty::None),
        "String" => Some(Ty::Str),
        _ => ms_dtype(ty).map(Ty::Scalar),
    }
}

/// `Tensor[Float32]*2` is two elements; `None` past `budget` elements (what
/// is left of it is taken).
fn expand_repeats<'a>(items: &[&'a str], budget: &mut usize) -> Option<Vec<&'a str>> {
    let mut out = Vec::new();
    for &item in items {
        let (text, count) = match item.rsplit_once('*') {
            Some((t, n)) => match n.trim().parse::<usize>() {
                Ok(n) => (t, n),
                Err(_) => (item, 1),
            },
            None => (item, 1),
        };
        *budget = budget.checked_sub(count)?;
        // Borrowed: a long element type repeated is not copied.
        out.extend(std::iter::repeat_n(text.trim(), count));
    }
    Some(out)
}

/// `(3)`, `(2, 3)`, `()`, `(-1, 4)`, `(-2)`.
fn parse_shape(s: &str) -> Option<Shape> {
    let inner = s.trim().strip_prefix('(')?.strip_suffix(')')?;
    if inner.trim() == "-2" {
        return Some(Shape::Unranked);
    }
    let dims = inner
        .split(',')
        .map(str::trim)
        .filter(|d| !d.is_empty())
        .map(|d| match d.parse::<i64>() {
            Ok(n) if n >= 0 => Some(Dim::Known(n)),
            Ok(_) => Some(Dim::Unknown),
            Err(_) => None,
        })
        .collect::<Option<Vec<_>>>()?;
    Some(Shape::Ranked(dims))
}

/// Splits at `sep` outside brackets.
fn split_top(s: &str, sep: char) -> Vec<&str> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    for (i, c) in s.char_indices() {
        match c {
            '(' | '[' | '<' | '{' => depth += 1,
            ')' | ']' | '>' | '}' => depth -= 1,
            c if c == sep && depth == 0 => {
                out.push(&s[start..i]);
                start = i + c.len_utf8();
            }
            _ => {}
        }
    }
    if start < s.len() || !out.is_empty() {
        out.push(&s[start..]);
    }
    out.into_iter().filter(|x| !x.trim().is_empty()).collect()
}

fn ms_dtype(name: &str) -> Option<DType> {
    DType::ALL
        .into_iter()
        .find(|d| d.mindspore_name() == name)
        .or(match name {
            "Float" => Some(DType::F32),
            "Int" => Some(DType::I64),
            // A dtype as a kernel graph's attribute (`dst_type: F32`).
            "F16" => Some(DType::F16),
            "BF16" => Some(DType::BF16),
            "F32" => Some(DType::F32),
            "F64" => Some(DType::F64),
            "I8" => Some(DType::I8),
            "I16" => Some(DType::I16),
            "I32" => Some(DType::I32),
            "I64" => Some(DType::I64),
            "U8" => Some(DType::U8),
            _ => None,
        })
}

/// `NAME parent: [subgraph @P](%para1_x, ...) {`
fn parse_graph_header(rest: &str) -> Option<PGraph> {
    let open = rest.rfind("(")?;
    let close = rest.rfind(')').filter(|&c| c > open)?;
    let head = rest[..open].trim();
    let (name, parent) = match head.split_once(" parent: [subgraph @") {
        Some((n, p)) => (n.trim(), Some(p.trim_end_matches(']').trim().to_string())),
        None => (head, None),
    };
    let params = rest[open + 1..close]
        .split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(|p| split_para(p).map(|(n, name)| (n, name, None)))
        .collect::<Option<Vec<_>>>()?;
    Some(PGraph {
        name: name.to_string(),
        parent,
        params,
        nodes: Vec::new(),
        output: None,
        header_line: 0,
        return_line: 0,
        monads: Vec::new(),
    })
}

/// `%3(label) = CALLEE(ARGS) primitive_attrs: {...} cnode_attrs: {...}`
fn parse_cnode(line: &str) -> Result<PNode, String> {
    let rest = line.strip_prefix('%').ok_or("expected `%`")?;
    let digits = rest.chars().take_while(|c| c.is_ascii_digit()).count();
    let index: usize = rest[..digits].parse().map_err(|_| "bad node number")?;
    let rest = &rest[digits..];
    let rest = rest.strip_prefix('(').ok_or("expected the node's name")?;
    let close = matching(rest, '(', ')').ok_or("unbalanced name")?;
    let label = rest[..close].to_string();
    let rest = rest[close + 1..]
        .trim_start()
        .strip_prefix('=')
        .ok_or("expected `=`")?
        .trim_start();
    let mut p = Parser::new(rest);
    let (callee, args) = p.call()?;
    // Attributes on the primitive.
    let mut attrs = Vec::new();
    let tail = p.rest();
    if let Some(pos) = tail.find("primitive_attrs: {") {
        let inner = &tail[pos + "primitive_attrs: {".len()..];
        if let Some(end) = matching(inner, '{', '}') {
            for item in split_top(&inner[..end], ',') {
                if let Some((k, v)) = item.split_once(':') {
                    let mut vp = Parser::new(v.trim());
                    if let Ok(PRef::Const(c)) = vp.arg() {
                        if !matches!(c, Const::Opaque(_)) {
                            attrs.push((k.trim().to_string(), c));
                        }
                    }
                }
            }
        }
    }
    // MindSpore's backend (`convert_const_input_to_attr`) moves constant
    // inputs into attributes (`Cast(%1) primitive_attrs: {input_names: (x,
    // dst_type), dst_type: F32}`): they go back to their place among the inputs.
    let mut args = args;
    let names = match &callee {
        PCallee::Prim(name, _) => input_names(tail).or_else(|| {
            // Without `input_names`, only a node short of inputs moved some
            // (a primitive may also keep an input's value as an attribute:
            // `Gather(x, i, 0, 0) primitive_attrs: {batch_dims: I64(0)}`).
            moved_inputs(name).filter(|names| args.len() < names.len())
        }),
        PCallee::Value(_) => None,
    };
    if let Some(names) = names {
        for (k, name) in names.iter().enumerate() {
            if k > args.len() {
                break;
            }
            if let Some(pos) = attrs.iter().position(|(a, _)| a == name) {
                let (_, value) = attrs.remove(pos);
                args.insert(k, PRef::Const(value));
            }
        }
    }
    let callee = match callee {
        PCallee::Prim(name, _) => PCallee::Prim(name, attrs),
        other => other,
    };
    Ok(PNode {
        index,
        label,
        callee,
        args,
        ty: None,
        scope: None,
        line: 0,
    })
}

/// The names in a node's `input_names: (x, dst_type)` attribute (also
/// printed `[x, w]`), MindSpore's names for the primitive's inputs.
fn input_names(tail: &str) -> Option<Vec<String>> {
    let start = tail.find("input_names: ")? + "input_names: ".len();
    let rest = &tail[start..];
    let close = match rest.chars().next()? {
        '(' => ')',
        '[' => ']',
        _ => return None,
    };
    let end = rest.find(close)?;
    Some(
        rest[1..end]
            .split(',')
            .map(|n| n.trim().trim_matches('"').to_string())
            .filter(|n| !n.is_empty())
            .collect(),
    )
}

/// MindSpore's names for a primitive's inputs where a kernel graph moved
/// some into attributes without printing `input_names`: its old-style
/// primitive's (`Cast(x, dst_type)`), else its 2.10 schema's.
fn moved_inputs(prim: &str) -> Option<Vec<String>> {
    let bare = prim.strip_prefix("PrimFunc_").unwrap_or(prim);
    if bare == "Cast" {
        return Some(vec!["x".into(), "dst_type".into()]);
    }
    let schema = ops::mindspore::schema(bare)?;
    Some(schema.node_inputs().map(|a| a.name.to_string()).collect())
}

struct Parser<'a> {
    s: &'a str,
    pos: usize,
}

impl<'a> Parser<'a> {
    fn new(s: &'a str) -> Self {
        Parser { s, pos: 0 }
    }

    fn rest(&self) -> &'a str {
        &self.s[self.pos..]
    }

    fn skip_ws(&mut self) {
        while self.rest().starts_with(' ') {
            self.pos += 1;
        }
    }

    fn eat(&mut self, t: &str) -> bool {
        self.skip_ws();
        if self.rest().starts_with(t) {
            self.pos += t.len();
            true
        } else {
            false
        }
    }

    /// A name up to a delimiter.
    fn word(&mut self) -> &'a str {
        self.skip_ws();
        let rest = self.rest();
        let end = rest
            .find(['(', ')', ',', '[', ']', ' ', '{', '}', ':'])
            .unwrap_or(rest.len());
        self.pos += end;
        &rest[..end]
    }

    /// Skips a bracketed annotation (`[@FuncUnion(...)]`).
    fn skip_brackets(&mut self) -> Result<(), String> {
        if self.rest().starts_with('[') {
            let inner = &self.rest()[1..];
            let end = matching(inner, '[', ']').ok_or("unbalanced `[`")?;
            self.pos += end + 2;
        }
        Ok(())
    }

    /// The text of a bracketed group starting at the cursor (after `open`).
    fn group(&mut self, open: char, close: char) -> Result<&'a str, String> {
        let inner = &self.rest()[open.len_utf8()..];
        let end = matching(inner, open, close).ok_or(format!("unbalanced `{open}`"))?;
        self.pos += open.len_utf8() + end + close.len_utf8();
        Ok(&inner[..end])
    }

    fn call(&mut self) -> Result<(PCallee, Vec<PRef>), String> {
        self.skip_ws();
        let callee = if self.eat("call @") {
            PCallee::Value(PRef::Graph(self.word().to_string()))
        } else if self.rest().starts_with('%') || self.rest().starts_with("$(") {
            let r = self.arg()?;
            self.skip_brackets()?;
            PCallee::Value(r)
        } else {
            let name = self.word().to_string();
            if name.is_empty() {
                return Err(format!("cannot read the callee in `{}`", self.rest()));
            }
            if self.rest().starts_with('[') {
                // A parameter printed by name, with its known value.
                self.skip_brackets()?;
                PCallee::Value(PRef::Bare(name))
            } else {
                PCallee::Prim(name, Vec::new())
            }
        };
        if !self.rest().starts_with('(') {
            return Err(format!("expected `(` in `{}`", self.rest()));
        }
        let inner = self.group('(', ')')?;
        let args = split_top(inner, ',')
            .into_iter()
            .map(|a| Parser::new(a.trim()).arg())
            .collect::<Result<Vec<_>, _>>()?;
        Ok((callee, args))
    }

    fn arg(&mut self) -> Result<PRef, String> {
        self.skip_ws();
        let rest = self.rest();
        if rest.starts_with("%para") {
            let w = self.word();
            let (n, _) = split_para(w).ok_or(format!("bad parameter `{w}`"))?;
            return Ok(PRef::Para(n));
        }
        if let Some(r) = rest.strip_prefix('%') {
            let digits = r.chars().take_while(|c| c.is_ascii_digit()).count();
            let n = r[..digits]
                .parse()
                .map_err(|_| format!("bad node `{rest}`"))?;
            self.pos += 1 + digits;
            return Ok(PRef::Node(n));
        }
        if rest.starts_with("$(") {
            self.pos += 1;
            let inner = self.group('(', ')')?;
            let inner = inner.trim().trim_start_matches('@');
            let (graph, label) = inner
                .rsplit_once(':')
                .ok_or(format!("bad captured value `{inner}`"))?;
            return Ok(PRef::Captured {
                graph: graph.to_string(),
                label: label.to_string(),
            });
        }
        if rest.starts_with('@') {
            self.pos += 1;
            return Ok(PRef::Graph(self.word().to_string()));
        }
        if rest.starts_with('(') {
            let inner = self.group('(', ')')?;
            let items = split_top(inner, ',')
                .into_iter()
                .map(|a| match Parser::new(a.trim()).arg()? {
                    PRef::Const(c) => Ok(c),
                    _ => Err("a tuple constant holding a non-constant".to_string()),
                })
                .collect::<Result<Vec<_>, _>>()?;
            return Ok(PRef::Const(Const::Tuple(items)));
        }
        if rest.starts_with('{') {
            let inner = self.group('{', '}')?;
            return Ok(PRef::Const(Const::Opaque(format!(
                "a dictionary `{{{inner}}}`"
            ))));
        }
        if let Some(quoted) = rest.strip_prefix('"') {
            let end = quoted.find('"').ok_or("unterminated string")?;
            self.pos += end + 2;
            return Ok(PRef::Const(Const::Str(quoted[..end].to_string())));
        }
        let word = self.word();
        let after = self.rest();
        if after.starts_with('(') {
            let inner = self.group('(', ')')?.trim();
            if word == "Tensor" {
                if let Some(ty) = partial_tensor_type(inner) {
                    return Ok(PRef::PartialTensor(ty));
                }
            }
            return scalar_or_tensor(word, inner).map(PRef::Const);
        }
        if after.starts_with('[') {
            let inner = self.group('[', ']')?;
            return Ok(PRef::Const(match word {
                // The state tokens as values (`UMonad[U]`, `IOMonad[IO]`).
                "UMonad" | "IOMonad" => Const::Monad,
                "KeywordArg" => match inner.split_once("value :") {
                    Some((_, v)) => match Parser::new(v.trim()).arg()? {
                        PRef::Const(c) => c,
                        _ => Const::Opaque(format!("a keyword argument `{inner}`")),
                    },
                    None => Const::Opaque(format!("a keyword argument `{inner}`")),
                },
                "ValueProblem" => Const::Opaque(format!("MindSpore's `ValueProblem[{inner}]`")),
                _ => Const::Opaque(format!("`{word}[{inner}]`")),
            }));
        }
        Ok(match word {
            "None" => PRef::Const(Const::None),
            "true" | "True" => PRef::Const(Const::Bool(true)),
            "false" | "False" => PRef::Const(Const::Bool(false)),
            // Plain numbers: the items of a tuple attribute (`kernel_size: (3, 3)`).
            w if w.parse::<i64>().is_ok() => {
                PRef::Const(Const::Int(w.parse().unwrap_or(0), DType::I64))
            }
            w => match ms_dtype(w) {
                Some(d) => PRef::Const(Const::Type(d)),
                None if !w.is_empty() => PRef::Bare(w.to_string()),
                None => return Err(format!("cannot read `{rest}`")),
            },
        })
    }
}

/// `I64(1)`, `F32(0.5)`, `Bool(1)`, `Tensor(shape=[..], dtype=.., value=..)`.
fn scalar_or_tensor(word: &str, inner: &str) -> Result<Const, String> {
    let int = |d: DType| -> Result<Const, String> {
        inner
            .parse::<i64>()
            .map(|v| Const::Int(v, d))
            .map_err(|_| format!("bad integer `{word}({inner})`"))
    };
    let float = |d: DType| -> Result<Const, String> {
        inner
            .parse::<f64>()
            .map(|v| Const::Float(v, d))
            .map_err(|_| format!("bad float `{word}({inner})`"))
    };
    match word {
        "I64" | "U64" => int(DType::I64),
        "I32" | "U32" => int(DType::I32),
        "I16" | "U16" => int(DType::I16),
        "I8" => int(DType::I8),
        "U8" => int(DType::U8),
        "F32" => float(DType::F32),
        "F64" => float(DType::F64),
        "F16" => float(DType::F16),
        "BF16" => float(DType::BF16),
        "Bool" => Ok(Const::Bool(inner != "0" && inner != "false")),
        "Tensor" => parse_tensor(inner),
        "NameSpace" => Ok(Const::Opaque(format!("a Python namespace `{inner}`"))),
        _ => Ok(Const::Opaque(format!("`{word}({inner})`"))),
    }
}

/// `shape=[2], dtype=Float32, value=[ 1.00000000e+00  1.00000000e+00]`
/// Field `name=` of a tensor constant's `shape=[..], dtype=.., value=..`.
fn tensor_field<'a>(inner: &'a str, name: &str) -> Option<&'a str> {
    let start = inner.find(&format!("{name}="))? + name.len() + 1;
    let rest = &inner[start..];
    Some(if let Some(inner) = rest.strip_prefix('[') {
        let end = matching(inner, '[', ']').map_or(rest.len(), |e| e + 2);
        &rest[..end]
    } else {
        rest.split(',').next().unwrap_or(rest)
    })
}

/// The type of a tensor constant whose value the dump prints only in part
/// (`value=[[1 ... 1]]`); `None` for one printed whole.
fn partial_tensor_type(inner: &str) -> Option<Ty> {
    if !tensor_field(inner, "value")?.contains("...") {
        return None;
    }
    let shape: Vec<i64> = tensor_field(inner, "shape")?
        .trim_matches(|c| c == '[' || c == ']')
        .split(',')
        .map(str::trim)
        .filter(|d| !d.is_empty())
        .map(|d| d.parse().ok())
        .collect::<Option<_>>()?;
    let dtype = ms_dtype(tensor_field(inner, "dtype")?.trim())?;
    Some(Ty::Tensor(dtype, Shape::known(&shape)))
}

fn parse_tensor(inner: &str) -> Result<Const, String> {
    let field = |name: &str| tensor_field(inner, name);
    let shape: Vec<usize> = field("shape")
        .ok_or("a tensor without `shape=`")?
        .trim_matches(|c| c == '[' || c == ']')
        .split(',')
        .map(str::trim)
        .filter(|d| !d.is_empty())
        .map(|d| {
            d.parse::<usize>()
                .map_err(|_| format!("bad tensor shape `{d}`"))
        })
        .collect::<Result<_, _>>()?;
    let dtype_name = field("dtype").ok_or("a tensor without `dtype=`")?.trim();
    let dtype = ms_dtype(dtype_name).ok_or(format!("tensor dtype `{dtype_name}`"))?;
    let value = field("value").ok_or("a tensor without `value=`")?.trim();
    if value.contains("...") {
        return Ok(Const::Opaque(
            "a tensor constant the dump prints only in part".into(),
        ));
    }
    let numbers: Vec<&str> = value
        .split(|c: char| c == '[' || c == ']' || c == ',' || c.is_whitespace())
        .filter(|s| !s.is_empty())
        .collect();
    let n: usize = shape.iter().product();
    if numbers.len() != n {
        return Err(format!(
            "a tensor of shape {shape:?} printed with {} values",
            numbers.len()
        ));
    }
    let parse_f = |s: &str| {
        s.parse::<f64>()
            .map_err(|_| format!("bad tensor value `{s}`"))
    };
    let buffer = match dtype.storage() {
        DType::F32 => Buffer::F32(
            numbers
                .iter()
                .map(|s| parse_f(s).map(|x| x as f32))
                .collect::<Result<_, _>>()?,
        ),
        DType::F64 => Buffer::F64(
            numbers
                .iter()
                .map(|s| parse_f(s))
                .collect::<Result<_, _>>()?,
        ),
        DType::I64 => Buffer::I64(
            numbers
                .iter()
                .map(|s| parse_f(s).map(|x| x as i64))
                .collect::<Result<_, _>>()?,
        ),
        _ => Buffer::Bool(
            numbers
                .iter()
                .map(|s| matches!(*s, "True" | "true" | "1"))
                .collect(),
        ),
    };
    Tensor::new(dtype, shape, buffer)
        .map(Const::Tensor)
        .map_err(|e| e.to_string())
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
    header_params: Vec<(usize, String, Option<Ty>, bool)>,
    header_monads: &[usize],
    header_funcs: &[usize],
    mut graphs: Vec<PGraph>,
) -> Result<(Module, NodeTypes, Lines), ImportError> {
    // Tensor constants printed in part: a node of their own before their
    // user, of unknown value and the printed type (an `Opaque` node).
    for g in &mut graphs {
        let mut fresh = usize::MAX;
        let mut nodes = Vec::with_capacity(g.nodes.len());
        for mut n in std::mem::take(&mut g.nodes) {
            for a in n.args.iter_mut() {
                if let PRef::PartialTensor(ty) = a {
                    let ty = ty.clone();
                    nodes.push(PNode {
                        index: fresh,
                        label: format!("{}_constant", n.label),
                        callee: PCallee::Prim(
                            "TensorConstant".into(),
                            vec![(
                                "value".into(),
                                Const::Str("printed in part by the dump".into()),
                            )],
                        ),
                        args: Vec::new(),
                        ty: Some(ty),
                        scope: n.scope.clone(),
                        line: n.line,
                    });
                    *a = PRef::Node(fresh);
                    fresh -= 1;
                }
            }
            nodes.push(n);
        }
        g.nodes = nodes;
    }
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
    Ok((module, types, lines))
}

/// The state token is implicit in the DSL: a graph's parameters that take
/// it (`<UMonad, NoShape>`, the front end's `u`) go, and so does every call's
/// and partial application's argument that passes it, whoever is called (a
/// graph, a partial, `J`'s result: `%0 = J(@f); %1 = %0(x, u)`). A primitive
/// keeps its token argument (the translation reads the order of effects from
/// it); a use of a removed parameter is the token as a value. The entry
/// loses its token parameter too (a loop's dump calls its entry).
fn without_state_token_params(m: &mut Module, monads: &[Vec<bool>]) {
    // Old index to new, per graph; `None` for a removed parameter.
    let mut keep: Vec<Vec<Option<usize>>> = Vec::new();
    for (g, graph) in m.graphs.iter().enumerate() {
        let flags = monads.get(g).filter(|f| f.len() == graph.params.len());
        let mut next = 0;
        keep.push(
            (0..graph.params.len())
                .map(|p| {
                    if flags.is_some_and(|f| f[p]) {
                        None
                    } else {
                        next += 1;
                        Some(next - 1)
                    }
                })
                .collect(),
        );
    }
    if keep.iter().all(|k| k.iter().all(Option::is_some))
        && !monads.get(m.entry).is_some_and(|f| f.contains(&true))
    {
        return;
    }
    // The entry's token parameters stay, but are not passed on either.
    let entry_token = |p: usize| {
        monads
            .get(m.entry)
            .filter(|f| f.len() == m.graphs[m.entry].params.len())
            .is_some_and(|f| f[p])
    };
    let entry_tokens: Vec<bool> = (0..m.graphs[m.entry].params.len())
        .map(entry_token)
        .collect();
    let entry = m.entry;
    let is_token = |m: &Module, r: &Ref| match r {
        Ref::Const(Const::Monad) => true,
        Ref::Param(g, p) => keep[*g][*p].is_none() || (*g == entry && entry_tokens[*p]),
        Ref::Node(g, n) => matches!(
            &m.graphs[*g].nodes[*n].callee,
            Callee::Prim { name, .. } if name == "UpdateState"
        ),
        _ => false,
    };
    let renumber = |r: &mut Ref| {
        if let Ref::Param(g, p) = *r {
            *r = match keep[g][p] {
                Some(q) => Ref::Param(g, q),
                None => Ref::Const(Const::Monad),
            };
        }
    };
    for g in 0..m.graphs.len() {
        for n in 0..m.graphs[g].nodes.len() {
            let node = &m.graphs[g].nodes[n];
            let passes = match &node.callee {
                Callee::Value(_) => true,
                Callee::Prim { name, .. } => name.trim_start_matches("PrimFunc_") == "Partial",
            };
            if passes {
                let partial = matches!(node.callee, Callee::Prim { .. });
                let args: Vec<Ref> = node
                    .args
                    .iter()
                    .enumerate()
                    .filter(|(i, a)| (partial && *i == 0) || !is_token(m, a))
                    .map(|(_, a)| a.clone())
                    .collect();
                m.graphs[g].nodes[n].args = args;
            }
        }
    }
    for (graph, kept) in m.graphs.iter_mut().zip(&keep) {
        for node in &mut graph.nodes {
            if let Callee::Value(c) = &mut node.callee {
                renumber(c);
            }
            node.args.iter_mut().for_each(renumber);
        }
        renumber(&mut graph.output);
        let params = std::mem::take(&mut graph.params);
        graph.params = params
            .into_iter()
            .enumerate()
            .filter(|(p, _)| kept[*p].is_some())
            .map(|(_, p)| p)
            .collect();
    }
}

/// The weight a reference stands for, through `Load`, `Depend` and
/// `TupleGetItem` of a `MakeTuple`.
fn weight_of(m: &Module, r: &Ref, depth: usize) -> Option<usize> {
    if depth > 64 {
        return None;
    }
    match r {
        Ref::Weight(w) => Some(*w),
        Ref::Node(g, n) => {
            let node = &m.graphs[*g].nodes[*n];
            let Callee::Prim { name, .. } = &node.callee else {
                return None;
            };
            match (name.trim_start_matches("PrimFunc_"), node.args.as_slice()) {
                ("Load" | "Depend" | "depend", [x, ..]) => weight_of(m, x, depth + 1),
                ("TupleGetItem" | "tuple_getitem", [t, Ref::Const(Const::Int(k, _))]) => {
                    let item = tuple_item(m, t, *k, depth + 1)?;
                    weight_of(m, &item, depth + 1)
                }
                _ => None,
            }
        }
        _ => None,
    }
}

/// Item `k` of a `MakeTuple` node (through `Depend`).
fn tuple_item(m: &Module, t: &Ref, k: i64, depth: usize) -> Option<Ref> {
    if depth > 64 {
        return None;
    }
    let Ref::Node(g, n) = t else { return None };
    let node = &m.graphs[*g].nodes[*n];
    let Callee::Prim { name, .. } = &node.callee else {
        return None;
    };
    match (name.trim_start_matches("PrimFunc_"), node.args.as_slice()) {
        ("MakeTuple" | "make_tuple", items) => items.get(usize::try_from(k).ok()?).cloned(),
        ("Depend" | "depend", [x, ..]) => tuple_item(m, x, k, depth + 1),
        _ => None,
    }
}

/// Whether a reference is a tuple of weights (`MakeTuple(w1, w2, ...)`).
fn weight_tuple(m: &Module, r: &Ref) -> bool {
    let Ref::Node(g, n) = r else { return false };
    let node = &m.graphs[*g].nodes[*n];
    matches!(&node.callee, Callee::Prim { name, .. }
        if matches!(name.trim_start_matches("PrimFunc_"), "MakeTuple" | "make_tuple"))
        && !node.args.is_empty()
        && node.args.iter().all(|a| weight_of(m, a, 0).is_some())
}

/// The graph a call's callee applies and the arguments it has already bound:
/// `@h` itself, or a `Partial(@h, bound...)` node.
fn call_target(m: &Module, callee: &Ref) -> Option<(usize, usize)> {
    match callee {
        Ref::Graph(h) => Some((*h, 0)),
        Ref::Node(g, n) => {
            let node = &m.graphs[*g].nodes[*n];
            match (&node.callee, node.args.first()) {
                (Callee::Prim { name, .. }, Some(Ref::Graph(h)))
                    if name.trim_start_matches("PrimFunc_") == "Partial" =>
                {
                    Some((*h, node.args.len() - 1))
                }
                _ => None,
            }
        }
        _ => None,
    }
}

/// An optimizer's update is written once and mapped over the weights
/// (`hyper_map(Partial(opt, ...), grads, weights, moments)`): the graph
/// that applies `ApplyMomentum` to its parameter is called once per weight.
/// The DSL's in-place primitives name their weights, so each such graph is
/// copied per call, its parameters replaced by the weights the call passes
/// (through `TupleGetItem` of a tuple of weights), with the graphs nested
/// in it. Only graphs that reach an in-place primitive are copied.
fn specialise_on_weights(m: &mut Module) {
    use std::collections::HashSet;
    let refs_graphs = |g: &Graph| -> Vec<usize> {
        let mut out = Vec::new();
        let mut add = |r: &Ref| {
            if let Ref::Graph(h) = r {
                out.push(*h);
            }
        };
        for node in &g.nodes {
            if let Callee::Value(c) = &node.callee {
                add(c);
            }
            node.args.iter().for_each(&mut add);
        }
        add(&g.output);
        out
    };
    // Graphs that reach an in-place primitive (through calls, values and nesting).
    let n = m.graphs.len();
    let mut writes: Vec<bool> = m
        .graphs
        .iter()
        .map(|g| {
            g.nodes.iter().any(|node| match &node.callee {
                Callee::Prim { name, .. } => ops::effect_of(ops::mindspore::registry_name(
                    name.trim_start_matches("PrimFunc_"),
                ))
                .is_some(),
                _ => false,
            })
        })
        .collect();
    loop {
        let mut changed = false;
        for g in 0..n {
            if writes[g] {
                continue;
            }
            let reach = refs_graphs(&m.graphs[g]).into_iter().any(|h| writes[h])
                || (0..n).any(|c| m.graphs[c].parent == Some(g) && writes[c]);
            if reach {
                writes[g] = true;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    if !writes.iter().any(|w| *w) {
        return;
    }
    // (graph, its parameters bound to weights or weight tuples) -> copy.
    // (`Ref` holds tensors: compared, not hashed.)
    type Key = (usize, Vec<(usize, Ref)>);
    let mut copies: Vec<(Key, usize)> = Vec::new();
    let mut origin: Vec<usize> = (0..n).collect();
    let mut work: Vec<usize> = (0..n).collect();
    let mut seen: HashSet<usize> = HashSet::new();
    while let Some(g) = work.pop() {
        if !seen.insert(g) {
            continue;
        }
        for k in 0..m.graphs[g].nodes.len() {
            let Callee::Value(callee) = m.graphs[g].nodes[k].callee.clone() else {
                continue;
            };
            let Some((h, offset)) = call_target(m, &callee) else {
                continue;
            };
            if !writes.get(origin[h]).copied().unwrap_or(false) || m.graphs[h].params.is_empty() {
                continue;
            }
            // The weights this call binds, by parameter.
            let mut bound: Vec<(usize, Ref)> = Vec::new();
            let mut args = m.graphs[g].nodes[k].args.clone();
            if let Ref::Node(pg, pn) = &callee {
                for (i, a) in m.graphs[*pg].nodes[*pn].args.iter().skip(1).enumerate() {
                    if let Some(w) = weight_of(m, a, 0) {
                        bound.push((i, Ref::Weight(w)));
                    }
                }
            }
            for (i, a) in args.iter_mut().enumerate() {
                if let Some(w) = weight_of(m, a, 0) {
                    *a = Ref::Weight(w);
                    bound.push((i + offset, a.clone()));
                } else if weight_tuple(m, a) {
                    bound.push((i + offset, a.clone()));
                }
            }
            bound.retain(|(i, _)| *i < m.graphs[h].params.len());
            if bound.is_empty() || matches!(callee, Ref::Node(..)) && uses(m, &callee) != 1 {
                continue;
            }
            let key = (origin[h], bound.clone());
            let copy = match copies.iter().find(|(k, _)| *k == key) {
                Some(&(_, c)) => c,
                None => {
                    let c = copy_family(m, h, &bound, &mut origin);
                    copies.push((key, c));
                    work.push(c);
                    // The copies nested in it are visited with it.
                    for x in c..m.graphs.len() {
                        work.push(x);
                    }
                    c
                }
            };
            m.graphs[g].nodes[k].args = args;
            match callee {
                Ref::Graph(_) => m.graphs[g].nodes[k].callee = Callee::Value(Ref::Graph(copy)),
                // The partial application, used by this call alone.
                Ref::Node(pg, pn) => m.graphs[pg].nodes[pn].args[0] = Ref::Graph(copy),
                _ => {}
            }
        }
    }
}

/// How many times nodes and outputs refer to `r`.
fn uses(m: &Module, r: &Ref) -> usize {
    m.graphs
        .iter()
        .map(|g| {
            g.nodes
                .iter()
                .map(|node| {
                    let callee = matches!(&node.callee, Callee::Value(c) if c == r) as usize;
                    callee + node.args.iter().filter(|a| *a == r).count()
                })
                .sum::<usize>()
                + (g.output == *r) as usize
        })
        .sum()
}

/// Copies graph `h` and the graphs nested in it, parameters `bound` of `h`
/// replaced by the given values; returns the copy of `h`.
fn copy_family(m: &mut Module, h: usize, bound: &[(usize, Ref)], origin: &mut Vec<usize>) -> usize {
    let n = m.graphs.len();
    let inside = |mut g: usize| loop {
        if g == h {
            return true;
        }
        match m.graphs[g].parent {
            Some(p) if p != g => g = p,
            _ => return false,
        }
    };
    let family: Vec<usize> = (0..n).filter(|&g| inside(g)).collect();
    let index: HashMap<usize, usize> = family
        .iter()
        .enumerate()
        .map(|(k, &g)| (g, n + k))
        .collect();
    let map = |r: &Ref| -> Ref {
        match r {
            Ref::Param(g, i) if *g == h => bound
                .iter()
                .find(|(p, _)| p == i)
                .map_or(Ref::Param(index[g], *i), |(_, v)| v.clone()),
            Ref::Param(g, i) => Ref::Param(index.get(g).copied().unwrap_or(*g), *i),
            Ref::Node(g, k) => Ref::Node(index.get(g).copied().unwrap_or(*g), *k),
            Ref::Graph(g) => Ref::Graph(index.get(g).copied().unwrap_or(*g)),
            other => other.clone(),
        }
    };
    for &g in &family {
        let src = &m.graphs[g];
        let copy = Graph {
            name: src.name.clone(),
            parent: src.parent.map(|p| index.get(&p).copied().unwrap_or(p)),
            params: src.params.clone(),
            nodes: src
                .nodes
                .iter()
                .map(|node| Node {
                    name: node.name.clone(),
                    callee: match &node.callee {
                        Callee::Value(c) => Callee::Value(map(c)),
                        prim => prim.clone(),
                    },
                    args: node.args.iter().map(&map).collect(),
                })
                .collect(),
            output: map(&src.output),
        };
        m.graphs.push(copy);
        origin.push(origin[g]);
    }
    // A copy given another graph's values (a tuple of weights built in the
    // optimizer's graph) is nested in that graph, as a graph using its nodes is.
    let copy = index[&h];
    if m.graphs[copy].parent.is_none() {
        m.graphs[copy].parent = bound.iter().find_map(|(_, v)| match v {
            Ref::Node(x, _) | Ref::Param(x, _) if !index.contains_key(x) => Some(*x),
            _ => None,
        });
    }
    copy
}

/// MindSpore's `BatchNorm` in training updates its moving mean and variance
/// in place (`side_effect_mem`): `mean ← (1 − momentum)·mean + momentum·batch
/// mean`, the variance likewise with the batch's unbiased variance. mirdsl's
/// `BatchNorm` returns the batch statistics (biased variance) and updates
/// nothing, so the update is written after the node, as `Assign`s of the two
/// weights. Only where the count per channel is known (the node's dumped
/// type) and the statistics are weights, and once `J` is expanded.
fn update_moving_statistics(m: &mut Module, types: &NodeTypes) {
    // Before automatic differentiation (`J` still in the graph) the forward
    // graph is differentiated, which an update in it would forbid.
    let differentiated = m.graphs.iter().flat_map(|g| &g.nodes).any(
        |n| matches!(&n.callee, Callee::Prim { name, .. } if name.trim_start_matches("PrimFunc_") == "J"),
    );
    if differentiated {
        return;
    }
    for g in 0..m.graphs.len() {
        let count = m.graphs[g].nodes.len();
        for n in 0..count {
            let node = &m.graphs[g].nodes[n];
            let Callee::Prim { name, .. } = &node.callee else {
                continue;
            };
            if name.trim_start_matches("PrimFunc_") != "BatchNorm" {
                continue;
            }
            let (Some(Ref::Const(Const::Bool(true))), Some(Ref::Const(Const::Float(momentum, _)))) =
                (node.args.get(5), node.args.get(7))
            else {
                continue;
            };
            let momentum = *momentum;
            let (Some(mean), Some(var)) = (
                node.args.get(3).and_then(|r| weight_of(m, r, 0)),
                node.args.get(4).and_then(|r| weight_of(m, r, 0)),
            ) else {
                continue;
            };
            let per_channel = match types.get(&(g, n)) {
                Some(Ty::Tuple(items)) => match items.first() {
                    Some(Ty::Tensor(_, shape)) => shape.as_known().and_then(|d| {
                        let c = *d.get(1)?;
                        (c > 0).then(|| shape.numel().map(|k| k / c)).flatten()
                    }),
                    _ => None,
                },
                _ => None,
            };
            let Some(per_channel) = per_channel.filter(|&k| k > 1) else {
                continue;
            };
            // Named in the node's scope: `network.bn.batch_mean`, `network.bn.moving_mean`.
            let scope = node
                .name
                .rsplit_once('.')
                .map_or(String::new(), |(s, _)| format!("{s}."));
            let f = |x: f64| Ref::Const(Const::Float(x, DType::F32));
            let prim = |name: &str, label: &str, args: Vec<Ref>| Node {
                name: format!("{scope}{label}"),
                callee: Callee::Prim {
                    name: name.into(),
                    attrs: Vec::new(),
                },
                args,
            };
            let graph = &mut m.graphs[g];
            let mut push = |node: Node| {
                graph.nodes.push(node);
                Ref::Node(g, graph.nodes.len() - 1)
            };
            let unbiased = per_channel as f64 / (per_channel - 1) as f64;
            for (w, item, factor, what) in [(mean, 1, 1.0, "mean"), (var, 2, unbiased, "variance")]
            {
                let batch = push(prim(
                    "TupleGetItem",
                    &format!("batch_{what}"),
                    vec![Ref::Node(g, n), Ref::Const(Const::Int(item, DType::I64))],
                ));
                let kept = push(prim(
                    "Mul",
                    &format!("moving_{what}_kept"),
                    vec![Ref::Weight(w), f(1.0 - momentum)],
                ));
                let new = push(prim(
                    "Mul",
                    &format!("batch_{what}_scaled"),
                    vec![batch, f(momentum * factor)],
                ));
                let sum = push(prim("Add", &format!("moving_{what}"), vec![kept, new]));
                push(prim("Assign", "", vec![Ref::Weight(w), sum]));
            }
        }
    }
}

/// A graph's parameter: (graph, parameter).
type ParamKey = (usize, usize);

/// Where an argument of a call goes: parameter `i` of graph `h` when the
/// node calls `@h` directly or partially applies it (`Partial(@h, ...)`).
fn arg_target(node: &Node, arg: usize) -> Option<(usize, usize)> {
    match &node.callee {
        Callee::Value(Ref::Graph(h)) => Some((*h, arg)),
        Callee::Prim { name, .. } if name.trim_start_matches("PrimFunc_") == "Partial" => {
            match node.args.first() {
                Some(Ref::Graph(h)) if arg > 0 => Some((*h, arg - 1)),
                _ => None,
            }
        }
        _ => None,
    }
}

/// After type inference MindSpore leaves values no specialised graph reads
/// in its dumps: an optimizer's primitive passed through `hyper_map`
/// (`Partial(@f, ApplyMomentum[...], ...)`), `ValueProblem[PolyNode]` where a
/// polymorphic graph was specialised away. They reach parameters that are
/// never used, or only passed on to parameters that are never used. Where
/// such a value would be passed to such a parameter, `none` is (and the
/// parameter loses its type): nothing that a graph computes with is dropped,
/// and the values the DSL cannot write are not written.
fn pass_nothing_to_unused_params(m: &mut Module) {
    use std::collections::HashSet;
    // Each parameter's uses: `None` for a use that reads it, `Some((h, i))`
    // for one that only passes it on to parameter `i` of graph `h`.
    let mut uses: HashMap<ParamKey, Vec<Option<ParamKey>>> = HashMap::new();
    for g in &m.graphs {
        for node in &g.nodes {
            if let Callee::Value(Ref::Param(pg, p)) = &node.callee {
                uses.entry((*pg, *p)).or_default().push(None);
            }
            for (i, a) in node.args.iter().enumerate() {
                if let Ref::Param(pg, p) = a {
                    uses.entry((*pg, *p)).or_default().push(arg_target(node, i));
                }
            }
        }
        if let Ref::Param(pg, p) = &g.output {
            uses.entry((*pg, *p)).or_default().push(None);
        }
    }
    let mut unused: HashSet<(usize, usize)> = m
        .graphs
        .iter()
        .enumerate()
        .flat_map(|(g, graph)| (0..graph.params.len()).map(move |p| (g, p)))
        .collect();
    loop {
        let read: Vec<(usize, usize)> = unused
            .iter()
            .copied()
            .filter(|k| {
                uses.get(k).is_some_and(|list| {
                    list.iter()
                        .any(|u| !u.is_some_and(|target| unused.contains(&target)))
                })
            })
            .collect();
        if read.is_empty() {
            break;
        }
        for k in read {
            unused.remove(&k);
        }
    }
    // Replaced: what the DSL cannot write, and parameters given `none`.
    let mut given_none: HashSet<(usize, usize)> = HashSet::new();
    loop {
        let mut changed = false;
        for g in 0..m.graphs.len() {
            for n in 0..m.graphs[g].nodes.len() {
                for i in 0..m.graphs[g].nodes[n].args.len() {
                    let Some(t) = arg_target(&m.graphs[g].nodes[n], i) else {
                        continue;
                    };
                    if !unused.contains(&t) {
                        continue;
                    }
                    let replace = match &m.graphs[g].nodes[n].args[i] {
                        Ref::Const(Const::None) => false,
                        Ref::Param(pg, p) => given_none.contains(&(*pg, *p)),
                        r => !writable(m, r),
                    };
                    if replace {
                        m.graphs[g].nodes[n].args[i] = Ref::Const(Const::None);
                        changed |= given_none.insert(t);
                    }
                }
            }
        }
        if !changed {
            break;
        }
    }
    for (g, p) in given_none {
        m.graphs[g].params[p].ty = None;
    }
}

/// Whether a value can be written in the DSL: not a Python object or a
/// value MindSpore could not print, nor a node built from one.
fn writable(m: &Module, r: &Ref) -> bool {
    fn constant(c: &Const) -> bool {
        match c {
            Const::Opaque(_) => false,
            Const::Tuple(items) => items.iter().all(constant),
            _ => true,
        }
    }
    match r {
        Ref::Const(c) => constant(c),
        Ref::Node(g, n) => {
            let node = &m.graphs[*g].nodes[*n];
            let callee_ok = match &node.callee {
                Callee::Value(Ref::Const(c)) => constant(c),
                _ => true,
            };
            callee_ok
                && node.args.iter().all(|a| match a {
                    Ref::Const(c) => constant(c),
                    _ => true,
                })
        }
        _ => true,
    }
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
mod tests {
    use super::*;

    #[test]
    fn abstracts() {
        assert_eq!(
            parse_abstract("Tensor[Float32], (3)"),
            Some(Ty::Tensor(DType::F32, Shape::known(&[3])))
        );
        assert_eq!(
            parse_abstract("Tensor[Float32], (), value=..."),
            Some(Ty::Tensor(DType::F32, Shape::known(&[])))
        );
        assert_eq!(
            parse_abstract("Int64, NoShape"),
            Some(Ty::Scalar(DType::I64))
        );
        assert_eq!(parse_abstract("Func, NoShape"), None);
        // Repeats that would exhaust memory: not a known type, at once.
        assert_eq!(
            parse_abstract("Tuple[Tensor[Float32]*99999999999], NoShape"),
            None
        );
        assert_eq!(
            parse_abstract(&format!(
                "Tuple[Tuple[{}*4096]*4096], NoShape",
                "Tensor[Float32]"
            )),
            None
        );
        assert!(matches!(
            parse_abstract("Tuple[Tensor[Float32]*3], TupleShape((2)*3)"),
            Some(Ty::Tuple(items)) if items.len() == 3
        ));
        assert_eq!(
            parse_abstract(
                "Tuple[Tensor[Float32],None,Bool], TupleShape((2), NoShape, NoShape), elements_use_flags={[const vector]{1, 1, 1}}"
            ),
            Some(Ty::Tuple(vec![
                Ty::Tensor(DType::F32, Shape::known(&[2])),
                Ty::None,
                Ty::Scalar(DType::Bool)
            ]))
        );
        assert_eq!(
            parse_abstract("Tuple[Tensor[Float32]*2], TupleShape((2), (2))"),
            Some(Ty::Tuple(vec![
                Ty::Tensor(DType::F32, Shape::known(&[2])),
                Ty::Tensor(DType::F32, Shape::known(&[2]))
            ]))
        );
    }

    #[test]
    fn late_stage_forms() {
        // A parameter's type, a tensor printed over several lines, tuple attributes.
        assert_eq!(
            parse_abstract("Ref[Tensor[Float32]], (8), ref_key=bn.gamma, is_parameter"),
            Some(Ty::Tensor(DType::F32, Shape::known(&[8])))
        );
        let text = "  %1(a) = PrimFunc_Mul(Tensor(shape=[3, 1], dtype=Float32, value=\n[[ 1.0]\n [ 2.0]\n [ 3.0]]), %0) cnode_attrs: {}\n      : (<Tensor[Float32], (3, 1)>) -> (<Tensor[Float32], (3, 1)>)\n";
        let lines = logical_lines(text);
        assert_eq!(lines.len(), 5);
        assert!(lines[1].is_empty() && lines[3].is_empty());
        let n = parse_cnode(lines[0].trim()).unwrap();
        assert!(
            matches!(&n.args[0], PRef::Const(Const::Tensor(t)) if t.to_f64_vec() == vec![1.0, 2.0, 3.0])
        );
        let n = parse_cnode(
            "%1(o) = Conv2D(%para1_x, %0) {instance name: conv2d} primitive_attrs: {kernel_size: (3, 3), out_channel: I64(8)}",
        )
        .unwrap();
        assert!(matches!(&n.callee, PCallee::Prim(_, attrs)
            if attrs[0] == ("kernel_size".to_string(), Const::Tuple(vec![Const::Int(3, DType::I64), Const::Int(3, DType::I64)]))));
    }

    /// A partial application only ever called, its call passing the state
    /// token (as MindSpore's `hyper_map` graphs read weights): the token is
    /// implicit in the DSL, so neither the call nor the graph has it.
    #[test]
    fn state_token_through_a_called_partial() {
        const DUMP: &str = r#"# IR entry: @1_main_2
# Total subgraphs: 2

# Params:
%para1_x: <Tensor[Float32], (2)> : [2]
%para2_w: <Ref[Tensor[Float32]], (2), ref_key=w, is_parameter>  :  has_default

subgraph @3_get_4(%para3_e, %para4_p, %para5_s) {
  %0(l) = Load(%para4_p, %para5_s)
      : (<Ref[Tensor[Float32]], (2), ref_key=w, is_parameter>, <UMonad, NoShape>) -> (<Tensor[Float32], (2)>)
  %1(a) = PrimFunc_Add(%0, %para3_e)
      : (<Tensor[Float32], (2)>, <Tensor[Float32], (2)>) -> (<Tensor[Float32], (2)>)
  Return(%1)
      : (<Tensor[Float32], (2)>)
}

subgraph @1_main_2() {
  %0(p) = Partial(@3_get_4, %para1_x)
      : (<Func, NoShape>, <Tensor[Float32], (2)>) -> (<Func, NoShape>)
  %1(c) = %0(%para2_w, UMonad[U])
      : (<Ref[Tensor[Float32]], (2), ref_key=w, is_parameter>, <UMonad, NoShape>) -> (<Tensor[Float32], (2)>)
  Return(%1)
      : (<Tensor[Float32], (2)>)
}
"#;
        let text = import(DUMP, &WeightOptions::default()).unwrap().text;
        assert!(text.contains("  c = p(w)\n"), "{text}");
        assert!(text.contains("graph get(e, p) {"), "{text}");
    }

    /// Each node keeps its MindSpore scope in its name, as the `.mindir`
    /// importer writes it: cells joined by `.`, the backward pass under `grad`.
    #[test]
    fn scopes_name_nodes() {
        const DUMP: &str = r#"# IR entry: @1_main_2
# Params:
%para1_x: <Tensor[Float32], (2)> : [2]

subgraph @1_main_2() {
  %0(equiv_16_CNode_1) = PrimFunc_ReLU(%para1_x)
      : (<Tensor[Float32], (2)>) -> (<Tensor[Float32], (2)>)
      # Fullname with scope: (Default/network-WithLossCell/_backbone-ResNet/layer1-Block/relu-ReLU/ReLU-op3)
      # In file model.py:38, 4~9/    x = self.relu(x)/
  %1(h) = PrimFunc_Neg(%0)
      : (<Tensor[Float32], (2)>) -> (<Tensor[Float32], (2)>)
      # Fullname with scope: (Gradients/Default/network-WithLossCell/_backbone-ResNet/layer1-Block/relu-ReLU/Grad_ReLU/Neg-op1)
  %2(CNode_7) = PrimFunc_Abs(%1)
      : (<Tensor[Float32], (2)>) -> (<Tensor[Float32], (2)>)
  %3(CNode_8) = PrimFunc_Exp(%2)
      : (<Tensor[Float32], (2)>) -> (<Tensor[Float32], (2)>)
      # Scope: (Default/network-WithLossCell/_backbone-ResNet)
  Return(%3)
      : (<Tensor[Float32], (2)>)
      # Fullname with scope: (Default/network-WithLossCell/Return-op9)
}
"#;
        let text = import(DUMP, &WeightOptions::default()).unwrap().text;
        assert!(
            text.contains("network._backbone.layer1.relu.relu = ReLU(x)"),
            "{text}"
        );
        assert!(
            text.contains("grad.network._backbone.layer1.relu.Grad_ReLU.h = Neg(network._backbone.layer1.relu.relu)"),
            "{text}"
        );
        // A node without a scope line keeps its own name; the return's scope
        // is not taken for it.
        assert!(!text.contains("network.abs"), "{text}");
        // A kernel graph's `# Scope:` names the cells alone.
        assert!(text.contains("network._backbone.exp = Exp(%0)"), "{text}");
    }

    /// A kernel graph's constant inputs moved into attributes go back among
    /// the inputs: by the printed `input_names`, else by MindSpore's names.
    #[test]
    fn inputs_moved_into_attributes() {
        let n = parse_cnode(
            "%1(c) = PrimFunc_Cast(%0) primitive_attrs: {output_names: (output), input_names: (x, dst_type), dst_type: F32}",
        )
        .unwrap();
        assert!(matches!(&n.args[1], PRef::Const(Const::Type(DType::F32))));
        let n = parse_cnode(
            "%1(c) = PrimFunc_Cast(%0) primitive_attrs: {is_backend_cast: Bool(0), dst_type: I64(43)}",
        )
        .unwrap();
        assert!(
            matches!(&n.args[1], PRef::Const(Const::Int(43, _))),
            "{n:?}"
        );
        // An attribute beside an input of the same name stays an attribute.
        let n = parse_cnode(
            "%2(g) = PrimFunc_Gather(%0, %1, I64(0), I64(0)) primitive_attrs: {batch_dims: I64(0)}",
        )
        .unwrap();
        assert_eq!(n.args.len(), 4);
    }

    /// A value no specialised graph reads (an optimizer's primitive passed
    /// through `hyper_map`, `ValueProblem[PolyNode]`) reaches parameters that
    /// are unused or only passed on: it is passed as `none`, not written.
    #[test]
    fn values_passed_only_to_unused_parameters() {
        const DUMP: &str = r#"# IR entry: @1_main_2
# Params:
%para1_x: <Tensor[Float32], (2)> : [2]

subgraph @4_run_5(%para5_opt, %para6_v) {
  %0(r) = PrimFunc_Neg(%para6_v)
      : (<Tensor[Float32], (2)>) -> (<Tensor[Float32], (2)>)
  Return(%0)
}

subgraph @3_map_4(%para3_f, %para4_v) {
  %0(r) = call @4_run_5(ValueProblem[PolyNode], %para4_v)
  Return(%0)
}

subgraph @1_main_2() {
  %0(p) = Partial(@3_map_4, ApplyMomentum[use_nesterov: Bool(0)])
  %1(c) = %0(%para1_x)
  Return(%1)
}
"#;
        let text = import(DUMP, &WeightOptions::default()).unwrap().text;
        assert!(text.contains("Partial(map, none)"), "{text}");
        assert!(text.contains("run(none, v)"), "{text}");
    }

    /// An expanded op's attribute given as a graph input (MindSpore's
    /// `SumExt` expansion: `ReduceSum(x, (), %keep_dims, false)`) makes an
    /// opaque node with the dumped type and the reason beside it; a kernel
    /// graph's function input declared without its name is the one its
    /// call names.
    #[test]
    fn run_time_attributes_and_unnamed_function_inputs() {
        const DUMP: &str = r#"# IR entry: @_anonymous__510
# Params:
%para1_: <Tensor[Float32], (2, 4)> : [2, 4]
%para2_: <Bool, NoShape>

subgraph @_anonymous__510() {
  %0(CNode_507) = PrimFunc_ReduceSum(%para1_Parameter_508, (), %para2_Parameter_509, Bool(0))
      : (<Tensor[Float32], (2, 4)>, <Tuple[], TupleShape()>, <Bool, NoShape>, <Bool, NoShape>) -> (<Tensor[Float32], ()>)
  Return(%0)
}
"#;
        let text = import(DUMP, &WeightOptions::default()).unwrap().text;
        assert!(
            text.contains("%0: f32[] = Opaque(arg0, (), arg1, false, name=\"ReduceSum\")  # opaque_because: \"`keep_dims` is computed at run time\""),
            "{text}"
        );
        const CALL: &str = r#"# IR entry: @k
# Params:
%para1_: <Func, NoShape>
%para2_: <Tensor[Float32], ()>

subgraph @k() {
  %0(CNode_421) = Parameter_447[@FuncUnion(@a, @b)](%para2_Parameter_422)
      : (<Tensor[Float32], ()>) -> (<Tensor[Float32], ()>)
  Return(%0)
}
"#;
        let text = import(CALL, &WeightOptions::default()).unwrap().text;
        assert!(text.contains("%0 = arg0(arg1)"), "{text}");
    }

    /// An update mapped over weights (`hyper_map`) names each weight: the
    /// graph applying it is copied per weight the calls pass, through a
    /// tuple of weights and `TupleGetItem`.
    #[test]
    fn an_update_mapped_over_weights_names_each_weight() {
        const DUMP: &str = r#"# IR entry: @1_main_2
# Params:
%para1_g: <Tensor[Float32], (2)> : [2]
%para2_w1: <Ref[Tensor[Float32]], (2), ref_key=w1, is_parameter>  :  has_default
%para3_w2: <Ref[Tensor[Float32]], (2), ref_key=w2, is_parameter>  :  has_default
%para4_lr: <Ref[Tensor[Float32]], (), ref_key=lr, is_parameter>  :  has_default

subgraph @5_opt_6(%para5_w, %para6_d) {
  %0(s) = Assign(%para5_w, %para6_d)
      : (<Ref[Tensor[Float32]], (2)>, <Tensor[Float32], (2)>) -> (<Tensor[Float32], (2)>)
  Return(%0)
}

subgraph @3_map_4(%para7_ws, %para8_d) {
  %0(a) = TupleGetItem(%para7_ws, I64(0))
  %1(r1) = call @5_opt_6(%0, %para8_d)
  %2(b) = TupleGetItem(%para7_ws, I64(1))
  %3(r2) = call @5_opt_6(%2, %para8_d)
  %4(t) = MakeTuple(%1, %3)
  Return(%4)
}

subgraph @1_main_2() {
  %0(ws) = MakeTuple(%para2_w1, %para3_w2)
  %1(r) = call @3_map_4(%0, %para1_g)
  Return(%1)
}
"#;
        let text = import(DUMP, &WeightOptions::default()).unwrap().text;
        assert!(text.contains("Assign(w1, d)"), "{text}");
        assert!(text.contains("Assign(w2, d)"), "{text}");
    }

    #[test]
    fn cnodes() {
        let n = parse_cnode(
            "%0(a) = PrimFunc_Sub(%para9_x, Tensor(shape=[], dtype=Float32, value=1)) primitive_attrs: {output_names: [output], side_effect_propagate: I64(1)}",
        )
        .unwrap();
        assert_eq!(n.label, "a");
        assert!(
            matches!(&n.callee, PCallee::Prim(name, attrs) if name == "PrimFunc_Sub" && attrs.len() == 1)
        );
        assert!(matches!(n.args[0], PRef::Para(9)));
        let n = parse_cnode(
            "%5(CNode_131) = %4[@FuncUnion(@32_12_✓test_if_129, @33_15_✗test_if_130)]()",
        )
        .unwrap();
        assert!(matches!(n.callee, PCallee::Value(PRef::Node(4))));
        assert!(n.args.is_empty());
        let n = parse_cnode("%0(CNode_53) = call @21_cast_54($(@18_tensor_bool_55:para6_x), Bool)")
            .unwrap();
        assert!(matches!(&n.callee, PCallee::Value(PRef::Graph(g)) if g == "21_cast_54"));
        assert!(matches!(&n.args[1], PRef::Const(Const::Type(DType::Bool))));
        let n = parse_cnode(
            "%9(CNode_302) = %8[@FuncUnion(@a, @b)](Tensor(shape=[2], dtype=Float32, value=[ 1.00000000e+00  1.00000000e+00]))",
        )
        .unwrap();
        assert!(
            matches!(&n.args[0], PRef::Const(Const::Tensor(t)) if t.to_f64_vec() == vec![1.0, 1.0])
        );
    }
}
