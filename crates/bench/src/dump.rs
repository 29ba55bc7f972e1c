//! `bench dump`: a 100,000-line MindSpore compile dump (`.ir`, as
//! `save_graphs=2` writes a late stage of a large training step) in the
//! editor: the time to read it (`ide::dump::parse_dump`, which the server does
//! for each request on a dump) and to answer each request the editor makes on
//! it (outline, folding, hover, definition, references), parse included. The
//! issue's targets: open under 1 s, each request under 100 ms.

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
    println!("  (each request parses the dump again, as the server does)");
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
    match crate::lsp::dump_requests(&text, &requests, runs) {
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
}
