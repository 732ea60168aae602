"""The job's Spark session and Spark's Kafka source options, shared by smoke and reconcile mode."""

import glob
import json
import os


class SparkUnavailable(RuntimeError):
    pass


# python -m mm2_smoke runs Spark inside its own process unless told otherwise.
LOCAL_MASTER = "local[2]"


def submitted():
    """True when spark-submit started this Python. Its JVM came first, with spark-submit's
    --master and --driver-memory: a master set here would silently replace the cluster by a local
    run, and the driver's heap is fixed already. pyspark itself joins that JVM on this variable."""
    return "PYSPARK_GATEWAY_PORT" in os.environ


# A smoke job's driver JVM lives for seconds and reads a few hundred markers: C2, the optimising
# JIT, spends CPU it never earns back, on cores the host's brokers and MirrorMaker want too.
# Reconcile reads whole topics and its record hash wants C2 (bench/README.md, smoke_reconcile).
DRIVER_JITS = ("c1", "full")
DRIVER_JIT = {"smoke": "c1", "reconcile": "full"}
C1_ONLY = "-XX:TieredStopAtLevel=1"


def spark_session(master, jars_dir, app="mm2-smoke-reconcile", krb5_conf=None, driver_jit="full"):
    """The job's session; ``master`` None means spark-submit's --master, else LOCAL_MASTER.
    ``krb5_conf``: the Kerberos configuration of the JVMs' Kafka clients (see use_krb5_conf).
    ``driver_jit``: "c1" or "full" (see java_options)."""
    try:
        from pyspark.sql import SparkSession
    except ImportError as exc:
        raise SparkUnavailable("pyspark is not installed (pip install -r requirements/smoke.txt): %s" % exc)
    jars = sorted(glob.glob(os.path.join(jars_dir, "*.jar"))) if jars_dir else []
    if not any(os.path.basename(j).startswith("spark-sql-kafka-0-10") for j in jars):
        raise SparkUnavailable("no spark-sql-kafka-0-10 jar in %s (run: bash lab/spark/fetch.sh, or --jars-dir)"
                               % jars_dir)
    if master is None and not submitted():
        master = LOCAL_MASTER
    builder = SparkSession.builder.appName(app)
    if master is not None:
        builder = builder.master(master)
    if not submitted():
        builder = builder.config("spark.driver.memory", os.environ.get("MM2_SMOKE_DRIVER_MEMORY", "1g"))
    for key, value in java_options(krb5_conf, driver_jit).items():
        builder = builder.config(key, value)
    builder = (builder.config("spark.jars", ",".join(with_submitted_jars(jars)))
               .config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false")
               .config("spark.sql.shuffle.partitions", "8"))
    try:
        spark = builder.getOrCreate()
    except Exception as exc:  # noqa: BLE001 - Py4J and Spark raise many kinds; all mean no session
        raise SparkUnavailable("Spark master %s: no Spark session: %s" % (master or _submitted_master(), _cause(exc)))
    spark.sparkContext.setLogLevel("WARN")
    if krb5_conf:
        use_krb5_conf(spark, krb5_conf)
    return spark


KRB5_CONF_PROPERTY = "java.security.krb5.conf"


def krb5_java_options(krb5_conf):
    """spark.{driver,executor}.extraJavaOptions with -Djava.security.krb5.conf added to what the
    site (spark-submit --conf, spark-defaults.conf) gave: the JVM reads the file at its first
    Kerberos login, so it is a JVM option, set where each JVM starts. The driver's option only
    counts when this process starts the JVM (python -m); use_krb5_conf covers a JVM that runs already."""
    if not krb5_conf:
        return {}
    given = {}
    if submitted():
        from pyspark import SparkConf, SparkContext
        SparkContext._ensure_initialized()  # pylint: disable=protected-access # SparkConf reads the JVM's only then
        given = dict(SparkConf().getAll())
    option = "-D%s=%s" % (KRB5_CONF_PROPERTY, krb5_conf)
    out = {}
    for key in ("spark.driver.extraJavaOptions", "spark.executor.extraJavaOptions"):
        before = [o for o in given.get(key, "").split() if not o.startswith("-D%s=" % KRB5_CONF_PROPERTY)]
        out[key] = " ".join(before + [option])
    return out


def java_options(krb5_conf, driver_jit):
    """The JVMs' extraJavaOptions: krb5_java_options, and for ``driver_jit`` "c1" the driver's JIT
    stopped at C1. Only where this process starts the driver's JVM: spark-submit's runs already."""
    if driver_jit not in DRIVER_JITS:
        raise ValueError("driver_jit: expected %s, got %r" % (" or ".join(DRIVER_JITS), driver_jit))
    out = krb5_java_options(krb5_conf)
    if driver_jit == "c1" and not submitted():
        key = "spark.driver.extraJavaOptions"
        out[key] = " ".join(o for o in (out.get(key), C1_ONLY) if o)
    return out


def driver_jvm(spark):
    """py4j's view of the driver JVM (pyspark keeps it private; no public handle exists)."""
    return spark.sparkContext._jvm  # pylint: disable=protected-access


def driver_jit_of(spark):
    """The driver JVM's JIT as it runs, read from its arguments: "c1" or "full" (a JVM that was
    started before, spark-submit's or an earlier session's, keeps its own)."""
    arguments = driver_jvm(spark).java.lang.management.ManagementFactory.getRuntimeMXBean().getInputArguments()
    return "c1" if arguments.contains(C1_ONLY) else "full"


def use_krb5_conf(spark, krb5_conf):
    """The driver JVM's krb5.conf, when it started without it: spark-submit's driver (its JVM came
    first) or a session this process made before (the tests' shared one). Set through the gateway
    before Spark's Kafka source first logs in; Java caches the file it read, so a different one read
    earlier is dropped (sun.security.krb5.Config.refresh, which Spark's --add-opens lets us call).
    Executors take -Djava.security.krb5.conf from spark.executor.extraJavaOptions instead."""
    jvm = driver_jvm(spark)
    system = jvm.java.lang.System
    if system.getProperty(KRB5_CONF_PROPERTY) == krb5_conf:
        return
    system.setProperty(KRB5_CONF_PROPERTY, krb5_conf)
    jvm.sun.security.krb5.Config.refresh()


def with_submitted_jars(jars):
    """``jars`` after the ones spark-submit's --jars gave (kept, not replaced: a site may add its own),
    each file name once."""
    given = []
    if submitted():
        from pyspark import SparkConf, SparkContext
        SparkContext._ensure_initialized()  # pylint: disable=protected-access # SparkConf reads the JVM's only then
        given = [j for j in SparkConf().get("spark.jars", "").split(",") if j]
    names = {os.path.basename(j) for j in given}
    return given + [j for j in jars if os.path.basename(j) not in names]


def _submitted_master():
    try:
        from pyspark import SparkConf
        return SparkConf().get("spark.master", "(none given to spark-submit)")
    except Exception:  # noqa: BLE001 - the message is being built for an error already
        return "(spark-submit's --master)"


def _cause(exc):
    """The Java exception's own line, not Py4J's 'An error occurred while calling ...' and its trace."""
    text = "%s: %s" % (type(exc).__name__, exc)
    java = getattr(exc, "java_exception", None)
    if java is not None:
        try:
            text = str(java.toString())
        except Exception:  # noqa: BLE001 - the gateway may be gone with the failed context
            pass
    return (text.strip().splitlines() or [""])[0]


# Spark's Kafka source reads a fixed range to its end: fetches larger than the Java client's 1 MB
# per partition cut its round trips. Not much larger: Spark caches a consumer per partition and
# task slot, each holding a fetch, so 50/100 MB fetches ran a 1 GB driver out of heap after two
# reconciles of 1M x 1 KB (bench/smoke_reconcile), where 8/16 MB read faster and did not.
# A fetch at a partition's end waits fetch.max.wait.ms (500 ms) for records that a fixed range does
# not need: 100 records over 3 partitions took 1.27 s to read and count with it, 0.3 s with 10 ms.
# The cluster's own client properties override them.
READ_DEFAULTS = {"max.partition.fetch.bytes": "8388608", "fetch.max.bytes": "16777216",
                 "max.poll.records": "10000", "receive.buffer.bytes": "4194304", "fetch.max.wait.ms": "10"}


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
