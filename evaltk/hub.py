"""Checkpoints on the Hugging Face Hub: ``hf://ORG/REPO[@REVISION][/PATH]`` to a file in the local Hub cache.

:func:`parse` checks a location's form; :func:`fetch` downloads what evaltk can read of the repo
with ``huggingface_hub.snapshot_download`` (checkpoint files and metadata only, by allow-patterns,
into the client's own cache: ``HF_HOME``/``HF_HUB_CACHE``; with ``HF_HUB_OFFLINE=1`` the cache
alone answers), pins the revision to the commit sha the cache holds, finds the checkpoint (an
evaltk checkpoint directory, an SB3 zip, a Sample Factory run, a CleanRL file) and reads the env id
from the repo's own metadata when the checkpoint does not carry it: ``args.yml`` (RL Zoo),
``config.json``/``cfg.json`` (Sample Factory) and the model card's YAML front matter
(``model-index[].results[].dataset``), in that order. YAML is read with a safe loader (RL Zoo's
``!!python/object/apply:collections.OrderedDict`` becomes a plain dict; any other Python tag is
refused); nothing from the repo is imported or executed, and checkpoint files go through the same
never-unpickle readers as local ones. Users' documentation: ``docs/hub.md``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evaltk.errors import CheckpointError

SCHEME = "hf://"
EXTRA = "evaltk[hub]"
#: files fetched from a repo: checkpoints (evaltk, SB3, Sample Factory, CleanRL), the metadata read for the env id,
#: and ``.gitattributes`` (every Hub repo has one, so a repo of none of these still matches a pattern: no warning)
ALLOW_PATTERNS = ("*.json", "*.yml", "*.yaml", "*.md", "*.safetensors", "*.zip", "*.pth", "*.cleanrl_model",
                  ".gitattributes")
METADATA_FILES = ("args.yml", "config.json", "cfg.json", "README.md")
_NAME = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]{0,94}[A-Za-z0-9_])?")
_SHA = re.compile(r"[0-9a-f]{40}")
_MAX_METADATA_BYTES = 4 << 20
_MAX_LISTED = 12


class HubError(CheckpointError):
    """An ``hf://`` location is malformed, not on the Hub or in its cache, or holds no checkpoint evaltk reads."""


@dataclass(frozen=True)
class HubLocation:
    """A parsed ``hf://ORG/REPO[@REVISION][/PATH]``.

    ``repo``: ``ORG/REPO``; ``revision``: a branch, tag or commit sha (None: ``main``); ``path``: inside the repo.
    """

    repo: str
    revision: str | None = None
    path: str | None = None

    def __str__(self) -> str:
        rev = f"@{self.revision}" if self.revision is not None else ""
        return f"{SCHEME}{self.repo}{rev}{'/' + self.path if self.path else ''}"


@dataclass(frozen=True)
class HubCheckpoint:
    """A checkpoint found in a downloaded repo.

    ``snapshot``: the cache folder of the commit; ``local``: the checkpoint file or folder in it;
    ``fmt``: ``evaltk`` or an importer format (``sb3``, ``cleanrl``, ``sample-factory``);
    ``env_id``/``env_id_file``: the env id read from the repo's metadata and the file it came from
    (None when none says); :attr:`pinned`: the location with the commit sha and the checkpoint's
    path in the repo, which every table records.
    """

    location: HubLocation
    revision: str
    snapshot: Path
    local: Path
    fmt: str
    env_id: str | None
    env_id_file: str | None

    @property
    def path_in_repo(self) -> str | None:
        """The checkpoint's path relative to the repo root (None for the root itself)."""
        rel = self.local.relative_to(self.snapshot).as_posix()
        return None if rel == "." else rel

    @property
    def pinned(self) -> HubLocation:
        """``ORG/REPO@SHA[/PATH]``: the exact checkpoint, readable again offline."""
        return HubLocation(self.location.repo, self.revision, self.path_in_repo)

    def provenance(self) -> dict[str, Any]:
        """Return the source record: repo, commit sha, path in the repo, format and where the env id came from."""
        return {"source": "hf", "repo": self.location.repo, "revision": self.revision,
                "path": self.path_in_repo, "format": self.fmt, "env_id": self.env_id,
                "env_id_from": self.env_id_file}


def is_hub(ref: str) -> bool:
    """Whether ``ref`` is an ``hf://`` location."""
    return ref.startswith(SCHEME)


def parse(ref: str) -> HubLocation:
    """Parse ``hf://ORG/REPO[@REVISION][/PATH]``; raises :class:`HubError` naming what is wrong."""
    usage = "use hf://ORG/REPO[@REVISION][/PATH], e.g. hf://sb3/ppo-BreakoutNoFrameskip-v4"
    if not is_hub(ref):
        raise HubError(f"{ref!r} is not an hf:// location: {usage}")
    parts = ref[len(SCHEME):].split("/")
    if len(parts) < 2 or not parts[0] or not parts[1]:
        raise HubError(f"{ref!r} has no ORG/REPO: {usage}")
    org, name = parts[0], parts[1]
    revision: str | None = None
    if "@" in name:
        name, revision = name.split("@", 1)
        if not revision or any(c.isspace() for c in revision):
            raise HubError(f"{ref!r} has an empty or blank revision after '@': {usage} (REVISION: a branch, tag or "
                           "commit sha)")
    for what, value in (("ORG", org), ("REPO", name)):
        if not _NAME.fullmatch(value) or "--" in value or ".." in value:
            raise HubError(f"{ref!r}: {what} {value!r} is not a Hub name (letters, digits, '-', '_', '.'; at most 96 "
                           f"characters; no '--' or '..'): {usage}")
    rest = parts[2:]
    if rest and rest[-1] == "":
        rest = rest[:-1]
    if any(p in ("", ".", "..") for p in rest):
        raise HubError(f"{ref!r}: PATH {'/'.join(rest)!r} has an empty, '.' or '..' part: give the file or folder "
                       "inside the repo, e.g. hf://ORG/REPO/checkpoint_p0")
    return HubLocation(f"{org}/{name}", revision, "/".join(rest) or None)


def _import_hub() -> Any:
    try:
        import huggingface_hub
    except ImportError:
        raise HubError(f"hf:// checkpoints need huggingface_hub, which is not installed: pip install '{EXTRA}'") \
            from None
    return huggingface_hub


def _quiet_tqdm() -> type:
    """Return a tqdm class that never draws (the download's progress bars would interleave with evaltk's output)."""
    from tqdm.auto import tqdm

    class Quiet(tqdm):  # type: ignore[misc]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            kwargs["disable"] = True
            super().__init__(*args, **kwargs)

    return Quiet


def _offline() -> bool:
    from huggingface_hub import constants

    return bool(constants.HF_HUB_OFFLINE)


def download(location: HubLocation) -> Path:
    """Download (or find in the cache) the readable files of ``location``'s repo; return the snapshot folder.

    The folder is ``.../snapshots/<commit sha>`` of the client's cache. Errors become :class:`HubError`.
    """
    hub = _import_hub()
    from huggingface_hub import errors

    patterns = list(ALLOW_PATTERNS)
    if location.path is not None:
        patterns += [location.path, f"{location.path}/*"]
    where = str(location)
    try:
        folder = hub.snapshot_download(location.repo, revision=location.revision, allow_patterns=patterns,
                                       tqdm_class=_quiet_tqdm())
    except errors.RevisionNotFoundError:
        raise HubError(f"{where}: revision {location.revision!r} is not in {location.repo} on the Hub: pass a "
                       "branch, tag or commit sha the repo has") from None
    except errors.RepositoryNotFoundError:
        raise HubError(f"{where}: repo {location.repo} is not on the Hub (or is private: log in with hf auth "
                       "login): check ORG/REPO") from None
    except (errors.LocalEntryNotFoundError, errors.IncompleteSnapshotError, errors.OfflineModeIsEnabled) as exc:
        rev = location.revision or "main"
        if _offline():
            raise HubError(f"{where}: {location.repo}@{rev} is not in the Hugging Face cache and HF_HUB_OFFLINE=1 "
                           "forbids downloading it: unset HF_HUB_OFFLINE and run once online (or set HF_HOME to "
                           "the cache that holds it)") from None
        raise HubError(f"{where}: cannot download {location.repo}@{rev} and it is not in the Hugging Face cache "
                       f"({type(exc.__cause__ or exc).__name__}): check the network, or HF_ENDPOINT") from None
    except errors.HfHubHTTPError as exc:
        raise HubError(f"{where}: the Hub answered {exc.response.status_code} for {location.repo}: check the repo "
                       "and your access to it") from None
    return Path(folder)


def _repo_files(location: HubLocation, revision: str) -> list[str]:
    """Every file of the repo at ``revision``, from the listing the client cached (no network)."""
    from huggingface_hub import get_cached_repo_tree

    try:
        return sorted(f.path for f in get_cached_repo_tree(location.repo, revision=revision))
    except Exception:  # the listing only improves an error message: fall back to nothing
        return []


def _candidates(root: Path) -> list[tuple[Path, str]]:
    """Checkpoints evaltk reads under ``root`` (itself included): (path, format), in path order."""
    from evaltk.importers import detect_format
    from evaltk.importers.sample_factory import checkpoint_file

    found: list[tuple[Path, str]] = []
    if root.is_file():
        fmt = detect_format(root)
        return [(root, fmt)] if fmt is not None else []
    dirs = [root, *sorted(p for p in root.rglob("*") if p.is_dir())]
    claimed: list[Path] = []
    for folder in dirs:
        if any(folder.is_relative_to(c) for c in claimed):
            continue
        if (folder / "policy.json").is_file():
            found.append((folder, "evaltk"))
            claimed.append(folder)
        elif detect_format(folder) == "sample-factory":
            found.append((checkpoint_file(folder), "sample-factory"))
            claimed.append(folder)
    for file in sorted(p for p in root.rglob("*") if p.is_file()):
        if any(file.is_relative_to(c) for c in claimed) or file.suffix not in (".zip", ".cleanrl_model", ".pth"):
            continue
        fmt = detect_format(file)
        if fmt is not None and (fmt == "sb3" or file.suffix != ".zip"):  # other zips: RL Zoo's metrics, media
            found.append((file, fmt))
    return found


def _find_checkpoint(snapshot: Path, location: HubLocation, revision: str) -> tuple[Path, str]:
    pinned = HubLocation(location.repo, revision, location.path)
    root = snapshot / location.path if location.path is not None else snapshot
    if not root.exists():
        files = _repo_files(location, revision)
        raise HubError(f"{pinned}: {location.path!r} is not in the repo (it holds {_listing(files)}): pass an "
                       "existing PATH")
    found = _candidates(root)
    if not found:
        files = _repo_files(location, revision)
        if location.path is not None:
            files = [f for f in files if f == location.path or f.startswith(location.path + "/")]
        raise HubError(f"{pinned} holds no checkpoint evaltk can read (found: {_listing(files)}): point /PATH at an "
                       "evaltk checkpoint folder, an SB3 .zip, a Sample Factory run or a CleanRL .cleanrl_model")
    if len(found) > 1:
        names = ", ".join(p.relative_to(snapshot).as_posix() or "." for p, _ in found)
        raise HubError(f"{pinned} holds {len(found)} checkpoints ({names}): pick one with "
                       f"hf://{location.repo}@{revision}/PATH")
    return found[0]


def _listing(files: list[str]) -> str:
    if not files:
        return "no files"
    shown = ", ".join(files[:_MAX_LISTED])
    return shown + (f" and {len(files) - _MAX_LISTED} more" if len(files) > _MAX_LISTED else "")


def fetch(ref: str) -> HubCheckpoint:
    """Resolve ``hf://...`` to a checkpoint in the local Hub cache (downloading what is missing)."""
    location = parse(ref)
    snapshot = download(location)
    revision = snapshot.name
    if not _SHA.fullmatch(revision):
        raise HubError(f"{location}: the Hugging Face cache folder {snapshot} is not a commit snapshot")
    local, fmt = _find_checkpoint(snapshot, location, revision)
    env_id, source = metadata_env_id(snapshot) if fmt != "evaltk" else (None, None)  # evaltk's records its env
    return HubCheckpoint(location=location, revision=revision, snapshot=snapshot, local=local, fmt=fmt, env_id=env_id,
                         env_id_file=source)


# --- the repo's metadata: the env id ----------------------------------------------------------------------


def safe_yaml(text: str, where: str) -> Any:
    """Parse YAML with a safe loader; RL Zoo's OrderedDict tag becomes a dict, any other Python tag is refused."""
    import yaml

    class Loader(yaml.SafeLoader):  # type: ignore[misc]
        """SafeLoader plus the one Python tag RL Zoo writes (a list of [key, value] pairs)."""

    def ordered_dict(loader: yaml.SafeLoader, node: yaml.Node) -> dict[Any, Any]:
        if not isinstance(node, yaml.SequenceNode) or len(node.value) != 1:
            raise yaml.constructor.ConstructorError(None, None, "OrderedDict takes one list of pairs", node.start_mark)
        pairs = loader.construct_sequence(node.value[0], deep=True)
        if not all(isinstance(p, list) and len(p) == 2 for p in pairs):
            raise yaml.constructor.ConstructorError(None, None, "OrderedDict items must be [key, value]",
                                                    node.start_mark)
        return {k: v for k, v in pairs}

    Loader.add_constructor("tag:yaml.org,2002:python/object/apply:collections.OrderedDict", ordered_dict)
    try:
        return yaml.load(text, Loader=Loader)  # Loader is a SafeLoader subclass
    except yaml.YAMLError as exc:
        raise HubError(f"{where} is not YAML evaltk reads ({str(exc).splitlines()[0]}): fix or remove it, or pass "
                       "--env-id") from None


def _read_text(path: Path) -> str | None:
    if not path.is_file() or path.stat().st_size > _MAX_METADATA_BYTES:
        return None
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def _front_matter(text: str) -> str | None:
    lines = text.lstrip("\ufeff").splitlines()
    if not lines or lines[0].strip() != "---":
        return None
    for i, line in enumerate(lines[1:], start=1):
        if line.strip() == "---":
            return "\n".join(lines[1:i])
    return None


def _card_env_id(card: Any) -> str | None:
    if not isinstance(card, Mapping):
        return None
    for model in card.get("model-index") or []:
        for result in (model.get("results") or []) if isinstance(model, Mapping) else []:
            dataset = result.get("dataset") if isinstance(result, Mapping) else None
            if isinstance(dataset, Mapping):
                for key in ("type", "name"):
                    if isinstance(dataset.get(key), str) and dataset[key]:
                        return str(dataset[key])
    return None


def metadata_env_id(snapshot: Path) -> tuple[str | None, str | None]:
    """Return the env id the repo's metadata names and the file that names it; (None, None) if none does.

    Read, in order: ``args.yml`` ``env`` (RL Zoo), ``config.json``/``cfg.json`` ``env`` (Sample
    Factory), ``README.md`` front matter ``model-index[].results[].dataset.type|name``.
    """
    for name in METADATA_FILES:
        text = _read_text(snapshot / name)
        if text is None:
            continue
        where = f"{snapshot.name}/{name}"
        value: Any = None
        if name.endswith(".yml"):
            doc = safe_yaml(text, where)
            value = doc.get("env") if isinstance(doc, Mapping) else None
        elif name.endswith(".json"):
            try:
                doc = json.loads(text)
            except (ValueError, RecursionError):
                continue
            value = doc.get("env") if isinstance(doc, Mapping) else None
        else:
            matter = _front_matter(text)
            value = _card_env_id(safe_yaml(matter, where)) if matter is not None else None
        if isinstance(value, str) and value:
            return value, name
    return None, None
