"""Generate ``gpu_env/data/games.json``: per-ROM game metadata in data form.

Inputs: the per-ROM table measured from ale-py 0.12.1 (``atari_roms.csv`` of the project's reference
notes, passed with ``--csv``) and the facts below, read from ALE v0.12.1
``src/ale/games/supported/*.cpp`` (the layout of each ``RomSettings::saveState``, the state words of
gpu_env's ``core/games/*.h``, ``modifyEnvironmentSettings`` and every ``setMode`` override, rewritten
as data). The package reads only the generated JSON at run time.

Run: ``python -m gpu_env.tools.build_games_data --csv PATH/atari_roms.csv`` (``--check`` compares
instead of writing).
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from gpu_env.games import ACTION_MEANINGS

OUTPUT = Path(__file__).resolve().parent.parent / "data" / "games.json"

RESET_ACTION = 40  # ALE Constants.h: RESET (only starting actions use it)
NOOP, RIGHT, LEFT, DOWN, UPFIRE = 0, 3, 4, 5, 10

# GameState words (core/games/game_state.h): reward, score, lives, terminal, extra[0..7].
BASE_WORDS = {"reward": 0, "score": 1, "lives": 2, "terminal": 3}
# Named extra words per game, as each core/games/<rom>.h declares them.
EXTRA_WORDS: dict[str, dict[str, int]] = {
    "breakout": {"started": 4},
    "chopper_command": {"is_started": 4},
    "darkchambers": {"level": 4, "health": 5},
    "demon_attack": {"level_change": 4},
    "hangman": {"computer_score": 4, "player_score": 5, "timer_now": 6, "timer_before": 7},
    "haunted_house": {"matches": 4},
    "human_cannonball": {"misses": 4},
    "miniature_golf": {"level": 4, "par": 5, "hits": 6, "left_status": 7, "hits_at_start": 8},
    "othello": {"no_input": 4},
    "qbert": {"last_lives": 4},
    "riverraid": {"lives_byte": 4},
    "star_gunner": {"game_started": 4},
    "superman": {"time_in_seconds": 4},
    "tennis": {"prev_delta_points": 4, "prev_delta_score": 5},
    "tetris": {"started": 4},
    "video_checkers": {"reverse_checkers": 4},
    "video_cube": {"cube_number": 4, "face_count": 5, "timer_now": 6, "timer_before": 7},
}

# RomSettings::saveState of each game: word name and type (i = int, b = bool), in order.
# (Miniature Golf writes its five counters with putBool in ALE 0.12.1, so they come back as 0/1.)
ALE_STATE_FIELDS: dict[str, str] = {
    "adventure": "reward:i terminal:b",
    "air_raid": "reward:i score:i terminal:b",
    "alien": "reward:i score:i terminal:b lives:i",
    "amidar": "reward:i score:i terminal:b lives:i",
    "assault": "reward:i score:i terminal:b lives:i",
    "asterix": "reward:i score:i terminal:b lives:i",
    "asteroids": "reward:i score:i terminal:b lives:i",
    "atlantis": "reward:i score:i terminal:b lives:i",
    "atlantis2": "reward:i score:i terminal:b",
    "backgammon": "reward:i terminal:b",
    "bank_heist": "reward:i score:i terminal:b lives:i",
    "basic_math": "reward:i score:i terminal:b",
    "battle_zone": "reward:i score:i terminal:b lives:i",
    "beam_rider": "reward:i score:i terminal:b lives:i",
    "berzerk": "reward:i score:i terminal:b lives:i",
    "blackjack": "reward:i score:i terminal:b",
    "bowling": "reward:i score:i terminal:b",
    "boxing": "reward:i score:i terminal:b",
    "breakout": "reward:i score:i terminal:b started:b lives:i",
    "carnival": "reward:i score:i terminal:b",
    "casino": "reward:i score:i terminal:b",
    "centipede": "reward:i score:i terminal:b lives:i",
    "chopper_command": "reward:i score:i terminal:b lives:i",
    "crazy_climber": "reward:i score:i terminal:b lives:i",
    "crossbow": "reward:i score:i terminal:b",
    "darkchambers": "reward:i terminal:b health:i level:i score:i",
    "defender": "reward:i score:i terminal:b lives:i",
    "demon_attack": "reward:i score:i terminal:b lives:i",
    "donkey_kong": "reward:i score:i terminal:b lives:i",
    "double_dunk": "reward:i score:i terminal:b",
    "earthworld": "reward:i score:i terminal:b",
    "elevator_action": "reward:i score:i terminal:b lives:i",
    "enduro": "reward:i score:i terminal:b",
    "entombed": "reward:i score:i terminal:b",
    "et": "reward:i score:i lives:i terminal:b",
    "fishing_derby": "reward:i score:i terminal:b",
    "flag_capture": "reward:i score:i terminal:b",
    "freeway": "reward:i score:i terminal:b",
    "frogger": "reward:i score:i terminal:b lives:i",
    "frostbite": "reward:i score:i terminal:b lives:i",
    "galaxian": "reward:i score:i terminal:b lives:i",
    "gopher": "reward:i score:i terminal:b lives:i",
    "gravitar": "reward:i score:i terminal:b lives:i",
    "hangman": "reward:i computer_score:i player_score:i terminal:b",
    "haunted_house": "reward:i matches:i lives:i terminal:b",
    "hero": "reward:i score:i terminal:b lives:i",
    "human_cannonball": "reward:i score:i misses:i terminal:b",
    "ice_hockey": "reward:i score:i terminal:b",
    "jamesbond": "reward:i score:i terminal:b lives:i",
    "journey_escape": "reward:i score:i terminal:b",
    "kaboom": "reward:i score:i terminal:b",
    "kangaroo": "reward:i score:i terminal:b lives:i",
    "keystone_kapers": "reward:i score:i terminal:b lives:i",
    "king_kong": "reward:i score:i terminal:b lives:i",
    "klax": "reward:i score:i terminal:b",
    "koolaid": "reward:i score:i terminal:b",
    "krull": "reward:i score:i terminal:b lives:i",
    "kung_fu_master": "reward:i score:i terminal:b lives:i",
    "laser_gates": "reward:i score:i terminal:b",
    "lost_luggage": "reward:i score:i terminal:b lives:i",
    "mario_bros": "reward:i score:i lives:i terminal:b",
    "miniature_golf": "reward:i terminal:b level:b par:b hits:b left_status:b hits_at_start:b",
    "montezuma_revenge": "reward:i score:i terminal:b lives:i",
    "mr_do": "reward:i score:i terminal:b lives:i",
    "ms_pacman": "reward:i score:i terminal:b lives:i",
    "name_this_game": "reward:i score:i terminal:b lives:i",
    "othello": "reward:i score:i terminal:b no_input:i",
    "pacman": "reward:i score:i terminal:b lives:i",
    "phoenix": "reward:i score:i terminal:b lives:i",
    "pitfall": "reward:i score:i terminal:b lives:i",
    "pitfall2": "reward:i score:i terminal:b lives:i",
    "pong": "reward:i score:i terminal:b",
    "pooyan": "reward:i score:i terminal:b lives:i",
    "private_eye": "reward:i score:i terminal:b",
    "qbert": "reward:i score:i terminal:b last_lives:i lives:i",
    "riverraid": "reward:i score:i terminal:b lives_byte:i",
    "road_runner": "reward:i score:i terminal:b lives:i",
    "robotank": "reward:i score:i terminal:b lives:i",
    "seaquest": "reward:i score:i terminal:b lives:i",
    "sir_lancelot": "reward:i score:i terminal:b lives:i",
    "skiing": "reward:i score:i terminal:b",
    "solaris": "reward:i score:i terminal:b lives:i",
    "space_invaders": "reward:i score:i terminal:b lives:i",
    "space_war": "reward:i score:i terminal:b",
    "star_gunner": "reward:i score:i terminal:b lives:i game_started:b",
    "superman": "reward:i time_in_seconds:i terminal:b",
    "surround": "reward:i score:i terminal:b",
    "tennis": "reward:i terminal:b prev_delta_points:i prev_delta_score:i",
    "tetris": "reward:i score:i terminal:b started:b lives:i",
    "tic_tac_toe_3d": "reward:i terminal:b",
    "time_pilot": "reward:i score:i terminal:b lives:i",
    "trondead": "reward:i score:i terminal:b lives:i",
    "turmoil": "reward:i score:i terminal:b lives:i",
    "tutankham": "reward:i score:i terminal:b lives:i",
    "up_n_down": "reward:i score:i terminal:b lives:i",
    "venture": "reward:i score:i terminal:b lives:i",
    "video_checkers": "reward:i terminal:b",
    "video_chess": "reward:i terminal:b lives:i",
    "video_cube": "cube_number:i face_count:i reward:i terminal:b",
    "video_pinball": "reward:i score:i terminal:b lives:i",
    "wizard_of_wor": "reward:i score:i terminal:b lives:i",
    "word_zapper": "reward:i score:i terminal:b",
    "yars_revenge": "reward:i score:i terminal:b lives:i",
    "zaxxon": "reward:i score:i terminal:b lives:i",
}

# modifyEnvironmentSettings: paddle_max overrides (default 790196).
PADDLE_MAX = {"backgammon": 1000000, "blackjack": 795000}

Cond = dict[str, Any]
Op = dict[str, Any]


def term(addr: int, value: int, mask: int = 0xFF, decimal: bool = False) -> dict[str, Any]:
    """One test: ``(peek(addr) & mask) == value`` (or ALE's decimal value of the byte == value)."""
    return {"addr": addr, "mask": mask, "value": value & 0xFF if not decimal else value, "decimal": decimal}


def cond(*alternatives: list[dict[str, Any]]) -> Cond:
    """Return a condition that holds when every test of at least one alternative holds."""
    return {"any": list(alternatives)}


def eq(addr: int, value: int) -> Cond:
    """Return the condition ``peek(addr) == value``."""
    return cond([term(addr, value)])


def select(frames: int) -> Op:
    """Return ALE's ``pressSelect(frames)``."""
    return {"op": "select", "frames": frames}


def select_until(frames: int, until: Cond, max_presses: int | None = None) -> Op:
    """Return "while not ``until``: pressSelect(frames)" (ALE fails after ``max_presses`` if set)."""
    return {"op": "select_until", "frames": frames, "until": until, "max_presses": max_presses}


def act(action: int) -> Op:
    """Return one ALE ``act(action)``."""
    return {"op": "act", "action": action}


SOFT_RESET: Op = {"op": "soft_reset"}
HOOK_BEGIN: Op = {"op": "hook_begin"}
HOOK_END: Op = {"op": "hook_end"}


def simple(addr: int, frames: int, target: Callable[[int], int] = lambda m: m) -> Callable[[int], list[Op]]:
    """Return the common override: press SELECT (``frames`` frames each) until RAM[addr] == target(mode)."""
    return lambda m: [select_until(frames, eq(addr, target(m))), SOFT_RESET]


def _double_dunk(m: int) -> list[Op]:
    def go_down() -> Op:
        return {"op": "act_until_changed", "addr": 0xB0, "actions": [DOWN, NOOP]}

    def option(bit: int, on: bool) -> Op:
        if on:
            return {"op": "act_until", "actions": [RIGHT, NOOP], "until": cond([term(0x80, bit, mask=bit)])}
        return {"op": "act_until", "actions": [LEFT, NOOP], "until": cond([term(0x80, 0, mask=bit)])}

    ops: list[Op] = [select(1), go_down(), go_down()]
    for flag, bit in ((1, 0x08), (2, 0x10), (4, 0x04), (8, 0x20)):
        ops.append(option(bit, bool(m & flag)))
        if flag != 8:
            ops.append(go_down())
    return [*ops, SOFT_RESET, act(UPFIRE), act(NOOP)]


def _video_cube(m: int) -> list[Op]:
    cube = m // 100 if m >= 100 else 1
    required = (1, 3, 9)[m % 100] - 1
    return [
        HOOK_BEGIN,
        select_until(2, cond([term(0xFB, required, mask=0x1F)])),
        SOFT_RESET,
        {"op": "act_until", "actions": [RIGHT], "until": cond([term(0x9F, cube, decimal=True)])},
    ]


# Every setMode override of ALE 0.12.1 as a program over the requested mode m (see docs/games.md
# for the op semantics). Games not listed use the base class: nothing happens.
SET_MODE: dict[str, Callable[[int], list[Op]]] = {
    "adventure": lambda m: [
        {
            "op": "select_random_until",
            "base": 2,
            "modulo": 256,
            "then_act": NOOP,
            "until": cond([term(0xDD, m << 1, mask=0x06)]),
        },
        SOFT_RESET,
    ],
    "air_raid": lambda m: [select(20), select_until(10, eq(0xAA, m)), SOFT_RESET],
    "alien": lambda m: [select_until(1, eq(0x81, m)), HOOK_END, SOFT_RESET],
    "asteroids": simple(0x80, 2),
    "atlantis": simple(0x8D, 2),
    "backgammon": lambda m: [select_until(1, eq(0xDC, 3)), SOFT_RESET],
    "bank_heist": simple(0x80, 1),
    "basic_math": simple(0xC5, 2),
    "battle_zone": simple(0xA1, 2),
    "berzerk": lambda m: [*[act(NOOP)] * 20, select_until(2, eq(0x80, m)), SOFT_RESET],
    "bowling": simple(0x82, 2),
    "breakout": simple(0xB2, 1),
    "casino": simple(0xD4, 2),
    "centipede": simple(0xA7, 2),
    "chopper_command": simple(0xE0, 2),
    "crazy_climber": simple(0x80, 2),
    "crossbow": simple(0x8D, 2, lambda m: m + 1),
    "defender": simple(0x9B, 2),
    "demon_attack": lambda m: [select_until(1, eq(0xEA, m)), HOOK_END, SOFT_RESET],
    "double_dunk": _double_dunk,
    "et": lambda m: [select_until(25, eq(0xEA, m + 1), max_presses=100), SOFT_RESET],
    "flag_capture": simple(0xD6, 2),
    "freeway": simple(0x80, 1),
    "frogger": simple(0xDD, 2, lambda m: 1 + 2 * m),
    "frostbite": simple(0x80, 1),
    "galaxian": simple(0xB3, 1),
    "gopher": lambda m: [SOFT_RESET, select_until(5, eq(0xD3, m)), SOFT_RESET],
    "gravitar": lambda m: [select_until(10, eq(0x80, m)), HOOK_END, SOFT_RESET],
    "hangman": simple(0xEE, 2),
    "haunted_house": simple(0xCC, 2),
    "hero": simple(0x80, 1),
    "human_cannonball": lambda m: [select_until(2, cond([term(0xB6, m + 1), term(0xB7, 1)])), SOFT_RESET],
    "ice_hockey": simple(0x80, 2),
    "jamesbond": lambda m: [select_until(20, cond([term(0x8C, m)], [term(0x8C, m + 0x48)])), SOFT_RESET],
    "kangaroo": lambda m: [select_until(2, cond([term(0xBA, m)], [term(0xBA, m + 0x80)])), SOFT_RESET],
    "king_kong": simple(0xEC, 2, lambda m: 2 * m),
    "klax": simple(0xF0EA, 2),
    "lost_luggage": simple(0x94, 2, lambda m: 1 + 3 * m),
    "mario_bros": simple(0x80, 5),
    "mr_do": simple(0x80, 5),
    "ms_pacman": lambda m: [
        select_until(10, cond([term(0x99, 1), term(0xA1, 1)] if m == 0 else [term(0x99, m), term(0xA1, 0)])),
        SOFT_RESET,
    ],
    "name_this_game": simple(0xDE, 2),
    "othello": simple(0xDE, 2, lambda m: m + 1),
    "pacman": lambda m: [select_until(2, cond([term(0xCC, m + 1), term(0xE6, 0)])), SOFT_RESET],
    "pong": simple(0x96, 2),
    "pooyan": lambda m: [select(2), select_until(2, eq(0xBD, m)), SOFT_RESET],
    "private_eye": simple(0x80, 2),
    "space_invaders": simple(0xDC, 2),
    "space_war": lambda m: [select_until(2, cond([term(0xA7, m, decimal=True)])), SOFT_RESET],
    "star_gunner": simple(0xF4, 15),
    "surround": simple(0xF9, 2, lambda m: m + 1),
    "tennis": simple(0x80, 2),
    "tic_tac_toe_3d": simple(0x88, 2),
    "turmoil": simple(0xEA, 2),
    "tutankham": simple(0xAB, 2),
    "video_checkers": lambda m: [HOOK_BEGIN, select_until(1, eq(0xF6, m + 6 if m >= 11 else m)), SOFT_RESET],
    "video_chess": simple(0xEA, 1),
    "video_cube": _video_cube,
    "video_pinball": simple(0xC1, 2),
    "word_zapper": simple(0xDB, 2),
    "yars_revenge": lambda m: [select(2), select_until(1, eq(0xE3, m)), SOFT_RESET],
    "zaxxon": simple(0x82, 10),
}


def _ints(text: str) -> list[int]:
    return [int(t) for t in text.split()]


def _actions(text: str) -> list[int]:
    out: list[int] = []
    for token in text.split():
        count, _, name = token.rpartition("x") if "x" in token and token.split("x")[0].isdigit() else ("1", "", token)
        index = RESET_ACTION if name == "RESET" else ACTION_MEANINGS.index(name)
        out += [index] * int(count)
    return out


def _prop_int(text: str) -> int:
    return int(text.split("(")[0])


def _game(row: dict[str, str], game_id: int) -> dict[str, Any]:
    rom = row["rom_id"]
    modes = _ints(row["modes"])
    words = dict(BASE_WORDS)
    words.update(EXTRA_WORDS.get(rom, {}))
    fields = [tok.split(":") for tok in ALE_STATE_FIELDS[rom].split()]
    saved = {name for name, _ in fields}
    legal = [a for a in range(18) if not (rom in ("lost_luggage", "skiing") and (a == 1 or a >= 10))]
    screen_h = int(row["screen_h_w"].split("x")[0])
    overridden = row["setmode_override"] == "True"
    if overridden != (rom in SET_MODE):
        raise SystemExit(f"{rom}: setMode override in the CSV ({overridden}) disagrees with SET_MODE")
    return {
        "rom_id": rom,
        "game_id": game_id,
        "settings_class": row["settings_class"],
        "md5": row["md5"],
        "bank_scheme": row["bankswitch"],
        "in_atari57": row["in_atari57"] == "True",
        "minimal_actions": [ACTION_MEANINGS.index(n) for n in row["minimal_actions"].split()],
        "legal_actions": legal,
        "modes": modes,
        "default_mode": modes[0],
        "difficulties": _ints(row["difficulties"]),
        "default_difficulty": 0,
        "starting_actions": _actions(row["starting_actions"]),
        "set_mode_overridden": overridden,
        "set_mode": {str(m): SET_MODE[rom](m) for m in modes} if overridden else {},
        "uses_environment_rng": rom == "adventure",
        "select_presses_during_default_reset": int(row["select_presses_during_default_reset"]),
        "lives_after_load": int(row["lives_after_load"]),
        "controllers": [row["controller_left"], row["controller_right"]],
        "paddles": row["controller_left"] == "PADDLES",
        "swap_ports": row["swap_ports"] == "YES",
        "swap_paddles": row["swap_paddles"] == "YES",
        "paddle_max": PADDLE_MAX.get(rom, 790196),
        "difficulty_props": [row["props_left_diff"], row["props_right_diff"]],
        "display_format": row["display_format_autodetected"],
        "ystart": _prop_int(row["props_ystart"]),
        "height_prop": _prop_int(row["props_height"]),
        "screen_height": screen_h,
        "hmove_blanks": row["hmove_blanks"] == "YES",
        "reads_cart_ram": rom == "klax",
        "state_words": words,
        "ale_state_fields": fields,
        "not_serialized": sorted(n for n in words if n not in saved),
    }


def build(csv_path: Path) -> dict[str, Any]:
    """Return the whole JSON document built from the CSV and the tables above."""
    with csv_path.open(newline="") as f:
        rows = [r for r in csv.DictReader(f) if r["ale_single_player"] == "True"]
    rows.sort(key=lambda r: r["rom_id"])
    games = [_game(r, i) for i, r in enumerate(rows)]
    return {
        "source": "ale-py 0.12.1 (ALE v0.12.1 src/ale/games/supported) and the measured per-ROM table",
        "state_words": 12,
        "reset_action": RESET_ACTION,
        "games": games,
    }


def main(argv: list[str] | None = None) -> int:
    """Write (or with ``--check`` verify) ``gpu_env/data/games.json``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--csv", type=Path, required=True, help="atari_roms.csv of the reference notes")
    parser.add_argument("--check", action="store_true", help="fail if games.json differs instead of writing")
    args = parser.parse_args(argv)
    text = json.dumps(build(args.csv), sort_keys=True, separators=(",", ":")) + "\n"
    if args.check:
        same = OUTPUT.exists() and OUTPUT.read_text() == text
        print("games.json is up to date" if same else "games.json is stale: rerun without --check")
        return 0 if same else 1
    OUTPUT.write_text(text)
    print(f"wrote {OUTPUT} ({len(text)} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
