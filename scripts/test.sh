#!/usr/bin/env bash
# The test command: bring the pinned Claude Code CLI (npm ci, from package-lock.json), then
# run every test. Tests that need the real client fail, not skip, when it is missing.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
npm ci --no-audit --no-fund
./node_modules/.bin/claude --version
cargo test --locked "$@"
