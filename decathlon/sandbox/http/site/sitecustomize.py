"""Decathlon's HTTP record/replay hook for processes we do not own (see docs/http-cassettes.md).

This directory is put first on a child's PYTHONPATH, so Python imports this file at start-up.
Without DECATHLON_HTTP_MODE it only runs the sitecustomize it shadows (if any) and returns: one
environment lookup and one path search. Nothing here may ever stop the process from starting.
"""


def _chain() -> None:
    """Run the sitecustomize this one hides (a distro or a venv may ship one), as Python would have."""
    import os
    import sys

    try:  # the import system's own modules, already loaded: importlib.util would cost ~4 ms here
        from _frozen_importlib import module_from_spec
        from _frozen_importlib_external import PathFinder
    except ImportError:  # not CPython
        from importlib.machinery import PathFinder
        from importlib.util import module_from_spec

    here = os.path.dirname(os.path.abspath(__file__))
    rest = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]
    spec = PathFinder.find_spec("sitecustomize", rest)
    if spec is None or spec.loader is None:
        return
    module = module_from_spec(spec)
    spec.loader.exec_module(module)


def _activate() -> None:
    import os

    if not os.environ.get("DECATHLON_HTTP_MODE"):
        return
    import decathlon_http_shim  # next to this file, so importable through the same PYTHONPATH entry

    decathlon_http_shim.activate()


for _step in (_chain, _activate):
    try:
        _step()
    except Exception as _exc:  # noqa: BLE001 - report and carry on: the process must still run
        import sys as _sys

        _sys.stderr.write(f"decathlon-http: sitecustomize {_step.__name__} failed: {type(_exc).__name__}: {_exc}\n")
del _step
