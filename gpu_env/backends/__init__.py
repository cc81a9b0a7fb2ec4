"""The backends of :class:`gpu_env.AtariBatch` behind one protocol (:mod:`gpu_env.backends.protocol`)."""
