"""connect_connector against a REAL Kafka Connect worker (harness.Lab.start_connect: connect-distributed.sh
from the lab's Kafka archive, next to the session's real broker B), run the way a user runs it:
ansible-playbook on localhost with the collection found through <repo>/.collections.

The connectors are the MirrorMaker 2 connectors of flow A->B as plugins/module_utils/mm2/connect.py
derives them from the flow model, for topics and groups ``connect-connector-test.*`` only (the
session's dedicated MM2 copies ``mm2-smoke.*``; the two never meet).

What the worker did is read from two places the module does not write: the REST API itself
(config and status, through urllib), and the worker's request log (Connect logs every REST
request it served, with its status), which shows that check mode sent no write and that the
connector not named in any play was never touched.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import time
import urllib.error

import pytest
import yaml

import harness

COLLECTIONS = os.path.join(harness.REPO, ".collections")
SOURCE = "A-to-B-MirrorSourceConnector"
BYSTANDER = "A-to-B-MirrorCheckpointConnector"
FAILING = "connect-connector-test-failing"
TOPIC = "connect-connector-test.orders"
SECRET = "Tru5tst0re-pw!7731"
MASK = "********"
# Connect's request log line (RestServer), e.g.
# "PUT /connectors/x/pause HTTP/1.1" 202 0 "" "kafkaops.mirrormaker-connect_rest" 12
ACCESS = re.compile(r'"(GET|PUT|POST|PATCH|DELETE) (\S+) HTTP/1\.1" (\d{3}) \S+ "[^"]*" "([^"]*)"')
MODULE_AGENT = "kafkaops.mirrormaker-connect_rest"  # connect_rest.USER_AGENT


# ------------------------------------------------------------------------------ the REST API

def api(url, method, path, body=None):
    """(status, decoded body) of one request to the worker, as the test's own independent view:
    an error status is an answer to check, not an exception."""
    try:
        return harness.connect_rest(method, url + path, body)
    except urllib.error.HTTPError as exc:
        raw = exc.read()
        return exc.code, json.loads(raw) if raw else None


def live_config(url, name):
    code, body = api(url, "GET", "/connectors/%s/config" % name)
    return body if code == 200 else None


def live_status(url, name):
    code, body = api(url, "GET", "/connectors/%s/status" % name)
    return body if code == 200 else None


def states(status):
    return (status["connector"]["state"], [t["state"] for t in status["tasks"]])


def wait_states(url, name, connector, tasks=None, timeout=60):
    """Until the connector and all its tasks (``tasks`` of them, if given) are in ``connector`` state."""
    deadline = time.time() + timeout
    status = None
    while time.time() < deadline:
        status = live_status(url, name)
        if (status and status["connector"]["state"] == connector and all(t["state"] == connector for t in status["tasks"])
                and (tasks is None or len(status["tasks"]) == tasks)):
            return status
        time.sleep(0.5)
    raise AssertionError("%s not %s with %s tasks after %ss: %s" % (name, connector, tasks, timeout, status))


def put(url, name, config, state="RUNNING"):
    """Set a test's starting point through the REST API (not through the module under test): the
    connector running with its task (the topic on A), then paused if asked. Paused at once, before
    its task configs were generated, it would have no task."""
    code, body = api(url, "PUT", "/connectors/%s/config" % name, config)
    assert code in (200, 201), body
    tasks = 1 if config["connector.class"].endswith(".MirrorSourceConnector") else None
    status = wait_states(url, name, "RUNNING", tasks)
    if state == "PAUSED":
        api(url, "PUT", "/connectors/%s/pause" % name)
        status = wait_states(url, name, "PAUSED", tasks)
    return status


def delete(url, name):
    api(url, "DELETE", "/connectors/%s" % name)
    deadline = time.time() + 30
    while live_config(url, name) is not None or live_status(url, name) is not None:
        assert time.time() < deadline, "%s still known to Connect" % name
        time.sleep(0.5)


class AccessLog(object):
    """The REST requests the worker logged after a mark (a byte offset in its log)."""

    def __init__(self, path):
        self.path = path

    def mark(self):
        return os.path.getsize(self.path)

    def text(self, mark):
        # Connect logs a request once it has answered it, so a play's requests are all in the log
        # when the play has returned.
        with open(self.path, "rb") as handle:
            handle.seek(mark)
            return handle.read().decode("utf-8", "replace")

    def since(self, mark):
        """[(method, path, status)] of the module's requests logged after mark (not the test's own)."""
        return [(m.group(1), m.group(2), int(m.group(3))) for m in ACCESS.finditer(self.text(mark))
                if m.group(4) == MODULE_AGENT]

    def writes(self, mark):
        return [r for r in self.since(mark) if r[0] != "GET"]


# ------------------------------------------------------------------------------- the module

def play(tmp_path, params, *args):
    """Run connect_connector in a playbook on localhost, as a user does (default callback, its
    output as shown on a terminal); returns (process, whole output, the registered result)."""
    result_file = tmp_path / "result.json"
    if result_file.exists():
        result_file.unlink()
    playbook = [{
        "name": "Manage a connector",
        "hosts": "all",
        "gather_facts": False,
        "tasks": [{
            "name": "Connector",
            # the parameters as literal task arguments, as a playbook gives them (no value holds '{{')
            "block": [{"name": "Connector", "kafkaops.mirrormaker.connect_connector": params,
                       "register": "__connector"}],
            "always": [{"name": "Keep the result for the test", "check_mode": False, "diff": False,
                        "ansible.builtin.copy": {"content": "{{ __connector | to_json }}", "dest": str(result_file),
                                                 "mode": "0600"}}],
        }],
    }]
    (tmp_path / "play.yml").write_text(yaml.safe_dump(playbook, sort_keys=False))
    (tmp_path / "vars.json").write_text(json.dumps({"ansible_python_interpreter": sys.executable}))
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=COLLECTIONS, ANSIBLE_CONFIG=os.path.join(harness.REPO, "ansible.cfg"),
               ANSIBLE_FORCE_COLOR="0", ANSIBLE_NOCOLOR="1")
    playbook_bin = shutil.which("ansible-playbook", path=os.path.dirname(sys.executable)) or "ansible-playbook"
    proc = subprocess.run([playbook_bin, "-i", "localhost,", "-c", "local", "-e", "@" + str(tmp_path / "vars.json"),
                           str(tmp_path / "play.yml"), *args],
                          capture_output=True, text=True, timeout=300, env=env, check=False)
    output = proc.stdout + proc.stderr
    sys.stderr.write(output[-6000:])
    result = json.loads(result_file.read_text()) if result_file.exists() else None
    return proc, output, result


# --------------------------------------------------------------------------------- fixtures

@pytest.fixture(scope="module")
def connect(lab):
    """One real Connect worker for flow A->B for this file; a topic on A for the source connector's task."""
    from kafka.admin import KafkaAdminClient, NewTopic
    admin = KafkaAdminClient(bootstrap_servers=lab.bootstrap("A"), client_id="connect-connector-test")
    try:
        if TOPIC not in admin.list_topics():
            admin.create_topics([NewTopic(TOPIC, num_partitions=1, replication_factor=1)])
    finally:
        admin.close()
    url = lab.start_connect("A", "B", workers=1)[0]
    yield {"url": url, "log": AccessLog(lab.workers[-1]["out"]), "dir": lab.workers[-1]["dir"]}
    lab.stop_connect()


@pytest.fixture(scope="module")
def configs(lab):
    """The flow's connector configs as mm2_connect derives them from the flow model."""
    mm2_model, mm2_connect = harness.load_connect()
    clusters = [{"alias": name, "bootstrap_servers": [lab.bootstrap(name)]} for name in ("A", "B")]
    flows = [{"source": "A", "target": "B", "topics": [r"connect-connector-test\..*"],
              "groups": [r"connect-connector-test\..*"]}]
    model = mm2_model.load(clusters, flows, {}, {"exactly_once": False, "flow_defaults": {"tasks.max": 1}})
    assert not model.errors, model.errors
    return dict(mm2_connect.connectors(model, "A", "B"))


@pytest.fixture(scope="module")
def bystander(connect, configs):
    """A connector no play names: created once through the REST API, checked after every test."""
    put(connect["url"], BYSTANDER, configs[BYSTANDER])
    return live_config(connect["url"], BYSTANDER)


@pytest.fixture(autouse=True)
def bystander_survives(connect, bystander):
    mark = connect["log"].mark()
    yield
    assert live_config(connect["url"], BYSTANDER) == bystander
    touched = [r for r in connect["log"].since(mark) if BYSTANDER in r[1] or (r[0], r[1]) == ("GET", "/connectors")]
    assert touched == [], "requests on the connector no play names: %s" % touched


@pytest.fixture
def source(connect, configs):
    """The source connector's config; the connector absent at the start of the test."""
    delete(connect["url"], SOURCE)
    return dict(configs[SOURCE])


def params(connect, name=SOURCE, **kwargs):
    return dict(kwargs, url=connect["url"], name=name)


# ------------------------------------------------------------------------------------ tests

def test_create_runs_the_connector_and_a_rerun_changes_nothing(tmp_path, connect, source):
    proc, _out, result = play(tmp_path, params(connect, config=source))
    assert proc.returncode == 0 and result["changed"] and result["actions"] == ["create"], result
    # the module waited: the connector and its task (the topic on A) run
    assert states(result["status"]) == ("RUNNING", ["RUNNING"]), result["status"]
    assert states(live_status(connect["url"], SOURCE)) == ("RUNNING", ["RUNNING"])
    assert live_config(connect["url"], SOURCE) == dict(source, name=SOURCE)
    assert result["connector"] == {"name": SOURCE, "exists": True, "config": dict(source, name=SOURCE)}

    mark = connect["log"].mark()
    proc, _out, again = play(tmp_path, params(connect, config=source))
    assert proc.returncode == 0 and not again["changed"] and again["actions"] == [], again
    assert connect["log"].writes(mark) == []


def test_rendered_values_compare_equal_to_the_live_strings(tmp_path, connect, source):
    """tasks.max 1 and a bool given as YAML types: Connect stores strings; still no change."""
    put(connect["url"], SOURCE, dict(source, **{"sync.topic.acls.enabled": "false"}))
    typed = dict(source, **{"tasks.max": 1, "sync.topic.acls.enabled": False,
                            "topics": [r"connect-connector-test\..*"]})
    proc, _out, result = play(tmp_path, params(connect, config=typed))
    assert proc.returncode == 0 and not result["changed"], result


def test_diff_shows_the_change_and_never_the_secret(tmp_path, connect, source):
    secrets_file = os.path.join(connect["dir"], "secrets.properties")
    with open(secrets_file, "w") as handle:
        handle.write("truststore.password=%s-from-file\n" % SECRET)
    reference = "${file:%s:truststore.password}" % secrets_file
    put(connect["url"], SOURCE, dict(source, **{"source.cluster.ssl.truststore.password": "old-" + SECRET}))
    wanted = dict(source, **{"tasks.max": 2, "source.cluster.ssl.truststore.password": SECRET,
                             "target.cluster.ssl.truststore.password": reference})

    proc, output, result = play(tmp_path, params(connect, config=wanted), "--diff", "-vvv")
    assert proc.returncode == 0 and result["changed"] and result["actions"] == ["update config"], result
    assert SECRET not in output and "old-" + SECRET not in output
    assert SECRET not in json.dumps(result)
    assert MASK in output
    # the default callback's diff, as a user reads it
    assert "-    tasks.max: '1'" in output and "+    tasks.max: '2'" in output
    assert "-    source.cluster.ssl.truststore.password: '********'" in output
    assert "+    source.cluster.ssl.truststore.password: '******** (changed)'" in output
    # a provider reference is where the secret is, not the secret: shown as it is (the callback
    # may fold the long line, so the structured diff is compared)
    assert result["diff"]["after"]["target.cluster.ssl.truststore.password"] == reference
    assert result["connector"]["config"]["target.cluster.ssl.truststore.password"] == reference
    # the worker got the real values, and keeps the reference unresolved in the config it shows
    live = live_config(connect["url"], SOURCE)
    assert live["source.cluster.ssl.truststore.password"] == SECRET and live["tasks.max"] == "2"
    assert live["target.cluster.ssl.truststore.password"] == reference
    assert states(result["status"]) == ("RUNNING", ["RUNNING"])


def test_check_mode_reports_the_change_and_writes_nothing(tmp_path, connect, source):
    put(connect["url"], SOURCE, source)
    before = live_config(connect["url"], SOURCE)
    mark = connect["log"].mark()
    proc, output, result = play(tmp_path, params(connect, config=dict(source, **{"tasks.max": 3}), state="paused"),
                                "--check", "--diff")
    assert proc.returncode == 0 and result["changed"] and result["actions"] == ["update config", "pause"], result
    assert "+    tasks.max: '3'" in output
    assert connect["log"].writes(mark) == []
    assert connect["log"].since(mark), "the worker logged no request at all: is this its log?"
    assert live_config(connect["url"], SOURCE) == before
    assert states(live_status(connect["url"], SOURCE)) == ("RUNNING", ["RUNNING"])


def test_pause_then_resume_with_running(tmp_path, connect, source):
    put(connect["url"], SOURCE, source)
    proc, _out, result = play(tmp_path, params(connect, config=source, state="paused"))
    assert proc.returncode == 0 and result["actions"] == ["pause"], result
    assert states(result["status"]) == ("PAUSED", ["PAUSED"])
    assert states(live_status(connect["url"], SOURCE)) == ("PAUSED", ["PAUSED"])

    proc, _out, again = play(tmp_path, params(connect, state="paused"))
    assert proc.returncode == 0 and not again["changed"], again

    mark = connect["log"].mark()
    proc, _out, resumed = play(tmp_path, params(connect, config=source, state="running"))
    assert proc.returncode == 0 and resumed["actions"] == ["resume"], resumed
    assert connect["log"].writes(mark) == [("PUT", "/connectors/%s/resume" % SOURCE, 202)]
    assert states(resumed["status"]) == ("RUNNING", ["RUNNING"])
    assert states(live_status(connect["url"], SOURCE)) == ("RUNNING", ["RUNNING"])


def test_present_leaves_a_paused_connector_paused(tmp_path, connect, source):
    put(connect["url"], SOURCE, source, state="PAUSED")
    proc, _out, result = play(tmp_path, params(connect, config=source, wait_timeout=20))
    assert proc.returncode == 0 and not result["changed"], result
    assert states(live_status(connect["url"], SOURCE)) == ("PAUSED", ["PAUSED"])


def test_stop_then_running_starts_it_again(tmp_path, connect, source):
    put(connect["url"], SOURCE, source)
    proc, _out, result = play(tmp_path, params(connect, config=source, state="stopped"))
    assert proc.returncode == 0 and result["actions"] == ["stop"], result
    # KIP-875: a stopped connector has no tasks, and no task configs (what the module waits on)
    assert states(result["status"]) == ("STOPPED", [])
    assert states(live_status(connect["url"], SOURCE)) == ("STOPPED", [])
    assert api(connect["url"], "GET", "/connectors/%s/tasks" % SOURCE) == (200, [])

    proc, _out, resumed = play(tmp_path, params(connect, state="running"))
    assert proc.returncode == 0 and resumed["actions"] == ["resume"], resumed
    assert states(resumed["status"]) == ("RUNNING", ["RUNNING"])


def test_restarted_restarts_connector_and_tasks(tmp_path, connect, source):
    put(connect["url"], SOURCE, source)
    mark = connect["log"].mark()
    proc, _out, result = play(tmp_path, params(connect, state="restarted"))
    assert proc.returncode == 0 and result["changed"] and result["actions"] == ["restart"], result
    assert connect["log"].writes(mark) == [("POST", "/connectors/%s/restart?includeTasks=true&onlyFailed=false" % SOURCE,
                                            202)]
    assert states(result["status"]) == ("RUNNING", ["RUNNING"])
    text = connect["log"].text(mark)
    assert "Connector '%s' restart successful" % SOURCE in text and "Task '%s-0' restart successful" % SOURCE in text


def test_absent_deletes_and_absent_again_changes_nothing(tmp_path, connect, source):
    put(connect["url"], SOURCE, source)
    proc, _out, result = play(tmp_path, params(connect, state="absent"), "--diff")
    assert proc.returncode == 0 and result["changed"] and result["actions"] == ["delete"], result
    assert result["connector"]["exists"] is False and result["diff"]["after"] == {}
    assert live_config(connect["url"], SOURCE) is None and live_status(connect["url"], SOURCE) is None

    proc, _out, again = play(tmp_path, params(connect, state="absent"))
    assert proc.returncode == 0 and not again["changed"] and again["actions"] == [], again


@pytest.mark.parametrize("start, setting, value, failed, first_line", [
    # passes Connect's validation; the task's consumer refuses it when the task starts
    ("absent", "consumer.auto.offset.reset", "bogus", "task 0",
     "org.apache.kafka.common.config.ConfigException: Invalid value bogus for configuration auto.offset.reset"),
    # the same change to a running connector: right after the PUT its status still shows the old
    # task RUNNING, and the new one fails a moment later
    ("running", "consumer.auto.offset.reset", "bogus", "task 0",
     "org.apache.kafka.common.config.ConfigException: Invalid value bogus for configuration auto.offset.reset"),
    # passes validation; the connector fails compiling its topic filter when it starts
    ("absent", "topics", "(", "connector", "java.util.regex.PatternSyntaxException: Unclosed group near index 1"),
])
def test_a_failure_is_reported_with_its_trace(tmp_path, connect, configs, start, setting, value, failed, first_line):
    delete(connect["url"], FAILING)
    if start == "running":
        put(connect["url"], FAILING, configs[SOURCE])
    config = dict(configs[SOURCE], **{setting: value})
    started = time.monotonic()
    try:
        proc, output, result = play(tmp_path, params(connect, name=FAILING, config=config, wait_timeout=90))
        seconds = time.monotonic() - started
        assert proc.returncode != 0 and result["failed"], result
        lines = result["msg"].splitlines()
        worker = connect["url"].split("//")[1]
        assert lines[0] == "connector '%s': %s FAILED on worker %s" % (FAILING, failed, worker)
        assert lines[1].startswith(first_line)
        assert any(line.startswith("\tat org.apache.kafka.") for line in lines[2:])
        assert len(lines) <= 1 + 40 + 1
        assert first_line in output
        assert result["actions"] == ["create" if start == "absent" else "update config"]
        assert result["status"] is not None
        assert seconds < 60, "the failure was not reported at once (%.0fs)" % seconds
    finally:
        delete(connect["url"], FAILING)


def test_unreachable_worker_names_url(tmp_path, connect):
    url = "http://127.0.0.1:%d" % harness.free_ports(1)[0]
    proc, _out, result = play(tmp_path, dict(url=url, name=SOURCE, state="absent"))
    assert proc.returncode != 0 and result["failed"]
    assert result["msg"].startswith("url: cannot reach Kafka Connect at %s (GET /connectors/%s/config): " % (url, SOURCE))
    assert "Connection refused" in result["msg"]


def test_the_connector_no_play_names_is_still_there(connect, bystander):
    """After every test above (the autouse check ran after each): listed, running, config unchanged."""
    assert BYSTANDER in api(connect["url"], "GET", "/connectors")[1]
    assert live_status(connect["url"], BYSTANDER)["connector"]["state"] == "RUNNING"


def mirrored_values(lab, topic, count, timeout=90):
    """The values of the first ``count`` records of ``topic`` on B (read_committed), waiting for them;
    then 3 s more, to see any record beyond them."""
    values, _end = harness.committed_values(lab.bootstrap("B"), topic, count, timeout, linger_s=3)
    return [value.decode() for value in values]


def test_offsets_start_a_new_source_connector_after_the_given_offset(tmp_path, connect, source, lab):
    """Created stopped with the last offset copied given (5), the real MirrorSourceConnector starts at
    the next record; a re-run changes nothing (a running connector's offsets are left alone); once
    stopped, other offsets are set and it runs again from there."""
    from kafka import KafkaProducer
    from kafka.admin import KafkaAdminClient, NewTopic
    topic = "connect-connector-test.offsets-%d" % int(time.time())
    admin = KafkaAdminClient(bootstrap_servers=lab.bootstrap("A"), client_id="connect-connector-test")
    try:
        admin.create_topics([NewTopic(topic, num_partitions=1, replication_factor=1)])
    finally:
        admin.close()
    producer = KafkaProducer(bootstrap_servers=lab.bootstrap("A"), acks="all")
    for i in range(10):
        producer.send(topic, ("r%d" % i).encode())
    producer.flush()
    producer.close()

    partition = {"cluster": "A", "topic": topic, "partition": 0}
    at_five = [{"partition": partition, "offset": {"offset": 5}}]
    mark = connect["log"].mark()
    proc, _out, result = play(tmp_path, params(connect, config=source, offsets=at_five, state="running"))
    assert proc.returncode == 0 and result["actions"] == ["create", "alter offsets", "resume"], result
    assert connect["log"].writes(mark) == [("POST", "/connectors", 201), ("PATCH", "/connectors/%s/offsets" % SOURCE, 200),
                                           ("PUT", "/connectors/%s/resume" % SOURCE, 202)]
    assert mirrored_values(lab, "A." + topic, 4) == ["r6", "r7", "r8", "r9"]

    mark = connect["log"].mark()
    proc, _out, again = play(tmp_path, params(connect, config=source, offsets=at_five, state="running"))
    assert proc.returncode == 0 and not again["changed"], again
    assert connect["log"].writes(mark) == []

    at_one = [{"partition": partition, "offset": {"offset": 1}}]
    proc, _out, stopped = play(tmp_path, params(connect, state="stopped"))
    assert proc.returncode == 0 and stopped["actions"] == ["stop"], stopped
    # where it stopped: the last record copied, r9
    assert [e["offset"] for e in stopped["offsets"] if e["partition"] == partition] == [{"offset": 9}]
    proc, _out, moved = play(tmp_path, params(connect, config=source, offsets=at_one, state="running"))
    assert proc.returncode == 0 and moved["actions"] == ["alter offsets", "resume"], moved
    # r2 to r9 copied again after r6 to r9: what a rewound source connector does
    assert mirrored_values(lab, "A." + topic, 12) == ["r6", "r7", "r8", "r9"] + ["r%d" % i for i in range(2, 10)]
