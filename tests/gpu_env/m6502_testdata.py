"""Locate and load the shared 6502 conformance data (tests only)."""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path
from typing import Any

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]


def conformance_data_dir() -> Path:
    """Return the 6502 test data folder: $GPU_ENV_6502_TESTDATA, else ../shared/testdata/6502."""
    configured = os.environ.get("GPU_ENV_6502_TESTDATA")
    path = Path(configured) if configured else REPO_ROOT.parent / "shared" / "testdata" / "6502"
    if not path.is_dir():
        pytest.skip(f"6502 test data not found at {path}: set GPU_ENV_6502_TESTDATA to its folder")
    return path


def load_vectors(category: str) -> list[dict[str, Any]]:
    """All single-step vectors of one folder (documented, undocumented, ...), in file order."""
    folder = conformance_data_dir() / "singlestep" / category
    vectors: list[dict[str, Any]] = []
    for file in sorted(folder.glob("*.jsonl.gz")):
        with gzip.open(file, "rt", encoding="utf-8") as handle:
            vectors.extend(json.loads(line) for line in handle)
    return vectors
