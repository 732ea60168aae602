"""Command line: ``python -m mm2_smoke --config FILE [--mode smoke|reconcile] ...``.

Exit codes: 0 every check passed, 1 a check failed, 2 the job could not run (bad config,
unreachable cluster, missing pyspark/jars).
"""

import argparse
import datetime
import os
import sys
import time

from . import EXIT_ERROR, __version__
from . import config as cfgmod
from . import report
from .common import Progress, SparkStarter
from .spark import DRIVER_JIT, DRIVER_JITS, driver_jit_of, spark_session


def parse_args(argv=None):
    ap = argparse.ArgumentParser(prog="mm2_smoke", description="MirrorMaker 2 smoke checks and reconcile audit")
    ap.add_argument("--config", help="JSON config file (smoke/README.md)")
    ap.add_argument("--mode", choices=("smoke", "reconcile"), default="smoke")
    ap.add_argument("--master", default=None,
                    help="Spark master of both modes (default: spark-submit's --master when spark-submit "
                         "started the job, else local[2])")
    ap.add_argument("--jars-dir", default=os.environ.get("MM2_SMOKE_JARS_DIR"),
                    help="directory of spark-sql-kafka-0-10 and its dependencies (default .cache/spark-jars "
                         "of the repository, or $MM2_SMOKE_JARS_DIR)")
    ap.add_argument("--report-dir", default=".", help="where the JSON, PNG, HTML and JUnit XML report goes (default .)")
    ap.add_argument("--run-id", default=None, help="overrides the config's run_id")
    ap.add_argument("--lag", metavar="FILE",
                    help="MirrorMaker 2's replication lag as the mm2_lag_info module read it before the job "
                         "(JSON: lag, flows, measured_at, sources, error), shown in the report as it is")
    ap.add_argument("--driver-jit", choices=DRIVER_JITS, default=None,
                    help="the JIT of the driver JVM this process starts (not spark-submit's): c1 stops at the "
                         "quick compiler (default c1 in smoke mode, full in reconcile mode)")
    ap.add_argument("--quiet", action="store_true", help="no progress lines")
    args = ap.parse_args(argv)
    if args.driver_jit is None:
        args.driver_jit = DRIVER_JIT[args.mode]
    if not args.config:
        ap.error("--config is required")
    return args


def default_jars_dir():
    here = os.path.dirname(os.path.abspath(__file__))
    return os.path.join(os.path.dirname(os.path.dirname(here)), ".cache", "spark-jars")


def start_spark(args, jars_dir, krb5_conf, timing):
    """The session; in smoke mode also warmed up for the marker compare while the markers replicate.
    ``timing`` gets the seconds each took (the report's spark section)."""
    started = time.time()
    session = spark_session(args.master, jars_dir, app="mm2-smoke-" + args.mode, krb5_conf=krb5_conf,
                            driver_jit=args.driver_jit)
    timing["session_s"] = round(time.time() - started, 2)
    if args.mode == "smoke":
        from .markers import warm_up
        started = time.time()
        warm_up(session)
        timing["warm_up_s"] = round(time.time() - started, 2)
    return session


def run(args, progress=None):
    """Run the job; return the report document (written to args.report_dir)."""
    t0 = time.time()
    meta = {"tool": "mm2_smoke", "tool_version": __version__, "mode": args.mode,
            "started": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
            "config_file": os.path.abspath(args.config), "errors": []}
    progress = progress or Progress(quiet=args.quiet)
    checks, latencies = [], {}
    if args.lag:
        meta.update(report.load_lag(args.lag))
    try:
        cfg = cfgmod.load(args.config, args.run_id)
        meta["run_id"] = cfg["run_id"]
        meta["checks_configured"] = list(cfg["checks"]["enabled"]) if args.mode == "smoke" else ["reconcile"]
        meta["flows"] = [{"name": f["name"], "source": f["source"], "target": f["target"],
                          "enabled": f.get("enabled", True)} for f in cfg["flows"]]
        jars_dir = args.jars_dir or default_jars_dir()
        spark_timing = {}
        spark = SparkStarter(lambda: start_spark(args, jars_dir, cfg.get("krb5_conf"), spark_timing))
        if args.mode == "smoke":
            from .smoke import run_smoke
            out = run_smoke(cfg, progress, spark)
        else:
            from .reconcile import run_reconcile
            out = run_reconcile(cfg, progress, spark.get())
        session = spark.started()
        if session is not None:
            meta["spark"] = dict(spark_timing, version=session.version, master=session.sparkContext.master,
                                 jars_dir=jars_dir, driver_jit=driver_jit_of(session))
        checks, latencies = out["checks"], out.get("latencies_ms", {})
        meta["errors"].extend(out.get("errors", []))
        for key in ("discovery", "unmapped_properties", "kerberos"):
            meta[key] = out.get(key)
    except cfgmod.ConfigError as exc:
        meta["errors"].append(str(exc))
    except Exception as exc:  # noqa: BLE001 - could not run: report it, exit 2
        meta["errors"].append("%s: %s" % (type(exc).__name__, exc))
    meta.setdefault("run_id", args.run_id or "unknown")
    meta["finished"] = datetime.datetime.now().astimezone().isoformat(timespec="seconds")
    meta["duration_s"] = round(time.time() - t0, 2)
    doc = report.build(meta, checks, latencies)
    if meta["errors"]:
        report.could_not_run(doc)
    try:
        report.write(doc, args.report_dir)
    except Exception as exc:  # noqa: BLE001 - a report that cannot be written is a job that could not run
        doc["errors"].append("writing the report to %s: %s: %s" % (args.report_dir, type(exc).__name__, exc))
        report.could_not_run(doc)
        doc.setdefault("files", {})
    return doc


def main(argv=None):
    args = parse_args(argv)
    try:
        return report_and_exit(args)
    except Exception as exc:  # noqa: BLE001 - exit 1 means "replication failed", never "the job broke"
        import traceback
        traceback.print_exc()
        print("mm2-smoke %s: ERROR, the job could not run: %s: %s" % (args.mode, type(exc).__name__, exc))
        return EXIT_ERROR


def report_and_exit(args):
    doc = run(args)
    print(report.summary_text(doc))
    files = doc.get("files") or {}
    if files:
        print("report: %s" % ", ".join(files[k] for k in ("json", "png", "html", "junit") if k in files))
    sys.stdout.flush()
    return doc["exit_code"]
