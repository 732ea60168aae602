#!/usr/bin/env bash
# Fetch Spark's Kafka source (spark-sql-kafka-0-10_2.13 for the installed pyspark) and its runtime
# dependencies into .cache/spark-jars/ for the smoke job's reconcile mode (smoke/README.md).
#
#   bash lab/spark/fetch.sh [--spark-version V] [--out DIR]
#
# V defaults to the installed pyspark's version (PYTHON, default .venv/bin/python or python3).
# Jars that pyspark already ships (same artifact, any version) are dropped.  Resolution uses the
# machine's Maven settings (~/.m2/settings.xml, MAVEN_ARGS e.g. "-s settings.xml" or "-o").
# Cached: a run with the same inputs finds .recipe up to date and does nothing.
set -euo pipefail
export LC_ALL=C

here=$(cd "$(dirname "$0")" && pwd)
repo_root=$(cd "$here/../.." && pwd)
start=$(date +%s)
out="$repo_root/.cache/spark-jars"
version=""
if [ -z "${PYTHON:-}" ]; then
  if [ -x "$repo_root/.venv/bin/python" ]; then PYTHON="$repo_root/.venv/bin/python"; else PYTHON=python3; fi
fi

usage() { echo "usage: $0 [--spark-version V] [--out DIR]" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case $1 in
    --spark-version) [ $# -ge 2 ] || usage; version=$2; shift 2 ;;
    --out) [ $# -ge 2 ] || usage; out=$2; shift 2 ;;
    -h | --help) usage ;;
    *) usage ;;
  esac
done

pyspark_jars=$("$PYTHON" -c 'import os, pyspark; print(os.path.join(os.path.dirname(pyspark.__file__), "jars"))' 2>/dev/null || true)
if [ -z "$version" ]; then
  version=$("$PYTHON" -c 'import pyspark; print(pyspark.__version__)' 2>/dev/null) ||
    { echo "pyspark is not installed for $PYTHON; pip install -r requirements/smoke.txt or pass --spark-version" >&2; exit 2; }
fi
[ -n "$pyspark_jars" ] && [ -d "$pyspark_jars" ] || pyspark_jars=""

mkdir -p "$out"
out=$(cd "$out" && pwd)
stamp="$out/.recipe"
recipe=$(
  {
    echo "spark=$version pyspark_jars=$pyspark_jars"
    [ -z "$pyspark_jars" ] || ls "$pyspark_jars"
    sha256sum "$here/pom.xml" "$here/fetch.sh"
  } | sha256sum | cut -d' ' -f1
)
main_jar="spark-sql-kafka-0-10_2.13-$version.jar"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$recipe" ] && [ -f "$out/$main_jar" ]; then
  echo "up to date: $out ($(find "$out" -name '*.jar' | wc -l) jars, Spark $version, $(($(date +%s) - start))s)"
  exit 0
fi

work=$(mktemp -d "$out/.fetch.XXXXXX")
trap 'rm -rf "$work"' EXIT
# shellcheck disable=SC2086 # MAVEN_ARGS is a word list
"${MVN:-mvn}" -B -q -Dstyle.color=never ${MAVEN_ARGS:-} -f "$here/pom.xml" -Dspark.version="$version" \
  dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$work" 2>&1 |
  sed 's/\x1b\[[0-9;]*m//g'
[ -f "$work/$main_jar" ] || { echo "missing $main_jar after resolution" >&2; exit 1; }

# artifact name of a jar file: strip "-<version>.jar" (version = first '-' followed by a digit)
artifact() { basename "$1" .jar | sed -E 's/-[0-9][^-]*(-.*)?$//'; }
dropped=()
if [ -n "$pyspark_jars" ]; then
  declare -A shipped=()
  for jar in "$pyspark_jars"/*.jar; do shipped[$(artifact "$jar")]=1; done
  for jar in "$work"/*.jar; do
    if [ -n "${shipped[$(artifact "$jar")]:-}" ]; then dropped+=("$(basename "$jar")"); rm -f "$jar"; fi
  done
fi

find "$out" -maxdepth 1 -name '*.jar' -delete
mv "$work"/*.jar "$out/"
find "$out" -maxdepth 1 -name "*.jar" -printf "%f\n" | sort > "$out/jars.txt"
echo "$recipe" > "$stamp"
echo "fetched into $out: $(tr '\n' ' ' < "$out/jars.txt")"
[ ${#dropped[@]} -eq 0 ] || echo "already in pyspark's jars (not copied): ${dropped[*]}"
echo "Spark $version, $(($(date +%s) - start))s"
