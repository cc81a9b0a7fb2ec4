"""Turn result rows into a tournament summary: W/D/L with intervals, Elo, SPRT, Bradley–Terry.

Input rows are the ``outcome == "played"`` lines of a results file; the summary is a plain
JSON-able dict (the ``--json`` line and ``summary.json``).

An SPRT still inside its bounds is ``continue`` while planned games remain and ``undecided`` once every
planned game is played (:data:`UNDECIDED`: the budget is spent; a larger ``--matches`` continues the test).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from evaltk.envs.doom_inputs import BOT_INPUTS, DoomInputs
from evaltk.tournament import ratings
from evaltk.tournament.formats import TournamentConfig, agent_slots, gauntlet_outcome, score

#: The SPRT decision of a test whose planned games are all played while its LLR stays inside the bounds.
UNDECIDED = "undecided"
#: How reports word each SPRT decision.
SPRT_WORDS: dict[str, str] = {"H1": "H1 accepted (at least elo1)", "H0": "H0 accepted (at most elo0)",
                              "continue": "continue (games remain)", UNDECIDED: "budget spent, undecided"}


def wdl_block(scores: Sequence[float]) -> dict[str, Any]:
    """W/D/L counts of per-game scores, with Wilson 95 % intervals of each rate and an Elo estimate."""
    wins = sum(1 for s in scores if s == 1.0)
    draws = sum(1 for s in scores if s == 0.5)
    losses = sum(1 for s in scores if s == 0.0)
    n = wins + draws + losses
    est = ratings.elo_estimate([losses, draws, wins])
    return {"matches": n, "wins": wins, "draws": draws, "losses": losses,
            "win_rate": wins / n if n else None, "win_interval": list(ratings.wilson_interval(wins, n)),
            "draw_interval": list(ratings.wilson_interval(draws, n)),
            "loss_interval": list(ratings.wilson_interval(losses, n)),
            "score": est.score, "elo": est.elo, "elo_ci": [est.ci_low, est.ci_high], "los": est.los}


def _pair_scores(rows: Sequence[dict[str, Any]], a: str, b: str) -> tuple[list[float], list[float]]:
    """Per-game scores of ``a`` vs ``b`` in match order, and pair scores of complete game pairs."""
    games: list[tuple[str, float, int | None]] = []
    for row in rows:
        slots = agent_slots(row)
        if a in slots and b in slots:
            games.append((row["match_id"], score(row, slots[a], slots[b]), row["spec"].get("pair")))
    games.sort()
    by_pair: dict[tuple[str, int], list[float]] = {}
    for match_id, s, pair in games:
        if pair is not None:
            by_pair.setdefault((match_id.split("-")[0], pair), []).append(s)
    pair_scores = [sum(v) for v in by_pair.values() if len(v) == 2]
    return [g[1] for g in games], pair_scores


def sprt_state(config: TournamentConfig, rows: Sequence[dict[str, Any]]) -> ratings.SprtResult | None:
    """Return the current SPRT of ``config.agents[0]`` vs ``[1]`` (None without SPRT settings)."""
    if config.sprt is None:
        return None
    games, pairs = _pair_scores(rows, config.agents[0], config.agents[1])
    s = config.sprt
    counts = ratings.pentanomial(pairs) if s.pairs else [games.count(0.0), games.count(0.5), games.count(1.0)]
    return ratings.sprt(counts, elo0=s.elo0, elo1=s.elo1, alpha=s.alpha, beta=s.beta)


def _mean(values: Sequence[float]) -> float | None:
    return float(np.mean(values)) if values else None


def summarise(config: TournamentConfig, rows: Sequence[dict[str, Any]], *, results_path: str,
              num_resamples: int = 200, inputs: Mapping[str, DoomInputs] | None = None) -> dict[str, Any]:
    """Summary dict of a tournament from its played rows (see docs/tournament.md for the fields).

    ``inputs``: each agent's declared inputs (:func:`evaltk.tournament.rules.check_agents`); with them the
    summary's ``inputs`` maps every agent and every bot of ``rows`` to its inputs, and Bradley–Terry rows carry
    their participant's (as text).
    """
    out: dict[str, Any] = {"format": config.format, "agents": list(config.agents), "results": results_path,
                           "matches_planned": config.matches * max(1, math.comb(len(config.agents), 2)),
                           "matches_played": len(rows),
                           "duration_tics_mean": _mean([r["duration_tics"] for r in rows])}
    seen: dict[str, DoomInputs] = {}
    if inputs is not None:
        bots = sorted({p["agent"] for r in rows for p in r["participants"] if p["kind"] == "bot"})
        seen = {**{a: inputs[a] for a in config.agents}, **{b: BOT_INPUTS for b in bots}}
        out["inputs"] = {ref: i.to_json() for ref, i in seen.items()}
    if config.format == "gauntlet":
        out.update(wdl_block([gauntlet_outcome(r) for r in rows]))
        agent_parts = [next(p for p in r["participants"] if p["kind"] == "agent") for r in rows]
        out["agent_frags_mean"] = _mean([p["frags"] for p in agent_parts])
        out["agent_deaths_mean"] = _mean([p["deaths"] for p in agent_parts])
        out["bot_frags_mean"] = _mean([p["frags"] for r in rows for p in r["participants"] if p["kind"] == "bot"])
        out["opponent"] = f"{config.bots} bot(s)"
        return out
    pairs_out = []
    for a, b in itertools.combinations(config.agents, 2):
        games, pair_scores = _pair_scores(rows, a, b)
        block = {"a": a, "b": b, **wdl_block(games), "pentanomial": ratings.pentanomial(pair_scores)}
        if pair_scores:
            est = ratings.elo_estimate(block["pentanomial"], ratings.PENTANOMIAL_SCORES)
            block["elo_pairs"] = est.elo
            block["elo_pairs_ci"] = [est.ci_low, est.ci_high]
            block["los_pairs"] = est.los
        pairs_out.append(block)
    out["pairs"] = pairs_out
    if config.format == "match":
        out.update({k: pairs_out[0][k] for k in ("wins", "draws", "losses", "win_interval", "draw_interval",
                                                  "loss_interval", "elo", "elo_ci", "los", "pentanomial")})
        state = sprt_state(config, rows)
        if state is not None:
            spent = len(rows) >= out["matches_planned"]
            decision = UNDECIDED if state.decision == "continue" and spent else state.decision
            out["sprt"] = {"llr": state.llr, "lower": state.lower, "upper": state.upper, "decision": decision,
                           "budget_spent": spent, "elo0": state.elo0, "elo1": state.elo1, "alpha": state.alpha,
                           "beta": state.beta, "model": state.model}
    if rows:
        out["bradley_terry"] = _league(config, rows, num_resamples)
        for r in out["bradley_terry"] if seen else ():
            r["inputs"] = seen[r["agent"]].describe()
    return out


def _league(config: TournamentConfig, rows: Sequence[dict[str, Any]], num_resamples: int) -> list[dict[str, Any]]:
    """Bradley–Terry over every participant (agents and bots), each match split into its pairs."""
    names = list(config.agents) + sorted({p["agent"] for r in rows for p in r["participants"] if p["kind"] == "bot"})
    index = {n: i for i, n in enumerate(names)}
    groups = []
    for row in rows:
        parts = row["participants"]
        comps = [(index[x["agent"]], index[y["agent"]],
                  1.0 if x["frags"] > y["frags"] else 0.5 if x["frags"] == y["frags"] else 0.0)
                 for x, y in itertools.combinations(parts, 2)]
        groups.append(np.asarray(comps, dtype=np.float64))
    rng = np.random.default_rng([config.seed, 7])
    r, lo, hi = ratings.bradley_terry_bootstrap(groups, len(names), rng, num_resamples=num_resamples)
    order = np.argsort(-r)
    return [{"agent": names[k], "rating": float(r[k]), "ci": [float(lo[k]), float(hi[k])]} for k in order]
