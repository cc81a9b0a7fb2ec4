"""The one seeding rule of evaluation, trainers and lockstep: every random stream is a named child of a base seed.

A base seed ``S`` (the user's ``--seed``), a stream name from :data:`STREAMS` and the stream's indices
(``path``: a resume, a worker, an env, a population member...) give
``numpy.random.SeedSequence(S, spawn_key=(tag(name), len(path), *path))``, where the tag is the name's
CRC-32. :func:`seed` turns it into a 63-bit int (``torch.manual_seed``, ``numpy``, gpu_env and a
trainer's config take those; ``bits=31`` for ViZDoom, which keeps 31 bits), :func:`rng` into a
``numpy`` generator.

Evaluation episodes are the root stream: episode ``i`` of base ``S`` is
``SeedSequence(S, spawn_key=(i,))`` (:func:`episode_seed`; score tables record these seeds and a resume
checks them, so they never change). A named stream's spawn key is at least two words long, so its
input never equals an episode's. An episode's own streams hang from its recorded seed ``e`` alone, so a
row can be replayed from its seed: ``SeedSequence([e, word])`` with the word of :data:`EPISODE_STREAMS`
(:func:`episode_rng`; the policy's generator of an ``EpisodeSeeded`` policy is word 1).

Two base seeds feed different entropy to every stream, so unlike
``S + i`` the streams of base 0 and of base 1 share no input; their outputs are hashes, equal only by
chance (about ``n**2 / 2**(bits + 1)`` for ``n`` seeds drawn: negligible at 63 bits, not at 31).

The conformance lockstep engine draws from it too: ALE's ``random_seed`` of env ``i`` is stream
``lockstep.ale`` at ``(i,)`` (31 bits) and its random actions (and warm-ups) come from ``lockstep.actions``
(:func:`conformance.lockstep.ale_seeds`, :func:`conformance.lockstep.action_rng`).

Not under this rule yet (each is a function of the base seed that differs between base seeds, but written
in its own module): the tournament's match seeds (``seed * 100003 + k`` in :mod:`evaltk.tournament.formats`)
and agent seeds (``seed * 16 + slot``, :mod:`evaltk.tournament.match`, which self-play matches use too), the
conformance trace recorders' action generators (``default_rng(seed)``) and the bots case's bootstrap
generator. Moving them would change every recorded gauntlet and trace; ``tests/evaltk/test_seeding.py``
covers the trainers, the lockstep engine and evaluation.
"""

from __future__ import annotations

import zlib

import numpy as np

STREAMS = (
    "a2c.weights",  # A2C: initial weights
    "a2c.actions",  # A2C: action sampling
    "a2c.env",  # A2C: env seeds (path: resume, env)
    "appo.weights",  # APPO: initial weights
    "appo.inference",  # APPO: the inference server's (or a member's) action sampling
    "appo.resume",  # APPO: the base of the components of one resume (path: resume)
    "appo.env",  # APPO: env seeds (path: worker generation, env)
    "appo.teacher",  # APPO DAgger: the teacher's action sampling and the choice of whose action a step executes
    "selfplay.population",  # self-play/PBT: the members' initial hyperparameters
    "selfplay.matches",  # self-play/PBT: match seeds and pairings (path: resume)
    "selfplay.member",  # self-play/PBT: the base seed of one member (path: member id)
    "lockstep.ale",  # conformance lockstep: ALE's random_seed of one env (path: env)
    "lockstep.actions",  # conformance lockstep: random actions and ale-state warm-ups
    "bc.weights",  # behaviour cloning: initial weights
    "bc.demos",  # behaviour cloning (and APPO's BC term): the order demonstrations are read in
    "demos.episode",  # demonstration recording: one episode's bots, engine and agent seeds (path: episode)
    "evaluation.policy",  # evaluation: the generator of a policy seeded per batch (not EpisodeSeeded)
    "verdict.bootstrap",  # a verdict's resampling: bootstrap-t, permutation and bootstrap CIs (base: --bootstrap-seed)
)
"""Every named stream; a name not listed here is refused (a typo would silently start a new stream)."""

SEED_MASK = 0x7FFFFFFF
"""The 31 bits an evaluation episode's seed keeps."""
_TAGS = {name: zlib.crc32(name.encode()) for name in STREAMS}


def _base(value: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
        raise ValueError(f"base seed {value!r}: give an integer >= 0")
    return int(value)


def sequence(base: int, stream: str, *path: int) -> np.random.SeedSequence:
    """Return the ``SeedSequence`` of ``stream`` at indices ``path`` under base seed ``base`` (see the module doc)."""
    tag = _TAGS.get(stream)
    if tag is None:
        raise ValueError(f"unknown seed stream {stream!r}: add it to evaltk.seeding.STREAMS")
    if any(isinstance(i, bool) or int(i) < 0 for i in path):
        raise ValueError(f"seed stream {stream!r}: indices {path} must be integers >= 0")
    return np.random.SeedSequence(_base(base), spawn_key=(tag, len(path), *(int(i) for i in path)))


def seed(base: int, stream: str, *path: int, bits: int = 63) -> int:
    """Return a ``bits``-bit int seed (1 to 64) of ``stream`` at ``path`` under ``base``."""
    if not 1 <= bits <= 64:
        raise ValueError(f"bits={bits}: give 1 to 64")
    return int(sequence(base, stream, *path).generate_state(1, np.uint64)[0]) & ((1 << bits) - 1)


def rng(base: int, stream: str, *path: int) -> np.random.Generator:
    """Return a ``numpy`` generator of ``stream`` at ``path`` under ``base``."""
    return np.random.default_rng(sequence(base, stream, *path))


EPISODE_STREAMS = {"policy": 1}
"""An episode's own streams (:func:`episode_rng`) and their entropy word; recorded rows replay by them, so fixed."""


def episode_rng(seed: int, stream: str) -> np.random.Generator:
    """Return the generator of an episode's own ``stream`` from the episode's recorded ``seed`` (see the module doc)."""
    word = EPISODE_STREAMS.get(stream)
    if word is None:
        raise ValueError(f"unknown episode stream {stream!r}: add it to evaltk.seeding.EPISODE_STREAMS")
    return np.random.default_rng([int(seed), word])


def episode_seed(base: int, index: int) -> int:
    """Seed of episode ``index`` of an evaluation with base ``base``: a 31-bit int, recorded per row.

    ``SeedSequence(base, spawn_key=(index,)).generate_state(1)[0] & 0x7FFFFFFF``: independent streams
    per episode, and base seeds 0 and 1 share no episodes (unlike ``base + index``).
    """
    state = np.random.SeedSequence(int(base), spawn_key=(int(index),)).generate_state(1)[0]
    return int(state) & SEED_MASK
