"""decathlon: Toolathlon's tool-use tasks as a reinforcement-learning environment (host side).

This package is also the verifiers v1 taskset `decathlon` (`vf-eval decathlon …`): vf-eval imports a
taskset by top-level module name and reads `__all__`. The verifiers classes load lazily, so the
`decathlon` CLI does not pay for importing verifiers.
"""
from __future__ import annotations

__all__ = ["DecathlonTaskset", "DecathlonTasksetConfig", "DecathlonHarness"]


def __getattr__(name: str):
    if name in __all__:
        from decathlon.training import env
        return getattr(env, name)
    raise AttributeError(f"module 'decathlon' has no attribute {name!r}")
