//! MindSpore's runtime actor sets (`*actor_set*.ir`) imported as what they
//! are: the data flow between the actors that run a kernel graph.
//!
//! The set (read by `irdump::actors`, both its detailed and its final form)
//! says which actor's output feeds which input of which actor, which weights
//! and constants each kernel reads, and, in the final form, every output's
//! type. It does not hold the kernels' attributes (a `Conv2D`'s stride is in
//! the kernel graph's dump, not here), so each kernel is an `Opaque` node of
//! its MindSpore primitive, with its printed type as the binding's
//! annotation, and the actor's name beside it. The data source's nodes are
//! the graph's inputs, then the weights the kernels read; the output actor's
//! (or, under control flow, a block's exit actor's) inputs are its result.
//! Actors that carry no data (data prepare, loop count) are comments. A
//! final-form set under control flow is a graph per block (`Base Block :
//! kernel_graph_2`), its entrance actor's outputs the block's inputs: the
//! control actors that join the blocks at run time are nodes like the rest.
//! An input from an actor later in the flow (a loop's back edge) is its
//! description, never dropped.

use std::collections::HashMap;

use irdump::actors::{Actor, ActorSet, Input};

use super::parse_abstract;
use crate::{ImportError, Imported};

/// An actor set as DSL text.
pub fn import(text: &str) -> Result<Imported, ImportError> {
    let set = irdump::actors::parse(text);
    if set.actors.is_empty() {
        return Err(ImportError::Malformed(
            "a runtime actor set with no actors (no `actor_name:` block, no `%N = ...` statement)"
                .into(),
        ));
    }
    let mut out = String::from(
        "# Imported from a MindSpore runtime actor set: the actors that run the kernel graph and\n\
         # the data between them. The set holds no kernel's attributes (they are in the kernel\n\
         # graph's dump): each kernel is an `Opaque` node of its MindSpore primitive.\n\n",
    );
    let groups: Vec<(String, Vec<usize>)> = if set.detailed {
        vec![("main".into(), (0..set.actors.len()).collect())]
    } else {
        let mut groups: Vec<(String, Vec<usize>)> = set
            .sections
            .iter()
            .enumerate()
            .map(|(s, sec)| {
                let members = (0..set.actors.len())
                    .filter(|&k| set.actors[k].section == s)
                    .collect();
                (graph_name(&sec.title), members)
            })
            .filter(|(_, m): &(String, Vec<usize>)| !m.is_empty())
            .collect();
        // `main` is the block with the output actor, else the first func
        // graph's (`Actor for func graph:`, control flow), else the first.
        let main = groups
            .iter()
            .position(|(_, m)| m.iter().any(|&k| set.actors[k].kind == "output"))
            .or_else(|| {
                set.sections
                    .iter()
                    .filter(|s| set.actors.iter().any(|a| set.sections[a.section] == **s))
                    .position(|s| !s.title.starts_with("kernel_graph"))
            })
            .unwrap_or(0);
        groups[main].0 = "main".into();
        groups.swap(0, main);
        groups
    };
    let mut used_names: Vec<String> = Vec::new();
    for (name, members) in &groups {
        let mut name = name.clone();
        while used_names.contains(&name) {
            name.push('_');
        }
        used_names.push(name.clone());
        out.push_str(&graph_text(&set, &name, members));
        out.push('\n');
    }
    Ok(Imported {
        text: out,
        weights: Vec::new(),
    })
}

/// `kernel_graph_2` stays; anything else becomes a DSL name.
fn graph_name(title: &str) -> String {
    let s: String = title
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    match s.chars().next() {
        None => "main".into(),
        Some(c) if c.is_ascii_digit() => format!("g{s}"),
        Some(_) => s,
    }
}

/// What an actor is in the DSL graph.
enum Role {
    /// The data source: its outputs are the graph's inputs.
    Source,
    /// A control-flow block's entrance: its outputs are the block's inputs.
    Entrance,
    /// The output or a block's exit: its inputs are the result.
    Result,
    /// Carries no data (data prepare, loop count, an actor without inputs
    /// or outputs): a comment.
    Control,
    /// A node.
    Node,
}

/// An actor's role in its graph: `has_output` says whether the graph has an
/// output actor (else a block's exit gives the result), `feeds` whether
/// another actor reads its outputs (then it is a node whatever its kind).
fn role(a: &Actor, entrance_inputs: bool, has_output: bool, feeds: bool) -> Role {
    match a.kind.as_str() {
        "data source" => Role::Source,
        "entrance" if entrance_inputs => Role::Entrance,
        "output" => Role::Result,
        "exit" if !has_output && !feeds => Role::Result,
        "data prepare" | "loop count" if !feeds => Role::Control,
        _ => Role::Node,
    }
}

/// A constant as printed, as a DSL operand: numbers and booleans as such,
/// tuples of them, anything else (a tensor) its printed text as a string.
fn const_operand(raw: &str) -> String {
    let v = match raw.strip_prefix("ValueNode<") {
        Some(rest) => rest.split_once("> ").map_or(rest, |(_, v)| v),
        None => raw,
    };
    let v = v.trim();
    let inner = |w: &str| {
        ["I64(", "I32(", "U8(", "F32(", "F64(", "F16(", "Bool("]
            .iter()
            .find_map(|p| w.strip_prefix(p))
            .and_then(|r| r.strip_suffix(')'))
            .map(str::to_string)
    };
    let scalar = |w: &str| -> Option<String> {
        let w = w.trim();
        if let Some(x) = inner(w) {
            return Some(if w.starts_with("Bool(") {
                (x != "0").to_string()
            } else {
                x
            });
        }
        match w {
            "true" | "false" => Some(w.to_string()),
            "None" => Some("none".into()),
            _ => w.parse::<f64>().is_ok().then(|| w.to_string()),
        }
    };
    if let Some(s) = scalar(v) {
        return s;
    }
    if let Some(items) = v.strip_prefix('(').and_then(|r| r.strip_suffix(')')) {
        let parts: Option<Vec<String>> = items
            .split(',')
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .map(scalar)
            .collect();
        if let Some(parts) = parts {
            return match parts.len() {
                0 => "()".into(),
                1 => format!("({},)", parts[0]),
                _ => format!("({})", parts.join(", ")),
            };
        }
    }
    let flat: String = v.split_whitespace().collect::<Vec<_>>().join(" ");
    format!("{flat:?}")
}

/// The items of `<A> <B> -> <C> <D>` on one side.
fn items(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = s;
    while let Some(start) = rest.find('<') {
        let after = &rest[start + 1..];
        let Some(end) = super::matching(after, '<', '>') else {
            break;
        };
        out.push(&after[..end]);
        rest = &after[end + 1..];
    }
    out
}

/// The final form's output types (`# type : ... -> <Tensor[Float32]>` with
/// `# shape : ... -> <(4, 8)>`), as DSL types; `None` where one is not a type
/// the DSL writes.
fn output_types(a: &Actor) -> Option<Vec<String>> {
    let types = items(a.types.as_deref()?.split_once("->")?.1);
    let shapes = items(a.shapes.as_deref()?.split_once("->")?.1);
    if types.len() != shapes.len() || types.is_empty() {
        return None;
    }
    types
        .iter()
        .zip(&shapes)
        .map(|(t, s)| {
            let t = t
                .strip_prefix("Ref[")
                .and_then(|r| r.strip_suffix(']'))
                .unwrap_or(t);
            if !t.starts_with("Tensor[") {
                return None;
            }
            let ty = parse_abstract(&format!("{t}, {s}"))?;
            (!matches!(ty, ir::Ty::Unknown)).then(|| ty.to_string())
        })
        .collect()
}

/// The types of a final-form actor's inputs (`# type : <A> <B> -> ...`), by index.
fn input_types(a: &Actor) -> Vec<Option<String>> {
    let (Some(t), Some(s)) = (a.types.as_deref(), a.shapes.as_deref()) else {
        return Vec::new();
    };
    let (t, s) = (
        items(t.split_once("->").map_or(t, |x| x.0)),
        items(s.split_once("->").map_or(s, |x| x.0)),
    );
    t.iter()
        .zip(s.iter().chain(std::iter::repeat(&"")))
        .map(|(t, s)| {
            let t = t
                .strip_prefix("Ref[")
                .and_then(|r| r.strip_suffix(']'))
                .unwrap_or(t);
            let ty = parse_abstract(&format!("{t}, {s}"))?;
            (!matches!(ty, ir::Ty::Unknown)).then(|| ty.to_string())
        })
        .collect()
}

fn graph_text(set: &ActorSet, name: &str, members: &[usize]) -> String {
    // The detailed form lists an actor again in a section of its own kind
    // (`[No input kernel actors:1]`): one node.
    let mut seen = std::collections::HashSet::new();
    let actors: Vec<&Actor> = members
        .iter()
        .map(|&k| &set.actors[k])
        .filter(|a| seen.insert(a.id.as_deref().unwrap_or(&a.name)))
        .collect();
    let entrance_inputs = !set.detailed;
    // Inputs name actors by name (detailed form) or by id (final form).
    let by_name: HashMap<&str, usize> = actors
        .iter()
        .enumerate()
        .rev()
        .map(|(i, a)| (a.id.as_deref().unwrap_or(&a.name), i))
        .collect();
    let has_output = actors.iter().any(|a| a.kind == "output");
    let mut feeds = vec![false; actors.len()];
    for a in &actors {
        for (_, inp) in &a.inputs {
            if let Input::Actor { actor, .. } = inp {
                if let Some(&j) = by_name.get(actor.as_str()) {
                    feeds[j] = true;
                }
            }
        }
    }
    let roles: Vec<Role> = actors
        .iter()
        .enumerate()
        .map(|(i, a)| role(a, entrance_inputs, has_output, feeds[i]))
        .collect();
    // The graph's inputs: the data source's nodes (or the entrance's
    // outputs), then the weights, in the order first read.
    let mut params: Vec<(String, Option<String>)> = Vec::new();
    let mut source_of: HashMap<(usize, usize), String> = HashMap::new();
    for (i, a) in actors.iter().enumerate() {
        match roles[i] {
            Role::Source => {
                // Its outputs' types are its inputs' (final form).
                let tys = output_types(a).unwrap_or_default();
                for (o, d) in a.data_nodes.iter().enumerate() {
                    let p = dsl_name(d);
                    source_of.insert((i, o), p.clone());
                    params.push((p, tys.get(o).cloned()));
                }
            }
            Role::Entrance => {
                let used = actors
                    .iter()
                    .flat_map(|b| &b.inputs)
                    .filter_map(|(_, inp)| match inp {
                        Input::Actor { actor, output }
                            if by_name.get(actor.as_str()) == Some(&i) =>
                        {
                            Some(*output)
                        }
                        _ => None,
                    })
                    .max();
                // Named as the parameters it receives (`param_x`), if printed.
                for o in 0..used.map_or(0, |m| m + 1).max(a.inputs.len()) {
                    let p = match a.inputs.get(o) {
                        Some((_, Input::Weight(w) | Input::Data(w))) => {
                            dsl_name(w.trim_start_matches('▸'))
                        }
                        _ => format!("in{o}"),
                    };
                    source_of.insert((i, o), p.clone());
                    params.push((p, None));
                }
            }
            _ => {}
        }
    }
    for (i, a) in actors.iter().enumerate() {
        if matches!(roles[i], Role::Entrance) {
            continue;
        }
        let tys = input_types(a);
        for (idx, inp) in &a.inputs {
            if let Input::Weight(w) = inp {
                let p = dsl_name(w);
                if !params.iter().any(|(n, _)| *n == p) {
                    params.push((p, tys.get(*idx).cloned().flatten()));
                }
            }
        }
    }
    // Nodes in data order (inputs first; a loop's back edge stays as it is).
    let n = actors.len();
    let deps: Vec<Vec<usize>> = actors
        .iter()
        .map(|a| {
            a.inputs
                .iter()
                .filter_map(|(_, inp)| match inp {
                    Input::Actor { actor, .. } => by_name.get(actor.as_str()).copied(),
                    _ => None,
                })
                .collect()
        })
        .collect();
    let mut order = Vec::with_capacity(n);
    let mut placed = vec![false; n];
    loop {
        let mut progress = false;
        for i in 0..n {
            if !placed[i] && deps[i].iter().all(|&d| placed[d] || d == i) {
                placed[i] = true;
                order.push(i);
                progress = true;
            }
        }
        if !progress {
            // A cycle: the first actor left goes next, its later inputs described.
            match (0..n).find(|&i| !placed[i]) {
                Some(i) => {
                    placed[i] = true;
                    order.push(i);
                }
                None => break,
            }
        }
    }
    let single: Vec<bool> = actors
        .iter()
        .map(|a| a.outputs_num == Some(1) || output_types(a).is_some_and(|t| t.len() == 1))
        .collect();
    let var = |i: usize| format!("%{}", i);
    let mut done = vec![false; n];
    let mut body = String::new();
    let mut result: Option<String> = None;
    let operand = |a: &Actor, inp: &Input, done: &[bool]| -> String {
        match inp {
            Input::Actor { actor, output } => match by_name.get(actor.as_str()) {
                Some(&j) => {
                    if let Some(p) = source_of.get(&(j, *output)) {
                        p.clone()
                    } else if !done[j] {
                        format!(
                            "{:?}",
                            format!("output {output} of actor {actor}, which runs later")
                        )
                    } else if single[j] {
                        var(j)
                    } else {
                        format!("{}[{output}]", var(j))
                    }
                }
                None => format!(
                    "{:?}",
                    format!(
                        "output {output} of actor {actor}, not in this set (of {})",
                        a.name
                    )
                ),
            },
            Input::Weight(w) => dsl_name(w),
            Input::Data(d) => dsl_name(d),
            Input::Const(c) => const_operand(c),
        }
    };
    for i in order {
        let a = actors[i];
        let args: Vec<String> = a
            .inputs
            .iter()
            .map(|(_, inp)| operand(a, inp, &done))
            .collect();
        match roles[i] {
            Role::Source | Role::Entrance => {}
            Role::Control => {
                body.push_str(&format!("  # actor {} ({}): control only", a.name, a.kind));
                if !a.controls.is_empty() {
                    body.push_str(&format!(", after {}", a.controls.join(", ")));
                }
                body.push('\n');
            }
            Role::Result => {
                body.push_str(&format!("  # actor {} ({})\n", a.name, a.kind));
                result = Some(match args.len() {
                    1 => args[0].clone(),
                    _ => format!("({})", args.join(", ")),
                });
            }
            Role::Node => {
                let prim = a
                    .prim()
                    .map(str::to_string)
                    .unwrap_or_else(|| actor_type(a));
                let ty = output_types(a).map(|t| match t.len() {
                    1 => t[0].clone(),
                    _ => format!("({})", t.join(", ")),
                });
                let mut parts = args;
                parts.push(format!("name={prim:?}"));
                body.push_str(&format!(
                    "  {}{} = Opaque({})  # actor {} ({})",
                    var(i),
                    ty.map(|t| format!(": {t}")).unwrap_or_default(),
                    parts.join(", "),
                    a.name,
                    a.kind
                ));
                if !a.controls.is_empty() {
                    body.push_str(&format!(", after {} actor(s)", a.controls.len()));
                }
                body.push('\n');
            }
        }
        done[i] = true;
    }
    let params_text: Vec<String> = params
        .iter()
        .map(|(p, t)| match t {
            Some(t) => format!("{p}: {t}"),
            None => p.clone(),
        })
        .collect();
    format!(
        "graph {name}({}) {{\n{body}  return {}\n}}\n",
        params_text.join(", "),
        result.unwrap_or_else(|| "()".into())
    )
}

/// What a non-kernel actor is, as a name: its kind's (`gather` ->
/// `GatherActor`), else its name up to its argument (`RunGraph[kernel_graph2]`
/// -> `RunGraph`).
fn actor_type(a: &Actor) -> String {
    if a.kind != "actor" {
        return a.kind_name();
    }
    let head = a.name.split('[').next().unwrap_or(&a.name);
    if head.is_empty() {
        "Actor".into()
    } else {
        head.to_string()
    }
}

/// A weight's or input's name as a DSL name (`inputs0`; `stem.weight` is
/// `stem_weight`: a graph input's name has no dots).
fn dsl_name(s: &str) -> String {
    let mut t: String = s
        .trim()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    if !t.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
        t.insert(0, '_');
    }
    t
}
