"""Single-node KRaft brokers, plain or secured, and what clients need to reach them."""

import base64
import os
import subprocess
import time

from lab_process import free_ports, load_connect, log, start_process, wait_for_log


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


class BrokersMixin(object):
    """Lab's brokers: plain single-node ones, secured ones (SCRAM, Kerberos, TLS), and their clients."""

    def start_brokers(self, names=("A", "B"), ports=None, release=None):
        """Single-node brokers, each on free ports unless ``ports`` gives its (port, controller port),
        formatted at the archive's own release unless ``release`` names an older one (``3.9``: its
        feature levels, as a cluster upgraded from it has before they are finalized)."""
        if self.dist is None:
            self.unpack()
        for name in names:
            port, cport = (ports or {}).get(name) or free_ports(2)
            d = os.path.join(self.tmp, "broker-" + name)
            os.makedirs(d)
            props = os.path.join(d, "server.properties")
            broker_props(props, os.path.join(d, "data"), port, cport)
            subprocess.run([self.bin("kafka-storage.sh"), "format", "-t", cluster_id(), "-c", props]
                           + (["--release-version", release] if release else []),
                           check=True, timeout=120, capture_output=True,
                           env=dict(os.environ, KAFKA_HEAP_OPTS="-Xmx256m"))
            env = dict(os.environ, LOG_DIR=os.path.join(d, "logs"), KAFKA_HEAP_OPTS=self.heap)
            out = os.path.join(d, "stdout.log")
            self.brokers[name] = {"bootstrap": "127.0.0.1:%d" % port, "controller": "127.0.0.1:%d" % cport, "out": out,
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
