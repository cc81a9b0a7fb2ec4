"""One JSON object per line: strict JSON (no NaN), numpy values converted.

The format of every machine-readable summary the project writes: ``summary.json`` and
``compare.json`` files, and the last stdout line of a command run with ``--json`` (``emit_json``;
scripts take ``tail -n 1``).
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Mapping
from typing import Any


def _clean(value: Any) -> Any:
    """Turn NaN/inf into None and numpy scalars/arrays into plain Python values."""
    if isinstance(value, Mapping):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_clean(v) for v in value]
    if hasattr(value, "tolist") and not isinstance(value, str | bytes):
        return _clean(value.tolist())
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def to_json_line(obj: Mapping[str, Any]) -> str:
    """Serialise ``obj`` as one line of strict JSON (no NaN; numpy values converted)."""
    return json.dumps(_clean(obj), sort_keys=False, allow_nan=False, separators=(",", ":"))


def emit_json(obj: Mapping[str, Any]) -> None:
    """Print ``obj`` as the final line of stdout and flush."""
    sys.stdout.write(to_json_line(obj) + "\n")
    sys.stdout.flush()
