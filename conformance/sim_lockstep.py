"""Two simulators stepped side by side at deterministic settings, compared every env step.

:func:`run_sim_lockstep` builds the same env on both sides (:func:`deterministic_env`: sticky actions
off, AtariPreprocessing with one NOOP after every reset, ``frame_skip`` 4, 84x84 grayscale, no stack),
each from the simulator registry (:func:`evaltk.simulators.get` then ``deterministic()``: EnvPool without
FIRE on reset), starts episode ``e`` of both with the seed ``episode_seed(seed, e)`` (an evaluation's),
and feeds both the same uniformly random actions (:func:`conformance.lockstep.action_rng`). It runs on
the lockstep engine (:func:`conformance.lockstep.run_pair`, :class:`SimPair`). After every reset and every step
it compares, in this order, ``obs``, ``reward``, ``terminated``, ``truncated`` and ``lives`` (those of
``compare``; a reset has only its observation to compare), and stops at the first difference: it writes
``reference.png`` and ``sim.png`` (the two observations), ``diff.png``
(:func:`conformance.frames.write_diff_png`: reference | sim | white where they differ),
``observations.npz`` and ``values.json`` into the output folder. With ``profile`` it runs every step
instead and fills a :class:`conformance.sim_profile.Profile` (per field: steps compared, steps that
differ, the first of them; for ``obs`` the mean absolute pixel difference), writing each field's first
difference into ``out/FIELD/``. An episode that ends on either side starts the next episode on both
(counted in :class:`conformance.sim_profile.EpisodeEnds`). With ``terminal_obs=False`` the
observation of a step that ends an episode (on either side) is not compared (gymnasium's AtariPreprocessing does not
capture the screen of the frame a game ends on, EnvPool does: ``docs/simulators.md``); the result
counts the terminal observations that differed. ``evaltk conformance lockstep --sim``
and the suite kind ``sim_lockstep`` (:mod:`conformance.sim_lockstep_case`) run it.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from conformance.frames import write_diff_png
from conformance.lockstep import LockstepError, action_rng, run_pair
from conformance.sim_profile import FIELDS, EpisodeEnds, Profile, compare_problem
from evaltk.envs import EnvSpec, describe
from evaltk.envs.atari import atari_env
from evaltk.seeding import episode_seed
from evaltk.simulators import get
from evaltk.simulators.base import EpisodeRunner, Transition


def deterministic_env(env_id: str) -> EnvSpec:
    """Return the env both sides run: ``env_id``, no sticky actions, one NOOP per reset, 84x84 gray, skip 4."""
    return atari_env(env_id, kwargs={"frameskip": 1, "repeat_action_probability": 0.0},
                     atari_preprocessing={"noop_max": 1, "frame_skip": 4, "screen_size": 84}, frame_stack=1)


@dataclass(frozen=True)
class SimLockstepConfig:
    """What to compare: simulator ``sim`` against ``reference`` on ``env_id`` for ``steps`` env steps."""

    sim: str
    env_id: str
    steps: int
    reference: str = "gym"
    seed: int = 0
    terminal_obs: bool = True
    """Compare the observation of a step that ends an episode (False: skip it, count differing ones)."""
    compare: tuple[str, ...] = FIELDS
    """The fields compared (kept in :data:`FIELDS` order)."""
    profile: bool = False
    """Run every step and profile the differences instead of stopping at the first one."""

    def __post_init__(self) -> None:
        problem = compare_problem(self.compare)
        if problem is not None:
            raise LockstepError(f"compare {problem}")
        object.__setattr__(self, "compare", tuple(f for f in FIELDS if f in self.compare))

    @property
    def default(self) -> bool:
        """Whether this is the plain lockstep: every field compared, stopping at the first difference."""
        return self.compare == FIELDS and not self.profile


@dataclass(frozen=True)
class FirstDifference:
    """Where the two sides first differ: env step (0 = the first reset), episode, field, both values, files."""

    step: int
    episode: int
    phase: str
    """``reset`` (the observation an episode starts with) or ``step``."""
    field: str
    reference: Any
    sim: Any
    pixels: int
    """Observation pixels that differ (0 unless ``field`` is ``obs``)."""
    files: dict[str, str] = dataclasses.field(default_factory=dict)

    def summary(self) -> str:
        """One line: where, which field, the values (or pixel count)."""
        what = (f"{self.pixels} pixels differ" if self.field == "obs"
                else f"reference {self.reference} sim {self.sim}")
        return f"first difference at step {self.step} ({self.phase}, episode {self.episode}): {self.field}: {what}"

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready fields."""
        return {"step": self.step, "episode": self.episode, "phase": self.phase, "field": self.field,
                "reference": self.reference, "sim": self.sim, "pixels": self.pixels, "files": self.files}


@dataclass(frozen=True)
class SimLockstepResult:
    """The outcome: steps compared, episodes started, the first difference (None: identical), the profile."""

    config: SimLockstepConfig
    steps: int
    episodes: int
    first_difference: FirstDifference | None
    terminal_obs_differed: int = 0
    """Episode-ending steps whose observations differed and were skipped (``terminal_obs=False``)."""
    profile: Profile | None = None
    """Per field, over every step (``config.profile``); ``first_difference`` is then the earliest field's."""
    episode_ends: EpisodeEnds = dataclasses.field(default_factory=EpisodeEnds)
    """Steps after which an episode ended on both sides, on the reference only, on the simulator only."""

    @property
    def identical(self) -> bool:
        """Whether every compared field was equal at every step."""
        return self.first_difference is None

    def summary(self) -> str:
        """One line for logs and JUnit."""
        c = self.config
        head = f"{c.sim} vs {c.reference} on {c.env_id} (seed {c.seed})"
        if c.compare != FIELDS:
            head += f", comparing {','.join(c.compare)}"
        skipped = ("" if self.config.terminal_obs else
                   f"; terminal observations not compared, {self.terminal_obs_differed} of them differed")
        if self.profile is not None:
            return (f"{head}: profile of {self.steps} steps ({self.episodes} episodes, "
                    f"{self.episode_ends.summary()}{skipped}): {self.profile.summary()}")
        if self.first_difference is None:
            return f"{head}: identical over {self.steps} steps ({self.episodes} episodes{skipped})"
        return f"{head}: {self.first_difference.summary()}{skipped}"

    def as_dict(self) -> dict[str, Any]:
        """Return the ``--json`` object."""
        c = self.config
        return {"sim": c.sim, "reference": c.reference, "env_id": c.env_id, "seed": c.seed, "steps": self.steps,
                "episodes": self.episodes, "identical": self.identical, "terminal_obs": c.terminal_obs,
                "terminal_obs_differed": self.terminal_obs_differed,
                "first_difference": None if self.first_difference is None else self.first_difference.as_dict(),
                **self.extras()}

    def extras(self) -> dict[str, Any]:
        """Return the keys a non-default run adds: ``compare``, ``episode_ends`` and (``profile``) ``profile``."""
        if self.config.default:
            return {}
        out: dict[str, Any] = {"compare": list(self.config.compare), "episode_ends": self.episode_ends.as_dict()}
        if self.profile is not None:
            out["profile"] = self.profile.as_dict()
        return out


def _differs(ref: Transition, sim: Transition, name: str) -> tuple[Any, Any, int] | None:
    """Return field ``name``'s two values and differing pixels (``obs``: None, None, pixels) if they differ."""
    a, b = getattr(ref, name), getattr(sim, name)
    if name == "obs":
        if a.shape != b.shape or not np.array_equal(a, b):
            return None, None, int(a.size) if a.shape != b.shape else int((a != b).sum())
    elif a != b:
        return a, b, 0
    return None


def _rgb(obs: np.ndarray) -> np.ndarray:
    gray = obs if obs.ndim == 2 else obs.reshape(-1, obs.shape[-1])
    return np.repeat(gray[..., None], 3, axis=-1).astype(np.uint8)


def _write(out: Path, ref: Transition, sim: Transition, found: FirstDifference) -> dict[str, str]:
    import cv2

    out.mkdir(parents=True, exist_ok=True)
    files = {"reference": out / "reference.png", "sim": out / "sim.png", "diff": out / "diff.png",
             "observations": out / "observations.npz", "values": out / "values.json"}
    cv2.imwrite(str(files["reference"]), _rgb(ref.obs))
    cv2.imwrite(str(files["sim"]), _rgb(sim.obs))
    write_diff_png(files["diff"], _rgb(ref.obs), _rgb(sim.obs))
    np.savez_compressed(files["observations"], reference=ref.obs, sim=sim.obs)
    values = {side: {k: getattr(t, k) for k in (*FIELDS[1:], "frames")} for side, t in (("reference", ref),
                                                                                          ("sim", sim))}
    files["values"].write_text(json.dumps({**found.as_dict(), "values": values}, indent=1) + "\n", encoding="utf-8")
    return {k: str(v) for k, v in files.items()}


class SimPair:
    """Two simulators' runners as a :class:`conformance.lockstep.Pair` of one env (see the module docstring).

    Without ``config.profile`` each comparison returns the first differing field (the engine then stops);
    with it every comparison goes into :attr:`profile` and returns None, so the engine runs every step.
    """

    def __init__(self, config: SimLockstepConfig, runners: tuple[EpisodeRunner, EpisodeRunner], n_actions: int,
                 out: Path) -> None:
        self.config, self.runners, self.n_actions, self.out = config, runners, n_actions, out
        self.rng = action_rng(config.seed)
        self.episode, self.skipped = 0, 0
        self.ends = EpisodeEnds()
        self.profile = Profile.of(config.compare) if config.profile else None
        self.first: FirstDifference | None = None
        """The earliest difference found (with ``profile``: of any field)."""
        self._ending = False

    def _begin(self, step: int) -> FirstDifference | None:
        seed = episode_seed(self.config.seed, self.episode)
        pair = tuple(Transition(r.start(seed), 0.0, False, False, 0, -1) for r in self.runners)
        fields = ("obs",) if "obs" in self.config.compare else ()  # a reset has no reward, flags or lives
        return self._compare(pair, step, "reset", fields)  # type: ignore[arg-type]

    def _found(self, pair: tuple[Transition, Transition], step: int, phase: str, name: str,
               values: tuple[Any, Any, int], out: Path) -> FirstDifference:
        diff = FirstDifference(step, self.episode, phase, name, *values)
        diff = dataclasses.replace(diff, files=_write(out, *pair, diff))
        self.first = self.first or diff
        return diff

    def _compare(self, pair: tuple[Transition, Transition], step: int, phase: str,
                 fields: tuple[str, ...]) -> FirstDifference | None:
        for name in fields:
            found = _differs(*pair, name)
            if self.profile is None:
                if found is not None:
                    return self._found(pair, step, phase, name, found, self.out)
                continue
            entry = self.profile.fields[name]
            if name == "obs" and pair[0].obs.shape == pair[1].obs.shape:
                entry.add_pixels(pair[0].obs, pair[1].obs)
            if entry.record(step, found is not None) and found is not None:
                entry.files = self._found(pair, step, phase, name, found, self.out / name).files
        return None

    def start(self) -> FirstDifference | None:
        """Start episode 0 on both sides and compare the first observations."""
        return self._begin(0)

    def step(self, frame: int) -> FirstDifference | None:
        """Feed one random action to both sides and compare (a terminal observation only with ``terminal_obs``)."""
        action = int(self.rng.integers(self.n_actions))
        pair = (self.runners[0].step(action), self.runners[1].step(action))
        ended = tuple(t.terminated or t.truncated for t in pair)
        self._ending = any(ended)
        self.ends.count(*ended)
        fields = self.config.compare
        if self._ending and not self.config.terminal_obs and "obs" in fields:
            fields = tuple(f for f in fields if f != "obs")
            self.skipped += int(_differs(*pair, "obs") is not None)
        return self._compare(pair, frame, "step", fields)

    def episode_ends(self, frame: int) -> np.ndarray:
        """Return ``[True]`` after a step that ended the episode of either side."""
        return np.array([frame > 0 and self._ending], dtype=np.bool_)

    def reset(self, frame: int, mask: np.ndarray) -> FirstDifference | None:
        """Start the next episode (seed ``episode_seed(seed, e)``) on both sides and compare."""
        self.episode += 1
        return self._begin(frame)


def run_sim_lockstep(config: SimLockstepConfig, *, out: Path) -> SimLockstepResult:
    """Step both sides ``config.steps`` env steps (or to the first difference); files go to ``out`` on a difference.

    With ``config.profile`` every step runs and each field's first difference goes to ``out/FIELD/``.
    Raises :class:`evaltk.simulators.SimulatorError` (or :class:`evaltk.errors.SpecError`) before stepping when a
    side cannot run the env. Lives at a reset are not compared (``start`` reports none).
    """
    if config.steps < 1:
        raise ValueError(f"--steps must be >= 1, got {config.steps}")
    info = describe(deterministic_env(config.env_id))
    sims = [get(name, option=option).deterministic() for name, option in ((config.reference, "--reference"),
                                                                           (config.sim, "--sim"))]
    for sim in sims:
        sim.check(info, seed=episode_seed(config.seed, 0))
    runners = (sims[0].runner(info), sims[1].runner(info))
    try:
        pair = SimPair(config, runners, int(info.action_spec["n"]), out)
        engine = run_pair(pair, config.steps)
        steps = config.steps if engine.divergence is None else engine.divergence.step
        return SimLockstepResult(config, steps, pair.episode + 1, pair.first, pair.skipped, pair.profile, pair.ends)
    finally:
        for runner in runners:
            runner.close()
