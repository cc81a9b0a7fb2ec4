"""Which ALE game rules a ROM runs with: by ROM id, by md5, or by file name (ALE's name fallback).

ale-py 0.12.1's ``loadROM`` takes the RomSettings of the game whose md5 equals the file's, or else
of the game whose id equals the file name's stem in lower case (``Pong.bin``, ``pong.a26`` ->
``pong``); a ROM matching neither is refused. Homebrew and test ROMs run that way: a ``.bin`` whose
md5 ALE does not know, named after a supported game, gets that game's rules (actions, modes, reset
sequence, reward, lives, game over), while its console properties are Stella's defaults for an
unknown cartridge (the properties database is keyed by md5): joystick controllers, no port or paddle
swap, difficulty switches B/B, display window from line 34, 210 lines high, HMOVE blanks on, bank
scheme and NTSC/PAL auto-detected (the display format after the power-on probe, see
:func:`with_probed_display`).

One difference remains: ALE scans its game table once, in its own order, taking the first game that
matches by md5 *or* by name, so a known ROM renamed after a game listed before its own runs with
the other game's rules. gpu_env takes the md5's game for every known ROM.
"""

from __future__ import annotations

import dataclasses

from gpu_env import games
from gpu_env.games import GameInfo
from gpu_env.roms import Rom

# Stella's property defaults for a cartridge its database does not know (ALE 0.12.1's Props).
DEFAULT_CONTROLLERS = ("JOYSTICK", "JOYSTICK")
DEFAULT_DIFFICULTY_PROPS = ("B", "B")
DEFAULT_YSTART = 34
DEFAULT_HEIGHT = 210
PAL_HEIGHT = 250  # getScreen() rows of a PAL ROM whose Display.Height is the default


def game_for_rom(rom: Rom) -> GameInfo:
    """Return the rules ``rom`` runs with in ALE: its id's, its md5's, or those of the game its file is named after.

    Raises :class:`~gpu_env.games.GameError` (a ``RomError``) for a ROM that is none of these.
    """
    if rom.rom_id is not None:
        return games.game_info(rom.rom_id)
    for info in games.games().values():
        if info.md5 == rom.md5:
            return info
    name = rom.path.stem.lower()
    if name in games.games():
        return named_unknown_rom(games.game_info(name), rom)
    if name in games.MULTIPLAYER_ONLY:
        raise games.GameError(f"ROM {str(rom.path)!r} is named after {name!r}, which has no single-player rules in "
                              "ALE 0.12.1: name it after another game")
    raise games.GameError(
        f"ALE knows no game with the md5 {rom.md5} of {str(rom.path)!r}, and {name!r} is not a game id: rename the "
        "file after the supported game whose rules it should run with (snake case, e.g. space_invaders.bin), "
        "as ale-py's loadROM requires"
    )


def named_unknown_rom(info: GameInfo, rom: Rom) -> GameInfo:
    """Return ``info``'s rules with the console properties Stella gives a cartridge it does not know.

    The display format is provisional (NTSC) until :func:`with_probed_display` sets the probe's.
    """
    return dataclasses.replace(
        info,
        md5=rom.md5,
        bank_scheme=rom.scheme.stella_name,
        controllers=DEFAULT_CONTROLLERS,
        paddles=False,
        swap_ports=False,
        swap_paddles=False,
        difficulty_props=DEFAULT_DIFFICULTY_PROPS,
        display_format="NTSC",
        ystart=DEFAULT_YSTART,
        height_prop=DEFAULT_HEIGHT,
        screen_height=DEFAULT_HEIGHT,
        hmove_blanks=True,
    )


def is_named_unknown_rom(info: GameInfo) -> bool:
    """Whether ``info`` came from the name fallback (its md5 is not its game's)."""
    return info.md5 != games.game_info(info.rom_id).md5


def with_probed_display(info: GameInfo, pal: bool) -> GameInfo:
    """Return a name-fallback ``info`` with the display format the power-on probe found (others unchanged)."""
    if not is_named_unknown_rom(info):
        return info
    return dataclasses.replace(info, display_format="PAL" if pal else "NTSC",
                               screen_height=PAL_HEIGHT if pal else DEFAULT_HEIGHT)
