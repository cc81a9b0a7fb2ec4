"""One headless multiplayer Doom match on 127.0.0.1.

Every programmatic player runs in its own process (``python -m evaltk.tournament.player``), started
in its own session so that the player and the ``vizdoom`` engine it spawns form one process group.
Slot 0 hosts on a free UDP port and adds the bots by name from ViZDoom's ``bots.cfg``; the others
join. A match that does not finish within ``timeout_s`` wall seconds, or whose player exits non-zero
(an engine crash surfaces as ViZDoom's ``ViZDoomUnexpectedExitException``), is *voided*: every
process group of the match is killed with SIGKILL, as is any process still carrying the match's
environment tag, and the scheduler plays it again.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evaltk.envs.shm_reaper import tagged_pids
from evaltk.errors import TournamentError
from evaltk.executor.ports import bindable
from evaltk.tournament.player import ENGINE_DIED, PlayerSpec

if TYPE_CHECKING:
    from evaltk.tournament.pool import PlayerPool, PooledPlayer

#: Maps that ship with ViZDoom (cig.wad) and work with bots. multi_duel.wad crashes the engine with bots.
SUPPORTED_MAPS: tuple[str, ...] = ("map01", "map02")
#: Environment variable carrying a match's tag into its player and engine processes.
TAG_ENV = "EVALTK_MATCH_TAG"
#: Seconds to wait for killed processes of a match to disappear.
KILL_WAIT_S = 10.0
_PORT_LOCK = threading.Lock()
_PORTS_IN_USE: set[int] = set()


def bot_names() -> tuple[str, ...]:
    """Names of the bots in the ``bots.cfg`` that ships next to the vizdoom binary."""
    import vizdoom

    path = Path(vizdoom.__file__).parent / "bots.cfg"
    names = []
    for line in path.read_text().splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[0] == "name":
            names.append(parts[1].strip('"'))
    return tuple(names)


@dataclass(frozen=True)
class MatchSpec:
    """One match: ``agents[i]`` plays in slot ``i`` (slot 0 hosts); ``bots`` are bot names.

    ``seed`` seeds the engines (``policy_seed`` = seed + slot seeds each agent's generator).
    ``timelimit_min`` in game minutes (35 tics/s), ``fraglimit`` 0 = none.
    """

    match_id: str
    agents: tuple[str, ...]
    bots: tuple[str, ...]
    map: str
    seed: int
    timelimit_min: float
    fraglimit: int = 0
    frameskip: int = 4
    record: bool = False
    pair: int | None = None

    def check(self) -> None:
        """Raise TournamentError on an impossible match."""
        if not self.agents:
            raise TournamentError(f"match {self.match_id}: no agents; give at least one agent")
        if self.map not in SUPPORTED_MAPS:
            raise TournamentError(f"map {self.map!r} is not supported: use one of {', '.join(SUPPORTED_MAPS)} "
                                  "(cig.wad; multi_duel crashes the engine with bots)")
        if not math.isfinite(self.timelimit_min) or self.timelimit_min < 0 or self.fraglimit < 0:
            raise TournamentError(f"--timelimit {self.timelimit_min} and --fraglimit {self.fraglimit} must be finite "
                                  "and >= 0 (0 = none)")
        if self.timelimit_min <= 0 and self.fraglimit <= 0:
            raise TournamentError("a match needs a time limit or a frag limit: pass --timelimit or --fraglimit > 0")
        if not 1 <= self.frameskip <= 35:
            raise TournamentError(f"frameskip {self.frameskip} out of range: use 1..35")
        if len(self.agents) + len(self.bots) > 16:
            raise TournamentError(f"{len(self.agents) + len(self.bots)} players: a Doom match holds at most 16")
        known = set(bot_names())
        for bot in self.bots:
            if bot not in known:
                raise TournamentError(f"unknown bot {bot!r}: use one of {', '.join(sorted(known))}")


@dataclass
class MatchResult:
    """One finished (or voided) match, as written to the results file (one JSON line)."""

    match_id: str
    attempt: int
    outcome: str  # "played" or "void"
    spec: dict[str, Any]
    participants: list[dict[str, Any]] = field(default_factory=list)  # name, kind, agent, frags, deaths
    duration_tics: int = 0
    wall_s: float = 0.0
    demo: str | None = None
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        """Return the JSON-able dict of this result."""
        return asdict(self)


def reserve_port(span: int = 2, key: str | None = None) -> int:
    """Reserve a base UDP port with ``span`` consecutive free ports, unique within this process.

    With ``key`` (a match id) the ports are leased node-wide (:mod:`evaltk.executor.ports`): no other
    process on this machine, e.g. another Ray worker playing a match, gets them until they are released.
    """
    if key is not None:
        from evaltk.executor.ports import lease_ports

        base = lease_ports(key, span)
        if base is None:
            raise TournamentError("no free UDP port block left in evaltk's port range on 127.0.0.1; "
                                  "let running matches finish or lower the concurrency")
        return base
    with _PORT_LOCK:
        for _ in range(200):
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
                sock.bind(("127.0.0.1", 0))
                base = int(sock.getsockname()[1])
            ports = range(base, base + span)
            if base + span < 65535 and not _PORTS_IN_USE.intersection(ports) and all(map(bindable, ports)):
                _PORTS_IN_USE.update(ports)
                return base
    raise TournamentError("no free UDP port pair found on 127.0.0.1; close other network programs and retry")


def release_port(base: int, span: int = 2) -> None:
    """Release a port reserved with :func:`reserve_port`."""
    from evaltk.executor.ports import release_ports

    release_ports(base)
    with _PORT_LOCK:
        _PORTS_IN_USE.difference_update(range(base, base + span))


def kill_match_processes(procs: Sequence[subprocess.Popen[bytes]], tag: str) -> None:
    """SIGKILL each player's process group, then any process left with the match's tag; reap the players."""
    for proc in procs:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
    for proc in procs:
        proc.wait()
    # SIGKILL is asynchronous: wait until no process of the match is left (a killed engine whose
    # memory is still being torn down still shows its environment in /proc).
    deadline = time.monotonic() + KILL_WAIT_S
    while (left := tagged_pids(TAG_ENV, tag)) and time.monotonic() < deadline:
        for pid in left:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.05)


def player_specs(spec: MatchSpec, port: int, demo: str | None) -> list[PlayerSpec]:
    """Return the :class:`PlayerSpec` of every programmatic player of ``spec``."""
    return [PlayerSpec(slot=i, num_players=len(spec.agents), port=port, map=spec.map, agent=agent,
                       name=f"A{i}", seed=spec.seed, policy_seed=spec.seed * 16 + i,
                       timelimit_min=spec.timelimit_min, fraglimit=spec.fraglimit, frameskip=spec.frameskip,
                       bots=spec.bots if i == 0 else (), record=demo if i == 0 else None)
            for i, agent in enumerate(spec.agents)]


def run_match(spec: MatchSpec, *, workdir: Path, timeout_s: float, attempt: int = 1,
              abort: threading.Event | None = None, player_module: str = "evaltk.tournament.player",
              player_extras: Sequence[dict[str, Any]] = (), pool: PlayerPool | None = None) -> MatchResult:
    """Play ``spec`` to the end and return its result; a crash or timeout returns ``outcome="void"``.

    Setting ``abort`` (e.g. on Ctrl-C in the scheduler) kills the match at once and voids it.
    ``player_module`` is run as each player (``python -m``); ``player_extras[slot]``, if given, is merged into
    that slot's JSON :class:`PlayerSpec` (self-play training uses both to record experience).
    Player logs go to ``workdir/logs/<match_id>.<attempt>.<slot>.{out,err}``; a demo (``spec.record``)
    to ``workdir/demos/<match_id>.lmp``. With ``pool`` (:class:`~evaltk.tournament.pool.PlayerPool` of the same
    module) the players are the pool's long-lived processes (their logs are the pool's); a voided match kills
    them as it kills fresh ones. Never leaves a process of the match running, other than the pool's idle players.
    """
    spec.check()
    logs = workdir / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    demo = None
    if spec.record:
        (workdir / "demos").mkdir(parents=True, exist_ok=True)
        demo = str((workdir / "demos" / f"{spec.match_id}.lmp").resolve())
        if len(demo) > 100 or any(c.isspace() for c in demo):
            raise TournamentError(f"demo path {demo!r} is over 100 characters or has spaces (ViZDoom cannot record "
                                  "there): use a shorter --out without spaces")
    tag = uuid.uuid4().hex
    port = reserve_port(key=spec.match_id)
    result = MatchResult(match_id=spec.match_id, attempt=attempt, outcome="void", spec=asdict(spec))
    procs: list[subprocess.Popen[bytes]] = []
    players: list[PooledPlayer] = []
    start = time.perf_counter()
    try:
        specs = player_specs(spec, port, demo)
        extras = [player_extras[p.slot] if player_extras else {} for p in specs]
        if pool is None:
            error, reports = _play_fresh(specs, extras, spec, attempt, logs, tag, player_module, procs,
                                         start + timeout_s, abort)
            where = f"{logs}/{spec.match_id}.{attempt}.*"
        else:
            players.extend(pool.acquire(len(specs)))
            for player, pspec, extra in zip(players, specs, extras, strict=True):
                player.send({**asdict(pspec), **extra, "env": {TAG_ENV: tag}})
            error, reports = _wait_reports(players, start + timeout_s, abort)
            where = ", ".join(str(p.log) for p in players)
        result.wall_s = time.perf_counter() - start
        if error is not None:
            result.error = f"{error}; logs: {where}"
            return result
        result.participants = _participants(spec, reports)
        result.duration_tics = max(int(r["tics"]) for r in reports)
        result.demo = demo
        result.outcome = "played"
        return result
    except (OSError, ValueError, IndexError, KeyError) as exc:
        result.error = f"{type(exc).__name__}: {exc}"
        return result
    finally:
        if pool is not None and players:
            if result.outcome == "played":
                pool.release(players)
            else:
                pool.discard(players)
        kill_match_processes(procs, tag)
        release_port(port)


def _play_fresh(specs: Sequence[PlayerSpec], extras: Sequence[dict[str, Any]], spec: MatchSpec, attempt: int,
                logs: Path, tag: str, player_module: str, procs: list[subprocess.Popen[bytes]], deadline: float,
                abort: threading.Event | None) -> tuple[str | None, list[dict[str, Any]]]:
    """Start one player process per slot (appended to ``procs``), wait for all; return (error, reports)."""
    env = dict(os.environ, **{TAG_ENV: tag})
    env.setdefault("OMP_NUM_THREADS", "1")  # one inference thread per player: matches run side by side
    outs: list[Path] = []
    for pspec, extra in zip(specs, extras, strict=True):
        stem = f"{spec.match_id}.{attempt}.{pspec.slot}"
        outs.append(logs / f"{stem}.out")
        with open(logs / f"{stem}.out", "wb") as out, open(logs / f"{stem}.err", "wb") as err:
            proc = subprocess.Popen([sys.executable, "-m", player_module], stdin=subprocess.PIPE,
                                    stdout=out, stderr=err, env=env, start_new_session=True)
        procs.append(proc)
        assert proc.stdin is not None
        proc.stdin.write(json.dumps({**asdict(pspec), **extra}).encode())
        proc.stdin.close()
    error = _wait(procs, deadline, abort)
    if error is not None:
        return error, []
    return None, [json.loads(path.read_text().strip().splitlines()[-1]) for path in outs]


def _wait_reports(players: Sequence[PooledPlayer], deadline: float, abort: threading.Event | None
                  ) -> tuple[str | None, list[dict[str, Any]]]:
    """Wait for every pooled player's report; return (None, reports) or (the reason to void the match, [])."""
    reports: dict[int, dict[str, Any]] = {}
    while True:
        if abort is not None and abort.is_set():
            return "aborted (the tournament was interrupted)", []
        for slot, player in enumerate(players):
            if slot not in reports and (report := player.poll_report()) is not None:
                reports[slot] = report
        if len(reports) == len(players):
            return None, [reports[slot] for slot in range(len(players))]
        for slot, player in enumerate(players):
            if slot not in reports and (code := player.proc.poll()) is not None:
                return _exit_reason(slot, code), []
        if time.perf_counter() > deadline:
            return "match timed out (hung engine?); its processes were killed", []
        time.sleep(0.05)


def _exit_reason(slot: int, code: int) -> str:
    """Why a match is voided when the player of ``slot`` exited with ``code``."""
    why = "its ViZDoom engine died" if code == ENGINE_DIED else "engine crash or agent error"
    return f"player slot {slot} exited with status {code} ({why})"


def _wait(procs: Sequence[subprocess.Popen[bytes]], deadline: float, abort: threading.Event | None) -> str | None:
    """Wait for every player; return None on success or the reason to void the match."""
    while True:
        if abort is not None and abort.is_set():
            return "aborted (the tournament was interrupted)"
        codes = [p.poll() for p in procs]
        failed = [(i, c) for i, c in enumerate(codes) if c not in (None, 0)]
        if failed:
            slot, code = failed[0]
            return _exit_reason(slot, code)
        if all(c == 0 for c in codes):
            return None
        if time.perf_counter() > deadline:
            return "match timed out (hung engine?); its processes were killed"
        time.sleep(0.05)


def _participants(spec: MatchSpec, reports: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Frags of agents (their own FRAGCOUNT) and bots (the host's server state), with engine slots.

    An agent's slot is its PLAYER_NUMBER (a joiner that already left is no longer listed by the server).
    """
    server = next(r for r in reports if int(r["slot"]) == 0)["server"]
    slot_by_name = {n: k for k, n in enumerate(server["names"]) if n}
    frags_by_name = {n: int(server["frags"][k]) for n, k in slot_by_name.items()}
    out: list[dict[str, Any]] = []
    for rep in sorted(reports, key=lambda r: int(r["slot"])):
        out.append({"name": rep["name"], "kind": "agent", "agent": rep["agent"], "slot": int(rep["player_number"]),
                    "frags": int(rep["frags"]), "deaths": int(rep["deaths"]), "tics": int(rep["tics"]),
                    "decisions": int(rep["decisions"]), "cpu_s": round(float(rep["cpu_s"]), 3)})
    for bot in spec.bots:
        if bot not in slot_by_name:
            raise KeyError(f"bot {bot} is not in the host's player list (addbot failed)")
        out.append({"name": bot, "kind": "bot", "agent": f"bot:{bot}", "slot": slot_by_name[bot],
                    "frags": frags_by_name[bot], "deaths": None})
    return out
