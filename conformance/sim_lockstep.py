"""Two simulators stepped side by side at deterministic settings, compared every env step.

:func:`run_sim_lockstep` builds the same env on both sides (:func:`deterministic_env`: sticky actions
off, AtariPreprocessing with one NOOP after every reset, ``frame_skip`` 4, 84x84 grayscale, no stack),
each from the simulator registry (:func:`evaltk.simulators.get` then ``deterministic()``: EnvPool without
FIRE on reset), starts episode ``e`` of both with the seed ``episode_seed(seed, e)`` (an evaluation's),
and feeds both the same uniformly random actions (:func:`conformance.lockstep.action_rng`). It runs on
the lockstep engine (:func:`conformance.lockstep.run_pair`, :class:`SimPair`). After every reset and every step
it compares, in this order, ``obs``, ``reward``, ``terminated``, ``truncated`` and ``lives``, and stops at
the first difference: it writes ``reference.png`` and ``sim.png`` (the two observations),
``diff.png`` (:func:`conformance.frames.write_diff_png`: reference | sim | white where they differ),
``observations.npz`` and ``values.json`` into the output folder. With ``terminal_obs=False`` the
observation of a step that ends an episode is not compared (gymnasium's AtariPreprocessing does not
capture the screen of the frame a game ends on, EnvPool does: ``docs/simulators.md``); the result
counts the terminal observations that differed. ``evaltk conformance lockstep --sim``
and the suite kind ``sim_lockstep`` run it.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from conformance.frames import write_diff_png
from conformance.lockstep import action_rng, run_pair
from evaltk.envs import describe
from evaltk.envs.atari import atari_env
from evaltk.seeding import episode_seed
from evaltk.simulators import get
from evaltk.simulators.slots import EpisodeRunner, Transition

FIELDS = ("obs", "reward", "terminated", "truncated", "lives")


def deterministic_env(env_id: str) -> dict[str, Any]:
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
    """The outcome: steps compared, episodes started, and the first difference (None: identical)."""

    config: SimLockstepConfig
    steps: int
    episodes: int
    first_difference: FirstDifference | None
    terminal_obs_differed: int = 0
    """Episode-ending steps whose observations differed and were skipped (``terminal_obs=False``)."""

    @property
    def identical(self) -> bool:
        """Whether every compared field was equal at every step."""
        return self.first_difference is None

    def summary(self) -> str:
        """One line for logs and JUnit."""
        c = self.config
        head = f"{c.sim} vs {c.reference} on {c.env_id} (seed {c.seed})"
        skipped = ("" if self.config.terminal_obs else
                   f"; terminal observations not compared, {self.terminal_obs_differed} of them differed")
        if self.first_difference is None:
            return f"{head}: identical over {self.steps} steps ({self.episodes} episodes{skipped})"
        return f"{head}: {self.first_difference.summary()}{skipped}"

    def as_dict(self) -> dict[str, Any]:
        """Return the ``--json`` object."""
        c = self.config
        return {"sim": c.sim, "reference": c.reference, "env_id": c.env_id, "seed": c.seed, "steps": self.steps,
                "episodes": self.episodes, "identical": self.identical, "terminal_obs": c.terminal_obs,
                "terminal_obs_differed": self.terminal_obs_differed,
                "first_difference": None if self.first_difference is None else self.first_difference.as_dict()}


def _compare(ref: Transition, sim: Transition, fields: tuple[str, ...]) -> tuple[str, Any, Any, int] | None:
    for name in fields:
        a, b = getattr(ref, name), getattr(sim, name)
        if name == "obs":
            if a.shape != b.shape or not np.array_equal(a, b):
                pixels = int(a.size) if a.shape != b.shape else int((a != b).sum())
                return name, None, None, pixels
        elif a != b:
            return name, a, b, 0
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
    """Two simulators' runners as a :class:`conformance.lockstep.Pair` of one env (see the module docstring)."""

    def __init__(self, config: SimLockstepConfig, runners: tuple[EpisodeRunner, EpisodeRunner], n_actions: int,
                 out: Path) -> None:
        self.config, self.runners, self.n_actions, self.out = config, runners, n_actions, out
        self.rng = action_rng(config.seed)
        self.episode, self.skipped = 0, 0
        self._ending = False

    def _begin(self, step: int) -> FirstDifference | None:
        seed = episode_seed(self.config.seed, self.episode)
        pair = tuple(Transition(r.start(seed), 0.0, False, False, 0, -1) for r in self.runners)
        return self._compare(pair, step, "reset", FIELDS)  # type: ignore[arg-type]

    def _compare(self, pair: tuple[Transition, Transition], step: int, phase: str,
                 fields: tuple[str, ...]) -> FirstDifference | None:
        found = _compare(*pair, fields)
        if found is None:
            return None
        name, a, b, pixels = found
        diff = FirstDifference(step, self.episode, phase, name, a, b, pixels)
        return dataclasses.replace(diff, files=_write(self.out, *pair, diff))

    def start(self) -> FirstDifference | None:
        """Start episode 0 on both sides and compare the first observations."""
        return self._begin(0)

    def step(self, frame: int) -> FirstDifference | None:
        """Feed one random action to both sides and compare (a terminal observation only with ``terminal_obs``)."""
        action = int(self.rng.integers(self.n_actions))
        pair = (self.runners[0].step(action), self.runners[1].step(action))
        self._ending = pair[0].terminated or pair[0].truncated
        fields = FIELDS[1:] if self._ending and not self.config.terminal_obs else FIELDS
        self.skipped += int(fields is not FIELDS and _compare(*pair, ("obs",)) is not None)
        return self._compare(pair, frame, "step", fields)

    def episode_ends(self, frame: int) -> np.ndarray:
        """Return ``[True]`` after a step that ended the reference's episode."""
        return np.array([frame > 0 and self._ending], dtype=np.bool_)

    def reset(self, frame: int, mask: np.ndarray) -> FirstDifference | None:
        """Start the next episode (seed ``episode_seed(seed, e)``) on both sides and compare."""
        self.episode += 1
        return self._begin(frame)


def run_sim_lockstep(config: SimLockstepConfig, *, out: Path) -> SimLockstepResult:
    """Step both sides ``config.steps`` env steps (or to the first difference); files go to ``out`` on a difference.

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
        found = run_pair(pair, config.steps).divergence
        steps = config.steps if found is None else found.step
        return SimLockstepResult(config, steps, pair.episode + 1, found, pair.skipped)
    finally:
        for runner in runners:
            runner.close()
