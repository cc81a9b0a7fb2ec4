"""One programmatic player of a multiplayer Doom match, run as its own process.

``python -m evaltk.tournament.player`` reads a :class:`PlayerSpec` as JSON on stdin, hosts or joins
the match on 127.0.0.1, plays it to the end with its agent and prints one JSON line (a
:class:`PlayerReport` as a dict) to stdout. Exit status 0 on success; any failure (engine crash,
bad checkpoint) exits non-zero with the reason on stderr, and the match runner voids the match.
``--serve`` plays many matches, one request line each (see :func:`serve` and :mod:`evaltk.tournament.pool`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from evaltk.envs import doom_labels, shm_reaper
from evaltk.envs.doom_inputs import DoomInputs
from evaltk.tournament import agents

#: Server settings of every match (SF's deathmatch settings; see docs/tournament.md).
DEATHMATCH_ARGS = ("-deathmatch +sv_forcerespawn 1 +sv_spawnfarthest 1 +sv_respawnprotect 1 +sv_noautoaim 1 "
                   "+sv_nocrouch 1 +sv_nojump 1 +sv_nofreelook 1 +sv_noexit 1 +viz_respawn_delay 0")
#: The wad every match plays (an agent whose cfg names another wad, e.g. Sample Factory's ssl2.wad, loads this one).
MATCH_WAD = "cig.wad"
TICS_PER_SECOND = 35
RENDER_WIDTH, RENDER_HEIGHT = 160, 120


@dataclass(frozen=True)
class PlayerSpec:
    """What one player process needs.

    ``slot``: 0 is the host (it adds the bots and may record the demo); ``num_players``: programmatic
    players in the match (bots not counted); ``timelimit_min``: game minutes (0 = none);
    ``fraglimit``: 0 = none; ``agent``: ``random``, ``scripted`` or a checkpoint directory.
    """

    slot: int
    num_players: int
    port: int
    map: str
    agent: str
    name: str
    seed: int
    policy_seed: int
    timelimit_min: float
    fraglimit: int
    frameskip: int
    bots: tuple[str, ...] = ()
    record: str | None = None
    connect_timeout_s: int = 20

    @property
    def episode_tics(self) -> int:
        """Engine episode timeout in tics: the time limit plus a small margin (or 60 game-minutes)."""
        minutes = self.timelimit_min if self.timelimit_min > 0 else 60.0
        return round(minutes * 60 * TICS_PER_SECOND) + 2 * self.frameskip


@dataclass
class PlayerReport:
    """What a player process prints when its match ends."""

    slot: int
    name: str
    agent: str
    frags: int
    deaths: int
    tics: int
    decisions: int
    player_number: int
    wall_s: float
    cpu_s: float
    server: dict[str, Any] = field(default_factory=dict)


def _game_args(spec: PlayerSpec) -> str:
    if spec.slot == 0:
        args = f"-host {spec.num_players} -port {spec.port} {DEATHMATCH_ARGS}"
        if spec.timelimit_min > 0:
            args += f" +timelimit {spec.timelimit_min:g}"
        if spec.fraglimit > 0:
            args += f" +fraglimit {spec.fraglimit}"
        args += f" +viz_connect_timeout {spec.connect_timeout_s}"
        if spec.record:
            args += f" -record {spec.record}"
    else:
        args = f"-join 127.0.0.1 -port {spec.port}"
    return args + f" +name {spec.name} +colorset {spec.slot}"


class _Driver:
    """Turns game states into policy observations and policy actions into buttons."""

    def __init__(self, spec: PlayerSpec) -> None:
        import vizdoom as vzd

        self.spec = spec
        self.scenario: Any = None
        self.frameskip = spec.frameskip
        from evaltk import policies

        builtin = policies.builtin_name(spec.agent)
        if builtin is not None:
            self.policy: Any = policies.make_builtin(builtin, agents.builtin_env(spec.map))
        else:
            self.policy = policies.load_policy(spec.agent)
            env = self.policy.spec.env_spec
            if env.family != "doom":
                raise SystemExit(f"checkpoint {spec.agent} is for family {env.family!r}, not doom")
        self.inputs: DoomInputs | None = (self.policy.INPUTS if agents.is_feature_env(self.policy.spec.env_spec)
                                          else None)
        if self.inputs is not None:  # a built-in agent: enable what it declares, nothing more
            game = vzd.DoomGame()
            game.load_config(os.path.join(vzd.scenarios_path, "cig.cfg"))
            game.set_available_buttons([getattr(vzd.Button, b) for b in agents.BUILTIN_BUTTONS])
            game.set_labels_buffer_enabled(self.inputs.labels)
            game.set_depth_buffer_enabled(self.inputs.depth)
            game.set_automap_buffer_enabled(self.inputs.automap)
            game.set_screen_resolution(vzd.ScreenResolution.RES_160X120)
            game.set_seed(spec.seed)
        else:
            from evaltk.envs import doom

            # The match, not the training scenario, decides hosting, bots and limits; the scenario's
            # own frameskip is kept (players of one match may step at different rates).
            self.scenario = dataclasses.replace(doom.scenario_from_env_spec(self.policy.spec.env_spec), bots=0,
                                                timelimit=None, episode_timeout=None)
            self.frameskip = int(self.scenario.frameskip)
            if self.scenario.scenario_dir != "vizdoom":  # Sample Factory's cfg: its server options are the match's
                self.scenario = dataclasses.replace(self.scenario, game_args="")
            # Sample Factory's cfg names its own wad; every match plays cig.wad
            wad = os.path.join(vzd.scenarios_path, MATCH_WAD) if self.scenario.scenario_dir != "vizdoom" else None
            game = doom.make_game(self.scenario, seed=spec.seed, wad=wad)
        game.set_doom_map(spec.map)
        game.set_mode(vzd.Mode.PLAYER)
        game.set_window_visible(False)
        game.set_episode_timeout(spec.episode_tics)
        game.add_game_args(_game_args(spec))
        self.game = game
        self.vzd = vzd

    def observe(self, state: Any) -> np.ndarray:
        """Return the policy's observation of ``state`` (one env, no batch axis).

        A built-in agent's features come from its declared inputs only (an undeclared one reads as empty or 0).
        """
        if self.inputs is not None:
            labels = doom_labels.visible_labels(state.labels) if self.inputs.labels else []
            depth = state.depth_buffer if self.inputs.depth else None
            values = {v: self.game.get_game_variable(getattr(self.vzd.GameVariable, v))
                      for v in self.inputs.game_variables}
            health, ammo = (values.get(agents.FEATURE_SOURCES[f], 0.0) for f in ("health", "ammo"))
            return agents.state_features(labels, depth, RENDER_WIDTH, RENDER_HEIGHT, health, ammo)
        from evaltk.envs import doom

        return np.asarray(doom.observation(state, self.scenario))

    def buttons(self, action: np.ndarray) -> list[float]:
        """Return the button values for one env's action."""
        if self.inputs is not None:
            return agents.action_to_buttons(action, self.spec.frameskip)
        from evaltk.envs import doom

        return list(doom.action_to_buttons(action, self.scenario))


def match_report(game: Any, spec: PlayerSpec, decisions: int, start_wall: float, start_cpu: float) -> PlayerReport:
    """Build the report a player prints at the end of a match (slot 0 adds the server's view of every player)."""
    import vizdoom

    gv = vizdoom.GameVariable
    server: dict[str, Any] = {}
    if spec.slot == 0:
        ss = game.get_server_state()
        server = {"names": list(ss.players_names), "frags": [int(f) for f in ss.players_frags],
                  "in_game": [bool(x) for x in ss.players_in_game]}
    return PlayerReport(slot=spec.slot, name=spec.name, agent=spec.agent,
                        frags=int(game.get_game_variable(gv.FRAGCOUNT)),
                        deaths=int(game.get_game_variable(gv.DEATHCOUNT)), tics=int(game.get_episode_time()),
                        decisions=decisions, player_number=int(game.get_game_variable(gv.PLAYER_NUMBER)),
                        wall_s=time.perf_counter() - start_wall, cpu_s=time.process_time() - start_cpu,
                        server=server)


#: A player's exit status when its ViZDoom engine died during the match (:func:`engine_watchdog`).
ENGINE_DIED = shm_reaper.ENGINE_DIED


@contextlib.contextmanager
def engine_watchdog(engines: set[int], period_s: float = 0.2) -> Iterator[None]:
    """Exit this process with :data:`ENGINE_DIED` if one of the ViZDoom ``engines`` dies during the block.

    The :class:`~evaltk.envs.shm_reaper.EngineWatchdog` of this player: the match runner voids the match on
    this status. Leave the block before ``game.close()``, which ends the engine on purpose.
    """
    message = ("player: the ViZDoom engine (pid {pid}) died during the match; exiting with "
               f"status {ENGINE_DIED} so that the match is voided")
    with shm_reaper.EngineWatchdog(message, period_s=period_s) as watchdog:
        watchdog.watch(engines)
        yield


@contextlib.contextmanager
def match_game(game: Any, spec: PlayerSpec) -> Iterator[None]:
    """Start ``game`` for the match of ``spec`` and close it after the block (every player's game goes through here).

    The game is covered by this process's reaper (:mod:`evaltk.envs.shm_reaper`) from before ``init()`` until
    ``close()``, its engine is watched (:func:`engine_watchdog`) while the block runs, and the host (slot 0) puts the
    match's bots in before the block.
    """
    tracked = shm_reaper.init_game(game)  # removed by the reaper if this process is killed
    try:
        with engine_watchdog(tracked[1]):
            if spec.slot == 0:
                game.send_game_command("removebots")
                for bot in spec.bots:
                    game.send_game_command(f"addbot {bot}")
            yield
    finally:
        game.close()
        shm_reaper.untrack(*tracked)


def play(spec: PlayerSpec) -> PlayerReport:
    """Host or join the match described by ``spec``, play it to the end and report."""
    start_wall, start_cpu = time.perf_counter(), time.process_time()
    driver = _Driver(spec)
    game = driver.game
    parent = os.getppid()
    with match_game(game, spec):
        driver.policy.reset(1, np.random.default_rng(spec.policy_seed))
        first = np.ones(1, dtype=bool)
        decisions = 0
        while not game.is_episode_finished():
            if os.getppid() != parent:  # the match runner died: stop quietly (match_game closes the game)
                raise SystemExit(3)
            state = game.get_state()
            if state is None:
                break
            action = driver.policy.act(driver.observe(state)[None], first)[0]
            first[:] = False
            game.make_action(driver.buttons(np.asarray(action)), driver.frameskip)
            decisions += 1
            if game.is_player_dead():
                game.respawn_player()
        return match_report(game, spec, decisions, start_wall, start_cpu)


def serve(play_json: Callable[[dict[str, Any]], dict[str, Any]]) -> int:
    """Play one match per request line on stdin until EOF (a :class:`~evaltk.tournament.pool.PlayerPool` player).

    Each request is the slot's JSON spec plus ``env`` (set before the game starts: the engine inherits the
    match's tag); ``play_json`` plays it and its report goes as one JSON line to the pool's report pipe (fd
    ``EVALTK_REPORT_FD``), never to stdout, which the engines share. Any failure exits non-zero (the pool
    then voids the match and never reuses this process).
    """
    from evaltk.tournament.pool import REPORT_FD_ENV

    fd = int(os.environ.pop(REPORT_FD_ENV))
    os.set_inheritable(fd, False)  # engines started by this player must not hold the report pipe
    with os.fdopen(fd, "w") as reports:
        for line in sys.stdin:
            request = json.loads(line)
            os.environ.update(request.pop("env", {}))
            reports.write(json.dumps(play_json(request)) + "\n")
            reports.flush()
    return 0


def spec_from_json(raw: dict[str, Any]) -> PlayerSpec:
    """Build the :class:`PlayerSpec` of a request (JSON has lists where the spec has tuples)."""
    return PlayerSpec(**{**raw, "bots": tuple(raw.get("bots", ()))})


def run(play_json: Callable[[dict[str, Any]], dict[str, Any]], argv: list[str] | None = None) -> int:
    """Entry point of a player module: one match from stdin to one report line on stdout; ``--serve``: many."""
    if "--serve" in (sys.argv[1:] if argv is None else argv):
        return serve(play_json)
    sys.stdout.write(json.dumps(play_json(json.loads(sys.stdin.read()))) + "\n")
    sys.stdout.flush()
    return 0


def _play_json(raw: dict[str, Any]) -> dict[str, Any]:
    return asdict(play(spec_from_json(raw)))


def main(argv: list[str] | None = None) -> int:
    """Entry point: read a PlayerSpec from stdin, play, print the report as one JSON line (``--serve``: many)."""
    return run(_play_json, argv)


if __name__ == "__main__":
    sys.exit(main())
