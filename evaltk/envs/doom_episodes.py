"""Doom evaluation slots: episodes started with explicit seeds, and the watchdog that replays a dead engine's.

:class:`DoomEpisodeEnv` is one slot of :class:`~evaltk.envs.vector.EpisodeVector` for a Doom env spec. In an
evaluation worker process it runs under :func:`worker_watchdog` (the tournament players'
:class:`~evaltk.envs.shm_reaper.EngineWatchdog`): an engine that dies mid-episode (SIGKILL, crash) ends the
worker with :data:`~evaltk.envs.shm_reaper.ENGINE_DIED` instead of hanging it, and the vector starts a fresh
worker that replays the slots' episodes from their seeds.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import numpy as np
import vizdoom

from evaltk.envs import doom
from evaltk.envs.shm_reaper import ENGINE_DIED, EngineWatchdog
from evaltk.envs.spec import EnvSpec

ENGINE_GONE: tuple[type[BaseException], ...] = (vizdoom.ViZDoomUnexpectedExitException,
                                                vizdoom.ViZDoomIsNotRunningException, vizdoom.ViZDoomErrorException)
"""ViZDoom's exceptions that can mean the engine is no longer there (checked against the engine's process)."""


def worker_watchdog() -> EngineWatchdog:
    """Return the engine watchdog of an evaluation worker process (exits it with ``ENGINE_DIED``)."""
    return EngineWatchdog("evaluation worker: the ViZDoom engine (pid {pid}) died during an episode; exiting "
                          f"with status {ENGINE_DIED} so that the episode is replayed")


class DoomEpisodeEnv:
    """One ViZDoom game (an evaluation slot) whose episodes start only when told, each with its own seed.

    ``env`` is a Doom env spec (:func:`evaltk.envs.doom.env_spec`). :meth:`reset` is
    ``DoomGame.set_seed(seed)`` followed by :meth:`evaltk.envs.doom.DoomEnv.reset` (``init()`` the first time,
    ``new_episode()`` after), which on ViZDoom 1.3.2 gives exactly the episode of a fresh
    ``DoomEnv(scenario, seed=seed)``. Scenarios with bots start a fresh engine for every episode instead: the
    bots keep state across ``new_episode()``, so a reused game does not replay. :meth:`step` applies one action
    for ``frameskip`` tics with ``DoomEnv``'s reward (``reward_scale`` x game reward + shaping) and, unlike
    ``DoomEnv``, does not start the next episode when this one ends.

    With a ``watchdog`` (in an evaluation worker process), every engine this slot starts is watched while it
    runs: if it dies (killed mid-episode), the worker exits with
    :data:`~evaltk.envs.shm_reaper.ENGINE_DIED` (also when ViZDoom reports the dead engine as an exception),
    and :class:`~evaltk.envs.vector.EpisodeVector` voids and replays the episode in a fresh worker.
    """

    def __init__(self, env: EnvSpec, *, watchdog: EngineWatchdog | None = None) -> None:
        self.scenario = doom.scenario_from_env_spec(env)
        self._env = doom.DoomEnv(self.scenario, seed=0)  # configured only: the engine starts at the first reset
        self._shaper = doom.RewardShaper(self.scenario)
        self._watchdog = watchdog
        self._used = False
        self._tics = 0

    def reset(self, seed: int, *, out: np.ndarray) -> None:
        """Start an episode with ``seed``; writes its first observation ``uint8[3, H, W]`` into ``out``."""
        with self._engine_guard():
            if self._used and self.scenario.bots > 0:
                self._close_env()
                self._env = doom.DoomEnv(self.scenario, seed=seed)
            self._used = True
            self._env.game.set_seed(int(seed))
            self._env.reset(out=out)
            if self._watchdog is not None:
                self._watchdog.watch(self._env.engines)
            self._shaper.reset(self._env.game)
            self._tics = int(self._env.game.get_episode_time())

    @contextlib.contextmanager
    def _engine_guard(self) -> Iterator[None]:
        """Under a watchdog, turn ViZDoom's exception for a dead watched engine into the watchdog's exit."""
        try:
            yield
        except ENGINE_GONE:
            dead = self._watchdog.dead() if self._watchdog is not None else []
            if self._watchdog is None or not dead:
                raise
            self._watchdog.exit_now(dead[0])

    def step(self, action: np.ndarray, *, out: np.ndarray) -> tuple[float, bool, bool, int]:
        """Apply ``action`` (int64 scalar or int64[k]); returns (reward, terminated, truncated, tics).

        ``tics`` is the episode's game time so far (``DoomGame.get_episode_time()``: tics since the map
        started, including the cfg's ``episode_start_time``). ``truncated`` means ViZDoom's episode timeout
        was reached; any other end (death, map exit) is ``terminated``. A map exit resets ViZDoom's tic
        counter, so the ending action is then counted as a full ``frameskip`` (over by at most frameskip - 1).
        On the last step ``out`` is zeroed (there is no next observation).
        """
        with self._engine_guard():
            return self._step(action, out=out)

    def _step(self, action: np.ndarray, *, out: np.ndarray) -> tuple[float, bool, bool, int]:
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
        doom.observation(game.get_state(), scenario, out=out)
        return float(reward), False, False, self._tics

    def _close_env(self) -> None:
        if self._watchdog is not None:
            self._watchdog.unwatch(self._env.engines)
        self._env.close()

    def close(self) -> None:
        """Shut the engine down (safe when it never started)."""
        self._close_env()
