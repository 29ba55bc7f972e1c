#!/usr/bin/env bash
# Builds the tree-sitter parser for Neovim from the committed generated C sources:
#   editors/nvim/scripts/build-parser.sh [OUT_DIR]   (default: editors/nvim/parser)
# writes OUT_DIR/mindir.so, which Neovim loads from any `parser/` directory on
# 'runtimepath' (the plugin's own directory is one).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
src="$here/../../../grammar/tree-sitter-mindir/src"
out="${1:-$here/../parser}"
mkdir -p "$out"
cc="${CC:-cc}"
"$cc" -shared -fPIC -O2 -std=c11 -I "$src" "$src/parser.c" "$src/scanner.c" -o "$out/mindir.so"
echo "$out/mindir.so"
