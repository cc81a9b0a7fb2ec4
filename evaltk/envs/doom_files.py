"""Where Sample Factory's Doom scenario files lie: evaltk's vendored copies, ViZDoom's, or a Sample Factory package.

A scenario with ``scenario_dir="sample_factory"`` (:mod:`evaltk.importers.sf_doom`) loads Sample
Factory 2.1.1's cfg from :data:`SF_FOLDER` (every cfg of its ``sf_examples/vizdoom/doom/scenarios``,
vendored unchanged under its MIT licence) and the map the cfg names (``doom_scenario_path``) from the
first place that holds Sample Factory's file byte for byte (:data:`SF_WADS` sha256):

1. :data:`SF_FOLDER` (the vendored maps: ``battle``, ``battle2``, ``two_colors_easy``, ``two_colors_hard``,
   ``health_gathering_supreme``);
2. ViZDoom's ``scenarios`` folder (``basic``, ``cig``, ``deadly_corridor``, ``defend_the_center``,
   ``defend_the_line``, ``health_gathering``, ``my_way_home`` are the same files there);
3. an installed ``sf_examples`` package (found, never imported);
4. :func:`sf_files_folder`: Sample Factory's files unpacked by :func:`install_command` beside evaltk's cache,
   outside any environment (``ssl2``, ``dwango5``, ``freedm``: not vendored, docs/importers.md).

A map found nowhere is a :class:`~evaltk.errors.SpecError` naming :func:`install_command`.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import os
import re
from pathlib import Path

from evaltk.errors import SpecError

SF_FOLDER = Path(__file__).parent / "sample_factory_scenarios"
"""The vendored cfgs and maps of Sample Factory 2.1.1 (its MIT ``LICENSE`` is beside them)."""
SF_SCENARIOS = os.path.join("sf_examples", "vizdoom", "doom", "scenarios")
"""Where the files lie inside a Sample Factory install."""
SF_WADS: dict[str, str] = {
    "basic.wad": "fd0b7e5e2422e09288c786e7fc32181bb8ee4a3faa613a75ef88a3e39b5ce94e",
    "battle.wad": "b29b461995ae7035095a5283c57ef13393e6839326754e94f5b80af5f07e5484",
    "battle2.wad": "0851ae13490433b1e335d427dd391b3e0a6a33a97a16c0190579a2820935e522",
    "cig.wad": "3ae9dadec22a494e7644a5fcd9abc0595e16d49b29635e2b0be625395d46859d",
    "deadly_corridor.wad": "3c868f88c78df8219a2c41a2695ae04e5a19d60a32f1718282b3bbc7f20951ca",
    "defend_the_center.wad": "eb3f8d3b3f456bbef32a1d41f847189dd83cc1d4e320157ba92b75a9b0d8d5bb",
    "defend_the_line.wad": "b1d0fc43d987eee9e1dfee0e6bdecde8cf1ce5b15b9a09f79751bd73c553f3d8",
    "dwango5.wad": "2b7658f126321fc2ccf953dbbe8d585b4162350080b9715b46fc617d32cdb13a",
    "freedm.wad": "c0b998f0ebd0ce343d56e584546a0d3e177bd7e98e13abecd77e2c00dcd15426",
    "health_gathering.wad": "c77c8ba3254ae19eaff8d00418870a7718ef8a5822e5872ab68b76205cb2bacf",
    "health_gathering_supreme.wad": "a3ecd9d0611c72973923994e96a26df0cfb5e93dfeab8ee734cfb921a94fd029",
    "my_way_home.wad": "18e98ff4c9186808eb00696b799cfe88a79e7486429c1692aafbed8ef359c0b1",
    "ssl2.wad": "3a3165f3cc3e34ede782e2cb2e986802dba641a19ccf2bb8b65f60065f86a601",
    "two_colors_easy.wad": "7fe0a1285cf4cd39d4e890ffc91f824131c6667b4d0c26d3bfb6b1ed568c8d8e",
    "two_colors_hard.wad": "fd0cfe76c54b8ad7b95262aab4d284b08ffeb86af5c24c100045c093ca843822",
}
"""sha256 of every map in Sample Factory 2.1.1's ``scenarios`` folder."""
SF_REQUIREMENT = "sample-factory==2.1.1"


def sf_files_folder() -> Path:
    """Where :func:`install_command` unpacks Sample Factory (``$XDG_CACHE_HOME/evaltk/sample-factory``)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "evaltk" / "sample-factory"


def install_command() -> str:
    """Return the command that brings Sample Factory's scenario files without installing it into the environment.

    ``pip install --target`` unpacks the wheel into :func:`sf_files_folder` alone: no dependency is
    installed or changed and the environment's ``pip check`` is unaffected (docs/importers.md).
    """
    return f"pip install --no-deps --target {sf_files_folder()} {SF_REQUIREMENT}"


def _candidates() -> list[Path]:
    import vizdoom

    folders = [SF_FOLDER, Path(vizdoom.scenarios_path)]
    found = importlib.util.find_spec("sf_examples")  # the package's location only: none of its code runs
    if found is not None and found.submodule_search_locations:
        folders.append(Path(next(iter(found.submodule_search_locations))) / "vizdoom" / "doom" / "scenarios")
    folders.append(sf_files_folder() / SF_SCENARIOS)
    return folders


@functools.lru_cache(maxsize=64)
def _sha256(path: Path, size: int, mtime_ns: int) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _digest(path: Path) -> str | None:
    try:
        stat = path.stat()
    except OSError:
        return None
    return _sha256(path, stat.st_size, stat.st_mtime_ns) if path.is_file() else None


def cfg_wad(cfg_path: str | os.PathLike[str]) -> str:
    """Return the map file a scenario cfg names (``doom_scenario_path``); :class:`SpecError` if it names none."""
    text = Path(cfg_path).read_text(encoding="utf-8")
    match = re.search(r"^\s*doom_scenario_path\s*=\s*(\S+)", text, flags=re.MULTILINE | re.IGNORECASE)
    if match is None:
        raise SpecError(f"{cfg_path} names no doom_scenario_path: it is not one of Sample Factory's scenario cfgs")
    return os.path.basename(match.group(1))


def sf_wad(name: str, scenario: str) -> Path:
    """Return a file equal to Sample Factory 2.1.1's map ``name`` (see the module docstring for the search order).

    ``scenario`` names the scenario in the error raised when no such file is on this machine.
    """
    want = SF_WADS.get(name)
    if want is None:
        raise SpecError(f"scenario {scenario!r}: {name} is not one of Sample Factory 2.1.1's maps "
                        f"({', '.join(sorted(SF_WADS))})")
    for folder in _candidates():
        if _digest(folder / name) == want:
            return folder / name
    raise SpecError(f"scenario {scenario!r} plays Sample Factory's map {name}, which evaltk does not ship: "
                    f"{install_command()} (Sample Factory's files go to that folder only; this environment is not "
                    "changed)")
