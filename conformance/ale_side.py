"""The reference side of a lockstep or a recording: ``N`` ``ale_py.ALEInterface`` with AtariBatch's settings.

The interfaces are those of gpu_env's ``"ale_py"`` backend (:class:`gpu_env.backends.ale_py.AlePyBackend`,
the one ale-py wrapper): environment ``i`` is ``ALEInterface`` with ``random_seed = seeds[i]``, the
same ``repeat_action_probability``, ``frame_skip`` and ``max_num_frames_per_episode`` as the
:class:`gpu_env.AtariBatch` it is compared with, then ``loadROM``; a mode or difficulty is set with
``setMode``/``setDifficulty`` and takes effect through one ``reset_game`` (as ``AtariBatch`` and
gymnasium's ``AtariEnv`` do). This module adds what the conformance engine reads: frames of fields,
warm-ups and the export of a state into a batch.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from conformance.frames import Frame, screen_md5


class AleSide:
    """``len(seeds)`` ale-py environments of one ROM (see the module docstring)."""

    def __init__(self, rom_path: Path, seeds: Sequence[int], *, repeat_action_probability: float = 0.0,
                 frameskip: int = 1, mode: int | None = None, difficulty: int | None = None,
                 max_num_frames_per_episode: int = 0) -> None:
        import ale_py

        from gpu_env.backends.ale_py import AlePyBackend
        from gpu_env.backends.protocol import AleSettings, seeds_array

        settings = AleSettings(float(repeat_action_probability), int(frameskip), mode, difficulty,
                               int(max_num_frames_per_episode))
        self._backend = AlePyBackend(rom_path, len(seeds), seeds_array(list(seeds), len(seeds)), settings)
        everyone = np.ones(len(seeds), dtype=np.bool_)
        if mode is not None:
            self._backend.set_mode(everyone, int(mode))
        if difficulty is not None:
            self._backend.set_difficulty(everyone, int(difficulty))
        if mode is not None or difficulty is not None:
            self._backend.reset_game(everyone)
        self._action = ale_py.Action
        self.ales: list[Any] = self._backend.ales
        self.num_envs = len(self.ales)

    def minimal_action_set(self) -> npt.NDArray[np.int64]:
        """int64[k]: ALE's minimal action set (full-set indices)."""
        return self._backend.minimal_action_set()

    def act(self, actions: npt.NDArray[np.int64], mask: npt.NDArray[np.bool_] | None = None) -> npt.NDArray[np.int32]:
        """ALE ``act`` on every env (in ``mask``); int32[N] rewards, 0 outside the mask."""
        everyone = np.ones(self.num_envs, dtype=np.bool_)
        return self._backend.act(np.asarray(actions, dtype=np.int64), np.ones(self.num_envs, dtype=np.float32),
                                 everyone if mask is None else np.asarray(mask, dtype=np.bool_))

    def reset_game(self, mask: npt.NDArray[np.bool_]) -> None:
        """ALE ``reset_game`` on the envs in ``mask``."""
        self._backend.reset_game(np.asarray(mask, dtype=np.bool_))

    def observe(self, reward: npt.NDArray[np.int32] | None, fields: Sequence[str]) -> Frame:
        """Read ``fields`` (names of :data:`conformance.frames.FIELDS`) into a :class:`Frame`."""
        want = set(fields)
        ales = self.ales
        screens = np.stack([a.getScreen() for a in ales]) if want & {"screen", "screen_md5"} else None
        return Frame(
            ram=np.stack([a.getRAM() for a in ales]),
            lives=np.array([a.lives() for a in ales], dtype=np.int32),
            game_over=np.array([a.game_over() for a in ales], dtype=np.bool_),
            reward=reward,
            screen=screens if "screen" in want else None,
            screen_md5=screen_md5(screens) if "screen_md5" in want and screens is not None else None,
            truncated=np.array([a.game_truncated() for a in ales], dtype=np.bool_) if "truncated" in want else None,
            frame_number=(np.array([a.getFrameNumber() for a in ales], dtype=np.int32)
                          if "frame_number" in want else None),
            episode_frame_number=(np.array([a.getEpisodeFrameNumber() for a in ales], dtype=np.int32)
                                  if "episode_frame_number" in want else None),
            screen_rgb=np.stack([a.getScreenRGB() for a in ales]) if "screen_rgb" in want else None,
            screen_grayscale=(np.stack([a.getScreenGrayscale() for a in ales])
                              if "screen_grayscale" in want else None),
        )

    def rgb(self, i: int) -> npt.NDArray[np.uint8]:
        """uint8[H, 160, 3]: env ``i``'s ``getScreenRGB()``."""
        return np.asarray(self.ales[i].getScreenRGB())

    def warm_up(self, i: int, rng: np.random.Generator, choices: npt.NDArray[np.int64], frames: int) -> Any:
        """Play ``frames`` random ``choices`` on env ``i`` alone; return ``getScreen()`` before the last one.

        With ``frames`` > 0 the warm-up continues until its last frame started a new TIA frame, so
        that the returned picture is the frame buffer ale-py reuses next (ALE does not serialize its
        two frame buffers; a frame that ends above the bottom of the picture shows the older one).
        None when ``frames`` is 0.
        """
        ale = self.ales[i]
        previous = None
        fresh = False
        for k in range(frames):
            fresh = self._at_frame_boundary(i) if k == frames - 1 else False
            previous = ale.getScreen()
            ale.act(self._action(int(choices[int(rng.integers(len(choices)))])))
        while frames > 0 and not fresh:
            fresh = self._at_frame_boundary(i)
            previous = ale.getScreen()
            ale.act(self._action(int(choices[int(rng.integers(len(choices)))])))
        return previous

    def _at_frame_boundary(self, i: int) -> bool:
        # ALE's executionStatus bit 0: the last update ended a frame (0 = an interrupted frame).
        from gpu_env.ale_state import parse_ale_state

        return bool(parse_ale_state(self.ales[i].cloneState()).cpu[-1] & 1)

    def export_into(self, i: int, batch: Any, previous: Any) -> None:
        """Import env ``i``'s ``cloneState()`` and screens into env ``i`` of ``batch`` (an AtariBatch)."""
        ale = self.ales[i]
        batch.load_ale_state(i, ale.cloneState(), ale.getScreen(), previous)
