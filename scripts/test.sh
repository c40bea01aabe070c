#!/usr/bin/env bash
# The test command: bring the pinned client CLIs (npm ci, from package-lock.json), then
# run every test (with the crash checkpoints compiled in). Tests that need the real client
# fail, not skip, when it is missing.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# The signature tests check every verdict against the real ssh-keygen (openssh-client): as root
# on Debian it is installed when missing; elsewhere a missing one fails those tests, naming it.
if ! command -v ssh-keygen >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openssh-client >/dev/null
fi
npm ci --no-audit --no-fund
./node_modules/.bin/claude --version
# Codex and gemini write into their home on any call: give them a scratch one.
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
CODEX_HOME=$scratch ./node_modules/.bin/codex --version
GEMINI_CLI_HOME=$scratch ./node_modules/.bin/gemini --version
# OpenCode and Grok write under HOME (and XDG dirs) on any call. OpenCode is pinned as its
# platform package opencode-linux-x64 (the binary the opencode-ai wrapper runs): the registry
# reachable here carries no other platform's package, so a lock with opencode-ai fails npm ci.
HOME=$scratch XDG_CONFIG_HOME=$scratch/.config XDG_DATA_HOME=$scratch/.local/share XDG_STATE_HOME=$scratch/.local/state XDG_CACHE_HOME=$scratch/.cache ./node_modules/opencode-linux-x64/bin/opencode --version
HOME=$scratch ./node_modules/.bin/grok --version
# The older client releases the tests drive (compat/versions.txt), into the shared cache; a
# release already there is reused.
bash scripts/compat.sh install
# The crash checkpoints (MCP_DEPLOY_CRASH_AT and friends) are a cargo feature, off by default so
# that no release binary carries them: the crash-recovery tests need it, and refuse to run
# without it.
cargo test --locked --features crash-checkpoints "$@"
