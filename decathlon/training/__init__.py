"""The training face: the verifiers v1 taskset and harness, splits, curriculum, conflict groups, and the
replay policy served as an OpenAI-compatible endpoint."""
