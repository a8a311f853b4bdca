"""Cassettes: what a task's tools and evaluator exchanged with the outside world, recorded once.

See docs/cassettes.md for the format. This package is imported inside sandboxes (standard library only).
"""
