"""The effective settings of an Atari env: the one schema every simulator reports, and the reference's rule.

Every simulator reports a :class:`Settings` (``to_dict`` keys in :data:`FIELDS` order):

============================  ====================================================================
``package``                   the package that emulates, with its version (``ale-py 0.12.1``, ...)
``env_id``                    the id the package was given (``ALE/Breakout-v5``, ``Breakout-v5``)
``frameskip``                 emulator frames per env step
``max_pool``                  the observation is the max of the step's last two frames
``repeat_action_probability`` sticky actions
``full_action_space``         18 actions (true) or the game's minimal set (false)
``max_episode_frames``        episode frame cap (null: none)
``noop_starts``               ``[low, high]``: NOOPs after ``reset_game``, uniform in ``low..high`` (``[0, 0]``: none)
``episodic_life``             a lost life ends the episode
``reward_clip``               rewards clipped to -1/0/1 (evaluation scores should be raw)
``fire_on_reset``             FIRE is pressed after every reset
``obs_type``                  ``grayscale``, ``rgb`` or ``ram``
``obs_size``                  ``[height, width]`` after resizing (null: the raw screen)
``frame_stack``               observations stacked
``grayscale``                 how grayscale is made (``ALE grayscale palette``; ``none`` for RGB)
``resize``                    how the screen is resized (``cv2 INTER_AREA``; ``none``)
============================  ====================================================================

Each simulator reads them from what it runs (``docs/simulators.md``). :func:`settings_of` is the one rule
from what a gymnasium + ale-py pipeline states about itself (:func:`evaltk.envs.atari.built_facts`, read
from the env :func:`evaltk.envs.describe` builds) to settings; the result is ``EnvInfo.settings``, which
the reference reports and gpu_env starts from. A setting a side does not report (a factory that declares
nothing) or a table does not record is :data:`UNKNOWN`. The diff of two sides' settings and ``--align``
are :mod:`evaltk.verdict.differences`' and :mod:`evaltk.simulators.align`'s.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

UNKNOWN = "unknown"
"""The one value shown for a setting a side does not report (a factory that declares nothing) or a table does not
record (a baseline table without a manifest); never counted as a difference."""


@dataclass(frozen=True)
class Settings:
    """A simulator's effective env settings (the schema in the module docstring)."""

    package: str
    env_id: str
    frameskip: int | str
    max_pool: bool | str
    repeat_action_probability: float | str
    full_action_space: bool | str
    max_episode_frames: int | str | None
    noop_starts: list[int] | str
    episodic_life: bool | str
    reward_clip: bool | str
    fire_on_reset: bool | str
    obs_type: str
    obs_size: list[int] | str | None
    frame_stack: int | str
    grayscale: str
    resize: str

    def to_dict(self) -> dict[str, Any]:
        """Return the settings as a plain dict (JSON-ready), keys in :data:`FIELDS` order."""
        return asdict(self)


FIELDS = tuple(Settings.__dataclass_fields__)

AP_FACTS = ("frame_skip", "noop_max", "terminal_on_life_loss", "screen_size", "grayscale_obs")
"""The ``AtariPreprocessing`` options the settings depend on."""


def noop_range(noop_max: int, fire: bool) -> list[int]:
    """Return ``[low, high]`` NOOPs a reset draws from for ``noop_max`` (one reset frame goes to FIRE when ``fire``)."""
    if noop_max <= 0:
        return [0, 0]
    return [0, noop_max - 1] if fire else [1, noop_max]


def settings_of(package: str, env_id: str, facts: dict[str, Any]) -> dict[str, Any]:
    """Return the settings (``to_dict`` form) of a gymnasium + ale-py pipeline from the ``facts`` it states.

    ``facts``: ``frameskip`` (the base env's), ``max_num_frames`` (ALE's cap, None: none), ``max_episode_steps``
    (gymnasium's step limit, None: none), ``repeat_action_probability``, ``full_action_space``, ``obs_type``
    (the base env's), ``atari_preprocessing`` (None, or its :data:`AP_FACTS` options), ``frame_stack`` and
    ``reward_clip``.
    """
    ap = facts["atari_preprocessing"]
    frameskip = int(ap["frame_skip"]) if ap is not None else int(facts["frameskip"])
    cap = facts["max_num_frames"]
    limit = facts["max_episode_steps"]
    if limit is not None:  # gymnasium's TimeLimit counts base-env steps of the base env's frameskip frames
        frames = int(limit) * int(facts["frameskip"])
        cap = frames if cap is None else min(int(cap), frames)
    if ap is not None:
        size = ap["screen_size"]
        obs_size: list[int] | None = [int(size), int(size)] if isinstance(size, int) else [int(size[1]), int(size[0])]
        obs_type = "grayscale" if ap["grayscale_obs"] else "rgb"
        noop, life = noop_range(int(ap["noop_max"]), False), bool(ap["terminal_on_life_loss"])
    else:
        obs_type, obs_size, noop, life = str(facts["obs_type"]), None, [0, 0], False
    return Settings(
        package=package, env_id=str(env_id), frameskip=frameskip, max_pool=ap is not None and frameskip > 1,
        repeat_action_probability=float(facts["repeat_action_probability"]),
        full_action_space=bool(facts["full_action_space"]), max_episode_frames=None if cap is None else int(cap),
        noop_starts=noop, episodic_life=life, reward_clip=bool(facts["reward_clip"]), fire_on_reset=False,
        obs_type=obs_type, obs_size=obs_size, frame_stack=int(facts["frame_stack"]),
        grayscale="ALE grayscale palette" if obs_type == "grayscale" else "none",
        resize="cv2 INTER_AREA" if ap is not None else "none").to_dict()
