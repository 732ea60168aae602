"""Converge time against host count: the lab with 1 to 12 hosts, cold and warm (bench/README.md).

For each host count: lab containers made afresh (lab/up.yml, not timed in the converge figures),
playbooks/site.yml cold, then warm --warm-runs rounds of one run per --variants entry (each must
report changed=0, or the bench fails), then one warm run with the profile_tasks and profile_roles
callbacks (not counted). Prints per host count the wall times, the host-tasks, the CPU the
controller and the whole machine spent, the marginal seconds per added host, where a warm run's
time goes, and writes bench/results/converge-<date>.json. The lab is named bench-* on its own
network, so the demo lab may keep running beside it (it shares the 2 cores, though: a quiet
machine measures best).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "lib"))
import recap  # noqa: E402 pylint: disable=wrong-import-position
NETWORK = "kafkaops-bench"

# Host layouts by count: the demo lab's shape (clusters A and B, MirrorMaker nodes) scaled up.
LAYOUTS = {
    1: {"kafka_a": ["bench-a1"], "kafka_b": [], "mirrormakers": []},
    3: {"kafka_a": ["bench-a1"], "kafka_b": ["bench-b1"], "mirrormakers": ["bench-mm2-1"]},
    6: {"kafka_a": ["bench-a1", "bench-a2", "bench-a3"], "kafka_b": ["bench-b1"],
        "mirrormakers": ["bench-mm2-1", "bench-mm2-2"]},
    9: {"kafka_a": ["bench-a1", "bench-a2", "bench-a3"], "kafka_b": ["bench-b1", "bench-b2", "bench-b3"],
        "mirrormakers": ["bench-mm2-1", "bench-mm2-2", "bench-mm2-3"]},
    12: {"kafka_a": ["bench-a%d" % i for i in range(1, 6)], "kafka_b": ["bench-b%d" % i for i in range(1, 5)],
         "mirrormakers": ["bench-mm2-1", "bench-mm2-2", "bench-mm2-3"]},
}
PROFILE = {"ANSIBLE_CALLBACKS_ENABLED": "ansible.posix.profile_tasks,ansible.posix.profile_roles",
           "PROFILE_TASKS_TASK_OUTPUT_LIMIT": "12"}


def variant_env(name: str, workdir: Path) -> dict:
    """The ansible settings a --variants entry stands for: `default` (ansible.cfg as it is),
    `forks=N`, `mitogen` (the mitogen_linear strategy of the mitogen package, when installed),
    `tree=REV` (the collection as it was at git revision REV, checked out under ``workdir``: before
    and after a change, side by side on the same lab)."""
    if name == "default":
        return {}
    if name.startswith("tree="):
        rev = name[len("tree="):]
        sha = subprocess.run(["git", "rev-parse", "--verify", rev + "^{commit}"], cwd=REPO, capture_output=True,
                             text=True, check=False).stdout.strip()
        if not sha:
            sys.exit("converge bench: --variants %s: no such git revision" % name)
        tree = workdir / ("tree-" + sha[:12])
        if not tree.exists():  # the same revision named twice
            tree.mkdir()
            archive = subprocess.run(["git", "archive", sha], cwd=REPO, capture_output=True, check=True).stdout
            subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
            link = tree / ".collections" / "ansible_collections" / "kafkaops" / "mirrormaker"
            link.parent.mkdir(parents=True)
            link.symlink_to(tree)
        return {"ANSIBLE_COLLECTIONS_PATH": str(tree / ".collections"), "KAFKAOPS_BENCH_TREE": str(tree)}
    if name.startswith("forks="):
        return {"ANSIBLE_FORKS": str(int(name[len("forks="):]))}
    if name == "mitogen":
        try:
            import ansible_mitogen  # pylint: disable=import-outside-toplevel
        except ImportError:
            sys.exit("converge bench: --variants mitogen needs the mitogen package (pip install mitogen)")
        plugins = Path(ansible_mitogen.__file__).parent / "plugins" / "strategy"
        return {"ANSIBLE_STRATEGY_PLUGINS": str(plugins), "ANSIBLE_STRATEGY": "mitogen_linear"}
    sys.exit("converge bench: unknown variant %r (default, forks=N, mitogen, tree=REV)" % name)


def machine_busy() -> float:
    """CPU seconds all cores of the machine have been busy (/proc/stat): the lab's hosts run on it too."""
    with open("/proc/stat") as stat:
        fields = [int(f) for f in stat.readline().split()[1:]]
    idle = fields[3] + fields[4]
    return (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def inventory(workdir: Path, layout: dict) -> Path:
    """hosts.yml with the lab's groups, beside a link to the lab's group_vars."""
    def hosts(names):
        return {"hosts": {name: None for name in names}}

    brokers = {"kafka_a": hosts(layout["kafka_a"])}
    if layout["kafka_b"]:
        brokers["kafka_b"] = hosts(layout["kafka_b"])
    children = {"kafka_brokers": {"children": brokers}}
    children["mirrormakers"] = hosts(layout["mirrormakers"])
    data = {"all": {"children": {"lab_hosts": {"children": children}}}}
    inv = workdir / "inventory"
    inv.mkdir(exist_ok=True)
    (inv / "hosts.yml").write_text(json.dumps(data, indent=2) + "\n")
    link = inv / "group_vars"
    if not link.exists():
        link.symlink_to(REPO / "inventories" / "lab" / "group_vars")
    return inv / "hosts.yml"


def playbook(env, inv, play, log: Path, extra=()):
    """Runs ansible-playbook; returns (seconds, output, cpu): cpu is {controller, machine} CPU
    seconds spent meanwhile. Fails the bench on a failed run."""
    tree = Path(env.get("KAFKAOPS_BENCH_TREE", REPO))
    cmd = ["ansible-playbook", "-i", str(inv), "-e", "lab_network=" + NETWORK, *extra, str(tree / play)]
    before, busy = resource.getrusage(resource.RUSAGE_CHILDREN), machine_busy()
    start = time.monotonic()
    proc = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, check=False)
    seconds = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = {"controller": round(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, 2),
           "machine": round(machine_busy() - busy, 2)}
    with log.open("a") as out:
        out.write("$ %s\n%s%s\n" % (" ".join(cmd), proc.stdout, proc.stderr))
    if proc.returncode != 0:
        sys.exit("converge bench: %s failed (rc %d); output in %s" % (play, proc.returncode, log))
    return seconds, proc.stdout, cpu


def profile(output: str) -> dict:
    """The profile callbacks' summaries: {tasks: [[name, s]...] (slowest first), roles: {role: s}}."""
    out = {"tasks": [], "roles": {}}
    section = None
    for line in output.splitlines():
        if line.startswith("TASKS RECAP"):
            section = "tasks"
        elif line.startswith("ROLES RECAP"):
            section = "roles"
        match = re.match(r"^(.+?) -+ (\d+\.\d+)s$", line)
        if section and match and match.group(1) != "total":
            if section == "tasks":
                out["tasks"].append([match.group(1), float(match.group(2))])
            else:
                out["roles"][match.group(1)] = float(match.group(2))
    return out


def slope(points) -> float:
    """Least-squares seconds per host over (hosts, seconds) points."""
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    mx, my = statistics.mean(xs), statistics.mean(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)


def counts(output: str):
    """(task banners the controller ran, host-task results, changed) of one run's output."""
    tasks = len(re.findall(r"^TASK \[", output, re.M))
    per_host = recap.recap(output).values()
    host_tasks = sum(c["ok"] + c["skipped"] + c["failed"] for c in per_host)
    changed = sum(c["changed"] for c in per_host)
    return tasks, host_tasks, changed


def bench_count(n: int, args, env, variants: dict, workdir: Path, log: Path) -> dict:
    layout = LAYOUTS[n]
    inv = inventory(workdir, layout)
    playbook(env, inv, "lab/down.yml", log)
    up = playbook(env, inv, "lab/up.yml", log)[0]
    cold, output, cold_cpu = playbook(env, inv, "playbooks/site.yml", log)
    cold_tasks, cold_host_tasks, cold_changed = counts(output)
    # Services just started (JVM start, JIT) take CPU for a while: a warm run measured right after
    # would time them, not the run. A datacenter re-runs later.
    time.sleep(args.settle)
    warm = {v: {"s": [], "controller_cpu_s": [], "machine_cpu_s": []} for v in args.variants}
    # Variants alternate within each round, so a drift of the machine weighs on all of them alike.
    for _round in range(args.warm_runs):
        for name in args.variants:
            seconds, output, cpu = playbook(dict(env, **variants[name]), inv, "playbooks/site.yml", log)
            tasks, host_tasks, changed = counts(output)
            if changed:
                sys.exit("converge bench: a warm run (%s) with %d hosts changed %d things; output in %s"
                         % (name, n, changed, log))
            warm[name]["tasks"], warm[name]["host_tasks"] = tasks, host_tasks
            warm[name]["s"].append(round(seconds, 2))
            warm[name]["controller_cpu_s"].append(cpu["controller"])
            warm[name]["machine_cpu_s"].append(cpu["machine"])
    profiled = profile(playbook(dict(env, **PROFILE), inv, "playbooks/site.yml", log)[1])
    if not args.keep:
        playbook(env, inv, "lab/down.yml", log)
    for entry in warm.values():
        for key in ("s", "controller_cpu_s", "machine_cpu_s"):
            entry[key + "_median"] = round(statistics.median(entry[key]), 2)
    first = warm[args.variants[0]]
    return {
        "hosts": n, "layout": layout, "up_s": round(up, 2), "settle_s": args.settle,
        "cold_s": round(cold, 2), "cold_tasks": cold_tasks, "cold_host_tasks": cold_host_tasks,
        "cold_changed": cold_changed, "cold_controller_cpu_s": cold_cpu["controller"],
        "cold_machine_cpu_s": cold_cpu["machine"],
        "warm": warm, "warm_median_s": first["s_median"], "warm_s": first["s"],
        "warm_tasks": first["tasks"], "warm_host_tasks": first["host_tasks"],
        "warm_s_per_task": round(first["s_median"] / first["tasks"], 3),
        "profile": profiled,
    }


def report(rows, variants):
    """The tables main prints."""
    print()
    print("| hosts | cold s | warm s (median) | warm tasks | host-tasks | warm s / host-task "
          "| controller CPU s (warm) | machine CPU s (warm) | controller CPU ms / host-task |")
    print("|------:|-------:|----------------:|-----------:|-----------:|-------------------:"
          "|------------------------:|---------------------:|------------------------------:|")
    for row in rows:
        first = row["warm"][variants[0]]
        print("| %d | %.1f | %.1f | %d | %d | %.3f | %.1f | %.1f | %.0f |" % (
            row["hosts"], row["cold_s"], row["warm_median_s"], row["warm_tasks"], row["warm_host_tasks"],
            row["warm_median_s"] / row["warm_host_tasks"], first["controller_cpu_s_median"],
            first["machine_cpu_s_median"], 1000 * first["controller_cpu_s_median"] / row["warm_host_tasks"]))
    if len(variants) > 1:
        print()
        print("| hosts | " + " | ".join("%s warm s (host-tasks)" % v for v in variants) + " | "
              + " | ".join("%s / %s" % (v, variants[0]) for v in variants[1:]) + " |")
        print("|------:|" + "---:|" * (2 * len(variants) - 1))
        for row in rows:
            medians = [row["warm"][v]["s_median"] for v in variants]
            print("| %d | %s | %s |" % (
                row["hosts"], " | ".join("%.1f (%d)" % (row["warm"][v]["s_median"], row["warm"][v]["host_tasks"])
                                         for v in variants),
                " | ".join("%.2fx" % (m / medians[0]) for m in medians[1:])))
    if len(rows) > 1:
        print()
        print("marginal seconds per added host (warm %s, cold):" % variants[0])
        for prev, row in zip(rows, rows[1:]):
            added = row["hosts"] - prev["hosts"]
            print("  %d -> %d hosts: warm %+.2f s/host, cold %+.2f s/host" % (
                prev["hosts"], row["hosts"], (row["warm_median_s"] - prev["warm_median_s"]) / added,
                (row["cold_s"] - prev["cold_s"]) / added))
        print("  least squares over all counts: warm %.2f s/host, cold %.2f s/host" % (
            slope([(r["hosts"], r["warm_median_s"]) for r in rows]), slope([(r["hosts"], r["cold_s"]) for r in rows])))
    last = rows[-1]["profile"]
    print()
    print("where a warm run's time goes (%d hosts, profile_roles; the slowest tasks):" % rows[-1]["hosts"])
    for role, seconds in sorted(last["roles"].items(), key=lambda kv: -kv[1]):
        print("  %6.2f s  %s" % (seconds, role))
    for name, seconds in last["tasks"][:8]:
        print("  %6.2f s  task %s" % (seconds, name))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hosts", default="1,3,6,9,12", help="host counts to converge (of %s)" % sorted(LAYOUTS))
    parser.add_argument("--warm-runs", type=int, default=3, help="warm rounds per host count (medians reported)")
    parser.add_argument("--variants", default="default",
                        help="ansible settings to time side by side in each warm round, the first the reference: "
                             "default, forks=N, mitogen, tree=REV (default: default)")
    parser.add_argument("--quick", action="store_true", help="one host count (1) and one warm run: the CI form")
    parser.add_argument("--settle", type=float, default=30, help="seconds to wait after the cold run (default 30)")
    parser.add_argument("--keep", action="store_true",
                        help="leave the last lab running, and the work directory with its SSH configuration")
    parser.add_argument("--no-json", action="store_true", help="do not write bench/results/converge-<date>.json")
    args = parser.parse_args()
    if args.quick:
        args.hosts, args.warm_runs, args.settle = "1", 1, 10
    args.variants = args.variants.split(",")
    wanted = [int(n) for n in args.hosts.split(",")]
    unknown = [n for n in wanted if n not in LAYOUTS]
    if unknown:
        parser.error("--hosts: no layout for %s (known: %s)" % (unknown, sorted(LAYOUTS)))

    workdir = Path(tempfile.mkdtemp(prefix="kafkaops-bench-converge-"))
    try:
        variants = {name: variant_env(name, workdir) for name in args.variants}
    except SystemExit:
        shutil.rmtree(workdir)
        raise
    log = workdir / "ansible.log"
    env = dict(os.environ, KAFKAOPS_LAB_SSH_CONFIG=str(workdir / "ssh_config"), ANSIBLE_FORCE_COLOR="0")
    with open("/proc/cpuinfo") as cpu:
        cores = sum(1 for line in cpu if line.startswith("processor"))
    config_dump = subprocess.run(["ansible-config", "dump", "--only-changed"], cwd=REPO, env=env,
                                 capture_output=True, text=True, check=False).stdout
    print("converge bench: %s hosts, %d warm round(s) of %s each, %d cores; log %s"
          % (args.hosts, args.warm_runs, ",".join(args.variants), cores, log))
    rows = []
    for n in wanted:
        row = bench_count(n, args, env, variants, workdir, log)
        rows.append(row)
        print("  %d host(s): up %.1f s, cold %.1f s (%d tasks), warm median %.1f s (%d tasks, %.3f s/task)"
              % (n, row["up_s"], row["cold_s"], row["cold_tasks"], row["warm_median_s"], row["warm_tasks"],
                 row["warm_s_per_task"]), flush=True)

    report(rows, args.variants)
    if not args.no_json:
        stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
        out = REPO / "bench" / "results" / ("converge-%s.json" % stamp)
        out.write_text(json.dumps({"date": stamp, "cores": cores, "warm_runs": args.warm_runs, "variants": args.variants,
                                   "ansible_config_changed": config_dump.replace(str(REPO), ".").splitlines(),
                                   "rows": rows}, indent=2) + "\n")
        print("wrote %s" % out.relative_to(REPO))
    # a failed run never gets here: its work directory, the ansible log above all, stays for a look
    if args.keep:
        print("kept: the last lab and its SSH configuration in %s" % workdir)
    else:
        shutil.rmtree(workdir)


if __name__ == "__main__":
    main()
