"""The settings section of a validation: both simulators' effective settings, their differences, the alignment.

:func:`settings_section` builds the ``simulator_settings`` object of ``evaltk validate``'s report;
:func:`aligned_reference_env` gives the reference env dict for ``--align``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from evaltk.simulators import get
from evaltk.simulators.settings import Alignment as Alignment
from evaltk.simulators.settings import align_env, difference_rows, settings_note


def aligned_reference_env(sim: str, env: dict[str, Any]) -> Alignment:
    """Rewrite the checkpoint's resolved env dict ``env`` to simulator ``sim``'s settings where gymnasium can."""
    return align_env(env, get(sim).settings(env))


def settings_section(sim: str, sim_env: dict[str, Any], reference: str, reference_env: dict[str, Any] | None,
                     alignment: Alignment | None) -> dict[str, Any]:
    """Return both sides' settings, one row per setting, what differs, the note and the alignment (``--align``)."""
    sim_settings = get(sim).settings(sim_env)
    ref_settings = {} if reference_env is None else get(reference).settings(reference_env)
    rows = difference_rows(sim_settings, ref_settings)
    section: dict[str, Any] = {
        "sim": sim_settings, "reference": ref_settings, "rows": rows,
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
    return [r["setting"] for r in rows if r["differs"] and r["setting"] not in ("package", "env_id")]
