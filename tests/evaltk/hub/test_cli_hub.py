"""``evaltk evaluate hf://ORG/REPO`` downloads through the real ``huggingface_hub`` client from a Hub on 127.0.0.1.

Each command runs as its own ``python -m evaltk`` process: ``huggingface_hub`` reads ``HF_ENDPOINT``,
``HF_HOME`` and ``HF_HUB_OFFLINE`` when it is imported, as it does for a user. The client fills its
own cache under a temporary ``HF_HOME``; the second run of the same command, with the server
stopped and ``HF_HUB_OFFLINE=1``, reads that cache and writes the same table.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evaltk.evaluation.scores import read_scores
from tests.evaltk.hub.hub_server import HubServer
from tests.evaltk.hub.repos import EMPTY_REPO, ENV_ID, EVIL_REPO, SB3_REPO, SF_DOOM_REPO, SF_REPO
from tests.evaltk.hub.run import error_of, evaltk, rows, snapshot

EPISODES = ["--episodes", "2", "--num-envs", "2", "--workers", "0", "--seed", "0"]


def test_evaluate_downloads_an_sb3_repo_then_replays_it_offline(hub: HubServer, tmp_path: Path) -> None:
    hf_home = tmp_path / "hf"
    sha = hub.repos[SB3_REPO].refs["main"]
    with hub.serve() as url:
        online = evaltk(["evaluate", f"hf://{SB3_REPO}", *EPISODES, "--out", str(tmp_path / "online")], hf_home,
                        endpoint=url)
    assert online.returncode == 0, online.stderr
    asked = {(method, path.split("/resolve/")[-1]) for method, path in hub.log}
    assert ("GET", f"/api/models/{SB3_REPO}/revision/main") in asked
    assert ("GET", f"/api/models/{SB3_REPO}/tree/{sha}") in asked
    assert ("HEAD", f"{sha}/a2c-{ENV_ID}.zip") in asked
    assert ("GET", f"{sha}/args.yml") in asked
    assert not any("replay.mp4" in path for _, path in asked)  # only what evaltk reads is downloaded
    snap = snapshot(hf_home, SB3_REPO, sha)
    assert (snap / f"a2c-{ENV_ID}.zip").is_file()
    assert not (snap / "replay.mp4").exists()

    label = f"hf://{SB3_REPO}@{sha}/a2c-{ENV_ID}.zip"
    online_rows = rows(tmp_path / "online")
    assert [r["checkpoint"] for r in online_rows] == [label, label]
    assert [r["env_id"] for r in online_rows] == [ENV_ID, ENV_ID]  # read from the repo's args.yml
    assert all(int(r["frames"]) > 0 for r in online_rows)
    provenance = {"checkpoint": {"source": "hf", "repo": SB3_REPO, "revision": sha, "path": f"a2c-{ENV_ID}.zip"}}
    assert read_scores(tmp_path / "online").provenance == provenance  # the manifest's provenance field
    assert json.loads((tmp_path / "online" / "summary.json").read_text())["provenance"] == provenance

    offline = evaltk(["evaluate", f"hf://{SB3_REPO}", *EPISODES, "--out", str(tmp_path / "offline")], hf_home,
                     offline=True)
    assert offline.returncode == 0, offline.stderr
    assert rows(tmp_path / "offline") == online_rows


def test_evaluate_plays_a_sample_factory_run_from_the_hub(hub: HubServer, tmp_path: Path) -> None:
    if SF_REPO not in hub.repos:
        pytest.skip("needs sample-factory (pip install sample-factory)")
    sha = hub.repos[SF_REPO].refs["main"]
    with hub.serve() as url:
        proc = evaltk(["evaluate", f"hf://{SF_REPO}@main", "--episodes", "1", "--num-envs", "1", "--workers", "0",
                       "--out", str(tmp_path / "e")],
                      tmp_path / "hf", endpoint=url)
    assert proc.returncode == 0, proc.stderr
    sf_rows = rows(tmp_path / "e")
    assert [r["checkpoint"] for r in sf_rows] == [f"hf://{SF_REPO}@{sha}/checkpoint_p0/checkpoint_000000001_1.pth"]
    assert [r["env_id"] for r in sf_rows] == [ENV_ID]  # Sample Factory's atari_breakout, from config.json
    assert not any(".summary" in path for _, path in hub.log)


def test_a_sample_factory_doom_folder_from_the_hub_plays_without_sample_factory(
        hub: HubServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``evaltk evaluate hf://ORG/REPO`` of a Sample Factory Doom run, in a Python that cannot see Sample Factory."""
    pytest.importorskip("vizdoom", reason="needs vizdoom (pip install 'evaltk[doom]')")
    from tests.evaltk.importers.without_sf import python_without_sf

    _, env = python_without_sf(tmp_path / "site", cache=tmp_path / "unused")
    monkeypatch.setenv("PYTHONPATH", env["PYTHONPATH"])
    sha = hub.repos[SF_DOOM_REPO].refs["main"]
    with hub.serve() as url:
        proc = evaltk(["evaluate", f"hf://{SF_DOOM_REPO}", "--episodes", "2", "--num-envs", "1", "--workers", "0",
                       "--out", str(tmp_path / "e")], tmp_path / "hf", endpoint=url, python=["-S", "-m", "evaltk"])
    assert proc.returncode == 0, proc.stderr[-2000:]
    file = "checkpoint_p0/checkpoint_000000004_8192.pth"  # the run's one checkpoint
    label = f"hf://{SF_DOOM_REPO}@{sha}/{file}"
    assert [r["checkpoint"] for r in rows(tmp_path / "e")] == [label, label]
    assert [r["env_id"] for r in rows(tmp_path / "e")] == ["sf_doom_basic"] * 2  # config.json's doom_basic, rebuilt
    assert proc.stderr.count(f"note: {label} was imported from sample-factory") == 1


def test_a_hostile_pickle_in_a_hub_repo_is_refused_as_from_a_local_path(hub: HubServer, tmp_path: Path) -> None:
    sha = hub.repos[EVIL_REPO].refs["main"]
    with hub.serve() as url:
        proc = evaltk(["evaluate", f"hf://{EVIL_REPO}", "--episodes", "1", "--out", str(tmp_path / "e")],
                      tmp_path / "hf", endpoint=url)
    zip_path = snapshot(tmp_path / "hf", EVIL_REPO, sha) / "ppo-CartPole-v1.zip"
    assert error_of(proc) == (f"error: refused: {zip_path}:policy.pth pickles 'posix.system' (only tensors and plain "
                            "data are read)")
    assert not hub.marker.exists()


def test_a_repo_without_a_checkpoint_lists_what_it_holds(hub: HubServer, tmp_path: Path) -> None:
    sha = hub.repos[EMPTY_REPO].refs["main"]
    with hub.serve() as url:
        proc = evaltk(["evaluate", f"hf://{EMPTY_REPO}", "--out", str(tmp_path / "e")], tmp_path / "hf",
                      endpoint=url)
    assert error_of(proc) == (f"error: hf://{EMPTY_REPO}@{sha} holds no checkpoint evaltk can read (found: "
                            ".gitattributes, notes.txt, replay.mp4): point /PATH at an evaltk checkpoint folder, an "
                            "SB3 .zip, a Sample Factory run or a CleanRL .cleanrl_model")


@pytest.mark.slow
def test_unknown_repo_and_revision_are_one_error_line(hub: HubServer, tmp_path: Path) -> None:
    with hub.serve() as url:
        repo = evaltk(["evaluate", "hf://evaltk-tests/absent", "--out", str(tmp_path / "a")], tmp_path / "hf",
                      endpoint=url)
        rev = evaltk(["evaluate", f"hf://{EMPTY_REPO}@v9", "--out", str(tmp_path / "b")], tmp_path / "hf",
                     endpoint=url)
    assert error_of(repo) == ("error: hf://evaltk-tests/absent: repo evaltk-tests/absent is not on the Hub (or is "
                            "private: log in with hf auth login): check ORG/REPO")
    assert error_of(rev) == (f"error: hf://{EMPTY_REPO}@v9: revision 'v9' is not in {EMPTY_REPO} on the Hub: pass a "
                           "branch, tag or commit sha the repo has")


def test_offline_without_the_repo_in_the_cache_names_hf_hub_offline(tmp_path: Path) -> None:
    proc = evaltk(["evaluate", f"hf://{SB3_REPO}@v1", "--out", str(tmp_path / "e")], tmp_path / "hf", offline=True)
    assert error_of(proc) == (f"error: hf://{SB3_REPO}@v1: {SB3_REPO}@v1 is not in the Hugging Face cache and "
                            "HF_HUB_OFFLINE=1 forbids downloading it: unset HF_HUB_OFFLINE and run once online (or "
                            "set HF_HOME to the cache that holds it)")


def test_without_huggingface_hub_the_error_names_the_extra(tmp_path: Path) -> None:
    code = ("import sys; sys.modules['huggingface_hub'] = None; from evaltk.cli.main import main; "
            f"sys.exit(main(['evaluate', 'hf://{SB3_REPO}', '--out', {str(tmp_path / 'e')!r}]))")
    proc = evaltk([], tmp_path / "hf", python=["-c", code])
    assert error_of(proc) == ("error: hf:// checkpoints need huggingface_hub, which is not installed: pip install "
                            "'evaltk[hub]'")
