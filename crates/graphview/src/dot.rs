//! Reading the Graphviz DOT that mirdsl writes (`mirdsl ir --format dot`, the
//! language server's `mirdsl/graph`) into a [`GraphModel`], so the same picture
//! can be drawn without Graphviz.
//!
//! The subset read: `digraph NAME { ... }`; `subgraph cluster_X { label="..."; ... }`
//! (nested); `node [...]` / `edge [...]` / `graph [...]` defaults; `key=value;`
//! graph attributes; node statements `ID [attrs]`; edge chains `A -> B -> C [attrs]`;
//! `//`, `#` and `/* */` comments. Attributes used: `label` (first line is the
//! box's text, later lines the type), `shape` and `class` (the node kind),
//! `tooltip`. Conventions that match mirdsl's DOT:
//!
//! - Node ids are kept, so `data-node` in the SVG is the DOT id.
//! - An edge without a `label` takes the second label line (the type) of its source.
//! - A graph that is one cluster wrapping everything is drawn as the picture itself;
//!   nodes outside every cluster that only feed one cluster's nodes (constants,
//!   weights) are drawn in the innermost cluster holding all their uses.

use std::collections::HashMap;

use crate::model::{ClusterKind, Edge, EdgeStyle, End, GraphModel, NodeKind};

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Id(String),
    Sym(char),
    Arrow,
}

fn lex(s: &str) -> Result<Vec<Tok>, String> {
    let cs: Vec<char> = s.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < cs.len() {
        let c = cs[i];
        if c.is_whitespace() {
            i += 1;
        } else if c == '#' || (c == '/' && cs.get(i + 1) == Some(&'/')) {
            while i < cs.len() && cs[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && cs.get(i + 1) == Some(&'*') {
            i += 2;
            while i + 1 < cs.len() && !(cs[i] == '*' && cs[i + 1] == '/') {
                i += 1;
            }
            i += 2;
        } else if c == '-' && matches!(cs.get(i + 1), Some('>') | Some('-')) {
            out.push(Tok::Arrow);
            i += 2;
        } else if "{}[]=;,:".contains(c) {
            out.push(Tok::Sym(c));
            i += 1;
        } else if c == '"' {
            let mut t = String::new();
            i += 1;
            while i < cs.len() && cs[i] != '"' {
                if cs[i] == '\\' && i + 1 < cs.len() {
                    i += 1;
                    match cs[i] {
                        'n' | 'l' | 'r' => t.push('\n'),
                        '\n' => {}
                        other => t.push(other),
                    }
                } else {
                    t.push(cs[i]);
                }
                i += 1;
            }
            if i >= cs.len() {
                return Err("unterminated string".into());
            }
            i += 1;
            out.push(Tok::Id(t));
        } else if c == '<' {
            // An HTML label: kept as text.
            let mut depth = 0;
            let mut t = String::new();
            while i < cs.len() {
                if cs[i] == '<' {
                    depth += 1;
                } else if cs[i] == '>' {
                    depth -= 1;
                    if depth == 0 {
                        i += 1;
                        break;
                    }
                }
                t.push(cs[i]);
                i += 1;
            }
            out.push(Tok::Id(format!("{HTML_MARK}{}", html_label(&t))));
        } else {
            let mut t = String::new();
            while i < cs.len()
                && (cs[i].is_alphanumeric()
                    || matches!(cs[i], '_' | '.' | '%')
                    || !cs[i].is_ascii())
            {
                t.push(cs[i]);
                i += 1;
            }
            if t.is_empty() {
                return Err(format!("unexpected character {c:?}"));
            }
            out.push(Tok::Id(t));
        }
    }
    Ok(out)
}

type Attrs = Vec<(String, String)>;

/// Starts the text of an HTML label (a table-shaped CNode in mirdsl's DOT).
const HTML_MARK: char = '\u{1}';

struct Parser {
    toks: Vec<Tok>,
    pos: usize,
    /// Declared nodes: id -> (attrs, cluster at first mention).
    nodes: Vec<(String, Attrs, Option<usize>)>,
    node_index: HashMap<String, usize>,
    edges: Vec<(usize, usize, Attrs)>,
    /// (DOT name, attrs, parent)
    clusters: Vec<(String, Attrs, Option<usize>)>,
    graph_name: String,
}

impl Parser {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos)
    }
    fn next(&mut self) -> Option<Tok> {
        let t = self.toks.get(self.pos).cloned();
        self.pos += 1;
        t
    }
    fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(&Tok::Sym(c)) {
            self.pos += 1;
            true
        } else {
            false
        }
    }
    fn id(&mut self) -> Result<String, String> {
        match self.next() {
            Some(Tok::Id(s)) => Ok(s),
            other => Err(format!("expected a name, found {other:?}")),
        }
    }

    fn attr_list(&mut self) -> Result<Attrs, String> {
        let mut out = Vec::new();
        while self.eat('[') {
            while !self.eat(']') {
                let k = self.id()?;
                let v = if self.eat('=') {
                    self.id()?
                } else {
                    "true".into()
                };
                out.push((k, v));
                let _ = self.eat(',') || self.eat(';');
            }
        }
        Ok(out)
    }

    fn node(&mut self, id: &str, cluster: Option<usize>, defaults: &Attrs) -> usize {
        if let Some(&i) = self.node_index.get(id) {
            return i;
        }
        self.nodes.push((id.to_string(), defaults.clone(), cluster));
        self.node_index.insert(id.to_string(), self.nodes.len() - 1);
        self.nodes.len() - 1
    }

    fn stmts(&mut self, cluster: Option<usize>, mut node_defaults: Attrs) -> Result<(), String> {
        let mut edge_defaults: Attrs = Vec::new();
        loop {
            match self.peek().cloned() {
                None => return Err("missing '}'".into()),
                Some(Tok::Sym('}')) => {
                    self.pos += 1;
                    return Ok(());
                }
                Some(Tok::Sym(';')) => self.pos += 1,
                Some(Tok::Id(kw)) if kw == "subgraph" || kw == "{" => {
                    self.pos += 1;
                    let name = match self.peek() {
                        Some(Tok::Id(_)) => self.id()?,
                        _ => String::new(),
                    };
                    if !self.eat('{') {
                        return Err("expected '{' after subgraph".into());
                    }
                    let inner = if name.starts_with("cluster") {
                        self.clusters.push((name, Vec::new(), cluster));
                        Some(self.clusters.len() - 1)
                    } else {
                        cluster
                    };
                    self.stmts(inner, node_defaults.clone())?;
                }
                Some(Tok::Sym('{')) => {
                    self.pos += 1;
                    self.stmts(cluster, node_defaults.clone())?;
                }
                Some(Tok::Id(kw)) if matches!(kw.as_str(), "node" | "edge" | "graph") => {
                    self.pos += 1;
                    let attrs = self.attr_list()?;
                    match kw.as_str() {
                        "node" => node_defaults.extend(attrs),
                        "edge" => edge_defaults.extend(attrs),
                        _ => self.graph_attrs(cluster, attrs),
                    }
                }
                Some(Tok::Id(first)) => {
                    self.pos += 1;
                    if self.eat('=') {
                        let v = self.id()?;
                        self.graph_attrs(cluster, vec![(first, v)]);
                        continue;
                    }
                    // Ports (`a:s`) are ignored.
                    if self.eat(':') {
                        self.id()?;
                    }
                    let mut chain = vec![first];
                    while self.peek() == Some(&Tok::Arrow) {
                        self.pos += 1;
                        chain.push(self.id()?);
                        if self.eat(':') {
                            self.id()?;
                        }
                    }
                    let attrs = self.attr_list()?;
                    if chain.len() == 1 {
                        let i = self.node(&chain[0], cluster, &node_defaults);
                        self.nodes[i].1.extend(attrs);
                    } else {
                        let ids: Vec<usize> = chain
                            .iter()
                            .map(|c| self.node(c, cluster, &node_defaults))
                            .collect();
                        for w in ids.windows(2) {
                            let mut a = edge_defaults.clone();
                            a.extend(attrs.iter().cloned());
                            self.edges.push((w[0], w[1], a));
                        }
                    }
                }
                Some(t) => return Err(format!("unexpected {t:?}")),
            }
        }
    }

    fn graph_attrs(&mut self, cluster: Option<usize>, attrs: Attrs) {
        match cluster {
            Some(c) => self.clusters[c].1.extend(attrs),
            None => {
                for (k, v) in attrs {
                    if k == "label" {
                        self.graph_name = v;
                    }
                }
            }
        }
    }
}

fn get<'a>(attrs: &'a Attrs, key: &str) -> Option<&'a str> {
    attrs
        .iter()
        .rev()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}

/// An HTML-like label (`<table>...`) as plain lines: mirdsl's MindSpore-style DOT
/// puts the operation in bold and `NAME : TYPE` in the last row, which become
/// `NAME = Op` and the type; other HTML keeps its text, one line per row.
fn html_label(html: &str) -> String {
    fn text(s: &str) -> String {
        let mut out = String::new();
        let mut in_tag = false;
        for c in s.chars() {
            match c {
                '<' => in_tag = true,
                '>' => in_tag = false,
                c if !in_tag => out.push(c),
                _ => {}
            }
        }
        out.replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&quot;", "\"")
            .replace("&#39;", "'")
            .replace("&amp;", "&")
            .trim()
            .to_string()
    }
    let rows: Vec<String> = html
        .split("</tr>")
        .map(text)
        .filter(|r| !r.is_empty())
        .collect();
    let bold = html.find("<b>").and_then(|i| {
        html[i + 3..]
            .find("</b>")
            .map(|j| text(&html[i + 3..i + 3 + j]))
    });
    match bold {
        Some(op) => {
            let last = rows.last().cloned().unwrap_or_default();
            let (name, ty) = match last.split_once(" : ") {
                Some((n, t)) => (n.trim().to_string(), Some(t.trim().to_string())),
                None => (last.trim().to_string(), None),
            };
            let first = if name.is_empty() || name == op || name.starts_with("CNode_") {
                op
            } else {
                format!("{name} = {op}")
            };
            match ty {
                Some(t) => format!("{first}\n{t}"),
                None => first,
            }
        }
        None => rows.join("\n"),
    }
}

fn kind_of(attrs: &Attrs, first_line: &str) -> NodeKind {
    match get(attrs, "class") {
        Some("param") => return NodeKind::Param,
        Some("cnode") => return NodeKind::CNode,
        Some("const") => return NodeKind::Const,
        Some("graph-ref") => return NodeKind::GraphRef,
        Some("output") => return NodeKind::Output,
        _ => {}
    }
    if first_line.starts_with('@') {
        return NodeKind::GraphRef;
    }
    if first_line.eq_ignore_ascii_case("return") || first_line.starts_with("Return(") {
        return NodeKind::Output;
    }
    match get(attrs, "shape") {
        Some("ellipse" | "oval" | "cylinder" | "octagon") => NodeKind::Param,
        Some("doublecircle" | "Msquare" | "house" | "invhouse") => NodeKind::Output,
        Some("plaintext" | "plain" | "none" | "note") => {
            if first_line.starts_with("graph ") || first_line.starts_with('@') {
                NodeKind::GraphRef
            } else {
                NodeKind::Const
            }
        }
        _ if first_line == "return" => NodeKind::Output,
        _ => NodeKind::CNode,
    }
}

fn cluster_kind(attrs: &Attrs, label: &str) -> ClusterKind {
    match get(attrs, "class") {
        Some("then") => return ClusterKind::Then,
        Some("else") => return ClusterKind::Else,
        Some("lambda") => return ClusterKind::Lambda,
        Some("graph") => return ClusterKind::Graph,
        Some("scope") => return ClusterKind::Scope,
        _ => {}
    }
    let l = label.to_ascii_lowercase();
    if l.ends_with("(then)") {
        ClusterKind::Then
    } else if l.ends_with("(else)") {
        ClusterKind::Else
    } else if l.ends_with("(lambda)") {
        ClusterKind::Lambda
    } else if l.ends_with("_then") || l.starts_with('✓') || l.starts_with("then") {
        ClusterKind::Then
    } else if l.ends_with("_else") || l.starts_with('✗') || l.starts_with("else") {
        ClusterKind::Else
    } else if l.starts_with("lambda") || l.starts_with("fn") {
        ClusterKind::Lambda
    } else {
        ClusterKind::Graph
    }
}

/// Reads DOT text into a model (see the module docs for the subset and conventions).
pub fn from_dot(text: &str) -> Result<GraphModel, String> {
    let mut p = Parser {
        toks: lex(text)?,
        pos: 0,
        nodes: Vec::new(),
        node_index: HashMap::new(),
        edges: Vec::new(),
        clusters: Vec::new(),
        graph_name: String::new(),
    };
    if matches!(p.peek(), Some(Tok::Id(s)) if s == "strict") {
        p.pos += 1;
    }
    match p.next() {
        Some(Tok::Id(s)) if s == "digraph" || s == "graph" => {}
        other => return Err(format!("expected `digraph`, found {other:?}")),
    }
    if let Some(Tok::Id(_)) = p.peek() {
        p.graph_name = p.id()?;
    }
    if !p.eat('{') {
        return Err("expected '{'".into());
    }
    p.stmts(None, Vec::new())?;

    // A single cluster wrapping every node's cluster is the picture itself.
    let mut unwrap: Option<usize> = None;
    let tops: Vec<usize> = (0..p.clusters.len())
        .filter(|&c| p.clusters[c].2.is_none())
        .collect();
    if tops.len() == 1 {
        unwrap = Some(tops[0]);
    }
    let mut m = GraphModel::new(p.graph_name.clone());
    // Clusters (parents are always created before children).
    let mut cmap: Vec<Option<usize>> = vec![None; p.clusters.len()];
    for (i, (name, attrs, parent)) in p.clusters.iter().enumerate() {
        if Some(i) == unwrap {
            if let Some(l) = get(attrs, "label") {
                if m.name.is_empty() {
                    m.name = l.to_string();
                }
            }
            continue;
        }
        let label = get(attrs, "label").map(str::to_string).unwrap_or_else(|| {
            name.trim_start_matches("cluster")
                .trim_start_matches('_')
                .to_string()
        });
        let kind = cluster_kind(attrs, &label);
        let parent = parent.and_then(|q| cmap[q]);
        // `fibonacci_then (then)` is graph `fibonacci_then`.
        let first = label.lines().next().unwrap_or("");
        let id = match first.rsplit_once(" (") {
            Some((n, k)) if k.ends_with(')') && !n.is_empty() => n.to_string(),
            _ => first.to_string(),
        };
        cmap[i] = Some(m.add_cluster(id, label.replace('\n', " "), kind, parent));
    }
    // Nodes outside every cluster that only feed others go where they are used.
    let mut home: Vec<Option<usize>> = p.nodes.iter().map(|n| n.2.and_then(|c| cmap[c])).collect();
    for (i, n) in p.nodes.iter().enumerate() {
        let outside = n.2.is_none() || n.2 == unwrap;
        let has_inputs = p.edges.iter().any(|e| e.1 == i);
        if !outside || has_inputs {
            continue;
        }
        let users: Vec<Option<usize>> = p
            .edges
            .iter()
            .filter(|e| e.0 == i)
            .map(|e| p.nodes[e.1].2.and_then(|c| cmap[c]))
            .collect();
        if let Some(first) = users.first() {
            let chain = m.cluster_chain(*first);
            home[i] = chain
                .into_iter()
                .find(|c| users.iter().all(|u| m.cluster_chain(*u).contains(c)));
        }
    }
    let mut types: Vec<Option<String>> = Vec::new();
    for (i, (id, attrs, _)) in p.nodes.iter().enumerate() {
        let raw = get(attrs, "label").unwrap_or(id);
        let html = raw.starts_with(HTML_MARK);
        let label = raw.trim_start_matches(HTML_MARK).to_string();
        let mut lines = label.lines();
        let first = lines.next().unwrap_or("").to_string();
        let rest: Vec<&str> = lines.collect();
        let kind = match kind_of(attrs, &first) {
            NodeKind::Const if html => NodeKind::CNode,
            k => k,
        };
        let k = m.add_node(id.clone(), first, kind, home[i]);
        m.nodes[k].title = get(attrs, "tooltip")
            .map(str::to_string)
            .unwrap_or_else(|| label.replace('\n', " : "));
        types.push((!rest.is_empty()).then(|| rest.join(" ")));
    }
    for (a, b, attrs) in &p.edges {
        let label = get(attrs, "label")
            .map(str::to_string)
            .or_else(|| types[*a].clone());
        let style = match get(attrs, "style") {
            Some(s) if s.contains("dashed") || s.contains("dotted") => EdgeStyle::Ref,
            _ => EdgeStyle::Data,
        };
        // `lhead` / `ltail` (compound edges) end at a whole cluster.
        let cluster_end = |key: &str| {
            let name = get(attrs, key)?;
            let i = p.clusters.iter().position(|c| c.0 == name)?;
            cmap[i].map(End::Cluster)
        };
        m.edges.push(Edge {
            from: cluster_end("ltail").unwrap_or(End::Node(*a)),
            to: cluster_end("lhead").unwrap_or(End::Node(*b)),
            label,
            style,
        });
    }
    Ok(m)
}

/// DOT text to SVG; `None` if the text is not DOT this reader understands.
pub fn dot_to_svg(text: &str) -> Option<String> {
    from_dot(text).ok().map(|m| crate::render_svg(&m))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_clusters_nodes_edges_and_types() {
        let dot = r#"digraph "f" {
  rankdir=TB;
  node [shape=box, style=rounded];
  subgraph cluster_g0 {
    label="f";
    n0 [label="x\nf32[3]", shape=ellipse];
    n2 [label="y = Add\nf32[3]"];
    subgraph cluster_g1 { label="f_then"; n5 [label="Neg"]; }
  }
  c2_2 [label="1", shape=plaintext];  // a constant
  n0 -> n2; c2_2 -> n2;
  n2 -> n5 [style=dashed];
  ret0 [label="return", shape=doublecircle];
  n2 -> ret0;
}"#;
        let m = from_dot(dot).unwrap();
        assert_eq!(m.name, "f");
        assert_eq!(m.clusters.len(), 1);
        assert_eq!(m.clusters[0].id, "f_then");
        assert_eq!(m.clusters[0].kind, ClusterKind::Then);
        let ids: Vec<(&str, NodeKind, Option<usize>)> = m
            .nodes
            .iter()
            .map(|n| (n.id.as_str(), n.kind, n.cluster))
            .collect();
        assert_eq!(
            ids,
            vec![
                ("n0", NodeKind::Param, None),
                ("n2", NodeKind::CNode, None),
                ("n5", NodeKind::CNode, Some(0)),
                ("c2_2", NodeKind::Const, None),
                ("ret0", NodeKind::Output, None),
            ]
        );
        assert_eq!(m.nodes[1].label, "y = Add");
        assert_eq!(m.edges[0].label.as_deref(), Some("f32[3]"));
        assert_eq!(m.edges[2].style, EdgeStyle::Ref);
        assert!(dot_to_svg(dot).unwrap().contains(r#"data-node="c2_2""#));
        assert!(from_dot("not dot").is_err());
    }
}
