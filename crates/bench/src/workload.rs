//! The primitives the generated workloads call, read from
//! `workloads/ops.txt` (data, so the generators name no ops themselves).

use std::sync::OnceLock;

/// A primitive call the fuzzer may write: its name, positional tensor
/// inputs, and the keyword attributes to pick from.
pub struct FuzzPrim {
    pub name: &'static str,
    pub inputs: usize,
    pub attrs: Vec<&'static str>,
}

/// The tables of `workloads/ops.txt`.
pub struct Workload {
    pub fuzz: Vec<FuzzPrim>,
    pub layer_unary: Vec<&'static str>,
    pub workspace_unary: Vec<&'static str>,
    pub gate: &'static str,
    /// The dump benchmark's stage edit: calls of `.0` become calls of `.1`.
    pub stage_swap: (&'static str, &'static str),
}

const TEXT: &str = include_str!("../workloads/ops.txt");

/// The workload tables (parsed once; the file is part of the build, so a
/// malformed line is a bug caught by this crate's test).
pub fn ops() -> &'static Workload {
    static ONCE: OnceLock<Workload> = OnceLock::new();
    ONCE.get_or_init(|| parse(TEXT).unwrap_or_else(|e| panic!("workloads/ops.txt: {e}")))
}

fn parse(text: &'static str) -> Result<Workload, String> {
    let mut sections: Vec<(&str, Vec<(usize, &str)>)> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            sections.push((name, Vec::new()));
        } else if let Some((_, lines)) = sections.last_mut() {
            lines.push((i + 1, line));
        } else {
            return Err(format!("line {}: an entry before any [section]", i + 1));
        }
    }
    let section = |name: &str| -> Result<&Vec<(usize, &'static str)>, String> {
        sections
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, l)| l)
            .ok_or_else(|| format!("no [{name}] section"))
    };
    let names = |name: &str| -> Result<Vec<&'static str>, String> {
        Ok(section(name)?.iter().map(|(_, l)| *l).collect())
    };
    let mut fuzz = Vec::new();
    for &(n, line) in section("fuzz")? {
        let (head, attrs) = match line.split_once(' ') {
            Some((name, rest)) => match rest.split_once(' ') {
                Some((inputs, attrs)) => ((name, inputs), Some(attrs)),
                None => ((name, rest), None),
            },
            None => return Err(format!("line {n}: `NAME INPUTS [attrs]` expected")),
        };
        let inputs = head
            .1
            .parse()
            .map_err(|_| format!("line {n}: `{}` is not a count of inputs", head.1))?;
        fuzz.push(FuzzPrim {
            name: head.0,
            inputs,
            attrs: attrs.map_or_else(Vec::new, |a| a.split(" | ").collect()),
        });
    }
    let one = |name: &str| -> Result<&'static str, String> {
        match names(name)?.as_slice() {
            [op] => Ok(op),
            _ => Err(format!("[{name}] must have one line")),
        }
    };
    let stage_swap = match names("stage_swap")?.as_slice() {
        [from, to] => (*from, *to),
        _ => return Err("[stage_swap] must have two lines".into()),
    };
    Ok(Workload {
        fuzz,
        layer_unary: names("layer_unary")?,
        workspace_unary: names("workspace_unary")?,
        gate: one("gate")?,
        stage_swap,
    })
}

#[cfg(test)]
mod tests {
    /// Every op a workload calls is a registry primitive with that many
    /// inputs, and the tables parse.
    #[test]
    fn workload_ops_are_registry_primitives() {
        let w = super::ops();
        assert!(!w.fuzz.is_empty() && !w.layer_unary.is_empty());
        for p in &w.fuzz {
            let def =
                ops::lookup(p.name).unwrap_or_else(|| panic!("{} is not a primitive", p.name));
            assert!(
                def.input_count() >= p.inputs,
                "{}: {} inputs",
                p.name,
                p.inputs
            );
            for a in &p.attrs {
                let key = a.split('=').next().unwrap();
                assert!(def.param(key).is_some(), "{}: no attribute {key}", p.name);
            }
        }
        let unary = w.layer_unary.iter().chain(&w.workspace_unary);
        for op in unary.chain([&w.gate, &w.stage_swap.0, &w.stage_swap.1]) {
            let def = ops::lookup(op).unwrap_or_else(|| panic!("{op} is not a primitive"));
            assert_eq!(def.input_count(), 1, "{op}");
        }
    }
}
