#!/usr/bin/env bash
# The main job end to end on the built-in sample deployment: lay out codetools (a release
# layout) and orchestrata (a prefix layout) in a scratch directory, install both with the real
# Claude Code CLI into a scratch client config, install again (nothing changes), verify
# identity as CI would (with an MCP handshake with the sample server), show status, then
# uninstall. Nothing outside the scratch directory is touched; KEEP=1 keeps it for a look
# afterwards. MCP_DEPLOY_BIN=PATH runs that binary instead of building one.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
repo=$(pwd)

# phase WHAT: say what comes next on stderr, and how long the phase before it took.
phase_start=$SECONDS
phase_name=""
phase() {
  if [ -n "$phase_name" ]; then
    echo "demo: $phase_name: done in $((SECONDS - phase_start)) s" >&2
  fi
  phase_name=$1
  phase_start=$SECONDS
  [ -z "$phase_name" ] || echo "demo: $phase_name…" >&2
}

# Node.js of .node-version (scripts/node.sh, as the tests run), then the one client CLI the demo
# uses, the pinned Claude Code (package.json), into .tools/demo: not the other clients' CLIs
# that `npm ci` brings for the tests. A node_modules/.bin/claude already there (the tests') is
# used as it is. The binary is built before HOME is pointed at the scratch home; MCP_DEPLOY_BIN
# names another binary instead (the packaged /usr/bin/mcp-deploy).
phase "Node.js $(cat .node-version) (.node-version)"
. scripts/node.sh
claude_version=$(node -p 'require("./package.json").dependencies["@anthropic-ai/claude-code"]')
if [ -x node_modules/.bin/claude ]; then
  claude_bin=$repo/node_modules/.bin
else
  claude_bin=$repo/.tools/demo/node_modules/.bin
  if [ "$("$claude_bin/claude" --version 2>/dev/null | cut -d' ' -f1)" != "$claude_version" ]; then
    phase "installing Claude Code $claude_version (package.json) into .tools/demo with npm, the only client it uses"
    npm install --prefix .tools/demo --no-save --no-package-lock --no-audit --no-fund \
      --loglevel=error "@anthropic-ai/claude-code@$claude_version"
  fi
fi
if [ -n "${MCP_DEPLOY_BIN:-}" ]; then
  bin=$MCP_DEPLOY_BIN
else
  phase "building mcp-deploy (cargo build --release: a few minutes the first time, seconds after)"
  cargo build --release
  bin="$repo/target/release/mcp-deploy"
fi
phase ""

scratch=$(mktemp -d "${TMPDIR:-/tmp}/mcp-deploy-demo.XXXXXX")
if [ "${KEEP:-0}" = 1 ]; then
  echo "# keeping $scratch"
else
  trap 'rm -rf "$scratch"' EXIT
fi
export HOME="$scratch/home" CLAUDE_CONFIG_DIR="$scratch/claude"
export DISABLE_AUTOUPDATER=1 CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 \
  DISABLE_TELEMETRY=1 DISABLE_ERROR_REPORTING=1
export PATH="$claude_bin:$PATH"
mkdir -p "$HOME"

ct_sha=c0de7001c0de7001c0de7001c0de7001c0de7001
or_sha=0c4e57a7a0c4e57a7a0c4e57a7a0c4e57a7a0c4e
# step COMMAND…: show it, run it, say how long it took.
step() {
  printf '\n$ %s\n' "$*"
  local t0=${EPOCHREALTIME/./}
  "$@"
  echo "  ($(((${EPOCHREALTIME/./} - t0) / 1000)) ms)"
}

step "$bin" sample "$scratch/opt"
step "$bin" install --root "$scratch/opt" --name-suffix -demo \
  --expect-commit "codetools=$ct_sha" --expect-commit "orchestrata=$or_sha"
step "$bin" install --root "$scratch/opt" --name-suffix -demo
step cat "$CLAUDE_CONFIG_DIR/mcp-registered.json"
step "$bin" verify-identity --prefix "$scratch/opt/codetools" --expect-commit "$ct_sha" \
  --registered "$CLAUDE_CONFIG_DIR/mcp-registered.json" --name codetools-demo --handshake
step "$bin" verify-identity --root "$scratch/opt" --name-suffix -demo --require-live -q \
  --expect-commit "codetools=$ct_sha" --expect-commit "orchestrata=$or_sha"
step "$bin" status --root "$scratch/opt" --name-suffix -demo
step claude mcp get codetools-demo
step "$bin" uninstall --root "$scratch/opt" --name-suffix -demo
printf '\ndemo passed: installed, re-installed unchanged, verified with a handshake, uninstalled\n'
