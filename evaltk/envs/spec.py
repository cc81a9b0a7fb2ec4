"""The env spec: the typed record of an env's family, id, constructor kwargs and preprocessing.

:class:`EnvSpec` is what the modules hand each other (:func:`evaltk.envs.describe`, the evaluation plan, the
simulators, the tournament); JSON files hold its :meth:`EnvSpec.to_json` form, the ``env`` object of
``policy.json`` and of ``evaluation.json``'s ``settings``::

    {"family": "atari", "env_id": "ALE/Breakout-v5", "kwargs": {...}, "preprocessing": {...}}

What ``kwargs`` and ``preprocessing`` may hold is the family's to check (:mod:`evaltk.envs.atari`,
:mod:`evaltk.envs.doom`); :meth:`EnvSpec.from_json` checks the shape around them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from evaltk.errors import SpecError

ENV_KEYS = ("family", "env_id", "kwargs", "preprocessing")
"""The keys of an env spec's JSON object, in the order :meth:`EnvSpec.to_json` writes them."""


@dataclass(frozen=True)
class EnvSpec:
    """One env, as a checkpoint records it and an evaluation runs it; its JSON form is :meth:`to_json`'s."""

    family: str
    """The env family: ``atari`` (gymnasium + ale-py) or ``doom`` (ViZDoom); :func:`evaltk.envs.describe` checks it."""
    env_id: str
    """The env id: a gymnasium id (``ALE/Breakout-v5``) or a ViZDoom scenario's name (``basic``)."""
    kwargs: dict[str, Any] = field(default_factory=dict)
    """The env constructor's kwargs (Atari: ALE v5's; Doom: none)."""
    preprocessing: dict[str, Any] = field(default_factory=dict)
    """Atari: ``{"atari_preprocessing", "frame_stack"}``; Doom: the scenario (``DoomScenario.to_dict``)."""

    def to_json(self) -> dict[str, Any]:
        """Return the env's JSON object: the keys of :data:`ENV_KEYS` in that order (the dicts are copies)."""
        return {"family": self.family, "env_id": self.env_id, "kwargs": dict(self.kwargs),
                "preprocessing": dict(self.preprocessing)}

    @classmethod
    def from_json(cls, found: Any, where: str = "env") -> EnvSpec:
        """Return the env of a JSON object (:meth:`to_json`'s form; ``where`` names it in errors).

        ``kwargs`` and ``preprocessing`` may be left out (empty: the family's defaults).

        Raises:
            SpecError: not an object, an unknown key, ``family``/``env_id`` not a string, or ``kwargs``/
                ``preprocessing`` not an object.

        """
        if not isinstance(found, Mapping):
            raise SpecError(f"{where} must be a JSON object {{family, env_id, kwargs, preprocessing}}, got {found!r}")
        unknown = sorted(str(k) for k in found if k not in ENV_KEYS)
        if unknown:
            raise SpecError(f"{where} has unknown key(s) {', '.join(unknown)}: allowed are {', '.join(ENV_KEYS)}")
        for key in ("family", "env_id"):
            if not isinstance(found.get(key), str):
                raise SpecError(f"{where}.{key} must be a string (e.g. 'atari', 'ALE/Breakout-v5'), got "
                                f"{found.get(key)!r}")
        for key in ("kwargs", "preprocessing"):
            if not isinstance(found.get(key, {}), Mapping):
                raise SpecError(f"{where}.{key} must be a JSON object, got {found[key]!r}")
        return cls(family=found["family"], env_id=found["env_id"], kwargs=dict(found.get("kwargs", {})),
                   preprocessing=dict(found.get("preprocessing", {})))
