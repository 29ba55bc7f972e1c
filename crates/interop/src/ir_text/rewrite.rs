//! What the importer does to a dump's graphs before translating them: the
//! state token made implicit, values no graph reads passed as `none`, an
//! optimizer mapped over weights copied per weight, and BatchNorm's in-place
//! update of its moving statistics written out.

use super::*;

/// The state token is implicit in the DSL: a graph's parameters that take
/// it (`<UMonad, NoShape>`, the front end's `u`) go, and so does every call's
/// and partial application's argument that passes it, whoever is called (a
/// graph, a partial, `J`'s result: `%0 = J(@f); %1 = %0(x, u)`). A primitive
/// keeps its token argument (the translation reads the order of effects from
/// it); a use of a removed parameter is the token as a value. The entry
/// loses its token parameter too (a loop's dump calls its entry).
pub(super) fn without_state_token_params(m: &mut Module, monads: &[Vec<bool>]) {
    // Old index to new, per graph; `None` for a removed parameter.
    let mut keep: Vec<Vec<Option<usize>>> = Vec::new();
    for (g, graph) in m.graphs.iter().enumerate() {
        let flags = monads.get(g).filter(|f| f.len() == graph.params.len());
        let mut next = 0;
        keep.push(
            (0..graph.params.len())
                .map(|p| {
                    if flags.is_some_and(|f| f[p]) {
                        None
                    } else {
                        next += 1;
                        Some(next - 1)
                    }
                })
                .collect(),
        );
    }
    if keep.iter().all(|k| k.iter().all(Option::is_some))
        && !monads.get(m.entry).is_some_and(|f| f.contains(&true))
    {
        return;
    }
    // The entry's token parameters stay, but are not passed on either.
    let entry_token = |p: usize| {
        monads
            .get(m.entry)
            .filter(|f| f.len() == m.graphs[m.entry].params.len())
            .is_some_and(|f| f[p])
    };
    let entry_tokens: Vec<bool> = (0..m.graphs[m.entry].params.len())
        .map(entry_token)
        .collect();
    let entry = m.entry;
    let is_token = |m: &Module, r: &Ref| match r {
        Ref::Const(Const::Monad) => true,
        Ref::Param(g, p) => keep[*g][*p].is_none() || (*g == entry && entry_tokens[*p]),
        Ref::Node(g, n) => matches!(
            &m.graphs[*g].nodes[*n].callee,
            Callee::Prim { name, .. } if name == "UpdateState"
        ),
        _ => false,
    };
    let renumber = |r: &mut Ref| {
        if let Ref::Param(g, p) = *r {
            *r = match keep[g][p] {
                Some(q) => Ref::Param(g, q),
                None => Ref::Const(Const::Monad),
            };
        }
    };
    for g in 0..m.graphs.len() {
        for n in 0..m.graphs[g].nodes.len() {
            let node = &m.graphs[g].nodes[n];
            let passes = match &node.callee {
                Callee::Value(_) => true,
                Callee::Prim { name, .. } => name.trim_start_matches("PrimFunc_") == "Partial",
            };
            if passes {
                let partial = matches!(node.callee, Callee::Prim { .. });
                let args: Vec<Ref> = node
                    .args
                    .iter()
                    .enumerate()
                    .filter(|(i, a)| (partial && *i == 0) || !is_token(m, a))
                    .map(|(_, a)| a.clone())
                    .collect();
                m.graphs[g].nodes[n].args = args;
            }
        }
    }
    for (graph, kept) in m.graphs.iter_mut().zip(&keep) {
        for node in &mut graph.nodes {
            if let Callee::Value(c) = &mut node.callee {
                renumber(c);
            }
            node.args.iter_mut().for_each(renumber);
        }
        renumber(&mut graph.output);
        let params = std::mem::take(&mut graph.params);
        graph.params = params
            .into_iter()
            .enumerate()
            .filter(|(p, _)| kept[*p].is_some())
            .map(|(_, p)| p)
            .collect();
    }
}

/// The weight a reference stands for, through `Load`, `Depend` and
/// `TupleGetItem` of a `MakeTuple`.
pub(super) fn weight_of(m: &Module, r: &Ref, depth: usize) -> Option<usize> {
    if depth > 64 {
        return None;
    }
    match r {
        Ref::Weight(w) => Some(*w),
        Ref::Node(g, n) => {
            let node = &m.graphs[*g].nodes[*n];
            let Callee::Prim { name, .. } = &node.callee else {
                return None;
            };
            match (name.trim_start_matches("PrimFunc_"), node.args.as_slice()) {
                ("Load" | "Depend" | "depend", [x, ..]) => weight_of(m, x, depth + 1),
                ("TupleGetItem" | "tuple_getitem", [t, Ref::Const(Const::Int(k, _))]) => {
                    let item = tuple_item(m, t, *k, depth + 1)?;
                    weight_of(m, &item, depth + 1)
                }
                _ => None,
            }
        }
        _ => None,
    }
}

/// Item `k` of a `MakeTuple` node (through `Depend`).
pub(super) fn tuple_item(m: &Module, t: &Ref, k: i64, depth: usize) -> Option<Ref> {
    if depth > 64 {
        return None;
    }
    let Ref::Node(g, n) = t else { return None };
    let node = &m.graphs[*g].nodes[*n];
    let Callee::Prim { name, .. } = &node.callee else {
        return None;
    };
    match (name.trim_start_matches("PrimFunc_"), node.args.as_slice()) {
        ("MakeTuple" | "make_tuple", items) => items.get(usize::try_from(k).ok()?).cloned(),
        ("Depend" | "depend", [x, ..]) => tuple_item(m, x, k, depth + 1),
        _ => None,
    }
}

/// Whether a reference is a tuple of weights (`MakeTuple(w1, w2, ...)`).
pub(super) fn weight_tuple(m: &Module, r: &Ref) -> bool {
    let Ref::Node(g, n) = r else { return false };
    let node = &m.graphs[*g].nodes[*n];
    matches!(&node.callee, Callee::Prim { name, .. }
        if matches!(name.trim_start_matches("PrimFunc_"), "MakeTuple" | "make_tuple"))
        && !node.args.is_empty()
        && node.args.iter().all(|a| weight_of(m, a, 0).is_some())
}

/// The graph a call's callee applies and the arguments it has already bound:
/// `@h` itself, or a `Partial(@h, bound...)` node.
pub(super) fn call_target(m: &Module, callee: &Ref) -> Option<(usize, usize)> {
    match callee {
        Ref::Graph(h) => Some((*h, 0)),
        Ref::Node(g, n) => {
            let node = &m.graphs[*g].nodes[*n];
            match (&node.callee, node.args.first()) {
                (Callee::Prim { name, .. }, Some(Ref::Graph(h)))
                    if name.trim_start_matches("PrimFunc_") == "Partial" =>
                {
                    Some((*h, node.args.len() - 1))
                }
                _ => None,
            }
        }
        _ => None,
    }
}

/// An optimizer's update is written once and mapped over the weights
/// (`hyper_map(Partial(opt, ...), grads, weights, moments)`): the graph
/// that applies `ApplyMomentum` to its parameter is called once per weight.
/// The DSL's in-place primitives name their weights, so each such graph is
/// copied per call, its parameters replaced by the weights the call passes
/// (through `TupleGetItem` of a tuple of weights), with the graphs nested
/// in it. Only graphs that reach an in-place primitive are copied.
pub(super) fn specialise_on_weights(m: &mut Module) {
    use std::collections::HashSet;
    let refs_graphs = |g: &Graph| -> Vec<usize> {
        let mut out = Vec::new();
        let mut add = |r: &Ref| {
            if let Ref::Graph(h) = r {
                out.push(*h);
            }
        };
        for node in &g.nodes {
            if let Callee::Value(c) = &node.callee {
                add(c);
            }
            node.args.iter().for_each(&mut add);
        }
        add(&g.output);
        out
    };
    // Graphs that reach an in-place primitive (through calls, values and nesting).
    let n = m.graphs.len();
    let mut writes: Vec<bool> = m
        .graphs
        .iter()
        .map(|g| {
            g.nodes.iter().any(|node| match &node.callee {
                Callee::Prim { name, .. } => ops::effect_of(ops::mindspore::registry_name(
                    name.trim_start_matches("PrimFunc_"),
                ))
                .is_some(),
                _ => false,
            })
        })
        .collect();
    loop {
        let mut changed = false;
        for g in 0..n {
            if writes[g] {
                continue;
            }
            let reach = refs_graphs(&m.graphs[g]).into_iter().any(|h| writes[h])
                || (0..n).any(|c| m.graphs[c].parent == Some(g) && writes[c]);
            if reach {
                writes[g] = true;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    if !writes.iter().any(|w| *w) {
        return;
    }
    // (graph, its parameters bound to weights or weight tuples) -> copy.
    // (`Ref` holds tensors: compared, not hashed.)
    type Key = (usize, Vec<(usize, Ref)>);
    let mut copies: Vec<(Key, usize)> = Vec::new();
    // Copies are bounded (a dump whose copies would make copies without end
    // keeps its updates on parameters, which `check` then reports).
    let budget = 8 * n + 1024;
    let mut origin: Vec<usize> = (0..n).collect();
    let mut work: Vec<usize> = (0..n).collect();
    let mut seen: HashSet<usize> = HashSet::new();
    while let Some(g) = work.pop() {
        if !seen.insert(g) {
            continue;
        }
        for k in 0..m.graphs[g].nodes.len() {
            let Callee::Value(callee) = m.graphs[g].nodes[k].callee.clone() else {
                continue;
            };
            let Some((h, offset)) = call_target(m, &callee) else {
                continue;
            };
            if !writes.get(origin[h]).copied().unwrap_or(false) || m.graphs[h].params.is_empty() {
                continue;
            }
            // The weights this call binds, by parameter.
            let mut bound: Vec<(usize, Ref)> = Vec::new();
            let mut args = m.graphs[g].nodes[k].args.clone();
            if let Ref::Node(pg, pn) = &callee {
                for (i, a) in m.graphs[*pg].nodes[*pn].args.iter().skip(1).enumerate() {
                    if let Some(w) = weight_of(m, a, 0) {
                        bound.push((i, Ref::Weight(w)));
                    }
                }
            }
            for (i, a) in args.iter_mut().enumerate() {
                if let Some(w) = weight_of(m, a, 0) {
                    *a = Ref::Weight(w);
                    bound.push((i + offset, a.clone()));
                } else if weight_tuple(m, a) {
                    bound.push((i + offset, a.clone()));
                }
            }
            bound.retain(|(i, _)| *i < m.graphs[h].params.len());
            if bound.is_empty() || matches!(callee, Ref::Node(..)) && uses(m, &callee) != 1 {
                continue;
            }
            let key = (origin[h], bound.clone());
            let copy = match copies.iter().find(|(k, _)| *k == key) {
                Some(&(_, c)) => c,
                None if m.graphs.len() > budget => continue,
                None => {
                    let c = copy_family(m, h, &bound, &mut origin);
                    copies.push((key, c));
                    work.push(c);
                    // The copies nested in it are visited with it.
                    for x in c..m.graphs.len() {
                        work.push(x);
                    }
                    c
                }
            };
            m.graphs[g].nodes[k].args = args;
            match callee {
                Ref::Graph(_) => m.graphs[g].nodes[k].callee = Callee::Value(Ref::Graph(copy)),
                // The partial application, used by this call alone.
                Ref::Node(pg, pn) => m.graphs[pg].nodes[pn].args[0] = Ref::Graph(copy),
                _ => {}
            }
        }
    }
}

/// How many times nodes and outputs refer to `r`.
pub(super) fn uses(m: &Module, r: &Ref) -> usize {
    m.graphs
        .iter()
        .map(|g| {
            g.nodes
                .iter()
                .map(|node| {
                    let callee = matches!(&node.callee, Callee::Value(c) if c == r) as usize;
                    callee + node.args.iter().filter(|a| *a == r).count()
                })
                .sum::<usize>()
                + (g.output == *r) as usize
        })
        .sum()
}

/// Copies graph `h` and the graphs nested in it, parameters `bound` of `h`
/// replaced by the given values; returns the copy of `h`.
pub(super) fn copy_family(
    m: &mut Module,
    h: usize,
    bound: &[(usize, Ref)],
    origin: &mut Vec<usize>,
) -> usize {
    let n = m.graphs.len();
    let inside = |mut g: usize| loop {
        if g == h {
            return true;
        }
        match m.graphs[g].parent {
            Some(p) if p != g => g = p,
            _ => return false,
        }
    };
    let family: Vec<usize> = (0..n).filter(|&g| inside(g)).collect();
    let index: HashMap<usize, usize> = family
        .iter()
        .enumerate()
        .map(|(k, &g)| (g, n + k))
        .collect();
    let map = |r: &Ref| -> Ref {
        match r {
            Ref::Param(g, i) if *g == h => bound
                .iter()
                .find(|(p, _)| p == i)
                .map_or(Ref::Param(index[g], *i), |(_, v)| v.clone()),
            Ref::Param(g, i) => Ref::Param(index.get(g).copied().unwrap_or(*g), *i),
            Ref::Node(g, k) => Ref::Node(index.get(g).copied().unwrap_or(*g), *k),
            Ref::Graph(g) => Ref::Graph(index.get(g).copied().unwrap_or(*g)),
            other => other.clone(),
        }
    };
    for &g in &family {
        let src = &m.graphs[g];
        let copy = Graph {
            name: src.name.clone(),
            parent: src.parent.map(|p| index.get(&p).copied().unwrap_or(p)),
            params: src.params.clone(),
            nodes: src
                .nodes
                .iter()
                .map(|node| Node {
                    name: node.name.clone(),
                    callee: match &node.callee {
                        Callee::Value(c) => Callee::Value(map(c)),
                        prim => prim.clone(),
                    },
                    args: node.args.iter().map(&map).collect(),
                })
                .collect(),
            output: map(&src.output),
        };
        m.graphs.push(copy);
        origin.push(origin[g]);
    }
    // A copy given another graph's values (a tuple of weights built in the
    // optimizer's graph) is nested in that graph, as a graph using its nodes is.
    let copy = index[&h];
    if m.graphs[copy].parent.is_none() {
        m.graphs[copy].parent = bound.iter().find_map(|(_, v)| match v {
            Ref::Node(x, _) | Ref::Param(x, _) if !index.contains_key(x) => Some(*x),
            _ => None,
        });
    }
    copy
}

/// MindSpore's `BatchNorm` in training updates its moving mean and variance
/// in place (`side_effect_mem`): `mean ← (1 − momentum)·mean + momentum·batch
/// mean`, the variance likewise with the batch's unbiased variance. mirdsl's
/// `BatchNorm` returns the batch statistics (biased variance) and updates
/// nothing, so the update is written after the node, as `Assign`s of the two
/// weights. Only where the count per channel is known (the node's dumped
/// type) and the statistics are weights, and once `J` is expanded.
pub(super) fn update_moving_statistics(m: &mut Module, types: &NodeTypes) {
    // Before automatic differentiation (`J` still in the graph) the forward
    // graph is differentiated, which an update in it would forbid.
    let differentiated = m.graphs.iter().flat_map(|g| &g.nodes).any(
        |n| matches!(&n.callee, Callee::Prim { name, .. } if name.trim_start_matches("PrimFunc_") == "J"),
    );
    if differentiated {
        return;
    }
    for g in 0..m.graphs.len() {
        let count = m.graphs[g].nodes.len();
        for n in 0..count {
            let node = &m.graphs[g].nodes[n];
            let Callee::Prim { name, .. } = &node.callee else {
                continue;
            };
            // The forward batch normalisation, found by its record.
            let forward_batch_norm = ops::lookup(name.trim_start_matches("PrimFunc_"))
                .is_some_and(|d| d.traits.family == ops::Family::BatchNorm { grad: false });
            if !forward_batch_norm {
                continue;
            }
            let (Some(Ref::Const(Const::Bool(true))), Some(Ref::Const(Const::Float(momentum, _)))) =
                (node.args.get(5), node.args.get(7))
            else {
                continue;
            };
            let momentum = *momentum;
            let (Some(mean), Some(var)) = (
                node.args.get(3).and_then(|r| weight_of(m, r, 0)),
                node.args.get(4).and_then(|r| weight_of(m, r, 0)),
            ) else {
                continue;
            };
            let per_channel = match types.get(&(g, n)) {
                Some(Ty::Tuple(items)) => match items.first() {
                    Some(Ty::Tensor(_, shape)) => shape.as_known().and_then(|d| {
                        let c = *d.get(1)?;
                        (c > 0).then(|| shape.numel().map(|k| k / c)).flatten()
                    }),
                    _ => None,
                },
                _ => None,
            };
            let Some(per_channel) = per_channel.filter(|&k| k > 1) else {
                continue;
            };
            // Named in the node's scope: `network.bn.batch_mean`, `network.bn.moving_mean`.
            let scope = node
                .name
                .rsplit_once('.')
                .map_or(String::new(), |(s, _)| format!("{s}."));
            let f = |x: f64| Ref::Const(Const::Float(x, DType::F32));
            let prim = |name: &str, label: &str, args: Vec<Ref>| Node {
                name: format!("{scope}{label}"),
                callee: Callee::Prim {
                    name: name.into(),
                    attrs: Vec::new(),
                },
                args,
            };
            let graph = &mut m.graphs[g];
            let mut push = |node: Node| {
                graph.nodes.push(node);
                Ref::Node(g, graph.nodes.len() - 1)
            };
            let unbiased = per_channel as f64 / (per_channel - 1) as f64;
            for (w, item, factor, what) in [(mean, 1, 1.0, "mean"), (var, 2, unbiased, "variance")]
            {
                let batch = push(prim(
                    "TupleGetItem",
                    &format!("batch_{what}"),
                    vec![Ref::Node(g, n), Ref::Const(Const::Int(item, DType::I64))],
                ));
                let kept = push(prim(
                    "Mul",
                    &format!("moving_{what}_kept"),
                    vec![Ref::Weight(w), f(1.0 - momentum)],
                ));
                let new = push(prim(
                    "Mul",
                    &format!("batch_{what}_scaled"),
                    vec![batch, f(momentum * factor)],
                ));
                let sum = push(prim("Add", &format!("moving_{what}"), vec![kept, new]));
                push(prim("Assign", "", vec![Ref::Weight(w), sum]));
            }
        }
    }
}

/// A graph's parameter: (graph, parameter).
pub(super) type ParamKey = (usize, usize);

/// Where an argument of a call goes: parameter `i` of graph `h` when the
/// node calls `@h` directly or partially applies it (`Partial(@h, ...)`).
pub(super) fn arg_target(node: &Node, arg: usize) -> Option<(usize, usize)> {
    match &node.callee {
        Callee::Value(Ref::Graph(h)) => Some((*h, arg)),
        Callee::Prim { name, .. } if name.trim_start_matches("PrimFunc_") == "Partial" => {
            match node.args.first() {
                Some(Ref::Graph(h)) if arg > 0 => Some((*h, arg - 1)),
                _ => None,
            }
        }
        _ => None,
    }
}

/// After type inference MindSpore leaves values no specialised graph reads
/// in its dumps: an optimizer's primitive passed through `hyper_map`
/// (`Partial(@f, ApplyMomentum[...], ...)`), `ValueProblem[PolyNode]` where a
/// polymorphic graph was specialised away. They reach parameters that are
/// never used, or only passed on to parameters that are never used. Where
/// such a value would be passed to such a parameter, `none` is (and the
/// parameter loses its type): nothing that a graph computes with is dropped,
/// and the values the DSL cannot write are not written.
pub(super) fn pass_nothing_to_unused_params(m: &mut Module) {
    use std::collections::HashSet;
    // Each parameter's uses: `None` for a use that reads it, `Some((h, i))`
    // for one that only passes it on to parameter `i` of graph `h`.
    let mut uses: HashMap<ParamKey, Vec<Option<ParamKey>>> = HashMap::new();
    for g in &m.graphs {
        for node in &g.nodes {
            if let Callee::Value(Ref::Param(pg, p)) = &node.callee {
                uses.entry((*pg, *p)).or_default().push(None);
            }
            for (i, a) in node.args.iter().enumerate() {
                if let Ref::Param(pg, p) = a {
                    uses.entry((*pg, *p)).or_default().push(arg_target(node, i));
                }
            }
        }
        if let Ref::Param(pg, p) = &g.output {
            uses.entry((*pg, *p)).or_default().push(None);
        }
    }
    let mut unused: HashSet<(usize, usize)> = m
        .graphs
        .iter()
        .enumerate()
        .flat_map(|(g, graph)| (0..graph.params.len()).map(move |p| (g, p)))
        .collect();
    loop {
        let read: Vec<(usize, usize)> = unused
            .iter()
            .copied()
            .filter(|k| {
                uses.get(k).is_some_and(|list| {
                    list.iter()
                        .any(|u| !u.is_some_and(|target| unused.contains(&target)))
                })
            })
            .collect();
        if read.is_empty() {
            break;
        }
        for k in read {
            unused.remove(&k);
        }
    }
    // Replaced: what the DSL cannot write, and parameters given `none`.
    let mut given_none: HashSet<(usize, usize)> = HashSet::new();
    loop {
        let mut changed = false;
        for g in 0..m.graphs.len() {
            for n in 0..m.graphs[g].nodes.len() {
                for i in 0..m.graphs[g].nodes[n].args.len() {
                    let Some(t) = arg_target(&m.graphs[g].nodes[n], i) else {
                        continue;
                    };
                    if !unused.contains(&t) {
                        continue;
                    }
                    let replace = match &m.graphs[g].nodes[n].args[i] {
                        Ref::Const(Const::None) => false,
                        Ref::Param(pg, p) => given_none.contains(&(*pg, *p)),
                        r => !writable(m, r),
                    };
                    if replace {
                        m.graphs[g].nodes[n].args[i] = Ref::Const(Const::None);
                        changed |= given_none.insert(t);
                    }
                }
            }
        }
        if !changed {
            break;
        }
    }
    for (g, p) in given_none {
        m.graphs[g].params[p].ty = None;
    }
}

/// Whether a value can be written in the DSL: not a Python object or a
/// value MindSpore could not print, nor a node built from one.
pub(super) fn writable(m: &Module, r: &Ref) -> bool {
    fn constant(c: &Const) -> bool {
        match c {
            Const::Opaque(_) => false,
            Const::Tuple(items) => items.iter().all(constant),
            _ => true,
        }
    }
    match r {
        Ref::Const(c) => constant(c),
        Ref::Node(g, n) => {
            let node = &m.graphs[*g].nodes[*n];
            let callee_ok = match &node.callee {
                Callee::Value(Ref::Const(c)) => constant(c),
                _ => true,
            };
            callee_ok
                && node.args.iter().all(|a| match a {
                    Ref::Const(c) => constant(c),
                    _ => true,
                })
        }
        _ => true,
    }
}
