import sys

from decathlon.emulators.gcp.app import build
from decathlon.emulators.kit import serve

sys.exit(serve.run("gcp", build, doc=__doc__))
