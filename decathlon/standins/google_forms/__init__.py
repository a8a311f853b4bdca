"""Offline stand-in for the MCP server google-forms-mcp (github.com/matteoantoci/google-forms-mcp, 0.1.0), which
Toolathlon's configs/mcp_servers/google_forms.yaml runs from its own tree
(`node ${local_servers_paths}/google-forms-mcp/build/index.js`).

Run as `GOOGLE_CLIENT_ID=… GOOGLE_CLIENT_SECRET=… GOOGLE_REFRESH_TOKEN=… python -m decathlon.standins.google_forms`
(on the google-workspace virtualenv, ci/servers/google-workspace.txt); it serves MCP over stdio with the reference's
five tools, their descriptions and input schemas (schemas.py), signed in with the refresh token as the reference's
OAuth2Client is, through Google's own client to https://forms.googleapis.com/v1 (decathlon/standins/google_api.py):
in an episode, the SaaS front and its Workspace emulator.

Taken from recorded real runs (create_form, add_text_question, add_multiple_choice_question, get_form): each result
is JSON.stringify(…, null, 2) of the reference's own summary or of Google's answer; a form made with a description is
refused by Google (only `info.title` may be set at creation) and reads `Error: MCP error -32603: Failed to create
form: <Google's message>`.

Assumed from the reference's source where no recording shows the case: questions go first in the form (`location.index`
0); add_text_question reads the form before it adds one, add_multiple_choice_question does not; get_form_responses is
Google's first page of responses as it came; missing arguments are `MCP error -32602` (the reference's own words),
an unknown tool `MCP error -32601: Unknown tool: <name>`; nothing else of the arguments is checked.

Deliberate differences: every request is bounded in time (google_api.TIMEOUT_SECONDS); a network failure (no
answer at all) is worded `request to Google failed, reason: …`, not as Node's fetch words it; a missing variable at
start-up is a one-line message and exit 1 where Node prints the thrown Error's stack.
"""
