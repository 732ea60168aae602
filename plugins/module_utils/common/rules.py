# -*- coding: utf-8 -*-
# Copyright: kafkaops maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
"""The rules every role applies to its inputs: ports, paths, host names, unit names, files.

Each check returns a list of messages, empty when the value is fine. Every message names the
variable, its value and the rule, so a role's rules collect one message per fault. A value that is
rendered into a unit or shell line is shown as JSON: quotes, blanks and line breaks stay visible.
Standard library only.
"""

from __future__ import annotations

import json
import os
import re

from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.common import secrets
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.common.values import as_int, text

# host:port, or [IPv6]:port, as Kafka's bootstrap.servers takes it.
HOSTPORT_RE = re.compile(r"^(?:\[[0-9A-Fa-f:.]+\]|[^\s,:\[\]]+):\d{1,5}$")
# Rendered unquoted into unit lines, script lines and properties files: no blank, quote or '$'.
SAFE_PATH_RE = re.compile(r"^/[A-Za-z0-9._/@+-]*$")
HOST_RE = re.compile(r"^[A-Za-z0-9._:-]+$")
UNIT_NAME_RE = re.compile(r"^[A-Za-z0-9_.@-]+$")
# Kafka names (group ids, topic prefixes, cluster names): what Kafka's own topic names allow.
NAME_RE = re.compile(r"^[A-Za-z0-9._-]+$")
# Where the unit's Environment="..." quoting would break.
UNIT_UNSAFE_RE = re.compile(r'[\n\r"\\]')


def shown(value):
    """``value`` as a message shows a value that reaches a rendered line: JSON."""
    return json.dumps(value)


def _match(regex, value):
    return regex.match(text(value)) is not None


def port(var, value):
    if 0 < as_int(value) < 65536:
        return []
    return ["%s: %s is not a TCP port (1-65535)" % (var, text(value))]


def safe_path(var, value, optional=False):
    if (optional and text(value) == "") or _match(SAFE_PATH_RE, value):
        return []
    return ["%s: %s is not an absolute path of letters, digits and . _ / @ + -" % (var, shown(value))]


def host(var, value, optional=False, why=""):
    """A host name or address; ``why``, when given, follows the message (where the value is written)."""
    if (optional and text(value) == "") or _match(HOST_RE, value):
        return []
    return ["%s: %s is not a host name or address%s" % (var, shown(value), "; " + why if why else "")]


def unit_name(var, value):
    if _match(UNIT_NAME_RE, value):
        return []
    return ["%s: %s is not a systemd unit name" % (var, shown(value))]


def name(var, value, what, optional=False):
    """A Kafka name (``what``: "a group id", "a topic name prefix", ...) of letters, digits and . _ -."""
    if (optional and text(value) == "") or _match(NAME_RE, value):
        return []
    return ["%s: %s is not %s of letters, digits and . _ -" % (var, shown(value), what)]


def controller_file(var, value):
    """A file the play reads on the controller: absent is refused now, not when a copy fails."""
    if text(value) == "" or os.path.isfile(text(value)):
        return []
    return ["%s: %s is not a file on the controller" % (var, text(value))]


def required(var, value, why):
    return [] if len(value or "") else ["%s: %s" % (var, why)]


def unit_values(values, secret_home):
    """Refusals for free-text variables rendered into a unit's Environment="..." line.

    ``values`` maps variable names to their values. A newline would add a unit line and a
    double quote or backslash would end or escape the quoting, so each is refused; so is a
    secret, since unit files are world-readable (``secret_home`` says where it belongs).
    """
    faults = []
    for var in sorted(values):
        value = text(values[var])
        if UNIT_UNSAFE_RE.search(value):
            faults.append("%s: holds a newline, double quote or backslash, which would break out of the unit's "
                          "Environment line" % var)
        found = secrets.option_secrets(value)
        if found:
            faults.append("%s: carries a secret (%s) that would land in the world-readable unit file; %s"
                          % (var, ", ".join(found), secret_home))
    return faults


def port_conflicts(claims, host_name):
    """Ports claimed twice on one host across roles: {role: {port: variable}} -> messages."""
    seen, errors = {}, []
    for role in sorted(claims or {}):
        for number, var in sorted((claims[role] or {}).items()):
            if number in seen:
                errors.append("%s: port %s on host %s is already %s" % (var, number, host_name, seen[number]))
            else:
                seen[number] = var
    return errors
