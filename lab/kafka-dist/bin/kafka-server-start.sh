#!/usr/bin/env bash
# Written by the kafkaops.mirrormaker project for its lab Kafka archive.
# This is NOT Apache Kafka's script; it keeps the upstream name, arguments and
# environment variables and runs the upstream main class from the Apache jars in libs/.

if [ $# -lt 1 ]; then
  echo "USAGE: $0 [-daemon] server.properties [--override property=value]*"
  exit 1
fi

base_dir=$(dirname "$0")

if [ -z "$KAFKA_LOG4J_OPTS" ]; then
  if [ -f "$base_dir/../config/log4j2.yaml" ]; then
    export KAFKA_LOG4J_OPTS="-Dlog4j2.configurationFile=$base_dir/../config/log4j2.yaml"
  else
    # Kafka 3.x (reload4j) archive
    export KAFKA_LOG4J_OPTS="-Dlog4j.configuration=file:$base_dir/../config/log4j.properties"
  fi
fi

if [ -z "$KAFKA_HEAP_OPTS" ]; then
  export KAFKA_HEAP_OPTS="-Xmx1G -Xms1G"
fi

EXTRA_ARGS=${EXTRA_ARGS-'-name kafkaServer -loggc'}

COMMAND=$1
case $COMMAND in
  -daemon)
    EXTRA_ARGS="-daemon $EXTRA_ARGS"
    shift
    ;;
  *) ;;
esac

# shellcheck disable=SC2086 # EXTRA_ARGS is a word list, as upstream
exec "$base_dir/kafka-run-class.sh" $EXTRA_ARGS kafka.Kafka "$@"
