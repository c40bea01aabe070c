#!/usr/bin/env bash
# Side-by-side `manifest verify` of two mcp-deploy binaries and `sha256sum -c`, interleaved on
# one tree in one run, so that the load of a shared machine hits all three alike.
#
#   bench/content-ab.sh OLD_BIN NEW_BIN [FILES] [RUNS] [SCRATCH_PARENT]
#       OLD_BIN, NEW_BIN  two release binaries (e.g. one built from an older commit in its own
#                         worktree, and target/release/mcp-deploy)
#       FILES             files in the tree (default 5000), shaped as bench/content.sh's:
#                         every 1000th file 8 MiB, every 100th 1 MiB, the rest 0-72 KiB
#       RUNS              rounds (default 15); each round runs the four in a rotated order
#
# The four: OLD_BIN and NEW_BIN `manifest verify` (every core), NEW_BIN `--jobs 1`, and
# `sha256sum -c`. Every input is read once untimed first (warm cache, as in bench/content.sh).
# Each round prints wall-clock seconds and the load average beside them; the summary gives
# min and median wall-clock, the median CPU seconds (user + sys, which load moves far less
# than wall-clock) and how many cores each got (CPU / wall) per command, and the ratios
# sha256sum -c / ours. The CPU ratio is the per-core speed-up; the wall-clock ratio is that
# times the cores ours got, which on a shared machine is what the load left free.
# KEEP_TREE=1 leaves the scratch tree in place (for strace or perf afterwards).
set -euo pipefail

old=${1:?usage: bench/content-ab.sh OLD_BIN NEW_BIN [FILES] [RUNS] [SCRATCH_PARENT]}
new=${2:?usage: bench/content-ab.sh OLD_BIN NEW_BIN [FILES] [RUNS] [SCRATCH_PARENT]}
files=${3:-5000}
runs=${4:-15}
for b in "$old" "$new"; do
    [[ -x $b ]] || { echo "$0: $b is not an executable" >&2; exit 2; }
done
scratch=$(mktemp -d "${5:-/tmp}/mcp-deploy-bench-ab.XXXXXX")
[[ ${KEEP_TREE:-0} == 1 ]] || trap 'rm -rf -- "$scratch"' EXIT

# The tree: sizes from a fixed seed, carved from one random file (as bench/content.sh does).
tree="$scratch/tree"
mkdir "$tree"
src="$scratch/random"
head -c $((256 * 1024 * 1024)) /dev/urandom >"$src"
src_size=$((256 * 1024 * 1024))
RANDOM=42
offset=0
total=0
for ((i = 0; i < files; i++)); do
    if ((i % 1000 == 0)); then
        size=$((8 * 1024 * 1024))
    elif ((i % 100 == 0)); then
        size=$((1024 * 1024))
    else
        size=$((RANDOM * 9 / 4))
    fi
    if ((offset + size > src_size)); then offset=0; fi
    dir="$tree/d$((i % 100))/s$((i % 7))"
    [[ -d $dir ]] || mkdir -p "$dir"
    if ((size == 0)); then
        : >"$dir/f$i"
    else
        dd if="$src" of="$dir/f$i" bs="$size" count=1 skip="$offset" \
            iflag=skip_bytes,fullblock status=none
    fi
    offset=$((offset + size))
    total=$((total + size))
done
rm -f "$src"
"$new" manifest create "$tree" >/dev/null
find "$tree" -type f -exec cat {} + >/dev/null

# Both binaries must pass on the tree, or the timings compare different work.
for b in "$old" "$new"; do
    "$b" manifest verify "$tree" >/dev/null || { echo "$0: $b manifest verify failed" >&2; exit 1; }
done
(cd "$tree" && sha256sum --check --quiet MANIFEST.sha256)

names=(old new new1 gnu)
# CPU seconds (user + sys) of a run: perf's task-clock when perf may count here (1 ms
# resolution is too coarse for runs of 0.1 s), else GNU time's (10 ms).
have_perf=no
if command -v perf >/dev/null && perf stat -x, -e task-clock -o /dev/null true 2>/dev/null; then
    have_perf=yes
fi
# run_one NAME: one timed run; its "wall cpu" line (seconds) is appended to $scratch/NAME.times.
run_one() {
    local cmd t0 t1 cpu
    case $1 in
        old) cmd=("$old" manifest verify "$tree") ;;
        new) cmd=("$new" manifest verify "$tree") ;;
        new1) cmd=("$new" manifest verify --jobs 1 "$tree") ;;
        gnu) cmd=(env -C "$tree" sha256sum --check --quiet MANIFEST.sha256) ;;
    esac
    t0=$(date +%s%N)
    if [[ $have_perf == yes ]]; then
        perf stat -x, -e task-clock -o "$scratch/cpu.out" "${cmd[@]}" >/dev/null
    else
        /usr/bin/time -f '%U %S' -o "$scratch/cpu.out" "${cmd[@]}" >/dev/null
    fi
    t1=$(date +%s%N)
    if [[ $have_perf == yes ]]; then
        cpu=$(awk -F, '$3 == "task-clock" { printf "%.4f", $1 / 1000 }' "$scratch/cpu.out")
    else
        cpu=$(awk '{ printf "%.4f", $1 + $2 }' "$scratch/cpu.out")
    fi
    awk -v a="$t0" -v b="$t1" -v c="$cpu" 'BEGIN { printf "%.4f %s\n", (b - a) / 1e9, c }' \
        >>"$scratch/$1.times"
}

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')"
echo "tree: $files files, $((total / 1048576)) MiB; $runs interleaved warm-cache rounds"
echo "old: $old"
echo "new: $new"
printf '%-5s %8s %8s %8s %8s   %s\n' round old new new-j1 gnu "load average (1/5/15 min)"
for ((r = 0; r < runs; r++)); do
    for ((k = 0; k < 4; k++)); do
        run_one "${names[$(((r + k) % 4))]}"
    done
    printf '%-5s' "$r"
    for n in "${names[@]}"; do printf ' %8.3f' "$(tail -n1 "$scratch/$n.times" | cut -d' ' -f1)"; done
    printf '   %s\n' "$(cut -d' ' -f1-3 /proc/loadavg)"
done

# stat_of NAME min|median wall|cpu
stat_of() {
    awk -v what="$3" '{ print (what == "cpu") ? $2 : (what == "cores") ? $2 / $1 : $1 }' "$scratch/$1.times" | sort -n |
        awk -v w="$2" '{ v[NR] = $1 }
            END { if (w == "min") print v[1]; else print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
echo
echo "CPU s: median user + sys (perf task-clock: $have_perf); cores: median CPU s / wall s"
printf '%-32s %8s %9s %9s %6s\n' command "min s" "median s" "CPU s" cores
for n in "${names[@]}"; do
    case $n in
        old) label="old manifest verify" ;;
        new) label="new manifest verify" ;;
        new1) label="new manifest verify --jobs 1" ;;
        gnu) label="sha256sum -c" ;;
    esac
    printf '%-32s %8.3f %9.3f %9.3f %6.2f\n' "$label" "$(stat_of "$n" min wall)" \
        "$(stat_of "$n" median wall)" "$(stat_of "$n" median cpu)" "$(stat_of "$n" median cores)"
done
echo
printf '%-32s %8s %9s %9s\n' "ratio" "of min" "of median" "of CPU"
for pair in "sha256sum -c / old:gnu:old" "sha256sum -c / new:gnu:new" \
    "sha256sum -c / new --jobs 1:gnu:new1" "new / old:new:old"; do
    IFS=: read -r label a b <<<"$pair"
    printf '%-32s %8s %9s %9s\n' "$label" "$(ratio "$(stat_of "$a" min wall)" "$(stat_of "$b" min wall)")" \
        "$(ratio "$(stat_of "$a" median wall)" "$(stat_of "$b" median wall)")" \
        "$(ratio "$(stat_of "$a" median cpu)" "$(stat_of "$b" median cpu)")"
done
if [[ ${KEEP_TREE:-0} == 1 ]]; then echo "tree kept: $tree"; fi
