//! A dump among its folder's stages: the structural diff with the stage
//! before (`irdump::diff`, as `mirdsl diff` prints it) and a node followed to
//! the same node in the next or previous stage (paired by scope, debug name
//! and structure). The caller finds and reads the other stage
//! (`irdump::stages`); these are functions of the two dumps.

use syntax::{TextRange, TextSize};

use super::{range, Dump};

/// The node under `offset`: its id (a definition or a use), or anywhere in
/// its statement, type line or comments. `(graph, node)`.
pub fn node_at(d: &Dump, offset: TextSize) -> Option<(usize, usize)> {
    let at = usize::from(offset);
    if let Some((_, _, Some(irdump::Target::Node(g, k)))) = d.name_at(at) {
        return Some((g, k));
    }
    let g = d.graph_at(at)?;
    let nodes = &d.graphs[g].nodes;
    let k = nodes
        .partition_point(|n| n.range.start <= at)
        .checked_sub(1)?;
    (nodes[k].range.end >= at).then_some((g, k))
}

/// Where the node under `offset` in `from` is in `to`, the stage after it
/// (`forward`) or before it.
#[derive(Debug, Clone, PartialEq)]
pub struct Followed {
    /// The node's id in `to` (its range), or its graph's name when the other
    /// stage has the graph but not the node.
    pub range: TextRange,
    /// Whether the node itself was found.
    pub found: bool,
    /// What was found, in words (`%5 = Mul [scope]`, or why only its graph).
    pub message: String,
    /// How the node differs between the two stages (empty: the same).
    pub changes: Vec<String>,
}

pub fn follow(from: &Dump, offset: TextSize, to: &Dump, forward: bool) -> Result<Followed, String> {
    let (g, k) = node_at(from, offset).ok_or("no node under the cursor")?;
    let node = &from.graphs[g].nodes[k];
    let (a, b) = if forward { (from, to) } else { (to, from) };
    let paired = if forward {
        irdump::diff::follow(a, b, g, k)
    } else {
        irdump::diff::follow_back(a, b, g, k)
    };
    let irdump::diff::Followed {
        graph: h,
        node: l,
        changes,
    } = paired.ok_or_else(|| {
        format!(
            "no graph here pairs with {} ({} is in it)",
            from.graphs[g].name, node.id
        )
    })?;
    let graph = &to.graphs[h];
    Ok(match l {
        Some(l) => {
            let n = &graph.nodes[l];
            let mut message = irdump::diff::describe(n);
            if changes.is_empty() {
                message.push_str(" (unchanged)");
            } else {
                message.push_str(&format!(" — {}", changes.join("; ")));
            }
            Followed {
                range: range(&n.id_range),
                found: true,
                message,
                changes,
            }
        }
        None => Followed {
            range: range(&graph.name_range),
            found: false,
            message: if forward {
                format!(
                    "{} is not here: this stage removed or replaced it; its graph {}",
                    node.id, graph.name
                )
            } else {
                format!(
                    "{} is not here: the stage after this one added it; its graph {}",
                    node.id, graph.name
                )
            },
            changes: Vec::new(),
        },
    })
}

/// The structural diff of the stage before (`prev`, named `prev_name`) and
/// this one, as `mirdsl diff PREV THIS` prints it (a line saying so when
/// they are equal).
pub fn compare(prev_name: &str, prev: &Dump, this_name: &str, this: &Dump) -> (String, usize) {
    let changes = irdump::diff::diff(prev, this);
    if changes.is_empty() {
        return (
            format!("--- {prev_name}\n+++ {this_name}\nno structural differences\n"),
            0,
        );
    }
    (
        irdump::diff::report(prev_name, this_name, &changes),
        changes.len(),
    )
}
