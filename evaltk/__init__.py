"""evaltk: policy-transfer validation and evaluation for reinforcement learning.

Subpackages: :mod:`evaltk.checkpoint` (self-describing checkpoints), :mod:`evaltk.stats`
(two-sample tests, equivalence, bootstrap, aggregate metrics), :mod:`evaltk.evaluation.run`
(episodes on reference environments), :mod:`evaltk.verdict` (transfer verdicts),
:mod:`evaltk.tournament` (Doom matches and ratings) and :mod:`evaltk.cli` (the ``evaltk`` command).
"""

import platform
from collections.abc import Iterable
from functools import cache

__version__ = "0.1.0"
VERSIONED_PACKAGES = ("evaltk", "gymnasium", "ale-py", "numpy", "torch")
"""The packages whose versions decide an episode's outcome, recorded with each evaluated sample."""


def installed_versions(distributions: Iterable[str]) -> dict[str, str | None]:
    """Return each distribution's installed version (``importlib.metadata``), None for one that is not installed."""
    from importlib.metadata import PackageNotFoundError, version

    found: dict[str, str | None] = {}
    for name in distributions:
        try:
            found[name] = version(name)
        except PackageNotFoundError:
            found[name] = None
    return found


@cache
def _versions() -> tuple[tuple[str, str], ...]:
    found = {package: version or "not installed" for package, version in installed_versions(VERSIONED_PACKAGES).items()}
    return (*found.items(), ("python", platform.python_version()))


def package_versions() -> dict[str, str]:
    """Installed versions of :data:`VERSIONED_PACKAGES` (``not installed``) and Python's, read once per process."""
    return dict(_versions())
