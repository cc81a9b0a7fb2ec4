"""One side of a comparison: a :class:`Sample` of episode returns and what is known of where they came from.

Every door to a verdict (``evaltk compare``, ``evaltk validate``, ``evaltk evaluate --until-verdict``, a suite's
``transfer`` case) makes two samples and hands them to :func:`evaltk.verdict.compare`: a score table read from
disk (:func:`evaltk.evaluation.samples.load_sample`) or an evaluation's rows
(:attr:`evaltk.evaluation.run.EvalResult.sample`) give the same kind of value, so the env check, the pairing, the
``identical`` finding and the statistics cannot differ by door.

The env spec and the settings are normalised once, here (:func:`normalise_env`, :func:`normalise_settings`):
lists and tuples are the same, and a float an ALE or EnvPool config stored as float32 reads as its shortest
decimal (``0.1``, not ``0.10000000149011612``).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from evaltk.stats.checks import FloatArray


def shortest(value: Any) -> Any:
    """Return ``value`` with every float that is exactly a float32 written as that float32's shortest decimal.

    ``0.10000000149011612`` (float32 0.1 widened) becomes ``0.1``; a float64 that is not a float32 stays as it is.
    Dicts and lists are walked; other values are returned unchanged.
    """
    if isinstance(value, float) and math.isfinite(value):
        narrow = np.float32(value)
        return float(str(narrow)) if float(narrow) == value else value
    if isinstance(value, dict):
        return {k: shortest(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [shortest(v) for v in value]
    return value


def normalise_env(env: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """Return an env spec in its one comparable form: JSON values (tuples as lists), float32 floats shortest.

    An env dict from a plan (Doom scenarios hold tuples) and the same dict read back from ``evaluation.json``
    normalise to equal values. ``None`` (not recorded) stays ``None``.
    """
    if env is None:
        return None
    plain = json.loads(json.dumps(dict(env), default=str))
    return dict(shortest(plain))


def normalise_settings(settings: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """Return a simulator's settings (:mod:`evaltk.envs.atari_settings`) normalised as :func:`normalise_env` does."""
    return normalise_env(settings)


@dataclass(frozen=True)
class Sample:
    """Episode returns in episode order, with their seeds, digests and where they came from.

    ``returns`` is ``float64[n]``; ``seeds``, ``digests``, ``frames`` and ``steps`` run parallel to it (``None``: the
    source records none). A sample of no episodes is a side's header: what a comparison knows of it before any
    episode runs (its env and settings), which the env check reads.
    """

    returns: FloatArray = field(repr=False)
    seeds: tuple[int, ...] | None = None
    """Episode seeds (each at most once), or ``None`` when the source records none or repeats one."""
    digests: tuple[dict[str, str], ...] | None = field(default=None, repr=False)
    """Per episode ``{"steps": hex, "obs": hex}`` (:mod:`evaltk.evaluation.digests`), or ``None``."""
    frames: tuple[int, ...] | None = field(default=None, repr=False)
    steps: tuple[int, ...] | None = field(default=None, repr=False)
    env_id: str | None = None
    """The env id the episodes ran (``"A,B"`` when a table holds several), or ``None`` when not recorded."""
    env: dict[str, Any] | None = None
    """The env spec the policy was asked to play (normalised), or ``None`` when not recorded."""
    simulator: str | None = None
    """The simulator as score tables record it (``gym``, ``gpu_env``, ``envpool``, ``vizdoom``, ``MODULE:CALLABLE``)."""
    settings: dict[str, Any] | None = None
    """The settings the simulator reported running with (normalised; ``None``: not recorded; a key a simulator does
    not report holds :data:`~evaltk.envs.atari_settings.UNKNOWN`)."""
    versions: dict[str, str] | None = None
    """Versions of the packages that decided the episodes, where recorded."""
    provenance: dict[str, Any] = field(default_factory=dict)
    label: str = ""
    """How reports name this side: ``reference (gym)``, ``sim (gpu_env)``, a table's path."""
    not_aligned: tuple[str, ...] = ()
    """Settings ``--align`` could not give this side (the reference of ``evaltk validate --align``)."""

    def __post_init__(self) -> None:
        """Store the returns as ``float64`` and the env and settings in their normal form."""
        object.__setattr__(self, "returns", np.asarray(self.returns, dtype=np.float64).reshape(-1))
        object.__setattr__(self, "env", normalise_env(self.env))
        object.__setattr__(self, "settings", normalise_settings(self.settings))

    @property
    def n(self) -> int:
        """Number of episodes."""
        return int(self.returns.size)

    @classmethod
    def of(cls, returns: Any, *, seeds: Any = None, digests: Sequence[Mapping[str, str]] | None = None,
           **context: Any) -> Sample:
        """Return a sample of ``returns`` (any 1-d numbers) with optional seeds and digests (the rest by keyword).

        Seeds that repeat a value cannot pair rows, so they are dropped (``seeds`` is then ``None``).
        """
        values = np.asarray(returns, dtype=np.float64).reshape(-1)
        seed_tuple = None
        if seeds is not None:
            ints = tuple(int(s) for s in np.asarray(seeds).reshape(-1))
            seed_tuple = ints if len(set(ints)) == len(ints) else None
        digest_tuple = None if digests is None else tuple(dict(d or {}) for d in digests)
        return cls(values, seed_tuple, digest_tuple, **context)

    @classmethod
    def from_rows(cls, rows: Sequence[Mapping[str, Any]], *, column: str = "return", **context: Any) -> Sample:
        """Return the sample of score-table rows (``index``, ``seed``, ``return``, ``digest``... as evaluate writes).

        Rows are put in episode order by ``index`` where every row has one; ``column`` is the score column read.
        """
        ordered = sorted(rows, key=lambda r: int(r["index"])) if rows and all("index" in r for r in rows) else rows
        seeds = [r.get("seed") for r in ordered]
        digests = None
        if ordered and all(r.get("digest") for r in ordered):
            digests = [{"steps": str(r["digest"]), "obs": str(r.get("obs_digest") or "")} for r in ordered]
            digests = [{k: v for k, v in d.items() if v} for d in digests]

        def ints(key: str) -> tuple[int, ...] | None:
            if not ordered or any(r.get(key) is None for r in ordered):
                return None
            return tuple(int(r[key]) for r in ordered)

        return replace(cls.of([float(r[column]) for r in ordered],
                              seeds=None if not ordered or any(s is None for s in seeds) else seeds,
                              digests=digests, **context), frames=ints("frames"), steps=ints("steps"))

    def head(self, n: int) -> Sample:
        """Return the first ``n`` episodes (all of them when ``n`` is larger), with the same context."""

        def cut(values: tuple[Any, ...] | None) -> tuple[Any, ...] | None:
            return None if values is None else values[:n]

        return replace(self, returns=self.returns[:n], seeds=cut(self.seeds), digests=cut(self.digests),
                       frames=cut(self.frames), steps=cut(self.steps))

    def header(self) -> Sample:
        """Return this side with no episodes: what a comparison knows of it before any episode is run."""
        return self.head(0)

    def with_label(self, label: str) -> Sample:
        """Return the same sample named ``label`` in reports."""
        return replace(self, label=label)
