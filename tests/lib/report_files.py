# -*- coding: utf-8 -*-
"""The smoke job's report files opened as a reader would: the PNG decoded by matplotlib, the HTML
parsed strictly, the JUnit XML validated against Jenkins' schema (.cache/junit/junit-10.xsd, from
scripts/bootstrap.sh). Used by the job's unit tests (tests/unit/smoke_job) and by the live tests
(tests/live/test_mm2.py), which put tests/lib on sys.path."""

import os
from html.parser import HTMLParser

from repo_paths import REPO


class StrictHTML(HTMLParser):
    """Fails on an end tag that closes nothing open, and on elements left open at the end."""
    VOID = {"meta", "br", "img", "link", "hr", "input"}

    def __init__(self):
        HTMLParser.__init__(self)
        self.stack, self.seen = [], []

    def handle_starttag(self, tag, attrs):
        self.seen.append((tag, dict(attrs)))
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag):
        assert self.stack and self.stack[-1] == tag, "</%s> closes %s" % (tag, self.stack[-1:])
        self.stack.pop()


def parse_html(text):
    parser = StrictHTML()
    parser.feed(text)
    parser.close()
    assert parser.stack == [], "left open: %s" % parser.stack
    return parser


def validate_junit(path):
    xsd = os.path.join(REPO, ".cache", "junit", "junit-10.xsd")
    assert os.path.isfile(xsd), "Jenkins' JUnit schema is missing: run scripts/bootstrap.sh"
    import xmlschema
    xmlschema.XMLSchema(xsd).validate(path)


def png_panels(path):
    """(width, height, RGB colours, the panel names the PNG's Description lists)."""
    from matplotlib import image
    from PIL import Image
    pixels = image.imread(path)
    with Image.open(path) as img:
        description = img.text.get("Description", "")
    colours = {tuple(int(round(v * 255)) for v in px[:3]) for px in pixels.reshape(-1, pixels.shape[2])}
    return pixels.shape[1], pixels.shape[0], colours, description


def hex_rgb(text):
    return tuple(int(text[i:i + 2], 16) for i in (1, 3, 5))


def check_report_files(doc):
    """The four files a run wrote: the PNG decodes with its chart panels and the check table, the HTML
    parses and shows the image, the JUnit XML is valid for Jenkins' schema with one case per check."""
    import xml.etree.ElementTree as ET
    files = doc["files"]
    assert sorted(files) == ["html", "json", "junit", "png"]
    _w, _h, _colours, description = png_panels(files["png"])
    assert description.startswith("panels: ") and description.endswith("; checks"), description
    page = parse_html(open(files["html"], encoding="utf-8").read())
    assert ("img", os.path.basename(files["png"])) in [(t, a.get("src")) for t, a in page.seen]
    validate_junit(files["junit"])
    suite = ET.parse(files["junit"]).getroot().find("testsuite")
    assert int(suite.get("tests")) == len(doc["checks"]) + len(doc.get("errors") or [])
    return description
