"""Offline stand-in for the npm MCP server `@gongrzhe/server-calendar-autoauth-mcp` (1.0.2, what Toolathlon's
configs/mcp_servers/google_calendar.yaml runs with `npx -y`).

Run as `python -m decathlon.standins.google_calendar` (on the google-workspace virtualenv, ci/servers/
google-workspace.txt); it signs in with the reference's files (credentials.py) and serves MCP over stdio with its five
tools on the `primary` calendar, their descriptions and zod-to-json-schema input schemas (schemas.py), through Google's
own client to https://www.googleapis.com/calendar/v3 (decathlon/standins/google_api.py): in an episode, the SaaS front
and its Workspace emulator.

Taken from recorded real runs (create_event, list_events): `Event created with ID: <id>\\nTitle: …\\nStart: …\\nEnd: …`
and `Found N events:\\n` followed by JSON.stringify(items, null, 2).

Assumed from the reference's source where no recording shows the case: get_event is JSON.stringify(event, null, 2);
update_event patches only the fields given and says `(unchanged)` for the rest; delete_event says `Event deleted:
<id>`; list_events asks Google for single events, 10 by default, ordered by start time; every failure is an `isError`
result `Error: <message>`: zod's issue list for bad arguments, Google's `error.message` for a refusal, `Unknown tool:
<name>`.

Deliberate differences: every request is bounded in time (google_api.TIMEOUT_SECONDS); a network failure (no
answer at all) is worded `request to Google failed, reason: …`, not as Node's fetch words it; a fractional maxResults
is truncated by Google's Python client where Node's sends it as written (and Google refuses it); the reference's
start-up line about copying a working folder's keys goes to stderr instead of corrupting stdout.
"""
