"""The ``evaltk`` CLI under a fuzzer: any argument list, any mutated input file, never a traceback.

Hypothesis builds argument lists for ``evaluate``, ``compare``, ``conformance run`` and
``tournament`` over real files (a tiny saved policy, score tables, a recorded 20-frame trace and
its suite) mutated byte- or field-wise, and runs :func:`evaltk.cli.main.main` in-process. Each run
must end with status 0, or with a non-zero status whose last stderr line starts with ``error:``
(argparse's usage errors included, which the CLI prints as one line too); a ``Traceback`` or the
internal-error status 70 fails the test.
The default budget is small (about a minute on two cores); ``-m slow`` runs a longer one.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evaltk.cli.main import main
from tests.evaltk.fuzz_files import read_doc, tiny_policy_checkpoint, write_doc

_TABLE = ("checkpoint,env_id,backend,index,seed,return,frames,steps,truncated\n"
          + "".join(f"c,ALE/Pong-v5,gym,{i},{i},{(i * 7) % 5 - 2}.0,100,25,false\n" for i in range(12)))


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    from conformance import trace

    root = tmp_path_factory.mktemp("fuzz")
    (root / "a.csv").write_text(_TABLE)
    (root / "b.jsonl").write_text("".join(json.dumps({"seed": i, "return": float(i % 3)}) + "\n" for i in range(12)))
    trace.record_ale("pong", frames=20, seed=0).save(root / "pong20.npz")
    (root / "suite.toml").write_text(
        '[suite]\nname = "fuzz"\n\n[[case]]\nkind = "trace"\nname = "pong20"\nrom = "pong"\nseed = 0\n'
        'frames = 20\ntrace_file = "pong20.npz"\nsimulator = "gpu_env"\n')
    return {"ckpt": tiny_policy_checkpoint(root / "ckpt"), "a": root / "a.csv", "b": root / "b.jsonl",
            "trace": root / "pong20.npz", "suite": root / "suite.toml", "root": root}


def _mutate_bytes(data: st.DataObject, raw: bytes) -> bytes:
    buf = bytearray(raw)
    for _ in range(data.draw(st.integers(1, 4), label="n_edits")):
        pos = data.draw(st.integers(0, max(0, len(buf) - 1)), label="pos")
        op = data.draw(st.sampled_from(["set", "delete", "truncate"]), label="op")
        if op == "truncate":
            del buf[pos:]
        elif buf and op == "set":
            buf[pos] = data.draw(st.integers(0, 255), label="byte")
        elif buf:
            del buf[pos]
    return bytes(buf)


def _copy_mutated(data: st.DataObject, src: Path, work: Path) -> Path:
    """Copy ``src`` (file or checkpoint directory) into ``work``, maybe mutated; return the copy."""
    dest = work / src.name
    if src.is_dir():
        shutil.copytree(src, dest)
    else:
        shutil.copy(src, dest)
    kind = data.draw(st.sampled_from(["none", "bytes", "field"] if src.is_dir() else ["none", "bytes"]),
                     label=f"mutate {src.name}")
    if kind == "bytes":
        target = dest / data.draw(st.sampled_from(["policy.json", "policy.safetensors"])) if src.is_dir() else dest
        target.write_bytes(_mutate_bytes(data, target.read_bytes()))
    elif kind == "field":
        doc = read_doc(dest)
        key = data.draw(st.sampled_from(sorted(doc)), label="field")
        doc[key] = data.draw(st.none() | st.integers(-5, 10**10) | st.floats() | st.text(max_size=4)
                             | st.just({}) | st.just([]), label="value")
        write_doc(dest, doc)
    return dest


_INTS = st.sampled_from(["-1", "0", "1", "2", "x", "1e3", "99999999999999999999"])
_FLOATS = st.sampled_from(["-1", "0", "0.5", "nan", "inf", "1e308", "x"])


def _options(data: st.DataObject, table: dict[str, st.SearchStrategy[str]]) -> list[str]:
    chosen = data.draw(st.lists(st.sampled_from(sorted(table)), max_size=4, unique=True), label="options")
    out: list[str] = []
    for flag in chosen:
        out += [flag, data.draw(table[flag], label=flag)] if table[flag] is not _FLAG else [flag]
    return out


_FLAG = st.just("")


def _evaluate(data: st.DataObject, files: dict[str, Path], work: Path) -> list[str]:
    ckpt = str(_copy_mutated(data, files["ckpt"], work))
    ref = data.draw(st.sampled_from([ckpt, ckpt, "random", "builtin:nope", str(work / "missing"), str(files["a"])]))
    # a valid checkpoint with a valid episode count would play real Doom episodes: keep counts invalid or 0
    return ["evaluate", ref, "--out", str(work / "out"), "--episodes", data.draw(st.sampled_from(["-1", "0", "x"])),
            *_options(data, {"--env-id": st.sampled_from(["basic", "ALE/Nope-v5", "nope", "", "ALE/Pong-v5"]),
                             "--num-envs": _INTS, "--workers": _INTS, "--seed": _INTS,
                             "--sim": st.sampled_from(["gym", "gpu_env", "x"]), "--torch-threads": _INTS,
                             "--json": _FLAG})]


def _compare(data: st.DataObject, files: dict[str, Path], work: Path) -> list[str]:
    a = str(_copy_mutated(data, files["a"], work))
    b = str(_copy_mutated(data, files["b"], work))
    return ["compare", a, b, "--margin", data.draw(_FLOATS), "--resamples", "199",
            *_options(data, {"--margin-kind": st.sampled_from(["absolute", "relative", "x"]), "--alpha": _FLOATS,
                             "--column": st.sampled_from(["return", "seed", "nope", ""]),
                             "--bootstrap-seed": _INTS, "--seed": _INTS,
                             "--min-episodes": _INTS, "--unpaired": _FLAG, "--looks": _INTS,
                             "--allow-different-envs": _FLAG, "--json": _FLAG})]


def _conformance(data: st.DataObject, files: dict[str, Path], work: Path) -> list[str]:
    shutil.copy(files["trace"], work / "pong20.npz")
    suite = work / "suite.toml"
    text = files["suite"].read_text()
    edit = data.draw(st.sampled_from(["none", "bytes", "value"]), label="suite edit")
    if edit == "bytes":
        suite.write_bytes(_mutate_bytes(data, text.encode()))
    else:
        if edit == "value":
            line = data.draw(st.sampled_from([x for x in text.splitlines() if "=" in x]), label="line")
            value = data.draw(st.sampled_from(['-5', '0', '2000', '"x"', '1.5', 'true', '[]', '"../../etc/passwd"',
                                               '"pong20.npz"', '"nope.npz"']), label="value")
            text = text.replace(line, f"{line.split('=')[0]}= {value}")
        suite.write_text(text)
    trace_edit = data.draw(st.booleans(), label="mutate trace")
    if trace_edit:
        (work / "pong20.npz").write_bytes(_mutate_bytes(data, (work / "pong20.npz").read_bytes()))
    return ["conformance", "run", str(suite), "--workdir", str(work / "wd"),
            *_options(data, {"--junit": st.just(str(work / "j.xml")), "--json": _FLAG})]


def _tournament(data: st.DataObject, files: dict[str, Path], work: Path) -> list[str]:
    ckpt = str(_copy_mutated(data, files["ckpt"], work))
    agent = data.draw(st.sampled_from(["random", "scripted", ckpt, "nope", str(files["a"])]))
    fmt = data.draw(st.sampled_from(["gauntlet", "round-robin", "match"]))
    head: list[str] = {"gauntlet": ["gauntlet", "--agent", agent], "round-robin": ["round-robin", "--agents", agent],
                       "match": ["match", agent, "nope"]}[fmt]
    # keep matches from being played: at least one setting is invalid or there are no matches
    return ["tournament", *head, "--matches", data.draw(st.sampled_from(["-1", "0", "x"])), "--out", str(work / "t"),
            *_options(data, {"--bots": _INTS, "--timelimit": _FLOATS, "--fraglimit": _INTS, "--frameskip": _INTS,
                             "--concurrency": _INTS, "--match-timeout": _FLOATS, "--max-attempts": _INTS,
                             "--bot-names": st.sampled_from(["Nope", "Blazkowicz"])})]


_COMMANDS: dict[str, Any] = {"evaluate": _evaluate, "compare": _compare, "conformance": _conformance,
                             "tournament": _tournament}


def run_cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """Run ``evaltk argv`` in-process; return (status, stdout, stderr). argparse's exits count as their status."""
    try:
        status = main(argv)
    except SystemExit as exc:
        status = exc.code if isinstance(exc.code, int) else 2
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def check_clean(argv: list[str], status: int, out: str, err: str) -> None:
    """Assert one run ended cleanly: no traceback, no internal error, a failure ends with an ``error:`` line.

    ``conformance run`` exits 1 when a case fails (the gate's verdict, reported on stdout): that is clean.
    """
    assert "Traceback" not in err + out, (argv, err)
    assert status != 70, (argv, err)
    if status == 1 and argv[:2] == ["conformance", "run"] and out.strip():
        return
    if status != 0:
        lines = [x for x in err.strip().splitlines() if x.strip()]
        assert lines, (argv, out, err)
        assert lines[-1].startswith("error: "), (argv, out, err)
        assert sum(x.startswith("error:") for x in lines) == 1, (argv, out, err)


def _fuzz(files: dict[str, Path], tmp: Path, capsys: pytest.CaptureFixture[str], data: st.DataObject) -> None:
    work = tmp / "w"
    if work.exists():
        shutil.rmtree(work)
    work.mkdir()
    command = data.draw(st.sampled_from(sorted(_COMMANDS)), label="command")
    argv = _COMMANDS[command](data, files, work)
    status, out, err = run_cli(argv, capsys)
    check_clean(argv, status, out, err)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_cli_never_tracebacks(files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str],
                              data: st.DataObject) -> None:
    _fuzz(files, tmp_path, capsys, data)


@pytest.mark.slow
@settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_cli_never_tracebacks_long(files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                   data: st.DataObject) -> None:
    _fuzz(files, tmp_path, capsys, data)


def test_unexpected_exception_is_one_line_with_debug_escape(capsys: pytest.CaptureFixture[str],
                                                            monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """An exception evaltk did not expect (a bug, injected here) is one line and status 70; --debug shows it."""
    import evaltk.cli.main as cli_main

    def boom(_: Any) -> int:
        raise ZeroDivisionError("division by zero")

    parser = cli_main.build_parser()
    monkeypatch.setattr(cli_main, "build_parser", lambda: parser)
    args = parser.parse_args(["compare", "a", "b", "--margin", "1"])
    monkeypatch.setattr(parser, "parse_args", lambda argv: args)
    args.func = boom
    status, _, err = run_cli(["compare"], capsys)
    assert status == 70
    lines = err.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("error: internal error ZeroDivisionError: division by zero")
    assert "bug" in lines[0]
    assert "--debug" in lines[0]
    monkeypatch.setenv("EVALTK_DEBUG", "1")
    status, _, err = run_cli(["compare"], capsys)
    assert status == 70
    assert "Traceback" in err
    assert "ZeroDivisionError" in err


def _table_args(tmp: Path) -> list[str]:
    (tmp / "a.csv").write_text(_TABLE)
    return [str(tmp / "a.csv"), str(tmp / "a.csv")]


#: Crashes the fuzzer found in commands this test's author owns, now one error line each.
_FIXED = [
    ["tournament", "gauntlet", "--agent", "random", "--bots", "1", "--matches", "1", "--seed", "-1"],
    ["tournament", "gauntlet", "--agent", "random", "--bots", "1", "--matches", "1", "--timelimit", "nan"],
    ["tournament", "gauntlet", "--agent", "random", "--bots", "1", "--matches", "1", "--timelimit", "inf"],
    ["tournament", "gauntlet", "--agent", "random", "--bots", "1", "--matches", "1", "--match-timeout", "nan"],
    ["tournament", "gauntlet", "--agent", "random", "--bots", "1", "--matches", "1", "--max-attempts", "0"],
]


@pytest.mark.parametrize("argv", _FIXED, ids=[" ".join(a[-2:]) for a in _FIXED])
def test_fixed_crashes_are_one_error_line(argv: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run_cli([*argv, "--out", str(tmp_path / "t")], capsys)
    check_clean(argv, status, out, err)
    assert status == 2
    assert len(err.strip().splitlines()) == 1


def test_compare_negative_seed_is_an_error_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Found by the fuzzer (numpy ValueError from ``default_rng(-1)``); fixed in compare's option parsing."""
    argv = ["compare", *_table_args(tmp_path), "--margin", "1", "--resamples", "199", "--bootstrap-seed", "-1"]
    status, out, err = run_cli(argv, capsys)
    check_clean(argv, status, out, err)
    assert status == 2
