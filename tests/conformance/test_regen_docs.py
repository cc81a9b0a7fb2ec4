"""The regenerated conformance page keeps its hand-written sections."""

from pathlib import Path

from conformance.regen_docs import KEEP_MARKER, main


def test_regeneration_keeps_the_hand_written_tail(tmp_path: Path) -> None:
    page = tmp_path / "conformance.md"
    page.write_text(f"# old table\n\n{KEEP_MARKER}\n\n## Doom suite\n\nbound: 120 s\n")
    assert main(["--games", "pong", "--frames", "20", "--workers", "1", "--out", str(page)]) == 0
    text = page.read_text()
    assert "# old table" not in text
    assert "| pong |" in text
    assert text.endswith(f"{KEEP_MARKER}\n\n## Doom suite\n\nbound: 120 s\n")
