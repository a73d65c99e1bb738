#!/usr/bin/env bash
# Runs the VS Code extension tests: node unit tests of the pure parts, then
# the extension-host tests inside a real VS Code (code-server + chromium via
# playwright-core), with a screenshot of an inline diff in its temp dir
# (AGENTLS_SCREENSHOT names another place: scripts/update-screenshot.sh
# writes the README's image with it; tests never change tracked files).
# Last line: "vscode: N passed, N failed, N skipped"; the exit code is the verdict.
# Needs test/vscode/setup.sh (run here; cached after the first time).
# AGENTLS_VSCODE_ONLY=<regexp> runs only the extension-host tests it matches.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
EXT="$ROOT/editors/vscode"
t0=$(date +%s)

bash "$ROOT/test/vscode/setup.sh" >/dev/null
setup_s=$(( $(date +%s) - t0 ))
# shellcheck disable=SC1091
source "${AGENTLS_CI_CACHE:-/var/cache/agentls-ci/vscode}/env.sh"

TMP="$(mktemp -d /tmp/agentls-vscode.XXXXXX)"
OUT="$TMP/out"; WS="$TMP/ws"; mkdir -p "$OUT" "$WS/.vscode" "$TMP/bin" "$TMP/home" "$TMP/xdg/config" "$TMP/xdg/data" "$TMP/xdg/cache" "$TMP/xdg/state"
CS_PGID=""
cleanup() {
  if [ -n "$CS_PGID" ]; then kill -TERM -- "-$CS_PGID" 2>/dev/null || true; sleep 0.5; kill -KILL -- "-$CS_PGID" 2>/dev/null || true; fi
  [ -n "${KEEP_TMP:-}" ] || rm -rf "$TMP"
}
trap cleanup EXIT

echo "vscode: building agentls and the extension"
(cd "$ROOT" && CGO_ENABLED=0 go build -o "$TMP/bin/agentls" ./cmd/agentls)
export AGENTLS_BIN="$TMP/bin/agentls"
cd "$EXT"
if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then npm ci --no-audit --no-fund --loglevel=error >/dev/null; fi
npm run -s typecheck
npm run -s build

pass=0; fail=0; skipped=0
echo "vscode: unit tests"
if node scripts/build.mjs --unit && node --test --test-reporter=spec out/unit/*.test.js >"$OUT/unit.txt" 2>&1; then unit_ok=1; else unit_ok=0; fi
sed -n '/^ℹ tests/,$p' "$OUT/unit.txt"
[ "$unit_ok" = 1 ] || cat "$OUT/unit.txt"
pass=$((pass + $(sed -n 's/^ℹ pass \([0-9]*\)/\1/p' "$OUT/unit.txt")))
fail=$((fail + $(sed -n 's/^ℹ fail \([0-9]*\)/\1/p' "$OUT/unit.txt")))
skipped=$((skipped + $(sed -n 's/^ℹ skipped \([0-9]*\)/\1/p' "$OUT/unit.txt")))
[ "$unit_ok" = 1 ] || [ "$fail" -gt 0 ] || fail=$((fail + 1))

echo "vscode: extension-host tests in code-server"
cat >"$WS/.vscode/settings.json" <<JSON
{ "agentls.path": "$TMP/bin/agentls", "agentls.mode": "default", "workbench.startupEditor": "none", "security.workspace.trust.enabled": false,
  "workbench.tips.enabled": false, "chat.commandCenter.enabled": false, "workbench.secondarySideBar.defaultVisibility": "hidden",
  "files.autoSave": "off" }
JSON
PORT=$(node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
printf 'bind-addr: 127.0.0.1:%s\nauth: none\ncert: false\n' "$PORT" >"$TMP/cs.yaml"
# code-server gives the extension host a login-shell PATH, so the binary is
# named in the workspace settings (agentls.path).
HOME="$TMP/home" XDG_CONFIG_HOME="$TMP/xdg/config" XDG_DATA_HOME="$TMP/xdg/data" XDG_CACHE_HOME="$TMP/xdg/cache" XDG_STATE_HOME="$TMP/xdg/state" \
setsid "$AGENTLS_CODE_SERVER" --config "$TMP/cs.yaml" --user-data-dir "$TMP/ud" --extensions-dir "$TMP/exts" \
  --disable-telemetry --disable-update-check --disable-workspace-trust --vscode-option enable-smoke-test-driver "$WS" >"$OUT/code-server.log" 2>&1 &
CS_PGID=$!
for _ in $(seq 1 150); do
  node -e 'fetch(process.argv[1]).then(r=>process.exit(r.ok?0:1),()=>process.exit(1))' "http://127.0.0.1:$PORT/healthz" && break
  sleep 0.2
done
SHOT="${AGENTLS_SCREENSHOT:-$OUT/vscode-inline-diff.png}"
mkdir -p "$(dirname "$SHOT")"
host_ok=1
PORT="$PORT" WS="$WS" EXT="$EXT" OUT="$OUT" SHOT="$SHOT" node "$ROOT/test/vscode/driver.mjs" || host_ok=0
if [ -f "$OUT/results.jsonl" ]; then
  while IFS= read -r line; do
    st=$(node -e 'const r=JSON.parse(process.argv[1]);console.log(r.status+"\t"+r.name+(r.error?"\n    "+r.error.split("\n").slice(0,6).join("\n    "):""))' "$line")
    echo "  $st"
    case "$st" in pass*) pass=$((pass + 1));; fail*) fail=$((fail + 1));; skip*) skipped=$((skipped + 1));; esac
  done <"$OUT/results.jsonl"
fi
if [ "$host_ok" = 0 ] && [ "$fail" = 0 ]; then
  echo "vscode: the extension-host run failed without a test result; code-server log:"; tail -30 "$OUT/code-server.log"; fail=$((fail + 1))
fi
# The .vsix for linux-x64 builds and installs into code-server (not in a
# targeted run: AGENTLS_VSCODE_ONLY picks extension-host tests by name).
echo "vscode: packaging linux-x64 and installing it into code-server"
if [ -n "${AGENTLS_VSCODE_ONLY:-}" ]; then
  echo "  skip	packaging (AGENTLS_VSCODE_ONLY is set)"; skipped=$((skipped + 1))
elif AGENTLS_TARGETS=linux-x64 AGENTLS_PACKAGE_OUT="$TMP/vsix" node scripts/package.mjs >"$OUT/package.log" 2>&1 && \
   HOME="$TMP/home" "$AGENTLS_CODE_SERVER" --extensions-dir "$TMP/exts-install" --user-data-dir "$TMP/ud2" --install-extension "$TMP/vsix/agentls-linux-x64.vsix" >"$OUT/install.log" 2>&1 && \
   [ -x "$(ls -d "$TMP"/exts-install/agentls.agentls-*/bin/linux-x64/agentls 2>/dev/null | head -1)" ]; then
  echo "  pass	the linux-x64 .vsix builds and installs into code-server (with its bundled agentls)"; pass=$((pass + 1))
else
  echo "  fail	the linux-x64 .vsix builds and installs into code-server"; tail -20 "$OUT/package.log" "$OUT/install.log" 2>/dev/null || true; fail=$((fail + 1))
fi
# Issue 7: the whole stage stays under 10 minutes. A first run on a machine
# also installs code-server and its kin (setup.sh, minutes); with the cache
# warm (setup under a minute) the limit is enforced.
took=$(( $(date +%s) - t0 ))
echo "vscode: took $took s (setup $setup_s s)"
if [ "$took" -gt 600 ]; then
  if [ "$setup_s" -lt 60 ]; then
    echo "  fail	the VS Code stage took $took s with the cache warm (limit 600 s)"; fail=$((fail + 1))
  else
    echo "  note	the VS Code stage took $took s, $setup_s s of it installing into the cache (limit 600 s applies once it is warm)"
  fi
fi
echo "vscode: $pass passed, $fail failed, $skipped skipped"
[ "$fail" = 0 ]
