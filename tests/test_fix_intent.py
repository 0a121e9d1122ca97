"""The fix planners render what the check decided (`Finding.intent`), never the finding's display fields.

Why a test: a planner that rebuilt the decision from `wrapped_path`, `provider_class`,
`wrapper_attribute` or `method` (strings that say where a gap is, None for some codes)
decided a second time, and could decide otherwise than the check whose finding called it
fixable. Here every fixable finding of our fixtures is planned again with those fields
emptied: each must get the very fix the check planned.
"""

from dataclasses import replace
from pathlib import Path

import pytest
from conftest import FIXTURES

from eaglelint.analysis.python.project import Project
from eaglelint.checks.registry import plan_fixes
from eaglelint.checks.run import CheckOptions, check_files
from eaglelint.fix.intent import CaptureAsOwner, Delegate, MarkerBase, OwnerMember
from eaglelint.fix.styles import DEFAULT_STYLE
from eaglelint.packs import select_interfaces

# (files, packs): together they make findings of every kind of intent
TREES = [
    (FIXTURES / "check" / "sglang", None),  # delegations and owners (EGL001-EGL003, EGL040)
    (FIXTURES / "owner_contract", None),  # owners whose member is read off the decoder
    (FIXTURES / "fix" / "decoder_body_owner_member", None),  # a wrapper's capture member written as an owner's
    (FIXTURES / "fix" / "held_class_varies", None),  # a delegation that raises where the class held lacks it
    (FIXTURES / "fix" / "vllm_marker_delegates", ["vllm"]),  # the marker base and its forwards
]
DISPLAY = dict(wrapped_class=None, method=None, wrapped_path=None, wrapped_line=None, provider_class=None,
               wrapper_attribute=None, interface=None)


def planned(root: Path, packs: list[str] | None) -> tuple[Project, list]:
    project = Project()
    options = CheckOptions(tuple(select_interfaces(packs)))
    return project, check_files(sorted(root.rglob("*.py")), options, project).findings


@pytest.fixture(scope="module")
def runs():
    return [planned(root, packs) for root, packs in TREES]


def test_every_kind_of_intent_is_made_and_planned(runs):
    kinds = {type(f.intent) for _, found in runs for f in found if f.fix is not None}
    assert kinds == {Delegate, CaptureAsOwner, OwnerMember, MarkerBase}
    # every finding a check calls fixable carries what fixes it
    assert all(f.intent is not None for _, found in runs for f in found if f.fix is not None)


def test_a_finding_without_its_display_fields_is_fixed_identically(runs):
    for project, found in runs:
        fixed = [f for f in found if f.fix is not None]
        assert fixed
        stripped = [replace(f, fix=None, **DISPLAY) for f in fixed]
        again = plan_fixes(stripped, project, DEFAULT_STYLE)
        assert [(f.class_name, f.fix_refusal, f.fix) for f in again] == \
            [(f.class_name, None, f.fix) for f in fixed]


def test_the_intent_is_no_part_of_a_findings_identity(runs):
    """A finding read from the run cache carries its fix but no intent: it is the same finding."""
    _, found = runs[0]
    f = next(f for f in found if f.intent is not None)
    bare = replace(f, intent=None)
    assert bare == f and hash(bare) == hash(f)
