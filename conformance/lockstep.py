"""The lockstep engine: two sides stepped side by side, compared after the start, every step and every reset.

One loop (:func:`run_pair`) drives a :class:`Pair` and stops at the first mismatch. Its two users:
:class:`AtariPair` (:func:`lockstep`, :func:`run_lockstep`; the ``trace`` case kind and
``evaltk conformance lockstep``) and :class:`conformance.sim_lockstep.SimPair` (two simulators' envs;
the ``sim_lockstep`` case kind and ``evaltk conformance lockstep --sim``).

:func:`lockstep` drives a :class:`gpu_env.AtariBatch` ("ours") next to a
:class:`Reference` — live ale-py (:class:`LiveReference`) or a recorded trace
(:class:`conformance.trace.TraceReference`) — and stops at the first frame where anything differs:
reward, RAM, screen (or its hash), lives, game over, truncation and the frame counters, plus the
RGB and grayscale screens at the start and at the end. The CLI (``evaltk conformance lockstep``),
the suites (trace cases), the tests and ``python -m conformance.regen_docs`` all run it.

Two ways to start (:data:`START_MODES`), as :func:`run_lockstep` builds them from a
:class:`LockstepConfig`:

* ``"boot"``: both sides run their own ``loadROM`` (gpu_env's power-on probe and ``reset_game``);
  frame 0 is the state right after it; both run ``reset_game`` at every game over. Sticky actions
  (``repeat_action_probability``) and modes are compared too: both draw from ALE's mt19937.
* ``"ale-state"``: ale-py plays a random number of random frames ("warm-up"), its ``cloneState()``
  is imported into gpu_env (``AtariBatch.load_ale_state``) and both continue from there. At a
  game over ale-py runs ``reset_game`` and ``REIMPORT_WARMUP_FRAMES`` frames alone and its state is
  imported again. Sticky actions must be off: ALE does not serialize its sticky-action RNG.

Why warm-up frames: ALE does not serialize its two frame buffers, yet a frame that ends before the
bottom of the picture (common right after ``reset_game``) shows the older buffer. The import passes
``getScreen()`` before and after the last warm-up frame, which restores both buffers exactly when
that frame started a new TIA frame; the warm-up is extended until it did.
"""

from __future__ import annotations

import tempfile
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar

import numpy as np
import numpy.typing as npt

from conformance.ale_side import AleSide
from conformance.frames import Difference, Frame, first_difference, observe_batch, write_diff_png
from evaltk import seeding
from evaltk.registry import did_you_mean

START_MODES = ("ale-state", "boot")
ACTION_SETS = ("minimal", "full")
MAX_WARMUP_FRAMES = 300
MIN_WARMUP_FRAMES = 2
REIMPORT_WARMUP_FRAMES = 2
LIVE_FIELDS = ("reward", "ram", "screen", "lives", "game_over", "truncated", "frame_number",
               "episode_frame_number")
COLOUR_FIELDS = ("screen_rgb", "screen_grayscale")


class LockstepError(ValueError):
    """A lockstep that cannot start: a bad setting, named with the fix."""


def rom_problem(game: str) -> str | None:
    """Return why ``game`` is not a ROM id gpu_env plays (with the close ones), or None."""
    from gpu_env import games

    playable = games.games()
    if game in playable:
        return None
    if game in games.MULTIPLAYER_ONLY:
        try:
            games.game_info(game)
        except games.GameError as exc:
            return str(exc)
    return (f"unknown ROM id {game!r}: {did_you_mean(game, playable)}use one of the {len(playable)} ale-py ROM ids "
            "gpu_env plays (e.g. pong, space_invaders)")


@dataclass(frozen=True)
class Divergence:
    """The first place a lockstep found a difference.

    frame: 0 = the start (after loadROM or the import), f = after the f-th act; phase: ``"start"``,
    ``"act"`` or ``"reset"`` (right after the reset that followed frame ``frame``).
    """

    frame: int
    phase: str
    env: int
    fields: tuple[str, ...]
    values: tuple[tuple[str, str, str], ...] = ()  # (field, reference, ours) for scalar fields
    ram_diffs: tuple[tuple[int, int, int], ...] = ()  # (RAM index, reference, ours); address 0x80 + index
    pixel_diffs: int = 0
    png: str | None = None

    def summary(self) -> str:
        """One line for logs, reports and JUnit."""
        where = {"start": "at the start", "act": f"at frame {self.frame}",
                 "reset": f"right after the reset following frame {self.frame}"}[self.phase]
        parts = [", ".join(self.fields)]
        parts += [f"{name} ref {ref} ours {ours}" for name, ref, ours in self.values]
        if self.ram_diffs:
            parts.append("RAM " + ", ".join(f"0x{0x80 + i:02X} ref {a} ours {b}" for i, a, b in self.ram_diffs[:8]))
        if self.pixel_diffs:
            parts.append(f"{self.pixel_diffs} pixels")
        env = f" (env {self.env})" if self.env else ""
        return f"first divergence {where}{env}: " + "; ".join(parts)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"frame": self.frame, "phase": self.phase, "env": self.env, "fields": list(self.fields),
                "values": [list(v) for v in self.values], "ram_diffs": [list(d) for d in self.ram_diffs],
                "pixel_diffs": self.pixel_diffs, "png": self.png}


class Reference(Protocol):
    """What ours is compared against, frame by frame (live ale-py, or a recorded trace)."""

    num_envs: int

    def start(self, ours: Any) -> Frame | None:
        """Bring ``ours`` to the common start (an import, or nothing); return the expected start frame or None."""

    def step(self, frame: int) -> tuple[npt.NDArray[np.int64], Frame]:
        """Return the actions of ``frame`` (int64[N], full-set indices) and what the reference shows after them."""

    def episode_ends(self, frame: int, shown: Frame | None) -> npt.NDArray[np.bool_]:
        """bool[N]: the envs whose episode the reference resets after ``frame``."""

    def reset(self, mask: npt.NDArray[np.bool_], ours: Any) -> Frame | None:
        """Reset the masked envs on both sides; return the expected frame after it, or None."""

    def rgb(self, env: int) -> npt.NDArray[np.uint8] | None:
        """Return the reference's RGB screen of ``env`` for the difference image (None: not available)."""


M = TypeVar("M")
M_co = TypeVar("M_co", covariant=True)


class Pair(Protocol[M_co]):
    """Two sides stepped together; each call compares them and returns the first mismatch (an ``M``) or None.

    The Atari pair (:class:`AtariPair`: gpu_env next to ale-py or a trace) and the simulator pair
    (:class:`conformance.sim_lockstep.SimPair`: two simulators' envs) are the engine's two users.
    """

    def start(self) -> M_co | None:
        """Bring both sides to the common start and compare them there."""

    def step(self, frame: int) -> M_co | None:
        """Play step ``frame`` (1-based) on both sides and compare what they show."""

    def episode_ends(self, frame: int) -> npt.NDArray[np.bool_]:
        """Return bool[N]: the envs whose episode ends after step ``frame`` (0: after the start)."""

    def reset(self, frame: int, mask: npt.NDArray[np.bool_]) -> M_co | None:
        """Start the next episode of the masked envs on both sides and compare them."""


@dataclass(frozen=True)
class EngineResult(Generic[M]):
    """What :func:`run_pair` found: steps compared, resets done, the first mismatch (or None), fields compared."""

    frames_compared: int
    resets: int
    divergence: M | None
    compared: tuple[str, ...] = ()


def run_pair(pair: Pair[M], frames: int) -> EngineResult[M]:
    """Step ``pair`` ``frames`` steps from its start, resetting ended episodes; stop at the first mismatch.

    ``frames_compared`` counts the steps found identical: the start and the resets after step ``f``
    are compared as part of step ``f``.
    """
    resets = 0
    bad = pair.start()
    if bad is not None:
        return EngineResult(0, resets, bad)
    for frame in range(frames + 1):
        if frame > 0:
            bad = pair.step(frame)
            if bad is not None:
                return EngineResult(frame - 1, resets, bad)
        ends = pair.episode_ends(frame)
        if ends.any():
            resets += int(ends.sum())
            bad = pair.reset(frame, ends)
            if bad is not None:
                return EngineResult(frame, resets, bad)
    return EngineResult(frames, resets, None)


class AtariPair:
    """gpu_env (``ours``, a :class:`gpu_env.AtariBatch`) next to a :class:`Reference`, every known field compared.

    The RGB/grayscale screens are compared at the start and after the last step when ``colours`` (live
    references only); ``png_path`` receives reference | ours | difference at a divergence.
    """

    def __init__(self, reference: Reference, ours: Any, frames: int, png_path: Path | None, colours: bool) -> None:
        self.reference, self.ours, self.frames = reference, ours, frames
        self.png_path, self.colours = png_path, colours
        self.compared: set[str] = set()
        self._shown: Frame | None = None

    def _check(self, expected: Frame | None, reward: Any, frame: int, phase: str) -> Divergence | None:
        if expected is None:
            return None
        self.compared.update(expected.known())
        diff = first_difference(expected, observe_batch(self.ours, reward, expected.known()))
        return None if diff is None else _divergence(diff, frame, phase, self.reference, self.ours, self.png_path)

    def _with_colours(self, shown: Frame | None, at_edge: bool) -> Frame | None:
        if shown is None or not (self.colours and at_edge) or not isinstance(self.reference, LiveReference):
            return shown
        return self.reference.observe_colours(shown)

    def start(self) -> Divergence | None:
        """Bring ours to the reference's start (an import or nothing) and compare."""
        self._shown = self.reference.start(self.ours)
        return self._check(self._with_colours(self._shown, True), None, 0, "start")

    def step(self, frame: int) -> Divergence | None:
        """Play the reference's actions of ``frame`` on ours and compare what both show."""
        actions, self._shown = self.reference.step(frame)
        rewards = self.ours.act(actions)
        return self._check(self._with_colours(self._shown, frame == self.frames), rewards, frame, "act")

    def episode_ends(self, frame: int) -> npt.NDArray[np.bool_]:
        """Return the envs whose episode the reference ends after ``frame``."""
        return self.reference.episode_ends(frame, self._shown)

    def reset(self, frame: int, mask: npt.NDArray[np.bool_]) -> Divergence | None:
        """Reset the masked envs on both sides (the reference's rule) and compare."""
        return self._check(self.reference.reset(mask, self.ours), None, frame, "reset")


def lockstep(reference: Reference, ours: Any, frames: int, *, png_path: Path | None = None,
             colours: bool = True) -> EngineResult[Divergence]:
    """Step ``ours`` (a :class:`gpu_env.AtariBatch`) next to ``reference`` for ``frames`` frames (:class:`AtariPair`).

    Compares every field the reference knows after the start, after every act and after every reset,
    and the RGB/grayscale screens at the start and the end when ``colours`` (live references only).
    Stops at the first difference; with ``png_path`` writes reference | ours | difference there.
    """
    pair = AtariPair(reference, ours, frames, png_path, colours)
    out = run_pair(pair, frames)
    return replace(out, compared=tuple(n for n in _ORDER if n in pair.compared))


_ORDER = ("reward", "ram", "screen", "screen_md5", "lives", "game_over", "truncated", "frame_number",
          "episode_frame_number", "screen_rgb", "screen_grayscale")


def _divergence(diff: Difference, frame: int, phase: str, reference: Reference, ours: Any,
                png_path: Path | None) -> Divergence:
    png = None
    ref_rgb = reference.rgb(diff.env) if png_path is not None else None
    if png_path is not None and ref_rgb is not None:
        png = str(write_diff_png(png_path, ref_rgb, np.asarray(ours.get_screen_rgb())[diff.env]))
    return Divergence(frame=frame, phase=phase, env=diff.env, fields=diff.fields, values=diff.values,
                      ram_diffs=diff.ram_diffs, pixel_diffs=diff.pixel_diffs, png=png)


class LiveReference:
    """ale-py itself as the reference (see the module docstring for the two start modes)."""

    def __init__(self, side: AleSide, start: str, rng: np.random.Generator, choices: npt.NDArray[np.int64],
                 warmup_frames: int | None) -> None:
        self.side = side
        self.num_envs = side.num_envs
        self._start = start
        self._rng = rng
        self._choices = choices
        self._warmup = warmup_frames
        self.warmups: list[int] = []

    def start(self, ours: Any) -> Frame:
        """Import ale-py's warmed-up states into ours (``ale-state``), or nothing (``boot``)."""
        if self._start == "ale-state":
            for i in range(self.num_envs):
                w = (int(self._rng.integers(MIN_WARMUP_FRAMES, MAX_WARMUP_FRAMES)) if self._warmup is None
                     else self._warmup)
                self.warmups.append(w)
                self.side.export_into(i, ours, self.side.warm_up(i, self._rng, self._choices, w))
        return self.side.observe(None, LIVE_FIELDS)

    def step(self, frame: int) -> tuple[npt.NDArray[np.int64], Frame]:
        """Draw one random action per env from the action set and play it on ale-py."""
        actions = self._choices[self._rng.integers(len(self._choices), size=self.num_envs)]
        return actions, self.side.observe(self.side.act(actions), LIVE_FIELDS)

    def episode_ends(self, frame: int, shown: Frame | None) -> npt.NDArray[np.bool_]:
        """ale-py's game over (truncation included)."""
        if shown is None:
            return np.zeros(self.num_envs, dtype=np.bool_)
        return shown.game_over

    def reset(self, mask: npt.NDArray[np.bool_], ours: Any) -> Frame:
        """``reset_game`` on both (boot), or on ale-py plus a short warm-up and a re-import (ale-state)."""
        self.side.reset_game(mask)
        if self._start == "boot":
            ours.reset_game(mask)
        else:
            for i in np.flatnonzero(mask):
                previous = self.side.warm_up(int(i), self._rng, self._choices, REIMPORT_WARMUP_FRAMES)
                self.side.export_into(int(i), ours, previous)
        return self.side.observe(None, LIVE_FIELDS)

    def observe_colours(self, shown: Frame) -> Frame:
        """``shown`` plus ale-py's RGB and grayscale screens now."""
        colours = self.side.observe(None, COLOUR_FIELDS)
        return replace(shown, screen_rgb=colours.screen_rgb, screen_grayscale=colours.screen_grayscale)

    def rgb(self, env: int) -> npt.NDArray[np.uint8]:
        """ale-py's RGB screen of ``env``."""
        return self.side.rgb(env)


@dataclass(frozen=True)
class LockstepConfig:
    """One lockstep run (see the module docstring). Checked on construction (:class:`LockstepError`).

    game: ale-py ROM id (or any name when ``rom_path`` is given); frames: acts compared after the
    start; seed: the base seed of :mod:`evaltk.seeding` (env ``i``'s ALE ``random_seed`` is
    :func:`ale_seeds`, the action/warm-up generator :func:`action_rng`); actions: ``"minimal"`` (the ROM's
    minimal set) or ``"full"`` (all 18);
    warmup_frames: ``ale-state`` only (default: drawn from the generator, at least 2); backend:
    gpu_env's (``"cpu"`` or ``"cuda"``; ``"ale_py"`` checks ale-py against itself).
    """

    game: str
    frames: int
    seed: int = 0
    start: str = "ale-state"
    num_envs: int = 1
    actions: str = "minimal"
    repeat_action_probability: float = 0.0
    frameskip: int = 1
    mode: int | None = None
    difficulty: int | None = None
    max_num_frames_per_episode: int = 0
    warmup_frames: int | None = None
    backend: str = "cpu"
    num_threads: int | None = 1
    rom_path: str | None = None

    def __post_init__(self) -> None:
        """Reject settings the engine cannot run, naming the field."""
        def positive(name: str, value: object) -> None:
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise LockstepError(f"{name}={value!r}: give a positive integer")

        if self.rom_path is None and (problem := rom_problem(self.game)) is not None:
            raise LockstepError(problem)
        positive("frames", self.frames)
        positive("num_envs", self.num_envs)
        positive("frameskip", self.frameskip)
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise LockstepError(f"seed={self.seed!r}: give an integer >= 0")
        if self.start not in START_MODES:
            raise LockstepError(f"start={self.start!r}: use one of {', '.join(START_MODES)}")
        if self.actions not in ACTION_SETS:
            raise LockstepError(f"actions={self.actions!r}: use one of {', '.join(ACTION_SETS)}")
        if not 0.0 <= self.repeat_action_probability <= 1.0:
            raise LockstepError(f"repeat_action_probability={self.repeat_action_probability}: give a value in [0, 1]")
        if self.start == "ale-state" and self.repeat_action_probability != 0.0:
            raise LockstepError("start='ale-state' needs repeat_action_probability=0: ALE does not serialize its "
                                "sticky-action RNG; compare sticky actions with start='boot'")
        if self.warmup_frames is not None and (self.start != "ale-state" or self.warmup_frames < 0):
            raise LockstepError(f"warmup_frames={self.warmup_frames}: only for start='ale-state', and >= 0")
        if self.max_num_frames_per_episode < 0:
            raise LockstepError(f"max_num_frames_per_episode={self.max_num_frames_per_episode}: give >= 0 (0: off)")


@dataclass(frozen=True)
class LockstepResult:
    """Outcome of :func:`run_lockstep`."""

    config: LockstepConfig
    frames_compared: int
    resets: int  # ale-state: re-imports after game over; boot: reset_game calls on both sides
    warmup_frames: tuple[int, ...]  # per env (ale-state); () for boot
    compared: tuple[str, ...]
    seconds: float
    divergence: Divergence | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def game(self) -> str:
        """The ROM id."""
        return self.config.game

    @property
    def diverged(self) -> bool:
        """True when a compared quantity differed."""
        return self.divergence is not None

    def summary(self) -> str:
        """One line: identical frames, or the first divergence."""
        c = self.config
        head = (f"{c.game} ({c.start}, seed {c.seed}, {c.num_envs} env{'s' if c.num_envs > 1 else ''}, "
                f"sticky {c.repeat_action_probability:g}, {c.actions} actions)")
        if self.divergence is not None:
            return f"{head}: DIVERGED, {self.divergence.summary()}"
        warm = f", warm-up {','.join(map(str, self.warmup_frames))} frames" if self.warmup_frames else ""
        return (f"{head}: {self.frames_compared} frames identical ({', '.join(self.compared)}; "
                f"{self.resets} resets{warm})")

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready summary."""
        c = self.config
        return {
            "game": c.game, "seed": c.seed, "start": c.start, "num_envs": c.num_envs, "actions": c.actions,
            "repeat_action_probability": c.repeat_action_probability, "frameskip": c.frameskip,
            "backend": c.backend, "frames_requested": c.frames, "frames_compared": self.frames_compared,
            "warmup_frames": list(self.warmup_frames), "resets": self.resets, "diverged": self.diverged,
            "divergence": None if self.divergence is None else self.divergence.as_dict(),
            "compared": list(self.compared), "seconds": round(self.seconds, 3),
        }


def run_lockstep(config: LockstepConfig, *, png_dir: str | Path | None = None) -> LockstepResult:
    """Run one lockstep of gpu_env against live ale-py as ``config`` says (see the module docstring)."""
    from gpu_env import AtariBatch
    from gpu_env.roms import resolve_rom_path

    c = config
    began = time.perf_counter()
    path = Path(c.rom_path) if c.rom_path is not None else resolve_rom_path(c.game)
    seeds = ale_seeds(c.seed, c.num_envs)
    settings = {"repeat_action_probability": c.repeat_action_probability, "frameskip": c.frameskip,
                "mode": c.mode, "difficulty": c.difficulty, "max_num_frames_per_episode": c.max_num_frames_per_episode}
    side = AleSide(path, seeds, **settings)  # type: ignore[arg-type]
    extra: dict[str, Any] = {"num_threads": c.num_threads} if c.backend == "cpu" else {}
    ours = AtariBatch(path if c.rom_path is not None else c.game, c.num_envs, backend=c.backend, seeds=seeds,
                      **settings, **extra)  # type: ignore[arg-type]
    choices = side.minimal_action_set() if c.actions == "minimal" else np.arange(18, dtype=np.int64)
    reference = LiveReference(side, c.start, action_rng(c.seed), choices, c.warmup_frames)
    png = None if png_dir is None else Path(png_dir) / f"lockstep_{c.start}_{c.game}_seed{c.seed}.png"
    out = lockstep(reference, ours, c.frames, png_path=png)
    return LockstepResult(config=c, frames_compared=out.frames_compared, resets=out.resets,
                          warmup_frames=tuple(reference.warmups), compared=out.compared,
                          seconds=time.perf_counter() - began, divergence=out.divergence)


def ale_seeds(seed: int, num_envs: int) -> list[int]:
    """Return ALE's ``random_seed`` of each env under base ``seed``: stream ``lockstep.ale`` at ``(i,)``, 31 bits."""
    return [seeding.seed(seed, "lockstep.ale", i, bits=31) for i in range(num_envs)]


def action_rng(seed: int) -> np.random.Generator:
    """Return the generator of both engine users' random actions (and ale-state warm-ups) under base ``seed``.

    It is stream ``lockstep.actions`` of :mod:`evaltk.seeding`.
    """
    return seeding.rng(seed, "lockstep.actions")


def default_png_dir() -> Path:
    """Where the CLI writes difference images unless told otherwise."""
    return Path(tempfile.gettempdir()) / "evaltk_lockstep"
