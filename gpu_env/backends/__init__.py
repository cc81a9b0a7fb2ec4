"""The backends of :class:`gpu_env.AtariBatch` (one protocol: :mod:`.protocol`) and the engines of make_vec's env."""
