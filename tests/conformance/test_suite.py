"""Suite files: validation before anything runs (every field named), running, JUnit, the trace evidence rules."""

import dataclasses
import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

from conformance.suite import Outcome, load_suite, run_suite, write_junit
from conformance.trace import Trace, load
from evaltk.errors import SuiteError

ROOT = Path(__file__).resolve().parents[2]


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "s.toml"
    path.write_text(text)
    return path


def test_shipped_suites_pass_the_checks() -> None:
    for path in sorted((ROOT / "suites").glob("*.toml")):
        suite = load_suite(path)
        assert suite.cases, path


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("[suite]\nname='x'\n", "no \\[\\[case\\]\\]"),
        ("[[case]]\nkind='trace'\n", "missing \\[suite\\]"),
        ("[suite]\nname='x'\n[[case]]\nkind='nope'\nname='a'\n", "kind 'nope' is not a case kind: use one of trace, "),
        ("[suite]\nname='x'\n[[case]]\nkind='lockstepp'\nname='a'\n",
         "kind 'lockstepp' is not a case kind: did you mean lockstep, sim_lockstep\\? use one of trace, "),
        ("[suite]\nname='x'\n[[case]]\nkind='transfer'\nname='a'\ncheckpoint='random'\nseed=0\n",
         "missing required field 'episodes'"),
        ("[suite]\nname='x'\n[[case]]\nkind='trace'\nname='a'\nrom='pong'\nseed=0\nframes='9'\n", "should be int"),
        ("[suite]\nname='x'\n[[case]]\nkind='trace'\nname='a'\nrom='pong'\nseed=0\nframes=9\ncolour=1\n",
         "unknown fields \\['colour'\\]"),
        ("[suite]\nname='x'\n" + "[[case]]\nkind='trace'\nname='a'\nrom='pong'\nseed=0\nframes=9\n" * 2,
         "duplicate case names"),
        ("[suite\n", "not valid TOML"),
        ("[suite]\nname='x'\n[[case]]\nkind='trace'\nname='a'\nrom='pong'\nseed=0\nframes=0\n",
         "field 'frames' = 0 must be >= 1"),
        ("[suite]\nname='x'\n[[case]]\nkind='trace'\nname='a'\nrom='pong'\nseed=0\nframes=-5\n",
         "field 'frames' = -5 must be >= 1"),
        ("[suite]\nname='x'\n[[case]]\nkind='trace'\nname='a'\nrom='pong'\nseed=0\n",
         "missing required field 'frames'"),
        ("[suite]\nname='x'\n[[case]]\nkind='trace'\nname='a'\nrom='pong'\nseed=-1\nframes=5\n",
         "field 'seed' = -1 must be >= 0"),
        ("[suite]\nname='x'\n[[case]]\nkind='trace'\nname='a'\nrom='pong'\nseed=0\nframes=5\n"
         "repeat_action_probability=1.5\n", "'repeat_action_probability' = 1.5 must be in \\[0, 1\\]"),
        ("[suite]\nname='x'\n[[case]]\nkind='trace'\nname='a'\nrom='pong'\nseed=0\nframes=5\nsimulator='nes'\n",
         "field 'simulator' = 'nes' must be one of 'ale', 'gpu_env'"),
        ("[suite]\nname='x'\n[[case]]\nkind='trace'\nname='a'\nrom='pong'\nseed=0\nframes=5\nbackend='nes'\n",
         "field 'backend' = 'nes' must be one of 'ale', 'gpu_env'"),
        ("[suite]\nname='x'\n[[case]]\nkind='trace'\nname='a'\nrom='pong'\nseed=0\nframes=5\n"
         "simulator='gpu_env'\nbackend='gpu_env'\n", "give simulator only \\(backend is its older name\\)"),
        ("[suite]\nname='x'\n[[case]]\nkind='trace'\nname='a'\nframes=5\ntrace_file='nope.npz'\n",
         "field 'trace_file': file .*nope.npz does not exist"),
        ("[suite]\nname='x'\n[[case]]\nkind='trace'\nname='a'\nrom='pong'\nframes=5\n", "needs trace_file"),
        ("[suite]\nname='x'\n[[case]]\nkind='transfer'\nname='a'\ncheckpoint='builtin:random'\nepisodes=6\n"
         "seed=0\nmargin=0.5\nmargin_kind='sigma'\n",
         "field 'margin_kind' = 'sigma' must be one of 'absolute', 'relative', 'sd', 'prob'"),
        ("[suite]\nname='x'\n[[case]]\nkind='transfer'\nname='a'\ncheckpoint='builtin:random'\nepisodes=6\n"
         "seed=0\nmargin=-1\nmargin_kind='sd'\n", "field 'margin' = -1 must be in \\(0, inf\\)"),
        ("[suite]\nname='x'\n[[case]]\nkind='transfer'\nname='a'\ncheckpoint='builtin:random'\nepisodes=0\n"
         "seed=0\nmargin=0.5\nmargin_kind='sd'\n", "field 'episodes' = 0 must be >= 2"),
        ("[suite]\nname='x'\n[[case]]\nkind='transfer'\nname='a'\ncheckpoint='builtin:random'\nepisodes=6\n"
         "seed=0\nmargin=0.5\nmargin_kind='sd'\nexpect='same'\n", "field 'expect' = 'same' must be one of"),
        ("[suite]\nname='x'\n[[case]]\nkind='transfer'\nname='a'\ncheckpoint='builtin:random'\nepisodes=6\n"
         "seed=0\nmargin=0.5\nmargin_kind='sd'\nsimulator_b='gym'\nbackend_b='gpu_env'\n",
         "give simulator_b only \\(backend_b is its older name\\)"),
        ("[suite]\nname='x'\n[[case]]\nkind='transfer'\nname='a'\ncheckpoint='builtin:random'\nepisodes=6\n"
         "seed=0\nmargin=0.5\nmargin_kind='prob'\n", "a prob margin must be below 0\\.5, got 0\\.5"),
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
simulator = "ale"
[[case]]
kind = "trace"
name = "pong-gpu-env"
rom = "pong"
frames = 100
seed = 5
simulator = "gpu_env"
"""))
    results = run_suite(suite, tmp_path / "work")
    assert [r.outcome for r in results] == [Outcome.PASSED, Outcome.PASSED], [r.message for r in results]
    assert results[0].message.startswith("200 frames identical on ale")
    assert (tmp_path / "work" / "traces").is_dir()
    junit = write_junit(suite, results, tmp_path / "junit.xml")
    ts = ET.parse(junit).getroot().find("testsuite")
    assert ts is not None
    assert ts.get("tests") == "2"
    assert ts.get("failures") == "0"


def _trace_case(tmp_path: Path, trace_file: Path, frames: int = 2000, extra: str = "") -> Path:
    return _write(tmp_path, f"[suite]\nname='gate'\n[[case]]\nkind='trace'\nname='c'\nframes={frames}\n"
                            f"trace_file='{trace_file}'\nsimulator='gpu_env'\n{extra}")


SHIPPED = ROOT / "suites" / "traces" / "pong_seed0_2000.npz"


def test_a_trace_case_reads_backend_as_the_older_name_of_simulator(tmp_path: Path) -> None:
    """A suite written with ``backend`` (before ``simulator``) loads and replays on the simulator it names."""
    old = load_suite(_write(tmp_path, f"[suite]\nname='old'\n[[case]]\nkind='trace'\nname='c'\nframes=100\n"
                                      f"trace_file='{SHIPPED}'\nbackend='gpu_env'\n"))
    (result,) = run_suite(old, tmp_path / "work")
    assert result.outcome is Outcome.PASSED, result.message
    assert result.message.startswith("100 frames identical on gpu_env")  # not the default, ale
    assert result.details["simulator"] == "gpu_env"


@pytest.mark.parametrize("keep", [0, 10])
def test_a_truncated_trace_fails_a_case_declaring_2000_frames(tmp_path: Path, keep: int) -> None:
    full = load(SHIPPED)
    short = Trace(header=full.header, **{name: arr[:keep] for name, arr in full.arrays().items()})
    path = short.save(tmp_path / f"pong_{keep}.npz")  # a valid file with a correct header: only shorter
    (result,) = run_suite(load_suite(_trace_case(tmp_path, path)), tmp_path / "work")
    assert result.outcome is Outcome.FAILED
    assert f"holds {keep} frames but the case declares frames = 2000" in result.message


def test_a_cut_trace_file_is_refused_before_anything_runs(tmp_path: Path) -> None:
    data = SHIPPED.read_bytes()
    cut = tmp_path / "cut.npz"
    cut.write_bytes(data[: len(data) // 3])
    with pytest.raises(SuiteError, match=r"cut\.npz is truncated or corrupt"):
        load_suite(_trace_case(tmp_path, cut))


def test_a_changed_rom_md5_fails(tmp_path: Path) -> None:
    full = load(SHIPPED)
    other = dataclasses.replace(full, header={**full.header, "rom_md5": "0123456789abcdef0123456789abcdef"})
    path = other.save(tmp_path / "pong_md5.npz")  # digest recomputed: only the ROM check can catch it
    (result,) = run_suite(load_suite(_trace_case(tmp_path, path)), tmp_path / "work")
    assert result.outcome is Outcome.FAILED
    assert "recorded on ROM md5 '0123456789abcdef0123456789abcdef'" in result.message


def test_case_settings_must_match_the_trace(tmp_path: Path) -> None:
    (result,) = run_suite(load_suite(_trace_case(tmp_path, SHIPPED, extra="seed=3\n")), tmp_path / "work")
    assert result.outcome is Outcome.FAILED
    assert "the case sets seed = 3" in result.message
    (short,) = run_suite(load_suite(_trace_case(tmp_path, SHIPPED, frames=300)), tmp_path / "work")
    assert short.outcome is Outcome.PASSED, short.message
    assert short.message == "300 frames identical on gpu_env (2000 recorded)"


def test_a_tampered_frame_fails_the_case(tmp_path: Path) -> None:
    full = load(SHIPPED)
    ram = full.ram.copy()
    ram[150, 3] ^= 1
    path = dataclasses.replace(full, ram=ram).save(tmp_path / "pong_tampered.npz")
    (result,) = run_suite(load_suite(_trace_case(tmp_path, path, frames=300)), tmp_path / "work")
    assert result.outcome is Outcome.FAILED
    assert "frame 151" in result.message


def test_bad_suite_files_name_the_file(tmp_path: Path) -> None:
    binary = tmp_path / "binary.toml"
    binary.write_bytes(np.random.default_rng(1).bytes(64) + b"\xff")
    with pytest.raises(SuiteError, match=r"binary\.toml is not UTF-8 text"):
        load_suite(binary)
    with pytest.raises(SuiteError, match=r"missing\.toml does not exist"):
        load_suite(tmp_path / "missing.toml")


def test_pytest_plugin_collects_cases(tmp_path: Path) -> None:
    text = "[suite]\nname='p'\n[[case]]\nkind='trace'\nname='pong-tiny'\nrom='pong'\nframes=50\nseed=0\n"
    path = _write(tmp_path, text)
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "conformance.pytest_plugin", str(path),
                             "-p", "no:cacheprovider", "--rootdir", str(tmp_path)],
                            capture_output=True, text=True, cwd=ROOT)
    assert "1 passed" in result.stdout, result.stdout + result.stderr


def test_transfer_case_gym_against_gym_baseline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A builtin policy evaluated twice on Gym on the same seeds: the case runs end to end.

    Side B's simulator is given under its older name, ``backend_b`` (not the default, ``gpu_env``): it is read.
    The verdict rule is built once, when the suite loads; running the case builds none.
    """
    from conformance import cases
    from evaltk.margin import MarginKind
    from evaltk.verdict import VerdictRule

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
simulator_a = "gym"
backend_b = "gym"
margin = 0.5
margin_kind = "sd"
expect = "inconclusive"
num_envs = 2
"""))
    assert suite.cases[0].built == {"rule": VerdictRule(margin=0.5, kind=MarginKind.SD, alpha=0.05)}

    def built_again(params: object) -> VerdictRule:
        raise AssertionError("the transfer case built its verdict rule again")

    monkeypatch.setattr(cases, "transfer_rule", built_again)
    (result,) = run_suite(suite, tmp_path / "work")
    assert result.outcome is Outcome.PASSED, result.message
    assert result.details["n_a"] == 6
    assert result.details["n_b"] == 6
    for side in ("a", "b"):
        manifest = json.loads((tmp_path / "work" / "random-breakout-self" / side / "evaluation.json").read_text())
        assert manifest["settings"]["simulator"] == "gym", side


def test_the_kind_table_is_explicit_and_imports_no_suite_runner() -> None:
    """Every kind is in conformance.kinds.KINDS at import; no module defining a kind imports conformance.suite."""
    import ast

    from conformance import kinds

    assert set(kinds.KINDS) == {"trace", "transfer", "lockstep", "sim_lockstep", "doom_trace", "doom_demo", "bots"}
    root = Path(kinds.__file__).parent
    for name in ("case", "kinds", "cases", "bots_case", "doom_cases", "sim_lockstep_case"):
        tree = ast.parse((root / f"{name}.py").read_text(encoding="utf-8"))
        imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
        assert "conformance.suite" not in imported, f"conformance/{name}.py imports conformance.suite"


def test_every_case_is_checked_before_the_first_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A misspelt ``game`` in the second case: exit 2, one line with the close ROM id, and the first case never ran."""
    from evaltk.cli.main import main

    path = _write(tmp_path, "[suite]\nname='x'\n"
                            "[[case]]\nkind='lockstep'\nname='ok'\ngame='pong'\nframes=5\n"
                            "[[case]]\nkind='lockstep'\nname='bad'\ngame='pongg'\nframes=5\n")
    junit = tmp_path / "junit.xml"
    assert main(["conformance", "run", str(path), "--junit", str(junit), "--workdir", str(tmp_path / "w")]) == 2
    captured = capsys.readouterr()
    assert captured.err.strip().splitlines() == [
        f"error: {path}: case #2 (bad): unknown ROM id 'pongg': did you mean pong? use one of the 104 ale-py ROM ids "
        "gpu_env plays (e.g. pong, space_invaders)"]
    assert captured.out == ""  # no case line: nothing ran
    assert not junit.exists()
    assert not (tmp_path / "w").exists()


@pytest.mark.parametrize(("case", "match"), [
    ("kind='trace'\nname='t'\nrom='breakot'\nseed=0\nframes=5\n",
     r"case #1 \(t\): unknown ROM id 'breakot': did you mean breakout\? use an ale-py ROM id"),
    ("kind='sim_lockstep'\nname='s'\nsim='gpu_env'\nenv_id='ALE/Pongg-v5'\nsteps=3\n",
     r"case #1 \(s\): unknown Atari env id 'ALE/Pongg-v5': did you mean ALE/Pong-v5"),
    ("kind='sim_lockstep'\nname='s'\nsim='gpu_evn'\nenv_id='ALE/Pong-v5'\nsteps=3\n",
     r"field 'sim' = 'gpu_evn' is not a simulator: did you mean gpu_env\? use one of gym, gpu_env, envpool"),
])
def test_names_in_cases_are_checked_at_load_with_the_close_ones(tmp_path: Path, case: str, match: str) -> None:
    with pytest.raises(SuiteError, match=match):
        load_suite(_write(tmp_path, f"[suite]\nname='x'\n[[case]]\n{case}"))


def test_a_registered_kind_is_loaded_and_run_by_the_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """One ``conformance.kinds.register`` call makes a kind: its fields are checked, its runner runs."""
    from conformance import kinds
    from conformance.case import Case, CaseResult, FieldSpec, Kind
    from evaltk.cli.main import main

    def run(case: Case, workdir: Path) -> CaseResult:
        return CaseResult(case, Outcome.PASSED, f"echo {case.params['word']}", 0.0)

    kinds.register("echo", Kind({"word": FieldSpec((str,), required=True)}, run, path_fields=frozenset()))
    try:
        path = _write(tmp_path, "[suite]\nname='x'\n[[case]]\nkind='echo'\nname='e'\nword='hello'\n")
        assert main(["conformance", "run", str(path), "--workdir", str(tmp_path / "w")]) == 0
        assert "echo hello" in capsys.readouterr().out
        with pytest.raises(SuiteError, match="missing required field 'word'"):
            load_suite(_write(tmp_path, "[suite]\nname='x'\n[[case]]\nkind='echo'\nname='e'\n"))
    finally:
        kinds.KIND_REGISTRY.pop("echo")
    with pytest.raises(SuiteError, match="kind 'echo' is not a case kind: use one of trace, "):
        load_suite(path)
