"""What a verdict between a reference (A) and a candidate (B) is decided by, checked once when it is made.

``evaltk compare``, ``evaltk validate`` and ``evaltk evaluate --until-verdict`` each build one
:class:`VerdictRule` from their options and hand it on; every check of those options lives in its
constructor, so a bad margin, level or number of looks is refused before any table is read or episode run.
"""

from __future__ import annotations

from dataclasses import dataclass

from evaltk.margin import MarginKind
from evaltk.stats.boundaries import Spending
from evaltk.stats.look_statistics import SEQUENTIAL_KINDS
from evaltk.verdict.decision import check_margin, margin_kind
from evaltk.verdict.result import MIN_EPISODES, CompareError

MIN_RESAMPLES = 100
"""Fewest permutation/bootstrap resamples a verdict accepts."""
MAX_LOOKS = 50
"""Most looks a sequential comparison makes (``--looks``)."""


def sequential_kind(kind: MarginKind | str, what: str) -> MarginKind:
    """Return the margin kind after checking that the sequential design supports it (``what`` names the option)."""
    kind_ = margin_kind(kind)
    if kind_.value not in SEQUENTIAL_KINDS:
        raise CompareError(f"{what} supports margin kinds {list(SEQUENTIAL_KINDS)}, got {kind_.value!r}; "
                           "use --margin-kind absolute or sd")
    return kind_


def check_looks(kind: MarginKind | str, looks: int, what: str) -> MarginKind:
    """Check a sequential request's margin kind and number of looks (``what`` names the option); returns the kind."""
    kind_ = sequential_kind(kind, what)
    if not (isinstance(looks, int) and 1 <= looks <= MAX_LOOKS):
        raise CompareError(f"--looks must be in [1, {MAX_LOOKS}], got {looks!r}; 10 is the default")
    return kind_


@dataclass(frozen=True, kw_only=True)
class VerdictRule:
    """The margin, the level and the design a verdict is decided by.

    ``kind`` and ``spending`` may be given by name (``"sd"``, ``"pocock"``); the constructor stores the enums.
    Raises :class:`~evaltk.verdict.CompareError` naming the option (``--margin``, ``--alpha``, ...) and a usual value.
    """

    margin: float
    """The equivalence margin M, in ``kind`` units (``--margin``)."""
    kind: MarginKind = MarginKind.ABSOLUTE
    """The margin's units (``--margin-kind``): see :mod:`evaltk.verdict`."""
    alpha: float = 0.05
    """Level of each one-sided test, in (0, 0.5) (``--alpha``)."""
    min_episodes: int = MIN_EPISODES
    """Fewest episodes (pairs) per side for a statistical verdict (``--min-episodes``)."""
    paired: bool = True
    """Pair rows by episode seed where both sides record seeds (off: ``--unpaired``)."""
    allow_different_envs: bool = False
    """Compare sides whose env ids or env specs differ; the report lists the differences."""
    resamples: int = 9999
    """Permutation and bootstrap resamples of the fixed-N tests (``--resamples``)."""
    sequential: bool = False
    """Decide at ``looks`` looks with alpha-spending boundaries instead of once (``absolute`` and ``sd`` margins)."""
    looks: int = 10
    """Number of looks of a sequential verdict (``--looks``)."""
    spending: Spending = Spending.DELAYED_EQUIVALENCE
    """Alpha-spending shape of a sequential verdict (``--spending``): ``delayed-equivalence`` (no equivalence stop
    before a third of the budget, "different" on a power family, a non-binding futility stop near a margin point);
    ``obrien-fleming`` or ``pocock`` for the classical shapes with neither."""
    bootstrap_seed: int = 0
    """Base seed of the resampling generator (seed stream ``verdict.bootstrap``; ``--bootstrap-seed``)."""

    def __post_init__(self) -> None:
        """Check every field; store ``kind`` and ``spending`` as enums."""
        if self.sequential:
            check_looks(self.kind, self.looks, "--sequential")
        kind = check_margin(self.margin, self.kind)
        if not (isinstance(self.alpha, int | float) and 0.0 < self.alpha < 0.5):
            raise CompareError(f"--alpha must be in (0, 0.5), got {self.alpha}; 0.05 is usual")
        if self.min_episodes < 2:
            raise CompareError(f"--min-episodes must be at least 2, got {self.min_episodes}; the default is "
                               f"{MIN_EPISODES}")
        if isinstance(self.bootstrap_seed, bool) or not isinstance(self.bootstrap_seed, int) or self.bootstrap_seed < 0:
            raise CompareError(f"--bootstrap-seed must be an integer >= 0, got {self.bootstrap_seed!r}; the default "
                               "is 0")
        if self.resamples < MIN_RESAMPLES:
            raise CompareError(f"--resamples must be at least {MIN_RESAMPLES}, got {self.resamples}; the default "
                               "is 9999")
        try:
            spending = Spending(self.spending)
        except ValueError:
            raise CompareError(f"--spending must be one of {[s.value for s in Spending]}, got {self.spending!r}; "
                               "delayed-equivalence is the default") from None
        object.__setattr__(self, "kind", kind)
        object.__setattr__(self, "spending", spending)

    @property
    def pairing(self) -> str:
        """The ``paired`` argument of :func:`evaltk.verdict.compare`: ``"auto"`` or ``"no"``."""
        return "auto" if self.paired else "no"
