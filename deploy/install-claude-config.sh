#!/usr/bin/env bash
# The release pipeline's entry point on promote: register every deployed MCP server with
# Claude Code at user scope, record the flat document, and verify each server's identity.
#
#   deploy/install-claude-config.sh [--root ROOT | --prefix ROOT] [mcp-deploy install options]
#
# Without --prefix: the real names (codetools, orchestrata) from their declared prefixes
# (/opt/codetools, /opt/orchestrata). With --prefix ROOT: the scratch names codetools-test and
# orchestrata-test from ROOT/codetools and ROOT/orchestrata (a test deployment; pass
# --name-suffix to choose another suffix). --root ROOT is the same, in install's newer
# spelling (and, as install's --root, only a directory of deployments). A server that is not deployed at all is skipped
# with a line saying so, unless named with --server; a broken deployment always fails.
#
# Everything is done by the mcp-deploy binary (MCP_DEPLOY_BIN, else mcp-deploy on PATH, else
# the one built beside this script). Further options (--server, --expect-commit [NAME=]SHA,
# --json, --claude ...) are passed to `mcp-deploy install` unchanged. Exit status is
# mcp-deploy's: 0 ok, 1 a check failed, 2 could not run.
set -euo pipefail

# usage [STATUS]: the usage and what each form registers, on stdout with exit 0 when asked
# for (--help), else on stderr with exit 2 (a command line this script cannot take).
usage() {
  local status=${1:-2}
  {
    echo "usage: $0 [--root ROOT | --prefix ROOT] [mcp-deploy install options]"
    echo "help: without --root/--prefix: the real names (codetools, orchestrata) from /opt/codetools and /opt/orchestrata"
    echo "help: with --root ROOT (or --prefix ROOT): servers live at ROOT/codetools and ROOT/orchestrata and are"
    echo "      registered under test names, codetools-test and orchestrata-test (--name-suffix SUFFIX chooses"
    echo "      another suffix), beside any real codetools entry, which stays as it is"
  } >&"$([ "$status" = 0 ] && echo 1 || echo 2)"
  exit "$status"
}

prefix=""
prefix_flag=--prefix
suffix_given=""
rest=()
while [ $# -gt 0 ]; do
  case "$1" in
    --prefix) [ $# -ge 2 ] || usage; prefix=$2; shift 2 ;;
    --prefix=*) prefix=${1#--prefix=}; shift ;;
    --root) [ $# -ge 2 ] || usage; prefix=$2; prefix_flag=--root; shift 2 ;;
    --root=*) prefix=${1#--root=}; prefix_flag=--root; shift ;;
    --name-suffix|--name-suffix=*) suffix_given=1; rest+=("$1"); shift ;;
    -h|--help) usage 0 ;;
    *) rest+=("$1"); shift ;;
  esac
done

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
bin=${MCP_DEPLOY_BIN:-}
if [ -z "$bin" ]; then
  if command -v mcp-deploy >/dev/null 2>&1; then
    bin=$(command -v mcp-deploy)
  elif [ -x "$here/../target/release/mcp-deploy" ]; then
    bin="$here/../target/release/mcp-deploy"
  else
    echo "error: mcp-deploy not found (set MCP_DEPLOY_BIN, or put it on PATH)" >&2
    echo "help: cargo install --locked --path $(dirname "$here")" >&2
    exit 2
  fi
fi

args=(install)
if [ -n "$prefix" ]; then
  if [ ! -d "$prefix" ]; then
    echo "error: $prefix_flag $prefix is not a directory" >&2
    echo "help: pass the directory the servers were deployed under, e.g. a ROOT holding ROOT/codetools" >&2
    exit 2
  fi
  args+=("$prefix_flag" "$prefix")
  # A deployment under a scratch root is a test one: never register it under the real names.
  if [ -z "$suffix_given" ]; then
    args+=(--name-suffix -test)
    {
      echo "note: $prefix_flag $prefix is a test deployment: each server is registered as <name>-test"
      echo "      (codetools-test), never under its real name; a real codetools entry stays as it is"
      echo "      (--name-suffix SUFFIX chooses another suffix)"
    } >&2
  fi
fi
exec "$bin" "${args[@]}" ${rest[@]+"${rest[@]}"}
