"""Task sources and what runs them: the task catalogue and manifest, a checkout's task environment and
server pins, and the sandbox images."""
