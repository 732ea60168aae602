#!/usr/bin/env bash
# Written by the kafkaops.mirrormaker project for its lab Kafka archive.
# This is NOT Apache Kafka's script; it keeps the upstream name, arguments and
# environment variables and runs the upstream main class from the Apache jars in libs/.

main=org.apache.kafka.tools.AclCommand
# Kafka 3.x archives keep this tool in the Scala core jar.
for jar in "$(dirname "$0")"/../libs/kafka_2.1[23]-3.*.jar; do
  [ -e "$jar" ] && main=kafka.admin.AclCommand
  break
done
exec "$(dirname "$0")/kafka-run-class.sh" "$main" "$@"
