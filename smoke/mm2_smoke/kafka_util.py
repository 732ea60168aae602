"""kafka-python clients from Java-style client properties (the same keys MM2's clusters use)."""

import contextlib
import os
import re

# Java client key -> kafka-python keyword
_DIRECT = {
    "security.protocol": "security_protocol",
    "sasl.mechanism": "sasl_mechanism",
    "ssl.endpoint.identification.algorithm": None,   # handled below
    "ssl.truststore.location": "ssl_cafile",          # PEM only (ssl.truststore.type=PEM)
    "ssl.keystore.location": "ssl_certfile",          # PEM only
    "ssl.key.password": "ssl_password",
    "request.timeout.ms": "request_timeout_ms",
    "sasl.kerberos.service.name": "sasl_kerberos_service_name",
}
# Settings a Kafka client reads (Kafka's CommonClientConfigs, SslConfigs, SaslConfigs): one the job's
# kafka-python clients cannot honour is reported. A cluster's properties also carry what only
# MirrorMaker 2 or its Connect worker reads (offset.storage.replication.factor, replication.factor,
# producer.override.*, ...); no client of the job would read those, so they are not reported.
_CLIENT_PREFIXES = ("ssl.", "sasl.")
_CLIENT_KEYS = frozenset([
    "security.protocol", "security.providers", "client.id", "client.dns.lookup", "client.rack",
    "request.timeout.ms", "default.api.timeout.ms", "retry.backoff.ms", "retry.backoff.max.ms",
    "reconnect.backoff.ms", "reconnect.backoff.max.ms", "connections.max.idle.ms", "metadata.max.age.ms",
    "send.buffer.bytes", "receive.buffer.bytes", "socket.connection.setup.timeout.ms",
    "socket.connection.setup.timeout.max.ms", "metric.reporters", "metrics.num.samples",
    "metrics.sample.window.ms", "metrics.recording.level", "enable.metrics.push",
])
# kafka-python reads PEM files only: a PEM store type is what it does anyway.
_PEM_TYPES = ("ssl.truststore.type", "ssl.keystore.type")
_JAAS_OPT = re.compile(r'(\w+)\s*=\s*"((?:[^"\\]|\\.)*)"')
# JAAS lets an option's value go unquoted (useKeyTab=true); Krb5LoginModule's own lines mix both.
_JAAS_ANY_OPT = re.compile(r'(\w+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s;"]+))')
KRB5_LOGIN_MODULE = "com.sun.security.auth.module.Krb5LoginModule"


def jaas_options(line):
    """Options of a one-module sasl.jaas.config line, quoted or not."""
    return {key: quoted if quoted or not bare else bare for key, quoted, bare in _JAAS_ANY_OPT.findall(line or "")}


def kerberos_keytab_login(props):
    """(principal, keytab) when the cluster's client logs in with GSSAPI from a keytab named in its
    sasl.jaas.config (Krb5LoginModule useKeyTab=true), else None."""
    props = props or {}
    line = str(props.get("sasl.jaas.config") or "")
    if str(props.get("sasl.mechanism") or "").upper() != "GSSAPI" or KRB5_LOGIN_MODULE not in line:
        return None
    opts = jaas_options(line)
    if opts.get("useKeyTab", "").lower() != "true" or not opts.get("keyTab") or not opts.get("principal"):
        return None
    return opts["principal"], opts["keyTab"]


def python_client_kwargs(props):
    """(kwargs, ignored keys) for kafka-python from a cluster's properties: the ignored keys are the
    client settings kafka-python cannot honour; settings no client reads are left out of both."""
    kwargs, ignored = {}, []
    for key, value in (props or {}).items():
        value = "" if value is None else str(value)
        if key == "sasl.jaas.config":
            # a Krb5LoginModule line is the process's Kerberos login (kerberos_login), not a kwarg
            opts = {} if KRB5_LOGIN_MODULE in value else dict(_JAAS_OPT.findall(value))
            if "username" in opts:
                kwargs["sasl_plain_username"] = opts["username"]
            if "password" in opts:
                kwargs["sasl_plain_password"] = opts["password"]
        elif key == "ssl.endpoint.identification.algorithm":
            kwargs["ssl_check_hostname"] = value.strip().lower() == "https"
        elif _DIRECT.get(key):
            kwargs[_DIRECT[key]] = int(value) if key.endswith(".ms") else value
        elif key in _PEM_TYPES and value.strip().upper() == "PEM":
            continue
        elif key in _CLIENT_KEYS or key.startswith(_CLIENT_PREFIXES):
            ignored.append(key)
    return kwargs, ignored


class Unreachable(RuntimeError):
    """A cluster that did not answer within the bootstrap timeout, named as the report shows it."""

    def __init__(self, alias, roles, bootstrap, timeout_s, cause):
        self.alias = alias
        RuntimeError.__init__(self, "cluster %s (%s) unreachable at bootstrap servers %s within %ss: %s" % (
            alias, roles, bootstrap, timeout_s, cause))


class Clients(object):
    """Kafka clients for one cluster alias: each is created with kafka-python's own bootstrap
    retries bounded by ``timeout_s`` (a busy host or broker may answer late), and a cluster that
    never answers raises Unreachable naming the alias, its role in the flows and the bootstrap list."""

    def __init__(self, alias, bootstrap, props, roles, timeout_s=30):
        self.alias = alias
        self.bootstrap = bootstrap
        self.roles = roles
        self.timeout_s = timeout_s
        self.kwargs, self.unmapped = python_client_kwargs(props)

    def _make(self, factory, **kw):
        from kafka.errors import KafkaConnectionError, KafkaTimeoutError
        kw.update(self.kwargs)
        try:
            return factory(bootstrap_servers=self.bootstrap.split(","), bootstrap_timeout_ms=int(self.timeout_s * 1000),
                           **kw)
        except (KafkaTimeoutError, KafkaConnectionError) as exc:
            raise Unreachable(self.alias, self.roles, self.bootstrap, self.timeout_s, exc)

    def admin(self, client_id="mm2-smoke"):
        from kafka.admin import KafkaAdminClient
        return RetryingAdmin(self._make(KafkaAdminClient, client_id=client_id), self.timeout_s)

    def producer(self, client_id="mm2-smoke"):
        from kafka import KafkaProducer
        return self._make(KafkaProducer, client_id=client_id, acks="all", linger_ms=5)

    def consumer(self, client_id="mm2-smoke", group_id=None):
        from kafka import KafkaConsumer
        return self._make(KafkaConsumer, client_id=client_id, group_id=group_id, enable_auto_commit=False,
                          auto_offset_reset="earliest")


def transient_errors():
    """Errors of a broker that is busy or briefly away, not of a wrong request: worth a retry. A
    group coordinator not elected or still loading (a cluster formatted a moment ago) refuses the
    request without applying it, so it is one of them."""
    from kafka import errors
    return (errors.KafkaTimeoutError, errors.KafkaConnectionError, errors.NodeNotReadyError,
            errors.RequestTimedOutError, errors.CoordinatorNotAvailableError, errors.NotCoordinatorError,
            errors.CoordinatorLoadInProgressError)


def raise_partition_error(answer, what):
    """Raise the first partition error of a per-partition answer ({TopicPartition: error class},
    as kafka-python's ``alter_group_offsets`` returns instead of raising); return ``answer``."""
    from kafka import errors
    if isinstance(answer, dict):
        for tp, err in sorted(answer.items(), key=lambda item: tuple(item[0])):
            if isinstance(err, type) and issubclass(err, errors.KafkaError) and err is not errors.NoError:
                raise err("%s: %s partition %d refused" % (what, tp.topic, tp.partition))
    return answer


class RetryingAdmin(object):
    """An admin client whose calls that are safe to repeat (reads of metadata, offsets, configs; a
    group's offsets set to given values) retry transient errors until ``timeout_s`` has passed since
    the first try, then raise the last one. A busy datacenter host, or a broker other work keeps
    busy, answers late rather than not at all. Other calls that change the cluster are passed
    through once.

    A group commit answers per partition, and kafka-python returns those errors instead of raising
    them: on a cluster that has never hosted a group, the first commit creates __consumer_offsets
    and is refused (the coordinator still loads) while the call itself succeeds. Such an answer is
    raised here, so a refused commit is retried or reported, never taken as done."""

    PER_PARTITION = frozenset(["alter_group_offsets"])

    REPEATABLE = frozenset(["describe_topics", "list_topics", "list_partition_offsets", "describe_configs",
                            "list_group_offsets", "describe_cluster", "alter_group_offsets"])

    def __init__(self, admin, timeout_s, pause_s=0.5, clock=None, sleep=None):
        import time
        self._admin = admin
        self._timeout_s = timeout_s
        self._pause_s = pause_s
        self._clock = clock or time.monotonic
        self._sleep = sleep or time.sleep

    def __getattr__(self, name):
        attr = getattr(self._admin, name)
        if name not in self.REPEATABLE:
            return attr

        def call(*args, **kwargs):
            deadline = self._clock() + self._timeout_s
            transient = transient_errors()
            while True:
                try:
                    answer = attr(*args, **kwargs)
                    if name in self.PER_PARTITION:
                        raise_partition_error(answer, "%s of %s" % (name, args[0] if args else kwargs))
                    return answer
                except transient:
                    if self._clock() + self._pause_s >= deadline:
                        raise
                    self._sleep(self._pause_s)
        return call


def cluster_roles(flows):
    """{alias: "source of A->B, target of B->A"}: how the report names a cluster's side."""
    roles = {}
    for flow in flows:
        for side in ("source", "target"):
            roles.setdefault(flow[side], []).append("%s of %s" % (side, flow["name"]))
    return {alias: ", ".join(items) for alias, items in roles.items()}


def clients_for(cfg):
    """Clients per cluster alias the enabled flows use."""
    flows = cfg["enabled_flows"]
    timeout = float(cfg["checks"]["timeouts"].get("bootstrap") or 30)
    out = {}
    for alias, roles in cluster_roles(flows).items():
        flow = [f for f in flows if alias in (f["source"], f["target"])][0]
        side = "source" if flow["source"] == alias else "target"
        cluster = cfg["clusters"].get(alias) or {}
        out[alias] = Clients(alias, cluster.get("bootstrap_servers") or flow[side + "_bootstrap_servers"],
                             cluster.get("properties") or {}, roles, timeout)
    return out


class KerberosLoginFailed(RuntimeError):
    pass


_KRB5_ENV = ("KRB5_CONFIG", "KRB5_CLIENT_KTNAME", "KRB5CCNAME")


@contextlib.contextmanager
def kerberos_login(cfg, clients):
    """The process's Kerberos setup for kafka-python's GSSAPI clients, restored on exit.

    kafka-python (3.0.12, kafka/net/sasl/gssapi.py) builds its security context from the default
    initiator credential and takes none from its caller, so the cluster's keytab login has to
    become the process default: MIT's library reads KRB5_CONFIG, KRB5CCNAME and KRB5_CLIENT_KTNAME
    each time it makes a context. The ticket cache is a MEMORY one of this run, primed here with a
    TGT for the JAAS line's principal: the job neither reads nor overwrites a ticket cache of the
    user's (kinit), a principal the keytab does not hold fails here, once, naming keytab and
    principal, and when the TGT expires the library gets a new one from the client keytab. One
    default credential per process means one keytab login for all clusters."""
    gssapi_aliases = sorted(a for a in clients if str(_props(cfg, a).get("sasl.mechanism") or "").upper() == "GSSAPI")
    if not gssapi_aliases:
        yield None
        return
    logins = {}
    for alias in gssapi_aliases:
        login = kerberos_keytab_login(_props(cfg, alias))
        if login:
            logins.setdefault(login, []).append(alias)
    if len(logins) > 1:
        raise KerberosLoginFailed("clusters %s log in from different keytabs or principals (%s): kafka-python uses "
                                  "one Kerberos credential per process" % (
                                      ", ".join(gssapi_aliases),
                                      "; ".join("%s: %s from %s" % (",".join(a), p, k)
                                                for (p, k), a in sorted(logins.items()))))
    saved = {name: os.environ.get(name) for name in _KRB5_ENV}
    try:
        if cfg.get("krb5_conf"):
            os.environ["KRB5_CONFIG"] = cfg["krb5_conf"]
        login = None
        if logins:
            (principal, keytab), aliases = list(logins.items())[0]
            ccache = "MEMORY:mm2-smoke-%d-%s" % (os.getpid(), cfg.get("run_id") or "run")
            os.environ["KRB5CCNAME"] = ccache
            os.environ["KRB5_CLIENT_KTNAME"] = keytab
            login = _prime_ticket_cache(principal, keytab, ccache, aliases, cfg.get("krb5_conf"))
        yield login
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def _props(cfg, alias):
    return (cfg["clusters"].get(alias) or {}).get("properties") or {}


def _prime_ticket_cache(principal, keytab, ccache, aliases, krb5_conf):
    try:
        import gssapi
    except (ImportError, OSError) as exc:
        raise KerberosLoginFailed("clusters %s use GSSAPI: kafka-python needs the gssapi library (pip install gssapi; "
                                  "it builds against MIT Kerberos' libkrb5-dev / krb5-devel): %s"
                                  % (", ".join(aliases), exc))
    try:
        name = gssapi.Name(principal, gssapi.NameType.kerberos_principal)
        creds = gssapi.Credentials(name=name, usage="initiate", store={"client_keytab": keytab, "ccache": ccache})
        return {"principal": str(creds.name), "keytab": keytab, "clusters": aliases, "lifetime_s": creds.lifetime}
    except gssapi.exceptions.GSSError as exc:
        raise KerberosLoginFailed("clusters %s: Kerberos login as %s from keytab %s (krb5.conf %s) failed: %s" % (
            ", ".join(aliases), principal, keytab, krb5_conf or "the system's", " ".join(str(exc).split())))


def unreachable(clients):
    """{alias: Unreachable} for the clusters that do not answer, probed side by side."""
    from concurrent.futures import ThreadPoolExecutor

    def probe(client):
        try:
            client.admin("mm2-smoke-probe").close()
        except Unreachable as exc:
            return exc
        return None

    with ThreadPoolExecutor(max_workers=max(1, len(clients))) as pool:
        found = dict(zip(clients, pool.map(probe, clients.values())))
    return {alias: exc for alias, exc in found.items() if exc is not None}


def partitions_of(adm, topic):
    """Partition count of a topic, None when it does not exist."""
    from kafka.errors import KafkaConnectionError, KafkaTimeoutError
    try:
        desc = adm.describe_topics([topic])
    except (KafkaTimeoutError, KafkaConnectionError):
        raise  # a cluster that stopped answering is not a missing topic
    except Exception:  # noqa: BLE001 - UnknownTopicOrPartition and friends
        return None
    for item in desc:
        if item.get("name") == topic and item.get("error_code", 0) == 0:
            return len(item.get("partitions") or [])
    return None


def end_offsets(adm, topic, partitions, spec="latest"):
    from kafka import TopicPartition
    from kafka.admin import OffsetSpec
    want = OffsetSpec.LATEST if spec == "latest" else OffsetSpec.EARLIEST
    res = adm.list_partition_offsets({TopicPartition(topic, p): want for p in range(partitions)})
    return {tp.partition: v.offset for tp, v in res.items()}


def assign_all(adm, cons, topic, back=None):
    """Assign every partition of ``topic`` to ``cons``, from the beginning or ``back`` records
    before each end; False (nothing assigned) while the topic does not exist."""
    from kafka import TopicPartition
    parts = partitions_of(adm, topic)
    if not parts:
        return False
    tps = [TopicPartition(topic, p) for p in range(parts)]
    cons.assign(tps)
    if back is None:
        cons.seek_to_beginning()
    else:
        ends = end_offsets(adm, topic, parts)
        for tp in tps:
            cons.seek(tp, max(0, ends[tp.partition] - back))
    return True


def poll_decoded(cons, decode, skip_error):
    """One poll's records decoded with ``decode(key, value)``; records raising ``skip_error`` are skipped."""
    for records in cons.poll(timeout_ms=500).values():
        for rec in records:
            try:
                yield decode(rec.key, rec.value)
            except skip_error:
                continue


def offsets_for_timestamp(adm, topic, partitions, timestamp_ms):
    """First offset with timestamp >= timestamp_ms per partition (end offset when none)."""
    from kafka import TopicPartition
    res = adm.list_partition_offsets({TopicPartition(topic, p): int(timestamp_ms) for p in range(partitions)})
    ends = end_offsets(adm, topic, partitions)
    out = {}
    for tp, val in res.items():
        out[tp.partition] = val.offset if val is not None and val.offset is not None and val.offset >= 0 \
            else ends[tp.partition]
    return out


def topic_config(adm, topic, key):
    from kafka.admin import ConfigResource, ConfigResourceType
    res = adm.describe_configs([ConfigResource(ConfigResourceType.TOPIC, topic, configs={key: None})],
                               config_filter="all")
    entry = ((res.get("topic") or {}).get(topic) or {}).get(key)
    return entry.get("value") if entry else None
