#!/usr/bin/env bash
# Any steps of scripts/test.sh (default: the gate, as CI runs it) RUNS times in a row while a
# CPU-bound process keeps one of the machine's two cores busy: a loaded CI runner or datacenter
# host is busy too, and the tests must wait on conditions rather than on the machine's speed.
#   bash scripts/under-load.sh [--runs N] [--here] [STEP ...]
#     --runs N   how many runs in a row (default 1); exits non-zero when any fails
#     --here     run in this work tree instead of a fresh clone of its HEAD
#     STEP       test.sh steps: live, dr, default, hosts, secure, extended, ... (the head of scripts/test.sh)
# A fresh clone's bootstrap reuses this machine's pip, Maven and image caches. Its log, each run's
# output and the artifacts of failed verify steps (.cache/artifacts: MirrorMaker's, Connect's and
# the brokers' own logs) go to $WORK (default a new directory under /tmp).
set -euo pipefail
runs=1 here=false
while [ $# -gt 0 ]; do
  case $1 in
    --runs) runs=$2; shift 2 ;;
    --here) here=true; shift ;;
    *) break ;;
  esac
done
repo=$(cd "$(dirname "$0")/.." && pwd)
work=${WORK:-$(mktemp -d /tmp/kafkaops-under-load.XXXXXX)}
mkdir -p "$work"
if $here; then
  tree=$repo
else
  tree="$work/clone"
  git clone -q "$repo" "$tree"
  echo "under-load: fresh clone of $(git -C "$tree" rev-parse --short HEAD) in $tree"
  bash "$tree/scripts/bootstrap.sh" > "$work/bootstrap.log" 2>&1 || { tail -30 "$work/bootstrap.log"; exit 2; }
fi

# The load: a busy loop, bounded in time so that it ends even if this script is killed.
timeout 3h python3 -c 'while True: pass' &
hog=$!
trap 'kill $hog 2>/dev/null || true' EXIT

failed=0
for i in $(seq 1 "$runs"); do
  t0=$SECONDS
  log="$work/run-$i.log"
  if (cd "$tree" && KAFKAOPS_ARTIFACTS_DIR="$work/artifacts-$i" bash scripts/test.sh "$@") > "$log" 2>&1; then
    result=passed
  else
    result=FAILED failed=1
  fi
  echo "under-load: run $i of $runs $result in $((SECONDS - t0)) s: $(grep -E '^test.sh: ' "$log" | tail -1)"
done
echo "under-load: logs in $work"
exit $failed
