//! Completion: names in scope at the cursor, graphs, weights, primitives with
//! argument snippets, attribute names inside a primitive call, dtypes in type
//! positions, keywords. Worked out from the syntax tree around the cursor, so
//! it works while the statement being typed is incomplete.

use std::collections::HashSet;

use ir::DType;
use syntax::{ast, AstNode, SyntaxKind, SyntaxNode, SyntaxToken, TextRange, TextSize};

use crate::hover::{graph_signature, imported_signature, meta_doc, unsupported_hover, values_text};
use crate::sema::{Sema, Target};
use crate::Analysis;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CompletionKind {
    /// A binding or parameter in scope.
    Local,
    /// A nested graph in scope.
    NestedGraph,
    Graph,
    Weight,
    Primitive,
    Metafunction,
    /// An attribute of the primitive being called (`transpose_b=`).
    Attribute,
    DType,
    Keyword,
    /// A weight initialiser (`zeros`, `normal(...)`).
    Initializer,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompletionItem {
    pub label: String,
    pub kind: CompletionKind,
    pub detail: Option<String>,
    pub documentation: Option<String>,
    /// Text to insert; a snippet (`$1`, `${1:x}`) when `is_snippet`.
    pub insert_text: String,
    pub is_snippet: bool,
    /// The text the completion replaces (the identifier being typed).
    pub replace: TextRange,
    /// Sorts before others of equal relevance when smaller.
    pub sort: u8,
}

impl CompletionItem {
    fn new(label: impl Into<String>, kind: CompletionKind, replace: TextRange, sort: u8) -> Self {
        let label = label.into();
        CompletionItem {
            insert_text: label.clone(),
            label,
            kind,
            detail: None,
            documentation: None,
            is_snippet: false,
            replace,
            sort,
        }
    }

    fn detail(mut self, d: impl Into<String>) -> Self {
        self.detail = Some(d.into());
        self
    }

    fn doc(mut self, d: impl Into<String>) -> Self {
        self.documentation = Some(d.into());
        self
    }

    fn snippet(mut self, s: impl Into<String>) -> Self {
        self.insert_text = s.into();
        self.is_snippet = true;
        self
    }
}

pub(crate) const META: &[&str] = &[
    "grad",
    "value_and_grad",
    "vjp",
    "jvp",
    "hvp",
    "vmap",
    "jacfwd",
    "jacrev",
    "hessian",
    "checkpoint",
];

/// The rank of MindSpore primitives mirdsl does not support (offered last).
const UNSUPPORTED: u8 = 5;

/// At most this many items are offered; the list says it is incomplete
/// beyond (the client asks again as the name grows).
pub const MAX_ITEMS: usize = 200;

/// The items offered at a cursor, best first.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CompletionList {
    pub items: Vec<CompletionItem>,
    /// More items match than are listed.
    pub is_incomplete: bool,
}

/// How well a label matches what was typed: an exact-case prefix, a prefix
/// in another case, a subsequence (`mmul` for `MatMul`); `None`: no match.
fn match_quality(label: &str, typed: &str) -> Option<u8> {
    if typed.is_empty() || label.starts_with(typed) {
        return Some(0);
    }
    let lower = label.to_lowercase();
    let typed_lower = typed.to_lowercase();
    if lower.starts_with(&typed_lower) {
        return Some(1);
    }
    let mut chars = lower.chars();
    typed_lower
        .chars()
        .all(|c| chars.by_ref().any(|l| l == c))
        .then_some(2)
}

pub(crate) fn completion_list(analysis: &Analysis, offset: TextSize) -> CompletionList {
    let sema = Sema::new(analysis);
    let (items, replace) = candidates(&sema, offset);
    let typed = &analysis.text()[replace.unwrap_or_default()];
    let mut ranked: Vec<(u8, CompletionItem)> = items
        .into_iter()
        .filter_map(|c| Some((match_quality(&c.label, typed)?, c)))
        .collect();
    // MindSpore primitives mirdsl does not support come last whatever;
    // then better matches first, then nearer scopes (locals, attributes,
    // items, primitives, keywords), then shorter names (when something was
    // typed).
    let len = |c: &CompletionItem| if typed.is_empty() { 0 } else { c.label.len() };
    let last = |c: &CompletionItem| c.sort >= UNSUPPORTED;
    ranked.sort_by(|(qa, a), (qb, b)| {
        (last(a), qa, a.sort, len(a), &a.label).cmp(&(last(b), qb, b.sort, len(b), &b.label))
    });
    let is_incomplete = ranked.len() > MAX_ITEMS;
    ranked.truncate(MAX_ITEMS);
    // Details that need inference, for the items offered only.
    let items = ranked
        .into_iter()
        .map(|(_, mut c)| {
            match c.kind {
                CompletionKind::Graph if c.detail.is_none() => {
                    c.detail = graph_signature(&sema, &c.label)
                        .or_else(|| imported_signature(&sema.analysis, &c.label));
                }
                CompletionKind::Weight if c.detail.is_none() => {
                    if let Some(w) = db::weight(sema.analysis.db, sema.key(&c.label)) {
                        c.detail = Some(w.0.ty.to_string());
                    }
                }
                _ => {}
            }
            c
        })
        .collect();
    CompletionList {
        items,
        is_incomplete,
    }
}

pub(crate) fn completions(analysis: &Analysis, offset: TextSize) -> Vec<CompletionItem> {
    completion_list(analysis, offset).items
}

/// Every item that fits the place of the cursor (not yet matched against
/// what was typed), and the range of the name being typed.
fn candidates(sema: &Sema, offset: TextSize) -> (Vec<CompletionItem>, Option<TextRange>) {
    let root = &sema.root;
    // The identifier being typed, if any, ends at the cursor.
    let left = syntax::token_at_offset(root, offset).left_biased();
    let (replace, before) = match &left {
        Some(t)
            if matches!(t.kind(), SyntaxKind::IDENT | SyntaxKind::TEMP)
                || t.kind().is_keyword() =>
        {
            let r = TextRange::new(t.text_range().start(), offset);
            (r, prev_non_trivia(t))
        }
        Some(t) if t.text_range().end() == offset && !t.kind().is_trivia() => {
            (TextRange::empty(offset), Some(t.clone()))
        }
        Some(t) => (TextRange::empty(offset), prev_non_trivia_incl(t)),
        None => (TextRange::empty(offset), None),
    };
    // No completion inside comments, strings and numbers.
    if let Some(t) = &left {
        if matches!(
            t.kind(),
            SyntaxKind::COMMENT | SyntaxKind::STRING | SyntaxKind::INT | SyntaxKind::FLOAT
        ) && t
            .text_range()
            .contains(offset.checked_sub(1.into()).unwrap_or(offset))
            && t.text_range().end() >= offset
            && t.text_range().start() < offset
        {
            return (Vec::new(), None);
        }
    }
    let anchor = left.as_ref().and_then(|t| t.parent());
    let before_kind = before.as_ref().map(|t| t.kind());

    let mut out = Vec::new();
    // Type positions: after `:` of a parameter or binding, after `->`, in a type.
    if let Some(node) = &anchor {
        let in_type = node.ancestors().any(|n| {
            matches!(
                n.kind(),
                SyntaxKind::NAMED_TYPE | SyntaxKind::TUPLE_TYPE | SyntaxKind::FN_TYPE
            )
        }) && !node.ancestors().any(|n| n.kind() == SyntaxKind::SHAPE);
        let after_colon = matches!(
            before_kind,
            Some(SyntaxKind::COLON) | Some(SyntaxKind::THIN_ARROW)
        ) && before.as_ref().and_then(|b| b.parent()).is_some_and(|p| {
            matches!(
                p.kind(),
                SyntaxKind::PARAM
                    | SyntaxKind::LET_STMT
                    | SyntaxKind::RET_TYPE
                    | SyntaxKind::WEIGHT
                    | SyntaxKind::GRAPH
                    | SyntaxKind::FN_TYPE
            )
        });
        if in_type || after_colon {
            dtypes(&mut out, replace);
            return (out, Some(replace));
        }
    }
    // Top level: outside every graph.
    let in_graph = anchor
        .as_ref()
        .is_some_and(|n| n.ancestors().any(|a| a.kind() == SyntaxKind::GRAPH));
    let in_weight = anchor
        .as_ref()
        .and_then(|n| n.ancestors().find(|a| a.kind() == SyntaxKind::WEIGHT));
    if let Some(w) = in_weight {
        let after_eq = w
            .children_with_tokens()
            .filter_map(|e| e.into_token())
            .any(|t| t.kind() == SyntaxKind::EQ && t.text_range().end() <= replace.start());
        if after_eq {
            initializers(&mut out, replace);
        }
        return (out, Some(replace));
    }
    if !in_graph {
        out.push(
            CompletionItem::new("graph", CompletionKind::Keyword, replace, 1)
                .snippet("graph ${1:name}(${2}) {\n  $0\n}")
                .detail("a graph"),
        );
        out.push(
            CompletionItem::new("param", CompletionKind::Keyword, replace, 1)
                .snippet("param ${1:name}: ${2:f32[1]} = ${3:zeros}")
                .detail("a weight"),
        );
        return (out, Some(replace));
    }
    // Inside a call's parentheses, at an argument's start: attribute names.
    let call_args = anchor.as_ref().and_then(|n| {
        n.ancestors()
            .find(|a| a.kind() == SyntaxKind::ARG_LIST)
            .filter(|a| a.text_range().start() < replace.start())
    });
    let at_arg_start = matches!(
        before_kind,
        Some(SyntaxKind::L_PAREN) | Some(SyntaxKind::COMMA)
    );
    if let (Some(args), true) = (&call_args, at_arg_start) {
        if let Some(call) = args.parent().and_then(ast::CallExpr::cast) {
            attributes(sema, &call, &mut out, replace);
        }
    }
    // Expressions: names in scope, items, primitives, keywords.
    let mut seen = HashSet::new();
    if let Some(node) = &anchor {
        for (name, range, kind) in scope_names(node, replace.start()) {
            if !seen.insert(name.clone()) {
                continue;
            }
            let mut item = CompletionItem::new(&name, kind, replace, 0);
            if let Some(ty) = local_type(sema, range) {
                item = item.detail(ty);
            }
            out.push(item);
        }
    }
    for info in &sema.items.items {
        if !info.first || !seen.insert(info.name.clone()) {
            continue;
        }
        // Their details need inference: filled in for the items offered.
        let kind = match info.kind {
            db::ItemKind::Graph => CompletionKind::Graph,
            db::ItemKind::Weight => CompletionKind::Weight,
        };
        out.push(CompletionItem::new(&info.name, kind, replace, 2));
    }
    // Items that imports make visible (`dense`, `nn.dense`).
    let (db, file) = (sema.analysis.db, sema.analysis.file);
    if !file.imports(db).is_empty() {
        for v in db::scope(db, file).scope.items.iter() {
            if v.import.is_none() || !seen.insert(v.name.clone()) {
                continue;
            }
            let kind = if v.is_graph {
                CompletionKind::Graph
            } else {
                CompletionKind::Weight
            };
            out.push(CompletionItem::new(&v.name, kind, replace, 2));
        }
    }
    let followed_by_paren = left
        .as_ref()
        .and_then(|t| t.next_token())
        .is_some_and(|t| t.kind() == SyntaxKind::L_PAREN);
    for op in ops::public_ops() {
        if seen.contains(op.name) {
            continue;
        }
        let mut item = CompletionItem::new(op.name, CompletionKind::Primitive, replace, 3)
            .detail(op.signature())
            .doc(op.doc);
        if !followed_by_paren {
            let inputs: Vec<String> = op
                .inputs()
                .enumerate()
                .map(|(i, p)| format!("${{{}:{}}}", i + 1, p.name))
                .collect();
            item = item.snippet(format!("{}({})$0", op.name, inputs.join(", ")));
        }
        out.push(item);
    }
    // MindSpore 2.10 primitives mirdsl does not support yet, last and marked:
    // typing one gives E0145 with MindSpore's signature, so they help someone
    // porting a model see what is missing. Only for a typed prefix: they are
    // some 2,000 names, which would swamp every list (and the LSP traffic).
    let prefix = &sema.analysis.text()[replace];
    if !prefix.is_empty() {
        for p in ops::mindspore::unsupported() {
            let matches = p.name.starts_with(|c: char| c.is_ascii_uppercase())
                && p.name.len() >= prefix.len()
                && p.name.is_char_boundary(prefix.len())
                && p.name[..prefix.len()].eq_ignore_ascii_case(prefix);
            if !matches || seen.contains(p.name) {
                continue;
            }
            out.push(
                CompletionItem::new(p.name, CompletionKind::Primitive, replace, UNSUPPORTED)
                    .detail(format!(
                        "not supported yet: MindSpore {} {}",
                        ops::mindspore::SERIES,
                        p.signature()
                    ))
                    .doc(unsupported_hover(p)),
            );
        }
    }
    for m in META {
        let mut item =
            CompletionItem::new(*m, CompletionKind::Metafunction, replace, 3).doc(meta_doc(m));
        if !followed_by_paren {
            item = item.snippet(format!("{m}(${{1:f}})$0"));
        }
        out.push(item);
    }
    let stmt_start = matches!(
        before_kind,
        None | Some(SyntaxKind::NEWLINE) | Some(SyntaxKind::L_BRACE) | Some(SyntaxKind::SEMI)
    );
    if stmt_start {
        out.push(CompletionItem::new(
            "return",
            CompletionKind::Keyword,
            replace,
            1,
        ));
        out.push(
            CompletionItem::new("graph", CompletionKind::Keyword, replace, 4)
                .snippet("graph ${1:name}(${2}) {\n  $0\n}"),
        );
    }
    for kw in ["if", "fn", "true", "false", "none", "not"] {
        let mut item = CompletionItem::new(kw, CompletionKind::Keyword, replace, 4);
        item = match kw {
            "if" => item.snippet("if ${1:cond} { ${2} } else { ${3} }"),
            "fn" => item.snippet("fn(${1:x}) => ${0}"),
            _ => item,
        };
        out.push(item);
    }
    (out, Some(replace))
}

fn prev_non_trivia(t: &SyntaxToken) -> Option<SyntaxToken> {
    let mut cur = t.prev_token();
    while let Some(p) = cur {
        if !matches!(p.kind(), SyntaxKind::WHITESPACE | SyntaxKind::COMMENT) {
            return Some(p);
        }
        cur = p.prev_token();
    }
    None
}

fn prev_non_trivia_incl(t: &SyntaxToken) -> Option<SyntaxToken> {
    if !matches!(t.kind(), SyntaxKind::WHITESPACE | SyntaxKind::COMMENT) {
        return Some(t.clone());
    }
    prev_non_trivia(t)
}

fn dtypes(out: &mut Vec<CompletionItem>, replace: TextRange) {
    for d in DType::ALL {
        out.push(CompletionItem::new(d.name(), CompletionKind::DType, replace, 0).detail("dtype"));
    }
    for (name, detail) in [("str", "string"), ("none", "the none value")] {
        out.push(CompletionItem::new(name, CompletionKind::DType, replace, 1).detail(detail));
    }
    out.push(
        CompletionItem::new("fn", CompletionKind::Keyword, replace, 2)
            .snippet("fn(${1}) -> ${0}")
            .detail("a function type"),
    );
}

fn initializers(out: &mut Vec<CompletionItem>, replace: TextRange) {
    for (label, snippet, doc) in [
        ("zeros", "zeros", "all zeros"),
        ("ones", "ones", "all ones"),
        (
            "constant",
            "constant(${1:0.0})",
            "every element the same value",
        ),
        (
            "normal",
            "normal(mean=${1:0.0}, std=${2:1.0}, seed=${3:0})",
            "samples of a normal distribution",
        ),
        (
            "uniform",
            "uniform(low=${1:-1.0}, high=${2:1.0}, seed=${3:0})",
            "samples of a uniform distribution",
        ),
        (
            "load",
            "load(\"${1:path.npy}\")",
            "a .npy file, or one tensor of a .safetensors file",
        ),
    ] {
        let mut item = CompletionItem::new(label, CompletionKind::Initializer, replace, 0).doc(doc);
        if snippet != label {
            item = item.snippet(snippet);
        }
        out.push(item);
    }
}

/// Attribute names of the primitive (or `wrt` of the metafunction) being called.
fn attributes(
    sema: &Sema,
    call: &ast::CallExpr,
    out: &mut Vec<CompletionItem>,
    replace: TextRange,
) {
    let Some(ast::Expr::NameRef(callee)) = call.callee() else {
        return;
    };
    let name = callee.text();
    // Shadowed by a local or a top-level item: not the primitive.
    if sema.items.get(&name).is_some() {
        return;
    }
    if let Some(Target::Local { .. } | Target::Nested { .. }) =
        sema.name_at(callee.range().start()).map(|n| n.target)
    {
        return;
    }
    let given: HashSet<String> = call
        .args()
        .filter_map(|a| match a {
            ast::Arg::Keyword(k) => k.name().map(|n| n.text()),
            _ => None,
        })
        .collect();
    if let Some(op) = ops::lookup(&name) {
        for p in op.attrs() {
            if given.contains(p.name) {
                continue;
            }
            let ops::ParamKind::Attr { ty, default } = p.kind else {
                continue;
            };
            let detail = match default {
                Some(d) => format!("{} = {}", ty.describe(), d.value()),
                None => format!("{} (required)", ty.describe()),
            };
            out.push(
                CompletionItem::new(p.name, CompletionKind::Attribute, replace, 0)
                    .snippet(format!("{}=${{1}}", p.name))
                    .detail(detail)
                    .doc(p.doc),
            );
        }
    } else if matches!(
        name.as_str(),
        "grad" | "value_and_grad" | "jacfwd" | "jacrev" | "hessian"
    ) && !given.contains("wrt")
    {
        out.push(
            CompletionItem::new("wrt", CompletionKind::Attribute, replace, 0)
                .snippet("wrt=(${1:0})")
                .detail("parameters and weights to differentiate"),
        );
    } else if name == "vmap" {
        for (attr, detail) in [
            (
                "in_axes",
                "the batch axis of each argument: an int, `none`, or a tuple of them",
            ),
            (
                "out_axes",
                "where the batch axis goes in the output: an int, `none`, or a tuple",
            ),
        ] {
            if !given.contains(attr) {
                out.push(
                    CompletionItem::new(attr, CompletionKind::Attribute, replace, 0)
                        .snippet(format!("{attr}=${{1:0}}"))
                        .detail(detail),
                );
            }
        }
    }
}

/// Names bound at `offset`, innermost first: bindings above it, nested graphs,
/// parameters of the enclosing graphs and lambdas.
fn scope_names(node: &SyntaxNode, offset: TextSize) -> Vec<(String, TextRange, CompletionKind)> {
    let mut out = Vec::new();
    for anc in node.ancestors() {
        if let Some(block) = ast::Block::cast(anc.clone()) {
            for stmt in block.stmts() {
                match stmt {
                    ast::Stmt::Let(l) if l.range().end() <= offset => {
                        pat_names(l.pat(), &mut out);
                    }
                    ast::Stmt::Graph(g) => {
                        if let Some(n) = g.name() {
                            out.push((n.text(), n.range(), CompletionKind::NestedGraph));
                        }
                    }
                    _ => {}
                }
            }
        }
        if let Some(g) = ast::Graph::cast(anc.clone()) {
            for p in g.params() {
                if let Some(n) = p.name() {
                    out.push((n.text(), n.range(), CompletionKind::Local));
                }
            }
            // The top-level graph's own scope ends here.
            if anc
                .parent()
                .is_some_and(|p| p.kind() == SyntaxKind::SOURCE_FILE)
            {
                break;
            }
        }
        if let Some(l) = ast::LambdaExpr::cast(anc.clone()) {
            for p in l.params() {
                if let Some(n) = p.name() {
                    out.push((n.text(), n.range(), CompletionKind::Local));
                }
            }
        }
    }
    out.retain(|(n, _, _)| !n.is_empty());
    out
}

fn pat_names(pat: Option<ast::Pat>, out: &mut Vec<(String, TextRange, CompletionKind)>) {
    match pat {
        Some(ast::Pat::Name(n)) => out.push((n.text(), n.range(), CompletionKind::Local)),
        Some(ast::Pat::Tuple(t)) => t.fields().for_each(|f| pat_names(Some(f), out)),
        None => {}
    }
}

/// The inferred type of the local defined at `range`.
fn local_type(sema: &Sema, range: TextRange) -> Option<String> {
    let g = sema.graph_at(range.start())?;
    let name = g
        .names()
        .into_iter()
        .find(|n| n.is_def && n.range == range)?;
    match name.target {
        Target::Local { node, .. } => {
            let vals = g.values(node);
            (!vals.is_empty()).then(|| values_text(&g, &vals))
        }
        Target::Nested { graph, .. } => Some(format!("graph {}", g.nested_name(graph))),
        _ => None,
    }
}
