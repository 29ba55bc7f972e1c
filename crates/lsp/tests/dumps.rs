//! MindSpore compile dumps (`*.ir`) opened in the server: outline, folding,
//! definition, references and hover from the dump itself, and no diagnostics
//! (a dump is MindSpore's truth; its primitives need not be mirdsl's).

mod harness;

use harness::Client;
use serde_json::{json, Value as Json};

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_stack_size(lsp::STACK_SIZE)
        .enable_all()
        .build()
        .unwrap()
}

/// A dump as MindSpore 2.10 writes it (a training step's shape, cut down):
/// weights, a primitive mirdsl does not know, a call of a nested graph,
/// scopes and Python frames.
const DUMP: &str = "# IR entry: @1_step_2
# Total subgraphs: 2

# Params:
%para1_x: <Tensor[Float32], (2, 3)> : [2, 3]
%para2_fc.weight: <Ref[Tensor[Float32]], (3, 3), ref_key=fc.weight, is_parameter>  :  has_default

subgraph attr:
training: 1
subgraph instance: 1_step_2 : 0x1
subgraph @1_step_2() {
  %0(CNode_3) = MatMul(%para1_x, %para2_fc.weight) primitive_attrs: {transpose_a: Bool(0)}
      : (<Tensor[Float32], (2, 3)>, <Ref[Tensor[Float32]], (3, 3)>) -> (<Tensor[Float32], (2, 3)>)
      # Fullname with scope: (Default/network-Net/fc-Dense/MatMul-op0)
      # In file /usr/lib/python3/site-packages/mindspore/nn/layer/basic.py:620, 8~30/        x = self.matmul(x, self.weight)/
      # In file /work/model.py:38, 15~27/        return self.fc(x)/
  %1(CNode_4) = FancyFusedKernel(%0) primitive_attrs: {alpha: F32(0.5)}
      : (<Tensor[Float32], (2, 3)>) -> (<Tensor[Float32], (2, 3)>)
  %2(CNode_5) = call @2_helper_3(%1, %0)
      : (<Tensor[Float32], (2, 3)>, <Tensor[Float32], (2, 3)>) -> (<Tensor[Float32], (2, 3)>)
  Return(%2)
      : (<Tensor[Float32], (2, 3)>)
}

subgraph @2_helper_3(%para3_y, %para4_z) {
  %0(CNode_6) = PrimFunc_Add(%para3_y, %para4_z)
      : (<Tensor[Float32], (2, 3)>, <Tensor[Float32], (2, 3)>) -> (<Tensor[Float32], (2, 3)>)
  Return(%0)
}
";

const URI: &str = "file:///work/dumps/13_optimize_0068.ir";

/// The position of the `nth` occurrence of `needle` (plus `shift` characters).
fn pos(needle: &str, nth: usize, shift: u32) -> Json {
    let at = DUMP.match_indices(needle).nth(nth).unwrap().0;
    let line = DUMP[..at].matches('\n').count();
    let col = at - DUMP[..at].rfind('\n').map_or(0, |i| i + 1);
    json!({"line": line, "character": col as u32 + shift})
}

fn line_of(needle: &str, nth: usize) -> Json {
    pos(needle, nth, 0)["line"].clone()
}

#[test]
fn a_dump_is_navigable_and_has_no_diagnostics() {
    runtime().block_on(async {
        let mut c = Client::start();
        c.initialize(None).await;
        c.open(URI, DUMP).await;
        let d = c.diagnostics(URI, 1).await;
        assert_eq!(d["diagnostics"], json!([]), "{d}");
        let doc = json!({"uri": URI});

        // Outline: the parameters, then the two subgraphs.
        let s = c
            .request("textDocument/documentSymbol", json!({"textDocument": doc}))
            .await;
        let names: Vec<&str> = s["result"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x["name"].as_str().unwrap())
            .collect();
        assert_eq!(
            names,
            ["%para1_x", "%para2_fc.weight", "@1_step_2", "@2_helper_3"],
            "{s}"
        );
        assert_eq!(s["result"][2]["detail"], "4 nodes, entry");

        // Folding: one region per subgraph.
        let f = c
            .request("textDocument/foldingRange", json!({"textDocument": doc}))
            .await;
        let regions: Vec<(u64, u64)> = f["result"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["kind"] == "region")
            .map(|r| {
                (
                    r["startLine"].as_u64().unwrap(),
                    r["endLine"].as_u64().unwrap(),
                )
            })
            .collect();
        assert_eq!(
            regions,
            [
                (
                    line_of("subgraph @1", 0).as_u64().unwrap(),
                    line_of("}\n\nsubgraph @2", 0).as_u64().unwrap()
                ),
                (
                    line_of("subgraph @2", 0).as_u64().unwrap(),
                    DUMP.lines().count() as u64 - 1
                ),
            ],
            "{f}"
        );

        // Definition of `%0` used in `call @2_helper_3(%1, %0)`: @1_step_2's `%0`,
        // not @2_helper_3's.
        let r = c
            .request(
                "textDocument/definition",
                json!({"textDocument": doc, "position": pos(", %0)", 0, 3)}),
            )
            .await;
        assert_eq!(
            r["result"]["range"]["start"],
            pos("%0(CNode_3)", 0, 0),
            "{r}"
        );
        // Definition of a graph from its call, and of a weight from its use.
        let r = c
            .request(
                "textDocument/definition",
                json!({"textDocument": doc, "position": pos("@2_helper_3(%1", 0, 4)}),
            )
            .await;
        assert_eq!(
            r["result"]["range"]["start"],
            pos("@2_helper_3(%para3", 0, 0),
            "{r}"
        );
        let r = c
            .request(
                "textDocument/definition",
                json!({"textDocument": doc, "position": pos("%para2_fc.weight)", 0, 5)}),
            )
            .await;
        assert_eq!(
            r["result"]["range"]["start"],
            pos("%para2_fc.weight:", 0, 0),
            "{r}"
        );

        // References of @1_step_2's `%0`: its two uses (and its definition when asked).
        let r = c
            .request(
                "textDocument/references",
                json!({"textDocument": doc, "position": pos("%0(CNode_3)", 0, 1),
                       "context": {"includeDeclaration": true}}),
            )
            .await;
        let starts: Vec<Json> = r["result"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| l["range"]["start"].clone())
            .collect();
        assert_eq!(
            starts,
            [
                pos("%0(CNode_3)", 0, 0),
                pos("(%0)", 0, 1),
                pos(", %0)", 0, 2)
            ],
            "{r}"
        );

        // Hover: the dumped type, the scope, the user's own frame as a link,
        // MindSpore's schema of the primitive.
        let h = c
            .request(
                "textDocument/hover",
                json!({"textDocument": doc, "position": pos("(%0)", 0, 2)}),
            )
            .await;
        let md = h["result"]["contents"]["value"]
            .as_str()
            .unwrap_or_default();
        assert!(md.contains("`MatMul`"), "{md}");
        assert!(md.contains("type: `(<Tensor[Float32], (2, 3)>)`"), "{md}");
        assert!(
            md.contains("scope: `Default/network-Net/fc-Dense/MatMul-op0`"),
            "{md}"
        );
        assert!(
            md.contains("[model.py:38](file:///work/model.py#L38)"),
            "{md}"
        );
        assert!(md.contains("MindSpore 2.10: `MatMul("), "{md}");
        // A primitive MindSpore has but mirdsl does not know: still a hover,
        // never a diagnostic.
        let h = c
            .request(
                "textDocument/hover",
                json!({"textDocument": doc, "position": pos("%1(CNode_4)", 0, 1)}),
            )
            .await;
        let md = h["result"]["contents"]["value"]
            .as_str()
            .unwrap_or_default();
        assert!(md.contains("`FancyFusedKernel`"), "{md}");
        // Semantic tokens: a weight's use is a static variable, a primitive a
        // library function, a called subgraph a function.
        let t = c
            .request(
                "textDocument/semanticTokens/full",
                json!({"textDocument": doc}),
            )
            .await;
        let tokens = decode(&t["result"]["data"]);
        let at = |needle: &str, nth: usize| {
            let p = pos(needle, nth, 0);
            let (line, col) = (
                p["line"].as_u64().unwrap(),
                p["character"].as_u64().unwrap(),
            );
            tokens
                .iter()
                .find(|x| x.0 == line && x.1 == col)
                .map(|x| (x.2, ide::TOKEN_KINDS[x.3 as usize], x.4))
        };
        let bit = |m: &str| 1u64 << ide::TOKEN_MODIFIERS.iter().position(|x| *x == m).unwrap();
        assert_eq!(
            at("%para2_fc.weight)", 0),
            Some((16, "variable", bit("static"))),
            "{t}"
        );
        assert_eq!(
            at("MatMul(", 0),
            Some((6, "function", bit("defaultLibrary"))),
            "{t}"
        );
        assert_eq!(at("@2_helper_3(%1", 0), Some((11, "function", 0)), "{t}");
        assert_eq!(
            at("%0(CNode_3)", 0),
            Some((2, "variable", bit("declaration")))
        );
        // Hover on a primitive's name: its node.
        let h = c
            .request(
                "textDocument/hover",
                json!({"textDocument": doc, "position": pos("MatMul(", 0, 2)}),
            )
            .await;
        let md = h["result"]["contents"]["value"]
            .as_str()
            .unwrap_or_default();
        assert!(md.starts_with("**%0** (CNode_3) = `MatMul`"), "{md}");
    });
}

/// Semantic tokens as (line, start, length, type, modifiers).
fn decode(data: &Json) -> Vec<(u64, u64, u64, u64, u64)> {
    let v: Vec<u64> = data
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap())
        .collect();
    let (mut line, mut col) = (0, 0);
    v.chunks(5)
        .map(|c| {
            if c[0] > 0 {
                col = 0;
            }
            line += c[0];
            col += c[1];
            (line, col, c[2], c[3], c[4])
        })
        .collect()
}

/// The checked-in stages of a tiny network (testdata/irdumps/tiny/dump,
/// MindSpore 2.10): kernel selection turned its `Muls` into a `Mul`.
fn tiny(name: &str) -> (String, String) {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/irdumps/tiny/dump")
        .canonicalize()
        .unwrap();
    let path = dir.join(name);
    let text = std::fs::read_to_string(&path).unwrap();
    (format!("file://{}", path.display()), text)
}

fn position_of(text: &str, needle: &str, shift: u32) -> Json {
    let at = text.find(needle).unwrap_or_else(|| panic!("no {needle}"));
    let line = text[..at].matches('\n').count();
    let col = at - text[..at].rfind('\n').map_or(0, |i| i + 1);
    json!({"line": line, "character": col as u32 + shift})
}

#[test]
fn a_dump_among_its_stages() {
    runtime().block_on(async {
        let mut c = Client::start();
        c.initialize(None).await;
        let (uri, text) = tiny("hwopt_comm_after_kernel_select_kernel_graph0_0112.ir");
        c.open(&uri, &text).await;
        let doc = json!({"uri": uri});

        // Code lenses: compare with the stage before, and a graph per subgraph.
        let r = c
            .request("textDocument/codeLens", json!({"textDocument": doc}))
            .await;
        let lenses: Vec<(String, String, Json)> = r["result"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| {
                (
                    l["command"]["title"].as_str().unwrap().to_string(),
                    l["command"]["command"].as_str().unwrap().to_string(),
                    l["command"]["arguments"].clone(),
                )
            })
            .collect();
        assert_eq!(
            lenses,
            [
                (
                    "Compare with previous pass (hwopt_cpu_custom_optimization_after_graph_0_0106.ir)"
                        .to_string(),
                    "mirdsl.comparePreviousPass".to_string(),
                    json!([uri])
                ),
                (
                    "Show graph".to_string(),
                    "mirdsl.showGraph".to_string(),
                    json!([uri, "@kernel_graph0"])
                ),
            ],
            "{r}"
        );

        // Compare with the previous pass: `mirdsl diff`'s report.
        let r = c.request("mirdsl/dump/compare", json!({"uri": uri})).await;
        let report = r["result"]["text"].as_str().unwrap_or_default();
        assert!(
            r["result"]["previous"]
                .as_str()
                .unwrap_or_default()
                .ends_with("/hwopt_cpu_custom_optimization_after_graph_0_0106.ir"),
            "{r}"
        );
        assert!(
            report.starts_with(
                "--- hwopt_cpu_custom_optimization_after_graph_0_0106.ir\n\
                 +++ hwopt_comm_after_kernel_select_kernel_graph0_0112.ir\n"
            ),
            "{report}"
        );
        assert!(report.contains("  - %5 = PrimFunc_Muls(%4, F32(2))"), "{report}");
        assert!(report.contains("  + %5 = PrimFunc_Mul(%4, Tensor("), "{report}");
        assert_eq!(r["result"]["changes"], 3, "{r}");

        // Following the Add to the previous stage: its `%6` there.
        let (prev_uri, prev_text) = tiny("hwopt_cpu_custom_optimization_after_graph_0_0106.ir");
        let r = c
            .request(
                "mirdsl/dump/follow",
                json!({"uri": uri, "position": position_of(&text, "%6(CNode_98) = PrimFunc_Add", 1),
                       "direction": "previous"}),
            )
            .await;
        assert_eq!(r["result"]["uri"], prev_uri, "{r}");
        assert_eq!(r["result"]["found"], true, "{r}");
        assert_eq!(
            r["result"]["range"]["start"],
            position_of(&prev_text, "%6(CNode_98) = PrimFunc_Add", 0),
            "{r}"
        );
        // From anywhere in its statement (here its scope comment), to the next stage.
        let r = c
            .request(
                "mirdsl/dump/follow",
                json!({"uri": uri, "position": position_of(&text, "(Default/Add-op0)", 3),
                       "direction": "next"}),
            )
            .await;
        let (next_uri, next_text) = tiny("24_execute_0130.ir");
        assert_eq!(r["result"]["uri"], next_uri, "{r}");
        assert_eq!(
            r["result"]["range"]["start"],
            position_of(&next_text, "%6(CNode_88) = PrimFunc_Add", 0),
            "{r}"
        );
        // Until it changes: from the first stage, the Add passes one stage
        // that leaves it as it is and stops where its input became the Mul.
        let (first_uri, first_text) = tiny("22_backend_pass_0077.ir");
        c.open(&first_uri, &first_text).await;
        let r = c
            .request(
                "mirdsl/dump/follow",
                json!({"uri": first_uri, "position": position_of(&first_text, "%6(CNode_88) = PrimFunc_Add", 1),
                       "direction": "next", "untilChange": true}),
            )
            .await;
        assert_eq!(r["result"]["uri"], uri, "{r}");
        assert_eq!(r["result"]["skipped"], 1, "{r}");
        assert_eq!(r["result"]["changes"], json!(["inputs (%5) → (%5)"]), "{r}");
        assert_eq!(
            r["result"]["range"]["start"],
            position_of(&text, "%6(CNode_98) = PrimFunc_Add", 0),
            "{r}"
        );
        // The ReLU no stage changes: the last stage, and a message that says so.
        let r = c
            .request(
                "mirdsl/dump/follow",
                json!({"uri": first_uri, "position": position_of(&first_text, "%4(CNode_86$y)", 1),
                       "direction": "next", "untilChange": true}),
            )
            .await;
        assert_eq!(r["result"]["uri"], next_uri, "{r}");
        assert_eq!(r["result"]["skipped"], 2, "{r}");
        assert!(
            r["result"]["message"]
                .as_str()
                .unwrap_or_default()
                .ends_with("; no stage in the folder changes it"),
            "{r}"
        );

        // The Mul kernel selection made: not in the stage before, so its graph.
        let r = c
            .request(
                "mirdsl/dump/follow",
                json!({"uri": uri, "position": position_of(&text, "%5(CNode_109)", 1),
                       "direction": "previous"}),
            )
            .await;
        assert_eq!(r["result"]["found"], false, "{r}");
        assert!(
            r["result"]["message"]
                .as_str()
                .unwrap_or_default()
                .contains("%5 is not here: the stage after this one added it"),
            "{r}"
        );
        // The last stage has no next one: an error that says so.
        c.open(&next_uri, &next_text).await;
        let r = c
            .request(
                "mirdsl/dump/follow",
                json!({"uri": next_uri, "position": position_of(&next_text, "%6(", 1), "direction": "next"}),
            )
            .await;
        assert!(
            r["error"]["message"]
                .as_str()
                .unwrap_or_default()
                .contains("24_execute_0130.ir is the last stage"),
            "{r}"
        );

        // The graph view: the subgraph under the cursor, grouped by scope.
        let r = c
            .request(
                "mirdsl/graph",
                json!({"uri": uri, "position": position_of(&text, "%3(x)", 0)}),
            )
            .await;
        assert_eq!(r["result"]["graph"], "@kernel_graph0", "{r}");
        let svg = r["result"]["svg"].as_str().unwrap_or_default();
        assert!(
            svg.contains(r#"data-graph="scope:Default/block-Block/fc-Dense""#),
            "{svg}"
        );
        assert_eq!(
            r["result"]["nodes"]["n1"]["start"],
            position_of(&text, "%1(x) = PrimFunc_MatMul", 0),
            "{r}"
        );

        // Hover: the user's frame links to the model.py next to the dump
        // folder (the dump was made in a folder that is not here).
        let h = c
            .request(
                "textDocument/hover",
                json!({"textDocument": doc, "position": position_of(&text, "%4(CNode_96)", 1)}),
            )
            .await;
        let md = h["result"]["contents"]["value"]
            .as_str()
            .unwrap_or_default();
        let model = std::path::Path::new(&uri["file://".len()..])
            .parent()
            .unwrap()
            .parent()
            .unwrap()
            .join("model.py");
        assert!(
            md.contains(&format!("[model.py:24](file://{}#L24)", model.display())),
            "{md}"
        );
        assert!(md.contains("scope: `Default/block-Block/act-ReLU/ReLU-op0`"), "{md}");
        assert!(md.contains("type: `(<Tensor[Float32], (2, 3)>)`"), "{md}");
        assert!(md.contains("MindSpore 2.10: `ReLU("), "{md}");
        // The same line for clients that cannot follow a hover's link.
        let r = c
            .request(
                "mirdsl/dump/source",
                json!({"uri": uri, "position": position_of(&text, "# Fullname with scope: (Default/block-Block/act-ReLU", 4)}),
            )
            .await;
        assert_eq!(
            r["result"],
            json!({"uri": format!("file://{}", model.display()), "line": 23, "exists": true}),
            "{r}"
        );
    });
}

/// A runtime actor set (testdata/irdumps/actors, the final form of
/// `tiny_step`'s, MindSpore 2.10) opened in the server: no diagnostics, an
/// outline of its actors, hover and definition of an actor from a mention of
/// it, and the other requests on it answer without failing.
#[test]
fn an_actor_set_is_a_document() {
    runtime().block_on(async {
        let mut c = Client::start();
        c.initialize(None).await;
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../testdata/irdumps/actors/final_actor_set_kernel_graph_0.ir")
            .canonicalize()
            .unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let uri = format!("file://{}", path.display());
        c.open(&uri, &text).await;
        let d = c.diagnostics(&uri, 1).await;
        assert_eq!(d["diagnostics"], json!([]), "{d}");
        let doc = json!({"uri": uri});
        let s = c
            .request("textDocument/documentSymbol", json!({"textDocument": doc}))
            .await;
        let sections = s["result"].as_array().unwrap();
        assert_eq!(sections.len(), 1, "{s}");
        assert_eq!(sections[0]["kind"], 3, "a namespace: {s}");
        let actors = sections[0]["children"].as_array().unwrap();
        let conv = actors
            .iter()
            .find(|a| {
                a["name"]
                    == "%2 0_Default/network-WithLossCell/_backbone-Tiny/conv-Conv2d/Conv2D-op0"
            })
            .unwrap_or_else(|| panic!("{s}"));
        assert_eq!(conv["kind"], 19, "an object: {conv}");
        assert_eq!(conv["detail"], "kernel Conv2D");
        // `%2` used by the ReLU actor: hover and definition.
        let at = position_of(&text, "ReLU-op0(%2[0])", 10);
        let h = c
            .request(
                "textDocument/hover",
                json!({"textDocument": doc, "position": at}),
            )
            .await;
        let md = h["result"]["contents"]["value"]
            .as_str()
            .unwrap_or_default();
        assert!(md.contains("(primitive `Conv2D`)"), "{h}");
        assert!(md.contains("- 1: weight `conv.weight`"), "{h}");
        // Its kernel, in the kernel graph's dump beside the set.
        assert!(
            md.contains("in its kernel graph: [graph_build_0_0126.ir:33](file://"),
            "{h}"
        );
        let def = c
            .request(
                "textDocument/definition",
                json!({"textDocument": doc, "position": at}),
            )
            .await;
        let want = position_of(&text, "%2 = kernel_graph0:Conv2D-op0", 0);
        let got = &def["result"];
        let start = if got.is_array() {
            &got[0]["range"]["start"]
        } else {
            &got["range"]["start"]
        };
        assert_eq!(start, &want, "{def}");
        // The graph view: the actors and the data between them, grouped by
        // their kernels' scopes; a node selects its actor.
        let r = c
            .request("mirdsl/graph", json!({"uri": uri, "position": at}))
            .await;
        assert_eq!(r["result"]["graph"], "@actors", "{r}");
        let svg = r["result"]["svg"].as_str().unwrap_or_default();
        assert!(svg.contains("Conv2D"), "{svg}");
        assert!(
            svg.contains(r#"data-graph="scope:Default/network-WithLossCell/_backbone-Tiny""#),
            "{svg}"
        );
        assert_eq!(
            r["result"]["nodes"]["n2"]["start"],
            position_of(&text, "%2 = kernel_graph0:Conv2D-op0", 0),
            "{r}"
        );
        for method in [
            "textDocument/foldingRange",
            "textDocument/codeLens",
            "textDocument/semanticTokens/full",
        ] {
            let r = c.request(method, json!({"textDocument": doc})).await;
            assert!(r.get("error").is_none(), "{method}: {r}");
        }
    });
}
