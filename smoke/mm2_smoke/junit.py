"""The report as JUnit XML, the format CI systems (Jenkins, GitLab, Molecule pipelines) show as
test cases: one case per check result, and one per error that kept the job from checking."""

import socket
import xml.etree.ElementTree as ET

# JUnit's words for the job's statuses; a pass has no child element.
ELEMENT = {"fail": "failure", "error": "error", "skip": "skipped"}


def _seconds(value):
    # Jenkins' schema (SUREFIRE_TIME) takes at most three decimals
    return "%.3f" % float(value or 0)


def case_name(check):
    topic = check.get("topic") or ""
    if check.get("remote_topic"):
        topic += " -> " + check["remote_topic"]
    return ("%s %s" % (check["check"], topic)).strip()


def xml_bytes(doc):
    checks = doc.get("checks") or []
    errors = doc.get("errors") or []
    suite_name = "mm2-smoke %s %s" % (doc.get("mode"), doc.get("run_id"))
    failures = sum(1 for c in checks if c["status"] == "fail")
    errored = sum(1 for c in checks if c["status"] == "error") + len(errors)
    skipped = sum(1 for c in checks if c["status"] == "skip")
    tests = len(checks) + len(errors)
    root = ET.Element("testsuites", name="mm2-smoke", tests=str(tests), failures=str(failures),
                      errors=str(errored), time=_seconds(doc.get("duration_s")))
    suite = ET.SubElement(root, "testsuite", name=suite_name, tests=str(tests), failures=str(failures),
                          errors=str(errored), skipped=str(skipped), time=_seconds(doc.get("duration_s")),
                          timestamp=str(doc.get("started") or ""), hostname=socket.gethostname())
    props = ET.SubElement(suite, "properties")
    for key in ("run_id", "mode", "verdict", "verdict_reason", "tool_version", "report_version"):
        if doc.get(key) is not None:
            ET.SubElement(props, "property", name=key, value=str(doc[key]))
    for check in checks:
        case = ET.SubElement(suite, "testcase", classname="mm2_smoke.%s.%s" % (doc.get("mode"), check["flow"]),
                             name=case_name(check), time=_seconds(check.get("duration_s")))
        messages = check.get("messages") or []
        kind = ELEMENT.get(check["status"])
        if kind:
            child = ET.SubElement(case, kind, type=check["status"],
                                  message=messages[0] if messages else check["status"])
            child.text = "\n".join(messages)
        if check.get("notes"):
            ET.SubElement(case, "system-out").text = "\n".join(check["notes"])
    for err in errors:
        case = ET.SubElement(suite, "testcase", classname="mm2_smoke.%s" % doc.get("mode"),
                             name="job could not check", time=_seconds(0))
        ET.SubElement(case, "error", type="error", message=err).text = err
    ET.indent(root)
    return ET.tostring(root, encoding="utf-8", xml_declaration=True) + b"\n"
