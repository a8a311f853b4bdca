"""decathlon.sandbox.replay: serve a cassette's recorded MCP server (in-process with the daemon, or standalone)."""
