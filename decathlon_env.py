"""vf-eval's taskset id `decathlon_env` (vf-eval imports a taskset by top-level module name only)."""
from decathlon.env import *  # noqa: F401,F403
from decathlon.env import __all__  # noqa: F401
