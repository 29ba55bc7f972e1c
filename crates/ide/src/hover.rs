//! Hover: the type and shape of a name or expression, a primitive's signature
//! and docs, a graph's signature, a weight's declaration.

use analysis::infer::EntryResult;
use ir::AbsVal;
use syntax::{ast, AstNode, TextRange, TextSize};

use crate::sema::{describe, GraphSema, Sema, Target};
use crate::Analysis;

/// Markdown for a range of the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HoverResult {
    pub range: TextRange,
    pub markdown: String,
}

pub(crate) fn hover(analysis: &Analysis, offset: TextSize) -> Option<HoverResult> {
    let sema = Sema::new(analysis);
    let token = sema.token_at(offset)?;
    // An attribute name in a primitive call: `transpose_b=`.
    if let Some(kw) = token
        .parent()
        .and_then(|p| p.parent())
        .and_then(ast::KeywordArg::cast)
    {
        if let Some(h) = attribute_hover(&kw, token.text_range()) {
            return Some(h);
        }
    }
    if let Some(name) = sema.name_at(offset) {
        let markdown = match &name.target {
            Target::Local { item, node, .. } => {
                let g = sema.graph(item)?;
                let ident = g
                    .lowered
                    .body
                    .node(*node)
                    .name
                    .clone()
                    .unwrap_or_else(|| analysis.text()[name.range].to_string());
                let kind = if g.is_param(*node) { "param" } else { "let" };
                // A name bound to a lambda: the lambda's inferred signature.
                let value = match &g.lowered.body.node(*node).kind {
                    ir::NodeKind::Const(ir::Value::Graph(h)) => lambda_signature(&g, *h),
                    _ => values_text(&g, &g.values(*node)),
                };
                let mut md = format!("```mindir\n{kind} {ident}: {value}\n```");
                if let Some((ty, _)) = &g.lowered.body.node(*node).annotation {
                    md.push_str(&format!("\n\ndeclared {}", code_span(&ty.to_string())));
                }
                md
            }
            Target::Nested { item, graph } => {
                let g = sema.graph(item)?;
                let nested = g.lowered.body.graph(*graph);
                let params: Vec<String> = nested
                    .params
                    .iter()
                    .map(|&p| {
                        let n = g.lowered.body.node(p);
                        let pname = n.name.clone().unwrap_or_default();
                        let vals = g.values(p);
                        if vals.is_empty() {
                            pname
                        } else {
                            format!("{pname}: {}", values_text(&g, &vals))
                        }
                    })
                    .collect();
                format!(
                    "```mindir\ngraph {}({})\n```\n\nnested in {}",
                    nested.name,
                    params.join(", "),
                    code_span(item)
                )
            }
            Target::Graph(gname) => {
                graph_hover(&sema, gname).or_else(|| imported_hover(analysis, gname))?
            }
            Target::Weight(w) => weight_hover(&sema, w).or_else(|| imported_hover(analysis, w))?,
            Target::Prim(p) => {
                let mut md = prim_hover(p)?;
                if let Some(call) = call_result(&sema, name.range) {
                    md = format!("{call}\n\n---\n\n{md}");
                }
                md
            }
            Target::Meta(m) => {
                let mut md = meta_doc(m).to_string();
                if let Some(call) = call_result(&sema, name.range) {
                    md = format!("{call}\n\n---\n\n{md}");
                }
                md
            }
            Target::DType(d) => format!("```mindir\n{d}\n```\n\ndtype `{d}`"),
        };
        // A graph called by name: show the call's result too.
        let markdown = match &name.target {
            Target::Graph(_) | Target::Nested { .. } | Target::Local { .. } if !name.is_def => {
                match call_result(&sema, name.range) {
                    Some(call) => format!("{markdown}\n\n---\n\n{call}"),
                    None => markdown,
                }
            }
            _ => markdown,
        };
        return Some(HoverResult {
            range: name.range,
            markdown,
        });
    }
    // The `fn` of a lambda: its inferred signature.
    if token.kind() == syntax::SyntaxKind::FN_KW {
        if let Some(h) = lambda_hover(&sema, &token) {
            return Some(h);
        }
    }
    // A MindSpore primitive the registry does not support (the checker
    // reports it, E0145): MindSpore's signature.
    if token.kind() == syntax::SyntaxKind::IDENT {
        if let ops::mindspore::Support::Unsupported(p) = ops::mindspore::support(token.text()) {
            return Some(HoverResult {
                range: token.text_range(),
                markdown: unsupported_hover(p),
            });
        }
    }
    // A dtype given as an attribute (`Cast(x, i32)`), not lowered as a name.
    if token.kind() == syntax::SyntaxKind::IDENT {
        if let Ok(d) = token.text().parse::<ir::DType>() {
            return Some(HoverResult {
                range: token.text_range(),
                markdown: format!("```mindir\n{d}\n```\n\ndtype `{d}`"),
            });
        }
    }
    // An expression: the smallest call or operator around the cursor.
    let g = sema.graph_at(offset)?;
    let node = g.apply_node_at(TextRange::empty(offset))?;
    let range = g.node_range(node)?;
    let vals = g.values(node);
    if vals.is_empty() {
        return None;
    }
    Some(HoverResult {
        range,
        markdown: format!("```mindir\n{}\n```", values_text(&g, &vals)),
    })
}

/// The result of the call whose callee is at `callee`.
fn call_result(sema: &Sema, callee: TextRange) -> Option<String> {
    let token = sema.token_at(callee.start())?;
    let call = token.parent_ancestors().find_map(ast::CallExpr::cast)?;
    if call.callee()?.range() != callee {
        return None;
    }
    let g = sema.graph_at(callee.start())?;
    let node = g.apply_node_at(call.range())?;
    if g.node_range(node)? != call.range() {
        return None;
    }
    let vals = g.values(node);
    if vals.is_empty() {
        return None;
    }
    Some(format!(
        "call result: {}",
        code_span(&values_text(&g, &vals))
    ))
}

/// `text` as a markdown code span: fenced by more backticks than any run in
/// it, so that it renders as one span whatever it holds.
pub(crate) fn code_span(text: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for c in text.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let fence = "`".repeat(longest + 1);
    let pad = if text.starts_with('`') || text.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{text}{pad}{fence}")
}

fn lambda_hover(sema: &Sema, token: &syntax::SyntaxToken) -> Option<HoverResult> {
    let lambda = token.parent().and_then(ast::LambdaExpr::cast)?;
    let range = lambda.syntax().text_range();
    let g = sema.graph_at(range.start())?;
    let body = &g.lowered.body;
    let graph = body.graph_ids().find(|&h| {
        body.graph(h)
            .span
            .is_some_and(|s| g.mapper.range(s) == range)
    })?;
    Some(HoverResult {
        range: token.text_range(),
        markdown: format!(
            "```mindir\n{}\n```\n\na lambda",
            lambda_signature(&g, graph)
        ),
    })
}

/// `fn(a: f32[4]) -> f32[4]`: a nested graph's parameters and result as
/// inferred where it is used (`?` where it never is).
fn lambda_signature(g: &GraphSema, graph: ir::GraphId) -> String {
    let body = &g.lowered.body;
    let nested = body.graph(graph);
    let params: Vec<String> = nested
        .params
        .iter()
        .map(|&p| {
            let name = body.node(p).name.clone().unwrap_or_default();
            format!("{name}: {}", values_text(g, &g.values(p)))
        })
        .collect();
    let result = nested
        .output
        .map_or_else(|| "?".to_string(), |o| values_text(g, &g.values(o)));
    format!("fn({}) -> {result}", params.join(", "))
}

pub(crate) fn values_text(g: &GraphSema, vals: &[AbsVal]) -> String {
    if vals.is_empty() {
        return "?".into();
    }
    let parts: Vec<String> = vals.iter().map(|v| g.describe(v)).collect();
    parts.join(" | ")
}

/// The signature of a graph an import makes visible as `name` (`dense`,
/// `nn.dense`), under that name.
pub(crate) fn imported_signature(analysis: &Analysis, name: &str) -> Option<String> {
    let nav = crate::nav::imported_item(analysis, name)?;
    let there = Analysis::new(analysis.db, nav.file?);
    let item = &there.text()[nav.focus_range];
    let sig = graph_signature(&Sema::new(&there), item)?;
    Some(format!(
        "graph {name}{}",
        sig.strip_prefix(&format!("graph {item}"))?
    ))
}

/// `graph NAME(PARAMS) -> RET` with inferred types where none are written.
pub(crate) fn graph_signature(sema: &Sema, name: &str) -> Option<String> {
    let g = sema.graph(name)?;
    let body = &g.lowered.body;
    let root = body.graph(body.root());
    let result: Option<&EntryResult> = g.result();
    let params: Vec<String> = root
        .params
        .iter()
        .enumerate()
        .map(|(i, &p)| {
            let n = body.node(p);
            let pname = n.name.clone().unwrap_or_default();
            match &n.annotation {
                Some((ty, _)) => format!("{pname}: {ty}"),
                None => match result.and_then(|r| r.params.get(i)) {
                    Some(AbsVal::Any) | None => pname,
                    Some(v) => format!("{pname}: {}", describe(result, v)),
                },
            }
        })
        .collect();
    let ret = match &root.ret_annotation {
        Some((ty, _)) => format!(" -> {ty}"),
        None => match result.and_then(|r| r.output.as_ref()) {
            Some(AbsVal::Any) | None => String::new(),
            Some(v) => format!(" -> {}", describe(result, v)),
        },
    };
    Some(format!("graph {name}({}){ret}", params.join(", ")))
}

/// The hover of an imported item: its own, in its file, and where it is.
fn imported_hover(analysis: &Analysis, name: &str) -> Option<String> {
    let nav = crate::nav::imported_item(analysis, name)?;
    let file = nav.file?;
    let there = Analysis::new(analysis.db, file);
    let md = there.hover(nav.focus_range.start())?.markdown;
    let from = file
        .path(analysis.db)
        .as_deref()
        .and_then(|p| p.file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    Some(format!("{md}\n\nfrom `{from}`"))
}

fn graph_hover(sema: &Sema, name: &str) -> Option<String> {
    let sig = graph_signature(sema, name)?;
    let mut md = format!("```mindir\n{sig}\n```");
    if let Some(doc) = doc_comment(sema, name) {
        md.push_str(&format!("\n\n{doc}"));
    }
    Some(md)
}

/// The comment lines right above an item (lines end at LF, CRLF or CR).
pub(crate) fn doc_comment(sema: &Sema, name: &str) -> Option<String> {
    use syntax::{ColumnUnit, LineCol};
    let info = sema.items.get(name)?;
    let text = sema.analysis.text();
    let index = db::line_index(sema.analysis.db, sema.analysis.file);
    let mut line = index
        .line_col(text, info.range.start(), ColumnUnit::Utf8)
        .line;
    let mut lines: Vec<&str> = Vec::new();
    // Walk back line by line over comment-only lines directly above.
    while line > 0 {
        line -= 1;
        let at = |col| usize::from(index.offset(text, LineCol { line, col }, ColumnUnit::Utf8));
        let this = text[at(0)..at(u32::MAX)].trim();
        match this.strip_prefix('#') {
            Some(c) => lines.push(c.trim()),
            None => break,
        }
    }
    if lines.is_empty() {
        return None;
    }
    lines.reverse();
    Some(lines.join("\n"))
}

fn weight_hover(sema: &Sema, name: &str) -> Option<String> {
    let info = sema.items.get(name)?;
    let text = &sema.analysis.text()[info.range];
    let one_line: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let key = sema.key(name);
    let mut md = format!("```mindir\n{one_line}\n```");
    if let Some(w) = db::weight(sema.analysis.db, key) {
        if let ir::Ty::Tensor(_, shape) = &w.0.ty {
            if let Some(n) = shape.numel() {
                md.push_str(&format!("\n\nweight, {n} elements"));
            }
        }
    }
    Some(md)
}

pub(crate) fn prim_hover(name: &str) -> Option<String> {
    let op = ops::lookup(name)?;
    let mut md = format!("```mindir\n{}\n```\n\n{}", op.signature(), op.doc);
    let params: Vec<String> = op
        .params()
        .iter()
        .map(|p| format!("- `{}`: {}", p.name, p.doc))
        .collect();
    if !params.is_empty() {
        md.push_str("\n\n");
        md.push_str(&params.join("\n"));
    }
    Some(md)
}

/// A MindSpore primitive that mirdsl does not support yet: MindSpore's
/// signature, and what its arguments are.
pub(crate) fn unsupported_hover(p: &ops::mindspore::MsPrim) -> String {
    let series = ops::mindspore::SERIES;
    let mut md = format!(
        "```mindir\n{}\n```\n\n**Not supported by mirdsl yet** (`E0145`): a MindSpore {series} primitive.",
        p.signature()
    );
    if !p.doc.is_empty() {
        md.push(' ');
        md.push_str(p.doc);
    }
    md.push_str(&format!("\n\n`{}` is {}.", p.name, p.kind_note()));
    if !p.effects.is_empty() {
        let effects: Vec<String> = p.effects.iter().map(|e| format!("`{e}`")).collect();
        md.push_str(&format!("\n\nSide effects: {}.", effects.join(", ")));
    }
    if p.args.is_some() {
        md.push_str(&format!("\n\nDefined in MindSpore's `{}`.", p.source));
    }
    md
}

pub(crate) fn meta_doc(name: &str) -> &'static str {
    match name {
        "grad" => "```mindir\ngrad(f, wrt=...)\n```\n\nThe gradient of `f` with respect to its first parameter (or the parameters and weights in `wrt`), with sensitivity `OnesLike(output)`: MindSpore's `GradOperation()`.",
        "value_and_grad" => "```mindir\nvalue_and_grad(f, wrt=...)\n```\n\nA function returning `(f's output, the gradients)`.",
        "vjp" => "```mindir\nvjp(f)\n```\n\nA function that, applied to `f`'s arguments, returns `(output, backprop)`; `backprop(dout)` returns the gradients of every parameter (MindIR's `J`).",
        "jvp" => "```mindir\njvp(f)\n```\n\nForward mode: `jvp(f)(x..., v...)` returns `(f(x...), J·v)`, one tangent per argument.",
        "hvp" => "```mindir\nhvp(f)\n```\n\nThe Hessian-vector product: `hvp(f)(x..., v)` is the Hessian of `f`'s summed output with respect to its first parameter, times `v`.",
        "vmap" => "```mindir\nvmap(f, in_axes=0, out_axes=0)\n```\n\n`f` mapped over a batch axis of its arguments (`in_axes`: an int, `none` for an argument every example shares, or a tuple of them), its outputs stacked along `out_axes`: JAX's `jax.vmap`, MindSpore's `ops.vmap`.",
        "jacfwd" => "```mindir\njacfwd(f, wrt=...)\n```\n\nThe Jacobian of `f`'s output with respect to its first parameter (or those in `wrt`), by forward mode, shaped `out.shape + x.shape`: JAX's `jax.jacfwd`.",
        "jacrev" => "```mindir\njacrev(f, wrt=...)\n```\n\nThe Jacobian of `f`'s output with respect to its first parameter (or those in `wrt`), by reverse mode, shaped `out.shape + x.shape`: JAX's `jax.jacrev`.",
        "hessian" => "```mindir\nhessian(f, wrt=...)\n```\n\nThe Hessian of `f`'s output, `jacfwd(jacrev(f))`, shaped `out.shape + x.shape + x.shape`: JAX's `jax.hessian`.",
        "checkpoint" => "```mindir\ncheckpoint(f)\n```\n\n`f`, whose intermediates a derivative recomputes in the backward pass instead of keeping (less memory, more time): MindSpore's `recompute`, JAX's `jax.checkpoint`.",
        _ => "metafunction",
    }
}

fn attribute_hover(kw: &ast::KeywordArg, range: TextRange) -> Option<HoverResult> {
    let name = kw.name()?;
    if name.range() != range {
        return None;
    }
    let call = kw.syntax().ancestors().find_map(ast::CallExpr::cast)?;
    let Some(ast::Expr::NameRef(callee)) = call.callee() else {
        return None;
    };
    let callee = callee.text();
    let text = name.text();
    if let Some(op) = ops::lookup(&callee) {
        let p = op.param(&text)?;
        let kind = match p.kind {
            ops::ParamKind::Input => "input".to_string(),
            ops::ParamKind::Attr { ty, default } => match default {
                Some(d) => format!("{}, default `{}`", ty.describe(), d.value()),
                None => format!("{}, required", ty.describe()),
            },
        };
        return Some(HoverResult {
            range,
            markdown: format!("`{callee}` attribute `{text}` ({kind})\n\n{}", p.doc),
        });
    }
    if callee == "vmap" && (text == "in_axes" || text == "out_axes") {
        return Some(HoverResult {
            range,
            markdown: format!(
                "`{text}`: {}",
                if text == "in_axes" {
                    "the batch axis of each argument: an int for all, `none` for an argument every example shares, or a tuple with one per argument"
                } else {
                    "where the batch axis goes in the output: an int, `none` (the same for every example), or a tuple with one per output element"
                }
            ),
        });
    }
    if text == "wrt"
        && matches!(
            callee.as_str(),
            "grad" | "value_and_grad" | "jacfwd" | "jacrev" | "hessian"
        )
    {
        return Some(HoverResult {
            range,
            markdown: "`wrt`: the parameters (0-based positions) and weights to differentiate with respect to".into(),
        });
    }
    None
}
