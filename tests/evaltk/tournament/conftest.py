"""Fixtures of the tournament tests."""

from tests.evaltk.tournament.tags import tag

__all__ = ["tag"]
