#!/usr/bin/env bash
# Benchmark of issue 34, item 4: `verify-identity --root` and `status --root` over 10, 100,
# 400 and 1,000 servers, with claude's user config holding every one of them. The cost per
# server must stay flat: 1,000 servers at most 1.5x per server what 100 cost (each server's
# checks used to parse and clone the whole of claude's config again, so the cost was quadratic:
# 12 ms, 87 ms, 985 ms, 5.3 s).
#
#   bench/scale.sh [RUNS] [SIZES...]   (defaults 5; 10 100 400 1000)
#
# N servers: a generated declaration (--config) of N prefix-layout servers, scale-1..scale-N,
# each a copy of the sample's orchestrata under one --root. Their registrations are written the
# way claude itself writes them (an `mcpServers` object in $CLAUDE_CONFIG_DIR/.claude.json, the
# flat document beside it), not through N `claude mcp add-json` calls: neither command timed here
# starts the client, and registering 1,000 servers would take minutes before any timing. Each
# command is timed with hyperfine without a shell, one warm-up run; prints the median wall-clock
# per command and per server, and 1,000 against 100 per server, from this one run.
set -euo pipefail

runs="${1:-5}"
shift || true
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(10 100 400 1000)
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"

ours="${MCP_DEPLOY_BENCH_BIN:-}"
if [ -z "$ours" ]; then
    echo "== cargo build --release" >&2
    cargo build --release --quiet
    ours="$repo/target/release/mcp-deploy"
fi
for tool in hyperfine jq; do
    command -v "$tool" >/dev/null || { echo "$0: $tool is required (apt-get install -y $tool)" >&2; exit 2; }
done
# status asks the client its release (`claude --version`): the pinned one.
[ -x "$repo/node_modules/.bin/claude" ] || { echo "$0: the pinned claude is missing: run npm ci" >&2; exit 2; }
export PATH="$repo/node_modules/.bin:$PATH"
export DISABLE_AUTOUPDATER=1 CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1
export DISABLE_TELEMETRY=1 DISABLE_ERROR_REPORTING=1

scratch="$(mktemp -d /tmp/mcp-deploy-scale.XXXXXX)"
trap 'rm -rf "$scratch"' EXIT
"$ours" sample "$scratch/sample" >/dev/null
sha="$(cat "$scratch/sample/orchestrata/VERSION")"
load_before="$(cut -d' ' -f1-3 /proc/loadavg)"

# deployment N: ROOT with N servers, their declaration, claude's config and the flat document.
deployment() {
    local n="$1" dir="$scratch/$1" i
    mkdir -p "$dir/root" "$dir/home/.claude" "$dir/work"
    jq -n --argjson n "$n" '{servers: [range(1; $n + 1) | "scale-\(.)" as $name |
        {name: $name, prefix: ("/opt/" + $name), layout: "prefix",
         entry: {command: "{{prefix}}/bin/orchestrata-mcp"}}]}' >"$dir/servers.json"
    for ((i = 1; i <= n; i++)); do
        cp -a "$scratch/sample/orchestrata" "$dir/root/scale-$i"
        "$ours" render-mcp --prefix "$dir/root/scale-$i" --config "$dir/servers.json" >/dev/null
    done
    jq -n --argjson n "$n" --arg root "$dir/root" '[range(1; $n + 1) | "scale-\(.)" as $name |
        {key: $name, value: {command: "\($root)/\($name)/bin/orchestrata-mcp", args: []}}]
        | from_entries' >"$dir/servers.entries"
    jq -n --slurpfile s "$dir/servers.entries" \
        '{mcpServers: ($s[0] | with_entries(.value += {type: "stdio", env: {}}))}' \
        >"$dir/home/.claude/.claude.json"
    jq -n --slurpfile s "$dir/servers.entries" '{mcpServers: $s[0]}' \
        >"$dir/home/.claude/mcp-registered.json"
    chmod 600 "$dir/home/.claude/.claude.json" "$dir/home/.claude/mcp-registered.json"
}

# measure KEY N COMMAND...: hyperfine's median wall-clock (seconds) into $scratch/KEY.
measure() {
    local key="$1" n="$2"
    shift 2
    echo "== $key" >&2
    (cd "$scratch/$n/work" && HOME="$scratch/$n/home" CLAUDE_CONFIG_DIR="$scratch/$n/home/.claude" \
        XDG_STATE_HOME="$scratch/$n/state" hyperfine -N --runs "$runs" --warmup 1 --style basic \
        --export-json "$scratch/$key.json" "$*" >&2)
    jq -r '.results[0].median' "$scratch/$key.json" >"$scratch/$key"
}

for n in "${sizes[@]}"; do
    deployment "$n"
    sel="--root $scratch/$n/root --config $scratch/$n/servers.json"
    expect=""
    for ((i = 1; i <= n; i++)); do expect+=" --expect-commit scale-$i=$sha"; done
    # Both pass on this state: a failing run would time an early exit.
    for cmd in "verify-identity $sel $expect --require-live" "status $sel"; do
        # shellcheck disable=SC2086 # the selection is words
        (cd "$scratch/$n/work" && HOME="$scratch/$n/home" CLAUDE_CONFIG_DIR="$scratch/$n/home/.claude" \
            XDG_STATE_HOME="$scratch/$n/state" "$ours" $cmd -q >/dev/null) ||
            { echo "$0: $cmd fails at $n servers" >&2; exit 1; }
    done
    measure "verify-$n" "$n" "$ours verify-identity $sel $expect --require-live -q"
    measure "status-$n" "$n" "$ours status $sel -q"
done
load_after="$(cut -d' ' -f1-3 /proc/loadavg)"

ms() { awk -v s="$1" 'BEGIN {printf "%.1f", s * 1000}'; }
per() { awk -v s="$1" -v n="$2" 'BEGIN {printf "%.3f", s * 1000 / n}'; }
echo
echo "median wall ms (per server); load $load_before before, $load_after after"
printf '%-8s %24s %24s\n' servers verify-identity status
for n in "${sizes[@]}"; do
    printf '%-8s %24s %24s\n' "$n" \
        "$(ms "$(cat "$scratch/verify-$n")") ($(per "$(cat "$scratch/verify-$n")" "$n"))" \
        "$(ms "$(cat "$scratch/status-$n")") ($(per "$(cat "$scratch/status-$n")" "$n"))"
done
if [ -f "$scratch/verify-100" ] && [ -f "$scratch/verify-1000" ]; then
    for k in verify status; do
        awk -v a="$(cat "$scratch/$k-1000")" -v b="$(cat "$scratch/$k-100")" -v k="$k" \
            'BEGIN {printf "%s: per server, 1,000 / 100 = %.2fx (target <= 1.5x)\n", k, (a / 1000) / (b / 100)}'
    done
fi
