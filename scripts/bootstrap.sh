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

# Wheels the lab hosts install the smoke job from (they reach no package index): the role's own
# mm2_smoke_pip_packages and their dependencies, at requirements/smoke.txt's versions. PyPI serves
# pyspark as an sdist only, so its wheel is built here once (pip's cache keeps it).
host_pins=$(.venv/bin/python -c 'import sys, yaml; print(" ".join(yaml.safe_load(open(sys.argv[1]))["mm2_smoke_pip_packages"]))' \
  roles/mm2_smoke/defaults/main.yml)
host_stamp="$host_pins $(sha256sum requirements/smoke.txt | cut -d' ' -f1)"
if [ "$(cat .cache/wheels-spark/.pins 2>/dev/null)" != "$host_stamp" ]; then
  rm -rf .cache/wheels .cache/wheels-spark && mkdir -p .cache/wheels-spark
  # shellcheck disable=SC2086 # one pin per word
  .venv/bin/pip wheel --quiet -c requirements/smoke.txt -w .cache/wheels-spark $host_pins
  echo "$host_stamp" > .cache/wheels-spark/.pins
fi

# Jenkins' JUnit schema, which the tests validate the smoke job's JUnit XML against: pytest's
# source distribution carries it (pytest validates its own JUnit XML with it).
if [ ! -s .cache/junit/junit-10.xsd ]; then
  rm -rf .cache/junit && mkdir -p .cache/junit
  pytest_pin=$(grep -E '^pytest==' requirements/dev.txt)
  .venv/bin/pip download --quiet --no-deps --no-binary :all: -d .cache/junit "$pytest_pin"
  tar -xzf .cache/junit/pytest-*.tar.gz -C .cache/junit --strip-components=3 --wildcards '*/testing/example_scripts/junit-10.xsd'
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
# the release the kraft scenario upgrades from, whose own tools a live test runs
bash lab/kafka-dist/assemble.sh --version 3.9.1
bash lab/spark/fetch.sh
bash lab/monitoring/fetch.sh
bash lab/image/build.sh
echo "bootstrap: ready in $((SECONDS - start)) s"
