#!/usr/bin/env bash
# Build the Debian package: target/debian/mcp-deploy_<version>-<revision>_<arch>.deb.
#
#   bash scripts/package.sh          prints the path of the .deb on its last line
#
# 1. builds the release binary (cargo build --release --locked), statically linked;
# 2. generates the package's assets from that binary into target/deb-assets/ (never
#    committed): one man page per command and nested command (`mcp-deploy man CMD...`, the
#    commands read from `--help`), gzipped; the bash, zsh and fish completions
#    (`mcp-deploy completions SHELL`); a machine-readable copyright file from LICENSE-MIT and
#    LICENSE-APACHE; and a Debian changelog entry naming the package version;
# 3. runs cargo-deb with the metadata in Cargo.toml ([package.metadata.deb]), installing the
#    pinned cargo-deb first when it is missing (`cargo install --locked`, a few minutes); the
#    package also ships README.md and docs/*.md as /usr/share/doc/mcp-deploy/*.md, where help
#    lines and man pages send users.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
repo=$(pwd)

cargo_deb_version=3.8.0
if [ "$(cargo deb --version 2>/dev/null || true)" != "cargo-deb $cargo_deb_version" ]; then
  cargo install --locked --quiet cargo-deb --version "$cargo_deb_version"
fi

# Linked statically (a static-pie binary): the launcher `mcp-deploy exec` drops the
# LD_PRELOAD and LD_LIBRARY_PATH a client passes, and a static binary never loads them into
# itself before its checks run (the dynamic loader never runs). `--target` keeps the flag
# off the build scripts and proc macros, which must stay dynamic.
triple=$(rustc -vV | sed -n 's/^host: //p')
CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUSTFLAGS="-C target-feature=+crt-static" \
CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUSTFLAGS="-C target-feature=+crt-static" \
  cargo build --release --locked --quiet --target "$triple"
bin="${CARGO_TARGET_DIR:-$repo/target}/$triple/release/mcp-deploy"
# `mcp-deploy 0.1.0 (commit ...)` -> 0.1.0, the crate version.
version=$("$bin" --version | awk '{print $2}')
# cargo-deb's default revision; the changelog entry must name the same version.
deb_version="$version-1"

out="$repo/target/deb-assets"
rm -rf "$out"
mkdir -p "$out/man" "$out/completions"

# The subcommands that `mcp-deploy CMD... --help` lists under `Commands:`, less `help`.
subcommands() {
  "$bin" "$@" --help | awk '
    /^Commands:/ { listing = 1; next }
    listing && /^[^ ]/ { listing = 0 }
    listing && /^  [a-z]/ && $1 != "help" { print $1 }'
}
# Write the man page of CMD... (its name from .TH, e.g. mcp-deploy-manifest-verify), then
# those of its subcommands.
man_pages() {
  local page name sub
  page=$("$bin" man "$@")
  name=$(printf '%s\n' "$page" | sed -n 's/^\.TH \([^ ]*\) .*/\1/p')
  [ -n "$name" ] || { echo "no .TH line in: mcp-deploy man $*" >&2; exit 1; }
  printf '%s\n' "$page" | gzip -9 -n >"$out/man/$name.1.gz"
  for sub in $(subcommands "$@"); do
    man_pages "$@" "$sub"
  done
}
man_pages

"$bin" completions bash >"$out/completions/mcp-deploy.bash"
"$bin" completions zsh >"$out/completions/_mcp-deploy"
"$bin" completions fish >"$out/completions/mcp-deploy.fish"

maintainer=$(sed -n 's/^maintainer = "\(.*\)"$/\1/p' Cargo.toml)
# The copyright notice: the years of the history (first commit to this one), then the holder.
first=$(git log --reverse --format=%cd --date=format:%Y 2>/dev/null | head -n 1 || true)
last=$(git log -1 --format=%cd --date=format:%Y 2>/dev/null || date +%Y)
years=${first:-$last}
[ "$years" = "$last" ] || years="$years-$last"
copyright="$years $(sed -n 's/^copyright = "\(.*\)"$/\1/p' Cargo.toml)"
{
  cat <<EOF
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: mcp-deploy

Files: *
Copyright: $copyright
License: MIT or Apache-2.0

License: MIT
EOF
  # The full text, as a DEP-5 continuation: each line indented, blank lines as ` .`.
  sed -e 's/^$/./' -e 's/^/ /' LICENSE-MIT
  cat <<EOF

License: Apache-2.0
 Licensed under the Apache License, Version 2.0 (the "License"); you may not
 use this file except in compliance with the License.
 .
 On Debian systems, the full text of the Apache License, Version 2.0 can be
 found in the file /usr/share/common-licenses/Apache-2.0.
EOF
} >"$out/copyright"

# The entry's date: the commit's, so the same commit packs the same changelog.
date=$(git log -1 --format=%cD 2>/dev/null || date -R)
cat >"$out/changelog" <<EOF
mcp-deploy ($deb_version) unstable; urgency=medium

  * Package of the mcp-deploy crate $version, built by scripts/package.sh.

 -- $maintainer  $date
EOF

cargo deb --no-build --quiet --target "$triple" >/dev/null
deb="${CARGO_TARGET_DIR:-$repo/target}/$triple/debian/mcp-deploy_${deb_version}_$(dpkg --print-architecture).deb"
[ -f "$deb" ] || { echo "cargo deb did not write $deb" >&2; exit 1; }
echo "$deb"
