"""gpu_env's CUDA backend: the core headers compiled at run time by NVRTC (through CuPy).

- :mod:`gpu_env.backends.cuda.errors`: what is missing when ``backend="cuda"`` cannot run (CuPy, a GPU, NVRTC).
- :mod:`gpu_env.backends.cuda.module`: the translation unit, its compile options, the on-disk cubin cache.
- :mod:`gpu_env.backends.cuda.backend`: :class:`~gpu_env.backends.cuda.backend.CudaAtariBatch`, device-resident batches.
- :mod:`gpu_env.backends.cuda.host`: ``CudaAleBackend``, the batch behind ``AtariBatch(backend="cuda")`` (host arrays).
- :mod:`gpu_env.backends.cuda.preprocess`: AtariPreprocessing's device buffers, max-pool and INTER_AREA resize.
- :mod:`gpu_env.backends.cuda.vec`: the device engine of ``make_vec(..., backend="cuda")``: every step on the GPU.

Nothing here imports CuPy at import time: the modules load on machines without a GPU, and every
entry point that needs one raises :class:`~gpu_env.errors.BackendError` naming what is missing.
"""
