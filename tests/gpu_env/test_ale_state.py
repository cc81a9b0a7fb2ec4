"""Parsing ale-py cloneState() bytes, and the import/export round trip of the machine state."""

from __future__ import annotations

import numpy as np
import pytest

from gpu_env.ale_state import AleStateError, parse_ale_state
from gpu_env.console_batch import ConsoleBatch
from tests.gpu_env.tia_helpers import make_ale


@pytest.mark.parametrize("game", ["pong", "montezuma_revenge", "pitfall2", "darkchambers", "robotank", "qbert"])
def test_import_then_export_reproduces_ales_fields(game: str) -> None:
    ale = make_ale(game, warmup=25)
    parsed = parse_ale_state(ale.cloneState())
    assert parsed.ram == [int(v) for v in ale.getRAM()]
    batch = ConsoleBatch(game, 1)
    batch.load_ale_state(0, ale.cloneState())
    exported = batch.export_ale(0)
    assert exported["cpu"] == parsed.cpu
    assert exported["ram"] == parsed.ram
    assert exported["riot"] == parsed.riot
    colours = range(13, 17)  # ALE stores colours as the byte repeated four times
    assert [v for i, v in enumerate(exported["tia"]) if i not in colours] == [
        v for i, v in enumerate(parsed.tia) if i not in colours
    ]
    assert [exported["tia"][i] for i in colours] == [parsed.tia[i] & 0xFF for i in colours]
    assert (batch.get_ram()[0] == ale.getRAM()).all()


def test_bad_bytes_are_rejected() -> None:
    with pytest.raises(AleStateError, match="ends early"):
        parse_ale_state(b"\x00" * 10)
    with pytest.raises(AleStateError, match="cloneState"):
        parse_ale_state(12345)
    good = bytes(make_ale("pong").cloneState().serialize())
    broken = bytearray(good)
    broken[28 + 4 + 32 + 4] ^= 0xFF  # inside the "System" tag
    with pytest.raises(AleStateError):
        parse_ale_state(bytes(broken))
    assert np.frombuffer(good[:4], "<i4")[0] == parse_ale_state(good).left_paddle
