"""Policies: the :class:`Policy` protocol, :func:`load_policy` and the built-in policies.

A policy acts on a batch of environments::

    policy.reset(num_envs, rng)            # start of a batch of episodes
    actions = policy.act(obs, first)       # obs: [B, *obs_spec.shape]; first: bool[B]
                                           # -> int64[B] (discrete) or int64[B, k] (multi_discrete)

Built-ins (``random``, ``scripted`` and whatever other packages add with :func:`register_builtin`)
carry a :class:`~evaltk.checkpoint.CheckpointSpec` like any checkpoint, without tensors, so every
command accepts them; :func:`save_builtin` writes one to disk. This is the one registry of built-in
agents: evaluation, tournaments and suites all resolve ``builtin:NAME`` here (:func:`builtin_name`,
:func:`make_builtin`). A built-in's factory gets the env spec and picks the agent for it: for the
tournament's Doom feature view (:func:`evaltk.tournament.agents.builtin_env`) ``random`` and
``scripted`` are the Doom agents of :mod:`evaltk.tournament.agents`; elsewhere ``random`` is uniform
over the action spec and ``scripted`` the Atari paddle tracker.

Reproducible episodes: a policy may also implement :class:`EpisodeSeeded`. The evaluator then hands
it, for every slot where a new episode starts, a generator derived from that episode's recorded seed
(:func:`episode_policy_rng`), so the episode's action stream can be regenerated from the seed alone.
A policy may implement :class:`ActsOnSlots` too: the evaluator then asks it only for the slots still
playing once some slots have no episode left (a batch's last episodes).
"""

from __future__ import annotations

import contextlib
import importlib
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from evaltk.checkpoint import Checkpoint, CheckpointSpec, load
from evaltk.envs.spec import EnvSpec
from evaltk.errors import CheckpointError, SpecError
from evaltk.registry import Registry
from evaltk.seeding import episode_rng

_ALLOWED_MODULE_PREFIXES = ("evaltk.", "trainers.")


@runtime_checkable
class Policy(Protocol):
    """A batched policy. ``spec`` describes what it consumes and emits."""

    spec: CheckpointSpec

    def reset(self, num_envs: int, rng: np.random.Generator) -> None:
        """Start a batch of ``num_envs`` episodes; all randomness comes from ``rng``."""
        ...

    def act(self, obs: np.ndarray, first: np.ndarray) -> np.ndarray:
        """Return actions for ``obs`` (``[B, *obs_spec.shape]``); ``first`` (bool[B]) marks new episodes.

        Returns int64[B] (discrete) or int64[B, k] (multi_discrete).
        """
        ...


@runtime_checkable
class EpisodeSeeded(Protocol):
    """Optional extension: per-episode generators, so each episode is reproducible from its seed."""

    def begin_episodes(self, slots: np.ndarray, rngs: Sequence[np.random.Generator]) -> None:
        """Take per-episode generators for the slots (int64[k]) where new episodes start, before ``act``."""
        ...


@runtime_checkable
class ActsOnSlots(Protocol):
    """Optional extension: actions for some slots of the batch only, from those slots' rows alone.

    The evaluator calls it instead of ``act`` while some of its slots are idle (their episodes are all done),
    so a batched forward pass covers only the slots whose actions are used. Implement it where a slot's action
    does not depend on the other slots' rows (a stateless network with per-slot generators).
    """

    def act_slots(self, obs: np.ndarray, first: np.ndarray, slots: np.ndarray) -> np.ndarray:
        """Return actions for ``slots`` (int64[n], ascending slot indices of the batch ``reset`` made).

        ``obs`` (``[n, *obs_spec.shape]``) and ``first`` (bool[n]) are those slots' rows; returns int64[n]
        (discrete) or int64[n, k] (multi_discrete), as ``act`` returns for the whole batch.
        """
        ...


def episode_policy_rng(seed: int) -> np.random.Generator:
    """Return the generator the evaluator gives an :class:`EpisodeSeeded` policy for episode ``seed``.

    The episode's ``policy`` stream (:func:`evaltk.seeding.episode_rng`): ``default_rng([seed, 1])``.
    """
    return episode_rng(seed, "policy")


BuiltinFactory = Callable[[EnvSpec], Policy]
BUILTINS: Registry[BuiltinFactory] = Registry("built-in policy", CheckpointError,
                                              other_forms="a checkpoint directory")
"""The built-in policies by name (``builtin:NAME``); :func:`register_builtin` adds one."""


def register_builtin(name: str, factory: BuiltinFactory, *, replace: bool = False) -> None:
    """Register a built-in policy ``name``; ``factory(env)`` gets the env spec."""
    BUILTINS.register(name, factory, replace=replace)


def builtin_names() -> list[str]:
    """Names of the registered built-in policies, sorted."""
    return sorted(BUILTINS)


def builtin_name(ref: str) -> str | None:
    """Return the built-in name ``ref`` refers to (``builtin:NAME``, or a registered bare name that is no path).

    ``None`` when ``ref`` is not a built-in (a checkpoint path or location).
    """
    if ref.startswith("builtin:"):
        return ref.removeprefix("builtin:")
    if ref in BUILTINS and not Path(ref).exists():
        return ref
    return None


def make_builtin(name: str, env: EnvSpec) -> Policy:
    """Instantiate the built-in ``name`` for ``env``; :class:`CheckpointError` (with the close names) if unknown."""
    return BUILTINS[name](env)


def _import_model_class(model_class: str) -> Any:
    module_name, _, class_name = model_class.partition(":")
    if not module_name.startswith(_ALLOWED_MODULE_PREFIXES):
        raise CheckpointError(f"model_class {model_class!r} is outside evaltk./trainers.: only classes from "
                              "those packages are loaded; fix model_class in policy.json")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        raise CheckpointError(f"model_class {model_class!r}: module {exc.name} cannot be imported; "
                              "install the package that defines it or fix policy.json") from None
    cls = getattr(module, class_name, None)
    if cls is None or not hasattr(cls, "from_checkpoint"):
        raise CheckpointError(f"model_class {model_class!r}: {module_name} has no class {class_name} with "
                              "from_checkpoint(ckpt, device); fix model_class in policy.json")
    return cls


def load_policy(ref: str | Path, *, env: EnvSpec | None = None, device: str = "cpu",
                builtin_env: Callable[[], EnvSpec] | None = None) -> Policy:
    """Load a checkpoint directory, or a builtin (``random``, ``builtin:scripted``, ...).

    Builtins need ``env`` (an env spec, as ``CheckpointSpec.env_spec`` gives). A builtin saved to disk with
    :func:`save_builtin` is rebuilt for the env stored in its ``policy.json``; its recorded obs/action
    spec must match what the builtin gives for that env. ``builtin_env`` is called for a builtin's
    env when ``env`` is None (and only for builtins: a caller learns that ``ref`` named one).
    """
    name = builtin_name(str(ref)) if isinstance(ref, str) else None
    if name is not None:
        if env is None and builtin_env is not None:
            env = builtin_env()
        if env is None:
            raise CheckpointError(f"builtin policy {ref!r} needs an environment: pass --env-id "
                                  "(or env=... in Python)")
        return make_builtin(name, env)
    ckpt = load(ref)
    spec = ckpt.spec
    saved = builtin_name(spec.model_class)  # a builtin saved with save_builtin
    if saved is not None:
        policy = make_builtin(saved, spec.env_spec)
        for key in ("obs_spec", "action_spec", "model_kwargs"):
            if getattr(policy.spec, key) != getattr(spec, key):
                raise CheckpointError(
                    f"{ckpt.path}: {key} {getattr(spec, key)} does not match {spec.model_class} for "
                    f"env {spec.env_spec.env_id} ({getattr(policy.spec, key)}): re-save it with save_builtin")
        return policy
    cls = _import_model_class(spec.model_class)
    _build(cls, ckpt, "meta")
    policy = _build(cls, ckpt, device)
    if not isinstance(policy, Policy):
        raise CheckpointError(f"{spec.model_class}.from_checkpoint did not return a Policy (reset/act/spec)")
    guard_actions(policy, str(ckpt.path))
    return policy


def check_tensor_shapes(ckpt: Checkpoint, expected: Mapping[str, Sequence[int]]) -> None:
    """Check that ``ckpt`` holds exactly the tensors in ``expected`` with those shapes.

    Part of the ``from_checkpoint`` contract :func:`load_policy` calls: a model class calls this with the
    shapes its ``model_kwargs`` imply before it loads the tensors; a mismatch raises :class:`CheckpointError`
    naming the tensor, the expected and the found shape.
    """
    where = ckpt.path if ckpt.path is not None else ckpt.spec.model_class
    missing = sorted(set(expected) - set(ckpt.tensors))
    if missing:
        raise CheckpointError(f"checkpoint {where} lacks tensor(s) {', '.join(missing)} that "
                              f"{ckpt.spec.model_class} with model_kwargs {ckpt.spec.model_kwargs} needs")
    extra = sorted(set(ckpt.tensors) - set(expected))
    if extra:
        raise CheckpointError(f"checkpoint {where} has unexpected tensor(s) {', '.join(extra)} for "
                              f"{ckpt.spec.model_class}: it was saved by a different model")
    for name, shape in expected.items():
        found = tuple(ckpt.tensors[name].shape)
        if found != tuple(shape):
            raise CheckpointError(
                f"checkpoint {where}: tensor {name!r} has shape {list(found)}, expected {list(shape)} from "
                f"model_kwargs {ckpt.spec.model_kwargs}: the weights do not match the declared model")


def _build(cls: Any, ckpt: Checkpoint, device: str) -> Any:
    """Call ``cls.from_checkpoint``; a model that cannot be built from the checkpoint raises :class:`CheckpointError`.

    With ``device="meta"`` the model is built on torch's meta device, which allocates no memory, so
    ``model_kwargs`` that disagree with the stored tensors (a huge or negative layer size, a missing
    key) are refused before anything real is allocated. An operation the meta device does not support
    (``NotImplementedError``/``RuntimeError``, e.g. creating a generator there) ends the probe, which
    has by then checked the shapes (models call :func:`check_tensor_shapes` before
    loading). In the real build, a ``RuntimeError`` propagates unchanged.
    """
    import torch

    probe = device == "meta"
    if probe:
        ckpt = Checkpoint(ckpt.path, ckpt.spec, {k: v.to("meta") for k, v in ckpt.tensors.items()})
    try:
        with contextlib.ExitStack() as stack:
            if probe:
                stack.enter_context(warnings.catch_warnings())
                warnings.simplefilter("ignore")  # "copying ... to a meta parameter is a no-op"
                stack.enter_context(torch.device("meta"))
            return cls.from_checkpoint(ckpt, device=device)
    except (NotImplementedError, RuntimeError):
        if probe:  # something the meta device cannot do (e.g. a torch.Generator on it): the sizes were checked
            return None
        raise
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        raise CheckpointError(
            f"checkpoint {ckpt.path}: {ckpt.spec.model_class} cannot be built from model_kwargs "
            f"{ckpt.spec.model_kwargs} and the stored tensors ({type(exc).__name__}: {exc}): policy.json and "
            "policy.safetensors do not belong together; re-export the checkpoint") from None


def guard_actions(policy: Policy, where: str) -> None:
    """Make a failure inside ``policy.act`` (and ``act_slots``) a :class:`CheckpointError` naming ``where``.

    Finite weights can still produce an invalid action distribution at run time (an overflow to
    Inf/NaN logits makes ``torch.multinomial`` raise): the error then names the checkpoint, the
    exception and the fix instead of surfacing as a traceback mid-episode. The policy keeps its type
    (the methods are wrapped on the instance).
    """
    act = policy.act

    def checked_act(obs: np.ndarray, first: np.ndarray) -> np.ndarray:
        with _naming_failures(where):
            return act(obs, first)

    checked_act.__doc__ = act.__doc__
    policy.act = checked_act  # type: ignore[method-assign]
    if isinstance(policy, ActsOnSlots):
        act_slots = policy.act_slots

        def checked_act_slots(obs: np.ndarray, first: np.ndarray, slots: np.ndarray) -> np.ndarray:
            with _naming_failures(where):
                return act_slots(obs, first, slots)

        checked_act_slots.__doc__ = act_slots.__doc__
        policy.act_slots = checked_act_slots  # type: ignore[method-assign]


@contextlib.contextmanager
def _naming_failures(where: str) -> Iterator[None]:
    """Re-raise a failure of choosing actions as a :class:`CheckpointError` naming the checkpoint ``where``."""
    try:
        yield
    except (RuntimeError, ValueError, FloatingPointError, OverflowError) as exc:
        detail = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        raise CheckpointError(
            f"checkpoint {where} failed while choosing actions ({type(exc).__name__}: {detail}): its weights "
            "produce an invalid action distribution (NaN/Inf logits); use an earlier checkpoint") from None


def save_builtin(directory: str | Path, name: str, env: EnvSpec) -> Path:
    """Write the builtin ``name`` for ``env`` as a checkpoint directory (spec only, no tensors)."""
    from evaltk.checkpoint import save

    return save(directory, make_builtin(name, env).spec, {})


def _builtin_spec(name: str, env: EnvSpec, model_kwargs: dict[str, Any]) -> CheckpointSpec:
    from evaltk.checkpoint import default_provenance
    from evaltk.envs import describe

    info = describe(env)
    return CheckpointSpec(model_class=f"builtin:{name}", model_kwargs=model_kwargs, obs_spec=info.obs_spec,
                          action_spec=info.action_spec, env=info.env.to_json(),
                          provenance=default_provenance(trainer=None, note=f"builtin {name} policy, no weights"))


class RandomPolicy:
    """Uniform random actions over the action spec; one generator per env slot.

    ``reset(num_envs, rng)`` spawns one child generator per slot from ``rng``; with
    :meth:`begin_episodes` a slot's generator is replaced by the episode's own. Each step draws one
    ``rng.integers(n)`` per slot (discrete) or ``rng.integers(0, nvec)`` (multi_discrete), so the
    actions of an episode with seed ``s`` are the successive ``episode_policy_rng(s).integers(n)``.
    """

    def __init__(self, spec: CheckpointSpec) -> None:
        self.spec = spec
        self._discrete = spec.action_spec["type"] == "discrete"
        self._n = int(spec.action_spec["n"]) if self._discrete else 0
        self._nvec = None if self._discrete else np.asarray(spec.action_spec["nvec"], dtype=np.int64)
        self._rngs: list[np.random.Generator] = []

    def reset(self, num_envs: int, rng: np.random.Generator) -> None:
        """Give each of the ``num_envs`` slots a child generator of ``rng``."""
        self._rngs = list(rng.spawn(num_envs))

    def begin_episodes(self, slots: np.ndarray, rngs: Sequence[np.random.Generator]) -> None:
        """Use ``rngs[k]`` for the episode starting in ``slots[k]``."""
        for slot, rng in zip(slots.tolist(), rngs, strict=True):
            self._rngs[slot] = rng

    def act(self, obs: np.ndarray, first: np.ndarray) -> np.ndarray:
        """Return int64[B] (discrete) or int64[B, k] (multi_discrete) uniform actions."""
        batch = obs.shape[0]
        if batch != len(self._rngs):
            raise SpecError(f"random policy was reset for {len(self._rngs)} envs but got a batch of {batch}: "
                            "call reset(num_envs, rng) first")
        if self._discrete:
            return np.array([rng.integers(self._n) for rng in self._rngs], dtype=np.int64)
        return np.stack([rng.integers(0, self._nvec) for rng in self._rngs]).astype(np.int64)


def _random_factory(env: EnvSpec) -> Policy:
    from evaltk.tournament import agents

    if agents.is_feature_env(env):
        return agents.make_agent("random", env)
    return RandomPolicy(_builtin_spec("random", env, {}))


class PaddleTracker:
    """The ``scripted`` Atari baseline: move the paddle under the ball, press FIRE to serve.

    Uses only the observation, and only its newest frame (the last entry of a frame stack; RGB is
    reduced to its per-pixel channel maximum). The paddle's column is the mean column of non-black
    pixels in the paddle band (rows ``paddle_band`` as fractions of the height), the ball's column
    the mean column of non-black pixels in the band above it (``ball_band``), both ignoring
    ``margin`` of the width at each side (the walls). Target: the ball's column, or for up to
    ``memory_steps`` steps after it left the band (it is then right above the paddle) the last
    column it was seen at. No target or no paddle -> FIRE (serves a new ball in Breakout); target
    more than ``deadzone`` (fraction of the width) to the right -> RIGHT, to the left -> LEFT, else
    NOOP. The per-slot memory is cleared where ``first`` is True. The bands fit Breakout's screen
    (raw 210x160 and any resize of it); on other games it runs but is just a heuristic.
    Deterministic: no randomness, so an episode depends on its seed alone.
    """

    def __init__(self, spec: CheckpointSpec) -> None:
        self.spec = spec
        kw = spec.model_kwargs
        self._layout: str = spec.obs_spec["layout"]
        self._actions: dict[str, int] = dict(kw["actions"])
        shape = spec.obs_spec["shape"]
        dims = dict(zip(self._layout, shape, strict=True))
        height, width = dims["H"], dims["W"]
        self._ball_rows = slice(int(kw["ball_band"][0] * height), int(np.ceil(kw["ball_band"][1] * height)))
        self._paddle_rows = slice(int(kw["paddle_band"][0] * height), int(np.ceil(kw["paddle_band"][1] * height)))
        self._cols = slice(int(kw["margin"] * width), width - int(kw["margin"] * width))
        self._deadzone = float(kw["deadzone"]) * width
        self._memory = int(kw.get("memory_steps", 0))
        self._last_x = np.full(0, np.nan)
        self._unseen = np.zeros(0, np.int64)

    def reset(self, num_envs: int, rng: np.random.Generator) -> None:
        """Forget the last seen ball position of every slot (the tracker draws no random numbers)."""
        self._last_x = np.full(num_envs, np.nan)
        self._unseen = np.zeros(num_envs, np.int64)

    def begin_episodes(self, slots: np.ndarray, rngs: Sequence[np.random.Generator]) -> None:
        """Nothing to do: no random numbers are drawn and ``first`` clears the slot's memory."""

    def _band(self, obs: np.ndarray, rows: slice) -> np.ndarray:
        """Return bool[B, W'] columns of the newest frame with a non-black pixel in ``rows``."""
        frame = obs[:, -1] if self._layout.startswith("S") else obs
        band = frame[:, rows, self._cols]
        if self._layout.endswith("C"):  # any channel lit; elementwise maximum beats a reduce over a short axis
            lit = band[..., 0]
            for c in range(1, band.shape[-1]):
                lit = np.maximum(lit, band[..., c])
            band = lit
        return np.asarray((band > 0).any(axis=1))

    @staticmethod
    def _mean_col(lit: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        count = lit.sum(axis=1)
        cols = np.arange(lit.shape[1], dtype=np.float64)
        return (lit * cols).sum(axis=1) / np.maximum(count, 1), count > 0

    def act(self, obs: np.ndarray, first: np.ndarray) -> np.ndarray:
        """Return int64[B] actions (indices into the env's action set) for ``obs`` ``[B, *obs_spec.shape]``."""
        if self._last_x.shape[0] != obs.shape[0]:
            self.reset(obs.shape[0], np.random.default_rng(0))
        ball_x, has_ball = self._mean_col(self._band(obs, self._ball_rows))
        paddle_x, has_paddle = self._mean_col(self._band(obs, self._paddle_rows))
        self._last_x[first] = np.nan
        self._unseen = np.where(has_ball, 0, self._unseen + 1)
        self._last_x = np.where(has_ball, ball_x, self._last_x)
        target = np.where(has_ball, ball_x, self._last_x)
        has_target = has_ball | (~np.isnan(self._last_x) & (self._unseen <= self._memory))
        dx = target - paddle_x
        a = self._actions
        move = np.where(dx > self._deadzone, a["right"], np.where(dx < -self._deadzone, a["left"], a["noop"]))
        return np.where(has_target & has_paddle, move, a["fire"]).astype(np.int64)


def tracker_kwargs(layout: str, meanings: Sequence[str] | None) -> dict[str, Any]:
    """Return the scripted tracker's ``model_kwargs`` for an env with this obs layout and action meanings."""
    if "H" not in layout or "W" not in layout:
        raise SpecError(f"the scripted policy needs image observations, got layout {layout!r} "
                        "(obs_type 'ram'?): use obs_type 'rgb' or 'grayscale'")
    names = list(meanings or [])
    missing = [m for m in ("NOOP", "FIRE", "LEFT", "RIGHT") if m not in names]
    if missing:
        raise SpecError(f"the scripted policy needs the actions NOOP, FIRE, LEFT and RIGHT; this game lacks "
                        f"{', '.join(missing)} (actions: {names}): use builtin:random or a trained checkpoint")
    return {"actions": {k.lower(): names.index(k) for k in ("NOOP", "FIRE", "LEFT", "RIGHT")},
            "ball_band": [0.46, 0.89], "paddle_band": [0.9, 0.92], "margin": 0.06, "deadzone": 0.02,
            "memory_steps": 3}


def _scripted_factory(env: EnvSpec) -> Policy:
    from evaltk.envs import describe
    from evaltk.tournament import agents

    if agents.is_feature_env(env):
        return agents.make_agent("scripted", env)

    info = describe(env)
    return PaddleTracker(_builtin_spec("scripted", env, tracker_kwargs(info.obs_spec["layout"],
                                                                        info.action_meanings)))


register_builtin("random", _random_factory)
register_builtin("scripted", _scripted_factory)
