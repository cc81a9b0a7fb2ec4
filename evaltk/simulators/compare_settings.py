"""The settings section of a validation: both simulators' effective settings, their differences, the alignment.

:func:`settings_section` builds the ``simulator_settings`` object of ``evaltk validate``'s report;
:func:`aligned_reference_env` gives the reference env dict for ``--align``.
"""

from __future__ import annotations

from typing import Any

from evaltk.simulators import get
from evaltk.simulators.settings import Alignment, align_env, difference_rows, settings_note


def aligned_reference_env(sim: str, env: dict[str, Any]) -> Alignment:
    """Rewrite the checkpoint's resolved env dict ``env`` to simulator ``sim``'s settings where gymnasium can."""
    return align_env(env, get(sim).settings(env))


def settings_section(sim: str, sim_env: dict[str, Any], reference: str | None, reference_env: dict[str, Any] | None,
                     alignment: Alignment | None) -> dict[str, Any]:
    """Return both sides' settings, one row per setting, what differs, the note and the alignment (``--align``)."""
    sim_settings = get(sim).settings(sim_env)
    ref_settings = {} if reference is None or reference_env is None else get(reference).settings(reference_env)
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


def _rest(rows: list[dict[str, Any]]) -> list[str]:
    return [r["setting"] for r in rows if r["differs"] and r["setting"] not in ("package", "env_id")]
