#!/usr/bin/env bash
# The plain bash installer a team would write instead of mcp-deploy: the baseline of the
# benchmark in bench/install.sh (issue 2).
#
#   bench/plain-installer.sh --prefix ROOT [--name-suffix S] [--registered FILE] [--server NAME]
#
# For each server it runs, one after the other:
#   claude mcp get NAME                       (is it there?)
#   claude mcp remove NAME -s user            (only when it is)
#   claude mcp add-json -s user NAME JSON
#   claude mcp get NAME                       (what the client now reports)
# and records that report in a flat {"mcpServers":{...}} document (with jq), by default
# ${CLAUDE_CONFIG_DIR:-$HOME/.claude}/mcp-registered.json. It always re-registers (no
# idempotency); `--server NAME` registers that server only (bench/promote.sh's baseline).
# `claude` is taken from PATH; MCP_TIMEOUT, when set, bounds `get`'s health check.
set -euo pipefail

usage() {
    echo "usage: $0 --prefix ROOT [--name-suffix SUFFIX] [--registered FILE] [--server NAME]" >&2
    exit 2
}

prefix=""
suffix=""
only=""
registered="${CLAUDE_CONFIG_DIR:-$HOME/.claude}/mcp-registered.json"
while [ "$#" -gt 0 ]; do
    case "$1" in
        --prefix) [ "$#" -ge 2 ] || usage; prefix="$2"; shift 2 ;;
        --name-suffix) [ "$#" -ge 2 ] || usage; suffix="$2"; shift 2 ;;
        --registered) [ "$#" -ge 2 ] || usage; registered="$2"; shift 2 ;;
        --server) [ "$#" -ge 2 ] || usage; only="$2"; shift 2 ;;
        -h|--help) usage ;;
        *) echo "$0: unknown argument: $1" >&2; usage ;;
    esac
done
[ -n "$prefix" ] || usage
prefix="$(cd "$prefix" && pwd)"

command -v claude >/dev/null || { echo "$0: claude is not on PATH" >&2; exit 2; }
command -v jq >/dev/null || { echo "$0: jq is not installed" >&2; exit 2; }

# The flat document so far (kept across runs, like mcp-deploy's).
if [ -s "$registered" ]; then
    flat="$(jq -c '{mcpServers: (.mcpServers // {})}' "$registered")"
else
    flat='{"mcpServers":{}}'
fi

# install_server NAME COMMAND [ARG...]
install_server() {
    [ -z "$only" ] || [ "$only" = "$1" ] || return 0
    local name="$1$suffix" command="$2"
    shift 2
    local entry
    entry="$(jq -cn --arg command "$command" '{command: $command, args: $ARGS.positional}' \
        --args "$@")"

    if claude mcp get "$name" >/dev/null 2>&1; then
        claude mcp remove "$name" -s user >/dev/null
    fi
    claude mcp add-json -s user "$name" "$entry" >/dev/null

    local shown shown_command shown_args
    shown="$(claude mcp get "$name")"
    shown_command="$(sed -n 's/^  Command: //p' <<<"$shown")"
    shown_args="$(sed -n 's/^  Args: //p' <<<"$shown")"
    if [ -z "$shown_command" ]; then
        echo "$0: claude mcp get $name does not show a command" >&2
        exit 1
    fi
    # `get` prints the args joined by spaces; split them back the way a script would.
    flat="$(jq -c --arg name "$name" --arg command "$shown_command" --arg args "$shown_args" \
        '.mcpServers[$name] = {command: $command,
                               args: ($args | split(" ") | map(select(. != "")))}' \
        <<<"$flat")"
    echo "$name: registered $command"
}

install_server codetools "$prefix/codetools/bin/codetools" mcp serve
install_server orchestrata "$prefix/orchestrata/bin/orchestrata-mcp"

# Write the flat document whole: temp file in the same directory, then rename.
mkdir -p "$(dirname "$registered")"
tmp="$(mktemp "$registered.XXXXXX")"
jq . <<<"$flat" >"$tmp"
chmod 600 "$tmp"
mv -f "$tmp" "$registered"
echo "registration document: $registered"
