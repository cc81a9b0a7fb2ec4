"""Tournament match lists, manifests, summaries and reports on synthetic result rows (no engine runs)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from evaltk.envs.doom_inputs import BOT_INPUTS, DoomInputs
from evaltk.errors import TournamentError
from evaltk.tournament import formats, report, summary
from evaltk.tournament.formats import SprtConfig, TournamentConfig


def _row(match_id: str, frags: dict[str, int], *, bots: dict[str, int] | None = None, pair: int | None = None,
         agents: tuple[str, ...] = ("A", "B")) -> dict[str, Any]:
    parts: list[dict[str, Any]] = [{"name": f"A{i}", "kind": "agent", "agent": a, "frags": frags[a], "deaths": 0,
                                    "slot": i} for i, a in enumerate(agents)]
    for name, f in (bots or {}).items():
        parts.append({"name": name, "kind": "bot", "agent": f"bot:{name}", "frags": f, "deaths": None})
    return {"match_id": match_id, "attempt": 1, "outcome": "played", "participants": parts, "duration_tics": 2100,
            "spec": {"pair": pair, "map": "map01", "bots": list(bots or {})}, "demo": None}


@pytest.mark.vizdoom
def test_gauntlet_match_list_is_deterministic_with_distinct_bots() -> None:
    cfg = TournamentConfig(format="gauntlet", agents=("random",), matches=5, bots=3, maps=("map01", "map02"), seed=3)
    a, b = formats.match_list(cfg), formats.match_list(cfg)
    assert a == b
    assert [s.match_id for s in a] == [f"g{k:05d}" for k in range(5)]
    assert all(len(set(s.bots)) == 3 for s in a)
    assert [s.map for s in a] == ["map01", "map02", "map01", "map02", "map01"]
    assert len({s.seed for s in a}) == 5


@pytest.mark.vizdoom
def test_pairs_share_seed_and_swap_slots() -> None:
    cfg = TournamentConfig(format="round-robin", agents=("a", "b", "c"), matches=4, seed=1)
    specs = formats.match_list(cfg)
    assert len(specs) == 3 * 4
    by_id = {s.match_id: s for s in specs}
    first, second = by_id["p00-00000"], by_id["p00-00001"]
    assert first.seed == second.seed
    assert first.pair == second.pair == 0
    assert first.agents == ("a", "b")
    assert second.agents == ("b", "a")
    assert by_id["p00-00002"].seed != first.seed


@pytest.mark.vizdoom
@pytest.mark.parametrize(("kwargs", "message"), [
    ({"format": "gauntlet", "agents": ("random",), "matches": 3, "bots": 0}, "--bots 1"),
    ({"format": "match", "agents": ("a",), "matches": 3}, "takes 2 agent"),
    ({"format": "match", "agents": ("a", "a"), "matches": 3}, "repeat"),
    ({"format": "gauntlet", "agents": ("r",), "matches": 3, "bots": 1, "maps": ("multi_duel",)}, "not supported"),
    ({"format": "gauntlet", "agents": ("r",), "matches": 3, "bots": 1, "bot_names": ("Nobody",)}, "unknown bot"),
    ({"format": "match", "agents": ("a", "b"), "matches": 3, "sprt": SprtConfig(pairs=True)}, "even"),
    ({"format": "match", "agents": ("a", "b"), "matches": 4, "sprt": SprtConfig(elo0=5, elo1=5)}, "SPRT"),
])
def test_bad_configs_are_named(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(TournamentError, match=message):
        TournamentConfig(**kwargs).check()


def test_manifest_refuses_other_settings_and_grows_with_matches(tmp_path: Path) -> None:
    cfg = TournamentConfig(format="gauntlet", agents=("random",), matches=3, bots=1)
    assert formats.prepare_out(cfg, tmp_path) is None
    assert formats.prepare_out(cfg, tmp_path) is None  # same settings: resume
    with pytest.raises(TournamentError, match=r"other settings \(bots differ\)"):
        formats.prepare_out(TournamentConfig(format="gauntlet", agents=("random",), matches=3, bots=2), tmp_path)
    more = TournamentConfig(format="gauntlet", agents=("random",), matches=5, bots=1)
    assert formats.prepare_out(more, tmp_path) == 3  # a larger --matches extends the tournament
    assert json.loads((tmp_path / "tournament.json").read_text()) == json.loads(json.dumps(more.to_json()))
    with pytest.raises(TournamentError, match="--matches 5; --matches 3 is fewer"):
        formats.prepare_out(cfg, tmp_path)


def test_a_larger_matches_keeps_the_match_list_and_the_default_directory() -> None:
    for fmt, agents in (("gauntlet", ("random",)), ("round-robin", ("A", "B", "C")), ("match", ("A", "B"))):
        small = TournamentConfig(format=fmt, agents=agents, matches=4, bots=1, seed=3)
        large = TournamentConfig(format=fmt, agents=agents, matches=10, bots=1, seed=3)
        assert formats.match_list(large)[:len(formats.match_list(small))] == formats.match_list(small)
        assert small.digest() == large.digest()
    assert TournamentConfig(format="gauntlet", agents=("random",), matches=4, bots=1, seed=4).digest() != \
        TournamentConfig(format="gauntlet", agents=("random",), matches=4, bots=1, seed=3).digest()


def test_gauntlet_summary_counts_and_intervals() -> None:
    cfg = TournamentConfig(format="gauntlet", agents=("A",), matches=4, bots=1)
    rows = [_row("g0", {"A": 3}, bots={"Rambo": 1}, agents=("A",)),
            _row("g1", {"A": 0}, bots={"Rambo": 0}, agents=("A",)),
            _row("g2", {"A": -2}, bots={"Rambo": 0}, agents=("A",)),
            _row("g3", {"A": 1}, bots={"Rambo": 0}, agents=("A",))]
    out = summary.summarise(cfg, rows, results_path="r.jsonl", num_resamples=20)
    assert (out["wins"], out["draws"], out["losses"]) == (2, 1, 1)
    assert out["wins"] + out["draws"] + out["losses"] == out["matches_played"] == 4
    assert out["win_interval"][0] < 0.5 < out["win_interval"][1]
    assert out["agent_frags_mean"] == pytest.approx(0.5)
    assert "bradley_terry" not in out  # a gauntlet rates the agent against the bot pool (elo above)


def test_match_summary_pentanomial_and_sprt() -> None:
    cfg = TournamentConfig(format="match", agents=("A", "B"), matches=8,
                           sprt=SprtConfig(elo0=0, elo1=100, pairs=True))
    rows = []
    for p in range(3):
        rows.append(_row(f"p00-{2 * p:05d}", {"A": 2, "B": 0}, pair=p))
        rows.append(_row(f"p00-{2 * p + 1:05d}", {"A": 1, "B": 1}, pair=p, agents=("B", "A")))
    rows.append(_row("p00-00006", {"A": 0, "B": 5}, pair=3))  # an incomplete pair is left out of the pentanomial
    out = summary.summarise(cfg, rows, results_path="r.jsonl", num_resamples=20)
    assert (out["wins"], out["draws"], out["losses"]) == (3, 3, 1)
    assert out["pentanomial"] == [0, 0, 0, 3, 0]
    assert out["sprt"]["model"] == "pentanomial"
    assert out["sprt"]["decision"] == "continue"
    assert not out["sprt"]["budget_spent"]
    md = report.markdown(out)
    assert "SPRT (pentanomial" in md
    assert "**continue (games remain)**" in md
    assert "| wins | 3 |" in md


def test_an_sprt_at_its_budget_says_budget_spent_undecided() -> None:
    cfg = TournamentConfig(format="match", agents=("A", "B"), matches=2, sprt=SprtConfig(elo0=0, elo1=300))
    rows = [_row("p00-00000", {"A": 2, "B": 0}, pair=0), _row("p00-00001", {"A": 1, "B": 0}, pair=0, agents=("B", "A"))]
    out = summary.summarise(cfg, rows, results_path="r.jsonl", num_resamples=20)
    assert (out["sprt"]["decision"], out["sprt"]["budget_spent"]) == ("undecided", True)
    md = report.markdown(out)
    assert "→ **budget spent, undecided** after all 2 planned games (a larger --matches" in md
    assert "**continue" not in md
    decided = TournamentConfig(format="match", agents=("A", "B"), matches=6, sprt=SprtConfig(elo0=0, elo1=300))
    wins = [_row(f"p00-{k:05d}", {"A": 1, "B": 0}, pair=k // 2) for k in range(6)]
    assert summary.summarise(decided, wins, results_path="r.jsonl", num_resamples=20)["sprt"]["decision"] == "H1"


def test_summaries_and_reports_show_every_participants_inputs() -> None:
    cfg = TournamentConfig(format="round-robin", agents=("A", "B"), matches=2, bots=1)
    rows = [_row("p00-00000", {"A": 2, "B": 0}, pair=0, bots={"Rambo": 1}),
            _row("p00-00001", {"A": 0, "B": 1}, pair=0, agents=("B", "A"), bots={"Rambo": 0})]
    screen = DoomInputs(screen="RES_160X120")
    out = summary.summarise(cfg, rows, results_path="r.jsonl", num_resamples=20,
                            inputs={"A": screen, "B": DoomInputs(labels=True)})
    assert out["inputs"] == {"A": screen.to_json(), "B": DoomInputs(labels=True).to_json(),
                             "bot:Rambo": BOT_INPUTS.to_json()}
    assert {r["agent"]: r["inputs"] for r in out["bradley_terry"]} == {
        "A": "screen 160x120", "B": "labels buffer", "bot:Rambo": "engine game state (ViZDoom bot)"}
    out["rules"] = "open"
    md = report.markdown(out)
    assert "## Inputs (rules: open)" in md
    assert "| bot:Rambo | engine game state (ViZDoom bot) |" in md
    assert "| rating | 95% CI | inputs |" in md


def test_reports_are_written(tmp_path: Path) -> None:
    cfg = TournamentConfig(format="round-robin", agents=("A", "B"), matches=2)
    rows = [_row("p00-00000", {"A": 2, "B": 0}, pair=0), _row("p00-00001", {"A": 0, "B": 1}, pair=0, agents=("B", "A"))]
    out = summary.summarise(cfg, rows, results_path="r.jsonl", num_resamples=20)
    paths = report.write_reports(out, tmp_path)
    assert json.loads(Path(paths["json"]).read_text())["format"] == "round-robin"
    assert Path(paths["png"]).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "Bradley" in Path(paths["markdown"]).read_text()


@pytest.mark.vizdoom
def test_cli_rejects_bad_agents_with_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from evaltk.cli.main import main

    forms = ("pass a built-in (random, scripted; also as builtin:NAME), an evaltk checkpoint directory (with "
             "policy.json), another library's checkpoint (SB3 .zip, Sample Factory run folder or checkpoint_*.pth, "
             "CleanRL .cleanrl_model) or hf://ORG/REPO[@REVISION][/PATH]")
    assert main(["tournament", "gauntlet", "--agent", str(tmp_path / "missing"), "--bots", "1"]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        f"error: agent '{tmp_path / 'missing'}' is not a built-in policy, a file or folder here, or an hf:// location: "
        + forms]
    # A misspelt built-in: the close name, every accepted form; the Hub agent before it is not fetched first.
    assert main(["tournament", "match", "hf://no-such-org/no-such-repo", "scriptd", "--bots", "1"]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        "error: agent 'scriptd' is not a built-in policy, a file or folder here, or an hf:// location: did you mean "
        f"scripted? {forms}"]
    assert main(["tournament", "gauntlet", "--agent", str(tmp_path), "--bots", "1"]) == 2  # a folder, no checkpoint
    assert capsys.readouterr().err.strip().splitlines() == [
        f"error: agent '{tmp_path}' is neither an evaltk checkpoint directory (no policy.json) nor another library's: "
        + forms]
    assert main(["tournament", "match", "random", "random", "--out", str(tmp_path)]) == 2
    assert "repeat" in capsys.readouterr().err
    assert main(["tournament", "match", "hf://no-such-org/no-such-repo", "random", "--concurrency", "0"]) == 2
    assert capsys.readouterr().err.strip() == "error: --concurrency 0 must be at least 1"


def test_verify_demos_without_demos_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from evaltk.cli.main import main

    assert main(["tournament", "verify-demos", str(tmp_path)]) == 2
    assert "no recorded demos" in capsys.readouterr().err


def test_results_file_survives_a_torn_last_line(tmp_path: Path) -> None:
    from evaltk.tournament.scheduler import ResultsFile

    path = tmp_path / "results.jsonl"
    rows = ResultsFile(path)
    rows.append({"match_id": "g0", "outcome": "played"})
    with open(path, "a") as f:
        f.write('{"match_id": "g1", "outc')  # a crash in the middle of a write
    rows.append({"match_id": "g1", "outcome": "void"})
    rows.append({"match_id": "g1", "outcome": "played"})
    assert sorted(rows.played()) == ["g0", "g1"]
    assert rows.void_counts() == {"g1": 1}
