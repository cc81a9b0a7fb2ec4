"""Exceptions raised by gpu_env; every message names the bad value and the fix."""


class GpuEnvError(Exception):
    """Base class of every error gpu_env raises on purpose."""


class RomError(GpuEnvError):
    """A ROM file is missing, empty, truncated, of an unsupported size or scheme, or unknown to ALE."""


class BackendError(GpuEnvError):
    """A backend cannot run here (e.g. ``backend='cuda'`` without CuPy or a GPU), or the library is not built."""


class EmulatorFaultError(GpuEnvError):
    """The emulated machine hit a fatal condition (e.g. a JAM opcode) reported as an error code."""


class NotImplementedYetError(GpuEnvError, NotImplementedError):
    """A documented part of the API that this version of gpu_env does not implement yet."""
