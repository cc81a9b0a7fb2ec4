"""A vector of reference envs where every episode is reset with its own seed (evaluation engine).

gymnasium's vector envs auto-reset sub-envs without a seed, so an episode there is not the episode
``gymnasium.make(id).reset(seed=s)`` gives. :class:`EpisodeVector` instead resets a slot only when
told, with the seed it is given, so each episode is exactly ``make_env(env).reset(seed=s)`` followed
by the same actions. Slots are spread over worker processes (``spawn``) that write observations into
one shared-memory array; ``num_workers=0`` runs everything in the calling process. ``fast_reset`` opts into
:class:`~evaltk.envs.atari.FastSeededReset` (same states, no ROM reload per episode).

Doom env specs (``family == "doom"``) get :class:`~evaltk.envs.doom_episodes.DoomEpisodeEnv` slots instead:
one ViZDoom game per slot, observation ``uint8[3, H, W]`` (:func:`evaltk.envs.doom.observation`), episodes
started with explicit seeds and never auto-reset; ``frames`` is then the episode's game tics. An episode
whose engine died is voided and replayed (see :class:`EpisodeVector`).
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
from evaltk.envs.shm_reaper import ENGINE_DIED
from evaltk.envs.spec import EnvSpec
from evaltk.errors import EvaltkError


@dataclass(frozen=True)
class StepResult:
    """Result of one :meth:`EpisodeVector.step`; inactive slots hold zeros/False.

    reward: float64[K]; terminated, truncated: bool[K]; frames: int64[K] = emulated frames of each
    slot's current episode so far (ALE's episode frame number; game tics for Doom slots). ``restarted``:
    bool[K], slots whose episode was voided and started again from its seed (its ViZDoom engine died; the
    slot's observation is the episode's first), or None when none was.
    """

    reward: np.ndarray
    terminated: np.ndarray
    truncated: np.ndarray
    frames: np.ndarray
    restarted: np.ndarray | None = None


MAX_REPLAYS = 3
"""How many times one Doom episode is replayed after its engine died before the evaluation gives up."""


class _EngineDiedError(Exception):
    """Worker ``index`` exited because its ViZDoom engine died (status ``ENGINE_DIED``)."""

    def __init__(self, index: int) -> None:
        super().__init__(index)
        self.index = index


def _resource_tracker_pid() -> int | None:
    """PID of this process's multiprocessing resource tracker (it frees our SharedMemory if we die), if running."""
    from multiprocessing import resource_tracker

    pid = getattr(getattr(resource_tracker, "_resource_tracker", None), "_pid", None)
    return pid if isinstance(pid, int) else None


class _Shard:
    """The envs of slots ``[start, stop)``, writing observations into ``obs`` (a view of the batch)."""

    def __init__(self, env: EnvSpec, start: int, stop: int, obs: np.ndarray, fast_reset: bool,
                 watchdog: Any = None) -> None:
        self.start, self.stop = start, stop
        self.obs = obs
        self.doom: list[Any] = []
        if env.family == "doom":  # games are configured here and started by the first reset
            from evaltk.envs.doom_episodes import DoomEpisodeEnv

            self.envs: list[Any] = []
            self.doom = [DoomEpisodeEnv(env, watchdog=watchdog) for _ in range(start, stop)]
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


def _worker(conn: Connection, env: EnvSpec, start: int, stop: int, shm_name: str,
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
    watchdog = None
    if env.family == "doom":  # a dead engine ends this worker (ENGINE_DIED): the parent replays
        from evaltk.envs.doom_episodes import worker_watchdog

        watchdog = worker_watchdog()
    try:
        shard = _Shard(env, start, stop, np.ndarray(shape, dtype=dtype, buffer=shm.buf), fast_reset, watchdog)
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
        if watchdog is not None:
            watchdog.close()
        shm.close()
        if orphaned:
            with contextlib.suppress(FileNotFoundError):
                shm.unlink()


class EpisodeVector:
    """``num_envs`` slots of ``make_env(env)``, reset per slot with explicit seeds, stepped together.

    ``obs`` is the batch of current observations, ``[num_envs, *shape]`` of the env's dtype; it is
    overwritten by :meth:`reset` and :meth:`step` (copy it to keep it).

    Doom slots always run in worker processes (at least one), each under an engine watchdog
    (:mod:`evaltk.envs.doom_episodes`): a worker whose ViZDoom engine died exits with
    :data:`~evaltk.envs.shm_reaper.ENGINE_DIED`; the vector then starts a fresh worker for its slots and
    resets their episodes with the same seeds (:attr:`StepResult.restarted`), at most
    :data:`MAX_REPLAYS` times per episode. ``replays`` counts them.
    """

    def __init__(self, env: EnvSpec, num_envs: int, *, num_workers: int = 0,
                 obs_shape: Sequence[int], obs_dtype: str, fast_reset: bool = False) -> None:
        if num_envs < 1:
            raise EvaltkError(f"num_envs must be >= 1, got {num_envs}")
        self.num_envs = num_envs
        self._doom = env.family == "doom"
        self.num_workers = max(1 if self._doom else 0, min(num_workers, num_envs))
        self.replays = 0
        self._env = env
        self._seeds = np.zeros(num_envs, np.int64)
        self._tries: dict[tuple[int, int], int] = {}
        shape = (num_envs, *obs_shape)
        nbytes = max(1, int(np.prod(shape)) * np.dtype(obs_dtype).itemsize)
        self._shm = SharedMemory(create=True, size=nbytes)
        if self.num_workers > 0:  # a killed process group takes the resource tracker along: the reaper stays
            shm_reaper.add_segment(self._shm.name, after_pid=_resource_tracker_pid())
        self.obs: np.ndarray = np.ndarray(shape, dtype=obs_dtype, buffer=self._shm.buf)
        self._local: _Shard | None = None
        self._running = np.zeros(num_envs, np.bool_)  # slots mid-episode as of the last step
        self._lost = np.zeros(num_envs, np.bool_)  # mid-episode slots of a worker replaced during a reset
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

    def _start_workers(self, env: EnvSpec, shape: tuple[int, ...], dtype: str) -> None:
        self._shape, self._dtype = shape, dtype
        edges = np.linspace(0, self.num_envs, self.num_workers + 1).round().astype(int)
        for start, stop in zip(edges[:-1].tolist(), edges[1:].tolist(), strict=True):
            conn, proc = self._spawn(start, stop)
            self._conns.append(conn)
            self._procs.append(proc)
            self._bounds.append((start, stop))
        for i in range(len(self._conns)):
            self._recv(i)

    def _spawn(self, start: int, stop: int) -> tuple[Connection, Any]:
        ctx = mp.get_context("spawn")
        parent, child = ctx.Pipe()
        proc = ctx.Process(target=_worker, args=(child, self._env, start, stop, self._shm.name, self._shape,
                                                 self._dtype, self._fast_reset), daemon=True)
        proc.start()
        child.close()
        return parent, proc

    def _recv(self, i: int) -> Any:
        """Receive worker ``i``'s reply; :class:`_EngineDiedError` if its ViZDoom engine died (Doom only)."""
        try:
            status, payload = self._conns[i].recv()
        except EOFError:
            proc = self._procs[i]
            proc.join(timeout=30)
            if self._doom and proc.exitcode == ENGINE_DIED:
                raise _EngineDiedError(i) from None
            raise EvaltkError("an evaluation worker process died: re-run the command (finished episodes are "
                              "kept); if it repeats, run with --workers 0 to see the error") from None
        if status == "error":
            raise EvaltkError(f"an evaluation worker failed:\n{payload}")
        return payload

    def _replace(self, i: int, slots: list[int]) -> None:
        """Start a fresh worker ``i`` and reset ``slots`` (its active ones) with their episodes' seeds again."""
        while True:
            for slot in slots:
                key = (slot, int(self._seeds[slot]))
                self._tries[key] = self._tries.get(key, 0) + 1
                if self._tries[key] > MAX_REPLAYS:
                    raise EvaltkError(f"the ViZDoom engine of the episode with seed {key[1]} died {MAX_REPLAYS + 1} "
                                      "times: check the machine (memory, killed processes) and re-run the command "
                                      "(finished episodes are kept)")
            self.replays += 1
            self._conns[i].close()
            self._conns[i], self._procs[i] = self._spawn(*self._bounds[i])
            try:
                self._recv(i)
                if slots:
                    self._conns[i].send(("reset", slots, [int(self._seeds[s]) for s in slots]))
                    self._recv(i)
                return
            except _EngineDiedError:
                continue

    def reset(self, slots: Sequence[int], seeds: Sequence[int]) -> None:
        """Reset each slot in ``slots`` with the matching seed (``env.reset(seed=seed)``)."""
        self._seeds[list(slots)] = list(seeds)
        if self._local is not None:
            self._local.reset(list(slots), list(seeds))
            return
        pending = []
        for i, (start, stop) in enumerate(self._bounds):
            mine = [(s, sd) for s, sd in zip(slots, seeds, strict=True) if start <= s < stop]
            if mine:
                self._conns[i].send(("reset", [s for s, _ in mine], [sd for _, sd in mine]))
                pending.append((i, [s for s, _ in mine]))
        for i, mine_slots in pending:
            try:
                self._recv(i)
            except _EngineDiedError:  # its other slots were mid-episode: the next step starts them again
                start, stop = self._bounds[i]
                self._replace(i, mine_slots)
                self._lost[start:stop] = self._running[start:stop]
                self._lost[mine_slots] = False

    def step(self, actions: np.ndarray, active: np.ndarray) -> StepResult:
        """Step every active slot (bool[K] ``active``) with ``actions`` (int64[K] or int64[K, k])."""
        restarted = None
        lost = np.flatnonzero(self._lost & active).tolist()
        if lost:  # their worker was replaced during a reset: their episodes start again, not stepped now
            self._lost[:] = False
            self.reset(lost, [int(self._seeds[slot]) for slot in lost])
            restarted = np.zeros(self.num_envs, np.bool_)
            restarted[lost] = True
            active = active & ~restarted
        self._running = np.asarray(active, np.bool_).copy()
        if self._local is not None:
            parts = [self._local.step(actions, active)]
        else:
            busy = []
            for i, (start, stop) in enumerate(self._bounds):
                if active[start:stop].any():
                    self._conns[i].send(("step", actions, active))
                    busy.append(i)
            parts_by_start = {}
            for i in busy:
                start, stop = self._bounds[i]
                try:
                    parts_by_start[start] = self._recv(i)
                except _EngineDiedError:
                    slots = (np.flatnonzero(active[start:stop]) + start).tolist()
                    self._replace(i, slots)
                    restarted = np.zeros(self.num_envs, np.bool_) if restarted is None else restarted
                    restarted[slots] = True
            parts = []
            for start, stop in self._bounds:
                n = stop - start
                empty = (np.zeros(n, np.float64), np.zeros(n, np.bool_), np.zeros(n, np.bool_), np.zeros(n, np.int64))
                parts.append(parts_by_start.get(start, empty))
        reward, term, trunc, frames = (np.concatenate([p[i] for p in parts]) for i in range(4))
        return StepResult(reward=reward, terminated=term, truncated=trunc, frames=frames, restarted=restarted)

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
