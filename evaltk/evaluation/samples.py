"""Score tables as samples: what a comparison reads from disk.

:func:`load_sample` reads a table (:func:`evaltk.evaluation.scores.read_scores`: an ``evaltk evaluate`` folder, its
``episodes.csv``, or any CSV/JSONL with a ``return`` column) into a :class:`~evaltk.verdict.Sample`, the same
kind of value an evaluation produces, so :func:`evaltk.verdict.compare` treats a table and a fresh evaluation
alike. Besides the returns it reads, where the files next to the table record them:

* the episode order (the ``index`` column; ``evaltk evaluate`` writes rows as episodes finish), the seeds (one
  per episode, else none: rows cannot pair), the per-episode digests, frames and steps;
* the env id (the ``env_id`` column) and the env spec (``evaluation.json``'s ``settings.env``);
* the simulator (the ``simulator`` column) and the settings it reported (``simulator.json``);
* the package versions of a side of ``evaltk validate`` (``environment.json``) and the checkpoint's provenance.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from evaltk.evaluation.scores import ENVIRONMENT_FILE, SIMULATOR_FILE, ScoreTable, read_scores
from evaltk.verdict.sample import Sample


def side_file(table: Path, name: str) -> dict[str, Any] | None:
    """Return the JSON object ``name`` next to the score table ``table`` (``None``: absent or unreadable)."""
    path = (table if table.is_dir() else table.parent) / name
    try:
        found = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError, UnicodeDecodeError):
        return None
    return found if isinstance(found, dict) else None


def _ordered(table: ScoreTable) -> tuple[np.ndarray, np.ndarray | None, list[dict[str, str]] | None, np.ndarray]:
    order = np.argsort(table.index, kind="stable") if table.index is not None else np.arange(table.n)
    seeds = None if table.seeds is None else table.seeds[order]
    digests = None if table.digests is None else [table.digests[i] for i in order.tolist()]
    return table.returns[order], seeds, digests, order


def load_sample(path: str | Path, *, column: str = "return", label: str | None = None) -> Sample:
    """Read the score table ``path`` as a sample (module docstring); ``label`` names it in reports (default: path)."""
    table = read_scores(path, column=column)
    returns, seeds, digests, order = _ordered(table)
    env_ids = table.labels.get("env_id")
    simulators = table.labels.get("simulator")
    settings = table.settings
    env = None if settings is None else settings.env.to_json()
    environment = side_file(table.path, ENVIRONMENT_FILE)
    versions = environment.get("versions") if environment is not None else None
    sample = Sample.of(returns, seeds=seeds, digests=digests,
                       env_id=",".join(env_ids) if env_ids else (None if env is None else env.get("env_id")),
                       env=env, simulator=",".join(simulators) if simulators else (settings and settings.simulator),
                       settings=side_file(table.path, SIMULATOR_FILE),
                       versions=dict(versions) if isinstance(versions, dict) else None,
                       provenance=table.provenance, label=str(table.path) if label is None else label)
    frames, steps = table.frames, table.steps
    return replace(sample, frames=None if frames is None else tuple(int(frames[i]) for i in order),
                   steps=None if steps is None else tuple(int(steps[i]) for i in order))


def describe(sample: Sample) -> str:
    """One line for people: the sample's label, its size, env id and simulator where recorded."""
    parts = [f"{key}={value}" for key, value in (("env_id", sample.env_id), ("simulator", sample.simulator)) if value]
    return f"{sample.label}: {sample.n} episodes" + (f" ({'; '.join(parts)})" if parts else "")
