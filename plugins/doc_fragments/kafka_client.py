# -*- coding: utf-8 -*-
# Copyright: kafkaops maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)

from __future__ import annotations


class ModuleDocFragment(object):
    """The connection options of the modules that talk to a Kafka cluster with kafka-python
    (plugins/module_utils/kafka/client.py, argument_spec())."""

    DOCUMENTATION = r"""
options:
  bootstrap_servers:
    description:
      - The cluster's bootstrap servers, a list of V(host:port) or one comma-separated string of
        them. IPv6 addresses are written in brackets, V([::1]:9092).
      - They are first asked to answer as in M(kafkaops.mirrormaker.kafka_reachable), so a cluster
        that does not answer fails the task within O(timeout) with each server's reason.
    type: raw
    required: true
  client_properties:
    description:
      - Client settings for a secured listener, mapped to kafka-python's arguments. The keys taken
        are listed below. The Java names are used where kafka-python has the same setting,
        kafka-python's own names (with dots) where the Java setting is one kafka-python cannot read.
      - V(security.protocol), one of V(PLAINTEXT) (the default), V(SSL), V(SASL_PLAINTEXT), V(SASL_SSL).
      - V(sasl.mechanism), the SASL mechanism, one of V(PLAIN), V(SCRAM-SHA-256), V(SCRAM-SHA-512)
        (each with V(sasl.plain.username) and V(sasl.plain.password)) or V(GSSAPI) (Kerberos).
      - V(sasl.plain.username) and V(sasl.plain.password), the user and password of V(PLAIN) and the
        V(SCRAM-*) mechanisms.
      - V(sasl.kerberos.service.name), with V(GSSAPI), the Kerberos service name of the brokers'
        principal (kafka-python's C(sasl_kerberos_service_name); V(kafka) when not given). The
        credentials are this host's, from its ticket cache or the keytab C(KRB5_CLIENT_KTNAME)
        names, so V(sasl.plain.username) and V(sasl.plain.password) are refused with V(GSSAPI).
        V(GSSAPI) needs the python C(gssapi) package on the managed host.
      - V(ssl.cafile), V(ssl.certfile) and V(ssl.keyfile), the CA certificates that signed the
        brokers' certificates, the client certificate and its private key, PEM files on the managed
        host; V(ssl.password), the private key's password.
      - V(ssl.endpoint.identification.algorithm), V(https) (the default) checks the broker's host
        name against its certificate; an empty string does not.
      - Refused, with what to give instead, are V(sasl.jaas.config) (kafka-python reads no JAAS
        line; give V(sasl.plain.username) and V(sasl.plain.password)), V(ssl.truststore.*),
        V(ssl.keystore.*) and V(ssl.key.password) (Java key stores; give PEM files), and any other
        key, since an ignored setting would change how the module talks to the cluster unseen. So
        is a SASL setting without a SASL protocol, or a TLS setting without a TLS one.
      - Secret values (passwords, and anything M(kafkaops.mirrormaker.kafka_properties) would
        mask) never appear in the output or the host's log; the other values stay readable.
    type: dict
    default: {}
  timeout:
    description:
      - Seconds the bootstrap servers and the client's connection may take, together; a cluster
        that does not answer within them fails the task. Also the most each request after that may
        take, tries again included (right after a broker starts, the cluster answers for a while
        that it is not ready yet). From 1 to 300.
    type: int
    default: 30
requirements:
  - kafka-python 3.0 or later on the managed host (the mm2_smoke role's venv has it; point
    C(ansible_python_interpreter) at that venv's python).
  - The python C(gssapi) package on the managed host, for V(sasl.mechanism=GSSAPI) only.
"""
