"""Doom tournaments: headless multiplayer matches, formats, ratings with intervals, SPRT, reports.

Modules: :mod:`~evaltk.tournament.match` (one match), :mod:`~evaltk.tournament.player` (one player
process), :mod:`~evaltk.tournament.agents` (built-in random and scripted agents),
:mod:`~evaltk.tournament.scheduler` (concurrency, resume, rescheduling), :mod:`~evaltk.tournament.formats`
(gauntlet / round-robin / match: the match list), :mod:`~evaltk.tournament.run` (a tournament end to end),
:mod:`~evaltk.tournament.rules` (what an agent may see: its declared inputs against ``--rules``),
:mod:`~evaltk.tournament.ratings` (statistics), :mod:`~evaltk.tournament.summary` and
:mod:`~evaltk.tournament.report` (outputs), :mod:`~evaltk.tournament.demos` (demo replay checks).
See docs/tournament.md.
"""
