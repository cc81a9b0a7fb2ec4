"""Atari on the CPU, equal work only: gpu_env next to ale-py, alternated in the same run.

Three settings (``--setting``, default all), each a table with one row per game:

``raw``: raw RGB frames. gpu_env ``AtariBatch`` (cpu backend, ``--num-envs`` envs, ``--threads`` threads,
    frameskip 1, sticky actions 0.25, 108,000-frame truncation): per batched step ``act`` +
    ``get_screen_rgb`` (into a caller buffer where the method takes ``out=``) + ``game_over``, and
    ``reset_game`` of the envs whose game is over. Reference: ``ale_py.AtariVectorEnv`` with the same
    number of envs and threads, ``obs_type`` RGB at the full screen size (no resize, no grayscale),
    ``stack_num=1``, no max-pool, frameskip 1, ``repeat_action_probability=0.25``, ``noop_max=0``,
    no fire reset, no episodic life, no reward clipping, the same truncation, ``autoreset_mode="SameStep"``
    (its reset of an env whose game is over is ``reset_game`` in the same step, as ours).
``dqn``: the DQN setting. ``gpu_env.make_vec`` with its default numpy output (:data:`MAKE_VEC_OUTPUT`;
    84x84 grayscale, frameskip 4 with max-pool of the last two frames, stack 4, up to 30 no-op starts,
    sticky 0.25, NEXT_STEP autoreset) against
    ``AtariVectorEnv`` with the same settings (fire reset, episodic life and reward clipping off).
``single``: one environment on one thread. gpu_env ``AtariBatch`` with 1 env and 1 thread against one
    ``ale_py.ALEInterface`` in a Python loop; both: frameskip 1, sticky 0.25, ``act`` + RGB screen into
    a buffer + ``game_over``, ``reset_game`` at game over (as ALE users do; ALE does not emulate a game
    that is over).

All contenders take the same random minimal-set actions (one pre-drawn plan per game). Every env is
built once per game, warmed up, and then the two sides are timed in turns (ours, theirs, ours, theirs,
... ``--rounds`` times; an idle ALE vector env uses no CPU). Tables give medians of frames per wall
second and per process CPU second (all threads), their ratios, the geometric mean over games, the
machine's cores and load average before and after, and every remaining difference as a note.
Frames = env steps x frameskip; frames spent inside resets are not counted on either side.

The drop-in tables (``benchmarks/atari_dropins.py``: ``envpool``, ``envpool_async``, ``ale_vector``,
``dqn_envpool``, ``sb3``, ``cleanrl``) compare each gpu_env drop-in with the library it replaces the same way.

Usage: python benchmarks/atari_cpu.py [--quick] [--setting raw dqn single envpool ...] [--games pong ...] [--json]
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # this checkout first (not an installed copy): a run measures the code beside it
    sys.path.insert(0, str(ROOT))

GAMES = ("pong", "breakout", "space_invaders", "ms_pacman", "seaquest")
def _dropins() -> Any:
    """``benchmarks/atari_dropins.py``, the drop-in tables (imported by path: benchmarks/ is not a package)."""
    import importlib.util
    import sys
    from pathlib import Path

    spec = importlib.util.spec_from_file_location("atari_dropins", Path(__file__).with_name("atari_dropins.py"))
    assert spec is not None
    assert spec.loader is not None
    module = sys.modules.setdefault("atari_dropins", importlib.util.module_from_spec(spec))
    if not hasattr(module, "BUILDERS"):
        spec.loader.exec_module(module)
    return module


SETTINGS = ("raw", "dqn", "single", *_dropins().SETTINGS)
STICKY = 0.25
MAX_FRAMES = 108_000
DQN_SKIP = 4
MAKE_VEC_OUTPUT = "numpy"  # make_vec's obs_format in the DQN tables: numpy, as AtariVectorEnv and EnvPool return


@dataclass(frozen=True)
class Timing:
    """One timed run: frames emulated, wall seconds, process CPU seconds."""

    frames: int
    wall: float
    cpu: float


@dataclass
class Row:
    """Medians for one game of one setting (frames/s on the wall clock and per process CPU second)."""

    game: str
    ours_fps: float
    ref_fps: float
    ours_fps_cpu: float
    ref_fps_cpu: float
    runs: int

    @property
    def ratio(self) -> float:
        """Ours / reference, wall clock."""
        return self.ours_fps / self.ref_fps

    @property
    def ratio_cpu(self) -> float:
        """Ours / reference, per CPU second."""
        return self.ours_fps_cpu / self.ref_fps_cpu


@dataclass
class Section:
    """One setting's table: what each side does, its rows and the remaining differences."""

    setting: str
    ours: str
    ref: str
    work: str
    rows: list[Row] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def geomean(self, cpu: bool = False) -> float:
        """Geometric mean over games of the wall (or CPU) ratio."""
        ratios = [r.ratio_cpu if cpu else r.ratio for r in self.rows]
        return float(np.exp(np.mean(np.log(ratios)))) if ratios else float("nan")


class Contender:
    """A side of a comparison, built once: ``run(steps)`` steps it and returns the frames emulated."""

    def run(self, steps: int) -> int:
        """Step ``steps`` times along the action plan; returns frames emulated."""
        raise NotImplementedError

    def close(self) -> None:
        """Release the emulator."""

    def timed(self, steps: int) -> Timing:
        """``run(steps)`` under the wall clock and the process CPU clock."""
        w0, c0 = time.perf_counter(), time.process_time()
        frames = self.run(steps)
        return Timing(frames, time.perf_counter() - w0, time.process_time() - c0)


def takes_out(method: Callable[..., Any]) -> bool:
    """Whether a screen method accepts a caller-provided ``out=`` buffer."""
    try:
        return "out" in inspect.signature(method).parameters
    except (TypeError, ValueError):
        return False


def _ale_rom(game: str) -> str:
    from ale_py import roms

    return str(roms.get_rom_path(game))


def _plan(rng: np.random.Generator, n_actions: int, steps: int, num_envs: int) -> np.ndarray:
    """Random minimal-set action indices, int64[steps, num_envs]."""
    return rng.integers(0, n_actions, size=(steps, num_envs), dtype=np.int64)


class GpuEnvBatch(Contender):
    """gpu_env ``AtariBatch``: act + RGB screen + game_over, ``reset_game`` where the game is over."""

    def __init__(self, game: str, num_envs: int, threads: int) -> None:
        from gpu_env import AtariBatch

        self.batch = AtariBatch(game, num_envs, seeds=list(range(num_envs)), repeat_action_probability=STICKY,
                                frameskip=1, max_num_frames_per_episode=MAX_FRAMES, num_threads=threads)
        self.n_actions = len(self.batch.minimal_action_set())
        self.plan = np.zeros((1, num_envs), np.int64)
        self.num_envs = num_envs
        self.uses_out = takes_out(self.batch.get_screen_rgb)
        height, width = self.batch.screen_shape
        self._buf = np.empty((num_envs, height, width, 3), np.uint8)
        self._t = 0

    def set_plan(self, plan: np.ndarray) -> None:
        """Take the minimal-set action indices ``plan`` (int64[T, N]) as full-set indices, as AtariBatch acts."""
        self.plan = self.batch.minimal_action_set()[plan]

    def _screen(self) -> object:
        if self.uses_out:
            return self.batch.get_screen_rgb(out=self._buf)
        return self.batch.get_screen_rgb()

    def run(self, steps: int) -> int:
        """See :meth:`Contender.run`."""
        batch, plan = self.batch, self.plan
        for _ in range(steps):
            batch.act(plan[self._t % len(plan)])
            self._t += 1
            self._screen()
            over = batch.game_over()
            if over.any():
                batch.reset_game(over)
        return steps * self.num_envs


class AleVector(Contender):
    """``ale_py.AtariVectorEnv`` stepped along the plan (minimal-set indices, as it takes them).

    The stepping is the drop-in tables' ``Stepper`` (``benchmarks/atari_dropins.py``): ``env.step`` per row.
    """

    def __init__(self, game: str, num_envs: int, threads: int, plan: np.ndarray, frames_per_step: int,
                 **settings: Any) -> None:
        from ale_py.vector_env import AtariVectorEnv

        env = AtariVectorEnv(game, num_envs, num_threads=threads, repeat_action_probability=STICKY,
                             max_num_frames_per_episode=MAX_FRAMES, use_fire_reset=False,
                             episodic_life=False, reward_clipping=False, **settings)
        env.reset()  # unseeded: a seeded reset reloads every ROM (~0.2 s an env), and timing needs no seed
        self.stepper = _dropins().Stepper(env, plan, frames_per_step)

    def run(self, steps: int) -> int:
        """See :meth:`Contender.run`."""
        return int(self.stepper.run(steps))

    def close(self) -> None:
        """See :meth:`Contender.close`."""
        self.stepper.close()


class GpuEnvVec(Contender):
    """``gpu_env.make_vec`` in the DQN setting (``obs_format=MAKE_VEC_OUTPUT``), stepped along the plan."""

    def __init__(self, game: str, num_envs: int, threads: int) -> None:
        from gpu_env.make import make_vec

        env_id = "ALE/" + game.title().replace("_", "") + "-v5"
        self.env = make_vec(env_id, num_envs, backend="cpu", obs_format=MAKE_VEC_OUTPUT, num_threads=threads,
                            frameskip=1,
                            repeat_action_probability=STICKY, max_num_frames_per_episode=MAX_FRAMES, noop_max=30,
                            frame_skip=DQN_SKIP, screen_size=84, grayscale_obs=True, stack_size=4)
        self.env.reset(seed=0)
        self.n_actions = len(self.env.batch.minimal_action_set())
        self.plan, self.num_envs, self._t = np.zeros((1, num_envs), np.int64), num_envs, 0

    def run(self, steps: int) -> int:
        """See :meth:`Contender.run`."""
        env, plan = self.env, self.plan
        for _ in range(steps):
            env.step(plan[self._t % len(plan)])
            self._t += 1
        return steps * self.num_envs * DQN_SKIP

    def close(self) -> None:
        """See :meth:`Contender.close`."""
        self.env.close()


class SingleAle(Contender):
    """One ``ale_py.ALEInterface``: act + ``getScreenRGB(buffer)`` + game_over, ``reset_game`` at game over."""

    def __init__(self, game: str, plan: np.ndarray) -> None:
        import ale_py

        ale = ale_py.ALEInterface()
        ale.setLoggerMode(ale_py.LoggerMode.Error)
        ale.setInt("random_seed", 0)
        ale.setFloat("repeat_action_probability", STICKY)
        ale.setInt("frame_skip", 1)
        ale.setInt("max_num_frames_per_episode", MAX_FRAMES)
        ale.loadROM(_ale_rom(game))
        minimal = ale.getMinimalActionSet()
        self.ale = ale
        self.plan = [minimal[int(i)] for i in plan[:, 0]]
        height, width = ale.getScreenDims()
        self._buf = np.empty((height, width, 3), np.uint8)
        self._t = 0

    def run(self, steps: int) -> int:
        """See :meth:`Contender.run` (one step = one frame)."""
        ale, plan, buf, n = self.ale, self.plan, self._buf, len(self.plan)
        for _ in range(steps):
            ale.act(plan[self._t % n])
            self._t += 1
            ale.getScreenRGB(buf)
            if ale.game_over():
                ale.reset_game()
        return steps


def _compare(ours: Contender, ref: Contender, steps: int, rounds: int, warmup: int) -> tuple[list[Timing], ...]:
    """Warm both up, then time them in turns: ours, ref, ours, ref, ..."""
    ours.run(warmup)
    ref.run(warmup)
    mine: list[Timing] = []
    theirs: list[Timing] = []
    for _ in range(rounds):
        mine.append(ours.timed(steps))
        theirs.append(ref.timed(steps))
    return mine, theirs


def _row(game: str, mine: list[Timing], theirs: list[Timing]) -> Row:
    def med(ts: list[Timing], cpu: bool) -> float:
        return statistics.median(t.frames / max(t.cpu if cpu else t.wall, 1e-9) for t in ts)

    return Row(game, med(mine, False), med(theirs, False), med(mine, True), med(theirs, True), len(mine))


def raw_section(games: list[str], args: argparse.Namespace) -> Section:
    """Measure the raw-RGB-frames table (see the module docstring)."""
    n, threads = args.num_envs, args.threads
    sec = Section("raw", f"gpu_env AtariBatch ({n} envs, {threads} threads)",
                  f"ale_py.AtariVectorEnv ({n} envs, {threads} threads)",
                  "raw RGB frames, frameskip 1, sticky 0.25, reset_game at game over / 108,000 frames")
    uses_out = False
    for game in games:
        rng = np.random.default_rng([0, len(game)])
        ours = GpuEnvBatch(game, n, threads)
        plan = _plan(rng, ours.n_actions, args.steps * 4, n)
        ours.set_plan(plan)
        ref = AleVector(game, n, threads, plan, 1, frameskip=1, img_height=ours.batch.screen_shape[0], img_width=160,
                        grayscale=False, stack_num=1, maxpool=False, noop_max=0, autoreset_mode="SameStep")
        try:
            mine, theirs = _compare(ours, ref, args.steps, args.rounds, args.warmup)
        finally:
            ref.close()
        uses_out = ours.uses_out
        sec.rows.append(_row(game, mine, theirs))
        _progress(sec, game)
    sec.notes += [
        "gpu_env writes the RGB screen " + ("into a caller buffer (get_screen_rgb(out=...))" if uses_out else
                                            "into a new array per step (this build's get_screen_rgb has no out=)"),
        "AtariVectorEnv copies each RGB frame twice more (its frame buffer -> its stack -> the returned array)",
        "AtariVectorEnv's step also returns lives, frame numbers and env ids; gpu_env's loop asks game_over only",
        "both: ALE reset_game only at reset (noop_max=0, no fire reset, no ROM reload, unseeded)",
    ]
    return sec


def dqn_section(games: list[str], args: argparse.Namespace) -> Section:
    """Measure the DQN-setting table (see the module docstring)."""
    n, threads = args.num_envs, args.threads
    sec = Section("dqn", f"gpu_env make_vec ({n} envs, {threads} threads)",
                  f"ale_py.AtariVectorEnv ({n} envs, {threads} threads)",
                  "84x84 gray, frameskip 4 + max-pool, stack 4, noop 30, sticky 0.25, NEXT_STEP autoreset")
    for game in games:
        rng = np.random.default_rng([1, len(game)])
        ours = GpuEnvVec(game, n, threads)
        ours.plan = _plan(rng, ours.n_actions, args.dqn_steps * 4, n)
        ref = AleVector(game, n, threads, ours.plan, DQN_SKIP, frameskip=DQN_SKIP, img_height=84, img_width=84,
                        grayscale=True, stack_num=4, maxpool=True, noop_max=30)
        try:
            mine, theirs = _compare(ours, ref, args.dqn_steps, args.rounds, args.warmup)
        finally:
            ref.close()
            ours.close()
        sec.rows.append(_row(game, mine, theirs))
        _progress(sec, game)
    sec.notes += [
        "no-op starts: gymnasium's AtariPreprocessing (gpu_env) draws 1..30 no-ops, AtariVectorEnv 0..29",
        f"both return numpy arrays (gpu_env: obs_format={MAKE_VEC_OUTPUT!r}, gymnasium's types); gpu_env also "
        "returns RecordEpisodeStatistics-style episode info",
    ]
    return sec


def single_section(games: list[str], args: argparse.Namespace) -> Section:
    """Measure the one-env, one-thread table (see the module docstring)."""
    sec = Section("single", "gpu_env AtariBatch (1 env, 1 thread)", "ale_py.ALEInterface (1x, Python loop)",
                  "1 env, frameskip 1, sticky 0.25, act + RGB screen + game_over, reset_game at game over")
    uses_out = False
    for game in games:
        rng = np.random.default_rng([2, len(game)])
        ours = GpuEnvBatch(game, 1, 1)
        plan = _plan(rng, ours.n_actions, args.single_frames, 1)
        ours.set_plan(plan)
        ref = SingleAle(game, plan)
        mine, theirs = _compare(ours, ref, args.single_frames, args.rounds, args.warmup)
        uses_out = ours.uses_out
        sec.rows.append(_row(game, mine, theirs))
        _progress(sec, game)
    sec.notes += [
        "per frame gpu_env goes through its batch API (argument checks, masks, one-element arrays); "
        "ALEInterface is one pybind11 call",
        "gpu_env's RGB screen " + ("goes into a caller buffer (out=)" if uses_out else "is a new array per step"),
    ]
    return sec


def _progress(sec: Section, game: str) -> None:
    r = sec.rows[-1]
    print(f"  [{sec.setting}] {game}: {r.ours_fps:,.0f} vs {r.ref_fps:,.0f} frames/s ({r.ratio:.2f}x)", flush=True)


def _load() -> list[float] | None:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


def machine() -> dict[str, Any]:
    """Cores, CPU model and package versions of this run."""
    import ale_py

    model = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            model = next((line.split(":", 1)[1].strip() for line in fh if line.startswith("model name")), model)
    except OSError:
        pass
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return {"cores": cores, "cpu": model, "python": platform.python_version(), "ale_py": ale_py.__version__,
            "numpy": np.__version__}


def markdown(sections: list[Section], meta: dict[str, Any]) -> str:
    """Format the run as Markdown: a header with machine and load, one table per setting, notes."""
    out = [f"Machine: {meta['machine']['cores']} cores ({meta['machine']['cpu']}), ale-py {meta['machine']['ale_py']}; "
           f"load average (1/5/15 min) before {meta['load_before']}, after {meta['load_after']}; "
           f"{meta['rounds']} alternated rounds per game, medians; {meta['started']}", ""]
    for sec in sections:
        out += [f"### {sec.setting}: {sec.work}", "",
                f"| game | {sec.ours} frames/s | {sec.ref} frames/s | ratio | ours frames/CPU-s | "
                "reference frames/CPU-s | ratio (CPU) |", "|---|---:|---:|---:|---:|---:|---:|"]
        out += [f"| {r.game} | {r.ours_fps:,.0f} | {r.ref_fps:,.0f} | {r.ratio:.2f} | {r.ours_fps_cpu:,.0f} | "
                f"{r.ref_fps_cpu:,.0f} | {r.ratio_cpu:.2f} |" for r in sec.rows]
        out += [f"| **geometric mean** | | | **{sec.geomean():.2f}** | | | **{sec.geomean(cpu=True):.2f}** |", ""]
        out += [f"- note: {n}" for n in sec.notes] + [""]
    return "\n".join(out)


QUICK = {"rounds": 3, "steps": 100, "dqn_steps": 40, "single_frames": 2000, "warmup": 10}
FULL = {"rounds": 5, "steps": 300, "dqn_steps": 150, "single_frames": 6000, "warmup": 20}


def parse(argv: list[str] | None) -> argparse.Namespace:
    """Command line; ``--quick`` picks shorter defaults, explicit options override them."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--setting", nargs="+", choices=SETTINGS, default=list(SETTINGS), help="tables to run")
    parser.add_argument("--games", nargs="+", default=list(GAMES))
    parser.add_argument("--num-envs", type=int, default=32, help="envs of the batched rows (both sides)")
    parser.add_argument("--threads", type=int, default=2, help="threads of the batched rows (both sides)")
    parser.add_argument("--quick", action="store_true", help=f"short run: {QUICK}")
    parser.add_argument("--rounds", "--repeats", dest="rounds", type=int, help="alternated timed runs per side, game")
    parser.add_argument("--steps", type=int, help="batched steps per timed raw run")
    parser.add_argument("--dqn-steps", type=int, help="batched steps per timed DQN run")
    parser.add_argument("--single-frames", type=int, help="frames per timed single-env run")
    parser.add_argument("--warmup", type=int, help="untimed steps per side before the first round")
    parser.add_argument("--json", action="store_true", help="print one JSON object of the run as the last line")
    args = parser.parse_args(argv)
    for key, value in (QUICK if args.quick else FULL).items():
        if getattr(args, key) is None:
            setattr(args, key, value)
    for key in ("num_envs", "threads", "rounds", "steps", "dqn_steps", "single_frames"):
        if getattr(args, key) < 1:
            parser.error(f"--{key.replace('_', '-')} must be >= 1, got {getattr(args, key)}")
    from ale_py import roms

    unknown = sorted(set(args.games) - set(roms.get_all_rom_ids()))
    if unknown:
        parser.error(f"unknown game(s) {', '.join(unknown)}: use ale-py ROM ids such as {', '.join(GAMES)}")
    return args


def main(argv: list[str] | None = None) -> int:
    """Run the chosen settings and print the Markdown tables (and the JSON with ``--json``)."""
    args = parse(argv)
    meta: dict[str, Any] = {"started": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "machine": machine(),
                            "load_before": _load(), "rounds": args.rounds, "num_envs": args.num_envs,
                            "threads": args.threads, "steps": args.steps, "dqn_steps": args.dqn_steps,
                            "single_frames": args.single_frames}
    builders = {"raw": raw_section, "dqn": dqn_section, "single": single_section}
    this = sys.modules[__name__]
    sections = [builders[s](args.games, args) if s in builders else _dropins().BUILDERS[s](args.games, args, this)
                for s in SETTINGS if s in args.setting]
    meta["load_after"] = _load()
    print(markdown(sections, meta))
    if args.json:
        payload = {**meta, "sections": [
            {**{k: v for k, v in asdict(s).items() if k != "rows"},
             "rows": [{**asdict(r), "ratio": r.ratio, "ratio_cpu": r.ratio_cpu} for r in s.rows],
             "geomean": s.geomean(), "geomean_cpu": s.geomean(cpu=True)} for s in sections]}
        print(json.dumps(payload))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
