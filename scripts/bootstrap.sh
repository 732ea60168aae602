#!/usr/bin/env bash
# Installs what a fresh machine lacks for the lab and the tests; every step skips itself when done.
#   Debian packages (podman, runc, debootstrap, ...), a Python venv from pinned requirements,
#   the collection symlink, the lab's Kafka archive (Apache jars through Maven), Spark's Kafka
#   source jars for the smoke job (Maven) and the lab image.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS

bash lab/host-setup.sh

# dev: Ansible, Molecule, linters, test tools; smoke: the smoke job's pyspark (a large download),
# kept apart so that users of the collection alone need not install it.
stamp=.venv/.requirements.sha256
want=$(cat requirements/dev.txt requirements/smoke.txt | sha256sum | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  echo "bootstrap: installing requirements/dev.txt and requirements/smoke.txt into .venv (a few minutes the first time)"
  python3 -m venv .venv
  # One line per package instead of minutes of silence; pipefail keeps pip's exit status.
  .venv/bin/pip install --progress-bar off -r requirements/dev.txt -r requirements/smoke.txt \
    | { grep --line-buffered -E '^(Collecting|Building wheel|Successfully|ERROR)' || true; }
  echo "$want" > "$stamp"
fi

# Wheels the lab hosts install the smoke job's client from (they reach no package index).
wheels=$(grep -E '^(kafka-python|lz4|zstandard)==' requirements/smoke.txt)
if [ "$(cat .cache/wheels/.pins 2>/dev/null)" != "$wheels" ]; then
  rm -rf .cache/wheels
  # shellcheck disable=SC2086 # one pin per word
  .venv/bin/pip download --quiet --no-deps --only-binary=:all: -d .cache/wheels $wheels
  echo "$wheels" > .cache/wheels/.pins
fi

# The same plus pyspark for lab hosts that run reconcile (molecule/kraft). PyPI serves pyspark as
# an sdist only, so its wheel is built here once (pip's cache keeps it).
spark_pins=$(grep -E '^(pyspark|py4j)==' requirements/smoke.txt)
if [ "$(cat .cache/wheels-spark/.pins 2>/dev/null)" != "$spark_pins$wheels" ]; then
  rm -rf .cache/wheels-spark && mkdir -p .cache/wheels-spark
  # shellcheck disable=SC2086 # one pin per word
  .venv/bin/pip wheel --quiet --no-deps -w .cache/wheels-spark $spark_pins
  cp .cache/wheels/*.whl .cache/wheels-spark/
  echo "$spark_pins$wheels" > .cache/wheels-spark/.pins
fi

# The repository is the collection; Ansible finds it by FQCN through this link.
mkdir -p .collections/ansible_collections/kafkaops
ln -sfn ../../.. .collections/ansible_collections/kafkaops/mirrormaker

# The key Ansible and Molecule log in to the lab hosts with (lab/tasks/containers.yml mounts the
# public half into every lab container).
if [ ! -f .cache/lab-ssh/id_ed25519 ]; then
  mkdir -p .cache/lab-ssh && chmod 0700 .cache/lab-ssh
  ssh-keygen -q -t ed25519 -N '' -C kafkaops-lab -f .cache/lab-ssh/id_ed25519
fi

export CONTAINERS_CONF="$PWD/lab/containers.conf"
bash lab/kafka-dist/assemble.sh
bash lab/spark/fetch.sh
bash lab/image/build.sh
echo "bootstrap: ready in $((SECONDS - start)) s"
