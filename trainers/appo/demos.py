"""Demonstrations for behaviour cloning: the built-in scripted agent playing matches against ViZDoom bots.

``evaltk train doom --record-demos DIR`` (:func:`record`) hosts one match per episode exactly as a tournament
gauntlet does (``evaltk.tournament.player``: cig.wad, the tournament's deathmatch server options, the match's
bots by name, ``+timelimit``), with the game built from the APPO scenario (``--scenario``, default ``duel``:
what an APPO checkpoint of that scenario sees and presses) plus the labels and depth buffers the scripted
agent reads. Every step stores what APPO trains on:

* ``obs uint8[T, 3, H, W]``: the APPO observation (:func:`evaltk.envs.doom.observation`);
* ``measurements float32[T, M]``: the scenario's measurement variables before the step;
* ``actions int16[T, K]``: the action in the scenario's action heads (:func:`scripted_to_heads`);
* ``rewards float32[T]``: the game reward plus the scenario's shaping (:class:`evaltk.envs.doom.RewardShaper`);
* ``frags int16[T]``, ``deaths int16[T]``: FRAGCOUNT and DEATHCOUNT after the step;
* ``first bool[T]``: the episode starts at this step (the GRU state is zeroed there).

The demonstrator is :class:`evaltk.tournament.agents.ScriptedDoomAgent` with its turn options set to the
scenario's turn head (degrees per tic times frameskip), so every action it takes is exactly one choice per
head: forward/backward = its move, strafe = its strafe (left/right swapped into the heads' order), attack =
its attack, next weapon and speed = 0, turn = the same bin index.

Files under ``DIR``: ``ep<e:05d>_c<c:04d>.npz`` (chunks of ``chunk_steps`` steps, written atomically as
they fill) and ``ep<e:05d>.json`` when episode ``e`` ends (frags, deaths, steps, bots, seed). A recording
that is interrupted keeps its chunks; run again it continues with the next episode index.
"""

from __future__ import annotations

import io
import json
import re
import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

from evaltk import seeding
from evaltk.atomic import write_bytes_atomic, write_json_atomic
from evaltk.envs import doom, doom_labels
from evaltk.errors import SpecError
from evaltk.tournament import agents, player
from trainers.appo.config import DemoSettings as DemoSettings  # declared with its flags; used as demos.DemoSettings

CHUNK_RE = re.compile(r"^ep(\d{5})_c(\d{4})\.npz$")
EPISODE_RE = re.compile(r"^ep(\d{5})\.json$")
#: Head names the scripted agent's actions map onto (the deathmatch heads of :mod:`evaltk.envs.doom_scenarios`).
HEADS = ("forward_backward", "strafe", "next_weapon", "attack", "speed", "turn")
#: Bot names drawn for the matches (the first names of ViZDoom's bots.cfg, as the tournament draws them).
BOT_NAMES = ("Rambo", "McClane", "Blazkowicz", "Bond", "Jones", "Predator", "T800", "Dredd")


def turn_bins(scenario: doom.DoomScenario) -> tuple[float, ...]:
    """Return the scenario's turn head in degrees per decision (its ``TURN_LEFT_RIGHT_DELTA`` is degrees per tic)."""
    head = _heads(scenario)["turn"]
    return tuple(float(opt[0][1]) * scenario.frameskip for opt in head.options)


def _heads(scenario: doom.DoomScenario) -> dict[str, doom.ActionHead]:
    heads = {h.name: h for h in scenario.action_heads}
    if tuple(heads) != HEADS:
        raise SpecError(f"scenario {scenario.name!r} has heads {tuple(heads)}; demonstrations need the deathmatch "
                        f"heads {HEADS} (use --scenario duel)")
    return heads


def scripted_to_heads(action: np.ndarray) -> np.ndarray:
    """Map the scripted agent's ``[move, strafe, attack, turn]`` to the deathmatch heads (``int64[6]``).

    move 0/1/2 (none/forward/back) is the forward_backward head as is; strafe 1 (left) is the strafe head's 2
    and strafe 2 (right) its 1; next weapon and speed are 0; attack and the turn bin index are kept.
    """
    move, strafe, attack, turn = (int(a) for a in action)
    return np.array([move, (0, 2, 1)[strafe], 0, attack, 0, turn], dtype=np.int64)


def demonstrator(scenario: doom.DoomScenario) -> agents.ScriptedDoomAgent:
    """Return the scripted agent turning in exactly the scenario's turn bins."""
    return agents.ScriptedDoomAgent(turn_bins=turn_bins(scenario))


class _Chunks:
    """Buffers one episode's steps and writes a chunk file each ``size`` steps (and at the end)."""

    def __init__(self, folder: Path, episode: int, size: int) -> None:
        self.folder, self.episode, self.size = folder, episode, size
        self.index = 0
        self.rows: dict[str, list[Any]] = {k: [] for k in ("obs", "measurements", "actions", "rewards", "frags",
                                                            "deaths", "first")}

    def add(self, **row: Any) -> None:
        for key, value in row.items():
            self.rows[key].append(value)
        if len(self.rows["obs"]) >= self.size:
            self.flush()

    def flush(self) -> None:
        if not self.rows["obs"]:
            return
        dtypes = {"obs": np.uint8, "measurements": np.float32, "actions": np.int16, "rewards": np.float32,
                  "frags": np.int16, "deaths": np.int16, "first": bool}
        arrays = {k: np.asarray(v, dtype=dtypes[k]) for k, v in self.rows.items()}
        buf = io.BytesIO()
        np.savez_compressed(buf, **arrays)  # type: ignore[arg-type]
        write_bytes_atomic(self.folder / f"ep{self.episode:05d}_c{self.index:04d}.npz", buf.getvalue())
        self.index += 1
        for v in self.rows.values():
            v.clear()


def next_episode(folder: Path) -> int:
    """Return the first episode index with no chunk and no summary in ``folder`` (0 for an empty folder)."""
    indices = [int(m.group(1)) for p in folder.iterdir() for m in [CHUNK_RE.match(p.name) or EPISODE_RE.match(p.name)]
               if m]
    return max(indices) + 1 if indices else 0


def _game(scenario: doom.DoomScenario, spec: player.PlayerSpec) -> Any:
    match_scenario = scenario.replace(bots=0, timelimit=None, episode_timeout=None)
    game = doom.make_game(match_scenario, seed=spec.seed)
    game.set_labels_buffer_enabled(True)
    game.set_depth_buffer_enabled(True)
    game.set_doom_map(spec.map)
    game.set_episode_timeout(spec.episode_tics)
    game.add_game_args(player._game_args(spec))
    return game


def _bot_frags(server: dict[str, Any], bots: tuple[str, ...]) -> list[int]:
    frags = dict(zip(server.get("names", []), server.get("frags", []), strict=False))
    return [int(frags.get(b, 0)) for b in bots]


def play_episode(settings: DemoSettings, scenario: doom.DoomScenario, episode: int, folder: Path) -> dict[str, Any]:
    """Play and record episode ``episode``; returns its summary (also written to ``ep<e>.json``)."""
    import vizdoom as vzd

    rng = seeding.rng(settings.seed, "demos.episode", episode)
    bots = tuple(str(b) for b in rng.choice(BOT_NAMES, size=settings.bots, replace=False))
    spec = player.PlayerSpec(slot=0, num_players=1, port=doom.free_udp_port(), map=settings.map, agent="scripted",
                             name="A0", seed=int(rng.integers(2**31)), policy_seed=int(rng.integers(2**31)),
                             timelimit_min=settings.timelimit_min, fraglimit=0, frameskip=scenario.frameskip, bots=bots)
    game = _game(scenario, spec)
    agent = demonstrator(scenario)
    shaper = doom.RewardShaper(scenario)
    chunks = _Chunks(folder, episode, settings.chunk_steps)
    gv = vzd.GameVariable
    steps = 0
    with player.match_game(game, spec):
        agent.reset(1, np.random.default_rng(spec.policy_seed))
        shaper.reset(game)
        while not game.is_episode_finished():
            state = game.get_state()
            if state is None:
                break
            labels = doom_labels.visible_labels(state.labels)
            feats = agents.state_features(labels, state.depth_buffer, player.RENDER_WIDTH, player.RENDER_HEIGHT,
                                          game.get_game_variable(gv.HEALTH),
                                          game.get_game_variable(gv.SELECTED_WEAPON_AMMO))
            heads = scripted_to_heads(agent.act(feats[None], np.array([steps == 0]))[0])
            obs = doom.observation(state, scenario)
            meas = doom.measurements(game, scenario)
            reward = game.make_action(doom.action_to_buttons(heads, scenario), scenario.frameskip)
            reward = reward * scenario.reward_scale + shaper.step(game)
            chunks.add(obs=obs, measurements=meas, actions=heads, rewards=reward,
                       frags=game.get_game_variable(gv.FRAGCOUNT), deaths=game.get_game_variable(gv.DEATHCOUNT),
                       first=steps == 0)
            steps += 1
            if game.is_player_dead():
                game.respawn_player()
        chunks.flush()
        report = player.match_report(game, spec, steps, time.perf_counter(), time.process_time())
    summary = {"episode": episode, "frags": report.frags, "deaths": report.deaths, "steps": steps,
               "tics": report.tics, "bots": list(bots), "bot_frags": _bot_frags(report.server, bots),
               "seed": spec.seed, "map": settings.map, "scenario": scenario.name}
    write_json_atomic(folder / f"ep{episode:05d}.json", summary)
    return summary


def record(settings: DemoSettings, log: Callable[[str], None] = print) -> list[dict[str, Any]]:
    """Record episodes into ``settings.out`` until ``episodes`` exist there or ``max_seconds`` have passed."""
    scenario = doom.get_scenario(settings.scenario)
    _heads(scenario)
    folder = Path(settings.out)
    folder.mkdir(parents=True, exist_ok=True)
    meta = folder / "demos.json"
    if meta.exists():
        old = json.loads(meta.read_text())
        if old.get("scenario") != settings.scenario or old.get("map") != settings.map:
            raise SpecError(f"{folder} holds demonstrations of scenario {old.get('scenario')!r} on "
                            f"{old.get('map')!r}; record into another folder")
    else:
        write_json_atomic(meta, {**asdict(settings), "env": doom.env_spec(scenario).to_json()})
    start = time.monotonic()
    done: list[dict[str, Any]] = []
    episode = next_episode(folder)
    while episode < settings.episodes:
        if settings.max_seconds and time.monotonic() - start > settings.max_seconds:
            break
        summary = play_episode(settings, scenario, episode, folder)
        done.append(summary)
        log(f"[{time.monotonic() - start:7.1f}s] episode {episode}: frags {summary['frags']} deaths "
            f"{summary['deaths']} bots {summary['bots']}={summary['bot_frags']} steps {summary['steps']}")
        episode += 1
    return done


def episode_chunks(folder: Path) -> list[list[Path]]:
    """Return the chunk files of ``folder`` grouped by episode (each list in order)."""
    groups: dict[int, list[tuple[int, Path]]] = {}
    for p in folder.iterdir():
        m = CHUNK_RE.match(p.name)
        if m:
            groups.setdefault(int(m.group(1)), []).append((int(m.group(2)), p))
    if not groups:
        raise SpecError(f"{folder} holds no demonstration chunks (ep*_c*.npz); record some with "
                        "evaltk train doom --record-demos DIR")
    return [[p for _, p in sorted(g)] for _, g in sorted(groups.items())]


def load_chunk(path: Path) -> dict[str, np.ndarray]:
    """Read one chunk file (no pickles: ``allow_pickle=False``)."""
    with np.load(path, allow_pickle=False) as data:
        return {k: data[k] for k in data.files}
