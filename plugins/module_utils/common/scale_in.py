# -*- coding: utf-8 -*-
# Copyright: kafkaops maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
"""Nodes taken out by a variable (``mirrormaker_state: absent``, ``connect_state: absent``).

A node taken out stops, and its tasks move to the nodes that remain once the group's
``scheduled.rebalance.max.delay.ms`` has passed: the play waits on those nodes until they run them.
"""

from __future__ import annotations


def is_absent(host_vars, state_var):
    """Whether the host's ``state_var`` takes it out; unset reads as present (the role default)."""
    return (host_vars or {}).get(state_var, "present") == "absent"


def remaining(hostvars, hosts, state_var):
    """The hosts of ``hosts`` that are not taken out, in their order."""
    return [h for h in hosts if not is_absent(hostvars.get(h), state_var)]


def left(hostvars, hosts, role):
    """The hosts of ``hosts`` whose ``role`` service this run took out, in their order, each with
    when it stopped (``at``, the controller's clock) and its member id (``id``), as
    ``kafka_common``'s ``service_absent`` recorded them (``__kafka_common_taken_out.<role>``)."""
    found = []
    for host in hosts:
        record = ((hostvars.get(host) or {}).get("__kafka_common_taken_out") or {}).get(role)
        if record is not None:
            found.append({"host": host, "at": record.get("at"), "id": record.get("id", "")})
    return found


def faults(state_var, host, peers, play_hosts, hostvars):
    """Why ``host`` cannot be taken out in this run; empty when it can (or stays).

    ``peers`` are the hosts of its group, itself included (the MirrorMaker nodes, or the workers of
    one Connect cluster). The play waits on the nodes that remain until they run the tasks of the
    ones taken out, so they must be in the play: a run limited to the leaving host would stop it
    and return before anything ran its tasks.
    """
    if not is_absent(hostvars.get(host), state_var):
        return []
    missing = [p for p in remaining(hostvars, peers, state_var) if p not in play_hosts]
    if missing:
        return ["%s: absent on %s, but %s, which take over its tasks, are not in this run (--limit?): the run "
                "waits on them until they run its tasks" % (state_var, host, ", ".join(missing))]
    return []
