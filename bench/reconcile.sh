#!/usr/bin/env bash
# Benchmark of issue 26, item 1: a no-op `mcp-deploy reconcile` (nothing drifted) against
# `status` (the same reading, the floor), the no-op `install` it replaces, and the bash re-run
# of the release pipeline (deploy/install-claude-config.sh), at 2, 8 and 32 servers, with the
# pinned real Claude Code CLI in a scratch HOME / CLAUDE_CONFIG_DIR.
#
#   bench/reconcile.sh [RUNS] [SLOW_RUNS]   (defaults 20 and 3)
#
# N servers: a generated declaration (--config) of N prefix-layout servers, bench-1..bench-N,
# each a copy of the sample's orchestrata under one --root, installed once before timing.
# Each command is timed with hyperfine without a shell (-N: no shell start subtracted, which at
# a few milliseconds is most of the figure), one warm-up run: status and reconcile RUNS times,
# install and the bash re-run (which start `claude mcp get` per server) SLOW_RUNS times.
# At 2 servers the sample's plain bash installer (bench/plain-installer.sh, which always
# re-registers) is timed too. Prints the median wall-clock and mean CPU (user + system) time
# per command, reconcile/status of both (target issue 26: <= 2) and install/reconcile, from this
# one run. The machine is shared: medians and CPU time, not means, are what survive its load.
set -euo pipefail

runs="${1:-20}"
slow_runs="${2:-3}"
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"

echo "== cargo build --release" >&2
cargo build --release --quiet
ours="$repo/target/release/mcp-deploy"
for tool in hyperfine jq; do
    command -v "$tool" >/dev/null || { echo "$0: $tool is required (apt-get install -y $tool)" >&2; exit 2; }
done
[ -x "$repo/node_modules/.bin/claude" ] || { echo "$0: the pinned claude is missing: run npm ci" >&2; exit 2; }
export PATH="$repo/node_modules/.bin:$PATH"

scratch="$(mktemp -d /tmp/mcp-deploy-bench.XXXXXX)"
trap 'rm -rf "$scratch"' EXIT
work="$scratch/work" # an empty directory to run from: no project .mcp.json shadows anything
mkdir -p "$work"
"$ours" sample "$scratch/sample" >/dev/null

export HOME="$scratch/home"
export CLAUDE_CONFIG_DIR="$HOME/.claude" XDG_STATE_HOME="$scratch/state"
export DISABLE_AUTOUPDATER=1 CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1
export DISABLE_TELEMETRY=1 DISABLE_ERROR_REPORTING=1
export MCP_TIMEOUT=5000 MCP_DEPLOY_BIN="$ours"
cd "$work"
echo "== claude $(claude --version 2>/dev/null | head -n1); scratch $scratch" >&2
# This machine is shared (2 cores): other jobs skew the numbers, so show the load around them.
load_before="$(cut -d' ' -f1-3 /proc/loadavg)"

q() { printf '%q' "$1"; }

# deployment N: ROOT with N servers and their declaration, in $scratch/N/.
deployment() {
    local n="$1" dir="$scratch/$1" i servers=()
    mkdir -p "$dir/root"
    for ((i = 1; i <= n; i++)); do
        cp -a "$scratch/sample/orchestrata" "$dir/root/bench-$i"
        mv "$dir/root/bench-$i/bin/orchestrata-mcp" "$dir/root/bench-$i/bin/bench-$i-mcp"
        servers+=("$(jq -cn --arg name "bench-$i" '{name: $name, prefix: ("/opt/" + $name),
            layout: "prefix", entry: {command: ("{{prefix}}/bin/" + $name + "-mcp")}}')")
    done
    printf '%s\n' "${servers[@]}" | jq -s '{servers: .}' >"$dir/servers.json"
}

# measure KEY RUNS COMMAND: hyperfine's median wall-clock and mean CPU time (seconds) into
# $scratch/KEY.{median,cpu}.
measure() {
    local key="$1" n="$2" cmd="$3"
    echo "== $key: $cmd" >&2
    hyperfine -N --runs "$n" --warmup 1 --style basic --export-json "$scratch/$key.json" "$cmd" >&2
    jq -r '.results[0].median' "$scratch/$key.json" >"$scratch/$key.median"
    jq -r '.results[0].user + .results[0].system' "$scratch/$key.json" >"$scratch/$key.cpu"
}

for n in 2 8 32; do
    deployment "$n"
    # Issue 26 compares the reading: the handshake gate (issue 39; each server started, see
    # bench/surface.sh) is left out of every command timed here.
    args=(--root "$scratch/$n/root" --config "$scratch/$n/servers.json")
    sel="$(printf '%q ' "${args[@]}")" # the same, for hyperfine's shell
    "$ours" install "${args[@]}" --no-handshake >/dev/null # the state every timed command starts from
    measure "status-$n" "$runs" "$(q "$ours") status $sel"
    measure "reconcile-$n" "$runs" "$(q "$ours") reconcile $sel --no-handshake"
    # Nothing drifted, so none of the runs above may have changed or healed anything.
    "$ours" reconcile "${args[@]}" --no-handshake --json | jq -e '[.servers[].registration] | all(. == "ok")' >/dev/null ||
        { echo "$0: the no-op reconcile at $n servers was not a no-op" >&2; exit 1; }
    measure "install-$n" "$slow_runs" "$(q "$ours") install $sel --no-handshake"
    measure "bash-$n" "$slow_runs" "$(q "$repo/deploy/install-claude-config.sh") $sel"
done
"$ours" install --prefix "$scratch/sample" --name-suffix -bench >/dev/null
measure "plain-2" "$slow_runs" \
    "$(q "$repo/bench/plain-installer.sh") --prefix $(q "$scratch/sample") --name-suffix -bench"
load_after="$(cut -d' ' -f1-3 /proc/loadavg)"

v() { cat "$scratch/$1.$2"; }
ms() { awk -v s="$1" 'BEGIN {printf "%.1f", s * 1000}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", a / b}'; }
echo
echo "no-op runs, median wall ms / mean cpu ms; load $load_before before, $load_after after"
printf '%-8s %16s %16s %18s %18s %17s %17s\n' servers status reconcile install "bash re-run" \
    "reconcile/status" "install/reconcile"
for n in 2 8 32; do
    printf '%-8s' "$n"
    for k in status reconcile install bash; do
        printf ' %16s' "$(ms "$(v "$k-$n" median)") / $(ms "$(v "$k-$n" cpu)")"
    done
    printf ' %17s %17s\n' \
        "$(ratio "$(v "reconcile-$n" median)" "$(v "status-$n" median)") / $(ratio "$(v "reconcile-$n" cpu)" "$(v "status-$n" cpu)")" \
        "$(ratio "$(v "install-$n" median)" "$(v "reconcile-$n" median)")"
done
echo "plain bash installer (bench/plain-installer.sh, always re-registers), 2 servers: $(ms "$(v plain-2 median)") / $(ms "$(v plain-2 cpu)") ms"
