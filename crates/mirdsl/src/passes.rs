//! `mirdsl passes DIR`: a folder of MindSpore compile dumps (`save_graphs`)
//! as the pipeline it records: the stages in the order MindSpore wrote them,
//! the nodes of each, and the primitives each stage made appear or disappear.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::{EXIT_FAILURE, EXIT_OK, EXIT_USAGE};

#[derive(clap::Args)]
pub struct PassesArgs {
    /// A folder of `.ir` dumps (`save_graphs_path`).
    pub dir: PathBuf,
}

/// The dumps of `dir`, in pipeline order (`irdump::stages`).
pub fn stages(dir: &Path) -> Result<Vec<PathBuf>, String> {
    irdump::stages::stages(dir).map_err(|e| format!("cannot read folder {}: {e}", dir.display()))
}

fn names(prims: &BTreeMap<String, usize>, other: &BTreeMap<String, usize>) -> Vec<String> {
    prims
        .keys()
        .filter(|k| !other.contains_key(*k))
        .cloned()
        .collect()
}

pub fn passes_command(args: &PassesArgs) -> u8 {
    let files = match stages(&args.dir) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("error: {e}");
            return EXIT_USAGE;
        }
    };
    if files.is_empty() {
        eprintln!("error: {} holds no `.ir` dumps", args.dir.display());
        return EXIT_USAGE;
    }
    let mut failed = 0;
    let mut prev: Option<BTreeMap<String, usize>> = None;
    println!("{:>4}  {:>7}  {:>6}  stage", "#", "nodes", "graphs");
    for (i, path) in files.iter().enumerate() {
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        let text = match crate::read(path) {
            Ok(t) => t,
            Err(_) => {
                failed += 1;
                continue;
            }
        };
        let s = match interop::ir_text::summarize(&text) {
            Ok(s) => s,
            Err(e) => {
                println!("{i:>4}  {:>7}  {:>6}  {name}: cannot read: {e}", "-", "-");
                failed += 1;
                continue;
            }
        };
        if irdump::actors::is_actor_set(&text) {
            // The runtime's schedule of the kernel graph: its actors, by kind.
            let set = irdump::actors::parse(&text);
            let mut kinds: BTreeMap<&str, usize> = BTreeMap::new();
            let mut seen = std::collections::HashSet::new();
            for a in &set.actors {
                // An actor listed again in a section of its own (`[No input
                // kernel actors:1]`) counts once; ids repeat per block.
                let key = match &a.id {
                    Some(id) => (a.section, id.as_str()),
                    None => (0, a.name.as_str()),
                };
                if seen.insert(key) {
                    *kinds.entry(a.kind.as_str()).or_default() += 1;
                }
            }
            let kinds: Vec<String> = kinds.iter().map(|(k, n)| format!("{n} {k}")).collect();
            println!(
                "{i:>4}  {:>7}  {:>6}  {name} (MindSpore's runtime actor set: {})",
                "-",
                "-",
                kinds.join(", ")
            );
            continue;
        }
        if s.entry.is_none() {
            println!(
                "{i:>4}  {:>7}  {:>6}  {name} (not a graph: MindSpore's runtime actor set)",
                "-", "-"
            );
            continue;
        }
        println!("{i:>4}  {:>7}  {:>6}  {name}", s.nodes, s.graphs);
        if let Some(p) = &prev {
            let appeared = names(&s.prims, p);
            let gone = names(p, &s.prims);
            if !appeared.is_empty() {
                println!("{:22}+ {}", "", appeared.join(" "));
            }
            if !gone.is_empty() {
                println!("{:22}- {}", "", gone.join(" "));
            }
        } else if !s.prims.is_empty() {
            let all: Vec<&str> = s.prims.keys().map(String::as_str).collect();
            println!("{:22}  {}", "", all.join(" "));
        }
        prev = Some(s.prims);
    }
    if failed > 0 {
        EXIT_FAILURE
    } else {
        EXIT_OK
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pipeline_order() {
        let mut v: Vec<PathBuf> = [
            "final_actor_set_kernel_graph_0.ir",
            "13_optimize_0068.ir",
            "opt_pass_9_opt_b_0023.ir",
            "00_bootstrap_0000.ir",
            "hwopt_pm_0_x_0107.ir",
        ]
        .iter()
        .map(PathBuf::from)
        .collect();
        v.sort_by_key(|p| irdump::stages::order_key(p));
        let names: Vec<_> = v.iter().map(|p| p.to_string_lossy().into_owned()).collect();
        assert_eq!(
            names,
            [
                "00_bootstrap_0000.ir",
                "opt_pass_9_opt_b_0023.ir",
                "13_optimize_0068.ir",
                "hwopt_pm_0_x_0107.ir",
                "final_actor_set_kernel_graph_0.ir"
            ]
        );
    }
}
