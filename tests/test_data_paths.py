"""The committed test data and the rule for missing data (fail under CI, skip elsewhere)."""

from __future__ import annotations

import gzip
import hashlib
import json
import re
from pathlib import Path

import pytest

from tests.data_paths import DATA_DIR, ci_enabled, data_path, data_root

TESTS = Path(__file__).resolve().parent
# A path into the sibling research folder or the machine it lives on: tests must not read it.
OUTSIDE_DATA = re.compile(r"/work/|\.\./shared|/\s*\"shared\"\s*/|shared/(testdata|reference)")


@pytest.mark.parametrize(("value", "expected"), [("true", True), ("1", True), ("YES", True), (" on ", True),
                                                 ("", False), ("0", False), ("false", False), ("no", False)])
def test_ci_values(monkeypatch: pytest.MonkeyPatch, value: str, expected: bool) -> None:
    monkeypatch.setenv("CI", value)
    assert ci_enabled() is expected


def test_missing_data_fails_under_ci(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("CI", "true")
    monkeypatch.setenv("EVALTK_TEST_DATA", str(tmp_path))
    with pytest.raises(pytest.fail.Exception, match=r"6502/klaus not found .*CI is set"):
        data_path("6502/klaus")


def test_missing_data_skips_outside_ci(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setenv("EVALTK_TEST_DATA", str(tmp_path))
    with pytest.raises(pytest.skip.Exception, match="not found"):
        data_path("6502/klaus")


def test_default_root_is_in_the_repository(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("EVALTK_TEST_DATA", raising=False)
    assert data_root() == DATA_DIR == TESTS / "data"
    assert (DATA_DIR / "README.md").is_file()


def test_every_single_step_file_matches_its_manifest() -> None:
    manifest = json.loads(data_path("6502/singlestep/MANIFEST.json").read_text())
    assert len(manifest["files"]) == 256
    for opcode, entry in manifest["files"].items():
        path = data_path(f"6502/singlestep/{entry['file']}")
        assert hashlib.sha256(path.read_bytes()).hexdigest() == entry["sha256"], f"opcode {opcode}: {path}"


def test_every_atari_rom_has_a_reference_recording() -> None:
    with gzip.open(data_path("atari/ale_reference_noop300.json.gz")) as fh:
        reference = json.load(fh)
    roms = {p.name for p in data_path("atari/roms").glob("*.bin")}
    assert roms == set(reference["roms"])
    assert len(roms) == 26  # the 25 TIA/RIOT programs and tetris.bin
    for name, entry in reference["roms"].items():
        assert hashlib.md5(data_path(f"atari/roms/{name}").read_bytes()).hexdigest() == entry["rom_md5"], name


def test_no_test_reads_data_outside_the_repository() -> None:
    """No test names the research folder next to the checkout or an absolute machine path."""
    offenders = [
        f"{path.relative_to(TESTS)}:{number}"
        for path in sorted(TESTS.rglob("*.py"))
        if path != Path(__file__).resolve()
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if OUTSIDE_DATA.search(line)
    ]
    assert not offenders
