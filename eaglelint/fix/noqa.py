"""`eaglelint check --add-noqa`: a suppression comment for every current finding.

Why: the quickest way to switch the hook on in a fork with existing gaps, as
`ruff check --add-noqa` does; each comment carries a reason, so a reader knows it
records a known gap and is not a judgement. The comment goes at the end of the
statement that holds the finding (for a class, the line with its header's colon,
where black keeps a trailing comment), and codes join a `# noqa: ...` already there.
Files are written as `fix --write` writes them: atomically, only if the result
parses, and only inside the given paths.
"""

from __future__ import annotations

import ast
import os
from collections import defaultdict
from pathlib import Path

from ..analysis.syntax.directives import comments_and_spans, noqa_in
from ..findings import Finding, display_path
from .edits import EditableFile, FileFix, FixError, NotFixable

DEFAULT_REASON = "existing gap, recorded by eaglelint check --add-noqa"


def add_noqa_comments(findings: list[Finding], roots: list[Path], reason: str,
                      allow_fetched: bool = False) -> tuple[int, int, list[str]]:
    """(directives added, files written, why each file that could not be written was not);
    one file that cannot be written does not stop the others. Files are refused where
    `fix --write` refuses them (fix/write_targets.py), `roots` being the paths named."""
    inside = [os.path.realpath(r) for r in roots]
    by_file: dict[str, list[Finding]] = defaultdict(list)
    for f in findings:
        real = os.path.realpath(f.path)
        if f.class_name and any(real == r or real.startswith(r.rstrip(os.sep) + os.sep) for r in inside):
            by_file[os.path.abspath(f.path)].append(f)
    added = files = 0
    failed = []
    for path, items in sorted(by_file.items()):
        if Path(path).is_symlink():  # as fix: writing would replace the link with a file
            failed.append(f"{display_path(path)}: is a symbolic link; eaglelint does not rewrite through links")
            continue
        try:
            count = _add_to_file(Path(path), items, reason, roots, allow_fetched)
        except (NotFixable, FixError, SyntaxError) as exc:
            failed.append(f"{display_path(items[0].path)}: noqa comments not written: {exc}")
            continue
        added += count
        files += bool(count)
    return added, files, failed


def _add_to_file(path: Path, findings: list[Finding], reason: str, roots: list[Path], allow_fetched: bool) -> int:
    from .plan import write_fix  # the file writer, loaded only when --add-noqa writes

    file = EditableFile(path)
    src, lines = file.src, list(file.lines)
    comments, spans = comments_and_spans(src.text)
    codes: dict[int, list[str]] = defaultdict(list)
    added = 0
    for f in findings:
        last = spans.get(f.line, (f.line, f.line))[1]
        if f.code not in codes[last]:
            codes[last].append(f.code)
    for line, new in codes.items():
        text = lines[line - 1]
        body = text.rstrip("\r\n")
        ending = text[len(body):]
        column, comment = comments.get(line, (None, ""))
        match = noqa_in(comment)
        if match and match["codes"] is None:
            continue  # a bare noqa already silences every code
        if match and column is not None:  # a match is only found in a comment, which has a column
            at = column + match.end()
            body = body[:at] + "".join(f", {c}" for c in new) + body[at:]
        else:
            body = body.rstrip() + f"  # noqa: {', '.join(new)}" + (f" -- {reason}" if reason else "")
        lines[line - 1] = body + ending
        added += len(new)
    new_text = "".join(lines)
    if new_text == src.text:
        return 0
    ast.parse(new_text, filename=str(path))
    write_fix(FileFix(path, src.raw, file.encode(new_text), src.encoding), roots, allow_fetched)
    return added
