"""Collects time-major rollouts from a gpu_env vector env with the current policy; every tensor stays on its device.

Nothing is read back to the host while a rollout runs: finished episodes are recorded in device
buffers (``info["_episode"]`` / ``info["episode"]`` of every step) and copied to the host only by
:meth:`RolloutCollector.take_episodes` (one transfer per call; the runner calls it once per rollout).

The env autoresets NEXT_STEP: the step after an episode ends only resets that env (reward 0, action
ignored), so that step is marked invalid and cuts the return. With ``life_loss_cut`` a lost life also
cuts the discounted return (``discount 0``) without resetting the game: a training signal only.
"""

from __future__ import annotations

from typing import Any

import torch

from trainers.a2c.config import A2cConfig
from trainers.a2c.learner import Rollout
from trainers.a2c.model import NatureActorCritic, sample


class RolloutCollector:
    """Steps ``env`` ``cfg.rollout`` times per :meth:`collect`, sampling actions from ``model``.

    ``env`` is a gpu_env ``AtariVecEnv`` made with ``obs_format="torch"`` (observations ``uint8[B, S, H, W]`` on
    ``env.device``); an env of another output type is refused with a :class:`ValueError`.
    Finished-episode returns (unclipped, whole v5 episodes) and lengths come from :meth:`take_episodes`.
    """

    def __init__(self, env: Any, model: NatureActorCritic, cfg: A2cConfig, generator: torch.Generator,
                 seed: int | list[int]) -> None:
        if getattr(env, "obs_format", None) != "torch":
            raise ValueError("the A2C rollout batches torch tensors: build its env with "
                             "gpu_env.make_vec(..., obs_format='torch')")
        self.env = env
        self.model = model
        self.cfg = cfg
        self.generator = generator
        self.device: torch.device = env.device
        obs, info = env.reset(seed=seed)
        self.obs: torch.Tensor = obs
        self.lives: torch.Tensor = info["lives"].clone()
        self.resetting = torch.zeros(cfg.num_envs, dtype=torch.bool, device=self.device)
        steps, n = cfg.rollout, cfg.num_envs
        num_actions = int(env.single_action_space.n)
        self._obs = torch.empty((steps + 1, *obs.shape), dtype=obs.dtype, device=self.device)
        self._actions = torch.empty((steps, n), dtype=torch.int64, device=self.device)
        self._logits = torch.empty((steps, n, num_actions), dtype=torch.float32, device=self.device)
        self._rewards = torch.empty((steps, n), dtype=torch.float32, device=self.device)
        self._discounts = torch.empty((steps, n), dtype=torch.float32, device=self.device)
        self._valid = torch.empty((steps, n), dtype=torch.bool, device=self.device)
        self._ep_done = torch.zeros((steps, n), dtype=torch.bool, device=self.device)
        self._ep_return = torch.zeros((steps, n), dtype=torch.float64, device=self.device)
        self._ep_length = torch.zeros((steps, n), dtype=torch.int64, device=self.device)
        self._pending: list[tuple[torch.Tensor, torch.Tensor, torch.Tensor]] = []

    @torch.no_grad()
    def collect(self) -> Rollout:
        """Run one rollout and return it (the buffers are reused: learn from it before the next call)."""
        cfg = self.cfg
        for t in range(cfg.rollout):
            self._obs[t] = self.obs
            logits, _ = self.model(self.obs)
            actions = sample(logits, self.generator)
            obs, reward, terminated, truncated, info = self.env.step(actions)
            valid = ~self.resetting
            lives = info["lives"]
            cut = terminated | truncated | ~valid
            if cfg.life_loss_cut:
                cut = cut | (valid & (lives < self.lives))
            self._actions[t] = actions
            self._logits[t] = logits
            self._rewards[t] = torch.sign(reward) if cfg.clip_rewards else reward
            self._discounts[t] = cfg.gamma * (~cut).to(torch.float32)
            self._valid[t] = valid
            self.obs, self.lives, self.resetting = obs, lives.clone(), terminated | truncated
            if "_episode" in info:  # the cuda env reports it on every step, the cpu env where episodes ended
                self._ep_done[t] = info["_episode"]
                self._ep_return[t] = info["episode"]["r"]
                self._ep_length[t] = info["episode"]["l"]
            else:
                self._ep_done[t] = False
        self._obs[cfg.rollout] = self.obs
        self._pending.append((self._ep_done.clone(), self._ep_return.clone(), self._ep_length.clone()))
        return Rollout(self._obs, self._actions, self._logits, self._rewards, self._discounts, self._valid)

    def take_episodes(self) -> tuple[list[float], list[int]]:
        """Return and clear the returns and lengths of the episodes finished since the last call.

        This is the collector's one device-to-host transfer: the finished episodes' returns and lengths,
        in step order (time-major, then env).
        """
        returns: list[float] = []
        lengths: list[int] = []
        for done, ret, length in self._pending:
            returns += ret[done].tolist()
            lengths += length[done].tolist()
        self._pending = []
        return returns, lengths
