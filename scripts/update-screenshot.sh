#!/usr/bin/env bash
# Retakes the README's VS Code screenshot (docs/images/vscode-inline-diff.png)
# by running the VS Code stage with the image written there. Tests alone
# never change tracked files; this is the one explicit way to update it.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
AGENTLS_SCREENSHOT="$ROOT/docs/images/vscode-inline-diff.png" bash "$ROOT/test/vscode/run.sh"
