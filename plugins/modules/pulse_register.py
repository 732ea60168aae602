#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: kafkaops maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: pulse_register
short_description: Register the MirrorMaker 2 nodes with Acceldata Pulse by answering accelo's questions
version_added: 0.1.0
description:
  - Runs Acceldata Pulse's command-line tool C(accelo) on a terminal (a pseudo-terminal, through
    pexpect) in a login shell that has sourced O(env_file), and answers its MirrorMaker 2 questions
    as Pulse's documentation shows them.
  - >-
    C(Do you want to monitor KafkaMM2 [y/n]) is answered from O(monitor);
    C(Enter the Kafka MirrorMaker nodes ...) with
    O(mm2_nodes) joined by commas; C(Enter the Kafka MirrorMaker JMX Port ...) with
    O(jmx_port).
  - >-
    Pulse then shows C(The Kafka MM2 hostnames are: [h1, h2]) and asks
    C(Is the above Kafka MM2 hostname information correct? [y/n]). The module answers V(y) only when
    the hostnames shown are the O(expected_hostnames) (see O(hostname_match)); otherwise it answers
    V(n), stops the tool and fails with both lists.
  - Other questions of the dialogue are answered from O(answers) and O(secret_answers). A question
    that nothing answers fails the task once nothing more has come for O(unknown_prompt_grace)
    seconds, naming the question. Nothing is answered blindly.
  - Prompts are recognised whatever their spacing and case, with CRLF or LF line ends, and when the
    tool writes them in several parts.
  - Succeeds when every MM2 question was asked and answered and the tool exited with status 0. The
    tool ending earlier, with another status, or without asking the MM2 questions (for example
    because Pulse says KafkaMM2 is already configured) fails the task, with the transcript.
  - Idempotent through O(state_file), a record of the last successful registration. When the record
    holds the same answers (a digest covers them all, secret ones included) the tool is not run; a
    changed answer, node list or JMX port registers again.
options:
  command:
    description:
      - The C(accelo) command line that asks the MM2 questions, run as shell text after
        O(env_file) was sourced. It is the user's shell text by design (quote what needs quoting).
      - V(accelo config cluster) is the first-time configuration of a cluster.
    type: str
    default: accelo reconfig cluster
  env_file:
    description:
      - Pulse's environment file, sourced before O(command); it sets C(AcceloHome) and the C(PATH)
        that holds C(accelo). Must exist when the tool runs.
    type: path
    default: /etc/profile.d/ad.sh
  shell:
    description:
      - The shell run as C(<shell> -l -c '. <env_file> && <command>'), a login shell as an operator's.
    type: path
    default: /bin/bash
  mm2_nodes:
    description:
      - The MirrorMaker 2 nodes, as Pulse is to reach them (host names or IP addresses), answered
        comma-joined to the nodes question. At least one; no blanks or commas inside a node.
    type: list
    elements: str
    required: true
  expected_hostnames:
    description:
      - The hostnames Pulse must show for O(mm2_nodes) before the module confirms them.
      - Defaults to O(mm2_nodes). When the nodes are given as IP addresses, list the names Pulse
        resolves them to here, since Pulse shows names.
    type: list
    elements: str
  hostname_match:
    description:
      - How the hostnames shown are compared with O(expected_hostnames), always case-insensitive,
        without a final dot, and in any order (the two sets must be equal).
      - V(fqdn) compares whole names. V(short) compares the part before the first dot on both sides
        (an IP address is compared whole).
    type: str
    choices: [fqdn, short]
    default: fqdn
  jmx_port:
    description:
      - The JMX port of MirrorMaker 2 on the nodes, answered to the JMX port question (1 to 65535).
    type: int
    required: true
  monitor:
    description:
      - The answer to C(Do you want to monitor KafkaMM2 [y/n]). With V(false) that is the only MM2
        question that must be asked (the others are answered if Pulse asks them anyway).
    type: bool
    default: true
  answers:
    description:
      - Answers to the other questions of the dialogue (cluster name, alerts...). A question is
        answered with the first entry whose O(answers[].prompt) matches the output written since the
        last answer, ending on the question's line. The MM2 questions are matched first.
      - An entry asked three times in a row fails the task (the tool refuses the answer).
    type: list
    elements: dict
    default: []
    suboptions:
      prompt:
        description:
          - A Python regular expression, matched case-insensitively; for example
            V(enter the cluster name). It must not match empty text.
        type: str
        required: true
      answer:
        description: The line to send (without a line break; one is added).
        type: str
        required: true
  secret_answers:
    description:
      - Like O(answers), for answers that are secrets (database passwords...); tried after
        O(answers). A secret answer never appears in the result, the transcript (it is replaced with
        V(********) there too, should the tool echo it), the diff or O(state_file).
      - Each O(secret_answers[].answer) is C(no_log); the prompts are not, so the questions stay
        readable in the transcript.
    type: list
    elements: dict
    default: []
    suboptions:
      prompt:
        description: As O(answers[].prompt).
        type: str
        required: true
      answer:
        description: The secret line to send.
        type: str
        required: true
  timeout:
    description:
      - Seconds the tool may take to show the next question this module knows, counted from the
        start or the last answer, the tool's own work between two questions included. When it
        passes, the tool is stopped and the task fails with the transcript.
    type: int
    default: 60
  unknown_prompt_grace:
    description:
      - When the output ends with something that looks like a question that no MM2 pattern,
        O(answers) or O(secret_answers) matches, and nothing more comes for this many seconds, the
        tool is stopped and the task fails naming the question.
      - Looks like a question, an unfinished last line (no line break after it yet) that ends with
        V(:), V(?) or V(]), blanks allowed, or holds V([y/n]); or a finished last line that ends with
        V(?) or holds V([y/n]). A finished line ending with V(:) is taken for a heading.
      - Keep it above the pauses of a tool that writes a prompt in several parts.
    type: float
    default: 5
  state_file:
    description:
      - The record of the last successful registration, JSON, mode C(0600) (its directory is
        created C(0700) when missing). Holds the non-secret answers, the secret prompts with masked
        answers, the hostnames Pulse showed, and a salted PBKDF2-HMAC-SHA256 digest of all the
        answers, secret ones included; never a secret itself.
      - Written only after a successful registration.
    type: path
    default: /var/lib/kafkaops/pulse-mm2.json
  force:
    description:
      - Run the tool even when O(state_file) records the same answers.
    type: bool
    default: false
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
attributes:
  check_mode:
    support: full
    details: The tool is not run; C(changed) says whether it would be.
  diff_mode:
    support: full
    details: Before is the answers recorded in O(state_file), after the answers given; secret answers show as V(********).
  platform:
    platforms: posix
requirements:
  - pexpect (on the managed host; needed only when the tool runs, not in check mode or when nothing changes)
notes:
  - The default O(command) is V(accelo reconfig cluster), the command Pulse's scripts run to change a
    configured cluster (they pass C(-a)); V(accelo config cluster) is the first-time variant.
    Pulse's documentation shows the MM2 questions but not which command asks them, so the command is
    a parameter.
  - The MM2 questions are matched by their documented wording. If a Pulse version words one
    differently, the task fails naming the question it did not recognise, rather than answering it.
  - Successful registration requires all four MM2 questions (with O(monitor=true)); a tool that
    ends without asking them fails the task even with status 0, since nothing was registered.
  - A changed secret answer changes the digest and registers again, though the diff shows V(********)
    on both sides.
seealso:
  - name: Acceldata Pulse, Kafka MirrorMaker
    description: Pulse's MirrorMaker 2 page (the collection's C(inventories/pulse_example) reproduces its mm2.properties).
    link: https://docs.acceldata.io/pulse/documentation/kafka3-mirrormaker
author:
  - kafkaops maintainers (!UNKNOWN)
"""

EXAMPLES = r"""
- name: Register the MirrorMaker 2 nodes with Pulse
  kafkaops.mirrormaker.pulse_register:
    mm2_nodes: "{{ groups['mirrormakers'] }}"
    jmx_port: 9998

- name: Nodes given as IP addresses, confirmed by their short names; other questions answered
  kafkaops.mirrormaker.pulse_register:
    command: accelo reconfig cluster -a
    mm2_nodes: [10.90.5.97, 10.90.5.98]
    expected_hostnames: [odpcp02, odpcp03]
    hostname_match: short
    jmx_port: 9998
    answers:
      - prompt: enter the cluster name
        answer: odp-prod
      - prompt: enable alerts .*\[y/n\]
        answer: "y"
    secret_answers:
      - prompt: database password
        answer: "{{ vault_pulse_db_password }}"
    timeout: 300
  register: __pulse_register

- name: What Pulse showed
  ansible.builtin.debug:
    msg: "{{ __pulse_register.hostnames }}"
"""

RETURN = r"""
registered:
  description: Whether the tool was run and registered the nodes in this task.
  returned: always
  type: bool
  sample: true
hostnames:
  description:
    - The hostnames Pulse showed for the nodes; from O(state_file) when the tool was not run; empty
      when Pulse showed none. Also returned on failure.
  returned: always
  type: list
  elements: str
  sample: [odpcp02.acceldata.dvl]
transcript:
  description:
    - What the tool wrote on the terminal, answers included as the terminal echoed them, with line
      ends as LF and secret answers as V(********). Empty when the tool was not run. Also returned on
      failure.
  returned: always
  type: str
  sample: |
    Do you want to monitor KafkaMM2 [y/n]: y
    Enter the Kafka MirrorMaker nodes (comma separated hosts e.g. mm2kafka1,mm2kafka2): 10.90.5.97
    The Kafka MM2 hostnames are: [odpcp02.acceldata.dvl]
    Is the above Kafka MM2 hostname information correct? [y/n]: y
    Enter the Kafka MirrorMaker JMX Port (Ex: 9998): 9998
state:
  description:
    - The registration record written to O(state_file); the recorded one when nothing changed; the
      one that would be written in check mode (without RV(state.hostnames)).
  returned: success
  type: dict
  contains:
    command:
      description: O(command).
      type: str
      returned: always
    mm2_nodes:
      description: O(mm2_nodes).
      type: list
      elements: str
      returned: always
    expected_hostnames:
      description: O(expected_hostnames) as used.
      type: list
      elements: str
      returned: always
    jmx_port:
      description: O(jmx_port).
      type: int
      returned: always
    monitor:
      description: O(monitor).
      type: bool
      returned: always
    answers:
      description: O(answers).
      type: list
      elements: dict
      returned: always
    secret_answers:
      description: The prompts of O(secret_answers), each answer V(********).
      type: list
      elements: dict
      returned: always
    hostnames:
      description: The hostnames Pulse showed when the record was written.
      type: list
      elements: str
      returned: when the tool was run
    digest:
      description:
        - C(algorithm), C(iterations), C(salt) and C(value) of the digest of all the answers,
          secret ones included.
      type: dict
      returned: always
  sample:
    command: accelo reconfig cluster
    mm2_nodes: [10.90.5.97]
    expected_hostnames: [odpcp02.acceldata.dvl]
    jmx_port: 9998
    monitor: true
    answers: []
    secret_answers: [{prompt: database password, answer: "********"}]
    hostnames: [odpcp02.acceldata.dvl]
    digest: {algorithm: pbkdf2-hmac-sha256, iterations: 100000, salt: 3f1c0d9e2a7b4c5d, value: 9b2e...}
"""

import hashlib
import json
import os
import re
import shlex
import tempfile

from ansible.module_utils.basic import AnsibleModule, missing_required_lib
from ansible.module_utils.common.text.converters import to_native
from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.pulse import dialogue

_ALGORITHM = "pbkdf2-hmac-sha256"
_ITERATIONS = 100000
_ANSWERED = ("command", "mm2_nodes", "expected_hostnames", "jmx_port", "monitor", "answers", "secret_answers")


def check_params(params):
    """Messages naming the parameter and value at fault; empty when all is well."""
    errors = []
    nodes = params["mm2_nodes"]
    if not nodes:
        errors.append("mm2_nodes: must list at least one MirrorMaker node")
    for name, values in (("mm2_nodes", nodes), ("expected_hostnames", params["expected_hostnames"] or [])):
        seen = set()
        for index, value in enumerate(values):
            if not value.strip() or re.search(r"[\s,]", value):
                errors.append("%s[%d]: %r is not a host (one name or address, no blanks or commas)" % (name, index, value))
            elif value.lower() in seen:
                errors.append("%s[%d]: %r is given twice" % (name, index, value))
            seen.add(value.lower())
    if params["expected_hostnames"] is not None and not params["expected_hostnames"]:
        errors.append("expected_hostnames: must list at least one hostname (or be left out to expect mm2_nodes)")
    if not 0 < params["jmx_port"] < 65536:
        errors.append("jmx_port: %d is not a port (1 to 65535)" % params["jmx_port"])
    if params["timeout"] < 1:
        errors.append("timeout: %d must be at least 1 (seconds)" % params["timeout"])
    if not params["unknown_prompt_grace"] > 0:
        errors.append("unknown_prompt_grace: %s must be more than 0 (seconds)" % params["unknown_prompt_grace"])
    if not params["command"].strip():
        errors.append("command: must not be empty")
    for name in ("answers", "secret_answers"):
        for index, entry in enumerate(params[name]):
            try:
                pattern = re.compile(entry["prompt"], re.I)
            except re.error as exc:
                errors.append("%s[%d].prompt: %r is not a regular expression: %s" % (name, index, entry["prompt"], exc))
                continue
            if pattern.search(""):
                errors.append("%s[%d].prompt: %r matches empty text, so it would answer anything"
                              % (name, index, entry["prompt"]))
            if "\n" in entry["answer"] or "\r" in entry["answer"]:
                shown = dialogue.MASK if name == "secret_answers" else repr(entry["answer"])
                errors.append("%s[%d].answer: %s holds a line break (one line is sent per answer)" % (name, index, shown))
    return errors


def answered(params, secrets_shown):
    """The answers of a registration, secret ones as given or masked."""
    return dict(
        command=params["command"],
        mm2_nodes=list(params["mm2_nodes"]),
        expected_hostnames=list(params["expected_hostnames"] or params["mm2_nodes"]),
        jmx_port=params["jmx_port"],
        monitor=params["monitor"],
        answers=[dict(prompt=a["prompt"], answer=a["answer"]) for a in params["answers"]],
        secret_answers=[dict(prompt=a["prompt"], answer=a["answer"] if secrets_shown else dialogue.MASK)
                        for a in params["secret_answers"]],
    )


def digest(params, salt, iterations):
    material = json.dumps(answered(params, True), sort_keys=True, separators=(",", ":")).encode("utf-8")
    return hashlib.pbkdf2_hmac("sha256", material, bytes.fromhex(salt), iterations).hex()


def read_state(module, path):
    """The recorded registration, or None when there is none (an unreadable record is warned about)."""
    if not os.path.exists(path):
        return None
    try:
        with open(path, encoding="utf-8") as handle:
            state = json.load(handle)
    except OSError as exc:
        module.fail_json(msg="state_file: cannot read %r: %s" % (path, to_native(exc)))
    except ValueError as exc:
        module.warn("state_file: %r is not JSON (%s); registering again" % (path, to_native(exc)))
        return None
    record = state.get("digest") if isinstance(state, dict) else None
    if not isinstance(record, dict) or not all(isinstance(record.get(k), t) for k, t in
                                               (("salt", str), ("value", str), ("iterations", int))):
        module.warn("state_file: %r is not a registration record of this module; registering again" % path)
        return None
    return state


def unchanged(params, state):
    if state is None or state["digest"].get("algorithm") != _ALGORITHM:
        return False
    try:
        return digest(params, state["digest"]["salt"], state["digest"]["iterations"]) == state["digest"]["value"]
    except ValueError:  # a salt that is not hex
        return False


def write_state(module, path, state):
    directory = os.path.dirname(path) or "."
    try:
        if not os.path.isdir(directory):
            os.makedirs(directory, mode=0o700)
            os.chmod(directory, 0o700)
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=".%s." % os.path.basename(path))  # mode 0600
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(state, handle, indent=2, sort_keys=True)
                handle.write("\n")
                handle.flush()
                os.fsync(handle.fileno())
            os.chmod(tmp, 0o600)
            os.replace(tmp, path)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
    except OSError as exc:
        module.fail_json(msg="state_file: cannot write %r: %s (the registration itself succeeded)" % (path, to_native(exc)),
                         changed=True, registered=True)


def main():
    module = AnsibleModule(
        argument_spec=dict(
            command=dict(type="str", default="accelo reconfig cluster"),
            env_file=dict(type="path", default="/etc/profile.d/ad.sh"),
            shell=dict(type="path", default="/bin/bash"),
            mm2_nodes=dict(type="list", elements="str", required=True),
            expected_hostnames=dict(type="list", elements="str"),
            hostname_match=dict(type="str", choices=["fqdn", "short"], default="fqdn"),
            jmx_port=dict(type="int", required=True),
            monitor=dict(type="bool", default=True),
            answers=dict(type="list", elements="dict", default=[], options=dict(
                prompt=dict(type="str", required=True),
                answer=dict(type="str", required=True),
            )),
            # no_log on each answer, not on the list: the prompts are not secret, and a no_log list
            # would mask every text of its prompts wherever it appears (the questions in the transcript).
            secret_answers=dict(type="list", elements="dict", default=[], no_log=False, options=dict(
                prompt=dict(type="str", required=True),
                answer=dict(type="str", required=True, no_log=True),
            )),
            timeout=dict(type="int", default=60),
            unknown_prompt_grace=dict(type="float", default=5),
            state_file=dict(type="path", default="/var/lib/kafkaops/pulse-mm2.json"),
            force=dict(type="bool", default=False),
        ),
        supports_check_mode=True,
    )
    params = module.params
    errors = check_params(params)
    if errors:
        module.fail_json(msg="; ".join(errors))

    state_file = params["state_file"]
    state = read_state(module, state_file)
    changed = params["force"] or not unchanged(params, state)
    salt = state["digest"]["salt"] if state is not None and not changed else os.urandom(16).hex()
    record = dict(answered(params, False), digest=dict(algorithm=_ALGORITHM, iterations=_ITERATIONS, salt=salt,
                                                       value=digest(params, salt, _ITERATIONS)))
    result = dict(changed=changed, registered=False, transcript="",
                  hostnames=list(state.get("hostnames") or []) if state is not None else [])
    if module._diff:
        before = dict((k, state.get(k)) for k in _ANSWERED) if state is not None else {}
        result["diff"] = dict(before=before, after=answered(params, False),
                              before_header=state_file, after_header=state_file)
    if not changed:
        module.exit_json(state=state, msg="%s records the same answers; %s not run" % (state_file, params["command"]),
                         **result)
    if module.check_mode:
        module.exit_json(state=record, msg="would run %s" % params["command"], **result)

    if not dialogue.HAS_PEXPECT:
        module.fail_json(msg=missing_required_lib("pexpect"), exception=dialogue.PEXPECT_IMPORT_ERROR)
    if not os.path.isfile(params["env_file"]):
        module.fail_json(msg="env_file: %r does not exist (Pulse's environment: AcceloHome and the PATH of accelo)"
                         % params["env_file"])
    if not os.access(params["shell"], os.X_OK):
        module.fail_json(msg="shell: %r is not an executable" % params["shell"])

    answers = [dialogue.Answer("answers[%d]" % i, a["prompt"], a["answer"]) for i, a in enumerate(params["answers"])]
    answers += [dialogue.Answer("secret_answers[%d]" % i, a["prompt"], a["answer"], secret=True)
                for i, a in enumerate(params["secret_answers"])]
    argv = [params["shell"], "-l", "-c", ". %s && %s" % (shlex.quote(params["env_file"]), params["command"])]
    engine = dialogue.Mm2Dialogue(
        argv, label=repr(params["command"]), mm2_nodes=params["mm2_nodes"],
        expected_hostnames=params["expected_hostnames"] or params["mm2_nodes"],
        hostname_match=params["hostname_match"], jmx_port=params["jmx_port"], monitor=params["monitor"],
        answers=answers, timeout=params["timeout"], grace=params["unknown_prompt_grace"])
    try:
        outcome = engine.run()
    except dialogue.DialogueError as exc:
        module.fail_json(msg=exc.msg, transcript=exc.transcript, hostnames=exc.hostnames or [], registered=False)

    record["hostnames"] = outcome["hostnames"]
    write_state(module, state_file, record)
    result.update(registered=True, hostnames=outcome["hostnames"], transcript=outcome["transcript"])
    module.exit_json(state=record, msg="%s answered: MM2 nodes %s registered" % (params["command"], ", ".join(params["mm2_nodes"])),
                     **result)


if __name__ == "__main__":
    main()
