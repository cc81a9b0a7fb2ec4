"""``trace`` and ``bots`` cases take ``hf://`` checkpoints (evaltk.locations), from the tests' local Hub server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conformance.trace import load
from tests.evaltk.hub.conftest import hub  # noqa: F401  (the session's local Hub server, a fixture)
from tests.evaltk.hub.hub_server import HubServer
from tests.evaltk.hub.run import evaltk

SUITES = Path(__file__).resolve().parents[2] / "suites"
A2C = SUITES / "checkpoints" / "a2c_breakout"
SHIPPED = SUITES / "traces" / "breakout_a2c_policy_seed1_4000.npz"
A2C_REPO = "evaltk-tests/a2c-breakout-evaltk"


def _run_suite(text: str, tmp_path: Path, url: str) -> dict[str, dict[str, object]]:
    suite = tmp_path / "suite.toml"
    suite.write_text('[suite]\nname = "hub-cases"\n\n' + text)
    proc = evaltk(["conformance", "run", str(suite), "--workdir", str(tmp_path / "w"), "--json"], tmp_path / "hf",
                  endpoint=url)
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr
    cases = json.loads(proc.stdout.strip().splitlines()[-1])["cases"]
    return {c["name"]: c for c in cases}


def test_a_trace_case_replays_and_records_an_hf_checkpoint(hub: HubServer, tmp_path: Path) -> None:  # noqa: F811
    sha = hub.repo(A2C_REPO).push({p.name: p.read_bytes() for p in A2C.iterdir()})
    with hub.serve() as url:
        cases = _run_suite(
            f'[[case]]\nkind = "trace"\nname = "shipped"\ncheckpoint = "hf://{A2C_REPO}"\nseed = 1\nframes = 300\n'
            f'trace_file = "{SHIPPED}"\nsimulator = "gpu_env"\n\n'
            f'[[case]]\nkind = "trace"\nname = "recorded"\ncheckpoint = "hf://{A2C_REPO}@main"\nseed = 2\n'
            'frames = 200\nsimulator = "gpu_env"\n', tmp_path, url)
    assert cases["shipped"]["outcome"] == "passed", cases["shipped"]["message"]
    assert cases["shipped"]["message"] == "300 frames identical on gpu_env (4000 recorded)"
    assert cases["recorded"]["outcome"] == "passed", cases["recorded"]["message"]
    recorded = load(next((tmp_path / "w" / "traces").glob("policy_*_seed2_frames200.npz")))
    assert recorded.header["actions"]["checkpoint"] == f"hf://{A2C_REPO}@{sha}"  # the pinned label, not the cache


def test_a_trace_case_names_the_hub_checkpoint_whose_weights_differ(hub: HubServer, tmp_path: Path) -> None:  # noqa: F811
    files = {p.name: p.read_bytes() for p in A2C.iterdir()}
    weights = bytearray(files["policy.safetensors"])
    weights[-1] ^= 1
    hub.repo("evaltk-tests/a2c-breakout-changed").push({**files, "policy.safetensors": bytes(weights)})
    with hub.serve() as url:
        cases = _run_suite(
            '[[case]]\nkind = "trace"\nname = "changed"\ncheckpoint = "hf://evaltk-tests/a2c-breakout-changed"\n'
            f'seed = 1\nframes = 300\ntrace_file = "{SHIPPED}"\nsimulator = "gpu_env"\n', tmp_path, url)
    assert cases["changed"]["outcome"] == "failed"
    assert "record the trace again from this checkpoint" in str(cases["changed"]["message"])


@pytest.mark.slow
def test_a_bots_case_plays_an_hf_checkpoint(hub: HubServer, tmp_path: Path) -> None:  # noqa: F811
    pytest.importorskip("vizdoom", reason="needs vizdoom (pip install 'evaltk[doom]')")
    from evaltk import policies
    from evaltk.tournament.agents import builtin_env

    folder = policies.save_builtin(tmp_path / "doom", "scripted", builtin_env())  # the scripted Doom agent
    hub.repo("evaltk-tests/doom-scripted-bots").push({p.name: p.read_bytes() for p in folder.iterdir()})
    with hub.serve() as url:
        cases = _run_suite(
            '[[case]]\nkind = "bots"\nname = "hub-agent"\ncheckpoint = "hf://evaltk-tests/doom-scripted-bots"\n'
            'matches = 1\nbots = 1\ntimelimit = 0.25\nconcurrency = 1\nmin_win_rate = 0.0\n', tmp_path, url)
    case = cases["hub-agent"]
    assert case["outcome"] == "passed", case["message"]
    assert case["matches_played"] == 1


def test_conformance_record_takes_an_hf_checkpoint(hub: HubServer, tmp_path: Path) -> None:  # noqa: F811
    sha = hub.repo(A2C_REPO).push({p.name: p.read_bytes() for p in A2C.iterdir()})
    out = tmp_path / "policy.npz"
    with hub.serve() as url:
        proc = evaltk(["conformance", "record", "--checkpoint", f"hf://{A2C_REPO}", "--frames", "100", "--seed", "1",
                       "--out", str(out)], tmp_path / "hf", endpoint=url)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    header = load(out).header
    assert header["actions"]["checkpoint"] == f"hf://{A2C_REPO}@{sha}"
    shipped = load(SHIPPED)
    assert header["actions"]["weights_sha256"] == shipped.header["actions"]["weights_sha256"]
    assert (load(out).action == shipped.action[:100]).all()  # the same play as the local checkpoint's, seed 1
