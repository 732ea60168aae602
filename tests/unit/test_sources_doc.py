# -*- coding: utf-8 -*-
"""docs/sources.md lists exactly the departures the example tests hold, with their reasons.

The page is written from the tests' lists: ``python tests/unit/test_sources_doc.py`` rewrites it
after a departure changes."""

from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
DOC = os.path.join(REPO, "docs", "sources.md")
# run as a script too: the example tests import tests/lib and the collection (.collections), as
# tests/unit/conftest.py provides under pytest
for _path in (HERE, os.path.join(REPO, "tests", "lib"), os.path.join(REPO, ".collections")):
    if _path not in sys.path:
        sys.path.insert(0, _path)

import test_dr_example as dr  # noqa: E402 pylint: disable=wrong-import-position
import test_pulse_example as pulse  # noqa: E402 pylint: disable=wrong-import-position

HEAD = """# Where the collection departs from the pages it implements

The collection implements two published pages. Their examples are kept unchanged in
`tests/unit/fixtures/` (placeholders kept), and two tests compare what the roles render for the
example inventories with them key for key, both ways. Every difference is listed here and in the
test, with its reason. A difference that is not listed fails the test, and so does a listed one
that is no longer a difference. This page is written from the tests' lists
(`python tests/unit/test_sources_doc.py`), and `tests/unit/test_sources_doc.py` fails when it
is not.

## Red Hat, "Setting up MirrorMaker for disaster recovery"

`inventories/disaster_recovery`, rendered by the connect role's preflight, against the guide's
section 5.6 examples and section 5.7 ACL lists (`tests/unit/test_dr_example.py`). The guide's
`A` and `B` are the example's `east` and `west`, and its bootstrap placeholders are the
example's hosts, and its `<TOPICS>` and `<GROUPS>` the example's lists. The example is
compared as it is (brokers without an authorizer, so `sync.topic.acls.enabled=false` as in the
guide's example) and with `kafka_broker_authorizer_enabled: true` on its brokers."""

AUTHORIZER = "### MirrorSourceConnector, with an authorizer on the brokers\n\nBeyond the table above:\n\n"

ACLS = """### ACLs

With an authorizer on the brokers (the ACL sync on), the source cluster gets exactly the guide's
list (offset syncs on the target). The target cluster gets the guide's list and these grants
besides (`docs/acls.md` gives every binding's class):
"""

NO_SYNC = """Without an authorizer (the example as it is: no ACL applies at all, but the derivation still
answers for `sync.topic.acls.enabled=false`), these of the guide's bindings are left out:
"""

PULSE = """## Acceldata Pulse, "Kafka MirrorMaker"

`inventories/pulse_example`, rendered by the mirrormaker role, against the page's `mm2.properties`
(`tests/unit/test_pulse_example.py`). The `KAFKA_JMX_OPTS` export and the JAAS line go right
before the `exec` line of `connect-mirror-maker.sh`, as the page says (`docs/mirrormaker.md`)."""


def _table(title, departures):
    by_reason = {}
    for key in sorted(departures):
        by_reason.setdefault(departures[key], []).append(key)
    rows = ["| %s | %s |" % (", ".join("`%s`" % key for key in keys), reason)
            for reason, keys in sorted(by_reason.items(), key=lambda item: item[1][0])]
    return "\n".join(["### " + title, "", "| keys | departure and reason |", "| --- | --- |"] + rows)


def _bullets(departures):
    return "\n".join("- %s%s." % (why[0].upper(), why[1:]) for why in departures)


def render():
    parts = [HEAD,
             _table("Worker properties (`connect-distributed.properties`)", dr.WORKER_DEPARTURES),
             _table("MirrorSourceConnector", dr.SOURCE_DEPARTURES),
             _table("MirrorCheckpointConnector", dr.CHECKPOINT_DEPARTURES),
             AUTHORIZER + "\n".join(_table("", dr.AUTHORIZER_SOURCE_DEPARTURES).splitlines()[2:]),
             ACLS + _bullets(dr.TARGET_ACL_DEPARTURES),
             NO_SYNC + _bullets(dr.NO_SYNC_ACL_DEPARTURES),
             PULSE,
             _table("mm2.properties", pulse.DEPARTURES)]
    return "\n\n".join(parts) + "\n"


def test_the_page_lists_the_tests_departures():
    with open(DOC, encoding="utf-8") as handle:
        assert handle.read() == render(), "docs/sources.md is stale: run python tests/unit/test_sources_doc.py"


if __name__ == "__main__":
    with open(DOC, "w", encoding="utf-8") as out:
        out.write(render())
