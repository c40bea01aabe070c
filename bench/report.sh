#!/usr/bin/env bash
# Benchmark of `mcp-deploy report` (issue 26, item 3): merging a fleet's JSON reports into one
# table and verdict, at 100, 1,000 and 10,000 hosts, next to what a user would run instead:
# jq over the same files listing the hosts whose report failed
# (`jq -s '[.[] | select(.ok | not) | .host]'`), which merges nothing (no newest-wins, no
# per-check columns, no staleness) and is the floor of reading the files at all.
#
#   bench/report.sh [RUNS]   (default 10)
#
# Each host's report is the sample deployment's real `status --json` (two servers, one client),
# its "host" and "machine" made the host's own, in N.json (short names: hyperfine takes each
# command line as one argument, at most 128 KiB). Timed with hyperfine without a shell (-N), one
# warm-up run; prints the median wall-clock and mean CPU (user + system) time of each, and
# ours/jq, from this one run. Also the peak resident memory of one run of each (GNU time).
set -euo pipefail

runs="${1:-10}"
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"

echo "== cargo build --release" >&2
cargo build --release --quiet
ours="$repo/target/release/mcp-deploy"
for tool in hyperfine jq python3 /usr/bin/time; do
  command -v "$tool" >/dev/null || { echo "$0: $tool is required (apt-get install -y ${tool##*/})" >&2; exit 2; }
done

scratch="$(mktemp -d /tmp/mcp-deploy-bench.XXXXXX)"
trap 'rm -rf "$scratch"' EXIT
"$ours" sample "$scratch/sample" >/dev/null
# status exits 1 here (nothing is registered in this scratch HOME): still a whole report.
HOME="$scratch/home" "$ours" status --root "$scratch/sample" --json >"$scratch/status.json" || [ $? = 1 ]

printf '%-7s %-9s %12s %12s %12s %12s %9s %10s %10s\n' hosts files "ours med" "jq med" "ours cpu" "jq cpu" ours/jq "ours RSS" "jq RSS"
for n in 100 1000 10000; do
  dir="$scratch/fleet-$n"
  python3 - "$scratch/status.json" "$dir" "$n" <<'PY'
import json, os, sys
src, out, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
doc = json.load(open(src))
os.makedirs(out)
for i in range(n):
    doc["host"] = f"web-{i}"
    doc["machine"] = f"{i:032x}"
    with open(f"{out}/{i}.json", "w") as f:
        json.dump(doc, f)
PY
  (
    cd "$dir"
    files=(*.json)
    hyperfine -N --runs "$runs" --warmup 1 -i --export-json "$scratch/h.json" \
      "$ours report ${files[*]}" "jq -s '[.[] | select(.ok | not) | .host]' ${files[*]}" >/dev/null 2>&1
    rss() { /usr/bin/time -f %M "$@" >/dev/null 2>"$scratch/rss" || true; tail -1 "$scratch/rss"; }
    ours_rss=$(rss "$ours" report "${files[@]}")
    jq_rss=$(rss jq -s '[.[] | select(.ok | not) | .host]' "${files[@]}")
    jq -r --arg n "$n" --arg f "${#files[@]}" --arg ors "$ours_rss" --arg jrs "$jq_rss" '
      def ms: . * 1000 | floor | tostring + " ms";
      .results as [$o, $j]
      | [$n, $f, ($o.median | ms), ($j.median | ms), ($o.user + $o.system | ms),
         ($j.user + $j.system | ms), ($o.median / $j.median * 100 | round / 100 | tostring),
         ($ors + " KiB"), ($jrs + " KiB")]
      | @tsv' "$scratch/h.json" |
      awk -F'\t' '{ printf "%-7s %-9s %12s %12s %12s %12s %9s %10s %10s\n", $1, $2, $3, $4, $5, $6, $7, $8, $9 }'
  )
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
