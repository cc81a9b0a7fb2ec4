"""What differs between two samples: the env check (what each side was asked to play) and the one settings diff.

Two questions, each answered once for every door:

* :func:`check_envs` - were the sides asked to play the same environment (env id and env spec)? A comparison
  between different environments compares the environments, not the agents, so it is refused unless the rule
  allows it (``--allow-different-envs``); the finding is an :class:`EnvCheck`.
* :func:`differences` - what did each side *run*? :func:`what_ran` lays a sample out flat: the simulator, the
  settings it reported (:mod:`evaltk.envs.atari_settings`; a factory's declared settings, not the spec it was
  handed), the game mode and difficulty it was asked for, the package versions, and for a Doom scenario (whose
  only simulator is ViZDoom) the scenario's spec. :class:`Differences` is the one diff every "what differs"
  section of a report prints: the rows, what differs, and per side what it did not report.

A value a side does not report is :data:`~evaltk.envs.atari_settings.UNKNOWN` and never counts as a difference;
it is listed as not reported instead.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from evaltk.envs.atari_settings import FIELDS, UNKNOWN
from evaltk.verdict.result import CompareError
from evaltk.verdict.sample import Sample

IDENTITY_FIELDS = ("simulator", "package", "env_id")
"""Rows that name what ran rather than change what it computes (with ``versions.*``)."""
ASKED_FIELDS = ("mode", "difficulty")
"""Env kwargs an Atari side is asked for that the settings schema does not hold (shown as ``env.kwargs.*``)."""


def flatten(spec: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """Dotted keys of a nested spec (``env.kwargs.frameskip`` ...), leaves as they are."""
    flat: dict[str, Any] = {}
    for key, value in spec.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict) and value:
            flat.update(flatten(value, f"{name}."))
        else:
            flat[name] = value
    return flat


def is_unknown(value: Any) -> bool:
    """Return True for :data:`UNKNOWN`, the value of a setting a side does not report."""
    return isinstance(value, str) and value == UNKNOWN


def difference_rows(a: dict[str, Any], b: dict[str, Any], keys: tuple[str, ...] | None = None) -> list[dict[str, Any]]:
    """Return one row ``{setting, a, b, differs}`` per key (default: ``a``'s keys, then those only ``b`` has).

    A key a side lacks shows :data:`UNKNOWN` and never counts as differing.
    """
    names = keys if keys is not None else (*a, *(k for k in b if k not in a))
    rows = []
    for key in names:
        va, vb = a.get(key, UNKNOWN), b.get(key, UNKNOWN)
        rows.append({"setting": key, "a": va, "b": vb,
                     "differs": not is_unknown(va) and not is_unknown(vb) and va != vb})
    return rows


def _family(sample: Sample) -> str | None:
    return None if sample.env is None else sample.env.get("family")


def what_ran(sample: Sample) -> dict[str, Any]:
    """Return what a side ran, flat (module docstring): the rows of the one settings diff."""
    ran: dict[str, Any] = {"simulator": sample.simulator or UNKNOWN}
    settings = sample.settings or {}
    doom = _family(sample) == "doom"
    for key in ("package", "env_id") if doom else FIELDS:
        ran[key] = settings.get(key, UNKNOWN)
    if ran["env_id"] == UNKNOWN and sample.env_id is not None:
        ran["env_id"] = sample.env_id
    if sample.env is not None:
        if doom:
            ran.update({k: v for k, v in flatten({"env": sample.env}).items() if k != "env.env_id"})
        else:
            kwargs = sample.env.get("kwargs") or {}
            ran.update({f"env.kwargs.{k}": kwargs.get(k) for k in ASKED_FIELDS if k in kwargs})
    for package, version in (sample.versions or {}).items():
        ran[f"versions.{package}"] = version
    return ran


@dataclass(frozen=True)
class Differences:
    """The one settings diff of two samples (A = reference, B = candidate).

    Attributes:
        rows: one row per setting: ``{setting, a, b, differs}``.
        differs: the settings whose values differ (both reported).
        not_reported: per side (``a``, ``b``), the settings it did not report (package versions are provenance,
            not settings, and are not listed).
        names: how the sides are named in words (``reference (gym)``, ``sim (mysim:make)``).

    """

    rows: list[dict[str, Any]]
    differs: list[str]
    not_reported: dict[str, list[str]]
    names: tuple[str, str]

    @property
    def settings_differ(self) -> list[str]:
        """The differing settings that change what is computed (not the simulator's name, package or versions)."""
        return [s for s in self.differs if s not in IDENTITY_FIELDS and not s.startswith("versions.")]

    def unreported_lines(self) -> list[str]:
        """One line per side that did not report some settings: ``not reported by sim (mysim:make): max_pool, ...``."""
        return [f"not reported by {name}: {', '.join(keys)}"
                for name, keys in zip(self.names, (self.not_reported["a"], self.not_reported["b"]), strict=True)
                if keys]

    def note(self) -> str | None:
        """Return the sentence a report prints when settings (not only names and versions) differ, else None."""
        differ = self.settings_differ
        if not differ:
            return None
        return (f"the sides ran with different {', '.join(differ)}: a difference in scores may come from these "
                "settings rather than from the emulation")

    def lines(self) -> list[str]:
        """Text lines for a console: the settings that differ (A | B), then what each side did not report."""
        rows = [r for r in self.rows if r["differs"]]
        if rows:
            width = max(len(r["setting"]) for r in rows)
            out = [f"settings that differ ({self.names[0]} | {self.names[1]}):"]
            out += [f"  {r['setting']:<{width}}  {r['a']} | {r['b']}" for r in rows]
        else:
            out = ["settings that differ: none among those both sides report"]
        return out + self.unreported_lines()

    def to_dict(self) -> dict[str, Any]:
        """Plain dict for JSON output."""
        return {"rows": self.rows, "differs": self.differs, "not_reported": self.not_reported,
                "names": list(self.names), "note": self.note()}


def differences(a: Sample, b: Sample) -> Differences:
    """Return the one settings diff of ``a`` and ``b`` (what each ran, :func:`what_ran`)."""
    ran_a, ran_b = what_ran(a), what_ran(b)
    rows = difference_rows(ran_a, ran_b)
    settings = [r for r in rows if not r["setting"].startswith("versions.")]
    not_reported = {side: [r["setting"] for r in settings if is_unknown(r[side])] for side in ("a", "b")}
    return Differences(rows, [r["setting"] for r in rows if r["differs"]], not_reported,
                       (a.label or "A", b.label or "B"))


@dataclass(frozen=True)
class EnvCheck:
    """Whether two samples were asked to play the same environment.

    Attributes:
        env_id_a: A's env id (``None`` when not recorded).
        env_id_b: B's env id.
        differences: each difference in words (env id, then spec fields), empty when the same.
        allowed: True when the rule accepted different envs (``--allow-different-envs``).
        spec_known: True when both sides recorded their env spec.

    """

    env_id_a: str | None
    env_id_b: str | None
    differences: list[str]
    allowed: bool
    spec_known: bool

    @property
    def same(self) -> bool:
        """True when no difference was found."""
        return not self.differences

    def summary(self) -> str:
        """One line for people."""
        if self.same:
            if self.spec_known:
                return "environment asked for: the same env id and spec on both sides"
            if self.env_id_a or self.env_id_b:
                return "environment asked for: the same env id (an env spec is not recorded on both sides)"
            return "environment asked for: not recorded"
        return ("DIFFERENT ENVIRONMENTS (compared because different envs were allowed): "
                + "; ".join(self.differences))

    def to_dict(self) -> dict[str, Any]:
        """Plain dict for JSON output (with ``same``)."""
        return {**asdict(self), "same": self.same}


def check_envs(a: Sample, b: Sample, *, allow_different_envs: bool = False) -> EnvCheck:
    """Compare env ids and env specs; raise :class:`CompareError` naming both envs on a difference unless allowed."""
    found: list[str] = []
    if a.env_id is not None and b.env_id is not None and a.env_id != b.env_id:
        found.append(f"env id {a.env_id!r} (A) vs {b.env_id!r} (B)")
    if a.env is not None and b.env is not None:
        rows = difference_rows(flatten({"env": a.env}), flatten({"env": b.env}))
        for row in sorted(rows, key=lambda r: str(r["setting"])):
            key, va, vb = row["setting"], row["a"], row["b"]
            if key != "env.env_id" and va != vb:  # both specs are known: a key only one has is a difference here
                shown_a, shown_b = (None if is_unknown(v) else v for v in (va, vb))
                found.append(f"{key} = {shown_a!r} (A) vs {shown_b!r} (B)")
    check = EnvCheck(a.env_id, b.env_id, found, allow_different_envs, a.env is not None and b.env is not None)
    if found and not allow_different_envs:
        names = f"{a.label or 'A'} plays {a.env_id or 'an unrecorded env'}, {b.label or 'B'} plays " \
                f"{b.env_id or 'an unrecorded env'}"
        raise CompareError(f"the sides come from different environments ({names}; {'; '.join(found)}): a verdict "
                           "between them compares the environments, not the agents; allow different envs "
                           "(--allow-different-envs, or allow_different_envs = true in a suite) if that is what "
                           "you mean")
    return check
