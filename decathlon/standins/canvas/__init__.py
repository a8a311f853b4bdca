"""Stand-in for the npm MCP server ``canvas-mcp-server`` 2.2.3 (lockon-n/mcp-canvas-lms at 1097704,
the fork Toolathlon's package.json pins, over DMontgomery40/mcp-canvas-lms).

Run as ``CANVAS_API_TOKEN=<token> CANVAS_DOMAIN=<host:port> python -m decathlon.standins.canvas`` in the
agent workspace (Toolathlon's config sets NODE_TLS_REJECT_UNAUTHORIZED=0; certificates are never
checked here). It serves MCP over stdio as ``canvas-mcp-server`` 2.2.3 with the reference's 69
``canvas_*`` tools (names, input schemas and descriptions as it advertises them) and its
resources, and talks to Canvas at ``https://<CANVAS_DOMAIN>/api/v1`` with a Bearer token, making
the requests the reference makes (paths, ``include[]`` parameters, JSON bodies) — in an episode,
to the Canvas emulator in decathlon.emulators.canvas.

Taken from recorded real runs (claude-4.5-sonnet, eight Canvas tasks): results are
``JSON.stringify(response, null, 2)`` of Canvas's answer (unicode as is, JavaScript number
format); ``canvas_start_quiz_attempt`` returning the bare attempt object after Toolathlon's Canvas
failed the creation with a 500; ``canvas_list_account_users``' ``Users (Page N):`` text with its
session footer; the three-step upload returning the file object; an HTTP error as the isError
text ``Error: Canvas API Error (400): <compact JSON of the body>``.

Assumed from the reference's source where no recording shows the case: the other error texts
(``Canvas API Error (404): <errors[].message joined>``, ``Network error: <Node's message>``,
``Missing required field(s): ...``, ``Unknown tool: X``, bare AxiosError text for the user
listing and the upload's second step), and the pagination quirk described in api.py (with
three or more pages, later pages repeat).

Deliberate differences: every HTTP exchange is bounded in time and size (transport.py); the
reference writes debug lines for quiz submissions to stdout, into the MCP stream, which is not
reproduced; a tool whose result JavaScript would serialize as
``undefined`` (marking a module item complete) answers a JSON-RPC error, where the reference
sends a text content without text that clients reject; ``.env`` files are not read (Toolathlon
passes both variables); the SDK orders each inputSchema's top-level keys its own way.
"""
