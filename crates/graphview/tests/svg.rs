//! The SVG's structure, well-formedness, and the layout's geometry on the examples.

use expect_test::expect;
use graphview::{from_body, layout, render_svg, ClusterKind, GraphModel, NodeKind, Rect};

const SPEC: &str = include_str!("../../../testdata/spec_examples.mir");

fn testdata() -> Vec<(String, String)> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata");
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "mir"))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read_to_string(&p).unwrap())
        })
        .collect()
}

/// Every top-level graph of a file as a model, edges labelled with inferred types.
fn models(text: &str) -> Vec<GraphModel> {
    let fa = analysis::analyze(text);
    fa.source
        .order
        .iter()
        .map(|name| {
            let type_of = |n: ir::NodeId| {
                let mut v: Vec<String> = fa
                    .values_of(name, n)
                    .iter()
                    .map(|v| v.to_string())
                    .collect();
                v.dedup();
                (!v.is_empty()).then(|| v.join(" | "))
            };
            from_body(&fa.source.graphs[name].body, &type_of)
        })
        .collect()
}

fn model_named(text: &str, name: &str) -> GraphModel {
    models(text).into_iter().find(|m| m.name == name).unwrap()
}

// ---------------------------------------------------------------------------
// A tiny XML well-formedness checker: tags nest, attributes are quoted and
// unique, entities are known, one root element.

fn check_xml(s: &str) -> Result<(), String> {
    fn entity(s: &str, i: usize) -> Result<usize, String> {
        let end = s[i..]
            .find(';')
            .ok_or(format!("unterminated entity at {i}"))?
            + i;
        let name = &s[i + 1..end];
        let ok = matches!(name, "amp" | "lt" | "gt" | "quot" | "apos")
            || (name.starts_with("#x") && u32::from_str_radix(&name[2..], 16).is_ok())
            || (name.starts_with('#') && name[1..].parse::<u32>().is_ok());
        if ok {
            Ok(end + 1)
        } else {
            Err(format!("bad entity &{name}; at {i}"))
        }
    }
    fn is_name(c: char) -> bool {
        c.is_alphanumeric() || matches!(c, '-' | '_' | ':' | '.')
    }
    let b = s.as_bytes();
    let mut stack: Vec<&str> = Vec::new();
    let mut roots = 0;
    let mut i = 0;
    while i < s.len() {
        match b[i] {
            b'<' if b[i..].starts_with(b"<![CDATA[") => {
                i = s[i..].find("]]>").ok_or("unterminated CDATA")? + i + 3;
            }
            b'<' if b[i..].starts_with(b"<!--") => {
                i = s[i..].find("-->").ok_or("unterminated comment")? + i + 3;
            }
            b'<' if b[i..].starts_with(b"</") => {
                let end = s[i..].find('>').ok_or("unterminated end tag")? + i;
                let name = s[i + 2..end].trim();
                match stack.pop() {
                    Some(open) if open == name => {}
                    other => return Err(format!("</{name}> closes {other:?} at {i}")),
                }
                i = end + 1;
            }
            b'<' => {
                let start = i + 1;
                let mut j = start;
                while j < s.len() && is_name(s[j..].chars().next().unwrap()) {
                    j += s[j..].chars().next().unwrap().len_utf8();
                }
                let name = &s[start..j];
                if name.is_empty() {
                    return Err(format!("bad tag at {i}"));
                }
                if stack.is_empty() {
                    roots += 1;
                }
                let mut attrs: Vec<&str> = Vec::new();
                loop {
                    while b[j].is_ascii_whitespace() {
                        j += 1;
                    }
                    if b[j..].starts_with(b"/>") {
                        j += 2;
                        break;
                    }
                    if b[j] == b'>' {
                        stack.push(name);
                        j += 1;
                        break;
                    }
                    let a0 = j;
                    while is_name(b[j] as char) {
                        j += 1;
                    }
                    let attr = &s[a0..j];
                    if attr.is_empty() || b[j] != b'=' || !matches!(b[j + 1], b'"' | b'\'') {
                        return Err(format!("bad attribute in <{name}> at {j}"));
                    }
                    if attrs.contains(&attr) {
                        return Err(format!("duplicate attribute {attr} in <{name}>"));
                    }
                    attrs.push(attr);
                    let q = b[j + 1];
                    j += 2;
                    while b[j] != q {
                        match b[j] {
                            b'<' => return Err(format!("'<' in attribute {attr}")),
                            b'&' => j = entity(s, j)?,
                            _ => j += 1,
                        }
                    }
                    j += 1;
                }
                i = j;
            }
            b'&' => i = entity(s, i)?,
            _ if b[i..].starts_with(b"]]>") => return Err(format!("']]>' in text at {i}")),
            _ => {
                if stack.is_empty() && !b[i].is_ascii_whitespace() {
                    return Err(format!("text outside the root at {i}"));
                }
                i += 1;
            }
        }
    }
    match (stack.is_empty(), roots) {
        (true, 1) => Ok(()),
        (false, _) => Err(format!("unclosed {stack:?}")),
        (_, n) => Err(format!("{n} root elements")),
    }
}

#[test]
fn xml_checker_catches_mistakes() {
    assert!(check_xml(r#"<a x="1"><b/>t &amp; u</a>"#).is_ok());
    assert!(check_xml(r#"<a><b></a></b>"#).is_err());
    assert!(check_xml(r#"<a x="1" x="2"/>"#).is_err());
    assert!(check_xml(r#"<a>&nbsp;</a>"#).is_err());
    assert!(check_xml(r#"<a>x < y</a>"#).is_err());
    assert!(check_xml(r#"<a/><b/>"#).is_err());
}

#[test]
fn svg_of_every_testdata_graph_is_well_formed_xml() {
    let mut count = 0;
    for (file, text) in testdata() {
        for m in models(&text) {
            let svg = render_svg(&m);
            check_xml(&svg).unwrap_or_else(|e| panic!("{file} {}: {e}\n{svg}", m.name));
            count += 1;
        }
    }
    assert!(count >= 10, "only {count} graphs");
}

#[test]
fn nasty_names_are_escaped() {
    let mut m = GraphModel::new("a<b>&\"c'");
    let c = m.add_cluster("✓<f>", "then ✓<f>", ClusterKind::Then, None);
    let a = m.add_node("n&1", "x = \"<&>\"", NodeKind::Const, None);
    let b = m.add_node("n\"2", "y\u{1}", NodeKind::CNode, Some(c));
    m.add_edge(a, b, Some("f32[<?>]".into()));
    check_xml(&render_svg(&m)).unwrap();
}

// ---------------------------------------------------------------------------
// Structure.

/// The SVG's elements with their classes and data attributes, without coordinates.
fn skeleton(svg: &str) -> String {
    let mut out = String::new();
    let mut depth = 0usize;
    for tag in svg.split('<').skip(1) {
        let tag = tag.split('>').next().unwrap();
        if tag == "/g" || tag == "/svg" {
            depth -= 1;
            continue;
        }
        let name = tag.split_whitespace().next().unwrap_or("");
        if !matches!(name, "svg" | "g") {
            continue;
        }
        let keep: Vec<&str> = tag
            .split('"')
            .collect::<Vec<_>>()
            .chunks(2)
            .filter(|kv| kv.len() == 2)
            .map(|kv| {
                (
                    kv[0]
                        .trim()
                        .trim_end_matches('=')
                        .rsplit(' ')
                        .next()
                        .unwrap(),
                    kv[1],
                )
            })
            .filter(|(k, _)| *k == "class" || k.starts_with("data-"))
            .map(|(k, v)| {
                let start = tag.find(&format!("{k}=\"{v}\"")).unwrap();
                &tag[start..start + k.len() + v.len() + 3]
            })
            .collect();
        out.push_str(&"  ".repeat(depth));
        out.push_str(&format!("{name} {}\n", keep.join(" ")));
        if !tag.ends_with('/') {
            depth += 1;
        }
    }
    out
}

#[test]
fn snapshot_test_f_structure() {
    let svg = render_svg(&model_named(SPEC, "test_f"));
    expect![[r#"
        svg class="mirdsl-graph" data-graph="test_f"
          g class="graph"
            g class="edge" data-from="n0" data-to="n4"
            g class="edge" data-from="n2" data-to="n4"
            g class="edge" data-from="n4" data-to="n6"
            g class="edge" data-from="n1" data-to="n6"
            g class="edge" data-from="n4" data-to="n8"
            g class="edge" data-from="n6" data-to="n8"
            g class="edge" data-from="n6" data-to="n10"
            g class="edge" data-from="n8" data-to="n10"
            g class="edge" data-from="n10" data-to="g0.return"
            g class="node param" data-node="n0" data-kind="param"
            g class="node param" data-node="n1" data-kind="param"
            g class="node const" data-node="n2" data-kind="const"
            g class="node cnode" data-node="n4" data-kind="cnode"
            g class="node cnode" data-node="n6" data-kind="cnode"
            g class="node cnode" data-node="n8" data-kind="cnode"
            g class="node cnode" data-node="n10" data-kind="cnode"
            g class="node output" data-node="g0.return" data-kind="output"
    "#]]
    .assert_eq(&skeleton(&svg));
    // Titles and shape labels.
    assert!(svg.contains("<title>a = Sub : f32[3]</title>"), "{svg}");
    assert!(svg.contains(r#"class="edge-label""#));
    assert!(svg.contains(">f32[3]</text>"));
}

#[test]
fn snapshot_nested_graphs_are_clusters() {
    let svg = render_svg(&model_named(SPEC, "fibonacci"));
    let clusters: Vec<&str> = svg
        .lines()
        .filter(|l| l.contains(r#"class="cluster""#))
        .map(|l| l.trim())
        .collect();
    expect![[r#"
        [
            "<g class=\"cluster\" data-graph=\"fibonacci_then\" data-kind=\"then\">",
            "<g class=\"cluster\" data-graph=\"fibonacci_else\" data-kind=\"else\">",
            "<g class=\"cluster\" data-graph=\"fibonacci_else_then\" data-kind=\"then\">",
            "<g class=\"cluster\" data-graph=\"fibonacci_else_else\" data-kind=\"else\">",
        ]
    "#]]
    .assert_debug_eq(&clusters);
    // Captured variables enter the closures as nodes at their top.
    let hof = render_svg(&model_named(SPEC, "func_outer"));
    assert!(hof.contains("a ↑"), "{hof}");
}

#[test]
fn every_node_has_a_unique_id_and_a_title() {
    for (file, text) in testdata() {
        for m in models(&text) {
            let svg = render_svg(&m);
            let mut ids: Vec<&str> = svg
                .split("data-node=\"")
                .skip(1)
                .map(|s| s.split('"').next().unwrap())
                .collect();
            let n = ids.len();
            assert_eq!(n, m.nodes.len(), "{file} {}", m.name);
            ids.sort();
            ids.dedup();
            assert_eq!(ids.len(), n, "{file} {}: duplicate data-node", m.name);
            for part in svg.split("data-node=\"").skip(1) {
                let elem = part.split("</g>").next().unwrap();
                assert!(
                    elem.contains("<title>"),
                    "{file}: node without title: {elem}"
                );
            }
            // Every node with a source range is reachable from the editor.
            assert!(
                m.node_spans().len()
                    >= m.nodes.len() - m.nodes.iter().filter(|n| n.span.is_none()).count()
            );
        }
    }
}

#[test]
fn output_is_deterministic() {
    for m in models(SPEC) {
        assert_eq!(render_svg(&m), render_svg(&m.clone()));
    }
    let a: Vec<String> = models(SPEC).iter().map(render_svg).collect();
    let b: Vec<String> = models(SPEC).iter().map(render_svg).collect();
    assert_eq!(a, b);
}

// ---------------------------------------------------------------------------
// Geometry.

fn assert_no_overlaps(m: &GraphModel) {
    let lay = layout(m);
    let name = &m.name;
    for (i, a) in lay.nodes.iter().enumerate() {
        assert!(a.w > 0.0 && a.h > 0.0);
        assert!(a.x >= 0.0 && a.y >= 0.0 && a.right() <= lay.width && a.bottom() <= lay.height);
        for (j, b) in lay.nodes.iter().enumerate().skip(i + 1) {
            assert!(
                !a.overlaps(b),
                "{name}: nodes {} {a:?} and {} {b:?} overlap",
                m.nodes[i].id,
                m.nodes[j].id
            );
        }
        // Inside every cluster that holds it, and outside every other one.
        let holders = m.cluster_chain(m.nodes[i].cluster);
        for (c, r) in lay.clusters.iter().enumerate() {
            if holders.contains(&c) {
                assert!(
                    r.contains(a),
                    "{name}: node {} outside its cluster",
                    m.nodes[i].id
                );
            } else {
                assert!(
                    !r.overlaps(a),
                    "{name}: node {} inside cluster {}",
                    m.nodes[i].id,
                    m.clusters[c].id
                );
            }
        }
    }
    for (c, r) in lay.clusters.iter().enumerate() {
        let chain = m.cluster_chain(Some(c));
        for (d, s) in lay.clusters.iter().enumerate().skip(c + 1) {
            let dchain = m.cluster_chain(Some(d));
            if dchain.contains(&c) {
                assert!(r.contains(s), "{name}: cluster nesting");
            } else if chain.contains(&d) {
                assert!(s.contains(r), "{name}: cluster nesting");
            } else {
                assert!(!r.overlaps(s), "{name}: clusters {c} and {d} overlap");
            }
        }
    }
    // Edges start and end at their nodes.
    for (e, pts) in lay.edges.iter().enumerate() {
        assert!(pts.len() >= 2, "{name}: edge {e} has no route");
    }
}

#[test]
fn no_overlapping_boxes_in_the_spec_examples() {
    let ms = models(SPEC);
    assert_eq!(ms.len(), 9);
    for m in &ms {
        assert_no_overlaps(m);
    }
}

#[test]
fn no_overlapping_boxes_in_any_testdata_file() {
    for (_, text) in testdata() {
        for m in models(&text) {
            assert_no_overlaps(&m);
        }
    }
}

#[test]
fn a_large_generated_graph_lays_out_cleanly() {
    // Timing is measured by `cargo run --release -p graphview --example render --
    // --synthetic=500 DIR`, not here.
    let m = graphview::svg_bench_model(500);
    assert_eq!(m.nodes.len(), 500);
    assert_no_overlaps(&m);
    check_xml(&render_svg(&m)).unwrap();
}

#[test]
fn cycles_and_empty_models_do_not_break_the_layout() {
    let mut m = GraphModel::new("cyc");
    let a = m.add_node("a", "a", NodeKind::CNode, None);
    let b = m.add_node("b", "b", NodeKind::CNode, None);
    let c = m.add_node("c", "c", NodeKind::CNode, None);
    m.add_edge(a, b, None);
    m.add_edge(b, c, None);
    m.add_edge(c, a, None);
    m.add_edge(a, a, None);
    assert_no_overlaps(&m);
    check_xml(&render_svg(&m)).unwrap();
    let empty = GraphModel::new("empty");
    check_xml(&render_svg(&empty)).unwrap();
    let r: Rect = layout(&empty).nodes.first().copied().unwrap_or_default();
    assert_eq!(r, Rect::default());
}

// ---------------------------------------------------------------------------
// DOT input: what `mirdsl dot --svg` and the language server draw.

#[test]
fn mirdsl_dot_of_every_testdata_file_reads_and_lays_out_cleanly() {
    for (file, text) in testdata() {
        let fa = analysis::analyze(&text);
        if !fa.parse.errors().is_empty() {
            continue;
        }
        let program = fa.source.program();
        let types = |item: &str, node: ir::NodeId| fa.values_of(item, node).into_iter().next();
        let dot = ir::print_dot::print_program(&program, &types);
        let m = graphview::from_dot(&dot).unwrap_or_else(|e| panic!("{file}: {e}\n{dot}"));
        assert_eq!(
            m.clusters.iter().filter(|c| c.parent.is_none()).count(),
            program.graphs.len(),
            "{file}: one top-level cluster per graph"
        );
        assert!(m.nodes.iter().any(|n| n.kind == NodeKind::CNode), "{file}");
        assert_no_overlaps(&m);
        let svg = render_svg(&m);
        check_xml(&svg).unwrap_or_else(|e| panic!("{file}: {e}"));
        // Node ids are the DOT ids, which the editors map back to source ranges.
        assert!(
            svg.contains(r#"data-node=""#) && svg.contains(":n"),
            "{file}"
        );
    }
}
