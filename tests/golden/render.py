"""Golden files: what the roles render for the example inventories, compared with committed copies.

Proves that a change meant to move code (the "one home for domain logic" refactor) changed no
output: each case runs playbooks/site.yml in check mode with --diff against its inventory, every
host on a local connection inside a private mount and network namespace (unshare), and keeps

  - every file a role writes, as its dry-run diff shows it (secrets already masked there):
    server.properties, mm2.properties, worker properties, logging, JMX files, systemd units, and
    the smoke job's configuration (playbooks/smoke.yml after the deployment, where the inventory
    has a smoke host; a configuration that holds a secret is written unshown, so it is not kept);
  - the managed block of connect-mirror-maker.sh (a stand-in script with Apache's exec line is
    put where the install would be, on a tmpfs only this run sees);
  - the connectors' configs of each Connect worker's plan and the ACLs derived for MirrorMaker 2
    (a dry run does not reach a worker or a broker, so they come from the plan the role built).

What a case needs that a dry run on a bare machine lacks is supplied, not stubbed: the lab's Kafka
archive for inventories that would download one; each host's inventory name as the host name the
fqdn fact would give (as on the lab's containers); empty key and trust store files and a fixed
admin password where lab_secure reads them from the lab KDC's directory; and, for inventories
whose clusters run elsewhere (pulse_example), a real single-node broker on 127.0.0.1:9092 in the
private network, with the clusters' host names pointing at it, so the preflight probe answers.

  python3 tests/golden/render.py            compare every case with tests/golden/expected
  python3 tests/golden/render.py --update   rewrite the expected files (review the git diff)
  python3 tests/golden/render.py CASE ...   only those cases

Cases run two at a time by default (--jobs): each is one ansible-playbook process at a time, which
leaves a core of two idle. The gate gives --jobs 1: there two other tracks share the machine.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import difflib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
EXPECTED = os.path.join(HERE, "expected")
ARCHIVE = os.path.join(REPO, ".cache", "kafka", "kafka_2.13-4.3.1.tgz")
# Where kafka_common installs that archive (its defaults): the stand-in script goes there.
INSTALL_ROOT = "/opt/kafka"
SCRIPT = os.path.join(INSTALL_ROOT, "kafka_2.13-4.3.1", "bin", "connect-mirror-maker.sh")
# Apache Kafka's bin/connect-mirror-maker.sh (apache/kafka) without its #! line (ansible-test's
# sanity refuses a shebang there): only its exec line matters to the role.
STAND_IN_SCRIPT = os.path.join(HERE, "connect-mirror-maker.sh.apache")

CASES = {
    "lab": dict(inventory="inventories/lab", smoke=True),
    # the ACLs are derived, not applied: applying them needs the lab's Kerberos brokers
    "lab_secure": dict(inventory="inventories/lab_secure", lab_secrets="lab", skip_tags="mm2_acls_apply", smoke=True),
    "disaster_recovery": dict(inventory="inventories/disaster_recovery", archive=True, fqdn=True,
                              playbook="playbooks/disaster_recovery.yml"),
    "pulse_example": dict(inventory="inventories/pulse_example", archive=True, fqdn=True,
                          broker_names=["clusterA-broker1.example.invalid", "clusterB-broker1.example.invalid"]),
    # Molecule's scenarios: their platforms as an inventory, with the scenario's group_vars
    "molecule_default": dict(molecule="default", smoke=True),
    "molecule_dr": dict(molecule="dr", playbook="playbooks/disaster_recovery.yml", smoke=True),
    "molecule_secure": dict(molecule="secure", lab_secrets="secure", skip_tags="mm2_acls_apply", smoke=True),
    "molecule_kraft": dict(molecule="kraft", smoke=True),
}
# The facts a role builds its plan into, and what of them is kept (the refactor moves the plan:
# update this table, not the expected files).
PLAN_FACTS = {
    "__connect_plan": lambda plan: {"connectors/%s.json" % name: config
                                    for name, config in (plan.get("connectors") or {}).items()},
    "__mm2_acls_derived": lambda derived: {"acls.json": derived.get("acls")},
}
# MASKED is how the roles' modules show a secret in --diff.
SECRET_FILES = ("admin.password",)


def run(cmd, **kwargs):
    return subprocess.run(cmd, check=False, text=True, capture_output=True, **kwargs)


# ------------------------------------------------------------------------------ inside the namespace

def start_broker(work):
    """A real single-node KRaft broker on 127.0.0.1:9092 (the port the example names) from the lab's
    archive, started by the live-broker tests' harness; returns its Lab (``stop()`` ends it)."""
    sys.path.insert(0, os.path.join(REPO, "tests", "live"))
    import harness  # noqa: E402 (the live-broker tests' helpers)

    lab = harness.Lab(archive=ARCHIVE, workdir=os.path.join(work, "broker"))
    os.makedirs(lab.tmp)
    lab.start_brokers(("example",), ports={"example": (9092, 9093)})
    return lab


def prepare_namespace(case, work):
    """Loopback up, a tmpfs over the install root with the stand-in script, host names for brokers."""
    for cmd in (["ip", "link", "set", "lo", "up"], ["mount", "-t", "tmpfs", "tmpfs", "/opt"]):
        done = run(cmd)
        if done.returncode != 0:
            raise SystemExit("golden: %s failed: %s" % (" ".join(cmd), done.stderr.strip()))
    os.makedirs(os.path.dirname(SCRIPT))
    shutil.copy(STAND_IN_SCRIPT, SCRIPT)
    names = case.get("broker_names") or []
    hosts = os.path.join(work, "hosts")
    with open(hosts, "w") as fh:
        fh.write("127.0.0.1 localhost %s\n" % " ".join(names))
    done = run(["mount", "--bind", hosts, "/etc/hosts"])
    if done.returncode != 0:
        raise SystemExit("golden: binding /etc/hosts failed: %s" % done.stderr.strip())


def molecule_inventory(scenario, work):
    """An inventory of the scenario's platforms (each in its groups) next to its group_vars."""
    import yaml

    with open(os.path.join(REPO, "molecule", scenario, "molecule.yml")) as fh:
        platforms = yaml.safe_load(fh)["platforms"]
    groups = {}
    for platform in platforms:
        for group in platform.get("groups", []):
            groups.setdefault(group, {"hosts": {}})["hosts"][platform["name"]] = None
    inventory = os.path.join(work, "inventory-" + scenario)
    os.makedirs(inventory)
    with open(os.path.join(inventory, "hosts.yml"), "w") as fh:
        yaml.safe_dump({"all": {"children": groups}}, fh)
    os.symlink(os.path.join(REPO, "molecule", scenario, "inventory", "group_vars"),
               os.path.join(inventory, "group_vars"))
    return inventory


def inventory_hosts(inventory):
    listed = run(["ansible-inventory", "-i", inventory, "--list"], cwd=REPO)
    return sorted(json.loads(listed.stdout)["_meta"]["hostvars"])


def lab_secrets(work, inventory, subdir):
    """The files lab_secure reads from the lab KDC's directory: empty keytabs, a throwaway self-signed
    key and certificate as every PEM store (the roles check their form, and copy them unshown), and
    a fixed admin password (the lab's is random)."""
    secrets = os.path.join(work, "lab-kdc")
    lab = os.path.join(secrets, subdir)
    tls = os.path.join(lab, "tls")
    os.makedirs(tls)
    key, cert = os.path.join(work, "key.pem"), os.path.join(work, "cert.pem")
    made = run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert,
                "-days", "1", "-subj", "/CN=golden"])
    if made.returncode != 0:
        raise SystemExit("golden: openssl could not make a throwaway certificate: " + made.stderr)
    with open(key) as fh:
        key_pem = fh.read()
    with open(cert) as fh:
        cert_pem = fh.read()
    for name in inventory_hosts(inventory):
        open(os.path.join(lab, name + ".keytab"), "w").close()
        with open(os.path.join(tls, name + ".keystore.pem"), "w") as fh:
            fh.write(key_pem + cert_pem)
    with open(os.path.join(tls, "ca.pem"), "w") as fh:
        fh.write(cert_pem)
    with open(os.path.join(lab, "admin.password"), "w") as fh:
        fh.write("golden-admin-password\n")
    return secrets


def playbooks(case, work):
    """Run the case's playbooks (the deployment, then the smoke job's where it has one) in check mode;
    returns [(playbook, rc, report)]."""
    env = dict(os.environ, ANSIBLE_STDOUT_CALLBACK="ansible.posix.json", ANSIBLE_CALLBACK_RESULT_FORMAT="json",
               ANSIBLE_NOCOLOR="1", ANSIBLE_RETRY_FILES_ENABLED="0", KAFKA_ARCHIVE=ARCHIVE,
               # this tree's roles and settings, whatever the caller's environment names
               ANSIBLE_CONFIG=os.path.join(REPO, "ansible.cfg"),
               ANSIBLE_COLLECTIONS_PATH=os.path.join(REPO, ".collections"))
    extra = {"ansible_connection": "local", "ansible_python_interpreter": sys.executable}
    inventory = case.get("inventory")
    if case.get("molecule"):
        inventory = molecule_inventory(case["molecule"], work)
        env["MOLECULE_SCENARIO_NAME"] = case["molecule"]
    if case.get("archive"):
        extra["kafka_common_archive_src"] = ARCHIVE
    if case.get("fqdn"):
        for var in ("kafka_broker_advertised_host", "connect_advertised_host", "mirrormaker_advertised_host"):
            extra[var] = "{{ inventory_hostname }}"
    if case.get("lab_secrets"):
        env["KAFKAOPS_LAB_KDC_DIR"] = lab_secrets(work, inventory, case["lab_secrets"])
    results = []
    for path in [case.get("playbook", "playbooks/site.yml")] + (["playbooks/smoke.yml"] if case.get("smoke") else []):
        cmd = ["ansible-playbook", "-i", inventory, path, "--check", "--diff", "-e", json.dumps(extra)]
        if case.get("skip_tags"):
            cmd += ["--skip-tags", case["skip_tags"]]
        done = run(cmd, cwd=REPO, env=env)
        try:
            report = json.loads(done.stdout)
        except ValueError:
            raise SystemExit("golden: %s %s: no JSON from ansible-playbook (rc %d):\n%s\n%s"
                             % (inventory, path, done.returncode, done.stdout[-3000:], done.stderr[-3000:]))
        results.append((path, done.returncode, report))
    return results


def block_of(after):
    """The managed block of connect-mirror-maker.sh, markers included, from the script after the change."""
    lines = after.splitlines(keepends=True)
    begin = [i for i, line in enumerate(lines) if "BEGIN kafkaops.mirrormaker managed block" in line]
    end = [i for i, line in enumerate(lines) if "END kafkaops.mirrormaker managed block" in line]
    return "".join(lines[begin[0]:end[0] + 1]) if begin and end else None


def collect(report):
    """{host: {relative path: text}} and the failures, from the JSON callback's report."""
    files, failures = {}, []
    for play in report.get("plays", []):
        for task in play.get("tasks", []):
            for host, result in task.get("hosts", {}).items():
                if result.get("failed") or result.get("unreachable"):
                    failures.append("%s: %s: %s" % (host, task["task"]["name"], result.get("msg")))
                    continue
                diffs = result.get("diff") or []
                for diff in diffs if isinstance(diffs, list) else [diffs]:
                    # blockinfile names the file "<path> (content)"
                    path = (diff.get("after_header") or "").replace(" (content)", "")
                    after = diff.get("after")
                    if not path.startswith("/") or not isinstance(after, str):
                        continue
                    if path == SCRIPT:
                        block = block_of(after)
                        if block is not None:
                            files.setdefault(host, {})["connect-mirror-maker.sh.block"] = block
                        continue
                    if path.startswith(os.path.join(tempfile.gettempdir(), "golden-")):
                        continue  # a copy's source: the stand-in secrets made for this run
                    if path.startswith(INSTALL_ROOT + "/"):
                        # the install's provenance (the archive's sha512): the lab's archive is
                        # assembled on each machine, and an install is not configuration
                        continue
                    files.setdefault(host, {})[path.lstrip("/")] = after
                for fact, keep in PLAN_FACTS.items():
                    value = (result.get("ansible_facts") or {}).get(fact)
                    if value is not None:
                        for rel, data in keep(value).items():
                            files.setdefault(host, {})["plan/" + rel] = json.dumps(data, indent=2, sort_keys=True) + "\n"
    return files, failures


def inside(name, out):
    """Run one case in this (private) namespace; write {host: {path: text}} as JSON to ``out``."""
    case = CASES[name]
    work = tempfile.mkdtemp(prefix="golden-%s-" % name)
    prepare_namespace(case, work)
    broker = start_broker(work) if case.get("broker_names") else None
    try:
        results = playbooks(case, work)
    finally:
        if broker is not None:
            broker.stop()
        shutil.rmtree(work, ignore_errors=True)
    files, failures, rc = {}, [], 0
    for path, code, report in results:
        found, failed = collect(report)
        for host, texts in found.items():
            files.setdefault(host, {}).update(texts)
        failures += ["%s: %s" % (path, failure) for failure in failed]
        rc = rc or code
    with open(out, "w") as fh:
        json.dump({"rc": rc, "files": files, "failures": failures}, fh)


# --------------------------------------------------------------------------------- the controller

def render(name):
    """{host: {path: text}} of one case, run in a private mount and network namespace."""
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        done = run(["unshare", "--mount", "--net", "--propagation", "private", sys.executable, __file__,
                    "--inside", name, out.name], cwd=REPO)
        if done.returncode != 0:
            raise SystemExit("golden: case %s failed (rc %d):\n%s\n%s"
                             % (name, done.returncode, done.stdout[-3000:], done.stderr[-3000:]))
        with open(out.name) as fh:
            result = json.load(fh)
    if result["rc"] != 0 or result["failures"]:
        raise SystemExit("golden: case %s: the dry run failed (rc %d):\n  %s"
                         % (name, result["rc"], "\n  ".join(result["failures"]) or "(no failed task in the report)"))
    return result["files"]


def timed_render(name):
    started = time.monotonic()
    got = render(name)
    return got, time.monotonic() - started


def expected_files(name):
    root = os.path.join(EXPECTED, name)
    found = {}
    for dirpath, _dirs, names in os.walk(root):
        for fname in names:
            path = os.path.join(dirpath, fname)
            rel = os.path.relpath(path, root)
            host, _sep, inner = rel.partition(os.sep)
            with open(path) as fh:
                found.setdefault(host, {})[inner] = fh.read()
    return found


def compare(name, got):
    want = expected_files(name)
    problems = []
    flat_got = {(h, p): t for h, files in got.items() for p, t in files.items()}
    flat_want = {(h, p): t for h, files in want.items() for p, t in files.items()}
    for key in sorted(set(flat_got) | set(flat_want)):
        label = "%s/%s/%s" % (name, key[0], key[1])
        if key not in flat_want:
            problems.append("%s: rendered, not in tests/golden/expected" % label)
        elif key not in flat_got:
            problems.append("%s: expected, no longer rendered" % label)
        elif flat_got[key] != flat_want[key]:
            diff = difflib.unified_diff(flat_want[key].splitlines(True), flat_got[key].splitlines(True),
                                        "expected/" + label, "rendered/" + label)
            problems.append("".join(diff))
    return problems


def update(name, got):
    root = os.path.join(EXPECTED, name)
    shutil.rmtree(root, ignore_errors=True)
    for host, files in got.items():
        for rel, text in files.items():
            path = os.path.join(root, host, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as fh:
                fh.write(text)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    parser.add_argument("--update", action="store_true")
    parser.add_argument("--jobs", type=int, default=2, metavar="N", help="cases run at once (default 2)")
    parser.add_argument("--inside", nargs=2, metavar=("CASE", "OUT"), help=argparse.SUPPRESS)
    parser.add_argument("cases", nargs="*", choices=sorted(CASES) + [[]], default=[])
    args = parser.parse_args()
    if args.inside:
        inside(*args.inside)
        return 0
    names = args.cases or sorted(CASES)
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        # each case's outcome in the cases' order, printed as soon as the cases before it are done
        outcomes = pool.map(timed_render, names)
        failed = False
        for name, (got, seconds) in zip(names, outcomes):
            count = sum(len(files) for files in got.values())
            if args.update:
                update(name, got)
                print("golden: %s: %d files written (%.0f s)" % (name, count, seconds), flush=True)
                continue
            problems = compare(name, got)
            print("golden: %s: %d files, %s (%.0f s)" % (name, count, "%d differ" % len(problems) if problems else "identical",
                                                         seconds), flush=True)
            for problem in problems:
                print(problem)
            failed = failed or bool(problems)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
