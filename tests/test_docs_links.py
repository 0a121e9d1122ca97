"""Every relative link in the README, CONTRIBUTING.md and docs/ leads to a file of this
repository, and every `#anchor` to a heading of that file.

Why a test: moving a section between files is how a link goes stale unseen.
"""

import re

from conftest import REPO

PAGES = [REPO / "README.md", REPO / "CONTRIBUTING.md", *sorted((REPO / "docs").glob("*.md"))]
# pages the README names that are written alongside other changes; linked before they exist
NOT_YET_WRITTEN = {"docs/capture-chain.md", "docs/discovery.md", "docs/fixing.md"}
LINK = re.compile(r"\]\(([^)\s]+)\)")


def anchors(page) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation dropped, spaces as hyphens."""
    headings = re.findall(r"^#+ (.+)$", page.read_text(), flags=re.M)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in headings}


def test_relative_links_lead_to_files_and_headings():
    broken = []
    for page in PAGES:
        for target in LINK.findall(page.read_text()):
            if re.match(r"[a-z]+:", target):
                continue  # https:, mailto:
            path, _, anchor = target.partition("#")
            file = (page.parent / path).resolve() if path else page
            if file.relative_to(REPO).as_posix() in NOT_YET_WRITTEN and not file.exists():
                continue
            if not file.is_file() or anchor and anchor not in anchors(file):
                broken.append(f"{page.relative_to(REPO)}: {target}")
    assert broken == []
