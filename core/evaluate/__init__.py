"""Benchmarks behind ``claimscope eval …``: one module per task plus shared metrics/loaders."""
