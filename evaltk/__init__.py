"""evaltk: policy-transfer validation and evaluation for reinforcement learning.

Subpackages: :mod:`evaltk.checkpoint` (self-describing checkpoints), :mod:`evaltk.stats`
(two-sample tests, equivalence, bootstrap, aggregate metrics), :mod:`evaltk.evaluate`
(episodes on reference environments), :mod:`evaltk.verdict` (transfer verdicts),
:mod:`evaltk.tournament` (Doom matches and ratings) and :mod:`evaltk.cli` (the ``evaltk`` command).
"""

__version__ = "0.1.0"


def installed_version(distribution: str) -> str | None:
    """Return the installed version of ``distribution`` (``importlib.metadata``), or None when it is not installed."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(distribution)
    except PackageNotFoundError:
        return None
