"""The backends of :class:`gpu_env.AtariBatch`, behind one protocol (:mod:`gpu_env.backends.protocol`).

- :mod:`gpu_env.backends.native`: ``"cpu"``, gpu_env's C++ core through the CPU library;
- :mod:`gpu_env.backends.ale_py`: ``"ale_py"``, one ``ale_py.ALEInterface`` per env (the reference);
- :mod:`gpu_env.cuda.backend`: ``"cuda"``, the same core compiled for the device;
- :mod:`gpu_env.backends.preprocessing`: gymnasium's ``AtariPreprocessing`` step as loops of batch
  calls, for what has no native step (the ``"ale_py"`` backend, the host adapter of ``"cuda"``,
  stochastic frame skips in :mod:`gpu_env.vector`).
"""
