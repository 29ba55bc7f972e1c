//! `mirdsl lsp` end to end through a real Neovim 0.11 (its LSP client, inlay
//! hints and semantic tokens): runs `editors/nvim/test/e2e.lua` headless on a
//! copy of `testdata/mlp.mir`. Skipped, with the reason printed, when no
//! Neovim 0.11 is found through `MIRDSL_NVIM` or `PATH`, a failure then with
//! `MIRDSL_REQUIRE_TOOLS=1` or `nvim` (`editors/nvim/test/run.sh` installs one
//! into `target/nvim-venv`).

use std::path::Path;
use std::process::Command;

use test_support::Tool;

#[test]
fn neovim_end_to_end() {
    let Some(nvim) = test_support::require(Tool::Nvim, test_support::nvim()) else {
        return;
    };
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let script = root.join("editors/nvim/test/e2e.lua");
    let home = std::env::temp_dir().join(format!("mirdsl-nvim-e2e-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&home);
    std::fs::create_dir_all(&home).unwrap();
    let file = home.join("mlp.mir");
    std::fs::copy(root.join("testdata/mlp.mir"), &file).unwrap();
    let mut cmd = Command::new(&nvim);
    cmd.arg("--headless")
        .arg("--clean")
        .arg(&file)
        .arg("-c")
        .arg(format!("luafile {}", script.display()))
        .env("MIRDSL", env!("CARGO_BIN_EXE_mirdsl"))
        .env("HOME", &home);
    for var in [
        "XDG_CONFIG_HOME",
        "XDG_DATA_HOME",
        "XDG_STATE_HOME",
        "XDG_CACHE_HOME",
    ] {
        cmd.env(var, home.join(var.to_lowercase()));
    }
    let out = cmd.output().expect("cannot run nvim");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    println!("{stdout}");
    let _ = std::fs::remove_dir_all(&home);
    assert!(
        out.status.success() && stdout.contains("ok: all checks passed"),
        "Neovim end-to-end test failed ({}):\n{stdout}\n{stderr}",
        out.status
    );
}

/// A workspace of several files (`testdata/multifile`): go to definition
/// opens the library file, hover and the graph view cross files, and the
/// model's diagnostics follow an edit of the library.
#[test]
fn neovim_multifile_workspace() {
    let Some(nvim) = test_support::require(Tool::Nvim, test_support::nvim()) else {
        return;
    };
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let script = root.join("editors/nvim/test/multifile.lua");
    let home = std::env::temp_dir().join(format!("mirdsl-nvim-multi-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&home);
    let dir = home.join("ws");
    std::fs::create_dir_all(&dir).unwrap();
    for f in ["model.mir", "layers.mir", "losses.mir"] {
        std::fs::copy(root.join("testdata/multifile").join(f), dir.join(f)).unwrap();
    }
    let mut cmd = Command::new(&nvim);
    cmd.arg("--headless")
        .arg("--clean")
        .arg(dir.join("model.mir"))
        .arg("-c")
        .arg(format!("luafile {}", script.display()))
        .env("MIRDSL", env!("CARGO_BIN_EXE_mirdsl"))
        .env("HOME", &home);
    for var in [
        "XDG_CONFIG_HOME",
        "XDG_DATA_HOME",
        "XDG_STATE_HOME",
        "XDG_CACHE_HOME",
    ] {
        cmd.env(var, home.join(var.to_lowercase()));
    }
    let out = cmd.output().expect("cannot run nvim");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    println!("{stdout}");
    let _ = std::fs::remove_dir_all(&home);
    assert!(
        out.status.success() && stdout.contains("ok: all checks passed"),
        "Neovim multi-file test failed ({}):\n{stdout}\n{stderr}",
        out.status
    );
}

/// A MindSpore compile dump (`testdata/irdumps/hof_type_inference.ir`, filetype
/// `mindspore-ir`): no diagnostics, outline, folding, definition and hover.
#[test]
fn neovim_compile_dump() {
    let Some(nvim) = test_support::require(Tool::Nvim, test_support::nvim()) else {
        return;
    };
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let script = root.join("editors/nvim/test/dump.lua");
    let home = std::env::temp_dir().join(format!("mirdsl-nvim-dump-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&home);
    std::fs::create_dir_all(&home).unwrap();
    let file = home.join("01_type_inference.ir");
    std::fs::copy(root.join("testdata/irdumps/hof_type_inference.ir"), &file).unwrap();
    let mut cmd = Command::new(&nvim);
    cmd.arg("--headless")
        .arg("--clean")
        .arg(&file)
        .arg("-c")
        .arg(format!("luafile {}", script.display()))
        .env("MIRDSL", env!("CARGO_BIN_EXE_mirdsl"))
        .env("MIRDSL_REPO", &root)
        .env("HOME", &home);
    for var in [
        "XDG_CONFIG_HOME",
        "XDG_DATA_HOME",
        "XDG_STATE_HOME",
        "XDG_CACHE_HOME",
    ] {
        cmd.env(var, home.join(var.to_lowercase()));
    }
    let out = cmd.output().expect("cannot run nvim");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    println!("{stdout}");
    let _ = std::fs::remove_dir_all(&home);
    assert!(
        out.status.success() && stdout.contains("ok: all checks passed"),
        "Neovim compile-dump test failed ({}):\n{stdout}\n{stderr}",
        out.status
    );
}
