#!/usr/bin/env bash
# agentls inside real MCP hosts: the Claude Code and Codex CLIs from npm,
# each with its model API pointed at a scripted model on 127.0.0.1
# (test/hosts/model.mjs). AGENTLS_HOSTS=all adds opencode and Gemini CLI.
# The hosts are installed once (pinned) under $AGENTLS_CI_CACHE/hosts
# (default /var/cache/agentls-ci/hosts, ~1.2 GB with all four). Run as root,
# the tests run in a network namespace with only loopback (unshare -n), so
# nothing can leave the machine. Uses $AGENTLS_BIN, or builds agentls.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
cache="${AGENTLS_CI_CACHE:-/var/cache/agentls-ci}/hosts"

# install PKG VERSION DIR: npm install of one pinned host into the cache,
# then its postinstall if npm skipped it (the native binary it puts in place).
install() {
  local pkg=$1 version=$2 dir="$cache/$3"
  if [ ! -f "$dir/.installed" ]; then
    echo "hosts: installing $pkg@$version into $dir"
    rm -rf "$dir" && mkdir -p "$dir"
    (cd "$dir" && npm install --no-audit --no-fund --loglevel=error --no-save "$pkg@$version" >/dev/null)
    if [ -f "$dir/node_modules/$pkg/install.cjs" ] && ! "$dir/node_modules/.bin/${4}" --version >/dev/null 2>&1; then
      (cd "$dir/node_modules/$pkg" && node install.cjs >/dev/null)
    fi
    touch "$dir/.installed"
  fi
  "$dir/node_modules/.bin/$4" --version >/dev/null
}

install @anthropic-ai/claude-code 2.1.328 claude-code-2.1.328 claude
install @openai/codex 0.169.0 codex-0.169.0 codex
export AGENTLS_CLAUDE="$cache/claude-code-2.1.328/node_modules/.bin/claude"
export AGENTLS_CODEX="$cache/codex-0.169.0/node_modules/.bin/codex"
tests=(claude-code.test.mjs codex.test.mjs)
if [ "${AGENTLS_HOSTS:-}" = all ]; then
  install opencode-ai 1.18.33 opencode-1.18.33 opencode
  install @google/gemini-cli 0.61.0 gemini-cli-0.61.0 gemini
  export AGENTLS_OPENCODE="$cache/opencode-1.18.33/node_modules/.bin/opencode"
  export AGENTLS_GEMINI="$cache/gemini-cli-0.61.0/node_modules/.bin/gemini"
  tests+=(opencode.test.mjs gemini.test.mjs)
fi

if [ -z "${AGENTLS_BIN:-}" ]; then
  out="$(mktemp -d)"
  (cd "$repo" && CGO_ENABLED=0 go build -o "$out/agentls" ./cmd/agentls)
  export AGENTLS_BIN="$out/agentls"
fi

cd "$here"
t0=$(date +%s)
cmd=(node --test --test-concurrency=1 --test-reporter=spec "${tests[@]}")
status=0
if [ "$(id -u)" = 0 ] && command -v ip >/dev/null && unshare -n true 2>/dev/null; then
  unshare -n sh -c 'ip link set lo up && exec "$@"' sh "${cmd[@]}" || status=$?
else
  echo "hosts: no network namespace (needs root, unshare and ip): running on the host network"
  "${cmd[@]}" || status=$?
fi
echo "hosts: ${tests[*]} in $(( $(date +%s) - t0 )) s"
exit "$status"
