"""Converge time against host count: the lab with 1, 3 and 6 hosts, cold and warm (bench/README.md).

For each host count: lab containers made afresh (lab/up.yml, not timed in the converge figures),
playbooks/site.yml cold, then warm --warm-runs times (each must report changed=0, or the bench
fails). Prints per-host-count wall times, the tasks the controller ran and the warm time per task,
and writes bench/results/converge-<date>.json. The lab is named bench-* on its own network, so the
demo lab may keep running beside it (it shares the 2 cores, though: a quiet machine measures best).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import re
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
}


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
    """Runs ansible-playbook; returns (seconds, output). Fails the bench on a failed run."""
    cmd = ["ansible-playbook", "-i", str(inv), "-e", "lab_network=" + NETWORK, *extra, str(REPO / play)]
    start = time.monotonic()
    proc = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, check=False)
    seconds = time.monotonic() - start
    with log.open("a") as out:
        out.write("$ %s\n%s%s\n" % (" ".join(cmd), proc.stdout, proc.stderr))
    if proc.returncode != 0:
        sys.exit("converge bench: %s failed (rc %d); output in %s" % (play, proc.returncode, log))
    return seconds, proc.stdout


def counts(output: str):
    """(task banners the controller ran, host-task results, changed) of one run's output."""
    tasks = len(re.findall(r"^TASK \[", output, re.M))
    per_host = recap.recap(output).values()
    host_tasks = sum(c["ok"] + c["skipped"] + c["failed"] for c in per_host)
    changed = sum(c["changed"] for c in per_host)
    return tasks, host_tasks, changed


def bench_count(n: int, args, env, workdir: Path, log: Path) -> dict:
    layout = LAYOUTS[n]
    inv = inventory(workdir, layout)
    playbook(env, inv, "lab/down.yml", log)
    up = playbook(env, inv, "lab/up.yml", log)[0]
    cold, output = playbook(env, inv, "playbooks/site.yml", log)
    cold_tasks, cold_host_tasks, cold_changed = counts(output)
    # Services just started (JVM start, JIT) take CPU for a while: a warm run measured right after
    # would time them, not the run. A datacenter re-runs later.
    time.sleep(args.settle)
    warm = []
    for _run in range(args.warm_runs):
        seconds, output = playbook(env, inv, "playbooks/site.yml", log)
        tasks, host_tasks, changed = counts(output)
        if changed:
            sys.exit("converge bench: a warm run with %d hosts changed %d things; output in %s" % (n, changed, log))
        warm.append(seconds)
    if not args.keep:
        playbook(env, inv, "lab/down.yml", log)
    median = statistics.median(warm)
    return {
        "hosts": n, "layout": layout, "up_s": round(up, 2), "settle_s": args.settle,
        "cold_s": round(cold, 2), "cold_tasks": cold_tasks, "cold_host_tasks": cold_host_tasks,
        "cold_changed": cold_changed,
        "warm_s": [round(w, 2) for w in warm], "warm_median_s": round(median, 2),
        "warm_tasks": tasks, "warm_host_tasks": host_tasks,
        "warm_s_per_task": round(median / tasks, 3) if tasks else None,
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hosts", default="1,3,6", help="host counts to converge (of %s)" % sorted(LAYOUTS))
    parser.add_argument("--warm-runs", type=int, default=3, help="warm runs per host count (median reported)")
    parser.add_argument("--quick", action="store_true", help="one host count (1) and one warm run: the CI form")
    parser.add_argument("--settle", type=float, default=30, help="seconds to wait after the cold run (default 30)")
    parser.add_argument("--keep", action="store_true", help="leave the last lab running")
    parser.add_argument("--no-json", action="store_true", help="do not write bench/results/converge-<date>.json")
    args = parser.parse_args()
    if args.quick:
        args.hosts, args.warm_runs, args.settle = "1", 1, 10
    wanted = [int(n) for n in args.hosts.split(",")]
    unknown = [n for n in wanted if n not in LAYOUTS]
    if unknown:
        parser.error("--hosts: no layout for %s (known: %s)" % (unknown, sorted(LAYOUTS)))

    workdir = Path(tempfile.mkdtemp(prefix="kafkaops-bench-converge-"))
    log = workdir / "ansible.log"
    env = dict(os.environ, KAFKAOPS_LAB_SSH_CONFIG=str(workdir / "ssh_config"), ANSIBLE_FORCE_COLOR="0")
    with open("/proc/cpuinfo") as cpu:
        cores = sum(1 for line in cpu if line.startswith("processor"))
    config_dump = subprocess.run(["ansible-config", "dump", "--only-changed"], cwd=REPO, env=env,
                                 capture_output=True, text=True, check=False).stdout
    print("converge bench: %s hosts, %d warm run(s) each, %d cores; log %s" % (args.hosts, args.warm_runs, cores, log))
    rows = []
    for n in wanted:
        row = bench_count(n, args, env, workdir, log)
        rows.append(row)
        print("  %d host(s): up %.1f s, cold %.1f s (%d tasks), warm median %.1f s (%d tasks, %.3f s/task)"
              % (n, row["up_s"], row["cold_s"], row["cold_tasks"], row["warm_median_s"], row["warm_tasks"],
                 row["warm_s_per_task"]), flush=True)

    print()
    print("| hosts | cold s | warm s (median) | warm tasks | host-tasks | warm s / task | warm s / host-task | warm vs 1st count |")
    print("|------:|-------:|----------------:|-----------:|-----------:|--------------:|-------------------:|------------------:|")
    base = rows[0]["warm_median_s"]
    for row in rows:
        print("| %d | %.1f | %.1f | %d | %d | %.3f | %.3f | %.2fx |" % (
            row["hosts"], row["cold_s"], row["warm_median_s"], row["warm_tasks"], row["warm_host_tasks"],
            row["warm_s_per_task"], row["warm_median_s"] / row["warm_host_tasks"], row["warm_median_s"] / base))
    if len(rows) > 1:
        first, last = rows[0], rows[-1]
        print("converge: %.0fx the hosts -> %.2fx the warm time (%.2fx the host-tasks)" % (
            last["hosts"] / first["hosts"], last["warm_median_s"] / first["warm_median_s"],
            last["warm_host_tasks"] / first["warm_host_tasks"]))
    if not args.no_json:
        stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
        out = REPO / "bench" / "results" / ("converge-%s.json" % stamp)
        out.write_text(json.dumps({"date": stamp, "cores": cores, "warm_runs": args.warm_runs,
                                   "ansible_config_changed": config_dump.replace(str(REPO), ".").splitlines(),
                                   "rows": rows}, indent=2) + "\n")
        print("wrote %s" % out.relative_to(REPO))


if __name__ == "__main__":
    main()
