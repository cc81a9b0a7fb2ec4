"""gpu_env: a batched Atari 2600 emulator, frame-exact with ale-py, for the CPU and the GPU.

One portable C++ core (``gpu_env/core``) is compiled into a CPU library at install time and
through CuPy/NVRTC for CUDA at run time.
"""

__version__ = "0.1.0"
