//! A dump folder as the pipeline it records: MindSpore numbers every dump it
//! writes in one compile with a counter at the end of the name
//! (`13_optimize_0068.ir`, `opt_pass_9_opt_b_0023.ir`); dumps without one (the
//! runtime's actor sets) come after, by name. The stage before a dump is the
//! one MindSpore wrote before it in the same folder.

use std::path::{Path, PathBuf};

/// The key that orders a folder's dumps: MindSpore's counter, then the name.
pub fn order_key(path: &Path) -> (u64, String) {
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let counter = stem
        .rsplit_once('_')
        .filter(|(_, n)| n.len() >= 4 && n.chars().all(|c| c.is_ascii_digit()))
        .and_then(|(_, n)| n.parse().ok());
    (counter.unwrap_or(u64::MAX), stem)
}

/// The `.ir` dumps of `dir`, in pipeline order.
pub fn stages(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "ir") && p.is_file())
        .collect();
    files.sort_by_cached_key(|p| order_key(p));
    Ok(files)
}

/// Whether a dump is the runtime's actor set (`*actor_set*.ir`): the
/// kernels' schedule, not a graph, so no stage of the graph's pipeline.
pub fn is_actor_set(path: &Path) -> bool {
    path.file_name()
        .is_some_and(|n| n.to_string_lossy().contains("actor_set"))
}

/// The stage `step` places after `path` in its folder (`-1`: the one before),
/// actor sets left out; `None` at either end, or when `path` is not in a
/// readable folder.
pub fn neighbour(path: &Path, step: isize) -> Option<PathBuf> {
    let mut files = stages(path.parent()?).ok()?;
    files.retain(|f| !is_actor_set(f) || f.file_name() == path.file_name());
    let name = path.file_name()?;
    let at = files.iter().position(|f| f.file_name() == Some(name))?;
    let to = at.checked_add_signed(step)?;
    files.get(to).cloned()
}
