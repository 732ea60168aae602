#!/usr/bin/env bash
# Fetch the Prometheus JMX exporter agent (io.prometheus.jmx:jmx_prometheus_javaagent, the
# mirrormaker role's default version) into .cache/jmx-exporter/ through the machine's Maven
# settings (~/.m2/settings.xml, MAVEN_ARGS): the lab installs it from there like an offline site.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo_root=$(cd "$here/../.." && pwd)
out="${1:-$repo_root/.cache/jmx-exporter}"
version=$(sed -n 's/^mirrormaker_jmx_exporter_version: "\(.*\)"$/\1/p' "$repo_root/roles/mirrormaker/defaults/main.yml")
[ -n "$version" ] || { echo "no mirrormaker_jmx_exporter_version in roles/mirrormaker/defaults/main.yml" >&2; exit 2; }
jar="$out/jmx_prometheus_javaagent-$version.jar"
if [ -s "$jar" ]; then echo "up to date: $jar"; exit 0; fi
mkdir -p "$out"
# shellcheck disable=SC2086 # MAVEN_ARGS is a word list
"${MVN:-mvn}" -B -q -Dstyle.color=never ${MAVEN_ARGS:-} dependency:copy \
  -Dartifact="io.prometheus.jmx:jmx_prometheus_javaagent:$version" -DoutputDirectory="$out" \
  -f "$repo_root/lab/spark/pom.xml" 2>&1 | sed 's/\x1b\[[0-9;]*m//g'
[ -s "$jar" ] || { echo "missing $jar after resolution" >&2; exit 1; }
echo "fetched $jar"
