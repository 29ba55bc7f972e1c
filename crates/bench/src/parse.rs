//! `bench parse`: the syntax layer on a large generated file.
//!
//! - lex, and lex+parse (`syntax::parse`) of the whole file: MB/s, min and median
//!   of `runs` runs;
//! - formatting: `fmt::format` (parse + layout) and `fmt::format_parse` (layout of
//!   an existing parse);
//! - incremental reparsing: `edits` different one-character edits inside graph
//!   bodies in the middle of the file, each applied to the original parse with
//!   `Parse::reparse`, against a full `syntax::parse` of the same edited text.
//!   Every incremental result is checked to equal the full parse.

use std::hint::black_box;
use std::time::Duration;

use syntax::{AstNode, SyntaxKind, TextEdit, TextRange, TextSize};

use crate::stats::{mb_per_s, ms, time, us, Summary};
use crate::{gen, Options};

pub fn run(options: &Options) {
    let (text, gen_time) = time(|| gen::generate(options.lines, options.seed));
    let bytes = text.len();
    let parse = syntax::parse(&text);
    assert!(
        parse.errors().is_empty(),
        "the generated file must parse without errors, so the bench measures the real \
         path; first errors: {:?}",
        &parse.errors()[..parse.errors().len().min(5)]
    );
    let tokens = syntax::tokenize(&text).0.len();
    let items = parse.tree().items().count();
    println!(
        "bench parse: {} lines, {:.2} MB, {} tokens, {} items (seed {}, generated in {:.0} ms)",
        options.lines,
        bytes as f64 / 1e6,
        tokens,
        items,
        options.seed,
        ms(gen_time)
    );
    println!(
        "{} timed runs per whole-file row (after one warm-up); {} edits\n",
        options.runs, options.edits
    );

    let lex = repeat(options.runs, || syntax::tokenize(&text));
    let full = repeat(options.runs, || syntax::parse(&text));
    let format = repeat(options.runs, || fmt::format(&text).expect("formats"));
    let layout = repeat(options.runs, || fmt::format_parse(&parse).expect("formats"));

    let edits = edits_in_the_middle(&parse, &text, options.edits);
    let (incremental, reparsed) = reparse_timings(&parse, &text, &edits);

    println!(
        "{:<44} {:>10} {:>10} {:>10} {:>10}",
        "whole file", "min ms", "median ms", "max MB/s", "median MB/s"
    );
    for (name, s) in [
        ("lex (syntax::tokenize)", lex),
        ("lex+parse (syntax::parse)", full),
        ("format (fmt::format: parse + layout)", format),
        ("format layout only (fmt::format_parse)", layout),
    ] {
        println!(
            "{:<44} {:>10.2} {:>10.2} {:>10.1} {:>10.1}",
            name,
            ms(s.min),
            ms(s.median),
            mb_per_s(bytes, s.min),
            mb_per_s(bytes, s.median)
        );
    }
    println!();
    println!(
        "{:<44} {:>10} {:>10} {:>10} {:>10}",
        "one-character edit (µs)", "min", "median", "p95", "max"
    );
    for (name, s) in [
        ("incremental (Parse::reparse)", incremental),
        ("full reparse of the edited text", reparsed),
    ] {
        println!(
            "{:<44} {:>10.1} {:>10.1} {:>10.1} {:>10.1}",
            name,
            us(s.min),
            us(s.median),
            us(s.p95),
            us(s.max)
        );
    }
    println!(
        "\nincremental speed-up: {:.0}x at the median",
        reparsed.median.as_secs_f64() / incremental.median.as_secs_f64()
    );

    let parse_mb_s = mb_per_s(bytes, full.median);
    let verdict = |ok: bool| if ok { "ok" } else { "MISSED" };
    println!(
        "targets: parse >= 50 MB/s: {} ({parse_mb_s:.1}); edit reparse < 1 ms: {} (p95 {:.0} µs)",
        verdict(parse_mb_s >= 50.0),
        verdict(incremental.p95 < Duration::from_millis(1)),
        us(incremental.p95)
    );
}

/// Times `runs` calls of `f` after one warm-up call. Results are dropped outside
/// the timed region (freeing a whole tree is not part of parsing it).
fn repeat<T>(runs: usize, mut f: impl FnMut() -> T) -> Summary {
    black_box(f());
    let samples: Vec<Duration> = (0..runs)
        .map(|_| {
            let (out, d) = time(&mut f);
            black_box(out);
            d
        })
        .collect();
    Summary::of(&samples)
}

/// `n` one-character edits, spread over the identifiers in graph bodies in the
/// middle tenth of the file: alternately replace one character of a name with `q`
/// and insert a `z` into a name (neither letter occurs in a keyword, so the text
/// stays valid and the edit stays inside its item).
fn edits_in_the_middle(parse: &syntax::Parse, text: &str, n: usize) -> Vec<TextEdit> {
    let len = text.len();
    let (lo, hi) = (len * 45 / 100, len * 55 / 100);
    let mut spots: Vec<TextSize> = Vec::new();
    for graph in parse.tree().graphs() {
        let range = graph.syntax().text_range();
        if usize::from(range.end()) < lo || usize::from(range.start()) > hi {
            continue;
        }
        let Some(body) = graph.body() else { continue };
        for token in body
            .syntax()
            .descendants_with_tokens()
            .filter_map(|e| e.into_token())
            .filter(|t| t.kind() == SyntaxKind::IDENT)
        {
            let start = token.text_range().start();
            for (i, c) in token.text().char_indices() {
                if c.is_ascii_alphanumeric() || c == '_' {
                    spots.push(start + TextSize::from(i as u32));
                }
            }
        }
    }
    assert!(
        spots.len() >= n,
        "only {} edit spots in the middle of the file",
        spots.len()
    );
    let step = spots.len() / n;
    (0..n)
        .map(|i| {
            let at = spots[i * step + step / 2];
            if i % 2 == 0 {
                TextEdit {
                    delete: TextRange::at(at, TextSize::from(1)),
                    insert: "q".to_string(),
                }
            } else {
                TextEdit {
                    delete: TextRange::empty(at),
                    insert: "z".to_string(),
                }
            }
        })
        .collect()
}

/// For each edit: the time of `parse.reparse(edit)` and of `syntax::parse` of the
/// edited text; checks that both give the same tree and no errors.
fn reparse_timings(parse: &syntax::Parse, text: &str, edits: &[TextEdit]) -> (Summary, Summary) {
    let mut incremental = Vec::with_capacity(edits.len());
    let mut full = Vec::with_capacity(edits.len());
    // Warm-up.
    black_box(parse.reparse(&edits[0]));
    for edit in edits {
        let mut edited = text.to_string();
        edit.apply(&mut edited);
        let (fast, d_fast) = time(|| parse.reparse(edit));
        let (slow, d_slow) = time(|| syntax::parse(&edited));
        assert!(
            fast.green() == slow.green() && fast.errors() == slow.errors(),
            "reparse disagrees with parse after {edit:?}"
        );
        assert!(slow.errors().is_empty(), "edit {edit:?} broke the file");
        incremental.push(d_fast);
        full.push(d_slow);
    }
    (Summary::of(&incremental), Summary::of(&full))
}
