# -*- coding: utf-8 -*-
# Copyright: kafkaops maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
"""How the collection's kafka-python modules reach a cluster: one home for the connection options.

Used by ``kafka_group_offsets_info``, ``kafka_acl`` and ``kafka_scram_user`` (documented by the ``kafkaops.mirrormaker.kafka_client``
doc fragment, options from ``argument_spec()``):

* ``bootstrap_servers`` checked and split (``bootstrap_list``);
* ``client_properties`` mapped to kafka-python's keyword arguments, every refused key named
  (``client_kwargs``), only its secret values kept masked (``mask_only_secrets``);
* the servers first asked to answer as in ``kafka_reachable`` (``unreachable_message``), then the
  client made within what is left of ``timeout``, a failure worded with what kafka-python logged
  (``ConnectionErrors``, ``connect``);
* kafka-python errors marked retriable tried again within the timeout (``Retry``).

``start`` runs these checks, and those of the libraries, in the order every module needs them;
``Session`` is the rest of a module's run against the cluster: the probe, its clients made within
one deadline, retries, and the clients closed however the run ends.

Nothing here imports kafka-python: a module reports a missing library with ``missing_required_lib``
and unit tests pass fakes.  kafka-python's classes reach ``connect`` as arguments.
"""

from __future__ import annotations

import logging
import os
import re
import socket
import time
import traceback

from ansible.module_utils.basic import missing_required_lib
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.kafka.probe import (
    SECURITY_PROTOCOLS,
    TLS_PROTOCOLS,
    check_cluster,
    parse_server,
    seconds_text,
)
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.common.values import as_list
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.common.secrets import secret_values

SASL_PROTOCOLS = ("SASL_PLAINTEXT", "SASL_SSL")
# The mechanisms kafka-python authenticates with from a user name and a password alone.
PASSWORD_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")
# GSSAPI (Kerberos) takes its credentials from the host's ticket cache or keytab and needs the
# python gssapi package; OAUTHBEARER needs a token provider object, which options cannot give.
GSSAPI = "GSSAPI"
SASL_MECHANISMS = PASSWORD_MECHANISMS + (GSSAPI,)
# kafka-python checks request_timeout_ms < connections_max_idle_ms (540 s); a request that needs
# minutes is better stopped than waited for.
MAX_TIMEOUT = 300

# client_properties key -> kafka-python keyword.  Java's names where kafka-python has the same
# setting; kafka-python's own names, with dots, where Java's setting is one kafka-python cannot
# read (a JAAS line, a JKS/PKCS12 store).
CLIENT_PROPERTIES = {
    "security.protocol": "security_protocol",
    "sasl.mechanism": "sasl_mechanism",
    "sasl.plain.username": "sasl_plain_username",
    "sasl.plain.password": "sasl_plain_password",
    "sasl.kerberos.service.name": "sasl_kerberos_service_name",
    "ssl.cafile": "ssl_cafile",
    "ssl.certfile": "ssl_certfile",
    "ssl.keyfile": "ssl_keyfile",
    "ssl.password": "ssl_password",
    "ssl.endpoint.identification.algorithm": "ssl_check_hostname",
}
_FILES = ("ssl.cafile", "ssl.certfile", "ssl.keyfile")
_PASSWORD_KEYS = ("sasl.plain.username", "sasl.plain.password")
_JAVA_KEY_STORE = ("a Java key store, which kafka-python cannot read; give the client certificate and its key "
                   "as PEM files in ssl.certfile and ssl.keyfile (and the key's password in ssl.password)")
# (key or key prefix, why it is refused and what to give instead)
REFUSED = (
    ("sasl.jaas.config", "kafka-python does not read JAAS configurations; give the user and the password as "
                         "sasl.plain.username and sasl.plain.password (mechanisms %s)" % ", ".join(PASSWORD_MECHANISMS)),
    ("ssl.truststore.", "a Java trust store, which kafka-python cannot read; give the CA certificates as a PEM "
                        "file in ssl.cafile"),
    ("ssl.keystore.", _JAVA_KEY_STORE),
    ("ssl.key.password", _JAVA_KEY_STORE),
    ("bootstrap.servers", "give the servers in the bootstrap_servers option"),
    ("isolation.level", "give it in the isolation_level option"),
)


def argument_spec():
    """The connection options, as documented in the kafka_client doc fragment."""
    return dict(
        bootstrap_servers=dict(type="raw", required=True),
        client_properties=dict(type="dict", default={}, no_log=True),
        timeout=dict(type="int", default=30),
    )


def _refusal(key):
    for name, why in REFUSED:
        if key == name or (name.endswith(".") and key.startswith(name)):
            return why
    return None


def _sasl_errors(protocol, mechanism, given):
    """The faults of the SASL settings for a SASL security.protocol."""
    if mechanism is None:
        return ["client_properties: security.protocol %s needs sasl.mechanism (%s)"
                % (protocol, ", ".join(SASL_MECHANISMS))]
    if mechanism == GSSAPI:
        # the Kerberos credentials are the host's (ticket cache, or the keytab KRB5_CLIENT_KTNAME names)
        return ["client_properties[%r]: not used with sasl.mechanism GSSAPI (kafka-python takes the Kerberos "
                "credentials from this host's ticket cache or keytab)" % key for key in _PASSWORD_KEYS if key in given]
    errors = []
    missing = [k for k in _PASSWORD_KEYS if not given.get(k)]
    if missing:
        errors.append("client_properties: security.protocol %s needs %s" % (protocol, " and ".join(missing)))
    if "sasl.kerberos.service.name" in given:
        errors.append("client_properties['sasl.kerberos.service.name']: only used with sasl.mechanism GSSAPI, "
                      "not %s" % mechanism)
    return errors


def client_kwargs(properties, isfile=os.path.isfile):
    """(kafka-python keyword arguments, errors) for the module's ``client_properties``.

    Every error names ``client_properties`` and the key at fault; keys this module does not pass
    on are refused rather than ignored, since an ignored setting (a mistyped
    ``security.protocol``) would let the module talk to the cluster in a way nobody asked for.
    A key whose value is null counts as not given.
    """
    kwargs, errors, given = {}, [], {}
    for key, value in (properties or {}).items():
        key = str(key)
        where = "client_properties[%r]" % key
        why = _refusal(key)
        if why:
            errors.append("%s: %s" % (where, why))
        elif key not in CLIENT_PROPERTIES:
            errors.append("%s: not a setting this module passes to kafka-python (it takes %s)"
                          % (where, ", ".join(CLIENT_PROPERTIES)))
        elif value is None:
            continue
        elif isinstance(value, (dict, list, tuple)):
            errors.append("%s: must be a string, not a %s" % (where, type(value).__name__))
        else:
            given[key] = value if isinstance(value, str) else str(value)

    protocol = given.get("security.protocol", "PLAINTEXT")
    if protocol not in SECURITY_PROTOCOLS:
        errors.append("client_properties['security.protocol']: %r is not one of %s"
                      % (protocol, ", ".join(SECURITY_PROTOCOLS)))
    mechanism = given.get("sasl.mechanism")
    if mechanism is not None and mechanism not in SASL_MECHANISMS:
        errors.append("client_properties['sasl.mechanism']: %r is not one of %s (kafka-python authenticates with "
                      "%s from a user name and a password, with GSSAPI from a Kerberos ticket)"
                      % (mechanism, ", ".join(SASL_MECHANISMS), ", ".join(PASSWORD_MECHANISMS)))
    elif protocol in SASL_PROTOCOLS:
        errors.extend(_sasl_errors(protocol, mechanism, given))
    if protocol in SECURITY_PROTOCOLS and protocol not in SASL_PROTOCOLS:
        # a SASL or TLS setting the protocol does not use is a mistake in the protocol or in the setting
        errors.extend("client_properties[%r]: not used with security.protocol %s (SASL settings need "
                      "SASL_PLAINTEXT or SASL_SSL)" % (k, protocol) for k in given if k.startswith("sasl."))
    if protocol not in TLS_PROTOCOLS and protocol in SECURITY_PROTOCOLS:
        errors.extend("client_properties[%r]: not used with security.protocol %s (TLS settings need "
                      "SSL or SASL_SSL)" % (k, protocol) for k in given if k.startswith("ssl."))
    algorithm = given.get("ssl.endpoint.identification.algorithm")
    if algorithm is not None and algorithm.lower() not in ("https", ""):
        errors.append("client_properties['ssl.endpoint.identification.algorithm']: %r is not 'https' (check the "
                      "broker's host name, the default) or '' (do not)" % algorithm)
    if "ssl.keyfile" in given and "ssl.certfile" not in given:
        errors.append("client_properties['ssl.keyfile']: needs ssl.certfile, the certificate of the key")
    for key in _FILES:
        if key in given and not isfile(given[key]):
            errors.append("client_properties[%r]: %s is not a file on this host" % (key, given[key]))

    for key, value in given.items():
        if key == "ssl.endpoint.identification.algorithm":
            kwargs[CLIENT_PROPERTIES[key]] = value.lower() == "https"
        else:
            kwargs[CLIENT_PROPERTIES[key]] = value
    return kwargs, errors


def version_error(version):
    """The message for a kafka-python older than 3.0 (2.x names its admin calls otherwise), else None."""
    match = re.match(r"(\d+)\.", str(version))
    if match and int(match.group(1)) >= 3:
        return None
    return "kafka-python %s on this host: this module needs 3.0 or later" % version


def gssapi_import_error(kwargs, importer=__import__):
    """The traceback of ``import gssapi`` when kwargs ask for GSSAPI and it fails, else None.

    kafka-python imports gssapi only when it opens a connection, and then says "GSSAPI lib not
    found!" from inside its retries; asked first, the module names the library to install.
    """
    if kwargs.get("sasl_mechanism") != GSSAPI:
        return None
    try:
        importer("gssapi")
    except (ImportError, OSError):  # OSError: the package is there, the Kerberos library it loads is not
        return traceback.format_exc()
    return None


def caller(kwargs):
    """Who the cluster will take the module for, as its principal when the options tell it."""
    protocol = kwargs.get("security_protocol", "PLAINTEXT")
    if protocol in SASL_PROTOCOLS:
        if kwargs.get("sasl_mechanism") == GSSAPI:
            return "the Kerberos principal of this host's ticket"
        return "User:%s" % kwargs.get("sasl_plain_username")
    if protocol in TLS_PROTOCOLS and kwargs.get("ssl_certfile"):
        return "the principal of the client certificate %s" % kwargs["ssl_certfile"]
    return "User:ANONYMOUS"


def bootstrap_list(raw):
    """(servers, errors naming bootstrap_servers)."""
    if not isinstance(raw, (str, list)):
        return [], ["bootstrap_servers: %r is not a list or a comma-separated string of host:port" % (raw,)]
    try:
        servers = as_list(raw)
    except TypeError:
        return [], ["bootstrap_servers: %r is not a list of host:port" % (raw,)]
    if not servers:
        return [], ["bootstrap_servers: must list at least one host:port"]
    errors = []
    for server in servers:
        try:
            parse_server(server)
        except ValueError as exc:
            errors.append("bootstrap_servers: %s" % exc)
    return servers, errors


def blank_entries(option, values, what):
    """``option[i]: '' is blank (what)`` for each blank entry of a list option."""
    return ["%s[%d]: %r is blank (%s)" % (option, i, v, what) for i, v in enumerate(values or []) if not v.strip()]


def kafka_error_name(kafka_errors, code):
    """``error 3 (...)``: a Kafka error code with kafka-python's text for it (``kafka.errors`` passed in)."""
    error = kafka_errors.for_code(code)
    return "error %d (%s)" % (code, error.message if hasattr(error, "message") else error.__name__)


def timeout_errors(timeout):
    if not 1 <= timeout <= MAX_TIMEOUT:
        return ["timeout: %d is not from 1 to %d seconds" % (timeout, MAX_TIMEOUT)]
    return []


def _leaves(value):
    """The strings AnsibleModule adds to no_log_values for a no_log option's value."""
    if isinstance(value, dict):
        return [leaf for item in value.values() for leaf in _leaves(item)]
    if isinstance(value, (list, tuple)):
        return [leaf for item in value for leaf in _leaves(item)]
    if value is None or isinstance(value, bool):
        return []
    text = str(value)
    return [text] if text else []


def mask_only_secrets(module, properties):
    """Keep only the secret values of client_properties in no_log_values.

    The option is no_log so that AnsibleModule's record of the invocation in the host's journal,
    written before this code runs, holds none of it; but no_log masks every value of it anywhere
    in the output, and a message naming SASL_SSL or a certificate's path would read ********.
    """
    module.no_log_values.difference_update(_leaves(properties))
    module.no_log_values.update(secret_values(properties))


class Failed(Exception):
    """A message for fail_json, raised once the clients are closed."""


class ConnectionErrors(logging.Handler):
    """Why kafka-python's connections failed, as it logged it.

    Its bootstrap gives up with "Unable to bootstrap from ..." alone; why (a TLS certificate it
    would not trust, the broker closing the connection after a failed SASL login) is only in its
    log ("Bootstrap connection to bootstrap-0 failed: <reason> (backoff 0.12 secs)").  Should a
    later kafka-python word it otherwise, the message only loses this detail.
    """

    # not "Bootstrap failed: KafkaTimeoutError: Unable to bootstrap", which it logs last
    _FAILED = re.compile(r"[Cc]onnection (?:to \S+ )?failed: (.+?)(?: \(backoff [0-9.]+ secs\))?$")

    def __init__(self):
        logging.Handler.__init__(self, logging.WARNING)
        self.reasons = []

    def emit(self, record):
        match = self._FAILED.search(record.getMessage())
        if match:
            self.reasons.append(match.group(1))

    # an attempt the deadline cut short: a request, or a SASL exchange a loaded broker answered late
    _TIMEOUTS = ("RequestTimedOutError", "KafkaTimeoutError")

    @property
    def reason(self):
        """The most telling of the reasons: a refused login (kafka-python reads the broker's
        answer only in some attempts; in others it sees the connection close first), else the last
        one that is not a timeout (the bootstrap deadline cuts the last attempt short), else the
        last timeout, else None."""
        for wanted in ("AuthenticationFailed", ""):
            found = [r for r in self.reasons if wanted in r and not any(t in r for t in self._TIMEOUTS)]
            if found:
                return found[-1]
        return self.reasons[-1] if self.reasons else None


def capture_kafka_log():
    """A ConnectionErrors that alone receives kafka-python's log.

    Its retries would otherwise reach the module's stderr through logging's last-resort handler,
    and at DEBUG it logs SASL passwords.
    """
    handler = ConnectionErrors()
    kafka_log = logging.getLogger("kafka")
    kafka_log.addHandler(handler)
    kafka_log.setLevel(logging.WARNING)
    kafka_log.propagate = False
    return handler


def start(module, kafka_import_error, kafka_version, input_errors, secrets=()):
    """(servers, kwargs, connection_errors) for a kafka-python module: its bootstrap_servers, the
    kafka-python keywords of its client_properties and the ConnectionErrors given to ``connect``.

    Fails instead at the first of: the input errors, every one in one message, before anything is
    asked of the cluster or of kafka-python; kafka-python missing; kafka-python older than 3.0
    (``kafka_version`` is only read once the import worked); gssapi missing for sasl.mechanism GSSAPI.

    ``input_errors(servers_errors, property_errors)`` returns the module's whole list of input errors:
    the module places its own checks, timeout's among them, between those two.  ``secrets``: values
    of the module's own no_log options, masked again after mask_only_secrets since one may equal a
    plain client property, which it unmasks.
    """
    params = module.params
    properties = params["client_properties"] or {}
    mask_only_secrets(module, properties)
    module.no_log_values.update(secrets)
    servers, servers_errors = bootstrap_list(params["bootstrap_servers"])
    kwargs, property_errors = client_kwargs(properties)
    errors = input_errors(servers_errors, property_errors)
    if errors:
        module.fail_json(msg="; ".join(errors))
    if kafka_import_error:
        module.fail_json(msg=missing_required_lib("kafka-python"), exception=kafka_import_error)
    too_old = version_error(kafka_version)
    if too_old:
        module.fail_json(msg=too_old)
    gssapi_error = gssapi_import_error(kwargs)
    if gssapi_error:
        module.fail_json(msg=missing_required_lib("gssapi", reason="for sasl.mechanism GSSAPI"), exception=gssapi_error)
    return servers, kwargs, capture_kafka_log()


def error_text(exc):
    """'KafkaTimeoutError: Unable to bootstrap ...': kafka-python's errors name their class already."""
    name, text = type(exc).__name__, str(exc)
    return text if text.startswith(name) or text.startswith("[Error ") else "%s: %s" % (name, text)


def unreachable_message(servers, timeout, protocol, check=check_cluster, host=None):
    """The message for a cluster none of whose bootstrap servers answers within ``timeout``, else None."""
    probe = check(servers, timeout, protocol)
    if probe["reachable"]:
        return None
    return "bootstrap_servers: no bootstrap server answered from %s within %s s (%s)" % (
        host or socket.gethostname(), seconds_text(timeout),
        ", ".join("%s: %s" % pair for pair in probe["failures"].items()))


def connect(factory, kafka_error, servers, kwargs, client_id, timeout, deadline, connection_errors,
            clock=time.monotonic, **extra):
    """``factory(...)`` (KafkaAdminClient, KafkaConsumer) for ``servers`` within what is left of
    ``deadline`` (a time.monotonic() value); raises Failed naming why it could not connect.

    Called once the servers answered the probe, so a failure here is the client's own
    connection: TLS verification, SASL authentication, or the brokers the cluster advertises.
    """
    try:
        return factory(bootstrap_servers=servers, client_id=client_id, request_timeout_ms=timeout * 1000,
                       bootstrap_timeout_ms=max(1, int((deadline - clock()) * 1000)),
                       **dict(kwargs, **extra))
    except kafka_error as exc:
        reason = connection_errors.reason
        detail = "; kafka-python logged: %s" % reason if reason else ""
        if reason and "socket disconnected" in reason and kwargs.get("security_protocol") in SASL_PROTOCOLS:
            detail += " (as a broker closes the connection after a failed SASL login: check sasl.plain.username " \
                      "and sasl.plain.password)"
        raise Failed("bootstrap_servers: %s answered, but kafka-python could not connect to the cluster within "
                     "%s s: %s%s" % (",".join(servers), timeout, error_text(exc), detail))


class Retry(object):
    """``retry(fn, *args)``: fn(*args), tried again every ``pause`` seconds while it raises an error
    kafka-python marks ``retriable`` (a group coordinator not elected yet or loading, as right after
    a broker starts; a request timed out; a connection dropped), until ``seconds`` have passed
    since the first try; then that error is raised.  Any other error is raised at once."""

    def __init__(self, seconds, pause=0.5, clock=time.monotonic, sleep=time.sleep):
        self.seconds, self.pause, self.clock, self.sleep = seconds, pause, clock, sleep

    def __call__(self, fn, *args, **kwargs):
        deadline = self.clock() + self.seconds
        while True:
            try:
                return fn(*args, **kwargs)
            except Exception as exc:  # noqa: BLE001 - only the retriable ones are caught, by their flag
                if not getattr(exc, "retriable", False) or self.clock() + self.pause >= deadline:
                    raise
            self.sleep(self.pause)


class Session(object):
    """One module run's kafka-python clients of one cluster, within its ``timeout``::

        with Session(servers, kwargs, timeout, connection_errors, CLIENT_ID, kafka_errors.KafkaError) as session:
            admin = session.client(KafkaAdminClient)
            existing = session.retry(admin.describe_acls, ...)

    On entry the servers must answer the probe (else Failed with ``unreachable_message``). The
    deadline starts before the probe: the timeout bounds the probe and the connections together, as
    the doc fragment says. ``client`` makes a client within what is left of it (``connect``);
    ``retry`` is a ``Retry`` of ``timeout`` seconds; every client made is closed on exit, the last
    made first, whether the run answered or failed.
    """

    def __init__(self, servers, kwargs, timeout, connection_errors, client_id, kafka_error, check=check_cluster,
                 clock=time.monotonic):
        self.servers, self.kwargs, self.timeout = servers, kwargs, timeout
        self.connection_errors, self.client_id, self.kafka_error = connection_errors, client_id, kafka_error
        self.check, self.clock = check, clock
        self.deadline = None
        self.clients = []
        self.retry = Retry(timeout)

    def __enter__(self):
        self.deadline = self.clock() + self.timeout
        unreachable = unreachable_message(self.servers, self.timeout, self.kwargs.get("security_protocol", "PLAINTEXT"),
                                          check=self.check)
        if unreachable:
            raise Failed(unreachable)
        return self

    def client(self, factory, **extra):
        made = connect(factory, self.kafka_error, self.servers, self.kwargs, self.client_id, self.timeout,
                       self.deadline, self.connection_errors, clock=self.clock, **extra)
        self.clients.append(made)
        return made

    def __exit__(self, *_exc):
        close_quietly(*reversed(self.clients))
        return False


def close_quietly(*clients):
    """Close each client that was made; closing must not hide the answer or the failure."""
    for client in clients:
        if client is not None:
            try:
                client.close()
            except Exception:  # noqa: BLE001
                pass
