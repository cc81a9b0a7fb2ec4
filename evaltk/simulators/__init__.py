"""The simulator registry: one answer wherever a simulator or reference is chosen.

``evaltk evaluate --sim``, ``evaltk validate --sim/--reference``, the suite ``transfer`` and
``sim_lockstep`` cases and ``evaltk conformance lockstep --sim/--reference`` all call :func:`get`, which
looks the name up in :data:`SIMULATORS` (an :class:`evaltk.registry.Registry`; :func:`register` adds one):

* ``gym`` — the reference: gymnasium + ale-py for Atari env specs, ViZDoom for Doom ones;
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

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from evaltk.registry import Registry
from evaltk.simulators.base import EpisodeSlots, Simulator, SimulatorError
from evaltk.simulators.envpool_sim import PREFIX as ENVPOOL_PREFIX
from evaltk.simulators.envpool_sim import EnvPoolSimulator, parse_options
from evaltk.simulators.factory import FactorySimulator, is_factory_name
from evaltk.simulators.gpu_env_sim import GpuEnvSimulator
from evaltk.simulators.gym_ale import GymSimulator

REFERENCE = "gym"

__all__ = ["NAMES", "REFERENCE", "SIMULATORS", "EpisodeSlots", "Simulator", "SimulatorEntry", "SimulatorError",
           "check_name", "get", "recorded_name", "register", "resolve_all"]


@dataclass(frozen=True)
class SimulatorEntry:
    """A registered simulator: ``factory(name)`` builds it from the name as written (``envpool:KEY=VALUE,...``).

    ``options``: whether ``NAME:OPTIONS`` is accepted beside ``NAME`` (the factory parses the options).
    """

    factory: Callable[[str], Simulator]
    options: bool = False


SIMULATORS: Registry[SimulatorEntry] = Registry(
    "simulator", SimulatorError,
    other_forms="MODULE:CALLABLE for your own factory (e.g. mysim:make_env; see docs/simulators.md)")
"""The built-in simulators by name; :func:`register` adds one."""
NAMES = SIMULATORS.keys()
"""The registered simulators' names (a live view); anything else must be ``MODULE:CALLABLE``."""


def register(name: str, factory: Callable[[str], Simulator], *, options: bool = False,
             replace: bool = False) -> None:
    """Register the simulator ``name``: ``factory(name as written)`` returns a :class:`Simulator`.

    ``options=True`` also accepts ``NAME:OPTIONS`` (``envpool:KEY=VALUE,...``), handed to ``factory`` whole.
    """
    SIMULATORS.register(name, SimulatorEntry(factory, options), replace=replace)


register(REFERENCE, lambda _: GymSimulator())
register("gpu_env", lambda _: GpuEnvSimulator())
register("envpool", lambda name: EnvPoolSimulator(options=parse_options(name) if ":" in name else None),
         options=True)


def _entry(name: str) -> SimulatorEntry | None:
    """Return the registered entry ``name`` (or ``NAME:OPTIONS``) names, None for any other name."""
    base, sep, _ = name.partition(":")
    entry = SIMULATORS.get(base)
    return entry if entry is not None and (not sep or entry.options) else None


def check_name(name: str, *, option: str = "--sim") -> str:
    """Return ``name`` if it names a simulator; :class:`SimulatorError` naming the choices otherwise.

    A registered name's options (``envpool:KEY=VALUE``) are parsed here, so a bad one is refused as early.
    """
    entry = _entry(name)
    if entry is not None:
        if entry.options and ":" in name:
            entry.factory(name)
        return name
    if is_factory_name(name):
        return name
    raise SIMULATORS.unknown(name, label=option)


def get(name: str, *, option: str = "--sim") -> Simulator:
    """Return the simulator called ``name`` (registered, or ``MODULE:CALLABLE``); :class:`SimulatorError` if unknown."""
    entry = _entry(name)
    if entry is not None:
        return entry.factory(name)
    if is_factory_name(name):
        return FactorySimulator(name)
    raise SIMULATORS.unknown(name, label=option)


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
