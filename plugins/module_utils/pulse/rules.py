# -*- coding: utf-8 -*-
# Copyright: kafkaops maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
"""The pulse role's refusals, run in preflight on the host whose values the registration uses.

``faults(v, all_hosts, mirrormakers, jmx)`` takes the role's variables (``pulse_*``), the inventory's
hosts, the ``mirrormakers`` group and the JMX settings each MirrorMaker host's preflight recorded
(``{host: {enabled, port}}``). Pulse's own questions and answers are ``pulse/dialogue.py``'s.
"""

from __future__ import annotations

from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.common import rules
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.common.values import as_int, text


def _jmx_faults(port, hosts, jmx):
    known = [(host, jmx.get(host) or {}) for host in hosts if host in jmx]
    off = [host for host, settings in known if not settings.get("enabled")]
    other = [(host, settings.get("port")) for host, settings in known
             if settings.get("enabled") and as_int(settings.get("port")) != as_int(port)]
    faults = []
    if off:
        faults.append("mirrormaker_jmx_enabled: false on %s; Pulse reads MirrorMaker 2 over JMX" % ", ".join(off))
    if other:
        ports = []
        for _host, value in other:
            if text(value) not in ports:
                ports.append(text(value))
        faults.append("pulse_mm2_jmx_port: %s is not the mirrormaker_jmx_port of %s (%s)"
                      % (text(port), ", ".join(host for host, _value in other), ", ".join(ports)))
    return faults


def faults(v, context):
    """Every refusal of the Pulse settings, in a stable order. ``context``: the inventory's ``hosts``,
    its ``mirrormakers`` and their ``jmx`` settings by host."""
    all_hosts, mirrormakers, jmx = context["hosts"], context["mirrormakers"], context["jmx"]
    found = []
    pulse_hosts, mm2_hosts = list(v["pulse_hosts"] or []), list(v["pulse_mm2_hosts"] or [])
    if not pulse_hosts:
        found.append("pulse_hosts: no Pulse host; put the host where Pulse's accelo runs in the inventory group "
                     "'pulse' or in pulse_hosts")
    unknown = [host for host in pulse_hosts if host not in all_hosts]
    if unknown:
        found.append("pulse_hosts: %s not a host of this inventory" % ", ".join(unknown))
    if not v["pulse_mm2_nodes"]:
        found.append("pulse_mm2_nodes: empty; Pulse needs the MirrorMaker nodes to monitor")
    if not mm2_hosts:
        found.append("pulse_mm2_hosts: empty; no MirrorMaker host to register (the mirrormakers group is empty)")
    outside = [host for host in mm2_hosts if host not in mirrormakers]
    if outside:
        found.append("pulse_mm2_hosts: %s not in the mirrormakers group" % ", ".join(outside))
    if not v["pulse_mm2_expected_hostnames"]:
        found.append("pulse_mm2_expected_hostnames: empty; the hostnames Pulse shows could never be confirmed")
    found += _jmx_faults(v["pulse_mm2_jmx_port"], [host for host in mm2_hosts if host in mirrormakers], jmx)
    found += rules.port("pulse_mm2_jmx_port", v["pulse_mm2_jmx_port"])
    if not text(v["pulse_command"]).strip():
        found.append("pulse_command: empty; give the Pulse command that asks the MM2 questions")
    if as_int(v["pulse_prompt_timeout"]) < 1:
        found.append("pulse_prompt_timeout: %s must be at least 1 second" % text(v["pulse_prompt_timeout"]))
    return found
