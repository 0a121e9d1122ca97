"""`# noqa: EGL001`, `# eaglelint: ignore[EGL001]` and `# eaglelint: noqa` (whole file).

Why on the whole statement: a finding is reported at a line (the wrapper's `class`
line, or the call EGL020/EGL021 are about), and a suppression belongs there. A
formatter moves comments within a statement: black turns a long
`class X(nn.Module):  # noqa: EGL001` into a three-line header with the comment on
`):`. So a suppression anywhere on the logical line that holds the finding (for a
class, its header from `class` to the colon), or on a comment or decorator line
directly above it, counts. A bare `# noqa` silences every code, as in flake8 and
ruff; since other tools' codes share the comment, only eaglelint's own codes (EGL...)
are ever reported unused, and an EGL code eaglelint does not have is reported as
unknown. Directives match case-insensitively, as ruff's do.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ..analysis.syntax.directives import FILE_DIRECTIVE, NOQA, DirectiveScan, scan_directives
from ..analysis.syntax.sources import SourceError, read_source
from ..findings import Finding
from ..packs import load_codes

if TYPE_CHECKING:
    from ..analysis.python.project import Project

UNUSED_SUPPRESSION = "EGL900"  # a suppression that silenced nothing (--report-unused-suppressions)
OWN = re.compile(r"EGL\d+\Z")


@dataclass
class Suppression:
    path: str
    line: int
    column: int
    codes: frozenset[str] | None  # None: every code (a bare directive)
    directive: str  # "noqa", "eaglelint: ignore" or "eaglelint: noqa" (the whole file)
    used: set[str] = field(default_factory=set)

    def covers(self, code: str) -> bool:
        return self.codes is None or code in self.codes


@dataclass
class FileSuppressions:
    by_line: dict[int, list[Suppression]] = field(default_factory=dict)
    spans: dict[int, tuple[int, int]] = field(default_factory=dict)  # line of a multi-line statement -> span
    whole_file: list[Suppression] = field(default_factory=list)
    own_line: set[int] = field(default_factory=set)  # directive lines that hold only comments, or a decorator

    @classmethod
    def of(cls, shown: str, scan: DirectiveScan) -> FileSuppressions:
        out = cls()
        for first, last in scan.spans:
            out.spans.update({n: (first, last) for n in range(first, last + 1)})
        for d in scan.directives:
            sup = Suppression(shown, d.line, d.column, None if d.codes is None else frozenset(d.codes), d.kind)
            if d.kind == FILE_DIRECTIVE:
                out.whole_file.append(sup)
            else:
                out.by_line.setdefault(d.line, []).append(sup)
            if d.own_line:
                out.own_line.add(d.line)
        return out

    def span(self, line: int) -> tuple[int, int]:
        """First and last line of the logical line (statement, or compound header) holding `line`."""
        return self.spans.get(line, (line, line))

    def for_line(self, line: int) -> list[Suppression]:
        """Suppressions on the statement of `line`, on a comment or decorator line directly
        above it, and of the whole file."""
        first, last = self.span(line)
        found = [s for n in range(first, last + 1) for s in self.by_line.get(n, [])]
        if first - 1 in self.own_line:
            found += self.by_line.get(first - 1, [])
        return found + self.whole_file

    def all(self) -> list[Suppression]:
        return [s for sups in self.by_line.values() for s in sups] + self.whole_file


def scan(path: Path, limit: int | None = None, project: Project | None = None) -> FileSuppressions:
    """Every suppression comment of a file (comments found by the tokenizer, never in strings).
    A file larger than `limit` (max-file-size) is not read: it has none. With a project
    whose run read the file, the directives come from the cache by the digest of those
    bytes, and the file is not read again."""
    shown = os.path.abspath(path)  # a finding's path: shown relative by the output stage
    if project is None:
        try:
            src = read_source(path, limit)
        except SourceError:
            return FileSuppressions()
        return FileSuppressions.of(shown, scan_directives(src.raw, src.text))
    cache = project.cache
    # noted when the run (or project.source below) read it; hashed only for a cache
    digest = project.digests.get(Path(shown)) if cache is not None else None
    found = cache.get(cache.derived_key("directives", digest)) if cache is not None and digest else None
    if isinstance(found, DirectiveScan):
        return FileSuppressions.of(shown, found)
    try:  # through the project, the owner of file bytes: read once, guarded
        src = project.source(path)
    except SourceError:
        return FileSuppressions()
    found = scan_directives(src.raw, src.text)
    if cache is not None:
        cache.put(cache.derived_key("directives", project.digests[Path(shown)]), found)
    return FileSuppressions.of(shown, found)


class Suppressor:
    """Applies the suppressions of the files a run reports on, remembering which were used."""

    def __init__(self, limit: int | None = None, project: Project | None = None) -> None:
        self._files: dict[str, FileSuppressions] = {}
        self._limit = limit  # max-file-size: a file the check refused to read is not read here either
        self._project = project  # the run's: its digests find each file's directives in the cache

    def file(self, path: str | Path) -> FileSuppressions:
        key = os.path.abspath(path)
        if key not in self._files:
            self._files[key] = scan(Path(path), self._limit, self._project)
        return self._files[key]

    def suppressed(self, finding: Finding) -> bool:
        sups = self.file(finding.path)
        # a file that cannot be read has no line to annotate: only a whole-file directive covers it
        candidates = sups.for_line(finding.line) if finding.class_name else sups.whole_file
        hit = False
        for sup in candidates:
            if sup.covers(finding.code):
                sup.used.add(finding.code)
                hit = True
        return hit

    def unused(self, paths: list[Path]) -> list[Finding]:
        """EGL900 for each suppression in these files naming an eaglelint code that silenced
        nothing, or one eaglelint does not have."""
        known = load_codes()
        out = []
        for path in paths:
            for sup in self.file(path).all():
                if sup.codes is None:
                    if sup.directive == NOQA or sup.used:
                        continue  # a bare noqa may be meant for another tool
                    idle = ["(all codes)"]
                else:
                    idle = sorted(c for c in sup.codes if OWN.match(c) and c in known and c not in sup.used)
                unknown = sorted(c for c in sup.codes or () if OWN.match(c) and c not in known)
                if unknown:
                    out.append(_unused(sup, f"unknown rule code {', '.join(unknown)} in `{sup.directive}`; "
                                            "see `eaglelint rules`"))
                if idle:
                    out.append(_unused(sup, f"unused suppression `{sup.directive}` for {', '.join(idle)}: "
                                            "nothing to suppress here; remove it"))
        return out


def _unused(sup: Suppression, message: str) -> Finding:
    return Finding(sup.path, sup.line, sup.column, UNUSED_SUPPRESSION, message)
