#!/usr/bin/env bash
# Benchmark of issue 38: what verifying a release's provenance (a Sigstore bundle, offline)
# costs, beside the SSH signature check, side by side in one run.
#
#   bench/provenance.sh [RUNS]          (RUNS defaults to 20)
#
# One release whose executable is a copy of /bin/true, with a MANIFEST.sha256 that is both
# SSH-signed (ssh-keygen -Y sign, Ed25519) and attested (a bundle made by the offline Sigstore
# instance of the tests, tests/sigstore/instance.js: certificate with an SCT, transparency-log
# entry with inclusion proof, checkpoint and SET). Three checked launches of it
# (`mcp-deploy exec`, which checks the release at every start and then runs /bin/true), each
# with a declaration naming a different proof:
#   pin         the pin install recorded (commit + manifest digest): the baseline;
#   signature   + trusted_signers: the SSH signature over the manifest;
#   provenance  + trusted_builder/trusted_root: the bundle verified and the build matched.
# The difference from the baseline is the verification. farm-bench (the project's timing tool)
# times whole processes pair by pair; the static release binary is measured.
set -euo pipefail

runs="${1:-20}"
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
triple=$(rustc -vV | sed -n 's/^host: //p')
echo "== cargo build --release --target $triple (static, as scripts/package.sh builds it)" >&2
CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUSTFLAGS="-C target-feature=+crt-static" \
CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUSTFLAGS="-C target-feature=+crt-static" \
  cargo build --release --locked --quiet --target "$triple"
ours="$repo/target/$triple/release/mcp-deploy"
[ -d tests/sigstore/node_modules/@sigstore/mock ] || npm ci --prefix tests/sigstore --no-audit --no-fund >&2
command -v farm-bench >/dev/null || { echo "$0: farm-bench is required" >&2; exit 2; }

scratch="$(mktemp -d /tmp/mcp-deploy-bench.XXXXXX)"
trap 'rm -rf "$scratch"' EXIT
chmod 755 "$scratch"
export HOME="$scratch/home" XDG_STATE_HOME="$scratch/state" XDG_CONFIG_HOME="$scratch/config"
mkdir -p "$HOME"
prefix="$scratch/tiny"
sha=$(printf 'c%.0s' $(seq 40))
release="$prefix/releases/$sha"
mkdir -p "$release/bin"
cp /bin/true "$release/bin/tiny"
echo "$sha" >"$release/VERSION"
ln -s "releases/$sha" "$prefix/current"
"$ours" manifest create "$release" >/dev/null

ssh-keygen -q -N '' -t ed25519 -C builder -f "$scratch/builder"
ssh-keygen -q -Y sign -n mcp-deploy -f "$scratch/builder" "$release/MANIFEST.sha256"
printf 'builder@example.org %s\n' "$(cut -d' ' -f1,2 "$scratch/builder.pub")" >"$scratch/allowed_signers"
cat >"$scratch/plan.json" <<JSON
{"bundles": [{"name": "release", "artifact": "$release/MANIFEST.sha256",
  "san": "https://github.com/acme/tiny/.github/workflows/release.yml@refs/heads/main",
  "claims": {"8": "https://token.actions.githubusercontent.com",
    "9": "https://github.com/acme/tiny/.github/workflows/release.yml@refs/heads/main",
    "11": "github-hosted", "12": "https://github.com/acme/tiny", "14": "refs/heads/main"}}]}
JSON
node tests/sigstore/instance.js make "$scratch/plan.json" "$scratch/instance"
cp "$scratch/instance/release.sigstore.json" "$release/MANIFEST.sha256.sigstore.json"
cp "$scratch/instance/trusted_root.json" "$scratch/trusted_root.json"
cat >"$scratch/builders.toml" <<'TOML'
[[builder]]
issuer = "https://token.actions.githubusercontent.com"
repository = "acme/tiny"
workflow = ".github/workflows/release.yml"
ref = "refs/heads/main"
TOML
declare_with() {
  printf '{"servers": [{"name": "tiny", "prefix": "%s", "layout": "release", "entry": {"command": "{{prefix}}/current/bin/tiny"}, "launch": "checked"%s}]}\n' "$prefix" "$1" >"$scratch/$2.json"
}
declare_with '' pin
declare_with ', "trusted_signers": "allowed_signers"' signature
declare_with ', "trusted_builder": "builders.toml", "trusted_root": "trusted_root.json"' provenance
"$ours" install --prefix "$prefix" --config "$scratch/provenance.json" --client cursor --no-handshake -q >/dev/null

launch() { echo "env -i PATH=$PATH HOME=$HOME $ours exec --prefix $prefix --config $scratch/$1.json"; }
for kind in pin signature provenance; do
  env -i "PATH=$PATH" "HOME=$HOME" "$ours" exec --prefix "$prefix" --config "$scratch/$kind.json" ||
    { echo "$0: the $kind launch was refused" >&2; exit 1; }
done

echo "machine: $(nproc) cores; launcher: $(file -b "$ours" | cut -d, -f1-2)"
echo "== provenance (A) vs pin only (B): A - B is the bundle's verification"
# shellcheck disable=SC2046 # the command is split into its words on purpose
farm-bench -n "$runs" --vs "$(launch pin)" -- $(launch provenance)
echo "== signature (A) vs pin only (B): A - B is the SSH signature's verification"
# shellcheck disable=SC2046
farm-bench -n "$runs" --vs "$(launch pin)" -- $(launch signature)
echo "== provenance (A) vs signature (B)"
# shellcheck disable=SC2046
farm-bench -n "$runs" --vs "$(launch signature)" -- $(launch provenance)
