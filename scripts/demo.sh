#!/usr/bin/env bash
# The local demo: systemd hosts as podman containers, converged by playbooks/site.yml.
#   bash scripts/demo.sh          start (or re-converge) the lab
#   bash scripts/demo.sh down     remove it
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
# shellcheck source=scripts/env.sh
. scripts/env.sh
inventory=inventories/lab/hosts.yml
if [ "${1:-up}" = down ]; then
  exec ansible-playbook -i "$inventory" lab/down.yml
fi
start=$SECONDS
ansible-playbook -i "$inventory" lab/up.yml
ansible-playbook -i "$inventory" playbooks/site.yml
echo "demo: lab converged in $((SECONDS - start)) s; 'bash scripts/demo.sh down' removes it"
