"""Fidelity anchored to the vendors' own answers: recorded real runs replayed against the emulators, each answer
compared with the one the vendor gave (decathlon.emulators.fidelity.bigquery), and a report of where they agree,
where they do not (with the difference) and what cannot be rebuilt from a run (with why)."""
