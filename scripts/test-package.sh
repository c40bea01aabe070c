#!/usr/bin/env bash
# Test the Debian package for real, on this machine (as root: it installs system-wide):
#   1. builds it with scripts/package.sh (or takes the .deb given as $1);
#   2. lintian: fails on an error (E:), prints the warnings;
#   3. dpkg -i, and every file in the .deb is on disk (a dpkg path-exclude, as container
#      images set for /usr/share/man and /usr/share/doc, is overridden for this package);
#   4. the installed /usr/bin/mcp-deploy --version names the package's version, and it is
#      statically linked (an LD_PRELOAD is not loaded into it);
#   5. `man mcp-deploy-install` renders without a warning, with its EXAMPLES and EXIT STATUS,
#      and so does every installed page; every docs page is in /usr/share/doc/mcp-deploy/, and
#      every /usr/share/doc/mcp-deploy/ path a page or `--help` names is there;
#   6. the completions work where each shell looks (bash, fish: complete a word; zsh: parse);
#   7. the reconcile timer's user units: `systemd-analyze verify --user` says nothing about
#      them, the package enables them for no one, and the service's ExecStart, with its
#      EnvironmentFile as a user would write it, registers the sample deployment with the
#      real claude and then finds nothing to do;
#   8. scripts/demo.sh with the installed binary (MCP_DEPLOY_BIN=/usr/bin/mcp-deploy);
#   9. dpkg -r leaves nothing behind: every file `dpkg -L` listed is gone, and so is every
#      directory the package brought that was not there before.
# Refuses to run when mcp-deploy is already installed; removes the package on failure.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
start=$SECONDS

fail() {
  echo "FAIL: $*" >&2
  exit 1
}
[ "$(id -u)" = 0 ] || fail "run as root: this test installs and removes a system package"
installed() {
  [ "$(dpkg-query -W -f='${db:Status-Status}' mcp-deploy 2>/dev/null || true)" = installed ]
}
! installed || fail "mcp-deploy is already installed; remove it first (dpkg -r mcp-deploy)"
[ ! -e /usr/bin/mcp-deploy ] || fail "/usr/bin/mcp-deploy exists and no package owns it"

missing=()
command -v lintian >/dev/null 2>&1 || missing+=(lintian)
command -v man >/dev/null 2>&1 || missing+=(man-db)
command -v zsh >/dev/null 2>&1 || missing+=(zsh)
command -v fish >/dev/null 2>&1 || missing+=(fish)
command -v systemd-analyze >/dev/null 2>&1 || missing+=(systemd)
if [ ${#missing[@]} -gt 0 ]; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi

if [ $# -gt 0 ]; then
  deb=$1
else
  deb=$(bash scripts/package.sh | tail -n 1)
fi
[ -f "$deb" ] || fail "no package at $deb"
echo "# package: $deb ($((SECONDS - start)) s to build)"
version=$(dpkg-deb -f "$deb" Version)

scratch=$(mktemp -d "${TMPDIR:-/tmp}/mcp-deploy-package.XXXXXX")
cleanup() {
  if installed; then
    echo "# removing the mcp-deploy package after a failure" >&2
    dpkg -r mcp-deploy >/dev/null || true
  fi
  rm -rf "$scratch"
}
trap cleanup EXIT

# 2. lintian, as root (it says it would rather not be: that line is not a finding).
lintian --fail-on error --display-info "$deb" >"$scratch/lintian" 2>&1 ||
  { cat "$scratch/lintian" >&2; fail "lintian reports an error"; }
grep -v 'running with root privileges' "$scratch/lintian" || true
echo "ok: lintian: no error ($(grep -c '^W:' "$scratch/lintian" || true) warnings)"

# What the package holds, and which of its directories exist before it is installed.
dpkg-deb --fsys-tarfile "$deb" | tar -t | sed -e 's|^\./|/|' -e 's|/$||' | grep -v '^/\?$' \
  >"$scratch/contents"
while IFS= read -r path; do
  [ -d "$path" ] && echo "$path"
done <"$scratch/contents" >"$scratch/dirs-before" || true

# 3. Install. Later --path-include options override the configuration's --path-exclude.
dpkg --path-include='/usr/share/man/man1/mcp-deploy*' \
  --path-include='/usr/share/doc/mcp-deploy/*' -i "$deb" >/dev/null
installed || fail "dpkg -i did not install mcp-deploy"
while IFS= read -r path; do
  [ -e "$path" ] || fail "$path is in the package but not on disk after dpkg -i"
done <"$scratch/contents"
echo "ok: dpkg -i installed all $(wc -l <"$scratch/contents") paths of mcp-deploy $version"

# 4. The installed binary names the package's version (0.1.0 of 0.1.0-1).
got=$(/usr/bin/mcp-deploy --version)
case "$got" in
  "mcp-deploy ${version%-*} "* | "mcp-deploy ${version%-*}") ;;
  *) fail "/usr/bin/mcp-deploy --version says '$got', the package is $version" ;;
esac
echo "ok: $got"

# 4b. It is linked statically: an LD_PRELOAD a client passes to `mcp-deploy exec` is never
# loaded into the launcher before its checks (the dynamic loader would say it cannot load it).
preloaded=$(LD_PRELOAD=/nonexistent/mcp-deploy-test.so /usr/bin/mcp-deploy --version 2>&1)
case "$preloaded" in
  *ld.so*) fail "/usr/bin/mcp-deploy loads LD_PRELOAD: it is not statically linked ($preloaded)" ;;
esac
echo "ok: /usr/bin/mcp-deploy is statically linked (an LD_PRELOAD is not loaded into it)"

# 5. The man pages: `man mcp-deploy-install` through man's own search, then every page the
# package installed, with groff's warnings on.
render() { # ARGS...
  MANPAGER=cat MANWIDTH=80 LC_ALL=C.UTF-8 man --warnings "$@" >"$scratch/page" 2>"$scratch/page.err" ||
    { cat "$scratch/page.err" >&2; fail "man $* failed"; }
  [ ! -s "$scratch/page.err" ] || { cat "$scratch/page.err" >&2; fail "man $* warned"; }
}
render mcp-deploy-install
grep -q 'mcp-deploy-install' "$scratch/page" || fail "man mcp-deploy-install shows another page"
grep -q -- '--expect-commit' "$scratch/page" || fail "man mcp-deploy-install lacks --expect-commit"
pages=0
for page in /usr/share/man/man1/mcp-deploy*.1.gz; do
  render -l "$page"
  pages=$((pages + 1))
done
echo "ok: man mcp-deploy-install renders, and all $pages pages render without a warning"
for section in EXAMPLES 'EXIT STATUS' FILES ENVIRONMENT; do
  render mcp-deploy-install
  grep -q "^$section" "$scratch/page" || fail "man mcp-deploy-install has no $section section"
done
for doc in README.md docs/*.md; do
  [ -f "/usr/share/doc/mcp-deploy/${doc#docs/}" ] ||
    fail "$doc is not installed as /usr/share/doc/mcp-deploy/${doc#docs/}"
done
{
  for page in /usr/share/man/man1/mcp-deploy*.1.gz; do zcat "$page"; done
  /usr/bin/mcp-deploy --help
  /usr/bin/mcp-deploy install --help
} | sed 's/\\-/-/g' | grep -o '/usr/share/doc/mcp-deploy/[A-Za-z0-9._-]*' | sort -u >"$scratch/named"
while IFS= read -r path; do
  [ -e "$path" ] || fail "$path is named by a man page or --help but not installed"
done <"$scratch/named"
echo "ok: the docs are in /usr/share/doc/mcp-deploy/, with all $(wc -l <"$scratch/named") paths the pages name"

# 6. Each shell finds its completion where the package put it, and completes `inst` to
# `install` (bash: the function it registers; fish: its autoload; zsh: its fpath, parsed).
got=$(bash -c 'source /usr/share/bash-completion/completions/mcp-deploy
  f=$(complete -p mcp-deploy | sed -n "s/.* -F \([^ ]*\) .*/\1/p")
  COMP_WORDS=(mcp-deploy inst) COMP_CWORD=1 COMP_LINE="mcp-deploy inst" COMP_POINT=15
  "$f" mcp-deploy inst mcp-deploy && echo "${COMPREPLY[*]}"') || true
[ "$got" = install ] || fail "bash completes 'mcp-deploy inst' to '$got', not install"
got=$(HOME="$scratch" fish -c 'complete -C "mcp-deploy inst"' | cut -f1) || true
[ "$got" = install ] || fail "fish completes 'mcp-deploy inst' to '$got', not install"
zsh -fc '[[ ${fpath[(I)/usr/share/zsh/vendor-completions]} -gt 0 ]]' ||
  fail "zsh does not look in /usr/share/zsh/vendor-completions"
zsh -n /usr/share/zsh/vendor-completions/_mcp-deploy || fail "the zsh completion does not parse"
echo "ok: completions: bash and fish complete inst to install, zsh finds and parses its file"

# 7. The reconcile timer (issue 26, item 2). `systemd-analyze verify --user` needs no running
# manager, only a runtime directory; HOME is a scratch one, so that no unit of root's is read.
units=/usr/lib/systemd/user
service=$units/mcp-deploy-reconcile.service
timer=$units/mcp-deploy-reconcile.timer
for unit in "$service" "$timer"; do
  [ -f "$unit" ] || fail "$unit is not installed"
done
mkdir -m 700 "$scratch/runtime" "$scratch/verify-home"
verify_units() { # WHAT: systemd-analyze verify --user says nothing about the units
  local verified=0
  HOME="$scratch/verify-home" XDG_RUNTIME_DIR="$scratch/runtime" \
    systemd-analyze verify --user "$service" "$timer" >"$scratch/verify" 2>&1 || verified=$?
  # Any word about our units fails: an unknown key is only a warning, with exit status 0.
  if [ "$verified" != 0 ] || grep -q 'mcp-deploy-reconcile' "$scratch/verify"; then
    cat "$scratch/verify" >&2
    fail "systemd-analyze verify --user on $1 (exit status $verified)"
  fi
}
verify_units "the reconcile units"
echo "ok: systemd-analyze verify --user has nothing to say about the reconcile service and timer"
# The interval drop-in operations.md shows (its one ```ini block), as the user's own: still
# nothing to say (an empty OnUnitActiveSec= clears every time; with none left, it refuses).
dropin="$scratch/verify-home/.config/systemd/user/mcp-deploy-reconcile.timer.d"
mkdir -p "$dropin"
# shellcheck disable=SC2016 # sed's $ (end of line), not a shell variable
sed -n '/^```ini$/,/^```$/{/^```/d;p}' /usr/share/doc/mcp-deploy/operations.md >"$dropin/interval.conf"
grep -q '^\[Timer\]$' "$dropin/interval.conf" ||
  fail "operations.md shows no [Timer] drop-in in an \`\`\`ini block"
verify_units "the reconcile units with the documented drop-in"
echo "ok: and with the interval drop-in operations.md shows"

# Enabled for no one: no maintainer script, no link in any .wants directory.
dpkg-deb --control "$deb" "$scratch/control"
for script in preinst postinst prerm postrm; do
  [ ! -e "$scratch/control/$script" ] ||
    fail "the package has a $script: it must enable the reconcile timer for no one"
done
links=$(find /etc/systemd /usr/lib/systemd -path '*.wants/mcp-deploy-reconcile*' 2>/dev/null || true)
[ -z "$links" ] || fail "the package enabled the reconcile units: $links"
echo "ok: the reconcile timer is installed enabled for no one"

# The service's one ExecStart= and EnvironmentFile= lines, run as a user's manager would: %h
# is the home; the file is KEY="VALUE" lines; the word $MCP_DEPLOY_RECONCILE_ARGS is that
# variable split at whitespace (its value here has no quote or backslash, which systemd would
# also interpret); the rest of the environment is the file's (PATH included).
exec_start=$(sed -n 's/^ExecStart=//p' "$service")
env_file=$(sed -n 's/^EnvironmentFile=-//p' "$service")
[ "$(grep -c '^ExecStart=.' "$service")" = 1 ] || fail "$service: not one ExecStart= line"
[ "$(grep -c '^EnvironmentFile=-.' "$service")" = 1 ] ||
  fail "$service: not one optional (-) EnvironmentFile= line"
home="$scratch/timer-home"
env_file=${env_file//%h/$home}
mkdir -p "$home" "$(dirname "$env_file")"
/usr/bin/mcp-deploy sample "$scratch/timer-opt" >/dev/null
args="--root $scratch/timer-opt --name-suffix -timer"
{
  echo "MCP_DEPLOY_RECONCILE_ARGS=\"$args\""
  echo "PATH=\"$(pwd)/node_modules/.bin:/usr/local/bin:/usr/bin:/bin\""
  echo 'DISABLE_AUTOUPDATER="1"'
  echo 'CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1"'
} >"$env_file"
envs=("HOME=$home")
while IFS= read -r line; do
  value=${line#*=}
  value=${value#\"}
  envs+=("${line%%=*}=${value%\"}")
done <"$env_file"
read -r -a words <<<"$exec_start"
argv=()
for word in "${words[@]}"; do
  if [ "$word" = "\$MCP_DEPLOY_RECONCILE_ARGS" ]; then
    read -r -a split <<<"$args"
    argv+=("${split[@]}")
  else
    argv+=("$word")
  fi
done
[ "${argv[0]}" = /usr/bin/mcp-deploy ] || fail "$service runs ${argv[0]}, not /usr/bin/mcp-deploy"
run_service() { # the service's command, in the environment its manager would give it
  (cd "$home" && env -i "${envs[@]}" "${argv[@]}") >"$scratch/service" 2>&1 ||
    { cat "$scratch/service" >&2; fail "the service's ExecStart failed: ${argv[*]}"; }
}
# A report row longer than 100 columns continues on lines indented four or more: one line again.
unwrapped() { awk 'NR > 1 && /^    / { sub(/^ +/, ""); printf " %s", $0; next } NR > 1 { print "" } { printf "%s", $0 } END { print "" }' "$1"; }
run_service
unwrapped "$scratch/service" |
  grep -q '^codetools (registered as codetools-timer): healed: .*registered (codetools-timer is not' ||
  { cat "$scratch/service" >&2; fail "the service's first run healed no registration"; }
grep -q '"codetools-timer"' "$home/.claude.json" ||
  fail "the service's first run did not register codetools-timer in $home/.claude.json"
run_service
if grep -q 'healed' "$scratch/service"; then
  cat "$scratch/service" >&2
  fail "the service's second run healed again"
fi
echo "ok: the service's ExecStart registered the sample with the real claude, then healed nothing"

# 8. The demo, with the installed binary.
MCP_DEPLOY_BIN=/usr/bin/mcp-deploy bash scripts/demo.sh >"$scratch/demo" 2>&1 ||
  { cat "$scratch/demo" >&2; fail "the demo failed with /usr/bin/mcp-deploy"; }
grep -q '^demo passed' "$scratch/demo" || fail "the demo did not finish"
echo "ok: the demo passed with /usr/bin/mcp-deploy"

# 9. Remove, and check that nothing is left behind.
dpkg -L mcp-deploy >"$scratch/listed"
dpkg -r mcp-deploy >/dev/null
! installed || fail "dpkg -r left mcp-deploy installed"
status=$(dpkg-query -W -f='${db:Status-Status}' mcp-deploy 2>/dev/null || echo not-installed)
[ "$status" = not-installed ] || fail "after dpkg -r mcp-deploy is '$status', not not-installed"
left=0
while IFS= read -r path; do
  [ "$path" = /. ] && continue
  if [ -d "$path" ] && [ ! -L "$path" ]; then
    # A directory may stay only when it was there before the package came.
    if ! grep -qxF -- "$path" "$scratch/dirs-before"; then
      echo "left behind: directory $path" >&2
      left=$((left + 1))
    fi
  elif [ -e "$path" ] || [ -L "$path" ]; then
    echo "left behind: $path" >&2
    left=$((left + 1))
  fi
done <"$scratch/listed"
[ "$left" = 0 ] || fail "dpkg -r left $left paths behind"
for unit in "$service" "$timer"; do
  [ ! -e "$unit" ] || fail "dpkg -r left $unit behind"
done
echo "ok: dpkg -r removed all $(wc -l <"$scratch/listed") listed paths (shared directories stay)"

trap 'rm -rf "$scratch"' EXIT
echo "package test passed ($((SECONDS - start)) s)"
