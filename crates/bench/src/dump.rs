//! `bench dump`: a 100,000-line MindSpore compile dump (`.ir`, as
//! `save_graphs=2` writes a late stage of a large training step) in the
//! editor: the time to read it (`ide::dump::parse_dump`, which the server does
//! once per edit of a dump, `ide::dump::dump_of`) and to answer each request the editor makes on
//! it (outline, folding, hover, definition, references, semantic tokens, the
//! graph of a subgraph, the diff with the stage before, a node followed to
//! the next stage), parse included. The targets: open under 1 s,
//! each request under 100 ms.

use std::fmt::Write;
use std::time::Duration;

use syntax::TextSize;

use crate::stats::{ms, time, Summary};
use crate::Options;

/// A dump of about `lines` lines: graphs of 40 nodes, each node with its
/// type line, scope and three Python frames (as MindSpore prints them), the
/// entry calling every other graph.
pub fn generate(lines: usize) -> String {
    let mut out = String::new();
    let graphs = (lines / (40 * 6 + 3)).max(1);
    out.push_str("# IR entry: @g0\n# Total subgraphs: ");
    let _ = writeln!(out, "{graphs}\n\n# Params:");
    for w in 0..64 {
        let _ = writeln!(
            out,
            "%para{}_layer{w}.weight: <Ref[Tensor[Float32]], (64, 64), ref_key=layer{w}.weight, is_parameter>  :  has_default",
            w + 1
        );
    }
    out.push('\n');
    for g in 0..graphs {
        let _ = writeln!(out, "subgraph @g{g}(%para{}_x) {{", 1000 + g);
        for n in 0..40 {
            let (callee, args) = match n {
                0 => (
                    "MatMul".to_string(),
                    format!(
                        "%para{}_x, %para{}_layer{}.weight",
                        1000 + g,
                        g % 64 + 1,
                        g % 64
                    ),
                ),
                _ if n % 10 == 5 && g + 1 < graphs && g == 0 => {
                    (format!("call @g{}", n), format!("%{}", n - 1))
                }
                _ if n % 3 == 0 => (
                    "PrimFunc_Add".to_string(),
                    format!("%{}, %{}", n - 1, n / 2),
                ),
                _ if n % 3 == 1 => ("ReLU".to_string(), format!("%{}", n - 1)),
                _ => (
                    "Conv2D".to_string(),
                    format!("%{}, %para{}_layer{}.weight", n - 1, n % 64 + 1, n % 64),
                ),
            };
            let _ = writeln!(
                out,
                "  %{n}(CNode_{g}_{n}) = {callee}({args}) primitive_attrs: {{output_names: [output]}} cnode_attrs: {{checkpoint: Bool(1)}}"
            );
            out.push_str("      : (<Tensor[Float32], (32, 64)>, <Tensor[Float32], (32, 64)>) -> (<Tensor[Float32], (32, 64)>)\n");
            let _ = writeln!(
                out,
                "      # Fullname with scope: (Default/network-WithLossCell/_backbone-Net/layer{g}-Block/op{n})"
            );
            out.push_str("      # In file /usr/lib/python3/site-packages/mindspore/nn/wrap/cell_wrapper.py:442, 15~27/        loss = self.network(*inputs)/\n");
            let _ = writeln!(
                out,
                "      # In file /work/model.py:{}, 8~30/        x = self.block(x)/",
                10 + n
            );
            out.push_str("      # In file /usr/lib/python3/site-packages/mindspore/nn/layer/basic.py:620, 8~30/        x = self.matmul(x, self.weight)/\n");
        }
        out.push_str("  Return(%39)\n      : (<Tensor[Float32], (32, 64)>)\n}\n\n");
    }
    out
}

fn median(f: impl Fn() -> usize, runs: usize) -> (Duration, usize) {
    let mut samples = Vec::with_capacity(runs);
    let mut size = 0;
    for _ in 0..runs {
        let (n, d) = time(&f);
        size = n;
        samples.push(d);
    }
    (Summary::of(&samples).median, size)
}

pub fn run(options: &Options) {
    let text = generate(100_000);
    let lines = text.lines().count();
    println!(
        "a MindSpore compile dump of {lines} lines ({:.1} MB), median of {} runs:",
        text.len() as f64 / 1e6,
        options.runs
    );
    let runs = options.runs;
    let (d, graphs) = median(|| ide::dump::parse_dump(&text).graphs.len(), runs);
    println!(
        "  {:<32} {:>8.2} ms",
        format!("open (parse, {graphs} graphs)"),
        ms(d)
    );
    let at = |needle: &str| TextSize::from(text.rfind(needle).unwrap() as u32 + 1);
    let use_of = at("(%38, %19)");
    let weight = at("%para64_layer63.weight)");
    let (d, n) = median(
        || ide::dump::dump_symbols(&ide::dump::parse_dump(&text)).len(),
        runs,
    );
    println!(
        "  {:<32} {:>8.2} ms",
        format!("outline ({n} symbols)"),
        ms(d)
    );
    let (d, n) = median(
        || ide::dump::dump_folds(&text, &ide::dump::parse_dump(&text)).len(),
        runs,
    );
    println!(
        "  {:<32} {:>8.2} ms",
        format!("folding ({n} ranges)"),
        ms(d)
    );
    let (d, n) = median(
        || {
            ide::dump::dump_hover(&ide::dump::parse_dump(&text), use_of, None, &|p| {
                p.is_file()
            })
            .map_or(0, |h| h.markdown.len())
        },
        runs,
    );
    println!("  {:<32} {:>8.2} ms", format!("hover ({n} bytes)"), ms(d));
    let (d, n) = median(
        || usize::from(ide::dump::dump_definition(&ide::dump::parse_dump(&text), use_of).is_some()),
        runs,
    );
    println!(
        "  {:<32} {:>8.2} ms",
        format!("definition ({n} found)"),
        ms(d)
    );
    let (d, n) = median(
        || ide::dump::dump_references(&ide::dump::parse_dump(&text), weight, true).len(),
        runs,
    );
    println!(
        "  {:<32} {:>8.2} ms",
        format!("references of a weight ({n})"),
        ms(d)
    );
    let (d, n) = median(
        || ide::dump::dump_tokens(&ide::dump::parse_dump(&text), None).len(),
        runs,
    );
    println!(
        "  {:<32} {:>8.2} ms",
        format!("semantic tokens ({n})"),
        ms(d)
    );
    let (d, n) = median(
        || {
            let d = ide::dump::parse_dump(&text);
            graphview::from_dump(&d, 1).map_or(0, |m| graphview::render_svg(&m).len())
        },
        runs,
    );
    println!(
        "  {:<32} {:>8.2} ms",
        format!("graph of a subgraph ({} kB SVG)", n / 1000),
        ms(d)
    );
    // A late stage's one kernel graph: 2,000 nodes in nested scopes.
    let big = one_graph(2000);
    let (d, n) = median(
        || {
            let d = ide::dump::parse_dump(&big);
            graphview::from_dump(&d, 0).map_or(0, |m| graphview::render_svg(&m).len())
        },
        runs.min(5),
    );
    println!(
        "  {:<32} {:>8.2} ms",
        format!("graph of 2,000 nodes ({} kB SVG)", n / 1000),
        ms(d)
    );
    // The next stage: the last graph's ReLUs replaced (a pass's change).
    let next = next_stage(&text);
    let (d, n) = median(
        || {
            let (a, b) = (ide::dump::parse_dump(&text), ide::dump::parse_dump(&next));
            ide::dump::compare("a.ir", &a, "b.ir", &b).1
        },
        runs,
    );
    println!(
        "  {:<32} {:>8.2} ms",
        format!("compare with previous ({n} changes)"),
        ms(d)
    );
    let follow_at = at("%38(CNode_");
    let (d, n) = median(
        || {
            let (a, b) = (ide::dump::parse_dump(&text), ide::dump::parse_dump(&next));
            usize::from(ide::dump::follow(&a, follow_at, &b, true).is_ok_and(|f| f.found))
        },
        runs,
    );
    println!(
        "  {:<32} {:>8.2} ms",
        format!("follow a node ({n} found)"),
        ms(d)
    );
    println!(
        "  (each parses the dump again; the server parses it once per edit, so its first\n   request after an edit costs the open above, the others the feature alone; compare\n   and follow also read and parse the other stage)"
    );
    // The same through `mirdsl lsp` (stdio, JSON), as an editor sees it.
    let pos = |offset: TextSize| {
        let before = &text[..usize::from(offset)];
        let line = before.matches('\n').count();
        let col = before.len() - before.rfind('\n').map_or(0, |i| i + 1);
        serde_json::json!({"line": line, "character": col})
    };
    let requests = [
        ("textDocument/documentSymbol", serde_json::json!({})),
        ("textDocument/foldingRange", serde_json::json!({})),
        (
            "textDocument/hover",
            serde_json::json!({"position": pos(use_of)}),
        ),
        (
            "textDocument/definition",
            serde_json::json!({"position": pos(use_of)}),
        ),
        (
            "textDocument/references",
            serde_json::json!({"position": pos(weight), "context": {"includeDeclaration": true}}),
        ),
    ];
    // Two stages on disk, for the requests that read the folder.
    let dir = std::env::temp_dir().join(format!("mirdsl-bench-dump-{}", std::process::id()));
    let written = std::fs::create_dir_all(&dir)
        .and_then(|_| std::fs::write(dir.join("13_optimize_0068.ir"), &text))
        .and_then(|_| std::fs::write(dir.join("14_next_pass_0069.ir"), &next));
    if let Err(e) = written {
        println!(
            "through mirdsl lsp: not measured (cannot write {}: {e})",
            dir.display()
        );
        return;
    }
    let uri = format!("file://{}", dir.join("13_optimize_0068.ir").display());
    let requests = [
        requests.as_slice(),
        &[
            ("textDocument/semanticTokens/full", serde_json::json!({})),
            ("mirdsl/graph", serde_json::json!({"graph": "@g1"})),
            (
                "mirdsl/dump/follow",
                serde_json::json!({"position": pos(follow_at), "direction": "next"}),
            ),
        ],
    ]
    .concat();
    let measured = crate::lsp::dump_requests(&text, &uri, &requests, runs);
    // Compare needs the stage before: the second file opened.
    let uri2 = format!("file://{}", dir.join("14_next_pass_0069.ir").display());
    let compare = [("mirdsl/dump/compare", serde_json::json!({}))];
    let compared = crate::lsp::dump_requests(&next, &uri2, &compare, runs);
    let _ = std::fs::remove_dir_all(&dir);
    match measured {
        Ok((open, medians)) => {
            println!("through mirdsl lsp (send to answer):");
            println!(
                "  {:<32} {:>8.2} ms",
                "open (didOpen to diagnostics)",
                ms(open)
            );
            for ((method, _), d) in requests.iter().zip(medians) {
                println!("  {method:<32} {:>8.2} ms", ms(d));
            }
        }
        Err(e) => println!("through mirdsl lsp: not measured ({e})"),
    }
    match compared {
        Ok((_, medians)) => println!("  {:<32} {:>8.2} ms", "mirdsl/dump/compare", ms(medians[0])),
        Err(e) => println!("  mirdsl/dump/compare: not measured ({e})"),
    }
}

/// A dump of one graph of `nodes` nodes (each adding the last value and an
/// earlier one), scoped in blocks of 50 and cells of 10, as a late stage's
/// kernel graph is.
fn one_graph(nodes: usize) -> String {
    let mut out = String::from(
        "# IR entry: @big_1\n# Params:\n%para1_x: <Tensor[Float32], (32, 64)> : [32, 64]\n\nsubgraph @big_1() {\n",
    );
    for n in 0..nodes {
        let a = if n > 0 {
            format!("%{}", n - 1)
        } else {
            "%para1_x".into()
        };
        let b = if n > 2 {
            format!("%{}", n / 2)
        } else {
            "%para1_x".into()
        };
        let _ = writeln!(out, "  %{n}(CNode_{n}) = PrimFunc_Add({a}, {b})");
        out.push_str("      : (<Tensor[Float32], (32, 64)>, <Tensor[Float32], (32, 64)>) -> (<Tensor[Float32], (32, 64)>)\n");
        let _ = writeln!(
            out,
            "      # Fullname with scope: (Default/network-WithLossCell/_backbone-Net/layer{}-Block/sub{}-Cell/Add-op{n})",
            n / 50,
            (n / 10) % 5
        );
    }
    let _ = writeln!(out, "  Return(%{})\n}}", nodes - 1);
    out
}

/// The stage after `text`: in its last graph, the calls of one op became
/// calls of another (`workloads/ops.txt`'s `stage_swap`).
fn next_stage(text: &str) -> String {
    let last = text.rfind("subgraph @").unwrap_or(0);
    let (from, to) = crate::workload::ops().stage_swap;
    format!(
        "{}{}",
        &text[..last],
        text[last..].replace(&format!("{from}("), &format!("{to}("))
    )
}
