//! SVG output. Structure (what the editors rely on):
//!
//! ```text
//! <svg class="mirdsl-graph" data-graph="NAME" ...>
//!   <style/> <defs/> <rect class="background"/>
//!   <g class="graph">               the top-level graph; per block, in this order:
//!     <g class="cluster" data-graph="G" data-kind="graph|then|else|lambda">
//!       <title/> <rect class="cluster-box"/> <text class="cluster-label"/>
//!       <g class="cluster-body"> ...the same three parts, nested... </g>
//!     </g>
//!     <g class="edge" data-from="ID" data-to="ID"> <path/> <text class="edge-label"/>? </g>
//!     <g class="node KIND" data-node="ID" data-kind="KIND"> <title/> <rect/> <text/> </g>
//! ```
//!
//! A cluster end of an edge is written `cluster:NAME`. Coordinates are absolute.

use std::fmt::Write;

use crate::layout::{display_label, Layout, Rect, CLUSTER_HEADER, NODE_H};
use crate::model::{EdgeStyle, End, GraphModel, NodeKind};

const STYLE: &str = "
.mirdsl-graph { font-family: ui-monospace, Menlo, Consolas, 'DejaVu Sans Mono', monospace; font-size: 12px; }
.background { fill: #ffffff; }
.node rect { stroke-width: 1.2; }
.node text { fill: #1b1f24; dominant-baseline: central; }
.node.param rect { fill: #e3f4e1; stroke: #3f8f3a; }
.node.cnode rect { fill: #e4edfb; stroke: #3b6fc4; }
.node.const rect { fill: #f3f3f3; stroke: #8a8a8a; stroke-dasharray: 3 2; }
.node.graph-ref rect { fill: #f1e6fa; stroke: #8448b8; }
.node.output rect { fill: #3a3f47; stroke: #22262b; }
.node.output text { fill: #ffffff; font-weight: bold; }
.edge path { fill: none; stroke: #5d6670; stroke-width: 1.2; }
.edge.ref path { stroke: #8448b8; stroke-dasharray: 5 3; }
.edge-label { fill: #7a4b00; font-size: 10px; }
.cluster-box { fill: #fbfaf4; stroke: #b9ad7c; stroke-width: 1.2; }
.cluster[data-kind=then] > .cluster-box { fill: #f3faf1; stroke: #6fa866; }
.cluster[data-kind=else] > .cluster-box { fill: #fbf3f3; stroke: #c07a7a; }
.cluster[data-kind=lambda] > .cluster-box { fill: #f5f3fb; stroke: #9488c4; }
.cluster-label { fill: #5b5230; font-weight: bold; dominant-baseline: central; cursor: pointer; }
.cluster.collapsed > .cluster-body { display: none; }
";

fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c if (c as u32) < 0x20 && c != '\t' && c != '\n' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

fn n(x: f64) -> String {
    let r = (x * 10.0).round() / 10.0;
    if r == r.trunc() {
        format!("{}", r as i64)
    } else {
        format!("{r:.1}")
    }
}

fn end_id(model: &GraphModel, e: End) -> String {
    match e {
        End::Node(i) => model.nodes[i].id.clone(),
        End::Cluster(c) => format!("cluster:{}", model.clusters[c].id),
    }
}

/// A smooth path through the points: cubic segments with vertical tangents.
fn path_d(pts: &[(f64, f64)]) -> String {
    let mut d = String::new();
    let Some(&(x0, y0)) = pts.first() else {
        return d;
    };
    let _ = write!(d, "M{},{}", n(x0), n(y0));
    for w in pts.windows(2) {
        let ((ax, ay), (bx, by)) = (w[0], w[1]);
        if (ax - bx).abs() < 0.05 {
            let _ = write!(d, " L{},{}", n(bx), n(by));
        } else {
            let dy = (by - ay) / 2.0;
            let _ = write!(
                d,
                " C{},{} {},{} {},{}",
                n(ax),
                n(ay + dy),
                n(bx),
                n(by - dy),
                n(bx),
                n(by)
            );
        }
    }
    d
}

/// Renders the model with a layout from [`crate::layout::layout`].
pub fn render(model: &GraphModel, lay: &Layout) -> String {
    let mut s = String::new();
    let (w, h) = (lay.width.ceil(), lay.height.ceil());
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" class="mirdsl-graph" data-graph="{}" width="{}" height="{}" viewBox="0 0 {} {}">"#,
        esc(&model.name),
        n(w),
        n(h),
        n(w),
        n(h)
    );
    let _ = writeln!(s, "<title>graph {}</title>", esc(&model.name));
    let _ = writeln!(s, "<style><![CDATA[{STYLE}]]></style>");
    s.push_str(concat!(
        "<defs>",
        r##"<marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,1 L9,5 L0,9 z" fill="#5d6670"/></marker>"##,
        r##"<marker id="arrow-ref" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,1 L9,5 L0,9 z" fill="#8448b8"/></marker>"##,
        "</defs>\n"
    ));
    let _ = writeln!(
        s,
        r#"<rect class="background" x="0" y="0" width="{}" height="{}"/>"#,
        n(w),
        n(h)
    );
    s.push_str("<g class=\"graph\">\n");
    block(&mut s, model, lay, None, 1);
    s.push_str("</g>\n</svg>\n");
    s
}

fn indent(s: &mut String, depth: usize) {
    for _ in 0..depth {
        s.push_str("  ");
    }
}

fn block(s: &mut String, model: &GraphModel, lay: &Layout, c: Option<usize>, depth: usize) {
    for (k, cl) in model.clusters.iter().enumerate() {
        if cl.parent != c {
            continue;
        }
        let r: Rect = lay.clusters[k];
        indent(s, depth);
        let _ = writeln!(
            s,
            r#"<g class="cluster" data-graph="{}" data-kind="{}">"#,
            esc(&cl.id),
            cl.kind.as_str()
        );
        indent(s, depth + 1);
        let _ = writeln!(
            s,
            r#"<title>{} {}</title><rect class="cluster-box" x="{}" y="{}" width="{}" height="{}" rx="6" data-height="{}"/>"#,
            cl.kind.as_str(),
            esc(&cl.label),
            n(r.x),
            n(r.y),
            n(r.w),
            n(r.h),
            n(r.h)
        );
        indent(s, depth + 1);
        let _ = writeln!(
            s,
            r#"<text class="cluster-label" x="{}" y="{}">{}</text>"#,
            n(r.x + 10.0),
            n(r.y + CLUSTER_HEADER / 2.0 + 3.0),
            esc(&display_label(&cl.label))
        );
        indent(s, depth + 1);
        s.push_str("<g class=\"cluster-body\">\n");
        block(s, model, lay, Some(k), depth + 2);
        indent(s, depth + 1);
        s.push_str("</g>\n");
        indent(s, depth);
        s.push_str("</g>\n");
    }
    for (e, edge) in model.edges.iter().enumerate() {
        if lay.edge_owner[e] != c {
            continue;
        }
        let (class, marker) = match edge.style {
            EdgeStyle::Data => ("edge", "arrow"),
            EdgeStyle::Ref => ("edge ref", "arrow-ref"),
        };
        indent(s, depth);
        let _ = write!(
            s,
            r#"<g class="{class}" data-from="{}" data-to="{}"><path d="{}" marker-end="url(#{marker})"/>"#,
            esc(&end_id(model, edge.from)),
            esc(&end_id(model, edge.to)),
            path_d(&lay.edges[e])
        );
        match (&edge.label, lay.labels[e]) {
            (Some(label), Some((x, y))) => {
                let _ = write!(
                    s,
                    r#"<text class="edge-label" x="{}" y="{}">{}</text>"#,
                    n(x),
                    n(y),
                    esc(label)
                );
            }
            // Labelled once on a sibling edge: keep the type as a tooltip.
            (Some(label), None) => {
                let _ = write!(s, "<title>{}</title>", esc(label));
            }
            _ => {}
        }
        s.push_str("</g>\n");
    }
    for (i, node) in model.nodes.iter().enumerate() {
        if node.cluster != c {
            continue;
        }
        let r = lay.nodes[i];
        let kind = node.kind.as_str();
        let rx = match node.kind {
            NodeKind::Param => NODE_H / 2.0,
            NodeKind::Const => 2.0,
            _ => 5.0,
        };
        let title = if node.title.is_empty() {
            &node.label
        } else {
            &node.title
        };
        indent(s, depth);
        let _ = writeln!(
            s,
            r#"<g class="node {kind}" data-node="{}" data-kind="{kind}"><title>{}</title><rect x="{}" y="{}" width="{}" height="{}" rx="{}"/><text x="{}" y="{}" text-anchor="middle">{}</text></g>"#,
            esc(&node.id),
            esc(title),
            n(r.x),
            n(r.y),
            n(r.w),
            n(r.h),
            n(rx),
            n(r.cx()),
            n(r.y + r.h / 2.0),
            esc(&display_label(&node.label))
        );
    }
}
