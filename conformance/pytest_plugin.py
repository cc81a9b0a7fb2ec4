"""pytest plugin: every case of a suite file becomes a test item.

Registered through the ``pytest11`` entry point, so ``pytest suites/`` (or naming suite files) is
enough once evaltk is installed. A case that fails
or errors (cannot run) fails its test with the case's message; no case is ever skipped.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conformance.suite import Case, Outcome, load_suite, run_case


def pytest_collect_file(parent: pytest.Collector, file_path: Path) -> pytest.File | None:
    """Collect ``*.toml`` files that hold a ``[suite]`` table."""
    if file_path.suffix == ".toml" and "[suite]" in file_path.read_text(errors="replace"):
        suite_file: pytest.File = SuiteFile.from_parent(parent, path=file_path)
        return suite_file
    return None


class SuiteFile(pytest.File):
    """A suite file as a pytest collector."""

    def collect(self) -> Iterator[pytest.Item]:
        """One item per case."""
        suite = load_suite(self.path)
        for case in suite.cases:
            yield CaseItem.from_parent(self, name=case.name, case=case)


class CaseItem(pytest.Item):
    """One suite case as a pytest item."""

    def __init__(self, *, case: Case, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.case = case

    def runtest(self) -> None:
        """Run the case in a scratch folder."""
        with tempfile.TemporaryDirectory(prefix="evaltk-suite-") as tmp:
            result = run_case(self.case, Path(tmp))
        if result.outcome is not Outcome.PASSED:
            raise CaseFailedError(f"{result.outcome.value}: {result.message}")

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        """Show the case's own message instead of a traceback."""
        if isinstance(excinfo.value, CaseFailedError):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[Path, int, str]:
        """Where the case lives."""
        return self.path, 0, f"{self.case.kind}: {self.case.name}"


class CaseFailedError(Exception):
    """A suite case did not pass."""
