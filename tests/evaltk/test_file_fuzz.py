"""Loaders of traces and suites under mutated real files: they read the file or raise an ``EvaltkError``.

The files are made through the public conformance API (a 20-frame ale-py trace recorded with
:func:`conformance.trace.record_ale` and saved with ``Trace.save``; a suite in the TOML format of
``suites/``) and mutated byte-wise (flips, cuts, insertions) or field-wise. Anything other than a
clean load or an :class:`~evaltk.errors.EvaltkError` (whose message is one line) fails the test.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evaltk.errors import EvaltkError

_SUITE = ('[suite]\nname = "fuzz"\ndescription = "one trace case"\n\n[[case]]\nkind = "trace"\nname = "pong20"\n'
          'rom = "pong"\nseed = 0\nframes = 20\ntrace_file = "pong20.npz"\nsimulator = "gpu_env"\n')


@pytest.fixture(scope="module")
def trace_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from conformance import trace

    return Path(trace.record_ale("pong", frames=20, seed=0).save(tmp_path_factory.mktemp("trace") / "pong20.npz"))


def _mutated(data: st.DataObject, raw: bytes) -> bytes:
    buf = bytearray(raw)
    for _ in range(data.draw(st.integers(1, 3), label="edits")):
        if not buf:
            break
        pos = data.draw(st.integers(0, len(buf) - 1), label="pos")
        op = data.draw(st.sampled_from(["flip", "cut", "insert", "delete"]), label="op")
        if op == "flip":
            buf[pos] ^= 1 << data.draw(st.integers(0, 7), label="bit")
        elif op == "cut":
            del buf[pos:]
        elif op == "insert":
            buf[pos:pos] = data.draw(st.binary(min_size=1, max_size=8), label="bytes")
        else:
            del buf[pos]
    return bytes(buf)


def _failure(load: Callable[[], object]) -> str | None:
    """Run ``load``; return the message of the EvaltkError it raises, or None if it loads (any other error fails)."""
    try:
        load()
    except EvaltkError as exc:
        return str(exc)
    return None


def _fuzz_trace(trace_file: Path, tmp: Path, data: st.DataObject) -> None:
    from conformance import trace

    target = tmp / "t.npz"
    target.write_bytes(_mutated(data, trace_file.read_bytes()))
    message = _failure(lambda: trace.load(target))
    if message is not None:
        assert "\n" not in message.strip(), message
        assert str(target) in message, message


def _fuzz_suite(trace_file: Path, tmp: Path, data: st.DataObject) -> None:
    from conformance.suite import load_suite

    shutil.copy(trace_file, tmp / "pong20.npz")
    text = _SUITE
    if data.draw(st.booleans(), label="field edit"):
        line = data.draw(st.sampled_from([x for x in text.splitlines() if "=" in x]), label="line")
        value = data.draw(st.sampled_from(["-5", "0", "1e9", '"x"', "1.5", "true", "[]", "{}", '""', "nan", "inf"]),
                          label="value")
        text = text.replace(line, f"{line.split('=')[0]}= {value}")
    raw = text.encode()
    if data.draw(st.booleans(), label="byte edit"):
        raw = _mutated(data, raw)
    (tmp / "s.toml").write_bytes(raw)
    message = _failure(lambda: load_suite(tmp / "s.toml"))
    if message is not None:
        assert "\n" not in message.strip(), message


_QUICK = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
_LONG = settings(max_examples=2000, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@_QUICK
@given(data=st.data())
def test_mutated_traces_load_or_fail_cleanly(trace_file: Path, tmp_path: Path, data: st.DataObject) -> None:
    _fuzz_trace(trace_file, tmp_path, data)


@_QUICK
@given(data=st.data())
def test_mutated_suites_load_or_fail_cleanly(trace_file: Path, tmp_path: Path, data: st.DataObject) -> None:
    _fuzz_suite(trace_file, tmp_path, data)


@pytest.mark.slow
@_LONG
@given(data=st.data())
def test_mutated_traces_long(trace_file: Path, tmp_path: Path, data: st.DataObject) -> None:
    _fuzz_trace(trace_file, tmp_path, data)


@pytest.mark.slow
@_LONG
@given(data=st.data())
def test_mutated_suites_long(trace_file: Path, tmp_path: Path, data: st.DataObject) -> None:
    _fuzz_suite(trace_file, tmp_path, data)


def test_suite_kind_of_the_wrong_type_is_a_suite_error(tmp_path: Path) -> None:
    from conformance.suite import load_suite

    (tmp_path / "s.toml").write_text(_SUITE.replace('kind = "trace"', "kind = []"))
    with pytest.raises(EvaltkError):
        load_suite(tmp_path / "s.toml")


def _zip_flag_mutant(trace_file: Path, tmp: Path, offset_in_entry: int, value: int) -> Path:
    """Write the trace with one byte of its first central-directory entry set (8: flags, 10: compression)."""
    raw = bytearray(trace_file.read_bytes())
    raw[raw.index(b"PK\x01\x02") + offset_in_entry] = value
    out = tmp / "t.npz"
    out.write_bytes(bytes(raw))
    return out


@pytest.mark.parametrize(("offset", "value"), [(8, 1), (10, 99)], ids=["encrypted-flag", "compression-method"])
def test_flipped_zip_flags_are_a_trace_error(trace_file: Path, tmp_path: Path, offset: int, value: int) -> None:
    from conformance import trace

    with pytest.raises(EvaltkError):
        trace.load(_zip_flag_mutant(trace_file, tmp_path, offset, value))
