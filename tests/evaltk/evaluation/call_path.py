"""Record which evaltk and conformance modules a call enters, in order, up to a stop function.

A module is *entered* when a function of it is called while no frame of that module is on the
(recorded) call stack; it stays entered until its last frame returns. A *stay* is one such entry;
a *return* is an entry into a module that was entered and left before. A path that enters each
module once has as many stays as modules and no returns. Calls from a module into itself, and
calls back into a module still on the stack (a callback), do not start a stay. Code run while a
module is being imported (a ``<module>`` frame on the stack) is not recorded: an import is not a
step of the request.

``PYTHONPATH=. python tests/evaltk/call_path.py CKPT OUT`` prints the path of ``evaltk validate`` on
CKPT (from its first call into :mod:`evaltk.evaluation.validate` to its first episode) and the counts.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from types import FrameType
from typing import Any

ROOT = Path(__file__).resolve().parents[3]
PACKAGES = ("evaltk", "conformance")
IMPORTING = "<module>"


class _Stop(BaseException):  # not an Exception: the CLI's last-resort handler must not catch it
    """Raised by the profiler when the stop function is called: the run ends there."""


@cache
def module_of(filename: str) -> str | None:
    """Return ``pkg/mod.py`` for a file of the recorded packages, else None."""
    try:
        rel = Path(filename).resolve().relative_to(ROOT)
    except ValueError:
        return None
    return rel.as_posix() if rel.parts[0] in PACKAGES else None


@dataclass
class CallPath:
    """The stays, in order: (module, the function that entered it)."""

    stays: list[tuple[str, str]] = field(default_factory=list)

    @property
    def modules(self) -> list[str]:
        """The modules entered, in order of first entry."""
        return list(dict.fromkeys(m for m, _ in self.stays))

    def returns(self, allowed: Iterable[str] = ()) -> list[tuple[int, str, str]]:
        """Return ``(stay number, module, function)`` of each entry into a module left before, less ``allowed``."""
        seen: set[str] = set()
        skip = set(allowed)
        found = []
        for i, (module, function) in enumerate(self.stays):
            if module in seen and module not in skip:
                found.append((i, module, function))
            seen.add(module)
        return found

    def render(self) -> str:
        """Return the path, one stay a line, returns marked with ``<-``."""
        seen: set[str] = set()
        lines = []
        for i, (module, function) in enumerate(self.stays):
            lines.append(f"{i:3d} {'<-' if module in seen else '  '} {module}:{function}")
            seen.add(module)
        return "\n".join(lines)

    def counts(self, allowed: Iterable[str] = ()) -> str:
        """``modules M, stays S, returns R`` (returns into ``allowed`` modules not counted)."""
        return f"modules {len(self.modules)}, stays {len(self.stays)}, returns {len(self.returns(allowed))}"


def record(run: Callable[[], Any], stop: Callable[[FrameType], bool]) -> CallPath:
    """Run ``run`` under a profiler until a call for which ``stop(frame)`` is true; return the path so far."""
    path = CallPath()
    stack: list[str | None] = []  # per Python frame on the stack: its recorded module, IMPORTING, or None
    depth: dict[str, int] = {}
    importing = [0]

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        if event == "call":
            module = module_of(frame.f_code.co_filename)
            if module is not None and stop(frame):
                raise _Stop
            if frame.f_code.co_name == IMPORTING:
                importing[0] += 1
                stack.append(IMPORTING)
                return
            module = None if importing[0] else module
            stack.append(module)
            if module is not None:
                if depth.get(module, 0) == 0:
                    path.stays.append((module, frame.f_code.co_name))
                depth[module] = depth.get(module, 0) + 1
        elif event == "return" and stack:
            module = stack.pop()
            if module == IMPORTING:
                importing[0] -= 1
            elif module is not None:
                depth[module] -= 1

    sys.setprofile(profile)
    try:
        run()
    except _Stop:
        pass
    finally:
        sys.setprofile(None)
    return path


def first_episode(frame: FrameType) -> bool:
    """Return True at the stop point: the episode loop (``evaltk.evaluation.run._run_episodes``) is called."""
    return frame.f_code.co_name == "_run_episodes" and frame.f_code.co_filename.endswith("evaltk/evaluation/run.py")


def validate_path(argv: list[str]) -> CallPath:
    """Return the path of ``evaltk validate ARGV``, from its first call into validate to its first episode.

    The path starts at the first call into evaltk/evaluation/validate.py.

    The stays before (the CLI) are dropped.
    """
    from evaltk.cli.main import main

    whole = record(lambda: main(["validate", *argv]), first_episode)
    for i, (module, _) in enumerate(whole.stays):
        if module == "evaltk/evaluation/validate.py":
            return CallPath(whole.stays[i:])
    raise AssertionError("evaltk/evaluation/validate.py was never entered:\n" + whole.render())


if __name__ == "__main__":
    checkpoint, out = sys.argv[1], sys.argv[2]
    found = validate_path([checkpoint, "--episodes", "2", "--num-envs", "2", "--workers", "0", "--margin", "2",
                           "--out", out])
    print(found.render())
    print(found.counts())
