"""The one diff of settings, and ``--align``: both simulators' effective settings side by side.

:func:`difference_rows` is the one diff of settings (simulator settings, in the schema of
:mod:`evaltk.envs.atari_settings`, and flattened env specs in :mod:`evaltk.table_comparison`); a key a side
lacks shows :data:`~evaltk.envs.atari_settings.UNKNOWN` and never differs. :func:`settings_section` builds
the ``simulator_settings`` object of ``evaltk validate``'s report; :func:`align_env` rewrites a reference env
dict to a simulator's settings where gymnasium + ale-py can express them and lists the rest
(``--align``); :func:`difference_lines` gives ``evaltk compare``'s lines.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evaltk.envs.atari_settings import FIELDS, UNKNOWN

IDENTITY_FIELDS = ("package", "env_id")
"""Fields that name the simulator rather than change what it computes."""


def flatten(spec: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """Dotted keys of a nested spec (``env.kwargs.frameskip`` ...), leaves as they are."""
    flat: dict[str, Any] = {}
    for key, value in spec.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict) and value:
            flat.update(flatten(value, f"{name}."))
        else:
            flat[name] = value
    return flat


def difference_rows(sim: dict[str, Any], reference: dict[str, Any],
                    keys: tuple[str, ...] | None = None) -> list[dict[str, Any]]:
    """Return the one settings diff, a row ``{setting, sim, reference, differs}`` per key (default :data:`FIELDS`).

    ``keys=()`` takes the keys of ``sim`` then those only ``reference`` has (for flattened env specs). A key
    a side lacks shows :data:`UNKNOWN` and never counts as differing.
    """
    names = FIELDS if keys is None else (keys or (*sim, *(k for k in reference if k not in sim)))
    rows = []
    for key in names:
        a, b = sim.get(key, UNKNOWN), reference.get(key, UNKNOWN)
        differs = not _unknown(a) and not _unknown(b) and a != b
        rows.append({"setting": key, "sim": a, "reference": b, "differs": differs})
    return rows


def _unknown(value: Any) -> bool:
    return isinstance(value, str) and value == UNKNOWN


def settings_note(rows: list[dict[str, Any]]) -> str | None:
    """Return the sentence a report prints when settings (not only the package) differ, else None."""
    differ = [r["setting"] for r in rows if r["differs"] and r["setting"] not in IDENTITY_FIELDS]
    if not differ:
        return None
    return (f"the simulators differ in {', '.join(differ)}: a difference in scores may come from these settings "
            "rather than from the emulation; re-run with --align to compare on aligned settings")


@dataclass(frozen=True)
class Alignment:
    """A reference env dict rewritten to a simulator's settings, and what could not be aligned (with why)."""

    env: dict[str, Any]
    aligned: tuple[str, ...]
    not_aligned: tuple[tuple[str, str], ...]


def align_env(env: dict[str, Any], sim: dict[str, Any], reference: dict[str, Any]) -> Alignment:
    """Rewrite the resolved env dict ``env`` to the simulator's settings ``sim`` where gymnasium + ale-py can.

    ``reference`` is what gymnasium + ale-py runs ``env`` with (``EnvInfo.settings`` of ``env``).

    Aligned: sticky actions, the action set, the frame cap, the NOOP count, episodic life. The rest
    (FIRE on reset, reward clipping, other grayscale/resize methods, other observation pipelines) is
    listed in ``not_aligned`` with the reason.
    """
    kwargs = dict(env["kwargs"])
    pre = dict(env["preprocessing"])
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
    out = {**env, "kwargs": kwargs, "preprocessing": pre}
    return Alignment(env=out, aligned=tuple(aligned), not_aligned=tuple(missing))


def _noop_max(noop_starts: Any, sim: dict[str, Any]) -> int | None:
    """Return the AtariPreprocessing ``noop_max`` with the most reset frames of ``noop_starts`` (FIRE: +1)."""
    if not (isinstance(noop_starts, list) and len(noop_starts) == 2 and all(isinstance(v, int) for v in noop_starts)):
        return None
    return int(noop_starts[1]) + (1 if sim.get("fire_on_reset") is True else 0)


def settings_section(sim: dict[str, Any], reference: dict[str, Any] | None,
                     alignment: Alignment | None) -> dict[str, Any]:
    """Return both sides' settings, one row per setting, what differs, the note and the alignment (``--align``).

    ``sim`` and ``reference`` are the sides' effective settings (``EvaluationPlan.simulator_settings``; no
    reference settings for a baseline table).
    """
    ref_settings = {} if reference is None else reference
    rows = difference_rows(sim, ref_settings)
    section: dict[str, Any] = {
        "sim": sim, "reference": ref_settings, "rows": rows,
        "differs": [r["setting"] for r in rows if r["differs"]], "note": settings_note(rows), "aligned": None}
    if alignment is not None:
        section["aligned"] = {"settings": list(alignment.aligned),
                              "not_aligned": [{"setting": k, "why": why} for k, why in alignment.not_aligned]}
        if section["note"] is not None:
            done = (f"the reference ran with the simulator's {', '.join(alignment.aligned)}" if alignment.aligned
                    else "no setting could be aligned")
            section["note"] = f"{done} (--align); still different: {', '.join(_rest(rows))}"
    return section


def table_settings(table: Path, file_name: str = "simulator.json") -> dict[str, Any] | None:
    """Return the settings ``evaltk evaluate`` recorded next to the score table ``table`` (None: not recorded)."""
    path = (table if table.is_dir() else table.parent) / file_name
    try:
        settings = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None
    return settings if isinstance(settings, dict) else None


def difference_lines(a: dict[str, Any] | None, b: dict[str, Any] | None) -> list[str]:
    """Text lines for ``evaltk compare``: the simulator settings that differ between tables A and B."""
    if a is None or b is None:
        return ["simulator settings: not recorded for both tables (evaltk evaluate writes simulator.json)"]
    rows = [r for r in difference_rows(a, b) if r["differs"]]
    if not rows:
        return ["simulator settings: no difference"]
    width = max(len(r["setting"]) for r in rows)
    lines = ["simulator settings that differ (A | B):"]
    lines += [f"  {r['setting']:<{width}}  {r['sim']} | {r['reference']}" for r in rows]
    note = settings_note(rows)
    return lines if note is None else [*lines, f"note: {note.replace('--align', 'evaltk validate --align')}"]


def _rest(rows: list[dict[str, Any]]) -> list[str]:
    return [r["setting"] for r in rows if r["differs"] and r["setting"] not in IDENTITY_FIELDS]
