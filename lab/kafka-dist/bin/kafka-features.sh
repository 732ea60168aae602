#!/usr/bin/env bash
# Written by the kafkaops.mirrormaker project for its lab Kafka archive.
# This is NOT Apache Kafka's script; it keeps the upstream name, arguments and
# environment variables and runs the upstream main class from the Apache jars in libs/.

exec "$(dirname "$0")/kafka-run-class.sh" org.apache.kafka.tools.FeatureCommand "$@"
