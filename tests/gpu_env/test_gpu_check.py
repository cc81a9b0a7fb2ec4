"""benchmarks/gpu_check.sh --dry-run: the prepared device check end to end on the CPU machine.

``slow`` (several minutes the first time: the CPU library build, the CUDA prebuild — about 3 minutes of
ptxas — and the host build of the kernels; later runs reuse them when the sources are unchanged).
Needs g++, nvcc and either the network or an existing ``.whl/`` (the device's wheels).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("nvcc") is None or shutil.which("g++") is None, reason="needs nvcc and g++")
def test_gpu_check_dry_run_runs_every_stage(tmp_path: Path) -> None:
    out = tmp_path / "out"
    env = {**os.environ, "OUT": str(out)}
    result = subprocess.run(["bash", str(ROOT / "benchmarks" / "gpu_check.sh"), "--dry-run"], cwd=ROOT, env=env,
                            capture_output=True, text=True, timeout=1800, check=False)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    report = json.loads((out / "gpu_check.json").read_text())
    assert [report[s]["status"] for s in ("facts", "equality", "throughput", "a2c")] == ["ok"] * 4
    assert report["facts"]["dry_run"] is True
    assert report["equality"]["all_roms"]["equal"] == report["equality"]["all_roms"]["games"] == 3
    assert report["equality"]["long"]["mismatches"] == []
    assert {r["setting"] for r in report["throughput"]["rows"]} == {"raw", "dqn"}
    assert report["a2c"]["rows"][0]["frames"] > 0
    assert "CUDA vs CPU, every frame" in (out / "gpu_check.md").read_text()
    assert (out / "gpu_check.log").is_file()


def test_gpu_check_rejects_unknown_arguments() -> None:
    result = subprocess.run(["bash", str(ROOT / "benchmarks" / "gpu_check.sh"), "--bogus"], cwd=ROOT,
                            capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 2
    assert "unknown argument '--bogus'" in result.stderr
