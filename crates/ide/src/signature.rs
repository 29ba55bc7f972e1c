//! Signature help for calls of primitives, metafunctions and graphs.

use syntax::{ast, AstNode, SyntaxKind, TextSize};

use crate::hover::{meta_doc, values_text};
use crate::sema::{Sema, Target};
use crate::Analysis;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignatureHelp {
    /// `MatMul(x, y, transpose_a=false, transpose_b=false)`
    pub label: String,
    pub documentation: Option<String>,
    /// Each parameter: its byte range in `label`, and its docs.
    pub parameters: Vec<(std::ops::Range<usize>, Option<String>)>,
    pub active_parameter: Option<usize>,
}

pub(crate) fn signature_help(analysis: &Analysis, offset: TextSize) -> Option<SignatureHelp> {
    let sema = Sema::new(analysis);
    let token = syntax::token_at_offset(&sema.root, offset).left_biased()?;
    // The innermost argument list whose parentheses hold the cursor.
    let args = token.parent_ancestors().find(|n| {
        n.kind() == SyntaxKind::ARG_LIST && {
            let r = n.text_range();
            let closed = n
                .last_token()
                .is_some_and(|t| t.kind() == SyntaxKind::R_PAREN);
            r.start() < offset && (!closed || offset < r.end())
        }
    })?;
    let call = args.parent().and_then(ast::CallExpr::cast)?;
    let callee = call.callee()?;
    // Which argument: commas at the top level of the list before the cursor.
    let mut index = 0usize;
    let mut keyword: Option<String> = None;
    for el in args.children_with_tokens() {
        if el.text_range().start() >= offset {
            break;
        }
        match el {
            syntax::NodeOrToken::Token(t) if t.kind() == SyntaxKind::COMMA => {
                index += 1;
                keyword = None;
            }
            syntax::NodeOrToken::Node(n) => {
                if let Some(k) = ast::KeywordArg::cast(n) {
                    keyword = k.name().map(|n| n.text());
                }
            }
            _ => {}
        }
    }
    let name_text = match &callee {
        ast::Expr::NameRef(n) => n.text(),
        _ => String::new(),
    };
    let target = sema
        .name_at(callee.range().start())
        .filter(|n| n.range == callee.range())
        .map(|n| n.target);
    let mut help = match target {
        Some(Target::Prim(p)) => prim_signature(&p)?,
        Some(Target::Meta(m)) => {
            let params = if m == "vjp" {
                vec![("f".to_string(), None)]
            } else {
                vec![
                    ("f".to_string(), None),
                    (
                        "wrt=...".to_string(),
                        Some("positions and weights".to_string()),
                    ),
                ]
            };
            build(m, params, Some(meta_doc(m).to_string()))
        }
        Some(Target::Graph(g)) => graph_signature(&sema, &g)?,
        Some(Target::Nested { item, graph }) => {
            let g = sema.graph(&item)?;
            let nested = g.lowered.body.graph(graph);
            let params = nested
                .params
                .iter()
                .map(|&p| {
                    let n = g.lowered.body.node(p);
                    let name = n.name.clone().unwrap_or_default();
                    let vals = g.values(p);
                    let label = match &n.annotation {
                        Some((ty, _)) => format!("{name}: {ty}"),
                        None if !vals.is_empty() => format!("{name}: {}", values_text(&g, &vals)),
                        None => name,
                    };
                    (label, None)
                })
                .collect();
            build(&nested.name, params, None)
        }
        _ if ops::lookup(&name_text).is_some() => prim_signature(&name_text)?,
        _ => return None,
    };
    help.active_parameter = Some(match (&keyword, ops::lookup(&name_text)) {
        (Some(k), Some(op)) => op
            .params()
            .iter()
            .position(|p| p.name == k)
            .unwrap_or(index),
        _ => index,
    });
    Some(help)
}

fn build(name: &str, params: Vec<(String, Option<String>)>, doc: Option<String>) -> SignatureHelp {
    let mut label = format!("{name}(");
    let mut ranges = Vec::new();
    for (i, (p, d)) in params.into_iter().enumerate() {
        if i > 0 {
            label.push_str(", ");
        }
        let start = label.len();
        label.push_str(&p);
        ranges.push((start..label.len(), d));
    }
    label.push(')');
    SignatureHelp {
        label,
        documentation: doc,
        parameters: ranges,
        active_parameter: None,
    }
}

fn prim_signature(name: &str) -> Option<SignatureHelp> {
    let op = ops::lookup(name)?;
    let params = op
        .params()
        .iter()
        .map(|p| {
            let label = match p.kind {
                ops::ParamKind::Input => p.name.to_string(),
                ops::ParamKind::Attr {
                    default: Some(d), ..
                } => format!("{}={}", p.name, d.value()),
                ops::ParamKind::Attr { ty, default: None } => {
                    format!("{}: {}", p.name, ty.describe())
                }
            };
            (label, Some(p.doc.to_string()))
        })
        .collect();
    Some(build(op.name, params, Some(op.doc.to_string())))
}

fn graph_signature(sema: &Sema, name: &str) -> Option<SignatureHelp> {
    let g = sema.graph(name)?;
    let body = &g.lowered.body;
    let root = body.graph(body.root());
    let params = root
        .params
        .iter()
        .map(|&p| {
            let n = body.node(p);
            let pname = n.name.clone().unwrap_or_default();
            let label = match &n.annotation {
                Some((ty, _)) => format!("{pname}: {ty}"),
                None => pname,
            };
            (label, None)
        })
        .collect();
    let mut help = build(name, params, crate::hover::doc_comment(sema, name));
    let ret = match &root.ret_annotation {
        Some((ty, _)) => Some(ty.to_string()),
        None => g
            .result()
            .and_then(|r| r.output.as_ref())
            .filter(|v| !matches!(v, ir::AbsVal::Any))
            .map(|v| g.describe(v)),
    };
    if let Some(ret) = ret {
        help.label.push_str(&format!(" -> {ret}"));
    }
    Some(help)
}
