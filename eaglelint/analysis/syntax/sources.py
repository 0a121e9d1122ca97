"""Reading and parsing one file, turning every way it can fail into a per-file reason.

Why a module of its own: a linter that runs on strangers' pull requests meets
Latin-1 files, BOMs, NUL bytes, vanished files and pathological nesting; each must
become a message for that file, never a traceback that stops the run.
"""

from __future__ import annotations

import ast
import errno
import io
import os
import re
import stat
import tokenize
from dataclasses import dataclass
from pathlib import Path

DEFAULT_MAX_FILE_SIZE = 10 * 1024 * 1024  # ~40x SGLang's largest model file (0.5.23 deepseek_v4.py)


class SourceError(Exception):
    """A file that cannot be read or parsed; str() is the reason shown to the user."""


@dataclass(frozen=True)
class Source:
    path: Path
    raw: bytes
    text: str
    encoding: str


def read_source(path: Path, limit: int | None = None) -> Source:
    return decode_source(path, read_bytes(path, limit))


def read_bytes(path: Path, limit: int | None = None) -> bytes:
    """Read a regular file of at most `limit` bytes. A FIFO or device named `x.py` is
    refused, not read: reading one would block forever or never end. A larger file is
    refused before it is read: parsing 50 MB of Python takes gigabytes."""
    return read_bytes_and_stat(path, limit)[0]


def read_bytes_and_stat(path: Path, limit: int | None = None) -> tuple[bytes, os.stat_result]:
    """read_bytes, and the file's status taken on the open file before reading it: a write
    after that moves its mtime and ctime, so a status that still matches later means these
    bytes (analysis/python/project.py `unchanged_since`)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(fd, "rb") as file:
            status = os.fstat(file.fileno())
            mode = status.st_mode
            if stat.S_ISDIR(mode):
                raise IsADirectoryError
            if not stat.S_ISREG(mode):
                raise SourceError("not a regular file (a pipe, socket or device?)")
            size = status.st_size
            if limit is not None and size > limit:
                raise SourceError(too_large(size, limit))
            raw = file.read() if limit is None else file.read(limit + 1)
            if limit is not None and len(raw) > limit:  # it grew while being read
                raise SourceError(too_large(len(raw), limit))
    except FileNotFoundError:
        raise SourceError("file disappeared or does not exist") from None
    except IsADirectoryError:
        raise SourceError("is a directory") from None
    except PermissionError:
        raise SourceError("permission denied") from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise SourceError("symbolic link loop") from None
        raise SourceError(f"cannot read: {exc.strerror or exc}") from None
    return raw, status


def too_large(size: int, limit: int) -> str:
    return (f"file too large ({size:,} bytes, max-file-size is {limit:,}); "
            "raise max-file-size to check it")


def decode_source(path: Path, raw: bytes) -> Source:
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(raw).readline)
    except SyntaxError as exc:
        raise SourceError(f"bad encoding declaration: {exc.msg}") from None
    try:
        text = raw.decode(encoding)
    except (UnicodeDecodeError, LookupError) as exc:
        raise SourceError(f"cannot decode as {encoding}: {exc}") from None
    if text.startswith("\ufeff"):
        text = text[1:]
    return Source(path, raw, text, encoding)


def parse_source(src: Source) -> ast.Module:
    if "\x00" in src.text:
        raise SourceError("contains NUL bytes (binary data?)")
    try:
        return ast.parse(src.text, filename=str(src.path))
    except SyntaxError as exc:
        where = f"line {exc.lineno}: " if exc.lineno else ""
        raise SourceError(f"syntax error: {where}{exc.msg}") from None
    except (RecursionError, MemoryError):
        raise SourceError("code is nested too deeply to parse") from None
    except ValueError as exc:
        raise SourceError(f"cannot parse: {exc}") from None


def end_line(node: ast.stmt | ast.expr) -> int:
    """The last line of a statement or expression: `ast.parse` sets `end_lineno` on each (one
    made by hand without it ends on its first line)."""
    return node.end_lineno if node.end_lineno is not None else node.lineno


class SourceLines:
    """Exact source text of a node; ast.get_source_segment re-splits the file on every call."""

    def __init__(self, source: str, lines: list[str] | None = None):
        self.lines = split_lines(source) if lines is None else lines

    def segment(self, node: ast.expr | None) -> str | None:
        if node is None:
            return None
        end_line, end_col = node.end_lineno, node.end_col_offset
        if end_line is None or end_col is None:  # made by hand, not by ast.parse: its text is its unparsing
            return ast.unparse(node)
        try:
            first, last = node.lineno - 1, end_line - 1
            if first == last:
                return self.lines[first].encode()[node.col_offset : end_col].decode()
            parts = [self.lines[first].encode()[node.col_offset :].decode()]
            parts += self.lines[first + 1 : last]
            parts.append(self.lines[last].encode()[: end_col].decode())
            return "".join(parts)
        except (IndexError, UnicodeDecodeError):
            return ast.unparse(node)


_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


# what str.splitlines also splits at, and the tokenizer does not
_OTHER_BREAKS = ("\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029")


def split_lines(source: str) -> list[str]:
    """Lines with their endings, split only at \\r, \\n and \\r\\n, as the tokenizer does
    (str.splitlines, several times faster, where the text has no other break it knows)."""
    if not any(c in source for c in _OTHER_BREAKS):
        return source.splitlines(keepends=True)
    return _LINE.findall(source)
