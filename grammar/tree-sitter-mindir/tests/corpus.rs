//! Tests the grammar without the tree-sitter CLI:
//!
//! * every case of `test/corpus/*.txt` (the CLI's corpus format) parses to its expected
//!   S-expression (or, for `:error` cases, to a tree with an error);
//! * every query in `queries/` compiles, and the highlight query behaves as documented;
//! * every valid example in `testdata/` parses without ERROR or MISSING nodes, and every
//!   deliberately broken one in `testdata/broken/` parses (without crashing) to a tree that
//!   has errors.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

use tree_sitter::{Node, Parser, Query, QueryCursor, StreamingIterator, Tree};

fn manifest_dir() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn parse(source: &str) -> Tree {
    let mut parser = Parser::new();
    parser
        .set_language(&tree_sitter_mindir::language())
        .expect("the MindIR grammar loads");
    parser
        .parse(source, None)
        .expect("the parser returns a tree")
}

/// The files in `dir` whose names end with `.{ext}`, sorted.
fn files_with_extension(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .map(|entry| entry.expect("a directory entry").path())
        .filter(|path| path.is_file() && path.extension().is_some_and(|e| e == ext))
        .collect();
    files.sort();
    files
}

// ------------------------------------------------------------------------------------
// The corpus format

/// One test case of a corpus file.
#[derive(Debug)]
struct CorpusCase {
    file: String,
    name: String,
    input: String,
    /// The expected S-expression, normalised (see [`normalize_sexp`]).
    expected: String,
    /// `:error`: the input must parse to a tree that has an error; `expected` is unused.
    error: bool,
    /// `:skip`: the case is not run.
    skip: bool,
}

/// If `line` is a delimiter line (three or more `c`, then an optional suffix), returns the
/// delimiter's length and the suffix.
fn delimiter(line: &str, c: char) -> Option<(usize, &str)> {
    let len = line.len() - line.trim_start_matches(c).len();
    (len >= 3).then(|| (len, line[len..].trim_end_matches(['\r', '\n'])))
}

/// Parses a corpus file in the format of `tree-sitter test`:
///
/// ```text
/// ====================
/// name
/// :attribute (optional, one a line)
/// ====================
///
/// input
///
/// --------------------
///
/// (expected s-expression)
/// ```
fn parse_corpus(file: &str, content: &str) -> Vec<CorpusCase> {
    let lines: Vec<&str> = content.split_inclusive('\n').collect();
    // As in the CLI, a suffix on the first header line must be repeated on every
    // delimiter of the file (it lets a test's input contain `===` or `---` lines).
    let suffix = lines
        .iter()
        .find_map(|line| delimiter(line, '=').map(|(_, s)| s.to_owned()))
        .unwrap_or_default();
    let is_delimiter = |line: &str, c: char| delimiter(line, c).map(|(len, s)| (len, s == suffix));

    // Headers: (index of the opening line, index of the first body line, name, attributes).
    let mut headers: Vec<(usize, usize, String, Vec<String>)> = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if is_delimiter(lines[i], '=').is_some_and(|(_, ok)| ok) {
            let mut name_lines = Vec::new();
            let mut attributes = Vec::new();
            let mut j = i + 1;
            while j < lines.len() && !is_delimiter(lines[j], '=').is_some_and(|(_, ok)| ok) {
                let line = lines[j].trim();
                if line.starts_with(':') {
                    attributes.push(line.to_owned());
                } else if !line.is_empty() {
                    name_lines.push(line.to_owned());
                }
                j += 1;
            }
            if j < lines.len() && !name_lines.is_empty() {
                headers.push((i, j + 1, name_lines.join(" "), attributes));
                i = j + 1;
                continue;
            }
        }
        i += 1;
    }

    let mut cases = Vec::new();
    for (k, (_, body_start, name, attributes)) in headers.iter().enumerate() {
        let body_end = headers.get(k + 1).map_or(lines.len(), |h| h.0);
        let body = &lines[*body_start..body_end];
        // The divider is the longest `---` line of the body (the last one on a tie).
        let mut divider: Option<(usize, usize)> = None;
        for (idx, line) in body.iter().enumerate() {
            if let Some((len, true)) = is_delimiter(line, '-') {
                if divider.is_none_or(|(best, _)| len >= best) {
                    divider = Some((len, idx));
                }
            }
        }
        let (_, divider) =
            divider.unwrap_or_else(|| panic!("{file}: case `{name}` has no `---` divider"));
        let mut input: String = body[..divider].concat();
        if input.ends_with('\n') {
            input.pop();
        }
        if input.ends_with('\r') {
            input.pop();
        }
        let expected = normalize_sexp(&body[divider + 1..].concat());
        cases.push(CorpusCase {
            file: file.to_owned(),
            name: name.clone(),
            input,
            expected,
            error: attributes.iter().any(|a| a == ":error"),
            skip: attributes.iter().any(|a| a == ":skip"),
        });
    }
    cases
}

/// Normalises an S-expression as the CLI does: drops `;` comment lines, collapses runs of
/// whitespace into one space and removes spaces before `)`.
fn normalize_sexp(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut pending_space = false;
    for line in raw.lines() {
        if line.trim_start().starts_with(';') {
            continue;
        }
        for ch in line.chars().chain(std::iter::once(' ')) {
            if ch.is_whitespace() {
                pending_space = !out.is_empty();
            } else {
                if pending_space && ch != ')' {
                    out.push(' ');
                }
                pending_space = false;
                out.push(ch);
            }
        }
    }
    out
}

/// Removes field names (`name: (` becomes `(`) from an S-expression.
fn strip_fields(sexp: &str) -> String {
    let mut out = String::with_capacity(sexp.len());
    for (i, word) in sexp.split(' ').enumerate() {
        if is_field_name(word) {
            continue;
        }
        if i > 0 && !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    out
}

fn is_field_name(word: &str) -> bool {
    word.len() > 1
        && word.ends_with(':')
        && word[..word.len() - 1]
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The change of nesting depth over `token` (parentheses inside `"..."` do not count).
fn paren_balance(token: &str) -> isize {
    let (mut balance, mut in_string, mut escaped) = (0, false, false);
    for ch in token.chars() {
        match ch {
            _ if escaped => escaped = false,
            '\\' if in_string => escaped = true,
            '"' => in_string = !in_string,
            '(' if !in_string => balance += 1,
            ')' if !in_string => balance -= 1,
            _ => {}
        }
    }
    balance
}

/// Renders a one-line S-expression with one node a line, indented by depth.
fn pretty_sexp(sexp: &str) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut depth: isize = 0;
    let mut after_field = false;
    for token in sexp.split(' ') {
        let starts_line = !after_field && (token.starts_with('(') || is_field_name(token));
        match lines.last_mut() {
            Some(line) if !starts_line => {
                line.push(' ');
                line.push_str(token);
            }
            _ => lines.push(format!(
                "{}{token}",
                "  ".repeat(depth.max(0).unsigned_abs())
            )),
        }
        after_field = is_field_name(token);
        depth += paren_balance(token);
    }
    lines
}

/// A line diff (longest common subsequence) of `expected` and `actual`.
fn line_diff(expected: &[String], actual: &[String]) -> String {
    let (n, m) = (expected.len(), actual.len());
    let mut lcs = vec![vec![0usize; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[i][j] = if expected[i] == actual[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let mut out = String::new();
    let (mut i, mut j) = (0, 0);
    while i < n || j < m {
        if i < n && j < m && expected[i] == actual[j] {
            let _ = writeln!(out, "   {}", expected[i]);
            i += 1;
            j += 1;
        } else if i < n && (j == m || lcs[i + 1][j] >= lcs[i][j + 1]) {
            let _ = writeln!(out, " - {}", expected[i]);
            i += 1;
        } else {
            let _ = writeln!(out, " + {}", actual[j]);
            j += 1;
        }
    }
    out
}

/// The first ERROR or MISSING node under `node`, described with its position.
fn first_problem(node: Node, source: &str) -> Option<String> {
    if node.is_error() || node.is_missing() {
        let pos = node.start_position();
        let text = &source[node.byte_range()];
        let text: String = text.chars().take(40).collect();
        let kind = if node.is_missing() {
            format!("MISSING {}", node.kind())
        } else {
            "ERROR".to_owned()
        };
        return Some(format!(
            "{kind} at line {}, column {}: {text:?}",
            pos.row + 1,
            pos.column + 1
        ));
    }
    if !node.has_error() {
        return None;
    }
    let mut cursor = node.walk();
    let children: Vec<Node> = node.children(&mut cursor).collect();
    children
        .into_iter()
        .find_map(|child| first_problem(child, source))
}

#[test]
fn corpus() {
    let dir = manifest_dir().join("test/corpus");
    let files = files_with_extension(&dir, "txt");
    assert!(!files.is_empty(), "no corpus files in {}", dir.display());

    let mut failures = Vec::new();
    let mut ran = 0;
    for path in &files {
        let file = path.file_name().unwrap().to_string_lossy().into_owned();
        let content = fs::read_to_string(path).expect("a readable corpus file");
        let cases = parse_corpus(&file, &content);
        assert!(!cases.is_empty(), "{file}: no test cases found");
        for case in cases.iter().filter(|c| !c.skip) {
            ran += 1;
            let tree = parse(&case.input);
            let root = tree.root_node();
            if case.error {
                if !root.has_error() {
                    failures.push(format!(
                        "{}: `{}` is marked :error but parsed without errors:\n{}",
                        case.file,
                        case.name,
                        pretty_sexp(&root.to_sexp()).join("\n")
                    ));
                }
                continue;
            }
            let mut actual = normalize_sexp(&root.to_sexp());
            if !case.expected.contains(": (") {
                actual = strip_fields(&actual);
            }
            if actual != case.expected {
                let diff = line_diff(&pretty_sexp(&case.expected), &pretty_sexp(&actual));
                failures.push(format!(
                    "{}: `{}` parsed differently (- expected, + actual):\n{diff}",
                    case.file, case.name
                ));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {ran} corpus cases failed:\n\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(ran >= 25, "only {ran} corpus cases ran");
    println!("{ran} corpus cases passed");
}

#[test]
fn corpus_format_parser() {
    let text = "\
==========
first
==========

a = 1

---

(source_file (x))

==========
second
:error
==========

b =
---
";
    let cases = parse_corpus("t.txt", text);
    assert_eq!(cases.len(), 2);
    assert_eq!(cases[0].name, "first");
    assert_eq!(cases[0].input, "\na = 1\n");
    assert_eq!(cases[0].expected, "(source_file (x))");
    assert!(!cases[0].error);
    assert_eq!(cases[1].name, "second");
    assert_eq!(cases[1].input, "\nb =");
    assert!(cases[1].error);

    assert_eq!(
        normalize_sexp("(a\n  name: (b)\n  ; comment\n  (c) )\n"),
        "(a name: (b) (c))"
    );
    assert_eq!(
        strip_fields("(a name: (b) value: (MISSING \")\"))"),
        "(a (b) (MISSING \")\"))"
    );
}

// ------------------------------------------------------------------------------------
// Queries

fn query(file: &str) -> Query {
    let path = manifest_dir().join("queries").join(file);
    let source = fs::read_to_string(&path).expect("a readable query file");
    Query::new(&tree_sitter_mindir::language(), &source)
        .unwrap_or_else(|e| panic!("{} does not compile: {e}", path.display()))
}

#[test]
fn queries_compile() {
    for file in ["highlights.scm", "folds.scm", "locals.scm"] {
        let q = query(file);
        assert!(q.pattern_count() > 0, "{file} has no patterns");
    }
    // The constants exported by the crate are the same files.
    for source in [
        tree_sitter_mindir::HIGHLIGHTS_QUERY,
        tree_sitter_mindir::FOLDS_QUERY,
        tree_sitter_mindir::LOCALS_QUERY,
    ] {
        Query::new(&tree_sitter_mindir::language(), source).expect("the query compiles");
    }
    assert!(tree_sitter_mindir::NODE_TYPES.contains("\"graph_definition\""));
}

/// For each node captured by the highlight query: (start byte, end byte, kind) -> the
/// capture names.
fn highlight_captures(source: &str) -> HashMap<(usize, usize, String), Vec<String>> {
    let q = query("highlights.scm");
    let tree = parse(source);
    let mut cursor = QueryCursor::new();
    let mut result: HashMap<(usize, usize, String), Vec<String>> = HashMap::new();
    let mut matches = cursor.matches(&q, tree.root_node(), source.as_bytes());
    while let Some(m) = matches.next() {
        for capture in m.captures {
            let node = capture.node;
            let name = q.capture_names()[capture.index as usize].to_owned();
            let entry = result
                .entry((node.start_byte(), node.end_byte(), node.kind().to_owned()))
                .or_default();
            if !entry.contains(&name) {
                entry.push(name);
            }
        }
    }
    result
}

/// The capture names of the first node whose text is `text`.
fn captures_of(
    captures: &HashMap<(usize, usize, String), Vec<String>>,
    source: &str,
    text: &str,
) -> Vec<String> {
    let mut hits: Vec<_> = captures
        .iter()
        .filter(|((start, end, _), _)| &source[*start..*end] == text)
        .collect();
    hits.sort_by_key(|((start, _, _), _)| *start);
    hits.first()
        .map(|(_, names)| (*names).clone())
        .unwrap_or_default()
}

#[test]
fn highlights_capture_the_documented_groups() {
    let source = "\
param fc1.weight: f32[2, 3] = zeros
graph mlp(x: f32[B, 3]) -> f32[B, 2] {
  %1 = MatMul(x, fc1.weight, transpose_b=true)
  h = helper(%1)
  g = grad(mlp)(x)
  return if h > 0.5 { \"yes\\n\" } else { none }
}
";
    let caps = highlight_captures(source);
    let expect = |text: &str, capture: &str| {
        let names = captures_of(&caps, source, text);
        assert_eq!(names, vec![capture.to_owned()], "captures of {text:?}");
    };
    expect("param", "keyword");
    expect("fc1.weight", "variable.member");
    expect("f32", "type.builtin");
    expect("B", "type");
    expect("zeros", "constant.builtin");
    expect("graph", "keyword.function");
    expect("mlp", "function");
    expect("x", "variable.parameter");
    expect("%1", "variable");
    expect("MatMul", "function.builtin");
    expect("transpose_b", "variable.parameter");
    expect("true", "boolean");
    expect("helper", "function.call");
    expect("grad", "function.builtin");
    expect("return", "keyword.return");
    expect("if", "keyword.conditional");
    expect(">", "operator");
    expect("0.5", "number.float");
    expect("2", "number");
    expect("\\n", "string.escape");
    expect("none", "constant.builtin");
}

#[test]
fn highlights_the_functional_transforms_as_builtins() {
    let source = "\
graph ste(x: f32[4]) {
  graph bprop(x, out, dout) {
    return (ClampScalar(dout, min=-1.0, max=1.0),)
  }
  return Round(x)
}
graph main(x: f32[3, 4], w: f32[4]) {
  a = vmap(ste, in_axes=(1, none), out_axes=1)(x, w)
  b = jacfwd(ste)(w)
  c = jacrev(ste, wrt=0)(w)
  d = hessian(ste)(w)
  e = checkpoint(ste)(w)
  f = jvp(ste)(w, w)
  g = hvp(ste)(w, w)
  return vmapped(a)
}
";
    let caps = highlight_captures(source);
    let expect = |text: &str, capture: &str| {
        let names = captures_of(&caps, source, text);
        assert_eq!(names, vec![capture.to_owned()], "captures of {text:?}");
    };
    for name in [
        "vmap",
        "jacfwd",
        "jacrev",
        "hessian",
        "checkpoint",
        "jvp",
        "hvp",
    ] {
        expect(name, "function.builtin");
    }
    expect("in_axes", "variable.parameter");
    expect("bprop", "function");
    expect("vmapped", "function.call");
}

#[test]
fn highlight_patterns_never_overlap_on_examples() {
    // No node gets two different captures, so editors that let the first pattern win and
    // editors that let the last one win highlight alike.
    for path in files_with_extension(&manifest_dir().join("../../testdata"), "mir") {
        let source = fs::read_to_string(&path).expect("a readable example");
        for ((start, end, kind), names) in highlight_captures(&source) {
            assert!(
                names.len() == 1,
                "{}: {kind} {:?} has several captures: {names:?}",
                path.display(),
                &source[start..end]
            );
        }
    }
}

// ------------------------------------------------------------------------------------
// Example files

#[test]
fn valid_examples_parse_without_errors() {
    let dir = manifest_dir().join("../../testdata");
    let files = files_with_extension(&dir, "mir");
    assert!(!files.is_empty(), "no examples in {}", dir.display());
    for path in files {
        let source = fs::read_to_string(&path).expect("a readable example");
        for (variant, text) in [
            ("", source.clone()),
            (" (with CRLF line endings)", source.replace('\n', "\r\n")),
        ] {
            let tree = parse(&text);
            let root = tree.root_node();
            assert_eq!(root.kind(), "source_file");
            if let Some(problem) = first_problem(root, &text) {
                panic!("{}{variant}: {problem}", path.display());
            }
            assert_eq!(
                root.end_byte(),
                text.len(),
                "{}: tree does not cover the file",
                path.display()
            );
        }
    }
}

#[test]
fn broken_examples_have_errors_but_parse() {
    let dir = manifest_dir().join("../../testdata/broken");
    let files = files_with_extension(&dir, "mir");
    assert!(!files.is_empty(), "no broken examples in {}", dir.display());
    for path in files {
        let source = fs::read_to_string(&path).expect("a readable example");
        let tree = parse(&source);
        let root = tree.root_node();
        assert!(
            root.has_error(),
            "{}: a broken example parsed without errors",
            path.display()
        );
        // Every prefix of a broken file parses too (what an editor sees while typing).
        for end in (0..=source.len()).filter(|&i| source.is_char_boundary(i)) {
            let _ = parse(&source[..end]);
        }
    }
}
