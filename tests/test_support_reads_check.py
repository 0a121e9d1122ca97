"""`support` judges each class with the analysis the check run made, not with one of its own.

Why: the support matrix must say what `check` and `fix` act on; a second resolver and owner
analysis read the same classes again and could decide otherwise (and cost a second pass).
"""

from conftest import FIXTURES

from eaglelint.analysis.python import resolve
from eaglelint.analysis.python.project import CHECK_RESOLVER, Project
from eaglelint.analysis.sglang.owners import checked_analysis, owner_analysis
from eaglelint.packs import select_interfaces
from eaglelint.pipeline import support

TREE = FIXTURES / "check"


def test_the_matrix_is_read_with_the_checks_own_resolver(monkeypatch):
    project = Project()
    made: list[resolve.Resolver] = []
    check_files = support.check_files

    def check_then_watch(*args, **kwargs):
        result = check_files(*args, **kwargs)
        init = resolve.Resolver.__init__

        def counted(self, *a, **k):
            made.append(self)
            init(self, *a, **k)

        monkeypatch.setattr(resolve.Resolver, "__init__", counted)
        return result

    monkeypatch.setattr(support, "check_files", check_then_watch)
    rows, _ = support.judged([TREE], select_interfaces(None), project)
    assert rows and made == []  # no resolver made after the check: the rows read its own
    assert checked_analysis(project) is owner_analysis(project.analyses[CHECK_RESOLVER][1])


def test_without_a_check_run_one_analysis_is_made_and_kept():
    """A check whose result came from the run cache resolved nothing: support makes one."""
    project = Project()
    first = checked_analysis(project)
    assert checked_analysis(project) is first and CHECK_RESOLVER not in project.analyses
