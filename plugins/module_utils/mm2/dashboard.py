# -*- coding: utf-8 -*-
# Copyright: kafkaops maintainers
# Apache License 2.0 (see https://www.apache.org/licenses/LICENSE-2.0)
"""The status report a person opens: a PNG drawn with matplotlib (Agg, no display) and an HTML page
rendered with Jinja2, both from the panels of ``status.panels`` (the same cells as the terminal
table). As the smoke job's PNG does (smoke/mm2_smoke/picture.py), the PNG's Description names its
panels, which is what the tests decode. The smoke job's drawing is not imported: it ships to the
smoke hosts on its own, this runs on the controller.
"""

from __future__ import annotations

import datetime

from ansible_collections.kafkaops.mirrormaker.plugins.module_utils.mm2 import status as model

WIDTH_IN = 14.0
MAX_ROWS = 30
CELL_CHARS = 48
LINE_H = 2.6
HEADER_COLOR = "#d0d7de"
NA_COLOR = "#57606a"


def _cut(text, chars=CELL_CHARS):
    return text if len(text) <= chars else text[:chars - 3] + "..."


def _when(epoch):
    return datetime.datetime.fromtimestamp(epoch, datetime.timezone.utc).strftime("%H:%M")


def _line_panel(ax, name, chart):
    ax.set_title(name, fontsize=12, loc="left", fontweight="bold")
    if not chart.get("available"):
        ax.axis("off")
        ax.text(0.0, 0.5, model.line_caption(chart), fontsize=11, color=NA_COLOR)
        return
    for series in chart["series"]:
        points = [(t, v) for t, v in series["points"] if v is not None]
        ax.plot([t for t, _v in points], [v for _t, v in points], marker=".", linewidth=1.4, label=series["label"])
    ax.set_ylabel(chart["unit"], fontsize=9)
    ticks = ax.get_xticks()
    ax.set_xticks(ticks, [_when(t) for t in ticks], fontsize=8)
    ax.set_xlim(chart["start"], chart["end"])
    ax.set_xlabel("UTC", fontsize=8)
    ax.set_title(model.line_caption(chart), fontsize=8, loc="right", color=NA_COLOR)
    ax.grid(alpha=0.3)
    ax.legend(loc="upper left", fontsize=8, ncol=2, framealpha=0.9)


def _table_panel(ax, name, kind, caption, headers, rows):
    ax.axis("off")
    shown = rows[:MAX_ROWS]
    more = " (first %d of %d rows; all in the HTML)" % (MAX_ROWS, len(rows)) if len(rows) > MAX_ROWS else ""
    # The summary panel's name lists its seven charts, which head its columns.
    shown_name = "Summary" if kind == "summary" else name
    ax.set_title("%s  (%s)%s" % (shown_name, caption, more), fontsize=12, loc="left", fontweight="bold")
    if not shown:
        ax.text(0.0, 0.5, "no rows: no series of this chart in the exporters' text", fontsize=10, color=NA_COLOR)
        return
    table = ax.table(cellText=[[_cut(c) for c in row] for row in shown], colLabels=headers, loc="upper left",
                     cellLoc="left")
    table.auto_set_font_size(False)
    table.set_fontsize(8)
    for cell in table.get_celld().values():
        cell.PAD = 0.02  # matplotlib pads 10% of a column: narrow columns would lose their text
    for j in range(len(headers)):
        table[0, j].set_facecolor(HEADER_COLOR)
        table[0, j].get_text().set_fontweight("bold")
    table.auto_set_column_width(list(range(len(headers))))


def _height(kind, rows):
    if kind == "line":
        return LINE_H
    return 0.45 + 0.2 * (min(len(rows), MAX_ROWS) + 1)


def title(status):
    return "MirrorMaker 2 status, %s (%d flows, %d nodes)" % (
        status.get("generated_at", ""), len(status.get("flows") or []), len(status.get("nodes") or []))


def figure(status):
    """(matplotlib Figure, panel names); the summary panel carries the seven summary charts' names."""
    from matplotlib.figure import Figure
    panels = model.panels(status)
    heights = [_height(kind, rows) for _n, kind, _c, _h, rows in panels]
    gap = 0.7  # inches between panels: a title above, a line chart's axis labels below
    total = 1.4 + sum(heights) + gap * len(panels)
    fig = Figure(figsize=(WIDTH_IN, total), dpi=100)
    grid = fig.add_gridspec(len(panels), 1, height_ratios=heights, left=0.06, right=0.98,
                            top=1 - 1.2 / total, bottom=0.3 / total, hspace=gap * len(panels) / sum(heights))
    fig.suptitle(title(status), fontsize=14, fontweight="bold", x=0.01, ha="left")
    names = []
    for i, (name, kind, caption, headers, rows) in enumerate(panels):
        ax = fig.add_subplot(grid[i, 0])
        if kind == "line":
            _line_panel(ax, name, status["charts"][name])
        else:
            _table_panel(ax, name, kind, caption, headers, rows)
        names.append(name)
    return fig, names


def write_png(status, path):
    """Write the PNG; returns the names of its panels (also in its Description)."""
    fig, names = figure(status)
    fig.savefig(path, format="png", metadata={
        "Title": title(status), "Description": "panels: " + "; ".join(names),
        "Software": "kafkaops.mirrormaker mm2_status_report (matplotlib)"})
    return names


HTML = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{{ title }}</title>
<style>
body { font-family: sans-serif; margin: 1.5em; color: #1f2328; }
table { border-collapse: collapse; margin: 0.4em 0 1.2em 0; font-size: 0.9em; }
th, td { border: 1px solid #d0d7de; padding: 0.2em 0.6em; text-align: left; }
th { background: #f6f8fa; }
.na { color: #57606a; }
img { max-width: 100%; }
</style>
</head>
<body>
<h1>{{ title }}</h1>
<p>Files: <a href="{{ json }}">{{ json }}</a>, <a href="{{ png }}">{{ png }}</a>. The charts of Acceldata Pulse's
MirrorMaker dashboard, by the names Pulse gives them.</p>
{% for panel in panels %}
<h2 id="panel-{{ loop.index }}">{{ panel.name }}</h2>
<p class="{{ 'na' if panel.unavailable else 'caption' }}">{{ panel.caption }}</p>
{% if panel.rows %}
<table>
<tr>{% for h in panel.headers %}<th>{{ h }}</th>{% endfor %}</tr>
{% for row in panel.rows %}
<tr>{% for c in row %}<td>{{ c }}</td>{% endfor %}</tr>
{% endfor %}
</table>
{% elif not panel.unavailable %}
<p class="na">no rows</p>
{% endif %}
{% endfor %}
<h2>Picture</h2>
<p><img src="{{ png }}" alt="{{ title }}"></p>
</body>
</html>
"""


def html_page(status, png, json):
    """The HTML page: every panel's cells in full, and the PNG."""
    import jinja2
    panels = []
    for name, kind, caption, headers, rows in model.panels(status):
        unavailable = kind == "line" and not status["charts"][name].get("available")
        panels.append({"name": name, "caption": caption, "headers": headers, "rows": rows, "unavailable": unavailable})
    env = jinja2.Environment(autoescape=True, keep_trailing_newline=True, trim_blocks=True, lstrip_blocks=True)
    return env.from_string(HTML).render(title=title(status), panels=panels, png=png, json=json)
