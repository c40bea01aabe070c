#!/usr/bin/env bash
# The compatibility run (docs/compat.md): the core flow of mcp-deploy — install, a no-op
# re-install, verify-identity, status, uninstall — against each client version listed in
# compat/versions.txt, with the real CLIs in a scratch home each.
#
#   bash scripts/compat.sh install   install the listed versions into the cache, nothing else
#   bash scripts/compat.sh [run]     install, then run the flow and print the matrix
#
# The cache is ${MCP_DEPLOY_COMPAT_CACHE:-$HOME/.cache/mcp-deploy-compat}/<client>-<version>/,
# shared with the tests (harness::compat_client): a version already there and complete (its
# .complete marker, written last) is reused; an interrupted install is redone. The pinned
# version of each client (package.json) is taken from node_modules, never reinstalled.
# It runs target/debug/mcp-deploy, built with `cargo build --features crash-checkpoints` when
# missing (the features scripts/test.sh builds the tests with, so that build is reused; a
# release build would be a second full compile), and asks it what each client's binary,
# package and config file are (`mcp-deploy clients`). Exit 1 when any
# cell of the matrix fails, 2 when it could not run.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
repo=$PWD
list=${MCP_DEPLOY_COMPAT_LIST:-compat/versions.txt}
cache=${MCP_DEPLOY_COMPAT_CACHE:-$HOME/.cache/mcp-deploy-compat}
mode=${1:-run}
case $mode in
  install | run) ;;
  *)
    echo "usage: bash scripts/compat.sh [install|run]" >&2
    exit 2
    ;;
esac

# What the client table says of each client, from the binary itself (`mcp-deploy clients
# --format json`, under env -i: it finds and starts no client): its binary and npm package.
bin=$repo/target/debug/mcp-deploy
[ -x "$bin" ] || cargo build --quiet --locked --features crash-checkpoints
table=$(env -i "$bin" clients --format json)
# field JSON CLIENT KEY: the KEY of CLIENT in the clients listing JSON, or nothing (and exit 1)
# when the listing has no such client or the key is null.
field() {
  python3 -c 'import json, sys
c = [c for c in json.loads(sys.argv[1])["clients"] if c["name"] == sys.argv[2]]
v = c[0][sys.argv[3]] if c else None
print(v) if v is not None else sys.exit(1)' "$@"
}
# The clients that have a CLI to install.
with_binary=$(python3 -c 'import json, sys
print(", ".join(c["name"] for c in json.loads(sys.argv[1])["clients"] if c["binary"]))' "$table")

# The npm package a client version is installed from: the table's, but for OpenCode, pinned as
# its platform package opencode-linux-x64 (the registry reachable here carries no other
# platform's package, so the opencode-ai wrapper cannot install; scripts/test.sh).
package_of() {
  case $1 in
    opencode) echo opencode-linux-x64 ;;
    *) field "$table" "$1" package ;;
  esac
}

# The client's binary under a prefix that npm installed into (OpenCode's platform package puts
# no link in node_modules/.bin).
binary_in() {
  case $1 in
    opencode) echo "$2/node_modules/opencode-linux-x64/bin/opencode" ;;
    *) echo "$2/node_modules/.bin/$(field "$table" "$1" binary)" ;;
  esac
}

# The version node_modules holds for a client (the pinned one), or nothing.
pinned_version() {
  local pj
  pj="$repo/node_modules/$(package_of "$1")/package.json"
  [ -f "$pj" ] && sed -n 's/^ *"version": *"\([^"]*\)".*/\1/p' "$pj" | head -n 1
}

# Where a listed version's binary is: node_modules for the pinned one, else the cache.
binary_of() {
  if [ "$(pinned_version "$1")" = "$2" ]; then
    binary_in "$1" "$repo"
  else
    binary_in "$1" "$cache/$1-$2"
  fi
}

entries=()
while read -r client version rest; do
  case $client in '' | '#'*) continue ;; esac
  if [ -z "${version:-}" ] || { [ -n "${rest:-}" ] && [ "$rest" != refused ]; } ||
    ! package_of "$client" >/dev/null; then
    echo "error: $list: \"$client ${version:-} ${rest:-}\" is not \`<client> <version>" \
      "[refused]\` with client one of $with_binary" >&2
    exit 2
  fi
  entries+=("$client $version ${rest:-}")
done <"$list"

install_one() {
  local client=$1 version=$2 dir log
  [ "$(pinned_version "$client")" = "$version" ] && return 0
  dir=$cache/$client-$version
  [ -f "$dir/.complete" ] && return 0
  rm -rf "$dir"
  mkdir -p "$dir"
  log=$(mktemp)
  echo "installing $client $version into $dir" >&2
  if ! npm install --prefix "$dir" --no-audit --no-fund --no-save \
    "$(package_of "$client")@$version" >"$log" 2>&1; then
    tail -n 20 "$log" >&2
    rm -f "$log"
    echo "error: npm could not install $client $version" >&2
    return 1
  fi
  rm -f "$log"
  [ -x "$(binary_in "$client" "$dir")" ] || {
    echo "error: $client $version installed no binary at $(binary_in "$client" "$dir")" >&2
    return 1
  }
  echo "$client $version" >"$dir/.complete"
}

started=$(date +%s)
mkdir -p "$cache"
for e in "${entries[@]}"; do
  # shellcheck disable=SC2086 # two or three words: client, version, [refused]
  install_one $e || exit 2
done
echo "installed in $(($(date +%s) - started)) s" >&2
[ "$mode" = install ] && exit 0

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# The file client $1 keeps its user-scope entries in, in the world $2: as mcp-deploy finds it
# there (`clients`, with the world's HOME and CLAUDE_CONFIG_DIR, and no PATH: it starts no
# client).
config_of() {
  field "$(env -i HOME="$2/home" CLAUDE_CONFIG_DIR="$2/claude" "$bin" clients --client "$1" \
    --format json)" "$1" config
}

digest() { [ -e "$1" ] && sha256sum <"$1"; }
mtime() { [ -e "$1" ] && stat -c %y "$1"; }

failed=0
rows=()
for e in "${entries[@]}"; do
  read -r client version expect <<<"$e"
  w=$scratch/$client-$version
  mkdir -p "$w/home" "$w/claude" "$w/tmp" "$w/work"
  client_bin=$(binary_of "$client" "$version")
  log=$w/log
  # mcp-deploy COMMAND ARGS... for this client (`--<client> BIN` unless RO=1: the read-only
  # commands run no client).
  mcp() {
    local pass=(--client "$client")
    [ "${RO:-0}" = 1 ] || pass+=("--$client" "$client_bin")
    (cd "$w/work" && env -i PATH=/usr/bin:/bin HOME="$w/home" CLAUDE_CONFIG_DIR="$w/claude" \
      TMPDIR="$w/tmp" DISABLE_AUTOUPDATER=1 CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 \
      DISABLE_TELEMETRY=1 DISABLE_ERROR_REPORTING=1 MCP_TIMEOUT=3000 \
      "$bin" "$@" "${pass[@]}") >"$w/out" 2>>"$log"
    local rc=$?
    cat "$w/out" >>"$log"
    return "$rc"
  }
  sample=(--prefix "$w/opt" --name-suffix -test)
  "$bin" sample "$w/opt" >>"$log" 2>&1
  cells=()
  t0=$(date +%s)
  if [ "${expect:-}" = refused ]; then
    # Below the supported range: install exits 2 naming the range, and writes no client file.
    rc=0
    mcp install "${sample[@]}" || rc=$?
    if [ "$rc" = 2 ] && grep -q "oldest supported" "$log" && [ ! -e "$(config_of "$client" "$w")" ]; then
      cells=(refused - - - -)
    else
      cells=(FAIL - - - -)
      failed=1
      cp "$log" "$cache/last-failure-$client-$version.log" 2>/dev/null || true
    fi
    rows+=("$(printf '%-9s %-10s %-8s %-6s %-7s %-7s %-9s %4ss' "$client" "$version" "${cells[@]}" "$(($(date +%s) - t0))")")
    continue
  fi
  # install
  if mcp install "${sample[@]}"; then cells+=(ok); else cells+=(FAIL); fi
  # no-op: every server unchanged, the client's file the same bytes and not written. `ok(r)`:
  # the same bytes, but the client rewrote its own file (Claude Code 2.0.x rewrites
  # .claude.json on every call, `claude --version` included: docs/compat.md).
  cfg=$(config_of "$client" "$w")
  before=$(digest "$cfg" || true)
  written=$(mtime "$cfg" || true)
  sleep 0.05
  if mcp install "${sample[@]}" --json && out=$(cat "$w/out") &&
    [ -n "$before" ] && [ "$before" = "$(digest "$cfg" || true)" ] &&
    grep -q '"registration": *"unchanged"' <<<"$out" &&
    ! grep -o '"registration": *"[a-z]*"' <<<"$out" | grep -vq unchanged; then
    if [ "$written" = "$(mtime "$cfg" || true)" ]; then cells+=(ok); else cells+=("ok(r)"); fi
  else cells+=(FAIL); fi
  # verify-identity (codetools, the release layout)
  if RO=1 mcp verify-identity --prefix "$w/opt/codetools" \
    --expect-commit c0de7001c0de7001c0de7001c0de7001c0de7001 \
    --mcp-json "$w/claude/mcp-registered.json" --name codetools-test; then
    cells+=(ok)
  else cells+=(FAIL); fi
  # status
  if RO=1 mcp status "${sample[@]}"; then cells+=(ok); else cells+=(FAIL); fi
  # uninstall: gone from the client's file
  if mcp uninstall "${sample[@]}" && ! grep -q -- '-test' "$(config_of "$client" "$w")" 2>/dev/null; then
    cells+=(ok)
  else cells+=(FAIL); fi
  secs=$(($(date +%s) - t0))
  case " ${cells[*]} " in *" FAIL "*)
    failed=1
    cp "$log" "$cache/last-failure-$client-$version.log" 2>/dev/null || true
    ;;
  esac
  rows+=("$(printf '%-9s %-10s %-8s %-6s %-7s %-7s %-9s %4ss' "$client" "$version" "${cells[@]}" "$secs")")
done

printf '%-9s %-10s %-8s %-6s %-7s %-7s %-9s %5s\n' client version install no-op verify status uninstall time
printf '%s\n' "${rows[@]}"
echo "ok(r): no change and the same bytes, but the client rewrote its own config file"
echo "compat run: $(($(date +%s) - started)) s" >&2
if [ "$failed" = 1 ]; then
  echo "error: a cell failed; its log is in $cache/last-failure-<client>-<version>.log" >&2
  exit 1
fi
