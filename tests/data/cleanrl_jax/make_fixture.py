"""Write the CleanRL JAX fixtures: checkpoints saved by flax itself, and flax's outputs on known observations.

This is not a test and is not run by the tests; it remakes the files they read. It needs jax, flax,
gymnasium 1.4, ale-py 0.12.1 and OpenCV, in a throwaway virtual environment (not the project's)::

    python3 -m venv /tmp/jaxvenv
    /tmp/jaxvenv/bin/pip install jax jaxlib flax numpy gymnasium==1.4.0 ale-py==0.12.1 opencv-python-headless
    /tmp/jaxvenv/bin/python tests/data/cleanrl_jax/make_fixture.py

The networks are declared as CleanRL's scripts declare them (vwxyzjn/cleanrl, MIT licence; module
structure, names, sizes, initialisers and the ``x / 255`` after the NCHW -> NHWC transpose), so the
params trees are the scripts' own: ``Network``/``Actor``/``Critic`` of
``ppo_atari_envpool_xla_jax_scan.py`` and ``QNetwork`` of ``dqn_atari_jax.py``. Each is initialised as
the script does (``PRNGKey(args.seed)``, split as there), and saved with ``flax.serialization.to_bytes``
in the script's layout: ``[vars(args), [network_params, actor_params, critic_params]]`` for PPO,
``q_state.params`` for DQN.

Two changes keep the files small and the test meaningful, both applied to the params tree before it
is saved (flax computes every reference output from the saved params):

- ``Dense_0`` (3136 x 512, 95% of the weights) keeps one entry in 16, at seeded positions, scaled by 4;
  every weight is then rounded to a bfloat16-representable float32. The files compress to a fraction
  of their size (they are stored ``.xz``); the layout facts under test (kernel transposes, the NHWC
  flatten order) are untouched.
- The actor (PPO) and ``Dense_1`` (DQN) heads are replaced by a seeded projection of the trunk
  features' deviations from their mean over 256 frames of a random-action rollout (:func:`centred_head`),
  so that greedy actions vary along a played episode; CleanRL's ``orthogonal(0.01)`` actor makes every
  logit nearly equal at initialisation, and any head on the raw features picks one action on every
  Breakout frame.

Written to this folder: ``ppo_atari_envpool_xla_jax_scan.cleanrl_model.xz``,
``dqn_atari_jax.cleanrl_model.xz`` and ``reference.npz``. For each network: 256 stacked observations
``uint8[256, 4, 84, 84]`` of a random-action rollout on its reference env (``<net>_frames``) and flax's
logits and values or Q-values on them; flax's outputs on 256 uniform-noise observations, stored as
their seed and md5 (``numpy.random.default_rng(OBS_SEED).integers(0, 256, ...)``); and a played
episode's start (up to 128 steps): its frames (observation ``t`` is ``frames[t:t + 4]``), flax's greedy
actions and outputs on each observation, the env spec and the reset seed.
"""

from __future__ import annotations

import hashlib
import json
import lzma
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import ale_py
import flax
import flax.linen as nn
import gymnasium as gym
import jax
import jax.numpy as jnp
import numpy as np
from flax.linen.initializers import constant, orthogonal

HERE = Path(__file__).resolve().parent
OBS_SEED = 20260415
NUM_OBS = 256
EPISODE_STEPS = 128
TRAIN_FRAMES = 256
PPO_SCRIPT = "ppo_atari_envpool_xla_jax_scan"
DQN_SCRIPT = "dqn_atari_jax"
PREPROCESSING = {"noop_max": 30, "frame_skip": 4, "screen_size": 84, "terminal_on_life_loss": False,
                 "grayscale_obs": True, "grayscale_newaxis": False, "scale_obs": False}
ENV_KWARGS = {"frameskip": 1, "repeat_action_probability": 0.0, "full_action_space": False, "mode": None,
              "difficulty": None, "obs_type": "rgb", "max_num_frames_per_episode": 108000}
"""The reference env evaltk builds for each script (``gym.make(id, **ENV_KWARGS)`` + AtariPreprocessing + stack 4)."""
ENVS = {PPO_SCRIPT: "ALE/Breakout-v5", DQN_SCRIPT: "BreakoutNoFrameskip-v4"}
EPISODE_SEEDS = {PPO_SCRIPT: 11, DQN_SCRIPT: 12}


class Network(nn.Module):
    """ppo_atari_envpool_xla_jax_scan's ``Network``."""

    @nn.compact
    def __call__(self, x: jax.Array) -> jax.Array:
        x = jnp.transpose(x, (0, 2, 3, 1))
        x = x / (255.0)
        x = nn.Conv(32, kernel_size=(8, 8), strides=(4, 4), padding="VALID", kernel_init=orthogonal(np.sqrt(2)),
                    bias_init=constant(0.0))(x)
        x = nn.relu(x)
        x = nn.Conv(64, kernel_size=(4, 4), strides=(2, 2), padding="VALID", kernel_init=orthogonal(np.sqrt(2)),
                    bias_init=constant(0.0))(x)
        x = nn.relu(x)
        x = nn.Conv(64, kernel_size=(3, 3), strides=(1, 1), padding="VALID", kernel_init=orthogonal(np.sqrt(2)),
                    bias_init=constant(0.0))(x)
        x = nn.relu(x)
        x = x.reshape((x.shape[0], -1))
        x = nn.Dense(512, kernel_init=orthogonal(np.sqrt(2)), bias_init=constant(0.0))(x)
        return nn.relu(x)


class Critic(nn.Module):
    """ppo_atari_envpool_xla_jax_scan's ``Critic``."""

    @nn.compact
    def __call__(self, x: jax.Array) -> jax.Array:
        return nn.Dense(1, kernel_init=orthogonal(1), bias_init=constant(0.0))(x)


class Actor(nn.Module):
    """ppo_atari_envpool_xla_jax_scan's ``Actor``."""

    action_dim: Sequence[int]

    @nn.compact
    def __call__(self, x: jax.Array) -> jax.Array:
        return nn.Dense(self.action_dim, kernel_init=orthogonal(0.01), bias_init=constant(0.0))(x)


class QNetwork(nn.Module):
    """dqn_atari_jax's ``QNetwork``."""

    action_dim: int

    @nn.compact
    def __call__(self, x: jax.Array) -> jax.Array:
        x = jnp.transpose(x, (0, 2, 3, 1))
        x = x / (255.0)
        x = nn.Conv(32, kernel_size=(8, 8), strides=(4, 4), padding="VALID")(x)
        x = nn.relu(x)
        x = nn.Conv(64, kernel_size=(4, 4), strides=(2, 2), padding="VALID")(x)
        x = nn.relu(x)
        x = nn.Conv(64, kernel_size=(3, 3), strides=(1, 1), padding="VALID")(x)
        x = nn.relu(x)
        x = x.reshape((x.shape[0], -1))
        x = nn.Dense(512)(x)
        x = nn.relu(x)
        return nn.Dense(self.action_dim)(x)


class QTrunk(nn.Module):
    """``QNetwork`` up to its ``Dense_0`` ReLU (same module names), to fit ``Dense_1`` on fixed features."""

    @nn.compact
    def __call__(self, x: jax.Array) -> jax.Array:
        x = jnp.transpose(x, (0, 2, 3, 1)) / 255.0
        for features, kernel, stride in ((32, 8, 4), (64, 4, 2), (64, 3, 1)):
            x = nn.relu(nn.Conv(features, kernel_size=(kernel, kernel), strides=(stride, stride),
                                padding="VALID")(x))
        return nn.relu(nn.Dense(512)(x.reshape((x.shape[0], -1))))


def ppo_args() -> dict[str, Any]:
    """``vars(args)`` of ppo_atari_envpool_xla_jax_scan with its defaults, ``--save-model`` and derived fields."""
    args: dict[str, Any] = {
        "exp_name": PPO_SCRIPT, "seed": 1, "torch_deterministic": True, "cuda": True, "track": False,
        "wandb_project_name": "cleanRL", "wandb_entity": None, "capture_video": False, "save_model": True,
        "upload_model": False, "hf_entity": "", "env_id": "Breakout-v5", "total_timesteps": 10000000,
        "learning_rate": 2.5e-4, "num_envs": 8, "num_steps": 128, "anneal_lr": True, "gamma": 0.99,
        "gae_lambda": 0.95, "num_minibatches": 4, "update_epochs": 4, "norm_adv": True, "clip_coef": 0.1,
        "clip_vloss": True, "ent_coef": 0.01, "vf_coef": 0.5, "max_grad_norm": 0.5, "target_kl": None,
        "batch_size": 0, "minibatch_size": 0, "num_iterations": 0}
    args["batch_size"] = int(args["num_envs"] * args["num_steps"])
    args["minibatch_size"] = int(args["batch_size"] // args["num_minibatches"])
    args["num_iterations"] = args["total_timesteps"] // args["batch_size"]
    return args


def _bf16_exact(x: np.ndarray) -> np.ndarray:
    """Round float32 ``x`` to the nearest bfloat16 value, kept as float32."""
    return np.asarray(jnp.asarray(x, jnp.bfloat16).astype(jnp.float32))


def _shrink(params: dict[str, Any], rng: np.random.Generator) -> dict[str, Any]:
    """Sparsify a 3136-input ``Dense_0`` (1 in 16, x4); round every weight to a bfloat16 value (idempotent)."""
    out: dict[str, Any] = {}
    for name, leaves in params["params"].items():
        kernel = np.asarray(leaves["kernel"], np.float32)
        bias = np.asarray(leaves["bias"], np.float32)
        if name == "Dense_0" and kernel.shape[0] == 3136 and np.mean(kernel != 0) > 0.5:
            kernel = kernel * (rng.random(kernel.shape) < 1 / 16) * 4.0
        out[name] = {"kernel": jnp.asarray(_bf16_exact(kernel)), "bias": jnp.asarray(_bf16_exact(bias))}
    return {"params": out}


def make_env(script: str) -> gym.Env[Any, Any]:
    """Build the reference env evaltk builds for ``script``'s checkpoints (the tests check it against evaltk's)."""
    gym.register_envs(ale_py)
    env = gym.make(ENVS[script], **ENV_KWARGS)
    env = gym.wrappers.AtariPreprocessing(env, **PREPROCESSING)
    return gym.wrappers.FrameStackObservation(env, 4)


def play(script: str, act: Any) -> dict[str, np.ndarray]:
    """Play ``EPISODE_STEPS`` greedy steps (fewer if the episode ends); record frames, actions, outputs."""
    env = make_env(script)
    obs, _ = env.reset(seed=EPISODE_SEEDS[script])
    frames = [np.asarray(obs)[i] for i in range(4)]
    actions, outputs, values = [], [], []
    for _ in range(EPISODE_STEPS):
        out, value = act(np.asarray(obs)[None])
        action = int(np.argmax(out[0]))
        actions.append(action)
        outputs.append(out[0])
        values.append(value[0] if value is not None else np.float32(0.0))
        obs, _, terminated, truncated, _ = env.step(action)
        frames.append(np.asarray(obs)[-1])
        if terminated or truncated:
            break
    steps = len(actions)
    while not (terminated or truncated) and steps < 3_000:  # only to report the greedy episode's length
        out, _ = act(np.asarray(obs)[None])
        obs, _, terminated, truncated, _ = env.step(int(np.argmax(out[0])))
        steps += 1
    env.close()
    print(f"{script}: greedy episode of {steps} steps, actions {np.bincount(actions, minlength=4)}")
    return {"frames": np.stack(frames[:len(actions) + 3]), "actions": np.asarray(actions, np.int64),
            "outputs": np.stack(outputs).astype(np.float32), "values": np.asarray(values, np.float32),
            "seed": np.int64(EPISODE_SEEDS[script]),
            "env": np.asarray(json.dumps({"env_id": ENVS[script], "kwargs": ENV_KWARGS,
                                          "preprocessing": PREPROCESSING, "frame_stack": 4}))}


def random_rollout(script: str, steps: int, rng: np.random.Generator) -> np.ndarray:
    """Stacked observations ``uint8[steps, 4, 84, 84]`` of uniformly random actions (the heads' training frames)."""
    env = make_env(script)
    obs, _ = env.reset(seed=EPISODE_SEEDS[script] + 100)
    out = []
    for _ in range(steps):
        out.append(np.asarray(obs))
        obs, _, terminated, truncated, _ = env.step(int(rng.integers(env.action_space.n)))
        if terminated or truncated:
            obs, _ = env.reset()
    env.close()
    return np.stack(out)


def reset_obs(script: str) -> np.ndarray:
    """Return the first observation ``uint8[1, 4, 84, 84]`` of the played episode."""
    env = make_env(script)
    obs, _ = env.reset(seed=EPISODE_SEEDS[script])
    env.close()
    return np.asarray(obs)[None]


def centred_head(features: jax.Array, first: jax.Array, rng: np.random.Generator) -> dict[str, Any]:
    """Return a ``Dense`` head ``(h - mean(h)) @ P``: a seeded projection of the features' deviations from the mean.

    ``features``: the trunk's output on frames of a random-action rollout; ``first``: on the played
    episode's first observation. Breakout's frames differ in a few pixels (ball, paddle, bricks), so a
    head on the raw features gives one action everywhere; centred, the greedy action follows those
    pixels. ``P`` is scaled to give logits of standard deviation 0.1 on the rollout (the bias cancels
    ``mean @ P``, so a larger scale would cost float32 digits), and redrawn until the first greedy action
    is FIRE (1): a policy that never serves plays a frozen screen forever.
    """
    h = np.asarray(features, np.float64)
    mean = h.mean(axis=0)
    while True:
        projection = rng.standard_normal((h.shape[1], 4))
        projection *= 0.1 / max(float(((h - mean) @ projection).std()), 1e-12)
        if int(np.argmax((np.asarray(first, np.float64) - mean) @ projection)) == 1:
            break
    bias = -(mean @ projection)
    return {"params": {"kernel": jnp.asarray(projection, jnp.float32), "bias": jnp.asarray(bias, jnp.float32)}}


def write_xz(name: str, data: bytes) -> None:
    """Write ``data`` xz-compressed to ``HERE/name.xz`` (reproducible: no timestamps in xz)."""
    (HERE / f"{name}.xz").write_bytes(lzma.compress(data, preset=9 | lzma.PRESET_EXTREME))


def main() -> None:
    """Make the PPO and DQN checkpoints and the reference outputs."""
    rng = np.random.default_rng(7)
    obs = np.random.default_rng(OBS_SEED).integers(0, 256, size=(NUM_OBS, 4, 84, 84), dtype=np.uint8)
    sample = np.zeros((1, 4, 84, 84), np.uint8)
    num_actions = 4  # Breakout's minimal action set

    args = ppo_args()
    key = jax.random.PRNGKey(args["seed"])
    key, network_key, actor_key, critic_key = jax.random.split(key, 4)
    network, actor, critic = Network(), Actor(action_dim=num_actions), Critic()
    network_params = _shrink(network.init(network_key, sample), rng)
    hidden = network.apply(network_params, sample)
    actor.init(actor_key, hidden)  # the script's initialisation, replaced by the centred head below
    critic_params = _shrink(critic.init(critic_key, hidden), rng)
    ppo_frames = random_rollout(PPO_SCRIPT, TRAIN_FRAMES, rng)
    head = centred_head(network.apply(network_params, ppo_frames),
                        network.apply(network_params, reset_obs(PPO_SCRIPT)), rng)
    actor_params = _shrink({"params": {"Dense_0": head["params"]}}, rng)
    ppo_bytes = flax.serialization.to_bytes([args, [network_params, actor_params, critic_params]])

    @jax.jit
    def ppo_forward(x: jax.Array) -> tuple[jax.Array, jax.Array]:
        h = network.apply(network_params, x)
        return actor.apply(actor_params, h), critic.apply(critic_params, h).squeeze(-1)

    def ppo_act(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        logits, value = ppo_forward(x)
        return np.asarray(logits), np.asarray(value)

    key = jax.random.PRNGKey(1)  # dqn_atari_jax: PRNGKey(args.seed), then split(key, 2)
    key, q_key = jax.random.split(key, 2)
    q_network = QNetwork(action_dim=num_actions)
    q_params = _shrink(q_network.init(q_key, sample), rng)
    dqn_frames = random_rollout(DQN_SCRIPT, TRAIN_FRAMES, rng)
    trunk = {"params": {k: v for k, v in q_params["params"].items() if k != "Dense_1"}}
    head = centred_head(QTrunk().apply(trunk, dqn_frames), QTrunk().apply(trunk, reset_obs(DQN_SCRIPT)), rng)
    q_params = _shrink({"params": {**q_params["params"], "Dense_1": head["params"]}}, rng)
    dqn_bytes = flax.serialization.to_bytes(q_params)

    dqn_forward = jax.jit(q_network.apply)

    def dqn_act(x: np.ndarray) -> tuple[np.ndarray, None]:
        return np.asarray(dqn_forward(q_params, x)), None

    logits, values = ppo_act(obs)
    q_values, _ = dqn_act(obs)
    reference: dict[str, np.ndarray] = {
        "obs_seed": np.int64(OBS_SEED), "obs_md5": np.asarray(hashlib.md5(obs.tobytes()).hexdigest()),
        "ppo_logits": logits.astype(np.float32), "ppo_values": values.astype(np.float32),
        "dqn_q_values": q_values.astype(np.float32),
        "ppo_frames": ppo_frames, "dqn_frames": dqn_frames,
        "ppo_frames_logits": ppo_act(ppo_frames)[0].astype(np.float32),
        "ppo_frames_values": ppo_act(ppo_frames)[1].astype(np.float32),
        "dqn_frames_q_values": dqn_act(dqn_frames)[0].astype(np.float32),
        "versions": np.asarray(json.dumps({"jax": jax.__version__, "flax": flax.__version__,
                                           "numpy": np.__version__, "gymnasium": gym.__version__,
                                           "ale_py": ale_py.__version__})),
    }
    for prefix, act in (("ppo", ppo_act), ("dqn", dqn_act)):
        script = PPO_SCRIPT if prefix == "ppo" else DQN_SCRIPT
        for field, value in play(script, act).items():
            reference[f"{prefix}_episode_{field}"] = value
    write_xz(f"{PPO_SCRIPT}.cleanrl_model", ppo_bytes)
    write_xz(f"{DQN_SCRIPT}.cleanrl_model", dqn_bytes)
    np.savez_compressed(HERE / "reference.npz", **reference)
    for name in (f"{PPO_SCRIPT}.cleanrl_model.xz", f"{DQN_SCRIPT}.cleanrl_model.xz", "reference.npz"):
        data = (HERE / name).read_bytes()
        print(f"{name}: {len(data)} bytes, md5 {hashlib.md5(data).hexdigest()}")
    print(f"raw sizes: ppo {len(ppo_bytes)}, dqn {len(dqn_bytes)} bytes; {os.path.basename(__file__)} done")


if __name__ == "__main__":
    main()
