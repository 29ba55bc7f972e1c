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

/// `expr` with each dotted name (`a.b.c`, outside string literals) that
/// `renamed` lists replaced by its new name.
fn rename_dotted(expr: &str, renamed: &[(&str, &str)]) -> String {
    if renamed.is_empty() {
        return expr.to_string();
    }
    let b = expr.as_bytes();
    let word = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let mut out = String::new();
    let mut i = 0;
    let mut in_string = false;
    while i < b.len() {
        let c = b[i];
        if c == b'"' {
            in_string = !in_string;
        }
        let starts = !in_string
            && (c.is_ascii_alphabetic() || c == b'_')
            && (i == 0 || !(word(b[i - 1]) || b[i - 1] == b'.'));
        if !starts {
            let ch = expr[i..].chars().next().unwrap_or(' ');
            out.push(ch);
            i += ch.len_utf8();
            continue;
        }
        // The longest run of words joined by dots.
        let mut end = i;
        while end < b.len()
            && (word(b[end]) || (b[end] == b'.' && end + 1 < b.len() && word(b[end + 1])))
        {
            end += 1;
        }
        let token = &expr[i..end];
        match renamed.iter().find(|(from, _)| *from == token) {
            Some((_, to)) => out.push_str(to),
            None => out.push_str(token),
        }
        i = end;
    }
    out
}

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
            let bindable = is_ident(&b.0) || b.0.split('.').all(is_ident);
            if bindable && !names.iter().any(|n| n.0 == b.0) {
                names.push(b);
            }
        }
        names.reverse();
        // A dotted name (an imported model's `block.act.div`) cannot name a
        // parameter: it is bound as `__dap_vN` and the expression's uses of it
        // are renamed.
        let params: Vec<String> = names
            .iter()
            .enumerate()
            .map(|(k, b)| {
                if is_ident(&b.0) {
                    b.0.clone()
                } else {
                    format!("__dap_v{k}")
                }
            })
            .collect();
        let renamed: Vec<(&str, &str)> = names
            .iter()
            .zip(&params)
            .filter(|(b, p)| b.0 != **p)
            .map(|(b, p)| (b.0.as_str(), p.as_str()))
            .collect();
        let expr = &rename_dotted(expr, &renamed);
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

#[cfg(test)]
mod tests {
    use super::rename_dotted;

    #[test]
    fn dotted_names_are_renamed_outside_strings() {
        let r = [("block.act.div", "__dap_v0"), ("fc.x", "__dap_v1")];
        assert_eq!(
            rename_dotted("ReduceMax(Abs(block.act.div)) + fc.x * 2", &r),
            "ReduceMax(Abs(__dap_v0)) + __dap_v1 * 2"
        );
        // Not a part of a longer name, nor inside a string.
        assert_eq!(
            rename_dotted("block.act.divx + a.fc.x + f(\"fc.x\")", &r),
            "block.act.divx + a.fc.x + f(\"fc.x\")"
        );
    }
}
