"""Every role's meta/argument_specs.yml documents exactly the variables its defaults define."""

from pathlib import Path

import pytest
import yaml

ROLES = sorted(p.parent.parent for p in Path(__file__).resolve().parents[2].glob("roles/*/defaults/main.yml"))


def _load(path):
    return yaml.safe_load(path.read_text()) or {}


@pytest.mark.parametrize("role", ROLES, ids=[r.name for r in ROLES])
def test_spec_matches_defaults_key_for_key(role):
    defaults = _load(role / "defaults/main.yml")
    options = _load(role / "meta/argument_specs.yml")["argument_specs"]["main"]["options"]
    assert sorted(defaults) == sorted(options), (
        "only in defaults: %s; only in argument_specs: %s"
        % (sorted(set(defaults) - set(options)), sorted(set(options) - set(defaults)))
    )


@pytest.mark.parametrize("role", ROLES, ids=[r.name for r in ROLES])
def test_spec_defaults_equal_role_defaults(role):
    defaults = _load(role / "defaults/main.yml")
    options = _load(role / "meta/argument_specs.yml")["argument_specs"]["main"]["options"]
    for name, option in options.items():
        value = defaults[name]
        if isinstance(value, str) and "{{" in value:
            assert "default" not in option, "%s: a templated default is not repeated in the spec" % name
        else:
            assert option.get("default") == value, "%s: spec default %r, defaults/main.yml %r" % (
                name,
                option.get("default"),
                value,
            )


@pytest.mark.parametrize("role", ROLES, ids=[r.name for r in ROLES])
def test_public_variables_carry_the_role_prefix(role):
    for name in _load(role / "defaults/main.yml"):
        assert name.startswith(role.name + "_"), name


@pytest.mark.parametrize("role", ROLES, ids=[r.name for r in ROLES])
def test_defaults_pass_ansibles_own_validation_of_the_spec(role):
    """Ansible validates a role's arguments when it starts: the defaults alone must pass (an empty
    dict default whose sub-option is required would fail every run that does not set it)."""
    from ansible.module_utils.common.arg_spec import ArgumentSpecValidator

    # Templated defaults are checked after templating, at run time.
    defaults = {k: v for k, v in _load(role / "defaults/main.yml").items() if not (isinstance(v, str) and "{{" in v)}
    options = _load(role / "meta/argument_specs.yml")["argument_specs"]["main"]["options"]
    result = ArgumentSpecValidator({k: v for k, v in options.items() if k in defaults}).validate(defaults)
    assert result.error_messages == []
