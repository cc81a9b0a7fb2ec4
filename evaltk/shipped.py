"""What an evaltk installation carries besides code: the suite files, their traces and the A2C checkpoint.

They are the checkout's ``suites/`` folder. An installed wheel holds a copy of it as ``evaltk/data/suites/``
(``setup.py`` copies it at build time, so git keeps one copy); a source checkout, or an editable install of
one, reads ``suites/`` itself. Inside the folder, paths are the checkout's: ``NAME.toml`` suites whose
``trace_file`` entries are relative to the suite file, and ``checkpoints/NAME/`` checkpoint directories.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from evaltk.errors import EvaltkError

_PACKAGE = Path(__file__).resolve().parent
PACKAGED_SUITES = _PACKAGE / "data" / "suites"
"""Where a wheel keeps its copy of ``suites/``."""
CHECKOUT_SUITES = _PACKAGE.parent / "suites"
"""``suites/`` of the source checkout this module runs from (absent in an installed wheel)."""


class ShippedDataError(EvaltkError):
    """A shipped suite or checkpoint is named that this installation does not have."""


@dataclass(frozen=True)
class ShippedItem:
    """One shipped suite or checkpoint."""

    kind: str
    """``suite`` or ``checkpoint``."""
    name: str
    """What ``evaltk shipped NAME`` and ``evaltk conformance run --builtin NAME`` accept (file or folder stem)."""
    path: Path
    """The suite file or the checkpoint directory."""


def suites_dir() -> Path:
    """Return the folder of shipped suites: the wheel's copy, else the checkout's ``suites/``."""
    for folder in (PACKAGED_SUITES, CHECKOUT_SUITES):
        if folder.is_dir():
            return folder
    raise ShippedDataError(f"this evaltk ({_PACKAGE}) has no suite folder: neither {PACKAGED_SUITES} (an installed "
                           f"wheel) nor {CHECKOUT_SUITES} (a source checkout) exists; reinstall evaltk from a wheel")


def items() -> list[ShippedItem]:
    """Every shipped suite (``*.toml``) and checkpoint (``checkpoints/*/policy.json``), suites first, by name."""
    folder = suites_dir()
    suites = [ShippedItem("suite", p.stem, p) for p in sorted(folder.glob("*.toml"))]
    checkpoints = [ShippedItem("checkpoint", p.parent.name, p.parent)
                   for p in sorted(folder.glob("checkpoints/*/policy.json"))]
    return suites + checkpoints


def find(name: str, kind: str | None = None) -> ShippedItem:
    """Return the shipped item called ``name`` (of ``kind`` if given); :class:`ShippedDataError` lists the names."""
    candidates = [item for item in items() if kind is None or item.kind == kind]
    found = [item for item in candidates if item.name == name or item.path.name == name]
    if len(found) == 1:
        return found[0]
    what = f"shipped {kind}" if kind else "shipped suite or checkpoint"
    names = ", ".join(item.name for item in candidates) or "none"
    if found:
        raise ShippedDataError(f"{name!r} names {len(found)} shipped items ({', '.join(i.kind for i in found)}); "
                               "pass the path instead (see `evaltk shipped`)")
    raise ShippedDataError(f"no {what} called {name!r} in {suites_dir()}; choose one of: {names}")


def suite_path(name: str) -> Path:
    """Return the file of the shipped suite ``name`` (e.g. ``gpu_env_traces``)."""
    return find(name, "suite").path


def checkpoint_path(name: str) -> Path:
    """Return the directory of the shipped checkpoint ``name`` (e.g. ``a2c_breakout``)."""
    return find(name, "checkpoint").path
