#!/usr/bin/env bash
# End-to-end test of debugging with nvim-dap: Neovim 0.11 from setup.sh, `mirdsl`
# built from this checkout, nvim-dap from deps/nvim-dap (a test-only copy at a
# pinned commit, see deps/README.md; $MIRDSL_NVIM_DAP names another), and
# crates/dap's test programs. Runs dap_e2e.lua.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
NVIM="${MIRDSL_NVIM:-$("$here/setup.sh")}"
SERVER="${MIRDSL:-$root/target/debug/mirdsl}"
NVIM_DAP="${MIRDSL_NVIM_DAP:-$here/deps/nvim-dap}"
NVIM_DAP_COMMIT=9e848e09a697ee95302a3ef2dd43fd6eb709e570
if [ ! -f "$NVIM_DAP/lua/dap.lua" ]; then
  echo "fetching nvim-dap $NVIM_DAP_COMMIT into $NVIM_DAP" >&2
  tmp="$(mktemp -d)"
  git -C "$tmp" init -q && git -C "$tmp" fetch -q --depth 1 https://github.com/mfussenegger/nvim-dap "$NVIM_DAP_COMMIT" \
    && git -C "$tmp" checkout -q FETCH_HEAD
  mkdir -p "$NVIM_DAP" && cp -r "$tmp/lua" "$tmp/plugin" "$tmp/LICENSE.txt" "$NVIM_DAP/"
  rm -rf "$tmp"
fi
if [ -z "${MIRDSL:-}" ]; then
  if ! (cd "$root" && cargo build -q -p mirdsl); then
    [ -x "$SERVER" ] || exit 1
    echo "the build failed: testing the existing $SERVER" >&2
  fi
fi
work="$(mktemp -d /tmp/mirdsl-nvim-dap.XXXXXX)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/ws" "$work/home"
cp -r "$root/crates/dap/tests/data/." "$work/ws/"
cd "$work/ws"
HOME="$work/home" XDG_CONFIG_HOME="$work/home/.config" XDG_DATA_HOME="$work/home/.local/share" \
XDG_STATE_HOME="$work/home/.local/state" XDG_CACHE_HOME="$work/home/.cache" \
MIRDSL="$SERVER" MIRDSL_WS="$work/ws" MIRDSL_PLUGIN="$root/editors/nvim" MIRDSL_NVIM_DAP="$NVIM_DAP" \
  timeout 120 "$NVIM" --headless --clean -c "luafile $here/dap_e2e.lua"
