"""A vector of reference envs where every episode is reset with its own seed (evaluation engine).

gymnasium's vector envs auto-reset sub-envs without a seed, so an episode there is not the episode
``gymnasium.make(id).reset(seed=s)`` gives. :class:`EpisodeVector` instead resets a slot only when
told, with the seed it is given, so each episode is exactly ``make_env(env).reset(seed=s)`` followed
by the same actions. Slots are spread over worker processes (``spawn``) that write observations into
one shared-memory array; ``num_workers=0`` runs everything in the calling process. ``fast_reset`` opts into
:class:`~evaltk.envs.atari.FastSeededReset` (same states, no ROM reload per episode).

Doom env dicts (``family == "doom"``) get :class:`DoomEpisodeEnv` slots instead: one ViZDoom game per slot,
observation ``uint8[3, H, W]`` (:func:`evaltk.envs.doom.observation`), episodes started with explicit seeds
and never auto-reset; ``frames`` is then the episode's game tics (see :class:`DoomEpisodeEnv`).
"""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import signal
import traceback
from collections.abc import Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection
from multiprocessing.shared_memory import SharedMemory
from typing import Any

import numpy as np

from evaltk.envs import shm_reaper
from evaltk.envs.atari import FastSeededReset, episode_frames, make_env
from evaltk.errors import EvaltkError


@dataclass(frozen=True)
class StepResult:
    """Result of one :meth:`EpisodeVector.step`; inactive slots hold zeros/False.

    reward: float64[K]; terminated, truncated: bool[K]; frames: int64[K] = emulated frames of each
    slot's current episode so far (ALE's episode frame number; game tics for Doom slots).
    """

    reward: np.ndarray
    terminated: np.ndarray
    truncated: np.ndarray
    frames: np.ndarray


class DoomEpisodeEnv:
    """One ViZDoom game (an evaluation slot) whose episodes start only when told, each with its own seed.

    ``env`` is a Doom env dict (:func:`evaltk.envs.doom.env_spec`). :meth:`reset` is
    ``DoomGame.set_seed(seed)`` followed by :meth:`evaltk.envs.doom.DoomEnv.reset` (``init()`` the first time,
    ``new_episode()`` after), which on ViZDoom 1.3.2 gives exactly the episode of a fresh
    ``DoomEnv(scenario, seed=seed)``. Scenarios with bots start a fresh engine for every episode instead: the
    bots keep state across ``new_episode()``, so a reused game does not replay. :meth:`step` applies one action
    for ``frameskip`` tics with ``DoomEnv``'s reward (``reward_scale`` x game reward + shaping) and, unlike
    ``DoomEnv``, does not start the next episode when this one ends.
    """

    def __init__(self, env: dict[str, Any]) -> None:
        from evaltk.envs import doom

        self._doom = doom
        self.scenario = doom.scenario_from_env_spec(env)
        self._env = doom.DoomEnv(self.scenario, seed=0)  # configured only: the engine starts at the first reset
        self._shaper = doom.RewardShaper(self.scenario)
        self._used = False
        self._tics = 0

    def reset(self, seed: int, *, out: np.ndarray) -> None:
        """Start an episode with ``seed``; writes its first observation ``uint8[3, H, W]`` into ``out``."""
        if self._used and self.scenario.bots > 0:
            self._env.close()
            self._env = self._doom.DoomEnv(self.scenario, seed=seed)
        self._used = True
        self._env.game.set_seed(int(seed))
        self._env.reset(out=out)
        self._shaper.reset(self._env.game)
        self._tics = int(self._env.game.get_episode_time())

    def step(self, action: np.ndarray, *, out: np.ndarray) -> tuple[float, bool, bool, int]:
        """Apply ``action`` (int64 scalar or int64[k]); returns (reward, terminated, truncated, tics).

        ``tics`` is the episode's game time so far (``DoomGame.get_episode_time()``: tics since the map
        started, including the cfg's ``episode_start_time``). ``truncated`` means ViZDoom's episode timeout
        was reached; any other end (death, map exit) is ``terminated``. A map exit resets ViZDoom's tic
        counter, so the ending action is then counted as a full ``frameskip`` (over by at most frameskip - 1).
        On the last step ``out`` is zeroed (there is no next observation).
        """
        game, scenario = self._env.game, self.scenario
        reward = game.make_action(self._env.buttons(action), scenario.frameskip) * scenario.reward_scale
        reward += self._shaper.step(game)
        if game.is_episode_finished():
            timeout = bool(game.is_episode_timeout_reached())
            tics = int(game.get_episode_time())
            self._tics = tics if tics > 0 else self._tics + scenario.frameskip
            out[...] = 0
            return float(reward), not timeout, timeout, self._tics
        if scenario.bots > 0 and game.is_player_dead():
            game.respawn_player()
        self._tics = int(game.get_episode_time())
        self._doom.observation(game.get_state(), scenario, out=out)
        return float(reward), False, False, self._tics

    def close(self) -> None:
        """Shut the engine down (safe when it never started)."""
        self._env.close()


def _resource_tracker_pid() -> int | None:
    """PID of this process's multiprocessing resource tracker (it frees our SharedMemory if we die), if running."""
    from multiprocessing import resource_tracker

    pid = getattr(getattr(resource_tracker, "_resource_tracker", None), "_pid", None)
    return pid if isinstance(pid, int) else None


class _Shard:
    """The envs of slots ``[start, stop)``, writing observations into ``obs`` (a view of the batch)."""

    def __init__(self, env: dict[str, Any], start: int, stop: int, obs: np.ndarray, fast_reset: bool) -> None:
        self.start, self.stop = start, stop
        self.obs = obs
        self.doom: list[DoomEpisodeEnv] = []
        if env.get("family") == "doom":  # games are configured here and started by the first reset
            self.envs: list[Any] = []
            self.doom = [DoomEpisodeEnv(env) for _ in range(start, stop)]
            return
        self.envs = [make_env(env) for _ in range(start, stop)]
        if fast_reset:  # probe and check once per process, then share the recorded state
            proto = FastSeededReset(self.envs[0])
            for other in self.envs[1:]:
                FastSeededReset(other, like=proto)

    def reset(self, slots: Sequence[int], seeds: Sequence[int]) -> None:
        for slot, seed in zip(slots, seeds, strict=True):
            if self.doom:
                self.doom[slot - self.start].reset(int(seed), out=self.obs[slot])
                continue
            ob, _ = self.envs[slot - self.start].reset(seed=int(seed))
            self.obs[slot] = ob

    def step(self, actions: np.ndarray, active: np.ndarray) -> tuple[np.ndarray, ...]:
        n = self.stop - self.start
        reward = np.zeros(n, np.float64)
        term = np.zeros(n, np.bool_)
        trunc = np.zeros(n, np.bool_)
        frames = np.zeros(n, np.int64)
        for k, doom_env in enumerate(self.doom):
            if active[self.start + k]:
                reward[k], term[k], trunc[k], frames[k] = doom_env.step(actions[self.start + k],
                                                                        out=self.obs[self.start + k])
        for k, env in enumerate(self.envs):
            slot = self.start + k
            if not active[slot]:
                continue
            ob, r, te, tr, _ = env.step(actions[slot])
            self.obs[slot] = ob
            reward[k], term[k], trunc[k], frames[k] = float(r), bool(te), bool(tr), episode_frames(env)
        return reward, term, trunc, frames

    def close(self) -> None:
        for env in self.envs:
            env.close()
        for doom_env in self.doom:
            doom_env.close()


def _worker(conn: Connection, env: dict[str, Any], start: int, stop: int, shm_name: str,
            shape: tuple[int, ...], dtype: str, fast_reset: bool) -> None:
    """Serve one shard until told to close; exit quietly (no traceback, no leak warning) if the parent dies.

    A dead parent shows as EOF on ``recv`` or a broken pipe on ``send``. The worker then closes its
    games and unlinks the observation segment itself, so Python's resource tracker has nothing left
    to warn about.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C and shuts workers down
    shm = SharedMemory(name=shm_name)
    shard: _Shard | None = None
    orphaned = False
    try:
        shard = _Shard(env, start, stop, np.ndarray(shape, dtype=dtype, buffer=shm.buf), fast_reset)
        conn.send(("ok", None))
        while True:
            msg = conn.recv()
            if msg[0] == "close":
                break
            if msg[0] == "reset":
                shard.reset(msg[1], msg[2])
                conn.send(("ok", None))
            else:
                conn.send(("ok", shard.step(msg[1], msg[2])))
    except (EOFError, BrokenPipeError, ConnectionResetError):
        orphaned = True
    except Exception:
        with contextlib.suppress(OSError):
            conn.send(("error", traceback.format_exc()))
    finally:
        if shard is not None:
            with contextlib.suppress(Exception):
                shard.close()
        del shard
        shm.close()
        if orphaned:
            with contextlib.suppress(FileNotFoundError):
                shm.unlink()


class EpisodeVector:
    """``num_envs`` slots of ``make_env(env)``, reset per slot with explicit seeds, stepped together.

    ``obs`` is the batch of current observations, ``[num_envs, *shape]`` of the env's dtype; it is
    overwritten by :meth:`reset` and :meth:`step` (copy it to keep it).
    """

    def __init__(self, env: dict[str, Any], num_envs: int, *, num_workers: int = 0,
                 obs_shape: Sequence[int], obs_dtype: str, fast_reset: bool = False) -> None:
        if num_envs < 1:
            raise EvaltkError(f"num_envs must be >= 1, got {num_envs}")
        self.num_envs = num_envs
        self.num_workers = max(0, min(num_workers, num_envs))
        shape = (num_envs, *obs_shape)
        nbytes = max(1, int(np.prod(shape)) * np.dtype(obs_dtype).itemsize)
        self._shm = SharedMemory(create=True, size=nbytes)
        if self.num_workers > 0:  # a killed process group takes the resource tracker along: the reaper stays
            shm_reaper.add_segment(self._shm.name, after_pid=_resource_tracker_pid())
        self.obs: np.ndarray = np.ndarray(shape, dtype=obs_dtype, buffer=self._shm.buf)
        self._local: _Shard | None = None
        self._conns: list[Connection] = []
        self._procs: list[Any] = []
        self._bounds: list[tuple[int, int]] = []
        self._fast_reset = fast_reset
        try:
            if self.num_workers == 0:
                self._local = _Shard(env, 0, num_envs, self.obs, fast_reset)
                self._bounds = [(0, num_envs)]
            else:
                self._start_workers(env, shape, obs_dtype)
        except BaseException:
            self.close()
            raise

    def _start_workers(self, env: dict[str, Any], shape: tuple[int, ...], dtype: str) -> None:
        ctx = mp.get_context("spawn")
        edges = np.linspace(0, self.num_envs, self.num_workers + 1).round().astype(int)
        for start, stop in zip(edges[:-1].tolist(), edges[1:].tolist(), strict=True):
            parent, child = ctx.Pipe()
            proc = ctx.Process(target=_worker, args=(child, env, start, stop, self._shm.name, shape, dtype,
                                                         self._fast_reset),
                               daemon=True)
            proc.start()
            child.close()
            self._conns.append(parent)
            self._procs.append(proc)
            self._bounds.append((start, stop))
        for conn in self._conns:
            self._recv(conn)

    @staticmethod
    def _recv(conn: Connection) -> Any:
        try:
            status, payload = conn.recv()
        except EOFError:
            raise EvaltkError("an evaluation worker process died: re-run the command (finished episodes are "
                              "kept); if it repeats, run with --workers 0 to see the error") from None
        if status == "error":
            raise EvaltkError(f"an evaluation worker failed:\n{payload}")
        return payload

    def reset(self, slots: Sequence[int], seeds: Sequence[int]) -> None:
        """Reset each slot in ``slots`` with the matching seed (``env.reset(seed=seed)``)."""
        if self._local is not None:
            self._local.reset(list(slots), list(seeds))
            return
        pending = []
        for conn, (start, stop) in zip(self._conns, self._bounds, strict=True):
            mine = [(s, sd) for s, sd in zip(slots, seeds, strict=True) if start <= s < stop]
            if mine:
                conn.send(("reset", [s for s, _ in mine], [sd for _, sd in mine]))
                pending.append(conn)
        for conn in pending:
            self._recv(conn)

    def step(self, actions: np.ndarray, active: np.ndarray) -> StepResult:
        """Step every active slot (bool[K] ``active``) with ``actions`` (int64[K] or int64[K, k])."""
        if self._local is not None:
            parts = [self._local.step(actions, active)]
        else:
            busy = []
            for conn, (start, stop) in zip(self._conns, self._bounds, strict=True):
                if active[start:stop].any():
                    conn.send(("step", actions, active))
                    busy.append((conn, start))
            parts_by_start = {start: self._recv(conn) for conn, start in busy}
            parts = []
            for start, stop in self._bounds:
                n = stop - start
                empty = (np.zeros(n, np.float64), np.zeros(n, np.bool_), np.zeros(n, np.bool_), np.zeros(n, np.int64))
                parts.append(parts_by_start.get(start, empty))
        reward, term, trunc, frames = (np.concatenate([p[i] for p in parts]) for i in range(4))
        return StepResult(reward=reward, terminated=term, truncated=trunc, frames=frames)

    def close(self) -> None:
        """Stop the workers and free the shared memory (safe to call twice)."""
        if self._local is not None:
            self._local.close()
            self._local = None
        for conn in self._conns:
            with contextlib.suppress(BrokenPipeError, OSError):
                conn.send(("close",))
        for proc in self._procs:
            proc.join(timeout=5)
            if proc.is_alive():
                proc.kill()
        for conn in self._conns:
            conn.close()
        self._conns, self._procs = [], []
        if hasattr(self, "obs"):
            del self.obs
        with contextlib.suppress(BufferError):  # a caller still holds a view of obs; freed with it
            self._shm.close()
        with contextlib.suppress(FileNotFoundError):
            self._shm.unlink()
        if self.num_workers > 0:
            shm_reaper.remove_segment(self._shm.name)

    def __enter__(self) -> EpisodeVector:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
