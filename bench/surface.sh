#!/usr/bin/env bash
# Benchmark of issue 39: what the tool-surface digest costs beside the handshake it rides on,
# in one run.
#
#   bench/surface.sh [RUNS]          (RUNS defaults to 10)
#
# The handshake: `verify-identity --handshake` against `verify-identity` on the same
# registration (farm-bench, pair by pair), for the sample's stand-in server (Node, 1 tool)
# and the pinned @modelcontextprotocol/server-everything (Node, 13 tools); the difference is
# starting the server, initialize, tools/list and ending it, the digest included.
# The digest alone (benches/surface_digest.rs: canonical JSON and SHA-256, in process, 200
# runs): of server-everything's real tools/list answer, and of a synthetic 1 000-tool one
# (each tool a 400-character description and a 12-property input schema, about 1 MB).
set -euo pipefail

runs="${1:-10}"
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
echo "== cargo build --release; cargo bench --no-run (the digest's bench)" >&2
cargo build --release --locked --quiet
# The bench's executable, found now: below, HOME is a scratch one and cargo would not start.
digest_bin="$(cargo bench --locked --quiet --bench surface_digest --no-run --message-format=json |
    python3 -c 'import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("executable") and m.get("target", {}).get("name") == "surface_digest":
        print(m["executable"])')"
ours="$repo/target/release/mcp-deploy"
[ -x node_modules/.bin/mcp-server-everything ] || npm ci --no-audit --no-fund >&2
command -v farm-bench >/dev/null || { echo "$0: farm-bench is required" >&2; exit 2; }

scratch="$(mktemp -d /tmp/mcp-deploy-bench.XXXXXX)"
trap 'rm -rf "$scratch"' EXIT
export HOME="$scratch/home" XDG_STATE_HOME="$scratch/state" XDG_CONFIG_HOME="$scratch/config"
mkdir -p "$HOME"
"$ours" sample "$scratch/root" >/dev/null
everything="$(readlink -f node_modules/.bin/mcp-server-everything)"
sha=c0de7001c0de7001c0de7001c0de7001c0de7001
ct="$scratch/root/codetools"

# The stand-in, as install registers it; server-everything as a prefix layout's server.
printf '{"mcpServers":{"codetools":{"command":"%s/bin/codetools","args":["mcp","serve"]}}}\n' \
    "$ct" >"$scratch/standin.json"
ev="$scratch/everything"
mkdir -p "$ev/bin"
echo "$sha" >"$ev/VERSION"
# A script inside the prefix that starts the pinned package (a link out of it would fail the
# mcp-registration check, and the handshake would never start).
printf '#!/bin/sh\nexec node %q "$@"\n' "$everything" >"$ev/bin/everything"
chmod +x "$ev/bin/everything"
printf '{"servers":[{"name":"everything","prefix":"%s","layout":"prefix","entry":{"command":"{{prefix}}/bin/everything","args":["stdio"]}}]}\n' \
    "$ev" >"$scratch/servers.json"
printf '{"mcpServers":{"everything":{"command":"%s/bin/everything","args":["stdio"]}}}\n' \
    "$ev" >"$scratch/everything.json"

verify_standin=("$ours" verify-identity --prefix "$ct" --expect-commit "$sha"
    --mcp-json "$scratch/standin.json" --name codetools)
verify_everything=("$ours" verify-identity --config "$scratch/servers.json" --prefix "$ev"
    --expect-commit "$sha" --mcp-json "$scratch/everything.json")
# Both must pass, the handshake included, before they are timed.
"${verify_standin[@]}" --handshake >/dev/null
"${verify_everything[@]}" --handshake >/dev/null

# server-everything's own tools/list answer, through the handshake's record.
"$ours" install --config "$scratch/servers.json" --prefix "$ev" --client cursor >/dev/null
python3 - "$ev/.mcp-deploy/tools.json" "$scratch/everything-tools.json" <<'PY'
import json, sys
rec = json.load(open(sys.argv[1]))
tools = next(iter(rec["releases"].values()))["tools"]
json.dump({"tools": tools}, open(sys.argv[2], "w"))
PY
python3 - "$scratch/synthetic-tools.json" <<'PY'
import json, sys
tools = [{
    "name": f"tool_{i:04d}",
    "description": ("Reads the given resource and returns what it holds. " * 8)[:400],
    "inputSchema": {"type": "object", "required": ["p0"], "properties": {
        f"p{j}": {"type": "string", "description": f"parameter {j} of tool {i}"} for j in range(12)}},
    "annotations": {"readOnlyHint": True},
} for i in range(1000)]
json.dump({"tools": tools}, open(sys.argv[1], "w"))
PY

load_before="$(cut -d' ' -f1-3 /proc/loadavg)"
echo "== the handshake: verify-identity --handshake against verify-identity, $runs pairs each" >&2
# (The paths have no spaces: mktemp's and the repository's, which --vs splits as a shell does.)
farm-bench -n "$runs" --vs "${verify_standin[*]}" -- "${verify_standin[@]}" --handshake \
    >"$scratch/standin.txt" 2>&1
farm-bench -n "$runs" --vs "${verify_everything[*]}" -- "${verify_everything[@]}" --handshake \
    >"$scratch/everything.txt" 2>&1
echo "== the digest alone" >&2
digest() { "$digest_bin" "$1" 200; }
d_standin="$(python3 -c 'import json;print(json.dumps({"tools":[{"name":"hello","description":"Says hello.","inputSchema":{"type":"object","properties":{}}}]}))' >"$scratch/standin-tools.json"; digest "$scratch/standin-tools.json")"
d_everything="$(digest "$scratch/everything-tools.json")"
d_synthetic="$(digest "$scratch/synthetic-tools.json")"

wall() { # FILE WHICH(A|B): the median wall seconds
    awk -v w="$2" '$1 == w && $2 == "wall" {print $5}' "$1"
}
echo
echo "load average (1/5/15 min) before: $load_before; after: $(cut -d' ' -f1-3 /proc/loadavg)"
for name in standin everything; do
    a="$(wall "$scratch/$name.txt" A)"
    b="$(wall "$scratch/$name.txt" B)"
    awk -v n="$name" -v a="$a" -v b="$b" 'BEGIN {
        printf "%-10s verify-identity --handshake %6.1f ms, without %5.1f ms: the handshake %6.1f ms (median)\n",
            n, a * 1000, b * 1000, (a - b) * 1000 }'
done
echo "digest: stand-in     $d_standin"
echo "digest: everything   $d_everything"
echo "digest: synthetic    $d_synthetic"
hs_ev="$(awk '$1 == "A" && $2 == "wall" {a = $5} $1 == "B" && $2 == "wall" {b = $5} END {print (a - b) * 1e6}' "$scratch/everything.txt")"
dg_ev="$(sed -n 's/.*digest median \([0-9.]*\) us.*/\1/p' <<<"$d_everything")"
awk -v d="$dg_ev" -v h="$hs_ev" 'BEGIN {
    printf "server-everything: the digest is %.4f%% of its handshake (%.1f us of %.0f us)\n", 100 * d / h, d, h }'
