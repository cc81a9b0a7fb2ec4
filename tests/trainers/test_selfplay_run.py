"""Self-play on real ViZDoom: a recorded training duel, and a short population run with PBT, resume and rating."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from evaltk import checkpoint as evaltk_checkpoint
from evaltk.envs.doom import SCENARIOS
from evaltk.tournament.match import MatchSpec, run_match
from evaltk.tournament.pool import PlayerPool
from trainers.appo import bc, checkpointing, demos
from trainers.appo import cli as appo_cli
from trainers.appo.config import AppoConfig, bc_coefficient
from trainers.appo.model import AppoPolicy
from trainers.appo.network import log_prob_entropy
from trainers.appo.runner import build_model
from trainers.appo.selfplay import population as pop
from trainers.appo.selfplay import trajectory
from trainers.appo.selfplay.runner import PLAYER_MODULE

pytestmark = pytest.mark.vizdoom
ROOT = Path(__file__).resolve().parents[2]
TINY = ["--hidden-size", "32", "--rnn-size", "32", "--obs-height", "36", "--obs-width", "64", "--rollout", "16",
        "--batch-size", "64"]


def _tiny_checkpoint(directory: Path, seed: int) -> str:
    cfg = AppoConfig(scenario="duel", seed=seed, obs_height=36, obs_width=64, hidden_size=32, rnn_size=32)
    scenario = SCENARIOS["duel"].replace(obs_size=(36, 64))
    model = build_model(cfg, scenario)
    spec = checkpointing.policy_spec(cfg, scenario, model, 0, 0)
    return str(evaltk_checkpoint.save(directory, spec, model.state_dict()))


def _replayed_logp(agent: str, traj: dict[str, np.ndarray], encoder_dtype: torch.dtype | None) -> np.ndarray:
    """Return the log-probabilities of the recorded actions under the checkpoint's model (one match: no reset)."""
    model = AppoPolicy.from_checkpoint(evaltk_checkpoint.load(agent)).model
    h, out = torch.from_numpy(traj["rnn0"][:1]), []
    with torch.no_grad():
        for t in range(len(traj["actions"])):
            logits, _, h = model.step(torch.from_numpy(traj["obs"][t : t + 1]), h, encoder_dtype=encoder_dtype)
            out.append(float(log_prob_entropy(logits, torch.from_numpy(traj["actions"][t : t + 1]),
                                              model.action_nvec)[0][0]))
    return np.asarray(out, dtype=np.float32)


@pytest.mark.slow
def test_a_training_duel_records_the_learning_slot_only(tmp_path: Path) -> None:
    """Fresh player processes (``--no-persistent-players``): only slot 1 records experience.

    ``slow``: the pooled test below covers the same player in the default run.
    """
    agents = (_tiny_checkpoint(tmp_path / "a", 1), _tiny_checkpoint(tmp_path / "b", 2))
    spec = MatchSpec(match_id="t0", agents=agents, bots=(), map="map01", seed=5, timelimit_min=0.1, frameskip=4)
    shaping = {"FRAGCOUNT": 1.0, "DEATHCOUNT": -1.0}
    traj_path = tmp_path / "slot1.npz"
    result = run_match(spec, workdir=tmp_path, timeout_s=300, player_module=PLAYER_MODULE,
                       player_extras=[{"selfplay": None},
                                      {"selfplay": {"trajectory": str(traj_path), "rollout": 16,
                                                    "reward_shaping": shaping}}])
    assert result.outcome == "played", result.error
    me = [p for p in result.participants if p["kind"] == "agent"][1]
    traj = trajectory.load(traj_path)
    steps = me["decisions"]
    assert steps > 20
    assert traj["obs"].shape == (steps + 1, 3, 36, 64)
    assert traj["actions"].shape == (steps, 6)
    assert traj["rnn0"].shape == (-(-steps // 16), 32)
    assert not traj["obs"][-1].any()
    assert traj["obs"][:-1].any()
    assert np.all(traj["logp"] < 0)
    assert float(traj["rewards"].sum()) == pytest.approx(me["frags"] - me["deaths"])  # the shaping, per agent
    assert not (tmp_path / "slot0.npz").exists()


def test_pooled_self_play_players_record_match_after_match(tmp_path: Path) -> None:
    """Two duels through one pool: the same two processes play both, and each match records only its learner."""
    agents = (_tiny_checkpoint(tmp_path / "a", 1), _tiny_checkpoint(tmp_path / "b", 2))
    shaping = {"FRAGCOUNT": 1.0, "DEATHCOUNT": -1.0}
    with PlayerPool(PLAYER_MODULE, tmp_path / "players") as pool:
        # The second match's learner acts with a bf16 encoder, as one whose learner trains with --encoder-precision
        # bf16: the recorded behaviour log-probabilities are those of that precision's forward pass.
        for k, (learner, precision) in enumerate(((1, "fp32"), (0, "bf16"))):
            spec = MatchSpec(match_id=f"t{k}", agents=agents, bots=(), map="map01", seed=5 + k, timelimit_min=0.1)
            paths = [tmp_path / f"m{k}.slot{slot}.npz" for slot in (0, 1)]
            extras = [{"selfplay": {"trajectory": str(paths[slot]), "rollout": 16, "reward_shaping": shaping,
                                    "encoder_precision": precision}}
                      if slot == learner else {"selfplay": None} for slot in (0, 1)]
            result = run_match(spec, workdir=tmp_path, timeout_s=300, player_module=PLAYER_MODULE,
                               player_extras=extras, pool=pool)
            assert result.outcome == "played", result.error
            me = result.participants[learner]
            traj = trajectory.load(paths[learner])
            assert traj["actions"].shape == (me["decisions"], 6)
            assert float(traj["rewards"].sum()) == pytest.approx(me["frags"] - me["deaths"])
            assert not paths[1 - learner].exists()
            # Its own precision's replay agrees to float rounding (about 1e-6 here), the other's does not (1.5e-4).
            dtypes = {"fp32": None, "bf16": torch.bfloat16}
            own, other = (np.abs(traj["logp"] - _replayed_logp(agents[learner], traj, dtypes[p])).max()
                          for p in (precision, "bf16" if precision == "fp32" else "fp32"))
            assert own < 1e-5
            assert other > 10 * own
        assert pool.started == 2


@pytest.mark.slow
def test_population_run_pbt_resume_and_tournament(tmp_path: Path) -> None:
    """A 2-member run with a tiny PBT period: population.json, an exploit event, resume, then the rating."""
    run_dir = tmp_path / "run"
    base = [sys.executable, "-m", "evaltk", "train", "doom", "--scenario", "duel", "--self-play", "--population", "2",
            "--out", str(run_dir), "--match-minutes", "0.15", "--pbt-period", "100", "--pbt-min-matches", "1",
            "--pbt-replace-gap", "-1", "--snapshot-every-frames", "300", "--save-every-s", "5", *TINY]
    first = subprocess.run([*base, "--max-seconds", "45", "--json"], cwd=ROOT, capture_output=True, text=True,
                           timeout=300)
    assert first.returncode == 0, first.stderr[-3000:]
    summary = json.loads(first.stdout.strip().splitlines()[-1])
    state = pop.read(run_dir)
    assert len(state.members) == 2
    assert summary["matches_played"] >= 2
    assert state.events, "no PBT exploit/explore event"
    event = state.events[0]
    loser = state.members[event["member"]]
    assert event["donor"] != event["member"]
    assert loser.lineage[0]["donor"] == event["donor"]
    assert loser.generation >= 1
    for h, value in event["hyperparams_after"].items():
        assert value > 0, h
    for m in state.members:
        mdir = pop.member_dir(run_dir, m)
        assert (mdir / "metrics.jsonl").is_file()
        assert (mdir / "checkpoints" / "latest.json").is_file()
        assert evaltk_checkpoint.load_spec(mdir / m.snapshots[0]["path"]).env["env_id"] == "duel"
    frames = state.total_frames

    second = subprocess.run([*base, "--max-seconds", "25"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert second.returncode == 0, second.stderr[-3000:]
    assert "resuming" in second.stdout
    resumed = pop.read(run_dir)
    assert resumed.resumes == 1
    assert resumed.total_frames >= frames
    assert [m.id for m in resumed.members] == [0, 1]
    assert len(json.loads((run_dir / "config.json").read_text())["starts"]) == 2

    rated = subprocess.run([sys.executable, "-m", "evaltk", "tournament", "population", str(run_dir), "--matches",
                            "1", "--timelimit", "0.1", "--baselines", "random", "--concurrency", "2", "--json"],
                           cwd=ROOT, capture_output=True, text=True, timeout=400)
    assert rated.returncode == 0, rated.stderr[-3000:]
    report = json.loads(rated.stdout.strip().splitlines()[-1])
    assert report["matches_played"] == 3
    names = {r["name"] for r in report["ratings"]}
    assert names == {"m0", "m1", "random"}
    for r in report["ratings"]:
        assert r["ci"][0] <= r["ci"][1]


@pytest.mark.slow
def test_deathmatch_self_play_trains_several_learners_among_bots(tmp_path: Path) -> None:
    """--scenario deathmatch: 3 programmatic players and the scenario's 4 bots per match; pairwise scores."""
    run_dir = tmp_path / "dm"
    done = subprocess.run([sys.executable, "-m", "evaltk", "train", "doom", "--scenario", "deathmatch", "--self-play",
                           "--population", "2", "--agents-per-match", "3", "--match-minutes", "0.15",
                           "--concurrency", "1", "--max-seconds", "15", "--out", str(run_dir), *TINY],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    rows = [json.loads(line) for line in (run_dir / "matches.jsonl").read_text().splitlines()]
    played = [r for r in rows if r["outcome"] == "played"]
    assert played
    for row in played:
        kinds = [p["kind"] for p in row["participants"]]
        assert kinds == ["agent"] * 3 + ["bot"] * 4
    state = pop.read(run_dir)
    learned = [m for m in state.members if m.tally.matches]
    assert learned
    for m in learned:
        bots = {k for k in m.vs if k.startswith("bot:")}
        assert bots == {f"bot:{name}" for name in played[0]["spec"]["bots"]}
        assert all(0.0 <= score <= 1.0 for score, _ in m.recent)
        assert m.env_frames > 0


@pytest.mark.slow
def test_population_from_a_clone_with_the_bc_loss_and_pbt_over_shaping(tmp_path: Path) -> None:
    """--init-from, --bc-demos/--bc-coef/--bc-decay-steps and PBT on a real 2-member run (the duel's 72x128 view)."""
    folder = tmp_path / "demos"
    demos.record(demos.DemoSettings(out=str(folder), episodes=1, timelimit_min=0.05, chunk_steps=16, seed=3),
                 log=lambda _: None)
    cfg = AppoConfig(scenario="duel", seed=9, hidden_size=32, rnn_size=32)
    model = build_model(cfg, SCENARIOS["duel"])
    model.obs_count.fill_(7.0)
    init = bc.save_policy(tmp_path, cfg, SCENARIOS["duel"], model, 1, 1, name="clone")
    run_dir = tmp_path / "run"
    done = subprocess.run([sys.executable, "-m", "evaltk", "train", "doom", "--scenario", "duel", "--self-play",
                           "--population", "2", "--init-from", str(init), "--bc-demos", str(folder), "--bc-coef", "0.5",
                           "--bc-decay-steps", "6", "--bc-streams", "2", "--hidden-size", "32", "--rnn-size", "32",
                           "--rollout", "16", "--batch-size", "32", "--match-minutes", "0.1", "--opponent-sampling",
                           "latest", "--pbt-period", "100", "--pbt-min-matches", "1", "--pbt-replace-gap", "-1",
                           "--pbt-mutation-rate", "1", "--max-seconds", "60", "--out", str(run_dir)],
                          cwd=ROOT, capture_output=True, text=True, timeout=400)
    assert done.returncode == 0, done.stderr[-3000:]
    state = pop.read(run_dir)
    tensors = evaltk_checkpoint.load(init).tensors
    for m in state.members:  # each member started from the clone: its first frozen snapshot is the clone's weights
        assert m.init_from == str(init.resolve())
        first = evaltk_checkpoint.load(m.snapshots[0]["path"]).tensors
        assert all(torch.equal(first[k], t) for k, t in tensors.items()), m.name
    config = json.loads((run_dir / "config.json").read_text())["config"]
    assert (config["init_from"], config["bc_coef"], config["bc_decay_steps"]) == (str(init), 0.5, 6)
    # the decaying cloning term in the members' SGD steps (the metrics line holds a member's last step)
    trained = [r for m in state.members for line in (pop.member_dir(run_dir, m) / "metrics.jsonl").open()
               if "losses/bc_coef" in (r := json.loads(line))]
    assert trained, "no member trained"
    decay = AppoConfig(bc_demos="d", bc_coef=0.5, bc_decay_steps=6)
    for r in trained:
        assert r["losses/bc_coef"] == pytest.approx(bc_coefficient(decay, r["train_step"] - 1))
        assert r["losses/bc_coef"] == 0.0 or r["losses/bc_loss"] > 0.0
    # PBT: every shaping weight of an exploit perturbed from the donor's, within x/÷ 4 of the scenario's
    assert state.events, "no PBT exploit/explore event"
    shaping = {f"reward.{k}": abs(v) for k, v in SCENARIOS["duel"].reward_shaping.items() if v}
    for event in state.events:
        for key, base in shaping.items():
            after = event["hyperparams_after"][key]
            assert after != event["donor_hyperparams"][key]
            assert base / 4 <= after <= base * 4


def test_self_play_flags_are_checked(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert appo_cli.main(["--scenario", "basic", "--self-play", "--out", str(tmp_path / "x")]) == 2
    assert "needs a multiplayer scenario" in capsys.readouterr().err
    assert appo_cli.main(["--scenario", "duel", "--population", "2", "--out", str(tmp_path / "y")]) == 2
    assert "add --self-play" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()
    assert SCENARIOS["duel"].bots == 0
