"""What every backend of :class:`gpu_env.AtariBatch` implements, and the checks they share.

Arrays are numpy on the host: rewards int32[N], game_over bool[N], lives int32[N], RAM uint8[N, 128],
screens uint8[N, H, 160] (palette indices), RGB uint8[N, H, 160, 3], grayscale uint8[N, H, 160].
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    from gpu_env.preprocess_cpu import CpuObservation

NUM_ACTIONS = 18  # ALE's full (legal) action set: NOOP .. DOWNLEFTFIRE
ACTION_NAMES: tuple[str, ...] = (
    "NOOP", "FIRE", "UP", "RIGHT", "LEFT", "DOWN", "UPRIGHT", "UPLEFT", "DOWNRIGHT", "DOWNLEFT",
    "UPFIRE", "RIGHTFIRE", "LEFTFIRE", "DOWNFIRE", "UPRIGHTFIRE", "UPLEFTFIRE", "DOWNRIGHTFIRE", "DOWNLEFTFIRE",
)
NOOP = 0  # ACTION_NAMES.index("NOOP"): also AtariPreprocessing's no-op (it checks action 0 is NOOP)

BoolArray = npt.NDArray[np.bool_]
IntArray = npt.NDArray[np.int32]
U8Array = npt.NDArray[np.uint8]


class AtariBackend(Protocol):
    """A backend of :class:`gpu_env.AtariBatch`; every method works on the whole batch or on ``mask``ed envs.

    Arguments are already checked by :class:`gpu_env.AtariBatch` (shapes, dtypes, ranges).
    """

    screen_height: int

    def act(self, actions: npt.NDArray[np.int64], strength: npt.NDArray[np.float32], mask: BoolArray) -> IntArray:
        """ALE ``act`` on the masked envs; int32[N] rewards (0 outside the mask)."""

    def step_observe(self, actions: npt.NDArray[np.int64], mask: BoolArray, reset: BoolArray,
                     noops: npt.NDArray[np.int32], frame_skip: int, terminal_on_life_loss: bool, lives: IntArray,
                     grayscale: bool, buf0: U8Array, buf1: U8Array, observation: CpuObservation | None,
                     stack: U8Array | None) -> tuple[IntArray, BoolArray, BoolArray, U8Array | None]:
        """One vector step of gymnasium's ``AtariPreprocessing``: see :meth:`gpu_env.AtariBatch.step_preprocessed`."""

    def reset_game(self, mask: BoolArray) -> None:
        """ALE ``reset_game`` on the masked envs."""

    def load_rom(self, mask: BoolArray, seeds: npt.NDArray[np.uint32]) -> None:
        """``random_seed`` then ``loadROM`` on the masked envs, re-applying their mode and difficulty."""

    def set_mode(self, mask: BoolArray, mode: int) -> None:
        """ALE ``setMode`` (effective at the next reset)."""

    def set_difficulty(self, mask: BoolArray, difficulty: int) -> None:
        """ALE ``setDifficulty``."""

    def game_over(self, with_truncation: bool) -> BoolArray:
        """bool[N]: ALE ``game_over(with_truncation)``."""

    def game_truncated(self) -> BoolArray:
        """bool[N]: ALE ``game_truncated()``."""

    def lives(self) -> IntArray:
        """int32[N]: ALE ``lives()``."""

    def frame_numbers(self) -> tuple[IntArray, IntArray]:
        """int32[N] each: ALE ``getFrameNumber()``, ``getEpisodeFrameNumber()``."""

    def get_ram(self) -> U8Array:
        """uint8[N, 128]: ALE ``getRAM()``."""

    def get_screen(self, out: U8Array | None = None) -> U8Array:
        """uint8[N, H, 160]: ALE ``getScreen()``; written into ``out`` (already checked) and returned when given."""

    def get_screen_rgb(self, out: U8Array | None = None) -> U8Array:
        """uint8[N, H, 160, 3]: ALE ``getScreenRGB()``; into ``out`` when given."""

    def get_screen_grayscale(self, out: U8Array | None = None) -> U8Array:
        """uint8[N, H, 160]: ALE ``getScreenGrayscale()``; into ``out`` when given."""

    def clone_state(self) -> list[bytes]:
        """One opaque state per env, sticky-action RNG included."""

    def restore_state(self, states: Sequence[bytes]) -> None:
        """Restore every env from :meth:`clone_state` output."""

    def load_ale_state(self, i: int, blob: bytes, screen: U8Array | None, previous: U8Array | None) -> None:
        """Import an ale-py ``cloneState()`` (include_rng=False) into env ``i``."""

    def minimal_action_set(self) -> npt.NDArray[np.int64]:
        """int64[k]: ALE ``getMinimalActionSet()``."""

    def available_modes(self) -> list[int]:
        """ALE ``getAvailableModes()``."""

    def available_difficulties(self) -> list[int]:
        """ALE ``getAvailableDifficulties()``."""


def seeds_array(seeds: Sequence[int] | npt.ArrayLike | None, num_envs: int) -> npt.NDArray[np.uint32]:
    """Per-env ALE seeds as uint32[num_envs]: one int is broadcast, ``None`` draws them from OS entropy."""
    if seeds is None:
        return np.random.SeedSequence().generate_state(num_envs).astype(np.uint32)
    arr = np.asarray(seeds)
    if arr.ndim == 0:
        arr = np.full(num_envs, int(arr))
    if arr.shape != (num_envs,):
        raise ValueError(f"seeds has shape {arr.shape}; pass one seed per environment (shape ({num_envs},)) or one int")
    if arr.dtype.kind not in "iu" or (arr < 0).any() or (arr > 0xFFFFFFFF).any():
        raise ValueError(f"seeds must be integers in [0, 2**32), got {arr!r}")
    return arr.astype(np.uint32)


@dataclass(frozen=True)
class AleSettings:
    """ALE's settings of a batch, as :class:`gpu_env.AtariBatch` takes them; checked when built (ValueError).

    ``repeat_action_probability``: sticky actions; ``frameskip``: frames per ``act``, rewards summed;
    ``mode`` / ``difficulty``: ``setMode`` / ``setDifficulty`` after ``loadROM`` (``None``: the ROM's
    default); ``max_num_frames_per_episode``: truncation, 0 disables.
    """

    repeat_action_probability: float = 0.25
    frameskip: int = 1
    mode: int | None = None
    difficulty: int | None = None
    max_num_frames_per_episode: int = 0

    def __post_init__(self) -> None:
        """Reject values ALE would not take, naming them."""
        if not 0.0 <= self.repeat_action_probability <= 1.0:
            raise ValueError(f"repeat_action_probability={self.repeat_action_probability} must be in [0, 1]")
        if not isinstance(self.frameskip, int) or self.frameskip <= 0:
            raise ValueError(f"frameskip={self.frameskip!r} must be a positive int")
        if self.max_num_frames_per_episode < 0:
            raise ValueError(f"max_num_frames_per_episode={self.max_num_frames_per_episode} must be >= 0 (0 disables)")


def check_num_envs(num_envs: object) -> int:
    """Return ``num_envs`` when it is a positive int, else raise ValueError naming it."""
    if not isinstance(num_envs, int) or num_envs <= 0:
        raise ValueError(f"num_envs={num_envs!r} must be a positive int")
    return num_envs
