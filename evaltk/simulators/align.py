"""``--align``: rewrite a reference env spec to a simulator's settings where gymnasium + ale-py can express them.

:func:`align_env` returns the rewritten env and lists what could not be aligned, with why; ``evaltk validate
--align`` runs the reference on it (the one settings diff that reports both sides is
:mod:`evaltk.verdict.differences`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from evaltk.envs.atari_settings import FIELDS, UNKNOWN
from evaltk.envs.spec import EnvSpec

IDENTITY_FIELDS = ("package", "env_id")
"""Settings that name the simulator rather than change what it computes: never aligned."""


def _unknown(value: Any) -> bool:
    return isinstance(value, str) and value == UNKNOWN


@dataclass(frozen=True)
class Alignment:
    """A reference env spec rewritten to a simulator's settings, and what could not be aligned (with why)."""

    env: EnvSpec
    aligned: tuple[str, ...]
    not_aligned: tuple[tuple[str, str], ...]


def align_env(env: EnvSpec, sim: dict[str, Any], reference: dict[str, Any]) -> Alignment:
    """Rewrite the resolved env spec ``env`` to the simulator's settings ``sim`` where gymnasium + ale-py can.

    ``reference`` is what gymnasium + ale-py runs ``env`` with (``EnvInfo.settings`` of ``env``).

    Aligned: sticky actions, the action set, the frame cap, the NOOP count, episodic life. The rest
    (FIRE on reset, reward clipping, other grayscale/resize methods, other observation pipelines) is
    listed in ``not_aligned`` with the reason.
    """
    kwargs = dict(env.kwargs)
    pre = dict(env.preprocessing)
    ap = None if pre["atari_preprocessing"] is None else dict(pre["atari_preprocessing"])
    aligned: list[str] = []
    missing: list[tuple[str, str]] = []
    for key in FIELDS:
        want, have = sim.get(key, UNKNOWN), reference[key]
        if key in IDENTITY_FIELDS or _unknown(want) or want == have:
            continue
        if key == "repeat_action_probability":
            kwargs[key] = float(want)
        elif key == "full_action_space":
            kwargs[key] = bool(want)
        elif key == "max_episode_frames":
            kwargs["max_num_frames_per_episode"] = want
        elif key == "episodic_life" and ap is not None:
            ap["terminal_on_life_loss"] = bool(want)
        elif key == "noop_starts" and ap is not None and (noop_max := _noop_max(want, sim)) is not None:
            if noop_max == ap["noop_max"]:  # the same reset frames already: the difference is the FIRE press
                missing.append((key, f"{want!r} takes as many reset frames as the reference's {have!r}; the FIRE "
                                "press has no AtariPreprocessing option"))
                continue
            ap["noop_max"] = noop_max
        else:
            missing.append((key, f"gymnasium + ale-py has no option for {key} = {want!r} (reference: {have!r})"))
            continue
        aligned.append(key)
    if ap is not None:
        pre["atari_preprocessing"] = ap
    return Alignment(env=replace(env, kwargs=kwargs, preprocessing=pre), aligned=tuple(aligned),
                     not_aligned=tuple(missing))


def _noop_max(noop_starts: Any, sim: dict[str, Any]) -> int | None:
    """Return the AtariPreprocessing ``noop_max`` with the most reset frames of ``noop_starts`` (FIRE: +1)."""
    if not (isinstance(noop_starts, list) and len(noop_starts) == 2 and all(isinstance(v, int) for v in noop_starts)):
        return None
    return int(noop_starts[1]) + (1 if sim.get("fire_on_reset") is True else 0)
