"""Fakes of outside services that only tests and benchmarks run (never installed with the package)."""
