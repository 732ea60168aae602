"""Local Kafka + MirrorMaker 2 for the smoke job's tests and bench/smoke_reconcile.py.

Real single-node KRaft brokers and real dedicated-mode MirrorMaker 2 on 127.0.0.1, from the lab
archive (.cache/kafka/kafka_2.13-*.tgz), with mm2.properties rendered by
plugins/module_utils/mm2/model.py (loaded by path). bench/mm2_throughput.py starts its brokers
with the same helpers. SparkCluster is a real Spark standalone cluster (one master, one worker) from
pyspark's own jars, for the job as spark-submit runs it on a cluster.
Lab.start_secured_broker starts a cluster with an authorizer and SASL/SCRAM users (kafka_acl's
tests, MirrorMaker 2 under a least-privilege principal), over TLS with ``tls=True`` (tls.Ca).
"""

import base64
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
SMOKE_DIR = os.path.join(REPO, "smoke")

# single-broker clusters need replication factor 1 everywhere
HARNESS_GLOBALS = {
    "replication.factor": 1,
    "checkpoints.topic.replication.factor": 1,
    "heartbeats.topic.replication.factor": 1,
    "offset-syncs.topic.replication.factor": 1,
    "offset.storage.replication.factor": 1,
    "status.storage.replication.factor": 1,
    "config.storage.replication.factor": 1,
}
# short MM2 intervals so that the checks finish in seconds (defaults: 600 s / 60 s)
FAST_INTERVALS = {
    "refresh.topics.interval.seconds": 5,
    "refresh.groups.interval.seconds": 5,
    "sync.topic.configs.interval.seconds": 5,
    "emit.checkpoints.interval.seconds": 2,
    "sync.group.offsets.interval.seconds": 2,
    "emit.heartbeats.interval.seconds": 1,
}


def log(msg):
    sys.stderr.write("[%s] %s\n" % (time.strftime("%H:%M:%S"), msg))
    sys.stderr.flush()


def _collection():
    """Make the repository importable as ansible_collections.kafkaops.mirrormaker (the .collections
    link tests/unit/conftest.py makes too)."""
    collections = os.path.join(REPO, ".collections")
    link = os.path.join(collections, "ansible_collections", "kafkaops", "mirrormaker")
    if not os.path.lexists(link):
        os.makedirs(os.path.dirname(link), exist_ok=True)
        os.symlink(REPO, link)
    if collections not in sys.path:
        sys.path.insert(0, collections)


def load_model():
    """The collection's MirrorMaker 2 flow model (module_utils/mm2/model.py)."""
    _collection()
    from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.mm2 import model
    return model


def format_properties(props):
    """``props`` as the lines of a Java properties file, written by the collection's own writer."""
    _collection()
    from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.common import properties
    return properties.format_properties(props)


def load_connect():
    """(mm2_model, mm2_connect): the collection's flow model and Connect plan."""
    _collection()
    from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.mm2 import connect as mm2_connect
    return load_model(), mm2_connect


def find_archive():
    env = os.environ.get("KAFKA_ARCHIVE")
    if env and os.path.isfile(env):
        return env
    d = os.path.join(REPO, ".cache", "kafka")
    cands = sorted(f for f in os.listdir(d) if re.match(r"kafka_2\.13-.*\.tgz$", f)) if os.path.isdir(d) else []
    return os.path.join(d, cands[-1]) if cands else None


def free_ports(count):
    socks, ports = [], []
    for _i in range(count):
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        socks.append(sock)
        ports.append(sock.getsockname()[1])
    for sock in socks:
        sock.close()
    return ports


def start_process(cmd, logfile, env=None):
    with open(logfile, "ab") as out:
        return subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                env=env, start_new_session=True)


def stop_process(proc, grace=30):
    if proc is None:
        return
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            proc.wait(grace)
        except subprocess.TimeoutExpired:
            log("pid %d did not stop in %ds, killing" % (proc.pid, grace))
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        pass


def wait_for_log(path, pattern, timeout, proc):
    deadline = time.time() + timeout
    rx = re.compile(pattern)
    while time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError("process exited (%s), see %s" % (proc.returncode, path))
        try:
            with open(path, errors="replace") as fh:
                if rx.search(fh.read()):
                    return
        except FileNotFoundError:
            pass
        time.sleep(0.3)
    raise RuntimeError("no /%s/ in %s after %ss" % (pattern, path, timeout))


def collections_path():
    """The built collection when test.sh made one (what users install), else the working tree."""
    installed = os.path.join(REPO, ".cache", "installed-collection")
    if os.path.isdir(os.path.join(installed, "ansible_collections", "kafkaops", "mirrormaker")):
        return installed
    return os.path.join(REPO, ".collections")


def ansible_playbook(inventory, playbook, *args, env=None):
    """ansible-playbook of that collection with the repository's ansible.cfg; ``env`` instead of
    os.environ underneath. The output's tail goes to stderr, which pytest -s shows."""
    env = dict(env or os.environ, ANSIBLE_COLLECTIONS_PATH=collections_path(),
               ANSIBLE_CONFIG=os.path.join(REPO, "ansible.cfg"), ANSIBLE_FORCE_COLOR="0",
               ANSIBLE_LOCALHOST_WARNING="false")
    binary = shutil.which("ansible-playbook", path=os.path.dirname(sys.executable)) or "ansible-playbook"
    proc = subprocess.run([binary, "-i", str(inventory), str(playbook), *args], capture_output=True, text=True,
                          timeout=900, env=env, check=False)
    sys.stderr.write(proc.stdout[-6000:] + proc.stderr[-2000:])
    return proc


def single_node_tail(data_dir):
    """The lines every single-node test broker ends with: one log dir, topics only when asked for,
    Kafka's internal topics with one replica, groups rebalanced at once."""
    return ["log.dirs=%s" % data_dir,
            "num.partitions=1",
            "auto.create.topics.enable=false",
            "group.initial.rebalance.delay.ms=0",
            "offsets.topic.replication.factor=1",
            "offsets.topic.num.partitions=4",
            "share.coordinator.state.topic.replication.factor=1",
            "share.coordinator.state.topic.min.isr=1",
            "transaction.state.log.replication.factor=1",
            "transaction.state.log.min.isr=1"]


def broker_props(path, data_dir, port, cport):
    with open(path, "w") as fh:
        fh.write("\n".join([
            "process.roles=broker,controller",
            "node.id=1",
            "controller.quorum.voters=1@127.0.0.1:%d" % cport,
            "listeners=PLAINTEXT://127.0.0.1:%d,CONTROLLER://127.0.0.1:%d" % (port, cport),
            "advertised.listeners=PLAINTEXT://127.0.0.1:%d" % port,
            "inter.broker.listener.name=PLAINTEXT",
            "controller.listener.names=CONTROLLER",
            "listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
        ] + single_node_tail(data_dir)) + "\n")


SCRAM_MECHANISM = "SCRAM-SHA-512"
STANDARD_AUTHORIZER = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
# The principal of the PLAINTEXT controller listener: the broker registers with its controller (the
# same process) through it, which StandardAuthorizer allows only a super user (CLUSTER_ACTION).
CONTROLLER_PRINCIPAL = "User:ANONYMOUS"
KERBEROS_SERVICE = "kafka"


def scram_jaas(user, secret):
    return 'org.apache.kafka.common.security.scram.ScramLoginModule required username="%s" password="%s";' % (
        user, secret)


def krb5_jaas(keytab, principal):
    """A JAAS line logging in from a keytab (Krb5LoginModule), as the broker and Java clients use it."""
    return ('com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true storeKey=true keyTab="%s" '
            'principal="%s";' % (keytab, principal))


def secured_broker_props(path, data_dir, port, cport, admin, admin_password, kerberos=None):
    """A combined KRaft node whose only client listener is SASL_PLAINTEXT with SCRAM-SHA-512, with
    StandardAuthorizer; the broker talks to itself over that listener as ``admin`` (a super user)
    and to its controller over a PLAINTEXT listener as User:ANONYMOUS (a super user too, since
    SCRAM cannot authenticate on a controller listener: its credentials live in the metadata the
    controller serves).  With ``kerberos`` ({keytab, principal, host}) the same listener also
    offers GSSAPI: the broker logs in from the keytab with the keys the kafka_broker role renders
    for kafka_broker_kerberos (kafka_kerberos.kerberos_properties) and advertises ``host``, the
    host name of its service principal."""
    mechanisms = [SCRAM_MECHANISM] + (["GSSAPI"] if kerberos else [])
    host = kerberos["host"] if kerberos else "127.0.0.1"
    gssapi = []
    if kerberos:
        load_connect()  # the collection's module_utils on sys.path
        from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.kafka import kerberos as kafka_kerberos
        sasl = kafka_kerberos.sasl_listeners([{"name": "SASL_PLAINTEXT", "port": port, "protocol": "SASL_PLAINTEXT"}],
                                             {"name": "CONTROLLER", "port": cport, "protocol": "PLAINTEXT"},
                                             ["broker", "controller"], {"sasl.enabled.mechanisms": ",".join(mechanisms)})
        role_keys = kafka_kerberos.kerberos_properties({"principal": kerberos["principal"], "service_name": KERBEROS_SERVICE},
                                                       kerberos["keytab"], sasl)
        gssapi = ["%s=%s" % item for item in sorted(role_keys.items())]
    with open(path, "w") as fh:
        fh.write("\n".join(gssapi + [
            "process.roles=broker,controller",
            "node.id=1",
            "controller.quorum.voters=1@127.0.0.1:%d" % cport,
            "listeners=SASL_PLAINTEXT://127.0.0.1:%d,CONTROLLER://127.0.0.1:%d" % (port, cport),
            "advertised.listeners=SASL_PLAINTEXT://%s:%d" % (host, port),
            "inter.broker.listener.name=SASL_PLAINTEXT",
            "controller.listener.names=CONTROLLER",
            "listener.security.protocol.map=CONTROLLER:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT",
            "sasl.enabled.mechanisms=%s" % ",".join(mechanisms),
            "sasl.mechanism.inter.broker.protocol=%s" % SCRAM_MECHANISM,
            "listener.name.sasl_plaintext.%s.sasl.jaas.config=%s" % (SCRAM_MECHANISM.lower(), scram_jaas(admin, admin_password)),
            "authorizer.class.name=%s" % STANDARD_AUTHORIZER,
            "super.users=User:%s;%s" % (admin, CONTROLLER_PRINCIPAL),
            "allow.everyone.if.no.acl.found=false",
        ] + single_node_tail(data_dir)) + "\n")


def tls_broker_props(path, keystore, truststore):
    """Move the secured listener of secured_broker_props' file ``path`` from SASL_PLAINTEXT to SASL_SSL,
    inter-broker traffic included (the broker verifies its own certificate like any client), with
    the PEM key store ``keystore`` (key and chain) and the CA file ``truststore`` given as the
    kafka_broker role renders kafka_broker_tls (kafka_tls.tls_properties).  The controller
    listener stays PLAINTEXT: only the node itself uses it, on 127.0.0.1."""
    with open(path) as fh:
        lines = fh.read().splitlines()
    lines = [line.replace("listener.name.sasl_plaintext.", "listener.name.sasl_ssl.").replace("SASL_PLAINTEXT", "SASL_SSL")
             for line in lines]
    left = [line for line in lines if "plaintext" in line.lower() and not line.startswith("listener.security.protocol.map=")]
    if left:
        raise RuntimeError("%s: settings of the SASL_PLAINTEXT listener left after the move to SASL_SSL: %s" % (path, left))
    load_connect()  # the collection's module_utils on sys.path
    from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.kafka import tls as kafka_tls
    listeners = kafka_tls.tls_listeners([{"name": "SASL_SSL", "protocol": "SASL_SSL"}],
                                        {"name": "CONTROLLER", "protocol": "PLAINTEXT"}, ["broker", "controller"])
    # no key_password: Kafka reads an unencrypted PKCS#8 key from a PEM key store as it is
    role_keys = kafka_tls.tls_properties({"keystore_src": keystore, "truststore_src": truststore}, keystore, truststore,
                                         listeners)
    lines += ["%s=%s" % item for item in sorted(role_keys.items())] + ["ssl.endpoint.identification.algorithm=https", ""]
    with open(path, "w") as fh:
        fh.write("\n".join(lines))


def new_password():
    """A throw-away password: letters and digits only (it also goes through kafka-configs.sh and JAAS lines)."""
    return "".join(c for c in base64.b64encode(os.urandom(24)).decode() if c.isalnum())[:24]


def cluster_id():
    value = "-"
    while not value[0].isalnum():
        value = base64.urlsafe_b64encode(os.urandom(16)).decode().rstrip("=")
    return value


class Lab(object):
    """Two single-node brokers (A, B) and at most one MirrorMaker 2 process at a time."""

    def __init__(self, archive=None, workdir=None, heap="-Xmx512m -Xms256m"):
        self.archive = archive or find_archive()
        if not self.archive:
            raise RuntimeError("no lab Kafka archive in .cache/kafka (lab/kafka-dist/assemble.sh)")
        self.owns_tmp = workdir is None
        self.tmp = workdir or tempfile.mkdtemp(prefix="mm2-smoke-lab.")
        self.heap = heap
        self.brokers = {}
        self.mm2 = None
        self.mm2_dir = None
        self.mm2_count = 0
        self.dist = None
        self.workers = []
        self.connect_count = 0
        self.ca = None
        self.kdc = None

    # ------------------------------------------------------------------ brokers
    def unpack(self):
        subprocess.run(["tar", "-xzf", self.archive, "-C", self.tmp], check=True, timeout=120)
        self.dist = os.path.join(self.tmp, [d for d in os.listdir(self.tmp) if d.startswith("kafka_")][0])

    def bin(self, name):
        return os.path.join(self.dist, "bin", name)

    def start_brokers(self, names=("A", "B"), ports=None):
        """Single-node brokers, each on free ports unless ``ports`` gives its (port, controller port)."""
        if self.dist is None:
            self.unpack()
        for name in names:
            port, cport = (ports or {}).get(name) or free_ports(2)
            d = os.path.join(self.tmp, "broker-" + name)
            os.makedirs(d)
            props = os.path.join(d, "server.properties")
            broker_props(props, os.path.join(d, "data"), port, cport)
            subprocess.run([self.bin("kafka-storage.sh"), "format", "-t", cluster_id(), "-c", props],
                           check=True, timeout=120, capture_output=True,
                           env=dict(os.environ, KAFKA_HEAP_OPTS="-Xmx256m"))
            env = dict(os.environ, LOG_DIR=os.path.join(d, "logs"), KAFKA_HEAP_OPTS=self.heap)
            out = os.path.join(d, "stdout.log")
            self.brokers[name] = {"bootstrap": "127.0.0.1:%d" % port, "out": out,
                                  "proc": start_process([self.bin("kafka-server-start.sh"), props], out, env=env)}
        for name in names:
            b = self.brokers[name]
            wait_for_log(b["out"], r"Kafka Server started", 120, b["proc"])
            self.wait_answers(name, 120)
            log("broker %s up on %s" % (name, b["bootstrap"]))

    def wait_answers(self, name, timeout, user=None):
        """Until broker ``name`` answers a metadata request with itself as a live broker: on a busy
        machine the log line comes well before clients are served.  On a secured cluster, as
        ``user`` (the admin by default): a user just added can log in once this returns."""
        from kafka.admin import KafkaAdminClient
        b = self.brokers[name]
        deadline = time.time() + timeout
        last = None
        while time.time() < deadline:
            if b["proc"].poll() is not None:
                raise RuntimeError("broker %s exited (%s), see %s" % (name, b["proc"].returncode, b["out"]))
            try:
                admin = KafkaAdminClient(bootstrap_servers=b["bootstrap"], client_id="harness-ready",
                                         request_timeout_ms=10000, **self.kafka_python_kwargs(name, user))
                try:
                    if admin.describe_cluster().get("brokers"):
                        return
                finally:
                    admin.close()
            except Exception as exc:  # noqa: BLE001 - not serving yet: try again until the deadline
                last = exc
            time.sleep(0.5)
        raise RuntimeError("broker %s at %s did not answer within %ss: %s" % (name, b["bootstrap"], timeout, last))

    def bootstrap(self, name):
        return self.brokers[name]["bootstrap"]

    # ------------------------------------------------------------------ secured brokers
    def start_kdc(self):
        """A real Kerberos KDC for this lab (kdc.Kdc); brokers started after it also offer GSSAPI."""
        import kdc
        if self.kdc is None:
            self.kdc = kdc.Kdc(self.tmp)
        return self.kdc

    def start_ca(self):
        """This lab's throw-away certificate authority (tls.Ca), made by openssl on first use; brokers
        started with ``tls=True`` present certificates it signed."""
        import tls
        if self.ca is None:
            self.ca = tls.Ca(self.tmp)
        return self.ca

    def start_secured_broker(self, name, users=("alice",), admin="admin", timeout=120, tls=False):
        """Start cluster ``name``: one combined KRaft node with StandardAuthorizer
        (``allow.everyone.if.no.acl.found=false``) whose one client listener is SASL_PLAINTEXT with
        SCRAM-SHA-512 (secured_broker_props).  SCRAM credentials for ``admin`` (the one super user
        among the SCRAM users) and each of ``users`` (no ACLs at all) are written at format time
        (``kafka-storage.sh format --add-scram``), with throw-away passwords.  Any number of
        secured and plain clusters may run in one Lab, each under its own name.  When the lab has
        a KDC (start_kdc), the listener also offers GSSAPI: the broker logs in as
        kafka/localhost@<realm> from a keytab and advertises localhost, the host of that principal.

        Returns the cluster's entry of ``self.brokers``: ``bootstrap`` (host:port of the SASL
        listener), ``controller`` (host:port of the PLAINTEXT controller listener), ``admin`` (the
        super user's name), ``users`` ({name: password}, admin included), ``mechanism``
        (SCRAM-SHA-512), ``super_users``, ``dir``, ``out``, ``proc``.  Client settings for a user:
        ``client_properties`` (the collection's modules), ``kafka_python_kwargs`` (kafka-python),
        ``java_client_properties`` (Java clients, MirrorMaker 2).  ``add_scram_user`` adds users later.

        With ``tls`` the listener is SASL_SSL instead (tls_broker_props), inter-broker traffic too:
        the broker presents a certificate for localhost and 127.0.0.1 signed by the lab's CA
        (start_ca), and the client settings above carry that CA's file (``cafile``) and leave
        host name verification on."""
        if name in self.brokers:
            raise RuntimeError("a cluster named %s is already running in this lab" % name)
        if self.dist is None:
            self.unpack()
        port, cport = free_ports(2)
        d = os.path.join(self.tmp, "broker-" + name)
        os.makedirs(d)
        props = os.path.join(d, "server.properties")
        credentials = dict((user, new_password()) for user in (admin,) + tuple(u for u in users if u != admin))
        kerberos = None
        if self.kdc is not None:
            import kdc
            service = "%s/%s" % (KERBEROS_SERVICE, kdc.BROKER_HOST)
            keytab = os.path.join(self.kdc.dir, "broker.keytab")
            if not os.path.exists(keytab):
                self.kdc.keytab(service, keytab)
            kerberos = {"keytab": keytab, "principal": self.kdc.principal(service), "host": kdc.BROKER_HOST}
        secured_broker_props(props, os.path.join(d, "data"), port, cport, admin, credentials[admin], kerberos)
        if tls:
            issued = self.start_ca().issue("broker-" + name)
            tls_broker_props(props, issued["keystore"], self.ca.cert)
        load_connect()  # the collection's module_utils on sys.path
        from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.kafka import scram as kafka_scram
        # the command line the kafka_broker role formats with: one home for --add-scram's syntax
        command = kafka_scram.format_command(self.bin("kafka-storage.sh"), cluster_id(), props, [
            {"name": user, "password": secret, "mechanism": SCRAM_MECHANISM} for user, secret in credentials.items()])
        subprocess.run(command["argv"], check=True, timeout=120, capture_output=True,
                       env=dict(os.environ, KAFKA_HEAP_OPTS="-Xmx256m", **command["environment"]))
        env = dict(os.environ, LOG_DIR=os.path.join(d, "logs"), KAFKA_HEAP_OPTS=self.heap)
        if kerberos:
            env["KAFKA_OPTS"] = "-Djava.security.krb5.conf=" + self.kdc.krb5_conf
        out = os.path.join(d, "stdout.log")
        self.brokers[name] = {
            "kerberos": bool(kerberos),
            "bootstrap": "%s:%d" % (kerberos["host"] if kerberos else "127.0.0.1", port), "controller": "127.0.0.1:%d" % cport, "out": out, "dir": d,
            "admin": admin, "users": credentials, "mechanism": SCRAM_MECHANISM, "secured": True,
            "super_users": ["User:%s" % admin, CONTROLLER_PRINCIPAL],
            "proc": start_process([self.bin("kafka-server-start.sh"), props], out, env=env)}
        self.brokers[name]["cafile"] = self.ca.cert if tls else None
        wait_for_log(out, r"Kafka Server started", timeout, self.brokers[name]["proc"])
        self.wait_answers(name, timeout)
        log("secured broker %s up on %s (%s %s, StandardAuthorizer, users %s)"
            % (name, self.bootstrap(name), self.security_protocol(name), SCRAM_MECHANISM, ", ".join(credentials)))
        return self.brokers[name]

    def _credentials(self, name, user):
        broker = self.brokers[name]
        user = user or broker.get("admin")
        if user not in broker.get("users", {}):
            raise KeyError("cluster %s has no SCRAM user %r (it has %s)" % (name, user, ", ".join(broker.get("users", {}))))
        return user, broker["users"][user]

    def security_protocol(self, name):
        """SASL_SSL for a cluster started with ``tls``, SASL_PLAINTEXT for another secured one."""
        return "SASL_SSL" if self.brokers[name].get("cafile") else "SASL_PLAINTEXT"

    def client_properties(self, name, user=None):
        """The collection modules' client_properties for ``user`` (the admin by default) on a
        secured cluster, with the CA file (ssl.cafile) on a TLS one; {} for a plain one."""
        if not self.brokers[name].get("secured"):
            return {}
        user, secret = self._credentials(name, user)
        props = {"security.protocol": self.security_protocol(name), "sasl.mechanism": SCRAM_MECHANISM,
                 "sasl.plain.username": user, "sasl.plain.password": secret}
        if self.brokers[name].get("cafile"):
            props["ssl.cafile"] = self.brokers[name]["cafile"]
        return props

    def kafka_python_kwargs(self, name, user=None):
        """kafka-python's keyword arguments for ``user`` (the admin by default), with ``ssl_cafile``
        on a TLS cluster; {} for a plain cluster."""
        if not self.brokers[name].get("secured"):
            return {}
        user, secret = self._credentials(name, user)
        kwargs = {"security_protocol": self.security_protocol(name), "sasl_mechanism": SCRAM_MECHANISM,
                  "sasl_plain_username": user, "sasl_plain_password": secret}
        if self.brokers[name].get("cafile"):
            kwargs.update(ssl_cafile=self.brokers[name]["cafile"], ssl_check_hostname=True)
        return kwargs

    def java_client_properties(self, name, user=None):
        """A Java client's properties (MirrorMaker 2, the CLI tools) for ``user``, with the CA file as
        a PEM trust store on a TLS cluster; {} for a plain cluster."""
        if not self.brokers[name].get("secured"):
            return {}
        user, secret = self._credentials(name, user)
        props = {"security.protocol": self.security_protocol(name), "sasl.mechanism": SCRAM_MECHANISM,
                 "sasl.jaas.config": scram_jaas(user, secret)}
        if self.brokers[name].get("cafile"):
            # a PEM trust store takes no password; host name verification stays Kafka's default (https)
            props.update({"ssl.truststore.type": "PEM", "ssl.truststore.location": self.brokers[name]["cafile"]})
        return props

    def kerberos_client_properties(self, name, keytab=None, principal=None):
        """A Java client's GSSAPI settings for cluster ``name`` (started with the lab's KDC); with
        ``keytab`` and ``principal`` also its sasl.jaas.config, else the JVM's JAAS file serves."""
        if not self.brokers[name].get("kerberos"):
            raise KeyError("cluster %s does not offer GSSAPI (start the lab's KDC first)" % name)
        props = {"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "GSSAPI",
                 "sasl.kerberos.service.name": KERBEROS_SERVICE}
        if keytab:
            props["sasl.jaas.config"] = krb5_jaas(keytab, self.kdc.principal(principal))
        return props

    def command_config(self, name, user=None):
        """A file of java_client_properties for the CLI tools' --command-config (readable by its owner only)."""
        user = user or self.brokers[name].get("admin")
        path = os.path.join(self.brokers[name]["dir"], "client-%s.properties" % user)
        with os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w") as fh:
            fh.write("".join("%s=%s\n" % kv for kv in self.java_client_properties(name, user).items()))
        return path

    def add_scram_user(self, name, user, secret=None, timeout=60):
        """Add (or change) SCRAM user ``user`` on secured cluster ``name`` with kafka-configs.sh as the
        admin, then wait until the user can log in; returns the password."""
        secret = secret or new_password()
        done = subprocess.run(
            [self.bin("kafka-configs.sh"), "--bootstrap-server", self.bootstrap(name),
             "--command-config", self.command_config(name), "--alter", "--entity-type", "users",
             "--entity-name", user, "--add-config", "%s=[password=%s]" % (SCRAM_MECHANISM, secret)],
            capture_output=True, text=True, timeout=120, env=dict(os.environ, KAFKA_HEAP_OPTS="-Xmx256m"), check=False)
        if done.returncode != 0:
            raise RuntimeError("kafka-configs.sh could not add SCRAM user %s on %s: %s"
                               % (user, name, (done.stdout + done.stderr)[-2000:]))
        self.brokers[name]["users"][user] = secret
        self.wait_answers(name, timeout, user=user)
        return secret

    # ------------------------------------------------------------------ MM2
    def mm2_inputs(self, flows, extra_globals=None, policy=None, users=None):
        """Role-variable shapes (clusters, flows, globals, options) for the running brokers; on a
        secured cluster MM2 logs in as ``users[<cluster>]`` (its Java client settings)."""
        clusters = [{"alias": n, "bootstrap_servers": [b["bootstrap"]], "broker_count": 1,
                     "properties": dict({"plugin.discovery": "service_load"},
                                        **(self.java_client_properties(n, (users or {}).get(n))
                                           if b.get("secured") else {}))}
                    for n, b in sorted(self.brokers.items())]
        glob = dict(HARNESS_GLOBALS)
        glob.update(FAST_INTERVALS)
        glob["plugin.discovery"] = "service_load"
        rest = free_ports(1)[0]
        glob["listeners"] = "http://127.0.0.1:%d" % rest
        glob["rest.advertised.host.name"] = "127.0.0.1"
        if policy:
            glob["replication.policy.class"] = policy
        glob.update(extra_globals or {})
        return clusters, flows, glob, {"exactly_once": False, "internal_rest": True}

    def job_config(self, flows, checks):
        """The smoke job's configuration (smoke/README.md) for ``flows`` (role variable shape)."""
        clusters, flows, glob, options = self.mm2_inputs(flows)
        return {"version": 1,
                "clusters": {n: {"bootstrap_servers": b["bootstrap"], "properties": {}}
                             for n, b in self.brokers.items()},
                "flows": load_model().effective_flows(clusters, flows, glob, options),
                "checks": checks}

    def start_mm2(self, flows, extra_globals=None, wait_for=None, timeout=120, users=None):
        """Start dedicated MM2 for ``flows`` (role variable shape), as ``users`` on secured clusters;
        wait until ``wait_for`` (a (cluster, topic) pair) exists, if given.  Returns the rendered
        properties."""
        model = load_model()
        clusters, flows, glob, options = self.mm2_inputs(flows, extra_globals, users=users)
        return self.start_mm2_properties(model.build_properties(clusters, flows, glob, options), wait_for, timeout)

    def start_mm2_properties(self, props, wait_for=None, timeout=120, script="connect-mirror-maker.sh"):
        """Start dedicated MM2 with the mm2.properties ``props`` (a dict, e.g. what the mirrormaker
        role's preflight rendered) through ``script`` in the lab's bin/ (e.g. a copy the mirrormaker
        role patched); wait as start_mm2 does.  Returns ``props``."""
        if self.mm2 is not None and self.mm2.poll() is None:
            raise RuntimeError("an MM2 process is already running")
        self.mm2_count += 1
        d = os.path.join(self.tmp, "mm2-%d" % self.mm2_count)
        os.makedirs(d)
        path = os.path.join(d, "mm2.properties")
        with open(path, "w") as fh:
            fh.write(format_properties(props) + "\n")
        env = dict(os.environ, LOG_DIR=os.path.join(d, "logs"), KAFKA_HEAP_OPTS=self.heap)
        self.mm2_dir = d
        self.mm2 = start_process([self.bin(script), path], os.path.join(d, "stdout.log"), env=env)
        t0 = time.time()
        if wait_for:
            self.wait_topic(wait_for[0], wait_for[1], timeout)
            log("MM2 #%d replicating after %.1fs" % (self.mm2_count, time.time() - t0))
        return props

    def stop_mm2(self):
        if self.mm2 is not None:
            stop_process(self.mm2, 30)
            self.mm2 = None

    def kill_mm2(self):
        """kill -9 of MirrorMaker 2's process group: a crash, no offset flush on the way out."""
        if self.mm2 is not None:
            os.killpg(self.mm2.pid, signal.SIGKILL)
            self.mm2.wait(30)
            self.mm2 = None

    def wait_topic(self, cluster, topic, timeout):
        from kafka.admin import KafkaAdminClient
        admin = KafkaAdminClient(bootstrap_servers=self.bootstrap(cluster), client_id="harness",
                                 **self.kafka_python_kwargs(cluster))
        try:
            deadline = time.time() + timeout
            while time.time() < deadline:
                if topic in admin.list_topics():
                    return
                if self.mm2 is not None and self.mm2.poll() is not None:
                    raise RuntimeError("MM2 exited (%s), see %s" % (self.mm2.returncode, self.mm2_dir))
                time.sleep(0.5)
            raise RuntimeError("topic %s not on %s after %ss" % (topic, cluster, timeout))
        finally:
            admin.close()

    # ------------------------------------------------------------------ Connect
    def start_connect(self, source="A", target="B", workers=1, exactly_once=False, extra=None, timeout=180):
        """Start ``workers`` distributed Connect workers for flow source->target with the worker
        properties the connect role renders (mm2_connect.worker_properties), next to ``target``.
        Returns their REST base URLs once each answers GET /connectors (it joined its group)."""
        _model, connect = load_connect()
        names = connect.names(source, target)
        urls = []
        for _i in range(workers):
            port = free_ports(1)[0]
            self.connect_count += 1
            d = os.path.join(self.tmp, "connect-%d" % self.connect_count)
            os.makedirs(d)
            props = connect.worker_properties(
                {"bootstrap_servers": self.bootstrap(target), "properties": {}}, names,
                {"port": port, "advertised_host": "127.0.0.1", "bind_host": "127.0.0.1"}, exactly_once,
                extra=extra)
            path = os.path.join(d, "connect-distributed.properties")
            with open(path, "w") as fh:
                fh.write("".join("%s=%s\n" % kv for kv in props.items()))
            env = dict(os.environ, LOG_DIR=os.path.join(d, "logs"), KAFKA_HEAP_OPTS=self.heap)
            out = os.path.join(d, "stdout.log")
            proc = start_process([self.bin("connect-distributed.sh"), path], out, env=env)
            url = "http://127.0.0.1:%d" % port
            self.workers.append({"url": url, "proc": proc, "out": out, "dir": d, "properties": props})
            urls.append(url)
        for worker in self.workers[-workers:]:
            deadline = time.time() + timeout
            while True:
                if worker["proc"].poll() is not None:
                    raise RuntimeError("Connect worker exited (%s), see %s" % (worker["proc"].returncode, worker["out"]))
                try:
                    get_json(worker["url"] + "/connectors")
                    break
                except Exception:  # noqa: BLE001 - not joined yet
                    if time.time() > deadline:
                        raise RuntimeError("Connect worker %s did not answer within %ss, see %s"
                                           % (worker["url"], timeout, worker["out"]))
                    time.sleep(0.5)
            log("Connect worker up on %s" % worker["url"])
        return urls

    def stop_connect(self):
        for worker in self.workers:
            stop_process(worker["proc"], 30)
        self.workers = []

    def stop(self):
        self.stop_connect()
        self.stop_mm2()
        for b in self.brokers.values():
            stop_process(b["proc"], 30)
        self.brokers = {}
        if self.kdc is not None:
            self.kdc.stop()
            self.kdc = None
        if self.owns_tmp and not os.environ.get("MM2_SMOKE_KEEP_LAB"):
            shutil.rmtree(self.tmp, ignore_errors=True)


# ---------------------------------------------------------------------- Spark standalone
def pyspark_home():
    """The pip-installed pyspark directory: Spark's jars/ and bin/ (spark-class, spark-submit)."""
    import pyspark
    return os.path.dirname(os.path.abspath(pyspark.__file__))


def get_json(url, timeout=5):
    with urllib.request.urlopen(url, timeout=timeout) as resp:
        return json.loads(resp.read().decode("utf-8"))


def connect_rest(method, url, body=None, timeout=30):
    """(status, decoded JSON or None) of one Kafka Connect REST call; urllib's HTTPError for 4xx/5xx."""
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, method=method,
                                     headers={"Content-Type": "application/json", "Accept": "application/json"})
    with urllib.request.urlopen(request, timeout=timeout) as resp:
        text = resp.read().decode()
        return resp.status, (json.loads(text) if text.strip() else None)


def put_connector(url, name, config, timeout=120):
    """PUT /connectors/<name>/config on the worker at ``url``, again while it answers 409 (a
    rebalance), 5xx or not at all; returns the status code."""
    deadline = time.time() + timeout
    while True:
        try:
            return connect_rest("PUT", "%s/connectors/%s/config" % (url, name), config)[0]
        except urllib.error.HTTPError as exc:
            detail = exc.read().decode(errors="replace")
            if exc.code not in (409, 500, 503) or time.time() > deadline:
                raise RuntimeError("PUT %s: %s %s" % (name, exc.code, detail[-2000:]))
            log("PUT %s: %s, again (%s)" % (name, exc.code, detail[:200]))
        except (urllib.error.URLError, OSError) as exc:
            if time.time() > deadline:
                raise RuntimeError("PUT %s: %s" % (name, exc))
        time.sleep(1)


def commit_group(admin, group, topic, offsets, metadata=""):
    """Commit ``offsets`` ({partition: offset} of ``topic``) for ``group`` through ``admin`` (a
    kafka_util.RetryingAdmin: a loading coordinator's partition errors are retried, any other is
    raised); every partition must answer."""
    from kafka import TopicPartition
    from kafka.structs import OffsetAndMetadata
    wanted = {TopicPartition(topic, p): OffsetAndMetadata(o, metadata, -1) for p, o in offsets.items()}
    answer = admin.alter_group_offsets(group, wanted)
    if set(answer) != set(wanted):
        raise RuntimeError("commit of %s: answered %d of %d partitions" % (group, len(answer), len(wanted)))


class SparkCluster(object):
    """A Spark standalone master and one worker (1 core, 1 GB) on 127.0.0.1, started with pyspark's
    own launch classes through its bin/spark-class; executors run in the worker's work dir."""

    def __init__(self, workdir, cores=1, memory="1g"):
        self.tmp = workdir
        self.home = pyspark_home()
        self.cores, self.memory = cores, memory
        self.port, self.webui_port, self.worker_webui_port = free_ports(3)
        self.url = "spark://127.0.0.1:%d" % self.port
        self.webui = "http://127.0.0.1:%d" % self.webui_port
        self.worker_webui = "http://127.0.0.1:%d" % self.worker_webui_port
        self.work_dir = os.path.join(workdir, "worker-work")
        self.master = self.worker = None

    def env(self):
        return dict(os.environ, SPARK_HOME=self.home, SPARK_LOCAL_IP="127.0.0.1", SPARK_DAEMON_MEMORY="256m",
                    # the master's REST submission server would take the fixed port 6066; spark-submit
                    # reaches the master over its RPC port
                    SPARK_MASTER_OPTS="-Dspark.master.rest.enabled=false")

    def start(self, timeout=120):
        os.makedirs(self.work_dir, exist_ok=True)
        spark_class = os.path.join(self.home, "bin", "spark-class")
        self.master = start_process(
            [spark_class, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
             "--port", str(self.port), "--webui-port", str(self.webui_port)],
            os.path.join(self.tmp, "master.log"), env=self.env())
        self.worker = start_process(
            [spark_class, "org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1",
             "--cores", str(self.cores), "--memory", self.memory, "--webui-port", str(self.worker_webui_port),
             "--work-dir", self.work_dir, self.url],
            os.path.join(self.tmp, "worker.log"), env=self.env())
        t0 = time.time()
        self.wait_ready(timeout)
        log("Spark standalone %s: worker ALIVE after %.1fs" % (self.url, time.time() - t0))

    def wait_ready(self, timeout):
        """A worker registered and ALIVE at the master: an open port is not a cluster that runs executors."""
        deadline = time.time() + timeout
        last = None
        while time.time() < deadline:
            for name, proc in (("master", self.master), ("worker", self.worker)):
                if proc.poll() is not None:
                    raise RuntimeError("Spark %s exited (%s), see %s"
                                       % (name, proc.returncode, os.path.join(self.tmp, name + ".log")))
            try:
                state = self.state()
                if state.get("status") == "ALIVE" and any(w["state"] == "ALIVE" for w in state["workers"]):
                    return
                last = "master %s, workers %s" % (state.get("status"), [w["state"] for w in state["workers"]])
            except OSError as exc:
                last = str(exc)
            time.sleep(0.5)
        raise RuntimeError("Spark standalone %s not ready after %ss (%s), see %s" % (self.url, timeout, last, self.tmp))

    def state(self):
        """The master's /json/: workers, activeapps, completedapps."""
        return get_json(self.webui + "/json/")

    def worker_state(self):
        """The worker's /json/: executors and finishedexecutors, each with its appid."""
        return get_json(self.worker_webui + "/json/")

    def finished_apps(self, name):
        """{app id: the master's record} of the completed applications called ``name``."""
        return {a["id"]: a for a in self.state()["completedapps"] if a["name"] == name}

    def wait_finished(self, name, known, timeout=30):
        """The applications called ``name`` completed since ``known`` (ids) was read. The master marks
        an application completed once its driver has gone, a moment after spark-submit exits."""
        deadline = time.time() + timeout
        while True:
            new = [a for app_id, a in sorted(self.finished_apps(name).items()) if app_id not in known]
            if new or time.time() > deadline:
                return new
            time.sleep(0.5)

    def executors(self, app_id, timeout=30):
        """The worker's finished executors of ``app_id``, each with the directory it ran in. The worker
        ends them after the master has marked the application completed."""
        deadline = time.time() + timeout
        while True:
            state = self.worker_state()
            done = [dict(e, dir=os.path.join(self.work_dir, app_id, str(e["id"])))
                    for e in state["finishedexecutors"] if e["appid"] == app_id]
            running = [e for e in state["executors"] if e["appid"] == app_id]
            if (done and not running) or time.time() > deadline:
                return done
            time.sleep(0.5)

    def stop(self):
        # the worker first: it ends its executors, the master then has no one to wait for
        stop_process(self.worker, 30)
        stop_process(self.master, 30)
        self.worker = self.master = None


# Hadoop's client retries a YARN resource manager for many minutes by default; these make
# spark-submit give up on one that does not answer within about half a minute.
YARN_GIVE_UP_SOON = ["--conf", "spark.hadoop.yarn.resourcemanager.connect.max-wait.ms=10000",
                     "--conf", "spark.hadoop.yarn.resourcemanager.connect.retry-interval.ms=2000",
                     "--conf", "spark.hadoop.ipc.client.connect.max.retries=2"]


def unreachable_yarn(conf_dir):
    """A HADOOP_CONF_DIR whose resource manager address is a closed port on 127.0.0.1; returns that address."""
    os.makedirs(conf_dir, exist_ok=True)
    rm = "127.0.0.1:%d" % free_ports(1)[0]
    with open(os.path.join(conf_dir, "yarn-site.xml"), "w") as fh:
        fh.write("<configuration><property><name>yarn.resourcemanager.address</name><value>%s</value>"
                 "</property></configuration>\n" % rm)
    return rm
