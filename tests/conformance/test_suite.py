import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from conformance.suite import Outcome, load_suite, run_suite, write_junit
from evaltk.errors import SuiteError

ROOT = Path(__file__).resolve().parents[2]


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "s.toml"
    path.write_text(text)
    return path


def test_shipped_suites_validate() -> None:
    for path in sorted((ROOT / "suites").glob("*.toml")):
        suite = load_suite(path)
        assert suite.cases, path


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("[suite]\nname='x'\n", "no \\[\\[case\\]\\]"),
        ("[[case]]\nkind='trace'\n", "missing \\[suite\\]"),
        ("[suite]\nname='x'\n[[case]]\nkind='nope'\nname='a'\n", "kind 'nope' is not one of"),
        ("[suite]\nname='x'\n[[case]]\nkind='transfer'\nname='a'\ncheckpoint='random'\nseed=0\n",
         "missing required field 'episodes'"),
        ("[suite]\nname='x'\n[[case]]\nkind='trace'\nname='a'\nrom='pong'\nseed=0\nframes='9'\n", "should be int"),
        ("[suite]\nname='x'\n[[case]]\nkind='trace'\nname='a'\nrom='pong'\nseed=0\nframes=9\ncolour=1\n",
         "unknown fields \\['colour'\\]"),
        ("[suite]\nname='x'\n" + "[[case]]\nkind='trace'\nname='a'\nrom='pong'\nseed=0\nframes=9\n" * 2,
         "duplicate case names"),
        ("[suite\n", "not valid TOML"),
    ],
)
def test_malformed_suites_are_rejected_with_the_reason(tmp_path: Path, text: str, match: str) -> None:
    with pytest.raises(SuiteError, match=match):
        load_suite(_write(tmp_path, text))


def test_run_suite_and_junit(tmp_path: Path) -> None:
    suite = load_suite(_write(tmp_path, """
[suite]
name = "mini"
[[case]]
kind = "trace"
name = "pong"
rom = "pong"
frames = 200
seed = 5
backend = "ale"
[[case]]
kind = "trace"
name = "bad-backend"
rom = "pong"
frames = 10
seed = 5
backend = "nes"
"""))
    results = run_suite(suite, tmp_path / "work")
    assert [r.outcome for r in results] == [Outcome.PASSED, Outcome.ERROR]
    assert "not one of" in results[1].message
    assert (tmp_path / "work" / "traces").is_dir()
    junit = write_junit(suite, results, tmp_path / "junit.xml")
    ts = ET.parse(junit).getroot().find("testsuite")
    assert ts is not None
    assert ts.get("tests") == "2"
    assert ts.get("errors") == "1"


def test_trace_case_without_a_source_is_an_error(tmp_path: Path) -> None:
    suite = load_suite(_write(tmp_path, "[suite]\nname='x'\n[[case]]\nkind='trace'\nname='a'\nrom='pong'\n"))
    (result,) = run_suite(suite, tmp_path / "work")
    assert result.outcome is Outcome.ERROR
    assert "needs trace_file" in result.message


def test_pytest_plugin_collects_cases(tmp_path: Path) -> None:
    text = "[suite]\nname='p'\n[[case]]\nkind='trace'\nname='pong-tiny'\nrom='pong'\nframes=50\nseed=0\n"
    path = _write(tmp_path, text)
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "conformance.pytest_plugin", str(path),
                             "-p", "no:cacheprovider", "--rootdir", str(tmp_path)],
                            capture_output=True, text=True, cwd=ROOT)
    assert "1 passed" in result.stdout, result.stdout + result.stderr


def test_transfer_case_gym_against_gym_baseline(tmp_path: Path) -> None:
    """A builtin policy evaluated twice on Gym with independent seeds: the case runs end to end."""
    suite = load_suite(_write(tmp_path, """
[suite]
name = "transfer-mini"
[[case]]
kind = "transfer"
name = "random-breakout-self"
checkpoint = "builtin:random"
env_id = "ALE/Breakout-v5"
episodes = 6
seed = 0
backend_a = "gym"
backend_b = "gym"
margin = 0.5
margin_kind = "sd"
expect = "inconclusive"
num_envs = 2
"""))
    (result,) = run_suite(suite, tmp_path / "work")
    assert result.outcome is Outcome.PASSED, result.message
    assert result.details["n_a"] == 6
    assert result.details["n_b"] == 6
