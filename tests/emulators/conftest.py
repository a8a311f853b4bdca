from harness import gcp  # noqa: F401  (the fixture, for every test of this folder)
