#!/usr/bin/env bash
# Written by the kafkaops.mirrormaker project for its lab Kafka archive.
# This is NOT Apache Kafka's script; it keeps the upstream name, arguments and
# environment variables and runs the upstream main class from the Apache jars in libs/.

if [ -z "$KAFKA_HEAP_OPTS" ]; then
  export KAFKA_HEAP_OPTS="-Xmx512M"
fi

exec "$(dirname "$0")/kafka-run-class.sh" org.apache.kafka.tools.consumer.ConsoleConsumer "$@"
