#!/usr/bin/env bash
# Test the Ansible role for real, on this machine: lay out the sample deployment in a scratch
# directory with its own HOME and CLAUDE_CONFIG_DIR and the pinned claude on PATH, then run
# playbook.yml against localhost (connection local):
#   1. --check            predicts changed=1 and registers nothing;
#   2. install            changed=1, both servers registered;
#   3. install again      changed=0 (install made no change), verifying in the same play
#                         (-e mcp_deploy_verify=true);
#   4. --tags verify      verify-identity for each server, as CI runs it, passes;
#   5. --tags verify      with a wrong expected commit fails the play;
#   5b. mcp_deploy_fleet_report: each host's status --json lands on the controller and the
#      play shows `mcp-deploy report`'s table once, changing nothing;
#   6. mcp_deploy_promote to a second release: changed=1, `current` switched; again:
#      changed=0; --check of a promote back predicts changed=1 and switches nothing;
#      mcp_deploy_rollback: --check predicts changed=1, then changed=1, back at the first
#      release; a promote of a release
#      that is not there fails the host and switches nothing; with mcp_deploy_trusted_signers
#      an unsigned release fails the host, and one signed with ssh-keygen goes live;
#   7. as root: mcp_deploy_package (a .deb, MCP_DEPLOY_DEB or built by scripts/package.sh)
#      is copied and installed with dpkg before install runs (changed; --check before it
#      predicts that and installs nothing), a second play and a --check play change
#      nothing, and the package is removed again;
#   8. mcp_deploy_binary_src copies a prebuilt binary (changed), a second play changes nothing;
#   9. as root, in a private mount namespace with /etc overlaid (the host's /etc is never
#      written): verify with mcp_deploy_only_deployed fails naming a hand-added server;
#      mcp_deploy_policy --check predicts changed=1 and writes nothing, a play writes the
#      allowlist (changed=1), the real claude then loads the declared servers and not the
#      hand-added one, and verify with mcp_deploy_only_deployed passes; a second play changes
#      nothing, and after the promote of 6 claude still admits them.
# Brings ansible-core with pip when ansible-playbook is missing. Cleans up after itself
# (KEEP=1 keeps the scratch dir).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)

# shellcheck source=deploy/ansible/testlib.sh
. "$here/testlib.sh"
ansible_bootstrap
# As root, the Debian package too, built before HOME is pointed at the scratch home.
deb=""
if [ "$(id -u)" = 0 ]; then
  deb=${MCP_DEPLOY_DEB:-$(bash "$repo/scripts/package.sh" | tail -n 1)}
fi

scratch=$(mktemp -d "${TMPDIR:-/tmp}/mcp-deploy-ansible.XXXXXX")
if [ "${KEEP:-0}" = 1 ]; then
  echo "# keeping $scratch"
else
  trap 'rm -rf "$scratch"' EXIT
fi
export HOME="$scratch/home" CLAUDE_CONFIG_DIR="$scratch/claude"
export DISABLE_AUTOUPDATER=1 CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 \
  DISABLE_TELEMETRY=1 DISABLE_ERROR_REPORTING=1 MCP_TIMEOUT=3000
export PATH="$repo/node_modules/.bin:$PATH"
# ansible-core refuses a non-UTF-8 locale; keep its state and temp files in the scratch dir.
export LC_ALL=C.UTF-8 ANSIBLE_HOME="$scratch/ansible" ANSIBLE_LOCAL_TEMP="$scratch/ansible/tmp"
export ANSIBLE_NOCOLOR=1 ANSIBLE_RETRY_FILES_ENABLED=0
mkdir -p "$HOME" "$CLAUDE_CONFIG_DIR"

"$MCP_DEPLOY_BIN" sample "$scratch/opt" >/dev/null
ct_sha=c0de7001c0de7001c0de7001c0de7001c0de7001
or_sha=0c4e57a7a0c4e57a7a0c4e57a7a0c4e57a7a0c4e

# Role variables as a JSON extra-vars file: no quoting of paths through the shell.
vars() { # EXPECT_CODETOOLS
  cat <<JSON
{"mcp_deploy_binary": "$MCP_DEPLOY_BIN",
 "mcp_deploy_prefix_root": "$scratch/opt",
 "mcp_deploy_servers": ["codetools", "orchestrata"],
 "mcp_deploy_name_suffix": "-ansible",
 "mcp_deploy_expect_commits": {"codetools": "$1", "orchestrata": "$or_sha"},
 "ansible_python_interpreter": "$(command -v python3)"}
JSON
}
vars "$ct_sha" >"$scratch/vars.json"
vars "$(printf '1%.0s' {1..40})" >"$scratch/wrong.json"

run() { # LOG VARS ARGS...
  local log=$1 varfile=$2
  shift 2
  (cd "$here" && "${playbook[@]}" -i localhost, -c local playbook.yml -e "@$varfile" "$@") \
    >"$scratch/$log.log" 2>&1
}
# The recap line's counter, e.g. `recap changed run1` -> 1.
recap() {
  sed -nE "s/^localhost +:.* $1=([0-9]+).*/\1/p" "$scratch/$2.log"
}
fail() {
  echo "FAIL: $1" >&2
  [ -f "$scratch/$2.log" ] && cat "$scratch/$2.log" >&2
  exit 1
}
registered() {
  python3 -c 'import json,sys; print(" ".join(sorted(json.load(open(sys.argv[1])).get("mcpServers",{}))))' \
    "$CLAUDE_CONFIG_DIR/.claude.json" 2>/dev/null || true
}

run check "$scratch/vars.json" --check || fail "--check run failed" check
[ "$(recap changed check)" = 1 ] || fail "--check should predict changed=1" check
[ -z "$(registered)" ] || fail "--check registered something: $(registered)" check
echo "ok: --check predicts a change and makes none"

run first "$scratch/vars.json" || fail "first run failed" first
[ "$(recap changed first)" = 1 ] || fail "first run should report changed=1" first
[ "$(registered)" = "codetools-ansible orchestrata-ansible" ] ||
  fail "first run registered: $(registered)" first
echo "ok: first run changed, both servers registered"

run second "$scratch/vars.json" -e mcp_deploy_verify=true || fail "second run failed" second
[ "$(recap changed second)" = 0 ] || fail "second run should report changed=0" second
grep -q 'codetools-ansible: commit=True' "$scratch/second.log" ||
  fail "second run did not verify in the play" second
echo "ok: second run unchanged, and verified in the same play"

run verify "$scratch/vars.json" --tags verify || fail "verify play failed" verify
if [ "$(recap failed verify)" != 0 ] || [ "$(recap changed verify)" != 0 ]; then
  fail "verify play should pass without changes" verify
fi
grep -q 'commit=True' "$scratch/verify.log" || fail "verify play shows no commit check" verify
echo "ok: verify play passed"

if run wrong "$scratch/wrong.json" --tags verify; then
  fail "verify play passed with a wrong expected commit" wrong
fi
[ "$(recap failed wrong)" = 1 ] || fail "verify play should fail the host" wrong
grep -q 'codetools-ansible: commit: .*expected 1111111111111111111111111111111111111111' \
  "$scratch/wrong.log" ||
  fail "the failure should show the commit check" wrong
echo "ok: verify play fails on a wrong expected commit"

# The fleet's table at the end of the play (tasks/fleet_report.yml): the host's status --json
# brought to the controller's directory, and `mcp-deploy report` over it shown once.
python3 -c 'import json,sys; v=json.load(open(sys.argv[1])); v.update({"mcp_deploy_fleet_report": True,
"mcp_deploy_fleet_dir": sys.argv[2], "mcp_deploy_report_binary": v["mcp_deploy_binary"]}); print(json.dumps(v))' \
  "$scratch/vars.json" "$scratch/fleet" >"$scratch/fleet.json"
run fleet "$scratch/fleet.json" || fail "fleet report play failed" fleet
[ "$(recap changed fleet)" = 0 ] || fail "the fleet report should change nothing" fleet
grep -q '"host": "'"$(cat /proc/sys/kernel/hostname)"'"' "$scratch/fleet/localhost.json" ||
  fail "the controller has no report of localhost naming its host" fleet
grep -q 'ok: 1 host(s), every check passed' "$scratch/fleet.log" || fail "the play shows no fleet table" fleet
grep -Eq "$(cat /proc/sys/kernel/hostname) +codetools-ansible +claude +c0de7001c0de +c0de7001c0de +ok" "$scratch/fleet.log" ||
  fail "the fleet table has no codetools row for this host" fleet
echo "ok: the play ends with the fleet table, each host's report on the controller"

# Promote and rollback (tasks/promote.yml): a second codetools release, made live and back.
with_vars() { # EXTRA_JSON_MEMBERS
  python3 -c 'import json,sys; v=json.load(open(sys.argv[1])); v.update(json.loads(sys.argv[2]));
print(json.dumps(v))' "$scratch/vars.json" "$1"
}
# The clients' own allowlist (tasks/policy.yml, mcp_deploy_policy): policy --write writes
# /etc/claude-code/managed-settings.json, so these plays run as root only, each inside a private
# mount namespace whose /etc is an overlay with its upper layer in the scratch dir: the host's
# /etc is never written, and every play (and claude) sees what the last one wrote.
policy_tested=false
if [ "$(id -u)" != 0 ]; then
  echo "skip: mcp_deploy_policy writes /etc: it is tested as root only (a private mount namespace)"
else
  policy_tested=true
  mkdir -p "$scratch/etc" "$scratch/etc-work"
  in_private_etc() { # COMMAND...
    # shellcheck disable=SC2016 # the inner shell expands $1 and $2
    unshare --mount -- sh -c 'mount --make-rprivate / && mount -t overlay overlay -o "lowerdir=/etc,upperdir=$1,workdir=$2" /etc && shift 2 && exec "$@"' \
      sh "$scratch/etc" "$scratch/etc-work" "$@"
  }
  run_etc() { # LOG VARS ARGS...
    local log=$1 varfile=$2
    shift 2
    (cd "$here" && in_private_etc "${playbook[@]}" -i localhost, -c local playbook.yml -e "@$varfile" "$@") \
      >"$scratch/$log.log" 2>&1
  }
  # The names the real claude loads, as `claude mcp list` shows them (in the private /etc).
  listed() {
    in_private_etc claude mcp list 2>/dev/null | sed -nE 's/^([^ :]+): .*/\1/p' | sort | tr '\n' ' '
  }
  managed_settings="$scratch/etc/claude-code/managed-settings.json"
  claude mcp add-json -s user handadded '{"command":"/bin/cat","args":[]}' >/dev/null
  case "$(listed)" in *handadded*) ;; *) fail "claude does not list the hand-added server: $(listed)" none ;; esac
  with_vars '{"mcp_deploy_policy": true, "mcp_deploy_policy_become": false}' >"$scratch/policy.json"
  with_vars '{"mcp_deploy_only_deployed": true}' >"$scratch/only.json"
  if run_etc only-fail "$scratch/only.json" --tags verify; then
    fail "verify with mcp_deploy_only_deployed passed beside a hand-added server" only-fail
  fi
  grep -q 'only-deployed: handadded in .*can be loaded' "$scratch/only-fail.log" ||
    fail "the failure should name the hand-added server" only-fail
  echo "ok: without a policy, verify with mcp_deploy_only_deployed fails naming the hand-added server"
  run_etc policy-check "$scratch/policy.json" --check || fail "policy --check play failed" policy-check
  [ "$(recap changed policy-check)" = 1 ] || fail "policy --check should predict changed=1 (the policy)" policy-check
  [ ! -e "$managed_settings" ] || fail "policy --check wrote $managed_settings" policy-check
  echo "ok: policy --check predicts the policy and writes nothing"
  run_etc policy "$scratch/policy.json" || fail "policy play failed" policy
  [ "$(recap changed policy)" = 1 ] || fail "policy play should report changed=1" policy
  grep -q '"allowManagedMcpServersOnly": true' "$managed_settings" || fail "no policy in $managed_settings" policy
  [ "$(listed)" = "codetools-ansible orchestrata-ansible " ] ||
    fail "under the policy claude lists: $(listed)" policy
  echo "ok: policy play wrote the allowlist; claude loads the declared servers, not the hand-added one"
  run_etc only-pass "$scratch/only.json" --tags verify || fail "verify with mcp_deploy_only_deployed failed under the policy" only-pass
  grep -q 'other servers: only-deployed=True' "$scratch/only-pass.log" ||
    fail "the only-deployed check should show as passed" only-pass
  echo "ok: under the policy, verify with mcp_deploy_only_deployed passes"
  run_etc policy-again "$scratch/policy.json" || fail "second policy play failed" policy-again
  [ "$(recap changed policy-again)" = 0 ] || fail "second policy play should report changed=0" policy-again
  echo "ok: second policy play unchanged"
  claude mcp remove -s user handadded >/dev/null
fi

ct="$scratch/opt/codetools"
new_sha=$(printf 'b%.0s' {1..40})
cp -R "$ct/releases/$ct_sha" "$ct/releases/$new_sha"
echo "$new_sha" >"$ct/releases/$new_sha/VERSION"
with_vars "{\"mcp_deploy_promote\": {\"codetools\": \"$new_sha\"}}" >"$scratch/promote.json"
with_vars "{\"mcp_deploy_promote\": {\"codetools\": \"$ct_sha\"}}" >"$scratch/promote-back.json"
with_vars '{"mcp_deploy_rollback": {"codetools": ""}}' >"$scratch/rollback.json"
run promote "$scratch/promote.json" || fail "promote play failed" promote
[ "$(recap changed promote)" = 1 ] || fail "promote play should report changed=1" promote
[ "$(readlink "$ct/current")" = "releases/$new_sha" ] || fail "promote did not switch current" promote
echo "ok: promote play switched current and reported changed"
if [ "$policy_tested" = true ]; then
  # The policy pins the stable <prefix>/bin paths, not releases/<sha>: after the promote claude
  # still admits the declared servers.
  [ "$(listed)" = "codetools-ansible orchestrata-ansible " ] ||
    fail "after the promote, under the policy, claude lists: $(listed)" promote
  echo "ok: after the promote the policy still admits the declared servers"
fi
run promote-again "$scratch/promote.json" || fail "second promote play failed" promote-again
[ "$(recap changed promote-again)" = 0 ] || fail "re-promote should report changed=0" promote-again
echo "ok: re-promote of the live release unchanged"
run promote-check "$scratch/promote-back.json" --check || fail "promote --check failed" promote-check
[ "$(recap changed promote-check)" = 1 ] || fail "promote --check should predict changed=1" promote-check
[ "$(readlink "$ct/current")" = "releases/$new_sha" ] || fail "promote --check switched current" promote-check
echo "ok: promote --check predicts the switch and makes none"
run rollback-check "$scratch/rollback.json" --check || fail "rollback --check failed" rollback-check
[ "$(recap changed rollback-check)" = 1 ] || fail "rollback --check should predict changed=1" rollback-check
[ "$(readlink "$ct/current")" = "releases/$new_sha" ] || fail "rollback --check switched current" rollback-check
echo "ok: rollback --check predicts the switch and makes none"
run rollback "$scratch/rollback.json" || fail "rollback play failed" rollback
[ "$(recap changed rollback)" = 1 ] || fail "rollback play should report changed=1" rollback
[ "$(readlink "$ct/current")" = "releases/$ct_sha" ] || fail "rollback did not switch back" rollback
echo "ok: rollback play switched back to the previous release"
with_vars "{\"mcp_deploy_promote\": {\"codetools\": \"$(printf 'd%.0s' {1..40})\"}}" \
  >"$scratch/promote-missing.json"
if run promote-missing "$scratch/promote-missing.json"; then
  fail "promote of a release that is not there passed" promote-missing
fi
[ "$(recap failed promote-missing)" = 1 ] || fail "promote should fail the host" promote-missing
grep -q 'nothing was switched or registered' "$scratch/promote-missing.log" ||
  fail "the failure should say nothing was switched" promote-missing
[ "$(readlink "$ct/current")" = "releases/$ct_sha" ] || fail "a failed promote switched" promote-missing
echo "ok: promote of a missing release fails the host and switches nothing"

# A trust policy (mcp_deploy_trusted_signers) reaches promote: an unsigned release fails the
# host and switches nothing; signed by the listed builder with the stock ssh-keygen, it goes live.
signed_sha=$(printf 'e%.0s' {1..40})
cp -R "$ct/releases/$ct_sha" "$ct/releases/$signed_sha"
rm -f "$ct/releases/$signed_sha/MANIFEST.sha256" "$ct/releases/$signed_sha/MANIFEST.sha256.sig"
echo "$signed_sha" >"$ct/releases/$signed_sha/VERSION"
"$MCP_DEPLOY_BIN" manifest create "$ct/releases/$signed_sha" >/dev/null
ssh-keygen -q -t ed25519 -N '' -C builder -f "$scratch/builder"
echo "builder@example.org namespaces=\"mcp-deploy\" $(cut -d' ' -f1,2 "$scratch/builder.pub")" \
  >"$scratch/allowed_signers"
with_vars "{\"mcp_deploy_promote\": {\"codetools\": \"$signed_sha\"},
  \"mcp_deploy_trusted_signers\": \"$scratch/allowed_signers\"}" >"$scratch/promote-signed.json"
if run promote-unsigned "$scratch/promote-signed.json"; then
  fail "promote of an unsigned release passed with a trust policy" promote-unsigned
fi
grep -q 'failed: signature: unsigned: no MANIFEST.sha256.sig' "$scratch/promote-unsigned.log" ||
  fail "the failure should name the signature check" promote-unsigned
[ "$(readlink "$ct/current")" = "releases/$ct_sha" ] || fail "an unsigned promote switched" promote-unsigned
ssh-keygen -Y sign -q -f "$scratch/builder" -n mcp-deploy "$ct/releases/$signed_sha/MANIFEST.sha256"
run promote-signed "$scratch/promote-signed.json" || fail "promote of a signed release failed" promote-signed
[ "$(readlink "$ct/current")" = "releases/$signed_sha" ] || fail "a signed promote did not switch" promote-signed
echo "ok: with mcp_deploy_trusted_signers an unsigned release is refused and a signed one goes live"
run promote-unsigned-back "$scratch/promote-back.json" || fail "promote back failed" promote-unsigned-back
[ "$(readlink "$ct/current")" = "releases/$ct_sha" ] || fail "promote back did not switch" promote-unsigned-back

# Shipping mcp-deploy before install (tasks/ship.yml): the Debian package through dpkg (as
# root only: it installs system-wide, and is removed again), then a prebuilt binary.
ship_vars() { # EXTRA_JSON_MEMBERS
  python3 -c 'import json,sys; v=json.load(open(sys.argv[1])); v.pop("mcp_deploy_binary");
v.update(json.loads(sys.argv[2])); print(json.dumps(v))' "$scratch/vars.json" "$1"
}
package_state() {
  dpkg-query --show --showformat='${db:Status-Status} ${Version}' mcp-deploy 2>/dev/null || true
}
if [ "$(id -u)" != 0 ]; then
  echo "skip: shipping the Debian package needs root"
elif [ -n "$(package_state)" ] && [ "$(package_state)" != "not-installed " ]; then
  fail "mcp-deploy is installed already ($(package_state)): remove it to test shipping" none
else
  deb_version=$(dpkg-deb --field "$deb" Version)
  remove_package() {
    if [ "$(package_state)" = "installed $deb_version" ]; then dpkg -r mcp-deploy >/dev/null; fi
  }
  trap 'remove_package; [ "${KEEP:-0}" = 1 ] || rm -rf "$scratch"' EXIT
  # No mcp_deploy_binary: with a package the role runs /usr/bin/mcp-deploy.
  ship_vars "{\"mcp_deploy_package\": \"$deb\", \"mcp_deploy_package_dir\": \"$scratch/cache\",
    \"mcp_deploy_package_become\": false}" >"$scratch/package.json"
  run ship-fresh-check "$scratch/package.json" --check ||
    fail "package play --check before shipping failed" ship-fresh-check
  # The directory, the copy and dpkg -i predicted; install's dry run waits for the binary.
  [ "$(recap changed ship-fresh-check)" = 3 ] ||
    fail "package play --check before shipping should predict changed=3" ship-fresh-check
  [ "$(package_state)" != "installed $deb_version" ] ||
    fail "package play --check installed the package" ship-fresh-check
  echo "ok: package play --check before shipping predicts the change and installs nothing"
  run ship "$scratch/package.json" || fail "package play failed" ship
  # The directory, the copy and dpkg -i; the registrations stand unchanged.
  [ "$(recap changed ship)" = 3 ] || fail "package play should report changed=3" ship
  [ "$(package_state)" = "installed $deb_version" ] ||
    fail "package play left mcp-deploy '$(package_state)', not installed $deb_version" ship
  grep -q 'codetools-ansible: unchanged' "$scratch/ship.log" ||
    fail "install did not run after the package step" ship
  echo "ok: package play installed mcp-deploy $deb_version, then install ran with /usr/bin/mcp-deploy"
  run ship-again "$scratch/package.json" || fail "second package play failed" ship-again
  [ "$(recap changed ship-again)" = 0 ] || fail "second package play should report changed=0" ship-again
  echo "ok: second package play unchanged"
  run ship-check "$scratch/package.json" --check || fail "package play --check failed" ship-check
  [ "$(recap changed ship-check)" = 0 ] || fail "package play --check should predict changed=0" ship-check
  echo "ok: package play --check predicts no change"
  dpkg -r mcp-deploy >/dev/null

  mkdir -p "$scratch/bin"
  ship_vars "{\"mcp_deploy_binary_src\": \"$MCP_DEPLOY_BIN\",
    \"mcp_deploy_binary\": \"$scratch/bin/mcp-deploy\", \"mcp_deploy_package_become\": false}" \
    >"$scratch/binary.json"
  run binary "$scratch/binary.json" || fail "binary play failed" binary
  [ "$(recap changed binary)" = 1 ] || fail "binary play should report changed=1 (the copy)" binary
  cmp -s "$MCP_DEPLOY_BIN" "$scratch/bin/mcp-deploy" || fail "binary play did not copy the binary" binary
  run binary-again "$scratch/binary.json" || fail "second binary play failed" binary-again
  [ "$(recap changed binary-again)" = 0 ] || fail "second binary play should report changed=0" binary-again
  echo "ok: binary play copied the binary, a second one changed nothing"
fi

"$MCP_DEPLOY_BIN" uninstall --prefix "$scratch/opt" --name-suffix -ansible >/dev/null
echo "ansible role test passed"
