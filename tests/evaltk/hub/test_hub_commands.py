"""``import``, ``validate`` and suite cases take ``hf://`` locations too, and record the repo and the commit."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.evaltk.hub.hub_server import HubServer
from tests.evaltk.hub.repos import ENV_ID, EVALTK_REPO, SB3_REPO
from tests.evaltk.hub.run import error_of, evaltk, rows

FILE = f"a2c-{ENV_ID}.zip"


def test_import_records_the_origin_in_policy_json(hub: HubServer, tmp_path: Path) -> None:
    sha = hub.repos[SB3_REPO].refs["main"]
    out = tmp_path / "ckpt"
    with hub.serve() as url:
        proc = evaltk(["import", f"hf://{SB3_REPO}", "--out", str(out)], tmp_path / "hf", endpoint=url)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[0] == f"imported hf://{SB3_REPO}@{sha}/{FILE} (sb3) -> {out}"
    spec = json.loads((out / "policy.json").read_text())
    assert spec["env"]["env_id"] == ENV_ID
    assert spec["provenance"]["import"]["origin"] == {
        "source": "hf", "repo": SB3_REPO, "revision": sha, "path": FILE, "format": "sb3", "env_id": ENV_ID,
        "env_id_from": "args.yml"}


def test_a_repo_of_two_checkpoints_asks_for_a_path_and_an_evaltk_one_needs_no_import(hub: HubServer,
                                                                                    tmp_path: Path) -> None:
    sha = hub.repos[EVALTK_REPO].refs["main"]
    with hub.serve() as url:
        both = evaltk(["import", f"hf://{EVALTK_REPO}", "--out", str(tmp_path / "o")], tmp_path / "hf", endpoint=url)
        one = evaltk(["import", f"hf://{EVALTK_REPO}/scripted", "--out", str(tmp_path / "o")], tmp_path / "hf",
                     endpoint=url)
    assert error_of(both) == (f"error: hf://{EVALTK_REPO}@{sha} holds 2 checkpoints (random, scripted): pick one with "
                              f"hf://{EVALTK_REPO}@{sha}/PATH")
    assert error_of(one) == (f"error: hf://{EVALTK_REPO}@{sha}/scripted is already an evaltk checkpoint: pass it to "
                             "evaltk evaluate or validate as it is")


@pytest.mark.slow
def test_validate_and_a_suite_case_read_a_hub_checkpoint_offline(hub: HubServer, tmp_path: Path) -> None:
    sha = hub.repos[SB3_REPO].refs["main"]
    hf_home = tmp_path / "hf"
    episodes = ["--episodes", "2", "--num-envs", "2", "--workers", "0", "--seed", "0"]
    with hub.serve() as url:
        first = evaltk(["evaluate", f"hf://{SB3_REPO}", *episodes, "--out", str(tmp_path / "base")], hf_home,
                       endpoint=url)
    assert first.returncode == 0, first.stderr

    validate = evaltk(["validate", f"hf://{SB3_REPO}@main", "--sim", "gym", "--baseline",
                       str(tmp_path / "base" / "episodes.csv"), "--margin", "5", *episodes, "--out",
                       str(tmp_path / "v")], hf_home, offline=True)
    assert validate.returncode == 0, validate.stderr
    report = json.loads((tmp_path / "v" / "report.json").read_text())
    assert report["checkpoint"] == f"hf://{SB3_REPO}@{sha}/{FILE}"
    assert report["provenance"] == {"checkpoint": {"source": "hf", "repo": SB3_REPO, "revision": sha, "path": FILE}}
    assert (f"Checkpoint from the Hugging Face Hub: repo `{SB3_REPO}` at revision `{sha}`, file `{FILE}`."
            in (tmp_path / "v" / "report.md").read_text())

    suite = tmp_path / "hub_suite.toml"
    suite.write_text(f'[suite]\nname = "hub"\n\n[[case]]\nkind = "transfer"\nname = "sb3-from-hub"\n'
                     f'checkpoint = "hf://{SB3_REPO}"\nepisodes = 2\nseed = 0\nseed_b = 0\n'
                     f'baseline = "{tmp_path / "base" / "episodes.csv"}"\nsimulator_b = "gym"\nnum_envs = 2\n'
                     'margin = 5.0\nmargin_kind = "absolute"\nexpect = "inconclusive"\n')
    run = evaltk(["conformance", "run", str(suite), "--workdir", str(tmp_path / "w")], hf_home, offline=True)
    assert run.returncode == 0, run.stdout + run.stderr  # 2 episodes a side: inconclusive (a verdict needs 10)
    assert {r["checkpoint"] for r in rows(tmp_path / "w" / "sb3-from-hub" / "b")} == {f"hf://{SB3_REPO}@{sha}/{FILE}"}


@pytest.mark.slow
def test_a_tournament_plays_a_hub_agent_and_names_it_by_its_commit(hub: HubServer, tmp_path: Path) -> None:
    pytest.importorskip("vizdoom", reason="needs vizdoom (pip install 'evaltk[doom]')")
    from evaltk import policies
    from evaltk.tournament.agents import builtin_env

    folder = policies.save_builtin(tmp_path / "doom", "scripted", builtin_env())
    sha = hub.repo("evaltk-tests/doom-scripted").push({p.name: p.read_bytes() for p in folder.iterdir()})
    label = f"hf://evaltk-tests/doom-scripted@{sha}"
    with hub.serve() as url:
        proc = evaltk(["tournament", "gauntlet", "--agent", "hf://evaltk-tests/doom-scripted", "--bots", "1",
                       "--matches", "1", "--timelimit", "0.25", "--concurrency", "1", "--out", str(tmp_path / "t"),
                       "--json"], tmp_path / "hf", endpoint=url)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    summary = json.loads(proc.stdout.strip().splitlines()[-1])
    assert summary["matches_played"] == 1
    assert summary["sources"] == {label: {"source": "hf", "repo": "evaltk-tests/doom-scripted", "revision": sha,
                                          "path": None}}
    assert f"{label}=" in proc.stdout  # the match line names the agent by its pinned label
