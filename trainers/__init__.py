"""Trainers that write evaltk checkpoints: A2C+V-trace on gpu_env and asynchronous APPO on ViZDoom."""
