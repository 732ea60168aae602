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


SENT_COLUMNS = ("seq INT, s_partition INT, s_offset BIGINT, s_key BINARY, s_value BINARY, "
                "s_headers ARRAY<STRUCT<key: STRING, value: BINARY>>, s_ts BIGINT")
SPANS_COLUMNS = "span_partition INT, lo BIGINT, hi BIGINT, seen_ms BIGINT"
TARGET_COLUMNS = ("seq INT, t_partition INT, t_offset BIGINT, t_key BINARY, t_value BINARY, "
                  "t_headers ARRAY<STRUCT<key: STRING, value: BINARY>>, t_ts BIGINT, seen_ms BIGINT")


def _literal(value):
    """A Spark SQL literal of a marker's field. Bytes and strings go as hex (X'..'; local_frame's
    CAST makes strings of the STRING columns, UTF-8), so no value needs quoting or escaping, and
    every literal stays foldable, as an inline table requires."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        value = value.encode("utf-8")
    if isinstance(value, (bytes, bytearray)):
        return "X'%s'" % bytes(value).hex()
    if isinstance(value, (list, tuple)) and all(isinstance(v, tuple) and len(v) == 2 for v in value):
        return "array(%s)" % ", ".join("named_struct('key', %s, 'value', %s)" % (_literal(k), _literal(v))
                                       for k, v in value)
    raise TypeError("no SQL literal for %r" % (value,))


def local_frame(spark, rows, columns):
    """A small DataFrame of ``rows`` typed by ``columns`` ("name TYPE, ..."), as an inline SQL table:
    built and read in the JVM, so neither the driver nor the executors start a Python worker (a
    cluster's executors need no Python for it, and a local run saves the worker's start)."""
    specs = [c.strip().split(" ", 1) for c in _split_columns(columns)]
    names = ["c%d" % i for i in range(len(specs))]
    body = ", ".join("(%s)" % ", ".join(_literal(v) for v in row) for row in rows) \
        or "(%s)" % ", ".join("NULL" for _n in names)
    select = ", ".join("CAST(%s AS %s) AS %s" % (n, typ, name) for n, (name, typ) in zip(names, specs))
    where = "" if rows else " WHERE false"
    return spark.sql("SELECT %s FROM VALUES %s AS t(%s)%s" % (select, body, ", ".join(names), where))


def _split_columns(columns):
    """Top-level commas only: STRUCT<a: X, b: Y> keeps its own."""
    out, depth, cur = [], 0, ""
    for ch in columns:
        depth += {"<": 1, ">": -1}.get(ch, 0)
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    return out + [cur]


def compare(spark, bootstrap, props, topic, ranges, spans, sent, run_id):
    """(per-marker rows as dicts, extras as (partition, offset) pairs, extras count).

    ranges: {partition: (start, end)} of the remote topic; spans: [(partition, lo, hi, seen_ms)];
    sent: {seq: {partition, offset, key, value, headers, timestamp}}.
    """
    df = sparkmod.read_range(spark, bootstrap, props, topic, ranges)
    s = local_frame(spark, [(seq, m["partition"], m["offset"], m["key"], m["value"], list(m["headers"]),
                             m["timestamp"]) for seq, m in sorted(sent.items())], SENT_COLUMNS)
    if df is None:
        return _compare_frames(local_frame(spark, [], TARGET_COLUMNS), s)
    from pyspark.sql import functions as F
    # this run's records, each with its seq and the time its offset became readable (spans)
    t = (df.selectExpr("partition AS t_partition", "offset AS t_offset", "key AS t_key", "value AS t_value",
                       "headers AS t_headers", "unix_millis(timestamp) AS t_ts", _header(RUN_HEADER) + " AS run",
                       "try_cast(%s AS INT) AS seq" % _header(SEQ_HEADER))
         .where(F.col("run") == F.lit(run_id)).drop("run"))
    sp = local_frame(spark, spans or [], SPANS_COLUMNS)
    t = (t.join(F.broadcast(sp), (t.t_partition == sp.span_partition) & (t.t_offset >= sp.lo) & (t.t_offset < sp.hi),
                "left")
         .drop("span_partition", "lo", "hi"))
    return _compare_frames(t, s)


def _compare_frames(t, s):
    """compare's answer from the target's records of this run (``t``, TARGET_COLUMNS) and the
    markers sent (``s``, SENT_COLUMNS)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F
    # One Spark action per compare: the records of this run whose seq no marker has (extras) form one
    # more group beside the markers' groups, with a null seq, and come back as one more row.
    known = s.select("seq", F.lit(True).alias("known"))
    t = t.join(F.broadcast(known), "seq", "left")
    first = F.min_by(F.struct("t_partition", "t_offset", "t_key", "t_value", "t_headers", "t_ts", "seen_ms"),
                     F.struct("t_partition", "t_offset"))
    agg = (t.groupBy(F.when(F.col("known"), F.col("seq")).alias("g_seq"))
           .agg(F.count(F.lit(1)).alias("copies"), first.alias("f"),
                F.slice(F.sort_array(F.collect_list(F.struct("t_partition", "t_offset"))), 1,
                        MAX_EXTRAS).alias("copies_at")))
    j = s.join(agg, s.seq == agg.g_seq, "full_outer")
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
    rows, extra_list, extra_count = [], [], 0
    # sorted here, not by Spark: an orderBy is one more job (its range partitioning samples first)
    for row in sorted(out.collect(), key=lambda r: (r["seq"] is not None, r["seq"])):
        row = row.asDict(recursive=True)
        if row["seq"] is not None:
            rows.append(row)
        elif row["copies"]:
            extra_list = [(c["t_partition"], c["t_offset"]) for c in row["copies_at"]]
            extra_count = row["copies"]
    return rows, extra_list, extra_count


def warm_up(spark):
    """Run the compare's own query (_compare_frames) over a few inline rows and load Spark's Kafka
    source, while the markers replicate: a new JVM spends seconds compiling and loading these on
    first use, and the real compare then finds them ready. Not a read of the target: it would hold
    up the report of a cluster that does not answer by Spark's retries (3 x 60 s), and reading the
    target's heartbeats first saved no time (bench/smoke_reconcile). Returns ``spark``."""
    # spark.jars are on Spark's class loader, not the JVM's: its own lookup finds them
    sparkmod.driver_jvm(spark).org.apache.spark.util.Utils.classForName(
        "org.apache.spark.sql.kafka010.KafkaSourceProvider", True, False)
    headers = [(RUN_HEADER, b"r"), (SEQ_HEADER, b"0")]
    s = local_frame(spark, [(seq, 0, seq, b"k", b"v", headers, seq) for seq in range(2)], SENT_COLUMNS)
    t = local_frame(spark, [(seq, 0, seq, b"k", b"v", headers, seq, seq) for seq in (0, 1, 1, 7)], TARGET_COLUMNS)
    _compare_frames(t, s)
    return spark
