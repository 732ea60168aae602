"""Smoke mode's marker comparison, computed by Spark over the remote topic's fixed offset ranges.

The markers this run produced (a few hundred rows) become a small DataFrame; Spark's Kafka source
reads the target's new records between offsets fixed before the read, keeps this run's, and per
marker counts its copies and compares the first copy's partition, key, value, headers and
timestamp with what was sent, checks per-partition order, and derives latency from the time its
offset became readable on the target (``spans``: end offsets polled by the caller).
"""

from . import spark as sparkmod

RUN_HEADER = "mm2-smoke-run"
SEQ_HEADER = "mm2-smoke-seq"
MAX_EXTRAS = 1000


def _header(name):
    # try_element_at: Spark 4 runs ANSI SQL, where [0] on an empty array is an error, not NULL
    return "decode(try_element_at(filter(headers, h -> h.key = '%s'), 1).value, 'UTF-8')" % name


def _schemas():
    from pyspark.sql import types as T
    header = T.StructType([T.StructField("key", T.StringType()), T.StructField("value", T.BinaryType())])
    sent = T.StructType([
        T.StructField("seq", T.IntegerType(), False), T.StructField("s_partition", T.IntegerType()),
        T.StructField("s_offset", T.LongType()), T.StructField("s_key", T.BinaryType()),
        T.StructField("s_value", T.BinaryType()), T.StructField("s_headers", T.ArrayType(header)),
        T.StructField("s_ts", T.LongType())])
    spans = T.StructType([
        T.StructField("span_partition", T.IntegerType()), T.StructField("lo", T.LongType()),
        T.StructField("hi", T.LongType()), T.StructField("seen_ms", T.LongType())])
    return sent, spans


def compare(spark, bootstrap, props, topic, ranges, spans, sent, run_id):
    """(per-marker rows as dicts, extras as (partition, offset) pairs, extras count).

    ranges: {partition: (start, end)} of the remote topic; spans: [(partition, lo, hi, seen_ms)];
    sent: {seq: {partition, offset, key, value, headers, timestamp}}.
    """
    from pyspark.sql import Window
    from pyspark.sql import functions as F
    df = sparkmod.read_range(spark, bootstrap, props, topic, ranges)
    sent_schema, spans_schema = _schemas()
    s = spark.createDataFrame(
        [(seq, m["partition"], m["offset"], m["key"], m["value"], list(m["headers"]),
          m["timestamp"]) for seq, m in sorted(sent.items())], sent_schema)
    if df is None:
        t = spark.createDataFrame([], "seq INT, t_partition INT, t_offset LONG, t_key BINARY, t_value BINARY, "
                                      "t_headers ARRAY<STRUCT<key: STRING, value: BINARY>>, t_ts LONG, "
                                      "seen_ms LONG")
    else:
        t = (df.selectExpr("partition AS t_partition", "offset AS t_offset", "key AS t_key", "value AS t_value",
                           "headers AS t_headers", "unix_millis(timestamp) AS t_ts", _header(RUN_HEADER) + " AS run",
                           "try_cast(%s AS INT) AS seq" % _header(SEQ_HEADER))
             .where(F.col("run") == F.lit(run_id)).drop("run"))
        sp = spark.createDataFrame(spans or [], spans_schema)
        t = (t.join(F.broadcast(sp), (t.t_partition == sp.span_partition) & (t.t_offset >= sp.lo)
                    & (t.t_offset < sp.hi), "left")
             .drop("span_partition", "lo", "hi"))
    t = t.cache()
    extras = t.join(s, "seq", "left_anti")
    extra_rows = extras.orderBy("t_partition", "t_offset").select("t_partition", "t_offset").limit(MAX_EXTRAS)
    extra_list = [(r["t_partition"], r["t_offset"]) for r in extra_rows.collect()]
    extra_count = len(extra_list) if len(extra_list) < MAX_EXTRAS else extras.count()
    first = F.min_by(F.struct("t_partition", "t_offset", "t_key", "t_value", "t_headers", "t_ts", "seen_ms"),
                     F.struct("t_partition", "t_offset"))
    agg = (t.join(s.select("seq"), "seq", "left_semi").groupBy("seq")
           .agg(F.count(F.lit(1)).alias("copies"), first.alias("f"),
                F.sort_array(F.collect_list(F.struct("t_partition", "t_offset"))).alias("copies_at")))
    j = s.join(agg, "seq", "left")
    key_ok = F.col("f.t_key").eqNullSafe(F.col("s_key"))
    value_ok = F.col("f.t_value").eqNullSafe(F.col("s_value"))
    headers_ok = F.col("f.t_headers") == F.col("s_headers")
    got = F.coalesce(F.col("copies"), F.lit(0)) > 0
    previous = F.last(F.when(got, F.struct(F.col("seq"), F.col("f.t_partition").alias("p"),
                                           F.col("f.t_offset").alias("o"))), True).over(
        Window.partitionBy("s_partition").orderBy("s_offset").rowsBetween(Window.unboundedPreceding, -1))
    out = j.select(
        "seq", "s_partition", "s_offset", "s_ts", F.coalesce(F.col("copies"), F.lit(0)).alias("copies"),
        F.col("f.t_partition").alias("t_partition"), F.col("f.t_offset").alias("t_offset"),
        F.col("f.t_ts").alias("t_ts"), key_ok.alias("key_ok"), value_ok.alias("value_ok"),
        headers_ok.alias("headers_ok"), (F.col("f.t_ts") == F.col("s_ts")).alias("ts_ok"),
        (F.col("f.seen_ms") - F.col("s_ts")).alias("latency_ms"),
        F.when(~key_ok, F.col("f.t_key")).alias("t_key"),
        F.when(~value_ok, F.col("f.t_value")).alias("t_value"),
        F.when(~headers_ok, F.col("f.t_headers.key")).alias("t_header_keys"),
        F.col("copies_at"), previous.alias("prev"))
    out = out.withColumn("order_ok", ~F.coalesce(
        (F.col("copies") > 0) & (F.col("prev.p") == F.col("t_partition")) & (F.col("t_offset") < F.col("prev.o")),
        F.lit(False)))
    rows = [row.asDict(recursive=True) for row in out.orderBy("seq").collect()]
    t.unpersist()
    return rows, extra_list, extra_count
