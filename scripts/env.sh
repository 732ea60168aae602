# Sourced by the scripts: the venv, the lab's container settings and the collection path.
# shellcheck shell=bash
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export PATH="$repo/.venv/bin:$PATH"
export CONTAINERS_CONF="$repo/lab/containers.conf"
export ANSIBLE_CONFIG="$repo/ansible.cfg"
export ANSIBLE_FORCE_COLOR="${ANSIBLE_FORCE_COLOR:-0}"
# Wheels (scripts/bootstrap.sh) and Spark's Kafka source jars (lab/spark/fetch.sh) the lab hosts
# install the smoke job from: they reach no package index.
export KAFKAOPS_LAB_SPARK_WHEELS="${KAFKAOPS_LAB_SPARK_WHEELS:-$repo/.cache/wheels-spark}"
export KAFKAOPS_LAB_SPARK_JARS="${KAFKAOPS_LAB_SPARK_JARS:-$repo/.cache/spark-jars}"
# The Prometheus JMX exporter agent jar (lab/monitoring/fetch.sh) the lab installs offline.
export KAFKAOPS_LAB_JMX_EXPORTER_DIR="${KAFKAOPS_LAB_JMX_EXPORTER_DIR:-$repo/.cache/jmx-exporter}"
# The lab's Kafka archive unless the caller points at another (e.g. an Apache release).
export KAFKA_ARCHIVE="${KAFKA_ARCHIVE:-$repo/.cache/kafka/kafka_2.13-$(sed -n "s:.*<kafka.version>\(.*\)</kafka.version>.*:\1:p" "$repo/lab/kafka-dist/pom.xml").tgz}"
# The lab's SSH key and client configuration (scripts/bootstrap.sh, lab/up.yml).
export KAFKAOPS_LAB_SSH_DIR="${KAFKAOPS_LAB_SSH_DIR:-$repo/.cache/lab-ssh}"
# The secured lab's keytabs and admin password on the controller (lab/kdc.yml), one directory per lab.
export KAFKAOPS_LAB_KDC_DIR="${KAFKAOPS_LAB_KDC_DIR:-$repo/.cache/lab-kdc}"
