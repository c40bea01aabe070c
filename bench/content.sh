#!/usr/bin/env bash
# Benchmark release content identity (`mcp-deploy manifest`) against openssl and GNU sha256sum.
#
#   bench/content.sh [SCRATCH_PARENT]      (default /tmp; needs about 2.2 GiB free there)
#
# 1. One 1 GiB file of random bytes: `manifest create` on a directory holding only it, against
#    `openssl dgst -sha256` and `sha256sum`; our peak RSS from `/usr/bin/time -v`.
# 2. A tree of 20,000 files of mixed sizes (about 1 GiB): `manifest verify` against
#    `sha256sum -c` and against our own `--jobs 1`.
#
# The page cache cannot be dropped without root privileges we should not assume, so every
# input is read once, untimed, before it is measured: all runs are warm-cache runs and
# measure hashing, not the disk. Each timing is the best of $RUNS runs.
set -euo pipefail

RUNS=${RUNS:-3}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BIN="$ROOT/target/release/mcp-deploy"
SCRATCH=$(mktemp -d "${1:-/tmp}/mcp-deploy-bench.XXXXXX")
trap 'rm -rf -- "$SCRATCH"' EXIT

for tool in openssl sha256sum /usr/bin/time; do
    command -v "$tool" >/dev/null || { echo "missing: $tool (apt-get install -y time openssl coreutils)" >&2; exit 2; }
done

(cd "$ROOT" && cargo build --release --quiet)

# best_of CMD...: print the smallest wall-clock time of $RUNS runs, in seconds.
best_of() {
    local best="" start end t i
    for ((i = 0; i < RUNS; i++)); do
        start=$(date +%s.%N)
        "$@" >/dev/null
        end=$(date +%s.%N)
        t=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.3f", b - a }')
        if [[ -z $best ]] || awk -v t="$t" -v b="$best" 'BEGIN { exit !(t < b) }'; then
            best=$t
        fi
    done
    echo "$best"
}

# peak_rss_kib CMD...: the maximum resident set size of one run.
peak_rss_kib() {
    /usr/bin/time -v "$@" 2>&1 >/dev/null | awk -F': ' '/Maximum resident set size/ { print $2 }'
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
mib_s() { awk -v s="$1" 'BEGIN { printf "%.0f", 1024 / s }'; }

warm() { find "$1" -type f -exec cat {} + >/dev/null; }

sha256sum_check() { (cd "$1" && sha256sum --check --quiet MANIFEST.sha256); }

CORES=$(nproc)
echo "machine: $CORES cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')"
echo "sha_ni: $(grep -m1 -o sha_ni /proc/cpuinfo || echo absent)"
echo "$(openssl version); $(sha256sum --version | head -1)"
echo "best of $RUNS warm-cache runs"
echo

# --- one large file -----------------------------------------------------------------------
ONE="$SCRATCH/one"
mkdir "$ONE"
head -c 1073741824 /dev/urandom >"$ONE/big"
warm "$ONE"

t_ours1=$(best_of "$BIN" manifest create "$ONE")
t_openssl=$(best_of openssl dgst -sha256 "$ONE/big")
t_gnu1=$(best_of sha256sum "$ONE/big")
rss_one=$(peak_rss_kib "$BIN" manifest create "$ONE")
# The three must agree on the digest, or the timings compare different work.
ours_hex=$(cut -c1-64 "$ONE/MANIFEST.sha256")
gnu_hex=$(sha256sum "$ONE/big" | cut -c1-64)
[[ $ours_hex == "$gnu_hex" ]] || { echo "digest mismatch: $ours_hex vs $gnu_hex" >&2; exit 1; }

# --- a tree of many files -----------------------------------------------------------------
# Sizes from a fixed seed: 20 files of 8 MiB, 180 of 1 MiB, the rest 0-72 KiB, carved from
# the random 1 GiB file so that building the tree costs no more /dev/urandom.
TREE="$SCRATCH/tree"
mkdir "$TREE"
RANDOM=42
offset=0
total=0
big_size=1073741824
for ((i = 0; i < 20000; i++)); do
    if ((i % 1000 == 0)); then
        size=$((8 * 1024 * 1024))
    elif ((i % 100 == 0)); then
        size=$((1024 * 1024))
    else
        size=$((RANDOM * 9 / 4))
    fi
    if ((offset + size > big_size)); then offset=0; fi
    dir="$TREE/d$((i % 100))/s$((i % 7))"
    [[ -d $dir ]] || mkdir -p "$dir"
    if ((size == 0)); then
        : >"$dir/f$i"
    else
        dd if="$ONE/big" of="$dir/f$i" bs="$size" count=1 skip="$offset" \
            iflag=skip_bytes,fullblock status=none
    fi
    offset=$((offset + size))
    total=$((total + size))
done
rm -rf "$ONE"
"$BIN" manifest create "$TREE" >/dev/null
files=$(wc -l <"$TREE/MANIFEST.sha256")
warm "$TREE"

t_tree=$(best_of "$BIN" manifest verify "$TREE")
t_tree1=$(best_of "$BIN" manifest verify --jobs 1 "$TREE")
t_gnu_tree=$(best_of sha256sum_check "$TREE")
rss_tree=$(peak_rss_kib "$BIN" manifest verify "$TREE")

# --- report --------------------------------------------------------------------------------
verdict() { awk -v v="$1" -v t="$2" -v op="$3" 'BEGIN { ok = (op == ">=") ? v >= t : v <= t; print ok ? "met" : "MISSED" }'; }
r_openssl=$(ratio "$t_openssl" "$t_ours1")
r_gnu1=$(ratio "$t_gnu1" "$t_ours1")
r_gnu_tree=$(ratio "$t_gnu_tree" "$t_tree")
r_jobs1=$(ratio "$t_tree1" "$t_tree")

echo "one file, 1 GiB"
printf '| %-38s | %8s | %9s |\n' "command" "seconds" "MiB/s"
printf '|%s|%s|%s|\n' "----------------------------------------" "----------" "-----------"
printf '| %-38s | %8s | %9s |\n' "mcp-deploy manifest create" "$t_ours1" "$(mib_s "$t_ours1")"
printf '| %-38s | %8s | %9s |\n' "openssl dgst -sha256" "$t_openssl" "$(mib_s "$t_openssl")"
printf '| %-38s | %8s | %9s |\n' "sha256sum" "$t_gnu1" "$(mib_s "$t_gnu1")"
echo
echo "tree: $files files, $((total / 1048576)) MiB"
printf '| %-38s | %8s |\n' "command" "seconds"
printf '|%s|%s|\n' "----------------------------------------" "----------"
printf '| %-38s | %8s |\n' "mcp-deploy manifest verify (--jobs $CORES)" "$t_tree"
printf '| %-38s | %8s |\n' "mcp-deploy manifest verify --jobs 1" "$t_tree1"
printf '| %-38s | %8s |\n' "sha256sum -c" "$t_gnu_tree"
echo
printf '| %-44s | %8s | %8s | %-6s |\n' "ratio" "measured" "target" "result"
printf '|%s|%s|%s|%s|\n' "----------------------------------------------" "----------" "----------" "--------"
printf '| %-44s | %8s | %8s | %-6s |\n' "1 GiB: our throughput / openssl's" "$r_openssl" ">= 0.95" "$(verdict "$r_openssl" 0.95 '>=')"
printf '| %-44s | %8s | %8s | %-6s |\n' "1 GiB: our throughput / sha256sum's" "$r_gnu1" "-" "-"
printf '| %-44s | %8s | %8s | %-6s |\n' "1 GiB: our peak RSS, MiB" "$(awk -v k="$rss_one" 'BEGIN { printf "%.1f", k / 1024 }')" "<= 16" "$(verdict "$rss_one" 16384 '<=')"
printf '| %-44s | %8s | %8s | %-6s |\n' "tree: speed-up over sha256sum -c" "$r_gnu_tree" ">= 5" "$(verdict "$r_gnu_tree" 5 '>=')"
printf '| %-44s | %8s | %8s | %-6s |\n' "tree: speed-up over our --jobs 1" "$r_jobs1" ">= 1.6" "$(verdict "$r_jobs1" 1.6 '>=')"
printf '| %-44s | %8s | %8s | %-6s |\n' "tree: our peak RSS, MiB" "$(awk -v k="$rss_tree" 'BEGIN { printf "%.1f", k / 1024 }')" "-" "-"
