"""Write docs/rules.md from rules/codes.toml: every rule code's page, as `eaglelint rule CODE` prints it.

Run it after adding or editing a code; tests/test_rules_doc.py fails while the checked-in
page differs from what this writes. `--check` only compares (exit 1 when out of date).

    python scripts/gen_rules_doc.py [--check]
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from eaglelint.cli.info import rules_markdown

PAGE = Path(__file__).resolve().parent.parent / "docs" / "rules.md"


def main() -> int:
    text = rules_markdown()
    if "--check" in sys.argv[1:]:
        current = PAGE.read_text(encoding="utf-8") if PAGE.exists() else ""
        if current != text:
            print(f"{PAGE} is out of date: run python scripts/gen_rules_doc.py", file=sys.stderr)
            return 1
        return 0
    PAGE.write_text(text, encoding="utf-8")
    print(f"wrote {PAGE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
