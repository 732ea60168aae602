# -*- coding: utf-8 -*-
# Copyright: kafkaops maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
"""The mm2_smoke role's rules and plan: what it refuses, and the smoke job's configuration.

One home for what the role's ``vars/main.yml`` held as Jinja: the refusals of its input (one
message per fault, naming the variable), the checks' timeouts derived from MirrorMaker 2's own
intervals, each cluster's client settings with the Kerberos login the job needs, and the job's
configuration file. The ``mm2_smoke_plan`` action builds the plan once, on the controller, from
the flow model (``mm2_config``); the role's tasks only render and run it.
"""

from __future__ import annotations

import os
import re

from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.common import bundle, secrets
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.common.values import as_int

MODES = ("smoke", "reconcile")
# The job's checks (smoke/mm2_smoke/config.py ALL_CHECKS).
ALL_CHECKS = ("markers", "offsets", "configs", "new_topics", "heartbeats", "cycles")
# The waits the job knows (smoke/mm2_smoke/config.py DEFAULT_CHECKS["timeouts"]).
TIMEOUTS = ("markers", "offsets", "configs", "new_topic", "heartbeats", "bootstrap")
TOPIC_RX = re.compile(r"^[A-Za-z0-9._-]+$")
USER_RX = re.compile(r"^[a-z_][a-z0-9_-]{0,31}$")
# host:port of a standalone master, the host a name, an IPv4 address or a bracketed IPv6 one
ADDRESS_RX = re.compile(r"^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+):[0-9]{1,5}$")
LOCAL_RX = re.compile(r"^local(\[.*\])?$")
# What the lag exporter may listen on: a host name or IPv4 address, or an IPv6 address (unbracketed)
LISTEN_HOST_RX = re.compile(r"^[A-Za-z0-9._-]+$")
LISTEN_IPV6_RX = re.compile(r"^[0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*$")
# Paths the lag exporter's unit line carries (ExecStart=, Environment=): nothing systemd would split,
# unquote or expand
UNIT_PATH_RX = re.compile(r"^/[A-Za-z0-9._/+-]*$")
# The lag exporter's reading bounds each read (mm2_lag_info's timeout); kafka_client allows 1 to 300.
LAG_EXPORTER_TIMEOUT_MAX = 300
SPARK_KAFKA_JAR = "spark-sql-kafka-0-10_"
# MirrorMaker 2's own defaults (MirrorSourceConfig, MirrorCheckpointConfig) for a key mm2.properties
# leaves out.
MM2_DEFAULTS = {
    "refresh.topics.interval.seconds": 600,
    "refresh.groups.interval.seconds": 600,
    "emit.checkpoints.interval.seconds": 60,
    "sync.topic.configs.interval.seconds": 600,
}
# Margins over MM2's intervals: a new topic is created on the target within a topic refresh (a
# minute more for its first records); a new group is found within refresh.groups.interval.seconds
# and checkpointed one emit.checkpoints.interval.seconds after its task (re)started
# (bench/checkpoint_latency measured at most 2.5 s beyond those two, both layouts, idle and with a
# core busy: 30 s leaves an order of magnitude for a loaded host); a config is synced within its
# interval.
NEW_TOPIC_MARGIN = 60
OFFSETS_MARGIN = 30
CONFIGS_MARGIN = 60
# What goes to the smoke host as one zip (the role's __mm2_smoke_zip, on PYTHONPATH): the job's package
# and the collection's module_utils the lag exporter imports (tests/unit/test_lag_exporter_files.py
# holds this list to what smoke/mm2_smoke/lag_exporter.py loads).
JOB_PACKAGE = "mm2_smoke"
MODULE_UTILS_PREFIX = "ansible_collections/kafkaops/mirrormaker/plugins/module_utils"
LAG_READER_FILES = (
    "common/__init__.py",
    "common/rules.py",
    "common/secrets.py",
    "common/values.py",
    "connect/__init__.py",
    "connect/rest.py",
    "kafka/__init__.py",
    "kafka/client.py",
    "kafka/probe.py",
    "mm2/__init__.py",
    "mm2/lag.py",
    "mm2/lag_reader.py",
    "mm2/naming.py",
)


def _unique(items):
    return list(dict.fromkeys(items))


def is_local(master):
    return bool(LOCAL_RX.match(master or ""))


def is_standalone(master):
    return (master or "").startswith("spark://")


def master_addresses(master):
    """The host:port of a standalone master and its standbys (spark://h1:7077,h2:7077); [] for another master."""
    return master[len("spark://"):].split(",") if is_standalone(master) else []


def jar_names(jars_src, listdir=os.listdir, isdir=os.path.isdir, isfile=os.path.isfile):
    """The sorted names of the *.jar files in ``jars_src`` on the controller."""
    if not jars_src or not isdir(jars_src):
        return []
    return sorted(name for name in listdir(jars_src) if name.endswith(".jar") and isfile(os.path.join(jars_src, name)))


def faults(inputs, isdir=os.path.isdir, listdir=os.listdir, isfile=os.path.isfile):
    """One message per fault of the role's input (``inputs``: the mm2_smoke_* values without the prefix)."""
    out = []
    mode, checks, topics = inputs["mode"], list(inputs["checks"] or []), list(inputs["topics"] or [])
    if mode not in MODES:
        out.append("mm2_smoke_mode: %s is not smoke or reconcile" % mode)
    if not checks:
        out.append("mm2_smoke_checks: must name at least one of %s" % ", ".join(ALL_CHECKS))
    unknown = _unique(c for c in checks if c not in ALL_CHECKS)
    if unknown:
        out.append("mm2_smoke_checks: %s is not one of %s" % (", ".join(unknown), ", ".join(ALL_CHECKS)))
    if not topics:
        out.append("mm2_smoke_topics: must name at least one topic")
    bad_topics = [t for t in topics if not TOPIC_RX.match(str(t))]
    if bad_topics:
        out.append("mm2_smoke_topics: %s are not topic names (letters, digits, . _ -)" % bad_topics)
    for key in ("records", "payload_bytes", "partitions"):
        if as_int(inputs[key]) < 1:
            out.append("mm2_smoke_%s: %s is not a positive number" % (key, inputs[key]))
    for key, value in (inputs["timeouts"] or {}).items():
        if key not in TIMEOUTS:
            out.append("mm2_smoke_timeouts.%s: not a wait of the job (%s)" % (key, ", ".join(TIMEOUTS)))
        elif value is not None and (isinstance(value, bool) or as_int(value) < 1):
            out.append("mm2_smoke_timeouts.%s: %s is not a positive number of seconds" % (key, value))
    jars_src = inputs["jars_src"] or ""
    if not jars_src:
        out.append("mm2_smoke_jars_src: the job reads Kafka through Spark's Kafka source; give the directory of "
                   "its jars (lab/spark/fetch.sh makes them)")
    elif not isdir(jars_src):
        out.append("mm2_smoke_jars_src: %s is not a directory on the controller" % jars_src)
    elif not any(name.startswith(SPARK_KAFKA_JAR) for name in jar_names(jars_src, listdir, isdir, isfile)):
        out.append("mm2_smoke_jars_src: %s has no %s*.jar (lab/spark/fetch.sh makes them)" % (jars_src, SPARK_KAFKA_JAR))
    bad_addresses = [a for a in master_addresses(inputs["spark_master"]) if not ADDRESS_RX.match(a)]
    if bad_addresses:
        out.append("mm2_smoke_spark_master: %s is not spark://host:port[,host:port...] (a standalone master and its "
                   "standbys; %s is not host:port)" % (inputs["spark_master"], ", ".join(bad_addresses)))
    if as_int(inputs["spark_master_timeout"]) < 1:
        out.append("mm2_smoke_spark_master_timeout: %s is not a positive number of seconds"
                   % inputs["spark_master_timeout"])
    user = inputs["user"] or ""
    if user and not USER_RX.match(user):
        out.append("mm2_smoke_user: %s is not a user name (lower case letters, digits, _ and -)" % user)
    if user == "root":
        out.append("mm2_smoke_user: the job runs unprivileged; root is refused (empty runs it as the connection's user)")
    wheels_src = inputs["wheels_src"] or ""
    if wheels_src and not isdir(wheels_src):
        out.append("mm2_smoke_wheels_src: %s is not a directory on the controller" % wheels_src)
    return out + lag_exporter_faults(inputs)


def lag_exporter_faults(inputs):
    """The lag exporter's faults; its address, port and timeout are checked whether it is enabled or not."""
    out = []
    address = str(inputs["lag_exporter_address"] or "")
    if not (LISTEN_HOST_RX.match(address) or LISTEN_IPV6_RX.match(address)):
        out.append("mm2_smoke_lag_exporter_address: %r is not a host name or an IP address to listen on" % address)
    port = inputs["lag_exporter_port"]
    if isinstance(port, bool) or not 1 <= as_int(port) <= 65535:
        out.append("mm2_smoke_lag_exporter_port: %s is not a port (1 to 65535)" % (port,))
    timeout = inputs["lag_exporter_timeout"]
    if isinstance(timeout, bool) or not 1 <= as_int(timeout) <= LAG_EXPORTER_TIMEOUT_MAX:
        out.append("mm2_smoke_lag_exporter_timeout: %s is not from 1 to %d seconds" % (timeout, LAG_EXPORTER_TIMEOUT_MAX))
    if inputs["lag_exporter_enabled"] and not inputs["user"]:
        out.append("mm2_smoke_lag_exporter_enabled: the exporter is a service of mm2_smoke_user, which is empty "
                   "(the connection's user runs the job, a service has none)")
    for key in ("install_dir", "python") if inputs["lag_exporter_enabled"] else ():
        value = str(inputs[key] or "")
        if value and not UNIT_PATH_RX.match(value):
            out.append("mm2_smoke_%s: %r goes into the lag exporter's systemd unit: an absolute path of letters, digits "
                       "and . _ / + - only" % (key, value))
    return out


def _host_port(address, port):
    return "%s:%d" % ("[%s]" % address if ":" in address else address, as_int(port))


def lag_exporter_cluster_faults(model_clients):
    """The exporter, like the role's lag reading, passes the reader no client settings: it reaches
    PLAINTEXT clusters only, so a secured one is refused rather than served as a failed reading."""
    secured = ["%s (%s)" % (alias, protocol) for alias, protocol in sorted(
        (alias, str((client.get("properties") or {}).get("security.protocol") or "PLAINTEXT").upper())
        for alias, client in model_clients.items()) if protocol != "PLAINTEXT"]
    if not secured:
        return []
    return ["mm2_smoke_lag_exporter_enabled: the lag exporter reaches PLAINTEXT clusters only (the role passes it no "
            "client settings); secured: %s" % ", ".join(secured)]


def lag_exporter_listen(inputs):
    """The exporter's ``--listen`` ADDR:PORT, an IPv6 address in brackets."""
    return _host_port(str(inputs["lag_exporter_address"]), inputs["lag_exporter_port"])


def lag_exporter_url(inputs):
    """Its /metrics as the smoke host itself reaches it: loopback for a wildcard address."""
    address = str(inputs["lag_exporter_address"])
    local = {"0.0.0.0": "127.0.0.1", "::": "::1"}.get(address, address)
    return "http://%s/metrics" % _host_port(local, inputs["lag_exporter_port"])


def _mm2_int(properties, key):
    return as_int(properties.get(key, MM2_DEFAULTS[key]))


def timeouts(properties, given):
    """Each check's wait: derived from MM2's intervals as mm2.properties renders them, ``given`` last."""
    derived = {
        "new_topic": _mm2_int(properties, "refresh.topics.interval.seconds") + NEW_TOPIC_MARGIN,
        "offsets": _mm2_int(properties, "refresh.groups.interval.seconds")
        + _mm2_int(properties, "emit.checkpoints.interval.seconds") + OFFSETS_MARGIN,
        "configs": _mm2_int(properties, "sync.topic.configs.interval.seconds") + CONFIGS_MARGIN,
    }
    derived.update(given or {})
    return derived


def keytab(jaas, mirrormaker_keytab_src, mirrormaker_config_dir):
    """The keytab of the job's Kerberos login: the JAAS settings' own, else MirrorMaker 2's when it has one."""
    if (jaas or {}).get("keytab"):
        return jaas["keytab"]
    return (mirrormaker_config_dir or "/etc/kafka-mirrormaker") + "/mm2.keytab" if mirrormaker_keytab_src else ""


def krb5_jaas(keytab_path, principal):
    return ('com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true storeKey=true keyTab="%s" '
            'principal="%s";' % (keytab_path, principal or ""))


def _gssapi(properties):
    return str(properties.get("sasl.mechanism", "")).upper() == "GSSAPI"


def clusters(model_clients, jaas, keytab_path):
    """The job's client settings per alias: the cluster's own properties, and for a GSSAPI cluster
    without a JAAS line of its own, MirrorMaker 2's JVM-wide Kerberos login (mm2_smoke_jaas) as
    its line, which both kafka-python (the keytab) and Spark's Kafka source read."""
    jaas = jaas or {}
    line = krb5_jaas(keytab_path, jaas.get("principal"))
    out = {}
    for alias, client in model_clients.items():
        props = dict(client.get("properties") or {})
        if _gssapi(props) and "sasl.jaas.config" not in props and jaas.get("login_module", "") == "kerberos":
            props["sasl.jaas.config"] = line
        out[alias] = dict(client, properties=props)
    return out


def kerberos_faults(job_clusters, jaas, keytab_path):
    """GSSAPI clusters the job could not log in to: no JAAS line, or a derived one without keytab or principal."""
    jaas = jaas or {}
    line = krb5_jaas(keytab_path, jaas.get("principal"))
    out = []
    for alias, client in job_clusters.items():
        props = client.get("properties") or {}
        if not _gssapi(props):
            continue
        if "sasl.jaas.config" not in props:
            out.append("%s: sasl.mechanism GSSAPI without sasl.jaas.config, and mm2_smoke_jaas (default "
                       "mirrormaker_jaas) has no kerberos login" % alias)
        elif props["sasl.jaas.config"] == line and (not keytab_path or not jaas.get("principal")):
            out.append("%s: the kerberos login of mm2_smoke_jaas needs a principal and a keytab "
                       "(mm2_smoke_jaas.keytab, or mirrormaker_keytab_src)" % alias)
    return out


def _combine(base, over):
    """Ansible's combine(recursive=true): mappings merged key by key, anything else replaced."""
    out = dict(base)
    for key, value in (over or {}).items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _combine(out[key], value)
        else:
            out[key] = value
    return out


def checks(inputs, properties):
    """The job's ``checks`` section."""
    refresh = _mm2_int(properties, "refresh.topics.interval.seconds")
    sync = str(properties.get("sync.topic.configs.enabled", True)).lower() == "true"
    section = {
        "enabled": inputs["checks"],
        "topics": inputs["topics"],
        "records": as_int(inputs["records"]),
        "payload_bytes": as_int(inputs["payload_bytes"]),
        "partitions": as_int(inputs["partitions"]),
        "timeouts": timeouts(properties, inputs["timeouts"]),
        "refresh_interval_s": refresh,
        "sync_topic_configs": sync,
        "reconcile": {"topics": inputs["reconcile_topics"] or inputs["topics"]},
    }
    return _combine(section, inputs["extra_checks"])


def zip_members(smoke_dir, module_utils_dir, walk=os.walk):
    """(arcname, path) of the zip: the job's package under ``smoke_dir``, and the lag reader's files of
    ``module_utils_dir`` with a package marker at each level above them (zipimport finds no namespace
    package in a zip that has no directory entries)."""
    members = bundle.tree_members(os.path.join(smoke_dir, JOB_PACKAGE), JOB_PACKAGE, walk)
    members.extend(("%s/%s" % (MODULE_UTILS_PREFIX, name), os.path.join(module_utils_dir, *name.split("/")))
                   for name in LAG_READER_FILES)
    parts = MODULE_UTILS_PREFIX.split("/")
    members.extend(("/".join(parts[:depth] + ["__init__.py"]), os.devnull) for depth in range(1, len(parts) + 1))
    return sorted(members)


def artifacts(inputs, isdir=os.path.isdir, listdir=os.listdir, isfile=os.path.isfile, getsize=os.path.getsize):
    """The directories of versioned files the role copies as a whole, each as {name, src, manifest}
    (bundle.manifest): the jars when given, the wheels only for the venv the role makes."""
    wheels = inputs["wheels_src"] if not inputs["python"] else ""
    return [{"name": name, "src": src, "manifest": bundle.manifest(src, listdir, isfile, getsize)}
            for name, src in (("wheels", wheels), ("jars", inputs["jars_src"])) if src and isdir(src)]


def plan(inputs, model, mirrormaker_keytab_src="", mirrormaker_config_dir="", isdir=os.path.isdir,
         listdir=os.listdir, isfile=os.path.isfile, getsize=os.path.getsize):
    """(plan, errors) of the role: ``errors`` one message per fault; ``plan`` what its tasks render and run.

    ``model``: what mm2_config returned (properties, flows, clients).
    """
    errors = faults(inputs, isdir, listdir, isfile)
    keytab_path = keytab(inputs["jaas"], mirrormaker_keytab_src, mirrormaker_config_dir)
    job_clusters = clusters(model["clients"], inputs["jaas"], keytab_path)
    if not [f for f in model["flows"] if f.get("enabled")]:
        errors.append("mm2_smoke_flows has no enabled flow to check.")
    kerberos = kerberos_faults(job_clusters, inputs["jaas"], keytab_path)
    if kerberos:
        errors.append("mm2_smoke: clusters %s" % "; ".join(kerberos))
    if inputs["lag_exporter_enabled"]:
        errors.extend(lag_exporter_cluster_faults(model["clients"]))
    master = inputs["spark_master"]
    config = {
        "version": 1,
        "clusters": job_clusters,
        "krb5_conf": inputs["krb5_conf"] or None,
        "flows": model["flows"],
        "checks": checks(inputs, model["properties"]),
    }
    return {
        "config": config,
        "has_secrets": secrets.has_secrets(job_clusters),
        "jars": jar_names(inputs["jars_src"], listdir, isdir, isfile),
        "artifacts": artifacts(inputs, isdir, listdir, isfile, getsize),
        "local": is_local(master),
        "standalone": is_standalone(master),
        "master_addresses": master_addresses(master),
        "lag_exporter_listen": lag_exporter_listen(inputs) if not errors else None,
        "lag_exporter_url": lag_exporter_url(inputs) if not errors else None,
    }, errors
