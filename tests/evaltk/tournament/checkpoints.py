"""An untrained evaltk APPO checkpoint of a Doom scenario: the APPO agent the tournament tests play."""

from __future__ import annotations

from pathlib import Path

import pytest


def untrained_appo(directory: Path, scenario_name: str, size: int) -> Path:
    """Save a freshly initialised APPO model (seed 0, hidden and RNN ``size``) for ``scenario_name``; return its path.

    Skips the test where torch is not installed.
    """
    torch = pytest.importorskip("torch")
    from evaltk import checkpoint
    from evaltk.envs import doom
    from trainers.appo.model import MODEL_CLASS
    from trainers.appo.network import build_model

    scenario = doom.get_scenario(scenario_name)
    aspec = doom.action_spec(scenario)
    torch.manual_seed(0)
    kwargs = {"obs_shape": doom.obs_spec(scenario)["shape"], "action_nvec": list(aspec["nvec"]), "hidden_size": size,
              "rnn_size": size}
    spec = checkpoint.CheckpointSpec(model_class=MODEL_CLASS, model_kwargs=kwargs, obs_spec=doom.obs_spec(scenario),
                                     action_spec=aspec, env=doom.env_spec(scenario).to_json(),
                                     provenance={"note": "untrained, for the tournament test"})
    return checkpoint.save(directory, spec, build_model(kwargs).state_dict())
