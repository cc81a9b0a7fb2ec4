"""DAgger from a privileged teacher: a pixel-only student learns, on its own rollouts, what the teacher does.

``evaltk train doom --scenario duel_bots --dagger-teacher CKPT`` runs the APPO system (workers, batched inference,
learner, checkpoints) with three changes; everything else is APPO's:

* **Workers** build each game with the labels buffer on (``DoomEnv(..., labels=True)``) and, beside the student's
  observation of a frame (the run's scenario, which must not mark players: the screen alone), write the teacher's
  observation of *the same frame* (the teacher's scenario, which marks players from the labels buffer) and the
  players-position grid (:func:`evaltk.envs.doom_labels.players_grid`) into per-env buffers
  (:func:`evaltk.envs.doom.privileged_view`). The student's observation never holds a label.
* **Inference** (:meth:`Teacher.relabel`) runs the teacher, with its own GRU state per env, on the teacher's
  observations of the envs it serves, and stores the teacher's logits and value and the grid beside the student's
  action. The action executed is the student's sample, or with probability ``dagger_beta`` (falling to 0 over
  ``dagger_beta_steps`` SGD steps) the teacher's.
* **The learner** (:class:`DaggerLoss`) minimises, over the student's trajectories, the cross-entropy of the student's
  heads against the teacher's action probabilities (the teacher's actions are the targets, as a distribution), plus
  ``dagger_value_coef`` times the squared error of the student's critic to the teacher's value, plus
  ``dagger_players_coef`` times the binary cross-entropy of an auxiliary head (a linear layer on the encoder's
  features) against the players grid. Samples past ``max_policy_lag`` are masked as in APPO. Its metrics:
  ``losses/agree_<head>`` (how often the student's most likely choice of each head is the teacher's),
  ``losses/players_seen`` (the share of frames with another player in view) and ``losses/players_found`` (the share
  where the head's "any player in view" agrees with the labels).

The auxiliary head lives in the learner only: checkpoints save it with the training state (``--resume`` restores it),
never in the policy, whose env spec is the student's scenario, so the exported agent declares the screen alone
(:func:`evaltk.envs.doom.inputs`). ``--init-from`` and ``--resume`` work as in APPO.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import torch
from torch import nn

from evaltk.envs import doom, doom_labels
from evaltk.errors import SpecError
from trainers.appo import packed
from trainers.appo.config import AppoConfig, dagger_beta
from trainers.appo.gru import gru_sequence
from trainers.appo.network import ActorCritic, build_model, encoder_dtype, sample_actions, split_logits
from trainers.common.state_io import model_from_checkpoint

#: Cells of the players-position grid the auxiliary head predicts.
PLAYERS_CELLS = doom_labels.PLAYERS_GRID[0] * doom_labels.PLAYERS_GRID[1]


def teacher_scenario(student: doom.DoomScenario, teacher: doom.DoomScenario) -> doom.DoomScenario:
    """Return ``teacher`` after checking that it can relabel a student of ``student``; :class:`SpecError` otherwise.

    The student must not mark players (it sees the screen alone); the teacher must mark them (else it knows no more
    than the student) and see and act as the student does: the same resolution, observation size, measurement row,
    frameskip and action heads.
    """
    if student.mark_players:
        raise SpecError(f"--dagger-teacher: the student's scenario {student.name!r} marks players from the labels "
                        "buffer; a DAgger student sees the screen alone (use --scenario duel_bots)")
    if not teacher.mark_players:
        raise SpecError(f"--dagger-teacher: the teacher's scenario {teacher.name!r} does not mark players, so it sees "
                        "no more than the student; give a teacher trained on a marked scenario (duel_bots_marked)")
    same = ("resolution", "obs_size", "measurement_scheme", "frameskip", "action_heads")
    differ = [f for f in same if getattr(student, f) != getattr(teacher, f)]
    if differ:
        raise SpecError(f"--dagger-teacher: the teacher's scenario {teacher.name!r} differs from the student's "
                        f"{student.name!r} in {', '.join(differ)}; train the student on the teacher's view and heads")
    return teacher


class Teacher:
    """The privileged teacher of a DAgger run, run by inference: its model, scenario, GRU states and β schedule.

    ``model`` is frozen; ``step`` is its forward pass (packed weights where :func:`trainers.appo.packed.available`);
    ``beta(version)`` is the probability of executing the teacher's action at that policy version.
    """

    def __init__(self, model: ActorCritic, scenario: doom.DoomScenario, beta: Callable[[int], float],
                 step_dtype: torch.dtype | None, num_envs: int, seed: int) -> None:
        self.model = model.eval()
        for p in self.model.parameters():
            p.requires_grad_(False)
        self.scenario = scenario
        self.beta = beta
        self.step = packed.forward_step(self.model, num_envs, step_dtype)
        self._rng = np.random.default_rng(seed)
        self._gen = torch.Generator().manual_seed(seed)

    @torch.inference_mode()
    def relabel(self, b: dict[str, np.ndarray], envs: np.ndarray, slots: np.ndarray, steps: np.ndarray,
                version: int) -> int:
        """Label step ``steps`` of trajectory ``slots`` for ``envs``; execute the teacher's action with probability β.

        Reads ``teacher_obs``/``players_now``/``env_first`` of ``envs`` and writes ``teacher_logits``,
        ``teacher_value`` and ``players`` at ``(slots, steps)``, after the student's ``actions`` are there.
        Returns how many envs execute the teacher's action.
        """
        h = b["teacher_rnn"][envs]
        h[b["env_first"][envs] != 0] = 0.0
        obs = torch.from_numpy(b["teacher_obs_hwc"][envs]).permute(0, 3, 1, 2)
        logits, value, h_new = self.step(obs, torch.from_numpy(h))
        b["teacher_rnn"][envs] = h_new.numpy()
        b["teacher_logits"][slots, steps] = logits.numpy()
        b["teacher_value"][slots, steps] = value.numpy()
        b["players"][slots, steps] = b["players_now"][envs]
        beta = self.beta(version)
        take = self._rng.random(len(envs)) < beta if beta > 0 else np.zeros(len(envs), dtype=bool)
        if take.any():
            actions, _ = sample_actions(logits[torch.from_numpy(take)], self.model.action_nvec, self._gen)
            b["actions"][slots[take], steps[take]] = actions.numpy()
        return int(take.sum())


def load_teacher(cfg: AppoConfig, student: doom.DoomScenario, seed: int) -> Teacher:
    """Load ``cfg.dagger_teacher`` (an APPO checkpoint location) and check it against the student's scenario."""
    from evaltk import checkpoint as evaltk_checkpoint
    from evaltk.locations import resolve

    ckpt = evaltk_checkpoint.load(resolve(cfg.dagger_teacher).ref)
    env = ckpt.spec.env_spec
    if env.family != "doom":
        raise SpecError(f"--dagger-teacher {cfg.dagger_teacher}: not a Doom checkpoint (env family {env.family!r})")
    scenario = teacher_scenario(student, doom.scenario_from_env_spec(env))
    model: ActorCritic = model_from_checkpoint(ckpt, build_model)
    return Teacher(model, scenario, lambda version: dagger_beta(cfg, version), encoder_dtype(cfg.encoder_precision),
                   cfg.num_envs, seed)


def distill_losses(model: ActorCritic, players_head: nn.Linear, batch: Any, valid: torch.Tensor, cfg: AppoConfig
                   ) -> dict[str, torch.Tensor]:
    """Return the DAgger loss of a batch (``loss`` to minimise) and its parts; ``valid bool[T, N]`` selects samples.

    ``batch`` is a :class:`trainers.appo.learner.Batch` with the teacher's ``teacher_logits float32[T, N, A]``,
    ``teacher_value float32[T, N]`` and ``players uint8[T, N, G]``. The student unrolls its GRU from ``rnn0`` over
    the observations, zeroing the state where an episode starts, as APPO's learner does.
    """
    steps, n = batch.rewards.shape
    keep = torch.ones(steps, n)
    keep[1:] = (~batch.dones[:-1]).float()
    flat = batch.obs[:steps].reshape(steps * n, *batch.obs.shape[2:])
    feats = model.encode(flat, encoder_dtype(cfg.encoder_precision)).view(steps, n, -1)
    core = gru_sequence(model.core, feats, batch.rnn0, keep.unsqueeze(-1))
    logits, values = model.actor(core), model.critic(core).squeeze(-1)
    weight = valid.float()
    count = weight.sum().clamp(min=1.0)
    cross_entropy = torch.zeros(steps, n)
    agree = []
    for student, teacher in zip(split_logits(logits, model.action_nvec),
                                split_logits(batch.teacher_logits, model.action_nvec), strict=True):
        target = torch.softmax(teacher, dim=-1)
        cross_entropy = cross_entropy - (target * torch.log_softmax(student, dim=-1)).sum(-1)
        agree.append(((student.argmax(-1) == teacher.argmax(-1)).float() * weight).sum() / count)
    distill = (cross_entropy * weight).sum() / count
    value = (((values - batch.teacher_value) ** 2) * weight).sum() / count
    players_logits = players_head(feats)
    target = batch.players.float()
    bce = nn.functional.binary_cross_entropy_with_logits(players_logits, target, reduction="none").mean(-1)
    players = (bce * weight).sum() / count
    seen = target.amax(-1) > 0
    found = (players_logits.amax(-1) > 0) == seen
    loss = distill + cfg.dagger_value_coef * value + cfg.dagger_players_coef * players
    return {"loss": loss, "distill_loss": distill, "value_loss": value, "players_loss": players,
            **{f"agree_{i}": a for i, a in enumerate(agree)},
            "players_seen": (seen.float() * weight).sum() / count,
            "players_found": (found.float() * weight).sum() / count}


class DaggerLoss:
    """The learner's DAgger term: the auxiliary players head and :func:`distill_losses` (see the module docstring)."""

    def __init__(self, model: ActorCritic, cfg: AppoConfig) -> None:
        self.cfg = cfg
        self.players_head = nn.Linear(model.fc.out_features, PLAYERS_CELLS)

    def parameters(self) -> list[nn.Parameter]:
        """Return the auxiliary head's parameters (trained with the model's, by the same optimizer)."""
        return list(self.players_head.parameters())

    def losses(self, model: ActorCritic, batch: Any, valid: torch.Tensor) -> dict[str, torch.Tensor]:
        """Return :func:`distill_losses` of ``batch`` for ``model``."""
        return distill_losses(model, self.players_head, batch, valid, self.cfg)

    def state_tensors(self) -> dict[str, torch.Tensor]:
        """Return the head's tensors, named ``players_head.<name>`` (saved with the training state)."""
        return {f"players_head.{k}": v.detach().clone() for k, v in self.players_head.state_dict().items()}

    def load_state_tensors(self, tensors: dict[str, torch.Tensor]) -> None:
        """Load the head's tensors from a training state (:meth:`state_tensors`' names)."""
        prefix = "players_head."
        self.players_head.load_state_dict({k[len(prefix):]: v for k, v in tensors.items() if k.startswith(prefix)})
