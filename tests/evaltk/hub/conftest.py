"""The Hub every test of this folder downloads from: real repos built once per session, served on demand."""

from __future__ import annotations

import pytest

from tests.evaltk.hub import repos
from tests.evaltk.hub.hub_server import HubServer
from tests.evaltk.hub.repos import EMPTY_REPO, EVALTK_REPO, EVIL_REPO, SB3_REPO, SF_DOOM_REPO, SF_REPO


def _has_sample_factory() -> bool:
    try:
        import sample_factory  # noqa: F401
    except ImportError:
        return False
    return True


@pytest.fixture(scope="session")
def hub(tmp_path_factory: pytest.TempPathFactory) -> HubServer:
    """Return the repos to ``serve()``: RL Zoo SB3, Sample Factory (Atari, Doom), a hostile SB3 zip, notes, evaltk."""
    pytest.importorskip("huggingface_hub", reason="needs huggingface_hub (pip install 'evaltk[hub]')")
    pytest.importorskip("stable_baselines3", reason="needs stable-baselines3 (pip install stable-baselines3)")
    tmp = tmp_path_factory.mktemp("repos")
    server = HubServer()
    server.repo(SB3_REPO).push(repos.sb3_repo(tmp))
    if _has_sample_factory():
        server.repo(SF_REPO).push(repos.sample_factory_repo())
    server.repo(SF_DOOM_REPO).push(repos.sf_doom_repo())  # the committed run: no Sample Factory needed
    server.marker = tmp / "PWNED_hub"
    server.repo(EVIL_REPO).push(repos.hostile_sb3_repo(tmp, server.marker))
    server.repo(EMPTY_REPO).push({".gitattributes": b"*.mp4 filter=lfs\n", "notes.txt": b"nothing to run\n",
                                  "replay.mp4": b"\x00video"})
    server.repo(EVALTK_REPO).push(repos.evaltk_repo(tmp))
    return server
