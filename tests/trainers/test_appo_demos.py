"""Demonstrations of the scripted agent on real ViZDoom, behaviour cloning into the APPO model, and the RL knobs."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pytest
import torch
import vizdoom

from evaltk import policies
from evaltk.envs import doom, doom_labels, doom_scenarios
from evaltk.errors import CheckpointError, SpecError
from evaltk.tournament import agents, player
from trainers.appo import bc, demos
from trainers.appo.config import AppoConfig, ConfigError, bc_coefficient
from trainers.appo.model import AppoPolicy
from trainers.appo.runner import build_model, load_initial_weights
from trainers.appo.scenario import resolve_scenario

DUEL = doom.SCENARIOS["duel"]


def test_scripted_actions_press_exactly_the_heads_buttons() -> None:
    bins = demos.turn_bins(DUEL)
    assert len(bins) == len(DUEL.action_heads[-1].options)
    for move, strafe, attack, turn in itertools.product(range(3), range(3), range(2), range(len(bins))):
        pressed = dict(zip(DUEL.buttons, doom.action_to_buttons(
            demos.scripted_to_heads(np.array([move, strafe, attack, turn])), DUEL), strict=True))
        scripted = dict(zip(agents.BUILTIN_BUTTONS[:5], agents.action_to_buttons(
            np.array([move, strafe, attack, 0]), DUEL.frameskip)[:5], strict=True))
        for button, value in scripted.items():
            assert pressed[button] == value, (button, move, strafe, attack)
        assert pressed["TURN_LEFT_RIGHT_DELTA"] == bins[turn] / DUEL.frameskip
        assert pressed["SELECT_NEXT_WEAPON"] == 0.0
        assert pressed["SPEED"] == 0.0


def test_scripted_agent_turns_in_the_given_bins() -> None:
    agent = demos.demonstrator(DUEL)
    agent.reset(1, np.random.default_rng(0))
    feats = np.zeros((1, agents.NUM_FEATURES), dtype=np.float32)
    feats[0, :3] = (1.0, 21.0, 0.2)  # an enemy 21 degrees to the right, far enough to fire at
    action = agent.act(feats, np.array([True]))[0]
    assert demos.turn_bins(DUEL)[action[3]] == 20.0


@pytest.fixture(scope="module")
def recording(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("demos")
    demos.record(demos.DemoSettings(out=str(out), episodes=2, timelimit_min=0.05, chunk_steps=16, seed=3),
                 log=lambda _: None)
    return out


@pytest.mark.vizdoom
def test_recording_holds_the_appo_view_and_resumes(recording: Path) -> None:
    chunks = demos.episode_chunks(recording)
    assert len(chunks) == 2
    data = [demos.load_chunk(p) for p in chunks[0]]
    obs = np.concatenate([d["obs"] for d in data])
    assert obs.dtype == np.uint8
    assert obs.shape[1:] == (3, *DUEL.obs_size)
    first = np.concatenate([d["first"] for d in data])
    assert first[0]
    assert not first[1:].any()
    actions = np.concatenate([d["actions"] for d in data])
    assert (actions >= 0).all()
    assert (actions < np.array([len(h.options) for h in DUEL.action_heads])).all()
    summary = json.loads((recording / "ep00000.json").read_text())
    assert summary["steps"] == len(obs)
    assert data[-1]["frags"][-1] == summary["frags"]
    # An interrupted episode keeps its chunks; the next run continues after it.
    (recording / "ep00001.json").unlink()
    kept = {p: p.read_bytes() for p in chunks[1]}
    done = demos.record(demos.DemoSettings(out=str(recording), episodes=3, timelimit_min=0.05, chunk_steps=16, seed=3),
                        log=lambda _: None)
    assert [d["episode"] for d in done] == [2]
    assert all(p.read_bytes() == b for p, b in kept.items())
    with pytest.raises(SpecError, match="record into another folder"):
        demos.record(demos.DemoSettings(out=str(recording), map="map02"), log=lambda _: None)


def test_class_weights_favour_rare_choices_and_keep_the_scale() -> None:
    counts = [np.array([900, 90, 10]), np.array([5, 5])]
    w = bc.class_weights(counts, 0.5, 10.0)
    assert w[0][2] > w[0][1] > w[0][0]
    assert np.isclose((w[0] * counts[0]).sum() / counts[0].sum(), 1.0)
    assert np.allclose(w[1], 1.0)
    assert np.allclose(bc.class_weights(counts, 0.0, 10.0)[0], 1.0)


@pytest.mark.vizdoom
def test_cloning_lowers_the_loss_and_the_checkpoint_plays(recording: Path, tmp_path: Path) -> None:
    cfg = AppoConfig(scenario="duel", out=str(tmp_path / "bc"), learning_rate=2e-3, rollout=16, hidden_size=32,
                     rnn_size=32)
    model = build_model(cfg, DUEL)
    counts = bc.action_counts(recording, model.action_nvec)
    weights = [torch.from_numpy(w) for w in bc.class_weights(counts, 0.5, 10.0)]
    probe = bc.DemoStreams(recording, 2, 16, 0.99, np.random.default_rng(1)).next()

    def probe_loss(m: torch.nn.Module) -> float:
        with torch.no_grad():
            return float(bc.bc_loss(m, probe, torch.zeros(2, 32), weights, 0.0, None)[0])  # type: ignore[arg-type]

    before = probe_loss(model)
    result = bc.train(cfg, bc.BcSettings(demos=str(recording), seq_len=16, streams=2, max_steps=30, log_every=1000),
                      log=lambda _: None)
    trained = policies.load_policy(result["checkpoint"])
    assert isinstance(trained, AppoPolicy)
    # The saved clone is calibrated (its actor bias shifted by -log w); add log w back to compare the same loss.
    trained.model.actor.bias.data += torch.from_numpy(np.log(np.concatenate([w.numpy() for w in weights])))
    assert probe_loss(trained.model) < 0.7 * before
    spec = player.PlayerSpec(slot=0, num_players=1, port=doom.free_udp_port(), map="map01",
                             agent=result["checkpoint"], name="A0", seed=1, policy_seed=2, timelimit_min=0.02,
                             fraglimit=0, frameskip=4, bots=("Rambo",))
    report = player.play(spec)
    assert report.decisions > 5


def test_bc_coefficient_decays_linearly_to_zero() -> None:
    cfg = AppoConfig(bc_demos="d", bc_coef=0.5, bc_decay_steps=100)
    assert [bc_coefficient(cfg, s) for s in (0, 50, 100, 400)] == [0.5, 0.25, 0.0, 0.0]
    assert bc_coefficient(AppoConfig(bc_demos="d", bc_coef=0.5), 10**6) == 0.5
    with pytest.raises(ConfigError, match="--bc-demos"):
        AppoConfig(bc_coef=0.1).check()


def test_reward_shaping_option_replaces_the_scenarios() -> None:
    cfg = AppoConfig(scenario="duel_bots", reward_shaping='{"FRAGCOUNT": 2, "DEATHCOUNT": -1}')
    cfg.check()
    assert dict(resolve_scenario(cfg).reward_shaping) == {"FRAGCOUNT": 2.0, "DEATHCOUNT": -1.0}
    assert dict(resolve_scenario(AppoConfig(scenario="duel_bots")).reward_shaping) == doom_scenarios.DUEL_BOTS_SHAPING
    for bad in ("{", '{"FRAGCOUNT": "x"}', "[1]"):
        with pytest.raises(ConfigError, match="--reward-shaping"):
            AppoConfig(reward_shaping=bad).check()


@pytest.mark.vizdoom
def test_duel_bots_shaping_is_the_weighted_sum_of_variable_changes() -> None:
    scenario = doom.SCENARIOS["duel_bots"].replace(timelimit=0.1)
    terms = {k: v for k, v in scenario.reward_shaping.items() if not k.endswith(":neg")}
    env = doom.DoomEnv(scenario, seed=5)
    try:
        env.reset()
        game, shaper = env.game, doom.RewardShaper(scenario)
        shaper.reset(game)
        rng = np.random.default_rng(0)
        for _ in range(60):
            before = {k: game.get_game_variable(getattr(vizdoom.GameVariable, k)) for k in terms}
            game.make_action(doom.action_to_buttons(rng.integers([3, 3, 2, 2, 2, 11]), scenario), 4)
            if game.is_episode_finished():
                break
            after = {k: game.get_game_variable(getattr(vizdoom.GameVariable, k)) for k in terms}
            expected = sum((c if after[k] >= before[k] else scenario.reward_shaping.get(f"{k}:neg", c))
                           * (after[k] - before[k]) for k, c in terms.items())
            assert shaper.step(game) == pytest.approx(expected)
            if game.is_player_dead():
                game.respawn_player()
                shaper.step(game)
    finally:
        env.close()


def test_init_from_loads_the_weights_and_refuses_other_sizes(tmp_path: Path) -> None:
    cfg = AppoConfig(scenario="duel", seed=4, hidden_size=32, rnn_size=32)
    source = build_model(cfg, DUEL)
    source.obs_count.fill_(7.0)
    path = bc.save_policy(tmp_path, cfg, DUEL, source, 1, 1)
    target = build_model(AppoConfig(scenario="duel", seed=5, hidden_size=32, rnn_size=32), DUEL)
    load_initial_weights(target, str(path))
    assert all(torch.equal(a, b) for a, b in zip(source.state_dict().values(), target.state_dict().values(),
                                                  strict=True))
    with pytest.raises(CheckpointError, match="--init-from"):
        load_initial_weights(build_model(AppoConfig(scenario="duel", hidden_size=16, rnn_size=16), DUEL), str(path))


def test_calibration_undoes_the_class_weights_in_the_sampled_probabilities() -> None:
    model = build_model(AppoConfig(scenario="duel", seed=1, hidden_size=32, rnn_size=32), DUEL)
    weights = bc.class_weights([np.arange(1, n + 1) * 10 for n in model.action_nvec], 0.5, 10.0)
    state = bc.calibrated_state(model, weights)
    shift = (state["actor.bias"] - model.state_dict()["actor.bias"]).numpy()
    assert np.allclose(shift, -np.log(np.concatenate(weights)), atol=1e-6)
    # Weighted cross-entropy's optimum is p_w(c) ~ w_c p(c); the shifted logits give p(c) back.
    p = np.array([0.9, 0.09, 0.01])
    w = bc.class_weights([p * 1000], 0.5, 10.0)[0]
    logits = np.log(w * p) - np.log(w)
    assert np.allclose(np.exp(logits) / np.exp(logits).sum(), p)
    assert bc.calibrated_state(model, None)["actor.bias"].equal(model.state_dict()["actor.bias"])


def _episode_frames(folder: Path) -> tuple[np.ndarray, np.ndarray]:
    chunks = demos.episode_chunks(folder)[0]
    loaded = [demos.load_chunk(p) for p in chunks]
    return np.concatenate([c["obs"] for c in loaded]), np.concatenate([c["actions"] for c in loaded])


@pytest.mark.vizdoom
def test_marked_players_differ_from_the_pixels_only_where_a_player_is_painted(tmp_path: Path) -> None:
    """The same seeded duel recorded plain and marked: equal actions; frames equal but for MARK_RGB pixels."""
    runs = {}
    for name in ("duel", "duel_marked"):
        demos.record(demos.DemoSettings(out=str(tmp_path / name), scenario=name, episodes=1, timelimit_min=1.0,
                                        seed=1), log=lambda _: None)
        runs[name] = _episode_frames(tmp_path / name)
    (plain, plain_actions), (marked, marked_actions) = runs["duel"], runs["duel_marked"]
    np.testing.assert_array_equal(plain_actions, marked_actions)
    changed = (plain != marked).any(axis=1)
    painted = (marked == np.array(doom_labels.MARK_RGB, dtype=np.uint8)[None, :, None, None]).all(axis=1)
    assert changed.sum() > 20, "no player was painted in a minute of the scripted agent's duel"
    assert not (changed & ~painted).any()
    assert doom_scenarios.SCENARIOS["duel_marked"].to_dict()["mark_players"] is True
    assert "mark_players" not in DUEL.to_dict()
    assert doom.scenario_from_env_spec(doom.env_spec(doom.SCENARIOS["duel_bots_marked"])).mark_players
    with pytest.raises(SpecError, match="mark_players"):
        bc.check_demos(tmp_path / "duel", doom.SCENARIOS["duel_bots_marked"])


@pytest.mark.vizdoom
def test_the_shipped_duel_agent_sees_marked_players_in_a_tournament_game() -> None:
    """The tournament player builds the shipped checkpoint's game from its scenario: labels on, players painted."""
    shipped = Path(__file__).resolve().parents[2] / "suites" / "checkpoints" / "appo_duel"
    spec = player.PlayerSpec(slot=0, num_players=1, port=doom.free_udp_port(), map="map01", agent=str(shipped),
                             name="A0", seed=1, policy_seed=2, timelimit_min=0.02, fraglimit=0, frameskip=4,
                             bots=("Rambo",))
    driver = player._Driver(spec)
    assert driver.scenario is not None
    assert driver.scenario.mark_players
    assert driver.game.is_labels_buffer_enabled()
