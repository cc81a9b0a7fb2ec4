"""``envpool``: the real EnvPool package (``pip install 'evaltk[envpool]'``), as its users run it.

EnvPool 1.2.5 and 1.2.7 are tested (``gpu_env.envpool.TESTED_VERSIONS``: their Atari outputs, options and
defaults are the same); another installed release is refused in one line (:func:`import_envpool`).

The checkpoint's observation pipeline is passed to ``envpool.make`` (``frame_skip``, ``noop_max``,
``img_height``/``img_width``, ``stack_num``, ``gray_scale``, ``episodic_life``, ``full_action_space``,
``mode``/``difficulty``); everything else is EnvPool's own default, as a user who calls
``envpool.make(task_id)`` gets it. ``--sim envpool:KEY=VALUE[,KEY=VALUE...]`` passes further keyword
arguments to ``envpool.make`` as they are (EnvPool's own options, checked by EnvPool), e.g.
``envpool:repeat_action_probability=0.25,max_episode_steps=1000``.

The settings table is read from the ``config`` of a pool built exactly as the evaluation builds its pools
(:func:`envpool_settings`); evaltk holds none of EnvPool's defaults. Settings EnvPool's config does not
state (the max-pool of the last two frames, how grayscale is made) are ``unknown``.

Seeding: EnvPool seeds an env only when its pool is built (ALE ``random_seed`` = the seed, and its NOOP
draw from ``std::mt19937(seed)``), so every episode gets a pool of one env built with the episode's seed
(``envpool.make(..., num_envs=1, seed=episode_seed)``): episode ``i`` is the same whatever ran before it.
``frames`` in score rows is EnvPool's ``elapsed_step`` x ``frame_skip`` (the reset's NOOP/FIRE frames are
not counted: EnvPool does not report them).
"""

from __future__ import annotations

import importlib
import json
from typing import Any

import numpy as np

from evaltk.envs import EnvInfo, EnvSpec, describe
from evaltk.envs.atari_settings import UNKNOWN, Settings, noop_range
from evaltk.simulators.base import EpisodeRunner, EpisodeSlots, SimulatorError, Transition
from evaltk.simulators.slots import SerialSlots
from gpu_env.envpool import check_version
from gpu_env.errors import GpuEnvError

INSTALL_HINT = ("pip install 'evaltk[envpool]' (Linux x86-64: EnvPool 1.2.5 on CPython 3.11, 1.2.7 on CPython 3.12 "
                "and 3.13)")
PREFIX = "envpool:"
"""``--sim envpool:KEY=VALUE,...``: EnvPool with options of its own (module docstring)."""


def parse_options(name: str) -> dict[str, Any]:
    """Return the ``envpool.make`` options of ``envpool:KEY=VALUE,...`` (values as JSON, else strings)."""
    options: dict[str, Any] = {}
    for item in name.removeprefix(PREFIX).split(","):
        key, sep, raw = item.partition("=")
        if not sep or not key.isidentifier() or not raw:
            raise SimulatorError(f"--sim {name!r}: {item!r} is not KEY=VALUE; write envpool:KEY=VALUE[,KEY=VALUE...] "
                                 "with envpool.make's keyword arguments, e.g. envpool:max_episode_steps=1000")
        try:
            options[key] = json.loads(raw)
        except json.JSONDecodeError:
            options[key] = raw
    return options


def import_envpool() -> Any:
    """Import EnvPool; :class:`SimulatorError` naming the extra when it does not load or is an untested release."""
    try:
        envpool = importlib.import_module("envpool")
    except ImportError as exc:
        raise SimulatorError(f"the envpool simulator needs the envpool package, which does not import here "
                             f"({exc}): {INSTALL_HINT}") from None
    try:
        check_version(str(envpool.__version__))
    except GpuEnvError as exc:
        raise SimulatorError(str(exc)) from None
    return envpool


def task_id(env: EnvSpec) -> str:
    """EnvPool's task id for an Atari env spec (``ALE/MsPacman-v5``, ``MsPacmanNoFrameskip-v4`` -> ``MsPacman-v5``)."""
    import gymnasium as gym

    envpool = import_envpool()
    game = str(gym.spec(env.env_id).kwargs.get("game", "")).replace("_", "").lower()
    tasks = {t.removesuffix("-v5").lower(): t for t in envpool.list_all_envs() if t.endswith("-v5")}
    if game not in tasks:
        raise SimulatorError(f"envpool has no Atari task for {env.env_id} (game {game!r}): choose a game EnvPool "
                             "ships (python -c \"import envpool; print(envpool.list_all_envs())\") or another --sim")
    return str(tasks[game])


def envpool_config(env: EnvSpec) -> dict[str, Any]:
    """``envpool.make`` keyword arguments for a resolved Atari env spec; :class:`SimulatorError` if inexpressible."""
    ap = env.preprocessing["atari_preprocessing"]
    env_id = env.env_id
    if ap is None:
        raise SimulatorError(f"{env_id} here has raw observations (no atari_preprocessing), and EnvPool always "
                             "resizes, converts and stacks: validate a checkpoint trained on preprocessed frames, "
                             "or use --sim gym/gpu_env")
    if ap["scale_obs"] or not ap["grayscale_obs"] or ap["grayscale_newaxis"]:
        raise SimulatorError(f"the checkpoint's observations (grayscale_obs={ap['grayscale_obs']}, grayscale_newaxis="
                             f"{ap['grayscale_newaxis']}, scale_obs={ap['scale_obs']}) are not EnvPool's uint8 "
                             "grayscale [stack, height, width] frames: use --sim gym/gpu_env for this checkpoint")
    size = ap["screen_size"]
    height, width = (size, size) if isinstance(size, int) else (size[1], size[0])
    kwargs = env.kwargs
    return {"frame_skip": int(ap["frame_skip"]), "noop_max": max(1, int(ap["noop_max"])), "img_height": int(height),
            "img_width": int(width), "stack_num": int(env.preprocessing["frame_stack"]), "gray_scale": True,
            "episodic_life": bool(ap["terminal_on_life_loss"]), "reward_clip": False,
            "full_action_space": bool(kwargs["full_action_space"]),
            "mode": -1 if kwargs["mode"] is None else int(kwargs["mode"]),
            "difficulty": -1 if kwargs["difficulty"] is None else int(kwargs["difficulty"])}


def make_pool(task: str, config: dict[str, Any], seed: int) -> Any:
    """Build a pool of one env as every evaluation slot does (``envpool.make``); EnvPool's errors name the fix."""
    try:
        return import_envpool().make(task, env_type="gymnasium", num_envs=1, seed=int(seed), **config)
    except (TypeError, ValueError, RuntimeError) as exc:
        raise SimulatorError(f"envpool.make({task!r}, ...) refused the options {config}: {exc}; fix the "
                             "envpool:KEY=VALUE options (envpool.make's keyword arguments)") from None


def envpool_settings(env: EnvSpec, pool_config: dict[str, Any], task: str) -> Settings:
    """Return the :class:`Settings` stated by the ``config`` of a built pool (``pool.config``) on ``task``."""
    envpool = import_envpool()
    fire = bool(pool_config["use_fire_reset"]) and "FIRE" in (describe(env).action_meanings or [])
    skip = int(pool_config["frame_skip"])
    steps = int(pool_config["max_episode_steps"])
    return Settings(
        package=f"envpool {envpool.__version__}", env_id=task, frameskip=skip, max_pool=UNKNOWN,
        repeat_action_probability=float(pool_config["repeat_action_probability"]),
        full_action_space=bool(pool_config["full_action_space"]),
        max_episode_frames=steps * skip if steps > 0 else None,
        noop_starts=noop_range(int(pool_config["noop_max"]), fire), episodic_life=bool(pool_config["episodic_life"]),
        reward_clip=bool(pool_config["reward_clip"]), fire_on_reset=fire,
        obs_type="grayscale" if pool_config["gray_scale"] else "rgb",
        obs_size=[int(pool_config["img_height"]), int(pool_config["img_width"])],
        frame_stack=int(pool_config["stack_num"]), grayscale=UNKNOWN,
        resize="cv2 INTER_AREA" if pool_config["use_inter_area_resize"] else "cv2 INTER_LINEAR")


class EnvPoolRunner:
    """One slot: a pool of one env per episode, built with the episode's seed."""

    def __init__(self, task: str, config: dict[str, Any], obs_shape: tuple[int, ...]) -> None:
        self._envpool = import_envpool()
        self.task, self.config, self.obs_shape = task, config, obs_shape
        self._pool: Any = None

    def start(self, seed: int) -> np.ndarray:
        """Build a fresh pool seeded with ``seed`` and reset it."""
        self.close()
        self._pool = make_pool(self.task, self.config, seed)
        obs, _ = self._pool.reset()
        return np.asarray(obs[0]).reshape(self.obs_shape)

    def step(self, action: int) -> Transition:
        """Step the pool's one env; frames = ``elapsed_step`` x ``frame_skip``."""
        obs, reward, terminated, truncated, info = self._pool.step(np.array([action], np.int32))
        frames = int(info["elapsed_step"][0]) * int(self.config["frame_skip"])
        return Transition(np.asarray(obs[0]).reshape(self.obs_shape), float(reward[0]), bool(terminated[0]),
                          bool(truncated[0]), frames, int(info["lives"][0]))

    def close(self) -> None:
        """Close the current pool, if any."""
        if self._pool is not None:
            self._pool.close()
            self._pool = None


class EnvPoolSimulator:
    """The real EnvPool (see the module docstring); ``use_fire_reset`` False for :meth:`deterministic`.

    ``options`` are further ``envpool.make`` keyword arguments (``--sim envpool:KEY=VALUE,...``).
    """

    name = "envpool"

    def __init__(self, *, use_fire_reset: bool = True, options: dict[str, Any] | None = None) -> None:
        self.use_fire_reset = use_fire_reset
        self.options = dict(options or {})

    def _config(self, info: EnvInfo) -> tuple[str, dict[str, Any]]:
        if info.env.family != "atari":
            raise SimulatorError(f"--sim envpool runs Atari envs here, and {info.env.env_id} is a "
                                 f"{info.env.family} env: use --sim gym")
        import_envpool()
        return task_id(info.env), self._make_config(info.env)

    def _make_config(self, env: EnvSpec) -> dict[str, Any]:
        config = {**envpool_config(env), **self.options}
        if not self.use_fire_reset:
            config["use_fire_reset"] = False
        return config

    def deterministic(self) -> EnvPoolSimulator:
        """EnvPool without FIRE on reset: with ``noop_max=1`` its reset is one NOOP, as AtariPreprocessing's."""
        return EnvPoolSimulator(use_fire_reset=False, options=self.options)

    def runner(self, info: EnvInfo) -> EpisodeRunner:
        """One env for a lockstep: a pool of one env per episode."""
        task, config = self._config(info)
        return EnvPoolRunner(task, config, tuple(int(d) for d in info.obs_spec["shape"]))

    def check(self, info: EnvInfo, *, seed: int) -> dict[str, Any]:
        """Check that the package imports, has the game and gives observations of the checkpoint's shape.

        Returns the identity: the effective settings and the ``envpool.make`` options.
        """
        _, config = self._config(info)
        shape = [config["stack_num"], config["img_height"], config["img_width"]]
        want = list(info.obs_spec["shape"])
        if int(np.prod(shape)) != int(np.prod(want)) or info.obs_spec["dtype"] != "uint8":
            raise SimulatorError(f"envpool gives uint8{shape} observations, the checkpoint expects "
                                 f"{info.obs_spec['dtype']}{want}: use --sim gym/gpu_env for this checkpoint")
        return {"simulator": self.name, "settings": self.settings(info.env), "options": self.options}

    def settings(self, env: EnvSpec) -> dict[str, Any]:
        """EnvPool's effective settings for ``env``: the ``config`` of a pool built as the evaluation builds it."""
        task = task_id(env)
        pool = make_pool(task, self._make_config(env), 0)
        try:
            return envpool_settings(env, dict(pool.config), task).to_dict()
        finally:
            pool.close()

    def episodes(self, info: EnvInfo, num_envs: int, *, workers: int, fast_reset: bool) -> EpisodeSlots:
        """``num_envs`` slots, each a pool of one env per episode (``workers``/``fast_reset`` do not apply)."""
        task, config = self._config(info)
        shape = tuple(int(d) for d in info.obs_spec["shape"])
        return SerialSlots(lambda: EnvPoolRunner(task, config, shape), num_envs, obs_shape=shape,
                           obs_dtype=info.obs_spec["dtype"], label=f"envpool {task}")
