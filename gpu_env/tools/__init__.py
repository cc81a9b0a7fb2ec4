"""Developer tools of gpu_env: data generation and checks against ale-py (not needed at run time)."""
