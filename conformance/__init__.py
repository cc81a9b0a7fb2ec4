"""Conformance gates: lockstep comparison of gpu_env against ale-py, traces and declarative suites."""
