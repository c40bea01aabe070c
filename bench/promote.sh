#!/usr/bin/env bash
# Benchmark of issue 15: `mcp-deploy promote` against a plain shell promote — `ln -sfn` a new
# link, `mv -T` it over `current`, then the plain installer (bench/plain-installer.sh
# --server codetools) — both driving the pinned real Claude Code CLI, on the sample
# deployment's codetools with a second release, with a scratch HOME / CLAUDE_CONFIG_DIR.
#
#   bench/promote.sh [RUNS]          (RUNS defaults to 5)
#
# Measures (mean wall-clock seconds over RUNS runs, after one warm-up run):
#   ours  first promote     current at the old release, fresh client config before each run
#   ours  no-op re-promote  the release already live and registered
#   shell first promote     the same preparation
#   shell re-promote        the release already live (the script switches and registers again)
# and prints the ratios shell/ours from this one run. Both get MCP_TIMEOUT=5000. What ours
# does on top of the plain script: the preflight of the new release, the prefix and client
# locks, the journals, the verification, the history. Uses hyperfine when present, else a
# `date +%s%N` loop.
set -euo pipefail

runs="${1:-5}"
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"

echo "== cargo build --release" >&2
cargo build --release --quiet
ours="$repo/target/release/mcp-deploy"
plain="$repo/bench/plain-installer.sh"

if [ ! -x "$repo/node_modules/.bin/claude" ]; then
    echo "== npm ci (pinned Claude Code CLI)" >&2
    npm ci --no-audit --no-fund >&2
fi
export PATH="$repo/node_modules/.bin:$PATH"
command -v jq >/dev/null || { echo "$0: jq is required (apt-get install -y jq)" >&2; exit 2; }

scratch="$(mktemp -d /tmp/mcp-deploy-bench.XXXXXX)"
trap 'rm -rf "$scratch"' EXIT
root="$scratch/root"
work="$scratch/work" # an empty directory to run from: no project .mcp.json shadows anything
mkdir -p "$work"
"$ours" sample "$root" >/dev/null
ct="$root/codetools"
old="$(basename "$(readlink "$ct/current")")"
new="bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
cp -R "$ct/releases/$old" "$ct/releases/$new"
echo "$new" >"$ct/releases/$new/VERSION"

export HOME="$scratch/home"
export CLAUDE_CONFIG_DIR="$HOME/.claude"
export DISABLE_AUTOUPDATER=1 CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1
export DISABLE_TELEMETRY=1 DISABLE_ERROR_REPORTING=1
export MCP_TIMEOUT=5000
mkdir -p "$CLAUDE_CONFIG_DIR"
cd "$work"
echo "== claude $(claude --version 2>/dev/null | head -n1); scratch $scratch; $runs runs each" >&2
# This machine is shared (2 cores): other jobs skew the numbers, so show the load around them.
load_before="$(cut -d' ' -f1-3 /proc/loadavg)"

q() { printf '%q' "$1"; }
# Back to the old release, no registration, no history: the state before a first promote.
reset_cmd="rm -rf $(q "$HOME") $(q "$ct/.mcp-deploy") && mkdir -p $(q "$CLAUDE_CONFIG_DIR") \
&& ln -sfn releases/$old $(q "$ct/current.new") && mv -T $(q "$ct/current.new") $(q "$ct/current")"
ours_cmd="$(q "$ours") promote --prefix $(q "$ct") --release $new --name-suffix -bench \
--mcp-timeout 5000"
shell_cmd="ln -sfn releases/$new $(q "$ct/current.new") && mv -T $(q "$ct/current.new") \
$(q "$ct/current") && $(q "$plain") --prefix $(q "$root") --server codetools --name-suffix -bench"

# measure KEY PREPARE COMMAND: mean, stddev and min (seconds) into $scratch/KEY.{mean,sd,min}.
measure() {
    local key="$1" prepare="$2" cmd="$3"
    echo "== $key: $cmd" >&2
    if command -v hyperfine >/dev/null; then
        local args=(--runs "$runs" --warmup 1 --style basic --export-json "$scratch/$key.json")
        [ -n "$prepare" ] && args+=(--prepare "$prepare")
        hyperfine "${args[@]}" "$cmd" >&2
        jq -r '.results[0].mean' "$scratch/$key.json" >"$scratch/$key.mean"
        jq -r '.results[0].stddev // 0' "$scratch/$key.json" >"$scratch/$key.sd"
        jq -r '.results[0].min' "$scratch/$key.json" >"$scratch/$key.min"
    else
        local i t0 t1 times=()
        for ((i = 0; i <= runs; i++)); do # run 0 is the warm-up
            [ -n "$prepare" ] && bash -c "$prepare"
            t0="$(date +%s%N)"
            bash -c "$cmd" >/dev/null 2>&1 || { echo "$0: failed: $cmd" >&2; exit 1; }
            t1="$(date +%s%N)"
            [ "$i" -gt 0 ] && times+=("$((t1 - t0))")
        done
        printf '%s\n' "${times[@]}" | awk -v out="$scratch/$key" '{s += $1; ss += $1 * $1; n++}
            END {m = s / n; v = ss / n - m * m; if (v < 0) v = 0
                 print m / 1e9 > (out ".mean"); print sqrt(v) / 1e9 > (out ".sd")}'
        printf '%s\n' "${times[@]}" | sort -n | awk 'NR == 1 {print $1 / 1e9}' >"$scratch/$key.min"
    fi
}

measure ours_first "$reset_cmd" "$ours_cmd"
bash -c "$reset_cmd" && bash -c "$ours_cmd" >/dev/null
measure ours_rerun "" "$ours_cmd"
measure shell_first "$reset_cmd" "$shell_cmd"
bash -c "$reset_cmd" && bash -c "$shell_cmd" >/dev/null
measure shell_rerun "" "$shell_cmd"

# Both must end at the same place: current at the new release, the same flat document.
bash -c "$reset_cmd" && bash -c "$ours_cmd" >/dev/null
ours_current="$(readlink "$ct/current")"
jq -S . "$CLAUDE_CONFIG_DIR/mcp-registered.json" >"$scratch/ours.flat"
bash -c "$reset_cmd" && bash -c "$shell_cmd" >/dev/null
shell_current="$(readlink "$ct/current")"
jq -S . "$CLAUDE_CONFIG_DIR/mcp-registered.json" >"$scratch/shell.flat"
if cmp -s "$scratch/ours.flat" "$scratch/shell.flat" && [ "$ours_current" = "$shell_current" ]
then same="yes ($ours_current)"; else same="NO ($ours_current vs $shell_current)"; fi

m() { cat "$scratch/$1.mean"; }
row() { printf '%-34s %8.3f %8.3f %8.3f\n' "$1" "$(m "$2")" "$(cat "$scratch/$2.sd")" \
    "$(cat "$scratch/$2.min")"; }
echo
echo "load average (1/5/15 min) before: $load_before; after: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-34s %8s %8s %8s\n' "scenario ($runs runs, MCP_TIMEOUT=5000)" "mean s" "stddev" "min s"
row "ours  first promote" ours_first
row "ours  no-op re-promote" ours_rerun
row "shell first promote" shell_first
row "shell re-promote" shell_rerun
echo
awk -v of="$(m ours_first)" -v orr="$(m ours_rerun)" -v sf="$(m shell_first)" \
    -v sr="$(m shell_rerun)" 'BEGIN {
    printf "first promote    shell/ours = %5.2fx\n", sf / of
    printf "no-op re-promote shell/ours = %5.2fx\n", sr / orr
}'
echo "same end state (current, flat document): $same"
