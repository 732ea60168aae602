# -*- coding: utf-8 -*-
"""inventories/pulse_example reproduces the Acceldata Pulse MirrorMaker 2 example.

Page: Acceldata Pulse, "Kafka MirrorMaker"; its mm2.properties example is copied unchanged into
tests/unit/fixtures/pulse/mm2.properties. ansible-playbook renders mm2.properties with the role's defaults, the inventory's group_vars and the
role's vars through the role's own code path (the mm2_config action builds the model, the
kafka_properties module writes the file, as roles/mirrormaker/tasks/configure.yml does); the result is parsed
as Java properties and compared key for key, value for value, both ways, with the page's file; every
difference is a named departure (DEPARTURES below).
"""

from __future__ import annotations

import os

import pytest
import yaml

import local_playbook
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.common.properties import parse_properties
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.mm2 import model as mm2_model

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
GROUP_VARS = os.path.join(REPO, "inventories", "pulse_example", "group_vars", "mirrormakers.yml")
ROLE = os.path.join(REPO, "roles", "mirrormaker")

# The page's mm2.properties, copied from its text unchanged (tests/unit/fixtures/pulse/mm2.properties).
PAGE_FILE = os.path.join(REPO, "tests", "unit", "fixtures", "pulse", "mm2.properties")
# Where the rendered file departs from the page, key by key, and why. A difference not named here
# fails, and so does a named one that is no longer a difference.
DEPARTURES = {
    "clusterA.bootstrap.servers": "the page's brokerA:9092 is a site's host; the example has a placeholder host",
    "clusterB.bootstrap.servers": "the page's brokerB:9093 is a site's host; the example has a placeholder host",
    "topics.blacklist": "renamed topics.exclude (KIP-629); the role renders the current name and warns",
    "groups.blacklist": "renamed groups.exclude (KIP-629); the role renders the current name and warns",
    "topics.exclude": "the page's topics.blacklist, under its current name, and with the regex the page means: "
                      "Java reads the page's line as .*[-.]internal,.*.replica (a backslash escapes the next "
                      "character in a properties file), so the role writes each backslash doubled",
    "groups.exclude": "the page's groups.blacklist, under its current name",
}
# The page's values as written, before a properties reader takes its backslashes as escapes.
AS_WRITTEN = ("topics.blacklist",)
SITE_HOSTS = {"clusterA.bootstrap.servers": "clusterA-broker1.example.invalid:9092",
              "clusterB.bootstrap.servers": "clusterB-broker1.example.invalid:9092"}


def page(as_written=()):
    """The page's file as Java reads it; the keys in ``as_written`` as their line has them."""
    with open(PAGE_FILE, encoding="utf-8") as handle:
        text = handle.read()
    props = parse_properties(text)
    for line in text.splitlines():
        key, _sep, value = line.partition("=")
        if key in as_written:
            props[key] = value
    return props


LIST_KEYS = {"clusters", "topics", "groups", "topics.exclude", "groups.exclude",
             "clusterA.bootstrap.servers", "clusterB.bootstrap.servers"}
PLAYBOOK = """
- hosts: localhost
  gather_facts: false
  vars_files: [{defaults}, {group_vars}, {role_vars}]
  tasks:
    - kafkaops.mirrormaker.mm2_config:
        clusters: "{{{{ mirrormaker_clusters }}}}"
        flows: "{{{{ mirrormaker_flows }}}}"
        properties: "{{{{ __mirrormaker_properties }}}}"
        options: "{{{{ __mirrormaker_options }}}}"
      register: __mirrormaker_model
    - kafkaops.mirrormaker.kafka_properties:
        path: {dest}
        properties: "{{{{ __mirrormaker_model.properties }}}}"
        sort: false
        header: "{{{{ lookup('ansible.builtin.config', 'DEFAULT_MANAGED_STR') | comment }}}}"
        mode: "0600"
"""


def _comment(text):
    try:
        from ansible.plugins.filter.core import comment
    except ImportError:  # pragma: no cover - ansible-core is a test dependency
        return "\n".join("# " + line for line in text.splitlines())
    return comment(text)


def expected():
    """The page's keys with the departures applied: the example's hosts, the current names."""
    return dict((mm2_model.DEPRECATED_KEYS.get(k, k), SITE_HOSTS.get(k, v)) for k, v in page(AS_WRITTEN).items())


def normalise(props):
    return dict((k, [i.strip() for i in v.split(",")] if k in LIST_KEYS else v) for k, v in props.items())


@pytest.fixture(scope="module")
def group_vars():
    with open(GROUP_VARS, encoding="utf-8") as handle:
        return yaml.safe_load(handle)


@pytest.fixture(scope="module")
def rendered(tmp_path_factory):
    work = tmp_path_factory.mktemp("pulse")
    dest = work / "mm2.properties"
    playbook = work / "render.yml"
    playbook.write_text(PLAYBOOK.format(
        defaults=os.path.join(ROLE, "defaults", "main.yml"), group_vars=GROUP_VARS,
        role_vars=os.path.join(ROLE, "vars", "main.yml"), dest=dest))
    result = local_playbook.run(playbook)
    assert result.returncode == 0, result.stdout + result.stderr
    return dest.read_text(encoding="ascii")


def test_rendered_file_shape(rendered):
    lines = rendered.splitlines()
    assert lines[0].startswith("#") and "Ansible managed" in rendered
    body = [line for line in lines if line and not line.startswith("#")]
    assert body[0] == "clusters=clusterA,clusterB"
    assert all("=" in line for line in body)
    assert rendered.isascii()


def test_matches_page_key_for_key(rendered):
    parsed = normalise(parse_properties(rendered))
    written = normalise(page())
    found = sorted(key for key in set(written) | set(parsed) if written.get(key) != parsed.get(key))
    assert found == sorted(DEPARTURES)
    assert parsed == normalise(expected())


def test_java_reads_the_same(rendered, tmp_path, java_load):
    path = tmp_path / "mm2.properties"
    path.write_text(rendered, encoding="ascii")
    (java_props,) = java_load([str(path)])
    assert java_props == dict(parse_properties(rendered))
    assert java_props["topics.exclude"] == r".*[\-\.]internal,.*\.replica,__consumer_offsets"


def test_backslashes_doubled_in_file(rendered):
    assert r"topics.exclude=.*[\\-\\.]internal,.*\\.replica,__consumer_offsets" in rendered.splitlines()


def test_no_errors_and_blacklist_warnings(group_vars):
    args = (group_vars["mirrormaker_clusters"], group_vars["mirrormaker_flows"],
            group_vars["mirrormaker_properties"],
            {"exactly_once": group_vars["mirrormaker_exactly_once"],
             "internal_rest": group_vars["mirrormaker_internal_rest"]})
    assert mm2_model.validate(*args) == []
    warnings = mm2_model.warnings(*args)
    assert len(warnings) == 2
    assert any("mirrormaker_properties['topics.blacklist']" in w and "'topics.exclude'" in w for w in warnings)
    assert any("mirrormaker_properties['groups.blacklist']" in w and "'groups.exclude'" in w for w in warnings)
    flows = mm2_model.effective_flows(*args)
    assert [f["remote_topic_prefix"] for f in flows] == ["clusterA.", "clusterB."]
    assert flows[0]["topics_exclude"] == [r".*[\-\.]internal", r".*\.replica", "__consumer_offsets"]
