"""The wire between host and sandbox, typed once: the models each side writes and the other reads."""
