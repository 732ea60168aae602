# Sourced by the scripts: the venv, the lab's container settings and the collection path.
# shellcheck shell=bash
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export PATH="$repo/.venv/bin:$PATH"
export CONTAINERS_CONF="$repo/lab/containers.conf"
export ANSIBLE_CONFIG="$repo/ansible.cfg"
export ANSIBLE_FORCE_COLOR="${ANSIBLE_FORCE_COLOR:-0}"
