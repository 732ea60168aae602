#!/usr/bin/env bash
# The whole test suite: lint, unit tests, sanity, the built collection installed and converged by
# Molecule on real systemd hosts running real Kafka. Every step runs; the summary counts them.
#   bash scripts/test.sh              everything
#   bash scripts/test.sh lint unit    chosen steps (lint unit sanity build smoke molecule bench;
#                                     beside, hosts, default and dr are molecule's scenarios split as
#                                     the whole run does)
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
bash scripts/bootstrap.sh || { echo "test.sh: bootstrap failed"; exit 2; }
# shellcheck source=scripts/env.sh
. scripts/env.sh

installed="$PWD/.cache/installed-collection"

step_lint() { ansible-lint --profile production; }
step_unit() { pytest -q -p no:cacheprovider tests/unit; }
step_sanity() { bash tests/sanity.sh; }
# Molecule converges the tarball that `ansible-galaxy collection build` makes, installed like a
# user would install it: roles and playbooks resolve by FQCN from that copy, not from the repo.
step_build() {
  rm -rf "$installed" .cache/build && mkdir -p .cache/build &&
    ansible-galaxy collection build --force --output-path .cache/build . &&
    ansible-galaxy collection install --force -p "$installed" .cache/build/kafkaops-mirrormaker-*.tar.gz &&
    ANSIBLE_COLLECTIONS_PATH="$installed" ansible-doc -t role kafkaops.mirrormaker.kafka_broker >/dev/null
}
# The smoke job and the mm2_smoke role against real brokers, real MirrorMaker 2 and real Spark on
# this machine (tests/smoke/harness.py starts them from the lab's Kafka archive).
step_smoke() { pytest -q -p no:cacheprovider -W ignore::DeprecationWarning --durations=8 tests/smoke; }
scenarios() {
  local scenario
  for scenario in "$@"; do
    ANSIBLE_COLLECTIONS_PATH="$installed" molecule test -s "$scenario" || return 1
  done
}
step_molecule() { scenarios default dr kraft secure; }
step_beside() { scenarios secure kraft; }
step_hosts() { scenarios default dr; }
step_default() { scenarios default; }
step_dr() { scenarios dr; }
# Converge time in its quick form (one host, cold and warm; the warm run must change nothing).
# The full form (1, 3 and 6 hosts) is run by hand: bench/converge (bench/README.md).
step_bench() { bench/converge --quick --no-json; }

# One step: its output, then "<step>: ok|FAILED in N s" into $results (one home for the format).
results=$(mktemp -d)
trap 'rm -rf "$results"' EXIT
run_step() {
  local step=$1 t0=$SECONDS result=ok
  echo "=== $step"
  "step_$step" || result=FAILED
  echo "$step: $result in $((SECONDS - t0)) s" > "$results/$step"
}

steps=("$@")
if [ ${#steps[@]} -gt 0 ]; then
  for step in "${steps[@]}"; do run_step "$step"; done
else
  # The whole suite. The smoke step leaves the machine idle much of the time (brokers and MirrorMaker
  # wait on their intervals), so lint, the unit tests, then Molecule's secure and kraft scenarios
  # (containers on networks of their own, no port shared with the smoke tests) run beside build +
  # smoke + sanity + the converge bench; their output follows once both are done, so that each step's
  # lines stay together. The scenarios converge the built tarball: they wait for the build step's
  # result. Then default and dr run side by side: their verify steps mostly wait on MirrorMaker's
  # and Connect's intervals.
  steps=(lint unit beside build smoke sanity bench default dr)
  (
    for step in lint unit; do run_step "$step"; done
    while [ ! -e "$results/build" ]; do sleep 2; done
    run_step beside
  ) > "$results/beside.log" 2>&1 &
  beside=$!
  # sanity and the bench follow the smoke step: the other track (Molecule's secure and kraft) is the longer.
  for step in build smoke sanity bench; do run_step "$step"; done
  wait "$beside" || true
  cat "$results/beside.log"
  run_step dr > "$results/dr.log" 2>&1 &
  dr=$!
  run_step default
  wait "$dr" || true
  cat "$results/dr.log"
fi
passed=0 failed=0
for step in "${steps[@]}"; do
  line=$(cat "$results/$step" 2>/dev/null || echo "$step: FAILED (did not run)")
  echo "$line"
  case $line in *": ok in "*) passed=$((passed + 1)) ;; *) failed=$((failed + 1)) ;; esac
done
echo "test.sh: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
