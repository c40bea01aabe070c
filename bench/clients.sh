#!/usr/bin/env bash
# Benchmark of issue 14: `mcp-deploy install` of both sample servers into every client of a
# `--client` list in one run, driving the pinned real client CLIs (cursor has none: it is a
# file), on the sample deployment, in a scratch HOME (every client's config under it).
#
#   bench/clients.sh [CLIENTS] [RUNS]
#   bench/clients.sh --side-by-side [CLIENTS] [RUNS]
#       CLIENTS  comma-separated --client list
#                (default every client of the table, as `mcp-deploy clients` lists them)
#       RUNS     runs per scenario (default 3), after one warm-up run
#
# Measures (mean wall-clock seconds over RUNS runs):
#   first install   fresh HOME before each run: every client gets two adds
#   no-op re-run    everything already installed: no mutating call, no write
# and, for comparison, the plain bash installer (bench/plain-installer.sh), which knows claude
# only, so it is timed on claude alone when CLIENTS has claude. Both get MCP_TIMEOUT=5000.
# Uses hyperfine when present, else a `date +%s%N` loop.
#
# The clients' caches (XDG_CACHE_HOME) live outside the scratch HOME and survive its reset, as
# on a host where the clients have run before: Copilot CLI unpacks ~235 MB of itself there on
# its first call (4 s), once per release, which is not what an install costs.
#
# --side-by-side: the first install into all of CLIENTS in one run against the first install
# into each client alone (issue 22's target: all of them at most 1.3x the slowest alone). Each
# round times every scenario once, in an order rotated from round to round, each on a fresh
# HOME, so that the load of a shared machine falls on all of them alike; the load average is
# printed beside each round. Prints each scenario's mean, stddev and min, and the ratio
# all / slowest single client, from the means and from the minima.
set -euo pipefail

mode=default
if [ "${1:-}" = --side-by-side ]; then
    mode=side-by-side
    shift
fi
clients="${1:-}"
runs="${2:-3}"
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"

# MCP_DEPLOY_BENCH_BIN: time that binary (an earlier build, for a before/after) instead of
# building this checkout's.
if [ -n "${MCP_DEPLOY_BENCH_BIN:-}" ]; then
    ours="$MCP_DEPLOY_BENCH_BIN"
else
    echo "== cargo build --release" >&2
    cargo build --release --quiet
    ours="$repo/target/release/mcp-deploy"
fi
plain="$repo/bench/plain-installer.sh"

# opencode is pinned as its platform package, which puts no link in node_modules/.bin.
export PATH="$repo/node_modules/.bin:$repo/node_modules/opencode-linux-x64/bin:$PATH"
command -v jq >/dev/null || { echo "$0: jq is required (apt-get install -y jq)" >&2; exit 2; }
# The clients and what this host has of them, from the binary itself: every client of the
# table by default; each that has a CLI must be found (on the PATH above) and supported. A
# client without one (cursor, vscode) is a file mcp-deploy writes itself.
# An earlier build (MCP_DEPLOY_BENCH_BIN) may predate `clients`: then CLIENTS must be given,
# and is not checked.
if listing="$("$ours" clients ${clients:+--client "$clients"} --format json)"; then
    clients="${clients:-$(jq -r '[.clients[].name] | join(",")' <<<"$listing")}"
    missing="$(jq -r '.clients[] | select(.state != "supported" and .state != "no-binary")
        | "\(.name): \(.state): \(.detail)"' <<<"$listing")"
elif [ -n "$clients" ]; then
    echo "$0: $ours cannot list the clients; timing --client $clients unchecked" >&2
    missing=""
else
    echo "$0: $ours cannot list the clients (a build before \`mcp-deploy clients\`): give CLIENTS" >&2
    exit 2
fi
IFS=',' read -r -a list <<<"$clients"
if [ -n "$missing" ]; then
    echo "$missing" >&2
    echo "$0: run \`npm ci\` (package.json pins each client CLI into node_modules)" >&2
    exit 2
fi

scratch="$(mktemp -d /tmp/mcp-deploy-bench-clients.XXXXXX)"
trap 'rm -rf "$scratch"' EXIT
root="$scratch/root"
work="$scratch/work" # an empty directory to run from: no project config shadows anything
mkdir -p "$work"
"$ours" sample "$root" >/dev/null

export HOME="$scratch/home"
export CLAUDE_CONFIG_DIR="$HOME/.claude" XDG_CONFIG_HOME="$HOME/.config" XDG_CACHE_HOME="$scratch/cache"
unset CODEX_HOME GEMINI_CLI_HOME OPENCODE_CONFIG COPILOT_HOME
export DISABLE_AUTOUPDATER=1 CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1
export DISABLE_TELEMETRY=1 DISABLE_ERROR_REPORTING=1
export MCP_TIMEOUT=5000
cd "$work"
echo "== clients $clients; scratch $scratch; $runs runs each" >&2
# This machine is shared (2 cores): other jobs skew the numbers, so show the load around them.
load_before="$(cut -d' ' -f1-3 /proc/loadavg)"

q() { printf '%q' "$1"; }
reset_cmd="rm -rf $(q "$HOME") && mkdir -p $(q "$CLAUDE_CONFIG_DIR")"
ours_cmd="$(q "$ours") install --prefix $(q "$root") --name-suffix -bench --mcp-timeout 5000 --client $(q "$clients")"
plain_cmd="$(q "$plain") --prefix $(q "$root") --name-suffix -bench"

# measure KEY PREPARE COMMAND: mean and stddev (seconds) into $scratch/KEY.{mean,sd}.
measure() {
    local key="$1" prepare="$2" cmd="$3"
    echo "== $key: $cmd" >&2
    if command -v hyperfine >/dev/null; then
        local args=(--runs "$runs" --warmup 1 --style basic --export-json "$scratch/$key.json")
        [ -n "$prepare" ] && args+=(--prepare "$prepare")
        hyperfine "${args[@]}" "$cmd" >&2
        jq -r '.results[0].mean' "$scratch/$key.json" >"$scratch/$key.mean"
        jq -r '.results[0].stddev // 0' "$scratch/$key.json" >"$scratch/$key.sd"
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
    fi
}

# A first install must work at all before it is timed (a failure would time an error).
bash -c "$reset_cmd"
if ! bash -c "$ours_cmd" >"$scratch/check.out" 2>&1; then
    cat "$scratch/check.out" >&2
    echo "$0: install into $clients failed; nothing timed" >&2
    exit 1
fi

# install_cmd CLIENTS: our first-install command line for that --client list.
install_cmd() {
    echo "$(q "$ours") install --prefix $(q "$root") --name-suffix -bench --mcp-timeout 5000 --client $(q "$1")"
}

# The side-by-side mode: scenario 0 is every client of CLIENTS in one run, 1.. each alone.
if [ "$mode" = side-by-side ]; then
    scenarios=("$clients" "${list[@]}")
    n=${#scenarios[@]}
    for c in "${list[@]}"; do # each alone must work too before it is timed
        bash -c "$reset_cmd"
        if ! bash -c "$(install_cmd "$c")" >"$scratch/check.out" 2>&1; then
            cat "$scratch/check.out" >&2
            echo "$0: install into $c alone failed; nothing timed" >&2
            exit 1
        fi
    done
    printf '%-6s' round >&2
    for ((k = 0; k < n; k++)); do printf ' %9s' "$([ "$k" = 0 ] && echo all || echo "${scenarios[$k]}")" >&2; done
    printf '   %s\n' "load average (1/5/15 min)" >&2
    for ((r = 0; r <= runs; r++)); do # round 0 is the warm-up, not counted
        for ((j = 0; j < n; j++)); do
            k=$(((r + j) % n))
            bash -c "$reset_cmd"
            t0="$(date +%s%N)"
            # CPU seconds (user + system) of the run and every process it waited for.
            /usr/bin/time -f '%U %S' -o "$scratch/side.$k.cpu.last" \
                bash -c "$(install_cmd "${scenarios[$k]}")" >/dev/null 2>&1 || {
                echo "$0: failed: install into ${scenarios[$k]}" >&2
                exit 1
            }
            t1="$(date +%s%N)"
            echo "$((t1 - t0))" >"$scratch/side.$k.last"
            if [ "$r" -gt 0 ]; then
                echo "$((t1 - t0))" >>"$scratch/side.$k.times"
                awk '{ print $1 + $2 }' "$scratch/side.$k.cpu.last" >>"$scratch/side.$k.cpu"
            fi
        done
        printf '%-6s' "$([ "$r" = 0 ] && echo warm || echo "$r")" >&2
        for ((k = 0; k < n; k++)); do
            printf ' %9.3f' "$(awk '{ print $1 / 1e9 }' "$scratch/side.$k.last")" >&2
        done
        printf '   %s\n' "$(cut -d' ' -f1-3 /proc/loadavg)" >&2
    done
    # stats K: "mean stddev min" (seconds) of scenario K.
    stats() {
        awk '{ s += $1; ss += $1 * $1; n++; if (n == 1 || $1 < min) min = $1 }
            END { m = s / n; v = ss / n - m * m; if (v < 0) v = 0
                  printf "%.3f %.3f %.3f\n", m / 1e9, sqrt(v) / 1e9, min / 1e9 }' "$scratch/side.$1.times"
    }
    slow_mean=0 slow_min=0 slow_by_mean="" slow_by_min="" sum_mean=0
    echo
    echo "load average (1/5/15 min) before: $load_before; after: $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "all = --client $clients in one run"
    printf '%-44s %8s %8s %8s %8s\n' "first install ($runs runs, 2 servers)" "mean s" "stddev" "min s" "cpu s"
    for ((k = 0; k < n; k++)); do
        read -r mean sd min <<<"$(stats "$k")"
        cpu=$(awk '{ s += $1; n++ } END { printf "%.3f", s / n }' "$scratch/side.$k.cpu")
        if [ "$k" = 0 ]; then
            all_mean=$mean all_min=$min all_cpu=$cpu
            label="all in one run"
        else
            label="${scenarios[$k]} alone"
            sum_mean=$(awk -v a="$sum_mean" -v b="$mean" 'BEGIN { printf "%.3f", a + b }')
            if awk -v a="$mean" -v b="$slow_mean" 'BEGIN { exit !(a > b) }'; then
                slow_mean=$mean slow_by_mean=${scenarios[$k]}
            fi
            if awk -v a="$min" -v b="$slow_min" 'BEGIN { exit !(a > b) }'; then
                slow_min=$min slow_by_min=${scenarios[$k]}
            fi
        fi
        printf '%-44s %8.3f %8.3f %8.3f %8.3f\n' "$label" "$mean" "$sd" "$min" "$cpu"
    done
    r_mean=$(awk -v a="$all_mean" -v b="$slow_mean" 'BEGIN { printf "%.2f", a / b }')
    r_min=$(awk -v a="$all_min" -v b="$slow_min" 'BEGIN { printf "%.2f", a / b }')
    r_sum=$(awk -v a="$all_mean" -v b="$sum_mean" 'BEGIN { printf "%.2f", a / b }')
    printf '%-44s %8.3f\n' "sum of the means alone" "$sum_mean"
    # However well the clients overlap, the run cannot take less than its CPU time spread
    # over every core: the floor of the ratio on this machine.
    cores=$(nproc)
    r_floor=$(awk -v c="$all_cpu" -v n="$cores" -v b="$slow_mean" 'BEGIN { printf "%.2f", (c / n) / b }')
    verdict() { awk -v r="$1" 'BEGIN { print (r <= 1.3) ? "met" : "MISSED" }'; }
    echo
    printf '%-44s %8s %9s %-6s\n' "ratio (target <= 1.3)" measured slowest result
    printf '%-44s %8s %9s %-6s\n' "all / slowest alone, of the means" "$r_mean" "$slow_by_mean" "$(verdict "$r_mean")"
    printf '%-44s %8s %9s %-6s\n' "all / slowest alone, of the minima" "$r_min" "$slow_by_min" "$(verdict "$r_min")"
    printf '%-44s %8s %9s %-6s\n' "all / sum alone, of the means (1 = serial)" "$r_sum" - -
    printf '%-44s %8s %9s %-6s\n' "floor: all's cpu s / $cores cores / slowest" "$r_floor" - -
    exit 0
fi

measure ours_first "$reset_cmd" "$ours_cmd"
bash -c "$reset_cmd" && bash -c "$ours_cmd" >/dev/null 2>&1
measure ours_rerun "" "$ours_cmd"
has_claude=no
case ",$clients," in *,claude,*) has_claude=yes ;; esac
if [ "$has_claude" = yes ]; then
    measure bash_first "$reset_cmd" "$plain_cmd"
    bash -c "$reset_cmd" && bash -c "$plain_cmd" >/dev/null 2>&1
    measure bash_rerun "" "$plain_cmd"
fi

row() { printf '%-44s %8.3f %8.3f\n' "$1" "$(cat "$scratch/$2.mean")" "$(cat "$scratch/$2.sd")"; }
echo
echo "load average (1/5/15 min) before: $load_before; after: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-44s %8s %8s\n' "scenario ($runs runs, 2 servers)" "mean s" "stddev"
row "ours  first install ($clients)" ours_first
row "ours  no-op re-run  ($clients)" ours_rerun
if [ "$has_claude" = yes ]; then
    row "bash  first install (claude only)" bash_first
    row "bash  re-run        (claude only)" bash_rerun
fi
