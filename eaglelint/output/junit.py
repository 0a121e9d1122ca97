"""JUnit XML output, as CI systems (GitLab, Jenkins, Azure) show test reports.

Why: a CI that shows test results but not SARIF can still list each finding. One
test suite per file, one failing test case per finding (named by rule code, class
and member); a clean run is one passing case, so the report is never empty.
"""

from __future__ import annotations

from collections import defaultdict
from typing import TextIO
from xml.etree import ElementTree as ET

from ..findings import Finding, display_path


def junit_tree(findings: list[Finding]) -> ET.Element:
    by_file: dict[str, list[Finding]] = defaultdict(list)
    for f in findings:
        by_file[display_path(f.path)].append(f)
    root = ET.Element("testsuites", name="eaglelint", tests=str(max(len(findings), 1)),
                      failures=str(len(findings)))
    if not findings:
        suite = ET.SubElement(root, "testsuite", name="eaglelint", tests="1", failures="0", errors="0")
        ET.SubElement(suite, "testcase", name="eaglelint", classname="eaglelint")
    for path, items in by_file.items():
        suite = ET.SubElement(root, "testsuite", name=path, tests=str(len(items)), failures=str(len(items)),
                              errors="0")
        for f in items:
            name = f"{f.code} {f.class_name}{'.' + f.method if f.method else ''}".strip()
            case = ET.SubElement(suite, "testcase", name=name, classname=path, file=path, line=str(f.line))
            failure = ET.SubElement(case, "failure", message=f.message, type=f.code)
            failure.text = "\n".join((f"{path}:{f.line}:{f.column}: {f.code} [{f.severity}] {f.message}",
                                       *(f"  help: {note}" for note in f.notes)))
    return root


def write_junit(findings: list[Finding], out: TextIO) -> None:
    tree = junit_tree(findings)
    ET.indent(tree)
    out.write('<?xml version="1.0" encoding="UTF-8"?>\n')
    out.write(ET.tostring(tree, encoding="unicode"))
    out.write("\n")
