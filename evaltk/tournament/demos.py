"""Demo (.lmp) replay checks for recorded matches.

Multiplayer demos are recorded by the host with ``-record <path>`` (``--record``); the engine writes
the file when the host's game closes. ``new_episode(path)`` does not record multiplayer games.

What a replay reproduces (measured, docs/tournament.md §Demos): a demo of agents only replays to
the recorded final frags; a demo of a game with bots desynchronises (ViZDoom warns about this; bot
thinking is not in the demo). :func:`verify_demo` replays one demo and compares per-slot frags.

Replays run in a child process (``python -m evaltk.tournament.demos``) with a timeout: the engine
segfaults on some inputs (for instance cig.wad without ``-deathmatch``), which must not take the
caller down.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evaltk.errors import TournamentError

MAX_SLOTS = 16


@dataclass(frozen=True)
class DemoCheck:
    """Recorded vs replayed frags (slot order) of one demo; ``reproduced`` when they agree."""

    demo: str
    has_bots: bool
    recorded: list[int]
    replayed: list[int]
    replay_tics: int

    @property
    def reproduced(self) -> bool:
        """True when every recorded slot's frags equal the replay's."""
        return self.replayed[: len(self.recorded)] == self.recorded


def _replay(path: str, map_name: str, player: int) -> dict[str, Any]:
    """Replay ``path`` from ``player``'s view to the end; return every slot's frags and the final tic."""
    import vizdoom as vzd

    from evaltk.envs import shm_reaper

    game = vzd.DoomGame()
    game.load_config(os.path.join(vzd.scenarios_path, "cig.cfg"))
    game.set_doom_map(map_name)
    game.set_mode(vzd.Mode.PLAYER)
    game.set_window_visible(False)
    game.set_screen_resolution(vzd.ScreenResolution.RES_160X120)
    game.add_game_args("-deathmatch")
    shm_reaper.init_game(game)  # a recorded owner of the game's shared memory
    try:
        game.replay_episode(path, player)
        while not game.is_episode_finished():
            game.advance_action()
        frags = [int(game.get_game_variable(getattr(vzd.GameVariable, f"PLAYER{k}_FRAGCOUNT")))
                 for k in range(1, MAX_SLOTS + 1)]
        return {"frags": frags, "tics": int(game.get_episode_time())}
    finally:
        game.close()


def replay_frags(path: str | Path, map_name: str, *, player: int = 1, timeout_s: float = 120.0) -> dict[str, Any]:
    """Replay a demo in a child process; return ``{"frags": int[16] by slot, "tics": int}``."""
    if not Path(path).is_file():
        raise TournamentError(f"demo {path} does not exist: record matches with --record")
    request = json.dumps({"path": str(path), "map": map_name, "player": player})
    try:
        proc = subprocess.run([sys.executable, "-m", "evaltk.tournament.demos"], input=request.encode(),
                              capture_output=True, timeout=timeout_s, start_new_session=True, check=False)
    except subprocess.TimeoutExpired as exc:
        raise TournamentError(f"replay of {path} did not finish within {timeout_s} s") from exc
    if proc.returncode != 0:
        raise TournamentError(f"replay of {path} failed with status {proc.returncode}: "
                              f"{proc.stderr.decode(errors='replace').strip()[-300:]}")
    result: dict[str, Any] = json.loads(proc.stdout.decode().strip().splitlines()[-1])
    return result


def verify_demo(row: dict[str, Any], *, timeout_s: float = 120.0) -> DemoCheck:
    """Replay the demo of a played results row and compare its per-slot frags with the recorded ones."""
    if not row.get("demo"):
        raise TournamentError(f"match {row.get('match_id')} has no demo: record matches with --record")
    parts = [p for p in row["participants"] if p.get("slot") is not None]
    recorded = [0] * (max(p["slot"] for p in parts) + 1)
    for p in parts:
        recorded[p["slot"]] = int(p["frags"])
    replay = replay_frags(row["demo"], row["spec"]["map"], timeout_s=timeout_s)
    return DemoCheck(demo=row["demo"], has_bots=bool(row["spec"]["bots"]), recorded=recorded,
                     replayed=replay["frags"][: len(recorded)], replay_tics=replay["tics"])


def main() -> int:
    """Child-process entry: read ``{"path", "map", "player"}`` on stdin, print the replay as JSON."""
    req = json.loads(sys.stdin.read())
    sys.stdout.write(json.dumps(_replay(req["path"], req["map"], int(req["player"]))) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
