# -*- coding: utf-8 -*-
# Copyright: kafkaops maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
"""The rules every role applies to its inputs: ports, paths, host names, unit names.

Each check returns a list of messages (empty when the value is fine), every message naming the
variable, its value and the rule, so a role's plan can collect one message per fault.
Standard library only.
"""

from __future__ import annotations

import re

# host:port, or [IPv6]:port, as Kafka's bootstrap.servers takes it.
HOSTPORT_RE = re.compile(r"^(?:\[[0-9A-Fa-f:.]+\]|[^\s,:\[\]]+):\d{1,5}$")
