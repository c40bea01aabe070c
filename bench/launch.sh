#!/usr/bin/env bash
# Benchmark of issue 37: the launch overhead of `mcp-deploy exec` (a checked launch) against
# starting the server directly, side by side, pair by pair, in one run.
#
#   bench/launch.sh [RUNS]          (RUNS defaults to 10)
#
# Two servers, each a release with a MANIFEST.sha256, pinned by `install --client cursor`
# (a file-written client: no client CLI is needed) under a scratch HOME:
#   - the sample codetools (a Node.js script, #!/usr/bin/env node), started with stdin at
#     EOF: it reads its input and exits, so a start is node's start-up;
#   - a 100 MB executable: /bin/true with 100 MB of random bytes appended (the kernel runs it
#     as it runs /bin/true), so a start is the exec alone and the checked launch adds the hash
#     of 100 MB — compared with `sha256sum` of the same file, what the hash costs elsewhere.
# The launcher is the package's static binary (scripts/package.sh's build). farm-bench (the
# project's timing tool) times whole processes, A and B in turn; without it a plain loop of
# `date +%s%N` gives the means. fs-verity is not used: the manifest lists SHA-256 digests of
# file contents, which a file's fs-verity digest (a Merkle-tree root) cannot be compared with.
set -euo pipefail

runs="${1:-10}"
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
triple=$(rustc -vV | sed -n 's/^host: //p')
echo "== cargo build --release --target $triple (static, as scripts/package.sh builds it)" >&2
CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUSTFLAGS="-C target-feature=+crt-static" \
CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUSTFLAGS="-C target-feature=+crt-static" \
  cargo build --release --locked --quiet --target "$triple"
ours="$repo/target/$triple/release/mcp-deploy"
node_bin="$(command -v node || true)"
[ -n "$node_bin" ] || { echo "$0: node is required (the sample servers are Node.js scripts)" >&2; exit 2; }

scratch="$(mktemp -d /tmp/mcp-deploy-bench.XXXXXX)"
trap 'rm -rf "$scratch"' EXIT
export HOME="$scratch/home" XDG_STATE_HOME="$scratch/state" XDG_CONFIG_HOME="$scratch/config"
mkdir -p "$HOME"
root="$scratch/root"
"$ours" sample "$root" >/dev/null

# The 100 MB server: a release of its own.
big="$root/big"
sha=$(printf 'b%.0s' $(seq 40))
mkdir -p "$big/releases/$sha/bin"
cp /bin/true "$big/releases/$sha/bin/big"
head -c 100000000 /dev/urandom >>"$big/releases/$sha/bin/big"
echo "$sha" >"$big/releases/$sha/VERSION"
ln -s "releases/$sha" "$big/current"
cat >"$scratch/servers.json" <<JSON
{"servers": [
  {"name": "codetools", "prefix": "$root/codetools", "layout": "release", "template": "$repo/templates/codetools.mcp.json"},
  {"name": "big", "prefix": "$big", "layout": "release", "entry": {"command": "{{prefix}}/current/bin/big"}}]}
JSON
for r in "$root"/codetools/releases/* "$big/releases/$sha"; do
  "$ours" manifest create "$r" >/dev/null
done
"$ours" install --root "$root" --config "$scratch/servers.json" --client cursor --no-handshake -q >/dev/null

# Both sides start with the same small environment: the checked launch drops every variable
# it is not given (a host's NODE_EXTRA_CA_CERTS, say, which costs node tens of ms to load),
# so a direct start with the caller's whole environment would not be the same server start.
clean=(env -i "PATH=$PATH" "HOME=$HOME")
ct_release=$(readlink -f "$root/codetools/current")
direct_ct=("${clean[@]}" sh -c "exec '$ct_release/bin/codetools' mcp serve </dev/null")
checked_ct=("${clean[@]}" sh -c "exec '$ours' exec --prefix '$root/codetools' --config '$scratch/servers.json' -- mcp serve </dev/null 2>/dev/null")
direct_big=("${clean[@]}" sh -c "exec '$big/releases/$sha/bin/big'")
checked_big=("${clean[@]}" sh -c "exec '$ours' exec --prefix '$big' --config '$scratch/servers.json' 2>/dev/null")
hash_big=(sha256sum "$big/releases/$sha/bin/big")

# Each checked launch must start its server (exit 0) before it is timed.
if ! "${checked_ct[@]}" || ! "${checked_big[@]}"; then
  echo "$0: a checked launch was refused" >&2
  exit 1
fi

echo "machine: $(nproc) cores; $("$node_bin" --version) ; launcher: $(file -b "$ours" | cut -d, -f1-2)"
if command -v farm-bench >/dev/null; then
  q() { printf '%q ' "$@"; }
  echo "== codetools (node): checked launch (A) vs direct (B)"
  farm-bench -n "$runs" --vs "$(q "${direct_ct[@]}")" -- "${checked_ct[@]}"
  echo "== 100 MB executable: checked launch (A) vs direct (B)"
  farm-bench -n "$runs" --vs "$(q "${direct_big[@]}")" -- "${checked_big[@]}"
  echo "== 100 MB executable: checked launch (A) vs sha256sum of it (B)"
  farm-bench -n "$runs" --vs "$(q "${hash_big[@]}")" -- "${checked_big[@]}"
else
  mean_ms() {
    local t0 t1 i
    t0=$(date +%s%N)
    for ((i = 0; i < runs; i++)); do "$@" >/dev/null 2>&1; done
    t1=$(date +%s%N)
    echo $(((t1 - t0) / runs / 1000000))
  }
  printf '%-34s %8s\n' "what" "mean ms"
  printf '%-34s %8s\n' "codetools direct" "$(mean_ms "${direct_ct[@]}")"
  printf '%-34s %8s\n' "codetools checked" "$(mean_ms "${checked_ct[@]}")"
  printf '%-34s %8s\n' "100 MB direct" "$(mean_ms "${direct_big[@]}")"
  printf '%-34s %8s\n' "100 MB checked" "$(mean_ms "${checked_big[@]}")"
  printf '%-34s %8s\n' "sha256sum 100 MB" "$(mean_ms "${hash_big[@]}")"
fi
