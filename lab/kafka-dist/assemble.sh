#!/usr/bin/env bash
# Assemble the kafkaops.mirrormaker lab Kafka archive from Maven Central jars.
#
#   lab/kafka-dist/assemble.sh [--version V] [--out DIR]
#
# Produces <out>/kafka_2.13-<V>.tgz (+ .sha512, + .recipe stamp). Default <out> is
# .cache/kafka at the repository root; default V is kafka.version in pom.xml.
# The launchers (bin/) and configs (config/) are this project's; libs/ holds the
# unmodified Apache Kafka jars and their dependencies as resolved by Maven.
# Environment: MVN (default: mvn), MAVEN_ARGS (extra arguments, e.g. -o or -s settings.xml).
set -euo pipefail
export LC_ALL=C

here=$(cd "$(dirname "$0")" && pwd)
repo_root=$(cd "$here/../.." && pwd)
start=$(date +%s)

version=$(sed -n 's:.*<kafka.version>\(.*\)</kafka.version>.*:\1:p' "$here/pom.xml")
out="$repo_root/.cache/kafka"
scala=2.13

usage() { echo "usage: $0 [--version V] [--out DIR]" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case $1 in
    --version) [ $# -ge 2 ] || usage; version=$2; shift 2 ;;
    --out) [ $# -ge 2 ] || usage; out=$2; shift 2 ;;
    -h | --help) usage ;;
    *) usage ;;
  esac
done

major=${version%%.*}
minor=${version#*.}; minor=${minor%%.*}
case $major in
  4) logging=log4j2 ;;
  3) [ "$minor" -ge 7 ] || { echo "Kafka $version is not supported (need 3.7+ or 4.x)" >&2; exit 2; }
     logging=reload4j ;;
  *) echo "Kafka $version is not supported (need 3.7+ or 4.x)" >&2; exit 2 ;;
esac

name="kafka_${scala}-${version}"
mkdir -p "$out"
out=$(cd "$out" && pwd)
tgz="$out/$name.tgz"
stamp="$out/$name.tgz.recipe"

# Recipe stamp: every input that shapes the archive, plus the version.
recipe=$(
  cd "$here"
  {
    echo "version=$version scala=$scala logging=$logging"
    find pom.xml assemble.sh bin config -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum
  } | sha256sum | cut -d' ' -f1
)
if [ -f "$tgz" ] && [ -f "$tgz.sha512" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$recipe" ]; then
  jars=$(tar -tzf "$tgz" | grep -c "^$name/libs/.*\.jar$" || true)
  echo "up to date: $tgz ($jars jars, $(($(date +%s) - start))s)"
  exit 0
fi

work=$(mktemp -d "$out/.assemble.XXXXXX")
trap 'rm -rf "$work"' EXIT
dist="$work/$name"
mkdir -p "$dist/bin" "$dist/config" "$dist/libs"

# shellcheck disable=SC2086 # MAVEN_ARGS is a word list
"${MVN:-mvn}" -B -q -Dstyle.color=never ${MAVEN_ARGS:-} -f "$here/pom.xml" \
  -Dkafka.version="$version" -Dkafka.logging="$logging" \
  dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$dist/libs" 2>&1 |
  sed 's/\x1b\[[0-9;]*m//g' # Maven 3.8 emits colour resets even with -B -q

[ -f "$dist/libs/$name.jar" ] || { echo "missing $name.jar after resolution" >&2; exit 1; }
if [ "$logging" = log4j2 ]; then
  # Log4j 2 cannot read the YAML configs without jackson-dataformat-yaml.
  ls "$dist"/libs/jackson-dataformat-yaml-*.jar >/dev/null 2>&1 ||
    { echo "jackson-dataformat-yaml is not among the resolved jars" >&2; exit 1; }
fi

cp "$here"/bin/*.sh "$dist/bin/"
cp "$here"/config/*.properties "$dist/config/"
if [ "$logging" = log4j2 ]; then
  cp "$here"/config/*.yaml "$dist/config/"
else
  cp "$here"/config/reload4j/*.properties "$dist/config/"
fi

jar_count=$(find "$dist/libs" -name '*.jar' | wc -l)
{
  cat <<NOTICE
$name - kafkaops.mirrormaker lab archive
========================================

This is NOT an Apache Kafka release. It is assembled by lab/kafka-dist/assemble.sh
of the kafkaops.mirrormaker Ansible collection for its lab and CI, because the
official tarball may not be downloadable where the lab runs.

- bin/ and config/ are written by the kafkaops.mirrormaker project. They keep the
  upstream file names, arguments and environment variables and run the upstream
  main classes, but they are not Apache's scripts or configuration files.
- libs/ holds Apache Kafka's jars and its third-party dependencies exactly as
  published on Maven Central, unmodified. Each jar carries its own licence and
  notice files under META-INF/. Apache Kafka is licensed under the Apache License 2.0.

Logging binding: $logging
Jars ($jar_count):
NOTICE
  (cd "$dist/libs" && printf '  %s\n' *.jar)
} >"$dist/NOTICE-kafkaops.txt"

# Reproducible tarball: fixed order, mtime, owner and modes; gzip without name/time.
find "$dist" -type d -exec chmod 755 {} +
find "$dist" -type f -exec chmod 644 {} +
chmod 755 "$dist"/bin/*.sh
tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner --format=gnu \
  -C "$work" -cf - "$name" | gzip -n -9 >"$work/$name.tgz"
mv -f "$work/$name.tgz" "$tgz"
(cd "$out" && sha512sum "$name.tgz" >"$name.tgz.sha512")
echo "$recipe" >"$stamp"

echo "assembled: $tgz ($jar_count jars, $(du -h "$tgz" | cut -f1), $(($(date +%s) - start))s)"
