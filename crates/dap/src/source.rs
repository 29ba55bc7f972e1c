//! Where nodes are: the linked program's virtual ranges as files and lines.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use analysis::link::Linked;
use ir::{Body, GraphId, NodeId, NodeKind, Program, TextRange};

/// A place in a module: 1-based lines and columns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Loc {
    pub module: usize,
    pub line: u32,
    pub column: u32,
    pub end_line: u32,
    pub end_column: u32,
}

pub struct ModuleSrc {
    pub path: PathBuf,
    pub text: Arc<str>,
    line_starts: Vec<u32>,
    /// Lines where a statement (a CNode or a graph's output) starts.
    pub lines: BTreeSet<u32>,
}

impl ModuleSrc {
    /// Whether the module is a file on disk (else a client asks for its text).
    pub fn on_disk(&self) -> bool {
        self.path.is_file()
    }

    fn line_col(&self, offset: u32) -> (u32, u32) {
        let line = self.line_starts.partition_point(|&s| s <= offset).max(1);
        let start = self.line_starts[line - 1];
        let col = self.text[start as usize..(offset as usize).min(self.text.len())]
            .chars()
            .count() as u32;
        (line as u32, col + 1)
    }
}

/// A program a transformation made (a gradient program of `grad`), printed
/// as DSL text: a read-only document for the statements it has without a
/// source line of their own.
pub struct Generated {
    pub name: String,
    pub text: Arc<str>,
    lines: HashMap<NodeId, u32>,
}

/// The modules of a linked program with their line tables, and the
/// generated documents made so far (numbered after the modules).
pub struct SourceMap {
    bases: Vec<u32>,
    pub modules: Vec<ModuleSrc>,
    generated: Mutex<Vec<Generated>>,
}

/// The lines [`ir::print::print_body`] writes each node of `g` on: the
/// header, one line per CNode, the nested graphs, `return`, the brace.
fn printed_lines(body: &Body, g: GraphId, line: &mut u32, out: &mut HashMap<NodeId, u32>) {
    *line += 1;
    for &n in &body.graph(g).nodes {
        *line += 1;
        out.insert(n, *line);
    }
    for child in body.children(g) {
        printed_lines(body, child, line, out);
    }
    *line += 1;
    if let Some(o) = body.graph(g).output {
        out.entry(o).or_insert(*line);
    }
    *line += 1;
}

impl SourceMap {
    pub fn new(linked: &Linked, program: &Program) -> SourceMap {
        let mut modules: Vec<ModuleSrc> = linked
            .graph
            .modules
            .iter()
            .map(|m| {
                let mut line_starts = vec![0u32];
                for (i, b) in m.text.bytes().enumerate() {
                    if b == b'\n' {
                        line_starts.push(i as u32 + 1);
                    }
                }
                ModuleSrc {
                    path: m.path.clone(),
                    text: m.text.clone(),
                    line_starts,
                    lines: BTreeSet::new(),
                }
            })
            .collect();
        let mut map = SourceMap {
            bases: linked.bases.clone(),
            modules: Vec::new(),
            generated: Mutex::new(Vec::new()),
        };
        std::mem::swap(&mut map.modules, &mut modules);
        for (_, body) in &program.graphs {
            for g in &body.graphs {
                let nodes = g
                    .nodes
                    .iter()
                    .copied()
                    .filter(|&n| matches!(body.node(n).kind, NodeKind::Apply(_)))
                    .chain(g.output);
                for n in nodes {
                    if let Some(l) = body.node(n).span.and_then(|s| map.locate(s)) {
                        map.modules[l.module].lines.insert(l.line);
                    }
                }
                // The `return` line: a run stops there as the graph returns.
                if let Some(l) = g.span.and_then(|s| map.locate(s)) {
                    if let Some(r) = map.return_line(l.module, l.line, l.end_line) {
                        map.modules[l.module].lines.insert(r);
                    }
                }
            }
        }
        map
    }

    /// The module and lines of a virtual range.
    pub fn locate(&self, r: TextRange) -> Option<Loc> {
        let start = u32::from(r.start());
        let m = self.bases.partition_point(|b| *b <= start).checked_sub(1)?;
        let module = self.modules.get(m)?;
        let base = self.bases[m];
        let s = start - base;
        let e = (u32::from(r.end()).saturating_sub(base)).max(s);
        if s as usize > module.text.len() {
            return None;
        }
        let (line, column) = module.line_col(s);
        let (end_line, end_column) = module.line_col(e.min(module.text.len() as u32));
        Some(Loc {
            module: m,
            line,
            column,
            end_line,
            end_column,
        })
    }

    /// The last line from `first` to `last` of a module that starts with
    /// `return` (a graph's return statement).
    pub fn return_line(&self, module: usize, first: u32, last: u32) -> Option<u32> {
        let text = &self.modules.get(module)?.text;
        let lines: Vec<&str> = text.lines().collect();
        (first..=last).rev().find(|&l| {
            lines
                .get(l as usize - 1)
                .is_some_and(|t| t.trim_start().starts_with("return"))
        })
    }

    /// Where `node` of the generated top-level graph `name` is in its
    /// printed document (made on first use); documents are numbered after
    /// the modules.
    pub fn locate_generated(&self, name: &str, body: &Body, node: NodeId) -> Option<Loc> {
        let mut docs = self.generated.lock().expect("generated documents");
        let k = match docs.iter().position(|d| d.name == name) {
            Some(k) => k,
            None => {
                let mut lines = HashMap::new();
                printed_lines(body, body.root(), &mut 0, &mut lines);
                docs.push(Generated {
                    name: name.to_string(),
                    text: Arc::from(ir::print::print_body(body)),
                    lines,
                });
                docs.len() - 1
            }
        };
        let line = *docs[k].lines.get(&node)?;
        Some(Loc {
            module: self.modules.len() + k,
            line,
            column: 1,
            end_line: line,
            end_column: 1,
        })
    }

    /// A generated document's name and text, by its number.
    pub fn generated(&self, module: usize) -> Option<(String, Arc<str>)> {
        let docs = self.generated.lock().expect("generated documents");
        let d = docs.get(module.checked_sub(self.modules.len())?)?;
        Some((d.name.clone(), d.text.clone()))
    }

    /// The number of documents: modules and generated ones.
    pub fn documents(&self) -> usize {
        self.modules.len() + self.generated.lock().expect("generated documents").len()
    }

    /// The module a client's path names.
    pub fn module_of_path(&self, path: &str) -> Option<usize> {
        let want = canonical(Path::new(path));
        self.modules
            .iter()
            .position(|m| canonical(&m.path) == want || m.path.as_os_str() == path)
    }

    /// The statement line a breakpoint on `line` goes to: that line, or the
    /// next one with a statement (within 50 lines).
    pub fn statement_line(&self, module: usize, line: u32) -> Option<u32> {
        if module >= self.modules.len() {
            // A generated document: every line but the braces is a statement.
            return Some(line);
        }
        self.modules[module]
            .lines
            .range(line..line.saturating_add(50))
            .next()
            .copied()
    }
}

fn canonical(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf())
}
