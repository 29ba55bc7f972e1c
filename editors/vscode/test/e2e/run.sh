#!/usr/bin/env bash
# End-to-end test of the extension in a real VS Code (code-server 4.99.4, VS Code
# 1.99.3) driven through Debian's Chromium with playwright-core. Installs what is
# missing (code-server under target/code-server, chromium via apt, playwright-core
# under target/editors-e2e), builds `mirdsl` and the .vsix, then runs vscode.e2e.mjs.
# Screenshots go to target/e2e-screenshots/; MIRDSL_E2E_SHOTS="$PWD/editors/vscode/test/e2e/screenshots"
# renews the ones the docs show (tracked), on purpose rather than on every run.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
EXT="$(cd "$HERE/../.." && pwd)"
ROOT="$(cd "$EXT/../.." && pwd)"
CS_DIR="$ROOT/target/code-server"
DEPS="$ROOT/target/editors-e2e"
log() { printf '== %s\n' "$*" >&2; }

if [ ! -x "$CS_DIR/node_modules/.bin/code-server" ]; then
  log "installing code-server 4.99.4 into $CS_DIR"
  command -v rg >/dev/null || { apt-get update >/dev/null; }
  bash "$ROOT/../shared/tools/install-code-server.sh" "$CS_DIR" >&2 \
    || bash /work/shared/tools/install-code-server.sh "$CS_DIR" >&2
fi
if ! command -v chromium >/dev/null; then
  log "installing chromium"
  apt-get update >/dev/null && apt-get install -y chromium >/dev/null
fi
if [ ! -d "$DEPS/node_modules/playwright-core" ]; then
  log "installing playwright-core into $DEPS"
  mkdir -p "$DEPS" && (cd "$DEPS" && { [ -f package.json ] || npm init -y >/dev/null; } \
    && npm install --no-audit --no-fund playwright-core@1.57.0 >&2)
fi

SERVER="${MIRDSL_SERVER:-$ROOT/target/debug/mirdsl}"
if [ -z "${MIRDSL_SERVER:-}" ]; then
  log "building mirdsl"
  if ! (cd "$ROOT" && cargo build -q -p mirdsl); then
    [ -x "$SERVER" ] || exit 1
    log "the build failed: testing the existing $SERVER"
  fi
fi

log "building and packaging the extension"
(cd "$EXT" && { [ -d node_modules/vscode-languageclient ] || npm ci --no-audit --no-fund >&2; } \
  && MIRDSL_BUNDLE_SERVER=0 npm run -s package >&2)

WORK="$(mktemp -d /tmp/mirdsl-e2e.XXXXXX)"
WS="$WORK/ws"; UD="$WORK/user-data"; EXTDIR="$WORK/extensions"
mkdir -p "$WS/.vscode" "$UD/User" "$EXTDIR" "$WORK/xdg"
cp -r "$ROOT/testdata/." "$WS/"
# A deliberate error for the squiggle.
printf 'graph oops(x: f32[3]) {\n  y = Add(x, undefined_name)\n  return y\n}\n' > "$WS/e2e_error.mir"
cat > "$UD/User/settings.json" <<JSON
{
  "workbench.startupEditor": "none",
  "workbench.tips.enabled": false,
  "workbench.welcomePage.walkthroughs.openOnInstall": false,
  "security.workspace.trust.enabled": false,
  "telemetry.telemetryLevel": "off",
  "update.mode": "none",
  "extensions.autoUpdate": false,
  "extensions.autoCheckUpdates": false,
  "extensions.ignoreRecommendations": true,
  "editor.inlayHints.enabled": "on",
  "editor.hover.delay": 100,
  "editor.codeLens": true,
  "chat.commandCenter.enabled": false,
  "mirdsl.server.path": "$SERVER"
}
JSON
export XDG_CONFIG_HOME="$WORK/xdg" XDG_DATA_HOME="$WORK/xdg"
CS="$CS_DIR/node_modules/.bin/code-server"
log "installing the .vsix into $EXTDIR"
"$CS" --extensions-dir "$EXTDIR" --user-data-dir "$UD" --install-extension "$EXT/mirdsl.vsix" >&2

PORT="${MIRDSL_E2E_PORT:-$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')}"
log "starting code-server on 127.0.0.1:$PORT"
"$CS" --auth none --bind-addr "127.0.0.1:$PORT" --disable-workspace-trust --disable-telemetry --disable-update-check \
  --user-data-dir "$UD" --extensions-dir "$EXTDIR" "$WS" > "$WORK/code-server.log" 2>&1 &
CS_PID=$!
CS2_PID=""
cleanup() {
  for p in "$CS_PID" $CS2_PID; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
}
trap cleanup EXIT
wait_up() {
  for _ in $(seq 1 120); do
    curl -fs "http://127.0.0.1:$1/healthz" >/dev/null 2>&1 && break
    sleep 0.5
  done
}
wait_up "$PORT"

set +e
rc=0
# MIRDSL_E2E_DEBUG_ONLY=1 runs only the debugging checks (debug.e2e.mjs),
# MIRDSL_E2E_DUMP_ONLY=1 only the compile-dump checks (dump.e2e.mjs).
if [ -z "${MIRDSL_E2E_DEBUG_ONLY:-}${MIRDSL_E2E_DUMP_ONLY:-}" ]; then
  MIRDSL_E2E_DEPS="$DEPS" MIRDSL_E2E_URL="http://127.0.0.1:$PORT/?folder=$WS" MIRDSL_E2E_WS="$WS" \
    MIRDSL_E2E_LOGS="$UD/logs" MIRDSL_E2E_SHOTS="${MIRDSL_E2E_SHOTS:-$ROOT/target/e2e-screenshots}" \
    node "$HERE/vscode.e2e.mjs" || rc=1
fi
# MindSpore compile dumps (testdata/irdumps/tiny).
if [ -z "${MIRDSL_E2E_DEBUG_ONLY:-}" ]; then
  MIRDSL_E2E_DEPS="$DEPS" MIRDSL_E2E_URL="http://127.0.0.1:$PORT/?folder=$WS" MIRDSL_E2E_WS="$WS" \
    MIRDSL_E2E_SHOTS="${MIRDSL_E2E_SHOTS:-$ROOT/target/e2e-screenshots}" \
    node "$HERE/dump.e2e.mjs" || rc=1
fi
# Debugging: the Debug lens and mirdsl dap.
if [ -z "${MIRDSL_E2E_DUMP_ONLY:-}" ]; then
  MIRDSL_E2E_DEPS="$DEPS" MIRDSL_E2E_URL="http://127.0.0.1:$PORT/?folder=$WS" MIRDSL_E2E_WS="$WS" \
    MIRDSL_E2E_SHOTS="${MIRDSL_E2E_SHOTS:-$ROOT/target/e2e-screenshots}" \
    node "$HERE/debug.e2e.mjs" || rc=1
  # Workspace trust: a second code-server with trust on and no startup prompt,
  # so its folder (a copy) opens untrusted, in Restricted Mode.
  WS2="$WORK/untrusted"; UD2="$WORK/user-data-untrusted"
  mkdir -p "$WS2" "$UD2/User" && cp -r "$ROOT/testdata/." "$WS2/"
  sed -e 's/"security.workspace.trust.enabled": false,/"security.workspace.trust.enabled": true,\n  "security.workspace.trust.startupPrompt": "never",/' \
    "$UD/User/settings.json" > "$UD2/User/settings.json"
  PORT2="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
  "$CS" --auth none --bind-addr "127.0.0.1:$PORT2" --disable-telemetry --disable-update-check \
    --user-data-dir "$UD2" --extensions-dir "$EXTDIR" "$WS2" > "$WORK/code-server-untrusted.log" 2>&1 &
  CS2_PID=$!
  wait_up "$PORT2"
  MIRDSL_E2E_DEPS="$DEPS" MIRDSL_E2E_URL="http://127.0.0.1:$PORT2/?folder=$WS2" MIRDSL_E2E_WS="$WS2" \
    MIRDSL_E2E_SHOTS="${MIRDSL_E2E_SHOTS:-$ROOT/target/e2e-screenshots}" \
    node "$HERE/debug-trust.e2e.mjs" || rc=1
fi
set -e
if [ $rc -ne 0 ]; then
  log "code-server log (tail):"; tail -20 "$WORK/code-server.log" >&2
  find "$UD/logs" -name '*MindIR*' -o -name 'exthost.log' 2>/dev/null | while read -r f; do log "$f"; tail -30 "$f" >&2; done
  log "logs kept in $WORK"
else
  cleanup; trap - EXIT; rm -rf "$WORK"
fi
exit $rc
