"""Traces of a policy's own play: a checkpoint plays ale-py through its own preprocessing, every frame is recorded.

:func:`record_policy` rebuilds the checkpoint's reference env (:func:`evaltk.envs.atari.make_env`: gymnasium
+ ale-py with the checkpoint's ALE settings, ``AtariPreprocessing`` and frame stacking, all from its
``policy.json``), resets it with ``seed`` and lets the policy act (its own sampling, from
``numpy.random.default_rng(seed)``) until ``frames`` emulator frames have been played, resetting after every
game over as an evaluation does. The env must step ALE one frame at a time (``frameskip = 1`` in its kwargs,
the skipping done by ``AtariPreprocessing``), so that a :class:`RecordingAle` between gymnasium and ale-py
sees every frame: after each ``act`` it stores the action (a full-set index), reward, RAM, screen md5, lives
and game over, and marks the frame after which ``reset_game`` ran. The result is a
:class:`conformance.trace.Trace` (the Atari format) whose header names the checkpoint (path and weights
digest), the seed of the gymnasium reset, and ``initial_reset``: gymnasium's seeded reset runs
``reset_game`` once after ``loadROM``, so a replay does the same before frame 1
(:func:`conformance.trace.replay`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from conformance.frames import screen_md5
from conformance.trace import Trace, TraceError, cached, trace_header

if TYPE_CHECKING:
    from evaltk.envs.spec import EnvSpec
    from evaltk.locations import Resolved


class RecordingAle:
    """An ``ALEInterface`` stand-in that forwards every call and records each frame ``act`` plays."""

    def __init__(self, ale: Any, frames: int) -> None:
        self._ale = ale
        self.frames = frames
        self.t = 0
        self.rows: dict[str, np.ndarray] = {
            "action": np.zeros(frames, np.int16), "reward": np.zeros(frames, np.int32),
            "game_over": np.zeros(frames, np.bool_), "lives": np.zeros(frames, np.int16),
            "reset": np.zeros(frames, np.bool_), "ram": np.zeros((frames, 128), np.uint8),
            "screen_md5": np.zeros((frames, 16), np.uint8)}
        self.resets_before_first = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._ale, name)

    def act(self, action: Any, *args: Any) -> int:
        """Play one frame and record what it showed (frames past the requested count are played, not kept)."""
        reward = int(self._ale.act(action, *args))
        if self.t < self.frames:
            t, rows, ale = self.t, self.rows, self._ale
            rows["action"][t], rows["reward"][t] = int(getattr(action, "value", action)), reward
            rows["ram"][t], rows["lives"][t], rows["game_over"][t] = ale.getRAM(), ale.lives(), ale.game_over()
            rows["screen_md5"][t] = screen_md5(np.asarray(ale.getScreen())[None])[0]
        self.t += 1
        return reward

    def reset_game(self) -> None:
        """Run ALE's ``reset_game`` and mark it after the last recorded frame."""
        self._ale.reset_game()
        if self.t == 0:
            self.resets_before_first += 1
        elif self.t <= self.frames:
            self.rows["reset"][self.t - 1] = True


def _install(env: Any, recorder: RecordingAle) -> None:
    """Point the ALE env and every wrapper holding its ``ale`` at ``recorder``."""
    layer = env
    while layer is not None:
        if "ale" in vars(layer):
            layer.ale = recorder
        layer = getattr(layer, "env", None)


def record_policy(checkpoint: str | Path, *, frames: int, seed: int) -> Trace:
    """Record ``frames`` frames of the checkpoint's own play on ale-py (see the module docstring).

    ``checkpoint`` is a location (:mod:`evaltk.locations`: a directory, another library's file, ``hf://``);
    the header names it by its label (``hf://ORG/REPO@SHA/PATH`` for the Hub) and its weights digest.
    """
    from evaltk.locations import resolve

    return record_resolved(resolve(str(checkpoint)), frames=frames, seed=seed)


def record_resolved(where: Resolved, *, frames: int, seed: int) -> Trace:
    """Record ``frames`` frames of the play of a resolved checkpoint (:func:`evaltk.locations.resolve`)."""
    from evaltk.checkpoint import load
    from evaltk.policies import load_policy

    ckpt = load(where.ref)
    trace = record_play(load_policy(where.ref), ckpt.spec.env_spec, frames=frames, seed=seed)
    trace.header["actions"].update({"checkpoint": where.label, "weights_sha256": weights_digest(Path(where.ref))})
    return trace


def record_play(policy: Any, env: EnvSpec, *, frames: int, seed: int) -> Trace:
    """Record ``frames`` frames of ``policy`` (an :class:`evaltk.policies.Policy`) on the reference env ``env``."""
    from evaltk.envs.atari import make_env, resolve_env
    from gpu_env.env_ids import rom_id_from_env_id

    if isinstance(frames, bool) or not isinstance(frames, int) or frames < 1:
        raise TraceError(f"frames={frames!r}: record at least one frame")
    spec = resolve_env(env)
    if spec.family != "atari" or int(spec.kwargs["frameskip"]) != 1:
        raise TraceError(f"a policy trace needs an Atari env stepping ALE one frame at a time (kwargs frameskip = 1, "
                         f"skipping in AtariPreprocessing); this env has {spec.kwargs}")
    gym_env = make_env(spec)
    recorder = RecordingAle(vars(gym_env.unwrapped)["ale"], frames)
    _install(gym_env, recorder)
    policy.reset(1, np.random.default_rng(seed))
    obs, _ = gym_env.reset(seed=seed)
    random_seed = int(np.int32(recorder.getInt("random_seed")).view(np.uint32))
    first = True
    while recorder.t < frames:
        action = int(np.asarray(policy.act(np.asarray(obs)[None], np.array([first])))[0])
        obs, _, terminated, truncated, _ = gym_env.step(action)
        first = bool(terminated or truncated)
        if first:
            obs, _ = gym_env.reset()
    gym_env.close()
    rom = rom_id_from_env_id(spec.env_id)
    header = trace_header(
        rom, seed=random_seed, frames=frames, initial_reset=recorder.resets_before_first,
        settings={"repeat_action_probability": float(spec.kwargs["repeat_action_probability"]), "frameskip": 1,
                  "mode": spec.kwargs["mode"], "difficulty": spec.kwargs["difficulty"]},
        actions={"kind": "policy", "model_class": str(policy.spec.model_class), "env_seed": int(seed),
                 "policy_seed": int(seed), "env": spec.to_json()},
        reset_rule="gymnasium reset (reset_game, then AtariPreprocessing no-ops) after every game over")
    return Trace(header=header, **recorder.rows)


def weights_digest(path: Path) -> str:
    """Return the sha256 of a checkpoint directory's ``policy.safetensors``."""
    return hashlib.sha256((Path(path) / "policy.safetensors").read_bytes()).hexdigest()


def policy_trace_for(where: Resolved, frames: int, seed: int, workdir: Path) -> tuple[Trace, str]:
    """Return a trace of the resolved checkpoint's play (cached in ``workdir/traces`` by its weights) and its source."""
    digest = weights_digest(Path(where.ref))[:16]
    path = workdir / "traces" / f"policy_{digest}_seed{seed}_frames{frames}.npz"
    return cached(path, lambda: record_resolved(where, frames=frames, seed=seed)), f"recorded policy trace {path}"


def policy_problem(params: Mapping[str, Any], header: Mapping[str, Any], source: str,
                   checkpoint: str | None) -> str | None:
    """Return why a trace is no evidence of the case's ``checkpoint`` (random play, other weights), or None.

    ``checkpoint`` is the case's location resolved to an evaltk checkpoint directory (None: the case names none).
    """
    if checkpoint is None:
        return None
    actions = header.get("actions", {})
    if actions.get("kind") != "policy":
        return (f"the case names checkpoint = {params['checkpoint']!r} but {source} records {actions.get('kind')} "
                "actions, not a policy's play: record one with evaltk conformance record --checkpoint")
    if not (Path(checkpoint) / "policy.safetensors").is_file():
        return f"checkpoint {params['checkpoint']} has no policy.safetensors: pass an evaltk checkpoint directory"
    here = weights_digest(Path(checkpoint))
    if actions.get("weights_sha256") != here:
        return (f"{source} was recorded from weights sha256 {actions.get('weights_sha256')}, checkpoint "
                f"{params['checkpoint']} has {here}: record the trace again from this checkpoint")
    return None
