#!/usr/bin/env bash
# What the role's tests share (sourced by test.sh and test-fleet.sh, with $repo set): Ansible,
# the pinned client CLIs and the binary under test.

# Sets `playbook` and `inventory` (the ansible-playbook and ansible-inventory commands, arrays),
# installs the pinned clients when missing and sets MCP_DEPLOY_BIN (built unless given).
ansible_bootstrap() {
  : "${repo:?testlib.sh: set repo to the root of the repository}"
  # ansible-core 2.19 is the newest line that runs on Python 3.11 (2.20 needs 3.12).
  local ansible_version=2.19.14
  if command -v ansible-playbook >/dev/null 2>&1; then
    # shellcheck disable=SC2034 # used by the scripts that source this one
    playbook=(ansible-playbook) inventory=(ansible-inventory)
  else
    python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore \
      "ansible-core==$ansible_version"
    # shellcheck disable=SC2034 # used by the scripts that source this one
    playbook=(python3 -m ansible.cli.playbook) inventory=(python3 -m ansible.cli.inventory)
  fi
  if [ ! -x "$repo/node_modules/.bin/claude" ]; then
    (cd "$repo" && npm ci --no-audit --no-fund)
  fi
  if [ -z "${MCP_DEPLOY_BIN:-}" ]; then
    (cd "$repo" && cargo build --quiet --locked)
    MCP_DEPLOY_BIN="${CARGO_TARGET_DIR:-$repo/target}/debug/mcp-deploy"
  fi
}
