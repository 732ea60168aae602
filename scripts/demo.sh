#!/usr/bin/env bash
# The local demo: systemd hosts as podman containers, converged by playbooks/site.yml, then
# replication proven by the smoke job on Spark and audited by its reconcile mode
# (playbooks/smoke.yml, on the first MirrorMaker host; reports in ./mm2-smoke-reports), with the
# lab's Prometheus scraping MM2 and the status table of playbooks/status.yml (./mm2-status).
#   bash scripts/demo.sh          start (or re-converge) the lab and run the smoke job
#   bash scripts/demo.sh secure   the same on the secured lab (inventories/lab_secure): a KDC host,
#                                 Kerberos and SCRAM, StandardAuthorizer, MM2 with derived ACLs only
#   bash scripts/demo.sh down     remove it (either)
# The two labs replace each other: each one's lab/up.yml removes the other's containers.
set -euo pipefail
cd "$(dirname "$0")/.."
begin=$SECONDS
bash scripts/bootstrap.sh
# shellcheck source=scripts/env.sh
. scripts/env.sh
inventory=inventories/lab/hosts.yml
case "${1:-up}" in
  down) exec ansible-playbook -i "$inventory" lab/down.yml ;;
  secure) inventory=inventories/lab_secure/hosts.yml ;;
  up) ;;
  *) echo "usage: bash scripts/demo.sh [up|secure|down]" >&2; exit 2 ;;
esac
start=$SECONDS
ansible-playbook -i "$inventory" lab/up.yml
if [ "$inventory" = inventories/lab_secure/hosts.yml ]; then
  ansible-playbook -i "$inventory" lab/secure.yml
fi
ansible-playbook -i "$inventory" playbooks/site.yml
ansible-playbook -i "$inventory" lab/monitoring.yml
echo "demo: lab converged in $((SECONDS - start)) s"
smoke=$SECONDS
ansible-playbook -i "$inventory" playbooks/smoke.yml
echo "demo: smoke job on Spark in $((SECONDS - smoke)) s"
reconcile=$SECONDS
ansible-playbook -i "$inventory" playbooks/smoke.yml -e mm2_smoke_mode=reconcile
echo "demo: reconcile on Spark in $((SECONDS - reconcile)) s"
# The lab's Prometheus listens in its container: the range queries go from its host (over SSH).
# The secured lab has no Prometheus: its charts over time are reported as not available.
status_args=()
if [ "$inventory" = inventories/lab/hosts.yml ]; then
  status_args=(-e mm2_status_prometheus_url=http://127.0.0.1:9090 -e mm2_status_prometheus_via=monitor-1)
fi
ansible-playbook -i "$inventory" playbooks/status.yml "${status_args[@]}"
prometheus=$(awk '$1 == "Host" { h = $2 } $1 == "HostName" && h == "monitor-1" { print $2 }' "$KAFKAOPS_LAB_SSH_DIR/config")
if [ -n "$prometheus" ]; then
  echo "demo: Prometheus scrapes MirrorMaker 2 at http://$prometheus:9090/classic/targets"
fi
echo "demo: status in $PWD/mm2-status (mm2-status.html, .png, .json)"
echo "demo: converged and replication proven in $((SECONDS - start)) s; reports in $PWD/mm2-smoke-reports;" \
  "'bash scripts/demo.sh down' removes the lab"
echo "demo: $((SECONDS - begin)) s in all, bootstrap included ($((start - begin)) s of it)"
