"""Two rule families' fixes of one file become one rewrite (fix/edits.py `EditableFile.merge`):
edits that keep apart are all made, an edit both make is made once, and a clash refuses
the later fix whole, leaving the first as it was."""

import pytest

from eaglelint.findings import Written
from eaglelint.fix.edits import Edit, EditableFile, NotFixable

SOURCE = """import os

from typing import List


class A:
    x = 1


class B:
    y = 2
"""
F, G = Written("method", "A", "f"), Written("method", "B", "g")


@pytest.fixture
def file(tmp_path):
    path = tmp_path / "m.py"
    path.write_bytes(SOURCE.replace("\n", "\r\n").encode())  # the file's own newline is kept
    return EditableFile(path)


def test_disjoint_rewrites_are_both_made_and_a_shared_import_once(file):
    imp = Edit(3, 3, ("from typing import Optional",))
    first = file.finish([Edit(7, 7, ("", "    def f(self):", "        return 1")), imp], [F], defines=[("A", "f")])
    second = file.finish([Edit(11, 11, ("", "    def g(self):", "        return 2")), imp], [G], defines=[("B", "g")])
    merged = file.merge(first, second)
    expected = SOURCE.replace("from typing import List\n", "from typing import List\nfrom typing import Optional\n")
    expected = expected.replace("    x = 1\n", "    x = 1\n\n    def f(self):\n        return 1\n")
    expected = expected.replace("    y = 2\n", "    y = 2\n\n    def g(self):\n        return 2\n")
    assert merged.new == expected.replace("\n", "\r\n").encode()
    assert merged.writes == [F, G] and merged.defines == [("A", "f"), ("B", "g")]


@pytest.mark.parametrize("clash", [
    Edit(2, 3, ("from typing import List, Tuple",)),  # replaces the line the first one replaces
    Edit(3, 3, ("from typing import Tuple",)),  # another line where the first one inserts one
])
def test_a_clashing_rewrite_is_refused_with_the_reason(file, clash):
    first = file.finish([Edit(2, 3, ("from typing import List, Optional",)), Edit(3, 3, ("import re",))],
                        [F])
    second = file.finish([clash], [G])
    with pytest.raises(NotFixable, match=r"meets the fix that would add A\.f; run eaglelint fix again"):
        file.merge(first, second)


def test_a_merge_that_would_not_define_a_method_is_refused(file):
    first = file.finish([Edit(7, 7, ("", "    def f(self):", "        return 1"))], [F],
                        defines=[("A", "f")])
    second = file.finish([Edit(0, 0, ("def g():", "    pass"))], [G], defines=[])
    merged = file.merge(first, second)
    assert b"def g():" in merged.new and b"def f(self):" in merged.new
    bad = file.finish([Edit(11, 11, ("y = 3",))], [("B", "h")])  # lands outside B
    bad.defines = [("B", "h")]
    with pytest.raises(NotFixable, match="would not land in its class"):
        file.merge(first, bad)
