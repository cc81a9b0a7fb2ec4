"""The CPU instructions APPO's precision choices depend on, read through public interfaces only.

Two questions are asked: does the CPU multiply bf16 natively (AVX512-BF16 or AMX tiles; :func:`native_bf16`,
behind ``--encoder-precision auto``), and can oneDNN run bf16 products on it (AVX512-BW, -VL and -DQ, or
AVX-NE-CONVERT; :func:`onednn_bf16`, behind the packed bf16 encoder of :mod:`trainers.appo.packed`).

Newer torch builds publish ``torch.cpu.get_capabilities()``; where it is missing (older torch, which has only
private helpers such as ``torch.cpu._is_avx512_bf16_supported``, not called here) the flags of Linux's
``/proc/cpuinfo`` answer the same questions. Where neither is there (another OS), no feature is reported: the
encoder runs in fp32 and bf16 is never packed, which is slower, never wrong.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from pathlib import Path

import torch

#: Feature names as ``torch.cpu.get_capabilities()`` spells them -> the ``/proc/cpuinfo`` flag of each.
PROC_FLAGS = {"avx512_bf16": "avx512_bf16", "amx_tile": "amx_tile", "avx512_bw": "avx512bw",
              "avx512_vl": "avx512vl", "avx512_dq": "avx512dq", "avx_ne_convert": "avx_ne_convert"}


def from_torch() -> frozenset[str] | None:
    """Return the features of :data:`PROC_FLAGS` that ``torch.cpu.get_capabilities()`` reports (None: no such API)."""
    get_capabilities = getattr(torch.cpu, "get_capabilities", None)
    if get_capabilities is None:
        return None
    capabilities = get_capabilities()
    return frozenset(name for name in PROC_FLAGS if capabilities.get(name, False) is True)


def from_cpuinfo(path: Path = Path("/proc/cpuinfo")) -> frozenset[str]:
    """Return the features of :data:`PROC_FLAGS` among the ``flags`` of ``path`` (empty if it cannot be read)."""
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return frozenset()
    flags: set[str] = set()
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "flags":
            flags.update(value.split())
            break  # every core of one machine lists the same flags
    return frozenset(name for name, flag in PROC_FLAGS.items() if flag in flags)


@functools.cache
def features() -> frozenset[str]:
    """Return the CPU's features of :data:`PROC_FLAGS`: torch's public report if it exists, else ``/proc/cpuinfo``.

    Cached: the CPU does not change while the process runs.
    """
    found = from_torch()
    return found if found is not None else from_cpuinfo()


def native_bf16(found: Iterable[str] | None = None) -> bool:
    """Whether the CPU multiplies bf16 natively (AVX512-BF16 or AMX); ``found`` defaults to :func:`features`."""
    names = set(features() if found is None else found)
    return bool(names & {"avx512_bf16", "amx_tile"})


def onednn_bf16(found: Iterable[str] | None = None) -> bool:
    """Whether oneDNN runs bf16 products here (AVX512-BW/VL/DQ or AVX-NE-CONVERT, as oneDNN's own check)."""
    names = set(features() if found is None else found)
    return {"avx512_bw", "avx512_vl", "avx512_dq"} <= names or "avx_ne_convert" in names
