"""ROM loading and bank-switching detection, the way ale-py 0.12 (its Stella core) does it.

``load_rom("pong")`` loads a ROM bundled with ale-py by its id (``ale_py.roms.get_rom_path``);
``load_rom("/path/to/game.bin")`` loads a file. The scheme is detected with Stella's heuristic
(``Cartridge::autodetectType`` in ALE's ``src/ale/emucore/Cart.cxx``): the image size first, then
signatures (Superchip RAM area filled with one byte, E0/3E/3F/UA/FE/CV instruction patterns,
mirrored halves). :func:`detect_scheme` returns every name Stella can return; :func:`load_rom`
accepts the schemes gpu_env's core implements (every scheme the 108 bundled ROMs use).
"""

from __future__ import annotations

import enum
import hashlib
import os
import warnings
from dataclasses import dataclass
from pathlib import Path

from gpu_env.errors import RomError


class CartScheme(enum.IntEnum):
    """Bank-switching schemes implemented by the core; values equal ``CartScheme`` in cart_state.h."""

    CART_2K = 0
    CART_4K = 1
    F8 = 2
    F6 = 3
    F6SC = 4
    F8SC = 5
    E0 = 6
    FE = 7
    DPC = 8

    @property
    def stella_name(self) -> str:
        """The scheme's name as Stella/ALE spell it ("2K", "F8SC", ...)."""
        return _STELLA_NAMES[self]

    @property
    def stella_class(self) -> str:
        """The cartridge's name in ale-py's cloneState() ("Cartridge2K", "CartridgeF8SC", ...)."""
        return f"Cartridge{_STELLA_NAMES[self]}"

    @classmethod
    def from_stella_name(cls, name: str) -> CartScheme:
        """Return the scheme for a Stella name; raise :class:`RomError` if the core lacks it."""
        for scheme, stella in _STELLA_NAMES.items():
            if stella == name:
                return scheme
        raise RomError(
            f"bank-switching scheme {name!r} is not implemented by gpu_env; supported: {', '.join(SUPPORTED_SCHEMES)}"
        )


_STELLA_NAMES: dict[CartScheme, str] = {
    CartScheme.CART_2K: "2K",
    CartScheme.CART_4K: "4K",
    CartScheme.F8: "F8",
    CartScheme.F6: "F6",
    CartScheme.F6SC: "F6SC",
    CartScheme.F8SC: "F8SC",
    CartScheme.E0: "E0",
    CartScheme.FE: "FE",
    CartScheme.DPC: "DPC",
}
SUPPORTED_SCHEMES: tuple[str, ...] = tuple(_STELLA_NAMES.values())
# Image sizes whose detected scheme can be one of SUPPORTED_SCHEMES (bytes).
SUPPORTED_SIZES: tuple[int, ...] = (2048, 4096, 8192, 10240, 10495, 10496, 16384)
# The two 8K images Stella starts from bank 0 instead of 1 ("F8 swapped"), special-cased by MD5.
_F8_SWAPPED_MD5 = frozenset({"bc24440b59092559a1ec26055fd1270e", "75ee371ccfc4f43e7d9b8f24e1266b55"})
_SUPERCHIP_RAM = 256  # bytes at the start of each 4K bank that a Superchip image leaves uniform
_AR_LOAD_SIZE = 8448  # one Supercharger load


@dataclass(frozen=True)
class Rom:
    """A loaded ROM image.

    data: the whole file (bytes); md5: its hex MD5; scheme: the detected bank-switching scheme;
    rom_id: the ale-py id when loaded by id (else None); path: the file it came from.
    """

    data: bytes
    md5: str
    scheme: CartScheme
    path: Path
    rom_id: str | None

    @property
    def size(self) -> int:
        """Image size in bytes."""
        return len(self.data)


def _search_for_bytes(image: bytes, signature: bytes, min_hits: int) -> bool:
    """Stella's ``searchForBytes``: count non-overlapping hits, skipping one extra byte after each.

    Stella never looks at the last possible start position, and after a hit it resumes the scan
    ``len(signature) + 1`` bytes later; both quirks are reproduced because they change counts.
    """
    size, length = len(image), len(signature)
    if length > size:
        return False
    count = 0
    i = 0
    while i < size - length:
        if image[i : i + length] == signature:
            count += 1
            i += length
        if count >= min_hits:
            break
        i += 1
    return count >= min_hits


def _is_probably_sc(image: bytes) -> bool:
    for bank in range(len(image) // 4096):
        area = image[bank * 4096 : bank * 4096 + _SUPERCHIP_RAM]
        if area.count(area[0]) != len(area):
            return False
    return True


def _is_probably_3f(image: bytes) -> bool:
    return _search_for_bytes(image, bytes([0x85, 0x3F]), 2)  # STA $3F, at least twice


def _is_probably_3e(image: bytes) -> bool:
    return _search_for_bytes(image, bytes([0x85, 0x3E, 0xA9, 0x00]), 1)  # STA $3E; LDA #$00


def _any_signature(image: bytes, signatures: tuple[bytes, ...]) -> bool:
    return any(_search_for_bytes(image, signature, 1) for signature in signatures)


def _is_probably_e0(image: bytes) -> bool:
    signatures = (
        bytes([0x8D, 0xE0, 0x1F]),  # STA $1FE0
        bytes([0x8D, 0xE0, 0x5F]),  # STA $5FE0
        bytes([0x8D, 0xE9, 0xFF]),  # STA $FFE9
        bytes([0xAD, 0xE9, 0xFF]),  # LDA $FFE9
        bytes([0xAD, 0xED, 0xFF]),  # LDA $FFED
        bytes([0xAD, 0xF3, 0xBF]),  # LDA $BFF3
    )
    return _any_signature(image, signatures)


def _is_probably_e7(image: bytes) -> bool:
    first = image[0x3800]
    if any(b != first for b in image[0x3800:0x3A00]):
        return False
    before = sum(1 for b in image[0x3800 - 32 : 0x3800] if b != first)
    after = sum(1 for b in image[0x3A00 : 0x3A00 + 32] if b != first)
    return before > 0 or after > 0


def _is_probably_ua(image: bytes) -> bool:
    return _search_for_bytes(image, bytes([0x8D, 0x40, 0x02]), 1)  # STA $240


def _is_probably_cv(image: bytes) -> bool:
    return _any_signature(image, (bytes([0x9D, 0xFF, 0xF3]), bytes([0x99, 0x00, 0xF4])))


def _is_probably_fe(image: bytes) -> bool:
    signatures = (
        bytes([0x20, 0x00, 0xD0, 0xC6, 0xC5]),  # JSR $D000; DEC $C5
        bytes([0x20, 0xC3, 0xF8, 0xA5, 0x82]),  # JSR $F8C3; LDA $82
        bytes([0xD0, 0xFB, 0x20, 0x73, 0xFE]),  # BNE $FB; JSR $FE73
        bytes([0x20, 0x00, 0xF0, 0x84, 0xD6]),  # JSR $F000; STY $D6
    )
    return _any_signature(image, signatures)


def _detect_8k(image: bytes) -> str:
    if _is_probably_sc(image):
        return "F8SC"
    if image[:4096] == image[4096:]:
        return "4K"
    for name, test in (
        ("E0", _is_probably_e0),
        ("3E", _is_probably_3e),
        ("3F", _is_probably_3f),
        ("UA", _is_probably_ua),
        ("FE", _is_probably_fe),
    ):
        if test(image):
            return name
    return "F8"


def _detect_3e_3f(image: bytes, fallback: str | None) -> str | None:
    if _is_probably_3e(image):
        return "3E"
    if _is_probably_3f(image):
        return "3F"
    return fallback


def detect_scheme(image: bytes, md5: str | None = None) -> str | None:
    """Stella's auto-detected scheme name for ``image`` ("2K", "F8SC", "3F", ...), or None.

    ``md5`` (hex) enables Stella's one special case by checksum ("F8 swapped"). None means Stella
    cannot recognise the image (an unusual size without 3E/3F signatures).
    """
    size = len(image)
    if md5 in _F8_SWAPPED_MD5:
        return "F8 swapped"
    if size != 0 and size % _AR_LOAD_SIZE == 0:
        return "AR"
    if size == 2048 or (size == 4096 and image[:2048] == image[2048:]):
        return "CV" if _is_probably_cv(image) else "2K"
    if size == 4096:
        return "CV" if _is_probably_cv(image) else "4K"
    if size == 8192:
        return _detect_8k(image)
    if size in (10495, 10496, 10240):
        return "DPC"
    if size == 12288:
        return "FASC"
    if size == 16384:
        if _is_probably_sc(image):
            return "F6SC"
        if _is_probably_e7(image):
            return "E7"
        return _detect_3e_3f(image, "F6")
    if size == 32768:
        return "F4SC" if _is_probably_sc(image) else _detect_3e_3f(image, "F4")
    if size == 65536:
        return _detect_3e_3f(image, "MB")
    if size == 131072:
        return _detect_3e_3f(image, "MC")
    return _detect_3e_3f(image, None)


def _supported_text() -> str:
    sizes = ", ".join(str(s) for s in SUPPORTED_SIZES)
    return f"supported sizes: {sizes} bytes; supported schemes: {', '.join(SUPPORTED_SCHEMES)}"


def _resolve(id_or_path: str | os.PathLike[str]) -> tuple[Path, str | None]:
    candidate = Path(id_or_path)
    if candidate.exists():
        return candidate, None
    text = str(id_or_path)
    looks_like_path = os.sep in text or text.endswith((".bin", ".a26", ".rom"))
    if looks_like_path:
        raise RomError(f"ROM file {text!r} does not exist: give an existing file or an ale-py ROM id like 'pong'")
    try:
        from ale_py import roms as ale_roms
    except ImportError as exc:  # pragma: no cover - ale-py is a dependency
        raise RomError(f"cannot look up ROM id {text!r}: ale-py is not installed; give a file path") from exc
    if text not in ale_roms.get_all_rom_ids():
        raise RomError(
            f"unknown ROM id {text!r}: neither a file nor an ale-py ROM id; use a snake_case id from "
            "ale_py.roms.get_all_rom_ids(), e.g. 'space_invaders', or a .bin path"
        )
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            path = ale_roms.get_rom_path(text)
    except OSError as exc:
        raise RomError(f"ale-py's ROM {text!r} failed its checksum: {exc}; reinstall ale-py") from exc
    if path is None:
        raise RomError(f"ale-py does not provide ROM {text!r}: see ale_py.roms.get_all_rom_ids()")
    return Path(path), text


def resolve_rom_path(id_or_path: str | os.PathLike[str]) -> Path:
    """Return the file of an ale-py ROM id ("pong", "space_invaders") or an existing path; RomError if neither."""
    return _resolve(id_or_path)[0]


def load_rom(id_or_path: str | os.PathLike[str]) -> Rom:
    """Load a ROM by ale-py id (``"pong"``) or by file path and detect its scheme as ALE does.

    Raises :class:`RomError` for a missing, empty, truncated or unknown-size file, or a scheme the
    core does not implement; the message names the file, its size and what is supported.
    """
    path, rom_id = _resolve(id_or_path)
    if not path.is_file():
        raise RomError(f"ROM path {str(path)!r} is not a regular file: give a .bin ROM image")
    data = path.read_bytes()
    if not data:
        raise RomError(f"ROM file {str(path)!r} is empty (0 bytes); {_supported_text()}")
    md5 = hashlib.md5(data).hexdigest()
    detected = detect_scheme(data, md5)
    if detected is None or (detected not in SUPPORTED_SCHEMES and len(data) not in SUPPORTED_SIZES):
        what = "is truncated or of an unknown size" if detected is None else f"is detected as {detected!r}"
        raise RomError(f"ROM file {str(path)!r} ({len(data)} bytes) {what}; {_supported_text()}")
    if detected not in SUPPORTED_SCHEMES:
        raise RomError(
            f"ROM file {str(path)!r} ({len(data)} bytes) is detected as bank-switching scheme {detected!r}, "
            f"which gpu_env does not implement; {_supported_text()}"
        )
    return Rom(data=data, md5=md5, scheme=CartScheme.from_stella_name(detected), path=path, rom_id=rom_id)
