"""Helpers every subcommand uses for its output.

Convention: human-readable text goes to stdout as the command runs; with ``--json`` the
*last* line of stdout is exactly one JSON object (``emit_json``), so scripts can take
``tail -n 1``. The serialisation itself lives in :mod:`evaltk.report.jsonline`, below the CLI,
so that report writers and trainers use it without importing the CLI.
"""

from __future__ import annotations

from evaltk.report.jsonline import emit_json, to_json_line

__all__ = ["emit_json", "to_json_line"]
