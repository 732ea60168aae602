#!/bin/sh
""":"
exec "${ACCELO_DOUBLE_PYTHON:-python3}" -B "$0" "$@"
"
Test double of Acceldata Pulse's command-line tool ``accelo`` (NOT Pulse).

The three lines above make this one file runnable as ``accelo`` by /bin/sh, which hands it to
``python3`` (or to ``$ACCELO_DOUBLE_PYTHON``); Python reads them as the start of this docstring.

What it reproduces, and nothing more: the interface facts Pulse's documentation gives for the
MirrorMaker 2 part of ``accelo``'s cluster dialogue:

* the command words ``accelo config cluster`` (first time) and ``accelo reconfig cluster [-a]``
  (scripts pass ``-a``; the documentation does not say what it does, the double accepts and
  logs it);
* ``AcceloHome``, set by ``/etc/profile.d/ad.sh``, sourced in a login shell;
* the four MM2 prompts and the hostnames line, as documented::

    Do you want to monitor KafkaMM2 [y/n]: y
    Enter the Kafka MirrorMaker nodes (comma separated hosts e.g. mm2kafka1,mm2kafka2): 10.90.5.97
    The Kafka MM2 hostnames are: [odpcp02.acceldata.dvl]
    Is the above Kafka MM2 hostname information correct? [y/n]: y
    Enter the Kafka MirrorMaker JMX Port (Ex: 9998): 9998

Everything else (the other questions of ``extra_questions``, the messages, the exit statuses, the
files it writes) is the double's own invention, made to show a behaviour a dialogue client must
handle. No test verifies Pulse through it; it exercises the client (the ``pulse_register``
module) against the documented dialogue and against faults Pulse cannot be made to show.

Behaviour comes from ``$AcceloHome/double.json`` (missing file: ``plain``, no hosts)::

    {"variant": "plain", "hosts": {"10.0.0.5": "mm2-1.lab"}, "slow_seconds": 30,
     "echo_secret": false}

Nodes are resolved to the hostnames shown through ``hosts``; a node missing from it resolves to
itself. Variants:

``plain``
    the documented MM2 questions, nothing else.
``extra_questions``
    ``Enter the cluster name: `` and ``Enter the database password: `` before the MM2 questions
    (the password read with echo off through getpass; with ``"echo_secret": true`` read with echo
    on, so the answer appears on the terminal), ``Do you want to enable alerts for the cluster
    [y/n]: `` after them.
``spacing_case``
    the MM2 prompts with other spacing and case (``do you want to MONITOR  kafkamm2 [Y/N] :``),
    the hostnames separated by blanks only.
``crlf``
    every line written with ``\\r\\n``.
``split_prompt``
    each MM2 prompt written in two writes 0.3 s apart (flushed between), e.g.
    ``Enter the Kafka MirrorMaker JMX`` then `` Port (Ex: 9998): ``.
``hostname_mismatch``
    shows ``stale-<name>`` for the last node instead of its name (what a stale DNS entry does).
``unknown_question``
    after the monitor question asks ``Enter the Zookeeper chroot path: `` (a question no document
    names) and waits; an answer is logged and the dialogue goes on as ``plain``.
``slow_prompt``
    sleeps ``slow_seconds`` (default 30) before the JMX port question.
``error_exit``
    after the nodes question prints ``ERROR: ...`` and exits 1.
``already_registered``
    prints that KafkaMM2 is already configured, asks no MM2 question, exits 0.

Answering ``n`` to the hostname question: it prints ``Hostnames rejected ...`` and exits 3 (it
does not ask again). Answering ``n`` to the monitor question skips the other MM2 questions.
A y/n question answered otherwise, or a JMX port that is not a port, is asked again.

Files in ``$AcceloHome``: ``double-log.jsonl`` gains one JSON line per event (``start``, ``ask``
with the question, ``answer`` with what was received -- secrets too, it is a test double --,
``say``, ``exit`` with the status); ``registered-mm2.json`` is written at the end of a successful
run. Exit statuses: 0 done, 1 ``error_exit``, 2 usage or environment, 3 hostnames rejected,
4 the terminal closed (end of input) in the middle of a question.

Installing it on a host (``AcceloHome`` here ``/opt/accelo-double``; python3 needed)::

    install -d -m 0755 /opt/accelo-double/bin
    install -m 0755 accelo_double.py /opt/accelo-double/bin/accelo
    printf '%s\\n' 'export AcceloHome=/opt/accelo-double' \\
        'export PATH=/opt/accelo-double/bin:$PATH' > /etc/profile.d/ad.sh
    echo '{"variant": "plain", "hosts": {"10.0.0.5": "mm2-1.lab"}}' > /opt/accelo-double/double.json
    bash -l -c 'accelo reconfig cluster -a'     # try it by hand

then change ``variant`` in ``double.json`` between runs. Standard library only, Python 3.6 or later.
"""

import getpass
import json
import os
import sys
import time

PROMPTS = {
    "monitor": "Do you want to monitor KafkaMM2| [y/n]: ",
    # '|' marks where split_prompt cuts a prompt in two writes
    "nodes": "Enter the Kafka MirrorMaker nodes (comma separated hosts| e.g. mm2kafka1,mm2kafka2): ",
    "hostnames": "The Kafka MM2 hostnames are: [%s]",
    "confirm": "Is the above Kafka MM2 hostname information correct?| [y/n]: ",
    "jmx_port": "Enter the Kafka MirrorMaker JMX| Port (Ex: 9998): ",
}
PROMPTS_SPACING_CASE = {
    "monitor": "do you want to MONITOR  kafkamm2 [Y/N] :",
    "nodes": "ENTER THE KAFKA MIRRORMAKER  NODES (comma separated hosts e.g. mm2kafka1,mm2kafka2) :  ",
    "hostnames": "the kafka MM2  HOSTNAMES are :[%s]",
    "confirm": "is the above KAFKA MM2 hostname information correct ?[Y/N]:",
    "jmx_port": "enter the kafka mirror maker jmx PORT  (Ex: 9998) : ",
}
VARIANTS = ("plain", "extra_questions", "spacing_case", "crlf", "split_prompt", "hostname_mismatch",
            "unknown_question", "slow_prompt", "error_exit", "already_registered")
USAGE = "usage: accelo config cluster | accelo reconfig cluster [-a]"


class Double:
    def __init__(self, home, argv):
        self.home = home
        self.argv = argv
        path = os.path.join(home, "double.json")
        config = {}
        if os.path.exists(path):
            with open(path, encoding="utf-8") as handle:
                config = json.load(handle)
        self.variant = config.get("variant", "plain")
        self.hosts = config.get("hosts", {})
        self.slow_seconds = float(config.get("slow_seconds", 30))
        self.echo_secret = bool(config.get("echo_secret", False))
        self.prompts = PROMPTS_SPACING_CASE if self.variant == "spacing_case" else PROMPTS
        self.eol = "\r\n" if self.variant == "crlf" else "\n"

    def log(self, event, **fields):
        fields = dict(fields, event=event, pid=os.getpid(), time=round(time.time(), 3))
        with open(os.path.join(self.home, "double-log.jsonl"), "a", encoding="utf-8") as handle:
            handle.write(json.dumps(fields, sort_keys=True) + "\n")

    def write(self, text):
        sys.stdout.write(text)
        sys.stdout.flush()

    def say(self, text):
        self.log("say", text=text)
        self.write(text + self.eol)

    def finish(self, status):
        self.log("exit", status=status)
        sys.exit(status)

    def read_line(self, key):
        line = sys.stdin.readline()
        if not line:
            self.log("eof", key=key)
            self.finish(4)
        return line.rstrip("\r\n")

    def ask(self, key, prompt=None):
        """Writes the prompt (in two writes for split_prompt), returns the line answered."""
        prompt = prompt if prompt is not None else self.prompts[key]
        whole = prompt.replace("|", "")
        self.log("ask", key=key, text=whole)
        if self.variant == "split_prompt" and "|" in prompt:
            first, second = prompt.split("|", 1)
            self.write(first)
            time.sleep(0.3)
            self.write(second)
        else:
            self.write(whole)
        answer = self.read_line(key)
        self.log("answer", key=key, text=answer)
        return answer

    def ask_secret(self, key, prompt):
        self.log("ask", key=key, text=prompt, secret=True)
        if self.echo_secret:
            self.write(prompt)
            answer = self.read_line(key)
        else:
            try:
                answer = getpass.getpass(prompt)
            except EOFError:
                self.log("eof", key=key)
                self.finish(4)
        self.log("answer", key=key, text=answer)
        return answer

    def ask_yes_no(self, key, prompt=None):
        while True:
            answer = self.ask(key, prompt).strip().lower()
            if answer in ("y", "n"):
                return answer == "y"
            self.say("Please answer y or n.")

    def run(self):
        if self.variant not in VARIANTS:
            self.say("accelo double: unknown variant %r in double.json (known: %s)" % (self.variant, ", ".join(VARIANTS)))
            self.finish(2)
        self.say("Acceldata Pulse accelo (TEST DOUBLE): %s" % " ".join(self.argv))
        if self.variant == "already_registered":
            self.say("KafkaMM2 is already configured for this cluster; nothing to do.")
            self.finish(0)
        record = {"command": self.argv, "variant": self.variant}
        if self.variant == "extra_questions":
            record["cluster_name"] = self.ask("cluster_name", "Enter the cluster name: ")
            record["database_password_set"] = bool(self.ask_secret("database_password", "Enter the database password: "))
        record["monitor"] = self.ask_yes_no("monitor")
        if record["monitor"]:
            self.mm2_questions(record)
        else:
            self.say("KafkaMM2 will not be monitored.")
        if self.variant == "extra_questions":
            record["alerts"] = self.ask_yes_no("alerts", "Do you want to enable alerts for the cluster [y/n]: ")
        with open(os.path.join(self.home, "registered-mm2.json"), "w", encoding="utf-8") as handle:
            json.dump(record, handle, indent=2, sort_keys=True)
        self.say("Cluster configuration saved.")
        self.finish(0)

    def mm2_questions(self, record):
        if self.variant == "unknown_question":
            record["zookeeper_chroot"] = self.ask("zookeeper_chroot", "Enter the Zookeeper chroot path: ")
        nodes = [node.strip() for node in self.ask("nodes").split(",") if node.strip()]
        if self.variant == "error_exit":
            self.say("ERROR: could not reach MirrorMaker node %s: connection refused" % (nodes[0] if nodes else "''"))
            self.finish(1)
        hostnames = [self.hosts.get(node, node) for node in nodes]
        if self.variant == "hostname_mismatch" and hostnames:
            hostnames[-1] = "stale-" + hostnames[-1]
        separator = "  " if self.variant == "spacing_case" else ", "
        self.say(self.prompts["hostnames"] % separator.join(hostnames))
        if not self.ask_yes_no("confirm"):
            self.say("Hostnames rejected; fix the name resolution of the MM2 nodes and run accelo again.")
            self.finish(3)
        if self.variant == "slow_prompt":
            time.sleep(self.slow_seconds)
        while True:
            port = self.ask("jmx_port").strip()
            if port.isdigit() and 0 < int(port) < 65536:
                break
            self.say("Invalid port %r." % port)
        record.update(nodes=nodes, hostnames=hostnames, jmx_port=int(port))


def main(argv):
    home = os.environ.get("AcceloHome")
    if not home or not os.path.isdir(home):
        sys.stderr.write("accelo: AcceloHome is not set or not a directory; source /etc/profile.d/ad.sh\n")
        return 2
    words = [word for word in argv if word != "-a"]
    if words not in (["config", "cluster"], ["reconfig", "cluster"]) or (argv.count("-a") and words[0] != "reconfig"):
        sys.stderr.write(USAGE + "\n")
        return 2
    double = Double(home, argv)
    double.log("start", argv=argv, variant=double.variant)
    double.run()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
