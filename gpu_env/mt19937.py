"""``std::mt19937`` as numpy reproduces it: seeding, and libstdc++'s text form (which ALE's states store).

numpy's ``MT19937`` seeded through its legacy ``init_genrand`` path is ``std::mt19937(seed)`` word for
word (``tests/gpu_env/test_mt19937.py``); ALE's ``cloneState()`` keeps its RNG as libstdc++ writes a
``std::mt19937`` to a stream: the 624 state words, then the index, separated by spaces.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from gpu_env.errors import GpuEnvError


def std_mt19937(seed: int) -> np.random.MT19937:
    """Return numpy's ``MT19937`` in the state of ``std::mt19937(seed)`` (``seed`` taken modulo 2**32)."""
    bits = np.random.MT19937()
    bits._legacy_seeding(int(seed) & 0xFFFFFFFF)
    return bits


def to_text(bits: np.random.MT19937) -> bytes:
    """Return libstdc++'s text form of the generator ``bits``."""
    state = bits.state["state"]
    return (" ".join(str(int(w)) for w in state["key"]) + f" {int(state['pos'])}").encode()


def from_text(text: bytes) -> tuple[npt.NDArray[np.uint32], int]:
    """Parse libstdc++'s text form of a ``std::mt19937`` into (624 state words, index)."""
    values = [int(v) for v in text.split()]
    if len(values) != 625:
        raise GpuEnvError(f"an mt19937 state has 625 numbers, found {len(values)}: not an ale-py cloneState()")
    return np.array(values[:624], dtype=np.uint32), values[624]
