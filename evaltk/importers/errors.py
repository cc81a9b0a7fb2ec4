"""Errors of the foreign-checkpoint importers: one base class, and the refusal of a pickled object."""

from __future__ import annotations

from evaltk.errors import CheckpointError


class ForeignCheckpointError(CheckpointError):
    """A foreign checkpoint (SB3, CleanRL, Sample Factory, torch zip or pickle) is malformed or unsupported."""


class RefusedPickleError(ForeignCheckpointError):
    """A pickle names an object outside the allow-list (tensors and plain data): it is refused, never run."""
