"""How an equivalence margin is expressed (:class:`MarginKind`), in a module without heavy imports.

The ``evaltk`` command line builds its ``--margin-kind`` choices from it at start-up, so it must not
pull in scipy or statsmodels (:mod:`evaltk.verdict` does, and re-exports this class).
"""

from __future__ import annotations

from enum import Enum


class MarginKind(Enum):
    """How the margin ``M`` is expressed."""

    ABSOLUTE = "absolute"
    RELATIVE = "relative"
    SD = "sd"
    PROB = "prob"
