"""gymnasium's ``AtariPreprocessing`` step and reset as loops of batch calls.

The CPU library (``AtariBatch.step_preprocessed`` and the native pool under ``make_vec``) and the CUDA
kernels run this step natively, all from one C++ source (``gpu_env/core/ale/preprocessing.h``). These
loops serve what has no native step: ``AtariBatch.step_preprocessed`` of the ``"ale_py"`` reference
backend and of the host adapter of the ``"cuda"`` backend. The rules are the C++ ones (that file lists
them with their source); ``buf0`` / ``buf1`` are the wrapper's ``obs_buffer[0]`` / ``obs_buffer[1]``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from gpu_env.backends.protocol import NOOP, BoolArray, IntArray, U8Array
from gpu_env.preprocess import FrameStack

if TYPE_CHECKING:
    from gpu_env.backends.protocol import AtariBackend
    from gpu_env.preprocess_cpu import CpuObservation

# One env step of the masked envs: (reward, terminal, truncated), each [N].
EnvStep = Callable[[BoolArray], tuple[npt.NDArray[Any], BoolArray, BoolArray]]


def step_loop(env_step: EnvStep, lives: Callable[[], IntArray], screen: Callable[[], U8Array], mask: BoolArray,
              frame_skip: int, terminal_on_life_loss: bool, seen_lives: IntArray, buf0: U8Array, buf1: U8Array
              ) -> tuple[npt.NDArray[np.int64], BoolArray, BoolArray]:
    """``AtariPreprocessing.step`` of the envs in ``mask``: int64 summed rewards, terminated, truncated.

    ``seen_lives`` (int32[N], in/out): the wrapper's last seen lives; ``screen()`` returns every env's
    screen in the observation's format.
    """
    n = mask.shape[0]
    total = np.zeros(n, dtype=np.int64)
    term = np.zeros(n, dtype=np.bool_)
    trunc = np.zeros(n, dtype=np.bool_)
    active = mask.copy()
    for t in range(frame_skip):
        if not active.any():
            break
        reward, te, tr = env_step(active)
        total[active] += np.asarray(reward, dtype=np.int64)[active]
        term[active], trunc[active] = te[active], tr[active]
        if terminal_on_life_loss:
            now = lives()
            term[active] |= now[active] < seen_lives[active]
            seen_lives[active] = now[active]
        active &= ~(term | trunc)
        if t in (frame_skip - 2, frame_skip - 1) and active.any():
            target = buf1 if t == frame_skip - 2 else buf0
            target[active] = screen()[active]
    return total, term, trunc


def reset_loop(reset: Callable[[BoolArray], None], noop_step: EnvStep, lives: Callable[[], IntArray],
               screen: Callable[[], U8Array], mask: BoolArray, draw_noops: Callable[[BoolArray], npt.NDArray[np.int32]],
               seen_lives: IntArray, buf0: U8Array, buf1: U8Array) -> None:
    """``AtariPreprocessing.reset`` (no seed) of the envs in ``mask``.

    ``reset(m)`` resets the envs in ``m`` (again after a no-op that ends the game); then
    ``draw_noops(mask)`` gives the no-op count of each env (drawn after the reset, as the wrapper
    draws it from the env's generator that a seeded reset replaces).
    """
    reset(mask)
    noops = draw_noops(mask)
    for t in range(int(noops[mask].max(initial=0))):
        active = mask & (t < noops)
        _, term, trunc = noop_step(active)
        again = active & (term | trunc)
        if again.any():
            reset(again)
    seen_lives[mask] = lives()[mask]
    buf0[mask] = screen()[mask]
    buf1[mask] = 0


def observe(observation: CpuObservation, stack: U8Array | None, buf0: U8Array, buf1: U8Array, frame_skip: int,
            reset: BoolArray) -> U8Array:
    """Every env's observation (``buf0`` max-pooled with ``buf1`` when ``frame_skip > 1``, resized).

    With ``stack`` (uint8 ``[N, S, *frame]``, newest last) the frames are pushed onto it (refilled
    for the envs in ``reset``) and a copy of the whole stack is returned.
    """
    frames = observation(buf0, buf1 if frame_skip > 1 else None, np.ones(reset.shape[0], dtype=np.bool_))
    if stack is None:
        return frames
    on = FrameStack.over(stack)
    new = frames.reshape(stack.shape[:1] + stack.shape[2:])
    on.push(new, ~reset)
    on.reset(new, reset)
    return stack.copy()


def step_observe_by_loop(backend: AtariBackend, actions: npt.NDArray[np.int64], mask: BoolArray, reset: BoolArray,
                         noops: npt.NDArray[np.int32], frame_skip: int, terminal_on_life_loss: bool, lives: IntArray,
                         grayscale: bool, buf0: U8Array, buf1: U8Array, observation: CpuObservation | None,
                         stack: U8Array | None) -> tuple[IntArray, BoolArray, BoolArray, U8Array | None]:
    """:meth:`AtariBackend.step_observe` of a backend without a native step, from its batch calls."""
    n = mask.shape[0]
    strength = np.ones(n, dtype=np.float32)
    no_op = np.full(n, NOOP, dtype=np.int64)

    def screen() -> U8Array:
        return backend.get_screen_grayscale() if grayscale else backend.get_screen_rgb()

    def stepper(a: npt.NDArray[np.int64]) -> EnvStep:
        def step(m: BoolArray) -> tuple[npt.NDArray[Any], BoolArray, BoolArray]:
            return backend.act(a, strength, m), backend.game_over(False), backend.game_truncated()
        return step

    total, term, trunc = step_loop(stepper(actions), backend.lives, screen, mask, frame_skip, terminal_on_life_loss,
                                   lives, buf0, buf1)
    if reset.any():
        reset_loop(backend.reset_game, stepper(no_op), backend.lives, screen, reset, lambda _: noops, lives, buf0,
                   buf1)
    frames = None if observation is None else observe(observation, stack, buf0, buf1, frame_skip, reset)
    return total.astype(np.int32), term, trunc, frames
