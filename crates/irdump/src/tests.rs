use super::*;

const DUMP: &str = "# IR entry: @main_1
# Total subgraphs: 2

# Params:
%para1_x: <Tensor[Float32], (2, 3)> : [2, 3]
%para2_fc.weight: <Ref[Tensor[Float32]], (3, 3), ref_key=fc.weight, is_parameter>  :  has_default

subgraph attr:
training: 1
subgraph instance: main_1 : 0x1
subgraph @main_1() {
  %0(CNode_3) = MatMul(%para1_x, %para2_fc.weight) primitive_attrs: {transpose_a: Bool(0)}
      : (<Tensor[Float32], (2, 3)>, <Ref[Tensor[Float32]], (3, 3)>) -> (<Tensor[Float32], (2, 3)>)
      # Fullname with scope: (Default/network-Net/MatMul-op0)
      # In file /usr/lib/python3/site-packages/mindspore/nn/layer/basic.py:620, 8~30/        x = self.matmul(x, self.weight)/
      # In file model.py:38, 15~27/        return self.fc(x)/
  %1(CNode_4) = call @helper_2(%0)
      : (<Tensor[Float32], (2, 3)>) -> (<Tensor[Float32], (2, 3)>)
  Return(%1)
      : (<Tensor[Float32], (2, 3)>)
}

subgraph @helper_2(%para3_y) {
  %0(CNode_5) = PrimFunc_ReLU(%para3_y)
      : (<Tensor[Float32], (2, 3)>) -> (<Tensor[Float32], (2, 3)>)
  Return(%0)
}
";

fn at(text: &str, needle: &str, nth: usize) -> usize {
    text.match_indices(needle).nth(nth).unwrap().0
}

#[test]
fn structure() {
    let d = parse(DUMP);
    assert_eq!(d.entry.as_deref(), Some("main_1"));
    assert_eq!(d.params.len(), 2);
    assert_eq!(d.params[1].name, "%para2_fc.weight");
    assert!(d.params[1]
        .ty
        .as_deref()
        .unwrap()
        .starts_with("<Ref[Tensor[Float32]], (3, 3)"));
    assert_eq!(d.graphs.len(), 2);
    let g = &d.graphs[0];
    assert_eq!(g.name, "@main_1");
    assert_eq!(&DUMP[g.name_range.clone()], "@main_1");
    assert!(DUMP[g.range.clone()].ends_with("}"));
    assert_eq!(g.nodes.len(), 3);
    let n = &g.nodes[0];
    assert_eq!(n.id, "%0");
    assert_eq!(n.label, "CNode_3");
    assert_eq!(n.prim_name(), Some("MatMul"));
    assert_eq!(n.ty.as_deref(), Some("(<Tensor[Float32], (2, 3)>)"));
    assert_eq!(n.scope.as_deref(), Some("Default/network-Net/MatMul-op0"));
    assert_eq!(n.frames.len(), 2);
    let f = n.user_frame().unwrap();
    assert_eq!((f.file.as_str(), f.line), ("model.py", 38));
    assert_eq!(f.code, "return self.fc(x)");
    assert_eq!(g.nodes[1].prim, None);
    assert_eq!(d.graphs[1].params[0].0, "%para3_y");
    assert_eq!(d.graphs[1].nodes[0].prim_name(), Some("ReLU"));
}

#[test]
fn frames() {
    // As MindSpore prints them: with columns, without, spanning lines.
    let f = frame("In file examples/t4.py:6~12/@jit/").unwrap();
    assert_eq!(
        (f.file.as_str(), f.line, f.code.as_str()),
        ("examples/t4.py", 6, "@jit")
    );
    let f = frame("In file /w/model.py:10~11, 4~40/    def g(function, x):/").unwrap();
    assert_eq!(
        (f.file.as_str(), f.line, f.code.as_str()),
        ("/w/model.py", 10, "def g(function, x):")
    );
    let f = frame("In file C:/w/m.py:3, 1~2/x/").unwrap();
    assert_eq!((f.file.as_str(), f.line), ("C:/w/m.py", 3));
    assert!(!frame("In file site-packages/mindspore/ops/x.py:66~74/y/")
        .unwrap()
        .is_user());
    assert_eq!(frame("In file nothing"), None);
}

#[test]
fn navigation() {
    let d = parse(DUMP);
    // `%0` used by `%1` in @main_1: its definition is @main_1's %0, not @helper_2's.
    let use0 = at(DUMP, "(%0)", 0) + 1;
    let (name, _, t) = d.name_at(use0).unwrap();
    assert_eq!(name, "%0");
    assert_eq!(t, Some(Target::Node(0, 0)));
    assert_eq!(d.definition(t.unwrap()).start, at(DUMP, "%0(CNode_3)", 0));
    assert_eq!(d.references(Target::Node(0, 0)).len(), 1);
    // A graph, from its call.
    let call = at(DUMP, "@helper_2(%0)", 0) + 2;
    let (_, _, t) = d.name_at(call).unwrap();
    assert_eq!(t, Some(Target::Graph(1)));
    assert_eq!(d.references(Target::Graph(1)).len(), 1);
    // A weight, from its use; its references from its declaration.
    let w = at(DUMP, "%para2_fc.weight)", 0) + 3;
    let (_, _, t) = d.name_at(w).unwrap();
    assert_eq!(t, Some(Target::Param(1)));
    let (_, _, t) = d.name_at(at(DUMP, "%para2_fc.weight:", 0)).unwrap();
    assert_eq!(d.references(t.unwrap()).len(), 1);
    // A graph's own parameter.
    let y = at(DUMP, "%para3_y)", 1) + 1;
    assert_eq!(d.name_at(y).unwrap().2, Some(Target::GraphParam(1, 0)));
}

#[test]
fn anything_opens() {
    // Truncated, garbage or empty: no panic, what can be read is read.
    for cut in (0..DUMP.len()).step_by(7) {
        if DUMP.is_char_boundary(cut) {
            let d = parse(&DUMP[..cut]);
            for g in &d.graphs {
                assert!(g.range.end <= cut);
            }
        }
    }
    assert_eq!(parse("").graphs.len(), 0);
    parse("subgraph @\n%\n%%%% @ @@ (\n}\n");
}

#[test]
fn structural_diff() {
    use crate::diff::{diff, graph_key, Change};
    assert_eq!(
        graph_key("@518_232_1_mindspore_nn_TrainOneStepCell_construct_1358"),
        "mindspore_nn_TrainOneStepCell_construct"
    );
    let a = parse(DUMP);
    assert_eq!(diff(&a, &a), vec![]);
    // Renumbered nodes and graphs, the same structure: equal.
    let renumbered = DUMP
        .replace("%0(CNode_3)", "%7(CNode_3)")
        .replace("call @helper_2(%0)", "call @helper_9(%7)")
        .replace("@helper_2(%para3_y)", "@helper_9(%para3_y)");
    assert_eq!(diff(&a, &parse(&renumbered)), vec![]);
    // A primitive replaced, and a node added.
    let changed = DUMP.replace("PrimFunc_ReLU(%para3_y)", "PrimFunc_GeLU(%para3_y)").replace(
        "  Return(%0)\n}\n",
        "  %1(CNode_9) = PrimFunc_Neg(%0)\n      : (<Tensor[Float32], (2, 3)>) -> (<Tensor[Float32], (2, 3)>)\n  Return(%0)\n}\n",
    );
    let d = diff(&a, &parse(&changed));
    assert!(
        matches!(&d[0], Change::NodeChanged { what, .. } if what == &vec!["callee ReLU → GeLU".to_string()]),
        "{d:?}"
    );
    assert!(
        matches!(&d[1], Change::NodeAdded { node, .. } if node.starts_with("%1 = PrimFunc_Neg(%0)")),
        "{d:?}"
    );
    assert_eq!(d.len(), 2, "{d:?}");
}

/// The checked-in folder of a tiny network's stages (testdata/irdumps/tiny).
fn tiny() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/irdumps/tiny/dump")
}

#[test]
fn stages_in_pipeline_order() {
    let files = stages::stages(&tiny()).unwrap();
    let names: Vec<String> = files
        .iter()
        .map(|f| f.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        names,
        [
            "22_backend_pass_0077.ir",
            "hwopt_cpu_custom_optimization_after_graph_0_0106.ir",
            "hwopt_comm_after_kernel_select_kernel_graph0_0112.ir",
            "24_execute_0130.ir"
        ]
    );
    let before = stages::neighbour(&files[2], -1).unwrap();
    assert_eq!(before, files[1]);
    assert_eq!(stages::neighbour(&files[0], -1), None);
    assert_eq!(stages::neighbour(&files[3], 1), None);
    assert_eq!(stages::neighbour(&files[3], -3).as_ref(), Some(&files[0]));
    // The runtime's actor sets are no stage of the graph's.
    assert!(stages::is_actor_set(std::path::Path::new(
        "dump/final_actor_set_kernel_graph_0.ir"
    )));
    assert!(!stages::is_actor_set(&files[3]));
}

/// A node followed from stage to stage: kernel selection turned `Muls` into
/// `Mul` (a new node, scope `Expand/_Muls/Mul-op0`), the `Add` after it stays.
#[test]
fn follow_a_node_across_stages() {
    let files = stages::stages(&tiny()).unwrap();
    let read = |i: usize| parse(&std::fs::read_to_string(&files[i]).unwrap());
    let (a, b) = (read(1), read(2));
    let node = |d: &Dump, prim: &str| {
        let k = d.graphs[0]
            .nodes
            .iter()
            .position(|n| n.prim_name() == Some(prim))
            .unwrap_or_else(|| panic!("no {prim}"));
        (0, k)
    };
    let (g, k) = node(&a, "Add");
    let f = diff::follow(&a, &b, g, k).unwrap();
    let l = f.node.unwrap();
    assert_eq!(b.graphs[f.graph].nodes[l].prim_name(), Some("Add"));
    // Its input is the new Mul: a different node.
    assert_eq!(f.changes, ["inputs (%5) → (%5)"]);
    let back = diff::follow_back(&a, &b, f.graph, l).unwrap();
    assert_eq!((back.graph, back.node), (g, Some(k)));
    assert_eq!(back.changes, f.changes);
    // The ReLU before it is the same.
    let (g, k) = node(&a, "ReLU");
    assert_eq!(
        diff::follow(&a, &b, g, k).unwrap().changes,
        Vec::<String>::new()
    );
    // Muls is gone in the next stage: its graph is found, not the node.
    let (g, k) = node(&a, "Muls");
    let f = diff::follow(&a, &b, g, k).unwrap();
    assert_eq!((f.graph, f.node), (0, None));
    // Mul is new: nothing before it.
    let (h, l) = node(&b, "Mul");
    let f = diff::follow_back(&a, &b, h, l).unwrap();
    assert_eq!((f.graph, f.node), (0, None));
    // The report names both stages and the change.
    let r = diff::report("A", "B", &diff::diff(&a, &b));
    assert!(r.starts_with("--- A\n+++ B\ngraph @kernel_graph0\n"), "{r}");
    assert!(r.contains("  - %5 = PrimFunc_Muls(%4, F32(2))"), "{r}");
    assert!(r.ends_with("3 differences\n"), "{r}");
}

/// Actor sets cut anywhere (an editor's half-written or truncated file)
/// still parse, in both forms.
#[test]
fn actor_sets_cut_anywhere_parse() {
    let dir =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/irdumps/actors");
    for file in [
        "0_actor_set_pipeline_kernel_graph_0.ir",
        "final_actor_set_kernel_graph_0.ir",
    ] {
        let text = std::fs::read_to_string(dir.join(file)).unwrap();
        let whole = crate::parse(&text);
        let set = whole.actors.as_ref().expect("an actor set");
        assert!(set.actors.len() >= 25, "{file}: {}", set.actors.len());
        let mut cut = 0;
        while cut < text.len() {
            if text.is_char_boundary(cut) {
                let _ = crate::parse(&text[..cut]);
                let _ = crate::actors::parse(&text[cut..]);
            }
            cut += 37;
        }
    }
}
