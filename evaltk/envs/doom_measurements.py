"""Sample Factory's Doom measurement vector, and how it rides in an observation's extra row.

Sample Factory's ``DoomAdditionalInput`` wrapper (``sf_examples.vizdoom.doom.wrappers.additional_input``)
gives the policy ``measurements: float32[23]`` next to the screen, computed from the game variables
the scenario's cfg makes available (a variable the cfg does not list reads as its default):

====  ==========================================================  =========
index value                                                       default
====  ==========================================================  =========
0     ``round(max(0, SELECTED_WEAPON))``                          0
1     ``min(max(0, SELECTED_WEAPON_AMMO) / 15, 5)``               0
2     ``max(0, HEALTH) / 30``                                     0
3     ``ARMOR / 30``                                              0
4     ``USER2 / 10`` (kills, battle and battle2)                  0
5     ``ATTACK_READY``                                            0
6     ``PLAYER_COUNT / 5``                                        1
7-14  ``max(0, WEAPON0..7)``                                      0
15-22 ``min(max(0, AMMO0..7) / 15, 5)``                           0
====  ==========================================================  =========

An evaltk observation of a scenario with ``measurement_scheme="sample_factory"`` is
``uint8[3, H + 1, W]``: the screen in rows ``0..H-1`` and, in row ``H``, the vector's float32
little-endian bytes laid out channel-major (``row.reshape(-1)[:92]``), the rest zero.
:func:`unpack` gives both back (the imported network reads them so).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

NUM_WEAPONS = 8
"""Sample Factory's ``NUM_WEAPONS``."""
COUNT = 7 + 2 * NUM_WEAPONS
"""Length of the measurement vector."""
VARIABLES: tuple[str, ...] = ("SELECTED_WEAPON", "SELECTED_WEAPON_AMMO", "HEALTH", "ARMOR", "USER2", "ATTACK_READY",
                              "PLAYER_COUNT", *(f"WEAPON{i}" for i in range(NUM_WEAPONS)),
                              *(f"AMMO{i}" for i in range(NUM_WEAPONS)))
"""The game variables the vector reads."""


def vector(values: Mapping[str, float]) -> np.ndarray:
    """Return Sample Factory's measurement vector ``float32[23]`` from game variable values by name."""
    out = np.zeros(COUNT, dtype=np.float32)
    out[0] = round(max(0.0, values.get("SELECTED_WEAPON", 0.0)))
    out[1] = min(max(0.0, values.get("SELECTED_WEAPON_AMMO", 0.0)) / 15.0, 5.0)
    out[2] = max(0.0, values.get("HEALTH", 0.0)) / 30.0
    out[3] = values.get("ARMOR", 0.0) / 30.0
    out[4] = values.get("USER2", 0.0) / 10.0
    out[5] = values.get("ATTACK_READY", 0.0)
    out[6] = values.get("PLAYER_COUNT", 1.0) / 5.0
    for w in range(NUM_WEAPONS):
        out[7 + w] = max(0.0, values.get(f"WEAPON{w}", 0.0))
        out[7 + NUM_WEAPONS + w] = min(max(0.0, values.get(f"AMMO{w}", 0.0)) / 15.0, 5.0)
    return out


def present(available: Sequence[str]) -> tuple[str, ...]:
    """Return the variables of :data:`VARIABLES` that a cfg listing ``available`` provides, in that order."""
    return tuple(v for v in VARIABLES if v in available)


def pack(row: np.ndarray, values: np.ndarray) -> None:
    """Write ``values`` (float32) as little-endian bytes into the observation row ``row`` (``uint8[3, W]``)."""
    raw = np.frombuffer(np.asarray(values, dtype="<f4").tobytes(), dtype=np.uint8)
    flat = np.zeros(row.size, dtype=np.uint8)
    flat[:raw.size] = raw
    row[...] = flat.reshape(row.shape)


def unpack(obs: np.ndarray, count: int = COUNT) -> tuple[np.ndarray, np.ndarray]:
    """Split packed ``uint8[B, 3, H + 1, W]`` into screens ``uint8[B, 3, H, W]`` and ``float32[B, count]``."""
    rows = np.ascontiguousarray(obs[:, :, -1, :]).reshape(obs.shape[0], -1)[:, :4 * count]
    return obs[:, :, :-1, :], np.ascontiguousarray(rows).view("<f4").astype(np.float32)
