"""A2C with V-trace on gpu_env (the CuLE recipe); the entry point is :mod:`trainers.a2c_vtrace`."""
