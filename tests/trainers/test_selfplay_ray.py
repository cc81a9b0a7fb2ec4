"""The population on Ray (``--executor ray``) on a real two-node loopback cluster, with a node lost mid-run.

Two members start as actors on the two nodes; PBT exchanges weights and hyperparameters; the second node is
SIGKILLed (raylet, workers, players, engines) while its member plays, and that member resumes from its last
checkpoint on the head. Then: nothing lost or duplicated, and no engine process or ViZDoom shared-memory file
of the run left behind.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import torch

from evaltk import checkpoint as evaltk_checkpoint
from evaltk.envs.shm_reaper import own_segments
from tests.evaltk.executor.cluster import LocalCluster
from trainers.appo import bc, checkpointing
from trainers.appo.config import AppoConfig
from trainers.appo.runner import build_model
from trainers.appo.scenario import resolve_scenario
from trainers.appo.selfplay import pbt
from trainers.appo.selfplay import population as pop
from trainers.appo.selfplay.config import SelfPlayConfig, SelfPlayConfigError
from trainers.appo.selfplay.ray_member import MatchOrder, MemberActor

ROOT = Path(__file__).resolve().parents[2]
TINY = ["--hidden-size", "32", "--rnn-size", "32", "--obs-height", "36", "--obs-width", "64", "--rollout", "16",
        "--batch-size", "64"]


@pytest.fixture
def cluster() -> Iterator[LocalCluster]:
    """Yield a two-node cluster (4 engine slots a node) whose workers import this checkout; torn down after."""
    pytest.importorskip("ray", reason="the Ray population test needs the [ray] extra: pip install 'evaltk[ray]'")
    # the cluster's nodes, their actors and the actors' players import this checkout, without Ray token
    # authentication (LocalCluster.exported_env)
    c = LocalCluster(Path(tempfile.mkdtemp(prefix="evaltk-ray-")), engines=4)
    try:
        c.start()
        yield c
    finally:
        c.kill()
        shutil.rmtree(c.tmp, ignore_errors=True)
        assert c.pids() == [], "Ray processes of the test cluster survived the teardown"


def _title(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def _run_processes(cluster: LocalCluster) -> list[tuple[int, str]]:
    """Player and engine processes of the cluster (they inherit its tag)."""
    out = []
    for pid in cluster.pids():
        title = _title(pid)
        if "trainers.appo.selfplay.player" in title or os.path.basename(title.split(" ")[0]) == "vizdoom":
            out.append((pid, title[:80]))
    return out


class Watch:
    """Record every ViZDoom segment the cluster's processes map, every 0.2 s, until stopped."""

    def __init__(self, cluster: LocalCluster) -> None:
        self.cluster, self.seen, self.stop = cluster, set[str](), threading.Event()
        self.thread = threading.Thread(target=self._loop, daemon=True)
        self.thread.start()

    def _loop(self) -> None:
        while not self.stop.is_set():
            for pid in self.cluster.pids():
                self.seen |= own_segments(pid)
            time.sleep(0.2)

    def close(self) -> set[str]:
        self.stop.set()
        self.thread.join()
        return self.seen


def _state(run_dir: Path) -> pop.PopulationState | None:
    try:
        return pop.read(run_dir)
    except pop.PopulationError:  # not written yet (each write is atomic)
        return None


def _wait_for(what: str, check: Any, proc: subprocess.Popen[str], log: Path, timeout_s: float = 600) -> Any:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        if proc.poll() is not None:
            pytest.fail(f"the run exited ({proc.returncode}) before {what}:\n{log.read_text()[-4000:]}")
        time.sleep(0.2)
    pytest.fail(f"no {what} within {timeout_s} s:\n{log.read_text()[-4000:]}")


def _events(state: pop.PopulationState, kind: str) -> list[dict[str, Any]]:
    return [e for e in state.cluster_events if e["kind"] == kind]


@pytest.mark.parametrize(("changes", "message"), [
    ({"executor": "dask"}, "--executor must be one of"),
    ({"ray_address": "127.0.0.1:6379"}, "needs --executor ray"),
    ({"executor": "ray", "ray_member_cpus": 0.0}, "--ray-member-cpus must be in"),
])
def test_ray_options_are_checked(changes: dict[str, Any], message: str) -> None:
    SelfPlayConfig(executor="ray", ray_address="127.0.0.1:6379", ray_member_cpus=0.5).check()
    with pytest.raises(SelfPlayConfigError, match=message):
        SelfPlayConfig(**changes).check()


@pytest.mark.vizdoom
def test_member_actor_plays_trains_checkpoints_resumes_and_exploits(tmp_path: Path) -> None:
    """The actor class without Ray: a real duel against another member's weights, then a restart and an exploit."""
    cfg = AppoConfig(scenario="duel", out=str(tmp_path / "run"), obs_height=36, obs_width=64, hidden_size=32,
                     rnn_size=32, rollout=16, batch_size=32)
    sp = SelfPlayConfig(self_play=True, population=2, match_minutes=0.1, persistent_players=False)
    scenario = resolve_scenario(cfg, self_play=True)
    hyper = pbt.defaults(pbt.search_space(cfg.learning_rate, cfg.entropy_coef, dict(scenario.reward_shaping)))
    torch.manual_seed(5)
    initial = {k: v.clone() for k, v in build_model(cfg, scenario).state_dict().items()}  # as --init-from gives it
    actors = [MemberActor(cfg, sp, 0, hyper), MemberActor(cfg, sp, 1, hyper, initial)]
    try:
        _, policy1, _ = actors[1].state(hyper, 0.0, 0)
        assert policy1.tensors.keys() == initial.keys()
        assert all(torch.equal(policy1.tensors[k], t) for k, t in initial.items())  # m1 starts from those weights
        assert not torch.equal(actors[0].model.fc.weight, initial["fc.weight"])
        order = MatchOrder(match_id="t000000", keys=("m1", "m0"), learner_slot=1, seed=3, hyperparams=hyper,
                           train_seconds=1.0, resumes=0)
        reply, policy0, adam0 = actors[0].play(order, policy1, None)
        assert reply.result is not None
        assert reply.result["outcome"] == "played", reply.result["error"]
        me = [p for p in reply.result["participants"] if p["kind"] == "agent"][1]
        assert reply.env_frames == me["decisions"] * scenario.frameskip > 0
        assert reply.train_step >= 1  # at least one batch of 2 rollouts of 16 steps
        _, saved = checkpointing.load_latest(tmp_path / "run" / "members" / "m0")
        assert (saved.train_step, saved.env_frames) == (reply.train_step, reply.env_frames)
        assert list((tmp_path / "run" / "work" / "m0").glob("t*")) == []

        # a restarted actor (its node lost) is built from that checkpoint
        again = MemberActor(cfg, sp, 0, hyper)
        assert (again.member.train_step, again.member.env_frames) == (reply.train_step, reply.env_frames)
        for name, tensor in again.model.state_dict().items():
            assert torch.equal(tensor, policy0.tensors[name]), name

        # PBT: m1 copies m0's weights and Adam state and takes the mutated hyperparameters, checkpointed
        after = {**hyper, "learning_rate": hyper["learning_rate"] * 1.3}
        exploited, _, adam1 = actors[1].exploit(after, policy0, adam0, 2.0, 0)
        assert exploited.train_step == 0
        assert adam1["state"].keys() == adam0["state"].keys()
        assert all(g["lr"] == after["learning_rate"] for g in actors[1].learner.optimizer.param_groups)
        ckpt, _ = checkpointing.load_latest(tmp_path / "run" / "members" / "m1")
        for name, tensor in ckpt.tensors.items():
            assert torch.equal(tensor, policy0.tensors[name]), name
    finally:
        for actor in actors:
            actor.close()


@pytest.mark.slow
@pytest.mark.vizdoom
def test_two_members_on_two_nodes_pbt_and_a_lost_node(cluster: LocalCluster, tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    tiny = AppoConfig(scenario="duel", seed=21, obs_height=36, obs_width=64, hidden_size=32, rnn_size=32)
    scenario = resolve_scenario(tiny, self_play=True)
    init = bc.save_policy(tmp_path, tiny, scenario, build_model(tiny, scenario), 1, 1, name="init")
    cmd = [sys.executable, "-m", "evaltk", "train", "doom", "--scenario", "duel", "--self-play", "--population", "2",
           "--executor", "ray", "--ray-address", cluster.address, "--ray-member-cpus", "0.5", "--out", str(run_dir),
           "--init-from", str(init),
           "--match-minutes", "0.1", "--pbt-period", "100", "--pbt-min-matches", "1", "--pbt-replace-gap", "-1",
           "--snapshot-every-frames", "300", "--max-seconds", "900", "--json", *TINY]
    watch = Watch(cluster)
    log = tmp_path / "driver.log"
    with open(log, "w") as out:
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, text=True)
    try:
        # both members started (on two nodes) and played; a PBT exploit happened
        state = _wait_for("two members with a match each and a PBT event", lambda: (
            (s := _state(run_dir)) is not None and len(_events(s, "member_started")) == 2
            and all(m.tally.matches >= 1 for m in s.members) and s.events and s), proc, log)
        started = {e["member"]: e for e in _events(state, "member_started")}
        second = set(cluster.pids("second"))
        on_second = [m for m, e in started.items() if e["pid"] in second]
        on_head = [m for m, e in started.items() if e["pid"] in set(cluster.pids("head"))]
        assert len(on_second) == len(on_head) == 1, (started, second)
        lost = on_second[0]
        # kill the second node while its member plays a match
        _wait_for("a match on the second node", lambda: "MemberActor.play" in _title(started[lost]["pid"]), proc, log)
        assert cluster.kill("second")
        resumed = _wait_for("the lost member resumed and playing again", lambda: (
            (s := _state(run_dir)) is not None and _events(s, "member_resumed")
            and s.members[lost].tally.matches > state.members[lost].tally.matches and s), proc, log)
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=600)
    finally:
        if proc.poll() is None:
            proc.kill()
        seen = watch.close()
    output = log.read_text()
    assert proc.returncode == 0, output[-4000:]
    summary = json.loads(output.strip().splitlines()[-1])
    assert summary["stopped_by"] == "SIGINT"
    final = pop.read(run_dir)

    # the lost member resumed on the head from its checkpoint; nothing ahead of it had been recorded
    (gone,) = _events(final, "member_lost")
    (back,) = _events(final, "member_resumed")
    assert gone["member"] == back["member"] == lost
    assert back["node"] == started[on_head[0]]["node"] != started[lost]["node"]
    assert back["train_step"] >= gone["train_step"]
    assert back["env_frames"] >= gone["env_frames"]
    assert resumed.members[lost].tally.matches > state.members[lost].tally.matches

    # PBT events; members, matches and metrics consistent; each member's checkpoint is what population.json says
    assert final.events
    assert all(e["kind"] == "exploit_explore" and e["donor"] != e["member"] for e in final.events)
    assert [m.id for m in final.members] == [0, 1]
    assert sorted(p.name for p in (run_dir / "members").iterdir()) == ["m0", "m1"]
    rows = [json.loads(line) for line in (run_dir / "matches.jsonl").read_text().splitlines()]
    assert len({r["match_id"] for r in rows}) == len(rows)
    played = [r["match_id"] for r in rows if r["outcome"] == "played"]
    assert len(played) == final.matches_played
    # a member's match counts for it unless it played itself (a mirror match scores nothing)
    scored = [r for r in rows if r["outcome"] == "played" and len({s["key"] for s in r["slots"]}) > 1]
    assert len(scored) == sum(m.tally.matches for m in final.members)
    assert len(rows) - len(played) == final.matches_voided >= 1  # the lost member's match
    assert summary["matches_played"] == final.matches_played
    assert list((run_dir / "work").glob("m*/t*")) == []  # no match folder left, the lost node's included
    for m in final.members:
        _, saved = checkpointing.load_latest(pop.member_dir(run_dir, m))
        assert (saved.train_step, saved.env_frames) == (m.train_step, m.env_frames)
        records = [json.loads(line) for line in (pop.member_dir(run_dir, m) / "metrics.jsonl").read_text().splitlines()]
        frames = [r["env_frames"] for r in records]
        assert frames == sorted(frames)
        assert records[-1]["train_step"] == m.train_step
        assert m.snapshots
        assert all(Path(s["path"]).is_dir() for s in m.snapshots)
        # --init-from: the member's actor started from the checkpoint (its first snapshot is those weights)
        assert m.init_from == str(init.resolve())
        first = evaltk_checkpoint.load(m.snapshots[0]["path"]).tensors
        assert all(torch.equal(first[k], t) for k, t in evaltk_checkpoint.load(init).tensors.items()), m.name

    # no engine or player process of the run, no ViZDoom shared memory it mapped
    assert seen, "the watch saw no ViZDoom segment: the matches did not run on the cluster"
    deadline = time.monotonic() + 30
    while (left := sorted(n for n in seen if Path("/dev/shm", n).exists()) + _run_processes(cluster)) \
            and time.monotonic() < deadline:
        time.sleep(0.2)
    assert left == [], f"left behind: {left}"
