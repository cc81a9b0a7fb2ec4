"""The gymnasium + ale-py reference environment, rebuilt exactly from a checkpoint's env spec.

Env spec layout (:class:`~evaltk.envs.spec.EnvSpec`; its JSON form is the ``env`` field of
:class:`~evaltk.checkpoint.CheckpointSpec`)::

    {"family": "atari",
     "env_id": "ALE/Breakout-v5",                      # any gymnasium id served by ale_py.env:AtariEnv
     "kwargs": {"frameskip": 4, "repeat_action_probability": 0.25, "full_action_space": False,
                "mode": None, "difficulty": None, "obs_type": "rgb",
                "max_num_frames_per_episode": 108000},  # ALE v5 kwargs, all resolved explicitly
     "preprocessing": {
        "atari_preprocessing": None | {"noop_max": 30, "frame_skip": 4, "screen_size": 84,
                                       "terminal_on_life_loss": False, "grayscale_obs": True,
                                       "grayscale_newaxis": False, "scale_obs": False},
        "frame_stack": 1}}

:func:`make_env` builds ``gymnasium.make(env_id, **kwargs)``, wrapped in
``gymnasium.wrappers.AtariPreprocessing(**atari_preprocessing)`` when given and in
``FrameStackObservation(frame_stack)`` when ``frame_stack > 1`` — nothing else, so the env is the
one a plain gymnasium user would build from the same settings.
"""

from __future__ import annotations

import functools
import json
import struct
from typing import Any

import gymnasium as gym
import numpy as np

from evaltk.envs.atari_settings import settings_of
from evaltk.envs.spec import EnvSpec
from evaltk.errors import SpecError
from evaltk.registry import did_you_mean
from gpu_env import mt19937

ALE_KWARGS: dict[str, Any] = {
    "frameskip": 4, "repeat_action_probability": 0.25, "full_action_space": False, "mode": None,
    "difficulty": None, "obs_type": "rgb", "max_num_frames_per_episode": 108_000,
}
"""ALE v5 constructor kwargs evaltk records, with gymnasium's ``ALE/*-v5`` defaults."""

PREPROCESSING_DEFAULTS: dict[str, Any] = {
    "noop_max": 30, "frame_skip": 4, "screen_size": 84, "terminal_on_life_loss": False,
    "grayscale_obs": True, "grayscale_newaxis": False, "scale_obs": False,
}
"""``gymnasium.wrappers.AtariPreprocessing`` options and their defaults."""

OBS_TYPES = ("rgb", "grayscale", "ram")
LIST_IDS_HINT = ("list valid ids with: python -c \"import gymnasium, ale_py; gymnasium.register_envs(ale_py); "
                 "print(sorted(i for i in gymnasium.registry if i.startswith('ALE/')))\"")


def registered_atari_ids() -> list[str]:
    """Return the Atari env ids ale-py registers with gymnasium (``ALE/Pong-v5``, ``PongNoFrameskip-v4``, ...)."""
    import ale_py

    ale_py.ALEInterface.setLoggerMode(ale_py.LoggerMode.Error)  # no version banner per env; errors still shown
    gym.register_envs(ale_py)
    return sorted(i for i, s in gym.registry.items() if str(s.entry_point) == "ale_py.env:AtariEnv")


def check_env_id(env_id: str) -> dict[str, Any]:
    """Return the registered kwargs of Atari ``env_id``; :class:`SpecError` with close matches if unknown."""
    ids = registered_atari_ids()
    if env_id not in ids:
        raise SpecError(f"unknown Atari env id {env_id!r}: {did_you_mean(env_id, ids)}ids look like ALE/Breakout-v5; "
                        f"{LIST_IDS_HINT}")
    return dict(gym.spec(env_id).kwargs)


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _check_kwargs(kwargs: dict[str, Any]) -> None:
    unknown = sorted(set(kwargs) - set(ALE_KWARGS))
    if unknown:
        raise SpecError(f"unknown ALE kwarg(s) {', '.join(unknown)} in env.kwargs: allowed are "
                        f"{', '.join(ALE_KWARGS)}")
    fs = kwargs["frameskip"]
    if not (_is_int(fs) and fs >= 1):
        raise SpecError(f"env.kwargs.frameskip must be an int >= 1, got {fs!r} (stochastic frameskip is not "
                        "supported: it makes episodes irreproducible)")
    p = kwargs["repeat_action_probability"]
    if isinstance(p, bool) or not isinstance(p, int | float) or not 0.0 <= float(p) <= 1.0:
        raise SpecError(f"env.kwargs.repeat_action_probability must be a number in [0, 1], got {p!r}")
    if not isinstance(kwargs["full_action_space"], bool):
        raise SpecError(f"env.kwargs.full_action_space must be true or false, got {kwargs['full_action_space']!r}")
    for key in ("mode", "difficulty"):
        if kwargs[key] is not None and not (_is_int(kwargs[key]) and kwargs[key] >= 0):
            raise SpecError(f"env.kwargs.{key} must be null or an int >= 0, got {kwargs[key]!r}")
    if kwargs["obs_type"] not in OBS_TYPES:
        raise SpecError(f"env.kwargs.obs_type must be one of {', '.join(OBS_TYPES)}, got {kwargs['obs_type']!r}")
    m = kwargs["max_num_frames_per_episode"]
    if m is not None and not (_is_int(m) and m > 0):
        raise SpecError(f"env.kwargs.max_num_frames_per_episode must be null or an int > 0, got {m!r}")


def _check_preprocessing(pre: dict[str, Any], kwargs: dict[str, Any]) -> None:
    unknown = sorted(set(pre) - set(PREPROCESSING_DEFAULTS))
    if unknown:
        raise SpecError(f"unknown AtariPreprocessing option(s) {', '.join(unknown)}: allowed are "
                        f"{', '.join(PREPROCESSING_DEFAULTS)}")
    for key in ("noop_max", "frame_skip"):
        low = 0 if key == "noop_max" else 1
        if not (_is_int(pre[key]) and pre[key] >= low):
            raise SpecError(f"atari_preprocessing.{key} must be an int >= {low}, got {pre[key]!r}")
    size = pre["screen_size"]
    ok_size = (_is_int(size) and size > 0) or (
        isinstance(size, list) and len(size) == 2 and all(_is_int(s) and s > 0 for s in size))
    if not ok_size:
        raise SpecError(f"atari_preprocessing.screen_size must be an int > 0 or [width, height], got {size!r}")
    for key in ("terminal_on_life_loss", "grayscale_obs", "grayscale_newaxis", "scale_obs"):
        if not isinstance(pre[key], bool):
            raise SpecError(f"atari_preprocessing.{key} must be true or false, got {pre[key]!r}")
    if pre["frame_skip"] > 1 and kwargs["frameskip"] != 1:
        raise SpecError(f"atari_preprocessing.frame_skip={pre['frame_skip']} needs env.kwargs.frameskip=1, got "
                        f"{kwargs['frameskip']}: set frameskip to 1 (AtariPreprocessing skips frames itself)")
    if kwargs["obs_type"] == "ram":
        raise SpecError("atari_preprocessing needs image observations, but env.kwargs.obs_type is 'ram': "
                        "use obs_type 'rgb' or drop atari_preprocessing")


def resolve_env(env: EnvSpec) -> EnvSpec:
    """Check an Atari env spec and return it with every setting explicit (defaults filled in).

    Missing ALE kwargs take the registered defaults of ``env_id``; a given ``atari_preprocessing``
    dict takes :data:`PREPROCESSING_DEFAULTS` for missing options. Raises :class:`SpecError`.
    """
    if env.family != "atari":
        raise SpecError(f"env family {env.family!r} is not 'atari'")
    env_id = env.env_id
    registered = check_env_id(env_id)
    kwargs = {k: registered.get(k, v) for k, v in ALE_KWARGS.items()}
    kwargs.update(env.kwargs)
    _check_kwargs(kwargs)
    kwargs["repeat_action_probability"] = float(kwargs["repeat_action_probability"])
    pre_in = env.preprocessing
    unknown = sorted(set(pre_in) - {"atari_preprocessing", "frame_stack"})
    if unknown:
        raise SpecError(f"unknown env.preprocessing key(s) {', '.join(unknown)}: allowed are "
                        "atari_preprocessing, frame_stack")
    ap = pre_in.get("atari_preprocessing")
    if ap is not None:
        if not isinstance(ap, dict):
            raise SpecError(f"env.preprocessing.atari_preprocessing must be null or an object, got {ap!r}")
        ap = {**PREPROCESSING_DEFAULTS, **ap}
        _check_preprocessing(ap, kwargs)
    stack = pre_in.get("frame_stack", 1)
    if not (_is_int(stack) and stack >= 1):
        raise SpecError(f"env.preprocessing.frame_stack must be an int >= 1, got {stack!r}")
    return EnvSpec("atari", env_id, kwargs, {"atari_preprocessing": ap, "frame_stack": stack})


def atari_env(env_id: str, *, kwargs: dict[str, Any] | None = None,
              atari_preprocessing: dict[str, Any] | None = None, frame_stack: int = 1) -> EnvSpec:
    """Build a resolved Atari env spec (trainers store its JSON form in ``CheckpointSpec.env``).

    Example (the usual DQN-style pipeline)::

        atari_env("ALE/Breakout-v5", kwargs={"frameskip": 1},
                  atari_preprocessing={"noop_max": 30, "frame_skip": 4}, frame_stack=4)
    """
    return resolve_env(EnvSpec("atari", env_id, kwargs or {},
                               {"atari_preprocessing": atari_preprocessing, "frame_stack": frame_stack}))


def make_env(env: EnvSpec, *, fast_reset: bool = False) -> gym.Env[Any, Any]:
    """Build the gymnasium env an env spec describes (checked first; :class:`SpecError` on bad input).

    ``fast_reset`` (opt-in) installs :class:`FastSeededReset` on the ALE env: same states, no ROM reload.
    """
    spec = resolve_env(env)
    kwargs = dict(spec.kwargs)
    try:
        base = gym.make(spec.env_id, **kwargs)
    except (gym.error.Error, RuntimeError, ValueError) as exc:
        raise SpecError(f"gymnasium could not build {spec.env_id} with {kwargs}: {exc}; check mode/difficulty "
                        "against the game's available modes (ale.getAvailableModes())") from None
    if fast_reset:
        FastSeededReset(base)
    out: gym.Env[Any, Any] = base
    ap = spec.preprocessing["atari_preprocessing"]
    if ap is not None:
        ap = dict(ap)
        if isinstance(ap["screen_size"], list):
            ap["screen_size"] = tuple(ap["screen_size"])
        out = gym.wrappers.AtariPreprocessing(out, **ap)
    if spec.preprocessing["frame_stack"] > 1:
        out = gym.wrappers.FrameStackObservation(out, spec.preprocessing["frame_stack"])
    return out


def _layout(spec: EnvSpec, shape: tuple[int, ...]) -> str:
    ap = spec.preprocessing["atari_preprocessing"]
    if spec.kwargs["obs_type"] == "ram":
        base = "N"
    elif ap is not None:
        base = "HW" if ap["grayscale_obs"] and not ap["grayscale_newaxis"] else "HWC"
    else:
        base = "HW" if spec.kwargs["obs_type"] == "grayscale" else "HWC"
    layout = ("S" if spec.preprocessing["frame_stack"] > 1 else "") + base
    if len(layout) != len(shape):
        raise SpecError(f"internal: layout {layout} does not fit observation shape {shape}")
    return layout


def _wrappers(env: gym.Env[Any, Any]) -> list[Any]:
    """Return the wrappers around ``env``'s base env, outermost first."""
    chain, layer = [], env
    while isinstance(layer, gym.Wrapper):
        chain.append(layer)
        layer = layer.env
    return chain


def _float32(value: float) -> float:
    """Return an ALE float setting (stored as float32) at float32 precision: 0.1, not 0.10000000149."""
    return float(f"{value:.7g}")


def built_facts(built: gym.Env[Any, Any]) -> dict[str, Any]:
    """Return what a built env states about itself (the facts :func:`evaltk.envs.atari_settings.settings_of` reads).

    ALE's own values through its public getters (sticky actions, frame cap, legal action set), the gymnasium
    spec (base frame skip, step limit) and the wrappers applied (``AtariPreprocessing``'s options, the frame
    stack, a ``ClipReward``); plain JSON values.
    """
    chain = _wrappers(built)
    ap = next((w for w in chain if isinstance(w, gym.wrappers.AtariPreprocessing)), None)
    stack = next((w for w in chain if isinstance(w, gym.wrappers.FrameStackObservation)), None)
    base: Any = built.unwrapped
    ale, spec = base.ale, base.spec
    base_skip = spec.kwargs.get("frameskip", 1) if spec is not None else 1
    limit = spec.max_episode_steps if spec is not None else None
    return {
        "frameskip": base_skip, "max_num_frames": int(ale.getInt("max_num_frames_per_episode")) or None,
        "max_episode_steps": limit if isinstance(base_skip, int) else None,
        "repeat_action_probability": _float32(ale.getFloat("repeat_action_probability")),
        "full_action_space": int(base.action_space.n) == len(ale.getLegalActionSet()),
        "obs_type": {3: "rgb", 2: "grayscale", 1: "ram"}[len(base.observation_space.shape)],
        "atari_preprocessing": None if ap is None else {
            "frame_skip": ap.frame_skip, "noop_max": ap.noop_max, "terminal_on_life_loss": ap.terminal_on_life_loss,
            "screen_size": ap.screen_size, "grayscale_obs": ap.grayscale_obs},
        "frame_stack": int(stack.stack_size) if stack is not None else 1,
        "reward_clip": any(isinstance(w, gym.wrappers.ClipReward) for w in chain)}


@functools.lru_cache(maxsize=64)
def _describe_cached(key: str) -> tuple[str, str, str, str, str]:
    spec = resolve_env(EnvSpec.from_json(json.loads(key)))
    env = make_env(spec)
    try:
        space: Any = env.observation_space
        shape = tuple(int(d) for d in space.shape)
        obs_spec = {"shape": list(shape), "dtype": str(np.dtype(space.dtype)), "layout": _layout(spec, shape)}
        action_space: Any = env.action_space
        action_spec = {"type": "discrete", "n": int(action_space.n)}
        base: Any = env.unwrapped
        meanings = list(base.get_action_meanings())
        settings = settings_of(reference_package(), spec.env_id, built_facts(env))
    finally:
        env.close()
    return (json.dumps(spec.to_json()), json.dumps(obs_spec), json.dumps(action_spec), json.dumps(meanings),
            json.dumps(settings))


def describe(env: EnvSpec) -> tuple[EnvSpec, dict[str, Any], dict[str, Any], list[str], dict[str, Any]]:
    """Return ``(resolved env, obs_spec, action_spec, action_meanings, settings)`` of an Atari env spec.

    ``settings``: the effective settings (:mod:`evaltk.envs.atari_settings`) gymnasium + ale-py runs it with, read
    from what the env it builds states about itself (:func:`built_facts`) in that one build.
    """
    parts = _describe_cached(json.dumps(env.to_json(), sort_keys=True))
    resolved, obs_spec, action_spec, meanings, settings = (json.loads(p) for p in parts)
    return EnvSpec.from_json(resolved), obs_spec, action_spec, meanings, settings


def reference_package() -> str:
    """Return the reference's package as settings name it: ``gymnasium X + ale-py Y``."""
    import ale_py

    return f"gymnasium {gym.__version__} + ale-py {ale_py.__version__}"


_TRUE = struct.pack("<I", 0xFAB1FAB2)  # how ALE's Serializer writes bool true
_PROBE_SEEDS = (11, 123_456)


class FastSeededReset:
    """Opt-in: a seeded ``reset`` without reloading the ROM, giving the very same ALE state.

    gymnasium's ``AtariEnv.reset(seed=s)`` seeds ALE (``random_seed``) and calls ``load_game`` (a
    ROM reload: ~0.1 CPU-s in ale-py 0.12). The state a reload produces is the same for every seed
    except the sticky-action RNG, a ``std::mt19937`` seeded with ``random_seed`` and serialised as
    text at the end of ``cloneState(include_rng=True)``. This class records that state once (a real
    load), and afterwards replaces ``load_game`` by ``restoreState`` of the recorded state with the
    RNG text rebuilt for the new seed (numpy's ``MT19937`` legacy seeding equals ``std::mt19937``).
    On installation it checks, for a second seed, that the rebuilt state is byte-identical to the
    one a real reload gives, and raises :class:`SpecError` otherwise. Not captured by ALE's state:
    the TIA data-bus latch and partial-frame flag left from the previous episode, which a reload
    would reset; the tests replay episodes through plain gymnasium to show they do not matter for the
    games checked.
    """

    def __init__(self, env: gym.Env[Any, Any], *, like: FastSeededReset | None = None) -> None:
        """Install on ``env``; ``like``: reuse the recorded state of an installation on an env of the same spec."""
        import ale_py

        base: Any = env.unwrapped
        self._base: Any = base
        self._state_cls: Any = ale_py.ALEState
        self._real_load = self._base.load_game
        self._head: bytes
        self._inner_head: bytes
        self._tail: bytes
        if like is not None:
            self._head, self._inner_head, self._tail = like._head, like._inner_head, like._tail
        else:
            self._head, self._inner_head, self._tail = self._split(self._real_state(_PROBE_SEEDS[0]))
            real = self._real_state(_PROBE_SEEDS[1])
            if self._rebuild(self._base.ale.getInt("random_seed")) != real:
                raise SpecError(f"fast reset is not exact for {base.spec.id if base.spec else 'this game'}: "
                                "run without --fast-reset")
        self._base.load_game = self._load

    def _real_state(self, seed: int) -> bytes:
        self._base.seed_game(seed)
        self._real_load()
        return bytes(self._base.ale.cloneState(include_rng=True).__getstate__())

    @staticmethod
    def _split(blob: bytes) -> tuple[bytes, bytes, bytes]:
        (n,) = struct.unpack_from("<i", blob, 24)
        inner, tail = blob[28:28 + n], blob[28 + n:]
        for p in range(len(inner) - 8, 0, -1):
            if inner[p:p + 4] == _TRUE and struct.unpack_from("<i", inner, p + 4)[0] == len(inner) - (p + 8):
                return blob[:24], inner[:p + 4], tail
        raise SpecError("fast reset: no sticky-action RNG found in the ALE state; run without --fast-reset")

    def _rebuild(self, random_seed: int) -> bytes:
        text = mt19937.to_text(mt19937.std_mt19937(random_seed))
        inner = self._inner_head + struct.pack("<i", len(text)) + text
        return self._head + struct.pack("<i", len(inner)) + inner + self._tail

    def _load(self) -> None:
        state = self._state_cls.__new__(self._state_cls)
        state.__setstate__(self._rebuild(self._base.ale.getInt("random_seed")))
        self._base.ale.restoreState(state)


def episode_frames(env: gym.Env[Any, Any]) -> int:
    """Emulated frames of the current episode (``ALEInterface.getEpisodeFrameNumber``)."""
    base: Any = env.unwrapped
    return int(base.ale.getEpisodeFrameNumber())
