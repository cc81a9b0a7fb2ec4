"""Third-party simulators for lockstep profiles: ``MODULE:CALLABLE`` factories (``docs/simulators.md``) over gymnasium.

With ``tests/conformance`` on ``PYTHONPATH`` they are ``other_sims:bilinear`` and ``other_sims:life_loss``:

* ``bilinear`` runs the env of ``spec`` with gymnasium's ``AtariPreprocessing`` at the ROM's own 210x160
  size (frame skip, NOOPs and max-pooling as the reference does them) and then resizes every observation
  to the spec's shape with ``cv2.INTER_LINEAR``, where the reference resizes with ``cv2.INTER_AREA``. The
  game (rewards, lives, episode ends) is the reference's; the pixels are not.
* ``life_loss`` is the spec's env with ``terminal_on_life_loss``: its episodes end at every lost life,
  the reference's at game over only, so most of its episode ends are its own.
"""

from __future__ import annotations

from typing import Any

import ale_py
import cv2
import gymnasium as gym
import numpy as np

gym.register_envs(ale_py)

NATIVE = (160, 210)
"""The ALE screen as cv2 sizes it: (width, height)."""


def bilinear(*, env_id: str, num_envs: int, seed: int, spec: dict[str, Any]) -> gym.Env[Any, Any]:
    """Return ``env_id`` with the spec's preprocessing, every observation resized with ``cv2.INTER_LINEAR``."""
    ap = dict(spec["preprocessing"]["atari_preprocessing"])
    height, width = spec["obs_spec"]["shape"][-2:]
    env = gym.wrappers.AtariPreprocessing(gym.make(env_id, **spec["kwargs"]), **{**ap, "screen_size": NATIVE})
    space = gym.spaces.Box(0, 255, (height, width), np.uint8)
    return gym.wrappers.TransformObservation(
        env, lambda obs: cv2.resize(obs, (width, height), interpolation=cv2.INTER_LINEAR), space)


def life_loss(*, env_id: str, num_envs: int, seed: int, spec: dict[str, Any]) -> gym.Env[Any, Any]:
    """Return ``env_id`` with the spec's preprocessing and ``terminal_on_life_loss=True``."""
    ap = {**spec["preprocessing"]["atari_preprocessing"], "terminal_on_life_loss": True}
    return gym.wrappers.AtariPreprocessing(gym.make(env_id, **spec["kwargs"]), **ap)
