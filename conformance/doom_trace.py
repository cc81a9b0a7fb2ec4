"""ViZDoom traces: record an episode tic by tic once, replay it on the installed ViZDoom and compare every tic.

A Doom trace is one ``.npz`` file with the discipline of :mod:`conformance.trace_file` (format
``evaltk-doom-trace``, a ``tics`` count and a content digest checked on load):

* ``header``: ViZDoom version, scenario name and its full spec (:meth:`DoomScenario.to_dict`), seed,
  frameskip, resolution, button and game-variable names, the extra buffers hashed (``depth``,
  ``labels``), the agent that chose the actions, the reset rule (a new episode after every episode end).
* per tic ``t`` (arrays of length ``T``): ``buttons`` float64[T, B] (the button vector of tic ``t``),
  ``decision`` bool (a new decision started at tic ``t``), ``reward`` float64 (the game's own reward of
  the tic), ``variables`` float64[T, V] (:data:`TRACE_VARIABLES` after the tic), ``done`` bool (the
  episode ended on this tic), ``screen_md5``/``depth_md5``/``labels_md5`` uint8[T, 16] (md5 of the
  buffer after the tic; zeros when the episode ended or the buffer is off).

The game is stepped one tic per ``make_action(buttons, 1)``. A decision's buttons hold for
``frameskip`` tics or until the episode ends; :func:`replay_doom` expands the recorded decisions with
its own frameskip (the recorded one by default), so a replay with another frameskip or seed, or with a
decision changed, diverges where the game first differs, and :class:`DoomDivergence` names that tic.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from conformance import trace_file
from conformance.trace_file import TraceError

FORMAT = "evaltk-doom-trace"
VERSION = 1
_TIC_FIELDS: dict[str, tuple[str, tuple[int, ...]]] = {
    "buttons": ("float64", (-1,)), "decision": ("bool", ()), "reward": ("float64", ()),
    "variables": ("float64", (-1,)), "done": ("bool", ()), "screen_md5": ("uint8", (16,)),
    "depth_md5": ("uint8", (16,)), "labels_md5": ("uint8", (16,)),
}
LAYOUT = trace_file.Layout(FORMAT, VERSION, "tics", _TIC_FIELDS,
                           "record it again with evaltk conformance record-doom")
#: Game variables recorded after every tic (read whether or not the scenario makes them available).
TRACE_VARIABLES: tuple[str, ...] = ("HEALTH", "ARMOR", "KILLCOUNT", "HITCOUNT", "DAMAGECOUNT", "FRAGCOUNT",
                                    "DEATHCOUNT", "SELECTED_WEAPON", "SELECTED_WEAPON_AMMO", "POSITION_X",
                                    "POSITION_Y", "POSITION_Z", "ANGLE")
BUFFERS = ("depth", "labels")
_HASHED = ("screen_md5", "depth_md5", "labels_md5")


@dataclass(frozen=True)
class DoomTrace:
    """A recorded ViZDoom run. Arrays are tic-major (``[T, ...]``); ``header["tics"] == T``."""

    header: dict[str, Any]
    arrays: dict[str, np.ndarray]

    @property
    def tics(self) -> int:
        """Number of recorded tics."""
        return int(self.arrays["done"].shape[0])

    def save(self, path: str | Path) -> Path:
        """Write the trace atomically with its tic count and digest in the header."""
        return trace_file.save(path, LAYOUT, self.header, self.arrays)

    def decisions(self) -> list[np.ndarray]:
        """Return the button vector of every decision, in order."""
        return [self.arrays["buttons"][t] for t in np.flatnonzero(self.arrays["decision"])]


def load_doom(path: str | Path) -> DoomTrace:
    """Read and check a Doom trace; :class:`TraceError` names the file and the problem."""
    header, arrays = trace_file.read(path, LAYOUT)
    return DoomTrace(header=header, arrays=arrays)


def installed_version() -> str:
    """Return the installed ViZDoom's version."""
    import vizdoom

    return str(vizdoom.__version__)


def version_note(header: dict[str, Any]) -> str:
    """Return ``"; recorded with ViZDoom X, installed Y"`` when they differ, else an empty string."""
    recorded, here = header.get("vizdoom_version"), installed_version()
    return "" if recorded == here else f"; recorded with ViZDoom {recorded}, installed ViZDoom {here}"


@dataclass(frozen=True)
class TicView:
    """What the game shows after one tic; ``screen`` is ``uint8[H, W, 3]`` (None after the episode ended)."""

    reward: float
    variables: np.ndarray
    done: bool
    hashes: dict[str, np.ndarray]
    screen: np.ndarray | None


def _md5(buffer: Any) -> np.ndarray:
    if buffer is None:
        return np.zeros(16, dtype=np.uint8)
    return np.frombuffer(hashlib.md5(np.ascontiguousarray(buffer).tobytes()).digest(), dtype=np.uint8)


class DoomGameTics:
    """One ViZDoom game of a scenario stepped one tic at a time, starting a new episode after each end."""

    def __init__(self, scenario_name: str, *, seed: int, buffers: tuple[str, ...] = ()) -> None:
        import vizdoom

        from evaltk.envs import shm_reaper
        from evaltk.envs.doom import get_scenario, make_game, start_episode

        self.scenario = get_scenario(scenario_name)
        self.buffers = buffers
        # Scenarios with +viz_nocheat 1 (the deathmatch ones) hide depth and labels; a trace that hashes them
        # turns it off (the header's ``buffers`` records that).
        self.game = make_game(self.scenario, seed=seed, extra_game_args="+viz_nocheat 0" if buffers else "")
        self.game.set_depth_buffer_enabled("depth" in buffers)
        self.game.set_labels_buffer_enabled("labels" in buffers)
        self._variables = [getattr(vizdoom.GameVariable, v) for v in TRACE_VARIABLES]
        self._start = start_episode
        shm_reaper.init_game(self.game)  # a recorded owner of the game's shared memory
        start_episode(self.game, self.scenario, first=True)

    def state(self) -> Any:
        """Return the game's current ``GameState`` (None when the episode is over)."""
        return self.game.get_state()

    def tic(self, buttons: list[float]) -> TicView:
        """Play one tic with ``buttons``; start a new episode after it if this tic ended the episode."""
        reward = float(self.game.make_action(buttons, 1))
        variables = np.array([self.game.get_game_variable(v) for v in self._variables], dtype=np.float64)
        done = bool(self.game.is_episode_finished())
        state = None if done else self.game.get_state()
        hashes = {"screen_md5": _md5(None if state is None else state.screen_buffer),
                  "depth_md5": _md5(state.depth_buffer if state is not None and "depth" in self.buffers else None),
                  "labels_md5": _md5(state.labels_buffer if state is not None and "labels" in self.buffers else None)}
        view = TicView(reward, variables, done, hashes, None if state is None else state.screen_buffer.copy())
        if done:
            self._start(self.game, self.scenario)
        return view

    def close(self) -> None:
        """Close the game (and its engine process)."""
        self.game.close()


Decide = Callable[[DoomGameTics, bool], list[float]]
"""Return the buttons of the next decision given the game and whether an episode just started."""


def _tic_schedule(next_buttons: Callable[[bool], list[float]], frameskip: int,
                  tics: int) -> Generator[tuple[list[float], bool, int], bool, None]:
    """Yield ``(buttons, is_decision, t)``; the caller reports episode ends by sending True into the generator."""
    held: list[float] = []
    left, new_episode = 0, True
    for t in range(tics):
        decision = left == 0 or new_episode
        if decision:
            held, left = next_buttons(new_episode), frameskip
        ended = yield held, decision, t
        left -= 1
        new_episode = bool(ended)
        if new_episode:
            left = 0


def record_doom(scenario: str, *, seed: int, tics: int, decide: Decide, agent: str, frameskip: int | None = None,
                buffers: tuple[str, ...] = ()) -> DoomTrace:
    """Record ``tics`` tics of ``scenario`` with the decisions of ``decide`` (see the module docstring)."""
    if isinstance(tics, bool) or not isinstance(tics, int) or tics < 1:
        raise TraceError(f"tics={tics!r}: record at least one tic")
    unknown = sorted(set(buffers) - set(BUFFERS))
    if unknown:
        raise TraceError(f"buffers {unknown} unknown: choose from {', '.join(BUFFERS)}")
    game = DoomGameTics(scenario, seed=seed, buffers=buffers)
    fs = game.scenario.frameskip if frameskip is None else frameskip
    try:
        out = _run(game, lambda new: decide(game, new), fs, tics)
    finally:
        game.close()
    sc = game.scenario
    header = {"format": FORMAT, "version": VERSION, "vizdoom_version": installed_version(), "scenario": sc.name,
              "scenario_spec": sc.to_dict(), "seed": int(seed), "frameskip": int(fs), "resolution": sc.resolution,
              "buttons": list(sc.buttons), "variables": list(TRACE_VARIABLES), "buffers": list(buffers),
              "agent": agent, "reset_rule": "new episode (bots re-added) after every episode end"}
    return DoomTrace(header=header, arrays=out)


def _run(game: DoomGameTics, next_buttons: Callable[[bool], list[float]], frameskip: int, tics: int,
         on_tic: Callable[[int, TicView], bool] | None = None) -> dict[str, np.ndarray]:
    """Step ``tics`` tics; ``on_tic(t, view)`` returning True stops early. Returns the recorded arrays."""
    nb = len(game.scenario.buttons)
    out = {"buttons": np.zeros((tics, nb)), "decision": np.zeros(tics, bool), "reward": np.zeros(tics),
           "variables": np.zeros((tics, len(TRACE_VARIABLES))), "done": np.zeros(tics, bool),
           **{k: np.zeros((tics, 16), np.uint8) for k in _HASHED}}
    schedule = _tic_schedule(next_buttons, frameskip, tics)
    step = next(schedule, None)
    while step is not None:
        buttons, decision, t = step
        view = game.tic(buttons)
        out["buttons"][t], out["decision"][t], out["reward"][t] = buttons, decision, view.reward
        out["variables"][t], out["done"][t] = view.variables, view.done
        for k in _HASHED:
            out[k][t] = view.hashes[k]
        if on_tic is not None and on_tic(t, view):
            break
        try:
            step = schedule.send(view.done)
        except StopIteration:
            step = None
    return out


@dataclass(frozen=True)
class DoomDivergence:
    """The first tic (1-based) where a replay differs from its trace, what differed, and the image if any."""

    tic: int
    fields: tuple[str, ...]
    variables: dict[str, tuple[float, float]] = field(default_factory=dict)
    png: str | None = None
    note: str = ""

    def summary(self) -> str:
        """One line: the tic, the fields, the variables that moved (recorded -> replayed) and the image."""
        moved = ", ".join(f"{k} {a:g} -> {b:g}" for k, a, b in ((k, *v) for k, v in self.variables.items()))
        text = f"first divergence at tic {self.tic}: {', '.join(self.fields)} differ"
        text += f" (variables recorded -> replayed: {moved})" if moved else ""
        text += f"; image (recorded | replayed | difference): {self.png}" if self.png else ""
        return text + (f"; {self.note}" if self.note else "")


def replay_doom(trace: DoomTrace, *, tics: int | None = None, seed: int | None = None, frameskip: int | None = None,
                png_dir: Path | None = None) -> DoomDivergence | None:
    """Replay the first ``tics`` tics of ``trace`` (default all) on the installed ViZDoom; return the first divergence.

    ``seed`` and ``frameskip`` default to the recorded ones; other values replay the recorded decisions
    with those settings. On a divergence with ``png_dir`` the recorded screen is regenerated from the
    trace's own settings and written next to the replayed one when its hash equals the recorded hash.
    """
    h = trace.header
    count = trace.tics if tics is None else tics
    if count > trace.tics:
        raise TraceError(f"replay of {count} tics asked of a trace that holds {trace.tics}")
    found: list[tuple[int, TicView]] = []

    def stop(t: int, view: TicView) -> bool:
        if _differs(trace, t, view):
            found.append((t, view))
        return bool(found)

    _replay_run(trace, count, int(h["seed"]) if seed is None else seed,
                int(h["frameskip"]) if frameskip is None else frameskip, stop)
    if not found:
        return None
    t, view = found[0]
    a = trace.arrays
    fields = [name for name, same in (("reward", a["reward"][t] == view.reward),
                                      ("variables", np.array_equal(a["variables"][t], view.variables)),
                                      ("done", bool(a["done"][t]) == view.done)) if not same]
    fields += [k.removesuffix("_md5") for k in _HASHED if not np.array_equal(a[k][t], view.hashes[k])]
    names = h["variables"]
    moved = {names[i]: (float(a["variables"][t][i]), float(view.variables[i]))
             for i in np.flatnonzero(a["variables"][t] != view.variables)}
    png, note = None, ""
    if png_dir is not None and view.screen is not None:
        png, note = _diff_image(trace, t, view.screen, png_dir)
    return DoomDivergence(tic=t + 1, fields=tuple(fields), variables=moved, png=png, note=note)


def _differs(trace: DoomTrace, t: int, view: TicView) -> bool:
    a = trace.arrays
    return bool(a["reward"][t] != view.reward or not np.array_equal(a["variables"][t], view.variables)
                or bool(a["done"][t]) != view.done
                or any(not np.array_equal(a[k][t], view.hashes[k]) for k in _HASHED))


def _replay_run(trace: DoomTrace, count: int, seed: int, frameskip: int,
                on_tic: Callable[[int, TicView], bool]) -> dict[str, np.ndarray]:
    h = trace.header
    game = DoomGameTics(str(h["scenario"]), seed=seed, buffers=tuple(h["buffers"]))
    decisions = iter(trace.decisions())
    idle = [0.0] * len(h["buttons"])
    try:
        return _run(game, lambda new: [float(x) for x in next(decisions, idle)], frameskip, count, on_tic)
    finally:
        game.close()


def _diff_image(trace: DoomTrace, t: int, replayed: np.ndarray, png_dir: Path) -> tuple[str | None, str]:
    """Regenerate the recorded screen of tic ``t`` from the trace's settings; write the difference PNG."""
    from conformance.frames import write_diff_png

    h = trace.header
    shot: list[np.ndarray] = []

    def grab(k: int, view: TicView) -> bool:
        recorded = trace.arrays["screen_md5"][t]
        if k == t and view.screen is not None and np.array_equal(view.hashes["screen_md5"], recorded):
            shot.append(view.screen)
        return k >= t

    _replay_run(trace, t + 1, int(h["seed"]), int(h["frameskip"]), grab)
    if not shot:
        return None, "no image: the recorded screen of that tic is not reproduced here from the trace's own settings"
    path = write_diff_png(png_dir / f"{h['scenario']}_tic{t + 1}.png", shot[0], replayed)
    return str(path), ""
