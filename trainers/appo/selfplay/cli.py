"""``evaltk train doom --self-play``: run a population and print its progress and summary.

The options are APPO's (:class:`trainers.appo.config.AppoConfig`, shared by every member) plus
:class:`trainers.appo.selfplay.config.SelfPlayConfig`; ``trainers.appo.cli`` adds both and dispatches here.
"""

from __future__ import annotations

import dataclasses

from evaltk.report.jsonline import emit_json
from trainers.appo.config import AppoConfig
from trainers.appo.selfplay.config import SelfPlayConfig, SelfPlayConfigError
from trainers.common.run import NO_PROCESS_SETTINGS, ProcessSettings


def run_population(cfg: AppoConfig, sp: SelfPlayConfig, *, as_json: bool,
                   process: ProcessSettings = NO_PROCESS_SETTINGS) -> int:
    """Run the population described by ``cfg`` and ``sp``; with ``as_json`` the last line is the summary."""
    if sp.executor == "ray":
        from trainers.appo.selfplay.ray_population import run
    else:
        from trainers.appo.selfplay.runner import run

    if not sp.self_play:
        raise SelfPlayConfigError(f"--population {sp.population} trains by self-play: add --self-play "
                                  "(and --scenario duel)")
    print(f"self-play: scenario {cfg.scenario}, population {sp.population}, opponents {sp.opponent_sampling}, "
          f"pbt every {sp.pbt_period} frames by {sp.pbt_objective}, {sp.concurrency} matches at once of "
          f"{sp.match_minutes:g} min, batch {cfg.batch_size}, out {cfg.out}", flush=True)
    result = run(cfg, sp, log=lambda line: print(line, flush=True), process=process)
    print(f"done: {result.total_frames} frames in {result.seconds:.1f} s ({result.fps:.0f} frames/s), "
          f"{result.matches_played} matches played, {result.matches_voided} voided, {result.pbt_events} PBT events; "
          f"population.json in {result.run_dir}", flush=True)
    if as_json:
        emit_json(dataclasses.asdict(result))
    return 0
