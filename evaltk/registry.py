"""Name tables: one registration rule for every kind of named thing, and one "did you mean" for every bad name.

A :class:`Registry` maps a name to what it names (a simulator factory, an executor's module, an importer
format, a suite case kind, a built-in policy) in registration order, with one ``register`` call per entry::

    SIMULATORS.register("gpu_env", factory)
    SIMULATORS["gpu_env"]          # the entry; an unknown name raises the registry's error:
    SIMULATORS["gpu_evn"]          # SimulatorError: unknown simulator 'gpu_evn': did you mean gpu_env? use one of ...

It is a ``dict`` (``in``, ``keys()``, iteration and a hit of ``registry[name]`` run no Python code of
evaltk's: a lookup is not a step of a request). :meth:`Registry.unknown` builds the one message for a name
that is not registered, with the caller's label (``--sim 'gpu_evn' is not a simulator: ...``);
:func:`did_you_mean` is the suggestion every bad name of evaltk and conformance gets (env ids, Doom
scenarios, ROM ids, tournament agents).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from typing import TypeVar

from evaltk.errors import EvaltkError

T = TypeVar("T")

__all__ = ["Registry", "did_you_mean"]


def did_you_mean(word: str, choices: Iterable[str], *, n: int = 3) -> str:
    """Return ``"did you mean A, B? "`` for the ``choices`` close to ``word`` (difflib, ignoring case), else ``""``.

    The trailing space lets a caller put it in front of its fix: ``f"unknown X {w!r}: {did_you_mean(w, xs)}use ..."``.
    """
    by_folded: dict[str, str] = {}
    for choice in choices:
        by_folded.setdefault(choice.casefold(), choice)
    close = difflib.get_close_matches(word.casefold(), list(by_folded), n=n)
    return f"did you mean {', '.join(by_folded[c] for c in close)}? " if close else ""


def _article(noun: str) -> str:
    return "an" if noun[:1].lower() in "aeiou" else "a"


class Registry(dict[str, T]):
    """Names of one kind of thing, each mapped to its entry, in registration order (see the module docstring).

    ``what`` names the kind in messages (``"simulator"``); ``error`` is the exception a bad name raises;
    ``other_forms`` describes names accepted beside the registered ones (``"MODULE:CALLABLE for your own
    factory"``), shown after the list.
    """

    def __init__(self, what: str, error: type[EvaltkError], *, other_forms: str = "") -> None:
        super().__init__()
        self.what = what
        self.error = error
        self.other_forms = other_forms

    def register(self, name: str, entry: T, *, replace: bool = False) -> None:
        """Add ``entry`` under ``name`` (a plain word: no ``:`` or ``/``, not empty).

        A second registration of a name is refused unless ``replace`` (a plug-in replacing a built-in says so).
        """
        if not name or ":" in name or "/" in name or name != name.strip():
            raise ValueError(f"{self.what} name {name!r}: use a plain word (no ':', '/' or spaces)")
        if name in self and not replace:
            raise ValueError(f"{self.what} {name!r} is registered already: pass replace=True to replace it")
        super().__setitem__(name, entry)

    def names(self) -> tuple[str, ...]:
        """Return the registered names, in registration order."""
        return tuple(self)

    def unknown(self, name: str, *, label: str | None = None) -> EvaltkError:
        """Return the error for ``name``, which names nothing here: the suggestion, then every accepted name.

        With ``label`` (the option or field that held it): ``--sim 'x' is not a simulator: ...``; without:
        ``unknown simulator 'x': ...``.
        """
        what = self.what
        head = f"{label} {name!r} is not {_article(what)} {what}" if label else f"unknown {what} {name!r}"
        choices = ", ".join(self)
        if self.other_forms:
            choices += f", or {self.other_forms}"
        return self.error(f"{head}: {did_you_mean(name, self)}use one of {choices}")

    def check(self, name: str, *, label: str | None = None) -> str:
        """Return ``name`` if registered; raise :meth:`unknown` (with ``label``) otherwise."""
        if name not in self:
            raise self.unknown(name, label=label)
        return name

    def __missing__(self, name: str) -> T:
        """``registry[name]`` of an unregistered name: raise :meth:`unknown`."""
        raise self.unknown(name)
