#!/usr/bin/env bash
# The release pipeline's entry point on promote: register the server deployed at --prefix
# with Claude Code at user scope, record it, and verify its identity.
#
#   deploy/install-claude-config.sh --prefix /opt/codetools [--server NAME] [install options]
#
# Everything is done by the mcp-deploy binary (MCP_DEPLOY_BIN, else mcp-deploy on PATH, else
# the one built beside this script); this script only maps a server prefix to its options.
# Any further options (--name-suffix, --expect-commit NAME=SHA, --json, --claude ...) are passed
# to `mcp-deploy install` unchanged. Exit status is mcp-deploy's: 0 ok, 1 a check failed, 2
# could not run.
set -euo pipefail

usage() {
  echo "usage: $0 --prefix DIR [--server NAME] [mcp-deploy install options]" >&2
  exit 2
}

prefix=""
server=""
rest=()
while [ $# -gt 0 ]; do
  case "$1" in
    --prefix) [ $# -ge 2 ] || usage; prefix=$2; shift 2 ;;
    --prefix=*) prefix=${1#--prefix=}; shift ;;
    --server) [ $# -ge 2 ] || usage; server=$2; shift 2 ;;
    --server=*) server=${1#--server=}; shift ;;
    -h|--help) usage ;;
    *) rest+=("$1"); shift ;;
  esac
done
[ -n "$prefix" ] || usage
if [ ! -d "$prefix" ]; then
  echo "error: --prefix $prefix is not a directory" >&2
  echo "help: pass the directory the release was deployed to, e.g. /opt/codetools" >&2
  exit 2
fi

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
bin=${MCP_DEPLOY_BIN:-}
if [ -z "$bin" ]; then
  if command -v mcp-deploy >/dev/null 2>&1; then
    bin=$(command -v mcp-deploy)
  elif [ -x "$here/../target/release/mcp-deploy" ]; then
    bin="$here/../target/release/mcp-deploy"
  else
    echo "error: mcp-deploy not found (set MCP_DEPLOY_BIN, or put it on PATH)" >&2
    echo "help: cargo install --path $(dirname "$here")" >&2
    exit 2
  fi
fi

# install --prefix ROOT puts server S at ROOT/S: a server prefix is ROOT/NAME.
prefix=${prefix%/}
root=$(dirname -- "$prefix")
name=$(basename -- "$prefix")
if [ -n "$server" ] && [ "$server" != "$name" ]; then
  echo "error: --prefix $prefix ends in $name, not in the server name $server" >&2
  echo "help: deploy server S at ROOT/S, or call mcp-deploy install with its own options" >&2
  exit 2
fi
exec "$bin" install --prefix "$root" --server "$name" ${rest[@]+"${rest[@]}"}
