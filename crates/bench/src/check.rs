//! `bench check`: `mirdsl check`'s whole-file analysis (parse, lower, infer
//! every graph) on a generated file. Target: 50,000 lines in under 450 ms.

use crate::stats::{time, time_cpu, Summary};
use crate::{gen, Options};

pub fn run(options: &Options) {
    // The parse benchmark's generator makes syntactically valid text whose
    // semantics are random (most of it would be errors); a check benchmark
    // must measure the checker on programs that check clean.
    let _ = gen::generate;
    let text = generate_valid(options.lines, options.seed);
    let lines = text.lines().count();
    let (analysis, first, first_cpu) = time_cpu(|| analysis::analyze(&text));
    let errors = analysis
        .diagnostics
        .iter()
        .filter(|d| d.severity == analysis::Severity::Error)
        .count();
    let mut codes: Vec<&str> = analysis
        .diagnostics
        .iter()
        .map(|d| d.code.as_str())
        .collect();
    codes.sort();
    codes.dedup();
    println!(
        "generated {lines} lines, {:.2} MB, {} graphs; {} diagnostics ({errors} errors; codes {codes:?})",
        text.len() as f64 / 1e6,
        analysis.source.order.len(),
        analysis.diagnostics.len(),
    );
    drop(analysis);
    let mut samples = vec![first];
    let mut cpu = vec![first_cpu];
    for _ in 1..options.runs.min(7) {
        let (a, d, c) = time_cpu(|| analysis::analyze(&text));
        drop(a);
        samples.push(d);
        cpu.push(c);
    }
    let s = Summary::of(&samples);
    let c = Summary::of(&cpu);
    // Where the time goes.
    let (parse, t_parse) = time(|| syntax::parse(&text));
    let file = parse.tree();
    let (index, _) = analysis::ItemIndex::build(&file);
    let (lowered, t_lower) = time(|| {
        file.graphs()
            .map(|g| analysis::lower::lower_graph(&g, &index))
            .collect::<Vec<_>>()
    });
    println!(
        "phases: parse {:.1} ms, lower {:.1} ms ({} graphs), infer and the rest {:.1} ms",
        t_parse.as_secs_f64() * 1e3,
        t_lower.as_secs_f64() * 1e3,
        lowered.len(),
        (s.median.saturating_sub(t_parse + t_lower)).as_secs_f64() * 1e3
    );
    println!(
        "| whole-file check ({} runs) | min ms | median ms | lines/s (median) | CPU ms (min) | CPU ms (median) |",
        samples.len()
    );
    println!("|---|---|---|---|---|---|");
    println!(
        "| parse + lower + infer | {:.1} | {:.1} | {:.0} | {:.1} | {:.1} |",
        s.min.as_secs_f64() * 1e3,
        s.median.as_secs_f64() * 1e3,
        lines as f64 / s.median.as_secs_f64(),
        c.min.as_secs_f64() * 1e3,
        c.median.as_secs_f64() * 1e3,
    );
    println!(
        "(CPU: this thread's CPU time; on a machine shared with other work it is \
         what the wall time would be on an idle one, near enough)"
    );
}

/// A program of `lines` lines that checks clean: networks of eight layers,
/// each layer a graph with a weight, elementwise work, a reduction, an `if`, a
/// nested graph and a lambda, calling the previous layer.
pub fn generate_valid(lines: usize, seed: u64) -> String {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let workload = crate::workload::ops();
    let unary = &workload.layer_unary;
    let mut out = String::new();
    let mut layer = 0usize;
    // Lines so far (counted as text is added: recounting is quadratic).
    let (mut counted, mut line_count) = (0, 0);
    while line_count + 30 < lines {
        let i = layer;
        out.push_str(&format!(
            "# Layer {i}.\nparam w{i}: f32[16, 16] = normal(std=0.1, seed={i})\n"
        ));
        out.push_str(&format!(
            "graph layer{i}(x: f32[B, 16]) -> f32[B, 16] {{\n  h0 = MatMul(x, w{i})\n"
        ));
        let steps = 8 + (next() % 12) as usize;
        for k in 1..=steps {
            let op = unary[(next() % unary.len() as u64) as usize];
            match next() % 4 {
                0 => out.push_str(&format!("  h{k} = {op}(h{})\n", k - 1)),
                1 => out.push_str(&format!("  h{k} = Add(h{}, x) * 0.5\n", k - 1)),
                2 => out.push_str(&format!("  h{k} = h{} * {op}(x) - 1.0\n", k - 1)),
                _ => out.push_str(&format!(
                    "  h{k} = Maximum(h{}, Tanh(h{}))  # clip\n",
                    k - 1,
                    k - 1
                )),
            }
        }
        out.push_str(&format!(
            "  graph gate(v) {{ return {gate}(v) * v }}\n  g = gate(h{steps})\n  sq = fn(v) => v * v\n  s = ReduceMean(sq(g))\n  r = if s > 1.0 {{ g * 0.5 }} else {{ Neg(g) + h0 }}\n",
            gate = workload.gate
        ));
        // Networks of eight layers, each calling the one before.
        if i.is_multiple_of(8) {
            out.push_str("  return r\n}\n\n");
        } else {
            out.push_str(&format!("  return layer{}(r)\n}}\n\n", i - 1));
        }
        layer += 1;
        line_count += out[counted..].matches('\n').count();
        counted = out.len();
    }
    out.push_str(&format!(
        "graph main(x: f32[8, 16]) {{\n  return layer{}(x)\n}}\n",
        layer - 1
    ));
    out
}
