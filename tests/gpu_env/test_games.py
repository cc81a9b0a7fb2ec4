"""gpu_env.games metadata and the C entry points of the per-game logic."""

from __future__ import annotations

import ctypes
import json
from pathlib import Path

import ale_py
import numpy as np
import pytest
from ale_py import roms
from hypothesis import given
from hypothesis import strategies as st

from gpu_env.binding import native
from gpu_env.errors import GpuEnvError
from gpu_env.games import (
    MULTIPLAYER_ONLY,
    STATE_WORDS,
    GameError,
    cart_ram_from_ale_state,
    game_info,
    games,
    settings_from_ale_state,
)
from gpu_env.tools import build_games_data
from gpu_env.tools.game_traces import OP_LOAD, OP_RESET, OP_STEP, initial_state, run_trace
from tests.data_paths import data_path

KNOWN_OPS = {
    "select",
    "select_until",
    "select_random_until",
    "act",
    "act_until",
    "act_until_changed",
    "soft_reset",
    "hook_begin",
    "hook_end",
}


def _rom(rom_id: str) -> Path:
    path = roms.get_rom_path(rom_id)
    assert path is not None, rom_id
    return Path(path)


def test_registry_matches_metadata() -> None:
    lib = native()
    table = games()
    assert lib.gpu_env_games_count() == len(table) == 104
    assert lib.gpu_env_games_state_words() == STATE_WORDS
    assert list(table) == sorted(table)
    assert [info.game_id for info in table.values()] == list(range(104))
    assert not set(MULTIPLAYER_ONLY) & set(table)


# loadROM in ALE takes ~150 ms: the default run checks every fifth ROM (21, a different cart mix each
# offset), the slow run all 104.
@pytest.mark.parametrize("every", [pytest.param(5, id="every-5th"), pytest.param(1, id="all", marks=pytest.mark.slow)])
def test_metadata_equals_ale_py(every: int) -> None:
    """Action sets, modes, difficulties, lives after loadROM and screen height, for the ROMs (all 104 when slow)."""
    ale = ale_py.ALEInterface()
    ale.setLoggerMode(ale_py.LoggerMode.Error)
    wrong = []
    for rom, info in list(games().items())[::every]:
        ale.loadROM(_rom(rom))
        got = (
            [a.value for a in ale.getMinimalActionSet()],
            [a.value for a in ale.getLegalActionSet()],
            list(ale.getAvailableModes()),
            list(ale.getAvailableDifficulties()),
            ale.lives(),
            ale.getScreenDims()[0],
        )
        expected = (
            list(info.minimal_actions),
            list(info.legal_actions),
            list(info.modes),
            list(info.difficulties),
            info.lives_after_load,
            info.screen_height,
        )
        if got != expected:
            wrong.append((rom, got, expected))
    assert wrong == []


def test_is_legal_matches_metadata() -> None:
    lib = native()
    for info in games().values():
        legal = [a for a in range(18) if lib.gpu_env_games_is_legal(info.game_id, a) == 1]
        assert legal == list(info.legal_actions), info.rom_id
    assert lib.gpu_env_games_is_legal(104, 0) == -1


def test_set_mode_programs_are_well_formed() -> None:
    overridden = 0
    for info in games().values():
        overridden += info.set_mode_overridden
        for mode in info.modes:
            program = info.set_mode_program(mode)
            assert bool(program) == info.set_mode_overridden, info.rom_id
            for op in program:
                assert op["op"] in KNOWN_OPS, (info.rom_id, op)
                for alternative in op.get("until", {"any": [[]]})["any"]:
                    for t in alternative:
                        in_riot = 0x80 <= t["addr"] <= 0xFF
                        assert in_riot or (info.reads_cart_ram and t["addr"] & 0x1F80 == 0x1080), (info.rom_id, t)
        if info.set_mode_overridden:
            assert info.set_mode_program()[-1]["op"] in ("soft_reset", "act", "act_until"), info.rom_id
    assert overridden == 62
    assert game_info("adventure").uses_environment_rng
    assert sum(i.uses_environment_rng for i in games().values()) == 1


def test_set_mode_program_targets() -> None:
    frogger = game_info("frogger").set_mode_program(2)
    assert frogger[0]["until"] == {"any": [[{"addr": 0xDD, "mask": 0xFF, "value": 5, "decimal": False}]]}
    checkers = game_info("video_checkers").set_mode_program(12)
    assert checkers[1]["until"]["any"][0][0]["value"] == 18
    cube = game_info("video_cube").set_mode_program(4902)
    assert cube[1]["until"]["any"][0][0] == {"addr": 0xFB, "mask": 0x1F, "value": 8, "decimal": False}
    assert cube[-1]["until"]["any"][0][0] == {"addr": 0x9F, "mask": 0xFF, "value": 49, "decimal": True}
    assert game_info("pong").set_mode_program() == (
        {
            "op": "select_until",
            "frames": 2,
            "max_presses": None,
            "until": {"any": [[{"addr": 0x96, "mask": 0xFF, "value": 0, "decimal": False}]]},
        },
        {"op": "soft_reset"},
    )


# Games whose mode byte still satisfies the last select condition after reset_game (in the others the
# byte is reused once the game starts, e.g. as the score: air_raid 0xAA, crossbow 0x8D, space_war 0xA7).
MODE_BYTE_REUSED = {
    "air_raid", "backgammon", "basic_math", "crossbow", "human_cannonball", "lost_luggage", "name_this_game",
    "othello", "pacman", "pooyan", "space_war", "turmoil", "video_pinball", "yars_revenge",
}  # fmt: skip


def _holds(until: dict[str, list[list[dict[str, int]]]], ram: np.ndarray, cart: np.ndarray) -> bool:
    def read(addr: int) -> int:
        return int(ram[addr - 0x80]) if addr < 0x100 else int(cart[addr & 0x7F])

    def test(t: dict[str, int]) -> bool:
        v = read(t["addr"])
        return 10 * (v >> 4) + (v & 15) == t["value"] if t["decimal"] else (v & t["mask"]) == t["value"]

    return any(all(test(t) for t in alternative) for alternative in until["any"])


def test_set_mode_conditions_hold_after_ale_selects_the_mode() -> None:
    """After ale.setMode(m) + reset_game, the program's last select condition holds (transcription check)."""
    ale = ale_py.ALEInterface()
    ale.setLoggerMode(ale_py.LoggerMode.Error)
    checked = 0
    for rom, info in games().items():
        if not info.set_mode_overridden or rom in MODE_BYTE_REUSED:
            continue
        ale.loadROM(_rom(rom))
        for mode in {info.modes[0], info.modes[-1]}:
            ale.setMode(mode)
            ale.reset_game()
            conds = [op["until"] for op in info.set_mode_program(mode) if op["op"].startswith("select_")]
            if not conds:
                continue
            state = ale.cloneState()
            assert _holds(conds[-1], ale.getRAM(), cart_ram_from_ale_state(rom, state)), (rom, mode)
            checked += 1
    assert checked >= 80


def test_bad_input_errors_name_the_fix() -> None:
    with pytest.raises(GameError, match="unknown ROM id 'pongg'"):
        game_info("pongg")
    with pytest.raises(GameError, match="multi-player only"):
        game_info("warlords")
    with pytest.raises(GameError, match=r"mode 3 is not a mode of 'pong': choose one of \[0, 1\]"):
        game_info("pong").set_mode_program(3)
    with pytest.raises(GameError, match="difficulty 9"):
        game_info("pong").check_difficulty(9)
    assert game_info("pong").check_difficulty(None) == 0
    with pytest.raises(GameError, match="not an ale-py cloneState"):
        settings_from_ale_state("pong", b"\x00" * 8)
    with pytest.raises(GameError, match=r"expected ale\.cloneState"):
        settings_from_ale_state("pong", 12)


def test_settings_import_rejects_rng_states() -> None:
    ale = ale_py.ALEInterface()
    ale.setLoggerMode(ale_py.LoggerMode.Error)
    ale.loadROM(_rom("pong"))
    words = settings_from_ale_state("pong", ale.cloneState())
    assert words.dtype == np.int32
    assert words.shape == (STATE_WORDS,)
    with pytest.raises(GameError, match="include_rng=False"):
        settings_from_ale_state("pong", ale.cloneState(include_rng=True))


def test_games_json_is_generated_from_the_reference_table() -> None:
    doc = build_games_data.build(data_path("reference/atari_roms.csv"))
    on_disk = json.loads(build_games_data.OUTPUT.read_text())
    assert doc == on_disk


def test_initial_states() -> None:
    pitfall = initial_state("pitfall")
    assert pitfall[:4].tolist() == [0, 2000, 3, 0]  # Pitfall starts at 2,000 points and 3 lives
    qbert = initial_state("qbert")
    assert qbert[game_info("qbert").state_words["last_lives"]] == 2
    assert initial_state("hangman")[6:8].tolist() == [-1, -1]


def test_trace_ops() -> None:
    """Load replaces the state, reset clears what ALE clears, step reads the frame's RAM."""
    mem = np.zeros((3, 256), dtype=np.uint8)
    mem[:, 0x0D] = [0, 0, 3]  # pong: computer points at 0x8D
    mem[:, 0x0E] = [0, 1, 1]  # player points at 0x8E
    loads = np.zeros((3, STATE_WORDS), dtype=np.int32)
    loads[0, :4] = [7, 5, 0, 1]
    ops = np.array([OP_LOAD, OP_RESET | OP_STEP, OP_STEP], dtype=np.int32)
    state = initial_state("pong")
    out, states = run_trace("pong", mem, ops, loads, state)
    assert out.tolist() == [[7, 1, 0], [1, 0, 0], [-3, 0, 0]]
    assert states[-1, :4].tolist() == [-3, -2, 0, 0]
    assert state.tolist() == states[-1].tolist()


@given(
    rom=st.sampled_from(sorted(games())),
    data=st.binary(min_size=256 * 8, max_size=256 * 8),
    split=st.integers(min_value=0, max_value=8),
)
def test_trace_is_resumable(rom: str, data: bytes, split: int) -> None:
    """Running a trace in two pieces, carrying the state through the C ABI, equals one run."""
    mem = np.frombuffer(data, dtype=np.uint8).reshape(8, 256)
    ops = np.full(8, OP_STEP, dtype=np.int32)
    loads = np.zeros((8, STATE_WORDS), dtype=np.int32)
    whole_state = initial_state(rom)
    out, states = run_trace(rom, mem, ops, loads, whole_state)
    state = initial_state(rom)
    out_a, _ = run_trace(rom, mem[:split], ops[:split], loads[:split], state)
    out_b, states_b = run_trace(rom, mem[split:], ops[split:], loads[split:], state)
    assert np.array_equal(np.concatenate([out_a, out_b]), out)
    assert np.array_equal(state, whole_state)
    assert np.array_equal(states_b, states[split:])


def test_run_trace_rejects_bad_buffers() -> None:
    lib = ctypes.CDLL(native()._name)  # a private handle: its argtypes do not leak into other tests
    fn = lib.gpu_env_games_run_trace
    fn.argtypes = [ctypes.c_int, ctypes.c_int] + [ctypes.c_void_p] * 6
    assert fn(200, 0, None, None, None, None, None, None) == -1
    assert fn(0, 1, None, None, None, None, None, None) == -1
    with pytest.raises(GpuEnvError, match="trace shapes"):
        run_trace(
            "pong",
            np.zeros((2, 128), np.uint8),
            np.zeros(2, np.int32),
            np.zeros((2, 12), np.int32),
            initial_state("pong"),
        )
