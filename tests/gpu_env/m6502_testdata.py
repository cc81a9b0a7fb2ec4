"""Locate and load the committed 6502 conformance data, ``tests/data/6502`` (tests only)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

from tests.data_paths import data_path


def conformance_data_dir() -> Path:
    """Return the 6502 test data folder (``tests/data/6502``); fails under CI, skips elsewhere, if missing."""
    return data_path("6502")


def load_vectors(category: str) -> list[dict[str, Any]]:
    """All single-step vectors of one folder (documented, undocumented, ...), in file order."""
    folder = data_path(f"6502/singlestep/{category}")
    vectors: list[dict[str, Any]] = []
    for file in sorted(folder.glob("*.jsonl.gz")):
        with gzip.open(file, "rt", encoding="utf-8") as handle:
            vectors.extend(json.loads(line) for line in handle)
    return vectors
