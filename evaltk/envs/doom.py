"""ViZDoom games from scenario rows, and the one observation/action mapping every Doom consumer uses.

The rows live in :mod:`evaltk.envs.doom_scenarios` (re-exported here). A :class:`DoomScenario` row says
everything needed to rebuild an environment: the ``.cfg`` file (``vizdoom.scenarios_path``, or evaltk's copies of
Sample Factory's cfgs: :mod:`evaltk.envs.doom_files`), the
map, the buttons and how policy actions map onto them, frameskip, render resolution and observation size,
the measurements vector, the reward scale and shaping, and the number of
built-in bots (which are re-added at the start of every episode).

The observation the APPO model consumes (:func:`observation`) is ``uint8[3, H, W]`` (CHW, RGB): the
screen rendered at ``scenario.resolution`` (HWC RGB24) resized (``scenario.interpolation``: bilinear
unless nearest) to ``scenario.obs_size`` and transposed to CHW; a scenario with a ``measurement_scheme``
adds one row holding its measurement vector (:mod:`evaltk.envs.doom_measurements`). The action a policy
returns (:func:`action_spec`) is one index per action head: ``int64`` scalar for a single head
(``discrete``) or ``int64[k]`` (``multi_discrete``).

Typical use::

    env = DoomEnv(SCENARIOS["basic"], seed=0)
    obs = env.reset()
    obs, reward, done, info = env.step(np.int64(3))
    env.close()
"""

from __future__ import annotations

import dataclasses
import os
import socket
from typing import Any

import cv2
import numpy as np
import vizdoom

from evaltk.envs import doom_files, doom_labels, doom_measurements, shm_reaper
from evaltk.envs.doom_inputs import DoomInputs
from evaltk.envs.doom_scenarios import DUEL_SHAPING as DUEL_SHAPING
from evaltk.envs.doom_scenarios import SCENARIOS as SCENARIOS
from evaltk.envs.doom_scenarios import SELF_PLAY_SCENARIOS as SELF_PLAY_SCENARIOS
from evaltk.envs.doom_scenarios import ActionHead as ActionHead
from evaltk.envs.doom_scenarios import DoomScenario as DoomScenario
from evaltk.envs.doom_scenarios import get_scenario as get_scenario
from evaltk.envs.spec import EnvSpec
from evaltk.errors import SpecError

TICRATE = 35
"""Doom game tics per second of game time."""

ActionLike = np.ndarray | np.integer[Any] | int
"""One env's action: an index (one head) or ``int[k]`` (k heads)."""


def free_udp_port() -> int:
    """Return a UDP port on 127.0.0.1 that is free right now (for hosting a bot game)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def make_game(scenario: DoomScenario, *, seed: int, extra_game_args: str = "", visible: bool = False,
              port: int | None = None, wad: str | None = None) -> vizdoom.DoomGame:
    """Return a ``DoomGame`` configured for ``scenario`` (not yet ``init()``-ed).

    Bot scenarios host a one-player deathmatch on ``port`` (a free UDP port when None); call
    :func:`start_episode` after ``init()`` and for every new episode so that the bots are (re-)added.
    ``wad``: a map file played instead of the scenario's (a tournament match's cig.wad).
    """
    cfg_path, wad_path = scenario_files(scenario, find_map=wad is None)
    wad_path = wad or wad_path
    game = vizdoom.DoomGame()
    game.load_config(cfg_path)
    if wad_path is not None:
        game.set_doom_scenario_path(wad_path)
    if scenario.map is not None:
        game.set_doom_map(scenario.map)
    if scenario.skill is not None:
        game.set_doom_skill(scenario.skill)
    game.set_available_buttons([getattr(vizdoom.Button, b) for b in scenario.buttons])
    game.set_available_game_variables([getattr(vizdoom.GameVariable, v) for v in _tracked_variables(scenario)])
    game.set_screen_resolution(getattr(vizdoom.ScreenResolution, scenario.resolution))
    game.set_screen_format(vizdoom.ScreenFormat.RGB24)
    if scenario.mark_players:
        game.set_labels_buffer_enabled(True)
    game.set_window_visible(visible)
    game.set_sound_enabled(False)
    game.set_mode(vizdoom.Mode.PLAYER)
    game.set_seed(int(seed) % (2**31))
    if scenario.timelimit is not None:
        game.set_episode_timeout(int(scenario.timelimit * 60 * TICRATE))
    if scenario.episode_timeout is not None:
        game.set_episode_timeout(scenario.episode_timeout)
    args = scenario.game_args
    if scenario.bots > 0:
        timelimit = scenario.timelimit if scenario.timelimit is not None else 10.0
        port = free_udp_port() if port is None else port
        args = f"-host 1 -port {port} -deathmatch +timelimit {timelimit} +name AI +colorset 0 {args}"
    args = f"{args} {extra_game_args}".strip()
    if args:
        game.add_game_args(args)
    return game


def scenario_files(scenario: DoomScenario, *, find_map: bool = True) -> tuple[str, str | None]:
    """Return ``scenario``'s cfg path and its map's path (None: the one the cfg names beside it, or not looked for).

    A missing file is a :class:`SpecError` naming the fix (for Sample Factory's maps:
    :func:`evaltk.envs.doom_files.install_command`); ``find_map`` False checks the cfg alone.
    """
    cfg_path = os.path.join(scenario_folder(scenario), scenario.cfg)
    if not os.path.isfile(cfg_path):
        raise SpecError(f"scenario {scenario.name!r}: cfg {cfg_path} does not exist; the cfg must be a file "
                        f"shipped in its scenario_dir ({scenario.scenario_dir})")
    if scenario.scenario_dir == "sample_factory" and find_map:  # its cfg names a map; the map may lie elsewhere
        return cfg_path, str(doom_files.sf_wad(doom_files.cfg_wad(cfg_path), scenario.name))
    return cfg_path, None


def scenario_folder(scenario: DoomScenario) -> str:
    """Return the folder of ``scenario.cfg``: ``vizdoom.scenarios_path``, or evaltk's copies of Sample Factory's cfgs.

    A ``sample_factory`` scenario's map is found by :func:`evaltk.envs.doom_files.sf_wad`.
    """
    if scenario.scenario_dir == "vizdoom":
        return str(vizdoom.scenarios_path)
    return str(doom_files.SF_FOLDER)


def _tracked_variables(scenario: DoomScenario) -> tuple[str, ...]:
    names: list[str] = list(scenario.measurements)
    for key in scenario.reward_shaping:
        var = key.split(":")[0]
        if var not in names:
            names.append(var)
    if scenario.true_objective is not None and scenario.true_objective not in names:
        names.append(scenario.true_objective)
    return tuple(names)


def start_episode(game: vizdoom.DoomGame, scenario: DoomScenario, *, first: bool = False) -> None:
    """Begin an episode: ``new_episode()`` unless ``first`` (``init()`` starts one), then add the bots."""
    if not first:
        game.new_episode()
    if scenario.bots > 0:
        game.send_game_command("removebots")
        for _ in range(scenario.bots):
            game.send_game_command("addbot")


def observation(state: vizdoom.GameState | None, scenario: DoomScenario, *,
                out: np.ndarray | None = None) -> np.ndarray:
    """Return the model's observation ``uint8[3, H, W]`` (``H, W = scenario.obs_size``) for ``state``.

    ``state`` None (the episode is over) gives zeros. ``out``, if given, is filled in place and returned.
    """
    height, width = scenario.obs_size
    extra = 1 if scenario.measurement_scheme else 0
    if out is None:
        out = np.empty((3, height + extra, width), dtype=np.uint8)
    if state is None:
        out[...] = 0
        return out
    screen = state.screen_buffer
    if screen.shape[0] != height or screen.shape[1] != width:
        mode = cv2.INTER_NEAREST if scenario.interpolation == "nearest" else cv2.INTER_LINEAR
        screen = cv2.resize(screen, (width, height), interpolation=mode)
    out[:, :height] = screen.transpose(2, 0, 1)
    if scenario.mark_players:
        _mark_players(state, out[:, :height])
    if extra:
        variables = state.game_variables if state.game_variables is not None else ()
        values = dict(zip(scenario.measurements, (float(v) for v in variables), strict=False))
        doom_measurements.pack(out[:, height], doom_measurements.vector(values))
    return out


def inputs(scenario: DoomScenario) -> DoomInputs:
    """Return what :func:`observation` feeds a policy of ``scenario``: the inputs a checkpoint declares.

    The screen at ``scenario.resolution``; the labels buffer when ``mark_players`` paints other players from
    it; with a ``measurement_scheme``, the game variables its vector reads (those of
    :data:`evaltk.envs.doom_measurements.VARIABLES` among ``scenario.measurements``). The other tracked
    variables (``measurements`` without a scheme, the shaping's and the true objective's) only score the
    episode: the policy never sees them.
    """
    variables = doom_measurements.present(scenario.measurements) if scenario.measurement_scheme else ()
    return DoomInputs(screen=scenario.resolution, labels=scenario.mark_players, game_variables=variables)


def privileged_view(state: vizdoom.GameState | None, teacher: DoomScenario, *, obs_out: np.ndarray,
                    players_out: np.ndarray) -> None:
    """Fill what a privileged teacher sees of ``state`` and where the other players are, from the labels buffer.

    ``obs_out``: :func:`observation` of ``state`` for ``teacher`` (a scenario that marks players); ``players_out``:
    :func:`evaltk.envs.doom_labels.players_grid` of the other players' pixels (``uint8[rows * cols]``). ``state``
    None (the episode is over) gives zeros. The game must render the labels buffer (``DoomEnv(..., labels=True)``).
    """
    observation(state, teacher, out=obs_out)
    if state is None:
        players_out[:] = 0
        return
    mask = doom_labels.enemy_mask(state)
    if mask is None:
        raise SpecError("privileged_view needs the labels buffer; build the env with DoomEnv(..., labels=True)")
    doom_labels.players_grid(mask, out=players_out)


def _mark_players(state: vizdoom.GameState, picture: np.ndarray) -> None:
    """Paint other players' pixels (the labels buffer, resized like the screen but nearest) into ``picture``."""
    mask = doom_labels.enemy_mask(state)
    if mask is None:
        raise SpecError("this scenario marks players but the game has no labels buffer; build the game with "
                        "evaltk.envs.doom.make_game, which enables it")
    if not mask.any():
        return
    height, width = picture.shape[1:]
    if mask.shape != (height, width):
        mask = cv2.resize(mask.view(np.uint8), (width, height), interpolation=cv2.INTER_NEAREST).view(bool)
    picture[:, mask] = np.asarray(doom_labels.MARK_RGB, dtype=np.uint8)[:, None]


def _button_table(scenario: DoomScenario) -> list[np.ndarray]:
    index = {b: i for i, b in enumerate(scenario.buttons)}
    tables = []
    for head in scenario.action_heads:
        table = np.zeros((len(head.options), len(scenario.buttons)), dtype=np.float64)
        for i, option in enumerate(head.options):
            for button, value in option:
                table[i, index[button]] = value
        tables.append(table)
    return tables


_TABLE_CACHE: dict[int, tuple[DoomScenario, list[np.ndarray]]] = {}


def action_to_buttons(action: ActionLike, scenario: DoomScenario) -> list[float]:
    """Map one env's action (int for one head, ``int[k]`` for k heads) to the button vector ``make_action`` takes."""
    cached = _TABLE_CACHE.get(id(scenario))
    if cached is None or cached[0] is not scenario:
        cached = (scenario, _button_table(scenario))
        _TABLE_CACHE[id(scenario)] = cached
    tables = cached[1]
    indices = np.atleast_1d(np.asarray(action)).astype(np.int64)
    if indices.shape != (len(tables),):
        raise SpecError(f"scenario {scenario.name!r} takes {len(tables)} action index(es) per env, "
                        f"got {np.asarray(action).tolist()!r}")
    buttons = np.zeros(len(scenario.buttons), dtype=np.float64)
    for table, i in zip(tables, indices, strict=True):
        if not 0 <= i < table.shape[0]:
            raise SpecError(f"scenario {scenario.name!r}: action index {int(i)} is out of range "
                            f"[0, {table.shape[0]})")
        buttons += table[i]
    return [float(x) for x in buttons]


def action_spec(scenario: DoomScenario) -> dict[str, Any]:
    """Return the action spec of :mod:`evaltk.checkpoint` for ``scenario``."""
    sizes = [len(h.options) for h in scenario.action_heads]
    if len(sizes) == 1:
        return {"type": "discrete", "n": sizes[0]}
    return {"type": "multi_discrete", "nvec": sizes}


def obs_spec(scenario: DoomScenario) -> dict[str, Any]:
    """Return the observation spec of :mod:`evaltk.checkpoint` for ``scenario``."""
    height, width = scenario.obs_size
    if scenario.measurement_scheme:
        return {"shape": [3, height + 1, width], "dtype": "uint8", "layout": "CHW+measurements"}
    return {"shape": [3, height, width], "dtype": "uint8", "layout": "CHW"}


def env_spec(scenario: DoomScenario) -> EnvSpec:
    """Return the env spec that rebuilds ``scenario`` exactly (its JSON form is a checkpoint spec's ``env``)."""
    return EnvSpec("doom", scenario.name, {}, scenario.to_dict())


def scenario_from_env_spec(env: EnvSpec) -> DoomScenario:
    """Rebuild a :class:`DoomScenario` from :func:`env_spec`'s output (or a built-in name with no preprocessing)."""
    pre = env.preprocessing
    if not pre:
        return get_scenario(env.env_id)
    fields = {f.name for f in dataclasses.fields(DoomScenario)}
    kwargs = {k: v for k, v in pre.items() if k in fields}
    kwargs["buttons"] = tuple(kwargs["buttons"])
    kwargs["measurements"] = tuple(kwargs.get("measurements", ()))
    kwargs["obs_size"] = tuple(kwargs["obs_size"])
    kwargs["action_heads"] = tuple(
        ActionHead(h["name"], tuple(tuple((str(b), float(v)) for b, v in opt) for opt in h["options"]))
        for h in kwargs["action_heads"])
    return DoomScenario(**kwargs)


def measurements(game: vizdoom.DoomGame, scenario: DoomScenario) -> np.ndarray:
    """Return the measurements vector ``float32[len(scenario.measurements)]`` (game variables, raw values)."""
    return np.array([game.get_game_variable(getattr(vizdoom.GameVariable, v)) for v in scenario.measurements],
                    dtype=np.float32)


class RewardShaper:
    """Turns per-step changes of game variables into shaping reward (``scenario.reward_shaping``)."""

    def __init__(self, scenario: DoomScenario) -> None:
        self._terms: list[tuple[Any, float, float]] = []
        for key, coeff in scenario.reward_shaping.items():
            if key.endswith(":neg"):
                continue
            neg = scenario.reward_shaping.get(f"{key}:neg", coeff)
            self._terms.append((getattr(vizdoom.GameVariable, key), float(coeff), float(neg)))
        self._last = np.zeros(len(self._terms))

    def reset(self, game: vizdoom.DoomGame) -> None:
        """Record the variables' values at episode start."""
        self._last = np.array([game.get_game_variable(v) for v, _, _ in self._terms])

    def step(self, game: vizdoom.DoomGame) -> float:
        """Return the shaping reward since the last call and remember the current values."""
        if not self._terms:
            return 0.0
        now = np.array([game.get_game_variable(v) for v, _, _ in self._terms])
        delta = now - self._last
        self._last = now
        reward = 0.0
        for (_, pos, neg), d in zip(self._terms, delta, strict=True):
            reward += (pos if d >= 0 else neg) * float(d)
        return reward


_NO_INFO: dict[str, float] = {}


class DoomEnv:
    """One ViZDoom game as an auto-resetting environment (the unit a rollout worker steps).

    ``step`` returns ``(obs, reward, done, info)``; when ``done`` the returned ``obs`` is already the
    first observation of the next episode and ``info`` holds ``episode_reward`` (scaled game reward plus
    shaping), ``episode_length`` (agent steps), ``timeout`` and, if the scenario has one, ``true_objective``.
    ``state`` is the ``GameState`` the last returned observation was made from. ``labels``: the game also
    renders the labels buffer, for :func:`privileged_view` of ``state``; the observation is the scenario's
    whatever ``labels`` is.
    """

    def __init__(self, scenario: DoomScenario, *, seed: int, extra_game_args: str = "", labels: bool = False) -> None:
        self.scenario = scenario
        self.game = make_game(scenario, seed=seed, extra_game_args=extra_game_args)
        if labels:  # for privileged_view: the observation stays the scenario's
            self.game.set_labels_buffer_enabled(True)
        self.state: vizdoom.GameState | None = None
        self._button_cache: dict[tuple[int, ...], list[float]] = {}
        self._scale = scenario.reward_scale
        self._frameskip = scenario.frameskip
        self._has_bots = scenario.bots > 0
        self._shaper = RewardShaper(scenario)
        self._started = False
        self._tracked: tuple[set[str], set[int]] | None = None  # shared memory + engine, for shm_reaper
        self._episode_reward = 0.0
        self._episode_length = 0

    def _begin(self, first: bool) -> None:
        start_episode(self.game, self.scenario, first=first)
        self._shaper.reset(self.game)
        self._episode_reward = 0.0
        self._episode_length = 0

    def reset(self, *, out: np.ndarray | None = None) -> np.ndarray:
        """Start (or restart) an episode and return its first observation ``uint8[3, H, W]``."""
        if not self._started:
            self._tracked = shm_reaper.init_game(self.game)  # a recorded owner's game, covered by its reaper
            self._started = True
            self._begin(first=True)
        else:
            self._begin(first=False)
        self.state = self.game.get_state()
        return observation(self.state, self.scenario, out=out)

    @property
    def engines(self) -> set[int]:
        """PIDs of this env's running ViZDoom engine process (empty before the first reset and after close)."""
        return set(self._tracked[1]) if self._tracked is not None else set()

    def buttons(self, action: ActionLike) -> list[float]:
        """Button vector for one action (cached per distinct action; see :func:`action_to_buttons`)."""
        key = tuple(int(i) for i in np.atleast_1d(np.asarray(action)))
        cached = self._button_cache.get(key)
        if cached is None:
            cached = action_to_buttons(np.asarray(key, dtype=np.int64), self.scenario)
            self._button_cache[key] = cached
        return cached

    def step(self, action: ActionLike, *, out: np.ndarray | None = None
             ) -> tuple[np.ndarray, float, bool, dict[str, float]]:
        """Apply ``action`` for ``frameskip`` tics; see the class docstring for the return value."""
        game = self.game
        reward = game.make_action(self.buttons(action), self._frameskip) * self._scale + self._shaper.step(game)
        self._episode_reward += reward
        self._episode_length += 1
        finished = game.is_episode_finished()
        if self._has_bots and not finished and game.is_player_dead():
            game.respawn_player()
        if not finished:
            self.state = game.get_state()
            return observation(self.state, self.scenario, out=out), reward, False, _NO_INFO
        info = {"episode_reward": self._episode_reward, "episode_length": float(self._episode_length),
                "timeout": float(game.is_episode_timeout_reached())}
        if self.scenario.true_objective is not None:
            info["true_objective"] = game.get_game_variable(getattr(vizdoom.GameVariable,
                                                                    self.scenario.true_objective))
        self._begin(first=False)
        self.state = game.get_state()
        return observation(self.state, self.scenario, out=out), reward, True, info

    def close(self) -> None:
        """Shut the engine process down (its shared memory goes with it)."""
        self.game.close()
        if self._tracked is not None:
            shm_reaper.untrack(*self._tracked)
            self._tracked = None
