"""Assemble the single CUDA translation unit that NVRTC compiles for gpu_env's device backend.

NVRTC (through CuPy's ``RawModule``) gets one source string and no file system, so the core's
headers are inlined here: every ``#include "..."`` is replaced by the included file (resolved
relative to the including file, then to ``gpu_env/core``), each file at most once (the headers use
``#pragma once``), with ``#line`` markers so compiler messages point at the real file and line.
System includes (``#include <...>``) are left in place; the core only has them in branches NVRTC
does not take (``hd.h`` declares the fixed-width types itself under ``__CUDACC_RTC__``; ``tia/render.h``
includes the host library's AVX-512 overlay, ``<tia_overlay.h>``, only in the CPU library's build).

The same string is what the CI test compiles with ``nvcc --ptx`` wherever nvcc exists.
"""

from __future__ import annotations

import re
from pathlib import Path

from gpu_env.errors import GpuEnvError

CORE_DIR = Path(__file__).resolve().parent / "core"
_INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"\s*$')
_PRAGMA_ONCE = re.compile(r"^\s*#\s*pragma\s+once\s*$")


def _is_header_name(part: str) -> bool:
    return "\n" not in part and part.strip().endswith((".h", ".hpp", ".cuh"))


def _inline(path: Path, seen: set[Path], out: list[str]) -> None:
    path = path.resolve()
    if path in seen:
        return
    seen.add(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise GpuEnvError(f"cannot read device header {path}: {exc}") from exc
    label = path.relative_to(CORE_DIR).as_posix() if path.is_relative_to(CORE_DIR) else str(path)
    out.append(f'#line 1 "{label}"')
    for number, line in enumerate(lines, start=1):
        if _PRAGMA_ONCE.match(line):
            out.append("")
            continue
        match = _INCLUDE.match(line)
        if match is None:
            out.append(line)
            continue
        _inline(_resolve_include(match.group(1), path.parent), seen, out)
        out.append(f'#line {number + 1} "{label}"')


def _resolve_include(name: str, from_dir: Path) -> Path:
    for base in (from_dir, CORE_DIR):
        candidate = base / name
        if candidate.is_file():
            return candidate
    raise GpuEnvError(f'#include "{name}" not found next to {from_dir} nor in {CORE_DIR}')


def device_source(parts: list[str]) -> str:
    """Return the complete translation unit for ``parts``, in order.

    Each part is either a header name relative to ``gpu_env/core`` (e.g. ``"m6502.h"``,
    ``"cart/cart.h"``; a single line ending in ``.h``) or literal CUDA/C++ source text (e.g. the
    kernels). Headers are inlined with their includes resolved, each file once in the whole unit.
    """
    if not parts:
        raise GpuEnvError("device_source needs at least one part: a core header name or source text")
    seen: set[Path] = set()
    out: list[str] = []
    for index, part in enumerate(parts):
        if _is_header_name(part):
            header = CORE_DIR / part.strip()
            if not header.is_file():
                raise GpuEnvError(f"core header {part!r} does not exist under {CORE_DIR}")
            _inline(header, seen, out)
        else:
            out.append(f'#line 1 "<part {index}>"')
            out.extend(part.splitlines())
    return "\n".join(out) + "\n"
