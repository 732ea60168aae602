"""Unit tests of the smoke job's pure functions (no Kafka, no Spark); conftest.py makes mm2_smoke
(smoke/mm2_smoke) and tests/lib importable."""

import json
import os
import struct
import xml.etree.ElementTree as ET

import pytest
from matplotlib.colors import to_hex

from mm2_smoke import config, digest, formats, junit, kafka_util, picture, report, stats
from mm2_smoke.check_cycles import cycles
from mm2_smoke.common import first_diff

from report_files import hex_rgb, parse_html, png_panels, validate_junit


def test_checkpoint_decode_hand_made_bytes():
    # Checkpoint.java: key (group STRING, topic STRING, partition INT32);
    # value (version INT16 = 0, upstreamOffset INT64, offset INT64, metadata STRING)
    key = b"\x00\x02g1" + b"\x00\x07A.topic" + b"\x00\x00\x00\x03"
    value = b"\x00\x00" + struct.pack(">q", 120) + struct.pack(">q", 97) + b"\x00\x02md"
    cp = formats.decode_checkpoint(key, value)
    assert cp == formats.Checkpoint("g1", "A.topic", 3, 120, 97, "md")
    assert formats.encode_checkpoint(cp) == (key, value)


def test_checkpoint_decode_rejects_malformed():
    with pytest.raises(formats.FormatError, match="truncated"):
        formats.decode_checkpoint(b"\x00\x05ab", b"\x00\x00")
    with pytest.raises(formats.FormatError, match="version 1"):
        formats.decode_checkpoint(b"\x00\x01g\x00\x01t\x00\x00\x00\x00", b"\x00\x01" + b"\x00" * 18)


def test_heartbeat_round_trip():
    hb = formats.Heartbeat("A", "B", 1700000000123)
    key, value = formats.encode_heartbeat(hb)
    assert key == b"\x00\x01A\x00\x01B" and value == b"\x00\x00" + struct.pack(">q", 1700000000123)
    assert formats.decode_heartbeat(key, value) == hb


def test_digest_is_order_insensitive_and_content_sensitive():
    recs = [(b"k%d" % i, b"v%d" % i, [("h", b"%d" % i)]) for i in range(50)]
    base = digest.digest_of(recs)
    assert digest.digest_of(list(reversed(recs))) == base
    assert digest.digest_of(recs + [recs[3]]) != base            # duplicate
    assert digest.digest_of(recs[1:]) != base                    # missing
    changed = list(recs)
    changed[7] = (b"k7", b"v7", [("h", b"8")])                   # header changed
    assert digest.digest_of(changed) != base
    assert digest.digest_of([]) == "0" * 16


@pytest.mark.parametrize("one, other", [
    ((None, b"", []), (b"", b"", [])),
    ((b"ab", b"c", []), (b"a", b"bc", [])),
    ((None, b"x", []), (b"x", None, [])),
    ((b"k", b"v", [("h", None)]), (b"k", b"v", [("h", b"")])),
    ((b"k", b"v", [("a", None), ("b", b"x")]), (b"k", b"v", [("a", b"b"), ("x", None)])),
    ((b"k", b"v", []), (b"k", b"v", [("h", b"")])),
], ids=["null-key-vs-empty", "field-boundary", "key-vs-value", "null-header-vs-empty",
        "header-boundary", "no-header-vs-empty-header"])
def test_record_hash_tells_apart(one, other):
    assert digest.record_hash(*one) != digest.record_hash(*other)


# Spark 4.2.0's xxhash64 over these rows, by digest.SPARK_RECORD_HASH (local session, 2026-12-04);
# tests/live/test_mm2.py compares the two on records read from a real broker.
@pytest.mark.parametrize("record, spark_hex", [
    ((None, b"", None), "ae98c9a819784ebc"),
    ((b"", None, []), "06dbba61ab70274a"),
    ((b"k", b"v", [("h", None), ("\u00e9", b"\x00")]), "a91815d61a0169bd"),
    ((None, None, [("a", b"")]), "30e59e1364c10144"),
    ((b"x" * 100, b"y" * 5000, [("h1", b"1"), ("h2", b"2")]), "afb29e9a24dde10d"),
], ids=["null-key", "null-value", "null-header-value", "empty-header-value", "long"])
def test_record_hash_is_sparks(record, spark_hex):
    assert digest.hex64(digest.record_hash(*record)) == spark_hex


def test_digest_from_sparks_half_sums():
    recs = [(b"k%d" % i, b"v" * i, []) for i in range(1000)]
    hashes = [digest.record_hash(*r) for r in recs]
    low, high = sum(h & 0xFFFFFFFF for h in hashes), sum(h >> 32 for h in hashes)
    assert digest.format_digest(low, high) == digest.digest_of(recs)
    assert digest.format_digest(None, None) == "0" * 16


def test_percentiles_and_histogram():
    vals = list(range(1, 101))
    assert stats.percentile(vals, 50) == 50 and stats.percentile(vals, 95) == 95
    assert stats.percentile(vals, 100) == 100 and stats.percentile([], 50) is None
    assert stats.summary([5, 1, 3]) == {"count": 3, "p50": 3, "p95": 5, "max": 5, "min": 1, "mean": 3.0}
    hist = stats.histogram([0, 1, 9, 10, 19], bins=2)
    assert hist == {"edges": [0, 10, 20], "counts": [3, 2]}


def test_remote_topic_names_and_filter():
    flow = {"name": "A->B", "source": "A", "remote_topic_prefix": "A.", "topics_regex": "orders.*",
            "topics_exclude_regex": r".*[\-\.]internal"}
    assert config.remote_topic_name(flow, "orders") == "A.orders"
    assert config.remote_topic_name(dict(flow, remote_topic_prefix=""), "orders") == "orders"
    # the naming rule is the collection's (mm2_model): the job does not re-derive it from the policy
    with pytest.raises(config.ConfigError, match="cannot be predicted"):
        config.remote_topic_name(dict(flow, remote_topic_prefix=None, replication_policy="com.x.Custom"), "x")
    assert config.topic_matches(flow, "orders-1") and not config.topic_matches(flow, "orders.internal")
    assert not config.topic_matches(flow, "payments")


def test_config_validation_messages(tmp_path):
    with pytest.raises(config.ConfigError, match=r"config.version: expected 1"):
        config.normalise({"version": 2})
    with pytest.raises(config.ConfigError) as err:
        config.normalise({"version": 1, "clusters": {"A": {}}, "flows": [{"name": "A->C", "source": "A",
                                                                          "target": "C"}],
                          "checks": {"enabled": ["markers", "bogus"]}})
    text = str(err.value)
    assert "config.clusters.A.bootstrap_servers: missing" in text
    assert "config.flows[0].target: cluster 'C' not in config.clusters" in text
    assert "config.checks.enabled: unknown check(s) ['bogus']" in text
    assert "config.flows[0].remote_topic_prefix: missing" in text
    assert "config.flows[0].refresh_topics_interval_s: missing, and no config.checks.refresh_interval_s" in text
    path = tmp_path / "c.json"
    path.write_text(json.dumps({"version": 1, "run_id": "r1",
                                "clusters": {"A": {"bootstrap_servers": "h:1"}, "B": {"bootstrap_servers": "h:2"}},
                                "flows": [{"name": "A->B", "source": "A", "target": "B", "remote_topic_prefix": "A.",
                                           "refresh_topics_interval_s": 30}],
                                "checks": {"duplicates": "report"}}))
    cfg = config.load(str(path))
    assert cfg["run_id"] == "r1" and config.refresh_interval_s(cfg, cfg["flows"][0]) == 30
    assert not config.duplicates_fail(cfg, dict(cfg["flows"][0], exactly_once=True))
    cfg["checks"]["duplicates"] = "auto"
    assert config.duplicates_fail(cfg, dict(cfg["flows"][0], exactly_once=True))
    assert not config.duplicates_fail(cfg, cfg["flows"][0])
    assert cfg["flows"][0]["target_bootstrap_servers"] == "h:2" and cfg["checks"]["records"] == 100


def test_java_client_properties_to_kafka_python():
    kwargs, ignored = kafka_util.python_client_kwargs({
        "security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-512",
        "sasl.jaas.config": 'org.apache.kafka.common.security.scram.ScramLoginModule required '
                            'username="mm2" password="s3\\"cr";',
        "ssl.truststore.location": "/etc/ca.pem", "ssl.truststore.type": "PEM"})
    assert kwargs == {"security_protocol": "SASL_SSL", "sasl_mechanism": "SCRAM-SHA-512",
                      "sasl_plain_username": "mm2", "sasl_plain_password": 's3\\"cr', "ssl_cafile": "/etc/ca.pem"}
    assert ignored == []


@pytest.mark.parametrize("key, value, reported", [
    # client settings kafka-python cannot honour: reported
    ("ssl.truststore.type", "JKS", True),
    ("ssl.keystore.type", "PKCS12", True),
    ("sasl.login.refresh.window.factor", "0.8", True),
    ("client.dns.lookup", "use_all_dns_ips", True),
    ("metadata.max.age.ms", "1000", True),
    # kafka-python reads PEM anyway
    ("ssl.truststore.type", "PEM", False),
    ("ssl.keystore.type", "pem", False),
    # what only MirrorMaker 2 or its Connect worker reads: never a client's
    ("offset.storage.replication.factor", "1", False),
    ("config.storage.replication.factor", "1", False),
    ("status.storage.replication.factor", "1", False),
    ("replication.factor", "3", False),
    ("producer.override.linger.ms", "20", False),
    ("tasks.max", "4", False),
])
def test_only_client_settings_are_reported_unmapped(key, value, reported):
    kwargs, ignored = kafka_util.python_client_kwargs({"security.protocol": "PLAINTEXT", key: value})
    assert kwargs == {"security_protocol": "PLAINTEXT"}
    assert ignored == ([key] if reported else [])


KRB5_JAAS = ('com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true storeKey=true '
             'keyTab="/etc/mm2/smoke.keytab" principal="smoke/host@EXAMPLE.ORG";')


def test_gssapi_client_properties_to_kafka_python():
    props = {"security.protocol": "SASL_SSL", "sasl.mechanism": "GSSAPI", "sasl.kerberos.service.name": "kafka",
             "sasl.jaas.config": KRB5_JAAS}
    kwargs, ignored = kafka_util.python_client_kwargs(props)
    # the keytab login is the process's (kafka_util.kerberos_login), not a keyword of kafka-python
    assert kwargs == {"security_protocol": "SASL_SSL", "sasl_mechanism": "GSSAPI", "sasl_kerberos_service_name": "kafka"}
    assert ignored == []
    assert kafka_util.kerberos_keytab_login(props) == ("smoke/host@EXAMPLE.ORG", "/etc/mm2/smoke.keytab")
    # a ticket cache login, or a SCRAM line, names no keytab to log in from
    assert kafka_util.kerberos_keytab_login(dict(props, **{"sasl.jaas.config": KRB5_JAAS.replace(
        "useKeyTab=true", "useKeyTab=false")})) is None
    assert kafka_util.kerberos_keytab_login(dict(props, **{"sasl.mechanism": "SCRAM-SHA-512"})) is None
    assert kafka_util.jaas_options('X required a=true b="q \\" r" c=1;') == {"a": "true", "b": 'q \\" r', "c": "1"}


def kerberos_cfg(**clusters):
    return {"run_id": "r1", "krb5_conf": "/etc/lab-krb5.conf",
            "clusters": {a: {"bootstrap_servers": "h:1", "properties": p} for a, p in clusters.items()}}


def test_kerberos_login_restores_the_environment(monkeypatch):
    monkeypatch.setenv("KRB5_CONFIG", "/etc/site-krb5.conf")
    monkeypatch.delenv("KRB5CCNAME", raising=False)
    # GSSAPI from a ticket cache: only the krb5.conf is the job's, for as long as it runs
    cfg = kerberos_cfg(A={"sasl.mechanism": "GSSAPI"}, B={})
    with kafka_util.kerberos_login(cfg, {"A": None, "B": None}) as login:
        assert login is None and os.environ["KRB5_CONFIG"] == "/etc/lab-krb5.conf"
    assert os.environ["KRB5_CONFIG"] == "/etc/site-krb5.conf" and "KRB5CCNAME" not in os.environ
    with kafka_util.kerberos_login(kerberos_cfg(A={}), {"A": None}) as login:
        assert login is None and os.environ["KRB5_CONFIG"] == "/etc/site-krb5.conf"


def test_kerberos_login_refuses_two_keytab_logins():
    other = KRB5_JAAS.replace("smoke/host", "other")
    cfg = kerberos_cfg(A={"sasl.mechanism": "GSSAPI", "sasl.jaas.config": KRB5_JAAS},
                       B={"sasl.mechanism": "GSSAPI", "sasl.jaas.config": other})
    with pytest.raises(kafka_util.KerberosLoginFailed, match="one Kerberos credential per process"):
        with kafka_util.kerberos_login(cfg, {"A": None, "B": None}):
            pass


def test_krb5_conf_config_and_java_options(tmp_path, monkeypatch):
    from mm2_smoke import spark
    monkeypatch.delenv("PYSPARK_GATEWAY_PORT", raising=False)
    raw = {"version": 1, "clusters": {"A": {"bootstrap_servers": "h:1"}, "B": {"bootstrap_servers": "h:2"}},
           "flows": [{"name": "A->B", "source": "A", "target": "B", "remote_topic_prefix": "A.",
                      "refresh_topics_interval_s": 30}]}
    assert config.normalise(dict(raw))["krb5_conf"] is None
    assert config.normalise(dict(raw, krb5_conf="/etc/krb5.conf"))["krb5_conf"] == "/etc/krb5.conf"
    with pytest.raises(config.ConfigError, match="config.krb5_conf: expected an absolute path"):
        config.normalise(dict(raw, krb5_conf="krb5.conf"))
    assert spark.krb5_java_options(None) == {}
    assert spark.krb5_java_options("/etc/krb5.conf") == {
        "spark.driver.extraJavaOptions": "-Djava.security.krb5.conf=/etc/krb5.conf",
        "spark.executor.extraJavaOptions": "-Djava.security.krb5.conf=/etc/krb5.conf"}


KRB5_OPTION = "-Djava.security.krb5.conf=/etc/krb5.conf"


@pytest.mark.parametrize("krb5_conf, driver_jit, submitted, driver, executor", [
    (None, "full", False, None, None),
    (None, "c1", False, "-XX:TieredStopAtLevel=1", None),
    ("/etc/krb5.conf", "full", False, KRB5_OPTION, KRB5_OPTION),
    ("/etc/krb5.conf", "c1", False, KRB5_OPTION + " -XX:TieredStopAtLevel=1", KRB5_OPTION),
    # spark-submit's driver JVM runs already: its JIT is its own
    (None, "c1", True, None, None),
])
def test_the_driver_jit_is_a_java_option_of_the_jvm_this_process_starts(monkeypatch, krb5_conf, driver_jit,
                                                                        submitted, driver, executor):
    from mm2_smoke import spark
    monkeypatch.setattr(spark, "submitted", lambda: submitted)
    monkeypatch.setattr(spark, "krb5_java_options", lambda conf: {
        "spark.driver.extraJavaOptions": KRB5_OPTION, "spark.executor.extraJavaOptions": KRB5_OPTION} if conf else {})
    options = spark.java_options(krb5_conf, driver_jit)
    assert options.get("spark.driver.extraJavaOptions") == driver
    assert options.get("spark.executor.extraJavaOptions") == executor


def test_an_unknown_driver_jit_is_refused():
    from mm2_smoke import spark
    with pytest.raises(ValueError, match="driver_jit: expected c1 or full, got 'c2'"):
        spark.java_options(None, "c2")


@pytest.mark.parametrize("argv, driver_jit", [
    ([], "c1"),
    (["--mode", "reconcile"], "full"),
    (["--driver-jit", "full"], "full"),
    (["--mode", "reconcile", "--driver-jit", "c1"], "c1"),
])
def test_the_driver_jit_defaults_by_mode(argv, driver_jit):
    from mm2_smoke import cli
    assert cli.parse_args(["--config", "c.json"] + argv).driver_jit == driver_jit


def test_first_diff_and_verdict():
    assert first_diff(b"abc", b"abc") is None and first_diff(b"abc", b"abd") == 2
    assert first_diff(b"ab", b"abc") == 2
    assert report.verdict([{"status": "pass"}, {"status": "skip"}])[:2] == ("pass", 0)
    assert report.verdict([{"status": "pass"}, {"status": "fail"}, {"status": "error"}])[:2] == ("fail", 1)
    assert report.verdict([{"status": "error"}])[:2] == ("error", 2) and report.verdict([])[:2] == ("error", 2)
    # a run whose checks were all skipped proved nothing
    name, code, why = report.verdict([{"status": "skip"}, {"status": "skip"}])
    assert (name, code) == ("error", 2) and "every check was skipped (2)" in why


FAILED_MARKERS = {"check": "markers", "flow": "A->B", "topic": "t", "remote_topic": "A.t", "status": "fail",
                  "messages": ["flow A->B topic t -> A.t: 1 of 2 markers missing"], "details": {}, "duration_s": 1}


def test_report_files(tmp_path):
    checks = [dict(FAILED_MARKERS),
              {"check": "heartbeats", "flow": "B->A", "topic": "heartbeats", "status": "pass", "messages": [],
               "details": {}, "duration_s": 2.5},
              {"check": "cycles", "flow": "A->B", "topic": "cycles", "status": "skip",
               "messages": ["cycles cannot be told <apart>"], "details": {}, "duration_s": 0}]
    meta = {"mode": "smoke", "run_id": "r1", "duration_s": 1.0, "started": "2026-11-24T10:00:00+00:00",
            "checks_configured": ["markers", "heartbeats", "cycles"],
            "discovery": [{"flow": "A->B", "topic": "t", "remote_topic": "A.t", "seconds": 7.5}]}
    doc = report.build(meta, checks, {"A->B": [10, 20, 30], "B->A": [200, 400]})
    files = report.write(doc, str(tmp_path))
    assert sorted(os.path.basename(f) for f in files.values()) == [
        "mm2-smoke-smoke-r1.html", "mm2-smoke-smoke-r1.json", "mm2-smoke-smoke-r1.png", "mm2-smoke-smoke-r1.xml"]
    back = json.loads(open(files["json"]).read())
    assert back["report_version"] == 2 and back["verdict"] == "fail" and back["exit_code"] == 1
    assert back["latency_ms"]["p50"] == 30 and back["latency_ms"]["count"] == 5
    assert back["latency_ms_by_flow"]["A->B"]["p50"] == 20 and back["latency_ms_by_flow"]["B->A"]["max"] == 400
    assert back["summary"] == {"configured": ["markers", "heartbeats", "cycles"], "results": 3, "pass": 1,
                               "skip": 1, "fail": 1, "error": 0,
                               "by_check": {"markers": 1, "heartbeats": 1, "cycles": 1}, "produced_by": {}}
    assert back["topics"][0] == {"flow": "A->B", "topic": "t", "remote_topic": "A.t",
                                 "checks": {"markers": "fail"}, "status": "fail"}
    # the PNG decodes; one latency panel per flow and the check table; the failed check's red is drawn
    width, height, colours, description = png_panels(files["png"])
    assert width == 1100 and height > 600
    assert description == "panels: latency A->B; latency B->A; checks"
    assert {hex_rgb(picture.COLORS["fail"]), hex_rgb(picture.COLORS["pass"]),
            hex_rgb(picture.SOURCE_COLOR)} <= colours
    fig, names = picture.figure(back)
    titles = [ax.get_title(loc="left") for ax in fig.axes]
    assert titles[0] == "A->B: replication latency of 3 markers" and titles[-1] == "checks: 3"
    assert [t.get_text() for t in fig.axes[0].get_legend().get_texts()] == ["p50 20 ms", "p95 30 ms", "max 30 ms"]
    # the HTML parses, escapes what the checks say, and links its siblings
    page = parse_html(open(files["html"]).read())
    assert ("img", {"src": "mm2-smoke-smoke-r1.png",
                    "alt": "latency per flow or records per partition, lag per flow, and the status of every check"})\
        in page.seen
    html_text = open(files["html"]).read()
    assert "1 of 2 markers missing" in html_text and "cycles cannot be told &lt;apart&gt;" in html_text
    assert 'href="mm2-smoke-smoke-r1.xml"' in html_text and "7.5" in html_text
    # JUnit XML: valid for Jenkins' schema, one case per check, statuses as JUnit's elements
    validate_junit(files["junit"])
    suite = ET.parse(files["junit"]).getroot().find("testsuite")
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors"), suite.get("skipped")) == ("3", "1", "0", "1")
    cases = {c.get("name"): c for c in suite.findall("testcase")}
    assert cases["markers t -> A.t"].find("failure").get("message") == FAILED_MARKERS["messages"][0]
    assert cases["heartbeats heartbeats"].find("failure") is None and cases["cycles cycles"].find("skipped") is not None
    text = report.summary_text(back)
    assert "FAIL   markers    A->B     t -> A.t" in text
    assert ("3 checks configured (markers, heartbeats, cycles), 3 results (markers 1, heartbeats 1, cycles 1): "
            "1 pass, 1 skip, 1 fail") in text
    assert "latency B->A (produce -> readable on target), ms: p50 200, p95 400, max 400 over 2 records" in text
    assert "discovery A->B: MM2 found new topic t and delivered its first record as A.t in 7.5s" in text


LAG_FILE = {"lag": [{"flow": "A->B", "topic": "orders", "partition": 0, "records": 0, "seconds": 0.0, "end": 9, "next": 9},
                    {"flow": "A->B", "topic": "orders", "partition": 1, "records": 40, "seconds": 12.402, "end": 50,
                     "next": 10}],
            "flows": {"A->B": {"records": 40, "seconds": 12.402, "partitions": 2}},
            "measured_at": "2026-11-27T17:00:00.000Z",
            "sources": [{"flow": "A->B", "offsets": "topic mm2-offsets.A.internal on B (b:9092)",
                         "isolation_level": "read_uncommitted"}]}


@pytest.mark.parametrize("given, panels, lines", [
    (LAG_FILE, "panels: latency A->B; lag A->B; checks",
     ["lag A->B before the job (at 2026-11-27T17:00:00.000Z): 40 records, 12.402 s behind over 2 partitions",
      "    A->B orders-1: 40 records, 12.402 s"]),
    ({"error": "flow A->B: the offsets topic mm2-offsets.A.internal does not exist"}, "panels: latency A->B; checks",
     ["lag before the job: not measured: flow A->B: the offsets topic mm2-offsets.A.internal does not exist"]),
    (None, "panels: latency A->B; checks", ["lag before the job: not measured: reading "]),
])
def test_the_lag_the_role_measured_is_shown_as_it_is(tmp_path, given, panels, lines):
    path = tmp_path / "lag.json"
    if given is not None:
        path.write_text(json.dumps(given))
    meta = dict({"mode": "smoke", "run_id": "r2", "duration_s": 1.0, "checks_configured": ["markers"]},
                **report.load_lag(str(path)))
    doc = report.build(meta, [dict(FAILED_MARKERS)], {"A->B": [10, 20]})
    files = report.write(doc, str(tmp_path / "out"))
    back = json.loads(open(files["json"]).read())
    assert back["lag"] == (given or {}).get("lag", [])
    assert back["lag_by_flow"] == (given or {}).get("flows", {})
    assert png_panels(files["png"])[3] == panels
    text = report.summary_text(back).splitlines()
    found = [line.strip() for line in text if "lag " in line or "orders-" in line]
    assert len(found) == len(lines) and all(f.startswith(line.strip()) for f, line in zip(found, lines)), text
    html_text = open(files["html"]).read()
    assert "Replication lag before the job" in html_text
    if given is LAG_FILE:
        assert "topic mm2-offsets.A.internal on B (b:9092) (read_uncommitted)" in html_text and "12.402" in html_text
        fig, _names = picture.figure(back)
        lag_axes = fig.axes[1]
        assert lag_axes.get_title(loc="left").startswith("A->B: 40 records, 12.402 s behind before the job")
        assert "2 partitions)" in lag_axes.get_title(loc="left")
        # no check judges the lag: its bars never take a verdict's colour
        assert {to_hex(patch.get_facecolor()) for patch in lag_axes.patches} == {picture.SOURCE_COLOR}
        one = dict(back, lag_by_flow={"A->B": dict(back["lag_by_flow"]["A->B"], partitions=1)})
        assert "1 partition)" in picture.figure(one)[0].axes[1].get_title(loc="left")
    else:
        assert "Not measured: " in html_text


def test_a_job_that_could_not_check_is_a_junit_error_and_a_chart_free_picture(tmp_path):
    meta = {"mode": "smoke", "run_id": "r9", "duration_s": 31.0, "checks_configured": ["markers"],
            "errors": ["cluster B (target of A->B) unreachable at bootstrap servers h:9 within 30s: timeout"]}
    doc = report.build(meta, [], {})
    doc["verdict"], doc["exit_code"] = "error", 2
    files = report.write(doc, str(tmp_path))
    validate_junit(files["junit"])
    suite = ET.parse(files["junit"]).getroot().find("testsuite")
    assert (suite.get("tests"), suite.get("errors")) == ("1", "1")
    assert "unreachable at bootstrap servers h:9" in suite.find("testcase/error").get("message")
    assert png_panels(files["png"])[3] == "panels: no chart; checks"
    assert "unreachable at bootstrap servers h:9" in open(files["html"]).read()
    assert "0 checks configured" not in report.summary_text(doc) and "1 check configured (markers)" in \
        report.summary_text(doc)


def _results(*kinds):
    return [{"check": kind, "flow": "A->B", "status": status} for kind, status in kinds]


@pytest.mark.parametrize("configured,results,line", [
    # the DR smoke playbook's configuration: one flow, no reverse flow, configs check off
    (["markers", "offsets", "new_topics", "cycles"],
     _results(("markers", "pass"), ("offsets", "fail"), ("new_topics", "pass"), ("partitions", "pass"),
              ("cycles", "skip")),
     "4 checks configured (markers, offsets, new_topics, cycles), 5 results (markers 1, offsets 1, new_topics 1, "
     "cycles 1, partitions 1 (with new_topics)): 3 pass, 1 skip, 1 fail"),
    # the configs check alone still needs a new topic: its results say which check made them
    (["configs"], _results(("new_topics", "pass"), ("partitions", "pass"), ("configs", "pass")),
     "1 check configured (configs), 3 results (configs 1, new_topics 1 (with configs), "
     "partitions 1 (with configs)): 3 pass"),
    # a configured check with no result is shown as 0, not hidden by a total that happens to match
    (["markers", "heartbeats"], _results(("markers", "pass"), ("markers", "pass")),
     "2 checks configured (markers, heartbeats), 2 results (markers 2, heartbeats 0): 2 pass"),
    (["markers"], _results(("reconcile", "pass")),
     "1 check configured (markers), 1 result (markers 0, reconcile 1 (not configured)): 1 pass"),
])
def test_the_summary_counts_add_up_by_check(configured, results, line):
    doc = report.build({"mode": "smoke", "checks_configured": configured}, results, {})
    assert report.summary_line(doc) == line
    assert sum(doc["summary"]["by_check"].values()) == doc["summary"]["results"] == len(results)


def test_reconcile_picture_marks_the_partition_that_differs(tmp_path):
    parts = [{"partition": 0, "source_count": 10, "target_count": 10, "match": True},
             {"partition": 1, "source_count": 10, "target_count": 9, "match": False}]
    checks = [{"check": "reconcile", "flow": "A->B", "topic": "t", "remote_topic": "A.t", "status": "fail",
               "messages": ["partition 1 differs"], "details": {"partitions": parts}, "duration_s": 1}]
    red, green = hex_rgb(picture.COLORS["fail"]), hex_rgb(picture.COLORS["pass"])
    doc = report.build({"mode": "reconcile", "run_id": "r2"}, checks, {})
    report.write(doc, str(tmp_path / "one"))
    _w, _h, colours, description = png_panels(doc["files"]["png"])
    assert description == "panels: records per partition A->B t; checks"
    assert {hex_rgb(picture.SOURCE_COLOR), green, red} <= colours
    # every partition matches: no red bar, and a passing status cell is green, not red
    checks[0].update(status="pass", messages=[], details={"partitions": [parts[0]]})
    doc = report.build({"mode": "reconcile", "run_id": "r3"}, checks, {})
    report.write(doc, str(tmp_path / "two"))
    _w, _h, colours, _d = png_panels(doc["files"]["png"])
    assert green in colours and red not in colours
    assert junit.case_name(checks[0]) == "reconcile t -> A.t"


def test_a_crash_anywhere_exits_2_never_1(tmp_path, monkeypatch, capsys):
    """Exit 1 means replication failed; a job that broke (report writing included) exits 2."""
    from mm2_smoke import cli
    from mm2_smoke import smoke as smokemod
    failed = {"check": "markers", "flow": "A->B", "topic": "t", "status": "fail", "messages": ["1 missing"],
              "details": {}, "duration_s": 1}
    cfg = tmp_path / "c.json"
    cfg.write_text(json.dumps({"version": 1, "clusters": {"A": {"bootstrap_servers": "h:1"},
                                                          "B": {"bootstrap_servers": "h:2"}},
                               "flows": [{"name": "A->B", "source": "A", "target": "B", "remote_topic_prefix": "A.",
                                          "refresh_topics_interval_s": 5}]}))
    monkeypatch.setattr(cli, "spark_session", lambda *a, **k: None)
    monkeypatch.setattr(smokemod, "run_smoke",
                        lambda cfg, progress, spark: {"checks": [dict(failed)], "latencies_ms": {}})
    argv = ["--config", str(cfg), "--report-dir", str(tmp_path / "r"), "--quiet"]
    assert cli.main(argv) == 1  # the replication failure itself

    def disk_full(doc, report_dir):
        raise OSError("disk full")
    monkeypatch.setattr(report, "write", disk_full)
    doc = cli.run(cli.parse_args(argv))
    assert doc["exit_code"] == 2 and "OSError: disk full" in doc["errors"][-1]
    assert cli.main(argv) == 2
    monkeypatch.setattr(report, "build", lambda *a: 1 / 0)
    assert cli.main(argv) == 2
    assert "ERROR, the job could not run: ZeroDivisionError" in capsys.readouterr().out


class FlakyAdmin(object):
    """Stands in for kafka-python's admin client: each call raises the next queued error, then answers."""

    def __init__(self, errors):
        self.errors = list(errors)
        self.calls = 0

    def describe_topics(self, topics):
        self.calls += 1
        if self.errors:
            raise self.errors.pop(0)
        return [{"name": topics[0], "error_code": 0, "partitions": [0, 1]}]

    create_topics = describe_topics
    alter_group_offsets = describe_topics


def retrying(errors, timeout_s=5):
    now = [0.0]
    fake = FlakyAdmin(errors)
    adm = kafka_util.RetryingAdmin(fake, timeout_s, pause_s=1.0, clock=lambda: now[0],
                                   sleep=lambda s: now.__setitem__(0, now[0] + s))
    return adm, fake, now


def test_admin_reads_retry_a_busy_broker_within_the_timeout():
    from kafka.errors import KafkaTimeoutError, RequestTimedOutError, UnknownTopicOrPartitionError
    adm, fake, now = retrying([KafkaTimeoutError("busy"), RequestTimedOutError("busy")])
    assert kafka_util.partitions_of(adm, "t") == 2 and fake.calls == 3 and now[0] == 2.0
    # still failing when the timeout is up: the last error is raised, after bounded retries
    adm, fake, now = retrying([KafkaTimeoutError("busy %d" % i) for i in range(20)], timeout_s=5)
    with pytest.raises(KafkaTimeoutError, match="busy 4"):
        adm.describe_topics(["t"])
    assert fake.calls == 5 and now[0] == 4.0
    # a missing topic is an answer, not a busy broker: no retry
    adm, fake, _now = retrying([UnknownTopicOrPartitionError("t")])
    assert kafka_util.partitions_of(adm, "t") is None and fake.calls == 1
    # calls that change the cluster are made once
    adm, fake, _now = retrying([KafkaTimeoutError("busy")])
    with pytest.raises(KafkaTimeoutError):
        adm.create_topics(["t"])
    assert fake.calls == 1
    # a group coordinator not ready yet refuses a commit without applying it: setting offsets again is safe
    from kafka.errors import CoordinatorNotAvailableError
    adm, fake, now = retrying([CoordinatorNotAvailableError("fresh cluster")])
    adm.alter_group_offsets(["t"])
    assert fake.calls == 2 and now[0] == 1.0


@pytest.mark.parametrize("answers, calls, raised", [
    # The first commit on a cluster that never hosted a group: refused per partition, then done.
    (["CoordinatorLoadInProgressError", "NotCoordinatorError", "NoError"], 3, None),
    (["NoError"], 1, None),
    # Refused for good (a member still uses the group): raised at once, naming group and partition.
    (["UnknownMemberIdError"], 1, "UnknownMemberIdError"),
    # Still loading when the timeout is up: the last refusal is raised.
    (["CoordinatorLoadInProgressError"] * 20, 5, "CoordinatorLoadInProgressError"),
])
def test_a_group_commit_refused_per_partition_is_retried_or_raised(answers, calls, raised):
    from kafka import TopicPartition, errors

    class PerPartition(object):
        def __init__(self):
            self.calls = 0

        def alter_group_offsets(self, group, offsets):
            name = answers[min(self.calls, len(answers) - 1)]
            self.calls += 1
            return {tp: (errors.NoError if tp.partition == 0 else getattr(errors, name)) for tp in offsets}

    now = [0.0]
    fake = PerPartition()
    adm = kafka_util.RetryingAdmin(fake, 5, pause_s=1.0, clock=lambda: now[0],
                                   sleep=lambda s: now.__setitem__(0, now[0] + s))
    offsets = {TopicPartition("t", 0): 1, TopicPartition("t", 1): 2}
    if raised:
        with pytest.raises(getattr(errors, raised), match="alter_group_offsets of g: t partition 1 refused"):
            adm.alter_group_offsets("g", offsets)
    else:
        assert set(adm.alter_group_offsets("g", offsets).values()) == {errors.NoError}
    assert fake.calls == calls


def test_cycles_without_a_reverse_flow_is_a_skip_with_its_reason():
    """Configured but unable to apply: reported, so that the configured checks and the results add up."""
    flow = {"name": "A->B", "source": "A", "target": "B", "remote_topic_prefix": ""}
    got = cycles({"enabled_flows": [flow]}, {"A": object(), "B": object()})
    assert [(c["check"], c["status"]) for c in got] == [("cycles", "skip")]
    assert got[0]["messages"] == ["flow A->B: no enabled flow B->A, so no record can come back: no cycle to look for"]
