"""CleanRL's PPO Atari scripts, unchanged but for the env lines: gpu_env logs the same episodes.

CleanRL 1.2.0's own ``ppo_atari.py`` and ``ppo_atari_envpool.py`` are fetched from the package
registry (pinned wheel, sha256 checked) into ``build/cleanrl/``. They were written for old gym 0.23, so
each is first ported to gymnasium 1.x by the explicit line replacements below (:data:`PORTS`; each must
match exactly once): that port is the *reference*, run on gymnasium's ``SyncVectorEnv`` over ale-py /
on EnvPool 1.2.5 (``env_type="gymnasium"``). The *drop-in* changes only the lines that create the envs
(:data:`DROP_INS`): ``gpu_env.make_vec(..., preset="cleanrl")`` / ``import gpu_env.envpool as envpool``.

Both run as subprocesses with one torch thread (``OMP_NUM_THREADS=1 MKL_NUM_THREADS=1``), on the CPU,
with the same ``--seed``, ``--torch-deterministic``, no tracking or video; every
``global_step=..., episodic_return=...`` line they print is compared exactly. Exit status 1 when a list
differs. Checkpoint-free; TensorBoard runs go under ``--build-dir``.

Usage: python benchmarks/cleanrl_dropin.py [--script both] [--total-timesteps 50000] [--seed 1]
       [--envpool-path DIR]   (a directory holding EnvPool 1.2.5, e.g. ``pip install envpool==1.2.5 --target DIR``)
"""

from __future__ import annotations

import argparse
import dataclasses
import difflib
import hashlib
import os
import re
import subprocess
import sys
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CLEANRL_VERSION = "1.2.0"
WHEEL = f"cleanrl-{CLEANRL_VERSION}-py3-none-any.whl"
WHEEL_SHA256 = "002f6dac6cd0efb5889cd9096a252da1b4bc98a8f52ccb1f47a7215c18b30369"
SCRIPTS = ("ppo_atari", "ppo_atari_envpool")
DEFAULT_ENV_IDS = {"ppo_atari": "BreakoutNoFrameskip-v4", "ppo_atari_envpool": "Breakout-v5"}
BATCH_SIZE = 8 * 128  # the scripts' --num-envs x --num-steps defaults: steps per PPO update
EPISODE_LINE = re.compile(r"^global_step=(\d+), episodic_return=(\S+)$", re.MULTILINE)
SPS_LINE = re.compile(r"^SPS: (\d+)$", re.MULTILINE)


class PortError(Exception):
    """A line replacement did not match the script exactly once (not CleanRL 1.2.0's text)."""


class FetchError(Exception):
    """CleanRL's wheel could not be fetched from the registry or failed its sha256 check."""


@dataclasses.dataclass(frozen=True)
class Replacement:
    """Replace ``old`` (which must occur exactly once) by ``new``; ``why`` says what it ports."""

    old: str
    new: str
    why: str


def apply_replacements(text: str, replacements: tuple[Replacement, ...], *, name: str) -> str:
    """Apply ``replacements`` in order; raise :class:`PortError` naming the line if one does not match once."""
    for r in replacements:
        count = text.count(r.old)
        if count != 1:
            line = r.old.strip().splitlines()[0] if r.old.strip() else repr(r.old)
            raise PortError(f"{name}: replacement '{r.why}' expects exactly one match of the line {line!r}, "
                            f"found {count}: the script is not CleanRL {CLEANRL_VERSION}'s (check the wheel)")
        text = text.replace(r.old, r.new)
    return text


_STRTOBOOL = '''\
def strtobool(value):  # distutils.util.strtobool (distutils is gone from Python 3.12)
    value = value.lower()
    if value in ("y", "yes", "t", "true", "on", "1"):
        return 1
    if value in ("n", "no", "f", "false", "off", "0"):
        return 0
    raise ValueError(f"invalid truth value {value!r}")
'''
_COMMON = (
    Replacement("from distutils.util import strtobool\n", "", "no distutils"),
    Replacement("\n\ndef parse_args():\n", f"\n\n{_STRTOBOOL}\n\ndef parse_args():\n", "no distutils"),
    Replacement("next_obs, reward, done, info = envs.step(action.cpu().numpy())\n",
                "next_obs, reward, terminations, truncations, info = envs.step(action.cpu().numpy())\n"
                "            done = np.logical_or(terminations, truncations)\n",
                "step returns terminated and truncated"),
)
PORT_PPO_ATARI = (
    Replacement("import gym\n", "import ale_py\nimport gymnasium as gym\n", "gymnasium 1.x"),
    *_COMMON,
    Replacement("next_obs = torch.Tensor(envs.reset()).to(device)\n",
                "next_obs, _ = envs.reset(seed=args.seed)\n    next_obs = torch.Tensor(next_obs).to(device)\n",
                "reset returns (obs, info); it seeds env i with seed + i"),
    Replacement("\n\ndef make_env(", "\n\ngym.register_envs(ale_py)\n\n\ndef make_env(", "register ale-py's ids"),
    Replacement("env = gym.make(env_id)\n",
                'env = gym.make(env_id, render_mode="rgb_array" if capture_video and idx == 0 else None)\n',
                "RecordVideo needs render_mode"),
    Replacement("gym.wrappers.GrayScaleObservation(env)", "gym.wrappers.GrayscaleObservation(env)",
                "gymnasium 1.x name"),
    Replacement("gym.wrappers.FrameStack(env, 4)", "gym.wrappers.FrameStackObservation(env, 4)",
                "gymnasium 1.x name"),
    Replacement("        env.seed(seed)\n", "", "envs are seeded by reset(seed=args.seed): env i gets seed + i"),
    Replacement(
        "            for item in info:\n"
        '                if "episode" in item.keys():\n'
        "                    print(f\"global_step={global_step}, episodic_return={item['episode']['r']}\")\n"
        '                    writer.add_scalar("charts/episodic_return", item["episode"]["r"], global_step)\n'
        '                    writer.add_scalar("charts/episodic_length", item["episode"]["l"], global_step)\n'
        "                    break\n",
        '            if "episode" in info:\n'
        '                for idx in np.flatnonzero(info["_episode"]):\n'
        "                    print(f\"global_step={global_step}, episodic_return={info['episode']['r'][idx]}\")\n"
        '                    writer.add_scalar("charts/episodic_return", info["episode"]["r"][idx], global_step)\n'
        '                    writer.add_scalar("charts/episodic_length", info["episode"]["l"][idx], global_step)\n'
        "                    break\n",
        "vector infos (NEXT_STEP): info['episode'][k][i] where info['_episode'][i]; still the first env only"),
)
PORT_PPO_ATARI_ENVPOOL = (
    Replacement("import gym\n", "import gymnasium as gym\n", "gymnasium 1.x"),
    *_COMMON,
    Replacement("class RecordEpisodeStatistics(gym.Wrapper):\n",
                "class RecordEpisodeStatistics(gym.vector.VectorWrapper):\n",
                "a vector wrapper forwards num_envs and single_*_space"),
    Replacement('        self.num_envs = getattr(env, "num_envs", 1)\n', "", "num_envs comes from the env"),
    Replacement("        observations = super().reset(**kwargs)\n",
                "        observations, infos = super().reset(**kwargs)\n", "reset returns (obs, info)"),
    Replacement("        return observations\n", "        return observations, infos\n", "reset returns (obs, info)"),
    Replacement("        observations, rewards, dones, infos = super().step(action)\n",
                "        observations, rewards, terminations, truncations, infos = super().step(action)\n",
                "step returns terminated and truncated"),
    Replacement("            rewards,\n            dones,\n", "            rewards,\n            terminations,\n"
                "            truncations,\n", "step returns terminated and truncated"),
    Replacement('env_type="gym",', 'env_type="gymnasium",', "EnvPool 1.2.5 has no env_type='gym'"),
    Replacement("    envs.num_envs = args.num_envs\n    envs.single_action_space = envs.action_space\n"
                "    envs.single_observation_space = envs.observation_space\n", "",
                "EnvPool's gymnasium pool has these (read-only)"),
    Replacement("next_obs = torch.Tensor(envs.reset()).to(device)\n",
                "next_obs, _ = envs.reset()\n    next_obs = torch.Tensor(next_obs).to(device)\n",
                "reset returns (obs, info); EnvPool is seeded at construction (seed=args.seed)"),
)
PORTS = {"ppo_atari": PORT_PPO_ATARI, "ppo_atari_envpool": PORT_PPO_ATARI_ENVPOOL}
DROP_INS = {
    "ppo_atari": (Replacement(
        "    envs = gym.vector.SyncVectorEnv(\n"
        "        [make_env(args.env_id, args.seed + i, i, args.capture_video, run_name)"
        " for i in range(args.num_envs)]\n"
        "    )\n",
        "    import gpu_env\n"
        '    envs = gpu_env.make_vec(args.env_id, args.num_envs, preset="cleanrl", seed=args.seed)\n',
        "create the envs on gpu_env"),),
    "ppo_atari_envpool": (Replacement("import envpool\n", "import gpu_env.envpool as envpool\n",
                                      "create the envs on gpu_env"),),
}
SIDES = {"ppo_atari": ("gymnasium SyncVectorEnv + ale-py", 'gpu_env preset="cleanrl"'),
         "ppo_atari_envpool": ("EnvPool 1.2.5", "gpu_env.envpool")}


def fetch_scripts(build_dir: Path) -> dict[str, str]:
    """CleanRL's two scripts (name -> source) from the pinned wheel, downloaded into ``build_dir`` once."""
    wheel = build_dir / WHEEL
    if not wheel.exists():
        build_dir.mkdir(parents=True, exist_ok=True)
        cmd = [sys.executable, "-m", "pip", "download", f"cleanrl=={CLEANRL_VERSION}", "--no-deps",
               "--only-binary=:all:", "--python-version", "3.10", "-d", str(build_dir)]
        done = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if done.returncode != 0 or not wheel.exists():
            tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
            raise FetchError(f"pip download cleanrl=={CLEANRL_VERSION} failed ({tail[0]}): needs the package "
                             "registry (network), or put the wheel in " + str(build_dir))
    digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
    if digest != WHEEL_SHA256:
        raise FetchError(f"{wheel} has sha256 {digest}, expected {WHEEL_SHA256}: delete it and run again")
    with zipfile.ZipFile(wheel) as zf:
        return {name: zf.read(f"cleanrl/{name}.py").decode() for name in SCRIPTS}


def envpool_importable(pythonpath: str) -> str | None:
    """``None`` when ``import envpool`` works under ``pythonpath``, else the reason in one line."""
    done = subprocess.run([sys.executable, "-c", "import envpool; print(envpool.__version__)"], capture_output=True,
                          text=True, env={**os.environ, "PYTHONPATH": pythonpath}, check=False)
    if done.returncode != 0:
        return (done.stderr.strip().splitlines() or ["import failed"])[-1]
    if done.stdout.strip() != "1.2.5":
        return f"EnvPool {done.stdout.strip()} found; the reference is EnvPool 1.2.5"
    return None


@dataclasses.dataclass(frozen=True)
class RunResult:
    """One subprocess run: its logged ``(global_step, episodic_return)`` rows, wall seconds, last SPS line."""

    episodes: list[tuple[int, str]]
    wall_s: float
    sps: int | None


def run_script(path: Path, args: list[str], workdir: Path, pythonpath: str) -> RunResult:
    """Run ``path`` with ``args`` in ``workdir`` on one torch thread; raise ``RuntimeError`` if it fails."""
    workdir.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "PYTHONPATH": pythonpath,
           "CUDA_VISIBLE_DEVICES": ""}
    start = time.perf_counter()
    done = subprocess.run([sys.executable, str(path), *args], cwd=workdir, env=env, capture_output=True, text=True,
                          check=False)
    wall = time.perf_counter() - start
    (workdir / "stdout.txt").write_text(done.stdout)
    if done.returncode != 0:
        tail = "\n".join(done.stderr.strip().splitlines()[-15:])
        raise RuntimeError(f"{path} exited with {done.returncode}:\n{tail}")
    episodes = [(int(step), ret) for step, ret in EPISODE_LINE.findall(done.stdout)]
    sps = SPS_LINE.findall(done.stdout)
    return RunResult(episodes, wall, int(sps[-1]) if sps else None)


def first_difference(ref: list[tuple[int, str]], ours: list[tuple[int, str]]) -> str | None:
    """``None`` when equal, else the first differing row (index, both values) in one line."""
    for k, (a, b) in enumerate(zip(ref, ours, strict=False)):
        if a != b:
            return f"episode {k}: reference step={a[0]} return={a[1]}, drop-in step={b[0]} return={b[1]}"
    if len(ref) != len(ours):
        k = min(len(ref), len(ours))
        extra = ref[k] if len(ref) > k else ours[k]
        return f"episode {k}: only {'reference' if len(ref) > k else 'drop-in'} logs step={extra[0]} return={extra[1]}"
    return None


def prepare(name: str, source: str, out_dir: Path) -> tuple[Path, Path, str]:
    """Write the reference port and the drop-in of ``name`` under ``out_dir``; return their paths and diff."""
    reference = apply_replacements(source, PORTS[name], name=f"{name}.py (port)")
    dropin = apply_replacements(reference, DROP_INS[name], name=f"{name}.py (drop-in)")
    paths = []
    for side, text in (("reference", reference), ("dropin", dropin)):
        path = out_dir / side / f"{name}.py"  # the same file name: the scripts' exp_name comes from it
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        paths.append(path)
    diff = "".join(difflib.unified_diff(reference.splitlines(keepends=True), dropin.splitlines(keepends=True),
                                        f"reference/{name}.py", f"dropin/{name}.py", n=1))
    return paths[0], paths[1], diff


def _parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--script", choices=[*SCRIPTS, "both"], default="both", help="which script(s) to run")
    parser.add_argument("--total-timesteps", type=int, default=50_000, help="the scripts' --total-timesteps")
    parser.add_argument("--seed", type=int, default=1, help="the scripts' --seed (both sides)")
    parser.add_argument("--env-id", default=DEFAULT_ENV_IDS["ppo_atari"], help="ppo_atari's --env-id")
    parser.add_argument("--envpool-env-id", default=DEFAULT_ENV_IDS["ppo_atari_envpool"],
                        help="ppo_atari_envpool's --env-id (its own default is Pong-v5)")
    parser.add_argument("--envpool-path", default=os.environ.get("ENVPOOL_PATH"),
                        help="directory holding EnvPool 1.2.5, put on PYTHONPATH (default: $ENVPOOL_PATH)")
    parser.add_argument("--build-dir", type=Path, default=ROOT / "build" / "cleanrl",
                        help="where the wheel, the ported scripts and their runs/ go (git-ignored)")
    parser.add_argument("--show-port", action="store_true", help="also print the diff CleanRL 1.2.0 -> port")
    args = parser.parse_args(argv)
    if args.total_timesteps < BATCH_SIZE:
        parser.error(f"--total-timesteps must be >= {BATCH_SIZE} (one PPO update of 8 envs x 128 steps), "
                     f"got {args.total_timesteps}")
    return args


def main(argv: list[str] | None = None) -> int:
    """Run the chosen scripts on both sides; print diffs and the table; 0 when every list is equal."""
    args = _parse(argv)
    try:
        sources = fetch_scripts(args.build_dir)
    except FetchError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    pythonpath = os.pathsep.join(p for p in (str(ROOT), args.envpool_path, os.environ.get("PYTHONPATH")) if p)
    names = list(SCRIPTS) if args.script == "both" else [args.script]
    if "ppo_atari_envpool" in names and (why := envpool_importable(pythonpath)) is not None:
        print(f"EnvPool is not importable ({why}): pass --envpool-path DIR; skipping ppo_atari_envpool")
        names.remove("ppo_atari_envpool")
    if not names:
        return 2
    print(f"CleanRL {CLEANRL_VERSION} (wheel sha256 {WHEEL_SHA256[:16]}...), --total-timesteps "
          f"{args.total_timesteps}, --seed {args.seed}, {os.cpu_count()} cores, load average "
          f"(1/5/15 min) before {[round(x, 2) for x in os.getloadavg()]}")
    rows: list[tuple[str, str, RunResult, str]] = []
    for name in names:
        ref_path, ours_path, diff = prepare(name, sources[name], args.build_dir / "scripts")
        if args.show_port:
            original = sources[name].splitlines(keepends=True)
            print("".join(difflib.unified_diff(original, ref_path.read_text().splitlines(keepends=True),
                                               f"cleanrl-{CLEANRL_VERSION}/{name}.py", f"reference/{name}.py", n=0)))
        print(f"\n{name}: drop-in vs reference\n{diff}")
        env_id = args.env_id if name == "ppo_atari" else args.envpool_env_id
        script_args = ["--seed", str(args.seed), "--total-timesteps", str(args.total_timesteps), "--env-id", env_id,
                       "--torch-deterministic", "True", "--cuda", "False", "--track", "False",
                       "--capture-video", "False"]
        results = []
        for side, path in (("reference", ref_path), ("dropin", ours_path)):
            print(f"running {side} {name} ...", flush=True)
            results.append(run_script(path, script_args, args.build_dir / "runs" / f"{name}-{side}", pythonpath))
        verdict = first_difference(results[0].episodes, results[1].episodes) or "EQUAL"
        rows += [(name, SIDES[name][0], results[0], ""), (name, SIDES[name][1], results[1], verdict)]
    print(f"\nload average (1/5/15 min) after {[round(x, 2) for x in os.getloadavg()]}\n")
    print("| script | side | episodes logged | last (global_step, return) | wall s | SPS | result |\n"
          "|---|---|---|---|---|---|---|")
    for name, side, res, verdict in rows:
        last = f"({res.episodes[-1][0]}, {res.episodes[-1][1]})" if res.episodes else "-"
        print(f"| {name} | {side} | {len(res.episodes)} | {last} | {res.wall_s:.0f} | {res.sps} | {verdict} |")
    return 0 if all(v == "EQUAL" for _, _, _, v in rows[1::2]) else 1


if __name__ == "__main__":
    sys.exit(main())
