"""One schema for a simulator's effective env settings, the table of differences and ``--align``.

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

Each simulator reads them from what it runs (``docs/simulators.md``); :func:`settings_of` is the one rule
from the facts a gymnasium + ale-py pipeline states (an env dict's, :func:`env_facts`, or a built env's) to
settings. A setting a side does not report (a factory that declares nothing) or a table does not record is
:data:`UNKNOWN`. :func:`difference_rows` is the one diff of settings (simulator settings here, flattened env
specs in :mod:`evaltk.table_comparison`); :func:`align_env` rewrites a reference env dict to a simulator's
settings where gymnasium + ale-py can express them and lists the rest.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

UNKNOWN = "unknown"
"""The one value shown for a setting a side does not report (a factory that declares nothing) or a table does not
record (a baseline table without a manifest); never counted as a difference."""
IDENTITY_FIELDS = ("package", "env_id")
"""Fields that name the simulator rather than change what it computes."""


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


def noop_range(noop_max: int, fire: bool) -> list[int]:
    """Return ``[low, high]`` NOOPs a reset draws from for ``noop_max`` (one reset frame goes to FIRE when ``fire``)."""
    if noop_max <= 0:
        return [0, 0]
    return [0, noop_max - 1] if fire else [1, noop_max]


def flatten(spec: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """Dotted keys of a nested spec (``env.kwargs.frameskip`` ...), leaves as they are."""
    flat: dict[str, Any] = {}
    for key, value in spec.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict) and value:
            flat.update(flatten(value, f"{name}."))
        else:
            flat[name] = value
    return flat


def env_facts(env: dict[str, Any]) -> dict[str, Any]:
    """Return the facts (:func:`settings_of`) an Atari env dict states, with gymnasium's step limit for its id."""
    import gymnasium as gym

    kwargs, pre = env["kwargs"], env["preprocessing"]
    ap = pre["atari_preprocessing"]
    return {"frameskip": kwargs["frameskip"], "max_num_frames": kwargs["max_num_frames_per_episode"],
            "max_episode_steps": gym.spec(env["env_id"]).max_episode_steps,
            "repeat_action_probability": kwargs["repeat_action_probability"],
            "full_action_space": kwargs["full_action_space"], "obs_type": kwargs["obs_type"],
            "atari_preprocessing": None if ap is None else {k: ap[k] for k in AP_FACTS},
            "frame_stack": pre["frame_stack"], "reward_clip": False}


AP_FACTS = ("frame_skip", "noop_max", "terminal_on_life_loss", "screen_size", "grayscale_obs")
"""The ``AtariPreprocessing`` options the settings depend on."""


def settings_of(package: str, env_id: str, facts: dict[str, Any]) -> dict[str, Any]:
    """Return the settings (``to_dict`` form) of a gymnasium + ale-py pipeline from the ``facts`` it states.

    ``facts``: ``frameskip`` (the base env's), ``max_num_frames`` (ALE's cap, None: none), ``max_episode_steps``
    (gymnasium's step limit, None: none), ``repeat_action_probability``, ``full_action_space``, ``obs_type``
    (the base env's), ``atari_preprocessing`` (None, or its :data:`AP_FACTS` options), ``frame_stack`` and
    ``reward_clip``. The one rule for both an env dict (:func:`env_facts`) and a built env (the gym simulator).
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
    return asdict(Settings(
        package=package, env_id=str(env_id), frameskip=frameskip, max_pool=ap is not None and frameskip > 1,
        repeat_action_probability=float(facts["repeat_action_probability"]),
        full_action_space=bool(facts["full_action_space"]), max_episode_frames=None if cap is None else int(cap),
        noop_starts=noop, episodic_life=life, reward_clip=bool(facts["reward_clip"]), fire_on_reset=False,
        obs_type=obs_type, obs_size=obs_size, frame_stack=int(facts["frame_stack"]),
        grayscale="ALE grayscale palette" if obs_type == "grayscale" else "none",
        resize="cv2 INTER_AREA" if ap is not None else "none"))


def reference_settings(env: dict[str, Any], *, package: str, read: dict[str, Any] | None = None) -> dict[str, Any]:
    """Return the settings (``to_dict`` form) gymnasium + ale-py runs an Atari env dict with, as ``package``.

    ``read``: settings an emulator reproducing it (``package``) read from what it built, in place of the dict's.
    """
    return {**settings_of(package, env["env_id"], env_facts(env)), **(read or {})}


def difference_rows(sim: dict[str, Any], reference: dict[str, Any],
                    keys: tuple[str, ...] | None = None) -> list[dict[str, Any]]:
    """Return the one settings diff, a row ``{setting, sim, reference, differs}`` per key (default :data:`FIELDS`).

    ``keys=()`` takes the keys of ``sim`` then those only ``reference`` has (for flattened env specs). A key
    a side lacks shows :data:`UNKNOWN` and never counts as differing.
    """
    names = FIELDS if keys is None else (keys or (*sim, *(k for k in reference if k not in sim)))
    rows = []
    for key in names:
        a, b = sim.get(key, UNKNOWN), reference.get(key, UNKNOWN)
        differs = not _unknown(a) and not _unknown(b) and a != b
        rows.append({"setting": key, "sim": a, "reference": b, "differs": differs})
    return rows


def _unknown(value: Any) -> bool:
    return isinstance(value, str) and value == UNKNOWN


def settings_note(rows: list[dict[str, Any]]) -> str | None:
    """Return the sentence a report prints when settings (not only the package) differ, else None."""
    differ = [r["setting"] for r in rows if r["differs"] and r["setting"] not in IDENTITY_FIELDS]
    if not differ:
        return None
    return (f"the simulators differ in {', '.join(differ)}: a difference in scores may come from these settings "
            "rather than from the emulation; re-run with --align to compare on aligned settings")


@dataclass(frozen=True)
class Alignment:
    """A reference env dict rewritten to a simulator's settings, and what could not be aligned (with why)."""

    env: dict[str, Any]
    aligned: tuple[str, ...]
    not_aligned: tuple[tuple[str, str], ...]


def align_env(env: dict[str, Any], sim: dict[str, Any]) -> Alignment:
    """Rewrite the resolved env dict ``env`` to the simulator's settings ``sim`` where gymnasium + ale-py can.

    Aligned: sticky actions, the action set, the frame cap, the NOOP count, episodic life. The rest
    (FIRE on reset, reward clipping, other grayscale/resize methods, other observation pipelines) is
    listed in ``not_aligned`` with the reason.
    """
    ref = reference_settings(env, package="gymnasium")
    kwargs = dict(env["kwargs"])
    pre = dict(env["preprocessing"])
    ap = None if pre["atari_preprocessing"] is None else dict(pre["atari_preprocessing"])
    aligned: list[str] = []
    missing: list[tuple[str, str]] = []
    for key in FIELDS:
        want, have = sim.get(key, UNKNOWN), ref[key]
        if key in IDENTITY_FIELDS or _unknown(want) or want == have:
            continue
        if key == "repeat_action_probability":
            kwargs[key] = float(want)
        elif key == "full_action_space":
            kwargs[key] = bool(want)
        elif key == "max_episode_frames":
            kwargs["max_num_frames_per_episode"] = want
        elif key == "episodic_life" and ap is not None:
            ap["terminal_on_life_loss"] = bool(want)
        elif key == "noop_starts" and ap is not None and (noop_max := _noop_max(want, sim)) is not None:
            if noop_max == ap["noop_max"]:  # the same reset frames already: the difference is the FIRE press
                missing.append((key, f"{want!r} takes as many reset frames as the reference's {have!r}; the FIRE "
                                "press has no AtariPreprocessing option"))
                continue
            ap["noop_max"] = noop_max
        else:
            missing.append((key, f"gymnasium + ale-py has no option for {key} = {want!r} (reference: {have!r})"))
            continue
        aligned.append(key)
    if ap is not None:
        pre["atari_preprocessing"] = ap
    out = {**env, "kwargs": kwargs, "preprocessing": pre}
    return Alignment(env=out, aligned=tuple(aligned), not_aligned=tuple(missing))


def _noop_max(noop_starts: Any, sim: dict[str, Any]) -> int | None:
    """Return the AtariPreprocessing ``noop_max`` with the most reset frames of ``noop_starts`` (FIRE: +1)."""
    if not (isinstance(noop_starts, list) and len(noop_starts) == 2 and all(isinstance(v, int) for v in noop_starts)):
        return None
    return int(noop_starts[1]) + (1 if sim.get("fire_on_reset") is True else 0)
