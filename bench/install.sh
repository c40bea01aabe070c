#!/usr/bin/env bash
# Benchmark of issue 2: `mcp-deploy install` against the plain bash installer
# (bench/plain-installer.sh), both driving the pinned real Claude Code CLI, on the sample
# deployment, with a scratch HOME / CLAUDE_CONFIG_DIR.
#
#   bench/install.sh [RUNS]          (RUNS defaults to 5)
#
# Measures (mean wall-clock seconds over RUNS runs, after one warm-up run):
#   ours  first install   fresh client config before each run (the handshake gate on, the
#                         default: each sample server started and its tool surface recorded)
#   ours  --no-handshake  the same without the gate: the figure before issue 39
#   calls alone           install's unavoidable client calls, made by bash as install makes
#                         them (two `add-json` one after the other, then both `get`s side by
#                         side), fresh client config before each run
#   ours  no-op re-run    everything already installed (the gate on)
#   bash  first install   fresh client config before each run
#   bash  re-run          everything already installed
# and one bare `claude mcp get` for reference. Both installers get MCP_TIMEOUT=5000 (our
# --mcp-timeout default). Uses hyperfine when present, else a `date +%s%N` loop.
# Targets (issue 2): first install >= 2x faster than bash; no-op re-run >= 5x faster.
# Targets (issue 39): a first install at most 1.10x its client calls alone; the no-op re-run,
# the gate on, still >= 5x faster than bash.
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
reset_cmd="rm -rf $(q "$HOME") && mkdir -p $(q "$CLAUDE_CONFIG_DIR")"
ours_cmd="$(q "$ours") install --prefix $(q "$root") --name-suffix -bench --mcp-timeout 5000"
plain_cmd="$(q "$plain") --prefix $(q "$root") --name-suffix -bench"
nohs_cmd="$ours_cmd --no-handshake"
# install's client calls, as it makes them on a first install, and nothing else.
calls="$scratch/calls.sh"
cat >"$calls" <<CALLS
#!/usr/bin/env bash
set -e
claude mcp add-json -s user codetools-bench '{"command":"$root/codetools/bin/codetools","args":["mcp","serve"]}' >/dev/null
claude mcp add-json -s user orchestrata-bench '{"command":"$root/orchestrata/bin/orchestrata-mcp","args":[]}' >/dev/null
claude mcp get codetools-bench >/dev/null & a=\$!
claude mcp get orchestrata-bench >/dev/null
wait "\$a"
CALLS
chmod +x "$calls"
calls_cmd="$(q "$calls")"
get_cmd="claude mcp get codetools-bench"

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
        jq -r '.results[0].min' "$scratch/$key.json" >"$scratch/$key.min"
    else
        local i t0 t1 times=()
        for ((i = 0; i <= runs; i++)); do # run 0 is the warm-up
            [ -n "$prepare" ] && bash -c "$prepare"
            t0="$(date +%s%N)"
            bash -c "$cmd" >/dev/null 2>&1
            t1="$(date +%s%N)"
            [ "$i" -gt 0 ] && times+=("$((t1 - t0))")
        done
        printf '%s\n' "${times[@]}" | awk -v out="$scratch/$key" '{s += $1; ss += $1 * $1; n++}
            END {m = s / n; v = ss / n - m * m; if (v < 0) v = 0
                 print m / 1e9 > (out ".mean"); print sqrt(v) / 1e9 > (out ".sd")}'
        printf '%s\n' "${times[@]}" | sort -n | awk 'NR == 1 {print $1 / 1e9}' >"$scratch/$key.min"
    fi
}

# Ours, then bash; each first install from a fresh config, each re-run on top of an install.
measure ours_first "$reset_cmd" "$ours_cmd"
measure ours_nohs "$reset_cmd" "$nohs_cmd"
measure calls_first "$reset_cmd" "$calls_cmd"
bash -c "$reset_cmd" && bash -c "$ours_cmd" >/dev/null
measure ours_rerun "" "$ours_cmd"
measure bash_first "$reset_cmd" "$plain_cmd"
bash -c "$reset_cmd" && bash -c "$plain_cmd" >/dev/null
measure bash_rerun "" "$plain_cmd"
measure claude_get "" "$get_cmd"

# Both must have recorded the same flat document.
bash -c "$reset_cmd" && bash -c "$ours_cmd" >/dev/null
jq -S . "$CLAUDE_CONFIG_DIR/mcp-registered.json" >"$scratch/ours.flat"
bash -c "$reset_cmd" && bash -c "$plain_cmd" >/dev/null
jq -S . "$CLAUDE_CONFIG_DIR/mcp-registered.json" >"$scratch/bash.flat"
if cmp -s "$scratch/ours.flat" "$scratch/bash.flat"; then same="yes"; else same="NO"; fi

m() { cat "$scratch/$1.mean"; }
row() { printf '%-34s %8.3f %8.3f %8.3f\n' "$1" "$(m "$2")" "$(cat "$scratch/$2.sd")" \
    "$(cat "$scratch/$2.min")"; }
echo
echo "load average (1/5/15 min) before: $load_before; after: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-34s %8s %8s %8s\n' "scenario ($runs runs, MCP_TIMEOUT=5000)" "mean s" "stddev" "min s"
row "ours  first install" ours_first
row "ours  first, --no-handshake" ours_nohs
row "calls alone (first install)" calls_first
row "ours  no-op re-run" ours_rerun
row "bash  first install" bash_first
row "bash  re-run" bash_rerun
row "one 'claude mcp get' (reference)" claude_get
echo
awk -v of="$(m ours_first)" -v orr="$(m ours_rerun)" -v bf="$(m bash_first)" \
    -v br="$(m bash_rerun)" -v cf="$(m calls_first)" -v nh="$(m ours_nohs)" 'BEGIN {
    r1 = bf / of; r2 = br / orr; r3 = of / cf; r4 = nh / cf
    printf "first install  bash/ours = %5.2fx  (target >= 2x): %s\n", r1, (r1 >= 2 ? "met" : "MISSED")
    printf "no-op re-run   bash/ours = %5.2fx  (target >= 5x): %s\n", r2, (r2 >= 5 ? "met" : "MISSED")
    printf "first install  ours/calls alone = %5.2fx  (target <= 1.10x): %s\n", r3, (r3 <= 1.10 ? "met" : "MISSED")
    printf "first install, --no-handshake: ours/calls alone = %5.2fx\n", r4
}'
echo "same flat document recorded by both: $same"

# Where a first install's time goes, issue 39: each run with a timing wrapper around claude
# (the wrapper's own start, a few ms a call, counts against ours), its total against the
# critical path of its own client calls (the `add-json`s one after the other, the slower of
# the two `get`s): the overhead of the gate and of our own work, free of the noise between
# one run and another. RUNS runs each, the gate on and off in turn.
wrap="$scratch/wrap"
mkdir -p "$wrap"
cat >"$wrap/claude" <<WRAP
#!/usr/bin/env bash
t0=\$(date +%s%N)
$(q "$repo/node_modules/.bin/claude") "\$@"
rc=\$?
echo "\$t0 \$(date +%s%N) \$1 \$2" >>$(q "$scratch/calls.log")
exit \$rc
WRAP
chmod +x "$wrap/claude"
critical() { # MODE EXTRA...: one run, printing "MODE total/critical"
    local mode="$1" t0 t1
    shift
    bash -c "$reset_cmd"
    rm -f "$scratch/calls.log"
    t0="$(date +%s%N)"
    PATH="$wrap:$PATH" bash -c "$ours_cmd $*" >/dev/null
    t1="$(date +%s%N)"
    awk -v m="$mode" -v total="$((t1 - t0))" '{d = $2 - $1; if ($3 == "mcp" && $4 == "get") {
        if (d > g) g = d } else s += d } END { printf "%s %.4f\n", m, total / (s + g) }' \
        "$scratch/calls.log"
}
for ((i = 0; i < runs; i++)); do
    critical gate
    critical no-gate --no-handshake
done >"$scratch/critical.txt"
echo
sort "$scratch/critical.txt" | awk '{v[$1] = v[$1] " " $2; n[$1]++; s[$1] += $2}
    END { for (k in v) printf "first install / its own client calls, %-7s (%d runs): mean %.3fx; each:%s\n",
        k, n[k], s[k] / n[k], v[k] }'
