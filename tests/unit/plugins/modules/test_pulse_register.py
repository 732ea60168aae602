# -*- coding: utf-8 -*-
"""kafkaops.mirrormaker.pulse_register, the real module run as Ansible runs it (JSON arguments in,
JSON result out), against tests/pulse/accelo_double.py, a TEST DOUBLE of Pulse's accelo (not
Pulse), through a real pty and a real login shell that sources a temporary ad.sh.

Every variant of the double; the hostname check (y only on a match, n and a failure naming both
lists otherwise); unknown questions failing within the grace period; timeouts; early exits;
secrets kept out of the result, the transcript and the state file; idempotency, force, check
mode and diff. The pure functions of module_utils/pulse_dialogue are tested directly.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import time

import pytest

from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.pulse import dialogue

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", ".."))
MODULE = os.path.join(REPO, "plugins", "modules", "pulse_register.py")
DOUBLE = os.path.join(REPO, "tests", "pulse", "accelo_double.py")

pexpect = pytest.importorskip("pexpect")

HOSTS = {"10.0.0.5": "mm2-1.lab.example", "10.0.0.6": "mm2-2.lab.example"}
NODES = ["10.0.0.5", "10.0.0.6"]
EXPECTED = ["mm2-1.lab.example", "mm2-2.lab.example"]
SECRET = "S3cr-et!pw#42"


class Pulse:
    """A temporary AcceloHome with the double installed as bin/accelo, its ad.sh and a state file."""

    def __init__(self, tmp_path):
        self.tmp = tmp_path
        self.home = tmp_path / "accelo-home"
        (self.home / "bin").mkdir(parents=True)
        shutil.copy(DOUBLE, self.home / "bin" / "accelo")
        os.chmod(self.home / "bin" / "accelo", 0o755)
        self.ad_sh = tmp_path / "ad.sh"
        # As the docstring of the double says to write it; the double runs with this interpreter.
        self.ad_sh.write_text("export AcceloHome=%s\nexport PATH=%s/bin:$PATH\nexport ACCELO_DOUBLE_PYTHON=%s\n"
                              % (self.home, self.home, sys.executable))
        self.state = tmp_path / "var" / "kafkaops" / "pulse-mm2.json"
        self.seconds, self.stdout = None, ""
        self.configure("plain")

    def configure(self, variant, **extra):
        (self.home / "double.json").write_text(json.dumps(dict(extra, variant=variant, hosts=HOSTS)))

    def log(self):
        path = self.home / "double-log.jsonl"
        return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []

    def answers(self, log=None):
        return [(e["key"], e["text"]) for e in (self.log() if log is None else log) if e["event"] == "answer"]

    def run(self, check=False, pythonpath=(), **params):
        """Runs the module; returns its result (self.seconds and self.stdout: of the last run)."""
        params.setdefault("env_file", str(self.ad_sh))
        params.setdefault("state_file", str(self.state))
        params.setdefault("mm2_nodes", NODES)
        params.setdefault("expected_hostnames", EXPECTED)
        params.setdefault("jmx_port", 9998)
        args = self.tmp / "args.json"
        args.write_text(json.dumps({"ANSIBLE_MODULE_ARGS": dict(params, _ansible_check_mode=check, _ansible_diff=True)}))
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(list(pythonpath) + [os.path.join(REPO, ".collections")]))
        started = time.monotonic()
        proc = subprocess.run([sys.executable, MODULE, str(args)], capture_output=True, text=True, check=False,
                              env=env, timeout=120)
        self.seconds = time.monotonic() - started
        self.stdout = proc.stdout
        assert proc.stdout, proc.stderr
        return json.loads(proc.stdout)


def alive(pid):
    """Whether a process runs (a zombie left to a container's init that does not reap is not)."""
    try:
        with open("/proc/%d/stat" % pid, encoding="utf-8") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


@pytest.fixture
def pulse(tmp_path):
    return Pulse(tmp_path)


MM2_ANSWERS = [("monitor", "y"), ("nodes", "10.0.0.5,10.0.0.6"), ("confirm", "y"), ("jmx_port", "9998")]


# -- the documented dialogue and its variants ----------------------------------------------------

def test_plain_registers_and_records(pulse):
    result = pulse.run(expected_hostnames=["MM2-2.lab.example", "mm2-1.LAB.example."])  # case, order, final dot
    assert result["changed"] and result["registered"] and not result.get("failed"), result
    assert result["hostnames"] == EXPECTED
    assert pulse.answers() == MM2_ANSWERS
    assert pulse.log()[0]["argv"] == ["reconfig", "cluster"]  # the default command
    transcript = result["transcript"]
    assert "Do you want to monitor KafkaMM2 [y/n]: y\n" in transcript
    assert "The Kafka MM2 hostnames are: [mm2-1.lab.example, mm2-2.lab.example]\n" in transcript
    assert "Enter the Kafka MirrorMaker JMX Port (Ex: 9998): 9998\n" in transcript
    assert "\r" not in transcript
    # the double's own record of a successful run
    assert json.loads((pulse.home / "registered-mm2.json").read_text())["jmx_port"] == 9998
    # the module's record: 0600 in a 0700 directory it created, the state returned
    assert stat.S_IMODE(os.stat(pulse.state).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(pulse.state.parent).st_mode) == 0o700
    record = json.loads(pulse.state.read_text())
    assert record == result["state"]
    assert record["mm2_nodes"] == NODES and record["jmx_port"] == 9998 and record["hostnames"] == EXPECTED
    assert record["digest"]["algorithm"] == "pbkdf2-hmac-sha256" and len(record["digest"]["value"]) == 64


@pytest.mark.parametrize("variant", ["spacing_case", "crlf", "split_prompt"])
def test_prompts_in_other_forms_are_answered(pulse, variant):
    pulse.configure(variant)
    result = pulse.run()
    assert result["registered"] and not result.get("failed"), result
    assert pulse.answers() == MM2_ANSWERS
    assert result["hostnames"] == EXPECTED
    assert "\r" not in result["transcript"]


def test_split_prompt_needs_the_grace(pulse):
    """split_prompt writes 'Is the above ... correct?' then, 0.3 s later, ' [y/n]: ': the first part
    looks like a question. With a grace under the pause it is taken for an unknown question (so the
    grace is what lets the default wait for the rest), and nothing is answered to it."""
    pulse.configure("split_prompt")
    result = pulse.run(unknown_prompt_grace=0.15)
    assert result["failed"] and "Is the above Kafka MM2 hostname information correct?" in result["msg"], result
    assert ("confirm", "y") not in pulse.answers() and ("confirm", "n") not in pulse.answers()


def test_other_questions_and_a_secret(pulse):
    pulse.configure("extra_questions")
    result = pulse.run(
        command="accelo config cluster",
        answers=[{"prompt": r"enter the cluster name", "answer": "lab-cluster"},
                 {"prompt": r"enable alerts for the cluster \[y/n\]", "answer": "y"}],
        secret_answers=[{"prompt": "database password", "answer": SECRET}])
    assert result["registered"] and not result.get("failed"), result
    assert pulse.answers() == ([("cluster_name", "lab-cluster"), ("database_password", SECRET)] + MM2_ANSWERS
                               + [("alerts", "y")])  # the double received the secret
    assert pulse.log()[0]["argv"] == ["config", "cluster"]
    assert SECRET not in pulse.stdout and SECRET not in pulse.state.read_text()
    assert "Enter the database password: " in result["transcript"]
    assert result["state"]["secret_answers"] == [{"prompt": "database password", "answer": "********"}]
    assert result["state"]["answers"][0] == {"prompt": "enter the cluster name", "answer": "lab-cluster"}


def test_an_echoed_secret_is_masked_in_the_transcript(pulse):
    """The double reads the password with echo on; the engine masks it itself (run in-process
    here, without AnsibleModule's no_log masking)."""
    pulse.configure("extra_questions", echo_secret=True)
    engine = dialogue.Mm2Dialogue(
        ["/bin/bash", "-l", "-c", ". %s && accelo reconfig cluster" % pulse.ad_sh], "'accelo reconfig cluster'",
        NODES, EXPECTED, "fqdn", 9998, True,
        answers=[dialogue.Answer("answers[0]", "cluster name", "c1"), dialogue.Answer("answers[1]", r"alerts.*\[y/n\]", "n"),
                 dialogue.Answer("secret_answers[0]", "database password", SECRET, secret=True)])
    outcome = engine.run()
    assert ("database_password", SECRET) in pulse.answers()
    assert "Enter the database password: ********\n" in outcome["transcript"]
    assert SECRET not in json.dumps(outcome)


def test_monitor_false_answers_n_only(pulse):
    result = pulse.run(monitor=False)
    assert result["registered"] and not result.get("failed"), result
    assert pulse.answers() == [("monitor", "n")]
    assert result["state"]["monitor"] is False


# -- faults ------------------------------------------------------------------------------------

def test_hostname_mismatch_answers_n_and_names_both_lists(pulse):
    pulse.configure("hostname_mismatch")
    result = pulse.run()
    assert result["failed"] and not result["registered"], result
    msg = result["msg"]
    assert msg.startswith("expected_hostnames: ")
    assert "[mm2-1.lab.example, stale-mm2-2.lab.example]" in msg and "expected [mm2-1.lab.example, mm2-2.lab.example]" in msg
    assert result["hostnames"] == ["mm2-1.lab.example", "stale-mm2-2.lab.example"]
    assert pulse.answers()[-1] == ("confirm", "n")
    assert pulse.log()[-1] == dict(pulse.log()[-1], event="exit", status=3)  # the double read the n, then ended
    assert "Hostnames rejected" in result["transcript"]
    assert not pulse.state.exists() and not (pulse.home / "registered-mm2.json").exists()


def test_short_names_match_when_asked(pulse):
    result = pulse.run(expected_hostnames=["MM2-1", "mm2-2.other.domain"], hostname_match="short")
    assert result["registered"] and not result.get("failed"), result
    assert ("confirm", "y") in pulse.answers()


def test_by_default_nodes_are_the_expected_hostnames(pulse):
    """The double shows names for IP nodes; without expected_hostnames the module refuses them."""
    result = pulse.run(expected_hostnames=None)
    assert result["failed"] and "expected [10.0.0.5, 10.0.0.6]" in result["msg"], result
    assert pulse.answers()[-1] == ("confirm", "n")


def test_unknown_question_fails_within_the_grace(pulse):
    pulse.configure("unknown_question")
    result = pulse.run(unknown_prompt_grace=1, timeout=60)
    assert result["failed"] and "'Enter the Zookeeper chroot path:'" in result["msg"], result
    assert "answers or secret_answers" in result["msg"]
    assert pulse.seconds < 10, pulse.seconds  # the grace, not the timeout
    assert pulse.answers() == [("monitor", "y")]  # nothing answered to it
    assert "Enter the Zookeeper chroot path:" in result["transcript"]
    assert not alive(pulse.log()[0]["pid"])  # the double was stopped


def test_unknown_question_answered_when_an_answer_is_given(pulse):
    pulse.configure("unknown_question")
    result = pulse.run(answers=[{"prompt": "zookeeper chroot path", "answer": "/kafka"}])
    assert result["registered"] and not result.get("failed"), result
    assert ("zookeeper_chroot", "/kafka") in pulse.answers()


def test_slow_prompt_within_the_timeout(pulse):
    pulse.configure("slow_prompt", slow_seconds=3)
    result = pulse.run()
    assert result["registered"] and not result.get("failed"), result
    assert pulse.seconds >= 3


def test_slow_prompt_past_the_timeout(pulse):
    # A timeout a loaded machine meets for the double's first question (a 1 s one did not, beside
    # the extended run), well short of the slow one's.
    pulse.configure("slow_prompt", slow_seconds=40)
    result = pulse.run(timeout=8)
    assert result["failed"] and result["msg"].startswith("timeout: "), result
    assert "for 8 s after the answer to hostname confirmation" in result["msg"]
    # stopped in its sleep: the JMX port question never came
    assert pulse.seconds < 40 and "jmx_port" not in [e.get("key") for e in pulse.log()], pulse.seconds
    assert not alive(pulse.log()[0]["pid"])
    assert result["hostnames"] == EXPECTED and "Enter the Kafka MirrorMaker nodes" in result["transcript"]


def test_error_exit_fails_with_the_transcript(pulse):
    pulse.configure("error_exit")
    result = pulse.run()
    assert result["failed"] and "exited with status 1 before asking" in result["msg"], result
    assert "the hostname confirmation, the JMX port question" in result["msg"]
    assert "ERROR: could not reach MirrorMaker node 10.0.0.5" in result["transcript"]
    assert not pulse.state.exists()


def test_already_registered_is_a_failure(pulse):
    pulse.configure("already_registered")
    result = pulse.run()
    assert result["failed"] and "exited with status 0 without asking the MM2 questions" in result["msg"], result
    assert "already configured" in result["transcript"] and pulse.answers() == [], \
        "transcript %r, answers %r" % (result["transcript"], pulse.answers())
    assert not pulse.state.exists()


class _Ended:
    """A pexpect child as pexpect leaves it in the race it cannot see: its wait for output ran out,
    the tool wrote its last words and exited, and pexpect, finding it gone, reports the end."""

    def __init__(self, child_fd):
        self.child_fd = child_fd

    def read_nonblocking(self, size, timeout):
        raise pexpect.EOF("End of File (EOF). Very slow platform.")


@pytest.mark.parametrize("last_words", [
    "KafkaMM2 is already configured for this cluster; nothing to do.\n",
    # a character of 3 bytes; within the terminal's buffer, which a write to a side nobody reads fills
    "Cluster configuration saved \u2713\n" + "x" * 2000,
    "",
])
def test_what_the_tool_wrote_just_before_it_ended_is_kept(last_words):
    """A real terminal (os.openpty) holding the tool's last output, its other side closed."""
    master, slave = os.openpty()
    try:
        os.write(slave, last_words.encode("utf-8"))
    finally:
        os.close(slave)
    engine = dialogue.Mm2Dialogue(["accelo"], "'accelo'", NODES, EXPECTED, "fqdn", 9998, True)
    engine.child = _Ended(master)
    try:
        assert engine.read(0.05) is None
    finally:
        os.close(master)
    assert dialogue.clean("".join(engine.output)) == last_words


def test_command_not_found(pulse):
    result = pulse.run(command="accelo-missing reconfig cluster")
    assert result["failed"] and "status 127 without asking the MM2 questions (127: the command was not found" in result["msg"], result


def test_without_pexpect_check_mode_works_and_a_run_names_it(pulse, tmp_path):
    blocked = tmp_path / "no-pexpect"
    blocked.mkdir()
    (blocked / "pexpect.py").write_text("raise ImportError('pexpect blocked by the test')\n")
    assert pulse.run(check=True, pythonpath=[str(blocked)])["changed"]
    result = pulse.run(pythonpath=[str(blocked)])
    assert result["failed"] and "Failed to import the required Python library (pexpect)" in result["msg"], result
    assert pulse.log() == []


# -- idempotency, check mode, diff ---------------------------------------------------------------

def test_second_run_does_not_run_the_tool_and_changes_do(pulse):
    assert pulse.run()["changed"]
    events = len(pulse.log())
    again = pulse.run()
    assert not again["changed"] and not again["registered"] and again["hostnames"] == EXPECTED, again
    assert len(pulse.log()) == events  # the tool did not run
    changed = pulse.run(jmx_port=9999)
    assert changed["changed"] and changed["registered"] and ("jmx_port", "9999") in pulse.answers()
    events = len(pulse.log())
    nodes = pulse.run(jmx_port=9999, mm2_nodes=["10.0.0.5"], expected_hostnames=["mm2-1.lab.example"])
    assert nodes["changed"] and len(pulse.log()) > events
    events = len(pulse.log())
    forced = pulse.run(jmx_port=9999, mm2_nodes=["10.0.0.5"], expected_hostnames=["mm2-1.lab.example"], force=True)
    assert forced["changed"] and forced["registered"] and len(pulse.log()) > events


def test_a_changed_secret_registers_again(pulse):
    pulse.configure("extra_questions")
    params = dict(answers=[{"prompt": "cluster name", "answer": "c1"}, {"prompt": r"alerts.*\[y/n\]", "answer": "y"}])
    assert pulse.run(secret_answers=[{"prompt": "password", "answer": SECRET}], **params)["registered"]
    assert not pulse.run(secret_answers=[{"prompt": "password", "answer": SECRET}], **params)["changed"]
    result = pulse.run(secret_answers=[{"prompt": "password", "answer": "other-secret"}], **params)
    assert result["registered"] and ("database_password", "other-secret") in pulse.answers()
    assert "other-secret" not in pulse.stdout and SECRET not in pulse.stdout


def test_check_mode_does_not_run_the_tool(pulse):
    result = pulse.run(check=True)
    assert result["changed"] and not result["registered"] and result["transcript"] == "", result
    assert pulse.log() == [] and not pulse.state.exists()
    assert result["diff"]["before"] == {} and result["diff"]["after"]["jmx_port"] == 9998
    pulse.run()
    events = len(pulse.log())
    assert not pulse.run(check=True)["changed"]
    assert pulse.run(check=True, jmx_port=9999)["changed"]
    assert len(pulse.log()) == events


def test_diff_shows_recorded_and_new_answers_with_secrets_masked(pulse):
    pulse.configure("extra_questions")
    params = dict(answers=[{"prompt": "cluster name", "answer": "c1"}, {"prompt": r"alerts.*\[y/n\]", "answer": "y"}],
                  secret_answers=[{"prompt": "password", "answer": SECRET}])
    pulse.run(**params)
    result = pulse.run(check=True, jmx_port=9999, **params)
    before, after = result["diff"]["before"], result["diff"]["after"]
    assert before["jmx_port"] == 9998 and after["jmx_port"] == 9999
    assert before["secret_answers"] == after["secret_answers"] == [{"prompt": "password", "answer": "********"}]
    assert before["answers"] == after["answers"] and "digest" not in before
    assert SECRET not in pulse.stdout


def test_an_unreadable_record_registers_again_with_a_warning(pulse):
    pulse.state.parent.mkdir(parents=True)
    pulse.state.write_text("not json")
    result = pulse.run()
    assert result["registered"] and "is not JSON" in json.dumps(result.get("warnings")), result  # 2.19: WarningSummary dicts
    assert json.loads(pulse.state.read_text())["jmx_port"] == 9998


# -- refused input -------------------------------------------------------------------------------

@pytest.mark.parametrize("params, message", [
    (dict(jmx_port=0), "jmx_port: 0 is not a port (1 to 65535)"),
    (dict(jmx_port=70000), "jmx_port: 70000 is not a port"),
    (dict(mm2_nodes=[]), "mm2_nodes: must list at least one MirrorMaker node"),
    (dict(mm2_nodes=["a,b"]), "mm2_nodes[0]: 'a,b' is not a host"),
    (dict(mm2_nodes=["a", "A"], expected_hostnames=None), "mm2_nodes[1]: 'A' is given twice"),
    (dict(expected_hostnames=[]), "expected_hostnames: must list at least one hostname"),
    (dict(timeout=0), "timeout: 0 must be at least 1"),
    (dict(unknown_prompt_grace=0), "unknown_prompt_grace: 0.0 must be more than 0"),
    (dict(answers=[{"prompt": "x(", "answer": "y"}]), "answers[0].prompt: 'x(' is not a regular expression"),
    (dict(answers=[{"prompt": "x*", "answer": "y"}]), "answers[0].prompt: 'x*' matches empty text"),
    (dict(secret_answers=[{"prompt": "pw", "answer": "a\nb"}]), "secret_answers[0].answer: ******** holds a line break"),
    (dict(env_file="/nonexistent/ad.sh"), "env_file: '/nonexistent/ad.sh' does not exist"),
    (dict(hostname_match="ip"), "value of hostname_match must be one of: fqdn, short"),
])
def test_refused_input_is_named(pulse, params, message):
    result = pulse.run(**params)
    assert result["failed"] and message in result["msg"], result
    assert pulse.log() == []


# -- the engine's pure functions -------------------------------------------------------------------

@pytest.mark.parametrize("text, hosts", [
    ("The Kafka MM2 hostnames are: [odpcp02.acceldata.dvl]\n", ["odpcp02.acceldata.dvl"]),
    ("the kafka mm2  HOSTNAMES are :[a.lab  b.lab]", ["a.lab", "b.lab"]),
    ("The Kafka MM2 hostnames are: ['a', 'b']", ["a", "b"]),
    ("The Kafka MM2 hostnames are: [a,b , c]", ["a", "b", "c"]),
    ("The Kafka MM2 hostnames are: []", []),
    ("nothing here", None),
])
def test_parse_hostnames(text, hosts):
    assert dialogue.parse_hostnames(text) == hosts


@pytest.mark.parametrize("shown, expected, match, same", [
    (["A.lab", "b.lab"], ["b.LAB.", "a.lab"], "fqdn", True),
    (["a.lab"], ["a.other"], "fqdn", False),
    (["a.lab"], ["a.other"], "short", True),
    (["a.lab"], ["a.lab", "b.lab"], "fqdn", False),
    (["10.0.0.5"], ["10.0.0.6"], "short", False),  # an address is compared whole
])
def test_same_hosts(shown, expected, match, same):
    assert dialogue.same_hosts(shown, expected, match) is same


@pytest.mark.parametrize("view, question", [
    ("Enter the Zookeeper chroot path: ", "Enter the Zookeeper chroot path:"),
    ("Proceed? ", "Proceed?"),
    ("Choose one [1-3]", "Choose one [1-3]"),
    ("Continue [Y/N] > ", "Continue [Y/N] >"),
    ("Overwrite the file?\n", "Overwrite the file?"),
    ("Step 1:\n", None),  # a whole line ending with ':' is a heading, not a question
    ("The Kafka MM2 hostnames are: [a]", None),
    ("Enter the Kafka MirrorMaker JMX", None),
    ("", None),
])
def test_open_question(view, question):
    assert dialogue.open_question(view) == question


@pytest.mark.parametrize("key, prompt", [
    ("monitor", "Do you want to monitor KafkaMM2 [y/n]: "),
    ("monitor", "do you want to MONITOR  kafkamm2 [Y/N] :"),
    ("nodes", "Enter the Kafka MirrorMaker nodes (comma separated hosts e.g. mm2kafka1,mm2kafka2): "),
    ("nodes", "ENTER THE KAFKA MIRRORMAKER  NODES (comma separated hosts e.g. mm2kafka1,mm2kafka2) :  "),
    ("hostname confirmation", "Is the above Kafka MM2 hostname information correct? [y/n]: "),
    ("hostname confirmation", "is the above KAFKA MM2 hostname information correct ?[Y/N]:"),
    ("jmx_port", "Enter the Kafka MirrorMaker JMX Port (Ex: 9998): "),
    ("jmx_port", "enter the kafka mirror maker jmx PORT  (Ex: 9998) : "),
])
def test_mm2_patterns(key, prompt):
    view = dialogue.clean("banner\r\n" + prompt)
    assert dialogue.MM2_PATTERNS[key].search(view)


@pytest.mark.parametrize("partial", [
    "Enter the Kafka MirrorMaker JMX Port (Ex:",  # the colon of the hint is not the end of the prompt
    "Enter the Kafka MirrorMaker JMX",
    "Is the above Kafka MM2 hostname information correct?",
    "Enter the Kafka MirrorMaker nodes (comma separated hosts",
])
def test_a_partial_prompt_is_not_answered(partial):
    assert not any(p.search(partial) for p in dialogue.MM2_PATTERNS.values())


def test_clean():
    assert dialogue.clean("a\r\r\nb\r\nc\rd\x1b[1;31me\x1b[0m") == "a\nb\nc\nde"
