"""Recorded runs on the host: cassette files, the import of recorded Toolathlon runs, and the translation
of a recorded run's ids to a live episode's."""
