# -*- coding: utf-8 -*-
# Copyright: kafkaops maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
"""Documentation of the mm2_smoke_plan action (the plan is built on the controller)."""

from __future__ import annotations

DOCUMENTATION = r"""
module: mm2_smoke_plan
short_description: Refuse bad smoke job input and build the mm2_smoke role's plan, once, on the controller
description:
  - The mm2_smoke role's preflight. Checks the role's input, one message per fault naming the
    variable (C(mm2_smoke_records), C(mm2_smoke_timeouts.offsets), ...), and returns the plan its
    tasks render and run. The rules and derivations live in
    C(plugins/module_utils/mm2/smoke_plan.py).
  - The plan holds the smoke job's configuration (each cluster's client settings, with MirrorMaker
    2's Kerberos login as the job's JAAS line for a GSSAPI cluster without one; the flows; the
    checks, whose waits follow MirrorMaker 2's intervals unless given), the Kafka source jars found
    in C(jars_src), and the Spark master's kind and addresses.
  - When the clusters' settings hold a secret, the result is censored in the output; the
    registered variable keeps the values for the task that writes the job's file.
  - Runs on the controller only.
version_added: 0.1.0
author:
  - kafkaops maintainers (!UNKNOWN)
options:
  mode:
    description: C(mm2_smoke_mode).
    type: str
    required: true
  checks:
    description: C(mm2_smoke_checks).
    type: list
    elements: str
    required: true
  topics:
    description: C(mm2_smoke_topics).
    type: raw
    required: true
  records:
    description: C(mm2_smoke_records).
    type: raw
    required: true
  payload_bytes:
    description: C(mm2_smoke_payload_bytes).
    type: raw
    required: true
  partitions:
    description: C(mm2_smoke_partitions).
    type: raw
    required: true
  timeouts:
    description: C(mm2_smoke_timeouts).
    type: dict
    required: true
  reconcile_topics:
    description: C(mm2_smoke_reconcile_topics).
    type: list
    elements: str
    required: true
  extra_checks:
    description: C(mm2_smoke_extra_checks), combined recursively into the job's checks last.
    type: dict
    required: true
  jars_src:
    description: C(mm2_smoke_jars_src).
    type: str
    required: true
  wheels_src:
    description: C(mm2_smoke_wheels_src).
    type: str
    required: true
  spark_master:
    description: C(mm2_smoke_spark_master).
    type: str
    required: true
  spark_master_timeout:
    description: C(mm2_smoke_spark_master_timeout).
    type: raw
    required: true
  user:
    description: C(mm2_smoke_user).
    type: str
    required: true
  jaas:
    description: C(mm2_smoke_jaas).
    type: dict
    required: true
  krb5_conf:
    description: C(mm2_smoke_krb5_conf).
    type: str
    required: true
  lag_exporter_enabled:
    description: C(mm2_smoke_lag_exporter_enabled).
    type: bool
    default: false
  lag_exporter_address:
    description: C(mm2_smoke_lag_exporter_address).
    type: str
    default: 0.0.0.0
  lag_exporter_port:
    description: C(mm2_smoke_lag_exporter_port).
    type: raw
    default: 9405
  lag_exporter_timeout:
    description: C(mm2_smoke_lag_exporter_timeout).
    type: raw
    default: 8
  install_dir:
    description: C(mm2_smoke_install_dir), checked for the lag exporter's unit.
    type: str
    default: ""
  python:
    description: C(mm2_smoke_python), checked for the lag exporter's unit.
    type: str
    default: ""
  model:
    description: What M(kafkaops.mirrormaker.mm2_config) returned for the clusters and flows to check.
    type: dict
    required: true
  mirrormaker_keytab_src:
    description: C(mirrormaker_keytab_src), when MirrorMaker 2's Kerberos login is the job's.
    type: str
    default: ""
  mirrormaker_config_dir:
    description: C(mirrormaker_config_dir), where MirrorMaker 2's keytab is on the host.
    type: str
    default: ""
extends_documentation_fragment:
  - kafkaops.mirrormaker.controller_action
  - ansible.builtin.action_common_attributes
"""

EXAMPLES = r"""
- name: Refuse smoke settings that break a rule and build the plan
  kafkaops.mirrormaker.mm2_smoke_plan:
    mode: smoke
    checks: [markers, offsets]
    topics: [mm2-smoke]
    records: 100
    payload_bytes: 256
    partitions: 3
    timeouts: {markers: 180}
    reconcile_topics: []
    extra_checks: {}
    jars_src: /srv/spark-jars
    wheels_src: ""
    spark_master: "local[2]"
    spark_master_timeout: 10
    user: mm2-smoke
    jaas: {}
    krb5_conf: ""
    model: "{{ __mm2_smoke_model }}"
  register: smoke_plan
"""

RETURN = r"""
plan:
  description: The role's plan; returned when the input is valid.
  returned: success
  type: dict
  contains:
    config:
      description: The smoke job's configuration file (C(version), C(clusters), C(krb5_conf), C(flows), C(checks)).
      type: dict
    has_secrets:
      description: Whether the clusters' settings hold a secret (the file is then written unshown).
      type: bool
    jars:
      description: Names of the jars in C(jars_src).
      type: list
      elements: str
    local:
      description: The master is C(local[N]) (the job runs with C(python -m mm2_smoke)).
      type: bool
    standalone:
      description: The master is a standalone one (C(spark://)).
      type: bool
    master_addresses:
      description: The host:port of a standalone master and its standbys.
      type: list
      elements: str
    lag_exporter_listen:
      description: The lag exporter's C(--listen) address, C(ADDR:PORT) (an IPv6 address in brackets).
      type: str
    lag_exporter_url:
      description: The lag exporter's C(/metrics) as the smoke host reaches it (loopback for a wildcard address).
      type: str
msg:
  description: On a refusal, one message per fault, each naming its variable.
  returned: failure
  type: list
  elements: str
"""
