"""``evaltk evaluate hf://ORG/REPO`` downloads through the real ``huggingface_hub`` client from a Hub on 127.0.0.1.

Each command runs as its own ``python -m evaltk`` process: ``huggingface_hub`` reads ``HF_ENDPOINT``,
``HF_HOME`` and ``HF_HUB_OFFLINE`` when it is imported, as it does for a user. The client fills its
own cache under a temporary ``HF_HOME``; the second run of the same command, with the server
stopped and ``HF_HUB_OFFLINE=1``, reads that cache and writes the same table.
"""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.evaltk.hub.hub_server import HubServer
from tests.evaltk.hub.repos import ENV_ID, hostile_sb3_repo, sample_factory_repo, sb3_repo

pytest.importorskip("huggingface_hub", reason="needs huggingface_hub (pip install 'evaltk[hub]')")
pytest.importorskip("stable_baselines3", reason="needs stable-baselines3 (pip install stable-baselines3)")

ROOT = Path(__file__).resolve().parents[3]
SB3_REPO = f"evaltk-tests/ppo-{ENV_ID}"
SF_REPO = "evaltk-tests/sf-atari-breakout"
EVIL_REPO = "evaltk-tests/ppo-CartPole-v1"
EMPTY_REPO = "evaltk-tests/notes"
EPISODES = ["--episodes", "2", "--num-envs", "2", "--workers", "0", "--seed", "0"]


@pytest.fixture(scope="module")
def hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HubServer]:
    """The repos served: an RL Zoo SB3 model, a Sample Factory run, a hostile SB3 zip and a repo of notes."""
    tmp = tmp_path_factory.mktemp("repos")
    server = HubServer()
    server.repo(SB3_REPO).push(sb3_repo(tmp))
    if _has_sample_factory():
        server.repo(SF_REPO).push(sample_factory_repo())
    server.marker = tmp / "PWNED_hub"  # type: ignore[attr-defined]
    server.repo(EVIL_REPO).push(hostile_sb3_repo(tmp, server.marker))  # type: ignore[attr-defined]
    server.repo(EMPTY_REPO).push({"README.md": b"# notes\n", "notes.txt": b"nothing to run\n",
                                  "replay.mp4": b"\x00video"})
    yield server


def _has_sample_factory() -> bool:
    try:
        import sample_factory  # noqa: F401
    except ImportError:
        return False
    return True


def evaltk(args: list[str], hf_home: Path, *, endpoint: str | None = None, offline: bool = False,
           python: list[str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``python -m evaltk args`` with the Hub cache in ``hf_home`` (and the importers' cache next to it)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("HF_")}
    env.update(HF_HOME=str(hf_home), XDG_CACHE_HOME=str(hf_home.parent / "xdg"), HF_HUB_DISABLE_TELEMETRY="1",
               PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")])))
    if endpoint is not None:
        env["HF_ENDPOINT"] = endpoint
    if offline:
        env["HF_HUB_OFFLINE"] = "1"
    return subprocess.run([sys.executable, *(python or ["-m", "evaltk"]), *args], env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=300, check=False)


def _rows(out: Path) -> list[dict[str, str]]:
    with open(out / "episodes.csv", newline="") as fh:
        return list(csv.DictReader(fh))


def _error(proc: subprocess.CompletedProcess[str]) -> str:
    """The one ``error:`` line of a failed command (exit status 2)."""
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2, proc.stderr
    assert len(lines) == 1 and lines[0].startswith("error: "), lines
    return lines[0]


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
    assert ("HEAD", f"{sha}/ppo-{ENV_ID}.zip") in asked and ("GET", f"{sha}/args.yml") in asked
    assert not any("replay.mp4" in path for _, path in asked)  # only what evaltk reads is downloaded
    snapshot = hf_home / "hub" / f"models--{SB3_REPO.replace('/', '--')}" / "snapshots" / sha
    assert (snapshot / f"ppo-{ENV_ID}.zip").is_file() and not (snapshot / "replay.mp4").exists()

    label = f"hf://{SB3_REPO}@{sha}/ppo-{ENV_ID}.zip"
    rows = _rows(tmp_path / "online")
    assert [r["checkpoint"] for r in rows] == [label, label]
    assert [r["env_id"] for r in rows] == [ENV_ID, ENV_ID]  # read from the repo's args.yml
    assert all(int(r["frames"]) > 0 for r in rows)
    source = {"hub": "huggingface", "repo": SB3_REPO, "revision": sha, "path": f"ppo-{ENV_ID}.zip"}
    settings = json.loads((tmp_path / "online" / "evaluation.json").read_text())["settings"]
    assert settings["source"] == source
    assert json.loads((tmp_path / "online" / "summary.json").read_text())["source"] == source

    offline = evaltk(["evaluate", f"hf://{SB3_REPO}", *EPISODES, "--out", str(tmp_path / "offline")], hf_home,
                     offline=True)
    assert offline.returncode == 0, offline.stderr
    assert _rows(tmp_path / "offline") == rows


def test_evaluate_plays_a_sample_factory_run_from_the_hub(hub: HubServer, tmp_path: Path) -> None:
    if SF_REPO not in hub.repos:
        pytest.skip("needs sample-factory (pip install sample-factory)")
    sha = hub.repos[SF_REPO].refs["main"]
    with hub.serve() as url:
        proc = evaltk(["evaluate", f"hf://{SF_REPO}@main", *EPISODES, "--out", str(tmp_path / "e")],
                      tmp_path / "hf", endpoint=url)
    assert proc.returncode == 0, proc.stderr
    rows = _rows(tmp_path / "e")
    assert [r["checkpoint"] for r in rows] == [f"hf://{SF_REPO}@{sha}/checkpoint_p0/checkpoint_000000001_1.pth"] * 2
    assert [r["env_id"] for r in rows] == [ENV_ID] * 2  # Sample Factory's atari_breakout, from config.json
    assert not any(".summary" in path for _, path in hub.log)


def test_a_hostile_pickle_in_a_hub_repo_is_refused_as_from_a_local_path(hub: HubServer, tmp_path: Path) -> None:
    sha = hub.repos[EVIL_REPO].refs["main"]
    with hub.serve() as url:
        proc = evaltk(["evaluate", f"hf://{EVIL_REPO}", "--episodes", "1", "--out", str(tmp_path / "e")],
                      tmp_path / "hf", endpoint=url)
    zip_path = tmp_path / "hf" / "hub" / f"models--{EVIL_REPO.replace('/', '--')}" / "snapshots" / sha / \
        "ppo-CartPole-v1.zip"
    assert _error(proc) == (f"error: refused: {zip_path}:policy.pth pickles 'posix.system' (only tensors and plain "
                            "data are read)")
    assert not hub.marker.exists()  # type: ignore[attr-defined]


def test_a_repo_without_a_checkpoint_lists_what_it_holds(hub: HubServer, tmp_path: Path) -> None:
    sha = hub.repos[EMPTY_REPO].refs["main"]
    with hub.serve() as url:
        proc = evaltk(["evaluate", f"hf://{EMPTY_REPO}", "--out", str(tmp_path / "e")], tmp_path / "hf",
                      endpoint=url)
    assert _error(proc) == (f"error: hf://{EMPTY_REPO}@{sha} holds no checkpoint evaltk can read (found: README.md, "
                            "notes.txt, replay.mp4): point /PATH at an evaltk checkpoint folder, an SB3 .zip, a "
                            "Sample Factory run or a CleanRL .cleanrl_model")


def test_unknown_repo_and_revision_are_one_error_line(hub: HubServer, tmp_path: Path) -> None:
    with hub.serve() as url:
        repo = evaltk(["evaluate", "hf://evaltk-tests/absent", "--out", str(tmp_path / "a")], tmp_path / "hf",
                      endpoint=url)
        rev = evaltk(["evaluate", f"hf://{EMPTY_REPO}@v9", "--out", str(tmp_path / "b")], tmp_path / "hf",
                     endpoint=url)
    assert _error(repo) == ("error: hf://evaltk-tests/absent: repo evaltk-tests/absent is not on the Hub (or is "
                            "private: log in with hf auth login): check ORG/REPO")
    assert _error(rev) == (f"error: hf://{EMPTY_REPO}@v9: revision 'v9' is not in {EMPTY_REPO} on the Hub: pass a "
                           "branch, tag or commit sha the repo has")


def test_offline_without_the_repo_in_the_cache_names_hf_hub_offline(tmp_path: Path) -> None:
    proc = evaltk(["evaluate", f"hf://{SB3_REPO}@v1", "--out", str(tmp_path / "e")], tmp_path / "hf", offline=True)
    assert _error(proc) == (f"error: hf://{SB3_REPO}@v1: {SB3_REPO}@v1 is not in the Hugging Face cache and "
                            "HF_HUB_OFFLINE=1 forbids downloading it: unset HF_HUB_OFFLINE and run once online (or "
                            "set HF_HOME to the cache that holds it)")


def test_without_huggingface_hub_the_error_names_the_extra(tmp_path: Path) -> None:
    code = ("import sys; sys.modules['huggingface_hub'] = None; from evaltk.cli.main import main; "
            f"sys.exit(main(['evaluate', 'hf://{SB3_REPO}', '--out', {str(tmp_path / 'e')!r}]))")
    proc = evaltk([], tmp_path / "hf", python=["-c", code])
    assert _error(proc) == ("error: hf:// checkpoints need huggingface_hub, which is not installed: pip install "
                            "'evaltk[hub]'")
