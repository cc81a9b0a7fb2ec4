"""The shipped A2C checkpoint scores the same on gpu_env as on the reference (gymnasium + ale-py).

Point ``CHECKPOINT`` at your own policy's checkpoint directory (or a ``builtin:`` policy).
"""

from pathlib import Path

from evaltk.evaluation.validate import ValidateConfig, prepare_validation, run_validation
from evaltk.verdict import VerdictRule

CHECKPOINT = "suites/checkpoints/a2c_breakout"


def test_checkpoint_transfers_to_the_reference(tmp_path: Path) -> None:
    """Ten seeded episodes on each side; the verdict must be identical or equivalent within 2 points."""
    config = ValidateConfig(checkpoint=CHECKPOINT, out=tmp_path, rule=VerdictRule(margin=2.0), episodes=10, num_envs=4)
    validation = run_validation(prepare_validation(config))
    assert validation.verdict in ("identical", "equivalent"), validation.verdict_line()
