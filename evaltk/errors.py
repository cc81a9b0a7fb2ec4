"""The exception hierarchy of evaltk: one base class, one subclass per kind of bad input.

Every message names the bad value and says how to fix it; the CLI prints ``error: <message>``
and exits with status 2 for any :class:`EvaltkError`.
"""


class EvaltkError(Exception):
    """Base class of every error evaltk raises on purpose."""


class CheckpointError(EvaltkError):
    """A checkpoint directory is missing, corrupt, of an unknown version or inconsistent."""


class SpecError(EvaltkError):
    """An environment or preprocessing spec is invalid or does not match the environment."""


class ScoreTableError(EvaltkError):
    """A score table (CSV/JSONL of episode returns) is missing, empty or malformed."""


class SuiteError(EvaltkError):
    """A conformance suite file is malformed."""


class TournamentError(EvaltkError):
    """A tournament or match could not be set up or run."""


class CheckpointWarning(UserWarning):
    """A checkpoint loads but lacks a protection (e.g. a format-1 checkpoint has no weights digest)."""
