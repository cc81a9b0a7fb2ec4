"""Declarative conformance suites: TOML files of cases, checked up front, run into JUnit XML.

A suite file (``suites/*.toml``)::

    [suite]
    name = "atari-reference-drift"
    description = "ale-py still reproduces the recorded traces"
    executor = "local"          # optional: "local" (default) or "ray"; --executor overrides it
    ray_address = "HOST:PORT"   # optional: the Ray cluster for executor = "ray"; --ray-address overrides it

    [[case]]
    kind = "trace"              # one of conformance.kinds.KINDS (conformance.kinds.register adds one)
    name = "pong-seed0"         # unique in the suite
    rom = "pong"
    frames = 2000               # frames compared (a trace_file must hold at least this many)
    seed = 0
    repeat_action_probability = 0.25
    simulator = "ale"           # what is checked against the recording: "ale" (reference drift) or "gpu_env"

The kinds are registered, one call each, in :mod:`conformance.kinds` (:class:`conformance.case.Kind`: the
fields, name -> :class:`FieldSpec` with types, required and a check of the value, the runner and a
check across fields); unknown or missing fields, wrong types, out-of-range values, missing files and
duplicate names are reported with the file, the case, the field and the fix before anything runs.
Relative paths, in file fields and checkpoint locations alike (:func:`evaltk.locations.anchor`), are
taken from the suite file's folder, so a suite runs the same from any working folder.
Running a case returns a :class:`CaseResult`; :func:`write_junit` writes the standard XML CI systems
read.
"""

from __future__ import annotations

import time
import tomllib
import xml.etree.ElementTree as ET
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conformance.case import (
    LOCATION_FIELDS,
    PATH_FIELDS,
    Case,
    CaseResult,
    FieldSpec,
    Kind,
    Outcome,
    at_least,
    between,
    one_of,
)
from conformance.kinds import KIND_REGISTRY, KINDS
from evaltk.errors import EvaltkError, SuiteError
from evaltk.executor import EXECUTOR_MODULES, Executor, Resources, WorkUnit, make_executor, stream
from evaltk.locations import anchor, is_remote

__all__ = ["CASE_FIELDS", "FOLDER_FIELDS", "KINDS", "LOCATION_FIELDS", "PATH_FIELDS", "Case", "CaseResult",
           "FieldSpec", "Kind", "Outcome", "Suite", "at_least", "between", "case_units", "load_suite", "one_of",
           "run_case", "run_suite", "stream_suite", "suite_executor", "write_junit"]


@dataclass(frozen=True)
class Suite:
    """A checked suite file."""

    path: Path
    name: str
    description: str
    cases: tuple[Case, ...]
    executor: str | None = None
    """The suite's own ``executor`` (``local``/``ray``), or None; the command line's ``--executor`` wins."""
    ray_address: str | None = None


# kind -> field -> FieldSpec of the built-in kinds (:data:`conformance.kinds.KINDS`).
CASE_FIELDS: Mapping[str, Mapping[str, FieldSpec]] = {name: kind.fields for name, kind in KINDS.items()}
# Path fields that may name a folder as well as a file (a tournament folder, a checkpoint directory, an `evaltk
# evaluate` folder as a transfer baseline).
FOLDER_FIELDS = frozenset({"results", "checkpoint", "baseline"})


def load_suite(path: str | Path) -> Suite:
    """Parse and check a suite file; :class:`SuiteError` names the file, the case and the fix."""
    path = Path(path)
    if not path.is_file():
        raise SuiteError(f"suite file {path} does not exist (suites live in suites/*.toml)")
    try:
        text = path.read_bytes().decode("utf-8")
    except OSError as exc:
        raise SuiteError(f"suite file {path} cannot be read ({exc.strerror or exc})") from exc
    except UnicodeDecodeError as exc:
        raise SuiteError(f"suite file {path} is not UTF-8 text (bad byte at offset {exc.start}): "
                         "a suite is a TOML file") from exc
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise SuiteError(f"{path}: not valid TOML ({exc}); fix the syntax at that line") from exc
    head = data.get("suite")
    if not isinstance(head, dict) or not isinstance(head.get("name"), str):
        raise SuiteError(f"{path}: missing [suite] table with a string 'name'; add one at the top of the file")
    unknown_top = set(data) - {"suite", "case"}
    if unknown_top:
        raise SuiteError(f"{path}: unknown top-level keys {sorted(unknown_top)}; only [suite] and [[case]] are allowed")
    runner = {key: head[key] for key in ("executor", "ray_address") if key in head}
    for key, value in runner.items():
        if not isinstance(value, str) or not value:
            raise SuiteError(f"{path}: [suite] {key} = {value!r} should be a non-empty string")
    if runner.get("executor", "local") not in EXECUTOR_MODULES:
        raise SuiteError(str(EXECUTOR_MODULES.unknown(runner["executor"], label=f"{path}: [suite] executor")))
    if "ray_address" in runner and runner.get("executor") != "ray":
        raise SuiteError(f"{path}: [suite] ray_address needs executor = \"ray\"; add it or drop ray_address")
    raw_cases = data.get("case", [])
    if not isinstance(raw_cases, list) or not raw_cases:
        raise SuiteError(f"{path}: no [[case]] entries; a suite needs at least one case")
    cases = tuple(_check_case(path, i, raw) for i, raw in enumerate(raw_cases))
    names = [c.name for c in cases]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise SuiteError(f"{path}: duplicate case names {duplicates}; give every case a unique name")
    return Suite(path=path, name=head["name"], description=str(head.get("description", "")), cases=cases,
                 executor=runner.get("executor"), ray_address=runner.get("ray_address"))


def _check_case(path: Path, index: int, raw: Any) -> Case:
    where = f"{path}: case #{index + 1}"
    if not isinstance(raw, dict):
        raise SuiteError(f"{where} is not a table; write it as [[case]] with key = value lines")
    kind = raw.get("kind")
    if not isinstance(kind, str) or kind not in KINDS:
        raise SuiteError(str(KIND_REGISTRY.unknown(str(kind), label=f"{where}: kind")))
    name = raw.get("name")
    if not isinstance(name, str) or not name:
        raise SuiteError(f"{where}: needs a non-empty string 'name'")
    spec = KINDS[kind].fields
    params = {k: v for k, v in raw.items() if k not in ("kind", "name")}
    unknown = sorted(set(params) - set(spec))
    if unknown:
        raise SuiteError(f"{where} ({name}): unknown fields {unknown}; {kind!r} cases take {sorted(spec)}")
    for key, fs in spec.items():
        if key not in params:
            if fs.required:
                raise SuiteError(f"{where} ({name}): missing required field {key!r}")
            continue
        value = params[key]
        if (isinstance(value, bool) and bool not in fs.types) or not isinstance(value, fs.types):
            wanted = " or ".join(t.__name__ for t in fs.types)
            raise SuiteError(f"{where} ({name}): field {key!r} = {value!r} should be {wanted}")
        problem = fs.check(value) if fs.check is not None else None
        if problem is not None:
            raise SuiteError(f"{where} ({name}): field {key!r} = {value!r} {problem}")
    for old, current in KINDS[kind].old_names.items():
        if old in params and current in params:
            raise SuiteError(f"{where} ({name}): give {current} only ({old} is its older name)")
        if old in params:
            params[current] = params.pop(old)
    for key in KINDS[kind].location_fields & set(params):
        params[key] = anchor(str(params[key]), path.parent)
    for key in KINDS[kind].path_fields & set(params):
        if key in KINDS[kind].location_fields and is_remote(str(params[key])):
            continue
        if not Path(params[key]).is_absolute():
            params[key] = str((path.parent / params[key]).resolve())
        if not (Path(params[key]).is_file() or (key in FOLDER_FIELDS and Path(params[key]).is_dir())):
            raise SuiteError(f"{where} ({name}): field {key!r}: file {params[key]} does not exist "
                             "(relative paths are taken from the suite file's folder)")
    check, build = KINDS[kind].check, KINDS[kind].build
    problem = check(params) if check is not None else None
    if problem is not None:
        raise SuiteError(f"{where} ({name}): {problem}")
    try:
        built = {} if build is None else dict(build(params))
    except EvaltkError as exc:
        raise SuiteError(f"{where} ({name}): {exc}") from None
    return Case(kind=kind, name=name, params=params, built=built)


def run_case(case: Case, workdir: Path) -> CaseResult:
    """Run one case; an exception inside it becomes an ``ERROR`` result rather than aborting the suite."""
    start = time.perf_counter()
    try:
        return KINDS[case.kind].run(case, workdir)
    except Exception as exc:
        return CaseResult(case, Outcome.ERROR, f"{type(exc).__name__}: {exc}", time.perf_counter() - start)


def run_suite(suite: Suite, workdir: Path, executor: Executor | None = None) -> list[CaseResult]:
    """Run every case of ``suite`` (in order, in this process, unless ``executor`` is given); results in suite order."""
    if executor is None:
        workdir.mkdir(parents=True, exist_ok=True)
        return [run_case(case, workdir) for case in suite.cases]
    by_name = {r.case.name: r for r in stream_suite(suite, workdir, executor)}
    return [by_name[case.name] for case in suite.cases]


def case_units(suite: Suite, workdir: Path) -> list[WorkUnit]:
    """One work unit per case, keyed ``case:<name>``, one CPU each; ``workdir`` is made absolute for other nodes."""
    workdir = workdir.resolve()
    return [WorkUnit(f"case:{case.name}", run_case, (case, workdir), resources=Resources(num_cpus=1))
            for case in suite.cases]


def stream_suite(suite: Suite, workdir: Path, executor: Executor) -> Iterator[CaseResult]:
    """Run the cases of ``suite`` on ``executor``; yield each case's result once, as it finishes."""
    workdir.mkdir(parents=True, exist_ok=True)
    for result in stream(executor, case_units(suite, workdir)):
        yield result.value


def suite_executor(suite: Suite, executor: str | None, ray_address: str | None) -> Executor:
    """Return the executor for ``suite``: the command line's choice, else the suite file's, else local (in order)."""
    name = executor or suite.executor or "local"
    address = ray_address or (suite.ray_address if name == "ray" else None)
    return make_executor(name, ray_address=address)


def write_junit(suite: Suite, results: list[CaseResult], path: str | Path) -> Path:
    """Write ``results`` as a JUnit XML report (one testsuite, one testcase per case)."""
    path = Path(path)
    counts = {o: sum(r.outcome is o for r in results) for o in Outcome}
    root = ET.Element("testsuites")
    ts = ET.SubElement(
        root, "testsuite", name=suite.name, tests=str(len(results)), failures=str(counts[Outcome.FAILED]),
        errors=str(counts[Outcome.ERROR]),
        time=f"{sum(r.seconds for r in results):.3f}",
    )
    for r in results:
        tc = ET.SubElement(ts, "testcase", classname=f"{suite.name}.{r.case.kind}", name=r.case.name,
                           time=f"{r.seconds:.3f}")
        if r.outcome is Outcome.FAILED:
            ET.SubElement(tc, "failure", message=r.message).text = r.message
        elif r.outcome is Outcome.ERROR:
            ET.SubElement(tc, "error", message=r.message).text = r.message
        else:
            ET.SubElement(tc, "system-out").text = r.message
    path.parent.mkdir(parents=True, exist_ok=True)
    ET.ElementTree(root).write(path, encoding="utf-8", xml_declaration=True)
    return path
