"""One episode: its lifecycle (acquire → setup → policy and tool calls → evaluate → release), the
session that speaks task-api to a sandbox, the agent loop, and the policies that act in it."""
