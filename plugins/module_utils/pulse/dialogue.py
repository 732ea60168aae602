# -*- coding: utf-8 -*-
# Copyright: kafkaops maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
"""Answering the MirrorMaker 2 questions of Acceldata Pulse's ``accelo`` on a real terminal.

``accelo`` asks its questions on a terminal (a pty, through pexpect). The documented MM2 part::

    Do you want to monitor KafkaMM2 [y/n]: y
    Enter the Kafka MirrorMaker nodes (comma separated hosts e.g. mm2kafka1,mm2kafka2): 10.90.5.97
    The Kafka MM2 hostnames are: [odpcp02.acceldata.dvl]
    Is the above Kafka MM2 hostname information correct? [y/n]: y
    Enter the Kafka MirrorMaker JMX Port (Ex: 9998): 9998

comes inside a longer dialogue. :class:`Mm2Dialogue` reads what the tool writes and answers a
question only when it is the last thing written (the tool waits on it) and one of the known
patterns or one of the caller's answers matches it:

* prompts are matched whatever their spacing and case, with CRLF or LF line ends and without
  terminal colour codes;
* the hostname question is answered ``y`` only when the hostnames shown equal the expected ones;
  otherwise ``n``, the tool is stopped and :class:`DialogueError` names both lists;
* output that ends with something that looks like a question no pattern matches fails once
  nothing more has come for ``grace`` seconds (a prompt written in two parts is answered when
  complete); no question at all for ``timeout`` seconds fails too. Nothing is answered blindly;
* the tool ending before the MM2 questions were answered, or with a non-zero status, fails.

Secret answers never appear in what this returns or raises: they are replaced with ``********``
in the transcript (in case the tool echoes them) and in messages.

pexpect is imported guarded: :data:`HAS_PEXPECT` tells the module to call ``missing_required_lib``.
"""

from __future__ import annotations

import codecs
import ipaddress
import os
import re
import select
import signal
import time
import traceback

try:
    import pexpect
except ImportError:
    pexpect = None
    HAS_PEXPECT = False
    PEXPECT_IMPORT_ERROR = traceback.format_exc()
else:
    HAS_PEXPECT = True
    PEXPECT_IMPORT_ERROR = None

MASK = "********"

# [y/n], [Y/N], (y/n), [ y / n ], [yes/no]
_YES_NO = r"[\[(]\s*y(?:es)?\s*/\s*no?\s*[\])]"
# an optional "(e.g. ...)" / "(Ex: 9998)" before the final colon; the colon inside is allowed
_HINT_THEN_COLON = r"[^:()\n]*(?:\([^)\n]*\)\s*)?:\s*$"

MONITOR = "monitor"
NODES = "nodes"
CONFIRM = "hostname confirmation"
JMX_PORT = "jmx_port"
MM2_ORDER = (MONITOR, NODES, CONFIRM, JMX_PORT)

MM2_PATTERNS = {
    MONITOR: re.compile(r"do\s+you\s+want\s+to\s+monitor\s+kafka\s*mm\s*2\s*" + _YES_NO + r"\s*[:?]?\s*$", re.I),
    NODES: re.compile(r"enter\s+the\s+kafka\s*mirror\s*maker\s+nodes\b" + _HINT_THEN_COLON, re.I),
    CONFIRM: re.compile(r"is\s+the\s+above\s+kafka\s*mm\s*2\s+host\s*names?\s+information\s+correct\s*\??\s*"
                        + _YES_NO + r"\s*[:?]?\s*$", re.I),
    JMX_PORT: re.compile(r"enter\s+the\s+kafka\s*mirror\s*maker\s+jmx\s*port\b" + _HINT_THEN_COLON, re.I),
}
# The parameter a fault of each MM2 question is about, for messages.
MM2_PARAMETER = {MONITOR: "monitor", NODES: "mm2_nodes", CONFIRM: "expected_hostnames", JMX_PORT: "jmx_port"}
HOSTNAMES_LINE = re.compile(r"the\s+kafka\s*mm\s*2\s+host\s*names?\s+(?:are|is)\s*:?\s*\[([^\]\n]*)\]", re.I)

_ESCAPES = re.compile(r"\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b\[[0-?]*[ -/]*[@-~]|\x1b[@-Z\\-_]")
_LOOKS_OPEN = re.compile(r"[:?\]]\s*$")  # the last line, not yet ended, ends like a prompt
_LOOKS_CLOSED = re.compile(r"\?\s*$")  # a whole last line that asks something
_POLL = 0.05
_SETTLE = 0.1  # quiet time before a matched prompt is answered (it may still be growing)
_DRAIN = 3.0  # seconds to read what the tool says after 'n' before it is stopped
_REPEATS = 3  # the same given answer asked this many times in a row: the tool refuses it
_TRANSCRIPT_MAX = 200000
_VIEW_MAX = 65536


class DialogueError(Exception):
    """The dialogue failed; msg, transcript and hostnames are masked."""

    def __init__(self, msg, transcript="", hostnames=None):
        super().__init__(msg)
        self.msg = msg
        self.transcript = transcript
        self.hostnames = hostnames


def clean(text):
    """Terminal output as text: colour/cursor escapes removed, CRLF, CRCRLF and lone CR as LF."""
    text = _ESCAPES.sub("", text)
    return re.sub(r"\r+\n|\r", "\n", text)


def parse_hostnames(text):
    """The hostnames of the last 'The Kafka MM2 hostnames are: [...]' line in text, or None."""
    found = None
    for match in HOSTNAMES_LINE.finditer(text):
        found = [name.strip("'\"") for name in re.split(r"[,\s]+", match.group(1))]
        found = [name for name in found if name]
    return found


def host_key(name, match):
    """How a hostname is compared: case-insensitive, without a final dot; 'short' keeps the first
    label (an IP address stays whole)."""
    name = name.strip().rstrip(".").lower()
    if match == "short":
        try:
            ipaddress.ip_address(name)
        except ValueError:
            return name.split(".", 1)[0]
    return name


def same_hosts(shown, expected, match):
    return set(host_key(h, match) for h in shown) == set(host_key(h, match) for h in expected)


def open_question(view):
    """The line that looks like a question at the end of view, or None.

    The last line while it is not ended (a prompt waits on its own line) when it ends with ':',
    '?' or ']' or holds a [y/n]; a last whole line only when it ends with '?' or holds a [y/n].
    The hostnames line is information, not a question.
    """
    stripped = view.rstrip(" \t")
    if not stripped.strip():
        return None
    if stripped.endswith("\n"):
        line = stripped.rstrip().rsplit("\n", 1)[-1]
        looks = _LOOKS_CLOSED.search(line) or re.search(_YES_NO, line, re.I)
    else:
        line = stripped.rsplit("\n", 1)[-1]
        looks = _LOOKS_OPEN.search(line) or re.search(_YES_NO, line, re.I)
    if not looks or HOSTNAMES_LINE.search(line):
        return None
    return line.strip()


def _at_end(view, match):
    """A match is the question waited on when only blanks, or no line break, follow it."""
    rest = view[match.end():]
    return not rest.strip() or "\n" not in rest


class Answer:
    """One answer the caller gave: a prompt regex (case-insensitive) and the text to send."""

    def __init__(self, label, prompt, text, secret=False):
        self.label = label
        self.pattern = re.compile(prompt, re.I)
        self.text = text
        self.secret = secret


class Mm2Dialogue:
    """Runs argv on a pty and answers; :meth:`run` returns a dict or raises DialogueError.

    answers: :class:`Answer` objects for the other questions, tried in order after the MM2
    questions. label names the tool in messages (the command line).
    """

    def __init__(self, argv, label, mm2_nodes, expected_hostnames, hostname_match, jmx_port, monitor,
                 answers=(), timeout=60, grace=5.0, env=None):
        self.argv = list(argv)
        self.label = label
        self.mm2_nodes = list(mm2_nodes)
        self.expected = list(expected_hostnames)
        self.hostname_match = hostname_match
        self.jmx_port = int(jmx_port)
        self.monitor = bool(monitor)
        self.answers = list(answers)
        self.timeout = timeout
        self.grace = grace
        self.env = env
        self.secrets = sorted(set(a.text for a in self.answers if a.secret and a.text), key=len, reverse=True)
        self.output = []
        self.answered = []  # MM2 question keys, in the order answered
        self.shown = None
        self.child = None

    # -- what is returned -------------------------------------------------------------------
    def mask(self, text):
        for secret in self.secrets:
            text = text.replace(secret, MASK)
        return text

    def transcript(self):
        text = self.mask(clean("".join(self.output)))
        if len(text) > _TRANSCRIPT_MAX:
            cut = len(text) - _TRANSCRIPT_MAX
            text = "[... %d characters cut ...]\n%s" % (cut, text[cut:])
        return text

    def fail(self, msg):
        raise DialogueError(self.mask(msg), self.transcript(), self.shown)

    def required(self):
        return MM2_ORDER if self.monitor else (MONITOR,)

    # -- the dialogue -------------------------------------------------------------------------
    def run(self):
        if not HAS_PEXPECT:
            raise DialogueError("pexpect is not installed", "", None)
        env = dict(os.environ if self.env is None else self.env)
        env.setdefault("TERM", "dumb")
        try:
            self.child = pexpect.spawn(self.argv[0], self.argv[1:], env=env, encoding="utf-8",
                                       codec_errors="replace", dimensions=(50, 250), echo=True)
        except (OSError, pexpect.ExceptionPexpect) as exc:
            raise DialogueError("shell: cannot start %s: %s" % (self.argv[0], exc)) from exc
        finished = False
        try:
            self.converse()
            finished = True
        finally:
            if not finished:
                self.stop()
        return self.conclude()

    def read(self, timeout):
        """One read; returns text ('' when nothing came) or None at end of output."""
        try:
            chunk = self.child.read_nonblocking(65536, timeout=timeout)
        except pexpect.TIMEOUT:
            return ""
        except pexpect.EOF:
            self.output.append(self.rest())
            return None
        self.output.append(chunk)
        return chunk

    def rest(self):
        """What the tool wrote just before it ended and pexpect did not read.

        pexpect reports the end when a wait for output ran out and the tool is gone by the time it
        asks: a tool that writes its last words and exits in between (on a loaded machine, any) has
        them still in the terminal. They are read here until the terminal reports its end (Linux:
        EIO once the other side is closed and empty), within _DRAIN seconds: something the tool
        left running on the terminal may go on writing."""
        fd = self.child.child_fd
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        chunks = []
        end = time.monotonic() + _DRAIN
        while time.monotonic() < end:
            try:
                ready = select.select([fd], [], [], 0)[0]
                data = os.read(fd, 65536) if ready else b""
            except OSError:
                break
            if not data:
                break
            chunks.append(decoder.decode(data))
        chunks.append(decoder.decode(b"", final=True))
        return "".join(chunks)

    def converse(self):
        pending = ""  # raw output since the last answer
        # What the output since the last answer shows; read again only when more output comes.
        view, key, answer, question = "", None, None, None
        last_output = last_answer = time.monotonic()
        previous, repeats = None, 0
        while True:
            chunk = self.read(_POLL)
            if chunk is None:
                return
            now = time.monotonic()
            if chunk:
                pending += chunk
                last_output = now
                view = clean(pending[-_VIEW_MAX:])  # the question is at the end; a long log before it is not read again
                shown = parse_hostnames(view)
                if shown is not None:
                    self.shown = shown
                key, answer = self.match(view)
                question = open_question(view) if key is None else None
            if key is not None:
                if now - last_output < _SETTLE:
                    continue
                repeats = repeats + 1 if key == previous else 1
                previous = key
                self.answer(key, answer, repeats)
                pending = ""
                view, key, answer, question = "", None, None, None
                last_output = last_answer = time.monotonic()
                continue
            if question is not None and now - last_output >= self.grace:
                self.fail("%s asked a question nothing answers: %r (no MM2 question, answers[].prompt or "
                          "secret_answers[].prompt matches it; nothing more came for %s s). Add an answer for it "
                          "to answers or secret_answers; %s was stopped"
                          % (self.label, question, _seconds(self.grace), self.label))
            if now - last_answer >= self.timeout:
                self.fail("timeout: %s showed no question this module knows for %d s %s; last output: %r; %s was "
                          "stopped" % (self.label, self.timeout, self.since(), _tail(view), self.label))

    def since(self):
        return "after the answer to %s" % self.answered[-1] if self.answered else "since it started"

    def match(self, view):
        """(key, Answer or None) of the question waited on, MM2 questions first; (None, None)."""
        for key, pattern in MM2_PATTERNS.items():
            found = pattern.search(view)
            if found and _at_end(view, found):
                return key, None
        for answer in self.answers:
            found = None
            for found in answer.pattern.finditer(view):
                pass
            if found is not None and _at_end(view, found):
                return answer.label, answer
        return None, None

    def answer(self, key, answer, repeats):
        if answer is not None:
            if repeats >= _REPEATS:
                self.fail("%s: %s asked the same question %d times in a row (it refuses the answer?); %s was stopped"
                          % (answer.label, self.label, repeats, self.label))
            self.send(answer.text)
            return
        if key in self.answered:
            self.fail("%s: %s asked %s again after the answer (it refuses the answer?); %s was stopped"
                      % (MM2_PARAMETER[key], self.label, _question_name(key), self.label))
        self.answered.append(key)
        if key == MONITOR:
            self.send("y" if self.monitor else "n")
        elif key == NODES:
            self.shown = None  # only the hostnames shown after this answer count
            self.send(",".join(self.mm2_nodes))
        elif key == CONFIRM:
            self.confirm()
        else:
            self.send(str(self.jmx_port))

    def confirm(self):
        if self.shown is not None and same_hosts(self.shown, self.expected, self.hostname_match):
            self.send("y")
            return
        self.send("n")
        self.drain()
        if self.shown is None:
            self.fail("%s asked whether the MM2 hostnames are correct without showing them; answered 'n' and "
                      "stopped %s" % (self.label, self.label))
        self.fail("expected_hostnames: %s showed the MM2 hostnames [%s] for mm2_nodes [%s], expected [%s] "
                  "(compared by %s, case-insensitive, in any order); answered 'n' and stopped %s"
                  % (self.label, ", ".join(self.shown), ", ".join(self.mm2_nodes), ", ".join(self.expected),
                     "the first label of each name" if self.hostname_match == "short" else "full name",
                     self.label))

    def send(self, text):
        try:
            self.child.sendline(text)
        except OSError as exc:
            self.fail("%s ended while an answer was sent (%s)" % (self.label, exc))

    def drain(self):
        """Read what the tool says after an answer, until it ends or for _DRAIN seconds."""
        end = time.monotonic() + _DRAIN
        while time.monotonic() < end:
            if self.read(_POLL) is None:
                return

    def stop(self):
        """Stop the tool and all it started on the terminal (its process group), as a hangup does."""
        child = self.child
        if child is None:
            return
        group = child.pid
        if child.isalive():
            for sig in (signal.SIGHUP, signal.SIGCONT, signal.SIGINT, signal.SIGTERM):
                _signal_group(group, sig)
                end = time.monotonic() + 0.5
                while child.isalive() and time.monotonic() < end:
                    time.sleep(0.02)
                if not child.isalive():
                    break
            else:
                _signal_group(group, signal.SIGKILL)
        child.close(force=True)

    def conclude(self):
        """After the end of output: the exit status and whether every MM2 question was answered."""
        self.child.close(force=True)
        status, signalled = self.child.exitstatus, self.child.signalstatus
        missing = [key for key in self.required() if key not in self.answered]
        ended = "was killed by signal %s" % signalled if status is None else "exited with status %d" % status
        if missing and not self.answered:
            if status == 0:
                hint = ": KafkaMM2 may already be configured, or command is not the one that asks them"
            elif status == 127:
                hint = " (127: the command was not found after sourcing env_file)"
            else:
                hint = ""
            self.fail("%s %s without asking the MM2 questions%s; last output: %r"
                      % (self.label, ended, hint, _tail(clean("".join(self.output)))))
        if missing:
            self.fail("%s %s before asking %s (answered: %s); last output: %r"
                      % (self.label, ended, ", ".join(_question_name(k) for k in missing),
                         ", ".join(_question_name(k) for k in self.answered), _tail(clean("".join(self.output)))))
        if status != 0:
            self.fail("%s %s after the MM2 questions were answered; last output: %r"
                      % (self.label, ended, _tail(clean("".join(self.output)))))
        return dict(hostnames=self.shown if self.shown is not None else [], transcript=self.transcript(),
                    answered=list(self.answered))


def _question_name(key):
    return {MONITOR: "the monitor question", NODES: "the nodes question", CONFIRM: "the hostname confirmation",
            JMX_PORT: "the JMX port question"}[key]


def _signal_group(group, sig):
    try:
        os.killpg(group, sig)
    except OSError:
        pass


def _tail(text, lines=3):
    text = text.rstrip()
    return "\n".join(text.split("\n")[-lines:])[-300:]


def _seconds(value):
    return ("%.1f" % value).rstrip("0").rstrip(".")
