"""The "run the suites in your CI" page's workflow file and pytest examples, run for real.

The workflow's "Run the suites" step is a shell script: it runs here with bash, ``evaltk`` from this
interpreter's environment, on a passing and a failing suite (a trace case whose trace is shorter than the
frames it declares), and the exit status and the JUnit files are checked. The same suites then run under
pytest through the plugin, as the page shows.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.docs.site import ROOT

WORKFLOW = ROOT / "docs" / "ci" / "evaltk-suites.yml"
TRACE = ROOT / "suites" / "traces" / "pong_seed0_2000.npz"
SUITE = """[suite]
name = "{name}"

[[case]]
kind = "trace"
name = "pong-seed0"
rom = "pong"
seed = 0
frames = {frames}
trace_file = "traces/pong_seed0_2000.npz"
simulator = "ale"
"""


def step(name: str) -> dict[str, Any]:
    """Return the step called ``name`` of the workflow's one job."""
    workflow = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    (job,) = workflow["jobs"].values()
    (found,) = [s for s in job["steps"] if s.get("name") == name]
    return dict(found)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """Make a user's repository: suites/pass.toml (300 of 2,000 recorded frames) and suites/fail.toml (2,001)."""
    suites = tmp_path / "suites"
    (suites / "traces").mkdir(parents=True)
    shutil.copyfile(TRACE, suites / "traces" / TRACE.name)
    (suites / "pass.toml").write_text(SUITE.format(name="pass", frames=300), encoding="utf-8")
    (suites / "fail.toml").write_text(SUITE.format(name="fail", frames=2001), encoding="utf-8")
    return tmp_path


def environment(suites: str) -> dict[str, str]:
    """Return the job's environment: ``SUITES`` as given, this interpreter's scripts (``evaltk``) first on PATH."""
    bin_dir = str(Path(sys.executable).parent)
    if shutil.which("evaltk", path=bin_dir) is None:
        pytest.fail(f"no evaltk script next to {sys.executable}: pip install -e .")
    return {**os.environ, "SUITES": suites, "PATH": bin_dir + os.pathsep + os.environ["PATH"],
            "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}


def junit(path: Path) -> dict[str, str]:
    """Return the attributes of the one ``testsuite`` of a JUnit file."""
    (suite,) = ET.parse(path).getroot().iter("testsuite")
    return dict(suite.attrib)


def test_workflow_installs_evaltk_and_uploads_the_reports() -> None:
    workflow = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    triggers = workflow.get("on", workflow.get(True))  # YAML 1.1 reads a bare `on` key as True
    assert {"push", "pull_request"} <= set(triggers)
    assert '"$EVALTK_SPEC"' in step("Install evaltk")["run"]
    upload = step("Upload the JUnit reports")
    assert upload["if"] == "always()"
    assert upload["with"]["path"] == "reports/"


def test_run_step_fails_the_job_on_a_failed_case_and_writes_junit(repo: Path) -> None:
    script = step("Run the suites")["run"]
    proc = subprocess.run(["bash", "-e", "-c", script], cwd=repo, env=environment("suites/*.toml"),
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "holds 2000 frames but the case declares frames = 2001" in proc.stdout + proc.stderr
    assert junit(repo / "reports" / "pass.xml")["failures"] == "0"
    assert junit(repo / "reports" / "fail.xml")["failures"] == "1"
    proc = subprocess.run(["bash", "-e", "-c", script], cwd=repo, env=environment("suites/pass.toml"),
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "300 frames identical on ale" in proc.stdout


def test_pytest_example_runs_the_cases(repo: Path) -> None:
    env = environment("")
    proc = subprocess.run([sys.executable, "-m", "pytest", "-v", "-p", "no:cacheprovider", "suites/",
                           "--junitxml=reports/suites.xml"], cwd=repo, env=env, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "suites/pass.toml::pong-seed0 PASSED" in proc.stdout
    assert "suites/fail.toml::pong-seed0 FAILED" in proc.stdout
    assert "holds 2000 frames but the case declares frames = 2001" in proc.stdout
    report = ET.parse(repo / "reports" / "suites.xml").getroot()
    assert sorted(case.get("name", "") for case in report.iter("testcase")) == ["pong-seed0", "pong-seed0"]


@pytest.mark.slow
@pytest.mark.timeout(1800)  # 10 episodes of the A2C policy on each side; a shared machine can be slow
def test_transfer_example_passes() -> None:
    example = ROOT / "docs" / "ci" / "test_transfer_example.py"
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(example)], cwd=ROOT,
                          env=environment(""), capture_output=True, text=True, timeout=1700)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "1 passed" in proc.stdout
