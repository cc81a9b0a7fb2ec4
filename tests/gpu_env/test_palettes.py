"""The stored NTSC/PAL palettes equal what ale-py renders for every palette index it can show."""

from __future__ import annotations

from conformance.palette_probe import measure_palettes, probe_rom
from gpu_env import palettes


def test_stored_palettes_match_ale() -> None:
    measured = measure_palettes()
    assert sorted(measured["ntsc"]) == list(range(0, 256, 2))
    assert sorted(measured["pal"]) == list(range(256))
    tables = (("ntsc", palettes.NTSC_RGB, palettes.NTSC_GRAY), ("pal", palettes.PAL_RGB, palettes.PAL_GRAY))
    for name, rgb, gray in tables:
        for index, (colour, grey) in measured[name].items():
            assert tuple(int(v) for v in rgb[index]) == colour, f"{name} RGB of index {index}"
            assert int(gray[index]) == grey, f"{name} grayscale of index {index}"


def test_ntsc_odd_entries_follow_the_rule_measured_on_pal() -> None:
    for table_rgb, table_gray in ((palettes.NTSC_RGB, palettes.NTSC_GRAY), (palettes.PAL_RGB, palettes.PAL_GRAY)):
        for odd in range(1, 256, 2):
            assert (table_rgb[odd] == table_gray[odd - 1]).all()
            assert table_gray[odd] == (table_rgb[odd + 1][2] if odd < 255 else 0)


def test_probe_rom_is_a_4k_image_with_reset_vector() -> None:
    image = probe_rom(0)
    assert len(image) == 4096
    assert image[0xFFC:0xFFE] == b"\x00\xf0"
