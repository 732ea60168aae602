# -*- coding: utf-8 -*-
# Copyright: kafkaops maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
"""The mirrormaker role's refusals (dedicated mode), run in preflight before any host changes.

``faults(v)`` takes the role's variables (``mirrormaker_*``, as the play sees them) and returns one
message per fault, each naming its variable. The flows and clusters are the flow model's
(``mm2/model.py``); what is here is the node's own settings: ports, paths, JMX, the exporter agent
and the JAAS login.
"""

from __future__ import annotations

import re

from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.common import rules
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.common.values import as_int, settings, text

SHA256_RE = re.compile(r"^[0-9A-Fa-f]{64}$")
VERSION_RE = re.compile(r"^[0-9A-Za-z._-]+$")
PRINCIPAL_RE = re.compile(r'^[^@/\s"]+(/[^@/\s"]+)?(@[^@\s"]+)?$')
# The JAAS file writes these between double quotes, which cannot carry a quote, backslash or newline.
JAAS_QUOTED = ("keytab", "password", "principal", "username")
JAAS_UNQUOTABLE_RE = re.compile(r'["\\\n]')
UNIT_SECRET_HOME = ("put client secrets in mirrormaker_clusters[].properties (mm2.properties, 0640 root:kafka, "
                    "masked in output), login secrets in mirrormaker_jaas or sasl_jaas_config, the JMX keystore "
                    "password in mirrormaker_jmx_ssl_keystore_password (0600 file)")
UNIT_VALUES = ("mirrormaker_heap_opts", "mirrormaker_jvm_performance_opts", "mirrormaker_kafka_opts")


def _jmx_faults(v):
    faults = rules.port("mirrormaker_jmx_port", v["mirrormaker_jmx_port"])
    faults += rules.port("mirrormaker_rest_port", v["mirrormaker_rest_port"])
    if (v["mirrormaker_jmx_enabled"] and v["mirrormaker_internal_rest"]
            and as_int(v["mirrormaker_jmx_port"]) == as_int(v["mirrormaker_rest_port"])):
        faults.append("mirrormaker_jmx_port: %s is also mirrormaker_rest_port; JMX and the internal REST server "
                      "need a port each" % text(v["mirrormaker_jmx_port"]))
    return faults


def _exporter_faults(v):
    faults = rules.port("mirrormaker_jmx_exporter_port", v["mirrormaker_jmx_exporter_port"])
    on, src = v["mirrormaker_jmx_exporter_enabled"], text(v["mirrormaker_jmx_exporter_src"])
    if on and not src and not text(v["mirrormaker_jmx_exporter_url"]):
        faults.append("mirrormaker_jmx_exporter_src: the JMX exporter is on but neither a controller-local jar "
                      "(mirrormaker_jmx_exporter_src) nor mirrormaker_jmx_exporter_url is given")
    if on:
        faults += rules.controller_file("mirrormaker_jmx_exporter_src", src)
    if on and not SHA256_RE.match(text(v["mirrormaker_jmx_exporter_sha256"])):
        faults.append("mirrormaker_jmx_exporter_sha256: %s is not a sha256 (64 hex digits)"
                      % rules.shown(v["mirrormaker_jmx_exporter_sha256"]))
    if not VERSION_RE.match(text(v["mirrormaker_jmx_exporter_version"])):
        faults.append("mirrormaker_jmx_exporter_version: %s is not a version (letters, digits, . _ -)"
                      % rules.shown(v["mirrormaker_jmx_exporter_version"]))
    return faults


def _jmx_access_faults(v):
    faults = []
    if v["mirrormaker_jmx_authenticate"] and not v["mirrormaker_jmx_users"]:
        faults.append("mirrormaker_jmx_users: mirrormaker_jmx_authenticate is on but no JMX user is given")
    if v["mirrormaker_jmx_ssl"] and not text(v["mirrormaker_jmx_ssl_keystore"]):
        faults.append("mirrormaker_jmx_ssl_keystore: mirrormaker_jmx_ssl is on but no keystore is given")
    faults += rules.safe_path("mirrormaker_jmx_ssl_keystore", v["mirrormaker_jmx_ssl_keystore"], optional=True)
    faults += rules.host("mirrormaker_jmx_hostname", v["mirrormaker_jmx_hostname"], optional=True,
                         why="it is written into the KAFKA_JMX_OPTS line of connect-mirror-maker.sh")
    faults += rules.host("mirrormaker_advertised_host", v["mirrormaker_advertised_host"])
    return faults


def _jaas_faults(jaas, keytab_src):
    faults = []
    module = text(jaas.get("login_module"))
    principal, realm = text(jaas.get("principal")), text(jaas.get("realm"))
    if jaas and not module:
        faults.append("mirrormaker_jaas.login_module: required when mirrormaker_jaas is set (kerberos, scram or plain)")
    if module == "kerberos":
        if not principal:
            faults.append("mirrormaker_jaas.principal: login_module kerberos needs a principal")
        if not text(jaas.get("keytab")) and not keytab_src:
            faults.append("mirrormaker_keytab_src: login_module kerberos needs a keytab (mirrormaker_keytab_src, "
                          "or mirrormaker_jaas.keytab on the host)")
        if principal and not PRINCIPAL_RE.match(principal):
            faults.append("mirrormaker_jaas.principal: %s is not a Kerberos principal (primary[/instance][@REALM], "
                          "no blanks or quotes)" % rules.shown(principal))
        if realm and not principal.endswith("@" + realm):
            faults.append("mirrormaker_jaas.realm: the principal %s is not in realm %s; give the principal as "
                          "primary[/instance]@%s" % (rules.shown(principal), rules.shown(realm), realm))
    unquotable = sorted(key for key in JAAS_QUOTED
                        if isinstance(jaas.get(key), str) and JAAS_UNQUOTABLE_RE.search(jaas[key]))
    if unquotable:
        faults.append("mirrormaker_jaas.%s: holds a double quote, backslash or newline, which the JAAS file's "
                      "quoted values cannot carry" % ", mirrormaker_jaas.".join(unquotable))
    if module in ("scram", "plain") and not (text(jaas.get("username")) and text(jaas.get("password"))):
        faults.append("mirrormaker_jaas: login_module %s needs username and password" % module)
    return faults


def faults(v, context=None):  # pylint: disable=unused-argument
    """Every refusal of the mirrormaker role's own settings, in a stable order."""
    found = []
    if len(v["mirrormaker_clusters"] or []) < 2:
        found.append("mirrormaker_clusters: needs two or more clusters, got %d" % len(v["mirrormaker_clusters"] or []))
    found += _jmx_faults(v)
    found += _exporter_faults(v)
    found += _jmx_access_faults(v)
    found += _jaas_faults(settings(v["mirrormaker_jaas"]), text(v["mirrormaker_keytab_src"]))
    found += rules.controller_file("mirrormaker_keytab_src", v["mirrormaker_keytab_src"])
    found += rules.safe_path("mirrormaker_krb5_conf", v["mirrormaker_krb5_conf"], optional=True)
    found += rules.safe_path("mirrormaker_config_dir", v["mirrormaker_config_dir"])
    found += rules.safe_path("mirrormaker_log_dir", v["mirrormaker_log_dir"])
    found += rules.unit_name("mirrormaker_service_name", v["mirrormaker_service_name"])
    found += rules.unit_values({var: v[var] for var in UNIT_VALUES}, UNIT_SECRET_HOME)
    return found
