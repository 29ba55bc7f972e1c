//! MindSpore's runtime actor sets (`*actor_set*.ir`), as located documents.
//!
//! Beside the graphs, MindSpore's runtime writes how it will run a kernel
//! graph: one actor per kernel and per piece of plumbing (data source,
//! output, loop count, control flow's entrance, switch, gather, stack and
//! exit actors, fused actors), and the arrows between them. Two forms:
//!
//! - the detailed one (`0_actor_set_pipeline_kernel_graph_0.ir`, then one
//!   per optimisation of the set: `1_..._invalid_data_arrow_elimination`,
//!   `2_..._multi_actor_fusion`, `3_..._batch_data_arrow_fusion`): sections
//!   (`[Kernel actors:102]`), each actor a block of tab-indented fields:
//!
//!   ```text
//!   [Kernel actors:102]
//!       actor_name:0_Default/.../Conv2D-op0    actor_id:3
//!           kernel_name:Default/.../Conv2D-op0    stream id:0    inputs_num:2 ...
//!           device_tensor_store_keys:1
//!                to_input_index:1    from_node_name:stem.weight, debug_name: ...
//!           input_data_arrow_actors:1
//!                from_actor_name:kernel_graph_0_HostDSActor    from_output_index:0    to_input_index:0
//!           output_data_arrows:2
//!                from_output_node:Conv2D-op0    from_output_index:0    to_actor_name:1_...    to_input_index:0    flag:0
//!   ```
//!
//! - the final one (`final_actor_set_kernel_graph_0.ir`), a statement per
//!   actor with its inputs, the actors it waits for, shapes and types, in
//!   blocks per kernel graph under control flow (`Base Block : kernel_graph_2`):
//!
//!   ```text
//!   %2 = kernel_graph0:Conv2D-op0(%1[0], %param_stem.weight) op control(%0)
//!       # shape : <(4, 3, 32, 32)> <(8, 3, 3, 3)> -> <(4, 8, 32, 32)>
//!       # type : <Tensor[Float32]> <Ref[Tensor[Float32]]> -> <Tensor[Float32]>
//!       # AID : 0_Default/network-WithLossCell/_backbone-ResNet/stem-Conv2d/Conv2D-op0
//!   ```
//!
//! [`parse`] reads either into one model: the actors (name, kind, kernel,
//! inputs by index, control inputs, output types where printed) and every
//! mention of an actor by name, with byte ranges. Like the graph dumps'
//! parser it never fails.

use std::ops::Range;

/// A parsed actor set.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ActorSet {
    /// Which form the file is in.
    pub detailed: bool,
    /// Sections (`[Kernel actors:102]`) in the detailed form; blocks (`Base
    /// Block : kernel_graph_2`, or one unnamed) in the final one.
    pub sections: Vec<Section>,
    pub actors: Vec<Actor>,
    /// Every mention of an actor other than its definition, in text order:
    /// the range and the actor's index.
    pub uses: Vec<(Range<usize>, usize)>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Section {
    /// `Kernel actors`, `Entrance actors`, `kernel_graph_2` (a final block).
    pub title: String,
    pub title_range: Range<usize>,
    /// From its title to the next one.
    pub range: Range<usize>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Actor {
    /// `0_Default/network-WithLossCell/_backbone-ResNet/stem-Conv2d/Conv2D-op0`,
    /// `kernel_graph_0_HostDSActor` (the final form's `# AID :`).
    pub name: String,
    /// Where the name is defined: `actor_name:NAME` (detailed), the
    /// statement's `%N` (final).
    pub name_range: Range<usize>,
    /// The actor's block (detailed) or statement and comments (final).
    pub range: Range<usize>,
    /// The section or block it is in.
    pub section: usize,
    /// The final form's local id (`%2`), unique within its block.
    pub id: Option<String>,
    /// What it is: `kernel`, `data source`, `output`, `loop count`,
    /// `data prepare`, `entrance`, `exit`, `fusion`, ... (from its section's
    /// title or its name).
    pub kind: String,
    /// The kernel it launches: `Default/.../Conv2D-op0` (detailed
    /// `kernel_name`), `kernel_graph0:Conv2D-op0` (final).
    pub kernel: Option<String>,
    /// Inputs by index.
    pub inputs: Vec<(usize, Input)>,
    /// The actors it waits for (control arrows in).
    pub controls: Vec<String>,
    /// Data it sends on.
    pub outputs: Vec<Arrow>,
    /// The number of outputs when printed (`outputs_num:5`), else the
    /// count of the final form's output types.
    pub outputs_num: Option<usize>,
    /// The final form's `# shape :` and `# type :` lines (`<(4, 8)> ->
    /// <(4, 8)>`).
    pub shapes: Option<String>,
    pub types: Option<String>,
    /// The data source's nodes (`inputs0`, `inputs1`): the graph's inputs.
    pub data_nodes: Vec<String>,
}

/// Data sent on: (the sender's output index, the receiving actor, its input index).
pub type Arrow = (usize, String, usize);

/// Where an actor's input comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum Input {
    /// Another actor's output: the actor by name (detailed form) or by its
    /// id in the block (`%3`, final form).
    Actor { actor: String, output: usize },
    /// A weight kept on the device (`stem.weight`).
    Weight(String),
    /// A constant, as printed (`ValueNode<FP32Imm> 1e-05`, `F32(1e-05)`,
    /// `Tensor(shape=[4], ...)`).
    Const(String),
    /// A graph input by name (the final form's data source: `param_inputs0`).
    Data(String),
}

impl Actor {
    /// Its kind as a type name: `gather` -> `GatherActor`, `data source` ->
    /// `DataSourceActor`.
    pub fn kind_name(&self) -> String {
        let mut out: String = self
            .kind
            .split(' ')
            .map(|w| {
                let mut c = w.chars();
                c.next()
                    .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
                    .unwrap_or_default()
            })
            .collect();
        out.push_str("Actor");
        out
    }

    /// The primitive its kernel runs, as MindSpore names it (`Conv2D` from
    /// `Default/.../Conv2D-op0` or `kernel_graph0:Conv2D-op0`).
    pub fn prim(&self) -> Option<&str> {
        let k = self.kernel.as_deref()?;
        let last = k.rsplit(['/', ':']).next()?;
        let bare = match last.rfind("-op") {
            Some(i) if last[i + 3..].chars().all(|c| c.is_ascii_digit()) => &last[..i],
            _ => last,
        };
        (!bare.is_empty()).then_some(bare)
    }
}

/// Whether `text` is an actor set (rather than a graph dump).
pub fn is_actor_set(text: &str) -> bool {
    let head = text.trim_start();
    head.starts_with("[Device tensor stores]")
        || head.starts_with("[continuous memory nodes")
        || head.starts_with("Base Block :")
        || (head.starts_with('%')
            && text
                .lines()
                .take(12)
                .any(|l| l.trim_start().starts_with("# AID :")))
}

/// The kind of an actor of a detailed section (`Kernel actors` -> `kernel`).
fn kind_of_section(title: &str) -> String {
    let t = title
        .trim_end_matches(" actors")
        .trim_end_matches(" actor")
        .to_lowercase();
    if t.is_empty() {
        "actor".into()
    } else {
        t
    }
}

/// The kind of a final-form actor, from its name (`..._HostDSActor` is the
/// data source), or `kernel` when it launches one.
fn kind_of_name(name: &str, kernel: bool) -> String {
    const KINDS: &[(&str, &str)] = &[
        ("DataPrepareActor", "data prepare"),
        ("HostDSActor", "data source"),
        ("DeviceDSActor", "data source"),
        ("LoopCountActor", "loop count"),
        ("OutputActor", "output"),
        ("EntranceActor", "entrance"),
        ("ExitActor", "exit"),
        ("SwitchActor", "switch"),
        ("GatherActor", "gather"),
        ("StackActor", "stack"),
        ("FusionActor", "fusion"),
        ("CopyActor", "copy"),
        ("MemoryAllocActor", "memory"),
        ("MemoryFreeActor", "memory"),
        ("SuperKernelActor", "super kernel"),
    ];
    for (suffix, kind) in KINDS {
        if name.ends_with(suffix) {
            return (*kind).into();
        }
    }
    if kernel {
        "kernel".into()
    } else {
        "actor".into()
    }
}

/// Lines with their byte offsets, without the line break.
fn lines(text: &str) -> Vec<(usize, &str)> {
    let mut start = 0;
    text.split_inclusive('\n')
        .map(|l| {
            let at = start;
            start += l.len();
            (at, l.trim_end_matches(['\n', '\r']))
        })
        .collect()
}

/// `[` minus `]` and `(` minus `)`: whether a printed value goes on.
fn open_brackets(s: &str) -> i64 {
    s.chars().fold(0, |n, c| match c {
        '(' | '[' => n + 1,
        ')' | ']' => n - 1,
        _ => n,
    })
}

/// The value of `key:` in a tab-separated field line, with its offset in `line`.
fn field<'a>(line: &'a str, key: &str) -> Option<(&'a str, usize)> {
    let mut at = 0;
    for part in line.split('\t') {
        let t = part.trim_start();
        let lead = part.len() - t.len();
        if let Some(v) = t.strip_prefix(key).and_then(|r| r.strip_prefix(':')) {
            return Some((v, at + lead + key.len() + 1));
        }
        at += part.len() + 1;
    }
    None
}

/// Reads an actor set. Never fails: what it does not know it skips.
pub fn parse(text: &str) -> ActorSet {
    if text.trim_start().starts_with('[') {
        parse_detailed(text)
    } else {
        parse_final(text)
    }
}

fn parse_detailed(text: &str) -> ActorSet {
    let mut set = ActorSet {
        detailed: true,
        ..ActorSet::default()
    };
    // Mentions by name, resolved once every actor is known.
    let mut mentions: Vec<(Range<usize>, String)> = Vec::new();
    let mut list: Option<&str> = None;
    let all = lines(text);
    let mut i = 0;
    while i < all.len() {
        let (at, line) = all[i];
        i += 1;
        let end = at + line.len();
        if let Some(title) = line
            .strip_prefix('[')
            .filter(|t| t.starts_with(|c: char| c.is_ascii_alphabetic()))
            .and_then(|t| t.strip_suffix(']'))
        {
            let name = title.split(':').next().unwrap_or(title).trim();
            if let Some(s) = set.sections.last_mut() {
                s.range.end = at;
            }
            set.sections.push(Section {
                title: name.to_string(),
                title_range: at + 1..at + 1 + name.len(),
                range: at..end,
            });
            list = None;
            continue;
        }
        if let Some(s) = set.sections.last_mut() {
            s.range.end = end;
        }
        let trimmed = line.trim_start_matches([' ', '\t']);
        if let Some((name, off)) =
            field(line, "actor_name").filter(|_| line.starts_with("\tactor_name:"))
        {
            let name = name.trim_end();
            let section = set.sections.len().saturating_sub(1);
            let kind = set
                .sections
                .get(section)
                .map(|s| kind_of_section(&s.title))
                .unwrap_or_else(|| "actor".into());
            set.actors.push(Actor {
                name: name.to_string(),
                name_range: at + off..at + off + name.len(),
                range: at..end,
                section,
                id: None,
                kind,
                kernel: None,
                inputs: Vec::new(),
                controls: Vec::new(),
                outputs: Vec::new(),
                outputs_num: None,
                shapes: None,
                types: None,
                data_nodes: Vec::new(),
            });
            list = None;
            continue;
        }
        let Some(actor) = set.actors.last_mut() else {
            continue;
        };
        if set.sections.len().saturating_sub(1) != actor.section {
            continue;
        }
        actor.range.end = end;
        if let Some((k, _)) = field(line, "kernel_name") {
            actor.kernel = Some(k.trim_end().to_string());
            if let Some((n, _)) = field(line, "outputs_num") {
                actor.outputs_num = n.trim().parse().ok();
            }
            continue;
        }
        if actor.outputs_num.is_none() {
            if let Some((n, _)) = field(line, "outputs_num") {
                actor.outputs_num = n.trim().parse().ok();
            }
        }
        // A list's heading (`output_data_arrows:2`): the lines after it are its items.
        if let Some((head, count)) = trimmed.split_once(':') {
            if !head.contains(' ')
                && count.trim().chars().all(|c| c.is_ascii_digit())
                && !count.trim().is_empty()
                && line.starts_with("\t\t")
                && !line.starts_with("\t\t\t")
            {
                list = Some(match head {
                    "device_tensor_store_keys" => "stores",
                    "input_data_arrow_actors" => "data in",
                    "output_data_arrows" => "data out",
                    "data_nodes" => "data nodes",
                    h if h.starts_with("input_") && h.contains("control") => "control in",
                    _ => "other",
                });
                continue;
            }
        }
        // Every mention of an actor, whatever the list.
        for key in ["from_actor_name", "to_actor_name", "to_data_prepare_actor"] {
            if let Some((v, off)) = field(line, key) {
                let v = v.trim_end();
                if !v.is_empty() {
                    mentions.push((at + off..at + off + v.len(), v.to_string()));
                }
            }
        }
        match list {
            Some("stores") => {
                let Some((idx, _)) = field(line, "to_input_index") else {
                    continue;
                };
                let Some((from, _)) = field(line, "from_node_name") else {
                    continue;
                };
                // The value may go on over the next lines (NumPy's rows).
                let mut full = from.to_string();
                let mut depth = open_brackets(&full);
                while depth > 0 && i < all.len() && !all[i].1.starts_with('\t') {
                    full.push('\n');
                    full.push_str(all[i].1);
                    depth += open_brackets(all[i].1);
                    actor.range.end = all[i].0 + all[i].1.len();
                    i += 1;
                }
                let (node, debug) = full.split_once(", debug_name: ").unwrap_or((&full, ""));
                let input = match debug.strip_prefix("ValueNode<") {
                    Some(v) => Input::Const(format!("ValueNode<{v}")),
                    None => Input::Weight(node.trim().to_string()),
                };
                if let Ok(idx) = idx.trim().parse() {
                    actor.inputs.push((idx, input));
                }
            }
            Some("data in") => {
                if let (Some((from, _)), Some((o, _)), Some((idx, _))) = (
                    field(line, "from_actor_name"),
                    field(line, "from_output_index"),
                    field(line, "to_input_index"),
                ) {
                    if let (Ok(o), Ok(idx)) = (o.trim().parse(), idx.trim().parse()) {
                        actor.inputs.push((
                            idx,
                            Input::Actor {
                                actor: from.trim_end().to_string(),
                                output: o,
                            },
                        ));
                    }
                }
            }
            Some("data out") => {
                if let (Some((o, _)), Some((to, _)), Some((idx, _))) = (
                    field(line, "from_output_index"),
                    field(line, "to_actor_name"),
                    field(line, "to_input_index"),
                ) {
                    if let (Ok(o), Ok(idx)) = (o.trim().parse(), idx.trim().parse()) {
                        // The data source's arrows name the node they carry.
                        let node = field(line, "from_output_node")
                            .map(|(n, _)| n.trim_end().to_string())
                            .filter(|n| actor.data_nodes.contains(n));
                        let o = match node {
                            Some(n) => actor.data_nodes.iter().position(|d| *d == n).unwrap_or(o),
                            None => o,
                        };
                        actor.outputs.push((o, to.trim_end().to_string(), idx));
                    }
                }
            }
            Some("data nodes") => {
                if let Some((n, _)) = field(line, "node_name") {
                    actor.data_nodes.push(n.trim_end().to_string());
                }
            }
            Some("control in") => {
                if let Some((from, _)) = field(line, "from_actor_name") {
                    actor.controls.push(from.trim_end().to_string());
                }
            }
            _ => {}
        }
    }
    // A data source's arrows say which of its nodes feeds which input
    // (both of its nodes are its output 0 on the receiving side).
    let sources: Vec<(String, Vec<Arrow>)> = set
        .actors
        .iter()
        .filter(|a| !a.data_nodes.is_empty())
        .map(|a| (a.name.clone(), a.outputs.clone()))
        .collect();
    for a in set.actors.iter_mut() {
        for (idx, input) in a.inputs.iter_mut() {
            if let Input::Actor { actor, output } = input {
                if let Some((_, outs)) = sources.iter().find(|(n, _)| n == actor) {
                    if let Some((o, _, _)) =
                        outs.iter().find(|(_, to, k)| *to == a.name && k == idx)
                    {
                        *output = *o;
                    }
                }
            }
        }
        a.inputs.sort_by_key(|(k, _)| *k);
    }
    let index: std::collections::HashMap<&str, usize> = set
        .actors
        .iter()
        .enumerate()
        .map(|(i, a)| (a.name.as_str(), i))
        .collect();
    set.uses = mentions
        .into_iter()
        .filter_map(|(r, n)| index.get(n.as_str()).map(|&k| (r, k)))
        .collect();
    set
}

/// `%3[0]` -> (`%3`, 0).
fn output_ref(s: &str) -> Option<(&str, usize)> {
    let (id, rest) = s.split_once('[')?;
    let k = rest.strip_suffix(']')?.parse().ok()?;
    (id.starts_with('%') && id[1..].chars().all(|c| c.is_ascii_digit())).then_some((id, k))
}

/// Splits `a, b(c, d), [e, f]` at its top-level commas, with each part's offset.
fn split_args(s: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let (mut depth, mut start) = (0i64, 0);
    for (i, c) in s.char_indices() {
        match c {
            '(' | '[' | '{' | '<' => depth += 1,
            ')' | ']' | '}' | '>' => depth -= 1,
            ',' if depth == 0 => {
                out.push((start, &s[start..i]));
                start = i + 1;
            }
            _ => {}
        }
    }
    if !s[start..].trim().is_empty() {
        out.push((start, &s[start..]));
    }
    out.into_iter()
        .map(|(at, p)| {
            let lead = p.len() - p.trim_start().len();
            (at + lead, p.trim())
        })
        .collect()
}

fn parse_final(text: &str) -> ActorSet {
    let mut set = ActorSet::default();
    let all = lines(text);
    // The ids of the current block, and each statement's raw inputs.
    let mut ids: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    let mut i = 0;
    while i < all.len() {
        let (at, line) = all[i];
        i += 1;
        let block = line
            .strip_prefix("Base Block : ")
            .or_else(|| line.strip_prefix("Actor for func graph:"));
        if let Some(name) = block {
            let name = name.trim();
            let title_at = at + line.rfind(name).unwrap_or(0);
            if let Some(s) = set.sections.last_mut() {
                s.range.end = at;
            }
            set.sections.push(Section {
                title: name.to_string(),
                title_range: title_at..title_at + name.len(),
                range: at..at + line.len(),
            });
            ids.clear();
            continue;
        }
        let trimmed = line.trim_start();
        if let Some(c) = trimmed.strip_prefix('#') {
            let Some(a) = set.actors.last_mut() else {
                continue;
            };
            a.range.end = at + line.len();
            let c = c.trim();
            if let Some(v) = c.strip_prefix("AID :") {
                a.name = v.trim().to_string();
            } else if let Some(v) = c.strip_prefix("shape :") {
                a.shapes = Some(v.trim().to_string());
            } else if let Some(v) = c.strip_prefix("type :") {
                let v = v.trim();
                a.types = Some(v.to_string());
                let outs = v.split_once("->").map_or("", |(_, o)| o).trim();
                a.outputs_num = Some(outs.matches('<').count());
            }
            continue;
        }
        if !line.starts_with('%') {
            continue;
        }
        // A statement, with a value printed over several lines.
        let mut stmt = line.to_string();
        let mut end = at + line.len();
        let mut depth = open_brackets(line);
        while depth > 0
            && i < all.len()
            && !all[i].1.starts_with('%')
            && !all[i].1.starts_with('\t')
        {
            stmt.push('\n');
            stmt.push_str(all[i].1);
            depth += open_brackets(all[i].1);
            end = all[i].0 + all[i].1.len();
            i += 1;
        }
        let Some((id, rhs)) = stmt.split_once(" = ") else {
            continue;
        };
        if set.sections.is_empty() {
            set.sections.push(Section {
                title: String::new(),
                title_range: at..at,
                range: at..end,
            });
        }
        let section = set.sections.len() - 1;
        set.sections[section].range.end = end;
        let rhs_at = at + id.len() + 3;
        let open = rhs.find('(').unwrap_or(rhs.len());
        let callee = &rhs[..open];
        let close = {
            let mut d = 0i64;
            let mut close = rhs.len();
            for (k, c) in rhs[open..].char_indices() {
                match c {
                    '(' | '[' => d += 1,
                    ')' | ']' => {
                        d -= 1;
                        if d == 0 {
                            close = open + k;
                            break;
                        }
                    }
                    _ => {}
                }
            }
            close
        };
        let args = rhs.get(open + 1..close).unwrap_or("");
        let kernel = callee.contains(':').then(|| callee.to_string());
        let k = set.actors.len();
        let mut actor = Actor {
            name: callee.to_string(),
            name_range: at..at + id.len(),
            range: at..end,
            section,
            id: Some(id.to_string()),
            kind: String::new(),
            kernel,
            inputs: Vec::new(),
            controls: Vec::new(),
            outputs: Vec::new(),
            outputs_num: None,
            shapes: None,
            types: None,
            data_nodes: Vec::new(),
        };
        for (idx, (off, a)) in split_args(args).into_iter().enumerate() {
            let a_at = rhs_at + open + 1 + off;
            let input = if let Some((src, o)) = output_ref(a) {
                if let Some(&s) = ids.get(src) {
                    set.uses.push((a_at..a_at + src.len(), s));
                }
                Input::Actor {
                    actor: src.to_string(),
                    output: o,
                }
            } else if let Some(w) = a.strip_prefix("%param_") {
                Input::Weight(w.to_string())
            } else if let Some(d) = a.strip_prefix("param_") {
                // A data source's nodes are the graph's inputs; elsewhere
                // (a control-flow actor) `param_NAME` is a weight.
                if callee.ends_with("DSActor") {
                    actor.data_nodes.push(d.to_string());
                    Input::Data(d.to_string())
                } else {
                    Input::Weight(d.to_string())
                }
            } else {
                Input::Const(a.to_string())
            };
            actor.inputs.push((idx, input));
        }
        if let Some(ctl) = rhs[close..].find("op control(").map(|p| close + p + 11) {
            let inner_end = rhs[ctl..].find(')').map_or(rhs.len(), |e| ctl + e);
            for (off, c) in split_args(&rhs[ctl..inner_end]) {
                let c = if c
                    .get(1..)
                    .is_some_and(|r| r.starts_with(|d: char| d.is_ascii_digit()))
                {
                    c
                } else {
                    c.trim_start_matches('%')
                };
                if let Some(&s) = ids.get(c) {
                    set.uses
                        .push((rhs_at + ctl + off..rhs_at + ctl + off + c.len(), s));
                }
                actor.controls.push(c.to_string());
            }
        }
        ids.insert(id.to_string(), k);
        set.actors.push(actor);
    }
    // Inputs name actors by the block's ids (`%3`): names repeat in a
    // block (`GatherActor`, `StackActor`).
    for a in set.actors.iter_mut() {
        a.kind = kind_of_name(&a.name, a.kernel.is_some());
        // A data source's outputs are its nodes, in order.
        if a.kind == "data source" {
            a.data_nodes = a
                .inputs
                .iter()
                .filter_map(|(_, i)| match i {
                    Input::Data(d) => Some(d.clone()),
                    _ => None,
                })
                .collect();
        }
    }
    set.uses.sort_by_key(|(r, _)| r.start);
    set
}

impl ActorSet {
    /// The actor whose definition or mention is under `offset`: (actor, the
    /// range under the cursor).
    pub fn actor_at(&self, offset: usize) -> Option<(usize, Range<usize>)> {
        if let Some(k) = self
            .actors
            .iter()
            .position(|a| a.name_range.contains(&offset))
        {
            return Some((k, self.actors[k].name_range.clone()));
        }
        let i = self.uses.partition_point(|(r, _)| r.start <= offset);
        let (r, k) = i.checked_sub(1).map(|i| &self.uses[i])?;
        r.contains(&offset).then(|| (*k, r.clone()))
    }

    /// The actor whose block holds `offset`.
    pub fn actor_around(&self, offset: usize) -> Option<usize> {
        self.actors.iter().position(|a| a.range.contains(&offset))
    }

    /// Every mention of actor `k` (its definition not included).
    pub fn references(&self, k: usize) -> Vec<Range<usize>> {
        self.uses
            .iter()
            .filter(|(_, a)| *a == k)
            .map(|(r, _)| r.clone())
            .collect()
    }

    /// The actor of this name (the first, for the final form's per-block names).
    pub fn find(&self, name: &str) -> Option<usize> {
        self.actors.iter().position(|a| a.name == name)
    }
}

impl ActorSet {
    /// The set as graphs of a dump, for drawing it (the graph view): a
    /// graph per section (detailed form: one, of every actor) whose nodes are
    /// the actors (`%k`, selecting the actor's name), each calling its
    /// kernel's primitive (or its kind), in its kernel's scope, with its
    /// output types (final form) and its inputs: other actors, weights
    /// (`%para_conv.weight`) and graph inputs.
    pub fn as_dump(&self) -> crate::Dump {
        let mut graphs: Vec<(usize, crate::Graph)> = Vec::new();
        let groups: Vec<Vec<usize>> = if self.detailed {
            vec![(0..self.actors.len()).collect()]
        } else {
            (0..self.sections.len())
                .map(|s| {
                    (0..self.actors.len())
                        .filter(|&k| self.actors[k].section == s)
                        .collect()
                })
                .collect()
        };
        for (s, members) in groups.into_iter().enumerate() {
            if members.is_empty() {
                continue;
            }
            let mut seen = std::collections::HashMap::new();
            let mut nodes = Vec::new();
            let mut range: Option<Range<usize>> = None;
            for &k in &members {
                let a = &self.actors[k];
                let key = a.id.clone().unwrap_or_else(|| a.name.clone());
                if seen.contains_key(&key) {
                    continue;
                }
                let id = format!("%{}", nodes.len());
                seen.insert(key, id.clone());
                range = Some(match range {
                    Some(r) => r.start.min(a.range.start)..r.end.max(a.range.end),
                    None => a.range.clone(),
                });
                nodes.push((k, id));
            }
            let ids: std::collections::HashMap<String, String> = seen;
            let nodes: Vec<crate::Node> = nodes
                .into_iter()
                .map(|(k, id)| {
                    let a = &self.actors[k];
                    let prim = a
                        .prim()
                        .map(str::to_string)
                        .unwrap_or_else(|| a.kind_name());
                    let inputs: Vec<String> = a
                        .inputs
                        .iter()
                        .filter_map(|(_, i)| match i {
                            Input::Actor { actor, .. } => ids.get(actor).cloned(),
                            Input::Weight(w) => Some(format!("%para_{w}")),
                            Input::Data(d) => Some(format!("%para_{d}")),
                            Input::Const(_) => None,
                        })
                        .collect();
                    let scope = a
                        .kernel
                        .as_ref()
                        .map(|kernel| match kernel.split_once(':') {
                            Some(_) => a
                                .name
                                .split_once('_')
                                .filter(|(d, _)| d.chars().all(|c| c.is_ascii_digit()))
                                .map_or(a.name.clone(), |(_, s)| s.to_string()),
                            None => kernel.clone(),
                        });
                    crate::Node {
                        id,
                        id_range: a.name_range.clone(),
                        label: a.name.clone(),
                        prim: Some((prim.clone(), a.name_range.clone())),
                        range: a.range.clone(),
                        ty: a
                            .types
                            .as_deref()
                            .and_then(|t| t.split_once("->"))
                            .map(|(_, o)| o.trim().to_string()),
                        inputs_ty: None,
                        scope,
                        frames: Vec::new(),
                        inputs: inputs.clone(),
                        call: format!(
                            "{prim}({})  # {} actor {}",
                            inputs.join(", "),
                            a.kind,
                            a.name
                        ),
                    }
                })
                .collect();
            let title = &self.sections[s].title;
            let name = if self.detailed || title.is_empty() {
                "@actors".to_string()
            } else {
                format!("@{title}")
            };
            graphs.push((
                s,
                crate::Graph {
                    name,
                    name_range: self.sections[s].title_range.clone(),
                    range: range.unwrap_or(0..0),
                    params: Vec::new(),
                    nodes,
                    parent: None,
                },
            ));
        }
        crate::Dump {
            entry: graphs
                .first()
                .map(|(_, g)| g.name.trim_start_matches('@').to_string()),
            graphs: graphs.into_iter().map(|(_, g)| g).collect(),
            ..crate::Dump::default()
        }
    }
}
