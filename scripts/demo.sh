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

# The pinned client CLI and the binary, built before HOME is pointed at the scratch home;
# MCP_DEPLOY_BIN names another binary instead (the packaged /usr/bin/mcp-deploy).
if [ ! -x node_modules/.bin/claude ]; then
  npm ci --no-audit --no-fund
fi
if [ -n "${MCP_DEPLOY_BIN:-}" ]; then
  bin=$MCP_DEPLOY_BIN
else
  cargo build --release --quiet
  bin="$repo/target/release/mcp-deploy"
fi

scratch=$(mktemp -d "${TMPDIR:-/tmp}/mcp-deploy-demo.XXXXXX")
if [ "${KEEP:-0}" = 1 ]; then
  echo "# keeping $scratch"
else
  trap 'rm -rf "$scratch"' EXIT
fi
export HOME="$scratch/home" CLAUDE_CONFIG_DIR="$scratch/claude"
export DISABLE_AUTOUPDATER=1 CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 \
  DISABLE_TELEMETRY=1 DISABLE_ERROR_REPORTING=1
export PATH="$repo/node_modules/.bin:$PATH"
mkdir -p "$HOME"

ct_sha=c0de7001c0de7001c0de7001c0de7001c0de7001
or_sha=0c4e57a7a0c4e57a7a0c4e57a7a0c4e57a7a0c4e
step() { printf '\n$ %s\n' "$*"; "$@"; }

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
