"""The report's PNG, drawn with matplotlib (Agg, no display): per flow the replication latency
distribution with p50/p95/max marked (smoke mode) or per partition the source and target record
counts (reconcile mode), per flow MirrorMaker 2's lag before the job (records behind per source
partition, when the role measured it), then a table of every check's status."""

from matplotlib.ticker import MaxNLocator

COLORS = {"pass": "#2ea043", "skip": "#8c959f", "fail": "#cf222e", "error": "#bf8700"}
SOURCE_COLOR = "#3478c8"
MAX_CHARTS = 6
MAX_BARS = 48
MAX_ROWS = 40
MESSAGE_CHARS = 50
WIDTH_IN = 11.0


def _latency_panel(ax, flow, lat, discovery):
    hist = lat["histogram"]
    ax.stairs(hist["counts"], hist["edges"], fill=True, color=SOURCE_COLOR)
    for key, style in (("p50", "--"), ("p95", "-."), ("max", ":")):
        ax.axvline(lat[key], color="black", linestyle=style, linewidth=1.2, label="%s %s ms" % (key, lat[key]))
    ax.legend(loc="upper right", fontsize=9)
    title = "%s: replication latency of %d markers" % (flow, lat["count"])
    ax.set_xlabel("ms from produce on source to readable on target")
    ax.set_ylabel("markers")
    ax.margins(y=0.3)  # room for the legend above the bars
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    found = [d for d in discovery if d.get("flow") == flow and d.get("seconds") is not None]
    ax.set_title(title, fontsize=11, loc="left")
    if found:
        # MM2's discovery follows its refresh interval: shown apart, never mixed into the latencies
        ax.set_title("MM2 found the new topic %s in %.1f s (its refresh interval; not in these latencies)"
                     % (found[0]["topic"], found[0]["seconds"]), fontsize=9, loc="right", color="#57606a")


def _partition_panel(ax, check):
    parts = (check.get("details") or {}).get("partitions") or []
    shown = parts[:MAX_BARS]
    xs = list(range(len(shown)))
    width = 0.4
    ax.bar([x - width / 2 for x in xs], [p["source_count"] for p in shown], width, color=SOURCE_COLOR,
           label="source %s" % check.get("topic"))
    ax.bar([x + width / 2 for x in xs], [p["target_count"] for p in shown], width,
           color=[COLORS["pass"] if p.get("match") else COLORS["fail"] for p in shown],
           label="target %s (red: differs)" % check.get("remote_topic"))
    ax.set_xticks(xs, [str(p["partition"]) for p in shown], fontsize=8)
    bad = sum(1 for p in parts if not p.get("match"))
    ax.set_title("%s %s: records per partition, %d of %d differ%s" % (
        check["flow"], check.get("topic"), bad, len(parts),
        " (first %d shown)" % MAX_BARS if len(parts) > MAX_BARS else ""), fontsize=11, loc="left")
    ax.set_xlabel("partition")
    ax.set_ylabel("records")
    ax.margins(y=0.3)  # room for the legend above the bars
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.legend(loc="best", fontsize=9, framealpha=0.9)


def _lag_panel(ax, flow, figures, rows, at):
    """MirrorMaker 2's lag of one flow before the job: records behind per source partition.

    Drawn in the neutral colour: the lag is shown as it was read, no check judges it, and the
    report's green and red belong to the checks' verdicts (a flow that is busy is always a few
    records behind, and red bars on a passing report would read as a failure)."""
    shown = rows[:MAX_BARS]
    xs = list(range(len(shown)))
    ax.bar(xs, [r["records"] for r in shown], 0.6, color=SOURCE_COLOR)
    ax.set_xticks(xs, ["%s-%d" % (_cut(r["topic"], 24), r["partition"]) for r in shown], fontsize=7, rotation=30,
                  ha="right")
    ax.set_title("%s: %d records, %.3f s behind before the job (MM2's committed offsets, %d partition%s%s)" % (
        flow, figures["records"], figures["seconds"], figures["partitions"], "" if figures["partitions"] == 1 else "s",
        ", first %d shown" % MAX_BARS if len(rows) > MAX_BARS else ""), fontsize=10, loc="left")
    ax.set_title("read %s" % at, fontsize=8, loc="right", color="#57606a")
    ax.set_ylabel("records behind")
    ax.set_ylim(bottom=0, top=max([1] + [r["records"] for r in shown]) * 1.2)
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))


def _cut(text, chars=MESSAGE_CHARS):
    """A cell's text within its column (the HTML page has every message in full)."""
    return text if len(text) <= chars else text[:chars - 3] + "..."


def _table_panel(ax, checks):
    ax.axis("off")
    shown = checks[:MAX_ROWS]
    title = "checks: %d" % len(checks) + (" (first %d shown; all in the HTML)" % MAX_ROWS
                                          if len(checks) > MAX_ROWS else "")
    ax.set_title(title, fontsize=11, loc="left")
    if not shown:
        ax.text(0.0, 0.5, "no check ran", fontsize=11)
        return
    rows = []
    for c in shown:
        topic = (c.get("topic") or "") + (" -> " + c["remote_topic"] if c.get("remote_topic") else "")
        msg = (c.get("messages") or c.get("notes") or [""])[0]
        rows.append([c["status"].upper(), c["check"], c["flow"], _cut(topic), _cut(msg)])
    table = ax.table(cellText=rows, colLabels=["status", "check", "flow", "topic", "first message"],
                     colWidths=[0.06, 0.08, 0.06, 0.40, 0.40], loc="upper left", cellLoc="left")
    table.auto_set_font_size(False)
    table.set_fontsize(8.5)
    for cell in table.get_celld().values():
        cell.PAD = 0.02  # matplotlib pads 10% of the width: a wide column would lose a third of its text
    for i, c in enumerate(shown, start=1):
        cell = table[i, 0]
        cell.set_facecolor(COLORS.get(c["status"], "#ffffff"))
        cell.get_text().set_color("white")
        cell.get_text().set_fontweight("bold")
    for j in range(5):
        table[0, j].get_text().set_fontweight("bold")


def figure(doc):
    """(matplotlib Figure, panel names): the names also go into the PNG's Description."""
    from matplotlib.figure import Figure
    checks = doc.get("checks") or []
    by_flow = doc.get("latency_ms_by_flow") or {}
    charts = []
    for flow in sorted(by_flow):
        if by_flow[flow].get("count"):
            charts.append(("latency " + flow, lambda ax, f=flow: _latency_panel(
                ax, f, by_flow[f], doc.get("discovery") or [])))
    for check in checks:
        if check["check"] == "reconcile" and (check.get("details") or {}).get("partitions"):
            charts.append(("records per partition %s %s" % (check["flow"], check.get("topic")),
                           lambda ax, c=check: _partition_panel(ax, c)))
    lag_rows = doc.get("lag") or []
    for flow, figures in sorted((doc.get("lag_by_flow") or {}).items()):
        rows = [r for r in lag_rows if r["flow"] == flow]
        if rows:
            charts.append(("lag " + flow, lambda ax, f=flow, fig_=figures, r=rows: _lag_panel(
                ax, f, fig_, r, (doc.get("lag_measured") or {}).get("at"))))
    charts = charts[:MAX_CHARTS]
    table_rows = min(len(checks), MAX_ROWS) + 1
    table_h = 0.5 + 0.22 * table_rows
    chart_h = 2.9
    height = 0.9 + chart_h * max(1, len(charts)) + table_h
    fig = Figure(figsize=(WIDTH_IN, height), dpi=100)
    grid = fig.add_gridspec(max(1, len(charts)) + 1, 1,
                            height_ratios=[chart_h] * max(1, len(charts)) + [table_h],
                            left=0.07, right=0.98, top=1 - 0.75 / height, bottom=0.02, hspace=0.55 * 2.9 / chart_h)
    color = COLORS.get(doc.get("verdict"), "black")
    fig.suptitle("mm2-smoke %s run %s: %s  (%s)" % (doc.get("mode"), doc.get("run_id"),
                                                    str(doc.get("verdict", "")).upper(), doc.get("verdict_reason", "")),
                 fontsize=14, fontweight="bold", color=color, x=0.01, ha="left")
    names = []
    for i, (name, draw) in enumerate(charts):
        draw(fig.add_subplot(grid[i, 0]))
        names.append(name)
    if not charts:
        ax = fig.add_subplot(grid[0, 0])
        ax.axis("off")
        ax.text(0.0, 0.5, "no latencies or partition counts to draw (%s mode, %s)"
                % (doc.get("mode"), "; ".join(doc.get("errors") or []) or "see the checks below"), fontsize=11,
                wrap=True)
        names.append("no chart")
    _table_panel(fig.add_subplot(grid[len(charts) if charts else 1, 0]), checks)
    names.append("checks")
    return fig, names


def write_png(doc, path):
    fig, names = figure(doc)
    fig.savefig(path, format="png", metadata={
        "Title": "mm2-smoke %s run %s: %s" % (doc.get("mode"), doc.get("run_id"), doc.get("verdict")),
        "Description": "panels: " + "; ".join(names), "Software": "mm2_smoke (matplotlib)"})
    return names
