"""Helpers for the testinfra suites that Molecule runs against the lab hosts.

Every check runs the real Kafka tools inside the real hosts, reached over SSH with the connection
settings Molecule's inventory gives each host: nothing here stands in for Kafka, MirrorMaker or
systemd.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
import testinfra.utils.ansible_runner

REPO = Path(__file__).resolve().parents[2]
# tests/lib, shared with tests/live
sys.path.insert(0, str(REPO / "tests" / "lib"))
import bounded  # noqa: E402 pylint: disable=wrong-import-position
BIN = "/opt/kafka/current/bin"
INVENTORY = os.environ.get("MOLECULE_INVENTORY_FILE", "")

# A failed test keeps the services' own logs (artifacts) and prints the lines that explain most
# failures of a replication test: rebalances, task reconfiguration, zombie fencing, offset syncs
# and checkpoints, warnings and errors. The roles' default log directories.
ARTIFACTS = Path(os.environ.get("KAFKAOPS_ARTIFACTS_DIR") or REPO / ".cache" / "artifacts")
# log4j rolls them over every hour (connect.log.2026-11-26-18): the rolled files are kept too, or a
# verify that spans the hour loses its start.
HOST_LOGS = "/var/log/kafka-connect/*.log* /var/log/kafka-mirrormaker/*.log* /var/log/kafka/*.log*"
TELLING = re.compile(r"rebalanc|generation|fenc|reconfigur|task count|task config|checkpoint|offset.?sync"
                     r"|consumer groups?|following groups|ERROR|WARN", re.IGNORECASE)
# Repeated every few seconds, or once per partition, while all is well: kept in the files, left out
# of the excerpt (a CI log shows only so much, and these pushed the telling lines out of it).
ROUTINE = re.compile(r"\): Translated \d+ \(relative to|which do not have any offsets for topics that are accepted by the "
                     r"topic filter: \[\]|took \d+ ms \(org\.apache\.kafka\.connect\.mirror\.Scheduler"
                     r"|No checkpointed highwatermark is found")
EXCERPT_LINES = 40


def hosts_of(group):
    return testinfra.utils.ansible_runner.AnsibleRunner(INVENTORY).get_hosts(group)


def host_spec(name):
    """testinfra spec of an inventory host: `podman exec` for hosts Ansible reaches that way, else
    the host's Ansible connection settings (for SSH hosts testinfra runs ssh with them directly).
    """
    variables = testinfra.utils.ansible_runner.AnsibleRunner(INVENTORY).get_variables(name)
    if variables.get("ansible_connection") in ("podman", "containers.podman.podman"):
        return "podman://" + variables.get("ansible_host", name)
    return "ansible://%s?ansible_inventory=%s" % (name, INVENTORY)


def targets(group):
    """Value for a test module's testinfra_hosts."""
    return [host_spec(name) for name in hosts_of(group)]


def node(host, name):
    """Another inventory host, reached the same way as the hosts under test."""
    return host.get_host(host_spec(name))


def started_at(host, unit):
    """When systemd last made ``unit`` active on ``host``, in monotonic microseconds: a larger value
    after a change means the change restarted it."""
    return int(host.check_output("systemctl show -p ActiveEnterTimestampMonotonic --value %s" % unit))


def cluster_bootstrap(group):
    return ",".join("%s:9092" % h for h in hosts_of(group))


def kafka(host, tool, *args, timeout=120, check=True):
    """Run bin/<tool> on `host`; returns the command result."""
    cmd = "timeout %d %s/%s %s" % (timeout, BIN, tool, " ".join(shlex.quote(str(a)) for a in args))
    result = host.run(cmd)
    if check:
        assert result.rc == 0, "%s failed (rc %s): %s %s" % (cmd, result.rc, result.stdout, result.stderr)
    return result


def produce(host, bootstrap, topic, lines, *extra):
    payload = "\n".join(lines) + "\n"
    cmd = "printf %%s %s | timeout 120 %s/kafka-console-producer.sh --bootstrap-server %s --topic %s %s" % (
        shlex.quote(payload), BIN, bootstrap, topic, " ".join(extra))
    result = host.run(cmd)
    assert result.rc == 0, result.stderr


PRODUCER = """import os
import time
written = 0
for i in range(%(count)d):
    if os.path.exists("/tmp/%(unit)s.stop"):
        break
    print("seq-%%05d" %% i, flush=True)
    written += 1
    time.sleep(%(interval)s)
with open("/tmp/%(unit)s.count", "w") as out:
    out.write(str(written))
"""


class Producer(object):
    """Records seq-00000, seq-00001, ... written into `topic` one every `interval` seconds by a
    console producer (acks=all) under systemd-run on `host`, while a test changes the deployment.
    It writes until `finish` (or `stop`): the change, not a count, decides how many, since a fixed
    count that an idle machine needs 60 s to write ended before the change did on a loaded one.
    The console producer's own defaults (3 retries of 1.5 s) drop a record sent into a
    single-broker cluster's restart; a test of the roles must not lose records of its own making,
    so it retries until the producer's delivery timeout."""

    # more than any change here lasts at the smallest interval: only a stop ends the writing
    LIMIT = 99999

    def __init__(self, host, bootstrap, topic, interval=0.03, producer_config=None):
        """``producer_config``: a client properties file on ``host`` (a secured cluster's login)."""
        self.host, self.count, self.unit = host, self.LIMIT, unique("producer")
        script = PRODUCER % {"count": self.count, "interval": interval, "unit": self.unit}
        login = " --producer.config %s" % shlex.quote(producer_config) if producer_config else ""
        host.run_expect([0], "cat > /tmp/%s.py <<'EOF'\n%sEOF" % (self.unit, script))
        host.run_expect([0], "systemd-run --unit %s /bin/sh -c 'python3 /tmp/%s.py | %s/kafka-console-producer.sh "
                        "--bootstrap-server %s --topic %s --producer-property acks=all "
                        "--message-send-max-retries 2147483647 --request-timeout-ms 30000%s'"
                        % (self.unit, self.unit, BIN, bootstrap, topic, login))

    def writing(self, during):
        """Assert it is still writing once `during` (a part of the change) is over: else that part
        did not run under load."""
        assert self.running(), "the producer stopped before %s ended: not a change under load" % during

    def finish(self, during, timeout=300):
        """The change under load ended with `during`: assert it wrote throughout, stop it and wait
        until what it wrote is acknowledged (`records` is then what it wrote)."""
        self.writing(during)
        self.stop()
        self.wait(timeout=timeout)

    @property
    def records(self):
        """What it wrote, once wait() has returned."""
        return {"seq-%05d" % i for i in range(self.count)}

    def stop(self):
        """Ask it to write no more (again is harmless: a test's `finally` stops it whatever failed);
        wait() then waits for what it wrote to be acknowledged."""
        self.host.run_expect([0], "touch /tmp/%s.stop" % self.unit)

    def running(self):
        return self.host.run("systemctl is-active %s" % self.unit).stdout.strip() == "active"

    def wait(self, timeout=300):
        wait_until("producer %s to finish" % self.unit, lambda: not self.running(), timeout=timeout)
        result = self.host.run("systemctl show -p Result --value %s" % self.unit).stdout.strip()
        assert result in ("success", ""), "producer %s ended with %s" % (self.unit, result)
        # read once here, not on every `records`: tests poll `records` while MirrorMaker catches up
        self.count = int(self.host.run_expect([0], "cat /tmp/%s.count" % self.unit).stdout.strip())


def consume(host, bootstrap, topic, count, timeout_ms=60000, *extra):
    result = kafka(host, "kafka-console-consumer.sh", "--bootstrap-server", bootstrap, "--topic", topic,
                   "--from-beginning", "--max-messages", count, "--timeout-ms", timeout_ms, *extra,
                   timeout=timeout_ms // 1000 + 60, check=False)
    return [line for line in result.stdout.splitlines() if line]


def topics(host, bootstrap):
    return kafka(host, "kafka-topics.sh", "--bootstrap-server", bootstrap, "--list").stdout.split()


def wait_until(what, probe, timeout=180, interval=3):
    """Poll `probe` until it returns a truthy value; fail naming `what` after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = probe()
        if last:
            return last
        time.sleep(interval)
    pytest.fail("timed out after %ds waiting for %s (last: %r)" % (timeout, what, last))


def unique(prefix):
    return "%s-%s" % (prefix, uuid.uuid4().hex[:8])


@pytest.fixture(scope="session")
def jmx_probe_class(tmp_path_factory):
    """JmxProbe compiled on the controller (the hosts carry only a JRE)."""
    out = tmp_path_factory.mktemp("jmxprobe")
    subprocess.run(["javac", "--release", "17", "-d", str(out), str(REPO / "tests/integration/java/JmxProbe.java")],
                   check=True)
    return out / "JmxProbe.class"


def ansible_playbook(playbook, *args, timeout=900):
    """Run one of the collection's playbooks against the Molecule inventory. ``timeout`` only
    catches a hang (the roles bound their own waits); a run that exceeds it fails the test with
    the end of what the play printed so far."""
    return bounded.run(["ansible-playbook", "-i", INVENTORY, str(playbook), *args], timeout)


def played(result):
    """The end of a play's output for an assertion message (bounded.tail; dr, 2026-11-27)."""
    return bounded.tail(result.stdout, result.stderr)


def keep_logs(test_name):
    """Copy every lab host's service logs (the last 20 MB of each) under ARTIFACTS/<scenario>/<test>
    and return an excerpt of their telling lines, per host."""
    where = ARTIFACTS / os.environ.get("MOLECULE_SCENARIO_NAME", "scenario") / re.sub(r"[^A-Za-z0-9_.-]+", "_", test_name)
    excerpt = ["logs kept in %s" % where]
    for name in hosts_of("all"):
        host = testinfra.get_host(host_spec(name))
        # Oldest first, so that a service's excerpt ends with its newest lines.
        listing = host.run("ls -1tr %s 2>/dev/null" % HOST_LOGS).stdout.split()
        for path in listing:
            text = host.run("tail -c 20000000 %s" % shlex.quote(path)).stdout
            target = where / name / Path(path).name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text)
            telling = [line for line in text.splitlines()
                       if TELLING.search(line) and not ROUTINE.search(line)][-EXCERPT_LINES:]
            if telling:
                excerpt.append("--- %s:%s (last %d telling lines)" % (name, path, len(telling)))
                excerpt.extend(telling)
    return "\n".join(excerpt)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """On a failed test, the lab's own account of it: its logs kept, their telling lines shown."""
    outcome = yield
    report = outcome.get_result()
    if report.when == "call" and report.failed and INVENTORY:
        try:
            # The failure's own lines again after the excerpt: a CI log that shows only its tail
            # still says what failed.
            failure = [line for line in report.longreprtext.splitlines() if line.startswith("E ")][:6]
            report.sections.append(("lab logs", "\n".join([keep_logs(item.name), "--- %s failed:" % item.name]
                                                          + failure)))
        except Exception as exc:  # the failure itself must still be reported
            report.sections.append(("lab logs", "could not keep the lab's logs: %r" % exc))
