"""The job's Spark session and Spark's Kafka source options, shared by smoke and reconcile mode."""

import glob
import json
import os


class SparkUnavailable(RuntimeError):
    pass


def spark_session(master, jars_dir, app="mm2-smoke-reconcile"):
    try:
        from pyspark.sql import SparkSession
    except ImportError as exc:
        raise SparkUnavailable("pyspark is not installed (pip install -r requirements/smoke.txt): %s" % exc)
    jars = sorted(glob.glob(os.path.join(jars_dir, "*.jar"))) if jars_dir else []
    if not any(os.path.basename(j).startswith("spark-sql-kafka-0-10") for j in jars):
        raise SparkUnavailable("no spark-sql-kafka-0-10 jar in %s (run: bash lab/spark/fetch.sh, or --jars-dir)"
                               % jars_dir)
    builder = (SparkSession.builder.master(master).appName(app)
               .config("spark.jars", ",".join(jars))
               .config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false")
               .config("spark.sql.shuffle.partitions", "8")
               .config("spark.driver.memory", os.environ.get("MM2_SMOKE_DRIVER_MEMORY", "1g")))
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    return spark


# Spark's Kafka source reads a fixed range to its end: fetches far larger than the Java client's
# 1 MB per partition cut its round trips (bench/smoke_reconcile: about 40% less read time on
# 1 KB records). The cluster's own client properties override them.
READ_DEFAULTS = {"max.partition.fetch.bytes": "52428800", "fetch.max.bytes": "104857600",
                 "max.poll.records": "10000", "receive.buffer.bytes": "4194304"}


def kafka_options(bootstrap, props):
    opts = {"kafka.bootstrap.servers": bootstrap}
    for key, value in dict(READ_DEFAULTS, **(props or {})).items():
        opts["kafka." + key] = str(value)
    return opts


def read_range(spark, bootstrap, props, topic, ranges):
    """Batch DataFrame of Spark's Kafka source over fixed offsets {partition: (start, end)} (None
    when every range is empty): the offsets are chosen before Spark reads, so what is read is exact."""
    parts = sorted(p for p, (lo, hi) in ranges.items() if hi > lo)
    if not parts:
        return None
    reader = spark.read.format("kafka")
    for key, value in kafka_options(bootstrap, props).items():
        reader = reader.option(key, value)
    return (reader.option("assign", json.dumps({topic: parts}))
            .option("startingOffsets", json.dumps({topic: {str(p): ranges[p][0] for p in parts}}))
            .option("endingOffsets", json.dumps({topic: {str(p): ranges[p][1] for p in parts}}))
            .option("includeHeaders", "true")
            .option("failOnDataLoss", "false")
            .load())
