#!/usr/bin/env bash
# The smoke tests RUNS times in a row (default 3) in a fresh clone of this repository's HEAD while a
# CPU-bound process keeps one of the machine's cores busy: a datacenter host is busy too, and the
# tests must wait for readiness rather than assume it. Exits non-zero when any run fails.
#   bash tests/smoke/under-load.sh [RUNS]
# The clone's bootstrap reuses this machine's pip, Maven and image caches; its log and each run's
# output go to $WORK (default a new directory under /tmp).
set -euo pipefail
runs=${1:-3}
repo=$(cd "$(dirname "$0")/../.." && pwd)
work=${WORK:-$(mktemp -d /tmp/kafkaops-under-load.XXXXXX)}
clone="$work/clone"
git clone -q "$repo" "$clone"
echo "under-load: fresh clone of $(git -C "$clone" rev-parse --short HEAD) in $clone"
bash "$clone/scripts/bootstrap.sh" > "$work/bootstrap.log" 2>&1 || { tail -30 "$work/bootstrap.log"; exit 2; }

# The load: a busy loop, bounded in time so that it ends even if this script is killed.
timeout 3h python3 -c 'while True: pass' &
hog=$!
trap 'kill $hog 2>/dev/null || true' EXIT

failed=0
for i in $(seq 1 "$runs"); do
  t0=$SECONDS
  if (cd "$clone" && bash scripts/test.sh smoke) > "$work/run-$i.log" 2>&1; then result=passed; else result=FAILED; failed=1; fi
  echo "under-load: run $i of $runs $result in $((SECONDS - t0)) s: $(grep -E '[0-9]+ (passed|failed).* in [0-9.]+s' "$work/run-$i.log" | tail -1)"
done
echo "under-load: logs in $work"
exit $failed
