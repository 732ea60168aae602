# -*- coding: utf-8 -*-
"""Every filter is documented: plugins/filter/<name>.yml for each name a plugins/filter/*.py
FilterModule().filters() returns, and ``ansible-doc -t filter kafkaops.mirrormaker.<name>`` renders it.

The filters are read from the plugins themselves, so a filter added without its doc file fails
here. The documented options are held to the function's parameters: callers pass them by the
names (keyword arguments) and in the order (positional) the documentation gives.
"""

from __future__ import annotations

import glob
import importlib
import inspect
import os
import shutil
import subprocess
import sys

import pytest
import yaml

from repo_paths import COLLECTIONS, REPO  # tests/unit/conftest.py puts tests/lib on sys.path

PACKAGE = "ansible_collections.kafkaops.mirrormaker.plugins.filter"
FILTER_DIR = os.path.join(REPO, "plugins", "filter")
FQCN = "kafkaops.mirrormaker."


def all_filters():
    """{name: (plugin file name, function)} over every plugins/filter/*.py."""
    found = {}
    for path in sorted(glob.glob(os.path.join(FILTER_DIR, "*.py"))):
        plugin = os.path.basename(path)
        module = importlib.import_module("%s.%s" % (PACKAGE, plugin[:-3]))
        for name, func in module.FilterModule().filters().items():
            assert name not in found, "filter %s is defined in %s and in %s" % (name, found[name][0], plugin)
            found[name] = (plugin, func)
    return found


FILTERS = all_filters()


def load_doc(name):
    path = os.path.join(FILTER_DIR, name + ".yml")
    assert os.path.isfile(path), "filter %s (plugins/filter/%s) has no documentation file plugins/filter/%s.yml" % (
        name, FILTERS[name][0], name)
    with open(path, encoding="utf-8") as handle:
        return yaml.safe_load(handle)


def test_the_plugins_define_filters():
    # Guards the parametrisations below: an import that found nothing would make them vacuous.
    assert len(FILTERS) >= 20 and {"kafka_sha512", "mm2_properties", "mm2_status"} <= set(FILTERS)


@pytest.mark.parametrize("name", sorted(FILTERS))
def test_doc_file_describes_the_filter(name):
    doc = load_doc(name)
    assert set(doc) == {"DOCUMENTATION", "EXAMPLES", "RETURN"}
    documentation = doc["DOCUMENTATION"]
    assert documentation["name"] == name
    assert str(documentation["version_added"]) and documentation["author"]
    assert documentation["short_description"] and documentation["description"]
    assert "_value" in doc["RETURN"] and doc["RETURN"]["_value"]["description"]
    assert FILTERS[name][1].__doc__


@pytest.mark.parametrize("name", sorted(FILTERS))
def test_doc_options_are_the_filter_arguments(name):
    documentation = load_doc(name)["DOCUMENTATION"]
    params = list(inspect.signature(FILTERS[name][1]).parameters.values())
    # The piped value is _input; the other options keep the parameter's name, for keyword use.
    expected = ["_input"] + [param.name for param in params[1:]]
    positional = [item.strip() for item in str(documentation.get("positional", "")).split(",") if item.strip()]
    assert positional == expected
    options = documentation["options"]
    assert sorted(options) == sorted(expected)
    for param, option in zip(params, expected):
        required = param.default is inspect.Parameter.empty
        assert bool(options[option].get("required")) is required, "%s: required must be %s" % (option, required)
        assert options[option]["description"] and options[option]["type"]


@pytest.mark.parametrize("name", sorted(FILTERS))
def test_examples_call_the_filter_by_its_full_name(name):
    examples = load_doc(name)["EXAMPLES"]
    tasks = yaml.safe_load(examples)
    assert isinstance(tasks, list) and all(isinstance(task, dict) and task.get("name") for task in tasks)
    assert "kafkaops.mirrormaker.%s" % name in examples


def test_every_doc_file_documents_a_filter():
    docs = {os.path.basename(path)[:-4] for path in glob.glob(os.path.join(FILTER_DIR, "*.yml"))}
    assert sorted(docs - set(FILTERS)) == []


@pytest.mark.parametrize("name", sorted(FILTERS))
def test_ansible_doc_renders_the_filter(name):
    binary = shutil.which("ansible-doc", path=os.path.dirname(sys.executable)) or "ansible-doc"
    done = subprocess.run([binary, "-t", "filter", FQCN + name], capture_output=True, text=True, check=False,
                          timeout=120, cwd=REPO,
                          env=dict(os.environ, ANSIBLE_COLLECTIONS_PATH=COLLECTIONS, ANSIBLE_NOCOLOR="1"))
    assert done.returncode == 0, done.stderr
    assert "[WARNING]" not in done.stderr, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("> FILTER %s%s " % (FQCN, name)), lines[0]
    assert lines[0].endswith("/plugins/filter/%s.yml)" % name), lines[0]
    for heading in ("OPTIONS", "POSITIONAL:", "EXAMPLES:", "RETURN VALUES:"):
        assert any(line.startswith(heading) for line in lines), heading
    # Without colour ansible-doc marks a required option with '=' and an optional one with '-'.
    for option, spec in load_doc(name)["DOCUMENTATION"]["options"].items():
        mark = "=" if spec.get("required") else "-"
        assert [mark, option] in [line.split()[:2] for line in lines], (mark, option, done.stdout)
