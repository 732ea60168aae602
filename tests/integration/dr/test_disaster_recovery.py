"""The disaster-recovery layout on real hosts: two Connect workers next to cluster B run flow A->B
as MirrorSourceConnector and MirrorCheckpointConnector (IdentityReplicationPolicy, exactly-once),
created by playbooks/disaster_recovery.yml through the Connect REST API.

Everything is asked of the real parts: the workers' REST API, the brokers' own tools, systemd.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import threading
import time

import pytest
from conftest import (
    INVENTORY, REPO, Producer, ansible_playbook, cluster_bootstrap, hosts_of, kafka, node, played, produce, targets, unique,
    wait_until,
)
import recap  # tests/lib, on the path once conftest is loaded

testinfra_hosts = targets("connect_workers")[:1]

SECRET = "lab-dr-truststore-secret"
SOURCE = "A-to-B-MirrorSourceConnector"
CHECKPOINT = "A-to-B-MirrorCheckpointConnector"


def rest(host, path):
    """GET on the worker's REST API from the worker itself."""
    code = ("import json,urllib.request;"
            "print(urllib.request.urlopen('http://127.0.0.1:8083%s', timeout=20).read().decode())" % path)
    result = host.run("python3 -c %s" % shlex.quote(code))
    assert result.rc == 0, result.stderr
    return json.loads(result.stdout)


# What explains a red verify (conftest.keep_logs) is mostly logged at DEBUG: MirrorMaker's group
# discovery, checkpoint and offset-sync stores and offset translation, Connect's zombie fencing and
# task count records.
DEBUG_LOGGERS = ("org.apache.kafka.connect.mirror", "org.apache.kafka.connect.runtime.distributed.DistributedHerder",
                 "org.apache.kafka.connect.storage.KafkaConfigBackingStore")


@pytest.fixture(autouse=True)
def debug_logging(host):
    """Before every test, the loggers above at DEBUG on every worker (KIP-976's cluster scope). Set
    again each time: a worker that a test restarted ignores the cluster-scoped levels written before
    it started, and comes back at the install's levels."""
    code = ("import sys,urllib.request;"
            "[urllib.request.urlopen(urllib.request.Request('http://127.0.0.1:8083/admin/loggers/%s?scope=cluster'"
            " % n, data=b'{\"level\": \"DEBUG\"}', method='PUT', headers={'Content-Type': 'application/json'}),"
            " timeout=20) for n in sys.argv[1:]]")
    result = host.run("python3 -c %s %s" % (shlex.quote(code), " ".join(DEBUG_LOGGERS)))
    assert result.rc == 0, result.stderr


def put_config(host, name, config):
    """PUT /connectors/<name>/config from a worker that answers (the other may be restarting)."""
    code = ("import json,sys,urllib.request;"
            "r=urllib.request.Request('http://127.0.0.1:8083/connectors/%s/config', data=sys.stdin.buffer.read(),"
            " method='PUT', headers={'Content-Type': 'application/json'});"
            "print(urllib.request.urlopen(r, timeout=60).status)" % name)
    command = "printf %%s %s | python3 -c %s" % (shlex.quote(json.dumps(config)), shlex.quote(code))
    workers = [node(host, name) for name in hosts_of("connect_workers")]
    wait_until("a worker to take the config of %s" % name,
               lambda: any(worker.run(command).rc == 0 for worker in workers), timeout=120, interval=2)


def status_from_any(host):
    """GET /connectors?expand=status from a worker that answers (the other may be restarting); {} if none."""
    for name in hosts_of("connect_workers"):
        try:
            return rest(node(host, name), "/connectors?expand=status")
        except AssertionError:
            continue
    return {}


def source_tasks_running(host):
    """Every connector and task RUNNING, and the source connector has tasks (a topic matched)."""
    status = status_from_any(host)
    return bool(status.get(SOURCE, {}).get("status", {}).get("tasks")) and all(
        e["status"]["connector"]["state"] == "RUNNING" and all(t["state"] == "RUNNING" for t in e["status"]["tasks"])
        for e in status.values())


# The gate's settle (seconds between the two reads that must agree) in these tests; with the poll
# of mm2_connect.wait_stable (5 s), a gate that wrongly trusted a read would answer within
# settle + poll of its first read. Ansible's own start-up on the controller comes on top.
SETTLE = 10
ANSIBLE_START = 60


# How long a worker of the rolling restart in these tests may take to come back (the play's
# connect_wait_timeout).
PLAY_WAIT = 60
# Connect's default scheduled.rebalance.max.delay.ms (5 minutes), for a worker file without it.
CONNECT_REBALANCE_DELAY_DEFAULT = 300
# From a connector's task configs written to its tasks started: Connect rebalances (a round or
# two) and each worker starts its tasks. Measured 5 s idle (task configs updated 03:59:21, tasks
# failing on the bogus setting 03:59:26, stop 32's gate); six times that for a loaded machine.
TASK_START_MARGIN = 30


def task_config_deadline(host):
    """Seconds until a connector config written now has reached its tasks, at worst. The connector
    regenerates its task configs only while it runs: if its worker is restarting, it runs again when
    that worker is back (within PLAY_WAIT) or, reassigned, after scheduled.rebalance.max.delay.ms;
    then its tasks start (TASK_START_MARGIN). Measured: 61 s while restart.yml restarted the worker
    that held the connector, with the lab's 30 s delay."""
    props = host.file("/etc/kafka-connect/connect-distributed.properties").content_string
    delay = re.search(r"^scheduled\.rebalance\.max\.delay\.ms=(\d+)$", props, re.MULTILINE)
    delay_seconds = int(delay.group(1)) // 1000 if delay else CONNECT_REBALANCE_DELAY_DEFAULT
    return PLAY_WAIT + delay_seconds + TASK_START_MARGIN


class BrokenSourceTasks(object):
    """The source connector with a consumer setting its tasks fail on at start (Connect's
    validation lets it through), and its own config back on exit, waited for until it runs.
    A topic of the flow is made first: a source connector with no topic to mirror has no task."""

    def __init__(self, host):
        self.host = host
        kafka(a_host(host), "kafka-topics.sh", "--bootstrap-server", cluster_bootstrap("kafka_a"), "--create",
              "--topic", unique("dr-gate"), "--partitions", "1", "--replication-factor", "1")
        # refresh.topics.interval.seconds (5 in the lab), then the tasks' reconfiguration
        wait_until("the source connector's tasks RUNNING", lambda: source_tasks_running(host), timeout=120, interval=2)
        self.config = rest(host, "/connectors/%s/config" % SOURCE)

    def __enter__(self):
        put_config(self.host, SOURCE, dict(self.config, **{"consumer.auto.offset.reset": "bogus"}))
        try:
            wait_until("a task of %s FAILED" % SOURCE, lambda: any(
                t["state"] == "FAILED" for t in status_from_any(self.host).get(SOURCE, {}).get("status", {}).get("tasks", [])),
                timeout=task_config_deadline(self.host), interval=1)
        except BaseException:
            # A with-block whose __enter__ raises never reaches __exit__: without this, the broken
            # config outlived the test and failed every test after it (CI, 2026-11-27).
            self.__exit__()
            raise
        return self

    def restore(self):
        put_config(self.host, SOURCE, self.config)

    def __exit__(self, *exc):
        self.restore()
        wait_until("every connector and task RUNNING again", lambda: source_tasks_running(self.host), timeout=180,
                   interval=5)


def connect_health(*args):
    """The health gate's module, run ad hoc on the first worker as the rolling restart runs it."""
    cmd = ["ansible", "-i", INVENTORY, hosts_of("connect_workers")[0], "-m", "kafkaops.mirrormaker.connect_health",
           "-a", " ".join(("url=http://127.0.0.1:8083",) + args)]
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=dict(os.environ))


def test_the_health_gate_waits_while_a_task_does_not_run(host):
    """A gate started while a task is FAILED does not answer healthy for as long as it is given:
    it fails naming the task. Once the task runs again, a gate answers healthy."""
    timeout = 2 * SETTLE + 5
    with BrokenSourceTasks(host) as broken:
        t0 = time.monotonic()
        gate = connect_health("settle=%d" % SETTLE, "wait_timeout=%d" % timeout)
        out = gate.communicate(timeout=timeout + ANSIBLE_START)[0]
        waited = time.monotonic() - t0
        assert gate.returncode != 0, "the gate answered healthy while a task was FAILED: %s" % out
        assert re.search(r"%s task \d is FAILED" % SOURCE, out), out
        assert waited >= timeout, "the gate gave up after %.0f s of its %d" % (waited, timeout)
        reads = re.search(r'"?reads"?: (\d+)', out)  # JSON or YAML, as the Ansible configuration sets
        assert reads and int(reads.group(1)) >= 3, "the gate read the cluster too few times: %s" % out
        broken.restore()
        t1 = time.monotonic()
        gate = connect_health("settle=%d" % SETTLE, "wait_timeout=240")
        out = gate.communicate(timeout=240 + ANSIBLE_START)[0]
        assert gate.returncode == 0, out
        print("gate: failed after %.0f s while the task was FAILED; healthy %.0f s after the fix"
              % (waited, time.monotonic() - t1))


class Play(object):
    """ansible-playbook in the background, its output read line by line as it comes, so that a test
    can act when the play reaches a task."""

    def __init__(self, *args):
        self.process = subprocess.Popen(["ansible-playbook", "-i", INVENTORY] + list(args), stdout=subprocess.PIPE,
                                        stderr=subprocess.STDOUT, text=True)
        self.lines = []
        self.reader = threading.Thread(target=lambda: self.lines.extend(self.process.stdout), daemon=True)
        self.reader.start()

    def reached(self, text):
        return any(text in line for line in list(self.lines))

    def finish(self, timeout):
        try:
            self.process.wait(timeout=timeout)
        finally:
            if self.process.poll() is None:
                self.process.kill()
            self.reader.join(timeout=30)
        return self.process.returncode, "".join(self.lines)


def test_a_rolling_restart_fails_when_a_task_stops_mid_restart(host):
    """restart.yml with a task that fails while the workers restart: the gate does not let the
    play finish green; it fails naming the task."""
    broken = BrokenSourceTasks(host)
    play = Play(str(REPO / "playbooks" / "restart.yml"), "--limit", "connect_workers", "-e", "connect_wait_timeout=%d" % PLAY_WAIT)
    # Broken as the play restarts the first worker: its gate then reads the failed task.
    wait_until("restart.yml to restart the first worker",
               lambda: play.reached("TASK [kafkaops.mirrormaker.kafka_common : Restart the service on ")
               or play.process.poll() is not None, timeout=600, interval=1)
    with broken:
        code, out = play.finish(timeout=600)
    assert code != 0, out[-3000:]
    assert re.search(r"%s task \d is FAILED" % SOURCE, out), out[-3000:]


def a_host(host):
    return node(host, hosts_of("kafka_a")[0])


def b_host(host):
    return node(host, hosts_of("kafka_b")[0])


def group_offsets(host, bootstrap, group):
    """{(topic, partition): committed offset} of `group` on the cluster behind `bootstrap`."""
    out = kafka(host, "kafka-consumer-groups.sh", "--bootstrap-server", bootstrap, "--describe", "--group", group,
                check=False).stdout
    offsets = {}
    for line in out.splitlines():
        cols = line.split()
        if len(cols) >= 4 and cols[0] == group and cols[3].isdigit():
            offsets[(cols[1], int(cols[2]))] = int(cols[3])
    return offsets


def test_smoke_playbook_unchanged_proves_the_dr_layout(host, tmp_path):
    """playbooks/smoke.yml as users run it: with no MirrorMaker hosts it runs on the first Connect
    worker and checks the flow as the connectors run it (identity names, checkpoints, synced offsets)."""
    result = ansible_playbook(REPO / "playbooks" / "smoke.yml", "-e", "mm2_smoke_fetch_dir=%s" % tmp_path)
    assert result.returncode == 0, played(result)
    assert "mm2-smoke smoke run" in result.stdout and ": PASS" in result.stdout, played(result)
    # the lag the role read before the job from the worker's GET /connectors/<source connector>/offsets
    (report,) = sorted(tmp_path.glob("mm2-smoke-smoke-*.json"))
    doc = json.loads(report.read_text())
    assert doc["lag_measured"]["error"] is None, doc["lag_measured"]
    assert [s["offsets"] for s in doc["lag_measured"]["sources"]] == [
        "GET http://127.0.0.1:8083/connectors/%s/offsets" % SOURCE]
    assert {r["flow"] for r in doc["lag"]} <= {"A->B"}, doc["lag"]
    print("lag in the DR smoke report: %s at %s" % (doc["lag_by_flow"], doc["lag_measured"]["at"]))


def test_every_connector_and_task_runs_and_both_workers_joined(host):
    status = rest(host, "/connectors?expand=status")
    assert sorted(status) == sorted([SOURCE, CHECKPOINT])
    for name, entry in status.items():
        assert entry["status"]["connector"]["state"] == "RUNNING", name
        assert all(t["state"] == "RUNNING" for t in entry["status"]["tasks"]), entry
    # Both workers serve the same Connect cluster: each answers with the other's view.
    other = node(host, hosts_of("connect_workers")[1])
    assert sorted(rest(other, "/connectors")) == sorted(status)


def test_worker_properties_follow_the_layout(host):
    props = host.file("/etc/kafka-connect/connect-distributed.properties")
    assert (props.user, props.group, oct(props.mode)) == ("root", "kafka", "0o640")
    text = props.content_string
    for line in ("group.id=connect-mirrormaker-A-to-B", "plugin.discovery=service_load",
                 "config.storage.topic=__connect-mirrormaker-A-to-B-configs",
                 "offset.storage.topic=__connect-mirrormaker-A-to-B-offsets",
                 "status.storage.topic=__connect-mirrormaker-A-to-B-status",
                 "config.storage.replication.factor=-1", "exactly.once.source.support=enabled",
                 "key.converter=org.apache.kafka.connect.converters.ByteArrayConverter"):
        assert line in text.splitlines(), line
    names = kafka(b_host(host), "kafka-topics.sh", "--bootstrap-server", cluster_bootstrap("kafka_b"), "--list").stdout.split()
    assert {"__connect-mirrormaker-A-to-B-offsets", "__connect-mirrormaker-A-to-B-configs",
            "__connect-mirrormaker-A-to-B-status"} <= set(names)


def test_no_password_through_the_rest_api(host):
    """The secret reaches the connectors only through the FileConfigProvider: neither their configs
    nor their task configs show it, and only the service user can read the file that holds it."""
    for name in rest(host, "/connectors"):
        config = rest(host, "/connectors/%s/config" % name)
        tasks = rest(host, "/connectors/%s/tasks" % name)
        assert SECRET not in json.dumps(config) + json.dumps(tasks), name
        ref = config["source.cluster.ssl.truststore.password"]
        assert re.match(r"^\$\{file:/etc/kafka-connect/secrets/%s\.properties:source\.cluster\.ssl\.truststore\.password\}$"
                        % re.escape(name), ref), ref
        secret_file = host.file("/etc/kafka-connect/secrets/%s.properties" % name)
        assert (secret_file.user, oct(secret_file.mode)) == ("kafka", "0o600")
        assert SECRET in host.run("cat %s" % secret_file.path).stdout


def test_identity_exactly_once_every_record_once_on_b(host):
    topic = unique("dr-eos")
    a, b = a_host(host), b_host(host)
    kafka(a, "kafka-topics.sh", "--bootstrap-server", cluster_bootstrap("kafka_a"), "--create", "--topic", topic,
          "--partitions", "2", "--replication-factor", "1")
    lines = ["%s-%04d" % (topic, i) for i in range(300)]
    produce(a, cluster_bootstrap("kafka_a"), topic, lines)

    # The same name on B (IdentityReplicationPolicy), read as an application would after failover.
    def read_committed():
        got = kafka(b, "kafka-console-consumer.sh", "--bootstrap-server", cluster_bootstrap("kafka_b"), "--topic", topic,
                    "--from-beginning", "--timeout-ms", "10000", "--isolation-level", "read_committed",
                    timeout=60, check=False).stdout.split()
        return got if len(got) >= 300 else None

    seen = wait_until("%s on B with 300 records (read_committed)" % topic, read_committed, timeout=240, interval=5)
    assert sorted(seen) == lines, "each record exactly once on B"
    # Exactly-once is what the source connector runs with, not only what was asked.
    config = rest(host, "/connectors/%s/config" % SOURCE)
    assert (config["exactly.once.support"], config["consumer.isolation.level"]) == ("required", "read_committed")


def test_group_offsets_on_a_appear_translated_on_b(host):
    """A group that consumed part of a topic on A resumes on B without losing a record and re-reads
    at most what lies between two offset syncs (offset.lag.max, 100 by default)."""
    topic, group = unique("dr-grp"), unique("dr-g")
    a, b = a_host(host), b_host(host)
    kafka(a, "kafka-topics.sh", "--bootstrap-server", cluster_bootstrap("kafka_a"), "--create", "--topic", topic,
          "--partitions", "1", "--replication-factor", "1")
    lines = ["%s-%04d" % (topic, i) for i in range(400)]
    produce(a, cluster_bootstrap("kafka_a"), topic, lines)
    consumed = kafka(a, "kafka-console-consumer.sh", "--bootstrap-server", cluster_bootstrap("kafka_a"), "--topic", topic,
                     "--group", group, "--max-messages", "250", "--timeout-ms", "60000",
                     "--consumer-property", "auto.offset.reset=earliest", timeout=120).stdout.split()
    # The tool's own log lines share stdout with the records.
    consumed = [line for line in consumed if line.startswith(topic)]
    assert len(consumed) == 250
    translated = wait_until("offsets of %s translated on B" % group,
                            lambda: group_offsets(b, cluster_bootstrap("kafka_b"), group), timeout=180, interval=5)
    assert list(translated) == [(topic, 0)]
    rest_of_it = kafka(b, "kafka-console-consumer.sh", "--bootstrap-server", cluster_bootstrap("kafka_b"), "--topic", topic,
                       "--group", group, "--timeout-ms", "15000", "--isolation-level", "read_committed",
                       timeout=120, check=False).stdout.split()
    rest_of_it = [line for line in rest_of_it if line.startswith(topic)]
    assert set(consumed) | set(rest_of_it) == set(lines), "no record lost across the failover"
    reread = set(consumed) & set(rest_of_it)
    print("group %s: translated %s, re-read %d records on B" % (group, translated, len(reread)))
    assert len(reread) <= 100


def test_rolling_restart_of_the_workers_keeps_the_connectors_running(host):
    result = ansible_playbook(REPO / "playbooks" / "restart.yml", "--limit", "connect_workers")
    assert result.returncode == 0, played(result)
    restarted = re.findall(r"Restart the service on ([^\]\s]+)", result.stdout)
    assert sorted(set(restarted)) == sorted(hosts_of("connect_workers"))
    status = rest(host, "/connectors?expand=status")
    assert all(e["status"]["connector"]["state"] == "RUNNING" for e in status.values())
    assert all(t["state"] == "RUNNING" for e in status.values() for t in e["status"]["tasks"])


def test_failover_refuses_bad_smoke_input_before_stopping_the_connectors(host):
    """The drill's reconcile step runs the smoke role: a setting its preflight refuses must stop the
    drill before the connectors stop, not after."""
    result = ansible_playbook(REPO / "playbooks" / "failover.yml", "-e", json.dumps(
        {"failover_groups": [unique("dr-never")], "mm2_smoke_records": 0}))
    status = rest(host, "/connectors?expand=status")
    try:
        assert result.returncode != 0
        assert "mm2_smoke_records: 0 is not a positive number" in result.stdout + result.stderr, played(result)
        assert "Stop the flow's connectors" not in result.stdout, played(result)
        assert {e["status"]["connector"]["state"] for e in status.values()} == {"RUNNING"}
    finally:
        if {e["status"]["connector"]["state"] for e in status.values()} != {"RUNNING"}:
            again = ansible_playbook(REPO / "playbooks" / "disaster_recovery.yml")
            assert again.returncode == 0, played(again)


def consume(on, cluster, topic, group, *extra, timeout_ms=15000):
    """Records of `topic` a console consumer of `group` reads on `on` (read_committed) until idle."""
    out = kafka(on, "kafka-console-consumer.sh", "--bootstrap-server", cluster_bootstrap(cluster), "--topic", topic,
                "--group", group, "--timeout-ms", str(timeout_ms), "--isolation-level", "read_committed", *extra,
                timeout=180, check=False).stdout.split()
    return [line for line in out if line.startswith(topic)]


def every_record(on, cluster, topic):
    """Every record of `topic` on `on`, read_committed, from the beginning (no group)."""
    out = kafka(on, "kafka-console-consumer.sh", "--bootstrap-server", cluster_bootstrap(cluster), "--topic", topic,
                "--from-beginning", "--timeout-ms", "10000", "--isolation-level", "read_committed",
                timeout=180, check=False).stdout.split()
    return [line for line in out if line.startswith(topic)]


def test_failover_then_failback_round_trip_loses_nothing(host, tmp_path):
    """The drill both ways. playbooks/failover.yml stops the flow's connectors, reconciles the group's
    topic with Spark and reports where the group resumes on B and where the mirrored records end (the
    boundary); on B the group resumes losing nothing and re-reading at most what lies between two
    offset syncs. Clients then write and read on B. playbooks/failback.yml copies what they wrote
    back to A (each record once), moves the group back with translated offsets (it loses nothing and
    re-reads none of the records from before the failover), stops the reverse flow and starts A->B
    again after it: A and B then hold every record once, and a record written
    on A reaches B again. disaster_recovery.yml starts the connectors again if the trip fails."""
    topic, group = unique("dr-fo"), unique("dr-fo-g")
    a, b = a_host(host), b_host(host)
    kafka(a, "kafka-topics.sh", "--bootstrap-server", cluster_bootstrap("kafka_a"), "--create", "--topic", topic,
          "--partitions", "1", "--replication-factor", "1")
    lines = ["%s-%04d" % (topic, i) for i in range(400)]
    produce(a, cluster_bootstrap("kafka_a"), topic, lines)
    consumed = consume(a, "kafka_a", topic, group, "--max-messages", "250", "--consumer-property",
                       "auto.offset.reset=earliest", timeout_ms=60000)
    assert len(consumed) == 250
    wait_until("offsets of %s translated on B" % group,
               lambda: group_offsets(b, cluster_bootstrap("kafka_b"), group), timeout=180, interval=5)
    reverse = [name.replace("A-to-B", "B-to-A") for name in (SOURCE, CHECKPOINT)]
    failback_worker = node(host, hosts_of("failback_workers")[0])
    done = False
    try:
        result = ansible_playbook(REPO / "playbooks" / "failover.yml", "-e", json.dumps(
            {"failover_groups": [group], "failover_report_dir": str(tmp_path), "mm2_smoke_fetch_dir": str(tmp_path)}))
        assert result.returncode == 0, played(result)
        status = rest(host, "/connectors?expand=status")
        assert {e["status"]["connector"]["state"] for e in status.values()} == {"STOPPED"}
        assert "PASS   reconcile  A->B     %s -> %s" % (topic, topic) in result.stdout
        report = json.loads((tmp_path / "failover-A-to-B.json").read_text())
        on_b = report["target"][group]["partitions"]
        assert [(p["topic"], p["partition"]) for p in on_b] == [(topic, 0)]
        assert report["source"][group]["partitions"][0]["committed"] == 250
        # 400 records and the transaction markers of exactly-once: where clients' records on B begin
        (boundary,) = report["boundary"][topic]
        assert boundary["end"] >= 400
        print("failover drill: %s resumes on B at %s; the mirrored records end at %s"
              % (group, on_b[0]["committed"], boundary["end"]))
        resumed = consume(b, "kafka_b", topic, group)
        assert set(consumed) | set(resumed) == set(lines), "no record lost across the failover"
        assert len(set(consumed) & set(resumed)) <= 100

        # The clients on B: a producer writes 300 records, the group reads 200 of them.
        written_on_b = ["%s-b%04d" % (topic, i) for i in range(300)]
        produce(b, cluster_bootstrap("kafka_b"), topic, written_on_b)
        read_on_b = consume(b, "kafka_b", topic, group, "--max-messages", "200", timeout_ms=60000)
        assert read_on_b == written_on_b[:200]

        refused = ansible_playbook(REPO / "playbooks" / "failback.yml", "-e", json.dumps(
            {"failback_groups": [group], "failback_report_dir": str(tmp_path / "elsewhere")}))
        assert refused.returncode != 0
        assert "failover-A-to-B.json is missing" in refused.stdout + refused.stderr, played(refused)
        assert "Run the reverse flow's workers" not in refused.stdout, played(refused)

        started = time.monotonic()
        back = ansible_playbook(REPO / "playbooks" / "failback.yml", "-e", json.dumps(
            {"failback_groups": [group], "failback_report_dir": str(tmp_path)}))
        took = time.monotonic() - started
        assert back.returncode == 0, played(back)
        status = rest(host, "/connectors?expand=status")
        assert {n: e["status"]["connector"]["state"] for n, e in status.items()} == {SOURCE: "RUNNING", CHECKPOINT: "RUNNING"}
        reverse_status = rest(failback_worker, "/connectors?expand=status")
        assert {n: e["status"]["connector"]["state"] for n, e in reverse_status.items()} == dict.fromkeys(reverse, "STOPPED")
        done = True

        on_a = every_record(a, "kafka_a", topic)
        assert sorted(on_a) == sorted(lines + written_on_b), "A holds its records and B's, each once"
        rest_on_a = consume(a, "kafka_a", topic, group)
        assert set(read_on_b) | set(rest_on_a) == set(written_on_b), "no record lost across the failback"
        # MirrorMaker 2's translation: at most the records the group read on B, never one from before
        # the failover (how many depends on the offset syncs its store keeps, docs/disaster_recovery.md)
        reread = set(read_on_b) & set(rest_on_a)
        assert not set(rest_on_a) & set(lines), "the group does not go back to records it read before the failover"

        # A->B runs again after the records the reverse flow copied: none of them comes back to B.
        after = ["%s-a%04d" % (topic, i) for i in range(100)]
        produce(a, cluster_bootstrap("kafka_a"), topic, after)
        expected = sorted(lines + written_on_b + after)

        def all_on_b():
            got = every_record(b, "kafka_b", topic)
            return got if set(after) <= set(got) else None

        on_b_again = wait_until("the records written on A after the failback on B", all_on_b, timeout=180, interval=5)
        assert sorted(on_b_again) == expected, "B holds every record once"
        failback_report = json.loads((tmp_path / "failback-B-to-A.json").read_text())
        print("failback round trip: %.0f s run, %d records copied back, %s resumed on A at %s re-reading %d, "
              "lag at the end %s" % (took, len(written_on_b), group,
                                     failback_report["groups"][group]["partitions"][0]["committed"], len(reread),
                                     [r["records"] for r in failback_report["lag_at_the_end"]]))
        again = ansible_playbook(REPO / "playbooks" / "failback.yml", "-e", json.dumps(
            {"failback_groups": [group], "failback_report_dir": str(tmp_path)}))
        assert again.returncode != 0
        assert ("%s (RUNNING), %s (RUNNING) of flow A->B still run; fail over first" % (SOURCE, CHECKPOINT)
                in " ".join((again.stdout + again.stderr).split())), played(again)
    finally:
        if not done:
            # Never both flows at once with identity names: each would copy the other's records back.
            stop = ("import urllib.request,sys;[urllib.request.urlopen(urllib.request.Request("
                    "'http://127.0.0.1:8083/connectors/%s/stop' % n, method='PUT'), timeout=20) for n in sys.argv[1:]]")
            failback_worker.run("python3 -c %s %s" % (shlex.quote(stop), " ".join(reverse)))
            restored = ansible_playbook(REPO / "playbooks" / "disaster_recovery.yml")
            assert restored.returncode == 0, played(restored)


def test_a_worker_taken_out_by_the_variable_hands_its_connectors_over_and_loses_nothing(host, tmp_path):
    """connect_state: absent on the second worker, while a producer writes into A: the run stops it,
    removes its unit and files, and returns only once the worker that stays runs every connector and
    task (after scheduled.rebalance.max.delay.ms); no record is lost on B. A run limited to the
    leaving worker is refused before anything changes; a second run changes nothing; the worker
    then comes back."""
    keep_name, leave_name = hosts_of("connect_workers")
    leave = node(host, leave_name)
    extra = tmp_path / "taken-out.yml"
    extra.write_text("all:\n  hosts:\n    %s:\n      connect_state: absent\n" % leave_name)
    connect_yml = str(REPO / "playbooks" / "connect.yml")
    refused = ansible_playbook(connect_yml, "-i", str(extra), "--limit", leave_name)
    assert refused.returncode != 0
    assert ("connect_state: absent on %s, but %s, which take over its tasks, are not in this run"
            % (leave_name, keep_name)) in refused.stdout + refused.stderr, played(refused)
    assert leave.service("kafka-connect").is_running

    topic = unique("dr-scale-in")
    a, b = a_host(host), b_host(host)
    kafka(a, "kafka-topics.sh", "--bootstrap-server", cluster_bootstrap("kafka_a"), "--create", "--topic", topic,
          "--partitions", "2", "--replication-factor", "1")
    producer = Producer(a, cluster_bootstrap("kafka_a"), topic, interval=0.05)
    try:
        started = time.monotonic()
        result = ansible_playbook(connect_yml, "-i", str(extra))
        took = time.monotonic() - started
        assert result.returncode == 0, played(result)
        # read at once: the run itself waited until the worker that stays ran them
        status = rest(host, "/connectors?expand=status")
        assert sorted(status) == sorted([SOURCE, CHECKPOINT])
        placed = {(name, t.get("id")): (t["state"], t["worker_id"]) for name, entry in status.items()
                  for t in [entry["status"]["connector"]] + entry["status"]["tasks"]}
        assert set(placed.values()) == {("RUNNING", "%s:8083" % keep_name)}, placed
        producer.writing("the run")
        assert not leave.file("/etc/systemd/system/kafka-connect.service").exists
        assert not leave.service("kafka-connect").is_running
        assert not leave.file("/etc/kafka-connect").exists and not leave.file("/var/log/kafka-connect").exists
        print("%s taken out in a %.0f s run; %s runs %s" % (leave_name, took, keep_name, sorted(placed, key=str)))
        again = ansible_playbook(connect_yml, "-i", str(extra))
        assert again.returncode == 0, played(again)
        for name in (keep_name, leave_name):
            assert recap.changed(again.stdout).get(name) == 0, played(again)
        producer.finish("the second run")

        def on_b():
            got = kafka(b, "kafka-console-consumer.sh", "--bootstrap-server", cluster_bootstrap("kafka_b"), "--topic",
                        topic, "--from-beginning", "--timeout-ms", "10000", "--isolation-level", "read_committed",
                        timeout=120, check=False).stdout.split()
            return got if producer.records <= set(got) else None

        got = wait_until("all %d records of %s on B (read_committed)" % (producer.count, topic), on_b, timeout=300,
                         interval=5)
        print("%s on B: %d records for %d produced, %d duplicates"
              % (topic, len(got), producer.count, len(got) - len(set(got))))
    finally:
        producer.stop()
        back = ansible_playbook(connect_yml)
        assert back.returncode == 0, played(back)
    assert leave.service("kafka-connect").is_running and leave.service("kafka-connect").is_enabled
