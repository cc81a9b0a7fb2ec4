"""The Doom feature-view agents behind the built-ins ``random`` and ``scripted`` of :mod:`evaltk.policies`.

:mod:`evaltk.policies` is the one registry of built-in agents: ``builtin:random``/``builtin:scripted``
for the env of :func:`builtin_env` (what tournament players get for a built-in) build these agents
(:func:`make_agent`); for any other env they are the generic random policy and the Atari tracker.

Both follow the :class:`evaltk.policies.Policy` protocol (``reset`` / ``act``) on a small feature
vector computed from a ViZDoom ``GameState`` (:func:`state_features`), and act through a fixed
multi-discrete action space over :data:`BUILTIN_BUTTONS` (:func:`action_to_buttons`):

* ``obs``: ``float32[B, NUM_FEATURES]`` (layout ``"doom_features"``, fields in :data:`FEATURES`);
* actions: ``int64[B, 4]`` with ``nvec = ACTION_NVEC`` = (move: none/forward/back,
  strafe: none/left/right, attack: no/yes, turn bin: ``TURN_BINS`` evenly spaced degrees).

The scripted agent turns toward the nearest visible player (from the labels buffer), fires when
it is roughly centred and not too close (rockets on cig map01 hurt the shooter), and otherwise
walks forward, turning away from walls (from the depth buffer).

Each agent declares its inputs (``INPUTS``, :class:`~evaltk.envs.doom_inputs.DoomInputs`, derived from
:data:`FEATURE_SOURCES`: the sources of the features it reads), and the tournament player computes the
feature vector from those inputs alone: a buffer or game variable an agent does not declare is not enabled
or read, and its features stay zero. ``scripted`` reads every feature (labels buffer, depth buffer, health,
ammunition); ``random`` reads none.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, ClassVar

import numpy as np

from evaltk.envs.doom_inputs import BUFFERS, DoomInputs
from evaltk.envs.doom_labels import PLAYER_LABEL
from evaltk.envs.spec import EnvSpec
from evaltk.registry import did_you_mean

#: Names of the entries of the feature vector, in order.
FEATURES: tuple[str, ...] = (
    "enemy_visible",  # 1.0 when another player is in view
    "enemy_angle_deg",  # horizontal angle to the nearest enemy's centre, + = to the right
    "enemy_height_frac",  # its label height / screen height (bigger = closer)
    "depth_left",  # mean depth (0-255) of the left/centre/right thirds of the middle rows
    "depth_centre",
    "depth_right",
    "health",
    "ammo",  # ammunition of the selected weapon
)
NUM_FEATURES = len(FEATURES)
#: The input each feature is computed from: a buffer (a key of :data:`evaltk.envs.doom_inputs.BUFFERS`) or a
#: ViZDoom game variable.
FEATURE_SOURCES: dict[str, str] = {"enemy_visible": "labels", "enemy_angle_deg": "labels",
                                   "enemy_height_frac": "labels", "depth_left": "depth", "depth_centre": "depth",
                                   "depth_right": "depth", "health": "HEALTH", "ammo": "SELECTED_WEAPON_AMMO"}
#: Buttons the built-in agents press, in this order (all binary except the turn delta in degrees per tic).
BUILTIN_BUTTONS: tuple[str, ...] = ("MOVE_FORWARD", "MOVE_BACKWARD", "MOVE_LEFT", "MOVE_RIGHT", "ATTACK",
                                    "TURN_LEFT_RIGHT_DELTA")
#: Turn bins in degrees per decision (spread over the frameskip tics).
TURN_BINS: tuple[float, ...] = tuple(float(x) for x in np.linspace(-30.0, 30.0, 13))
ACTION_NVEC: tuple[int, ...] = (3, 3, 2, len(TURN_BINS))
#: Horizontal field of view of ViZDoom's default 4:3 view, degrees.
HORIZONTAL_FOV_DEG = 90.0


def builtin_env(map_name: str = "map01") -> EnvSpec:
    """Return the env spec describing what the built-in agents play on (the tournament's feature view)."""
    return EnvSpec("doom", "tournament_builtin", {"map": map_name},
                   {"obs": "doom_features", "features": list(FEATURES), "buttons": list(BUILTIN_BUTTONS),
                    "turn_bins": list(TURN_BINS)})


def obs_spec() -> dict[str, Any]:
    """Return the observation spec of the built-in agents (``float32[NUM_FEATURES]`` per env)."""
    return {"shape": [NUM_FEATURES], "dtype": "float32", "layout": "doom_features"}


def action_spec() -> dict[str, Any]:
    """Return the action spec of the built-in agents (multi-discrete over :data:`ACTION_NVEC`)."""
    return {"type": "multi_discrete", "nvec": list(ACTION_NVEC)}


def feature_inputs(features: Iterable[str]) -> DoomInputs:
    """Return the inputs an agent reading ``features`` (names of :data:`FEATURES`) declares (no screen)."""
    sources = [FEATURE_SOURCES[f] for f in features]
    variables = tuple(dict.fromkeys(s for s in sources if s not in BUFFERS))
    return DoomInputs(labels="labels" in sources, depth="depth" in sources, automap="automap" in sources,
                      game_variables=variables)


def state_features(labels: list[tuple[str, int, int, int, int]], depth: np.ndarray | None,
                   screen_width: int, screen_height: int, health: float, ammo: float) -> np.ndarray:
    """Compute the feature vector of one player's view.

    ``labels``: ``(object_name, x, y, width, height)`` per label in screen pixels; ``depth``:
    ``uint8[H, W]`` or ``None``. Returns ``float32[NUM_FEATURES]``.
    """
    feats = np.zeros(NUM_FEATURES, dtype=np.float32)
    enemies = [lab for lab in labels if lab[0] == PLAYER_LABEL]
    if enemies:
        name, x, _y, w, h = max(enemies, key=lambda lab: lab[4])
        del name
        offset = (x + w / 2.0 - screen_width / 2.0) / (screen_width / 2.0)
        half_fov = math.radians(HORIZONTAL_FOV_DEG / 2.0)
        feats[0] = 1.0
        feats[1] = math.degrees(math.atan(offset * math.tan(half_fov)))
        feats[2] = h / float(screen_height)
    if depth is not None:
        rows = depth[depth.shape[0] // 3: 2 * depth.shape[0] // 3]
        third = depth.shape[1] // 3
        feats[3] = float(rows[:, :third].mean())
        feats[4] = float(rows[:, third:2 * third].mean())
        feats[5] = float(rows[:, 2 * third:].mean())
    feats[6] = health
    feats[7] = ammo
    return feats


def action_to_buttons(action: np.ndarray, frameskip: int) -> list[float]:
    """Map one ``int64[4]`` action to button values for :data:`BUILTIN_BUTTONS` (turn spread over the tics)."""
    move, strafe, attack, turn = (int(a) for a in action)
    return [float(move == 1), float(move == 2), float(strafe == 1), float(strafe == 2), float(attack == 1),
            TURN_BINS[turn] / max(1, frameskip)]


@dataclass
class RandomDoomAgent:
    """Uniformly random actions over :data:`ACTION_NVEC` (independent per component); reads no feature."""

    INPUTS: ClassVar[DoomInputs] = feature_inputs(())
    spec: Any = None
    _rng: np.random.Generator | None = None

    def reset(self, num_envs: int, rng: np.random.Generator) -> None:
        """Start a batch of episodes, drawing all actions from ``rng``."""
        del num_envs
        self._rng = rng

    def act(self, obs: np.ndarray, first: np.ndarray) -> np.ndarray:
        """Return ``int64[B, 4]`` uniform random actions for ``obs: float32[B, NUM_FEATURES]``."""
        del first
        if self._rng is None:
            raise RuntimeError("call reset(num_envs, rng) before act()")
        nvec = np.asarray(ACTION_NVEC)
        actions: np.ndarray = (self._rng.random((obs.shape[0], nvec.size)) * nvec).astype(np.int64)
        return actions


@dataclass
class ScriptedDoomAgent:
    """Aim at the nearest visible player and fire; otherwise explore, steering away from walls.

    ``min_fire_height``/``max_fire_height``: fire only when the target's label height fraction is in
    this range (too close risks rocket splash on cig map01). Reads every feature.
    """

    INPUTS: ClassVar[DoomInputs] = feature_inputs(FEATURES)
    spec: Any = None
    fire_angle_deg: float = 4.0
    max_fire_height: float = 0.55
    wall_depth: float = 6.0
    steer_gain: float = 1.0
    #: Turn options in degrees per decision; the action's last entry indexes them (default :data:`TURN_BINS`).
    turn_bins: tuple[float, ...] = TURN_BINS
    _rng: np.random.Generator | None = None
    _wander: np.ndarray | None = None

    def reset(self, num_envs: int, rng: np.random.Generator) -> None:
        """Start a batch of episodes; ``rng`` drives the exploration turns."""
        self._rng = rng
        self._wander = np.zeros(num_envs, dtype=np.float64)

    def act(self, obs: np.ndarray, first: np.ndarray) -> np.ndarray:
        """Return ``int64[B, 4]`` actions for ``obs: float32[B, NUM_FEATURES]``."""
        if self._rng is None or self._wander is None or self._wander.size != obs.shape[0]:
            raise RuntimeError("call reset(num_envs, rng) with the batch size before act()")
        actions = np.zeros((obs.shape[0], len(ACTION_NVEC)), dtype=np.int64)
        for i, f in enumerate(obs):
            if first[i]:
                self._wander[i] = 0.0
            actions[i] = self._act_one(i, f)
        return actions

    def _act_one(self, i: int, f: np.ndarray) -> np.ndarray:
        assert self._rng is not None
        assert self._wander is not None
        visible, angle, height = bool(f[0] > 0.5), float(f[1]), float(f[2])
        d_left, d_centre, d_right = float(f[3]), float(f[4]), float(f[5])
        if visible:
            fire = abs(angle) <= self.fire_angle_deg and height <= self.max_fire_height and f[7] > 0
            strafe = 1 + int(self._rng.integers(0, 2))
            move = 2 if height > self.max_fire_height else 0
            return np.array([move, strafe, int(fire), self._turn(angle)], dtype=np.int64)
        if d_centre < self.wall_depth:
            turn = 30.0 if d_right >= d_left else -30.0
            return np.array([0, 0, 0, self._turn(turn)], dtype=np.int64)
        self._wander[i] = 0.8 * self._wander[i] + float(self._rng.normal(0.0, 4.0))
        steer = self.steer_gain * (d_right - d_left) + self._wander[i]
        return np.array([1, 0, 0, self._turn(steer)], dtype=np.int64)

    def _turn(self, degrees: float) -> int:
        return int(np.argmin(np.abs(np.asarray(self.turn_bins) - degrees)))


def is_feature_env(env: EnvSpec) -> bool:
    """Whether ``env`` is :func:`builtin_env`'s: the tournament feature view."""
    return env.preprocessing.get("obs") == "doom_features"


def builtin_inputs(name: str) -> DoomInputs:
    """Return the inputs the built-in Doom agent ``name`` (``random``/``scripted``) declares."""
    return _agent_class(name).INPUTS


DOOM_AGENTS: Mapping[str, type[RandomDoomAgent] | type[ScriptedDoomAgent]] = MappingProxyType(
    {"random": RandomDoomAgent, "scripted": ScriptedDoomAgent})
"""The built-in Doom agents by name: the built-ins a tournament (or a suite's ``bots`` case) plays."""


def _agent_class(name: str) -> type[RandomDoomAgent] | type[ScriptedDoomAgent]:
    if name not in DOOM_AGENTS:
        raise ValueError(f"unknown built-in Doom agent {name!r}: {did_you_mean(name, DOOM_AGENTS)}use one of "
                         f"{', '.join(DOOM_AGENTS)}")
    return DOOM_AGENTS[name]


def make_agent(name: str, env: EnvSpec) -> RandomDoomAgent | ScriptedDoomAgent:
    """Return a fresh ``random``/``scripted`` agent for the feature env ``env`` (see :func:`builtin_env`).

    :mod:`evaltk.policies` calls this for its built-ins ``random`` and ``scripted`` when the env is the
    tournament's feature view, so ``builtin:random``/``builtin:scripted`` name these agents there.
    """
    from evaltk.checkpoint import CheckpointSpec

    map_name = str(env.kwargs.get("map", "map01"))
    spec = CheckpointSpec(model_class=f"builtin:{name}", model_kwargs={}, obs_spec=obs_spec(),
                          action_spec=action_spec(), env=builtin_env(map_name).to_json(),
                          provenance={"source": "evaltk.tournament.agents"})
    return _agent_class(name)(spec=spec)
