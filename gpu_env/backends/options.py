"""The checked options of a vector env, as its stepping engine reads them (:mod:`gpu_env.vector` checks them)."""

from __future__ import annotations

import dataclasses
from typing import Any

import torch


@dataclasses.dataclass(frozen=True)
class VecOptions:
    """The checked options of one :class:`AtariVecEnv`, as its engine reads them.

    ``batch_frameskip``: the batch's own frame skip; ``inner_loops``: ``act`` calls per env step;
    ``pp``: AtariPreprocessing's options (defaults filled in), ``preprocess``: whether any was given.
    """

    num_envs: int
    rom_id: str
    obs_type: str
    frameskip: int | tuple[int, int]
    batch_frameskip: int
    inner_loops: int
    repeat_action_probability: float
    max_frames: int
    num_threads: int
    preprocess: bool
    pp: dict[str, Any]
    pp_size: tuple[int, int]
    stack_size: int | None
    device: torch.device | None
    cuda: dict[str, int]
