#!/usr/bin/env bash
# End-to-end test of the Neovim plugin (editors/nvim): Neovim 0.11 from setup.sh,
# `mirdsl` built from this checkout, the tree-sitter parser compiled with cc, and a
# temporary copy of testdata/ with a deliberately broken file. Runs plugin_e2e.lua,
# then dump_plugin.lua (MindSpore compile dumps).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
NVIM="${MIRDSL_NVIM:-$("$here/setup.sh")}"
SERVER="${MIRDSL:-$root/target/debug/mirdsl}"
if [ -z "${MIRDSL:-}" ]; then
  if ! (cd "$root" && cargo build -q -p mirdsl); then
    [ -x "$SERVER" ] || exit 1
    echo "the build failed: testing the existing $SERVER" >&2
  fi
fi
work="$(mktemp -d /tmp/mirdsl-nvim.XXXXXX)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/ws" "$work/home" "$work/parser/parser"
cp -r "$root/testdata/." "$work/ws/"
printf 'graph oops(x: f32[3]) {\n  y = Add(x, undefined_name)\n  return y\n}\n' > "$work/ws/e2e_error.mir"
"$root/editors/nvim/scripts/build-parser.sh" "$work/parser/parser" >/dev/null
cd "$work/ws"
run() {
  HOME="$work/home" XDG_CONFIG_HOME="$work/home/.config" XDG_DATA_HOME="$work/home/.local/share" \
  XDG_STATE_HOME="$work/home/.local/state" XDG_CACHE_HOME="$work/home/.cache" \
  MIRDSL="$SERVER" MIRDSL_WS="$work/ws" MIRDSL_PLUGIN="$root/editors/nvim" MIRDSL_PARSER_DIR="$work/parser" \
    timeout 120 "$NVIM" --headless --clean -c "luafile $here/$1"
}
# MIRDSL_NVIM_DUMP_ONLY=1: only the compile-dump checks (dump_plugin.lua).
[ -n "${MIRDSL_NVIM_DUMP_ONLY:-}" ] || run plugin_e2e.lua
# MindSpore compile dumps (testdata/irdumps/tiny).
run dump_plugin.lua
