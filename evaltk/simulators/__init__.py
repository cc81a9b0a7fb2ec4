"""The simulator registry: one answer wherever a simulator or reference is chosen.

``evaltk evaluate --sim``, ``evaltk validate --sim/--reference``, the suite ``transfer`` and
``sim_lockstep`` cases and ``evaltk conformance lockstep --sim/--reference`` all call :func:`get`:

* ``gym`` — the reference: gymnasium + ale-py for Atari env dicts, ViZDoom for Doom ones;
* ``gpu_env`` — this project's emulator (CPU backend);
* ``envpool`` — the real EnvPool package (``pip install 'evaltk[envpool]'``); ``envpool:KEY=VALUE,...``
  passes further options to ``envpool.make``;
* ``MODULE:CALLABLE`` — a user's factory (:mod:`evaltk.simulators.factory`).

"Simulator" is evaltk's word for these, in code, options, score tables (the ``simulator`` column and
setting), reports and suites; "backend" is gpu_env's word for where it emulates (``cpu``, ``cuda``,
``ale_py``). Files an older evaltk wrote with ``backend`` for the simulator still read and resume.
Each simulator reports its effective settings in one schema (:mod:`evaltk.envs.atari_settings`).
"""

from __future__ import annotations

from collections.abc import Sequence

from evaltk.simulators.base import EpisodeSlots, Simulator, SimulatorError
from evaltk.simulators.envpool_sim import PREFIX as ENVPOOL_PREFIX
from evaltk.simulators.envpool_sim import EnvPoolSimulator, parse_options
from evaltk.simulators.factory import FactorySimulator, is_factory_name
from evaltk.simulators.gpu_env_sim import GpuEnvSimulator
from evaltk.simulators.gym_ale import GymSimulator

NAMES = ("gym", "gpu_env", "envpool")
"""The built-in simulators; anything else must be ``MODULE:CALLABLE``."""
REFERENCE = "gym"

__all__ = ["NAMES", "REFERENCE", "EpisodeSlots", "Simulator", "SimulatorError", "check_name", "get", "recorded_name",
           "resolve_all"]


def check_name(name: str, *, option: str = "--sim") -> str:
    """Return ``name`` if it names a simulator; :class:`SimulatorError` naming the choices otherwise."""
    if name.startswith(ENVPOOL_PREFIX):  # before MODULE:CALLABLE, which "envpool:key" would also match
        parse_options(name)
        return name
    if name in NAMES or is_factory_name(name):
        return name
    raise SimulatorError(f"{option} {name!r} is not a simulator: use one of {', '.join(NAMES)}, or MODULE:CALLABLE "
                         "for your own factory (e.g. mysim:make_env; see docs/simulators.md)")


def get(name: str, *, option: str = "--sim") -> Simulator:
    """Return the simulator called ``name`` (built-in or ``MODULE:CALLABLE``); :class:`SimulatorError` if unknown."""
    check_name(name, option=option)
    if name == "gym":
        return GymSimulator()
    if name == "gpu_env":
        return GpuEnvSimulator()
    if name == "envpool":
        return EnvPoolSimulator()
    if name.startswith(ENVPOOL_PREFIX):
        return EnvPoolSimulator(options=parse_options(name))
    return FactorySimulator(name)


def resolve_all(names: Sequence[str], options: Sequence[str]) -> tuple[Simulator, ...]:
    """Return the simulators of an evaluation's sides (:func:`get` of each name; ``options`` name them in errors).

    Each name is checked here once; a simulator's ``name`` is what score tables record.
    """
    return tuple(get(name, option=option) for name, option in zip(names, options, strict=True))


def recorded_name(name: str) -> str:
    """Return the name score tables record: ``envpool`` for ``envpool:KEY=VALUE,...``, else ``name``.

    The options are in the table's manifest (the simulator's identity).
    """
    return "envpool" if name.startswith(ENVPOOL_PREFIX) else name
