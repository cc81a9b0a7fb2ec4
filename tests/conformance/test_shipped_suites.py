"""The suites shipped in suites/ pass: they are the conformance gate CI runs."""

from pathlib import Path

import pytest

from conformance.suite import Outcome, load_suite, run_suite

SUITES = Path(__file__).resolve().parents[2] / "suites"


# transfer_breakout (100 episodes a side, ~45 s) is slow; the default run checks the transfer case on a
# smaller one (tests/conformance/test_suite.py) and the same policies gym vs gpu_env in
# tests/evaltk/evaluation/test_validate.py.
# doom.toml (Doom traces, demos, 8 half-minute matches against a bot, an SPRT against random) takes about 90 s
# on a loaded 2-core machine; docs/conformance.md states its bound. appo_duel.toml (80 four-minute matches of the
# shipped APPO duel agent against a bot, docs/selfplay.md) and appo_duel_pixels.toml (the same 80 matches of the
# pixel-only agent under rules screen-only) are slow.
@pytest.mark.parametrize("name", ["reference_drift.toml", "gpu_env_traces.toml",
                                  pytest.param("doom.toml", marks=pytest.mark.vizdoom),
                                  pytest.param("transfer_breakout.toml", marks=pytest.mark.slow),
                                  pytest.param("simulators.toml", marks=pytest.mark.slow),
                                  pytest.param("appo_duel.toml", marks=[pytest.mark.slow, pytest.mark.vizdoom]),
                                  pytest.param("appo_duel_pixels.toml",
                                               marks=[pytest.mark.slow, pytest.mark.vizdoom])])
def test_shipped_suite_passes(name: str, tmp_path: Path) -> None:
    suite = load_suite(SUITES / name)
    results = run_suite(suite, tmp_path)
    bad = [f"{r.case.name}: {r.outcome.value}: {r.message}" for r in results if r.outcome is not Outcome.PASSED]
    assert not bad, "\n".join(bad)
