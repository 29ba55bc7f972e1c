//! Issue 14, finding 2: `mirdsl check` and the language server say the same
//! thing. Every fixture and a set of generated files (programs with errors of
//! every kind, and the examples mutated at random) are checked both ways; the
//! diagnostics must be identical: code, range and message, in order.
//! `MIRDSL_LSP_UNDER_TEST=PATH` runs this against another build.

use std::io::{BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{json, Value as Json};
use test_support::lsp::{frame, read_message};

fn program() -> String {
    std::env::var("MIRDSL_LSP_UNDER_TEST").unwrap_or_else(|_| env!("CARGO_BIN_EXE_mirdsl").into())
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn mir_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = entries.filter_map(|e| e.ok()).map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            mir_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "mir") {
            out.push(p);
        }
    }
}

/// One diagnostic as compared: code, 1-based start and end (line, column in
/// characters), message.
type Key = (String, u64, u64, u64, u64, String);

/// What `mirdsl check --format json` says of each file.
fn check(files: &[PathBuf]) -> Vec<Vec<Key>> {
    let out = Command::new(program())
        .arg("check")
        .arg("--format")
        .arg("json")
        .args(files)
        .output()
        .expect("mirdsl check runs");
    let all: Json = serde_json::from_slice(&out.stdout).expect("check prints JSON");
    files
        .iter()
        .map(|f| {
            let path = f.display().to_string();
            all.as_array()
                .unwrap()
                .iter()
                .filter(|d| d["file"] == path.as_str())
                .map(|d| {
                    (
                        d["code"].as_str().unwrap().to_string(),
                        d["line"].as_u64().unwrap(),
                        d["column"].as_u64().unwrap(),
                        d["end_line"].as_u64().unwrap(),
                        d["end_column"].as_u64().unwrap(),
                        d["message"].as_str().unwrap().to_string(),
                    )
                })
                .collect()
        })
        .collect()
}

/// What the server publishes for each file (opened one after another; UTF-32
/// positions, as `check` counts columns in characters).
fn serve(files: &[PathBuf]) -> Vec<Vec<Key>> {
    let mut child = Command::new(program())
        .arg("lsp")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("mirdsl lsp starts");
    let mut stdin = child.stdin.take().unwrap();
    let mut reader = BufReader::new(child.stdout.take().unwrap());
    let mut send = |m: Json| {
        stdin.write_all(&frame(m.to_string().as_bytes())).unwrap();
        stdin.flush().unwrap();
    };
    let mut next = move || -> Json { read_message(&mut reader).expect("the server closed") };
    send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "processId": null, "rootUri": null,
            "capabilities": {"general": {"positionEncodings": ["utf-32"]}},
        }}),
    );
    let init = next();
    // (A server that does not speak UTF-32 is read in UTF-16.)
    let utf16 = init["result"]["capabilities"]["positionEncoding"] != "utf-32";
    send(json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}));
    let mut out = Vec::new();
    for (i, f) in files.iter().enumerate() {
        // The file's own URI: the server reads the files it imports from
        // beside it, as `mirdsl check` does.
        let _ = i;
        let uri = format!("file://{}", std::fs::canonicalize(f).unwrap().display());
        let text = std::fs::read_to_string(f).unwrap();
        let lines: Vec<&str> = text.split('\n').collect();
        let column = |line: u64, col: u64| -> u64 {
            if !utf16 {
                return col;
            }
            let Some(l) = lines.get(line as usize) else {
                return col;
            };
            let mut units = 0;
            let mut chars = 0;
            for c in l.chars() {
                if units >= col {
                    break;
                }
                units += c.len_utf16() as u64;
                chars += 1;
            }
            chars
        };
        send(
            json!({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {
            "textDocument": {"uri": uri, "languageId": "mindir", "version": 1, "text": text}}}),
        );
        let published = loop {
            let m = next();
            if m["method"] == "textDocument/publishDiagnostics"
                && m["params"]["uri"] == uri.as_str()
            {
                break m;
            }
        };
        out.push(
            published["params"]["diagnostics"]
                .as_array()
                .unwrap()
                .iter()
                // `check` prints notes and help apart; the server adds them to
                // the message.
                .map(|d| {
                    let message = d["message"].as_str().unwrap();
                    let message = message.split("\nnote: ").next().unwrap();
                    let message = message.split("\nhelp: ").next().unwrap().to_string();
                    let (s, e) = (&d["range"]["start"], &d["range"]["end"]);
                    let (sl, el) = (s["line"].as_u64().unwrap(), e["line"].as_u64().unwrap());
                    (
                        d["code"].as_str().unwrap().to_string(),
                        sl + 1,
                        column(sl, s["character"].as_u64().unwrap()) + 1,
                        el + 1,
                        column(el, e["character"].as_u64().unwrap()) + 1,
                        message,
                    )
                })
                .collect(),
        );
    }
    send(json!({"jsonrpc": "2.0", "id": 2, "method": "shutdown", "params": null}));
    send(json!({"jsonrpc": "2.0", "method": "exit", "params": null}));
    let _ = child.wait();
    out
}

struct Rng(u64);

impl Rng {
    fn next(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

/// A program of about `graphs` graphs that calls graphs from other graphs
/// with arguments of right and wrong shapes, with errors of many kinds
/// (including errors inside callees, reached from several callers).
fn generated(graphs: usize, seed: u64) -> String {
    let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let shapes = ["f32[3]", "f32[2, 3]", "f32[3, 3]", "i64", "f32[B, 3]"];
    let bodies = [
        "  y = x * 2.0\n",
        "  y = MatMul(x, x)\n",
        "  y = ReduceSum(x, axis=1)\n",
        "  y = if x { x } else { Neg(x) }\n",
        "  y = Exp(Bogus(x))\n",
        "  y = Add(x, undefined_name)\n",
        "  y = ReLU(x)\n  unused = x\n",
        "  y = Transpose(x, perm=(1, 0))\n",
        "  y = x[0]\n",
        "  y = Cast(x, dtype=f16) + x\n",
        "  graph inner(v) { return v * v }\n  y = inner(x)\n",
        "  y = grad(fn(a) => ReduceSum(a * a))(x)\n",
    ];
    let mut out = String::new();
    out.push_str("param w: f32[3, 3] = normal(std=0.1, seed=1)\n\n");
    for g in 0..graphs {
        let shape = shapes[rng.next(shapes.len())];
        let typed = rng.next(3) > 0;
        let param = if typed {
            format!("x: {shape}")
        } else {
            "x".into()
        };
        out.push_str(&format!("graph g{g}({param}) {{\n"));
        out.push_str(bodies[rng.next(bodies.len())]);
        if g > 0 && rng.next(2) == 0 {
            let callee = rng.next(g);
            let arg = ["y", "x", "w", "1.0"][rng.next(4)];
            out.push_str(&format!("  z = g{callee}({arg})\n  return z\n}}\n\n"));
        } else {
            out.push_str("  return y\n}\n\n");
        }
    }
    out
}

/// A text with random edits (the same kind the incremental tests make).
fn mutated(text: &str, seed: u64) -> String {
    let mut rng = Rng(seed.wrapping_mul(0x2545_F491_4F6C_DD1D) | 1);
    let inserts = [
        "(",
        ")",
        "x",
        "+ 2",
        "}",
        "{",
        "\n",
        "Add(",
        ",",
        "f32[3]",
        "graph q() { return 1 }\n",
    ];
    let mut text = text.to_string();
    for _ in 0..3 {
        let mut at = rng.next(text.len() + 1);
        while !text.is_char_boundary(at) {
            at -= 1;
        }
        let mut end = (at + rng.next(6)).min(text.len());
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.replace_range(at..end, inserts[rng.next(inserts.len())]);
    }
    text
}

#[test]
fn check_and_the_server_report_the_same_diagnostics() {
    let mut files = Vec::new();
    mir_files(&root().join("testdata"), &mut files);
    mir_files(&root().join("crates/syntax/test_data"), &mut files);
    let fixtures = files.len();
    assert!(fixtures > 40, "{fixtures} fixtures");
    let examples: Vec<PathBuf> = files.clone();
    // Generated files beside them.
    let dir = std::env::temp_dir().join(format!("mirdsl-parity-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut write = |name: String, text: String| {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        files.push(p);
    };
    // The case: an error in `h`, and `main` calling `h`.
    write(
        "e0230.mir".into(),
        "graph h(x: f32[3]) -> f32[3] {\n  r = if x { x } else { Neg(x) }\n  return r\n}\n\ngraph main(x: f32[3]) {\n  return h(x)\n}\n".into(),
    );
    for seed in 1..=6 {
        write(
            format!("generated{seed}.mir"),
            generated(60 * seed as usize, seed),
        );
    }
    for (i, p) in examples.iter().enumerate().take(20) {
        let text = std::fs::read_to_string(p).unwrap();
        write(format!("mutated{i}.mir"), mutated(&text, i as u64 + 1));
    }
    let by_check = check(&files);
    let by_server = serve(&files);
    let mut total = 0;
    for ((f, c), s) in files.iter().zip(&by_check).zip(&by_server) {
        assert_eq!(c, s, "{} differs", f.display());
        total += c.len();
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert!(total > 300, "{total} diagnostics compared");
    eprintln!("{} files, {total} diagnostics compared", files.len());
}
