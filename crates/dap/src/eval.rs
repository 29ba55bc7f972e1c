//! `evaluate` and breakpoint conditions: a DSL expression in a frame's scope.
//!
//! The expression becomes the body of a graph appended to the program's root
//! file, `graph __dap_eval(NAME, ...) { return EXPR }`, whose parameters are
//! the frame's variables; it is checked with the whole program (so it may
//! call the program's graphs and use its weights) and run on a fresh
//! executor with the frame's values and the weights' current values.

use std::path::PathBuf;
use std::sync::Arc;

use exec::Value;

const EVAL_GRAPH: &str = "__dap_eval";

/// What evaluating needs of the debuggee.
#[derive(Clone)]
pub struct Evaluator {
    pub root: PathBuf,
    pub text: Arc<str>,
    pub base_dir: PathBuf,
}

fn is_ident(s: &str) -> bool {
    let mut c = s.chars();
    c.next()
        .is_some_and(|f| f.is_ascii_alphabetic() || f == '_')
        && c.all(|x| x.is_ascii_alphanumeric() || x == '_')
}

impl Evaluator {
    /// The value of `expr` with `scope`'s names bound and the weights at
    /// `weights`' values.
    pub fn evaluate(
        &self,
        expr: &str,
        scope: &[(String, Value)],
        weights: &[(String, Value)],
    ) -> Result<Value, String> {
        let expr = expr.trim();
        if expr.is_empty() {
            return Err("nothing to evaluate".into());
        }
        if expr.contains('\n') || expr.contains('}') {
            return Err("evaluate takes one expression on one line".into());
        }
        // The innermost binding of a name wins.
        let mut names: Vec<&(String, Value)> = Vec::new();
        for b in scope.iter().rev() {
            if is_ident(&b.0) && !names.iter().any(|n| n.0 == b.0) {
                names.push(b);
            }
        }
        names.reverse();
        let params: Vec<&str> = names.iter().map(|b| b.0.as_str()).collect();
        let mut text = String::from(&*self.text);
        if !text.ends_with('\n') {
            text.push('\n');
        }
        let start = text.len();
        text.push_str(&format!(
            "graph {EVAL_GRAPH}({}) {{\n  return {expr}\n}}\n",
            params.join(", ")
        ));
        let linked = analysis::link::link(
            &self.root,
            Some(Arc::from(text.as_str())),
            &analysis::modules::FsLoader,
        );
        let errors: Vec<String> = linked.diagnostics[0]
            .iter()
            .filter(|d| d.severity == analysis::Severity::Error)
            .filter(|d| usize::from(d.range.start()) >= start)
            .map(|d| d.message.clone())
            .collect();
        if !errors.is_empty() {
            return Err(errors.join("; "));
        }
        let program = linked.analysis.source.program();
        if program.graph(EVAL_GRAPH).is_none() {
            return Err(format!("`{expr}` is not an expression"));
        }
        let options = exec::ExecOptions {
            base_dir: self.base_dir.clone(),
            ..exec::ExecOptions::default()
        };
        let mut ex = exec::Executor::new(&program, options);
        for (name, v) in weights {
            // Weights of the root file keep their names in the linked program.
            let _ = ex.set_weight(name, v.clone());
        }
        let args: Vec<Value> = names.iter().map(|b| b.1.clone()).collect();
        ex.call(EVAL_GRAPH, args).map_err(|e| e.message)
    }
}
