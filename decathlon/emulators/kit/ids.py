"""Ids in a vendor's own format, drawn from a per-episode seed so that one episode's run is repeatable and two
episodes' ids differ. The seed is the episode's (DECATHLON_EMULATOR_SEED), else random."""
from __future__ import annotations

import hashlib
import os
import random
import string
import uuid


class Ids:
    def __init__(self, seed: str | None = None) -> None:
        seed = seed if seed is not None else os.environ.get("DECATHLON_EMULATOR_SEED") or uuid.uuid4().hex
        self._rng = random.Random(hashlib.sha256(seed.encode()).digest())

    def hex(self, n: int) -> str:
        return "".join(self._rng.choice("0123456789abcdef") for _ in range(n))

    def alnum(self, n: int, alphabet: str = string.ascii_letters + string.digits) -> str:
        return "".join(self._rng.choice(alphabet) for _ in range(n))

    def uuid(self) -> str:
        return str(uuid.UUID(int=self._rng.getrandbits(128), version=4))

    def digits(self, n: int) -> str:
        return str(self._rng.randint(10 ** (n - 1), 10 ** n - 1))
