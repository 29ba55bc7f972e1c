//! The graph of a MindSpore compile dump's subgraph, grouped by scope: a tiny
//! network's executed graph (testdata/irdumps/tiny, MindSpore 2.10).

use graphview::{from_dump, render_svg, ClusterKind, NodeKind};

fn dump() -> (String, irdump::Dump) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/irdumps/tiny/dump/24_execute_0130.ir");
    let text = std::fs::read_to_string(path).unwrap();
    let d = irdump::parse(&text);
    (text, d)
}

#[test]
fn a_dump_graph_is_grouped_by_scope() {
    let (text, d) = dump();
    let m = from_dump(&d, 0).unwrap();
    assert_eq!(m.name, "@18_1___main___Net_construct_93");
    // Every scope level that groups some nodes of the level above it:
    // `Default` holds all 12 and `act-ReLU` one, so neither is a cluster.
    let clusters: Vec<(&str, &str, Option<usize>)> = m
        .clusters
        .iter()
        .map(|c| (c.id.as_str(), c.label.as_str(), c.parent))
        .collect();
    assert_eq!(
        clusters,
        [
            ("scope:Default/block-Block", "block-Block", None),
            ("scope:Default/block-Block/fc-Dense", "fc-Dense", Some(0)),
        ]
    );
    assert!(m.clusters.iter().all(|c| c.kind == ClusterKind::Scope));
    // The 12 nodes, then the parameters they use (the input, two weights).
    let cnodes = m.nodes.iter().filter(|n| n.kind != NodeKind::Param).count();
    assert_eq!(cnodes, 12);
    let params: Vec<&str> = m
        .nodes
        .iter()
        .filter(|n| n.kind == NodeKind::Param)
        .map(|n| n.label.as_str())
        .collect();
    assert_eq!(
        params,
        ["%para2_block.fc.weight", "%para1_x", "%para3_block.fc.bias"]
    );
    // The weights sit in the scope of their users: fc-Dense's weight and
    // bias are loaded in block-Block (`Default/block-Block/Load-op0`) and
    // fc-Dense (`.../fc-Dense/Load-op0`).
    let cluster_of = |label: &str| {
        let n = m.nodes.iter().find(|n| n.label == label).unwrap();
        n.cluster.map(|c| m.clusters[c].label.as_str())
    };
    assert_eq!(cluster_of("%para2_block.fc.weight"), Some("block-Block"));
    assert_eq!(cluster_of("%para3_block.fc.bias"), Some("fc-Dense"));
    // An input stays at the top, where it enters the graph.
    assert_eq!(cluster_of("%para1_x"), None);
    // The MatMul: in fc-Dense, its span the statement, its edge typed.
    let mm = m
        .nodes
        .iter()
        .position(|n| n.label.ends_with("= MatMul"))
        .unwrap();
    assert_eq!(m.nodes[mm].cluster, Some(1));
    let span = m.nodes[mm].span.unwrap();
    assert!(text[span.start().into()..].starts_with("%1(x) = PrimFunc_MatMul(%para1_x, %0"));
    assert_eq!(u32::from(span.len()), 2);
    let out = m
        .edges
        .iter()
        .find(|e| e.from == graphview::End::Node(mm))
        .unwrap();
    assert_eq!(out.label.as_deref(), Some("Float32 (2, 3)"));
    // Drawn: the clusters are collapsible groups.
    let svg = render_svg(&m);
    assert!(
        svg.contains(r#"data-graph="scope:Default/block-Block/fc-Dense""#),
        "{svg}"
    );
    assert!(from_dump(&d, 1).is_none());
}
