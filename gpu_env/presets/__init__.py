"""Client presets: each client's Atari preprocessing, bit for bit, as a gymnasium ``VectorEnv`` on gpu_env.

``gpu_env.presets.make(env_id, num_envs, preset, seed=...)``:

- ``"sb3"``: what ``SyncVectorEnv`` returns over, per env, ``gym.make(env_id)`` → SB3's ``Monitor`` →
  ``AtariWrapper`` defaults (``NoopResetEnv(30)``, ``MaxAndSkipEnv(4)``, ``EpisodicLifeEnv``,
  ``FireResetEnv`` where the action set has FIRE, ``WarpFrame(84)``, ``ClipRewardEnv``) — the
  sub-environment ``make_atari_env`` builds. Observations uint8[N, 84, 84, 1]; ``info["episode"]``
  is Monitor's ``{r, l, t}`` (unclipped return, length in ALE steps, at each real game end).
  :mod:`gpu_env.sb3_vec` wraps it as an SB3 ``VecEnv`` (DummyVecEnv's infos).
- ``"cleanrl"``: ``make_env`` of CleanRL's ``ppo_atari.py`` (gymnasium 1.x port): ``gym.make`` →
  ``RecordEpisodeStatistics`` → ``NoopResetEnv(30)`` → ``MaxAndSkipEnv(4)`` → ``EpisodicLifeEnv`` →
  ``FireResetEnv`` (where FIRE) → ``ClipRewardEnv`` → ``ResizeObservation((84, 84))`` →
  ``GrayscaleObservation`` → ``FrameStackObservation(4)``; observations uint8[N, 4, 84, 84].
- ``"gymnasium"``: ``gpu_env.make_vec`` with ``frameskip=1``, gymnasium's ``AtariPreprocessing``
  defaults and ``stack_size=4``, returning gymnasium's types (``obs_format="numpy"``, make_vec's default).
- ``"envpool"``: EnvPool's Atari defaults (:mod:`gpu_env.envpool`, native).

Every preset returns numpy arrays (uint8 observations, bool flags, numpy infos), with its client's
reward dtype: float64 for ``"sb3"``, ``"cleanrl"`` and ``"gymnasium"``, EnvPool's float32 for ``"envpool"``.
The first three take ``env_id``'s registered ale-py settings (``gym.spec(env_id).kwargs``: sticky
actions, frame skip, frame cap) as ``gym.make(env_id)`` does; ``**env_kwargs`` override them as
``gym.make(env_id, **kwargs)`` would. SB3 and CleanRL document ``…NoFrameskip-v4`` ids for their
wrappers; other ids work as they do there (e.g. ``ALE/Pong-v5`` skips 4 × 4 frames per step).
"""

from __future__ import annotations

from typing import Any

from gymnasium.vector import AutoresetMode, VectorEnv

from gpu_env.errors import GpuEnvError
from gpu_env.presets.vector_env import PresetVecEnv

PRESETS: tuple[str, ...] = ("sb3", "cleanrl", "gymnasium", "envpool")
_ENV_KWARGS = ("repeat_action_probability", "frameskip", "full_action_space", "max_num_frames_per_episode",
               "mode", "difficulty")


def env_settings(env_id: str, overrides: dict[str, Any]) -> dict[str, Any]:
    """Return the registered ``AtariEnv`` settings of ``env_id`` (``env_ids.env_id_settings``) with ``overrides``."""
    from gpu_env.env_ids import env_id_settings

    unknown = sorted(set(overrides) - set(_ENV_KWARGS))
    if unknown:
        raise GpuEnvError(f"unknown env kwargs {unknown}: presets take {', '.join(_ENV_KWARGS)}")
    registered = env_id_settings(env_id)
    settings = {**registered.settings, "game": registered.rom_id}
    if settings["obs_type"] != "rgb":
        raise GpuEnvError(f"env id {env_id!r} has obs_type={settings['obs_type']!r}: presets need screen (rgb) ids")
    settings.update(overrides)
    return settings


def make(env_id: str, num_envs: int, preset: str, *, seed: int | None = None, backend: str = "cpu",
         autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP, num_threads: int | None = None,
         **env_kwargs: Any) -> VectorEnv:
    """Build a gymnasium ``VectorEnv`` of ``num_envs`` ``env_id`` games with ``preset``'s preprocessing.

    Args:
        env_id: an id ale-py registers (``"BreakoutNoFrameskip-v4"``, ``"ALE/Breakout-v5"``; for
            ``"envpool"`` also EnvPool's ``"Breakout-v5"``).
        num_envs: number of environments.
        preset: one of :data:`PRESETS` (see the module docstring).
        seed: seed of the first ``reset()`` without one (env ``i`` gets ``seed + i``).
        backend: ``"cpu"`` (``"sb3"`` and ``"cleanrl"`` run on its native pool only).
        autoreset_mode: gymnasium's autoreset mode of the vector env.
        num_threads: worker threads (default: ``gpu_env.vector.default_num_threads()``).
        env_kwargs: ale-py ``AtariEnv`` kwargs overriding the id's (``repeat_action_probability`` …);
            for ``"envpool"``, EnvPool's options (those of :func:`gpu_env.envpool.make`).

    """
    if preset not in PRESETS:
        raise GpuEnvError(f"unknown preset {preset!r}: use one of {', '.join(PRESETS)}")
    if not isinstance(num_envs, int) or num_envs <= 0:
        raise GpuEnvError(f"num_envs={num_envs!r} must be a positive int")
    if preset == "gymnasium":
        return _gymnasium_preset(env_id, num_envs, seed, backend, autoreset_mode, num_threads, env_kwargs)
    if preset == "envpool":
        return _envpool_preset(env_id, num_envs, seed, backend, autoreset_mode, num_threads, env_kwargs)
    if backend != "cpu":
        raise GpuEnvError(f"preset={preset!r} runs on the native pool of backend 'cpu', not {backend!r}")
    settings = env_settings(env_id, env_kwargs)
    if settings.get("mode") is not None or settings.get("difficulty") is not None:
        raise GpuEnvError(f"preset={preset!r} plays the game's default mode and difficulty: for others use "
                          "gpu_env.make_vec(env_id, n, mode=..., difficulty=...)")
    from gpu_env.vector import default_num_threads

    threads = num_threads if num_threads is not None else default_num_threads()
    return PresetVecEnv(settings, num_envs, preset, autoreset_mode=autoreset_mode, seed=seed, num_threads=threads,
                        metadata={"preset": preset, "env_id": env_id, "render_modes": []})


def _envpool_preset(env_id: str, num_envs: int, seed: int | None, backend: str,
                    autoreset_mode: AutoresetMode | str, num_threads: int | None,
                    env_kwargs: dict[str, Any]) -> VectorEnv:
    """``gpu_env.envpool.make(task, "gymnasium", num_envs=..., seed=...)`` with EnvPool's defaults."""
    from gpu_env import envpool

    if AutoresetMode(autoreset_mode) is not AutoresetMode.NEXT_STEP:
        raise GpuEnvError(f"preset='envpool' resets as EnvPool does (NEXT_STEP), not {autoreset_mode!r}")
    task = env_id
    if "/" in env_id or not env_id.endswith("-v5"):  # an ale-py id: EnvPool's task of the same game
        game = str(env_settings(env_id, {})["game"])
        task = "".join(part.capitalize() for part in game.split("_")) + "-v5"
    seed = envpool.DEFAULT_SEED if seed is None else seed
    return envpool.make(task, "gymnasium", backend=backend, num_envs=num_envs, seed=seed,
                        num_threads=num_threads or 0, **env_kwargs)


def _gymnasium_preset(env_id: str, num_envs: int, seed: int | None, backend: str,
                      autoreset_mode: AutoresetMode | str, num_threads: int | None,
                      env_kwargs: dict[str, Any]) -> VectorEnv:
    """``make_vec(env_id, frameskip=1, AtariPreprocessing defaults, stack_size=4)``."""
    from gpu_env.vector import AtariVecEnv

    if seed is not None:
        raise GpuEnvError("preset='gymnasium' is gpu_env.make_vec: pass the seed to reset(seed=...) instead")
    if env_kwargs.get("obs_format", "numpy") != "numpy":
        raise GpuEnvError("preset='gymnasium' returns numpy arrays: for torch tensors call "
                          "gpu_env.make_vec(env_id, n, obs_format='torch', ...) without a preset")
    options = {"frameskip": 1, "noop_max": 30, "frame_skip": 4, "screen_size": 84, "stack_size": 4,
               "autoreset_mode": autoreset_mode, "num_threads": num_threads, **env_kwargs}
    env: VectorEnv = AtariVecEnv(env_id, num_envs, backend=backend, **options)
    return env
