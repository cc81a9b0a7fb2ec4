"""A player process of a self-play training match: the tournament's player, plus experience recording.

``python -m trainers.appo.selfplay.player`` reads the tournament's :class:`~evaltk.tournament.player.PlayerSpec`
as JSON on stdin with one extra key, ``selfplay``: ``null`` for a frozen opponent (it plays exactly as a
tournament player, inference only) or, for a learning slot, ``{"trajectory": path, "reward_shaping":
{var: weight}, "rollout": int, "encoder_precision": str}``. A learning slot samples actions from the checkpoint's
model, its encoder in the precision its learner trains with (``--encoder-precision``; absent: fp32), and writes its
experience to ``trajectory`` (``.npz``, see :func:`play_and_record`) before it prints the tournament
player's JSON report, so :func:`evaltk.tournament.match.run_match` hosts, joins, times out and voids these
matches exactly as tournament matches. With ``--serve`` it plays one request line after another as a
:class:`~evaltk.tournament.pool.PlayerPool` player (the runner's default: no Python/torch start per match).
"""

from __future__ import annotations

import dataclasses
import os
import sys
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np
import torch

from evaltk.envs.doom import RewardShaper
from evaltk.tournament import player as tournament_player
from evaltk.tournament.player import PlayerReport, PlayerSpec, match_report


def play_and_record(spec: PlayerSpec, learn: dict[str, Any]) -> PlayerReport:
    """Play the match of ``spec`` with its checkpoint's model, recording every decision.

    The file ``learn["trajectory"]`` gets (``T`` decisions, ``C = ceil(T / rollout)`` chunks):
    ``obs uint8[T+1, 3, H, W]`` (the last all zeros: the match is over), ``actions int64[T, K]``,
    ``logp float32[T]`` (behaviour log-probability), ``rewards float32[T]`` (shaped with
    ``learn["reward_shaping"]``), ``rnn0 float32[C, R]`` (GRU state at the start of each chunk).
    """
    start_wall, start_cpu = time.perf_counter(), time.process_time()
    driver = tournament_player._Driver(spec)
    if driver.scenario is None:
        raise SystemExit(f"learning slot {spec.slot}: agent {spec.agent} is not a trainable checkpoint")
    from trainers.appo import packed
    from trainers.appo.network import encoder_dtype, sample_actions

    model = driver.policy.model
    # The behaviour policy is the one the learner computes its ratios against: the same encoder precision.
    dtype = encoder_dtype(str(learn.get("encoder_precision", "fp32")))
    step = driver.policy.step if dtype is None else packed.forward_step(model, batch_hint=1, encoder_dtype=dtype)
    nvec = list(model.action_nvec)
    rollout = int(learn["rollout"])
    game = driver.game
    shaper = RewardShaper(dataclasses.replace(driver.scenario, reward_shaping=dict(learn["reward_shaping"])))
    generator = torch.Generator().manual_seed(spec.policy_seed)
    parent = os.getppid()
    obs_list: list[np.ndarray] = []
    actions: list[np.ndarray] = []
    logps: list[float] = []
    rewards: list[float] = []
    rnn0: list[np.ndarray] = []
    with tournament_player.match_game(game, spec), torch.inference_mode():
        shaper.reset(game)
        h = torch.zeros(1, model.rnn_size)
        while not game.is_episode_finished():
            if os.getppid() != parent:
                raise SystemExit(3)
            state = game.get_state()
            if state is None:
                break
            obs = np.asarray(driver.observe(state))
            if len(actions) % rollout == 0:
                rnn0.append(h[0].numpy().copy())
            logits, _, h = step(torch.from_numpy(obs[None]), h)
            action, logp = sample_actions(logits, nvec, generator)
            a = action[0].numpy().astype(np.int64)
            reward = game.make_action(driver.buttons(a), driver.frameskip) * driver.scenario.reward_scale
            reward += shaper.step(game)
            obs_list.append(obs)
            actions.append(a)
            logps.append(float(logp[0]))
            rewards.append(float(reward))
            if game.is_player_dead():
                game.respawn_player()
        report = match_report(game, spec, len(actions), start_wall, start_cpu)
    shape = tuple(model.obs_shape)
    obs_all = np.zeros((len(obs_list) + 1, *shape), dtype=np.uint8)
    if obs_list:
        obs_all[:-1] = np.stack(obs_list)
    path = Path(learn["trajectory"])
    tmp = path.with_name(path.name + ".tmp.npz")
    np.savez(tmp, obs=obs_all, actions=np.asarray(actions, dtype=np.int64).reshape(len(actions), len(nvec)),
             logp=np.asarray(logps, dtype=np.float32), rewards=np.asarray(rewards, dtype=np.float32),
             rnn0=np.asarray(rnn0, dtype=np.float32).reshape(len(rnn0), model.rnn_size))
    os.replace(tmp, path)
    return report


def play_json(raw: dict[str, Any]) -> dict[str, Any]:
    """Play one request (a spec with the ``selfplay`` key) and return the report as a dict."""
    learn = raw.pop("selfplay", None)
    spec = tournament_player.spec_from_json(raw)
    report = tournament_player.play(spec) if learn is None else play_and_record(spec, learn)
    return asdict(report)


def main(argv: list[str] | None = None) -> int:
    """Entry point: read the spec from stdin, play (recording if a learning slot), print the report line.

    ``--serve``: play one request line after another (a :class:`~evaltk.tournament.pool.PlayerPool` player).
    """
    torch.set_num_threads(1)
    return tournament_player.run(play_json, argv)


if __name__ == "__main__":
    sys.exit(main())
