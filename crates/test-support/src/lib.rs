//! What the workspace's tests share.
//!
//! - One policy for the outside tools and fixtures some tests drive (Neovim,
//!   the TextMate grammar's npm packages, NumPy, Graphviz, the shared oracle
//!   and MindSpore fixtures, the repository's fixture files, MindSpore, a CUDA
//!   GPU, NVRTC): [`require`] hands the tool to the test, or says why it is
//!   missing. A missing tool skips the test with `skipped: <test>: <reason>`
//!   on stderr (written past the test harness's capture, so `cargo test`
//!   shows it), unless `MIRDSL_REQUIRE_TOOLS` asks for the tool: then the test
//!   fails with the reason, so CI cannot take a skip for a pass.
//!   `MIRDSL_REQUIRE_TOOLS=1` (or `all`) asks for every tool `.ci/run`
//!   installs ([`Tool::installed_by_ci`]); MindSpore, the GPU, NVRTC and JAX are
//!   asked for only by name (`MIRDSL_REQUIRE_TOOLS=mindspore,gpu`, or a list
//!   such as `nvim,numpy`).
//! - [`lsp`]: an LSP client for the tests that drive a `mirdsl lsp` process,
//!   and the base protocol's framing for the in-process ones.
//! - `ops` (feature `ops`): calling registry primitives eagerly on tensors
//!   with attributes, their shape rules, and comparing results.
//! - `fuzz` (feature `fuzz`): the format readers' fuzz targets, run by the
//!   stable mutation loop (`crates/mirdsl/tests/fuzz.rs`) and by cargo-fuzz
//!   (`fuzz/`).

use std::fmt::Display;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

#[cfg(feature = "fuzz")]
pub mod fuzz;
pub mod lsp;
#[cfg(feature = "ops")]
pub mod ops;
#[cfg(feature = "ops")]
pub mod rule_calls;

/// The environment variable that turns skips into failures.
pub const REQUIRE_VAR: &str = "MIRDSL_REQUIRE_TOOLS";

/// An outside program or fixture a test needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tool {
    /// Neovim 0.11 (`MIRDSL_NVIM` or `PATH`; `editors/nvim/test/setup.sh`).
    Nvim,
    /// Node and the TextMate grammar's npm packages (`npm ci` in
    /// `grammar/textmate`).
    Grammar,
    /// `python3` with NumPy.
    NumPy,
    /// Graphviz's `dot`.
    Graphviz,
    /// The MindSpore oracle fixtures (`../shared/fixtures/oracle`,
    /// `MIRDSL_ORACLE_DIR`).
    Oracle,
    /// MindSpore's exported artefacts (`../shared/fixtures/mindspore`,
    /// `MIRDSL_MINDSPORE_FIXTURES`).
    MindSporeFixtures,
    /// A fixture file of the repository (`testdata/`, the model zoo).
    Testdata,
    /// A Python with MindSpore 2.10 (`MIRDSL_MINDSPORE_PYTHON`); optional.
    MindSpore,
    /// A CUDA driver, device, NVRTC and cuBLAS; optional.
    Gpu,
    /// `python3` with JAX (`pip install jax`), the reference for the
    /// functional transforms; optional.
    Jax,
    /// NVRTC alone (`MIRDSL_NVRTC_LIB`); optional.
    Nvrtc,
}

impl Tool {
    pub const ALL: [Tool; 11] = [
        Tool::Nvim,
        Tool::Grammar,
        Tool::NumPy,
        Tool::Graphviz,
        Tool::Oracle,
        Tool::MindSporeFixtures,
        Tool::Testdata,
        Tool::MindSpore,
        Tool::Gpu,
        Tool::Nvrtc,
        Tool::Jax,
    ];

    /// Its name in `MIRDSL_REQUIRE_TOOLS`.
    pub fn name(self) -> &'static str {
        match self {
            Tool::Nvim => "nvim",
            Tool::Grammar => "grammar",
            Tool::NumPy => "numpy",
            Tool::Graphviz => "graphviz",
            Tool::Oracle => "oracle",
            Tool::MindSporeFixtures => "mindspore-fixtures",
            Tool::Testdata => "testdata",
            Tool::MindSpore => "mindspore",
            Tool::Gpu => "gpu",
            Tool::Nvrtc => "nvrtc",
            Tool::Jax => "jax",
        }
    }

    /// The tool a name in `MIRDSL_REQUIRE_TOOLS` stands for (`zoo` is
    /// another name for the repository's fixtures, `node` for the grammar's
    /// packages, `dot` for Graphviz).
    pub fn from_name(name: &str) -> Option<Tool> {
        let name = name.trim().to_ascii_lowercase();
        let alias = match name.as_str() {
            "zoo" => Some(Tool::Testdata),
            "node" | "textmate" => Some(Tool::Grammar),
            "dot" => Some(Tool::Graphviz),
            "neovim" => Some(Tool::Nvim),
            "cuda" => Some(Tool::Gpu),
            _ => None,
        };
        alias.or_else(|| Tool::ALL.into_iter().find(|t| t.name() == name))
    }

    /// Whether `.ci/run` installs it (so `MIRDSL_REQUIRE_TOOLS=1` asks for
    /// it): all but MindSpore (an 800 MB install), the GPU and NVRTC (CI has
    /// no GPU).
    pub fn installed_by_ci(self) -> bool {
        !matches!(self, Tool::MindSpore | Tool::Gpu | Tool::Nvrtc | Tool::Jax)
    }

    /// Whether `MIRDSL_REQUIRE_TOOLS` asks for it (panics on a name that is
    /// no tool: a misspelt requirement must not pass silently).
    pub fn required(self) -> bool {
        let spec = std::env::var(REQUIRE_VAR).unwrap_or_default();
        match requires(&spec, self) {
            Ok(required) => required,
            Err(e) => panic!("{e}"),
        }
    }
}

/// Whether the value `spec` of `MIRDSL_REQUIRE_TOOLS` asks for `tool`:
/// empty or `0` asks for none, `1` or `all` for those CI installs, otherwise a
/// list of names separated by commas or blanks (which may also hold `all`).
pub fn requires(spec: &str, tool: Tool) -> Result<bool, String> {
    let mut required = false;
    for word in spec.split([',', ' ', '\t']).filter(|w| !w.is_empty()) {
        let hit = match word.to_ascii_lowercase().as_str() {
            "0" => false,
            "1" | "all" => tool.installed_by_ci(),
            _ => match Tool::from_name(word) {
                Some(t) => t == tool,
                None => {
                    let names: Vec<&str> = Tool::ALL.iter().map(|t| t.name()).collect();
                    return Err(format!(
                        "{REQUIRE_VAR} names `{word}`, which is no tool (1, all, {})",
                        names.join(", ")
                    ));
                }
            },
        };
        required |= hit;
    }
    Ok(required)
}

/// The tool `found`, or `None` when it is missing: the test then prints
/// `skipped: <test>: <reason>` and should return, unless
/// `MIRDSL_REQUIRE_TOOLS` asks for the tool, where this panics with the
/// reason.
#[track_caller]
pub fn require<T, E: Display>(tool: Tool, found: Result<T, E>) -> Option<T> {
    match found {
        Ok(t) => Some(t),
        Err(why) => {
            missing(tool, why);
            None
        }
    }
}

/// [`require`] for a tool found by a test's own check: whether it is there.
#[track_caller]
pub fn require_that(tool: Tool, available: bool, why: impl Display) -> bool {
    if !available {
        missing(tool, why);
    }
    available
}

/// `tool` is missing: a failure where `MIRDSL_REQUIRE_TOOLS` asks for it, a
/// printed skip otherwise.
#[track_caller]
pub fn missing(tool: Tool, why: impl Display) {
    if tool.required() {
        panic!(
            "{REQUIRE_VAR}={} requires {}, which is missing: {why}",
            std::env::var(REQUIRE_VAR).unwrap_or_default(),
            tool.name()
        );
    }
    skip(why);
}

/// Prints `skipped: <test>: <reason>` (for a skip that no tool explains,
/// such as a test of the no-GPU behaviour on a machine with a GPU). It goes
/// straight to stderr, past libtest's capture, so `cargo test` shows it.
pub fn skip(why: impl Display) {
    let _ = writeln!(std::io::stderr().lock(), "skipped: {}: {why}", test_name());
}

/// The running test's name (libtest names each test's thread after it).
pub fn test_name() -> String {
    std::thread::current()
        .name()
        .filter(|n| *n != "main")
        .unwrap_or("(a test)")
        .to_string()
}

// ---------------------------------------------------------------------------
// Finding the tools.

/// The repository's root.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The Python with MindSpore 2.10 that `MIRDSL_MINDSPORE_PYTHON` names.
pub fn mindspore_python() -> Result<PathBuf, String> {
    std::env::var_os("MIRDSL_MINDSPORE_PYTHON")
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .ok_or_else(|| "set MIRDSL_MINDSPORE_PYTHON to a python with mindspore==2.10.0".into())
}

/// A Neovim 0.11: `MIRDSL_NVIM`, else the first `nvim` on `PATH`.
pub fn nvim() -> Result<PathBuf, String> {
    let candidates: Vec<PathBuf> = match std::env::var_os("MIRDSL_NVIM") {
        Some(p) => vec![PathBuf::from(p)],
        None => std::env::var_os("PATH")
            .map(|p| std::env::split_paths(&p).map(|d| d.join("nvim")).collect())
            .unwrap_or_default(),
    };
    let mut too_old = Vec::new();
    for nvim in candidates.iter().filter(|p| p.is_file()) {
        let out = Command::new(nvim)
            .arg("--version")
            .output()
            .map_err(|e| format!("cannot run {}: {e}", nvim.display()))?;
        let version = String::from_utf8_lossy(&out.stdout);
        let first = version.lines().next().unwrap_or_default().to_string();
        // `vim.lsp.start`, inlay hints and `semantic_tokens.get_at_pos` need 0.11.
        let minor = first
            .strip_prefix("NVIM v0.")
            .and_then(|v| v.split('.').next())
            .and_then(|m| m.parse::<u32>().ok());
        if minor.is_some_and(|m| m >= 11) {
            return Ok(nvim.clone());
        }
        too_old.push(format!("{} is {first}", nvim.display()));
    }
    if !too_old.is_empty() {
        return Err(format!(
            "{}; the test needs Neovim 0.11",
            too_old.join(", ")
        ));
    }
    Err("no `nvim` found (set MIRDSL_NVIM, or run editors/nvim/test/run.sh)".into())
}

/// `grammar/textmate`, with its npm packages installed and Node to run them.
pub fn textmate_grammar() -> Result<PathBuf, String> {
    let dir = repo_root().join("grammar/textmate");
    if !dir.join("node_modules/vscode-textmate").exists() {
        return Err("run `npm ci` in grammar/textmate to enable the TextMate grammar tests".into());
    }
    match Command::new("node").arg("--version").output() {
        Ok(o) if o.status.success() => Ok(dir),
        Ok(o) => Err(format!("`node --version` failed ({})", o.status)),
        Err(e) => Err(format!("cannot run node: {e}")),
    }
}

/// `python3` with NumPy.
pub fn numpy() -> Result<(), String> {
    match Command::new("python3")
        .args(["-c", "import numpy"])
        .output()
    {
        Ok(o) if o.status.success() => Ok(()),
        Ok(_) => Err("NumPy is not installed (`pip install numpy`)".into()),
        Err(e) => Err(format!("cannot run python3: {e}")),
    }
}

/// `python3` with JAX.
pub fn jax() -> Result<(), String> {
    match Command::new("python3").args(["-c", "import jax"]).output() {
        Ok(o) if o.status.success() => Ok(()),
        Ok(_) => Err("JAX is not installed (`pip install jax`)".into()),
        Err(e) => Err(format!("cannot run python3: {e}")),
    }
}

/// Graphviz's `dot`.
pub fn graphviz() -> Result<(), String> {
    match Command::new("dot").arg("-V").output() {
        Ok(o) if o.status.success() => Ok(()),
        _ => Err("Graphviz `dot` is not installed (apt-get install -y graphviz)".into()),
    }
}

/// The oracle fixtures (the directory with `run_cases.py`):
/// `$MIRDSL_ORACLE_DIR`, else `testdata/oracle`, else the shared fixtures
/// next to the repository.
pub fn oracle_dir() -> Result<PathBuf, String> {
    if let Some(d) = std::env::var_os("MIRDSL_ORACLE_DIR") {
        return Ok(PathBuf::from(d));
    }
    let root = repo_root();
    [
        root.join("testdata/oracle"),
        root.join("../shared/fixtures/oracle"),
        PathBuf::from("/work/shared/fixtures/oracle"),
    ]
    .into_iter()
    .find(|d| d.join("run_cases.py").is_file())
    .ok_or_else(|| {
        "no oracle fixtures (set MIRDSL_ORACLE_DIR to the directory with run_cases.py)".into()
    })
}

/// MindSpore's artefacts: `$MIRDSL_MINDSPORE_FIXTURES`, else
/// `../shared/fixtures/mindspore` next to the repository.
pub fn mindspore_fixtures() -> Result<PathBuf, String> {
    let dir = std::env::var_os("MIRDSL_MINDSPORE_FIXTURES")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join("../shared/fixtures/mindspore"));
    if dir.is_dir() {
        Ok(dir)
    } else {
        Err(format!(
            "MindSpore fixtures not found at {} (set MIRDSL_MINDSPORE_FIXTURES)",
            dir.display()
        ))
    }
}

/// A fixture file of the repository (`testdata/...`), read.
pub fn testdata(path: &str) -> Result<String, String> {
    let file = repo_root().join("testdata").join(path);
    std::fs::read_to_string(&file).map_err(|e| format!("no {}: {e}", file.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_spec_names_tools() {
        assert_eq!(requires("", Tool::Nvim), Ok(false));
        assert_eq!(requires("0", Tool::Nvim), Ok(false));
        for all in ["1", "all", "ALL"] {
            for tool in Tool::ALL {
                assert_eq!(
                    requires(all, tool),
                    Ok(tool.installed_by_ci()),
                    "{all} {tool:?}"
                );
            }
        }
        assert_eq!(requires("1,mindspore", Tool::MindSpore), Ok(true));
        assert_eq!(requires("mindspore, gpu", Tool::Gpu), Ok(true));
        assert_eq!(requires("mindspore,gpu", Tool::Nvim), Ok(false));
        assert_eq!(requires("nvim numpy", Tool::NumPy), Ok(true));
        assert_eq!(requires("zoo", Tool::Testdata), Ok(true));
        assert_eq!(requires("dot", Tool::Graphviz), Ok(true));
        let e = requires("nvim,numpi", Tool::Nvim).unwrap_err();
        assert!(e.contains("`numpi`, which is no tool"), "{e}");
        for tool in Tool::ALL {
            assert_eq!(Tool::from_name(tool.name()), Some(tool));
        }
    }

    #[test]
    fn a_found_tool_is_handed_over() {
        assert_eq!(require(Tool::Gpu, Ok::<_, String>(7)), Some(7));
        assert!(require_that(Tool::Gpu, true, "unused"));
    }
}
