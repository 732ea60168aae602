#!/usr/bin/env bash
# Written by the kafkaops.mirrormaker project for its lab Kafka archive.
# This is NOT Apache Kafka's script: it mirrors the calling conventions and
# environment variables of upstream bin/kafka-run-class.sh so the collection's
# roles can drive the lab archive exactly like a real Apache tarball.
#
# Honoured: JAVA_HOME, CLASSPATH, KAFKA_HEAP_OPTS, KAFKA_JVM_PERFORMANCE_OPTS,
# KAFKA_GC_LOG_OPTS, KAFKA_JMX_OPTS, JMX_PORT, KAFKA_OPTS, KAFKA_LOG4J_OPTS,
# LOG_DIR, KAFKA_DEBUG/JAVA_DEBUG_PORT/JAVA_DEBUG_OPTS/DEBUG_SUSPEND_FLAG,
# and the -daemon / -name NAME / -loggc flags before the class name.
#
# The *_OPTS variables are deliberately expanded unquoted (word-split), as upstream does.
# shellcheck disable=SC2086

if [ $# -lt 1 ]; then
  echo "USAGE: $0 [-daemon] [-name servicename] [-loggc] classname [opts]"
  exit 1
fi

base_dir=$(dirname "$0")/..

# Classpath: caller's CLASSPATH first, then every jar under libs/ (sorted by the glob).
shopt -s nullglob
for file in "$base_dir"/libs/*.jar; do
  CLASSPATH="$CLASSPATH:$file"
done
shopt -u nullglob
CLASSPATH=${CLASSPATH#:}

# JMX settings
if [ -z "$KAFKA_JMX_OPTS" ]; then
  KAFKA_JMX_OPTS="-Dcom.sun.management.jmxremote -Dcom.sun.management.jmxremote.authenticate=false  -Dcom.sun.management.jmxremote.ssl=false "
fi

# JMX port to use
if [ -n "$JMX_PORT" ]; then
  KAFKA_JMX_OPTS="$KAFKA_JMX_OPTS -Dcom.sun.management.jmxremote.port=$JMX_PORT "
  if ! echo "$KAFKA_JMX_OPTS" | grep -qF -- '-Dcom.sun.management.jmxremote.rmi.port='; then
    # If unset, set the RMI port to address issues with monitoring Kafka running in containers
    KAFKA_JMX_OPTS="$KAFKA_JMX_OPTS -Dcom.sun.management.jmxremote.rmi.port=$JMX_PORT"
  fi
fi

# Log directory to use
if [ -z "$LOG_DIR" ]; then
  LOG_DIR="$base_dir/logs"
fi

# Log4j settings: tools log to the console. Kafka 4.x archives ship Log4j 2 YAML,
# Kafka 3.x archives (reload4j) ship log4j 1 .properties files.
if [ -z "$KAFKA_LOG4J_OPTS" ]; then
  if [ -f "$base_dir/config/tools-log4j2.yaml" ]; then
    KAFKA_LOG4J_OPTS="-Dlog4j2.configurationFile=$base_dir/config/tools-log4j2.yaml"
  else
    KAFKA_LOG4J_OPTS="-Dlog4j.configuration=file:$base_dir/config/tools-log4j.properties"
  fi
elif [ -f "$base_dir/config/tools-log4j2.yaml" ] &&
  echo "$KAFKA_LOG4J_OPTS" | grep -E 'log4j\.[^[:space:]]+(\.properties|\.xml)$' >/dev/null; then
  # Same as upstream 4.x: a log4j 1.x file under Log4j 2 needs the compatibility mode.
  export LOG4J_COMPATIBILITY=true
  echo "DEPRECATED: A Log4j 1.x configuration file has been detected, which is no longer recommended." >&2
fi

# create logs directory
if [ ! -d "$LOG_DIR" ]; then
  mkdir -p "$LOG_DIR"
fi

KAFKA_LOG4J_CMD_OPTS="-Dkafka.logs.dir=$LOG_DIR $KAFKA_LOG4J_OPTS"

# Set Debug options if enabled
if [ -n "$KAFKA_DEBUG" ]; then
  if [ -z "$JAVA_DEBUG_PORT" ]; then
    JAVA_DEBUG_PORT="5005"
  fi
  if [ -z "$JAVA_DEBUG_OPTS" ]; then
    JAVA_DEBUG_OPTS="-agentlib:jdwp=transport=dt_socket,server=y,suspend=${DEBUG_SUSPEND_FLAG:-n},address=$JAVA_DEBUG_PORT"
  fi
  echo "Enabling Java debug options: $JAVA_DEBUG_OPTS"
  KAFKA_OPTS="$JAVA_DEBUG_OPTS $KAFKA_OPTS"
fi

# Which java to use
if [ -z "$JAVA_HOME" ]; then
  JAVA="java"
else
  JAVA="$JAVA_HOME/bin/java"
fi

# Memory options
if [ -z "$KAFKA_HEAP_OPTS" ]; then
  KAFKA_HEAP_OPTS="-Xmx256M"
fi

# JVM performance options
if [ -z "$KAFKA_JVM_PERFORMANCE_OPTS" ]; then
  KAFKA_JVM_PERFORMANCE_OPTS="-server -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:InitiatingHeapOccupancyPercent=35 -XX:+ExplicitGCInvokesConcurrent -XX:MaxInlineLevel=15 -Djava.awt.headless=true"
fi

DAEMON_NAME=""
DAEMON_MODE=""
GC_LOG_ENABLED=""
while [ $# -gt 0 ]; do
  case $1 in
    -name)
      DAEMON_NAME=$2
      CONSOLE_OUTPUT_FILE=$LOG_DIR/$DAEMON_NAME.out
      shift 2
      ;;
    -loggc)
      if [ -z "$KAFKA_GC_LOG_OPTS" ]; then
        GC_LOG_ENABLED="true"
      fi
      shift
      ;;
    -daemon)
      DAEMON_MODE="true"
      shift
      ;;
    *)
      break
      ;;
  esac
done

# GC options (JDK 9+ unified logging; the collection requires Java 11+)
if [ "$GC_LOG_ENABLED" = "true" ]; then
  GC_LOG_FILE_NAME=${DAEMON_NAME}-gc.log
  KAFKA_GC_LOG_OPTS="-Xlog:gc*:file=$LOG_DIR/$GC_LOG_FILE_NAME:time,tags:filecount=10,filesize=100M"
fi

# Launch mode
if [ "$DAEMON_MODE" = "true" ]; then
  CONSOLE_OUTPUT_FILE=${CONSOLE_OUTPUT_FILE:-$LOG_DIR/kafka.out}
  nohup "$JAVA" $KAFKA_HEAP_OPTS $KAFKA_JVM_PERFORMANCE_OPTS $KAFKA_GC_LOG_OPTS $KAFKA_JMX_OPTS $KAFKA_LOG4J_CMD_OPTS -cp "$CLASSPATH" $KAFKA_OPTS "$@" >"$CONSOLE_OUTPUT_FILE" 2>&1 </dev/null &
else
  exec "$JAVA" $KAFKA_HEAP_OPTS $KAFKA_JVM_PERFORMANCE_OPTS $KAFKA_GC_LOG_OPTS $KAFKA_JMX_OPTS $KAFKA_LOG4J_CMD_OPTS -cp "$CLASSPATH" $KAFKA_OPTS "$@"
fi
