"""The disaster-recovery layout under exactly the derived ACLs, on REAL secured clusters.

A real distributed Connect worker (connect-distributed.sh from the lab archive) runs with the worker
properties the connect role renders (mm2_connect.plan) for an identity-policy, exactly-once flow
A -> B with the offset syncs on the target, and logs in to B as the SCRAM user ``mm2c``, which is
no super user; the connectors log in to A and B as ``mm2c`` through Kafka's FileConfigProvider,
their secrets in files as the role writes them. ``mm2c`` holds exactly the bindings the derivation
gives for that plan (the transactional ids of exactly-once included).

Records must reach B under their own names, read_committed. Then the exactly-once classes and the
worker's own class are removed in turn and the test shows what breaks, restoring each and
restarting what failed through the REST API.
"""

import json
import os
import re
import urllib.request
import uuid

import pytest

import harness
from jobtools import use_collection

use_collection()
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.mm2 import acls as mm2_acls  # noqa: E402
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.mm2 import connect as mm2_connect  # noqa: E402
from test_mm2_acls import AUTHZ, produce, toggle, values_on_b, wait  # noqa: E402  pylint: disable=wrong-import-position

USER = "mm2c"
PRINCIPAL = "User:" + USER
TOPIC = "acl-eos.orders"
FLOWS = [{"source": "A", "target": "B", "topics": ["acl-eos.*"], "groups": ["acl-eos-app.*"],
          "replication_policy": "identity", "sync_group_offsets": True}]


def rest(url, method="GET", body=None):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as resp:
        text = resp.read().decode()
        return json.loads(text) if text else None


def statuses(url):
    return rest(url + "/connectors?expand=status")


def all_running(url, names):
    try:
        found = statuses(url)
    except Exception:  # noqa: BLE001 - not answering yet
        return False
    for name in names:
        status = (found.get(name) or {}).get("status") or {}
        if status.get("connector", {}).get("state") != "RUNNING":
            return False
        tasks = status.get("tasks") or []
        if name.endswith("MirrorSourceConnector") and not tasks:
            return False
        if any(t.get("state") != "RUNNING" for t in tasks):
            return False
    return True


def failed_traces(url):
    out = []
    for name, entry in (statuses(url) or {}).items():
        status = entry.get("status") or {}
        for item in [status.get("connector", {})] + list(status.get("tasks") or []):
            if item.get("state") == "FAILED":
                out.append("%s: %s" % (name, (item.get("trace") or "").splitlines()[0][:200]))
    return out


@pytest.fixture(scope="module")
def dr(secured_lab, tmp_path_factory):
    lab = secured_lab
    for cluster in ("A", "B"):
        if USER not in lab.brokers[cluster]["users"]:
            lab.add_scram_user(cluster, USER)
    from kafka.admin import KafkaAdminClient, NewTopic
    admin = KafkaAdminClient(bootstrap_servers=lab.bootstrap("A"), **lab.kafka_python_kwargs("A"))
    try:
        admin.create_topics([NewTopic(TOPIC, 1, 1)])
    finally:
        admin.close()
    tmp = tmp_path_factory.mktemp("dr-acls")
    clusters, flows, glob, _options = lab.mm2_inputs(FLOWS, users={"A": USER, "B": USER})
    glob = dict((k, v) for k, v in glob.items() if not mm2_connect.WORKER_KEYS.match(k))
    port = harness.free_ports(1)[0]
    settings = {"rest": {"port": port, "advertised_host": "127.0.0.1", "bind_host": "127.0.0.1"},
                "secrets_dir": str(tmp / "secrets"), "worker_defaults": {"offset.flush.interval.ms": 2000}}
    plan = mm2_connect.plan(clusters, flows, glob, {"exactly_once": True, "internal_rest": True,
                                                    "flow_defaults": {"tasks.max": 2}}, "A", "B", settings)
    assert plan["errors"] == []
    derived = mm2_acls.derive_layouts((), [plan], PRINCIPAL)
    assert derived["errors"] == []
    toggle(lab, derived["acls"], True)
    os.makedirs(settings["secrets_dir"])
    for entry in plan["secret_files"].values():
        with os.fdopen(os.open(entry["path"], os.O_WRONLY | os.O_CREAT, 0o600), "w") as fh:
            fh.write("".join("%s=%s\n" % kv for kv in entry["properties"].items()))
    worker = lab.start_worker(plan["worker_properties"])
    url, proc, out = worker["url"], worker["proc"], worker["out"]
    try:
        for name, config in plan["connectors"].items():
            rest("%s/connectors/%s/config" % (url, name), "PUT", config)
        produce(lab, 20, "seed", TOPIC)
        assert wait(lambda: all_running(url, plan["connectors"]), 120, step=2.0), failed_traces(url)
        yield {"lab": lab, "plan": plan, "derived": derived["acls"], "url": url, "out": out}
    finally:
        harness.stop_process(proc, 30)


def test_identity_exactly_once_replication_with_exactly_the_derived_acls(dr):
    lab = dr["lab"]
    assert PRINCIPAL not in lab.brokers["B"]["super_users"]
    assert wait(lambda: sorted(values_on_b(lab, TOPIC, "read_committed")) == sorted("seed-%d" % i for i in range(20)), 90, step=2.0)
    # no password in what the REST API shows
    for name in dr["plan"]["connectors"]:
        config = rest("%s/connectors/%s/config" % (dr["url"], name))
        for cluster in ("A", "B"):
            assert lab.brokers[cluster]["users"][USER] not in json.dumps(config)
    with open(dr["out"], errors="replace") as fh:
        assert [line for line in fh if AUTHZ.search(line)] == []


@pytest.mark.parametrize("cls", ["eos-tasks", "eos-worker", "herder"])
def test_removing_a_connect_class_breaks_what_it_is_there_for(dr, cls):
    lab, url = dr["lab"], dr["url"]
    removed = dict((c, [b for b in bindings if cls in b["classes"]]) for c, bindings in dr["derived"].items())
    with open(dr["out"], errors="replace") as fh:
        seen = len(fh.readlines())
    toggle(lab, removed, False)
    try:
        tag = "probe-" + uuid.uuid4().hex[:6]
        produce(lab, 3, tag, TOPIC)
        if cls == "eos-worker":
            # the worker's transactional producer writes the config topic: a connector config change
            name = next(iter(dr["plan"]["connectors"]))
            config = dict(dr["plan"]["connectors"][name], **{"refresh.groups.interval.seconds": "6"})
            try:
                rest("%s/connectors/%s/config" % (url, name), "PUT", config)
            except Exception as exc:  # noqa: BLE001 - what the REST API answers is part of what breaks
                harness.log("PUT %s answered %s" % (name, exc))

        def broke():
            with open(dr["out"], errors="replace") as fh:
                lines = fh.readlines()[seen:]
            return [line.strip() for line in lines if AUTHZ.search(line)] or failed_traces(url)
        symptoms = broke() if wait(lambda: bool(broke()), 30) else []
    finally:
        toggle(lab, removed, True)
    harness.log("ACL class %s removed: %s" % (cls, (re.sub(r"^\[[^\]]*\]\s*", "", symptoms[0])[:220] if symptoms else "nothing")))

    def recovered():
        # a task may fail only after the class is back (its failure was still on its way), so the
        # failed ones are restarted on every look, not once
        if all_running(url, dr["plan"]["connectors"]):
            return True
        for name in dr["plan"]["connectors"]:
            try:
                rest("%s/connectors/%s/restart?includeTasks=true&onlyFailed=true" % (url, name), "POST")
            except Exception:  # noqa: BLE001 - a connector that did not fail answers "accepted" or "no content"
                pass
        return False
    assert wait(recovered, 180, step=5.0), failed_traces(url)
    assert symptoms, "nothing broke without class %s" % cls
