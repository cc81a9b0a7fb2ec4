"""One seeding rule (evaltk.seeding): two base seeds give disjoint streams for evaluation, every trainer and lockstep.

A stream is compared by its first 63 bits (what :func:`evaltk.seeding.seed` returns); consumers that keep
fewer (ViZDoom keeps 31 bits of an env seed, an evaluation row records 31) can meet by chance, as any two
hashes can: the rule guarantees different streams, not different 31-bit numbers.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from conformance.lockstep import action_rng, ale_seeds
from evaltk import seeding
from evaltk.evaluation.run import episode_seed
from trainers.appo.config import AppoConfig
from trainers.appo.selfplay.population import Member
from trainers.appo.selfplay.runner import member_config

ROOT = Path(__file__).resolve().parents[2]
RESUMES, ENVS, GENERATIONS, MEMBERS, EPISODES, DRAWS, DEMO_EPISODES = 4, 64, 4, 16, 10_000, 4, 200
# The streams the trainers and the lockstep engine call, each enumerated below as its user derives it (checked
# against the source).
CALLED_STREAMS = {"a2c.weights", "a2c.actions", "a2c.env", "appo.weights", "appo.inference", "appo.resume",
                  "appo.teacher",
                  "appo.env", "selfplay.population", "selfplay.matches", "selfplay.member", "lockstep.ale",
                  "lockstep.actions", "bc.weights", "bc.demos", "demos.episode", "evaluation.policy"}
RULED_SOURCES = ("conformance/lockstep.py", "conformance/sim_lockstep.py", "evaltk/evaluation/run.py",
                 "evaltk/policies.py")
"""Beyond the trainers: the lockstep engine and evaluation, whose every stream comes from :mod:`evaltk.seeding`."""
SEEDED_BY_A_DRAW = {
    ("trainers/appo/demos.py", "np.random.default_rng(spec.policy_seed)"):
        "the demonstrator's generator: a draw of the episode's demos.episode stream",
    ("trainers/appo/inference.py", "torch.Generator().manual_seed(seed)"):
        "the inference server's sampler: its callers pass seeding.seed(..., 'appo.inference')",
    ("trainers/appo/inference.py", "np.random.default_rng(seed)"): "the same server's random actions (same seed)",
    ("trainers/appo/dagger.py", "np.random.default_rng(seed)"):
        "the DAgger teacher's choice of whose action a step executes: the runner passes seeding.seed(..., "
        "'appo.teacher')",
    ("trainers/appo/dagger.py", "torch.Generator().manual_seed(seed)"): "the same teacher's sampler (same seed)",
    ("trainers/appo/selfplay/player.py", "torch.Generator().manual_seed(spec.policy_seed)"):
        "a self-play match player's sampler: the tournament's agent seed of a match seed drawn from selfplay.matches",
}
"""Generators seeded from a value that is itself a draw of a named stream, each with where it was drawn."""


def test_evaluation_episode_seeds_are_unchanged() -> None:
    """Score tables resume by seed: the evaluation rule must give the seeds it always gave."""
    assert [episode_seed(0, i) for i in range(3)] == [1610069009, 673228719, 1093961225]
    assert (episode_seed(1, 0), episode_seed(123, 7), episode_seed(2**40, 5)) == (1641411168, 501178259, 1129619190)
    assert seeding.episode_seed is episode_seed


def _a2c(base: int) -> Iterator[tuple[str, int]]:
    yield "a2c.weights", seeding.seed(base, "a2c.weights")
    yield "a2c.actions", seeding.seed(base, "a2c.actions")
    for resume in range(RESUMES):
        for env in range(ENVS):
            yield "a2c.env", seeding.seed(base, "a2c.env", resume, env)


def _appo(base: int, what: str = "appo") -> Iterator[tuple[str, int]]:
    """One APPO run (or one self-play member's learner): weights, then each resume's inference and env seeds."""
    yield f"{what} weights", seeding.seed(base, "appo.weights")
    yield f"{what} member inference", seeding.seed(base, "appo.inference")  # a self-play member's sampler
    for resume in range(RESUMES):
        components = seeding.seed(base, "appo.resume", resume)
        yield f"{what} resume", components
        yield f"{what} inference", seeding.seed(components, "appo.inference")
        for generation in range(GENERATIONS):
            for env in range(ENVS):
                yield f"{what} env", seeding.seed(components, "appo.env", generation, env)  # ViZDoom keeps 31 bits


def _draws(rng: np.random.Generator) -> list[int]:
    return [int(x) for x in rng.integers(2**63, size=DRAWS)]


def _cloning(base: int) -> Iterator[tuple[str, int]]:
    """Behaviour cloning's weights and demonstration order, and each recorded demonstration episode's stream."""
    yield "bc.weights", seeding.seed(base, "bc.weights")
    yield from (("bc.demos", x) for x in _draws(seeding.rng(base, "bc.demos")))
    yield from (("demos.episode", seeding.seed(base, "demos.episode", e)) for e in range(DEMO_EPISODES))


def _selfplay(base: int) -> Iterator[tuple[str, int]]:
    yield from (("selfplay.population", x) for x in _draws(seeding.rng(base, "selfplay.population")))
    for resume in range(RESUMES):
        yield from (("selfplay.matches", x) for x in _draws(seeding.rng(base, "selfplay.matches", resume)))
    cfg = AppoConfig(seed=base)
    for member in range(MEMBERS):
        mcfg = member_config(cfg, Member(id=member, hyperparams={"learning_rate": 1e-4, "entropy_coef": 0.01}))
        yield "selfplay.member", mcfg.seed
        yield from _appo(mcfg.seed, f"member {member}")


def _lockstep(base: int) -> Iterator[tuple[str, int]]:
    """Yield the lockstep engine's seeds: each env's ALE seed (63 bits; ALE gets the low 31), the action draws."""
    for env, ale_seed in enumerate(ale_seeds(base, ENVS)):
        stream = seeding.seed(base, "lockstep.ale", env)
        assert stream & seeding.SEED_MASK == ale_seed
        yield "lockstep.ale", stream
    yield from (("lockstep.actions", x) for x in _draws(action_rng(base)))


def _episode_stream(base: int, index: int) -> int:
    """Return the 63 bits of an episode's stream whose low 31 bits are :func:`episode_seed` (checked here)."""
    bits = int(np.random.SeedSequence(base, spawn_key=(index,)).generate_state(1, np.uint64)[0])
    assert bits & 0xFFFFFFFF & seeding.SEED_MASK == episode_seed(base, index)  # little-endian: the first uint32
    return bits & (2**63 - 1)


def _evaluation(base: int) -> Iterator[tuple[str, int]]:
    """Each episode's stream and its policy stream (from the recorded seed), and a per-batch policy's draws."""
    for i in range(EPISODES):
        yield "evaluation", _episode_stream(base, i)
        policy = np.random.SeedSequence([episode_seed(base, i), seeding.EPISODE_STREAMS["policy"]])
        yield "evaluation episode policy", int(policy.generate_state(1, np.uint64)[0]) & (2**63 - 1)
    yield from (("evaluation.policy", x) for x in _draws(seeding.rng(base, "evaluation.policy")))


def _streams(base: int) -> dict[int, str]:
    """Every seed the trainers, the lockstep engine and evaluation derive from ``base`` -> the stream that drew it."""
    drawn: dict[int, str] = {}
    for name, value in [*_a2c(base), *_appo(base), *_selfplay(base), *_lockstep(base), *_cloning(base),
                        *_evaluation(base)]:
        drawn.setdefault(value, name)
    return drawn


@pytest.mark.parametrize(("a", "b"), [(0, 1), (1, 2), (7, 8), (0, 1_000_003)])
def test_two_base_seeds_give_disjoint_streams_for_every_trainer_lockstep_and_evaluation(a: int, b: int) -> None:
    first, second = _streams(a), _streams(b)
    # nothing drawn twice within one base seed either
    assert len(first) == 27_872 + ENVS + DRAWS + (1 + DRAWS + DEMO_EPISODES) + (EPISODES + DRAWS)
    shared = {v: (first[v], second[v]) for v in first.keys() & second.keys()}
    assert not shared, f"base seeds {a} and {b} share seeds (value: (stream of {a}, stream of {b})): {shared}"


def test_population_members_are_disjoint_across_base_seeds() -> None:
    """The old rule (``seed + member.id``) gave member 1 of base 0 the seed of member 0 of base 1."""
    def members(base: int) -> list[int]:
        cfg = AppoConfig(seed=base)
        return [member_config(cfg, Member(id=i, hyperparams={"learning_rate": 1e-4, "entropy_coef": 0.01})).seed
                for i in range(MEMBERS)]

    assert not set(members(0)) & set(members(1))
    assert len(set(members(0))) == MEMBERS


def _seeding_users() -> Iterator[tuple[Path, ast.AST]]:
    """Yield the trainers' modules, the lockstep engine's and evaluation's, parsed."""
    for path in [*sorted((ROOT / "trainers").rglob("*.py")), *(ROOT / p for p in RULED_SOURCES)]:
        yield path, ast.parse(path.read_text(encoding="utf-8"))


def _mentions_seed(node: ast.AST) -> bool:
    """Whether ``node`` computes with a name containing "seed" (formatting one into an f-string does not count)."""
    if isinstance(node, ast.JoinedStr):
        return False
    if (isinstance(node, ast.Name) and "seed" in node.id) or (isinstance(node, ast.Attribute) and "seed" in node.attr):
        return True
    return any(_mentions_seed(child) for child in ast.iter_child_nodes(node))


def _seeds_a_generator_by_hand(node: ast.AST) -> bool:
    """Whether ``node`` is ``default_rng(...)``/``manual_seed(...)`` of a seed not computed by :mod:`evaltk.seeding`."""
    if not isinstance(node, ast.Call):
        return False
    name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
    return name in ("default_rng", "manual_seed") and any(
        _mentions_seed(arg) and not (isinstance(arg, ast.Call) and "seeding" in ast.unparse(arg.func))
        for arg in node.args)


def test_trainers_lockstep_and_evaluation_derive_every_seed_from_named_streams() -> None:
    """No seed arithmetic and no generator seeded by hand in the trainers, the lockstep engine or evaluation.

    ``seed + i`` or ``default_rng(cfg.seed)`` are refused, less the generators seeded by a listed draw; every
    stream called is enumerated.
    """
    arithmetic, called = [], set()
    for path, tree in _seeding_users():
        for node in ast.walk(tree):
            if isinstance(node, ast.BinOp) and _mentions_seed(node):
                arithmetic.append(f"{path.relative_to(ROOT)}:{node.lineno}: {ast.unparse(node)}")
            where = (path.relative_to(ROOT).as_posix(), ast.unparse(node))
            if _seeds_a_generator_by_hand(node) and where not in SEEDED_BY_A_DRAW:
                arithmetic.append(f"{where[0]}:{node.lineno}: {where[1]}")
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and isinstance(node.func.value, ast.Name) and node.func.value.id == "seeding"
                    and len(node.args) > 1 and isinstance(node.args[1], ast.Constant)):
                called.add(str(node.args[1].value))
    assert not arithmetic, "seeds derived by hand, not by evaltk.seeding:\n" + "\n".join(arithmetic)
    assert called == CALLED_STREAMS


def test_an_episode_policy_generator_is_the_one_recorded_rows_replay_by() -> None:
    """Rows record episode seeds and EpisodeSeeded policies replay from them: the policy stream must not change."""
    from evaltk.policies import episode_policy_rng

    for s in (0, 1_610_069_009):
        assert episode_policy_rng(s).integers(2**62) == np.random.default_rng([s, 1]).integers(2**62)
    with pytest.raises(ValueError, match="unknown episode stream 'polcy'"):
        seeding.episode_rng(0, "polcy")


def test_a_stream_name_or_base_seed_that_is_wrong_is_refused() -> None:
    with pytest.raises(ValueError, match=r"unknown seed stream 'a2c\.weigths': add it to evaltk.seeding.STREAMS"):
        seeding.seed(0, "a2c.weigths")
    with pytest.raises(ValueError, match="base seed -1: give an integer >= 0"):
        seeding.seed(-1, "a2c.weights")
    with pytest.raises(ValueError, match="indices"):
        seeding.seed(0, "a2c.env", -1)


def test_streams_differ_from_each_other_and_from_their_indices() -> None:
    names = seeding.STREAMS
    assert len({seeding.seed(0, n) for n in names}) == len(names)
    assert seeding.seed(0, "a2c.env", 1, 2) != seeding.seed(0, "a2c.env", 2, 1)
    assert seeding.seed(0, "a2c.env", 0) != seeding.seed(0, "a2c.env", 0, 0)
    again = seeding.rng(5, "selfplay.matches", 1)
    assert seeding.rng(5, "selfplay.matches", 1).integers(2**62) == again.integers(2**62)
    assert seeding.seed(3, "appo.env", 1, 2, bits=31) == seeding.seed(3, "appo.env", 1, 2) & (2**31 - 1)
